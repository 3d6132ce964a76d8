"""Thin assemblies, one file per paper, built from the shared encoder and heads."""

from .bert import (
    BertForPreTraining,
    BertForSequenceClassification,
    BertModel,
    BertOutput,
    ClassifierOutput,
    PreTrainingOutput,
)

__all__ = [
    "BertForPreTraining",
    "BertForSequenceClassification",
    "BertModel",
    "BertOutput",
    "ClassifierOutput",
    "PreTrainingOutput",
]
