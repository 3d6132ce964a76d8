"""Solution to lesson 06's exercise: ELECTRA's discriminator input and labels."""

import torch


def electra_labels(input_ids, selected, sampled_ids):
    corrupted = torch.where(selected, sampled_ids, input_ids)   # samples where selected
    is_replaced = (corrupted != input_ids).float()              # a correct guess is real (0.0)
    return corrupted, is_replaced


GRADERS = {"electra_labels": electra_labels}  # grader name in minibert.check -> solution
