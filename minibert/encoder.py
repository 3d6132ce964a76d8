"""BERT's embeddings and its stack of post-LayerNorm Transformer layers.

    E  = Dropout(LayerNorm(W_tok[x_t] + W_pos[t] + W_seg[s_t]))      (then E -> H if factorized)
    U  = LayerNorm(X + Dropout(MultiHeadAttention(X)))
    X' = LayerNorm(U + Dropout(W_2 GELU(W_1 U + b_1) + b_2))

There is no final LayerNorm after the last layer. The stack supports ALBERT's cross-layer
sharing by reusing the *same* module objects in several layers (never copies), so a shared
weight receives the gradient of every layer that uses it.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from .attention import MultiHeadSelfAttention, attention_bias, check_attention_mask
from .config import BertConfig


def gelu_tanh(x: torch.Tensor) -> torch.Tensor:
    """GELU's tanh approximation (a named function, not a lambda, so that models pickle)."""
    return F.gelu(x, approximate="tanh")


def activation_fn(name: str):
    """BERT's GELU is exact x * Phi(x); ALBERT and the original TF code use the tanh form."""
    if name == "gelu":
        return F.gelu
    if name == "gelu_tanh":
        return gelu_tanh
    if name == "relu":
        return F.relu
    raise ValueError(f"unknown activation {name!r}")


class Embeddings(nn.Module):
    """Token + position + segment embeddings, LayerNorm, dropout; optional E -> H projection."""

    def __init__(self, config: BertConfig):
        super().__init__()
        self.config = config
        width = config.embedding_size
        self.word = nn.Embedding(config.vocab_size, width, padding_idx=config.pad_token_id)
        self.position = (
            nn.Embedding(config.max_position, width)
            if config.position_embedding == "absolute" else None
        )
        self.segment = (
            nn.Embedding(config.type_vocab_size, width) if config.type_vocab_size > 0 else None
        )
        self.norm = nn.LayerNorm(width, eps=config.layer_norm_eps)
        self.dropout = nn.Dropout(config.dropout)
        # ALBERT's factorization: a small table V x E, then one projection E -> H.
        self.project = (
            nn.Linear(width, config.hidden_size) if width != config.hidden_size else None
        )

    def forward(
        self,
        input_ids: torch.Tensor,
        token_type_ids: torch.Tensor | None = None,
        position_ids: torch.Tensor | None = None,
    ) -> torch.Tensor:
        batch, length = input_ids.shape
        x = self.word(input_ids)                                              # (B, T, E)
        if self.position is not None:
            if position_ids is None:
                position_ids = torch.arange(length, device=input_ids.device)[None, :]  # (1, T)
            x = x + self.position(position_ids)                               # (B, T, E)
        if self.segment is not None:
            if token_type_ids is None:
                token_type_ids = torch.zeros_like(input_ids)                  # (B, T)
            x = x + self.segment(token_type_ids)                              # (B, T, E)
        x = self.dropout(self.norm(x))                                        # (B, T, E)
        if self.project is not None:
            x = self.project(x)                                               # (B, T, H)
        return x


class AttentionBlock(nn.Module):
    """Self-attention with its residual connection and post-LayerNorm."""

    def __init__(self, config: BertConfig):
        super().__init__()
        self.attention = MultiHeadSelfAttention(config)
        self.dropout = nn.Dropout(config.dropout)
        self.norm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)

    def forward(self, x: torch.Tensor, bias: torch.Tensor | None, return_attention: bool):
        attended = self.attention(x, bias, return_attention=return_attention)
        x = self.norm(x + self.dropout(attended.output))                      # (B, T, H)
        return x, attended


class FeedForwardBlock(nn.Module):
    """Position-wise two-layer MLP with its residual connection and post-LayerNorm."""

    def __init__(self, config: BertConfig):
        super().__init__()
        self.up = nn.Linear(config.hidden_size, config.intermediate_size)
        self.down = nn.Linear(config.intermediate_size, config.hidden_size)
        self.activation = activation_fn(config.activation)
        self.dropout = nn.Dropout(config.dropout)
        self.norm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        inner = self.activation(self.up(x))                                   # (B, T, 4H)
        return self.norm(x + self.dropout(self.down(inner)))                  # (B, T, H)


class EncoderLayer(nn.Module):
    """One Transformer layer = an attention block followed by a feed-forward block.

    The blocks are passed in, so that several layers can hold the very same block object.
    """

    def __init__(self, attention: AttentionBlock, feed_forward: FeedForwardBlock):
        super().__init__()
        self.attention = attention
        self.feed_forward = feed_forward

    def forward(self, x: torch.Tensor, bias: torch.Tensor | None, return_attention: bool):
        x, attended = self.attention(x, bias, return_attention)
        return self.feed_forward(x), attended


def build_layers(config: BertConfig) -> nn.ModuleList:
    """L layers whose blocks are fresh or shared according to `config.sharing`.

    none: every layer owns its blocks (BERT). all: one attention and one FFN block reused
    L times (ALBERT). attention / ffn: share only that block.
    """
    shared_attention = AttentionBlock(config) if config.sharing in ("all", "attention") else None
    shared_ffn = FeedForwardBlock(config) if config.sharing in ("all", "ffn") else None
    layers = []
    for _ in range(config.num_layers):
        attention = shared_attention or AttentionBlock(config)
        feed_forward = shared_ffn or FeedForwardBlock(config)
        layers.append(EncoderLayer(attention, feed_forward))
    return nn.ModuleList(layers)


@dataclass
class EncoderOutput:
    last_hidden_state: torch.Tensor                        # (B, T, H)
    hidden_states: tuple[torch.Tensor, ...] | None = None  # L + 1 of (B, T, H); [0] = embeddings
    attentions: tuple[torch.Tensor, ...] | None = None     # L of (B, heads, T, T)
    scores: tuple[torch.Tensor, ...] | None = None         # L of (B, heads, T, T), pre-softmax


class Encoder(nn.Module):
    """Embeddings followed by the layer stack; returns every hidden state and map when asked."""

    def __init__(self, config: BertConfig):
        super().__init__()
        self.config = config
        self.embeddings = Embeddings(config)
        self.layers = build_layers(config)

    def check_inputs(self, input_ids, token_type_ids, attention_mask, position_ids) -> None:
        """Turn the usual mistakes into errors that say what to change."""
        config = self.config
        if not isinstance(input_ids, torch.Tensor):
            raise TypeError(
                "input_ids must be a torch.LongTensor of shape (batch, length); "
                "wrap a list with torch.tensor([...])"
            )
        if input_ids.dim() == 1:
            raise ValueError(
                "input_ids has shape (length,) but the encoder expects (batch, length): "
                "use input_ids[None] or input_ids.unsqueeze(0) for a single sequence"
            )
        if input_ids.dim() != 2:
            raise ValueError(
                f"input_ids must be (batch, length), got shape {tuple(input_ids.shape)}"
            )
        if input_ids.dtype not in (torch.int64, torch.int32):
            raise TypeError(f"input_ids must hold integer token ids, got dtype {input_ids.dtype}")
        if input_ids.size(0) == 0:
            raise ValueError("input_ids holds no sequences (a batch of 0): pass at least one")
        length = input_ids.size(1)
        if length == 0:
            raise ValueError("input_ids is empty: every sequence needs at least one token")
        if config.position_embedding == "absolute" and length > config.max_position:
            raise ValueError(
                f"sequence length {length} is longer than the position table "
                f"(max_position={config.max_position}): truncate the inputs to "
                f"{config.max_position} tokens or build the model with a larger max_position"
            )
        low, high = int(input_ids.min()), int(input_ids.max())
        if low < 0 or high >= config.vocab_size:
            bad = low if low < 0 else high
            raise ValueError(
                f"token id {bad} is outside the vocabulary (vocab_size={config.vocab_size}): "
                f"encode with the tokenizer the model was built for, or set "
                f"vocab_size >= {high + 1}"
            )
        check_attention_mask(attention_mask, tuple(input_ids.shape))
        for name, tensor in (("token_type_ids", token_type_ids), ("position_ids", position_ids)):
            if tensor is not None and tensor.shape[-1] != length:
                raise ValueError(
                    f"{name} has shape {tuple(tensor.shape)} but input_ids has shape "
                    f"{tuple(input_ids.shape)}: they must cover the same positions"
                )
        if token_type_ids is not None and config.type_vocab_size > 0:
            if int(token_type_ids.min()) < 0 or int(token_type_ids.max()) >= config.type_vocab_size:
                raise ValueError(
                    f"token_type_ids must lie in [0, {config.type_vocab_size}): segment A is 0, "
                    f"segment B is 1"
                )
        if position_ids is not None and config.position_embedding == "absolute":
            if int(position_ids.max()) >= config.max_position or int(position_ids.min()) < 0:
                raise ValueError(
                    f"position_ids must lie in [0, {config.max_position}) (the position table)"
                )

    def check_inputs_embeds(self, inputs_embeds, input_ids, attention_mask) -> None:
        """The checks for a caller that brings its own input vectors (Soft-Masked BERT)."""
        if input_ids is not None:
            raise ValueError("pass input_ids or inputs_embeds, not both: inputs_embeds replaces "
                             "the embedding layer's output")
        if not isinstance(inputs_embeds, torch.Tensor) or inputs_embeds.dim() != 3:
            raise ValueError("inputs_embeds must be a tensor of shape (batch, length, "
                             f"hidden_size={self.config.hidden_size})")
        if inputs_embeds.size(-1) != self.config.hidden_size:
            raise ValueError(
                f"inputs_embeds has width {inputs_embeds.size(-1)}, but the layers expect "
                f"hidden_size={self.config.hidden_size}: pass the embedding layer's output"
            )
        check_attention_mask(attention_mask, tuple(inputs_embeds.shape[:2]))

    def forward(
        self,
        input_ids: torch.Tensor | None = None,
        *,
        token_type_ids: torch.Tensor | None = None,
        attention_mask: torch.Tensor | None = None,
        position_ids: torch.Tensor | None = None,
        output_hidden_states: bool = False,
        output_attentions: bool = False,
        inputs_embeds: torch.Tensor | None = None,
    ) -> EncoderOutput:
        """Run the layers on the embeddings of `input_ids`, or on `inputs_embeds` (B, T, H)
        when given: vectors already in the embedding layer's output space."""
        if inputs_embeds is None:
            self.check_inputs(input_ids, token_type_ids, attention_mask, position_ids)
            x = self.embeddings(input_ids, token_type_ids, position_ids)      # (B, T, H)
        else:
            self.check_inputs_embeds(inputs_embeds, input_ids, attention_mask)
            x = inputs_embeds                                                 # (B, T, H)
        length = x.size(1)
        bias = attention_bias(attention_mask, length, length, causal=self.config.causal,
                              dtype=x.dtype, device=x.device)                 # (B, 1, 1|T, T)
        hidden_states, attentions, scores = [x], [], []
        for layer in self.layers:
            x, attended = layer(x, bias, output_attentions)                   # (B, T, H)
            hidden_states.append(x)
            if output_attentions:
                attentions.append(attended.probabilities)
                scores.append(attended.scores)
        return EncoderOutput(
            last_hidden_state=x,
            hidden_states=tuple(hidden_states) if output_hidden_states else None,
            attentions=tuple(attentions) if output_attentions else None,
            scores=tuple(scores) if output_attentions else None,
        )


def init_weights(module: nn.Module, std: float = 0.02) -> None:
    """BERT's initialization: N(0, 0.02) weights, zero biases, LayerNorm gamma = 1."""
    if isinstance(module, nn.Linear):
        nn.init.normal_(module.weight, mean=0.0, std=std)
        if module.bias is not None:
            nn.init.zeros_(module.bias)
    elif isinstance(module, nn.Embedding):
        nn.init.normal_(module.weight, mean=0.0, std=std)
        if module.padding_idx is not None:
            with torch.no_grad():
                module.weight[module.padding_idx].zero_()
    elif isinstance(module, nn.LayerNorm):
        nn.init.ones_(module.weight)
        nn.init.zeros_(module.bias)

