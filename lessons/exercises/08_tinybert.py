"""The exercises of lesson 08_tinybert: each one's reference, inputs and hint.

`minibert.check` loads this file; the lesson grades an answer with
`check.grade(name, my_function)`, and `lessons/solutions/08_tinybert.py` answers them.
"""

from __future__ import annotations

import torch

from minibert.check import register

# ---------------------------------------------------------------------------------------------
# exercises "tinybert_layer_mapping" and "tinybert_attention_mse" (lesson 08)


def _reference_tinybert_layer_mapping(num_student_layers: int, num_teacher_layers: int):
    from minibert.models.tinybert import layer_mapping

    return layer_mapping(num_student_layers, num_teacher_layers)


def _tinybert_layer_mapping_inputs(trial: int, generator: torch.Generator) -> tuple:
    """The paper's 4-from-12, lesson 08's 2-from-4, then other divisible depths."""
    return [(4, 12), (2, 4), (3, 6), (1, 4), (6, 12), (2, 2)][trial % 6]


register(
    "tinybert_layer_mapping",
    _reference_tinybert_layer_mapping,
    _tinybert_layer_mapping_inputs,
    hint=("return a list of M + 1 teacher hidden-state indices: [m * (N // M) for m in "
          "range(M + 1)]; index 0 is the embedding layer, so it maps to 0"),
    trials=6,
    atol=0.0,
    rtol=0.0,
    lesson="08_tinybert",
)


def _reference_tinybert_attention_mse(student_scores: torch.Tensor,
                                      teacher_scores: torch.Tensor) -> torch.Tensor:
    from minibert.models.tinybert import attention_mse

    return attention_mse(student_scores, teacher_scores)


def _tinybert_attention_inputs(trial: int, generator: torch.Generator) -> tuple:
    """Scores of the same shape; from trial 1 on, padded keys carry the additive mask."""
    from minibert.attention import attention_bias

    B, heads, T = [(1, 2, 4), (2, 4, 6), (3, 4, 5), (2, 2, 7), (4, 4, 8)][trial % 5]
    student = torch.randn(B, heads, T, T, generator=generator)                # (B, h, T, T)
    teacher = 2 * torch.randn(B, heads, T, T, generator=generator)            # (B, h, T, T)
    if trial > 0:
        lengths = torch.randint(1, T + 1, (B,), generator=generator)          # (B,)
        lengths[0] = max(1, T // 2)                                           # one row padded
        mask = torch.arange(T)[None, :] < lengths[:, None]                    # (B, T)
        bias = attention_bias(mask, T, T)                                     # (B, 1, 1, T)
        student, teacher = student + bias, teacher + bias
    return student, teacher


register(
    "tinybert_attention_mse",
    _reference_tinybert_attention_mse,
    _tinybert_attention_inputs,
    hint=("set every score <= -100 to 0 in BOTH tensors (torch.where(s <= -100, 0.0, s)), "
          "then return ((student - teacher) ** 2).mean() over all entries"),
    output_names=None,
    lesson="08_tinybert",
)
