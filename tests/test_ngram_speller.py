"""The n-gram baseline of lesson 12: a normalized character LM, and a speller that replaces a
character only when the LM prefers a confusion of it by the margin."""

import math

import pytest

from minibert.ngram_speller import EOS, CharNgramLM, NgramSpeller
from minibert.spelling import ConfusionSet

TEXT = ["我今天很高兴", "他很高兴", "高兴的事", "今天天气很好", "我很好"] * 5
CONFUSION = ConfusionSet({"心": ("新", "兴"), "兴": ("心", "新"), "新": ("心", "兴"),
                          "好": ("号",), "号": ("好",)})


def test_the_probabilities_of_the_next_character_sum_to_one():
    lm = CharNgramLM.train(TEXT)
    chars = [ch for ch in lm.unigrams if ch != "\x02"]
    for context in [("我", "今"), ("很", "高"), ("\x02", "\x02"), ("天", "兴")]:
        assert sum(lm.prob(*context, c) for c in chars) == pytest.approx(1.0)


def test_a_seen_sentence_is_more_likely_than_its_misspelling():
    lm = CharNgramLM.train(TEXT)
    assert lm.logprob("我很高兴") > lm.logprob("我很高心")
    assert math.isfinite(lm.logprob("从未见过"))          # unseen characters: small, not 0
    assert EOS not in "".join(TEXT)


def test_the_speller_fixes_a_confusable_error_and_leaves_right_text_alone():
    speller = NgramSpeller(CharNgramLM.train(TEXT), CONFUSION, margin=1.0)
    assert speller.correct("我今天很高心") == "我今天很高兴"
    assert speller.correct("我今天很高兴") == "我今天很高兴"
    assert speller.correct("天气很号") == "天气很好"
    assert speller.correct("我今天很高心", margin=1e9) == "我今天很高心"     # never sure enough


def test_choose_margin_picks_the_best_f1_on_the_given_pairs():
    speller = NgramSpeller(CharNgramLM.train(TEXT), CONFUSION)
    pairs = [("我今天很高心", "我今天很高兴"), ("天气很号", "天气很好"), ("我很好", "我很好")]
    margin = speller.choose_margin(pairs, margins=(0.0, 1e9))
    assert margin == 0.0 and speller.margin == 0.0


def test_training_on_nothing_is_refused():
    with pytest.raises(ValueError, match="at least one sentence"):
        CharNgramLM.train([])
