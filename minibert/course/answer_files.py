"""`python -m minibert.check answers.py ...`: grade files of answers, each in its own process.

A file answers an exercise with a function named after it, or with a dict `GRADERS = {name:
function}` (as `lessons/solutions/` do). Each file is graded in a fresh Python process with no
input and a time limit, so a file that exits, loops or changes torch's global state cannot stop
or skew the others. The status is 2 if a file could not be graded, else 1 if an answer failed,
else 0.
"""

from __future__ import annotations

import builtins
import sys
import traceback
from collections.abc import Callable, Mapping, Sequence

from ..check import INPUTS_ASIDE, exercise_list, grade, graders

__all__ = ["answers_in", "main"]


def answers_in(path: str) -> dict[str, Callable]:
    """The exercises a Python file answers: exercise name -> the file's function.

    A file answers an exercise with a function of the exercise's name (`def electra_labels`),
    or with a dict `GRADERS = {"electra_labels": my_function}` (as `lessons/solutions/` do),
    which takes precedence. Raises ValueError, naming the fix, when there is nothing to grade.
    """
    import importlib.util
    from pathlib import Path

    file = Path(path)
    if file.suffix != ".py" or not file.is_file():
        raise ValueError(f"{path}: no such Python file; pass the path of a .py file of answers")
    spec = importlib.util.spec_from_file_location(f"_answers_{file.stem}", file)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as error:  # the file's own bug: say where, instead of a deep traceback
        lines = [frame.lineno for frame in traceback.extract_tb(error.__traceback__)
                 if Path(frame.filename).resolve() == file.resolve()]
        where = f" at line {lines[-1]}" if lines else ""
        raise ValueError(f"{path}: running it raised {type(error).__name__}{where}: {error}; "
                         "fix the file so that it runs on its own") from error
    answers = getattr(module, "GRADERS", None)
    if answers is None:
        answers = {name: getattr(module, name) for name in graders()
                   if callable(getattr(module, name, None))}
    if not isinstance(answers, Mapping):
        raise ValueError(f"{path}: GRADERS must be a dict of exercise name -> function")
    unknown = sorted(set(answers) - set(graders()))
    if unknown:
        raise ValueError(f"{path}: no exercise called {', '.join(map(repr, unknown))}; "
                         f"known exercises: {', '.join(graders())}")
    if not answers:
        raise ValueError(f"{path}: answers no exercise; name a function after one "
                         f"({', '.join(graders())}) or add GRADERS = {{name: function}}")
    return dict(answers)


def _grade_file(path: str) -> int:
    """Grade one file of answers in this process, print the report; 0, 1 (a failure) or 2.

    2 means the file could not be graded: it does not run, answers nothing, or exits
    (sys.exit, KeyboardInterrupt) while it is imported or graded.
    """
    try:
        answers = answers_in(path)
        results = [grade(name, function, print=False) for name, function in answers.items()]
    except ValueError as error:
        if isinstance(error.__cause__, EOFError):
            error = ValueError(f"{error} (a graded file gets no input: remove the input() call)")
        builtins.print(f"cannot grade {error}", file=sys.stderr)
        return 2
    except (SystemExit, KeyboardInterrupt) as error:
        what = "sys.exit()" if isinstance(error, SystemExit) else "KeyboardInterrupt"
        builtins.print(f"cannot grade {path}: it called {what} while being graded; "
                       "a file of answers should only define functions", file=sys.stderr)
        return 2
    except Exception as error:  # a grader's own inputs broken by the file (e.g. a monkeypatch)
        builtins.print(f"cannot grade {path}: grading raised {type(error).__name__}: {error}",
                       file=sys.stderr)
        return 2
    builtins.print(path)
    for result in results:
        text = str(result).replace(INPUTS_ASIDE, "")  # no result object in a shell
        builtins.print("  " + text.replace("\n", "\n  "))
    passed = sum(result.passed for result in results)
    builtins.print(f"  {passed} of {len(results)} passed")
    return 0 if passed == len(results) else 1


def _grade_in_own_process(path: str, timeout: float) -> int:
    """Grade `path` in a fresh Python process with no input and a time limit; 0, 1 or 2.

    A fresh process per file means nothing one file does (exit, loop, change torch's default
    dtype or seed, eat memory) can reach the next file or the grader itself.
    """
    import subprocess

    command = [sys.executable, "-m", "minibert.check", "--one-file", path]
    try:
        run = subprocess.run(command, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                             timeout=timeout)
    except subprocess.TimeoutExpired as stopped:
        for stream, output in ((sys.stdout, stopped.stdout), (sys.stderr, stopped.stderr)):
            if output:
                stream.write(output if isinstance(output, str) else output.decode(errors="replace"))
        builtins.print(f"cannot grade {path}: it did not finish within {timeout:g} s (an endless "
                       "loop?); fix it, or give more time with --timeout SECONDS", file=sys.stderr)
        return 2
    sys.stdout.write(run.stdout)
    sys.stderr.write(run.stderr)
    if run.returncode not in (0, 1, 2):
        builtins.print(f"cannot grade {path}: its grading process ended with status "
                       f"{run.returncode} (killed, or out of memory?)", file=sys.stderr)
        return 2
    return run.returncode


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m minibert.check [answers.py ...]`: 0 if every answer passes.

    Without files, lists the exercises. Each file is graded in its own process with stdin
    empty and a time limit (--timeout, 60 s by default), and every file is reported. The
    status is 2 if a file could not be graded (missing, answers no exercise, names an unknown
    one, raises or exits when run, too slow), else 1 if an answer failed, else 0.
    """
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m minibert.check",
        description="Grade files of answers to the lessons' exercises (without files: list them).")
    parser.add_argument("files", nargs="*", help="Python files of answers")
    parser.add_argument("--timeout", type=float, default=60.0, metavar="SECONDS",
                        help="time limit for grading one file (default 60)")
    parser.add_argument("--one-file", help=argparse.SUPPRESS)  # the per-file process
    args = parser.parse_args(argv)
    if args.one_file is not None:
        return _grade_file(args.one_file)
    if not args.timeout > 0:
        parser.error(f"--timeout must be a positive number of seconds, got {args.timeout}")
    if not args.files:
        builtins.print(exercise_list())
        return 0
    statuses = []
    for path in args.files:
        statuses.append(_grade_in_own_process(path, args.timeout))
        sys.stdout.flush()
        sys.stderr.flush()
    return 2 if 2 in statuses else max(statuses)
