"""Solution to lesson 10's exercise: FastBERT's uncertainty, entropy normalized by log N."""

import math

import torch.nn.functional as F


def uncertainty(logits):
    log_p = F.log_softmax(logits, dim=-1)                  # (..., N), finite even when p -> 0
    entropy = -(log_p.exp() * log_p).sum(dim=-1)           # (...)
    return entropy / math.log(logits.shape[-1])            # (...), in [0, 1]


GRADERS = {"fastbert_uncertainty": uncertainty}  # grader name in minibert.check -> solution
