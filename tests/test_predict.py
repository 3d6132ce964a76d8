"""Predict, then run: the sentence a lesson prints beside the measurement."""

import json
import re
from pathlib import Path

import pytest

from minibert.course.predict import reveal


def test_a_number_is_compared_with_the_measurement():
    assert "close" in reveal(0.62, 0.65, "accuracy", print=False)
    far = reveal(0.9, 0.65, "accuracy", print=False)
    assert "you predicted 0.9" in far and "0.25 lower than you thought" in far
    assert "higher" in reveal(1.0, 3.0, "speed-up", print=False)


def test_a_choice_is_compared_with_the_outcome():
    choices = ("static", "dynamic", "the same")
    assert "as you predicted" in reveal("dynamic", "dynamic", "winner", choices=choices,
                                        print=False)
    assert "not 'static'" in reveal("static", "dynamic", "winner", choices=choices, print=False)
    with pytest.raises(ValueError, match="must be one of"):
        reveal("neither", "dynamic", "winner", choices=choices, print=False)


def test_a_missing_prediction_still_shows_the_measurement(capsys):
    reveal(None, 0.65, "accuracy")
    out = capsys.readouterr().out
    assert "measured 0.65" in out and "No prediction written" in out


def test_a_prediction_of_the_wrong_kind_names_the_fix():
    with pytest.raises(ValueError, match="must be a number"):
        reveal("0.6", 0.65, "accuracy", print=False)
    with pytest.raises(ValueError, match="must be a number"):
        reveal(True, 0.65, "accuracy", print=False)


LESSONS = sorted((Path(__file__).resolve().parent.parent / "lessons").glob("[0-9][0-9]_*.ipynb"))
NOT_YET: set[str] = set()             # lessons that do not ask yet (none)


@pytest.mark.parametrize("notebook", LESSONS, ids=lambda p: p.stem)
def test_every_lesson_asks_for_a_prediction_before_it_measures(notebook):
    if notebook.stem in NOT_YET:
        pytest.xfail(f"{notebook.stem} does not ask for a prediction yet")
    cells = json.loads(notebook.read_text())["cells"]
    code = ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]
    asked = [i for i, s in enumerate(code) if re.search(r"^my_prediction = ", s, re.M)]
    revealed = [i for i, s in enumerate(code) if "predict.reveal(my_prediction" in s]
    assert asked, f"{notebook.name} never asks for my_prediction"
    assert revealed and min(revealed) > min(asked), \
        f"{notebook.name} must reveal the prediction after asking for it"
    question = "".join(cells[[i for i, c in enumerate(cells) if c["cell_type"] == "code"][asked[0]]
                             - 1]["source"])
    assert "Predict" in question, "the cell before my_prediction says what to predict"
