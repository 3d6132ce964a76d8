"""The lessons' prose stays readable: no markdown cell is a wall of lab notes, each closing
discussion is short (the detail lives in lessons/notes/), and every relative link resolves."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

LESSONS = Path(__file__).resolve().parent.parent / "lessons"
NOTEBOOKS = sorted(LESSONS.glob("[0-9][0-9]_*.ipynb"))
MAX_CELL_WORDS = 800
MAX_CLOSING_WORDS = 600
# A Markdown link or image target: ](target) or ](target "title").
LINK = re.compile(r"\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")


def markdown_cells(notebook: Path) -> list[tuple[int, str]]:
    """(index, text) of every markdown cell, counting cells from 0 as the lessons do."""
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    return [(i, "".join(cell["source"])) for i, cell in enumerate(cells)
            if cell["cell_type"] == "markdown"]


def words(text: str) -> int:
    return len(text.split())


def relative_links(text: str) -> list[str]:
    """Link targets that name a file of the repository (not a web page, mail or in-page anchor)."""
    targets = (match.group(1) for match in LINK.finditer(text))
    return [t for t in targets if not re.match(r"^(?:[a-z][a-z0-9+.-]*:|#)", t, re.IGNORECASE)]


CASES = [pytest.param(nb, id=nb.stem) for nb in NOTEBOOKS]


def test_every_lesson_is_found():
    assert len(NOTEBOOKS) >= 13, f"expected the thirteen lessons in {LESSONS}: {len(NOTEBOOKS)}"


@pytest.mark.parametrize("notebook", CASES)
def test_no_markdown_cell_is_a_wall_of_text(notebook):
    long = {i: words(text) for i, text in markdown_cells(notebook) if words(text) > MAX_CELL_WORDS}
    assert not long, (f"{notebook.name}: markdown cells over {MAX_CELL_WORDS} words {long} "
                      "(cell: words); move the detail to lessons/notes/ and link it")


@pytest.mark.parametrize("notebook", CASES)
def test_the_closing_discussion_is_short(notebook):
    index, text = markdown_cells(notebook)[-1]
    assert words(text) <= MAX_CLOSING_WORDS, (
        f"{notebook.name}: the closing discussion (cell {index}) has {words(text)} words, over "
        f"{MAX_CLOSING_WORDS}; keep what agreed, what did not and why, and move the record of "
        f"the runs to lessons/notes/{notebook.stem}.md")


@pytest.mark.parametrize("notebook", CASES)
def test_relative_links_point_at_files_that_exist(notebook):
    broken = [f"cell {i}: {target}" for i, text in markdown_cells(notebook)
              for target in relative_links(text)
              if not (LESSONS / target.split("#")[0]).exists()]
    assert not broken, f"{notebook.name}: links to missing files: {broken}"


def test_the_link_pattern_finds_relative_targets():
    text = ("see [notes](notes/04_albert.md#runs), [code](../minibert/albert.py), "
            "[lesson](01_bert.ipynb \"BERT\"), [paper](https://arxiv.org/abs/1909.11942), "
            "[up](#top)")
    assert relative_links(text) == ["notes/04_albert.md#runs", "../minibert/albert.py",
                                    "01_bert.ipynb"]
