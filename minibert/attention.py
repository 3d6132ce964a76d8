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


def check_attention_mask(
    attention_mask: torch.Tensor | None, input_shape: tuple[int, int], *,
    allow_empty_rows: bool = False, name: str = "attention_mask",
) -> None:
    """Refuse a mask the models would misread, with the fix.

    A mask is (B, T) like input_ids, 1/True for real tokens and 0/False for padding. Three
    habits from elsewhere would otherwise pass silently: a Hugging Face-style additive mask
    (0 for tokens, -10000 for padding) would be read as booleans and inverted; a (1, T) mask
    would be broadcast over the batch; token_type_ids passed where the mask goes (all zeros
    for one-segment inputs) would mask every token and make attention uniform over padding.
    """
    if attention_mask is None:
        return
    if not isinstance(attention_mask, torch.Tensor):
        raise TypeError(f"{name} must be a tensor of shape (batch, length) = "
                        f"{tuple(input_shape)}; wrap a list with torch.tensor([...])")
    if tuple(attention_mask.shape) != tuple(input_shape):
        raise ValueError(
            f"{name} has shape {tuple(attention_mask.shape)}, but input_ids has shape "
            f"{tuple(input_shape)}: pass one row per sequence, 1 for real tokens and 0 for "
            f"padding (a (B, T, T) or 1-d mask is not supported; expand a (1, T) mask with "
            f"mask.expand(B, -1))"
        )
    if attention_mask.dtype.is_complex:
        raise TypeError(f"{name} must hold 0/1 or False/True, got dtype {attention_mask.dtype}")
    if attention_mask.dtype != torch.bool and attention_mask.numel():
        values = attention_mask.detach()
        if bool(((values != 0) & (values != 1)).any()):
            if bool((values <= 0).all()):
                raise ValueError(
                    f"{name} looks like an additive mask (0 for tokens, negative for "
                    f"padding), which this library would read inverted: pass "
                    f"({name} == 0).long(), 1 for real tokens and 0 for padding"
                )
            raise ValueError(
                f"{name} must hold only 0 and 1 (or False and True): 1 for real tokens, 0 for "
                f"padding; found values such as {sorted(set(values.flatten().tolist()))[:5]}"
            )
    if not allow_empty_rows and attention_mask.numel():
        empty = (~attention_mask.to(torch.bool).any(dim=-1)).nonzero().flatten()
        if len(empty):
            raise ValueError(
                f"{name} rows {empty.tolist()[:5]} are all zeros, so those sequences have no "
                f"token to attend to. 1 marks a real token and 0 padding; if these are "
                f"token_type_ids, pass them by keyword (token_type_ids=...)"
            )


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
