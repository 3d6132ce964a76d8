"""The exercise graders say exactly what is wrong, and never stop a notebook unless asked."""

import math
from pathlib import Path

import pytest
import torch

from minibert import check


def attention(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))  # (B, H, T, T)
    if mask is not None:
        scores = scores.masked_fill(~mask[:, None, None, :], float("-inf"))
    probs = scores.softmax(dim=-1)
    return probs @ v, probs


def attention_over_d(q, k, v, mask=None):  # the classic slip: 1/d instead of 1/sqrt(d)
    scores = q @ k.transpose(-2, -1) / q.size(-1)
    if mask is not None:
        scores = scores.masked_fill(~mask[:, None, None, :], -1e9)
    probs = scores.softmax(dim=-1)
    return probs @ v, probs


def test_a_correct_implementation_passes(capsys):
    result = check.grade("attention", attention)
    assert result.passed and bool(result)
    assert "correct on 5 random inputs" in capsys.readouterr().out


def test_the_fast_path_passes_too():
    def fast(q, k, v, mask=None):
        bias = None if mask is None else mask[:, None, None, :]
        out = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=bias)
        return out, attention(q, k, v, mask)[1]

    assert check.grade("attention", fast, print=False)


def test_scaling_by_d_fails_with_the_max_difference(capsys):
    result = check.grade("attention", attention_over_d)
    assert not result
    printed = capsys.readouterr().out
    assert printed.strip() == result.message
    assert "max abs difference" in result.message and "trial 0" in result.message
    assert "yours" in result.message and "expected" in result.message
    assert result.trial == 0 and len(result.inputs) == 3


def test_ignoring_the_mask_fails_on_a_masked_trial():
    def no_mask(q, k, v, mask=None):
        return attention(q, k, v)

    result = check.grade("attention", no_mask, print=False)
    assert not result and result.trial >= 2 and "mask: bool" in result.message


def test_wrong_shape_and_wrong_arity_are_reported():
    def transposed(q, k, v, mask=None):
        out, probs = attention(q, k, v, mask)
        return out.transpose(1, 2), probs

    result = check.grade("attention", transposed, print=False)
    assert "has shape (1, 4, 1, 8), expected (1, 1, 4, 8)" in result.message

    def output_only(q, k, v, mask=None):
        return attention(q, k, v, mask)[0]

    result = check.grade("attention", output_only, print=False)
    assert "a single tensor, expected a tuple of 2 (output, probabilities)" in result.message


def test_not_implemented_means_not_attempted():
    def todo(q, k, v, mask=None):
        raise NotImplementedError

    result = check.grade("attention", todo, print=False)
    assert not result and "not attempted yet" in result.message
    # a stub is told what to do, not how: its stored output gives nothing of the solution away
    assert "hint" not in result.message and check._GRADERS["attention"].hint not in result.message


def test_a_crash_names_the_error_and_the_line():
    def crashes(q, k, v, mask=None):
        return q @ v.transpose(0, 1) @ torch.zeros(3, 3)

    result = check.grade("attention", crashes, print=False)
    assert "raised RuntimeError" in result.message and "in crashes" in result.message


def test_in_place_changes_to_inputs_are_caught():
    def scales_q_in_place(q, k, v, mask=None):
        q.mul_(2.0).div_(2.0)  # written to, but the values are unchanged
        return attention(q, k, v, mask)

    def really_changes(q, k, v, mask=None):
        q.div_(math.sqrt(q.size(-1)))
        scores = q @ k.transpose(-2, -1)
        probs = scores.softmax(-1) if mask is None else scores.masked_fill(
            ~mask[:, None, None, :], float("-inf")).softmax(-1)
        return probs @ v, probs

    assert check.grade("attention", scales_q_in_place, print=False)  # values unchanged: fine
    result = check.grade("attention", really_changes, print=False)
    assert "changed its input `q` in place" in result.message


def test_strict_raises_and_passing_the_result_instead_of_the_function_is_explained():
    with pytest.raises(AssertionError, match="max abs difference"):
        check.grade("attention", attention_over_d, strict=True)
    q = torch.ones(1, 1, 2, 2)
    result = check.grade("attention", attention(q, q, q), print=False)
    assert "Pass the function itself" in result.message
    with pytest.raises(ValueError, match="known exercises"):
        check.grade("atention", attention)


def test_compare_and_register_work_for_any_function(monkeypatch):
    monkeypatch.setattr(check, "_GRADERS", dict(check._GRADERS))  # "double" stays in this test
    monkeypatch.setattr(check, "_FAILED_ATTEMPTS", {})
    def make_inputs(trial, generator):
        return (torch.randn(trial + 2, 3, generator=generator),)

    result = check.compare(lambda x: x.relu(), torch.relu, make_inputs, print=False, name="relu")
    assert result and "relu" in str(result) and "exact match" in result.message
    result = check.compare(lambda x: x.clamp(min=0.01), torch.relu, make_inputs, print=False)
    assert not result and "dtype" not in result.message and "values outside" in result.message
    result = check.compare(lambda x: x.double().relu(), torch.relu, make_inputs, print=False)
    assert "dtype torch.float64, expected torch.float32" in result.message

    check.register("double", lambda x: 2 * x, make_inputs, hint="multiply by two")
    assert "double" in check.graders()
    assert check.grade("double", lambda x: x + x, print=False)
    first = check.grade("double", lambda x: x, print=False).message
    assert "multiply by two" not in first and 'check.hint(\'double\')' in first
    assert "multiply by two" in check.grade("double", lambda x: x, print=False).message
    assert check.hint("double", print=False) == "multiply by two"


def test_hints_come_after_a_real_attempt_fails(monkeypatch):
    monkeypatch.setattr(check, "_GRADERS", dict(check._GRADERS))
    monkeypatch.setattr(check, "_FAILED_ATTEMPTS", {})

    def make_inputs(trial, generator):
        return (torch.randn(trial + 2, 3, generator=generator),)

    def todo(x):
        raise NotImplementedError

    check.register("triple", lambda x: 3 * x, make_inputs, hint="multiply by three")
    for _ in range(3):   # unattempted stubs, however often graded, never earn the hint
        assert "multiply by three" not in check.grade("triple", todo, print=False).message
    wrong = [check.grade("triple", lambda x: x, print=False).message for _ in range(2)]
    assert "multiply by three" not in wrong[0] and "multiply by three" in wrong[1]
    with pytest.raises(ValueError, match="no exercise called"):
        check.hint("no such exercise")


def test_results_show_once_in_a_notebook(capsys):
    result = check.grade("attention", attention)  # printed here
    result._ipython_display_()  # outside IPython there is no cell number: shown again
    assert capsys.readouterr().out.count("correct on") == 2
    assert repr(result) == "CheckResult(passed=True, name='attention')"


def test_bpe_graders_accept_the_reference_and_name_a_wrong_count():
    from minibert.tokenizers.bpe import get_stats, merge

    assert check.grade("get_stats", get_stats, print=False).passed
    assert check.grade("merge", merge, print=False).passed

    def counts_once(ids):
        return {pair: 1 for pair in zip(ids, ids[1:])}

    result = check.grade("get_stats", counts_once, print=False)
    assert not result.passed and "[(1, 2)] is 1, expected 2" in result.message

    def merge_without_skipping(ids, pair, idx):
        return [idx if (a, b) == pair else a for a, b in zip(ids, ids[1:] + [None])]

    result = check.grade("merge", merge_without_skipping, print=False)
    assert not result.passed and "expected a list of 3" in result.message


# ---------------------------------------------------------------------------------------------
# python -m minibert.check: list the exercises, grade files of answers


def test_every_exercise_names_its_lesson_and_the_list_shows_them_all():
    text = check.exercise_list()
    for name in check.graders():
        lesson = check._GRADERS[name].lesson
        assert lesson is not None, f"exercise {name!r} was registered without its lesson"
        line = next(line for line in text.splitlines() if line.strip().startswith(lesson))
        assert name in line


def test_grading_a_file_of_answers_by_function_name(tmp_path, capsys):
    answers = tmp_path / "answers.py"
    answers.write_text(
        "import torch\n\n"
        "def electra_labels(input_ids, selected, sampled_ids):\n"
        "    corrupted = torch.where(selected, sampled_ids, input_ids)\n"
        "    return corrupted, (corrupted != input_ids).float()\n\n"
        "def helper():\n"
        "    return 0\n")
    assert set(check.answers_in(str(answers))) == {"electra_labels"}   # helper is not graded
    assert check.main([str(answers)]) == 0
    out = capsys.readouterr().out
    assert "✓ electra_labels" in out and "1 of 1 passed" in out


def test_a_wrong_answer_fails_with_the_graders_message_and_status_1(tmp_path, capsys):
    answers = tmp_path / "answers.py"
    answers.write_text(
        "import torch\n\n"
        "def wrong(input_ids, selected, sampled_ids):   # every selected position 'replaced'\n"
        "    return torch.where(selected, sampled_ids, input_ids), selected.float()\n\n"
        "GRADERS = {'electra_labels': wrong}\n")
    assert check.main([str(answers)]) == 1
    out = capsys.readouterr().out
    assert "✗ electra_labels" in out and "wrong values" in out and "0 of 1 passed" in out
    assert "result.inputs" not in out   # a notebook-only aside, meaningless in a shell


@pytest.mark.parametrize("content, says", [
    ("x = 1\n", "answers no exercise; name a function after one"),
    ("GRADERS = {'electra': print}\n", "no exercise called 'electra'; known exercises:"),
    ("GRADERS = [print]\n", "GRADERS must be a dict"),
    ("def electra_labels(a, b, c):\n    return a\n\nmissing + 1\n",
     "running it raised NameError at line 4"),
])
def test_a_file_that_cannot_be_graded_says_why_and_gives_status_2(tmp_path, capsys, content, says):
    answers = tmp_path / "answers.py"
    answers.write_text(content)
    with pytest.raises(ValueError, match="answers.py: "):
        check.answers_in(str(answers))
    assert check.main([str(answers)]) == 2
    assert says in capsys.readouterr().err


def test_a_missing_file_is_named(tmp_path, capsys):
    assert check.main([str(tmp_path / "nowhere.py")]) == 2
    assert "no such Python file" in capsys.readouterr().err


def test_without_files_the_command_lists_the_exercises(capsys):
    assert check.main([]) == 0
    assert "06_electra" in capsys.readouterr().out


def test_the_command_runs_as_a_module_with_its_exit_status(tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    solution = Path(__file__).resolve().parent.parent / "lessons" / "solutions" / "06_electra.py"
    wrong = tmp_path / "wrong.py"
    wrong.write_text("def electra_labels(input_ids, selected, sampled_ids):\n"
                     "    return input_ids, selected.float()\n")
    runs = [subprocess.run([sys.executable, "-m", "minibert.check", str(path)],
                           capture_output=True, text=True) for path in (solution, wrong)]
    assert [run.returncode for run in runs] == [0, 1]
    assert "1 of 1 passed" in runs[0].stdout and "0 of 1 passed" in runs[1].stdout
    assert runs[0].stderr == "" and runs[1].stderr == ""   # no warning about running a module twice


def test_each_file_is_graded_alone_and_the_status_says_the_worst(tmp_path, capsys):
    """A file that exits, loops, waits for input or changes torch's default dtype cannot stop,
    hang or skew the grading of the others; every file is reported."""
    files = {
        "failing.py": "def get_stats(ids):\n    return {}\n",
        "exiting.py": "import sys\ndef get_stats(ids):\n    return {}\nsys.exit(0)\n",
        "looping.py": "junk = []\nwhile True:\n    junk = [bytearray(10**6)] * 50\n",
        "asking.py": "name = input()\n",
        "dtype.py": "import torch\ntorch.set_default_dtype(torch.float64)\n"
                    "def get_stats(ids):\n    return {}\n",
        "passing.py": (Path(__file__).resolve().parent.parent
                       / "lessons" / "solutions" / "06_electra.py").read_text(),
    }
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    paths = [str(tmp_path / name) for name in files]
    assert check.main(["--timeout", "8", *paths]) == 2
    out, err = capsys.readouterr()
    assert "exiting.py: it called sys.exit()" in err
    assert "looping.py: it did not finish within 8 s" in err and "--timeout" in err
    assert "asking.py: running it raised EOFError at line 1" in err and "input()" in err
    assert out.count("0 of 1 passed") == 2            # failing.py, dtype.py
    assert "passing.py\n  ✓ electra_labels" in out    # graded after the dtype change, still right
    assert check.main(["--timeout", "20", *paths[:1], *paths[-1:]]) == 1   # a failure, no 2
    assert check.main(["--timeout", "20", *paths[-1:]]) == 0


def test_a_timeout_that_is_not_positive_is_refused(tmp_path):
    with pytest.raises(SystemExit):
        check.main(["--timeout", "0", str(tmp_path / "a.py")])


def test_each_lesson_keeps_its_exercises_in_its_own_grader_file():
    from minibert.course.paths import LESSONS

    files = {path.stem for path in (LESSONS / "exercises").glob("[0-9][0-9]_*.py")}
    lessons = {path.stem for path in LESSONS.glob("[0-9][0-9]_*.ipynb")}
    assert files <= lessons, f"grader files without a lesson: {sorted(files - lessons)}"
    for name in check.graders():
        file = Path(check._GRADERS[name].reference.__code__.co_filename)
        assert file.parent.name == "exercises" and file.stem == check._GRADERS[name].lesson, (
            f"exercise {name!r} is registered outside lessons/exercises/"
            f"{check._GRADERS[name].lesson}.py")


def test_without_the_lessons_an_unknown_exercise_says_where_to_point(monkeypatch):
    monkeypatch.setattr(check, "_GRADERS", {})
    with pytest.raises(ValueError, match="MINIBERT_HOME"):
        check.grade("attention", lambda q, k, v, mask=None: (q, q))


def test_yours_or_library_uses_the_students_function_only_once_it_passes(capsys):
    def library_softmax(logits, temperature):
        return torch.softmax(logits / temperature, dim=-1)

    def my_softmax(logits, temperature):
        raise NotImplementedError

    failed = check.grade("temperature_softmax", my_softmax, print=False)
    chosen = check.yours_or_library(failed, my_softmax, library_softmax, "the figure")
    assert chosen is library_softmax
    out = capsys.readouterr().out
    assert "library's" in out and "library_softmax" in out and "temperature_softmax" in out

    def my_good_softmax(logits, temperature):
        return torch.softmax(logits / temperature, dim=-1)

    passed = check.grade("temperature_softmax", my_good_softmax, print=False)
    assert check.yours_or_library(passed, my_good_softmax, library_softmax, "the figure") \
        is my_good_softmax
    assert "for the figure: your my_good_softmax" in capsys.readouterr().out
    with pytest.raises(TypeError, match="check.grade"):
        check.yours_or_library(True, my_good_softmax, library_softmax, "the figure")
