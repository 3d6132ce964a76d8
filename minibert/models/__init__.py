"""Thin assemblies, one file per paper, built from the shared encoder and heads."""

from .albert import AlbertForPreTraining, AlbertModel, AlbertPreTrainingOutput, albert_config
from .bert import (
    BertForPreTraining,
    BertForSequenceClassification,
    BertModel,
    BertOutput,
    ClassifierOutput,
    EncoderForMaskedLM,
    MaskedLMOutput,
    PreTrainingOutput,
)
from .bilstm import BiLSTMClassifier
from .deberta import DebertaConfig, DebertaForMaskedLM, DebertaModel, deberta_config
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
    RobertaForMaskedLM,
    RobertaModel,
    position_ids_from_input_ids,
    roberta_config,
)
from .soft_masked_bert import BertCorrector, SoftMaskedBert
from .structbert import StructBertForPreTraining
from .tinybert import TinyBertStudent

__all__ = [
    "AlbertForPreTraining",
    "AlbertModel",
    "AlbertPreTrainingOutput",
    "BiLSTMClassifier",
    "BertCorrector",
    "BertForPreTraining",
    "BertForSequenceClassification",
    "BertModel",
    "BertOutput",
    "ClassifierOutput",
    "DebertaConfig",
    "DebertaForMaskedLM",
    "DebertaModel",
    "DistilBertClassifier",
    "DistilBertForMaskedLM",
    "DistilBertModel",
    "EncoderForMaskedLM",
    "ElectraDiscriminator",
    "ElectraForPreTraining",
    "ElectraForSequenceClassification",
    "ElectraModel",
    "FastBertForSequenceClassification",
    "MaskedLMOutput",
    "PreTrainingOutput",
    "RobertaForMaskedLM",
    "RobertaModel",
    "SoftMaskedBert",
    "StructBertForPreTraining",
    "TinyBertStudent",
    "albert_config",
    "deberta_config",
    "distilbert_config",
    "electra_configs",
    "init_from_teacher",
    "position_ids_from_input_ids",
    "roberta_config",
]
