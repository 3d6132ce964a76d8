"""Thin assemblies, one file per paper, built from the shared encoder and heads."""

from .albert import AlbertForPreTraining, AlbertModel, AlbertPreTrainingOutput, albert_config
from .bert import (
    BertForPreTraining,
    BertForSequenceClassification,
    BertModel,
    BertOutput,
    ClassifierOutput,
    PreTrainingOutput,
)
from .roberta import (
    MaskedLMOutput,
    RobertaForMaskedLM,
    RobertaModel,
    position_ids_from_input_ids,
    roberta_config,
)

__all__ = [
    "AlbertForPreTraining",
    "AlbertModel",
    "AlbertPreTrainingOutput",
    "BertForPreTraining",
    "BertForSequenceClassification",
    "BertModel",
    "BertOutput",
    "ClassifierOutput",
    "MaskedLMOutput",
    "PreTrainingOutput",
    "RobertaForMaskedLM",
    "RobertaModel",
    "albert_config",
    "position_ids_from_input_ids",
    "roberta_config",
]
