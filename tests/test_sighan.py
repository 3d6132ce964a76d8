"""Lesson 12's committed SIGHAN-2015 files were made by this code under its recipe: each
record matches the recipe, the first training losses measured again equal the recorded ones,
and the scores measured again from the file equal the recorded scores."""

import json
import random

import pytest
import torch

from experiments import sighan as command
from minibert import spelling
from minibert.course import sighan


def deterministic(function, *args, **kwargs):
    was = torch.are_deterministic_algorithms_enabled()
    torch.use_deterministic_algorithms(True)                   # as the runs were made
    try:
        return function(*args, **kwargs)
    finally:
        torch.use_deterministic_algorithms(was)


def test_the_pretrained_file_was_made_by_this_recipe():
    model, record = sighan.load_pretrained()                   # refuses a stale record
    assert record["steps"] == sighan.RECIPE.steps and record["stored_dtype"] == "float16"
    assert record["final_loss"] < record["first_loss"] - 2.0   # it learned something
    assert command.check_loss(model.float(), sighan.setup()) == pytest.approx(
        record["check_loss"], rel=2e-2)
    assert deterministic(command.first_losses) == pytest.approx(record["first_losses"],
                                                                rel=1e-4)


CORRECTORS = [(name, seed) for seed in sighan.FINETUNE.seeds for name in sighan.MODELS]
present = [(n, k) for n, k in CORRECTORS if sighan.corrector_path(n, k).exists()]


@pytest.mark.parametrize("name,seed", present)
def test_each_committed_corrector_was_made_by_this_recipe(name, seed):
    model, record = sighan.load_corrector(name, seed)
    assert record["finetune"]["steps"] == sighan.FINETUNE.steps
    scores, outputs = sighan.evaluate(model.float(), sighan.setup())
    changed = sum(a != b for a, b in zip(outputs, record["outputs"]))
    assert changed <= 3                                         # float16 weights on disk
    assert scores["c_f1"] == pytest.approx(record["c_f1"], abs=0.01)
    replayed = deterministic(command.finetune_first_losses, name, seed)
    assert replayed == pytest.approx(record["first_losses"], rel=1e-4)


def test_every_seed_and_model_has_its_file():
    missing = [sighan.corrector_path(n, k).name for n, k in CORRECTORS if (n, k) not in present]
    assert not missing, f"missing {missing}: make sighan ONLY=finetune"


def test_the_baselines_record_is_what_the_baselines_give():
    record = json.loads(sighan.baselines_path().read_text(encoding="utf-8"))
    assert record["pretrain"] == sighan.expected_record()
    sources = [s for s, _ in spelling.load_sighan2015()[0]]
    speller = sighan.ngram_speller()
    assert speller.margin == record["n-gram"]["margin"]
    again = [speller.correct(x) for x in sources[:150]]
    assert again == record["n-gram"]["outputs"][:150]
    assert sighan.score_outputs(record["n-gram"]["outputs"]) == pytest.approx(
        record["n-gram"]["scores"])
    assert record["copy"]["outputs"] == sources and record["copy"]["scores"]["c_f1"] == 0.0


def test_synthetic_errors_follow_sighan_2015s_statistics():
    sound, shape, stats = sighan.confusion_sets()
    pairs, _ = spelling.load_sighan2015()
    assert stats.clean == pytest.approx(334 / 697)             # measured on the test set
    assert sum(stats.counts.values()) == pytest.approx(1.0)
    rng = random.Random(0)
    sentences = sighan.setup().held_out[:3000]
    made = [sighan.with_errors(x, rng, sound, shape, stats) for x in sentences]
    assert all(len(a) == len(b) for a, b in zip(made, sentences))
    clean = sum(a == b for a, b in zip(made, sentences)) / len(made)
    assert clean == pytest.approx(stats.clean, abs=0.03)
    wrong = [(a, b) for m, x in zip(made, sentences) for a, b in zip(m, x) if a != b]
    assert all(sound.confusable(b, a) or shape.confusable(b, a) for a, b in wrong)
    per_sentence = [sum(a != b for a, b in zip(m, x)) for m, x in zip(made, sentences)]
    ones = sum(k == 1 for k in per_sentence) / sum(k > 0 for k in per_sentence)
    assert ones == pytest.approx(stats.counts[1], abs=0.04)


def test_fine_tuning_batches_are_a_pure_function_of_seed_and_index():
    s = sighan.setup()
    a, b = sighan.finetune_batches(s, 0), sighan.finetune_batches(s, 0)
    assert all(torch.equal(a(7)[k], b(7)[k]) for k in ("input_ids", "target_ids"))
    assert (a(7)["input_ids"] != a(7)["target_ids"]).any()          # it has errors to fix
    with pytest.raises(ValueError, match="unknown model"):
        sighan.build_corrector("GPT")
