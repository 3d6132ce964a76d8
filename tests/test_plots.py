"""Plotting helpers: headless, and saving is byte-for-byte reproducible."""

import os
import subprocess
import sys

import matplotlib.pyplot as plt
import numpy as np
import pytest
import torch

from minibert.course import plots
from minibert.train import History


@pytest.fixture(autouse=True)
def headless(monkeypatch, tmp_path):
    plt.switch_backend("Agg")
    monkeypatch.setenv("MINIBERT_FIGURES", str(tmp_path))
    yield
    plt.close("all")


def attention_figure():
    plots.apply_style()
    tokens = ["[CLS]", "the", "cat", "sat", "[SEP]"]
    probs = torch.softmax(torch.randn(5, 5, generator=torch.Generator().manual_seed(0)), -1)
    fig, axes = plt.subplots(1, 3, figsize=(12, 3.5))
    plots.plot_attention(probs, tokens, ax=axes[0], title="head 0")
    plots.plot_curves({"a": ([1, 2, 3], [3.0, 2.0, 1.5]), "b": [2.5, 2.0, 1.0, 0.8]},
                      ax=axes[1], smooth=2)
    plots.bar_compare({"static": [0.40, 0.42], "dynamic": 0.45}, ax=axes[2], ylabel="accuracy")
    return fig


def test_saving_twice_gives_identical_bytes(tmp_path):
    first = plots.save_figure(attention_figure(), "00_test")
    data = first.read_bytes()
    assert first == tmp_path / "00_test.png" and data[:8] == b"\x89PNG\r\n\x1a\n"
    again = plots.save_figure(attention_figure(), "00_test.png")  # a new, identical figure
    assert again == first and again.read_bytes() == data
    assert b"Software" not in data and b"Matplotlib" not in data


def test_figures_dir_defaults_to_the_repository(monkeypatch):
    monkeypatch.delenv("MINIBERT_FIGURES")
    assert plots.figures_dir() == plots.FIGURES_DIR
    assert plots.FIGURES_DIR.name == "figures"
    assert (plots.FIGURES_DIR.parent / "minibert").is_dir()


def test_save_figure_keeps_the_figure_open_unless_asked(tmp_path):
    fig, _ = plt.subplots()
    plots.save_figure(fig, "open")
    assert plt.fignum_exists(fig.number)
    plots.save_figure(fig, "closed", directory=tmp_path / "sub", close=True)
    assert not plt.fignum_exists(fig.number) and (tmp_path / "sub" / "closed.png").is_file()
    with pytest.raises(ValueError, match="plain file name"):
        plots.save_figure(fig, "../escape")
    with pytest.raises(TypeError, match="Figure"):
        plots.save_figure("not a figure", "x")


def test_plot_curves_accepts_histories_and_plot_attention_checks_shapes():
    history = History(step=[1, 2, 3], loss=[1.0, 0.5, 0.25])
    ax = plots.plot_curves({"run": history}, logy=True)
    line = ax.get_lines()[0]
    assert np.array_equal(line.get_xdata(), [1, 2, 3]) and ax.get_yscale() == "log"
    with pytest.raises(ValueError, match="select a batch element"):
        plots.plot_attention(torch.rand(2, 4, 4), list("abcd"))
    with pytest.raises(ValueError, match="do not label"):
        plots.plot_attention(torch.rand(4, 4), list("abc"))
    with pytest.raises(ValueError, match="not in results"):
        plots.bar_compare({"a": 1.0}, errors={"b": 0.1})


def test_runs_headless_in_a_fresh_process(tmp_path):
    script = (
        "import matplotlib.pyplot as plt\n"
        "from minibert.course import plots\n"
        "plots.apply_style()\n"
        "fig, ax = plt.subplots()\n"
        "plots.plot_attention([[0.5, 0.5], [0.2, 0.8]], ['a', 'b'], ax=ax)\n"
        "print(plt.get_backend(), plots.save_figure(fig, 'headless'))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "DISPLAY"}
    env.update(MPLBACKEND="Agg", MINIBERT_FIGURES=str(tmp_path))
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                          text=True, timeout=60, check=True)
    assert done.stdout.lower().startswith("agg") and (tmp_path / "headless.png").is_file()


def test_label_points_keeps_close_labels_apart():
    plots.apply_style()
    fig, ax = plt.subplots(figsize=(5, 4))
    xs, ys = [1.74, 1.81, 1.0, 0.8], [0.790, 0.773, 0.80, 0.78]
    ax.scatter(xs, ys)
    ax.set(xlim=(0.7, 1.9), ylim=(0.7, 0.85))
    texts = plots.label_points(ax, xs, ys, ["DistilBERT", "TinyBERT", "BERT", "FastBERT"])
    renderer = fig.canvas.get_renderer()
    boxes = [t.get_window_extent(renderer) for t in texts]
    assert [t.get_text() for t in texts] == ["DistilBERT", "TinyBERT", "BERT", "FastBERT"]
    assert not any(a.overlaps(b) for i, a in enumerate(boxes) for b in boxes[i + 1:])


def test_label_points_wants_one_label_a_point():
    fig, ax = plt.subplots()
    with pytest.raises(ValueError, match="as many labels as points"):
        plots.label_points(ax, [1, 2], [1, 2], ["one"])


def test_bar_compare_draws_one_colour_and_every_seed():
    fig, ax = plt.subplots()
    plots.bar_compare({"pretrained": [0.6, 0.7, 0.65], "scratch": [0.5, 0.49, 0.51]}, ax=ax)
    assert len({tuple(patch.get_facecolor()) for patch in ax.patches}) == 1
    dots = [c for c in ax.collections if len(c.get_offsets()) == 3]
    assert len(dots) == 2 and sorted(dots[0].get_offsets()[:, 1]) == [0.6, 0.65, 0.7]
    with pytest.raises(ValueError, match="one each"):
        plots.bar_compare({"a": 1.0, "b": 2.0}, colors=["C0"])
