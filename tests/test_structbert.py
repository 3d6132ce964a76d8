"""StructBERT: trigram shuffling, the 3-way sentence pairs, and the pretraining model."""

from __future__ import annotations

from collections import Counter

import pytest
import torch

from minibert import toylang
from minibert.config import BertConfig
from minibert.masking import IGNORE_INDEX, mask_tokens
from minibert.models.structbert import StructBertForPreTraining
from minibert.structure import (
    TRIGRAM_ORDERS,
    sentence_structure_examples,
    shuffle_trigrams,
)

SPECIAL = [0, 1, 2, 3, 4]


def masked_batch(seed: int = 0, batch: int = 64, length: int = 40):
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(5, 30, (batch, length), generator=g)              # (B, T) small vocab
    ids[:, 0], ids[:, -1] = 2, 3                                          # [CLS] ... [SEP]
    ids[::3, -6:] = 0                                                     # some padding
    masked, labels = mask_tokens(ids, vocab_size=30, mask_id=4, special_ids=SPECIAL,
                                 generator=g)
    return masked, labels


def test_trigram_order_list_has_no_identity():
    assert len(TRIGRAM_ORDERS) == 5 and (0, 1, 2) not in TRIGRAM_ORDERS


def test_shuffle_never_identity_and_never_touches_masked_or_special():
    for seed in range(5):
        masked, mlm_labels = masked_batch(seed)
        g = torch.Generator().manual_seed(seed)
        shuffled, labels = shuffle_trigrams(masked, mlm_labels, special_ids=SPECIAL, generator=g)
        moved = labels != IGNORE_INDEX                                    # (B, T)
        assert not (moved & (mlm_labels != IGNORE_INDEX)).any()          # masked: untouched
        assert not (moved & torch.isin(masked, torch.tensor(SPECIAL))).any()
        assert torch.equal(shuffled[~moved], masked[~moved])             # nothing else changes
        assert torch.equal(labels[moved], masked[moved])                 # labels = the originals
        for row in range(masked.shape[0]):
            positions = moved[row].nonzero().flatten().tolist()
            assert len(positions) % 3 == 0 and positions
            for j in positions[::3]:
                trigram = list(range(j, j + 3))
                assert all(p in positions for p in trigram)              # three consecutive
                before, after = masked[row, trigram], shuffled[row, trigram]
                assert not torch.equal(before, after)                    # never the identity
                assert sorted(before.tolist()) == sorted(after.tolist())  # a permutation


def test_shuffle_fraction_sets_the_number_of_trigrams():
    ids = torch.arange(5, 105)[None]                                      # 98 trigrams, distinct
    _, labels = shuffle_trigrams(ids, None, special_ids=SPECIAL,
                                 generator=torch.Generator().manual_seed(0), fraction=0.05)
    assert int((labels != IGNORE_INDEX).sum()) == 3 * round(0.05 * 98)


def test_shuffle_takes_another_starts_function():
    from minibert.structure import trigram_starts

    masked, mlm_labels = masked_batch(1)
    calls = []

    def my_starts(input_ids, labels, special_ids):
        calls.append(tuple(input_ids.shape))
        return trigram_starts(input_ids, labels, special_ids)

    ours = shuffle_trigrams(masked, mlm_labels, special_ids=SPECIAL,
                            generator=torch.Generator().manual_seed(0))
    theirs = shuffle_trigrams(masked, mlm_labels, special_ids=SPECIAL,
                              generator=torch.Generator().manual_seed(0), starts=my_starts)
    assert calls == [tuple(masked.shape)]
    assert all(torch.equal(a, b) for a, b in zip(ours, theirs))


def test_shuffle_skips_trigrams_that_cannot_change_and_uses_every_order():
    ids = torch.tensor([[2, 7, 7, 7, 3]])                                # only "7 7 7": cannot move
    shuffled, labels = shuffle_trigrams(ids, None, special_ids=SPECIAL,
                                        generator=torch.Generator().manual_seed(0))
    assert torch.equal(shuffled, ids) and (labels == IGNORE_INDEX).all()
    g = torch.Generator().manual_seed(0)
    seen = Counter()
    for _ in range(300):
        shuffled, _ = shuffle_trigrams(torch.tensor([[2, 10, 11, 12, 3]]), None,
                                       special_ids=SPECIAL, generator=g)
        seen[tuple(shuffled[0, 1:4].tolist())] += 1
    assert len(seen) == 5 and (10, 11, 12) not in seen                   # all 5 non-identity


def test_shuffle_errors_name_the_fix():
    with pytest.raises(ValueError, match="mask_tokens"):
        shuffle_trigrams(torch.zeros(2, 5, dtype=torch.long), torch.zeros(2, 4, dtype=torch.long),
                         special_ids=SPECIAL, generator=torch.Generator())
    with pytest.raises(ValueError, match="generator"):
        shuffle_trigrams(torch.zeros(2, 5, dtype=torch.long), None, special_ids=SPECIAL,
                         generator=None)


def test_three_sentence_classes_are_balanced_and_correct():
    lang = toylang.ToyLang(seed=0)
    docs = lang.documents(200, (3, 6), seed=1)
    examples = sentence_structure_examples(docs, seed=0)
    counts = Counter(label for *_, label in examples)
    assert max(counts.values()) - min(counts.values()) <= 1 and set(counts) == {0, 1, 2}
    where = {}
    for d, doc in enumerate(docs):
        for i, sentence in enumerate(doc):
            where.setdefault(tuple(sentence), set()).add((d, i))
    for a, b, label in examples:
        a_at, b_at = where[tuple(a)], where[tuple(b)]
        if label == 0:
            assert any((d, i + 1) in b_at for d, i in a_at)              # B is A's next
        elif label == 1:
            assert any((d, i - 1) in b_at for d, i in a_at)              # B really precedes A
        else:
            assert not {d for d, _ in a_at} & {d for d, _ in b_at}       # another document
    assert sentence_structure_examples(docs, seed=0) == examples         # reproducible


def test_structbert_losses_and_heads():
    torch.manual_seed(0)
    config = BertConfig(vocab_size=30, hidden_size=32, num_layers=1, num_heads=2, max_position=40)
    masked, mlm_labels = masked_batch(0, batch=4)
    shuffled, word_labels = shuffle_trigrams(masked, mlm_labels, special_ids=SPECIAL,
                                             generator=torch.Generator().manual_seed(0))
    model = StructBertForPreTraining(config, sentence_classes=3)
    out = model(shuffled, mlm_labels=mlm_labels, word_labels=word_labels,
                sentence_labels=torch.tensor([0, 1, 2, 0]))
    assert out.sentence_logits.shape == (4, 3)
    assert torch.allclose(out.loss, out.mlm_loss + out.word_loss + out.sentence_loss)
    assert 0.0 <= out.word_accuracy <= 1.0
    assert StructBertForPreTraining(config, 2)(shuffled).sentence_logits.shape == (4, 2)
    with pytest.raises(ValueError, match="overlap"):
        model(shuffled, mlm_labels=mlm_labels, word_labels=mlm_labels)
    with pytest.raises(ValueError, match="sentence_classes"):
        StructBertForPreTraining(config, 4)


def test_trigram_starts_grader_accepts_the_library_and_rejects_ignoring_mlm():
    from minibert import check
    from minibert.structure import trigram_starts

    assert check.grade("trigram_starts", trigram_starts, print=False)

    def ignores_mlm(input_ids, mlm_labels, special_ids):   # forgets kept/random MLM positions
        return trigram_starts(input_ids, None, special_ids)

    assert not check.grade("trigram_starts", ignores_mlm, print=False)


def test_trigram_starts_vectorized_matches_a_loop():
    masked, mlm_labels = masked_batch(3, batch=8, length=20)
    from minibert.structure import trigram_starts
    starts = trigram_starts(masked, mlm_labels, SPECIAL)
    for row in range(8):
        ids = masked[row].tolist()
        free = [t not in SPECIAL and lab == IGNORE_INDEX
                for t, lab in zip(ids, mlm_labels[row].tolist())]
        expected = [j < 18 and all(free[j:j + 3]) and len(set(ids[j:j + 3])) > 1
                    for j in range(20)]
        assert starts[row].tolist() == expected
