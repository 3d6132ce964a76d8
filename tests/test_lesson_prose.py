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


# Lesson 12 is being rebuilt; its new first cell gets the same front matter.
FRONT_MATTER_PENDING: set[str] = set()


@pytest.mark.parametrize("notebook", CASES)
def test_the_first_cell_says_what_to_read_first_how_long_and_what_it_teaches(notebook):
    from minibert.course.course_map import COURSE

    if notebook.stem in FRONT_MATTER_PENDING:
        pytest.skip(f"{notebook.name}: being rebuilt")
    _, text = markdown_cells(notebook)[0]
    before = re.search(r"\*\*Before this lesson\*\*:(.*?)(?:\*\*Time\*\*|\n\n)", text, re.DOTALL)
    time = re.search(r"\*\*Time\*\*:(.*?)(?:\n\n|$)", text, re.DOTALL)
    assert before and time and "**After it you can**" in text, (
        f"{notebook.name}: cell 0 should have **Before this lesson**: (the lessons to read first), "
        "**Time**: (to read and run) and **After it you can** (what the student can then do)")
    named = re.findall(r"\b(\d\d) \(", before.group(1))
    wanted = next(lesson.after for lesson in COURSE if lesson.notebook == notebook.stem)
    assert tuple(named) == wanted, (
        f"{notebook.name}: its first cell names lessons {named} before it; the course map "
        f"(minibert/course/course_map.py) says {wanted}")
    assert not re.search(r"\d\s*(s|sec|seconds)\b", time.group(1)), (
        f"{notebook.name}: the run time is typed by hand ({time.group(1).strip()!r}); say the "
        "budget instead, and let lessons/timings.json hold what was measured")
