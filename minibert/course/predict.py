"""Predict, then run: a lesson asks for a guess before an experiment and compares it after.

A guess written down before the numbers arrive is what turns an experiment into a question.
Each lesson has one: a cell where the student writes `my_prediction = ...` (a number, or one of
a few named choices), the experiment, then

    predict.reveal(my_prediction, measured, "the masked-token accuracy after pretraining")

which prints the guess beside the measurement. Nothing is graded: a guess that was off is the
interesting case, and the lesson's discussion says why the number came out as it did.
"""

from __future__ import annotations

import builtins
import math
from collections.abc import Sequence

__all__ = ["reveal"]


def reveal(prediction, measured, what: str, *, choices: Sequence[str] | None = None,
           print: bool = True) -> str:
    """Say how a prediction compares with what the experiment measured; return the sentence.

    prediction: the student's guess (None when they skipped it); a number, or one of `choices`.
    measured:   the experiment's number, or the choice it came out as.
    """
    if choices is not None and measured not in choices:
        raise ValueError(f"the measurement {measured!r} is not one of the choices {list(choices)}")
    if prediction is None or prediction is ...:
        text = (f"{what}: the run measured {_show(measured)}. (No prediction written: next time "
                f"guess first, in `my_prediction`, then run the experiment.)")
    elif choices is not None:
        if prediction not in choices:
            raise ValueError(f"my_prediction must be one of {list(choices)}, got {prediction!r}")
        verdict = "as you predicted" if prediction == measured else f"not {prediction!r}"
        text = f"{what}: you predicted {prediction!r}; the run says {measured!r} ({verdict})."
    else:
        if isinstance(prediction, bool) or not isinstance(prediction, (int, float)) \
                or not math.isfinite(prediction):
            raise ValueError(f"my_prediction must be a number here, got {prediction!r}")
        gap = measured - prediction
        scale = max(abs(measured), abs(prediction), 1e-12)
        if abs(gap) <= 0.1 * scale:
            verdict = "close"
        else:
            verdict = f"{abs(gap):.3g} {'higher' if gap > 0 else 'lower'} than you thought"
        text = (f"{what}: you predicted {_show(prediction)}; the run measured {_show(measured)} "
                f"({verdict}).")
    if print:
        builtins.print(text)
    return text


def _show(value) -> str:
    if isinstance(value, float):
        return f"{value:.3g}"
    return repr(value) if isinstance(value, str) else str(value)

