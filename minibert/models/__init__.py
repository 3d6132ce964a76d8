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
from .bilstm import BiLSTMClassifier
from .deberta import DebertaForMaskedLM, DebertaModel
from .distilbert import (
    DistilBertClassifier,
    DistilBertForMaskedLM,
    DistilBertModel,
    distilbert_config,
    init_from_teacher,
)
from .electra import (
    ElectraDiscriminator,
    ElectraForPreTraining,
    ElectraForSequenceClassification,
    ElectraModel,
    electra_configs,
)
from .fastbert import FastBertForSequenceClassification
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
    "BiLSTMClassifier",
    "BertForPreTraining",
    "BertForSequenceClassification",
    "BertModel",
    "BertOutput",
    "ClassifierOutput",
    "DebertaForMaskedLM",
    "DebertaModel",
    "DistilBertClassifier",
    "DistilBertForMaskedLM",
    "DistilBertModel",
    "ElectraDiscriminator",
    "ElectraForPreTraining",
    "ElectraForSequenceClassification",
    "ElectraModel",
    "FastBertForSequenceClassification",
    "MaskedLMOutput",
    "PreTrainingOutput",
    "RobertaForMaskedLM",
    "RobertaModel",
    "albert_config",
    "distilbert_config",
    "electra_configs",
    "init_from_teacher",
    "position_ids_from_input_ids",
    "roberta_config",
]
