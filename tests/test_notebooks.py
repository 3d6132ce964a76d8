"""The lesson runner saves each cell's printed text as one output per stream."""

from __future__ import annotations

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
