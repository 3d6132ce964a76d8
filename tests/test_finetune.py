"""minibert.finetune: the fine-tune and the linear probe that score an encoder snapshot."""

from __future__ import annotations

import pytest
import torch

from minibert import finetune
from minibert.config import BertConfig


def tiny_config(**changes) -> BertConfig:
    return BertConfig.from_preset("bert-nano", vocab_size=12, max_position=8, num_layers=1,
                                  **changes)


def labelled(n, seed):
    # Label 1 when token 3 occurs in the sentence: a task one attention layer can learn.
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(4, 12, (n, 8), generator=g)                           # (n, 8)
    labels = torch.randint(0, 2, (n,), generator=g)
    ids[labels == 1, torch.randint(1, 8, (1,), generator=g)] = 3
    ids[:, 0] = 1
    return {"input_ids": ids, "attention_mask": torch.ones_like(ids), "labels": labels}


def test_fine_tuning_learns_a_learnable_task_and_repeats_itself():
    config = tiny_config(dropout=0.0, attention_dropout=0.0)
    train_set, test_set = labelled(256, 0), labelled(256, 1)
    scores = [finetune.fine_tune(config, None, train_set, test_set, seed=0, steps=120, lr=3e-3)
              for _ in range(2)]
    assert scores[0] == scores[1]
    assert scores[0] > 0.9
    untrained = finetune.fine_tune(config, None, train_set, test_set, seed=0, steps=1, lr=1e-6)
    assert untrained < 0.75


def test_fine_tuning_loads_the_state_it_is_given():
    config = tiny_config()
    state = finetune.encoder_from(config, None, seed=1).state_dict()
    assert all(torch.equal(value, finetune.encoder_from(config, state, seed=5).state_dict()[name])
               for name, value in state.items())


def test_a_labelled_set_without_labels_is_refused():
    config, train_set = tiny_config(), labelled(8, 0)
    del train_set["labels"]
    with pytest.raises(ValueError, match=r"train_set lacks \['labels'\]"):
        finetune.fine_tune(config, None, train_set, labelled(8, 1), seed=0, steps=1, lr=1e-3)


def test_the_probe_reads_what_the_features_hold_and_no_more():
    config = tiny_config()
    train_set, test_set = labelled(256, 0), labelled(256, 1)
    # Token 3 shifts the mean of a random encoder's features: a linear read-out finds it.
    found = finetune.linear_probe(config, None, train_set, test_set)
    assert found == finetune.linear_probe(config, None, train_set, test_set)
    assert found > 0.9
    # Labels that have nothing to do with the sentences: the probe stays near chance.
    noise = dict(train_set, labels=torch.randint(0, 2, (256,),
                                                 generator=torch.Generator().manual_seed(9)))
    assert finetune.linear_probe(config, None, noise, test_set) < 0.65
