"""The exercises of lesson 06_electra: each one's reference, inputs and hint.

`minibert.check` loads this file; the lesson grades an answer with
`check.grade(name, my_function)`, and `lessons/solutions/06_electra.py` answers them.
"""

from __future__ import annotations

import torch

from minibert.check import register

# ---------------------------------------------------------------------------------------------
# exercise "electra_labels": ELECTRA's discriminator input and labels (lesson 06)


def _reference_electra_labels(input_ids: torch.Tensor, selected: torch.Tensor,
                              sampled_ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    from minibert.corruption import replace_tokens

    return replace_tokens(input_ids, selected, sampled_ids)


def _electra_labels_inputs(trial: int, generator: torch.Generator) -> tuple:
    """Trial 0: a hand-made row where one sample equals the original; then random batches
    over a small vocabulary, so that many samples reproduce the original token."""
    if trial == 0:
        input_ids = torch.tensor([[2, 10, 11, 12, 13, 3, 0]])
        selected = torch.tensor([[False, True, False, True, True, False, False]])
        sampled = torch.tensor([[2, 10, 11, 40, 13, 3, 0]])     # 10 and 13: sampled correctly
        return input_ids, selected, sampled
    batch, length, vocab = 2 + trial % 3, 6 + 2 * trial, 5 + 3 * trial
    input_ids = torch.randint(5, 5 + vocab, (batch, length), generator=generator)  # (B, T)
    selected = torch.rand(batch, length, generator=generator) < 0.3               # (B, T)
    guess_right = torch.rand(batch, length, generator=generator) < 0.4             # (B, T)
    sampled = torch.randint(5, 5 + vocab, (batch, length), generator=generator)    # (B, T)
    sampled = torch.where(guess_right, input_ids, sampled)
    return input_ids, selected, sampled


register(
    "electra_labels",
    _reference_electra_labels,
    _electra_labels_inputs,
    hint=("corrupted = torch.where(selected, sampled_ids, input_ids); the label is 1.0 where "
          "corrupted != input_ids (a sample equal to the original is real, 0.0), as a float "
          "tensor: (corrupted != input_ids).float()"),
    trials=6,
    atol=0.0,
    rtol=0.0,
    output_names=("corrupted_ids", "is_replaced"),
    lesson="06_electra",
)
