"""The training loop: it learns, accumulation is exact, the schedule is BERT's, runs repeat."""

import random

import numpy as np
import pytest
import torch
from torch import nn

from minibert.train import History, lr_schedule, parameter_groups, set_seed, train


def mse(model, batch):
    x, y = batch
    return ((model(x) - y) ** 2).mean()


def small_mlp(seed=0):
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.LayerNorm(8), nn.Linear(8, 1))


def regression_data(n=16, seed=1):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 4, generator=g)  # (n, 4)
    y = x @ torch.tensor([[1.0], [-2.0], [0.5], [3.0]]) + 0.1  # (n, 1)
    return x, y


def test_set_seed_seeds_everything_and_returns_a_generator():
    g = set_seed(7)
    a = (random.random(), np.random.rand(), torch.rand(1).item(), torch.rand(1, generator=g))
    g = set_seed(7)
    b = (random.random(), np.random.rand(), torch.rand(1).item(), torch.rand(1, generator=g))
    assert a == b
    with pytest.raises(TypeError, match="int"):
        set_seed("7")


def test_loss_falls_on_a_toy_regression():
    torch.manual_seed(0)
    model = nn.Linear(4, 1)
    x, y = regression_data(64)
    history = train(model, [(x, y)], mse, steps=150, lr=0.1, warmup=10, progress=False)
    assert len(history.loss) == 150 and history.step[-1] == 150
    assert history.loss[-1] < 0.01 * history.loss[0]
    assert not model.training  # left in eval mode
    assert history.seconds > 0


@pytest.mark.parametrize("make_optimizer", [None, "sgd"])
def test_accumulating_two_halves_equals_one_full_batch(make_optimizer):
    x, y = regression_data(8)
    model_a, model_b = small_mlp(), small_mlp()
    kwargs = dict(steps=1, lr=0.1, warmup=0, progress=False)

    def optimizer(model):
        return None if make_optimizer is None else torch.optim.SGD(model.parameters(), lr=0.1)

    train(model_a, [(x[:4], y[:4]), (x[4:], y[4:])], mse, accumulation=2,
          optimizer=optimizer(model_a), **kwargs)
    train(model_b, [(x, y)], mse, accumulation=1, optimizer=optimizer(model_b), **kwargs)
    moved = False
    for (name, a), b, start in zip(model_a.named_parameters(), model_b.parameters(),
                                   small_mlp().parameters()):
        assert torch.allclose(a, b, atol=1e-6, rtol=0), name
        moved |= not torch.equal(a, start)
    assert moved


def test_accumulation_counts_optimizer_steps_and_calls_batches_per_micro_batch():
    seen = []

    def batches(i):
        seen.append(i)
        return regression_data(4, seed=i)

    history = train(nn.Linear(4, 1), batches, mse, steps=3, accumulation=2, progress=False)
    assert seen == [0, 1, 2, 3, 4, 5]
    assert history.step == [1, 2, 3]


def test_schedule_warms_up_then_decays_linearly():
    values = [lr_schedule(s, 10, 2, 1.0) for s in range(10)]
    assert values[:3] == [0.5, 1.0, 1.0]
    assert values[-1] == pytest.approx(0.125)
    assert all(a > b for a, b in zip(values[2:], values[3:]))  # decreasing after warmup
    assert lr_schedule(0, 5, 0, 2e-3) == 2e-3  # no warmup: start at the peak
    assert min(values) > 0
    with pytest.raises(ValueError, match="warmup"):
        lr_schedule(0, 10, 11, 1.0)
    with pytest.raises(ValueError, match="step"):
        lr_schedule(10, 10, 2, 1.0)


def test_train_follows_the_schedule_with_fractional_warmup():
    history = train(nn.Linear(4, 1), [regression_data()], mse, steps=20, lr=0.01, warmup=0.25,
                    progress=False)
    expected = [lr_schedule(s, 20, 5, 0.01) for s in range(20)]
    assert history.lr == pytest.approx(expected)


def test_two_runs_with_the_same_seed_give_identical_parameters():
    def run():
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(4, 16), nn.Dropout(0.3), nn.ReLU(), nn.Linear(16, 1))

        def batches(i):  # drawn from the global generator, which train() seeds
            x = torch.randn(8, 4)
            return x, x.sum(dim=1, keepdim=True)

        train(model, batches, mse, steps=15, seed=3, progress=False)
        return [p.detach().clone() for p in model.parameters()]

    for a, b in zip(run(), run()):
        assert torch.equal(a, b)


def test_no_weight_decay_on_biases_and_layernorm():
    model = small_mlp()
    decayed, not_decayed = parameter_groups(model, 0.01)
    assert {id(p) for p in decayed["params"]} == {id(model[0].weight), id(model[3].weight)}
    assert id(model[2].weight) in {id(p) for p in not_decayed["params"]}
    assert not_decayed["weight_decay"] == 0.0


def test_dict_losses_log_metrics_and_eval_runs_on_schedule():
    def loss_fn(model, batch):
        loss = mse(model, batch)
        return {"loss": loss, "half": loss.detach() / 2}

    evals = []

    def eval_fn(model):
        assert not model.training and not torch.is_grad_enabled()
        evals.append(1)
        return {"accuracy": 0.5}

    model = nn.Linear(4, 1)
    history = train(model, iter([regression_data()]), loss_fn, steps=10, log_every=4,
                    eval_fn=eval_fn, eval_every=5, progress=False)
    assert history.step == [4, 8, 10]
    assert history.metrics["half"] == pytest.approx([v / 2 for v in history.loss])
    assert "grad_norm" in history.metrics
    assert history.eval_step == [5, 10] and history.eval["accuracy"] == [0.5, 0.5]
    assert history.last("accuracy") == 0.5 and history.last() == history.loss[-1]


def test_history_smoothing_is_a_trailing_mean():
    history = History(step=[1, 2, 3, 4], loss=[4.0, 2.0, 0.0, 2.0])
    assert history.smoothed("loss", 2) == [4.0, 3.0, 1.0, 1.0]
    assert history.smoothed("loss", 1) == history.loss
    with pytest.raises(KeyError, match="known names"):
        history.last("nope")


def test_bad_input_is_explained():
    model = nn.Linear(4, 1)
    with pytest.raises(ValueError, match="scalar"):
        train(model, [regression_data()], lambda m, b: m(b[0]), steps=1, progress=False)
    with pytest.raises(ValueError, match="'loss'"):
        train(model, [regression_data()], lambda m, b: {"l": mse(m, b)}, steps=1, progress=False)
    with pytest.raises(ValueError, match="empty"):
        train(model, [], mse, steps=1, progress=False)
    with pytest.raises(TypeError, match="iterable"):
        train(model, 3, mse, steps=1, progress=False)
    with pytest.raises(ValueError, match="steps"):
        train(model, [regression_data()], mse, steps=0, progress=False)
    with pytest.raises(ValueError, match="fraction"):
        train(model, [regression_data()], mse, steps=5, warmup=1.5, progress=False)



def indexed_batches(x, y, size=4):
    """Batch i depends on i alone, so a resumed run sees the same batches."""
    def next_batch(i):
        rows = torch.randint(len(y), (size,), generator=torch.Generator().manual_seed(i))
        return x[rows], y[rows]
    return next_batch


def test_a_nan_batch_stops_the_run_and_leaves_the_model_as_it_was():
    x, y = regression_data()
    model = small_mlp()
    bad = x.clone()
    bad[0, 0] = float("nan")
    batches = [(x, y), (x, y), (bad, y)]
    with pytest.raises(FloatingPointError, match="step 3 of 5.*loss is nan.*before this step"):
        before = {}

        def remember(m, batch):
            if batch[0] is bad:
                before.update({k: v.clone() for k, v in m.state_dict().items()})
            return mse(m, batch)
        train(model, batches, remember, steps=5, progress=False)
    after = model.state_dict()
    assert all(torch.equal(before[k], after[k]) for k in before)
    assert all(torch.isfinite(v).all() for v in after.values())


def test_nonfinite_steps_can_be_skipped_and_counted():
    x, y = regression_data()
    bad = x.clone()
    bad[0, 0] = float("inf")
    model = small_mlp()
    history = train(model, [(x, y), (bad, y)], mse, steps=6, progress=False, nonfinite="skip")
    assert history.skipped == 3
    assert all(torch.isfinite(p).all() for p in model.parameters())


@pytest.mark.parametrize("setting, message", [
    (dict(lr=float("inf")), "lr must be a positive finite"),
    (dict(lr=float("nan")), "lr must be a positive finite"),
    (dict(grad_clip=float("nan")), "grad_clip must be a positive finite"),
    (dict(weight_decay=-1.0), "weight_decay must be a finite number >= 0"),
    (dict(nonfinite="ignore"), "nonfinite must be 'raise' or 'skip'"),
    (dict(checkpoint_every=2), "checkpoint_every needs checkpoint"),
])
def test_bad_settings_are_refused_before_any_step(setting, message):
    x, y = regression_data()
    model = small_mlp()
    state = {k: v.clone() for k, v in model.state_dict().items()}
    with pytest.raises(ValueError, match=message):
        train(model, [(x, y)], mse, steps=2, progress=False, **setting)
    assert all(torch.equal(state[k], v) for k, v in model.state_dict().items())


def test_a_resumed_run_repeats_the_uninterrupted_one(tmp_path):
    x, y = regression_data()
    whole = small_mlp()
    reference = train(whole, indexed_batches(x, y), mse, steps=12, progress=False)

    checkpoint = tmp_path / "run.ckpt"
    interrupted = small_mlp()
    calls = []

    def stop_at_step_7(m, batch):
        calls.append(1)
        if len(calls) == 8:
            raise KeyboardInterrupt                     # killed during step 8
        return mse(m, batch)
    with pytest.raises(KeyboardInterrupt):
        train(interrupted, indexed_batches(x, y), stop_at_step_7, steps=12, progress=False,
              checkpoint=checkpoint, checkpoint_every=5)
    resumed = small_mlp(seed=3)                          # other weights: the checkpoint wins
    history = train(resumed, indexed_batches(x, y), mse, steps=12, progress=False,
                    checkpoint=checkpoint, checkpoint_every=5)
    assert history.loss == pytest.approx(reference.loss, rel=1e-6)
    assert history.step == reference.step
    for a, b in zip(whole.parameters(), resumed.parameters()):
        assert torch.allclose(a, b, atol=1e-7)
    with pytest.raises(ValueError, match="steps=12, this run has steps=20"):
        train(small_mlp(), indexed_batches(x, y), mse, steps=20, progress=False,
              checkpoint=checkpoint)
    checkpoint.write_text("not a checkpoint")
    with pytest.raises(ValueError, match="not a training checkpoint.*delete it"):
        train(small_mlp(), indexed_batches(x, y), mse, steps=12, progress=False,
              checkpoint=checkpoint)
