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

The Enhanced Mask Decoder (EMD) adds the absolute positions the encoder never saw, just before
the masked-LM head: the last layer is applied twice more to H^(L-1), with H^(L-1) + Z (absolute
position embeddings) as the first query.

`disentangled_scores` is the vectorized version (two matrix products and two gathers);
`disentangled_scores_loop` is the double loop it is tested against.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn

from .attention import AttentionOutput
from .config import BertConfig
from .encoder import Embeddings, Encoder, EncoderOutput, FeedForwardBlock

RELATIVE_TERMS = ("c2p", "p2c")


@dataclass
class DebertaConfig(BertConfig):
    """BertConfig plus DeBERTa's switches. Defaults: no absolute positions at the input.

    relative_terms:   which position terms to add to content->content: ("c2p", "p2c"), one of
                      them (the paper's ablations), or () for content only.
    max_relative:     k, the largest relative distance told apart (0: max_position).
    position_buckets: b > 0 for DeBERTa-v2's log buckets (2b table rows, exact up to +-b/2,
                      logarithmic up to max_relative); 0 for v1's plain clamp at +-k.
    share_att_key:    v2: project P with the content query/key matrices instead of own ones.
    norm_relative:    v2's norm_rel_ebd="layer_norm": a LayerNorm on the table P.
    """

    position_embedding: str = "none"
    type_vocab_size: int = 0
    relative_terms: tuple[str, ...] = RELATIVE_TERMS
    max_relative: int = 0
    position_buckets: int = 0
    share_att_key: bool = False
    norm_relative: bool = False

    def __post_init__(self) -> None:
        super().__post_init__()
        self.relative_terms = tuple(self.relative_terms)
        unknown = [t for t in self.relative_terms if t not in RELATIVE_TERMS]
        if unknown or len(set(self.relative_terms)) != len(self.relative_terms):
            raise ValueError(
                f"relative_terms={self.relative_terms!r}: choose a subset of {RELATIVE_TERMS} "
                "without repeats, e.g. ('c2p', 'p2c') for DeBERTa or ('c2p',) for its ablation"
            )
        for name in ("max_relative", "position_buckets"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool):
                raise ValueError(f"DebertaConfig.{name} must be an integer, got {value!r}")
        for name in ("share_att_key", "norm_relative"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"DebertaConfig.{name} must be True or False, "
                                 f"got {getattr(self, name)!r}")
        if self.max_relative < 0:
            raise ValueError(f"max_relative must be >= 0 (0 means max_position), "
                             f"got {self.max_relative}")
        if self.position_buckets < 0 or self.position_buckets == 1:
            raise ValueError(f"position_buckets must be 0 (no buckets) or at least 2, "
                             f"got {self.position_buckets}")
        if self.position_buckets and self.relative_distance <= self.position_buckets // 2 + 1:
            raise ValueError(
                f"log buckets compress distances from b/2={self.position_buckets // 2} up to "
                f"max_relative={self.relative_distance}: make max_relative larger than "
                f"{self.position_buckets // 2 + 1} or use fewer buckets"
            )

    @property
    def relative_distance(self) -> int:
        """k: max_relative, or max_position when max_relative is 0 (Hugging Face's -1)."""
        return self.max_relative or self.max_position

    @property
    def table_half(self) -> int:
        """Half the rows of the relative table P: b with buckets, else k."""
        return self.position_buckets or self.relative_distance


def deberta_config(preset: str = "bert-nano", **overrides) -> DebertaConfig:
    """A DeBERTa config from one of BertConfig's tiny presets, e.g. deberta_config('bert-nano')."""
    return DebertaConfig.from_preset(preset, **overrides)


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


class DisentangledAttentionBlock(nn.Module):
    """Disentangled attention, residual on the *query* states, post-LayerNorm."""

    def __init__(self, config: DebertaConfig):
        super().__init__()
        self.attention = DisentangledSelfAttention(config)
        self.dropout = nn.Dropout(config.dropout)
        self.norm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)

    def forward(self, hidden, query_states, rows, index, attention_mask, return_attention):
        attended = self.attention(hidden, query_states, rows, index, attention_mask,
                                  return_attention)
        x = self.norm(query_states + self.dropout(attended.output))          # (B, T, H)
        return x, attended


class DebertaLayer(nn.Module):
    """One layer: disentangled attention block, then BERT's feed-forward block."""

    def __init__(self, config: DebertaConfig):
        super().__init__()
        self.attention = DisentangledAttentionBlock(config)
        self.feed_forward = FeedForwardBlock(config)

    def forward(self, hidden, rows, index, attention_mask, return_attention=False,
                query_states=None):
        query_states = hidden if query_states is None else query_states
        x, attended = self.attention(hidden, query_states, rows, index, attention_mask,
                                     return_attention)
        return self.feed_forward(x), attended                                # (B, T, H)


class DebertaEncoder(nn.Module):
    """Embeddings (no absolute positions unless asked), the shared table P, L DeBERTa layers.

    Like Hugging Face's, the embedding output is zeroed at padding positions. Every hidden
    state is always returned (the Enhanced Mask Decoder reads H^(L-1)).
    """

    def __init__(self, config: DebertaConfig):
        super().__init__()
        if not isinstance(config, DebertaConfig):
            raise TypeError("DeBERTa needs a DebertaConfig, e.g. deberta_config('bert-nano')")
        if config.sharing != "none":
            raise ValueError("DeBERTa does not share layers: use sharing='none'")
        if config.embedding_size != config.hidden_size:
            raise ValueError("minibert's DeBERTa has no factorized embeddings: leave "
                             "embedding_size equal to hidden_size")
        if config.causal:
            raise ValueError("DeBERTa is a bidirectional encoder: use causal=False")
        self.config = config
        self.embeddings = Embeddings(config)
        self.relative = RelativeEmbeddings(config)
        self.layers = nn.ModuleList(DebertaLayer(config) for _ in range(config.num_layers))

    def embed(self, input_ids, token_type_ids=None, attention_mask=None, position_ids=None):
        # BERT's input checks (shapes, ids in the vocabulary) read only self.config: reuse them.
        Encoder.check_inputs(self, input_ids, token_type_ids, attention_mask, position_ids)
        x = self.embeddings(input_ids, token_type_ids, position_ids)         # (B, T, H)
        if attention_mask is not None:
            x = x * attention_mask[:, :, None].to(x.dtype)                   # (B, T, H)
        return x

    def forward(
        self,
        input_ids: torch.Tensor,
        *,
        token_type_ids: torch.Tensor | None = None,
        attention_mask: torch.Tensor | None = None,
        position_ids: torch.Tensor | None = None,
        output_hidden_states: bool = False,
        output_attentions: bool = False,
    ) -> EncoderOutput:
        x = self.embed(input_ids, token_type_ids, attention_mask, position_ids)  # (B, T, H)
        length = input_ids.size(1)
        rows, index = self.relative(length, length)                          # (2k, H), (T, T)
        hidden_states, attentions, scores = [x], [], []
        for layer in self.layers:
            x, attended = layer(x, rows, index, attention_mask, output_attentions)
            hidden_states.append(x)
            if output_attentions:
                attentions.append(attended.probabilities)
                scores.append(attended.scores)
        return EncoderOutput(
            last_hidden_state=x,
            hidden_states=tuple(hidden_states),
            attentions=tuple(attentions) if output_attentions else None,
            scores=tuple(scores) if output_attentions else None,
        )


class EnhancedMaskDecoder(nn.Module):
    """EMD: absolute positions enter only here, right before the masked-LM head.

    The encoder's *last layer* (the same weights, not a copy) is applied twice more to
    H^(L-1): keys and values are H^(L-1) both times, the first query is H^(L-1) + Z[position]
    and each pass's output is the next query. The MLM head reads the second output.
    """

    def __init__(self, config: DebertaConfig, steps: int = 2):
        super().__init__()
        self.steps = steps
        self.position = nn.Embedding(config.max_position, config.hidden_size)  # Z

    def forward(self, encoder: DebertaEncoder, hidden_states: tuple[torch.Tensor, ...],
                attention_mask: torch.Tensor | None = None,
                position_ids: torch.Tensor | None = None) -> torch.Tensor:
        before_last = hidden_states[-2]                                      # (B, T, H) H^(L-1)
        length = before_last.size(1)
        if length > self.position.num_embeddings:
            raise ValueError(
                f"sequence length {length} is longer than the EMD's absolute position table "
                f"(max_position={self.position.num_embeddings}): build with a larger max_position"
            )
        if position_ids is None:
            position_ids = torch.arange(length, device=before_last.device)[None, :]  # (1, T)
        rows, index = encoder.relative(length, length)                       # (2k, H), (T, T)
        last_layer = encoder.layers[-1]
        query = before_last + self.position(position_ids)                    # (B, T, H)
        for _ in range(self.steps):
            query, _ = last_layer(before_last, rows, index, attention_mask,
                                  query_states=query)                        # (B, T, H)
        return query


__all__ = [
    "DebertaConfig", "DebertaEncoder", "DebertaLayer", "DisentangledSelfAttention",
    "EnhancedMaskDecoder", "RelativeEmbeddings", "attention_span", "deberta_config",
    "disentangled_scores", "disentangled_scores_loop", "log_bucket_positions",
    "masked_softmax", "relative_index", "relative_positions",
]
