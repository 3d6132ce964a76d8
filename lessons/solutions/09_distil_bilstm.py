"""Solution to lesson 09's exercise: the BiLSTM summary without padding."""

import torch


def my_bilstm_summary(outputs, lengths):
    hidden = outputs.size(-1) // 2
    rows = torch.arange(outputs.size(0))
    forward_last = outputs[rows, lengths - 1, :hidden]   # (B, H) at the last real token
    backward_first = outputs[:, 0, hidden:]              # (B, H) at the first token
    return torch.cat([forward_last, backward_first], dim=-1)  # (B, 2H)


GRADERS = {"bilstm_summary": my_bilstm_summary}  # grader name in minibert.check -> solution
