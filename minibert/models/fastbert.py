"""FastBERT (Liu et al., 2020): a classifier after every layer, self-distillation, early exit.

    backbone:   a BERT encoder, L layers
    branches:   one small classifier after every layer; the last one is the *teacher*
    step 1:     fine-tune backbone + teacher with cross-entropy on labelled data
    step 2:     freeze them; train the other L - 1 classifiers (the *students*) to match the
                teacher's distribution, sum_i KL(p_teacher || p_student_i), on unlabelled data
    inference:  after layer i, uncertainty U_i = entropy(p_i) / log N, in [0, 1]; a sample
                whose U_i <= speed exits with that classifier's prediction, the rest go on

Speed = 0 runs every layer (U is never exactly 0 for finite logits), so it reproduces the
full model; a larger speed lets more samples leave early. The cost of a sample is the layers
it ran *and* the classifiers it consulted on the way (`exit_cost`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from ..attention import attention_bias
from ..config import BertConfig
from .bert import BertModel

__all__ = [
    "BranchClassifier",
    "EarlyExitOutput",
    "FastBertForSequenceClassification",
    "branch_flops",
    "exit_cost",
    "fine_tune_loss",
    "freeze_for_distillation",
    "layer_flops",
    "normalized_entropy",
    "self_distillation_loss",
    "simulate_early_exit",
]


def normalized_entropy(logits: torch.Tensor) -> torch.Tensor:
    """FastBERT's uncertainty: U = -sum_k p_k log p_k / log N, in [0, 1].

    logits: (..., N) with N >= 2 classes. 0 = all the mass on one class, 1 = uniform.
    Computed in float64 from log-softmax, so a confident prediction gives a small positive U
    rather than an underflow to exactly 0 (which would make speed = 0 exit early).
    """
    num_classes = logits.shape[-1]
    if num_classes < 2:
        raise ValueError(f"uncertainty needs at least 2 classes, got logits of shape "
                         f"{tuple(logits.shape)}")
    log_p = F.log_softmax(logits.double(), dim=-1)                            # (..., N)
    entropy = -(log_p.exp() * log_p).sum(dim=-1)                              # (...)
    return (entropy / math.log(num_classes)).clamp(0.0, 1.0)                  # (...)


class BranchClassifier(nn.Module):
    """FastBERT's classifier after one layer (the paper's "student" / "teacher" classifier).

    Linear(H -> w) + tanh, a 2-head self-attention of width w over the sequence, the [CLS]
    vector, tanh(Linear(w -> w)), Linear(w -> N). In the paper w = 128 for H = 768.
    """

    def __init__(self, config: BertConfig, num_classes: int, width: int = 32, heads: int = 2):
        super().__init__()
        if width % heads != 0:
            raise ValueError(f"branch width {width} must be divisible by heads={heads}")
        self.down = nn.Linear(config.hidden_size, width)
        self.attention = nn.MultiheadAttention(width, heads, batch_first=True)
        self.dense = nn.Linear(width, width)
        self.out = nn.Linear(width, num_classes)

    def forward(self, hidden: torch.Tensor, attention_mask: torch.Tensor | None) -> torch.Tensor:
        x = torch.tanh(self.down(hidden))                                     # (B, T, w)
        padding = None if attention_mask is None else attention_mask == 0     # (B, T) True = pad
        cls = x[:, :1]                                                        # (B, 1, w)
        attended, _ = self.attention(cls, x, x, key_padding_mask=padding,
                                     need_weights=False)                      # (B, 1, w)
        return self.out(torch.tanh(self.dense(attended[:, 0])))               # (B, N)


@dataclass
class EarlyExitOutput:
    logits: torch.Tensor        # (B, N) the logits of the classifier each sample exited at
    exit_layer: torch.Tensor    # (B,) 1-based layer each sample exited after
    uncertainty: torch.Tensor   # (B,) its uncertainty there


class FastBertForSequenceClassification(nn.Module):
    """A BERT backbone with a `BranchClassifier` after every layer; the last is the teacher."""

    def __init__(self, config: BertConfig, num_classes: int, branch_width: int = 32):
        super().__init__()
        self.config = config
        self.num_classes = num_classes
        self.bert = BertModel(config, add_pooler=False)
        self.branches = nn.ModuleList(BranchClassifier(config, num_classes, branch_width)
                                      for _ in range(config.num_layers))
        # The branches keep PyTorch's default (fan-in scaled) initialization: four stacked
        # layers at BERT's N(0, 0.02) would start with a vanishing signal and learn slowly.

    @property
    def teacher(self) -> BranchClassifier:
        return self.branches[-1]

    def forward(self, input_ids: torch.Tensor, *, attention_mask: torch.Tensor | None = None,
                token_type_ids: torch.Tensor | None = None) -> torch.Tensor:
        """Every branch's logits, stacked: (L, B, N). [-1] is the teacher (the full model)."""
        out = self.bert(input_ids, token_type_ids=token_type_ids, attention_mask=attention_mask,
                        output_hidden_states=True)
        return torch.stack([branch(hidden, attention_mask) for branch, hidden
                            in zip(self.branches, out.hidden_states[1:])])     # (L, B, N)

    @torch.no_grad()
    def adaptive_forward(self, input_ids: torch.Tensor, speed: float,
                         attention_mask: torch.Tensor | None = None,
                         token_type_ids: torch.Tensor | None = None) -> EarlyExitOutput:
        """Adaptive inference: run layer by layer, dropping each sample once U <= speed.

        Works for any batch size (the samples still running are tracked by index), but the
        paper measures speed at batch size 1, where an exit saves real time.
        """
        if not 0.0 <= speed <= 1.0:
            raise ValueError(f"speed must be in [0, 1] (uncertainty is normalized), got {speed}")
        encoder = self.bert.encoder
        encoder.check_inputs(input_ids, token_type_ids, attention_mask, None)
        batch, length = input_ids.shape
        x = encoder.embeddings(input_ids, token_type_ids)                     # (B, T, H)
        mask = attention_mask if attention_mask is not None else torch.ones_like(input_ids)
        bias = attention_bias(mask, length, length, dtype=x.dtype, device=x.device)
        logits = torch.zeros(batch, self.num_classes)                         # (B, N)
        exit_layer = torch.zeros(batch, dtype=torch.long)                     # (B,)
        uncertainty = torch.zeros(batch, dtype=torch.float64)                 # (B,)
        running = torch.arange(batch)                                         # (b,) still going
        for depth, (layer, branch) in enumerate(zip(encoder.layers, self.branches), start=1):
            x, _ = layer(x, bias, False)                                      # (b, T, H)
            branch_logits = branch(x, mask)                                   # (b, N)
            u = normalized_entropy(branch_logits)                             # (b,)
            leaving = (u <= speed) | (depth == len(self.branches))            # (b,)
            done = running[leaving]
            logits[done], exit_layer[done], uncertainty[done] = (
                branch_logits[leaving], depth, u[leaving])
            running, x, bias, mask = (running[~leaving], x[~leaving], bias[~leaving],
                                      mask[~leaving])
            if len(running) == 0:
                break
        return EarlyExitOutput(logits, exit_layer, uncertainty)


def simulate_early_exit(all_logits: torch.Tensor, speed: float) -> EarlyExitOutput:
    """The same decisions as `adaptive_forward`, read off the logits of every branch.

    all_logits: (L, B, N) from `model(...)`. Each sample exits at the first layer whose
    uncertainty is <= speed (the last layer at the latest). Cheap for sweeping thresholds;
    a test checks it agrees with the real layer-by-layer loop.
    """
    u = normalized_entropy(all_logits)                                        # (L, B)
    exits = u <= speed                                                        # (L, B)
    exits[-1] = True
    first = exits.long().argmax(dim=0)                                        # (B,) 0-based
    samples = torch.arange(all_logits.shape[1])
    return EarlyExitOutput(all_logits[first, samples], first + 1, u[first, samples])


def fine_tune_loss(model: FastBertForSequenceClassification, batch: dict) -> dict:
    """Step 1: cross-entropy of the teacher (last classifier) on labelled data."""
    out = model.bert(batch["input_ids"], attention_mask=batch["attention_mask"])
    logits = model.teacher(out.last_hidden_state, batch["attention_mask"])    # (B, N)
    loss = F.cross_entropy(logits, batch["labels"])
    accuracy = (logits.argmax(-1) == batch["labels"]).float().mean()
    return {"loss": loss, "accuracy": accuracy}


def freeze_for_distillation(model: FastBertForSequenceClassification) -> None:
    """Step 2 trains only the students: freeze the backbone and the teacher."""
    for param in model.parameters():
        param.requires_grad = False
    for branch in model.branches[:-1]:
        for param in branch.parameters():
            param.requires_grad = True


def self_distillation_loss(model: FastBertForSequenceClassification, batch: dict) -> torch.Tensor:
    """Step 2: sum over the students of KL(p_teacher || p_student), batch-mean; no labels.

    The backbone and the teacher run without gradient, as frozen parts of the model.
    """
    with torch.no_grad():
        out = model.bert(batch["input_ids"], attention_mask=batch["attention_mask"],
                         output_hidden_states=True)
        teacher = F.softmax(model.teacher(out.last_hidden_state, batch["attention_mask"]), -1)
    loss = 0.0
    for branch, hidden in zip(model.branches[:-1], out.hidden_states[1:-1]):
        log_student = F.log_softmax(branch(hidden, batch["attention_mask"]), dim=-1)  # (B, N)
        loss = loss + F.kl_div(log_student, teacher, reduction="batchmean")
    return loss


def layer_flops(config: BertConfig, length: int) -> int:
    """Multiply-adds of one encoder layer on one sequence of `length` tokens.

    Q, K, V, O projections 4 T H^2; scores and weighted sum 2 T^2 H; FFN 2 T H I.
    """
    T, H, inner = length, config.hidden_size, config.intermediate_size
    return 4 * T * H * H + 2 * T * T * H + 2 * T * H * inner


def branch_flops(config: BertConfig, length: int, width: int, num_classes: int) -> int:
    """Multiply-adds of one `BranchClassifier` (the [CLS] query attends to T keys).

    down-projection T H w; K, V for every token 2 T w^2; Q and output for [CLS] 2 w^2;
    scores and weighted sum 2 T w; dense w^2; output w N.
    """
    T, H, w = length, config.hidden_size, width
    return T * H * w + 2 * T * w * w + 2 * w * w + 2 * T * w + w * w + w * num_classes


def exit_cost(exit_layer: torch.Tensor, layer: float, branch: float) -> torch.Tensor:
    """The cost of each sample in units of one layer: k layers and k classifiers to exit at k.

    The full model (no early exit) costs L layers and 1 classifier.
    """
    k = exit_layer.double()                                                   # (B,)
    return k * (layer + branch) / layer                                       # (B,)
