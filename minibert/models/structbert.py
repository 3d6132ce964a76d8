"""StructBERT (Wang et al., 2020): BERT plus a word and a sentence structural objective.

    loss = masked-LM  (15%, 80/10/10, as BERT)
         + word structural objective: at the positions of shuffled trigrams, predict the
           original token with the same MLM head (see `minibert.structure.shuffle_trigrams`)
         + sentence structural objective: a 3-way [CLS] head, next / previous / random
           (see `minibert.structure.sentence_structure_examples`)

`sentence_classes=2` gives BERT's NSP head instead, and `sentence_classes=0` no sentence head,
so the lesson's ablations are the same class with one switch changed.
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

__all__ = ["StructBertForPreTraining", "StructBertOutput"]


@dataclass
class StructBertOutput:
    loss: torch.Tensor | None
    mlm_loss: torch.Tensor | None
    word_loss: torch.Tensor | None          # the word structural objective
    sentence_loss: torch.Tensor | None
    word_accuracy: float | None             # shuffled positions put back correctly
    sentence_logits: torch.Tensor | None    # (B, classes)
    bert: BertOutput


class StructBertForPreTraining(nn.Module):
    """BERT encoder, a tied MLM head shared by MLM and the word objective, a sentence head."""

    def __init__(self, config: BertConfig, sentence_classes: int = 3):
        super().__init__()
        if sentence_classes not in (0, 2, 3):
            raise ValueError(f"sentence_classes must be 3 (StructBERT), 2 (NSP) or 0 (none), "
                             f"got {sentence_classes}")
        self.config = config
        self.bert = BertModel(config, add_pooler=sentence_classes > 0)
        self.mlm = MLMHead(config, self.bert.word_embeddings)
        self.sentence = SentenceHead(config, sentence_classes) if sentence_classes else None
        self.mlm.apply(lambda m: init_weights(m, config.initializer_range))
        # The pooler and the sentence head keep PyTorch's default (fan-in scaled) init: two
        # stacked layers at BERT's N(0, 0.02) start with a vanishing signal, and in a run of a
        # few hundred steps the sentence loss never leaves chance.
        if self.sentence is not None:
            self.bert.pooler.dense.reset_parameters()

    def forward(
        self,
        input_ids: torch.Tensor,
        *,
        token_type_ids: torch.Tensor | None = None,
        attention_mask: torch.Tensor | None = None,
        mlm_labels: torch.Tensor | None = None,
        word_labels: torch.Tensor | None = None,
        sentence_labels: torch.Tensor | None = None,
    ) -> StructBertOutput:
        bert = self.bert(input_ids, token_type_ids=token_type_ids, attention_mask=attention_mask)
        hidden = bert.last_hidden_state                                       # (B, T, H)
        mlm_loss = word_loss = sentence_loss = word_accuracy = None
        if mlm_labels is not None:
            _, _, mlm_loss = masked_lm_loss(self.mlm, hidden, mlm_labels)
        if word_labels is not None:
            if mlm_labels is not None and ((mlm_labels != -100) & (word_labels != -100)).any():
                raise ValueError("word_labels overlap mlm_labels: shuffle only unmasked tokens "
                                 "(pass mlm_labels to shuffle_trigrams)")
            logits, targets, word_loss = masked_lm_loss(self.mlm, hidden, word_labels)
            if targets.numel():
                word_accuracy = (logits.argmax(-1) == targets).float().mean().item()
        logits = self.sentence(bert.pooled) if self.sentence is not None else None
        if sentence_labels is not None:
            if logits is None:
                raise ValueError("this model has no sentence head (sentence_classes=0)")
            sentence_loss = F.cross_entropy(logits, sentence_labels)
        losses = [x for x in (mlm_loss, word_loss, sentence_loss) if x is not None]
        return StructBertOutput(sum(losses) if losses else None, mlm_loss, word_loss,
                                sentence_loss, word_accuracy, logits, bert)
