"""What lesson 13 needs to compare every model of the course on equal terms.

`EncoderClassifier` puts one and the same head on any encoder of the course. Each family returns
its hidden states from its own class (BertModel, RobertaModel, AlbertModel, ElectraModel,
DebertaModel, DistilBertModel) and some were pretrained without a pooler, so the comparison
gives them all BERT's head, freshly initialized: the pooler (tanh of a dense layer on the [CLS]
vector) and a linear classifier. Only the encoder then differs from one row to the next.

`pareto_front` marks the models that no other model beats on both cost and quality.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from ..config import BertConfig
from ..encoder import init_weights
from ..heads import Classifier, Pooler
from ..models.bert import ClassifierOutput

__all__ = ["EncoderClassifier", "pareto_front"]


class EncoderClassifier(nn.Module):
    """Any course encoder + BERT's pooler on [CLS] + a linear classifier.

    encoder: a module called as encoder(input_ids, attention_mask=...) that returns an object
             with `last_hidden_state` (B, T, H); every encoder class of the course does.
    config:  the encoder's config (its hidden_size sizes the head).
    """

    def __init__(self, encoder: nn.Module, config: BertConfig, num_classes: int):
        super().__init__()
        if not isinstance(encoder, nn.Module):
            raise TypeError(f"encoder must be an nn.Module (e.g. a pretrained model's .bert), "
                            f"got {type(encoder).__name__}")
        self.config = config
        self.encoder = encoder
        self.pooler = Pooler(config)
        self.classifier = Classifier(config, num_classes)
        for head in (self.pooler, self.classifier):
            head.apply(lambda m: init_weights(m, config.initializer_range))

    def forward(self, input_ids: torch.Tensor, *, attention_mask: torch.Tensor | None = None,
                labels: torch.Tensor | None = None) -> ClassifierOutput:
        hidden = self.encoder(input_ids, attention_mask=attention_mask).last_hidden_state
        # hidden: (B, T, H)
        if hidden.size(-1) != self.config.hidden_size:
            raise ValueError(f"the encoder returns width {hidden.size(-1)} but the head was "
                             f"built for hidden_size={self.config.hidden_size}: pass the "
                             "encoder's config")
        logits = self.classifier(self.pooler(hidden))                       # (B, classes)
        loss = F.cross_entropy(logits, labels) if labels is not None else None
        return ClassifierOutput(loss, logits)


def pareto_front(cost: torch.Tensor, quality: torch.Tensor) -> torch.Tensor:
    """bool (N,): True for each model that no other model dominates.

    Model j dominates model i when it costs no more (cost_j <= cost_i), is no worse
    (quality_j >= quality_i), and is strictly better on at least one of the two. Two models
    with identical numbers are both on the front.
    """
    cost = torch.as_tensor(cost, dtype=torch.float64)                         # (N,)
    quality = torch.as_tensor(quality, dtype=torch.float64)                   # (N,)
    if cost.dim() != 1 or cost.shape != quality.shape:
        raise ValueError(f"cost and quality must be 1-d and of the same length, got shapes "
                         f"{tuple(cost.shape)} and {tuple(quality.shape)}")
    front = torch.ones(len(cost), dtype=torch.bool)                           # (N,)
    for i in range(len(cost)):
        for j in range(len(cost)):
            no_worse = cost[j] <= cost[i] and quality[j] >= quality[i]
            better = cost[j] < cost[i] or quality[j] > quality[i]
            if no_worse and better:
                front[i] = False
                break
    return front
