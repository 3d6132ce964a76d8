"""The exercises of lesson 01_bert: each one's reference, inputs and hint.

`minibert.check` loads this file; the lesson grades an answer with
`check.grade(name, my_function)`, and `lessons/solutions/01_bert.py` answers them.
"""

from __future__ import annotations

import math

import torch

from minibert.check import register

# ---------------------------------------------------------------------------------------------
# exercise "attention": scaled dot-product attention with a key padding mask


def _reference_attention(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """softmax(q k^T / sqrt(d) + mask_bias) v, returning (output, probabilities).

    q, k, v: (B, heads, T, d). mask: (B, T) bool, True at real tokens; padded keys get a bias
    of -inf, so they receive probability 0.
    """
    d = q.size(-1)
    scores = q @ k.transpose(-2, -1) / math.sqrt(d)  # (B, heads, T, T)
    if mask is not None:
        bias = torch.zeros(mask.shape, dtype=scores.dtype)  # (B, T)
        bias = bias.masked_fill(~mask, float("-inf"))  # (B, T): -inf at padding
        scores = scores + bias[:, None, None, :]  # (B, heads, T, T), broadcast over queries
    probs = scores.softmax(dim=-1)  # (B, heads, T, T), each row sums to 1
    return probs @ v, probs  # (B, heads, T, d), (B, heads, T, T)


_ATTENTION_SHAPES = [(1, 1, 4, 8), (2, 2, 5, 4), (2, 2, 6, 8), (3, 4, 7, 16), (2, 3, 9, 4)]


def _attention_inputs(trial: int, generator: torch.Generator) -> tuple:
    """Trial 0: no mask argument; trial 1: mask=None; later trials: padded batches."""
    B, heads, T, d = _ATTENTION_SHAPES[trial % len(_ATTENTION_SHAPES)]
    q, k, v = (torch.randn(B, heads, T, d, generator=generator) for _ in range(3))
    if trial == 0:
        return q, k, v
    if trial == 1:
        return q, k, v, None
    lengths = torch.randint(1, T + 1, (B,), generator=generator)  # (B,) real tokens per row
    lengths[0] = max(1, T // 2)  # at least one row is padded
    mask = torch.arange(T)[None, :] < lengths[:, None]  # (B, T), True = real token
    return q, k, v, mask


register(
    "attention",
    _reference_attention,
    _attention_inputs,
    hint=(
        "scores = q @ k.transpose(-2, -1) / math.sqrt(d); give padded keys (mask False) a "
        "score of -inf before the softmax over the last dimension; return (probs @ v, probs)"
    ),
    output_names=("output", "probabilities"),
    lesson="01_bert",
)
