"""Data augmentation for distillation: make many unlabelled sentences for the teacher to label.

A student trained on a few hundred labelled sentences sees too little of the teacher's
function to copy it. Both distillation papers therefore build a large *transfer set* of
sentences near the training ones and label it with the teacher's logits (the augmented
sentences need no gold label, so a replacement that changes the meaning does no harm).

TinyBERT (Jiao et al., 2020; `data_augmentation.py` of the official code): for each candidate
word (alphabetic, not a stop word), the teacher's masked LM proposes its top-M words for that
slot; each word is replaced with probability p = 0.4 by one of them, N times per sentence.

Tang et al. (2019), for a BiLSTM student, with rules that need no language model: for each
word draw X ~ U[0, 1];
    X < p_mask                    -> [MASK]
    p_mask <= X < p_mask + p_pos  -> a word of the same part of speech, drawn from that tag's
                                     unigram distribution in the corpus
then, with probability p_ng, keep only a random n-gram of the result (n from 1 to 5).
Repeat n_iter times per sentence and drop duplicates.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Sequence

import torch

__all__ = [
    "PosUnigrams",
    "augment_dataset",
    "mlm_candidates",
    "pos_unigrams",
    "tang_augment",
    "tinybert_augment",
]

Sentence = list[str]


# ------------------------------------------------------------------ TinyBERT: MLM candidates


@torch.no_grad()
def mlm_candidates(mlm_model, tokenizer, words: Sequence[str], positions: Sequence[int],
                   top_k: int = 15) -> dict[int, list[str]]:
    """The masked LM's top-k words for each position of `words`, one masked copy per position.

    mlm_model: a `BertForPreTraining`-like model whose forward(input_ids, attention_mask=...)
    returns `.mlm_logits` (B, T, V) when no labels are given. The input is
    `[CLS] w_1 .. [MASK] .. w_n [SEP]`; special tokens are never proposed.
    """
    if top_k < 1:
        raise ValueError(f"top_k must be at least 1, got {top_k}")
    positions = list(positions)
    if not positions:
        return {}
    ids = [tokenizer.cls_id, *tokenizer.encode_words(words), tokenizer.sep_id]
    batch = torch.tensor([ids] * len(positions))                              # (P, T)
    rows = torch.arange(len(positions))                                       # (P,)
    slots = torch.tensor(positions) + 1                                       # (P,) after [CLS]
    batch[rows, slots] = tokenizer.mask_id
    was_training = mlm_model.training
    mlm_model.eval()
    logits = mlm_model(batch, attention_mask=torch.ones_like(batch)).mlm_logits  # (P, T, V)
    mlm_model.train(was_training)
    logits = logits[rows, slots]                                              # (P, V)
    logits[:, tokenizer.special_ids] = float("-inf")                          # never propose
    best = logits.topk(min(top_k, logits.size(-1) - len(tokenizer.special_ids)), dim=-1)
    return {position: [tokenizer.id_to_token[i] for i in best.indices[row].tolist()]
            for row, position in enumerate(positions)}


def tinybert_augment(words: Sequence[str], candidates: dict[int, list[str]], rng: random.Random,
                     p: float = 0.4) -> Sentence:
    """One augmented copy: each position with candidates is replaced with probability p by a
    uniformly chosen candidate (TinyBERT's rule); other words are kept."""
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"p must be a probability in [0, 1], got {p}")
    out = list(words)
    for position, options in candidates.items():
        if options and rng.random() < p:
            out[position] = rng.choice(options)
    return out


# ------------------------------------------------------------------ Tang et al.: three rules


class PosUnigrams:
    """Per part of speech, the words seen in a corpus and their counts, for sampling."""

    def __init__(self, counts: dict[str, Counter]):
        self.counts = counts
        self._words = {tag: sorted(c) for tag, c in counts.items()}  # sorted: reproducible
        self._weights = {tag: [counts[tag][w] for w in self._words[tag]] for tag in counts}

    def sample(self, tag: str, rng: random.Random) -> str:
        """A word of part of speech `tag`, drawn with probability proportional to its count."""
        if tag not in self._words:
            raise ValueError(f"no words of part of speech {tag!r} were counted; known tags: "
                             f"{sorted(self._words)}")
        return rng.choices(self._words[tag], weights=self._weights[tag])[0]

    def probability(self, tag: str, word: str) -> float:
        """The unigram probability of `word` among the words of `tag`."""
        total = sum(self.counts[tag].values())
        return self.counts[tag][word] / total


def pos_unigrams(sentences: Sequence[Sequence[str]], pos_of: Callable[[str], str]) -> PosUnigrams:
    """Count every word of `sentences` under its part of speech `pos_of(word)`."""
    counts: dict[str, Counter] = {}
    for sentence in sentences:
        for word in sentence:
            counts.setdefault(pos_of(word), Counter())[word] += 1
    return PosUnigrams(counts)


def tang_augment(words: Sequence[str], pos_of: Callable[[str], str], unigrams: PosUnigrams,
                 rng: random.Random, *, p_mask: float = 0.1, p_pos: float = 0.1,
                 p_ng: float = 0.25, max_n: int = 5, mask_token: str = "[MASK]") -> Sentence:
    """One augmented copy by Tang et al.'s rules: mask or same-POS swap per word, then maybe
    an n-gram (the per-word pass comes first, as in the paper)."""
    if p_mask < 0 or p_pos < 0 or p_mask + p_pos > 1:
        raise ValueError(f"need p_mask, p_pos >= 0 and p_mask + p_pos <= 1, got {p_mask}, {p_pos}")
    if not 0.0 <= p_ng <= 1.0 or max_n < 1:
        raise ValueError(f"need 0 <= p_ng <= 1 and max_n >= 1, got {p_ng} and {max_n}")
    out = []
    for word in words:
        x = rng.random()
        if x < p_mask:
            out.append(mask_token)
        elif x < p_mask + p_pos:
            out.append(unigrams.sample(pos_of(word), rng))
        else:
            out.append(word)
    if out and rng.random() < p_ng:
        n = rng.randint(1, min(max_n, len(out)))
        start = rng.randrange(len(out) - n + 1)
        out = out[start:start + n]
    return out


def augment_dataset(sentences: Sequence[Sequence[str]], augment: Callable[[Sequence[str]],
                    Sentence], n_iter: int, *, keep_original: bool = True) -> list[Sentence]:
    """`n_iter` augmented copies of each sentence, duplicates (and the originals) dropped
    across the whole set; the originals come first when `keep_original`."""
    if n_iter < 0:
        raise ValueError(f"n_iter must be >= 0, got {n_iter}")
    seen = {tuple(s) for s in sentences}
    out = [list(s) for s in sentences] if keep_original else []
    for sentence in sentences:
        for _ in range(n_iter):
            new = augment(sentence)
            if new and tuple(new) not in seen:
                seen.add(tuple(new))
                out.append(new)
    return out
