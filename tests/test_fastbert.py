"""FastBERT: uncertainty, early exit, self-distillation and the cost model."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from torch.utils.flop_counter import FlopCounterMode

from minibert import check
from minibert.config import BertConfig
from minibert.course import widgets
from minibert.models.fastbert import (
    BranchClassifier,
    FastBertForSequenceClassification,
    branch_flops,
    exit_cost,
    freeze_for_distillation,
    layer_flops,
    normalized_entropy,
    self_distillation_loss,
    simulate_early_exit,
)


def tiny_model(seed: int = 0, num_classes: int = 3) -> FastBertForSequenceClassification:
    torch.manual_seed(seed)
    config = BertConfig(vocab_size=50, hidden_size=32, num_layers=4, num_heads=2,
                        max_position=16, dropout=0.0, attention_dropout=0.0)
    return FastBertForSequenceClassification(config, num_classes, branch_width=16).eval()


def padded_batch(seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(5, 50, (6, 10), generator=g)                  # (B, T)
    lengths = torch.tensor([10, 7, 3, 10, 5, 8])
    mask = (torch.arange(10)[None, :] < lengths[:, None]).long()      # (B, T)
    return ids.masked_fill(mask == 0, 0), mask


def test_uncertainty_is_in_unit_interval_with_known_extremes():
    logits = torch.randn(200, 5) * torch.logspace(-2, 3, 200)[:, None]
    u = normalized_entropy(logits)
    assert u.shape == (200,)
    assert (u >= 0).all() and (u <= 1).all()
    assert normalized_entropy(torch.zeros(3, 4)).allclose(torch.ones(3, dtype=torch.float64))
    assert normalized_entropy(torch.tensor([[30.0, -30.0]])).item() < 1e-20
    assert normalized_entropy(torch.tensor([[30.0, -30.0]])).item() > 0   # never exactly 0
    # the same logits over N classes, in N-agnostic units: binary 0.5/0.5 and 4-way uniform -> 1
    assert math.isclose(normalized_entropy(torch.tensor([1.0, 1.0])).item(), 1.0)


def test_uncertainty_rejects_one_class():
    with pytest.raises(ValueError, match="at least 2 classes"):
        normalized_entropy(torch.zeros(3, 1))


def test_threshold_zero_reproduces_the_full_model():
    model = tiny_model()
    ids, mask = padded_batch()
    full = model(ids, attention_mask=mask)[-1]                        # (B, N) the teacher
    out = model.adaptive_forward(ids, 0.0, mask)
    assert torch.equal(out.exit_layer, torch.full((6,), 4))
    assert torch.allclose(out.logits, full, atol=1e-6)
    for row in range(6):                                              # and at batch size 1
        n = int(mask[row].sum())
        single = model.adaptive_forward(ids[row:row + 1, :n], 0.0)
        assert single.exit_layer.item() == 4
        assert torch.allclose(single.logits[0], full[row], atol=1e-5)


def test_threshold_one_exits_everything_at_layer_one():
    model = tiny_model()
    ids, mask = padded_batch()
    out = model.adaptive_forward(ids, 1.0, mask)
    assert torch.equal(out.exit_layer, torch.ones(6, dtype=torch.long))
    assert torch.allclose(out.logits, model(ids, attention_mask=mask)[0], atol=1e-6)


@pytest.mark.parametrize("speed", [0.0, 0.9, 0.95, 0.99, 0.995, 1.0])
def test_simulated_exit_agrees_with_the_layer_by_layer_loop(speed):
    model = tiny_model(1)
    ids, mask = padded_batch(1)
    real = model.adaptive_forward(ids, speed, mask)
    simulated = simulate_early_exit(model(ids, attention_mask=mask), speed)
    assert torch.equal(real.exit_layer, simulated.exit_layer)
    assert torch.allclose(real.logits, simulated.logits, atol=1e-6)
    assert torch.allclose(real.uncertainty, simulated.uncertainty, atol=1e-6)


def test_exit_layers_fall_as_speed_rises():
    model = tiny_model(2)
    ids, mask = padded_batch(2)
    logits = model(ids, attention_mask=mask)
    layers = [simulate_early_exit(logits, s).exit_layer.double().mean().item()
              for s in torch.linspace(0, 1, 21).tolist()]
    assert all(a >= b for a, b in zip(layers, layers[1:]))


def test_adaptive_forward_rejects_bad_speed():
    model = tiny_model()
    with pytest.raises(ValueError, match="speed must be in"):
        model.adaptive_forward(torch.tensor([[2, 7, 3]]), 1.5)


def test_self_distillation_trains_only_the_students():
    model = tiny_model()
    ids, mask = padded_batch()
    freeze_for_distillation(model)
    model.train()
    loss = self_distillation_loss(model, {"input_ids": ids, "attention_mask": mask})
    loss.backward()
    students = {id(p) for b in model.branches[:-1] for p in b.parameters()}
    for param in model.parameters():
        assert param.requires_grad == (id(param) in students)
        if id(param) not in students:
            assert param.grad is None
    # the loss is sum_i KL(p_teacher || p_student_i), averaged over the batch
    model.eval()
    with torch.no_grad():
        logits = model(ids, attention_mask=mask)                                     # (L, B, N)
        teacher = F.softmax(logits[-1], -1)
        expected = sum((teacher * (teacher.log() - F.log_softmax(s, -1))).sum(-1).mean()
                       for s in logits[:-1])
        got = self_distillation_loss(model, {"input_ids": ids, "attention_mask": mask})
    assert torch.allclose(got, expected, atol=1e-6)


def test_flop_formulas_match_torch_flop_counter():
    model = tiny_model()
    config = model.config
    ids = torch.randint(5, 50, (1, 12))
    x = model.bert.encoder.embeddings(ids)                            # (1, T, H)
    with FlopCounterMode(display=False) as counter:
        model.bert.encoder.layers[0](x, None, False)
    assert counter.get_total_flops() == 2 * layer_flops(config, 12)   # 2 FLOPs per multiply-add
    branch = BranchClassifier(config, 3, width=16).eval()
    with FlopCounterMode(display=False) as counter:
        branch(x, None)
    # the counter does not see the [CLS] query's scores and weighted sum inside
    # nn.MultiheadAttention (2 T w multiply-adds); every projection it counts agrees
    assert counter.get_total_flops() == 2 * (branch_flops(config, 12, 16, 3) - 2 * 12 * 16)


def test_exit_cost_counts_layers_and_classifiers():
    cost = exit_cost(torch.tensor([1, 4]), layer=100.0, branch=10.0)
    assert cost.tolist() == [1.1, 4.4]


def test_early_exit_widget_runs_headless():
    import matplotlib
    matplotlib.use("Agg")
    model = tiny_model()
    ids, mask = padded_batch()
    logits = model(ids, attention_mask=mask).detach()
    labels = torch.zeros(6, dtype=torch.long)
    result = widgets.show_early_exit(logits, labels, 0.0, layer_cost=10.0, branch_cost=1.0)
    assert math.isclose(result["cost"], 4.4) and math.isclose(result["speedup"], 4.1 / 4.4)
    slider = widgets.early_exit_slider(logits, labels, layer_cost=10.0, branch_cost=1.0)
    assert slider.children


def test_uncertainty_grader_accepts_the_library_and_rejects_naive_code():
    assert check.grade("fastbert_uncertainty", lambda z: normalized_entropy(z).float(),
                       print=False)

    def naive(logits):   # log of softmax: nan once a probability underflows to 0
        p = logits.softmax(-1)
        return -(p * p.log()).sum(-1) / math.log(logits.shape[-1])

    assert not check.grade("fastbert_uncertainty", naive, print=False)
