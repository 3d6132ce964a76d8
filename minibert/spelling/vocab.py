"""Lesson 12's characters as ids: the vocabulary, batches of pairs, correcting text with a model."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable, Sequence

from ..tokenizers.word import SPECIAL_TOKENS
from .data import chunks

# ---------------------------------------------------------------------------------------------
# the character vocabulary


class CharVocab:
    """One id per character: the specials first, then the `size` most frequent characters.

    Characters outside the vocabulary encode as [UNK]. Ties in frequency are broken by the
    character itself, so the same text always gives the same vocabulary.
    """

    SPECIALS = tuple(SPECIAL_TOKENS)  # the course's five, with the same ids as every tokenizer

    def __init__(self, chars: Sequence[str]):
        self.itos = [*self.SPECIALS, *chars]
        self.stoi = {s: i for i, s in enumerate(self.itos)}
        if len(self.stoi) != len(self.itos):
            raise ValueError("the characters of a CharVocab must be distinct")
        self.pad_id, self.unk_id, self.cls_id, self.sep_id, self.mask_id = range(5)
        self.special_ids = list(range(len(self.SPECIALS)))

    @classmethod
    def build(cls, sentences: Iterable[str], size: int | None = None, *,
              min_count: int = 1) -> CharVocab:
        """The `size` most frequent characters (all if None) seen at least `min_count` times."""
        counts = Counter(ch for sentence in sentences for ch in sentence)
        ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
        kept = [ch for ch, n in ranked if n >= min_count]
        return cls(kept if size is None else kept[:size])

    @property
    def vocab_size(self) -> int:
        return len(self.itos)

    def __len__(self) -> int:
        return len(self.itos)

    def __contains__(self, ch: str) -> bool:
        return ch in self.stoi and self.stoi[ch] not in self.special_ids

    def encode(self, text: str, *, add_special: bool = True) -> list[int]:
        """[CLS] c_1 ... c_n [SEP] as ids (one id per character: the length is kept)."""
        ids = [self.stoi.get(ch, self.unk_id) for ch in text]
        return [self.cls_id, *ids, self.sep_id] if add_special else ids

    def decode(self, ids: Sequence[int], source: str | None = None) -> str:
        """Characters of `ids` with the specials dropped.

        With `source` (the input text, one id per character, no [CLS]/[SEP]): a special id, or
        an id equal to the encoded source character, gives back the source character, so
        characters outside the vocabulary survive a round trip unchanged.
        """
        if source is None:
            return "".join(self.itos[i] for i in ids if i not in self.special_ids)
        if len(ids) != len(source):
            raise ValueError(f"{len(ids)} ids for a source of {len(source)} characters: pass "
                             "the ids of the characters only (drop [CLS], [SEP] and padding)")
        out = []
        for i, ch in zip(ids, source):
            keep = i in self.special_ids or i == self.stoi.get(ch, self.unk_id)
            out.append(ch if keep else self.itos[i])
        return "".join(out)


# ---------------------------------------------------------------------------------------------
# batches and correcting text with a model


def correction_batch(vocab: CharVocab, pairs: Sequence[tuple[str, str]]) -> dict:
    """Encode (source, target) pairs as padded tensors: input_ids, attention_mask, target_ids,
    each (B, T) with T = 2 + the longest source ([CLS] and [SEP] included)."""
    from ..data import pad_batch  # torch loads on first use, not on import

    for source, target in pairs:
        if len(source) != len(target):
            raise ValueError(f"source {source!r} and target {target!r} differ in length: "
                             "spelling correction here is same-length substitution")
    input_ids, attention_mask = pad_batch([vocab.encode(s) for s, _ in pairs], vocab.pad_id)
    target_ids, _ = pad_batch([vocab.encode(t) for _, t in pairs], vocab.pad_id)  # (B, T)
    return {"input_ids": input_ids, "attention_mask": attention_mask, "target_ids": target_ids}


def batches_by_length(vocab: CharVocab, pairs: Sequence[tuple[str, str]], batch_size: int,
                      seed: int, window: int = 16) -> list[dict]:
    """Cut pairs into batches of similar length (little padding), in a seeded random order.

    Each run of `window` batches' worth of pairs is sorted by length and cut into batches;
    the batches are then shuffled, so training does not see short sentences first.
    """
    batches = []
    step = window * batch_size
    for start in range(0, len(pairs), step):
        run = sorted(pairs[start:start + step], key=lambda pair: len(pair[0]))
        batches += [correction_batch(vocab, run[i:i + batch_size])
                    for i in range(0, len(run), batch_size)]
    random.Random(seed).shuffle(batches)
    return batches


def correct(model, vocab: CharVocab, sentences: Sequence[str], max_len: int,
            batch_size: int = 256) -> list[str]:
    """Run `model.predict(input_ids, attention_mask)` over sentences and decode its output.

    Sentences longer than max_len are cut into pieces (`chunks`) and joined back, so every
    output has the length of its input; characters outside the vocabulary stay unchanged
    unless the model writes another character there.
    """
    import torch

    pieces, owner = [], []
    for n, sentence in enumerate(sentences):
        for piece in chunks(sentence, max_len):
            pieces.append(piece)
            owner.append(n)
    outputs = [""] * len(sentences)
    with torch.no_grad():
        for start in range(0, len(pieces), batch_size):
            group = pieces[start:start + batch_size]
            batch = correction_batch(vocab, [(piece, piece) for piece in group])
            predicted = model.predict(batch["input_ids"], batch["attention_mask"])  # (B, T)
            for i, piece in enumerate(group):
                ids = predicted[i, 1:len(piece) + 1].tolist()                 # drop [CLS]
                outputs[owner[start + i]] += vocab.decode(ids, piece)
    return outputs


def apply_proposals(sentences: Sequence[str], found: Sequence[Sequence[tuple[int, str, float]]],
                    margin: float = 0.0) -> list[str]:
    """The sentences with every proposal (position, character, gain in nats) whose gain exceeds
    `margin` written in: how a corrector's or the n-gram speller's proposals become text."""
    outputs = []
    for sentence, changes in zip(sentences, found):
        chars = list(sentence)
        for i, ch, gain in changes:
            if gain > margin:
                chars[i] = ch
        outputs.append("".join(chars))
    return outputs
