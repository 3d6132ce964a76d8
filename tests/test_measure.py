"""Parameter counts (shared weights once), latency and accuracy."""

import pytest
import torch
from torch import nn

from minibert.measure import (
    LatencyResult,
    accuracy,
    count_parameters,
    latency,
    masked_token_accuracy,
    parameter_table,
)


class Shared(nn.Module):
    """One layer applied twice (ALBERT-style) and a decoder tied to the embedding."""

    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(10, 4)  # 40
        layer = nn.Linear(4, 4)  # 20
        self.layers = nn.ModuleList([layer, layer])
        self.decoder = nn.Linear(4, 10)  # weight tied, own bias: 10
        self.decoder.weight = self.embed.weight


def test_shared_tensors_are_counted_once():
    model = Shared()
    assert count_parameters(model) == 40 + 20 + 10
    unshared = nn.ModuleList([nn.Linear(4, 4), nn.Linear(4, 4)])
    assert count_parameters(unshared) == 40


def test_trainable_only():
    model = nn.Sequential(nn.Linear(3, 2), nn.Linear(2, 1))
    model[0].requires_grad_(False)
    assert count_parameters(model) == 8 + 3
    assert count_parameters(model, trainable_only=True) == 3
    with pytest.raises(TypeError, match="Module"):
        count_parameters([torch.zeros(3)])


def test_parameter_table_adds_up_and_marks_shared_weights():
    model = Shared()
    model.scale = nn.Parameter(torch.ones(1))
    table = parameter_table(model)
    assert table.as_dict() == {"(own)": 1, "embed": 40, "layers": 20, "decoder": 10}
    assert table.total == count_parameters(model)
    assert ("decoder", 10, 40) in table.rows  # the tied weight is shown as shared
    text = str(table)
    assert "embed" in text and "total" in text and "71" in text


def test_latency_times_under_inference_mode_and_restores_state():
    model = nn.Linear(8, 8).train()
    threads = torch.get_num_threads()
    seen = []

    def fn(x):
        seen.append(torch.is_inference_mode_enabled())
        return model(x)

    result = latency(fn, torch.randn(2, 8), repeats=5, warmup=2, threads=1)
    assert isinstance(result, LatencyResult) and len(result.times) == 5
    assert all(seen) and len(seen) == 7
    assert 0 < result.median == float(result) and result.iqr >= 0
    assert "ms" in str(result)
    assert torch.get_num_threads() == threads
    latency(model, torch.randn(2, 8), repeats=2, warmup=0)
    assert model.training  # mode restored


def test_accuracy_ignores_padding_labels():
    logits = torch.tensor([[[2.0, 0.0], [0.0, 1.0], [5.0, 0.0]]])  # (1, 3, 2)
    labels = torch.tensor([[0, 0, -100]])  # (1, 3)
    assert accuracy(logits, labels) == 0.5
    assert accuracy(torch.tensor([1.5, -2.0, 0.3]), torch.tensor([1, 0, 0])) == pytest.approx(2 / 3)
    with pytest.raises(ValueError, match="no labels"):
        accuracy(logits, torch.full((1, 3), -100))
    with pytest.raises(ValueError, match="match"):
        accuracy(logits, torch.zeros(3, dtype=torch.long))


def test_masked_token_accuracy_scores_only_masked_positions():
    logits = torch.zeros(1, 4, 5)
    logits[0, torch.arange(4), torch.tensor([1, 2, 3, 4])] = 1.0  # predicts 1, 2, 3, 4
    labels = torch.tensor([[1, 0, 3, 0]])
    masked = torch.tensor([[True, True, False, False]])
    assert masked_token_accuracy(logits, labels, masked) == 0.5
    assert masked_token_accuracy(logits, torch.tensor([[1, -100, 3, -100]])) == 1.0
    with pytest.raises(ValueError, match="bool"):
        masked_token_accuracy(logits, labels, masked.long())


def test_latency_side_by_side_times_each_function_in_interleaved_rounds():
    import time as clock

    from minibert.measure import latency_side_by_side
    calls = []
    functions = {"fast": lambda: calls.append("fast"),
                 "slow": lambda: (calls.append("slow"), clock.sleep(0.002))}
    medians = latency_side_by_side(functions, rounds=6, warmup=1)
    assert calls.count("fast") == calls.count("slow") == 7
    assert calls[:4] == ["fast", "slow", "slow", "fast"]          # the order rotates
    for name in functions:
        assert len(medians[name]) == 2
    assert min(medians["slow"]) > max(medians["fast"])
    with pytest.raises(ValueError, match="rounds >= 2"):
        latency_side_by_side(functions, rounds=1)
