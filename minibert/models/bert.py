"""BERT (Devlin et al., 2019): the encoder, its pretraining heads, and a fine-tuning classifier.

Pretraining input:   [CLS] sentence A [SEP] sentence B [SEP]
                     segment 0 ..........  segment 1 .......
Pretraining loss:    masked-LM cross-entropy, averaged over the selected positions only,
                   + next-sentence cross-entropy on the pooled [CLS] vector.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from ..config import BertConfig
from ..encoder import Encoder, init_weights
from ..heads import Classifier, MLMHead, Pooler, SentenceHead

IGNORE_INDEX = -100   # label of positions that carry no MLM loss (not selected for masking)


def masked_lm_loss(
    mlm_head: MLMHead, hidden: torch.Tensor, mlm_labels: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Score the labelled positions only; return (logits (N, V), targets (N,), mean loss).

    mlm_labels: (B, T), the original id where a token was selected, -100 elsewhere. The loss
    is the mean over the selected positions, the 10% kept unchanged included.
    """
    if mlm_labels.shape != hidden.shape[:2]:
        raise ValueError(
            f"mlm_labels has shape {tuple(mlm_labels.shape)}, expected "
            f"{tuple(hidden.shape[:2])} (the original id where masked, -100 elsewhere)"
        )
    selected = mlm_labels != IGNORE_INDEX                                     # (B, T)
    if selected.numel() > 1 and bool(selected.all()):
        warnings.warn(
            "every position has an MLM label, so padding and unmasked tokens are trained on "
            f"too: positions without a label take {IGNORE_INDEX} (IGNORE_INDEX), not 0",
            stacklevel=3)
    logits = mlm_head(hidden, selected)                                       # (N, V)
    targets = mlm_labels[selected]                                            # (N,)
    if targets.numel() and (int(targets.min()) < 0 or int(targets.max()) >= logits.size(-1)):
        raise ValueError(f"mlm_labels hold ids outside the vocabulary (0..{logits.size(-1) - 1}):"
                         f" a label is the original token id, or {IGNORE_INDEX} for no label")
    loss = F.cross_entropy(logits, targets) if targets.numel() else logits.sum() * 0
    return logits, targets, loss


@dataclass
class BertOutput:
    last_hidden_state: torch.Tensor                        # (B, T, H)
    pooled: torch.Tensor | None = None                     # (B, H)
    hidden_states: tuple[torch.Tensor, ...] | None = None  # L + 1 of (B, T, H)
    attentions: tuple[torch.Tensor, ...] | None = None     # L of (B, heads, T, T)
    scores: tuple[torch.Tensor, ...] | None = None         # L of (B, heads, T, T)


class BertModel(nn.Module):
    """Embeddings, L post-LN layers, and (optionally) the tanh pooler."""

    def __init__(self, config: BertConfig, add_pooler: bool = True):
        super().__init__()
        if not isinstance(config, BertConfig):
            raise TypeError(
                "BertModel needs a BertConfig, e.g. BertConfig.from_preset('bert-nano')"
            )
        self.config = config
        self.encoder = Encoder(config)
        self.pooler = Pooler(config) if add_pooler else None
        self.apply(lambda m: init_weights(m, config.initializer_range))

    @property
    def word_embeddings(self) -> nn.Embedding:
        return self.encoder.embeddings.word

    def forward(
        self,
        input_ids: torch.Tensor | None,
        *,
        token_type_ids: torch.Tensor | None = None,
        attention_mask: torch.Tensor | None = None,
        position_ids: torch.Tensor | None = None,
        output_hidden_states: bool = False,
        output_attentions: bool = False,
        inputs_embeds: torch.Tensor | None = None,
    ) -> BertOutput:
        out = self.encoder(input_ids, token_type_ids=token_type_ids,
                           attention_mask=attention_mask, position_ids=position_ids,
                           output_hidden_states=output_hidden_states,
                           output_attentions=output_attentions, inputs_embeds=inputs_embeds)
        pooled = self.pooler(out.last_hidden_state) if self.pooler is not None else None
        return BertOutput(out.last_hidden_state, pooled, out.hidden_states, out.attentions,
                          out.scores)


@dataclass
class PreTrainingOutput:
    loss: torch.Tensor | None
    mlm_loss: torch.Tensor | None
    nsp_loss: torch.Tensor | None
    mlm_logits: torch.Tensor          # (N, V) at labelled positions if labels given, else (B, T, V)
    nsp_logits: torch.Tensor | None   # (B, 2)
    mlm_targets: torch.Tensor | None  # (N,) the original ids at the labelled positions
    bert: BertOutput


class BertForPreTraining(nn.Module):
    """BERT with its masked-LM head and (unless `nsp=False`, as in RoBERTa) the NSP head."""

    def __init__(self, config: BertConfig, nsp: bool = True):
        super().__init__()
        self.config = config
        self.bert = BertModel(config, add_pooler=nsp)
        self.mlm = MLMHead(config, self.bert.word_embeddings)
        self.nsp = SentenceHead(config, 2) if nsp else None
        for head in (self.mlm, self.nsp):
            if head is not None:
                head.apply(lambda m: init_weights(m, config.initializer_range))

    def forward(
        self,
        input_ids: torch.Tensor,
        *,
        token_type_ids: torch.Tensor | None = None,
        attention_mask: torch.Tensor | None = None,
        mlm_labels: torch.Tensor | None = None,
        nsp_labels: torch.Tensor | None = None,
        output_hidden_states: bool = False,
        output_attentions: bool = False,
    ) -> PreTrainingOutput:
        bert = self.bert(input_ids, token_type_ids=token_type_ids, attention_mask=attention_mask,
                         output_hidden_states=output_hidden_states,
                         output_attentions=output_attentions)
        mlm_loss = nsp_loss = targets = None
        if mlm_labels is not None:
            logits, targets, mlm_loss = masked_lm_loss(self.mlm, bert.last_hidden_state,
                                                       mlm_labels)            # (N, V), (N,)
        else:
            logits = self.mlm(bert.last_hidden_state)                         # (B, T, V)
        nsp_logits = self.nsp(bert.pooled) if self.nsp is not None else None  # (B, 2)
        if nsp_labels is not None:
            if nsp_logits is None:
                raise ValueError("this model was built with nsp=False, so it takes no nsp_labels")
            nsp_loss = F.cross_entropy(nsp_logits, nsp_labels)
        losses = [loss for loss in (mlm_loss, nsp_loss) if loss is not None]
        loss = sum(losses) if losses else None
        return PreTrainingOutput(loss, mlm_loss, nsp_loss, logits, nsp_logits, targets, bert)


@dataclass
class ClassifierOutput:
    loss: torch.Tensor | None
    logits: torch.Tensor             # (B, classes)


class BertForSequenceClassification(nn.Module):
    """A classifier on the pooled [CLS] vector. Pass `bert=` to fine-tune a pretrained encoder."""

    def __init__(self, config: BertConfig, num_classes: int, bert: BertModel | None = None):
        super().__init__()
        self.config = config
        self.bert = bert if bert is not None else BertModel(config)
        if self.bert.pooler is None:   # an encoder pretrained without NSP has no pooler yet
            self.bert.pooler = Pooler(config)
            self.bert.pooler.apply(lambda m: init_weights(m, config.initializer_range))
        self.classifier = Classifier(config, num_classes)
        self.classifier.apply(lambda m: init_weights(m, config.initializer_range))

    def forward(
        self,
        input_ids: torch.Tensor,
        *,
        token_type_ids: torch.Tensor | None = None,
        attention_mask: torch.Tensor | None = None,
        labels: torch.Tensor | None = None,
    ) -> ClassifierOutput:
        pooled = self.bert(input_ids, token_type_ids=token_type_ids,
                           attention_mask=attention_mask).pooled              # (B, H)
        logits = self.classifier(pooled)                                       # (B, classes)
        loss = F.cross_entropy(logits, labels) if labels is not None else None
        return ClassifierOutput(loss, logits)


@dataclass
class MaskedLMOutput:
    """What every masked-LM model of the course returns (RoBERTa, DistilBERT, DeBERTa)."""

    loss: torch.Tensor | None
    logits: torch.Tensor             # (N, V) at labelled positions if labels given, else (B, T, V)
    targets: torch.Tensor | None     # (N,) the original ids at the labelled positions
    encoder_output: BertOutput       # the encoder's hidden states (and attentions if asked)
    decoded: torch.Tensor | None = None   # (B, T, H) what the head read, when not the last layer


class EncoderForMaskedLM(nn.Module):
    """An encoder and a tied masked-LM head, no sentence head: RoBERTa's and DistilBERT's
    pretraining model, which differ only in their encoder.

    The encoder is kept under the attribute `base_model_prefix` ("roberta", "distilbert"), so
    parameter names read `roberta.encoder.layers.0...` as in the original checkpoints.
    """

    base_model_prefix = "encoder_model"

    def __init__(self, config: BertConfig, encoder: BertModel):
        super().__init__()
        self.config = config
        setattr(self, self.base_model_prefix, encoder)
        self.mlm = MLMHead(config, encoder.word_embeddings)
        self.mlm.apply(lambda m: init_weights(m, config.initializer_range))

    @property
    def base_model(self) -> BertModel:
        """The encoder (the same module as `self.roberta` or `self.distilbert`)."""
        return getattr(self, self.base_model_prefix)

    def forward(
        self,
        input_ids: torch.Tensor,
        *,
        attention_mask: torch.Tensor | None = None,
        mlm_labels: torch.Tensor | None = None,
        output_hidden_states: bool = False,
        output_attentions: bool = False,
    ) -> MaskedLMOutput:
        out = self.base_model(input_ids, attention_mask=attention_mask,
                              output_hidden_states=output_hidden_states,
                              output_attentions=output_attentions)
        if mlm_labels is None:
            return MaskedLMOutput(None, self.mlm(out.last_hidden_state), None, out)  # (B, T, V)
        logits, targets, loss = masked_lm_loss(self.mlm, out.last_hidden_state,
                                               mlm_labels)                    # (N, V), (N,)
        return MaskedLMOutput(loss, logits, targets, out)
