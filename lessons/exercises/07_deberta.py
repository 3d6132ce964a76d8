"""The exercises of lesson 07_deberta: each one's reference, inputs and hint.

`minibert.check` loads this file; the lesson grades an answer with
`check.grade(name, my_function)`, and `lessons/solutions/07_deberta.py` answers them.
"""

from __future__ import annotations

import torch

from minibert.check import register

# ---------------------------------------------------------------------------------------------
# exercise "c2p_scores": DeBERTa's content-to-position term with a gather (lesson 07)


def _reference_c2p_scores(query: torch.Tensor, position_key: torch.Tensor,
                          relative: torch.Tensor, span: int) -> torch.Tensor:
    """Qc[i] . Kr[d(i, j)] with d(i, j) = clamp(r(i, j) + k, 0, 2k - 1), unscaled."""
    from minibert.disentangled import relative_index

    every_position = query @ position_key.transpose(-2, -1)                  # (B, h, T_q, 2k)
    index = relative_index(relative, span)                                    # (T_q, T_k)
    batch, heads, query_length, _ = every_position.shape
    return every_position.gather(-1, index.expand(batch, heads, query_length, index.size(-1)))


def _c2p_inputs(trial: int, generator: torch.Generator) -> tuple:
    """Trial 0: the lesson's 5 tokens with k = 2 (so the clamp matters); then random sizes, k
    smaller and larger than the sequence."""
    from minibert.disentangled import relative_positions

    if trial == 0:
        batch, heads, length, d, span = 1, 1, 5, 4, 2
    else:
        batch, heads = 1 + trial % 2, 1 + trial % 3
        length = int(torch.randint(3, 10, (1,), generator=generator))
        d = int(torch.randint(2, 6, (1,), generator=generator))
        span = (2, length + 2, 3, 1, length)[trial % 5]
    query = torch.randn(batch, heads, length, d, generator=generator)         # (B, h, T, d)
    position_key = torch.randn(heads, 2 * span, d, generator=generator)       # (h, 2k, d)
    return query, position_key, relative_positions(length, length), span


register(
    "c2p_scores",
    _reference_c2p_scores,
    _c2p_inputs,
    hint=("first every query against every table row: query @ position_key.transpose(-2, -1) "
          "is (B, h, T, 2k); the row for key j is clamp(relative + span, 0, 2 * span - 1); pick "
          "it with .gather(-1, index.expand(B, h, T, T))"),
    trials=8,
    lesson="07_deberta",
)
