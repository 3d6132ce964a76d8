"""Side-by-side training: two processes give the same models as one process, bit for bit."""

from __future__ import annotations

import pytest
import torch

from minibert import data, toylang
from minibert.course import sentence_pairs
from minibert.course.side_by_side import run_side_by_side
from minibert.models import albert_config
from minibert.tokenizers import WordTokenizer


@pytest.fixture(scope="module")
def setup():
    lang = toylang.ToyLang(seed=0)
    tokenizer = WordTokenizer(lang.vocabulary)
    docs = lang.documents(40, (4, 6), seed=1)
    pairs = {task: [(tokenizer.encode_words(a), tokenizer.encode_words(b), label)
                    for a, b, label in make(docs, seed=3)]
             for task, make in (("NSP", data.nsp_examples), ("SOP", data.sop_examples))}
    config = albert_config("bert-nano", vocab_size=tokenizer.vocab_size, max_position=64,
                           embedding_size=16, dropout=0.0, attention_dropout=0.0)
    return tokenizer, pairs, config


def jobs_for(setup):
    tokenizer, pairs, config = setup
    return [dict(config=config, examples=pairs[task], tokenizer=tokenizer, steps=6, seed=seed,
                 batch_size=8, lr=2e-3, progress=False)
            for task, seed in (("NSP", 0), ("SOP", 1))]


@pytest.fixture(scope="module")
def trained(setup):
    # The same two jobs run here, one after the other, and in two processes (spawned once).
    torch.set_num_threads(1)
    jobs = jobs_for(setup)
    here = run_side_by_side(sentence_pairs.pretrain, jobs, processes=1)
    there = run_side_by_side(sentence_pairs.pretrain, jobs, processes=2)
    return here, there


def test_two_processes_equal_one_process(trained):
    here, there = trained
    for one, two in zip(here, there):
        assert not two.training                       # returned in eval mode, as pretrain does
        first, second = one.state_dict(), two.state_dict()
        assert first.keys() == second.keys()
        assert all(torch.equal(first[name], second[name]) for name in first)
    # the two jobs are different runs, so the test would notice results swapped or repeated
    assert not torch.equal(here[0].sop.classifier.weight, here[1].sop.classifier.weight)


def test_a_shared_layer_stays_one_object_after_the_trip(trained):
    layers = trained[1][0].albert.encoder.layers
    assert all(layer.attention is layers[0].attention for layer in layers[1:])
    assert all(layer.feed_forward is layers[0].feed_forward for layer in layers[1:])


def test_a_function_from_a_notebook_gets_a_clear_error(setup):
    def local_pretrain(**job):
        return sentence_pairs.pretrain(**job)

    with pytest.raises(TypeError, match="import it, or pass processes=1"):
        run_side_by_side(local_pretrain, jobs_for(setup))
    assert len(run_side_by_side(local_pretrain, jobs_for(setup), processes=1)) == 2


def test_an_argument_that_cannot_be_sent_is_named(setup):
    jobs = jobs_for(setup)
    jobs[1]["tokenizer"] = lambda words: words
    with pytest.raises(TypeError, match=r"job 1 .*\['tokenizer'\]"):
        run_side_by_side(sentence_pairs.pretrain, jobs)


@pytest.mark.parametrize("bad", [dict(processes=0), dict(threads=0), dict(processes=True)])
def test_bad_settings_are_refused(setup, bad):
    with pytest.raises(ValueError, match="positive int"):
        run_side_by_side(sentence_pairs.pretrain, jobs_for(setup), **bad)


def test_make_batch_keys_and_labels(setup):
    tokenizer, pairs, _ = setup
    plain = sentence_pairs.make_batch(pairs["SOP"][:4], None, tokenizer)
    assert set(plain) == {"input_ids", "token_type_ids", "attention_mask", "sop_labels"}
    assert plain["sop_labels"].tolist() == [label for *_, label in pairs["SOP"][:4]]
    masking = torch.Generator().manual_seed(0)
    masked = sentence_pairs.make_batch(pairs["SOP"][:4], masking, tokenizer)
    assert masked["input_ids"].shape == masked["mlm_labels"].shape == plain["input_ids"].shape
    with pytest.raises(ValueError, match="at least one"):
        sentence_pairs.make_batch([], None, tokenizer)
