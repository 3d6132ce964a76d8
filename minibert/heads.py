"""The small networks that sit on top of the encoder.

- MLMHead: dense + GELU + LayerNorm, then a decoder tied to the word embeddings, with its own
  bias. It can score only the masked positions, which is much cheaper than scoring all of them.
- Pooler: tanh(W h_[CLS] + b), the sentence vector that NSP/SOP and classifiers read.
- SentenceHead: NSP (2 classes), SOP (2) or StructBERT's next/previous/random (3), on the pooler.
- TokenHead: one logit per token (ELECTRA's replaced-token detection, error detection).
- Classifier: dropout + linear on the pooled vector, for fine-tuning.
"""

from __future__ import annotations

import torch
from torch import nn

from .config import BertConfig
from .encoder import activation_fn


class MLMHead(nn.Module):
    """Predict the original token at each (selected) position. Decoder weight = word embeddings."""

    def __init__(self, config: BertConfig, word_embeddings: nn.Embedding):
        super().__init__()
        # With factorized embeddings the transform maps H -> E, so the tied E-wide table fits.
        self.dense = nn.Linear(config.hidden_size, config.embedding_size)
        self.activation = activation_fn(config.activation)
        self.norm = nn.LayerNorm(config.embedding_size, eps=config.layer_norm_eps)
        self.word_embeddings = word_embeddings        # shared, not copied: (V, E)
        self.bias = nn.Parameter(torch.zeros(config.vocab_size))

    def forward(self, hidden: torch.Tensor, positions: torch.Tensor | None = None) -> torch.Tensor:
        """hidden: (B, T, H). positions: optional bool (B, T) of the positions to score.

        Returns logits (B, T, V), or (N, V) for the N selected positions.
        """
        if positions is not None:
            hidden = hidden[positions]                                        # (N, H)
        z = self.norm(self.activation(self.dense(hidden)))                    # (..., E)
        return z @ self.word_embeddings.weight.T + self.bias                  # (..., V)


class Pooler(nn.Module):
    """The [CLS] vector through a dense layer and tanh."""

    def __init__(self, config: BertConfig):
        super().__init__()
        self.dense = nn.Linear(config.hidden_size, config.hidden_size)

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        return torch.tanh(self.dense(hidden[:, 0]))                           # (B, H)


class SentenceHead(nn.Module):
    """Classify the pooled [CLS] vector into `num_classes` sentence relations (NSP = 2)."""

    def __init__(self, config: BertConfig, num_classes: int = 2):
        super().__init__()
        self.classifier = nn.Linear(config.hidden_size, num_classes)

    def forward(self, pooled: torch.Tensor) -> torch.Tensor:
        return self.classifier(pooled)                                        # (B, classes)


class TokenHead(nn.Module):
    """One logit per token: dense + activation + linear to 1 (ELECTRA's discriminator head)."""

    def __init__(self, config: BertConfig):
        super().__init__()
        self.dense = nn.Linear(config.hidden_size, config.hidden_size)
        self.activation = activation_fn(config.activation)
        self.out = nn.Linear(config.hidden_size, 1)

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        return self.out(self.activation(self.dense(hidden))).squeeze(-1)      # (B, T)


class Classifier(nn.Module):
    """Dropout and a linear layer on the pooled vector: the fine-tuning head."""

    def __init__(self, config: BertConfig, num_classes: int):
        super().__init__()
        if num_classes < 2:
            raise ValueError(
                f"a classifier needs at least 2 classes, got num_classes={num_classes}"
            )
        self.dropout = nn.Dropout(config.dropout)
        self.out = nn.Linear(config.hidden_size, num_classes)

    def forward(self, pooled: torch.Tensor) -> torch.Tensor:
        return self.out(self.dropout(pooled))                                 # (B, classes)
