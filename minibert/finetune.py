"""Score a pretrained encoder on a labelled sentence task: fine-tuned, or by a linear probe.

These are the downstream measures of lesson 06 (and of `experiments/electra_depth.py`). An
encoder snapshot is a `BertModel` state dict, or None for a random start.
- `fine_tune`: a mean-pooled classifier on top, every weight trained for a fixed number of steps
  on random batches of the labelled set; the score is the accuracy on a held-out set. It is a
  plain function of plain arguments, so that `run_side_by_side` can run several at once.
- `linear_probe`: the encoder frozen, a logistic regression on its standardised mean-pooled
  features; the score says what the features already hold, without the encoder moving.

A labelled set is a dict of tensors: `input_ids` (N, T), `attention_mask` (N, T), `labels` (N,).
"""

from __future__ import annotations

import torch

from .config import BertConfig
from .measure import accuracy
from .models.bert import BertModel
from .models.electra import ElectraForSequenceClassification
from .pretrained import mean_pool
from .train import set_seed, train

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


def fine_tune(config: BertConfig, state: dict | None, train_set: dict, test_set: dict, *,
              seed: int, steps: int, lr: float, batch_size: int = 32) -> float:
    """Fine-tune `state` with a fresh 2-class head on `train_set`; return accuracy on `test_set`.

    config: the encoder's config, with the dropout the fine-tune should use.
    """
    check_labelled(train_set=train_set, test_set=test_set)
    set_seed(seed)
    model = ElectraForSequenceClassification(config, 2, encoder_from(config, state, seed))
    n, sampler = len(train_set["labels"]), torch.Generator().manual_seed(seed)

    def next_batch(step):
        rows = torch.randint(n, (batch_size,), generator=sampler)               # (batch,)
        return {key: train_set[key][rows] for key in LABELLED_KEYS}
    train(model, next_batch, lambda m, batch: m(**batch).loss, steps=steps, lr=lr, warmup=0.1,
          seed=seed, progress=False)
    with torch.no_grad():
        logits = model(test_set["input_ids"],
                       attention_mask=test_set["attention_mask"]).logits      # (N, 2)
    return accuracy(logits, test_set["labels"])


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
