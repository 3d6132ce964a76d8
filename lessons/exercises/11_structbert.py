"""The exercises of lesson 11_structbert: each one's reference, inputs and hint.

`minibert.check` loads this file; the lesson grades an answer with
`check.grade(name, my_function)`, and `lessons/solutions/11_structbert.py` answers them.
"""

from __future__ import annotations

import torch

from minibert.check import register

# ---------------------------------------------------------------------------------------------
# exercise "trigram_starts": where StructBERT may shuffle a trigram (lesson 11)


def _reference_trigram_starts(input_ids: torch.Tensor, mlm_labels: torch.Tensor,
                              special_ids: list) -> torch.Tensor:
    from minibert.structure import trigram_starts

    return trigram_starts(input_ids, mlm_labels, special_ids)


def _trigram_starts_inputs(trial: int, generator: torch.Generator) -> tuple:
    """Trial 0: the lesson's example; then padded, masked batches with repeated tokens."""
    if trial == 0:
        ids = torch.tensor([[2, 10, 11, 4, 12, 13, 14, 3, 0]])
        labels = torch.full_like(ids, -100)
        labels[0, 3] = 15
        return ids, labels, [0, 1, 2, 3, 4]
    batch, length = 2 + trial % 3, 6 + 3 * trial
    ids = torch.randint(5, 9 if trial >= 3 else 40, (batch, length), generator=generator)
    ids[:, 0] = 2
    ends = torch.randint(length // 2, length + 1, (batch,), generator=generator)
    ids[torch.arange(length)[None, :] >= ends[:, None]] = 0                     # padding
    chosen = (torch.rand(batch, length, generator=generator) < 0.15) & (ids > 4)
    labels = torch.where(chosen, ids, torch.full_like(ids, -100))               # MLM positions
    ids = torch.where(chosen & (torch.rand(batch, length, generator=generator) < 0.8),
                      torch.full_like(ids, 4), ids)                               # [MASK]
    return ids, labels, [0, 1, 2, 3, 4]


register(
    "trigram_starts",
    _reference_trigram_starts,
    _trigram_starts_inputs,
    hint=("free = ~torch.isin(input_ids, torch.tensor(special_ids)) & (mlm_labels == -100); a "
          "start j needs free[:, j], free[:, j+1], free[:, j+2] and not (x_j == x_j+1 == x_j+2); "
          "the last two columns are False. MLM positions kept unchanged are not free either"),
    trials=6,
    atol=0.0,
    rtol=0.0,
    lesson="11_structbert",
)
