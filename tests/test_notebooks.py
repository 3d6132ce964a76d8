"""The lesson runner saves each cell's printed text as one output per stream."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

from minibert.course.notebooks import coalesce_streams

LESSONS = Path(__file__).resolve().parent.parent / "lessons"


def _cell(*outputs):
    notebook = nbformat.v4.new_notebook()
    notebook.cells.append(nbformat.v4.new_code_cell("print(1)", outputs=list(outputs)))
    return notebook


def test_consecutive_pieces_of_one_stream_are_merged():
    notebook = _cell(nbformat.v4.new_output("stream", name="stdout", text="a\n"),
                     nbformat.v4.new_output("stream", name="stdout", text="b\n"),
                     nbformat.v4.new_output("stream", name="stdout", text="c\n"))
    coalesce_streams(notebook)
    assert [(o.output_type, o.name, o.text) for o in notebook.cells[0].outputs] == [
        ("stream", "stdout", "a\nb\nc\n")]


def test_other_streams_and_outputs_keep_their_order():
    notebook = _cell(nbformat.v4.new_output("stream", name="stdout", text="a\n"),
                     nbformat.v4.new_output("stream", name="stderr", text="warn\n"),
                     nbformat.v4.new_output("stream", name="stdout", text="b\n"),
                     nbformat.v4.new_output("display_data", data={"text/plain": "fig"}),
                     nbformat.v4.new_output("stream", name="stdout", text="c\n"),
                     nbformat.v4.new_output("stream", name="stdout", text="d\n"))
    coalesce_streams(notebook)
    kinds = [(o.output_type, o.get("name"), o.get("text")) for o in notebook.cells[0].outputs]
    assert kinds == [("stream", "stdout", "a\n"), ("stream", "stderr", "warn\n"),
                     ("stream", "stdout", "b\n"), ("display_data", None, None),
                     ("stream", "stdout", "c\nd\n")]


@pytest.mark.parametrize("path", sorted(LESSONS.glob("[0-9][0-9]_*.ipynb")), ids=lambda p: p.stem)
def test_committed_lessons_are_saved_coalesced(path):
    notebook = nbformat.read(path, as_version=4)
    saved = [len(cell.get("outputs", [])) for cell in notebook.cells]
    coalesce_streams(notebook)   # what the runner does before saving: it should change nothing
    split = [index for index, (cell, count) in enumerate(zip(notebook.cells, saved))
             if len(cell.get("outputs", [])) != count]
    assert not split, (f"{path.name}: cells {split} save one stream in several pieces; rerun the "
                       f"lesson with `python -m minibert.course.notebooks lessons/{path.name}`")


# ---------------------------------------------------------------------------------------------
# Progress bars: stored as finished text lines, never as a widget a viewer shows at 0%.

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def stuck_widget_bars(notebook) -> list[str]:
    """The text fallbacks of widget progress bars saved before they finished ("0%| | 0/600")."""
    stuck = []
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            text = "".join(data.get("text/plain", ""))
            if WIDGET_VIEW in data and "%|" in text and "100%" not in text:
                stuck.append(text.strip())
    return stuck


def test_carriage_returns_are_folded_to_the_last_state():
    from minibert.progress import finish_lines

    bar = "\rMLM:   0%|     | 0/4\rMLM:  50%|##   | 2/4\rMLM: 100%|#####| 4/4\n"
    assert finish_lines("before\n" + bar + "after\n") == "before\nMLM: 100%|#####| 4/4\nafter\n"
    assert finish_lines("no bars\r\n") == "no bars\n"


def test_an_unknown_progress_mode_names_the_choices(monkeypatch):
    from minibert import progress

    monkeypatch.setenv(progress.ENV, "widgets")
    with pytest.raises(ValueError, match="auto, text"):
        progress.progress_bar(total=3)


def test_the_runner_stores_finished_text_progress_bars(tmp_path):
    """Checked by running: a notebook that trains 3 steps goes through the lesson runner."""
    from minibert.course.notebooks import RUNNER_STAMP, run_notebook

    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                       "language": "python"}
    notebook.cells.append(nbformat.v4.new_code_cell(
        "import torch\nfrom minibert.train import train\n"
        "model = torch.nn.Linear(2, 1)\n"
        "train(model, lambda step: torch.ones(4, 2), lambda m, b: m(b).pow(2).mean(), steps=3,"
        " lr=1e-3, desc='tiny')\nprint('done')"))
    path = tmp_path / "tiny.ipynb"
    nbformat.write(notebook, path)
    run_notebook(path, timeout=120)
    saved = nbformat.read(path, as_version=4)
    outputs = saved.cells[0].outputs
    assert not [o for o in outputs if WIDGET_VIEW in o.get("data", {})], outputs
    text = "".join(o.get("text", "") for o in outputs if o.output_type == "stream")
    assert "\r" not in text
    assert re.search(r"^tiny: 100%\|.*\| 3/3 ", text, re.M), text
    assert saved.metadata["minibert"] == RUNNER_STAMP


@pytest.mark.parametrize("path", sorted(LESSONS.glob("[0-9][0-9]_*.ipynb")), ids=lambda p: p.stem)
def test_committed_lessons_show_no_progress_bar_stuck_at_zero(path):
    """Checked on the committed notebooks, once `make lessons` has re-executed them (the runner
    stamps its notebooks); a lesson saved before that is skipped, saying so."""
    from minibert.course.notebooks import RUNNER_STAMP

    notebook = nbformat.read(path, as_version=4)
    if notebook.metadata.get("minibert") != RUNNER_STAMP:
        pytest.skip(f"{path.name} was saved before the runner stored progress bars as text: "
                    f"`make lessons LESSONS=lessons/{path.name}` re-executes it")
    stuck = stuck_widget_bars(notebook)
    assert not stuck, (f"{path.name} stores {len(stuck)} widget progress bar(s) a viewer shows "
                       f"unfinished, e.g. {stuck[0]!r}: rerun it with `make lessons`")
