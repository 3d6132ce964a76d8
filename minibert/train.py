"""One small training loop for every lesson.

`train(model, batches, loss_fn, steps=...)` does what BERT's pre-training recipe does, in
miniature: AdamW, a learning rate that warms up linearly and then decays linearly to zero,
gradient clipping and gradient accumulation. It returns a `History` of the loss, the learning
rate and any metric the loss function reports, ready to plot.

The loop knows nothing about models: `loss_fn(model, batch)` computes the loss, so the same
loop trains an MLM, an ELECTRA discriminator or a distilled student.
"""

from __future__ import annotations

import itertools
import random
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from torch import nn
from tqdm.auto import tqdm

__all__ = ["History", "lr_schedule", "parameter_groups", "set_seed", "train"]


def set_seed(seed: int) -> torch.Generator:
    """Seed Python's `random`, NumPy and PyTorch; return a `torch.Generator` with that seed.

    The generator is for code that wants its own random stream (data sampling, masking) so that
    it does not depend on how many random numbers the model's initialisation used.
    """
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise TypeError(f"seed must be an int, got {type(seed).__name__}")
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)
    return torch.Generator().manual_seed(seed)


def lr_schedule(step: int, total: int, warmup: int, peak: float) -> float:
    """Learning rate for optimizer step `step` (0-based) of `total`: warm up, then decay.

    Linear warmup from peak/warmup to `peak` over the first `warmup` steps, then linear decay
    towards 0 over the remaining steps (BERT's schedule). Every step gets a learning rate
    above zero, so no step is wasted:

        lr_schedule(0, 10, 2, 1.0) -> 0.5    lr_schedule(1, 10, 2, 1.0) -> 1.0
        lr_schedule(2, 10, 2, 1.0) -> 1.0    lr_schedule(9, 10, 2, 1.0) -> 0.125
    """
    if total < 1:
        raise ValueError(f"total must be at least 1 step, got {total}")
    if not 0 <= step < total:
        raise ValueError(f"step must be in [0, {total}), got {step}")
    if not 0 <= warmup <= total:
        raise ValueError(f"warmup must be between 0 and total={total} steps, got {warmup}")
    if peak < 0:
        raise ValueError(f"peak learning rate must be >= 0, got {peak}")
    if step < warmup:
        return peak * (step + 1) / warmup  # ramp up: peak/warmup, 2*peak/warmup, ..., peak
    return peak * (total - step) / (total - warmup)  # ramp down: peak, ..., peak/(total-warmup)


def parameter_groups(model: nn.Module, weight_decay: float) -> list[dict[str, Any]]:
    """Split the trainable parameters into a decayed and a non-decayed AdamW group.

    Weight decay pulls weights towards zero. That regularises matrices (linear layers,
    embeddings) but makes no sense for biases or for LayerNorm's gain and shift, so those get
    none, as in BERT. The rule used: a parameter with fewer than 2 dimensions (every bias and
    every LayerNorm weight, including a hand-written LayerNorm) is not decayed.
    """
    decay, no_decay = [], []
    for param in model.parameters():  # each shared tensor appears once
        if param.requires_grad:
            (decay if param.ndim >= 2 else no_decay).append(param)
    return [
        {"params": decay, "weight_decay": weight_decay},
        {"params": no_decay, "weight_decay": 0.0},
    ]


@dataclass
class History:
    """What happened during training, one entry per logged optimizer step.

    `step[i]` is the number of optimizer steps done when `loss[i]`, `lr[i]` and
    `metrics[name][i]` were logged; the loss and metrics are means over the steps since the
    previous entry. `eval[name]` holds the values of `eval_fn` at `eval_step`.
    """

    step: list[int] = field(default_factory=list)
    loss: list[float] = field(default_factory=list)
    lr: list[float] = field(default_factory=list)
    metrics: dict[str, list[float]] = field(default_factory=dict)
    eval_step: list[int] = field(default_factory=list)
    eval: dict[str, list[float]] = field(default_factory=dict)
    seconds: float = 0.0

    def series(self, name: str) -> list[float]:
        """The logged values of `name`: "loss", "lr", a metric, or an eval value (looked up
        in that order; use `history.eval[name]` when a metric and an eval value share a name)."""
        if name in ("loss", "lr"):
            return getattr(self, name)
        if name in self.metrics:
            return self.metrics[name]
        if name in self.eval:
            return self.eval[name]
        known = ["loss", "lr", *self.metrics, *self.eval]
        raise KeyError(f"nothing logged under {name!r}; known names: {', '.join(known)}")

    def last(self, name: str = "loss") -> float:
        """The most recent value of `name`."""
        values = self.series(name)
        if not values:
            raise ValueError(f"nothing logged yet under {name!r}")
        return values[-1]

    def smoothed(self, name: str = "loss", window: int = 10) -> list[float]:
        """Trailing moving average of `name` over `window` entries (same length as the series),
        for plotting noisy loss curves."""
        if window < 1:
            raise ValueError(f"window must be at least 1, got {window}")
        values = np.asarray(self.series(name), dtype=float)
        cumulative = np.concatenate([[0.0], np.cumsum(values)])
        ends = np.arange(1, len(values) + 1)
        starts = np.maximum(ends - window, 0)
        return ((cumulative[ends] - cumulative[starts]) / (ends - starts)).tolist()


def _batch_source(batches: Iterable | Callable[[int], Any]) -> Callable[[int], Any]:
    """Turn `batches` into a function micro_step -> batch.

    A callable is used as is. An iterable that can be iterated again (a list, a DataLoader) is
    restarted when exhausted, so a DataLoader reshuffles each epoch; a one-shot iterator (a
    generator) is replayed from a cache of the batches it produced.
    """
    if callable(batches) and not hasattr(batches, "__iter__"):
        return batches
    try:
        iterator = iter(batches)
    except TypeError:
        raise TypeError(
            "batches must be an iterable of batches (a list, a DataLoader) or a function "
            f"step -> batch, got {type(batches).__name__}"
        ) from None
    if iterator is batches:  # a one-shot iterator: remember what it gave and cycle
        iterator = itertools.cycle(iterator)

    def next_batch(_step: int) -> Any:
        nonlocal iterator
        try:
            return next(iterator)
        except StopIteration:
            iterator = iter(batches)  # a new epoch
        try:
            return next(iterator)
        except StopIteration:
            raise ValueError("batches is empty: give at least one batch") from None

    return next_batch


def _split_loss(output: Any) -> tuple[torch.Tensor, dict[str, float]]:
    """`loss_fn` returns a scalar loss or {"loss": loss, "metric": value, ...}."""
    metrics: dict[str, float] = {}
    if isinstance(output, Mapping):
        if "loss" not in output:
            raise ValueError(
                f"loss_fn returned a dict without a 'loss' key (keys: {', '.join(output)})"
            )
        metrics = {name: float(value) for name, value in output.items() if name != "loss"}
        output = output["loss"]
    if not isinstance(output, torch.Tensor):
        raise TypeError(f"loss_fn must return a loss tensor, got {type(output).__name__}")
    if output.numel() != 1:
        raise ValueError(
            f"loss_fn must return a scalar loss, got shape {tuple(output.shape)}: "
            "reduce it, e.g. with .mean()"
        )
    return output.reshape(()), metrics


def _warmup_steps(warmup: int | float, steps: int) -> int:
    """`warmup` is a fraction of `steps` (a float in [0, 1]) or a number of steps (an int)."""
    if isinstance(warmup, bool) or not isinstance(warmup, (int, float)):
        raise TypeError(
            f"warmup must be a fraction (float) or a number of steps (int), got {warmup!r}"
        )
    if isinstance(warmup, float):
        if not 0.0 <= warmup <= 1.0:
            raise ValueError(f"warmup as a fraction must be in [0, 1], got {warmup}")
        return round(warmup * steps)
    if not 0 <= warmup <= steps:
        raise ValueError(f"warmup must be between 0 and steps={steps}, got {warmup}")
    return warmup


def train(
    model: nn.Module,
    batches: Iterable | Callable[[int], Any],
    loss_fn: Callable[[nn.Module, Any], torch.Tensor | Mapping[str, Any]],
    *,
    steps: int,
    lr: float = 1e-3,
    warmup: int | float = 0.1,
    weight_decay: float = 0.01,
    betas: tuple[float, float] = (0.9, 0.999),
    eps: float = 1e-8,
    grad_clip: float | None = 1.0,
    accumulation: int = 1,
    seed: int | None = 0,
    progress: bool = True,
    desc: str = "train",
    log_every: int = 1,
    eval_fn: Callable[[nn.Module], float | Mapping[str, float]] | None = None,
    eval_every: int | None = None,
    optimizer: torch.optim.Optimizer | None = None,
) -> History:
    """Train `model` for `steps` optimizer steps and return its `History`.

    batches:      an iterable of batches (cycled when exhausted) or a function i -> batch,
                  called with the micro-batch index i = 0, 1, 2, ...
    loss_fn:      loss_fn(model, batch) -> scalar loss, or a dict {"loss": ..., name: value}
                  whose other entries are logged as metrics.
    steps:        number of optimizer steps; each one sees `accumulation` micro-batches, whose
                  losses are divided by `accumulation` so the gradient is their mean.
    lr, warmup:   peak learning rate and warmup (a fraction of steps, or an int number of
                  steps); see `lr_schedule`.
    weight_decay: AdamW decay on matrices only; biases and LayerNorm weights get none.
    grad_clip:    clip the global gradient norm to this (None: no clipping). The norm before
                  clipping is logged as the metric "grad_norm".
    seed:         seeds everything (see `set_seed`) before the first batch; None leaves the
                  random state alone.
    eval_fn:      eval_fn(model) -> value or dict of values, run without gradients in eval
                  mode every `eval_every` steps and after the last step.
    optimizer:    use this optimizer instead of a new AdamW; each param group's current lr is
                  taken as its peak, and lr, weight_decay, betas and eps are ignored.

    The model is in train mode during training and left in eval mode afterwards.
    """
    if not isinstance(model, nn.Module):
        raise TypeError(f"model must be a torch.nn.Module, got {type(model).__name__}")
    for name, value in (("steps", steps), ("accumulation", accumulation), ("log_every", log_every)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be a positive int, got {value!r}")
    if eval_every is not None and (not isinstance(eval_every, int) or eval_every < 1):
        raise ValueError(f"eval_every must be a positive int or None, got {eval_every!r}")
    if grad_clip is not None and grad_clip <= 0:
        raise ValueError(f"grad_clip must be positive or None (no clipping), got {grad_clip}")
    warmup_steps = _warmup_steps(warmup, steps)

    if optimizer is None:
        if lr <= 0:
            raise ValueError(f"lr must be positive, got {lr}")
        groups = parameter_groups(model, weight_decay)
        if not any(group["params"] for group in groups):
            raise ValueError("model has no trainable parameters (all have requires_grad=False)")
        optimizer = torch.optim.AdamW(groups, lr=lr, betas=betas, eps=eps)
    peaks = [group["lr"] for group in optimizer.param_groups]
    params = [p for group in optimizer.param_groups for p in group["params"]]

    if seed is not None:
        set_seed(seed)
    next_batch = _batch_source(batches)
    history = History()
    pending: dict[str, list[float]] = {}  # values since the last log entry, averaged when logged
    start = time.perf_counter()
    bar = tqdm(total=steps, desc=desc, disable=not progress, mininterval=0.5, dynamic_ncols=True)
    model.train()
    try:
        for step in range(steps):
            # --- the learning rate of this step, for every param group
            scale = lr_schedule(step, steps, warmup_steps, 1.0)
            for group, peak in zip(optimizer.param_groups, peaks):
                group["lr"] = peak * scale

            # --- accumulate the gradient of `accumulation` micro-batches
            optimizer.zero_grad(set_to_none=True)
            step_loss, step_metrics = 0.0, {}
            for micro in range(accumulation):
                loss, metrics = _split_loss(loss_fn(model, next_batch(step * accumulation + micro)))
                (loss / accumulation).backward()
                step_loss += loss.item() / accumulation
                for name, value in metrics.items():
                    step_metrics[name] = step_metrics.get(name, 0.0) + value / accumulation

            # --- clip and step
            max_norm = grad_clip if grad_clip is not None else float("inf")
            grad_norm = torch.nn.utils.clip_grad_norm_(params, max_norm)
            optimizer.step()

            # --- log
            pending.setdefault("loss", []).append(step_loss)
            pending.setdefault("grad_norm", []).append(float(grad_norm))
            for name, value in step_metrics.items():
                pending.setdefault(name, []).append(value)
            done = step + 1
            if done % log_every == 0 or done == steps:
                history.step.append(done)
                history.lr.append(optimizer.param_groups[0]["lr"])
                for name, values in pending.items():
                    mean = sum(values) / len(values)
                    if name == "loss":
                        history.loss.append(mean)
                    else:
                        history.metrics.setdefault(name, []).append(mean)
                pending = {}
                postfix = {"loss": f"{history.loss[-1]:.4f}", "lr": f"{history.lr[-1]:.2e}"}
                bar.set_postfix(postfix, refresh=False)  # redrawn by update(), at most 2x/s
            bar.update(1)

            if eval_fn is not None and (
                done == steps or (eval_every is not None and done % eval_every == 0)
            ):
                _evaluate(model, eval_fn, done, history)
    finally:
        bar.close()
        model.eval()
        history.seconds = time.perf_counter() - start
    return history


def _evaluate(model: nn.Module, eval_fn: Callable, step: int, history: History) -> None:
    """Run `eval_fn` in eval mode without gradients and log what it returns."""
    model.eval()
    with torch.no_grad():
        result = eval_fn(model)
    model.train()
    values = result if isinstance(result, Mapping) else {"value": result}
    history.eval_step.append(step)
    for name, value in values.items():
        history.eval.setdefault(name, []).append(float(value))
