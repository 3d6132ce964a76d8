"""Every lesson's exercise: the committed stub fails its grader, the solution passes it."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from minibert import check

LESSONS = Path(__file__).resolve().parent.parent / "lessons"
SOLUTIONS = sorted((LESSONS / "solutions").glob("[0-9][0-9]_*.py"))
GRADE_CALL = re.compile(r"check\.grade\(\s*\"(\w+)\",\s*(\w+)")  # check.grade("name", function)


def exercise_cells(notebook: Path) -> list[str]:
    """The source of each code cell that grades an exercise with check.grade(...)."""
    cells = json.loads(notebook.read_text())["cells"]
    sources = ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]
    return [s for s in sources if "check.grade(" in s]


def test_every_lesson_has_a_graded_exercise_and_a_solution():
    lessons = sorted(LESSONS.glob("[0-9][0-9]_*.ipynb"))
    assert lessons, "no lessons found"
    for notebook in lessons:
        assert exercise_cells(notebook), f"{notebook.name} has no cell calling check.grade(...)"
        assert (LESSONS / "solutions" / f"{notebook.stem}.py").exists(), (
            f"{notebook.name} has no solution in lessons/solutions/{notebook.stem}.py"
        )


@pytest.mark.parametrize("solution_path", SOLUTIONS, ids=lambda p: p.stem)
def test_solution_passes_and_stub_fails(solution_path: Path):
    solution = check.answers_in(str(solution_path))   # its GRADERS: exercise -> function
    notebook = LESSONS / f"{solution_path.stem}.ipynb"
    graded = set()
    for source in exercise_cells(notebook):
        calls = GRADE_CALL.findall(source)
        assert calls, "an exercise cell must call check.grade(\"name\", function)"
        # The stub, as committed in the lesson, runs without error and does not pass.
        namespace = {"check": check}
        exec(compile(source, f"{notebook.name}:exercise", "exec"), namespace)
        for name, function_name in calls:
            assert not check.grade(name, namespace[function_name], print=False).passed
            # The solution passes the same grader.
            assert name in solution, f"{solution_path.name} has no solution for {name!r}"
            assert check.grade(name, solution[name], print=False).passed
            graded.add(name)
    assert graded == set(solution)


def test_every_exercise_is_asked_for_by_the_lesson_it_names():
    for name in check.graders():
        notebook = LESSONS / f"{check._GRADERS[name].lesson}.ipynb"
        assert notebook.exists(), f"exercise {name!r} names a lesson that does not exist"
        asked = [exercise for source in exercise_cells(notebook)
                 for exercise, _ in GRADE_CALL.findall(source)]
        assert name in asked, f"{notebook.name} never grades {name!r}"


def test_the_command_line_grades_every_solution_file(capsys):
    assert check.main([str(path) for path in SOLUTIONS]) == 0
    out = capsys.readouterr().out
    assert out.count("✓") == len(check.graders()) and "✗" not in out
