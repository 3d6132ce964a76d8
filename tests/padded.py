"""The padded batch every parity test feeds both implementations."""

import torch


def padded_batch():
    """Three sequences of 12 ids: full, padded after 7, padded after 3; segment B from 5 on.

    Returns (input_ids, token_type_ids, attention_mask), each (3, 12); [PAD] = 0.
    """
    generator = torch.Generator().manual_seed(1)
    input_ids = torch.randint(1, 99, (3, 12), generator=generator)
    attention_mask = torch.ones(3, 12, dtype=torch.long)
    attention_mask[1, 7:] = 0
    attention_mask[2, 3:] = 0
    input_ids[attention_mask == 0] = 0
    token_type_ids = torch.zeros_like(input_ids)
    token_type_ids[:, 5:] = 1
    token_type_ids[attention_mask == 0] = 0
    return input_ids, token_type_ids, attention_mask
