"""RoBERTa (Liu et al., 2019): BERT's encoder, trained differently, with two small changes.

RoBERTa keeps the architecture and changes the recipe (dynamic masking, no NSP, packed
FULL-SENTENCES inputs, big batches, a byte-level BPE). Inside the model only two things differ:

- one segment type (`type_vocab_size = 1`) and no NSP head;
- position ids count the real tokens and start after the padding index (fairseq's
  `make_positions`):

      input_ids     <s>  a   b   c  <pad> <pad>
      non-pad        1   1   1   1    0     0
      position_ids   2   3   4   5    1     1       (padding_idx = 1)

  so the position table needs `max_len + padding_idx + 1` rows: 514 for 512 tokens.
"""

from __future__ import annotations

import torch

from ..config import BertConfig
from .bert import BertModel, BertOutput, EncoderForMaskedLM

PADDING_IDX = 1  # RoBERTa's <pad> id, which is also where its positions are offset from


def roberta_config(max_len: int = 128, padding_idx: int = PADDING_IDX, **fields) -> BertConfig:
    """A BertConfig shaped like RoBERTa's: one segment type, max_len + padding_idx + 1 positions.

    `roberta_config(64, vocab_size=500, num_layers=2)`; other fields as in BertConfig.
    """
    for name in ("type_vocab_size", "max_position"):
        if name in fields:
            raise ValueError(f"roberta_config sets {name} itself; pass max_len instead")
    return BertConfig(type_vocab_size=1, max_position=max_len + padding_idx + 1, **fields)


def position_ids_from_input_ids(input_ids: torch.Tensor, pad_token_id: int,
                                padding_idx: int = PADDING_IDX) -> torch.Tensor:
    """cumsum(non-pad) + padding_idx at real tokens, padding_idx at padding. (B, T) -> (B, T)."""
    real = (input_ids != pad_token_id).long()                                # (B, T) 1 = token
    return torch.cumsum(real, dim=1) * real + padding_idx                     # (B, T)


class RobertaModel(BertModel):
    """BERT's encoder with RoBERTa's position ids and a single segment type.

    padding_idx: the position id given to padding (1 in RoBERTa); real tokens count from
    padding_idx + 1. The model finds padding by `config.pad_token_id`.
    """

    def __init__(self, config: BertConfig, add_pooler: bool = False,
                 padding_idx: int = PADDING_IDX, position_ids_fn=None):
        """position_ids_fn(input_ids, pad_token_id, padding_idx) -> (B, T): the position ids,
        `position_ids_from_input_ids` when None (a lesson passes the student's own once it is
        graded correct)."""
        if not isinstance(config, BertConfig):
            raise TypeError("RobertaModel needs a BertConfig, e.g. roberta_config(64)")
        if config.type_vocab_size != 1:
            raise ValueError(
                f"RoBERTa has one segment type, got type_vocab_size={config.type_vocab_size}: "
                f"build the config with roberta_config(max_len, ...)"
            )
        if config.position_embedding != "absolute" or config.max_position < padding_idx + 2:
            raise ValueError(
                f"RoBERTa needs learned positions and max_position >= padding_idx + 2 "
                f"(= {padding_idx + 2}); use roberta_config(max_len, ...), which sets "
                f"max_position = max_len + padding_idx + 1"
            )
        super().__init__(config, add_pooler=add_pooler)
        self.padding_idx = padding_idx
        self.position_ids_fn = position_ids_fn or position_ids_from_input_ids

    def forward(
        self,
        input_ids: torch.Tensor,
        *,
        attention_mask: torch.Tensor | None = None,
        position_ids: torch.Tensor | None = None,
        output_hidden_states: bool = False,
        output_attentions: bool = False,
    ) -> BertOutput:
        if isinstance(input_ids, torch.Tensor) and input_ids.dim() == 2 and position_ids is None:
            longest = self.config.max_position - self.padding_idx - 1
            if input_ids.size(1) > longest:
                raise ValueError(
                    f"sequence length {input_ids.size(1)} is longer than this RoBERTa's "
                    f"{longest} positions (max_position={self.config.max_position} minus the "
                    f"padding offset {self.padding_idx + 1}): truncate the inputs, or build "
                    f"the config with roberta_config(max_len={input_ids.size(1)})"
                )
            position_ids = self.position_ids_fn(
                input_ids, self.config.pad_token_id, self.padding_idx)        # (B, T)
        return super().forward(input_ids, attention_mask=attention_mask, position_ids=position_ids,
                               output_hidden_states=output_hidden_states,
                               output_attentions=output_attentions)


class RobertaForMaskedLM(EncoderForMaskedLM):
    """RoBERTa's pretraining model: the encoder and a tied MLM head, no NSP, no pooler."""

    base_model_prefix = "roberta"

    def __init__(self, config: BertConfig, padding_idx: int = PADDING_IDX, position_ids_fn=None):
        super().__init__(config, RobertaModel(config, add_pooler=False, padding_idx=padding_idx,
                                              position_ids_fn=position_ids_fn))
