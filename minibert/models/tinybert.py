"""TinyBERT (Jiao et al., 2020): distil a BERT layer by layer, not only through its logits.

A student with M layers learns from a teacher with N layers. Student layer m is matched to
teacher layer g(m) = m * N / M (uniform mapping; g(0) = 0 is the embedding layer, and the
prediction layer M + 1 is matched to the teacher's prediction layer). Four losses:

    embeddings  (m = 0):  MSE(E^S W, E^T)
    hidden      (m >= 1): MSE(H^S_m W, H^T_g(m))          W: a learned d_S -> d_T projection
    attention   (m >= 1): MSE(A^S_m, A^T_g(m))            A: pre-softmax scores, per head
    prediction:           -softmax(z^T / t) . log_softmax(z^S / t)

Attention scores carry the additive padding mask (a huge negative number); the official code
sets every entry <= -100 to 0 in both models before the MSE, so that padding contributes
nothing. Task-specific distillation runs in two stages: the intermediate-layer losses first,
then the prediction loss alone. The official code uses a single projection (`fit_dense`) for
the embeddings and every hidden layer; so does `TinyBertStudent`.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from ..config import BertConfig
from ..distill import soft_cross_entropy
from ..encoder import init_weights
from .bert import BertForSequenceClassification

__all__ = [
    "MASKED_SCORE_THRESHOLD",
    "LayerOutputs",
    "TinyBertStudent",
    "attention_mse",
    "attention_mse_reference",
    "classifier_layer_outputs",
    "hidden_mse",
    "intermediate_loss",
    "layer_mapping",
    "prediction_loss",
]

MASKED_SCORE_THRESHOLD = -100.0  # scores at or below this are masked entries: set to 0


def layer_mapping(num_student_layers: int, num_teacher_layers: int) -> list[int]:
    """g(m) for m = 0..M: the teacher hidden-state index each student hidden state learns from.

    Index 0 is the embedding output, index m the output of layer m (as in
    `EncoderOutput.hidden_states`). Uniform: g(m) = m * N / M, so 4 from 12 gives
    [0, 3, 6, 9, 12]. Attention maps have no embedding entry: student layer m (1-based) uses
    teacher attention map g(m), found at index g(m) - 1 of the attention list.
    """
    M, N = num_student_layers, num_teacher_layers
    if M < 1 or N < 1:
        raise ValueError(f"both models need at least one layer, got M={M} and N={N}")
    if N % M != 0:
        raise ValueError(
            f"the uniform mapping needs the teacher's {N} layers to be a multiple of the "
            f"student's {M}: pick a student depth that divides {N}"
        )
    return [m * (N // M) for m in range(M + 1)]


def attention_mse_reference(student_scores: torch.Tensor, teacher_scores: torch.Tensor,
                            threshold: float = MASKED_SCORE_THRESHOLD) -> torch.Tensor:
    """The attention loss written out head by head: (1/h) sum_heads MSE(A^S_head, A^T_head)."""
    per_head = []
    for head in range(student_scores.size(1)):
        s = student_scores[:, head].clone()                                   # (B, T, T)
        t = teacher_scores[:, head].clone()                                   # (B, T, T)
        s[s <= threshold] = 0.0
        t[t <= threshold] = 0.0
        per_head.append(((s - t) ** 2).mean())
    return sum(per_head) / len(per_head)


def attention_mse(student_scores: torch.Tensor, teacher_scores: torch.Tensor,
                  threshold: float = MASKED_SCORE_THRESHOLD) -> torch.Tensor:
    """MSE between pre-softmax attention scores, with masked entries zeroed in both models.

    student_scores, teacher_scores: (B, heads, T, T), the same number of heads (TinyBERT
    matches head by head). Mean over every entry, which is (1/h) sum over heads of each
    head's MSE (see `attention_mse_reference`).
    """
    if student_scores.shape != teacher_scores.shape:
        raise ValueError(
            f"student scores {tuple(student_scores.shape)} and teacher scores "
            f"{tuple(teacher_scores.shape)} differ: TinyBERT needs the same number of heads "
            f"in both models (set the student's num_heads to the teacher's)"
        )
    teacher_scores = teacher_scores.detach()
    student = torch.where(student_scores <= threshold, 0.0, student_scores)  # (B, h, T, T)
    teacher = torch.where(teacher_scores <= threshold, 0.0, teacher_scores)  # (B, h, T, T)
    return ((student - teacher) ** 2).mean()


def hidden_mse(student_hidden: torch.Tensor, teacher_hidden: torch.Tensor,
               projection: nn.Module) -> torch.Tensor:
    """MSE(H^S W, H^T): the student's (B, T, d_S) states projected to the teacher's width.

    Padding positions are included, as in the official code.
    """
    projected = projection(student_hidden)                                    # (B, T, d_T)
    if projected.shape != teacher_hidden.shape:
        raise ValueError(
            f"projected student states {tuple(projected.shape)} do not match the teacher's "
            f"{tuple(teacher_hidden.shape)}: the projection must map d_S to d_T"
        )
    return ((projected - teacher_hidden.detach()) ** 2).mean()


def prediction_loss(student_logits: torch.Tensor, teacher_logits: torch.Tensor,
                    temperature: float = 1.0) -> torch.Tensor:
    """TinyBERT's prediction-layer loss: soft cross-entropy against the teacher (t = 1).

    Summed over classes and averaged over examples; the official code averages over classes
    too, which only divides the loss (and so the learning rate) by the number of classes.
    """
    return soft_cross_entropy(student_logits, teacher_logits, temperature)


@dataclass
class LayerOutputs:
    """What distillation reads from a classifier: logits and every layer's states and scores."""

    logits: torch.Tensor                        # (B, classes)
    hidden_states: tuple[torch.Tensor, ...]     # L + 1 of (B, T, H); [0] = embeddings
    scores: tuple[torch.Tensor, ...]            # L of (B, heads, T, T), pre-softmax


def classifier_layer_outputs(model: BertForSequenceClassification, input_ids: torch.Tensor,
                             attention_mask: torch.Tensor | None = None) -> LayerOutputs:
    """Run a BERT classifier and keep its hidden states and attention scores."""
    out = model.bert(input_ids, attention_mask=attention_mask, output_hidden_states=True,
                     output_attentions=True)
    logits = model.classifier(out.pooled)                                     # (B, classes)
    return LayerOutputs(logits, out.hidden_states, out.scores)


class TinyBertStudent(nn.Module):
    """A small BERT classifier plus the projection W (d_S -> d_T) used only while distilling."""

    def __init__(self, config: BertConfig, num_classes: int, teacher_hidden_size: int):
        super().__init__()
        self.config = config
        self.model = BertForSequenceClassification(config, num_classes)
        self.fit_dense = nn.Linear(config.hidden_size, teacher_hidden_size)
        self.fit_dense.apply(lambda m: init_weights(m, config.initializer_range))

    def forward(self, input_ids: torch.Tensor, *, attention_mask: torch.Tensor | None = None
                ) -> LayerOutputs:
        return classifier_layer_outputs(self.model, input_ids, attention_mask)


def intermediate_loss(student: LayerOutputs, teacher: LayerOutputs, mapping: list[int],
                      projection: nn.Module) -> dict[str, torch.Tensor]:
    """Stage 1's loss: embedding + hidden + attention MSEs over the mapped layers.

    mapping: `layer_mapping(M, N)`, one teacher hidden-state index per student hidden state.
    Returns {"loss": sum, "embedding": ..., "hidden": ..., "attention": ...}.
    """
    if len(mapping) != len(student.hidden_states):
        raise ValueError(
            f"mapping has {len(mapping)} entries but the student has "
            f"{len(student.hidden_states)} hidden states (embeddings + layers): use "
            f"layer_mapping(num_student_layers, num_teacher_layers)"
        )
    embedding = hidden_mse(student.hidden_states[0], teacher.hidden_states[0], projection)
    hidden = sum(hidden_mse(student.hidden_states[m], teacher.hidden_states[mapping[m]],
                            projection) for m in range(1, len(mapping)))
    attention = sum(attention_mse(student.scores[m - 1], teacher.scores[mapping[m] - 1])
                    for m in range(1, len(mapping)))
    return {"loss": embedding + hidden + attention, "embedding": embedding.detach(),
            "hidden": hidden.detach(), "attention": attention.detach()}
