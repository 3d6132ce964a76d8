"""RoBERTa's four input formats (Section 4.2) and a static / dynamic masking batcher.

Documents come in already tokenized: a document is a list of sentences, a sentence a list of
token ids. Every builder returns a list of `Example`s, ready for `MaskedBatches`:

    SEGMENT-PAIR+NSP   [CLS] segment A [SEP] segment B [SEP]; a segment is several sentences;
                       B follows A (NSP label 0) or comes from another document (label 1).
    SENTENCE-PAIR+NSP  the same with one sentence per side: much shorter inputs.
    FULL-SENTENCES     whole sentences packed up to max_len, running on across documents,
                       with an extra [SEP] where one document ends and the next begins. No NSP.
    DOC-SENTENCES      the same, but an input never crosses a document boundary, so inputs near
                       a document's end are short. No NSP.

Compare formats at **equal tokens per batch**: `MaskedBatches(..., tokens_per_batch=N)` fills
each batch with examples until it holds about N real tokens, so a format of short inputs gets
more of them per batch (the paper's "variable batch size").

`pack_documents` is DOC-SENTENCES for documents of words, returning id lists (lesson 06).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

import torch

from .masking import mask_tokens

__all__ = [
    "Example",
    "MaskedBatches",
    "collate",
    "doc_sentences",
    "full_sentences",
    "pack_documents",
    "segment_pairs",
    "sentence_pairs",
]

Document = Sequence[Sequence[int]]  # sentences of token ids


@dataclass
class Example:
    """One model input: ids, segment ids (pairs only) and an NSP label (pairs only)."""

    input_ids: list[int]
    token_type_ids: list[int] | None = None
    nsp_label: int | None = None

    def __len__(self) -> int:
        return len(self.input_ids)


def _check(documents: Sequence[Document], max_len: int, least: int) -> None:
    if not documents or not any(len(doc) for doc in documents):
        raise ValueError("documents is empty: pass a list of documents, each a list of "
                         "sentences of token ids")
    if isinstance(max_len, bool) or not isinstance(max_len, int) or max_len < least:
        raise ValueError(f"max_len must be an int >= {least} for this format, got {max_len!r}")


def _pair(tokenizer, a: list[int], b: list[int], max_len: int, label: int) -> Example:
    """[CLS] A [SEP] B [SEP], the longer side cut from its end until it fits (as in BERT)."""
    a, b = list(a), list(b)
    while len(a) + len(b) + 3 > max_len:
        (a if len(a) > len(b) else b).pop()
    ids = [tokenizer.cls_id, *a, tokenizer.sep_id, *b, tokenizer.sep_id]
    types = [0] * (len(a) + 2) + [1] * (len(b) + 1)
    return Example(ids, types, label)


def _random_other(documents, d: int, rng: random.Random) -> int:
    """A document index other than d (documents with at least one sentence)."""
    while True:
        other = rng.randrange(len(documents))
        if other != d and len(documents[other]):
            return other


def segment_pairs(documents: Sequence[Document], tokenizer, max_len: int,
                  seed: int) -> list[Example]:
    """SEGMENT-PAIR+NSP: fill max_len with consecutive sentences, split them into A and B.

    Half of the time B is replaced by as many sentences from a random other document (label 1).
    """
    _check(documents, max_len, 5)
    if len(documents) < 2:
        raise ValueError("NSP needs at least two documents to draw a random segment B from")
    rng = random.Random(seed)
    budget = max_len - 3                                  # room left by [CLS] and two [SEP]
    examples = []
    for d, doc in enumerate(documents):
        chunk, size = [], 0
        for i, sentence in enumerate(doc):
            chunk.append(list(sentence))
            size += len(sentence)
            if size < budget and i < len(doc) - 1:
                continue
            if len(chunk) >= 2:                           # A = the first k sentences, B = rest
                k = rng.randint(1, len(chunk) - 1)
                a = [t for s in chunk[:k] for t in s]
                b = [t for s in chunk[k:] for t in s]
                label = 0
                if rng.random() < 0.5:
                    other = documents[_random_other(documents, d, rng)]
                    start = rng.randrange(len(other))
                    b = [t for s in other[start:] for t in s][: max(budget - len(a), 1)]
                    label = 1
                examples.append(_pair(tokenizer, a, b, max_len, label))
            chunk, size = [], 0
    return examples


def sentence_pairs(documents: Sequence[Document], tokenizer, max_len: int,
                   seed: int) -> list[Example]:
    """SENTENCE-PAIR+NSP: one sentence, then the next (label 0) or a random one (label 1)."""
    _check(documents, max_len, 5)
    if len(documents) < 2:
        raise ValueError("NSP needs at least two documents to draw a random sentence B from")
    rng = random.Random(seed)
    examples = []
    for d, doc in enumerate(documents):
        for i in range(len(doc) - 1):
            if rng.random() < 0.5:
                examples.append(_pair(tokenizer, doc[i], doc[i + 1], max_len, 0))
            else:
                other = documents[_random_other(documents, d, rng)]
                examples.append(_pair(tokenizer, doc[i], rng.choice(other), max_len, 1))
    return examples


def _pack(streams: list[list[list[int]]], tokenizer, max_len: int) -> list[Example]:
    """Pack whole sentences greedily into [CLS] ... [SEP] inputs of at most max_len ids.

    `streams` is a list of sentence lists; a new input starts at the start of each stream.
    A sentence longer than the room is cut; a sentence that does not fit starts the next input.
    """
    room = max_len - 2
    examples, current = [], []
    for stream in streams:
        for sentence in stream:
            sentence = list(sentence)[:room]
            if current and len(current) + len(sentence) > room:
                examples.append(Example([tokenizer.cls_id, *current, tokenizer.sep_id]))
                current = []
            current.extend(sentence)
        if current:
            examples.append(Example([tokenizer.cls_id, *current, tokenizer.sep_id]))
            current = []
    return examples


def full_sentences(documents: Sequence[Document], tokenizer, max_len: int) -> list[Example]:
    """FULL-SENTENCES: pack across documents, with an extra [SEP] between two documents."""
    _check(documents, max_len, 3)
    stream: list[list[int]] = []
    for d, doc in enumerate(documents):
        if d > 0 and stream:
            stream[-1] = [*stream[-1], tokenizer.sep_id]  # the document boundary marker
        stream.extend(list(s) for s in doc)
    return _pack([stream], tokenizer, max_len)


def doc_sentences(documents: Sequence[Document], tokenizer, max_len: int) -> list[Example]:
    """DOC-SENTENCES: pack within each document only; the last input of a document is short."""
    _check(documents, max_len, 3)
    return _pack([[list(s) for s in doc] for doc in documents if len(doc)], tokenizer, max_len)


def pack_documents(documents: Sequence[Sequence[Sequence[str]]], tokenizer,
                   max_len: int) -> list[list[int]]:
    """Word-list documents packed as DOC-SENTENCES, as id lists `[CLS] words [SEP]`.

    Consecutive sentences of one document, as many as fit in `max_len` ids; a sentence that
    does not fit starts the next input (lesson 06's and experiments/electra_depth.py's
    pretraining inputs). `tokenizer` needs `encode_words` (word level).
    """
    encoded = [[tokenizer.encode_words(sentence) for sentence in doc] for doc in documents]
    return [example.input_ids for example in doc_sentences(encoded, tokenizer, max_len)]


def collate(examples: Sequence[Example], pad_id: int) -> dict[str, torch.Tensor]:
    """Pad a list of examples: input_ids and attention_mask (B, T), plus token_type_ids and
    nsp_labels (B,) when the examples carry them."""
    if not examples:
        raise ValueError("cannot collate an empty list of examples")
    length = max(len(e) for e in examples)
    input_ids = torch.full((len(examples), length), pad_id, dtype=torch.long)  # (B, T)
    attention_mask = torch.zeros(len(examples), length, dtype=torch.long)       # (B, T)
    for row, e in enumerate(examples):
        input_ids[row, : len(e)] = torch.tensor(e.input_ids)
        attention_mask[row, : len(e)] = 1
    batch = {"input_ids": input_ids, "attention_mask": attention_mask}
    if examples[0].token_type_ids is not None:
        types = torch.zeros(len(examples), length, dtype=torch.long)          # (B, T)
        for row, e in enumerate(examples):
            types[row, : len(e)] = torch.tensor(e.token_type_ids)
        batch["token_type_ids"] = types
    if examples[0].nsp_label is not None:
        batch["nsp_labels"] = torch.tensor([e.nsp_label for e in examples])   # (B,)
    return batch


class MaskedBatches:
    """Masked MLM batches over a fixed list of examples, epoch after epoch; `batches(step)`.

    masking="dynamic": a fresh 15% / 80-10-10 mask every time a sequence is fed (RoBERTa).
    masking="static":  `copies` masks per example drawn once, up front; epoch e uses copy
                       e % copies (BERT: copies=1; the paper's baseline: 10 copies, 40 epochs).
    batch_size:        sequences per batch, or
    tokens_per_batch:  fill each batch until it holds about that many real tokens.

    Each epoch visits the examples in a new seeded order. The batch for step i depends only on
    (seed, i), so every arm of an experiment sees the same sequences in the same order
    (the dynamic masks themselves come from one running generator, in call order).
    """

    def __init__(self, examples: Sequence[Example], tokenizer, *, batch_size: int | None = None,
                 tokens_per_batch: int | None = None, masking: str = "dynamic", copies: int = 1,
                 mask_prob: float = 0.15, seed: int = 0):
        if masking not in ("dynamic", "static"):
            raise ValueError(f"masking must be 'dynamic' or 'static', got {masking!r}")
        if (batch_size is None) == (tokens_per_batch is None):
            raise ValueError("give exactly one of batch_size (sequences) or tokens_per_batch")
        if not examples:
            raise ValueError("examples is empty: build them with full_sentences(...) or another "
                             "format first")
        if isinstance(copies, bool) or not isinstance(copies, int) or copies < 1:
            raise ValueError(f"copies must be a positive int, got {copies!r}")
        self.examples, self.tokenizer = list(examples), tokenizer
        self.batch_size, self.tokens_per_batch = batch_size, tokens_per_batch
        self.masking, self.copies, self.mask_prob, self.seed = masking, copies, mask_prob, seed
        self.mask_options = dict(vocab_size=tokenizer.vocab_size, mask_id=tokenizer.mask_id,
                                 special_ids=tokenizer.special_ids, mask_prob=mask_prob)
        self.generator = torch.Generator().manual_seed(seed)  # dynamic masks: one running stream
        self.static = None
        if masking == "static":   # all masks drawn now, once: never redrawn during training
            static_gen = torch.Generator().manual_seed(seed + 1)
            self.static = [[self._mask_one(e, static_gen) for e in self.examples]
                           for _ in range(copies)]
        self._epochs: list[list[list[int]]] = []   # per epoch: batches of example indices
        self.fed = 0                                # sequences fed so far

    def _mask_one(self, example: Example, generator: torch.Generator):
        ids = torch.tensor(example.input_ids)                                   # (T,)
        return mask_tokens(ids, generator=generator, **self.mask_options)       # (T,), (T,)

    def _plan(self, epoch: int) -> list[list[int]]:
        """The batches (lists of example indices) of one epoch, in a seeded shuffled order."""
        order = list(range(len(self.examples)))
        random.Random(self.seed * 100_003 + epoch).shuffle(order)
        if self.batch_size is not None:
            return [order[i: i + self.batch_size] for i in range(0, len(order), self.batch_size)]
        plan, current, tokens = [], [], 0
        for index in order:
            current.append(index)
            tokens += len(self.examples[index])
            if tokens >= self.tokens_per_batch:
                plan.append(current)
                current, tokens = [], 0
        if current:
            plan.append(current)
        return plan

    def locate(self, step: int) -> tuple[int, list[int]]:
        """(epoch, example indices) of the batch at `step`."""
        epoch, remaining = 0, step
        while True:
            while len(self._epochs) <= epoch:
                self._epochs.append(self._plan(len(self._epochs)))
            if remaining < len(self._epochs[epoch]):
                return epoch, self._epochs[epoch][remaining]
            remaining -= len(self._epochs[epoch])
            epoch += 1

    def __call__(self, step: int) -> dict[str, torch.Tensor]:
        epoch, indices = self.locate(step)
        chosen = [self.examples[i] for i in indices]
        batch = collate(chosen, self.tokenizer.pad_id)
        if self.static is not None:
            copy = self.static[epoch % self.copies]
            masked = [copy[i][0] for i in indices]
            labels = [copy[i][1] for i in indices]
        else:   # dynamic: draw now, from the running generator, never keyed by example index
            pairs = [self._mask_one(e, self.generator) for e in chosen]
            masked, labels = [p[0] for p in pairs], [p[1] for p in pairs]
        length = batch["input_ids"].size(1)
        batch["input_ids"] = torch.stack([_pad_to(m, length, self.tokenizer.pad_id)
                                          for m in masked])                   # (B, T)
        batch["mlm_labels"] = torch.stack([_pad_to(lab, length, -100)
                                           for lab in labels])                # (B, T)
        self.fed += len(indices)
        return batch


def _pad_to(row: torch.Tensor, length: int, value: int) -> torch.Tensor:
    return torch.cat([row, torch.full((length - len(row),), value, dtype=row.dtype)])  # (T,)
