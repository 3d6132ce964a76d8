"""DeBERTa (He et al., 2021): disentangled attention and the Enhanced Mask Decoder.

    input:   word (+ segment) embeddings only; no absolute positions (position_embedding='none')
    layers:  L DeBERTa layers whose attention adds content->position and position->content
             terms, from one relative position table shared by all layers
    MLM:     with EMD, the last layer is applied twice more to H^(L-1), with the absolute
             positions added to the first query; the tied MLM head reads that output.
             Without EMD the head reads H^(L), and the model never sees an absolute position.

The scores and the attention module are in `minibert.disentangled`; this file holds the config,
the layers, the encoder, the Enhanced Mask Decoder and the masked-LM model built from them.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from ..config import BertConfig
from ..disentangled import RELATIVE_TERMS, DisentangledSelfAttention, RelativeEmbeddings
from ..encoder import Embeddings, Encoder, EncoderOutput, FeedForwardBlock, init_weights
from ..heads import MLMHead
from .bert import MaskedLMOutput, masked_lm_loss


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


# The encoder's output as it is: every hidden state (the EMD reads them), attention maps and
# pre-softmax scores when asked.
DebertaOutput = EncoderOutput


class DebertaModel(nn.Module):
    """The DeBERTa encoder (like Hugging Face's DebertaModel / DebertaV2Model: no pooler)."""

    def __init__(self, config: DebertaConfig):
        super().__init__()
        self.config = config
        self.encoder = DebertaEncoder(config)
        self.apply(lambda m: init_weights(m, config.initializer_range))

    @property
    def word_embeddings(self) -> nn.Embedding:
        return self.encoder.embeddings.word

    def forward(
        self,
        input_ids: torch.Tensor,
        *,
        token_type_ids: torch.Tensor | None = None,
        attention_mask: torch.Tensor | None = None,
        position_ids: torch.Tensor | None = None,
        output_attentions: bool = False,
    ) -> DebertaOutput:
        return self.encoder(input_ids, token_type_ids=token_type_ids,
                            attention_mask=attention_mask, position_ids=position_ids,
                            output_attentions=output_attentions)


class DebertaForMaskedLM(nn.Module):
    """DeBERTa with a tied masked-LM head, read through the Enhanced Mask Decoder if `emd`."""

    def __init__(self, config: DebertaConfig, emd: bool = True):
        super().__init__()
        self.config = config
        self.deberta = DebertaModel(config)
        self.emd = EnhancedMaskDecoder(config) if emd else None
        self.mlm = MLMHead(config, self.deberta.word_embeddings)
        for head in (self.emd, self.mlm):
            if head is not None:
                head.apply(lambda m: init_weights(m, config.initializer_range))

    def forward(
        self,
        input_ids: torch.Tensor,
        *,
        token_type_ids: torch.Tensor | None = None,
        attention_mask: torch.Tensor | None = None,
        mlm_labels: torch.Tensor | None = None,
        position_ids: torch.Tensor | None = None,
        output_attentions: bool = False,
    ) -> MaskedLMOutput:
        out = self.deberta(input_ids, token_type_ids=token_type_ids,
                           attention_mask=attention_mask, position_ids=position_ids,
                           output_attentions=output_attentions)
        if self.emd is not None:
            decoded = self.emd(self.deberta.encoder, out.hidden_states, attention_mask,
                               position_ids)                                 # (B, T, H)
        else:
            decoded = out.last_hidden_state                                  # (B, T, H)
        loss = targets = None
        if mlm_labels is not None:
            logits, targets, loss = masked_lm_loss(self.mlm, decoded, mlm_labels)  # (N, V)
        else:
            logits = self.mlm(decoded)                                       # (B, T, V)
        return MaskedLMOutput(loss, logits, targets, out, decoded)


__all__ = ["DebertaConfig", "DebertaEncoder", "DebertaForMaskedLM", "DebertaLayer",
           "DebertaModel", "DebertaOutput", "EnhancedMaskDecoder", "deberta_config"]
