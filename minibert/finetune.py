"""Score a pretrained encoder on a labelled sentence task: fine-tuned, or by a linear probe.

These are the downstream measures of the lessons (and of `experiments/electra_depth.py`).
- `fine_tune_classifier`: any classifier a function builds, every weight trained for a fixed
  number of steps on random batches of the labelled set; the score is the accuracy on a
  held-out set (lessons 01, 05, 11 build a [CLS] classifier on a copy of their encoder).
- `fine_tune`: the same for an encoder snapshot (a `BertModel` state dict, or None for a random
  start) under a mean-pooled head (lesson 06). It is a plain function of plain arguments, so
  that `run_side_by_side` can run several at once.
- `linear_probe`: the encoder frozen, a logistic regression on its standardised mean-pooled
  features; the score says what the features already hold, without the encoder moving.

A labelled set is a dict of tensors: `input_ids` (N, T), `attention_mask` (N, T), `labels` (N,).
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn

from .config import BertConfig
from .data import row_batches
from .measure import accuracy
from .models.bert import BertModel
from .models.electra import ElectraForSequenceClassification
from .pretrained import mean_pool
from .train import model_loss, set_seed, train

LABELLED_KEYS = ("input_ids", "attention_mask", "labels")


def encoder_from(config: BertConfig, state: dict | None, seed: int = 0) -> BertModel:
    """A `BertModel` (no pooler) with `state` loaded, or freshly initialised from `seed`."""
    torch.manual_seed(seed)
    encoder = BertModel(config, add_pooler=False)
    if state is not None:
        encoder.load_state_dict(state)
    return encoder


def check_labelled(**sets: dict) -> None:
    """Refuse a labelled set that lacks one of its three tensors, naming it."""
    for name, labelled in sets.items():
        missing = [key for key in LABELLED_KEYS if key not in labelled]
        if missing:
            raise ValueError(f"{name} lacks {missing}: a labelled set is a dict with "
                             f"{list(LABELLED_KEYS)}")


def fine_tune_classifier(build: Callable[[], nn.Module], train_set: dict, test_set: dict, *,
                         seed: int, steps: int, lr: float, batch_size: int = 32,
                         sampler: str = "torch", pad_to: str = "set",
                         warmup: float = 0.1) -> float:
    """Seed, build a classifier, train every weight on random batches of `train_set`; return
    its accuracy on `test_set`.

    build:   a function of no arguments returning the classifier; it is called after
             `set_seed(seed)`, so fresh weights depend on the seed alone. Its forward takes
             (input_ids, attention_mask=, labels=) and returns `.loss` and `.logits` (B, C).
    sampler, pad_to: how the batches are drawn, `data.row_batches`: "torch" rows from the
             padded set (lesson 06, experiments/electra_depth.py), or "python" rows each batch
             padded to its longest sequence (lessons 01, 05, 11). They are different random
             streams: the choice changes the numbers, so each lesson states its own.
    The run: AdamW at peak `lr`, `warmup` then linear decay, `steps` steps, no progress bar.
    """
    check_labelled(train_set=train_set, test_set=test_set)
    set_seed(seed)
    model = build()
    batches = row_batches({key: train_set[key] for key in LABELLED_KEYS}, seed=seed,
                          sampler=sampler, batch_size=batch_size, pad_to=pad_to)
    train(model, batches, model_loss, steps=steps, lr=lr, warmup=warmup, seed=seed,
          progress=False)
    with torch.no_grad():
        logits = model(test_set["input_ids"],
                       attention_mask=test_set["attention_mask"]).logits      # (N, C)
    return accuracy(logits, test_set["labels"])


def fine_tune(config: BertConfig, state: dict | None, train_set: dict, test_set: dict, *,
              seed: int, steps: int, lr: float, batch_size: int = 32) -> float:
    """Fine-tune `state` with a fresh 2-class mean-pooled head on `train_set`; return accuracy
    on `test_set` (`fine_tune_classifier` with torch-sampled rows of the padded set).

    config: the encoder's config, with the dropout the fine-tune should use.
    """
    return fine_tune_classifier(
        lambda: ElectraForSequenceClassification(config, 2, encoder_from(config, state, seed)),
        train_set, test_set, seed=seed, steps=steps, lr=lr, batch_size=batch_size,
        sampler="torch", pad_to="set")


def mean_features(encoder: BertModel, labelled: dict) -> torch.Tensor:
    """The encoder's last hidden states averaged over real tokens: (N, H), without gradients."""
    encoder.eval()
    with torch.no_grad():
        out = encoder(labelled["input_ids"], attention_mask=labelled["attention_mask"])
    return mean_pool(out.last_hidden_state, labelled["attention_mask"])   # (N, T, H) -> (N, H)


def linear_probe(config: BertConfig, state: dict | None, train_set: dict, test_set: dict, *,
                 l2: float = 1e-2, max_iter: int = 200) -> float:
    """Fit a logistic regression on the frozen encoder's features; return test accuracy.

    The features are standardised with the training set's mean and std, and the fit is a full
    batch L-BFGS with an L2 penalty `l2` on the weights.
    """
    check_labelled(train_set=train_set, test_set=test_set)
    encoder = encoder_from(config, state)
    x_train, x_test = mean_features(encoder, train_set), mean_features(encoder, test_set)
    mean, std = x_train.mean(0), x_train.std(0) + 1e-6                       # (H,), (H,)
    x_train, x_test = (x_train - mean) / std, (x_test - mean) / std
    weight = torch.zeros(x_train.shape[1], 2, requires_grad=True)            # (H, 2)
    bias = torch.zeros(2, requires_grad=True)
    optimizer = torch.optim.LBFGS([weight, bias], max_iter=max_iter)

    def closure():
        optimizer.zero_grad()
        logits = x_train @ weight + bias                                      # (N, 2)
        loss = torch.nn.functional.cross_entropy(logits, train_set["labels"])
        loss = loss + l2 * weight.pow(2).sum()
        loss.backward()
        return loss
    optimizer.step(closure)
    with torch.no_grad():
        return accuracy(x_test @ weight + bias, test_set["labels"])
