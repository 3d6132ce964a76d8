"""Solution to lesson 13's exercise: the Pareto front of cost and quality."""

import torch


def my_pareto_front(cost, quality):
    n = len(cost)
    front = torch.ones(n, dtype=torch.bool)                  # (N,)
    for i in range(n):
        for j in range(n):
            no_worse = cost[j] <= cost[i] and quality[j] >= quality[i]
            better = cost[j] < cost[i] or quality[j] > quality[i]
            if no_worse and better:                          # j dominates i
                front[i] = False
    return front


GRADERS = {"pareto_front": my_pareto_front}  # grader name in minibert.check -> solution
