"""The exercises of lesson 03_roberta: each one's reference, inputs and hint.

`minibert.check` loads this file; the lesson grades an answer with
`check.grade(name, my_function)`, and `lessons/solutions/03_roberta.py` answers them.
"""

from __future__ import annotations

import torch

from minibert.check import register

# ---------------------------------------------------------------------------------------------
# exercise "roberta_position_ids": RoBERTa's position ids, offset by the padding index (lesson 03)


def _reference_roberta_position_ids(input_ids: torch.Tensor, pad_token_id: int,
                                    padding_idx: int) -> torch.Tensor:
    from minibert.models.roberta import position_ids_from_input_ids

    return position_ids_from_input_ids(input_ids, pad_token_id, padding_idx)


def _roberta_position_inputs(trial: int, generator: torch.Generator) -> tuple:
    """Trial 0: the lesson's example; then padded batches with RoBERTa's pad 1 or pad 0."""
    if trial == 0:
        return torch.tensor([[0, 31, 32, 2, 1, 1]]), 1, 1
    batch, length = 2 + trial % 3, 5 + trial
    ids = torch.randint(5, 50, (batch, length), generator=generator)             # (B, T)
    lengths = torch.randint(1, length + 1, (batch,), generator=generator)        # (B,)
    pad = 1 if trial % 2 else 0
    ids[torch.arange(length)[None, :] >= lengths[:, None]] = pad                 # right padding
    return ids, pad, 1 if trial < 4 else 2


register(
    "roberta_position_ids",
    _reference_roberta_position_ids,
    _roberta_position_inputs,
    hint=("real = (input_ids != pad_token_id).long(); position_ids = torch.cumsum(real, dim=1) "
          "* real + padding_idx: real tokens count from padding_idx + 1, padding gets padding_idx"),
    trials=6,
    atol=0.0,
    rtol=0.0,
    lesson="03_roberta",
)
