"""One small training loop for every lesson.

`train(model, batches, loss_fn, steps=...)` does what BERT's pre-training recipe does, in
miniature: AdamW, a learning rate that warms up linearly and then decays linearly to zero,
gradient clipping and gradient accumulation. It returns a `History` of the loss, the learning
rate and any metric the loss function reports, ready to plot.

The loop knows nothing about models: `loss_fn(model, batch)` computes the loss, so the same
loop trains an MLM, an ELECTRA discriminator or a distilled student.
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import math
import random
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from .progress import progress_bar

__all__ = ["History", "first_steps_schedule", "lr_schedule", "model_loss", "parameter_groups",
           "set_seed", "train"]


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


def model_loss(model: nn.Module, batch: Mapping[str, Any]) -> torch.Tensor:
    """The loss the model computes itself from a batch of its keyword arguments (labels
    included): `model(**batch).loss`, the `loss_fn` of `train` for a batch that is ready."""
    return model(**batch).loss


def first_steps_schedule(lr: float, warmup: int, count: int) -> dict[str, float | int]:
    """`train` arguments that retrain only the first `count` steps of a run warming up over
    `warmup` steps to `lr`, as the replay tests do.

    Inside the warmup, step k's learning rate is lr (k + 1) / warmup whatever the run's length;
    a `count`-step run whose warmup is all of it, at a peak of lr count / warmup, takes the
    same steps.
    """
    if count > warmup:
        raise ValueError(f"count must be at most the warmup ({warmup} steps), got {count}")
    return {"steps": count, "lr": lr * count / warmup, "warmup": count}


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
    skipped: int = 0          # steps skipped for a non-finite loss or gradient

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
    nonfinite: str = "raise",
    checkpoint: str | Path | None = None,
    checkpoint_every: int | None = None,
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
    seed:         seeds Python's, NumPy's and torch's global generators (see `set_seed`)
                  before the first batch, so a run repeats whatever ran before it; None leaves
                  the random state alone.
    eval_fn:      eval_fn(model) -> value or dict of values, run without gradients in eval
                  mode every `eval_every` steps and after the last step.
    optimizer:    use this optimizer instead of a new AdamW; each param group's current lr is
                  taken as its peak, and lr, weight_decay, betas and eps are ignored.
    nonfinite:    what a step whose loss or gradient is NaN or infinite does: "raise" (stop
                  with an error naming the step, the model left as it was before that step) or
                  "skip" (no update; the skipped steps are counted in `history.skipped`).
    checkpoint:   a file to resume from: every `checkpoint_every` steps the model, the
                  optimizer, the step and the history are saved there (atomically), and a run
                  started with the same file continues from the last save. Resuming repeats the
                  run exactly when each batch depends on its index alone (a function i ->
                  batch that seeds its own generator from i), as the zoo's do.

    Data parallel: started by torchrun (`torch.distributed` initialised, N > 1 processes), the
    model is wrapped in `DistributedDataParallel` and each process takes `accumulation / N` of
    every step's micro-batches (process r the r-th share); the gradients are averaged across
    processes, so N processes compute the same steps as one process would, to rounding.
    `accumulation` must then be a multiple of N. Only process 0 shows a progress bar and
    writes the checkpoint.

    The model is in train mode during training and left in eval mode afterwards.
    """
    if not isinstance(model, nn.Module):
        raise TypeError(f"model must be a torch.nn.Module, got {type(model).__name__}")
    for name, value in (("steps", steps), ("accumulation", accumulation), ("log_every", log_every)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be a positive int, got {value!r}")
    for name, value in (("eval_every", eval_every), ("checkpoint_every", checkpoint_every)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                  or value < 1):
            raise ValueError(f"{name} must be a positive int or None, got {value!r}")
    if grad_clip is not None and not (math.isfinite(grad_clip) and grad_clip > 0):
        raise ValueError(f"grad_clip must be a positive finite number or None (no clipping), "
                         f"got {grad_clip}")
    if nonfinite not in ("raise", "skip"):
        raise ValueError(f"nonfinite must be 'raise' or 'skip', got {nonfinite!r}")
    if checkpoint_every is not None and checkpoint is None:
        raise ValueError("checkpoint_every needs checkpoint=<file> to save to")
    warmup_steps = _warmup_steps(warmup, steps)
    rank, world = _data_parallel()
    if accumulation % world:
        raise ValueError(f"accumulation={accumulation} cannot be shared by {world} processes: "
                         f"make it a multiple of {world}")
    local = accumulation // world                # micro-batches of each step this process takes

    if optimizer is None:
        if not (math.isfinite(lr) and lr > 0):
            raise ValueError(f"lr must be a positive finite number, got {lr}")
        if not (math.isfinite(weight_decay) and weight_decay >= 0):
            raise ValueError(f"weight_decay must be a finite number >= 0, got {weight_decay}")
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
    first_step = 0
    if checkpoint is not None and Path(checkpoint).is_file():
        first_step = _resume(checkpoint, model, optimizer, history, steps=steps,
                             accumulation=accumulation)
    trained = model
    if world > 1:
        from torch.nn.parallel import DistributedDataParallel
        trained = DistributedDataParallel(model)
    pending: dict[str, list[float]] = {}  # values since the last log entry, averaged when logged
    start = time.perf_counter() - history.seconds
    bar = progress_bar(total=steps, initial=first_step, desc=desc,
                       disable=not progress or rank > 0)
    model.train()
    try:
        for step in range(first_step, steps):
            # --- the learning rate of this step, for every param group
            scale = lr_schedule(step, steps, warmup_steps, 1.0)
            for group, peak in zip(optimizer.param_groups, peaks):
                group["lr"] = peak * scale

            # --- accumulate the gradient of this process's share of the micro-batches
            optimizer.zero_grad(set_to_none=True)
            step_loss, step_metrics, finite = 0.0, {}, True
            for micro in range(local):
                index = step * accumulation + rank * local + micro
                last = micro == local - 1
                with contextlib.nullcontext() if world == 1 or last else trained.no_sync():
                    loss, metrics = _split_loss(loss_fn(trained, next_batch(index)))
                    value = loss.item()
                    finite = finite and math.isfinite(value)
                    (loss / local).backward()
                step_loss += value / local
                for name, metric in metrics.items():
                    step_metrics[name] = step_metrics.get(name, 0.0) + metric / local
            if world > 1:
                step_loss, step_metrics = _mean_over_processes(step_loss, step_metrics, world)
                finite = math.isfinite(step_loss)

            # --- clip and step, unless the loss or the gradient is not finite
            max_norm = grad_clip if grad_clip is not None else float("inf")
            grad_norm = torch.nn.utils.clip_grad_norm_(params, max_norm)
            if not (finite and math.isfinite(float(grad_norm))):
                what = "loss" if not finite else "gradient norm"
                shown = step_loss if not finite else float(grad_norm)
                if nonfinite == "raise":
                    optimizer.zero_grad(set_to_none=True)
                    raise FloatingPointError(
                        f"step {step + 1} of {steps} (micro-batches {step * accumulation} to "
                        f"{(step + 1) * accumulation - 1}): the {what} is {shown}. The model is "
                        "as it was before this step. Look for NaN or infinite values in that "
                        "batch, or lower lr / set grad_clip; nonfinite='skip' skips such steps.")
                optimizer.zero_grad(set_to_none=True)
                history.skipped += 1
            else:
                optimizer.step()

            # --- log
            pending.setdefault("loss", []).append(step_loss)
            pending.setdefault("grad_norm", []).append(float(grad_norm))
            for name, metric in step_metrics.items():
                pending.setdefault(name, []).append(metric)
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
            if checkpoint_every is not None and done % checkpoint_every == 0 and done < steps:
                history.seconds = time.perf_counter() - start
                if rank == 0:
                    _save_checkpoint(checkpoint, model, optimizer, history, done, steps=steps,
                                     accumulation=accumulation)
    finally:
        bar.close()
        model.eval()
        history.seconds = time.perf_counter() - start
    return history


def _data_parallel() -> tuple[int, int]:
    """(rank, world size) of this process: (0, 1) unless torch.distributed is running."""
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized():
        return dist.get_rank(), dist.get_world_size()
    return 0, 1


def _mean_over_processes(loss: float, metrics: dict[str, float], world: int
                         ) -> tuple[float, dict[str, float]]:
    """The mean over all processes of this step's loss and metrics (one all-reduce)."""
    import torch.distributed as dist

    names = sorted(metrics)
    values = torch.tensor([loss, *(metrics[name] for name in names)], dtype=torch.float64)
    dist.all_reduce(values)
    values /= world
    return values[0].item(), {name: values[i + 1].item() for i, name in enumerate(names)}


CHECKPOINT_FORMAT = 1


def _save_checkpoint(path: str | Path, model: nn.Module, optimizer: torch.optim.Optimizer,
                     history: History, done: int, *, steps: int, accumulation: int) -> None:
    from .atomic import atomic_path

    state = {"format": CHECKPOINT_FORMAT, "done": done, "steps": steps,
             "accumulation": accumulation, "model": model.state_dict(),
             "optimizer": optimizer.state_dict(), "history": dataclasses.asdict(history),
             "torch_rng": torch.get_rng_state(), "python_rng": random.getstate(),
             "numpy_rng": np.random.get_state()}
    with atomic_path(path) as temporary:
        torch.save(state, temporary)


def _resume(path: str | Path, model: nn.Module, optimizer: torch.optim.Optimizer,
            history: History, *, steps: int, accumulation: int) -> int:
    """Load a checkpoint written by `_save_checkpoint` into the run; return the steps done."""
    try:
        state = torch.load(path, weights_only=False)
    except Exception as error:
        raise ValueError(f"cannot resume from {path}: it is not a training checkpoint "
                         f"({type(error).__name__}: {error}); delete it to start again") from None
    if not isinstance(state, dict) or state.get("format") != CHECKPOINT_FORMAT:
        raise ValueError(f"cannot resume from {path}: not a checkpoint of format "
                         f"{CHECKPOINT_FORMAT}; delete it to start again")
    for name, wanted in (("steps", steps), ("accumulation", accumulation)):
        if state[name] != wanted:
            raise ValueError(f"cannot resume from {path}: it was saved by a run with {name}="
                             f"{state[name]}, this run has {name}={wanted}; delete it to "
                             "start again, or run with the same settings")
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    for name, value in state["history"].items():
        setattr(history, name, value)
    torch.set_rng_state(state["torch_rng"])
    random.setstate(state["python_rng"])
    np.random.set_state(state["numpy_rng"])
    return state["done"]


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
