"""Solution to lesson 03's exercise: RoBERTa's position ids."""

import torch


def my_position_ids(input_ids, pad_token_id, padding_idx):
    """Real tokens count padding_idx + 1, padding_idx + 2, ...; padding gets padding_idx."""
    real = (input_ids != pad_token_id).long()           # (B, T): 1 at real tokens
    return torch.cumsum(real, dim=1) * real + padding_idx


GRADERS = {"roberta_position_ids": my_position_ids}
