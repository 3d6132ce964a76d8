"""The exercises of lesson 02_tokenization: each one's reference, inputs and hint.

`minibert.check` loads this file; the lesson grades an answer with
`check.grade(name, my_function)`, and `lessons/solutions/02_tokenization.py` answers them.
"""

from __future__ import annotations

import torch

from minibert.check import register

# ---------------------------------------------------------------------------------------------
# exercises "get_stats" and "merge": the two helpers of BPE (lesson 02)


def _random_ids(generator: torch.Generator, length: int, vocab: int) -> list[int]:
    return torch.randint(0, vocab, (length,), generator=generator).tolist()


def _get_stats_inputs(trial: int, generator: torch.Generator) -> tuple:
    """Trial 0: the docstring's example; then an empty list, one id, and random lists."""
    fixed = {0: [1, 2, 3, 1, 2], 1: [], 2: [7], 3: [5, 5, 5, 5]}
    if trial in fixed:
        return (fixed[trial],)
    return (_random_ids(generator, 40, 6),)


def _merge_inputs(trial: int, generator: torch.Generator) -> tuple:
    """Trial 0: the docstring's example; trial 1: an overlapping run; then random lists."""
    if trial == 0:
        return [1, 2, 3, 1, 2], (1, 2), 4
    if trial == 1:
        return [1, 1, 1, 2, 1, 1], (1, 1), 9
    ids = _random_ids(generator, 40, 5)
    start = int(torch.randint(0, len(ids) - 1, (1,), generator=generator))
    return ids, (ids[start], ids[start + 1]), 256


def _reference_get_stats(ids):
    from minibert.tokenizers.bpe import get_stats

    return get_stats(ids)


def _reference_merge(ids, pair, idx):
    from minibert.tokenizers.bpe import merge

    return merge(ids, pair, idx)


register(
    "get_stats",
    _reference_get_stats,
    _get_stats_inputs,
    hint=("loop over zip(ids, ids[1:]) and count each (left, right) pair in a dict: "
          "counts[pair] = counts.get(pair, 0) + 1"),
    trials=6,
    lesson="02_tokenization",
)

register(
    "merge",
    _reference_merge,
    _merge_inputs,
    hint=("walk through ids with an index i; where ids[i], ids[i + 1] equal the pair, append idx "
          "and skip two, otherwise append ids[i] and move on by one"),
    trials=6,
    lesson="02_tokenization",
)
