"""The exercises of lesson 10_fastbert: each one's reference, inputs and hint.

`minibert.check` loads this file; the lesson grades an answer with
`check.grade(name, my_function)`, and `lessons/solutions/10_fastbert.py` answers them.
"""

from __future__ import annotations

import torch

from minibert.check import register

# ---------------------------------------------------------------------------------------------
# exercise "fastbert_uncertainty": entropy normalized by log N (lesson 10)


def _reference_fastbert_uncertainty(logits: torch.Tensor) -> torch.Tensor:
    from minibert.models.fastbert import normalized_entropy

    return normalized_entropy(logits).to(logits.dtype)


def _fastbert_uncertainty_inputs(trial: int, generator: torch.Generator) -> tuple:
    """Trial 0: the lesson's example; then random (B, N) logits; the last has huge gaps."""
    if trial == 0:
        return (torch.tensor([[2.0, -1.0], [0.0, 0.0], [5.0, 5.0]]),)
    classes = (2, 3, 4, 10, 2)[(trial - 1) % 5]
    scale = 300.0 if trial == 5 else 1.0 + trial
    return (scale * torch.randn(4 + trial, classes, generator=generator),)


register(
    "fastbert_uncertainty",
    _reference_fastbert_uncertainty,
    _fastbert_uncertainty_inputs,
    hint=("log_p = F.log_softmax(logits, dim=-1); entropy = -(log_p.exp() * log_p).sum(-1); "
          "divide by math.log(N) with N = logits.shape[-1]. Taking log(softmax(...)) instead "
          "gives log(0) = -inf and 0 * -inf = nan for very confident logits"),
    trials=6,
    atol=1e-5,
    rtol=1e-4,
    lesson="10_fastbert",
)
