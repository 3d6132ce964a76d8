"""DeBERTa (He et al., 2021): disentangled attention and the Enhanced Mask Decoder.

    input:   word (+ segment) embeddings only; no absolute positions (position_embedding='none')
    layers:  L DeBERTa layers whose attention adds content->position and position->content
             terms, from one relative position table shared by all layers
    MLM:     with EMD, the last layer is applied twice more to H^(L-1), with the absolute
             positions added to the first query; the tied MLM head reads that output.
             Without EMD the head reads H^(L), and the model never sees an absolute position.

The building blocks are in `minibert.disentangled`; this file only assembles them.
"""

from __future__ import annotations

import torch
from torch import nn

from ..disentangled import DebertaConfig, DebertaEncoder, EnhancedMaskDecoder, deberta_config
from ..encoder import EncoderOutput, init_weights
from ..heads import MLMHead
from .bert import MaskedLMOutput, masked_lm_loss

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


__all__ = ["DebertaConfig", "DebertaForMaskedLM", "DebertaModel",
           "DebertaOutput", "deberta_config"]
