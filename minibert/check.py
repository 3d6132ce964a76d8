"""Graders for the lessons' "your turn" exercises.

`compare(student_fn, reference_fn, make_inputs)` calls both functions on the same random
inputs and says exactly what differs: an exception (with the line of your code that raised
it), the wrong type, the wrong number of outputs, shape, dtype, or the largest difference and
where it is. A wrong answer never raises (the notebook keeps running) unless `strict=True`.

Lessons register their exercises by name, so a cell only needs

    check.grade("attention", my_attention)

`make_inputs(trial, generator)` returns the positional arguments of one trial (a tuple, or a
dict of keyword arguments), drawing random numbers from `generator` so every trial is
reproducible. Trial numbers let early trials be small and easy and later ones add the hard
cases (padding masks, odd sizes).

From a shell, `python -m minibert.check` lists the exercises by lesson, and
`python -m minibert.check answers.py ...` grades files of answers (functions named after the
exercises, or a `GRADERS` dict): a class's submissions can be graded in one command. Each file
is graded in its own Python process, with no input and a time limit (`--timeout`, 60 s), so a
file that exits, loops or changes torch's global state cannot stop or skew the others. The
status is 2 if a file could not be graded, else 1 if an answer failed, else 0.
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
           "hint", "main", "register"]

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


_FAILED_ATTEMPTS: dict[str, int] = {}   # exercise -> real attempts that failed, this session


def hint(name: str, *, print: bool = True) -> str:
    """The hint of exercise `name`: what `grade` shows from the second failed attempt on."""
    if name not in _GRADERS:
        raise ValueError(f"no exercise called {name!r}; known exercises: {', '.join(graders())}")
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
        raise ValueError(f"no exercise called {name!r}; known exercises: {', '.join(graders())}")
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


# ---------------------------------------------------------------------------------------------
# exercise "attention": scaled dot-product attention with a key padding mask


def _reference_attention(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """softmax(q k^T / sqrt(d) + mask_bias) v, returning (output, probabilities).

    q, k, v: (B, heads, T, d). mask: (B, T) bool, True at real tokens; padded keys get a bias
    of -inf, so they receive probability 0.
    """
    d = q.size(-1)
    scores = q @ k.transpose(-2, -1) / math.sqrt(d)  # (B, heads, T, T)
    if mask is not None:
        bias = torch.zeros(mask.shape, dtype=scores.dtype)  # (B, T)
        bias = bias.masked_fill(~mask, float("-inf"))  # (B, T): -inf at padding
        scores = scores + bias[:, None, None, :]  # (B, heads, T, T), broadcast over queries
    probs = scores.softmax(dim=-1)  # (B, heads, T, T), each row sums to 1
    return probs @ v, probs  # (B, heads, T, d), (B, heads, T, T)


_ATTENTION_SHAPES = [(1, 1, 4, 8), (2, 2, 5, 4), (2, 2, 6, 8), (3, 4, 7, 16), (2, 3, 9, 4)]


def _attention_inputs(trial: int, generator: torch.Generator) -> tuple:
    """Trial 0: no mask argument; trial 1: mask=None; later trials: padded batches."""
    B, heads, T, d = _ATTENTION_SHAPES[trial % len(_ATTENTION_SHAPES)]
    q, k, v = (torch.randn(B, heads, T, d, generator=generator) for _ in range(3))
    if trial == 0:
        return q, k, v
    if trial == 1:
        return q, k, v, None
    lengths = torch.randint(1, T + 1, (B,), generator=generator)  # (B,) real tokens per row
    lengths[0] = max(1, T // 2)  # at least one row is padded
    mask = torch.arange(T)[None, :] < lengths[:, None]  # (B, T), True = real token
    return q, k, v, mask


register(
    "attention",
    _reference_attention,
    _attention_inputs,
    hint=(
        "scores = q @ k.transpose(-2, -1) / math.sqrt(d); give padded keys (mask False) a "
        "score of -inf before the softmax over the last dimension; return (probs @ v, probs)"
    ),
    output_names=("output", "probabilities"),
    lesson="01_bert",
)


# ---------------------------------------------------------------------------------------------
# exercises "get_stats" and "merge": the two helpers of BPE (lesson 02)


def _random_ids(generator: torch.Generator, length: int, vocab: int) -> list[int]:
    return torch.randint(0, vocab, (length,), generator=generator).tolist()


def _get_stats_inputs(trial: int, generator: torch.Generator) -> tuple:
    """Trial 0: the docstring's example; then an empty list, one id, and random lists."""
    fixed = {0: [1, 2, 3, 1, 2], 1: [], 2: [7], 3: [5, 5, 5, 5]}
    if trial in fixed:
        return (fixed[trial],)
    return (_random_ids(generator, 40, 6),)


def _merge_inputs(trial: int, generator: torch.Generator) -> tuple:
    """Trial 0: the docstring's example; trial 1: an overlapping run; then random lists."""
    if trial == 0:
        return [1, 2, 3, 1, 2], (1, 2), 4
    if trial == 1:
        return [1, 1, 1, 2, 1, 1], (1, 1), 9
    ids = _random_ids(generator, 40, 5)
    start = int(torch.randint(0, len(ids) - 1, (1,), generator=generator))
    return ids, (ids[start], ids[start + 1]), 256


def _reference_get_stats(ids):
    from .tokenizers.bpe import get_stats

    return get_stats(ids)


def _reference_merge(ids, pair, idx):
    from .tokenizers.bpe import merge

    return merge(ids, pair, idx)


register(
    "get_stats",
    _reference_get_stats,
    _get_stats_inputs,
    hint=("loop over zip(ids, ids[1:]) and count each (left, right) pair in a dict: "
          "counts[pair] = counts.get(pair, 0) + 1"),
    trials=6,
    lesson="02_tokenization",
)

register(
    "merge",
    _reference_merge,
    _merge_inputs,
    hint=("walk through ids with an index i; where ids[i], ids[i + 1] equal the pair, append idx "
          "and skip two, otherwise append ids[i] and move on by one"),
    trials=6,
    lesson="02_tokenization",
)


# ---------------------------------------------------------------------------------------------
# exercise "albert_parameters": ALBERT's parameter count per embedding size and sharing mode


def _reference_albert_parameters(vocab_size, embedding_size, hidden_size, num_layers, sharing):
    """Parameters of the word table (+ the E -> H projection when E != H) and of the layers,
    counted from a model built on the meta device (no memory), each shared tensor once."""
    from .config import BertConfig
    from .encoder import Embeddings, build_layers
    from .measure import count_parameters

    config = BertConfig(vocab_size=vocab_size, hidden_size=hidden_size, num_layers=num_layers,
                        num_heads=1, embedding_size=embedding_size, sharing=sharing)
    with torch.device("meta"):
        embeddings, layers = Embeddings(config), build_layers(config)
    table = embeddings.word.weight.numel()
    projection = count_parameters(embeddings.project) if embeddings.project is not None else 0
    return table + projection + count_parameters(layers)


def _albert_parameters_inputs(trial: int, generator: torch.Generator) -> tuple:
    """Trial 0: lesson 04's ALBERT; 1: BERT's full table; 2-5: each sharing mode, random sizes."""
    if trial == 0:
        return 500, 32, 128, 6, "all"
    if trial == 1:
        return 500, 128, 128, 6, "none"
    sharing = ("none", "all", "attention", "ffn")[(trial - 2) % 4]
    vocab = int(torch.randint(100, 3000, (1,), generator=generator))
    embedding = int(torch.randint(4, 64, (1,), generator=generator))
    hidden = 16 * int(torch.randint(5, 12, (1,), generator=generator))
    layers = int(torch.randint(2, 13, (1,), generator=generator))
    return vocab, embedding, hidden, layers, sharing


register(
    "albert_parameters",
    _reference_albert_parameters,
    _albert_parameters_inputs,
    hint=("table: V*E, plus E*H + H for the projection when E != H (V*H otherwise). One "
          "attention block: 4*(H*H + H) + 2*H; one FFN block (4H wide): 8*H*H + 5*H + 2*H. "
          "Count L copies of a block unless the sharing mode shares it, then count one"),
    trials=6,
    atol=0.5,
    rtol=0.0,
    lesson="04_albert",
)


# ---------------------------------------------------------------------------------------------
# exercise "roberta_position_ids": RoBERTa's position ids, offset by the padding index (lesson 03)


def _reference_roberta_position_ids(input_ids: torch.Tensor, pad_token_id: int,
                                    padding_idx: int) -> torch.Tensor:
    from .models.roberta import position_ids_from_input_ids

    return position_ids_from_input_ids(input_ids, pad_token_id, padding_idx)


def _roberta_position_inputs(trial: int, generator: torch.Generator) -> tuple:
    """Trial 0: the lesson's example; then padded batches with RoBERTa's pad 1 or pad 0."""
    if trial == 0:
        return torch.tensor([[0, 31, 32, 2, 1, 1]]), 1, 1
    batch, length = 2 + trial % 3, 5 + trial
    ids = torch.randint(5, 50, (batch, length), generator=generator)             # (B, T)
    lengths = torch.randint(1, length + 1, (batch,), generator=generator)        # (B,)
    pad = 1 if trial % 2 else 0
    ids[torch.arange(length)[None, :] >= lengths[:, None]] = pad                 # right padding
    return ids, pad, 1 if trial < 4 else 2


register(
    "roberta_position_ids",
    _reference_roberta_position_ids,
    _roberta_position_inputs,
    hint=("real = (input_ids != pad_token_id).long(); position_ids = torch.cumsum(real, dim=1) "
          "* real + padding_idx: real tokens count from padding_idx + 1, padding gets padding_idx"),
    trials=6,
    atol=0.0,
    rtol=0.0,
    lesson="03_roberta",
)


# ---------------------------------------------------------------------------------------------
# exercise "fastbert_uncertainty": entropy normalized by log N (lesson 10)


def _reference_fastbert_uncertainty(logits: torch.Tensor) -> torch.Tensor:
    from .models.fastbert import normalized_entropy

    return normalized_entropy(logits).to(logits.dtype)


def _fastbert_uncertainty_inputs(trial: int, generator: torch.Generator) -> tuple:
    """Trial 0: the lesson's example; then random (B, N) logits; the last has huge gaps."""
    if trial == 0:
        return (torch.tensor([[2.0, -1.0], [0.0, 0.0], [5.0, 5.0]]),)
    classes = (2, 3, 4, 10, 2)[(trial - 1) % 5]
    scale = 300.0 if trial == 5 else 1.0 + trial
    return (scale * torch.randn(4 + trial, classes, generator=generator),)


register(
    "fastbert_uncertainty",
    _reference_fastbert_uncertainty,
    _fastbert_uncertainty_inputs,
    hint=("log_p = F.log_softmax(logits, dim=-1); entropy = -(log_p.exp() * log_p).sum(-1); "
          "divide by math.log(N) with N = logits.shape[-1]. Taking log(softmax(...)) instead "
          "gives log(0) = -inf and 0 * -inf = nan for very confident logits"),
    trials=6,
    atol=1e-5,
    rtol=1e-4,
    lesson="10_fastbert",
)


# ---------------------------------------------------------------------------------------------
# exercises "temperature_softmax" and "kd_loss": Hinton's distillation (lesson 05)


def _reference_temperature_softmax(logits: torch.Tensor, temperature: float) -> torch.Tensor:
    from .distill import softmax_with_temperature

    return softmax_with_temperature(logits, temperature)


def _reference_kd_loss(student_logits: torch.Tensor, teacher_logits: torch.Tensor,
                       temperature: float) -> torch.Tensor:
    from .distill import kd_loss

    return kd_loss(student_logits, teacher_logits, temperature)


_TEMPERATURES = (1.0, 2.0, 0.5, 4.0, 8.0, 2.0)


def _temperature_softmax_inputs(trial: int, generator: torch.Generator) -> tuple:
    """Trials 0-4: random (N, C) logits at several T; trial 5: logits in the hundreds (overflow)."""
    rows, classes = 2 + trial, 3 + 2 * trial
    logits = 3 * torch.randn(rows, classes, generator=generator)                 # (N, C)
    if trial == 5:
        logits = logits * 100                                                    # exp() overflows
    return logits, _TEMPERATURES[trial]


def _kd_loss_inputs(trial: int, generator: torch.Generator) -> tuple:
    """Random (N, C) student and teacher logits at several temperatures."""
    rows, classes = 2 + trial, 3 + 2 * trial
    student = 2 * torch.randn(rows, classes, generator=generator)                # (N, C)
    teacher = 2 * torch.randn(rows, classes, generator=generator)                # (N, C)
    return student, teacher, _TEMPERATURES[trial]


register(
    "temperature_softmax",
    _reference_temperature_softmax,
    _temperature_softmax_inputs,
    hint=("scaled = logits / temperature; subtract scaled.max(dim=-1, keepdim=True).values so "
          "exp() cannot overflow; then exp and divide by the sum over the last dimension"),
    trials=6,
    lesson="05_distilbert",
)

register(
    "kd_loss",
    _reference_kd_loss,
    _kd_loss_inputs,
    hint=("p = softmax(teacher / T), log q = log_softmax(student / T); KL per row = "
          "sum_c p (log p - log q); average the rows (batchmean) and multiply by T ** 2"),
    trials=6,
    lesson="05_distilbert",
)


# ---------------------------------------------------------------------------------------------
# exercise "c2p_scores": DeBERTa's content-to-position term with a gather (lesson 07)


def _reference_c2p_scores(query: torch.Tensor, position_key: torch.Tensor,
                          relative: torch.Tensor, span: int) -> torch.Tensor:
    """Qc[i] . Kr[d(i, j)] with d(i, j) = clamp(r(i, j) + k, 0, 2k - 1), unscaled."""
    from .disentangled import relative_index

    every_position = query @ position_key.transpose(-2, -1)                  # (B, h, T_q, 2k)
    index = relative_index(relative, span)                                    # (T_q, T_k)
    batch, heads, query_length, _ = every_position.shape
    return every_position.gather(-1, index.expand(batch, heads, query_length, index.size(-1)))


def _c2p_inputs(trial: int, generator: torch.Generator) -> tuple:
    """Trial 0: the lesson's 5 tokens with k = 2 (so the clamp matters); then random sizes, k
    smaller and larger than the sequence."""
    from .disentangled import relative_positions

    if trial == 0:
        batch, heads, length, d, span = 1, 1, 5, 4, 2
    else:
        batch, heads = 1 + trial % 2, 1 + trial % 3
        length = int(torch.randint(3, 10, (1,), generator=generator))
        d = int(torch.randint(2, 6, (1,), generator=generator))
        span = (2, length + 2, 3, 1, length)[trial % 5]
    query = torch.randn(batch, heads, length, d, generator=generator)         # (B, h, T, d)
    position_key = torch.randn(heads, 2 * span, d, generator=generator)       # (h, 2k, d)
    return query, position_key, relative_positions(length, length), span


register(
    "c2p_scores",
    _reference_c2p_scores,
    _c2p_inputs,
    hint=("first every query against every table row: query @ position_key.transpose(-2, -1) "
          "is (B, h, T, 2k); the row for key j is clamp(relative + span, 0, 2 * span - 1); pick "
          "it with .gather(-1, index.expand(B, h, T, T))"),
    trials=8,
    lesson="07_deberta",
)


# ---------------------------------------------------------------------------------------------
# exercises "tinybert_layer_mapping" and "tinybert_attention_mse" (lesson 08)


def _reference_tinybert_layer_mapping(num_student_layers: int, num_teacher_layers: int):
    from .models.tinybert import layer_mapping

    return layer_mapping(num_student_layers, num_teacher_layers)


def _tinybert_layer_mapping_inputs(trial: int, generator: torch.Generator) -> tuple:
    """The paper's 4-from-12, lesson 08's 2-from-4, then other divisible depths."""
    return [(4, 12), (2, 4), (3, 6), (1, 4), (6, 12), (2, 2)][trial % 6]


register(
    "tinybert_layer_mapping",
    _reference_tinybert_layer_mapping,
    _tinybert_layer_mapping_inputs,
    hint=("return a list of M + 1 teacher hidden-state indices: [m * (N // M) for m in "
          "range(M + 1)]; index 0 is the embedding layer, so it maps to 0"),
    trials=6,
    atol=0.0,
    rtol=0.0,
    lesson="08_tinybert",
)


def _reference_tinybert_attention_mse(student_scores: torch.Tensor,
                                      teacher_scores: torch.Tensor) -> torch.Tensor:
    from .models.tinybert import attention_mse

    return attention_mse(student_scores, teacher_scores)


def _tinybert_attention_inputs(trial: int, generator: torch.Generator) -> tuple:
    """Scores of the same shape; from trial 1 on, padded keys carry the additive mask."""
    from .attention import attention_bias

    B, heads, T = [(1, 2, 4), (2, 4, 6), (3, 4, 5), (2, 2, 7), (4, 4, 8)][trial % 5]
    student = torch.randn(B, heads, T, T, generator=generator)                # (B, h, T, T)
    teacher = 2 * torch.randn(B, heads, T, T, generator=generator)            # (B, h, T, T)
    if trial > 0:
        lengths = torch.randint(1, T + 1, (B,), generator=generator)          # (B,)
        lengths[0] = max(1, T // 2)                                           # one row padded
        mask = torch.arange(T)[None, :] < lengths[:, None]                    # (B, T)
        bias = attention_bias(mask, T, T)                                     # (B, 1, 1, T)
        student, teacher = student + bias, teacher + bias
    return student, teacher


register(
    "tinybert_attention_mse",
    _reference_tinybert_attention_mse,
    _tinybert_attention_inputs,
    hint=("set every score <= -100 to 0 in BOTH tensors (torch.where(s <= -100, 0.0, s)), "
          "then return ((student - teacher) ** 2).mean() over all entries"),
    output_names=None,
    lesson="08_tinybert",
)


# ---------------------------------------------------------------------------------------------
# exercise "bilstm_summary": the BiLSTM sentence vector without padding (lesson 09)


def _reference_bilstm_summary(outputs: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    from .models.bilstm import bilstm_summary

    return bilstm_summary(outputs, lengths)


def _bilstm_summary_inputs(trial: int, generator: torch.Generator) -> tuple:
    """Trial 0: no padding; later trials: right-padded batches of different lengths."""
    B, T, H = [(2, 5, 3), (3, 6, 4), (4, 7, 2), (2, 9, 5), (5, 4, 3)][trial % 5]
    outputs = torch.randn(B, T, 2 * H, generator=generator)                   # (B, T, 2H)
    if trial == 0:
        return outputs, torch.full((B,), T)
    lengths = torch.randint(1, T + 1, (B,), generator=generator)              # (B,)
    lengths[0] = max(1, T // 2)                                               # one row padded
    outputs = outputs * (torch.arange(T)[None, :, None] < lengths[:, None, None])  # zero pads
    return outputs, lengths


register(
    "bilstm_summary",
    _reference_bilstm_summary,
    _bilstm_summary_inputs,
    hint=("H = outputs.size(-1) // 2; forward half at the last real token: "
          "outputs[torch.arange(B), lengths - 1, :H]; backward half at the first token: "
          "outputs[:, 0, H:]; concatenate them on the last dimension"),
    atol=0.0,
    rtol=0.0,
    lesson="09_distil_bilstm",
)


# ---------------------------------------------------------------------------------------------
# exercise "electra_labels": ELECTRA's discriminator input and labels (lesson 06)


def _reference_electra_labels(input_ids: torch.Tensor, selected: torch.Tensor,
                              sampled_ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    from .corruption import replace_tokens

    return replace_tokens(input_ids, selected, sampled_ids)


def _electra_labels_inputs(trial: int, generator: torch.Generator) -> tuple:
    """Trial 0: a hand-made row where one sample equals the original; then random batches
    over a small vocabulary, so that many samples reproduce the original token."""
    if trial == 0:
        input_ids = torch.tensor([[2, 10, 11, 12, 13, 3, 0]])
        selected = torch.tensor([[False, True, False, True, True, False, False]])
        sampled = torch.tensor([[2, 10, 11, 40, 13, 3, 0]])     # 10 and 13: sampled correctly
        return input_ids, selected, sampled
    batch, length, vocab = 2 + trial % 3, 6 + 2 * trial, 5 + 3 * trial
    input_ids = torch.randint(5, 5 + vocab, (batch, length), generator=generator)  # (B, T)
    selected = torch.rand(batch, length, generator=generator) < 0.3               # (B, T)
    guess_right = torch.rand(batch, length, generator=generator) < 0.4             # (B, T)
    sampled = torch.randint(5, 5 + vocab, (batch, length), generator=generator)    # (B, T)
    sampled = torch.where(guess_right, input_ids, sampled)
    return input_ids, selected, sampled


register(
    "electra_labels",
    _reference_electra_labels,
    _electra_labels_inputs,
    hint=("corrupted = torch.where(selected, sampled_ids, input_ids); the label is 1.0 where "
          "corrupted != input_ids (a sample equal to the original is real, 0.0), as a float "
          "tensor: (corrupted != input_ids).float()"),
    trials=6,
    atol=0.0,
    rtol=0.0,
    output_names=("corrupted_ids", "is_replaced"),
    lesson="06_electra",
)


# ---------------------------------------------------------------------------------------------
# exercise "trigram_starts": where StructBERT may shuffle a trigram (lesson 11)


def _reference_trigram_starts(input_ids: torch.Tensor, mlm_labels: torch.Tensor,
                              special_ids: list) -> torch.Tensor:
    from .structure import trigram_starts

    return trigram_starts(input_ids, mlm_labels, special_ids)


def _trigram_starts_inputs(trial: int, generator: torch.Generator) -> tuple:
    """Trial 0: the lesson's example; then padded, masked batches with repeated tokens."""
    if trial == 0:
        ids = torch.tensor([[2, 10, 11, 4, 12, 13, 14, 3, 0]])
        labels = torch.full_like(ids, -100)
        labels[0, 3] = 15
        return ids, labels, [0, 1, 2, 3, 4]
    batch, length = 2 + trial % 3, 6 + 3 * trial
    ids = torch.randint(5, 9 if trial >= 3 else 40, (batch, length), generator=generator)
    ids[:, 0] = 2
    ends = torch.randint(length // 2, length + 1, (batch,), generator=generator)
    ids[torch.arange(length)[None, :] >= ends[:, None]] = 0                     # padding
    chosen = (torch.rand(batch, length, generator=generator) < 0.15) & (ids > 4)
    labels = torch.where(chosen, ids, torch.full_like(ids, -100))               # MLM positions
    ids = torch.where(chosen & (torch.rand(batch, length, generator=generator) < 0.8),
                      torch.full_like(ids, 4), ids)                               # [MASK]
    return ids, labels, [0, 1, 2, 3, 4]


register(
    "trigram_starts",
    _reference_trigram_starts,
    _trigram_starts_inputs,
    hint=("free = ~torch.isin(input_ids, torch.tensor(special_ids)) & (mlm_labels == -100); a "
          "start j needs free[:, j], free[:, j+1], free[:, j+2] and not (x_j == x_j+1 == x_j+2); "
          "the last two columns are False. MLM positions kept unchanged are not free either"),
    trials=6,
    atol=0.0,
    rtol=0.0,
    lesson="11_structbert",
)


# ---------------------------------------------------------------------------------------------
# exercises "soft_mask" and "sentence_detection": Soft-Masked BERT (lesson 12)


def _reference_soft_mask(p: torch.Tensor, e: torch.Tensor, e_mask: torch.Tensor) -> torch.Tensor:
    from .models.soft_masked_bert import soft_mask

    return soft_mask(p, e, e_mask)


def _soft_mask_inputs(trial: int, generator: torch.Generator) -> tuple:
    """Trial 0: one sentence, p of exactly 0, 1 and 0.5; then random batches whose T differs
    from H (a missing unsqueeze cannot broadcast by luck)."""
    if trial == 0:
        p = torch.tensor([[0.0, 1.0, 0.5]])                                      # (1, 3)
        e = torch.randn(1, 3, 4, generator=generator)                            # (1, 3, 4)
        return p, e, torch.randn(1, 3, 4, generator=generator)
    B, T, H = [(2, 5, 8), (3, 7, 4), (1, 9, 6), (4, 6, 10), (2, 3, 16)][trial % 5]
    p = torch.rand(B, T, generator=generator)                                    # (B, T)
    e = torch.randn(B, T, H, generator=generator)                                # (B, T, H)
    e_mask = torch.randn(B, T, H, generator=generator)                           # (B, T, H)
    return p, e, e_mask


register(
    "soft_mask",
    _reference_soft_mask,
    _soft_mask_inputs,
    hint=("p is (B, T) and the embeddings (B, T, H): give p a last axis with p.unsqueeze(-1), "
          "then p * e_mask + (1 - p) * e. p is the probability of an ERROR, so p = 1 means "
          "'use [MASK]' and p = 0 means 'keep the character'"),
    trials=6,
    lesson="12_soft_masked_bert",
)


def _reference_sentence_detection(sources: list, predictions: list,
                                  targets: list) -> tuple[float, float, float, float]:
    from .spelling import sentence_metrics

    s = sentence_metrics(sources, predictions, targets)
    return s["d_acc"], s["d_p"], s["d_r"], s["d_f1"]


def _sentence_detection_inputs(trial: int, generator: torch.Generator) -> tuple:
    """Trial 0: the lesson's four sentences; then random sentences over a 6-letter alphabet
    with gold errors, missed errors, false alarms and right positions with wrong letters."""
    if trial == 0:
        return (["今天天汽好", "我们去学校", "他很高心", "你好吗"],
                ["今天天气好", "我们去学笑", "他很高星", "你好吗"],
                ["今天天气好", "我们去学校", "他很高兴", "你好吗"])
    letters = "abcdef"
    sources, predictions, targets = [], [], []
    for _ in range(6 + 3 * trial):
        n = int(torch.randint(3, 9, (1,), generator=generator))
        target = [letters[int(i)] for i in torch.randint(0, 6, (n,), generator=generator)]
        source, prediction = list(target), list(target)
        for i in range(n):
            roll = float(torch.rand(1, generator=generator))
            other = letters[(letters.index(target[i]) + 1) % 6]
            if roll < 0.15:                          # a gold error the model fixes
                source[i] = other
            elif roll < 0.25:                        # a gold error the model misses
                source[i] = prediction[i] = other
            elif roll < 0.30:                        # found, but the wrong letter
                source[i] = other
                prediction[i] = letters[(letters.index(target[i]) + 2) % 6]
            elif roll < 0.35:                        # a false alarm
                prediction[i] = other
        sources.append("".join(source))
        predictions.append("".join(prediction))
        targets.append("".join(target))
    return sources, predictions, targets


register(
    "sentence_detection",
    _reference_sentence_detection,
    _sentence_detection_inputs,
    hint=("per sentence: gold = {i: source[i] != target[i]}, flagged = {i: source[i] != "
          "prediction[i]}; a sentence is right when flagged == gold (the letters do not matter "
          "for detection). accuracy = right / all; precision = right sentences WITH gold errors "
          "/ sentences with any flag; recall = the same / sentences with gold errors; F1 = "
          "2PR / (P + R), and 0.0 when a denominator is 0"),
    trials=6,
    output_names=("accuracy", "precision", "recall", "f1"),
    lesson="12_soft_masked_bert",
)


# ---------------------------------------------------------------------------------------------
# exercise "pareto_front": the models no other model beats on cost and quality (lesson 13)


def _reference_pareto_front(cost: torch.Tensor, quality: torch.Tensor) -> torch.Tensor:
    from .compare import pareto_front

    return pareto_front(cost, quality)


def _pareto_front_inputs(trial: int, generator: torch.Generator) -> tuple:
    """Trial 0: the lesson's example; then random clouds with ties in cost, quality or both."""
    if trial == 0:
        return (torch.tensor([1.0, 2.0, 2.0, 3.0, 4.0]),      # latency (ms)
                torch.tensor([0.60, 0.80, 0.70, 0.80, 0.90]))  # accuracy
    n = 4 + 3 * trial
    cost = torch.randint(1, 6, (n,), generator=generator).double()
    quality = torch.randint(0, 6, (n,), generator=generator).double() / 5
    if trial % 2:
        cost[1], quality[1] = cost[0], quality[0]                              # an exact tie
    return cost, quality


register(
    "pareto_front",
    _reference_pareto_front,
    _pareto_front_inputs,
    hint=("model i is off the front when some j has cost[j] <= cost[i] and quality[j] >= "
          "quality[i] and is strictly better in one of the two; equal models both stay on it. "
          "Return a bool tensor of shape (N,)"),
    trials=6,
    atol=0.0,
    rtol=0.0,
    lesson="13_comparison",
)


# ---------------------------------------------------------------------------------------------
# the command line: list the exercises, or grade files of answers


def exercise_list() -> str:
    """The exercises, lesson by lesson, as text."""
    by_lesson: dict[str, list[str]] = {}
    for name in graders():
        by_lesson.setdefault(_GRADERS[name].lesson or "(no lesson)", []).append(name)
    lines = ["exercises, by lesson (grade a file of answers: python -m minibert.check answers.py)"]
    lines += [f"  {lesson:<22} {', '.join(names)}" for lesson, names in sorted(by_lesson.items())]
    return "\n".join(lines)


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


if __name__ == "__main__":
    from minibert.check import main as _main  # the package's module, not a second __main__ copy

    sys.exit(_main())
