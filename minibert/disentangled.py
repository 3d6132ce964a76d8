"""DeBERTa's disentangled attention: content and relative position, scored separately.

Each token has a content vector (its hidden state) and, for every other token, a relative
position r(i, j) = i - j (query minus key). DeBERTa gives the two their own projections and adds
three dot products:

    A[i, j] = ( Qc[i] . Kc[j]          content -> content   (c2c)
              + Qc[i] . Kr[d(i, j)]    content -> position  (c2p)
              + Kc[j] . Qr[d(i, j)] )  position -> content  (p2c)
              / sqrt(3 d)

with Qc = H Wq, Kc = H Wk, and Qr = P Wq_r, Kr = P Wk_r projected from one table P of relative
position embeddings that every layer shares (each layer keeps its own projections). The index
is d(i, j) = clamp(r(i, j) + k, 0, 2k - 1): relative positions beyond +-k share the end rows.
The scale counts the terms used: 1 / sqrt(d * (1 + number of position terms)).

**The p2c index.** The paper writes Kc[j] . Qr[d(j, i)]. The official code and Hugging Face's
both compute the key-major matrix Kc Qr^T, gather it at clamp(-r + k) and transpose it, which
lands on row d(i, j), the same row as c2p. minibert follows the code (so weights load), and
`disentangled_scores_loop` states the convention in one line.

DeBERTa-v2 replaces the plain clamp by log buckets: exact up to +-b/2, then logarithmic up to
`max_position`, so 2b rows cover long distances (`log_bucket_positions`).

The layers, the encoder, the Enhanced Mask Decoder and `DebertaConfig` are assembled from these
parts in `minibert.models.deberta`.

`disentangled_scores` is the vectorized version (two matrix products and two gathers);
`disentangled_scores_loop` is the double loop it is tested against.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import torch
from torch import nn

from .attention import AttentionOutput

if TYPE_CHECKING:  # the config lives with the model, models/deberta.py
    from .models.deberta import DebertaConfig

RELATIVE_TERMS = ("c2p", "p2c")


# ---------------------------------------------------------------------------------------------
# relative positions and their indices


def relative_positions(query_length: int, key_length: int,
                       device: torch.device | None = None) -> torch.Tensor:
    """r(i, j) = i - j: positive when the key is to the left of the query. (T_q, T_k) long."""
    query_ids = torch.arange(query_length, device=device)                    # (T_q,)
    key_ids = torch.arange(key_length, device=device)                        # (T_k,)
    return query_ids[:, None] - key_ids[None, :]                             # (T_q, T_k)


def log_bucket_positions(relative: torch.Tensor, bucket_size: int,
                         max_position: int) -> torch.Tensor:
    """DeBERTa-v2's buckets: r itself for |r| <= b/2, then logarithmic, reaching b - 1 at
    |r| = max_position - 1 (and beyond, before the clamp):

        bucket(r) = sign(r) * (ceil(log(|r| / mid) / log((max_position - 1) / mid) * (mid - 1))
                               + mid),   mid = b / 2,   for |r| > mid

    With b = 256, max_position = 512: 128 -> 128, 129 -> 129, 256 -> 192, 511 -> 255.
    """
    mid = bucket_size // 2
    sign = torch.sign(relative)
    # The log only matters where |r| > mid; elsewhere use a harmless value (mid). Float32, as
    # in the reference code, so that values on a ceil boundary round the same way.
    magnitude = torch.where(relative.abs() > mid, relative.abs(), mid)       # (..)
    log_part = torch.ceil(torch.log(magnitude / mid)
                          / torch.log(torch.tensor((max_position - 1) / mid))
                          * (mid - 1)) + mid                                  # (..) float
    buckets = torch.where(relative.abs() <= mid, relative.to(log_part.dtype), sign * log_part)
    return buckets.long()


def attention_span(query_length: int, key_length: int, config: DebertaConfig) -> int:
    """k for this forward pass: v1 uses only the middle 2k rows of P, k = min(max(T_q, T_k),
    max_relative); with buckets k = b, the whole table. (Slicing the table changes no score:
    no |r| is larger than the sequence, so the clamp picks the same rows.)"""
    if config.position_buckets:
        return config.position_buckets
    return min(max(query_length, key_length), config.relative_distance)


def relative_index(relative: torch.Tensor, span: int) -> torch.Tensor:
    """d(i, j) = clamp(r(i, j) + k, 0, 2k - 1): the row of the 2k-row table. Clamp, never wrap."""
    return torch.clamp(relative + span, 0, 2 * span - 1)


# ---------------------------------------------------------------------------------------------
# the scores: vectorized, and the double loop they are tested against


def disentangled_scores(
    query: torch.Tensor,
    key: torch.Tensor,
    position_query: torch.Tensor | None,
    position_key: torch.Tensor | None,
    index: torch.Tensor,
    terms: tuple[str, ...] = RELATIVE_TERMS,
) -> torch.Tensor:
    """c2c + c2p + p2c, scaled by 1 / sqrt(d (1 + len(terms))).

    query: (B, h, T_q, d) content queries Qc; key: (B, h, T_k, d) content keys Kc;
    position_query / position_key: (h, 2k, d), Qr and Kr projected from the table P (None when
    the term is not used); index: (T_q, T_k) d(i, j) in [0, 2k). Returns (B, h, T_q, T_k).
    """
    scale = math.sqrt(query.size(-1) * (1 + len(terms)))
    scores = query @ key.transpose(-2, -1)                                   # (B, h, T_q, T_k)
    gather_index = index.expand(scores.shape)                                # (B, h, T_q, T_k)
    if "c2p" in terms:
        # Query i against every relative position, then pick the row d(i, j) for each key j.
        every_position = query @ position_key.transpose(-2, -1)             # (B, h, T_q, 2k)
        scores = scores + every_position.gather(-1, gather_index)           # (B, h, T_q, T_k)
    if "p2c" in terms:
        # Every relative position against key j, then pick the row d(i, j) for each query i.
        every_position = position_query @ key.transpose(-2, -1)             # (B, h, 2k, T_k)
        scores = scores + every_position.gather(-2, gather_index)           # (B, h, T_q, T_k)
    return scores / scale


def disentangled_scores_loop(
    query: torch.Tensor,
    key: torch.Tensor,
    position_query: torch.Tensor | None,
    position_key: torch.Tensor | None,
    relative: torch.Tensor,
    span: int,
    terms: tuple[str, ...] = RELATIVE_TERMS,
) -> torch.Tensor:
    """The same scores, one (i, j) pair at a time (slow; the reference for the tests).

    relative: (T_q, T_k) r(i, j) (or its buckets); span: k.
    """
    scale = math.sqrt(query.size(-1) * (1 + len(terms)))
    batch, heads, query_length, _ = query.shape
    key_length = key.size(2)
    scores = query.new_zeros(batch, heads, query_length, key_length)        # (B, h, T_q, T_k)
    for i in range(query_length):
        for j in range(key_length):
            row = min(max(int(relative[i, j]) + span, 0), 2 * span - 1)     # d(i, j)
            score = (query[:, :, i] * key[:, :, j]).sum(-1)                  # (B, h) c2c
            if "c2p" in terms:
                score = score + (query[:, :, i] * position_key[:, row]).sum(-1)  # Qc[i] . Kr[d]
            if "p2c" in terms:
                # The code's convention: Kc[j] . Qr[d(i, j)] (the paper writes d(j, i)).
                score = score + (key[:, :, j] * position_query[:, row]).sum(-1)
            scores[:, :, i, j] = score / scale
    return scores


def masked_softmax(scores: torch.Tensor, attention_mask: torch.Tensor | None) -> torch.Tensor:
    """Softmax over keys where query i may see key j only if both are real tokens, and the
    rows of padding queries are all zero (DeBERTa's XSoftmax). attention_mask: (B, T), 1 = real.
    """
    if attention_mask is None:
        return scores.softmax(dim=-1)                                        # (B, h, T_q, T_k)
    real = attention_mask.to(torch.bool)                                     # (B, T)
    pair = real[:, None, :, None] & real[:, None, None, :]                   # (B, 1, T, T)
    scores = scores.masked_fill(~pair, torch.finfo(scores.dtype).min)        # (B, h, T, T)
    return scores.softmax(dim=-1).masked_fill(~pair, 0.0)                    # (B, h, T, T)


# ---------------------------------------------------------------------------------------------
# the modules


class RelativeEmbeddings(nn.Module):
    """The table P of relative position embeddings (2 x table_half rows), shared by all layers.

    forward(T_q, T_k) returns the rows this pass uses, (2k, H), and the index d(i, j), (T_q, T_k).
    """

    def __init__(self, config: DebertaConfig):
        super().__init__()
        self.config = config
        self.table = nn.Embedding(2 * config.table_half, config.hidden_size)
        self.norm = (nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
                     if config.norm_relative else None)
        self.dropout = nn.Dropout(config.dropout)

    def forward(self, query_length: int, key_length: int) -> tuple[torch.Tensor, torch.Tensor]:
        config, half = self.config, self.config.table_half
        relative = relative_positions(query_length, key_length, self.table.weight.device)
        if config.position_buckets:
            relative = log_bucket_positions(relative, config.position_buckets,
                                            config.relative_distance)        # (T_q, T_k)
        span = attention_span(query_length, key_length, config)
        table = self.table.weight                                            # (2 half, H)
        if self.norm is not None:
            table = self.norm(table)
        rows = self.dropout(table[half - span: half + span])                 # (2k, H)
        return rows, relative_index(relative, span)                          # (2k, H), (T_q, T_k)


class DisentangledSelfAttention(nn.Module):
    """Multi-head attention whose scores are c2c + c2p + p2c (see the module docstring).

    Content projections query/key/value/output as in BERT. Position projections: own
    `position_key` (c2p) and `position_query` (p2c) per layer, or, with share_att_key, the
    content query and key matrices applied to P.
    """

    def __init__(self, config: DebertaConfig):
        super().__init__()
        self.terms = config.relative_terms
        self.num_heads = config.num_heads
        self.head_size = config.head_size
        self.share_att_key = config.share_att_key
        hidden = config.hidden_size
        self.query = nn.Linear(hidden, hidden)
        self.key = nn.Linear(hidden, hidden)
        self.value = nn.Linear(hidden, hidden)
        self.output = nn.Linear(hidden, hidden)
        if not config.share_att_key:
            self.position_key = nn.Linear(hidden, hidden) if "c2p" in self.terms else None
            self.position_query = nn.Linear(hidden, hidden) if "p2c" in self.terms else None
        self.dropout = nn.Dropout(config.attention_dropout)

    def split_heads(self, x: torch.Tensor) -> torch.Tensor:
        """(..., T, H) -> (..., heads, T, d_head)."""
        return x.unflatten(-1, (self.num_heads, self.head_size)).transpose(-3, -2)

    def position_projections(self, rows: torch.Tensor):
        """Qr and Kr, each (heads, 2k, d), from the table rows P (2k, H)."""
        query_proj = self.query if self.share_att_key else self.position_query
        key_proj = self.key if self.share_att_key else self.position_key
        position_query = (self.split_heads(query_proj(rows))
                          if "p2c" in self.terms else None)                  # (h, 2k, d)
        position_key = (self.split_heads(key_proj(rows))
                        if "c2p" in self.terms else None)                    # (h, 2k, d)
        return position_query, position_key

    def forward(
        self,
        hidden: torch.Tensor,
        query_states: torch.Tensor,
        rows: torch.Tensor,
        index: torch.Tensor,
        attention_mask: torch.Tensor | None,
        return_attention: bool = False,
    ) -> AttentionOutput:
        """hidden: (B, T, H) gives keys and values; query_states: (B, T, H) gives the queries
        (the same tensor, except in the Enhanced Mask Decoder)."""
        q = self.split_heads(self.query(query_states))                       # (B, h, T, d)
        k = self.split_heads(self.key(hidden))                               # (B, h, T, d)
        v = self.split_heads(self.value(hidden))                             # (B, h, T, d)
        position_query, position_key = self.position_projections(rows)       # (h, 2k, d) each
        scores = disentangled_scores(q, k, position_query, position_key, index,
                                     self.terms)                             # (B, h, T, T)
        probabilities = masked_softmax(scores, attention_mask)               # (B, h, T, T)
        context = self.dropout(probabilities) @ v                            # (B, h, T, d)
        output = self.output(context.transpose(1, 2).flatten(2))            # (B, T, H)
        if not return_attention:
            return AttentionOutput(output)
        return AttentionOutput(output, probabilities, scores)


__all__ = [
    "RELATIVE_TERMS", "DisentangledSelfAttention", "RelativeEmbeddings", "attention_span",
    "disentangled_scores", "disentangled_scores_loop", "log_bucket_positions",
    "masked_softmax", "relative_index", "relative_positions",
]
