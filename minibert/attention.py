"""Scaled dot-product attention, written out, and BERT's multi-head self-attention.

    Attention(Q, K, V) = softmax(Q K^T / sqrt(d_head) + M) V

M is 0 where a query may look at a key and a very large negative number where it may not
(padding keys, and future keys in a left-to-right model). The written-out version below is the
one to read; `F.scaled_dot_product_attention` is an optional fast path, tested equal to it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from .config import BertConfig


def attention_bias(
    attention_mask: torch.Tensor | None,
    query_length: int,
    key_length: int,
    *,
    causal: bool = False,
    dtype: torch.dtype = torch.float32,
    device: torch.device | None = None,
) -> torch.Tensor | None:
    """The additive mask M, shaped to broadcast over (B, heads, T_q, T_k).

    attention_mask: (B, T_k) with 1/True for real tokens and 0/False for padding. The mask is on
    the *keys*: a padding token may still ask questions, but nobody attends to it.
    """
    if attention_mask is None and not causal:
        return None
    very_negative = torch.finfo(dtype).min
    rows = query_length if causal else 1   # a padding mask is the same for every query
    bias = torch.zeros(1, 1, rows, key_length, dtype=dtype, device=device)  # (1, 1, 1|T_q, T_k)
    if attention_mask is not None:
        keep = attention_mask.to(torch.bool)[:, None, None, :]               # (B, 1, 1, T_k)
        bias = bias.masked_fill(~keep, very_negative)                         # (B, 1, 1, T_k)
    if causal:
        future = torch.ones(query_length, key_length, dtype=torch.bool, device=device).triu(1)
        bias = bias.masked_fill(future, very_negative)                        # (B, 1, T_q, T_k)
    return bias


def scaled_dot_product_attention(
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    bias: torch.Tensor | None = None,
    dropout: float = 0.0,
    training: bool = False,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Attention written out. Returns (output, probabilities, scores).

    query: (B, heads, T_q, d); key, value: (B, heads, T_k, d); bias: broadcastable to
    (B, heads, T_q, T_k). `scores` are the pre-softmax logits with the mask added (TinyBERT
    distils them); `probabilities` are the softmax of the scores, before dropout.
    """
    d_head = query.size(-1)
    scores = query @ key.transpose(-2, -1) / math.sqrt(d_head)               # (B, h, T_q, T_k)
    if bias is not None:
        scores = scores + bias                                                # (B, h, T_q, T_k)
    probabilities = scores.softmax(dim=-1)                                    # (B, h, T_q, T_k)
    weights = F.dropout(probabilities, p=dropout, training=training)         # (B, h, T_q, T_k)
    output = weights @ value                                                  # (B, h, T_q, d)
    return output, probabilities, scores


@dataclass
class AttentionOutput:
    output: torch.Tensor                      # (B, T, H)
    probabilities: torch.Tensor | None = None  # (B, heads, T, T), when asked for
    scores: torch.Tensor | None = None         # (B, heads, T, T), pre-softmax, when asked for


class MultiHeadSelfAttention(nn.Module):
    """Project to queries, keys and values, attend in `num_heads` heads, project back."""

    def __init__(self, config: BertConfig):
        super().__init__()
        self.num_heads = config.num_heads
        self.head_size = config.head_size
        self.dropout = config.attention_dropout
        self.use_sdpa = config.use_sdpa
        hidden = config.hidden_size
        self.query = nn.Linear(hidden, hidden)
        self.key = nn.Linear(hidden, hidden)
        self.value = nn.Linear(hidden, hidden)
        self.output = nn.Linear(hidden, hidden)

    def split_heads(self, x: torch.Tensor) -> torch.Tensor:
        """(B, T, H) -> (B, heads, T, d_head)."""
        batch, length, _ = x.shape
        return x.view(batch, length, self.num_heads, self.head_size).transpose(1, 2)

    def merge_heads(self, x: torch.Tensor) -> torch.Tensor:
        """(B, heads, T, d_head) -> (B, T, H)."""
        batch, _, length, _ = x.shape
        return x.transpose(1, 2).reshape(batch, length, self.num_heads * self.head_size)

    def forward(
        self,
        hidden: torch.Tensor,
        bias: torch.Tensor | None = None,
        return_attention: bool = False,
    ) -> AttentionOutput:
        q = self.split_heads(self.query(hidden))                              # (B, h, T, d)
        k = self.split_heads(self.key(hidden))                                # (B, h, T, d)
        v = self.split_heads(self.value(hidden))                              # (B, h, T, d)
        dropout = self.dropout if self.training else 0.0
        if self.use_sdpa and not return_attention:
            # Fast path: the same computation in one fused kernel (tests check they agree).
            context = F.scaled_dot_product_attention(q, k, v, attn_mask=bias, dropout_p=dropout)
            probabilities = scores = None
        else:
            context, probabilities, scores = scaled_dot_product_attention(
                q, k, v, bias, dropout=dropout, training=self.training
            )
        output = self.output(self.merge_heads(context))                      # (B, T, H)
        if not return_attention:
            return AttentionOutput(output)
        return AttentionOutput(output, probabilities, scores)
