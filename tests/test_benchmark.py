"""Lesson 13's benchmark: the tasks, the shared fine-tuning recipe, and its determinism."""

import pytest
import torch

from minibert.course import benchmark


@pytest.mark.parametrize("name", benchmark.TASKS)
def test_every_task_has_its_labels_and_a_held_out_set(name):
    t = benchmark.load_task(name, 32)
    assert len(t.train["labels"]) == 32 and len(t.test["labels"]) == benchmark.TEST_SIZE
    labels = t.test["labels"]
    kept = labels[labels != -100]
    assert set(kept.tolist()) == set(range(t.classes))       # every class occurs
    assert t.train["input_ids"].shape == t.train["attention_mask"].shape
    if t.per_token:                                           # tags: none on [CLS] or padding
        assert (labels[:, 0] == -100).all()
        assert (labels[t.test["attention_mask"] == 0] == -100).all()
    assert not torch.equal(benchmark.load_task(name, 256).train["input_ids"][:32, :5],
                           t.test["input_ids"][:32, :5])      # held out: other examples


def test_bad_input_names_the_fix():
    with pytest.raises(KeyError, match="the tasks are topic, word order"):
        benchmark.load_task("sentiment", 32)
    with pytest.raises(ValueError, match="labels must be at least 2"):
        benchmark.load_task("topic", 1)


def test_a_fine_tune_is_the_same_whether_the_checkpoint_was_loaded_before_or_not():
    benchmark._loaded.cache_clear()
    cold = benchmark.fine_tuned("DistilBERT", "word order", 32, seed=1, steps=3)
    warm = benchmark.fine_tuned("DistilBERT", "word order", 32, seed=1, steps=3)
    for a, b in zip(cold.state_dict().values(), warm.state_dict().values()):
        assert torch.equal(a, b)


def test_pretrained_bert_fine_tunes_word_order_above_chance_and_scratch_does_not():
    # Mechanics and the lesson's main effect in one seed: fails if the zoo's BERT were
    # replaced by random weights, or the head or the labels were scrambled.
    bert = benchmark.score("BERT", "word order", 256, seed=0)
    scratch = benchmark.score("scratch", "word order", 256, seed=0)
    assert bert > 0.75 and scratch < 0.6
