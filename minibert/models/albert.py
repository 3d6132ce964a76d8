"""ALBERT (Lan et al., 2020): BERT with fewer parameters, and sentence order instead of NSP.

ALBERT is the BERT encoder with two switches flipped in `BertConfig`:

- factorized embeddings: a V x E table and one E -> H projection (`embedding_size` < H)
  instead of a V x H table;
- cross-layer sharing: `sharing="all"` applies one layer object L times (`attention` or
  `ffn` share only that block).

Pretraining input:   [CLS] segment A [SEP] segment B [SEP], A and B consecutive in a document
Pretraining loss:    masked-LM cross-entropy (the decoder is the E-wide table, H -> E first)
                   + sentence-order cross-entropy on the pooled [CLS]: 0 = in order, 1 = swapped.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from ..config import BertConfig
from ..encoder import init_weights
from ..heads import MLMHead, SentenceHead
from .bert import BertModel, BertOutput, masked_lm_loss

ALBERT_DEFAULTS = dict(embedding_size=32, sharing="all", activation="gelu_tanh")


def albert_config(preset: str = "bert-micro", **overrides) -> BertConfig:
    """A tiny ALBERT config: a BERT preset with E = 32, all layers shared, tanh GELU.

    `albert_config("bert-mini", num_layers=6, embedding_size=64)` overrides any field.
    """
    return BertConfig.from_preset(preset, **{**ALBERT_DEFAULTS, **overrides})


class AlbertModel(BertModel):
    """The shared encoder with factorized embeddings and cross-layer sharing, and the pooler.

    Nothing new is needed: `Embeddings` projects E -> H and `build_layers` reuses module
    objects. hidden_states[0] is the projected embedding, the input of layer 1.
    """


@dataclass
class AlbertPreTrainingOutput:
    loss: torch.Tensor | None
    mlm_loss: torch.Tensor | None
    sop_loss: torch.Tensor | None
    mlm_logits: torch.Tensor          # (N, V) at labelled positions if labels given, else (B, T, V)
    sop_logits: torch.Tensor          # (B, 2)
    mlm_targets: torch.Tensor | None  # (N,) the original ids at the labelled positions
    albert: BertOutput


class AlbertForPreTraining(nn.Module):
    """ALBERT with its masked-LM head (H -> E, tied to the V x E table) and its SOP head."""

    def __init__(self, config: BertConfig):
        super().__init__()
        self.config = config
        self.albert = AlbertModel(config, add_pooler=True)
        self.mlm = MLMHead(config, self.albert.word_embeddings)
        self.sop = SentenceHead(config, 2)
        for head in (self.mlm, self.sop):
            head.apply(lambda m: init_weights(m, config.initializer_range))

    def forward(
        self,
        input_ids: torch.Tensor,
        *,
        token_type_ids: torch.Tensor | None = None,
        attention_mask: torch.Tensor | None = None,
        mlm_labels: torch.Tensor | None = None,
        sop_labels: torch.Tensor | None = None,
        output_hidden_states: bool = False,
        output_attentions: bool = False,
    ) -> AlbertPreTrainingOutput:
        albert = self.albert(input_ids, token_type_ids=token_type_ids,
                             attention_mask=attention_mask,
                             output_hidden_states=output_hidden_states,
                             output_attentions=output_attentions)
        mlm_loss = sop_loss = targets = None
        if mlm_labels is not None:
            logits, targets, mlm_loss = masked_lm_loss(self.mlm, albert.last_hidden_state,
                                                       mlm_labels)            # (N, V), (N,)
        else:
            logits = self.mlm(albert.last_hidden_state)                       # (B, T, V)
        sop_logits = self.sop(albert.pooled)                                  # (B, 2)
        if sop_labels is not None:
            sop_loss = F.cross_entropy(sop_logits, sop_labels)
        losses = [loss for loss in (mlm_loss, sop_loss) if loss is not None]
        loss = sum(losses) if losses else None
        return AlbertPreTrainingOutput(loss, mlm_loss, sop_loss, logits, sop_logits, targets,
                                       albert)
