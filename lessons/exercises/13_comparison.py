"""The exercises of lesson 13_comparison: each one's reference, inputs and hint.

`minibert.check` loads this file; the lesson grades an answer with
`check.grade(name, my_function)`, and `lessons/solutions/13_comparison.py` answers them.
"""

from __future__ import annotations

import torch

from minibert.check import register

# ---------------------------------------------------------------------------------------------
# exercise "pareto_front": the models no other model beats on cost and quality (lesson 13)


def _reference_pareto_front(cost: torch.Tensor, quality: torch.Tensor) -> torch.Tensor:
    from minibert.course.compare import pareto_front

    return pareto_front(cost, quality)


def _pareto_front_inputs(trial: int, generator: torch.Generator) -> tuple:
    """Trial 0: the lesson's example; then random clouds with ties in cost, quality or both."""
    if trial == 0:
        return (torch.tensor([1.0, 2.0, 2.0, 3.0, 4.0]),      # latency (ms)
                torch.tensor([0.60, 0.80, 0.70, 0.80, 0.90]))  # accuracy
    n = 4 + 3 * trial
    cost = torch.randint(1, 6, (n,), generator=generator).double()
    quality = torch.randint(0, 6, (n,), generator=generator).double() / 5
    if trial % 2:
        cost[1], quality[1] = cost[0], quality[0]                              # an exact tie
    return cost, quality


register(
    "pareto_front",
    _reference_pareto_front,
    _pareto_front_inputs,
    hint=("model i is off the front when some j has cost[j] <= cost[i] and quality[j] >= "
          "quality[i] and is strictly better in one of the two; equal models both stay on it. "
          "Return a bool tensor of shape (N,)"),
    trials=6,
    atol=0.0,
    rtol=0.0,
    lesson="13_comparison",
)
