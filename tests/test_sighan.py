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
    pairs = sighan.tuning_pairs()[:command.CURVE_PAIRS]
    held = [speller.correct(x) for x, _ in pairs]
    assert sighan.score_outputs(held, pairs) == pytest.approx(record["n-gram"]["held_out"])
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


def test_constrained_decoding_only_writes_a_confusion_of_the_character_it_replaces():
    s = sighan.setup()
    allowed = sighan.candidate_matrix()
    sound, shape, _ = sighan.confusion_sets()
    assert allowed.diagonal().all()
    ch = next(c for c in s.vocab.itos[5:] if sound[c])
    row = allowed[s.vocab.stoi[ch]]
    assert {s.vocab.itos[i] for i in row.nonzero().flatten().tolist()} == \
        {ch, *[o for o in sound.union(shape)[ch] if o in s.vocab]}
    model, _ = sighan.load_corrector("BERT-finetune", sighan.FINETUNE.seeds[0])
    sources = [x for x, _ in sighan.tuning_pairs(s, 200)]
    free = sighan.proposals(model.float(), s, sources, constrained=False)
    found = sighan.proposals(model.float(), s, sources, constrained=True)
    assert any(found) and all(g > 0 for changes in found for _, _, g in changes)
    assert all(sound.union(shape).confusable(x[i], c)
               for x, changes in zip(sources, found) for i, c, _ in changes)
    assert sum(map(len, free)) >= sum(map(len, found))        # the argmax may go anywhere
    assert spelling.apply_proposals(sources, found, margin=1e9) == sources
    fewer = spelling.apply_proposals(sources, found, margin=2.0)
    more = spelling.apply_proposals(sources, found, margin=0.0)
    assert sum(a != b for x, y in zip(sources, fewer) for a, b in zip(x, y)) <= \
        sum(a != b for x, y in zip(sources, more) for a, b in zip(x, y))


@pytest.mark.parametrize("name,seed", present)
def test_each_corrector_s_constrained_outputs_replay(name, seed):
    model, record = sighan.load_corrector(name, seed)
    c = record["constrained"]
    assert c["margin"] == max(sighan.MARGINS, key=lambda m: (c["tuning_f1"][str(m)], m))
    sources = [x for x, _ in spelling.load_sighan2015()[0]]
    found = sighan.proposals(model.float(), sighan.setup(), sources)
    again = spelling.apply_proposals(sources, found, c["margin"])
    assert sum(a != b for a, b in zip(again, c["outputs"])) <= 3  # float16 weights on disk
    assert sighan.score_outputs(c["outputs"]) == pytest.approx(c["scores"], abs=1e-4)


def test_correct_sentence_gives_a_probability_per_character_and_a_correction():
    s = sighan.setup()
    soft, _ = sighan.load_corrector("Soft-Masked", sighan.FINETUNE.seeds[0])
    out = sighan.correct_sentence(soft.float(), s, "我今天很高心，天汽也好。")
    assert len(out["chars"]) == len(out["p"]) == len(out["output"]) == 12
    assert all(0 <= p <= 1 for p in out["p"])
    assert [(i, a) for i, a, _, _ in out["changes"]] == \
        [(i, a) for i, (a, b) in enumerate(zip(out["chars"], out["output"])) if a != b]
    bert, _ = sighan.load_corrector("BERT-finetune", sighan.FINETUNE.seeds[0])
    assert sighan.correct_sentence(bert.float(), s, "你好")["p"] is None
    with pytest.raises(ValueError, match="type a sentence"):
        sighan.correct_sentence(bert, s, "")
