"""Graders for the lessons' "your turn" exercises: the engine, the registry, the hints.

`compare(student_fn, reference_fn, make_inputs)` calls both functions on the same random
inputs and says exactly what differs: an exception (with the line of your code that raised
it), the wrong type, the wrong number of outputs, shape, dtype, or the largest difference and
where it is. A wrong answer never raises (the notebook keeps running) unless `strict=True`.

Each lesson's exercises live beside the lesson, in `lessons/exercises/NN_<lesson>.py` (the
reference, the input generator and the hint of each, registered with `register`); this module
loads them when it is imported, so a cell only needs

    check.grade("attention", my_attention)

`make_inputs(trial, generator)` returns the positional arguments of one trial (a tuple, or a
dict of keyword arguments), drawing random numbers from `generator` so every trial is
reproducible. Trial numbers let early trials be small and easy and later ones add the hard
cases (padding masks, odd sizes).

From a shell, `python -m minibert.check` lists the exercises by lesson, and
`python -m minibert.check answers.py ...` grades files of answers, each in its own process
(`minibert.course.answer_files`): a class's submissions can be graded in one command.
"""

from __future__ import annotations

import builtins
import inspect
import math
import sys
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

__all__ = ["CheckResult", "Grader", "answers_in", "compare", "exercise_list", "grade", "graders",
           "hint", "load_lesson_graders", "main", "register", "yours_or_library"]

PASS, FAIL = "✓", "✗"
INPUTS_ASIDE = " (see result.inputs)"  # a failure's pointer to its inputs, for notebook users


@dataclass
class CheckResult:
    """The verdict of a check. Truthy when it passed; `str()` gives the message.

    On a failure, `trial` and `inputs` are the trial that failed and its inputs, so you can
    call your function on them yourself.
    """

    passed: bool
    message: str
    name: str = "your function"
    trial: int | None = None
    inputs: Any = None
    printed_in: int | None = field(default=None, repr=False)  # notebook cell that printed it

    def __bool__(self) -> bool:
        return self.passed

    def __str__(self) -> str:
        return self.message

    def __repr__(self) -> str:
        return f"CheckResult(passed={self.passed}, name={self.name!r})"

    def _ipython_display_(self) -> None:
        """In a notebook, show the message, unless compare() just printed it in this cell."""
        if self.printed_in is None or self.printed_in != _notebook_cell():
            builtins.print(self.message)


def _notebook_cell() -> int | None:
    """The number of the IPython cell running now, or None outside IPython."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    return getattr(shell, "execution_count", None)


# ---------------------------------------------------------------------------------------------
# describing things in words


def _kind(value: Any) -> str:
    """'a single tensor', 'a tuple of 2', 'None', 'a float', 'a numpy.ndarray', ..."""
    if value is None:
        return "None"
    if isinstance(value, torch.Tensor):
        return "a single tensor"
    if isinstance(value, (tuple, list)):
        return f"a {type(value).__name__} of {len(value)}"
    cls = type(value)
    kind = cls.__name__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__name__}"
    return f"{'an' if kind[0] in 'aeiou' else 'a'} {kind}"


def _describe(value: Any) -> str:
    if isinstance(value, torch.Tensor):
        return f"{str(value.dtype).removeprefix('torch.')} {tuple(value.shape)}"
    if isinstance(value, (tuple, list)):
        return f"{type(value).__name__} of {len(value)}"
    return repr(value)


def _argument_names(reference_fn: Callable, count: int) -> list[str]:
    """Names of the first `count` positional parameters of the reference (for messages)."""
    try:
        params = list(inspect.signature(reference_fn).parameters)
    except (TypeError, ValueError):
        params = []
    return [params[i] if i < len(params) else f"argument {i}" for i in range(count)]


def _split_inputs(inputs: Any) -> tuple[tuple, dict]:
    """make_inputs returns a tuple of arguments, a dict of keyword arguments, or one argument."""
    if isinstance(inputs, Mapping):
        return (), dict(inputs)
    if isinstance(inputs, tuple):
        return inputs, {}
    return (inputs,), {}


def _describe_inputs(inputs: Any, reference_fn: Callable) -> str:
    args, kwargs = _split_inputs(inputs)
    names = _argument_names(reference_fn, len(args))
    parts = [f"{name}: {_describe(value)}" for name, value in zip(names, args)]
    parts += [f"{name}: {_describe(value)}" for name, value in kwargs.items()]
    return ", ".join(parts) if parts else "no arguments"


def _where_it_raised(error: BaseException, student_fn: Callable) -> str:
    """'line 7 in my_attention: scores = q @ k.T' for the deepest frame of the student's file."""
    frames = traceback.extract_tb(error.__traceback__)[1:]  # drop compare()'s own frame
    code = getattr(student_fn, "__code__", None)
    own = [f for f in frames if code is not None and f.filename == code.co_filename]
    frame = (own or frames or [None])[-1]
    if frame is None:
        return ""
    line = f": {frame.line.strip()}" if frame.line else ""
    return f" (line {frame.lineno} in {frame.name}{line})"


# ---------------------------------------------------------------------------------------------
# comparing results


def _clone(value: Any) -> Any:
    """A deep copy of tensors inside tuples, lists and dicts (each function gets its own)."""
    if isinstance(value, torch.Tensor):
        return value.detach().clone()
    if isinstance(value, (tuple, list)):
        return type(value)(_clone(v) for v in value)
    if isinstance(value, dict):
        return {k: _clone(v) for k, v in value.items()}
    return value


def _tensor_difference(
    got: torch.Tensor, expected: torch.Tensor, where: str, atol: float, rtol: float
) -> tuple[str | None, float]:
    """Shape, dtype, then values: (problem or None, max abs difference)."""
    if got.shape != expected.shape:
        return f"{where} has shape {tuple(got.shape)}, expected {tuple(expected.shape)}", math.inf
    if got.dtype != expected.dtype:
        return f"{where} has dtype {got.dtype}, expected {expected.dtype}", math.inf
    if got.device != expected.device:
        return f"{where} is on {got.device}, expected {expected.device}", math.inf
    g, e = got.detach().double(), expected.detach().double()
    close = torch.isclose(g, e, rtol=rtol, atol=atol, equal_nan=True)  # (...)
    diff = (g - e).abs()  # (...)
    diff = torch.where((g == e) | (g.isnan() & e.isnan()), 0.0, diff).nan_to_num(nan=math.inf)
    worst = diff.max().item() if diff.numel() else 0.0
    if close.all():
        return None, worst
    flat = torch.where(close, -1.0, diff).flatten().argmax().item()  # worst wrong element
    index = tuple(int(i) for i in torch.unravel_index(torch.tensor(flat), tuple(g.shape)))
    yours, wanted = g.flatten()[flat].item(), e.flatten()[flat].item()
    wrong = int((~close).sum())
    return (
        f"{where} has the wrong values\n"
        f"  max abs difference {worst:.4g} at index {index}: "
        f"yours {yours:.6g}, expected {wanted:.6g}\n"
        f"  ({wrong} of {g.numel()} values outside atol={atol:g}, rtol={rtol:g})"
    ), worst


def _difference(
    got: Any, expected: Any, where: str, atol: float, rtol: float, names: Sequence[str] | None
) -> tuple[str | None, float]:
    """Compare a result with the reference's, recursing into tuples and lists."""
    if isinstance(expected, torch.Tensor):
        if not isinstance(got, torch.Tensor):
            return f"{where} is {_kind(got)}, expected a single tensor", math.inf
        return _tensor_difference(got, expected, where, atol, rtol)
    if isinstance(expected, (tuple, list)):
        named = f" ({', '.join(names)})" if names and len(names) == len(expected) else ""
        container = "list" if isinstance(expected, list) else "tuple"
        wanted = f"a {container} of {len(expected)}{named}"
        if not isinstance(got, (tuple, list)):
            return f"{where} is {_kind(got)}, expected {wanted}", math.inf
        if len(got) != len(expected):
            return f"{where} is {_kind(got)}, expected {wanted}", math.inf
        worst = 0.0
        for i, (g, e) in enumerate(zip(got, expected)):
            label = (f"`{names[i]}` (item {i} of the {container})" if named
                     else f"item {i} of the {container}")
            problem, diff = _difference(g, e, label, atol, rtol, None)
            if problem:
                return problem, diff
            worst = max(worst, diff)
        return None, worst
    if isinstance(expected, Mapping):
        if not isinstance(got, Mapping):
            return f"{where} is {_kind(got)}, expected a dict", math.inf
        missing = [key for key in expected if key not in got]
        extra = [key for key in got if key not in expected]
        if missing or extra:
            return (f"{where} has the wrong keys: missing {missing[:5]}"
                    f"{' ...' if len(missing) > 5 else ''}, unexpected {extra[:5]}"
                    f"{' ...' if len(extra) > 5 else ''}"), math.inf
        for key, value in expected.items():
            if got[key] != value:
                return f"{where}[{key!r}] is {got[key]!r}, expected {value!r}", math.inf
        return None, 0.0
    if isinstance(expected, (int, float)) and not isinstance(expected, bool):
        if isinstance(got, torch.Tensor) and got.numel() == 1:
            got = got.item()
        if isinstance(got, bool) or not isinstance(got, (int, float)):
            return f"{where} is {_kind(got)}, expected a number", math.inf
        diff = abs(got - expected)
        if math.isclose(got, expected, rel_tol=rtol, abs_tol=atol):
            return None, diff
        return f"{where} is {got!r}, expected {expected!r} (difference {diff:.4g})", diff
    if got != expected:
        return f"{where} is {got!r}, expected {expected!r}", math.inf
    return None, 0.0


def _changed_input(
    before: tuple, after: tuple, kwargs_before: dict, kwargs_after: dict, reference_fn: Callable
) -> str | None:
    """The name of an input tensor the student's function modified in place, if any."""
    names = _argument_names(reference_fn, len(before))
    pairs = list(zip(names, before, after))
    pairs += [(name, kwargs_before[name], kwargs_after[name]) for name in kwargs_before]
    for name, old, new in pairs:
        if isinstance(old, torch.Tensor) and isinstance(new, torch.Tensor):
            if old.shape != new.shape or not torch.equal(old, new):
                return name
    return None


# ---------------------------------------------------------------------------------------------
# the checks


def _finish(result: CheckResult, show: bool, strict: bool) -> CheckResult:
    if strict and not result.passed:
        raise AssertionError(result.message)
    if show:
        builtins.print(result.message)
        result.printed_in = _notebook_cell()
    return result


def compare(
    student_fn: Callable,
    reference_fn: Callable,
    make_inputs: Callable[[int, torch.Generator], Any],
    *,
    trials: int = 5,
    atol: float = 1e-5,
    rtol: float = 1e-4,
    seed: int = 0,
    name: str | None = None,
    hint: str | None = None,
    output_names: Sequence[str] | None = None,
    strict: bool = False,
    print: bool = True,
    show_hint: bool = True,
) -> CheckResult:
    """Check `student_fn` against `reference_fn` on `trials` random inputs.

    Trial t calls make_inputs(t, torch.Generator().manual_seed(seed + t)); both functions get
    their own copy of the inputs. Values must agree within torch.isclose(atol, rtol).
    Prints the verdict (print=False: don't) and returns a `CheckResult`; with strict=True a
    failure raises AssertionError instead. A failed attempt ends with `hint` when show_hint
    is true; an unattempted stub never shows it.
    """
    label = name or getattr(student_fn, "__name__", "your function")
    hint_line = f"\n  hint: {hint}" if hint and show_hint else (
        f"\n  stuck? check.hint({name!r}) gives a hint" if hint and name else "")

    def failed(text: str, trial: int | None = None, inputs: Any = None,
               attempted: bool = True) -> CheckResult:
        if trial is not None:
            described = _describe_inputs(inputs, reference_fn)
            text += f"\n  on trial {trial} of {trials}, inputs {described}{INPUTS_ASIDE}"
        message = f"{FAIL} {label}: {text}{hint_line if attempted else ''}"
        result = CheckResult(False, message, name=label, trial=trial, inputs=inputs)
        return _finish(result, print, strict)

    if not callable(student_fn):
        return failed(
            f"expected a function, got {_kind(student_fn)}. Pass the function itself, "
            "without calling it: grade(name, my_function), not grade(name, my_function(...))"
        )
    if trials < 1:
        raise ValueError(f"trials must be at least 1, got {trials}")

    worst = 0.0
    for trial in range(trials):
        inputs = make_inputs(trial, torch.Generator().manual_seed(seed + trial))
        args, kwargs = _split_inputs(inputs)

        expected = reference_fn(*_clone(args), **_clone(kwargs))
        student_args, student_kwargs = _clone(args), _clone(kwargs)
        try:
            got = student_fn(*student_args, **student_kwargs)
        except NotImplementedError:
            return failed(
                "not attempted yet. Replace `raise NotImplementedError` with your code, "
                "run that cell, then run this check again.",
                attempted=False,
            )
        except Exception as error:  # the student's bug, reported rather than raised
            where = _where_it_raised(error, student_fn)
            return failed(
                f"your function raised {type(error).__name__}: {error}{where}",
                trial,
                inputs,
            )

        changed = _changed_input(args, student_args, kwargs, student_kwargs, reference_fn)
        if changed:
            return failed(
                f"your function changed its input `{changed}` in place; compute new tensors "
                "instead (avoid `x /= ...`, `.masked_fill_()`, `.add_()` on inputs)",
                trial,
                inputs,
            )
        problem, diff = _difference(got, expected, "your result", atol, rtol, output_names)
        if problem:
            return failed(problem, trial, inputs)
        worst = max(worst, diff)

    agreement = "exact match" if worst == 0 else f"max abs difference {worst:.1e}"
    message = f"{PASS} {label}: correct on {trials} random inputs ({agreement})"
    return _finish(CheckResult(True, message, name=label), print, strict)


# ---------------------------------------------------------------------------------------------
# the registry of exercises


@dataclass(frozen=True)
class Grader:
    """A registered exercise: the reference, its inputs and what to tell a stuck student."""

    reference: Callable
    make_inputs: Callable[[int, torch.Generator], Any]
    hint: str | None = None
    trials: int = 5
    atol: float = 1e-5
    rtol: float = 1e-4
    output_names: tuple[str, ...] | None = None
    lesson: str | None = None  # the notebook that asks for it, e.g. "06_electra"


_GRADERS: dict[str, Grader] = {}


def register(
    name: str,
    reference: Callable,
    make_inputs: Callable[[int, torch.Generator], Any],
    hint: str | None = None,
    *,
    trials: int = 5,
    atol: float = 1e-5,
    rtol: float = 1e-4,
    output_names: Sequence[str] | None = None,
    lesson: str | None = None,
) -> None:
    """Register an exercise under `name` for `grade` (registering again replaces it).

    `lesson` names the notebook that asks for it (e.g. "06_electra"), for the list of exercises.
    """
    if not callable(reference) or not callable(make_inputs):
        raise TypeError("register needs a reference function and a make_inputs function")
    names = tuple(output_names) if output_names is not None else None
    _GRADERS[name] = Grader(reference, make_inputs, hint, trials, atol, rtol, names, lesson)


def graders() -> list[str]:
    """Names of the registered exercises."""
    return sorted(_GRADERS)


def _unknown(name: str) -> ValueError:
    """The error for an exercise name nobody registered, naming the fix."""
    if not _GRADERS:
        return ValueError(f"no exercise called {name!r}: no lesson graders were found in "
                          f"{_graders_folder()}; set MINIBERT_HOME to a clone of the course")
    return ValueError(f"no exercise called {name!r}; known exercises: {', '.join(graders())}")


def _graders_folder():
    from .course.paths import LESSONS

    return LESSONS / "exercises"


def load_lesson_graders() -> list[str]:
    """Register the exercises of every lesson: one file per lesson in `lessons/exercises/`.

    Each file (for example `lessons/exercises/06_electra.py`) holds its lesson's references,
    input generators and hints, beside the lesson's answers in `lessons/solutions/`. Returns
    the names of the files loaded; runs once, when this module is imported.
    """
    import importlib.util

    loaded = []
    for file in sorted(_graders_folder().glob("[0-9][0-9]_*.py")):
        module_name = f"minibert_graders_{file.stem}"
        if module_name in sys.modules:
            continue
        spec = importlib.util.spec_from_file_location(module_name, file)
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        spec.loader.exec_module(module)
        loaded.append(file.stem)
    return loaded


_FAILED_ATTEMPTS: dict[str, int] = {}   # exercise -> real attempts that failed, this session


def hint(name: str, *, print: bool = True) -> str:
    """The hint of exercise `name`: what `grade` shows from the second failed attempt on."""
    if name not in _GRADERS:
        raise _unknown(name)
    text = _GRADERS[name].hint or "this exercise has no hint: reread the cell above it"
    if print:
        builtins.print(f"hint for {name}: {text}")
    return text


def grade(
    name: str, student_fn: Callable, *, seed: int = 0, strict: bool = False, print: bool = True
) -> CheckResult:
    """Grade `student_fn` on the exercise registered as `name`.

    A stub not yet attempted is told what to do, not how; a first wrong attempt is told what
    differs and that `check.hint(name)` has a hint; from the second wrong attempt on, the
    hint is shown with the verdict.
    """
    if name not in _GRADERS:
        raise _unknown(name)
    grader = _GRADERS[name]
    result = compare(
        student_fn,
        grader.reference,
        grader.make_inputs,
        trials=grader.trials,
        atol=grader.atol,
        rtol=grader.rtol,
        seed=seed,
        name=name,
        hint=grader.hint,
        output_names=grader.output_names,
        strict=strict,
        print=print,
        show_hint=_FAILED_ATTEMPTS.get(name, 0) >= 1,
    )
    if not result.passed and "not attempted yet" not in result.message:
        _FAILED_ATTEMPTS[name] = _FAILED_ATTEMPTS.get(name, 0) + 1
    return result


def yours_or_library(result: CheckResult, yours: Callable, library: Callable, used_for: str, *,
                     print: bool = True) -> Callable:
    """The function a lesson's result should use: the student's once its grade passed.

    result:   what `grade` returned for the exercise (its last run).
    yours:    the student's function; library: the library's, used while the exercise is unsolved.
    used_for: what the function is about to compute, for the note ("the layer map of section 7").
    Prints which of the two is used, so a result is never silently the library's.
    """
    if not isinstance(result, CheckResult):
        raise TypeError(f"result must be what check.grade returned, got {type(result).__name__}: "
                        f"pass `result = check.grade(...)` from the exercise cell")
    mine = getattr(yours, "__name__", "function")
    if result.passed:
        chosen, text = yours, f"for {used_for}: your {mine}"
    else:
        name = f"{getattr(library, '__module__', 'minibert')}.{getattr(library, '__name__', '?')}"
        chosen, text = library, (f"for {used_for}: the library's {name}, until your {mine} "
                                 f"passes {result.name!r} (solve it, then rerun from the exercise)")
    if print:
        builtins.print(text)
    return chosen


def exercise_list() -> str:
    """The exercises, lesson by lesson, as text."""
    by_lesson: dict[str, list[str]] = {}
    for name in graders():
        by_lesson.setdefault(_GRADERS[name].lesson or "(no lesson)", []).append(name)
    lines = ["exercises, by lesson (grade a file of answers: python -m minibert.check answers.py)"]
    lines += [f"  {lesson:<22} {', '.join(names)}" for lesson, names in sorted(by_lesson.items())]
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# the command line (minibert.course.answer_files): grade files of answers


def answers_in(path: str) -> dict[str, Callable]:
    """The exercises a Python file answers (see `minibert.course.answer_files.answers_in`)."""
    from .course.answer_files import answers_in as _answers_in

    return _answers_in(path)


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m minibert.check [answers.py ...]` (see `minibert.course.answer_files.main`)."""
    from .course.answer_files import main as _main

    return _main(argv)


load_lesson_graders()


if __name__ == "__main__":
    from minibert.check import main as _main  # the package's module, not a second __main__ copy

    sys.exit(_main())
