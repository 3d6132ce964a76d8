"""DistilBERT (Sanh et al., 2019): a BERT with half the layers, trained to imitate a BERT.

The architecture is BERT's encoder with two parts removed:

- no token-type (segment) embeddings: `type_vocab_size = 0`, since there is no NSP;
- no pooler: a classifier reads the [CLS] hidden state directly (see `DistilBertClassifier`).

Everything else (learned absolute positions, post-LayerNorm layers, GELU, the tied MLM head)
is BERT's, so the student can start from the teacher's weights: the embeddings, the MLM head
and one teacher layer out of two (`init_from_teacher`). The training loss, distillation + MLM +
cosine of the last hidden states, is `minibert.distill.triple_loss`.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.nn.functional as F
from torch import nn

from ..config import BertConfig
from ..encoder import init_weights
from .bert import BertForPreTraining, BertModel, BertOutput, ClassifierOutput, EncoderForMaskedLM

__all__ = [
    "DistilBertClassifier",
    "DistilBertForMaskedLM",
    "DistilBertModel",
    "distilbert_config",
    "every_other_layer",
    "init_from_teacher",
]


def distilbert_config(base: str | BertConfig = "bert-mini", **fields) -> BertConfig:
    """A BertConfig shaped like DistilBERT's: no segment embeddings.

    base: a preset name (`"bert-mini"`) or a teacher's BertConfig to copy the shapes from;
    `fields` override anything else, e.g. `distilbert_config(teacher.config, num_layers=2)`.
    """
    if "type_vocab_size" in fields and fields["type_vocab_size"] != 0:
        raise ValueError("DistilBERT has no token-type embeddings: leave type_vocab_size out "
                         "(distilbert_config sets it to 0)")
    fields["type_vocab_size"] = 0
    if isinstance(base, BertConfig):
        return base.replace(**fields)
    return BertConfig.from_preset(base, **fields)


def _check_config(config: BertConfig) -> None:
    if not isinstance(config, BertConfig):
        raise TypeError("DistilBertModel needs a BertConfig, e.g. distilbert_config('bert-mini')")
    if config.type_vocab_size != 0:
        raise ValueError(
            f"DistilBERT has no token-type embeddings, got type_vocab_size="
            f"{config.type_vocab_size}: build the config with distilbert_config(...)"
        )


class DistilBertModel(BertModel):
    """BERT's encoder without segment embeddings and without a pooler."""

    def __init__(self, config: BertConfig):
        _check_config(config)
        super().__init__(config, add_pooler=False)

    def forward(
        self,
        input_ids: torch.Tensor,
        *,
        attention_mask: torch.Tensor | None = None,
        position_ids: torch.Tensor | None = None,
        output_hidden_states: bool = False,
        output_attentions: bool = False,
    ) -> BertOutput:
        return super().forward(input_ids, attention_mask=attention_mask, position_ids=position_ids,
                               output_hidden_states=output_hidden_states,
                               output_attentions=output_attentions)


class DistilBertForMaskedLM(EncoderForMaskedLM):
    """The DistilBERT student: the encoder and BERT's tied MLM head (no NSP)."""

    base_model_prefix = "distilbert"

    def __init__(self, config: BertConfig):
        super().__init__(config, DistilBertModel(config))


class DistilBertClassifier(nn.Module):
    """Fine-tuning head as in HF's DistilBertForSequenceClassification, without a pooler.

    logits = W_2 Dropout(ReLU(W_1 h_[CLS] + b_1)) + b_2, reading the [CLS] hidden state.
    `encoder` is a DistilBertModel, or a BertModel (a teacher gets the very same head, so the
    two can be compared on equal terms).
    """

    def __init__(self, encoder: BertModel, num_classes: int):
        super().__init__()
        if num_classes < 2:
            raise ValueError(f"a classifier needs at least 2 classes, got {num_classes}")
        config = encoder.config
        self.config = config
        self.encoder = encoder
        self.pre_classifier = nn.Linear(config.hidden_size, config.hidden_size)
        self.dropout = nn.Dropout(config.dropout)
        self.classifier = nn.Linear(config.hidden_size, num_classes)
        for module in (self.pre_classifier, self.classifier):
            init_weights(module, config.initializer_range)

    def forward(self, input_ids: torch.Tensor, *, attention_mask: torch.Tensor | None = None,
                labels: torch.Tensor | None = None) -> ClassifierOutput:
        hidden = self.encoder(input_ids, attention_mask=attention_mask).last_hidden_state
        cls = hidden[:, 0]                                                          # (B, H)
        logits = self.classifier(self.dropout(F.relu(self.pre_classifier(cls))))   # (B, classes)
        loss = F.cross_entropy(logits, labels) if labels is not None else None
        return ClassifierOutput(loss, logits)


def every_other_layer(teacher_layers: int, student_layers: int) -> list[int]:
    """The teacher layers a student starts from: 0, 2, 4, ... ("one layer out of two").

    The paper says one layer out of two; Hugging Face's `extract_distilbert.py` actually takes
    [0, 2, 4, 7, 9, 11] for 12 -> 6. Here: layer 2i for student layer i.
    """
    if not 1 <= student_layers <= teacher_layers:
        raise ValueError(f"the student needs between 1 and {teacher_layers} layers (the "
                         f"teacher's), got {student_layers}")
    step = teacher_layers // student_layers
    return [step * i for i in range(student_layers)]


def init_from_teacher(
    student: DistilBertForMaskedLM,
    teacher: BertForPreTraining,
    layers: Sequence[int] | None = None,
    fold_segment: bool = True,
) -> list[int]:
    """Copy the teacher's embeddings, MLM head and `layers` (default every other) into the student.

    Student layer i gets teacher layer layers[i]. The teacher's segment table has no place in the
    student; with `fold_segment=True` its segment-0 row is added to every position row, which is
    exact for single-segment inputs (all token types 0). Hugging Face's script simply drops it.
    Returns the teacher layers used.
    """
    s_config, t_config = student.config, teacher.config
    for name in ("hidden_size", "num_heads", "intermediate_size", "embedding_size", "vocab_size",
                 "max_position", "activation"):
        if getattr(s_config, name) != getattr(t_config, name):
            raise ValueError(
                f"student and teacher differ in {name} ({getattr(s_config, name)} vs "
                f"{getattr(t_config, name)}): the weight copy needs the teacher's shapes; "
                f"build the student with distilbert_config(teacher.config, num_layers=...)"
            )
    if layers is None:
        layers = every_other_layer(t_config.num_layers, s_config.num_layers)
    layers = list(layers)
    if len(layers) != s_config.num_layers or not all(0 <= i < t_config.num_layers for i in layers):
        raise ValueError(f"layers must name {s_config.num_layers} teacher layers in "
                         f"[0, {t_config.num_layers}), got {layers}")
    source, target = teacher.bert.encoder, student.distilbert.encoder
    with torch.no_grad():
        target.embeddings.word.weight.copy_(source.embeddings.word.weight)
        position = source.embeddings.position.weight.clone()                  # (P, E)
        if fold_segment and source.embeddings.segment is not None:
            position += source.embeddings.segment.weight[0]                   # (P, E) + (E,)
        target.embeddings.position.weight.copy_(position)
        target.embeddings.norm.load_state_dict(source.embeddings.norm.state_dict())
        if source.embeddings.project is not None:                             # ALBERT-style E -> H
            target.embeddings.project.load_state_dict(source.embeddings.project.state_dict())
        for student_layer, teacher_layer in zip(target.layers, layers):
            student_layer.load_state_dict(source.layers[teacher_layer].state_dict())
        student.mlm.load_state_dict(teacher.mlm.state_dict())   # dense, norm, bias, tied table
    return layers
