"""The course's plotting helpers: one style, attention heatmaps, curves, bar comparisons.

Every lesson saves its figure with `save_figure(fig, "NN_name")` into `figures/`. Saving is
deterministic: a fixed dpi and no "Software" stamp in the PNG, so rerunning a lesson with the
same matplotlib gives byte-identical files. Nothing here needs a display (MPLBACKEND=Agg works).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

import matplotlib as mpl
import matplotlib.pyplot as plt
import numpy as np

from ..atomic import atomic_path
from . import paths

__all__ = [
    "DPI",
    "FIGURES_DIR",
    "STYLE",
    "apply_style",
    "bar_compare",
    "figures_dir",
    "label_points",
    "plot_attention",
    "plot_curves",
    "save_figure",
]

DPI = 100
FIGURES_DIR = paths.FIGURES  # the repository's figures/

STYLE = {
    "figure.figsize": (6.0, 4.0),
    "figure.dpi": DPI,
    "figure.constrained_layout.use": True,  # labels and colorbars never overlap
    "savefig.dpi": DPI,
    "font.family": "DejaVu Sans",  # ships with matplotlib: the same glyphs on every machine
    "font.size": 10,
    "axes.titlesize": 11,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.prop_cycle": mpl.cycler(color=plt.get_cmap("tab10").colors),
    "image.cmap": "viridis",
    "legend.frameon": False,
    "svg.hashsalt": "minibert",
}


def apply_style() -> None:
    """Set the course's fixed rcParams (call once at the top of a lesson)."""
    mpl.rcParams.update(STYLE)


def figures_dir() -> Path:
    """Where figures go: $MINIBERT_FIGURES if set, else the repository's `figures/`."""
    override = os.environ.get("MINIBERT_FIGURES")
    return Path(override) if override else FIGURES_DIR


def save_figure(fig, name: str, *, directory: str | Path | None = None, close: bool = False):
    """Save `fig` as `<figures dir>/<name>.png` and return the path.

    The bytes depend only on the figure and the matplotlib version: fixed dpi, no metadata.
    The figure stays open (so a notebook can still show it) unless `close=True`.
    """
    if not hasattr(fig, "savefig"):
        raise TypeError(f"save_figure needs a matplotlib Figure, got {type(fig).__name__}")
    name = name.removesuffix(".png")
    if not re.fullmatch(r"[A-Za-z0-9_.-]+", name):
        raise ValueError(
            f"figure name {name!r} should be a plain file name like '03_albert_sharing' "
            "(letters, digits, '_', '-', '.'; no folders)"
        )
    folder = Path(directory) if directory is not None else figures_dir()
    path = folder / f"{name}.png"
    with atomic_path(path) as temporary:  # a failed save leaves the old figure
        fig.savefig(temporary, format="png", dpi=DPI, bbox_inches="tight",
                    metadata={"Software": None})
    if close:
        plt.close(fig)
    return path


def _to_numpy(values) -> np.ndarray:
    """Tensors (on any device, with or without grad), lists and arrays -> a float array."""
    if hasattr(values, "detach"):
        values = values.detach().cpu().float().numpy()
    return np.asarray(values, dtype=float)


def _new_axes(ax, figsize=None):
    if ax is None:
        _, ax = plt.subplots(figsize=figsize)
    return ax


def plot_attention(
    probs,
    tokens: Sequence[str],
    ax=None,
    title: str | None = None,
    *,
    query_tokens: Sequence[str] | None = None,
    vmax: float | None = None,
    colorbar: bool = True,
):
    """Heatmap of one head's attention probabilities, row = query, column = key.

    probs: (T_q, T_k) array or tensor; tokens label the keys (and the queries unless
    `query_tokens` is given). Returns the axes.
    """
    probs = _to_numpy(probs)  # (T_q, T_k)
    if probs.ndim != 2:
        raise ValueError(
            f"plot_attention wants one head's (T, T) probabilities, got shape {probs.shape}; "
            "select a batch element and a head first, e.g. probs[0, head]"
        )
    query_tokens = tokens if query_tokens is None else query_tokens
    if (len(query_tokens), len(tokens)) != probs.shape:
        raise ValueError(
            f"{len(query_tokens)} query and {len(tokens)} key tokens do not label "
            f"probabilities of shape {probs.shape}"
        )
    ax = _new_axes(ax, figsize=(1.0 + 0.4 * len(tokens), 0.8 + 0.4 * len(query_tokens)))
    image = ax.imshow(probs, vmin=0.0, vmax=vmax, cmap="viridis", aspect="equal")
    ax.set_xticks(range(len(tokens)), labels=[str(t) for t in tokens], rotation=90)
    ax.set_yticks(range(len(query_tokens)), labels=[str(t) for t in query_tokens])
    ax.set_xlabel("key (attended to)")
    ax.set_ylabel("query")
    ax.grid(False)
    if title:
        ax.set_title(title)
    if colorbar:
        ax.figure.colorbar(image, ax=ax, fraction=0.046, pad=0.04)
    return ax


def _curve_xy(curve) -> tuple[np.ndarray, np.ndarray]:
    """(x, y) pairs, a bare y sequence (x = 0, 1, ...), or a training History (step, loss)."""
    if hasattr(curve, "step") and hasattr(curve, "loss"):
        return _to_numpy(curve.step), _to_numpy(curve.loss)
    if isinstance(curve, tuple) and len(curve) == 2 and np.ndim(curve[0]) == 1:
        x, y = _to_numpy(curve[0]), _to_numpy(curve[1])
    else:
        y = _to_numpy(curve)
        x = np.arange(len(y), dtype=float)
    if x.shape != y.shape or y.ndim != 1:
        raise ValueError(f"a curve needs x and y of the same length, got {x.shape} and {y.shape}")
    return x, y


def _trailing_mean(y: np.ndarray, window: int) -> np.ndarray:
    """Mean of the last `window` points at each position (fewer at the start)."""
    sums = np.cumsum(np.concatenate([[0.0], y]))
    ends = np.arange(1, len(y) + 1)
    starts = np.maximum(ends - window, 0)
    return (sums[ends] - sums[starts]) / (ends - starts)


def plot_curves(
    curves: Mapping[str, object],
    *,
    ax=None,
    title: str | None = None,
    xlabel: str = "step",
    ylabel: str = "loss",
    logy: bool = False,
    smooth: int | None = None,
):
    """Training curves, one line per name: {"post-LN": (steps, losses), "pre-LN": history}.

    A value is an (x, y) pair, a y sequence, or a `History`. `smooth` draws a trailing moving
    average over that many points over a faint raw line. Returns the axes.
    """
    if not isinstance(curves, Mapping) or not curves:
        raise ValueError("plot_curves wants a non-empty dict of name -> (x, y)")
    ax = _new_axes(ax)
    for name, curve in curves.items():
        x, y = _curve_xy(curve)
        if smooth and smooth > 1:
            (raw,) = ax.plot(x, y, alpha=0.25, linewidth=1)
            ax.plot(x, _trailing_mean(y, smooth), label=name, color=raw.get_color())
        else:
            ax.plot(x, y, label=name)
    if logy:
        ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title)
    ax.legend()
    return ax


def label_points(ax, xs: Sequence[float], ys: Sequence[float], labels: Sequence[str], *,
                 fontsize: float = 8, offset: tuple[float, float] = (5, -3)) -> list:
    """Label scatter points so that no two labels overlap; returns the text objects.

    Each label starts `offset` points to the right of its point; a label that would overlap one
    already placed moves down a line at a time (then to the left of its point), so close
    neighbours such as two models of almost the same speed and accuracy stay readable.
    """
    if not (len(xs) == len(ys) == len(labels)):
        raise ValueError(f"label_points wants as many labels as points: {len(xs)} x, {len(ys)} y, "
                         f"{len(labels)} labels")
    renderer = ax.figure.canvas.get_renderer()
    line = fontsize * 1.3
    candidates = [(offset[0], offset[1] - k * line) for k in range(0, 3)]
    candidates += [(offset[0], offset[1] + k * line) for k in range(1, 3)]
    placed, texts = [], []
    for x, y, label in zip(xs, ys, labels):
        for dx, dy in candidates + [(-dx_, dy_) for dx_, dy_ in candidates]:
            text = ax.annotate(label, (x, y), textcoords="offset points", xytext=(dx, dy),
                               fontsize=fontsize, ha="right" if dx < 0 else "left")
            box = text.get_window_extent(renderer)
            if not any(box.overlaps(other) for other in placed):
                break
            text.remove()
        else:   # no free place: keep the first one
            text = ax.annotate(label, (x, y), textcoords="offset points", xytext=candidates[0],
                               fontsize=fontsize)
            box = text.get_window_extent(renderer)
        placed.append(box)
        texts.append(text)
    return texts


def bar_compare(
    results: Mapping[str, float | Sequence[float]],
    *,
    errors: Mapping[str, float] | None = None,
    ax=None,
    title: str | None = None,
    ylabel: str | None = None,
    annotate: bool = True,
    fmt: str = "{:.3f}",
    colors: Sequence[str] | None = None,
):
    """Bars comparing arms of an experiment: {"static masking": 0.41, "dynamic": [0.43, 0.44]}.

    A list of values (one per seed) is drawn as its mean with a standard-deviation error bar and
    each seed as a dot, so the spread is visible; `errors` gives explicit error bars instead.
    Every bar has one colour unless `colors` gives one per arm (colours that mean something
    belong in a legend). A label's spread goes on a second line, so neighbours do not overlap.
    Returns the axes.
    """
    if not isinstance(results, Mapping) or not results:
        raise ValueError("bar_compare wants a non-empty dict of arm name -> value(s)")
    names = list(results)
    if colors is not None and len(colors) != len(names):
        raise ValueError(f"colors has {len(colors)} entries for {len(names)} arms: give one each")
    means, spreads, seeds = [], [], []
    for name in names:
        values = np.atleast_1d(_to_numpy(results[name]))
        means.append(float(values.mean()))
        spreads.append(float(values.std(ddof=1)) if len(values) > 1 else 0.0)
        seeds.append(values if len(values) > 1 else None)
    if errors is not None:
        unknown = set(errors) - set(names)
        if unknown:
            raise ValueError(f"errors names arms that are not in results: {sorted(unknown)}")
        spreads = [float(errors.get(name, 0.0)) for name in names]
    ax = _new_axes(ax)
    yerr = [spread if spread else np.nan for spread in spreads]  # no error bar where none given
    bars = ax.bar(names, means, yerr=yerr if any(spreads) else None, capsize=4,
                  color=list(colors) if colors is not None else "C0")
    for i, values in enumerate(seeds):
        if values is not None and errors is None:
            ax.scatter(np.full(len(values), i), values, s=12, color="black", alpha=0.6, zorder=3)
    if annotate:
        labels = [
            fmt.format(mean) + (f"\n± {fmt.format(spread)}" if spread else "")
            for mean, spread in zip(means, spreads)
        ]
        ax.bar_label(bars, labels=labels, padding=3, fontsize=8)
    ax.grid(False, axis="x")
    if ylabel:
        ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title)
    return ax
