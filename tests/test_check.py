"""The exercise graders say exactly what is wrong, and never stop a notebook unless asked."""

import math

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
    assert not result and "not attempted yet" in result.message and "hint" in result.message


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


def test_compare_and_register_work_for_any_function():
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
    assert "multiply by two" in check.grade("double", lambda x: x, print=False).message


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
