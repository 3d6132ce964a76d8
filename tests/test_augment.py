"""Augmentation rules for distillation transfer sets."""

from __future__ import annotations

import random

import pytest
import torch

from minibert import toylang
from minibert.augment import (
    augment_dataset,
    mlm_candidates,
    pos_unigrams,
    tang_augment,
    tinybert_augment,
)
from minibert.config import BertConfig
from minibert.models.bert import BertForPreTraining
from minibert.tokenizers import WordTokenizer

LANG = toylang.ToyLang(seed=0)
SENTENCES = LANG.documents(30, 4, seed=1)[0] + [s for d in LANG.documents(30, 4, seed=1) for s in d]


def test_same_pos_replacement_keeps_the_tags_and_follows_unigram_counts():
    unigrams = pos_unigrams(SENTENCES, LANG.pos_of)
    rng = random.Random(0)
    for sentence in SENTENCES[:20]:
        new = tang_augment(sentence, LANG.pos_of, unigrams, rng, p_mask=0.0, p_pos=1.0, p_ng=0.0)
        assert LANG.tags(new) == LANG.tags(sentence)
    draws = [unigrams.sample("DET", rng) for _ in range(4000)]
    for det in ("a", "the"):
        share = draws.count(det) / len(draws)
        assert abs(share - unigrams.probability("DET", det)) < 0.03


def test_mask_and_ngram_rules():
    unigrams = pos_unigrams(SENTENCES, LANG.pos_of)
    rng = random.Random(0)
    sentence = SENTENCES[0]
    masked = tang_augment(sentence, LANG.pos_of, unigrams, rng, p_mask=1.0, p_pos=0.0, p_ng=0.0)
    assert masked == ["[MASK]"] * len(sentence)
    for _ in range(20):
        piece = tang_augment(sentence, LANG.pos_of, unigrams, rng, p_mask=0.0, p_pos=0.0,
                             p_ng=1.0)
        assert 1 <= len(piece) <= 5
        assert any(sentence[i:i + len(piece)] == piece for i in range(len(sentence)))
    with pytest.raises(ValueError, match="p_mask"):
        tang_augment(sentence, LANG.pos_of, unigrams, rng, p_mask=0.7, p_pos=0.5)


def test_augment_dataset_drops_duplicates_and_keeps_originals_first():
    sentences = [["a", "b"], ["c"]]
    out = augment_dataset(sentences, lambda s: list(s[:1]), n_iter=3)
    assert out == [["a", "b"], ["c"], ["a"]]


def test_tinybert_candidates_come_from_the_masked_lm():
    tokenizer = WordTokenizer(LANG.vocabulary)
    config = BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=16, num_layers=1,
                        num_heads=2, max_position=32)
    torch.manual_seed(0)
    mlm = BertForPreTraining(config, nsp=False)
    words = SENTENCES[0]
    positions = [i for i, w in enumerate(words) if LANG.pos_of(w) in ("NOUN", "VERB")]
    candidates = mlm_candidates(mlm, tokenizer, words, positions, top_k=4)
    assert set(candidates) == set(positions)
    assert all(len(c) == 4 and not set(c) & {"[MASK]", "[PAD]", "[CLS]"}
               for c in candidates.values())
    new = tinybert_augment(words, candidates, random.Random(0), p=1.0)
    assert all(new[i] in candidates[i] for i in positions)
    assert [w for i, w in enumerate(new) if i not in positions] == \
        [w for i, w in enumerate(words) if i not in positions]
