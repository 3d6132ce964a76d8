"""Pretraining on sentence pairs: MLM plus a 2-way sentence task (NSP or SOP) on one head.

Lesson 04 trains one ALBERT with MLM + NSP and one with MLM + SOP, then tests each sentence head
on both tasks. Label 0 means "B follows A" in both tasks, so one head fits both test sets. The
functions live in the library, not in the notebook, because
`minibert.course.side_by_side` sends them
to other processes, and a function defined in a notebook cannot be sent.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

import torch

from minibert import data
from minibert.config import BertConfig
from minibert.masking import mask_tokens
from minibert.models import AlbertForPreTraining
from minibert.train import set_seed, train

__all__ = ["make_batch", "pretrain"]

Pair = tuple[Sequence[int], Sequence[int], int]   # (ids of A, ids of B, label)


def make_batch(examples: Sequence[Pair], masking: torch.Generator | None, tokenizer,
               max_len: int = 40) -> dict[str, torch.Tensor]:
    """`[CLS] A [SEP] B [SEP]`, padded; MLM-corrupted unless `masking` is None; labels for the head.

    The keys are `AlbertForPreTraining`'s arguments: `input_ids`, `token_type_ids`,
    `attention_mask`, `mlm_labels` (only when masking) and `sop_labels` (the pair labels).
    """
    if not examples:
        raise ValueError("make_batch needs at least one (a_ids, b_ids, label) example")
    batch = data.pair_batch(tokenizer, [(a, b) for a, b, _ in examples], max_len=max_len)
    if masking is not None:
        batch["input_ids"], batch["mlm_labels"] = mask_tokens(         # (N, T) each
            batch["input_ids"], vocab_size=tokenizer.vocab_size, mask_id=tokenizer.mask_id,
            special_ids=tokenizer.special_ids, generator=masking)
    batch["sop_labels"] = torch.tensor([label for *_, label in examples])   # (N,)
    return batch


def pretrain(config: BertConfig, examples: Sequence[Pair], tokenizer, *, steps: int, seed: int,
             batch_size: int = 32, lr: float = 1e-3, warmup: float = 0.1, desc: str = "pretrain",
             progress: bool = True) -> AlbertForPreTraining:
    """Train a new `AlbertForPreTraining` on MLM + the sentence task of `examples`; eval mode.

    Each step draws `batch_size` pairs at random (with replacement) and masks them afresh, so
    the run depends only on its arguments: the same seed gives the same model, in this process
    or in another one.
    """
    if not examples:
        raise ValueError("pretrain needs training pairs: a list of (a_ids, b_ids, label)")
    masking = set_seed(seed)                 # the masking stream, apart from the model's init
    model = AlbertForPreTraining(config)
    sampler = random.Random(seed)            # which pairs each batch holds

    def next_batch(step: int) -> dict[str, torch.Tensor]:
        chosen = [examples[sampler.randrange(len(examples))] for _ in range(batch_size)]
        return make_batch(chosen, masking, tokenizer)

    train(model, next_batch, lambda m, batch: m(**batch).loss, steps=steps, lr=lr,
          warmup=warmup, seed=seed, desc=desc, progress=progress)
    return model.eval()
