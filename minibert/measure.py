"""Measurements the lessons report: parameter counts, latency, accuracy, ROC AUC, held-out
masked-LM loss.

Parameter counts count a shared tensor once: ALBERT's point is that reusing one layer twelve
times costs the parameters of one layer, and a tied MLM decoder costs nothing extra.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import nn

__all__ = [
    "LatencyResult",
    "ParameterTable",
    "accuracy",
    "count_parameters",
    "heldout_mlm_loss",
    "latency",
    "layer_transitions",
    "masked_token_accuracy",
    "parameter_table",
    "roc_auc",
]


def _unique_parameters(module: nn.Module, seen: set[int]) -> list[nn.Parameter]:
    """The parameters of `module` not seen before, by identity; adds them to `seen`."""
    fresh = []
    for _, param in module.named_parameters(remove_duplicate=False):
        if id(param) not in seen:
            seen.add(id(param))
            fresh.append(param)
    return fresh


def count_parameters(model: nn.Module, trainable_only: bool = False) -> int:
    """Number of scalar parameters in `model`, each shared tensor counted once."""
    if not isinstance(model, nn.Module):
        raise TypeError(f"count_parameters needs a torch.nn.Module, got {type(model).__name__}")
    params = _unique_parameters(model, set())
    return sum(p.numel() for p in params if p.requires_grad or not trainable_only)


@dataclass
class ParameterTable:
    """Parameters per top-level child of a model. A tensor shared between children is counted
    for the first child that holds it and shown as `shared` in the others."""

    rows: list[tuple[str, int, int]]  # (child name, own parameters, shared parameters)
    total: int

    def as_dict(self) -> dict[str, int]:
        return {name: own for name, own, _ in self.rows}

    def __str__(self) -> str:
        width = max([len("total"), *(len(name) for name, _, _ in self.rows)])
        lines = [f"{'module':<{width}}  {'parameters':>12}  {'share':>6}  {'shared':>10}"]
        for name, own, shared in self.rows:
            share = own / self.total if self.total else 0.0
            lines.append(
                f"{name:<{width}}  {own:>12,}  {share:>6.1%}  {shared if shared else '':>10}"
            )
        lines.append(f"{'total':<{width}}  {self.total:>12,}")
        return "\n".join(lines)

    __repr__ = __str__


def parameter_table(model: nn.Module) -> ParameterTable:
    """Break `model`'s parameter count down by its top-level children (in registration order).

    Parameters registered directly on `model` appear as "(own)". The rows add up to
    `count_parameters(model)`.
    """
    if not isinstance(model, nn.Module):
        raise TypeError(f"parameter_table needs a torch.nn.Module, got {type(model).__name__}")
    seen: set[int] = set()
    rows = []
    own = list(model.parameters(recurse=False))
    if own:
        seen.update(id(p) for p in own)
        rows.append(("(own)", sum(p.numel() for p in own), 0))
    for name, child in model.named_children():
        held = sum(p.numel() for p in child.parameters())  # each tensor once within the child
        counted = sum(p.numel() for p in _unique_parameters(child, seen))
        rows.append((name, counted, held - counted))
    return ParameterTable(rows=rows, total=sum(own for _, own, _ in rows))


@dataclass
class LatencyResult:
    """Wall-clock seconds of `repeats` calls: the median and the interquartile range."""

    median: float
    iqr: float
    times: list[float]

    def __float__(self) -> float:
        return self.median

    def __str__(self) -> str:
        return f"{self.median * 1e3:.2f} ms (IQR {self.iqr * 1e3:.2f} ms, {len(self.times)} runs)"


def latency(
    fn_or_model: Callable | nn.Module,
    *inputs,
    repeats: int = 20,
    warmup: int = 3,
    threads: int | None = None,
    **keyword_inputs,
) -> LatencyResult:
    """Time `fn_or_model(*inputs, **keyword_inputs)` under `torch.inference_mode`, `warmup`
    untimed calls first: `latency(model, ids, attention_mask=mask, repeats=30)`.

    A model is put in eval mode for the measurement and its mode restored afterwards.
    `threads` sets torch's intra-op thread count for the measurement (None: leave it).
    The median is robust to the odd slow run; the IQR says how noisy the machine was.
    """
    if not callable(fn_or_model):
        raise TypeError(f"latency needs a function or a model, got {type(fn_or_model).__name__}")
    if repeats < 1 or warmup < 0:
        raise ValueError(f"need repeats >= 1 and warmup >= 0, got {repeats} and {warmup}")
    if threads is not None and threads < 1:
        raise ValueError(f"threads must be a positive int or None, got {threads}")
    was_training = isinstance(fn_or_model, nn.Module) and fn_or_model.training
    old_threads = torch.get_num_threads()
    if isinstance(fn_or_model, nn.Module):
        fn_or_model.eval()
    if threads is not None:
        torch.set_num_threads(threads)
    times = []
    try:
        with torch.inference_mode():
            for _ in range(warmup):
                fn_or_model(*inputs, **keyword_inputs)
            for _ in range(repeats):
                start = time.perf_counter()
                fn_or_model(*inputs, **keyword_inputs)
                times.append(time.perf_counter() - start)
    finally:
        torch.set_num_threads(old_threads)
        if was_training:
            fn_or_model.train()
    q1, q3 = np.percentile(times, [25, 75])
    return LatencyResult(median=statistics.median(times), iqr=float(q3 - q1), times=times)


def latency_side_by_side(functions: dict[str, Callable[[], Any]], *, rounds: int = 30,
                         warmup: int = 3, threads: int | None = 1
                         ) -> dict[str, tuple[float, float]]:
    """Median seconds per call of each function, timed in interleaved rounds: two medians each.

    Timing one model after another lets the machine's state (another process, the CPU's clock)
    drift between them; here each round times every function once, in an order that rotates
    from round to round, after `warmup` untimed rounds. Each function gets two medians, of the
    even and of the odd rounds: two measurements of the same thing in the same run, whose
    difference says how far to trust a ratio. Returns {name: (median_even, median_odd)}.
    """
    if rounds < 2 or warmup < 0:
        raise ValueError(f"need rounds >= 2 and warmup >= 0, got {rounds} and {warmup}")
    if not functions or not all(callable(f) for f in functions.values()):
        raise TypeError("functions must be a non-empty dict of name -> function of no arguments")
    names = list(functions)
    old_threads = torch.get_num_threads()
    if threads is not None:
        torch.set_num_threads(threads)
    times: dict[str, list[float]] = {name: [] for name in names}
    try:
        with torch.inference_mode():
            for r in range(warmup + rounds):
                shift = r % len(names)
                for name in names[shift:] + names[:shift]:
                    start = time.perf_counter()
                    functions[name]()
                    if r >= warmup:
                        times[name].append(time.perf_counter() - start)
    finally:
        torch.set_num_threads(old_threads)
    return {name: (statistics.median(t[0::2]), statistics.median(t[1::2]))
            for name, t in times.items()}


def accuracy(logits: torch.Tensor, labels: torch.Tensor, ignore_index: int = -100) -> float:
    """Fraction of positions where the prediction equals the label; `ignore_index` is skipped.

    logits: (..., C) class scores, predicted class = argmax; or (...) one logit per position
            for a binary task (ELECTRA's replaced-token detection), predicted 1 when > 0.
    labels: (...) integer classes (or 0/1, bools for the binary case).
    """
    if logits.shape == labels.shape and logits.is_floating_point():
        predictions = (logits > 0).long()  # (...)
    elif logits.shape[:-1] == labels.shape:
        predictions = logits.argmax(dim=-1)  # (...)
    else:
        raise ValueError(
            f"logits {tuple(logits.shape)} do not match labels {tuple(labels.shape)}: expected "
            "logits of shape labels.shape + (num_classes,), or labels.shape for a binary task"
        )
    labels = labels.long()
    scored = labels != ignore_index  # (...)
    if not scored.any():
        raise ValueError(f"no labels to score: every label equals ignore_index={ignore_index}")
    return (predictions[scored] == labels[scored]).float().mean().item()


def roc_auc(scores: torch.Tensor, positive: torch.Tensor) -> float:
    """Area under the ROC curve: P(a random positive scores above a random negative), ties
    counting half. 0.5 is chance, 1.0 a perfect ranking.

    scores: (N,) one score per example, higher meaning "more likely positive".
    positive: (N,) bool, True for the positives (e.g. `labels == 1`).
    Every positive is compared with every negative: a (P, N - P) matrix.
    """
    if positive.dtype != torch.bool or positive.shape != scores.shape or scores.dim() != 1:
        raise ValueError(f"roc_auc needs scores (N,) and a bool positive (N,), got scores "
                         f"{tuple(scores.shape)} and positive {positive.dtype} "
                         f"{tuple(positive.shape)}: pass e.g. labels == 1")
    if positive.all() or not positive.any():
        raise ValueError("roc_auc needs at least one positive and one negative example")
    pos, neg = scores[positive], scores[~positive]                          # (P,), (Q,)
    greater = (pos[:, None] > neg[None, :]).float()                         # (P, Q)
    ties = (pos[:, None] == neg[None, :]).float()                           # (P, Q)
    return (greater + 0.5 * ties).mean().item()


@torch.no_grad()
def heldout_mlm_loss(model: nn.Module, batch: dict[str, torch.Tensor]) -> float:
    """Mean masked-LM cross-entropy on a batch whose masks were drawn once, in eval mode.

    batch: {"input_ids" (B, T) already masked, "attention_mask" (B, T), "mlm_labels" (B, T)}.
    Scoring every model on the same masks compares models, not masks. A pre-training output
    (one with `.mlm_loss`, whose `.loss` adds sentence losses) gives its masked-LM part.
    The model is left in eval mode.
    """
    model.eval()
    out = model(batch["input_ids"], attention_mask=batch["attention_mask"],
                mlm_labels=batch["mlm_labels"])
    loss = out.mlm_loss if getattr(out, "mlm_loss", None) is not None else out.loss
    return loss.item()


def masked_token_accuracy(
    logits: torch.Tensor,
    labels: torch.Tensor,
    masked: torch.Tensor | None = None,
    ignore_index: int = -100,
) -> float:
    """MLM accuracy: how often the model recovers the original token at masked positions.

    logits (B, T, V), labels (B, T). Either `labels` holds `ignore_index` at every position
    that was not selected for prediction (the usual MLM convention), or pass `masked`, a
    boolean (B, T) that is True at the selected positions.
    """
    if masked is not None:
        if masked.shape != labels.shape or masked.dtype != torch.bool:
            raise ValueError(
                f"masked must be a bool tensor shaped like labels {tuple(labels.shape)}, "
                f"got {masked.dtype} {tuple(masked.shape)}"
            )
        labels = labels.masked_fill(~masked, ignore_index)  # (B, T)
    return accuracy(logits, labels, ignore_index=ignore_index)


def layer_transitions(
    hidden_states: tuple[torch.Tensor, ...] | list[torch.Tensor],
    attention_mask: torch.Tensor | None = None,
) -> tuple[list[float], list[float]]:
    """ALBERT's Figure 1: how far each layer moves its input, as (L2 distances, angles).

    hidden_states: L + 1 tensors (B, T, H); [0] is the input of layer 1 (for ALBERT, the
    projected embeddings), [l] the output of layer l. For each layer l and each non-pad token t:

        L2_l    = mean_t || x_t^(l) - x_t^(l-1) ||_2
        angle_l = mean_t  degrees(arccos(clip(cos(x_t^(l), x_t^(l-1)), -1, 1)))

    averaged over the tokens where attention_mask is 1 (every token if it is None).
    """
    if len(hidden_states) < 2:
        raise ValueError("need at least 2 hidden states (the embeddings and one layer output): "
                         "call the model with output_hidden_states=True")
    first = hidden_states[0]
    if attention_mask is None:
        attention_mask = torch.ones(first.shape[:2], dtype=torch.long)
    if attention_mask.shape != first.shape[:2]:
        raise ValueError(f"attention_mask {tuple(attention_mask.shape)} must be (B, T) = "
                         f"{tuple(first.shape[:2])}, the first two dims of each hidden state")
    real = attention_mask.bool()                                            # (B, T)
    if not real.any():
        raise ValueError("attention_mask has no real token (all zeros): nothing to average")
    distances, angles = [], []
    for before, after in zip(hidden_states[:-1], hidden_states[1:]):
        x, y = before[real].double(), after[real].double()                  # (N, H) each
        distances.append((y - x).norm(dim=-1).mean().item())
        cosine = torch.nn.functional.cosine_similarity(x, y, dim=-1).clamp(-1.0, 1.0)  # (N,)
        angles.append(torch.rad2deg(torch.arccos(cosine)).mean().item())
    return distances, angles
