"""Solution to lesson 11's exercise: where StructBERT may start a shuffled trigram."""

import torch


def trigram_starts(input_ids, mlm_labels, special_ids):
    special = torch.tensor(list(special_ids))
    free = ~torch.isin(input_ids, special) & (mlm_labels == -100)            # (B, T)
    starts = torch.zeros_like(free)                                          # (B, T)
    a, b, c = input_ids[:, :-2], input_ids[:, 1:-1], input_ids[:, 2:]        # (B, T-2) each
    three_free = free[:, :-2] & free[:, 1:-1] & free[:, 2:]                  # (B, T-2)
    starts[:, :-2] = three_free & ~((a == b) & (b == c))                     # all equal: no order
    return starts


GRADERS = {"trigram_starts": trigram_starts}  # grader name in minibert.check -> solution
