"""The exercises of lesson 09_distil_bilstm: each one's reference, inputs and hint.

`minibert.check` loads this file; the lesson grades an answer with
`check.grade(name, my_function)`, and `lessons/solutions/09_distil_bilstm.py` answers them.
"""

from __future__ import annotations

import torch

from minibert.check import register

# ---------------------------------------------------------------------------------------------
# exercise "bilstm_summary": the BiLSTM sentence vector without padding (lesson 09)


def _reference_bilstm_summary(outputs: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    from minibert.models.bilstm import bilstm_summary

    return bilstm_summary(outputs, lengths)


def _bilstm_summary_inputs(trial: int, generator: torch.Generator) -> tuple:
    """Trial 0: no padding; later trials: right-padded batches of different lengths."""
    B, T, H = [(2, 5, 3), (3, 6, 4), (4, 7, 2), (2, 9, 5), (5, 4, 3)][trial % 5]
    outputs = torch.randn(B, T, 2 * H, generator=generator)                   # (B, T, 2H)
    if trial == 0:
        return outputs, torch.full((B,), T)
    lengths = torch.randint(1, T + 1, (B,), generator=generator)              # (B,)
    lengths[0] = max(1, T // 2)                                               # one row padded
    outputs = outputs * (torch.arange(T)[None, :, None] < lengths[:, None, None])  # zero pads
    return outputs, lengths


register(
    "bilstm_summary",
    _reference_bilstm_summary,
    _bilstm_summary_inputs,
    hint=("H = outputs.size(-1) // 2; forward half at the last real token: "
          "outputs[torch.arange(B), lengths - 1, :H]; backward half at the first token: "
          "outputs[:, 0, H:]; concatenate them on the last dimension"),
    atol=0.0,
    rtol=0.0,
    lesson="09_distil_bilstm",
)
