"""The exercises of lesson 05_distilbert: each one's reference, inputs and hint.

`minibert.check` loads this file; the lesson grades an answer with
`check.grade(name, my_function)`, and `lessons/solutions/05_distilbert.py` answers them.
"""

from __future__ import annotations

import torch

from minibert.check import register

# ---------------------------------------------------------------------------------------------
# exercises "temperature_softmax" and "kd_loss": Hinton's distillation (lesson 05)


def _reference_temperature_softmax(logits: torch.Tensor, temperature: float) -> torch.Tensor:
    from minibert.distill import softmax_with_temperature

    return softmax_with_temperature(logits, temperature)


def _reference_kd_loss(student_logits: torch.Tensor, teacher_logits: torch.Tensor,
                       temperature: float) -> torch.Tensor:
    from minibert.distill import kd_loss

    return kd_loss(student_logits, teacher_logits, temperature)


_TEMPERATURES = (1.0, 2.0, 0.5, 4.0, 8.0, 2.0)


def _temperature_softmax_inputs(trial: int, generator: torch.Generator) -> tuple:
    """Trials 0-4: random (N, C) logits at several T; trial 5: logits in the hundreds (overflow)."""
    rows, classes = 2 + trial, 3 + 2 * trial
    logits = 3 * torch.randn(rows, classes, generator=generator)                 # (N, C)
    if trial == 5:
        logits = logits * 100                                                    # exp() overflows
    return logits, _TEMPERATURES[trial]


def _kd_loss_inputs(trial: int, generator: torch.Generator) -> tuple:
    """Random (N, C) student and teacher logits at several temperatures."""
    rows, classes = 2 + trial, 3 + 2 * trial
    student = 2 * torch.randn(rows, classes, generator=generator)                # (N, C)
    teacher = 2 * torch.randn(rows, classes, generator=generator)                # (N, C)
    return student, teacher, _TEMPERATURES[trial]


register(
    "temperature_softmax",
    _reference_temperature_softmax,
    _temperature_softmax_inputs,
    hint=("scaled = logits / temperature; subtract scaled.max(dim=-1, keepdim=True).values so "
          "exp() cannot overflow; then exp and divide by the sum over the last dimension"),
    trials=6,
    lesson="05_distilbert",
)

register(
    "kd_loss",
    _reference_kd_loss,
    _kd_loss_inputs,
    hint=("p = softmax(teacher / T), log q = log_softmax(student / T); KL per row = "
          "sum_c p (log p - log q); average the rows (batchmean) and multiply by T ** 2"),
    trials=6,
    lesson="05_distilbert",
)
