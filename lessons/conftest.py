"""The lesson-time guard: `make test` times every lesson under nbval against the budget.

Each lesson's time is the sum of its cells' setup, run and teardown (the kernel start is in the
first cell's setup). The table is printed at the end of the run, with a TOO SLOW line for each
lesson over LESSON_BUDGET seconds and for a course over COURSE_BUDGET, and written to
`lessons/.test_timings.json`. With LESSON_BUDGET_STRICT=1 in the environment (the Makefile sets
it) a TOO SLOW line also fails the run. Running only some lessons checks only those.
"""

from __future__ import annotations

import json
import os
from collections import defaultdict
from pathlib import Path

import pytest

LESSON_BUDGET = 150  # seconds a lesson may take on the 2-core CI machine
COURSE_BUDGET = 25 * 60  # seconds for the whole course
RECORD = Path(__file__).resolve().parent / ".test_timings.json"

_seconds: dict[str, float] = defaultdict(float)


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    path = report.nodeid.split("::")[0]
    if path.endswith(".ipynb"):
        _seconds[Path(path).stem] += report.duration


def _over_budget() -> list[str]:
    problems = [f"{name} took {seconds:.0f} s, over the {LESSON_BUDGET} s a lesson may take"
                for name, seconds in sorted(_seconds.items()) if seconds > LESSON_BUDGET]
    total = sum(_seconds.values())
    if total > COURSE_BUDGET:
        problems.append(f"the lessons took {total / 60:.1f} min together, over the "
                        f"{COURSE_BUDGET / 60:.0f} min the course may take")
    return problems


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if not _seconds:
        return
    RECORD.write_text(json.dumps({k: round(v, 1) for k, v in sorted(_seconds.items())},
                                 indent=1) + "\n")
    strict = os.environ.get("LESSON_BUDGET_STRICT") == "1"
    if strict and _over_budget() and exitstatus == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter, exitstatus: int) -> None:
    if not _seconds:
        return
    write = terminalreporter.write_line
    terminalreporter.section("lesson times (budget: "
                             f"{LESSON_BUDGET} s a lesson, {COURSE_BUDGET // 60} min in all)")
    for name, seconds in sorted(_seconds.items()):
        write(f"  {name:<24} {seconds:6.1f} s")
    write(f"  {'all lessons':<24} {sum(_seconds.values()):6.1f} s")
    for problem in _over_budget():
        write(f"TOO SLOW: {problem}", red=True)
