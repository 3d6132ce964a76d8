"""RoBERTa's input formats and the static / dynamic masking batcher."""

import pytest
import torch

from minibert.formats import (
    MaskedBatches,
    collate,
    doc_sentences,
    full_sentences,
    segment_pairs,
    sentence_pairs,
)
from minibert.tokenizers import WordTokenizer

TOK = WordTokenizer([f"w{i}" for i in range(40)])
CLS, SEP = TOK.cls_id, TOK.sep_id


def docs():
    """Three documents of sentences of 4 ids; sentence j of document d holds ids 10d + j."""
    return [[[5 + 10 * d + j] * 4 for j in range(n)] for d, n in enumerate((5, 3, 4))]


def test_full_sentences_cross_documents_with_a_separator():
    examples = full_sentences(docs(), TOK, max_len=20)
    assert all(len(e) <= 20 and e.input_ids[0] == CLS and e.input_ids[-1] == SEP
               for e in examples)
    body = [t for e in examples for t in e.input_ids[1:-1]]
    assert body.count(SEP) == 2                       # one between each two documents
    assert all(e.nsp_label is None and e.token_type_ids is None for e in examples)
    assert any(len({(t - 5) // 10 for t in e.input_ids if t >= 5}) > 1
               for e in examples)                 # packs across documents


def test_doc_sentences_never_cross_a_document():
    examples = doc_sentences(docs(), TOK, max_len=14)
    for e in examples:
        assert len({(t - 5) // 10 for t in e.input_ids if t >= 5}) == 1
        assert e.input_ids.count(SEP) == 1
    assert min(len(e) for e in examples) < 14         # the ends of documents are short


def test_pairs_have_segments_and_balanced_nsp_labels():
    many = [[[5 + (d % 30)] * 3 for _ in range(6)] for d in range(40)]
    for build in (segment_pairs, sentence_pairs):
        examples = build(many, TOK, max_len=20, seed=0)
        labels = [e.nsp_label for e in examples]
        assert 0.3 < sum(labels) / len(labels) < 0.7
        for e in examples:
            assert len(e) <= 20 and e.input_ids.count(SEP) == 2
            assert e.token_type_ids[0] == 0 and e.token_type_ids[-1] == 1
    assert max(map(len, sentence_pairs(many, TOK, 20, 0))) == 9   # [CLS] 3 [SEP] 3 [SEP]


def test_collate_pads():
    batch = collate(sentence_pairs(docs(), TOK, 20, seed=0)[:3], TOK.pad_id)
    assert set(batch) == {"input_ids", "attention_mask", "token_type_ids", "nsp_labels"}
    assert batch["input_ids"].shape == batch["attention_mask"].shape


def masks_seen(batches, steps):
    """For each example index, the set of masks (label patterns) it was fed with."""
    seen = {}
    for step in range(steps):
        _, indices = batches.locate(step)
        labels = batches(step)["mlm_labels"]
        for row, i in enumerate(indices):
            seen.setdefault(i, set()).add(tuple(labels[row].tolist()))
    return seen


def test_static_repeats_its_masks_and_dynamic_does_not():
    examples = full_sentences([[list(range(5, 40))] * 4], TOK, max_len=30)
    steps = 8 * len(examples)   # 8 epochs, batch 1
    static1 = masks_seen(MaskedBatches(examples, TOK, batch_size=1, masking="static"), steps)
    static4 = masks_seen(MaskedBatches(examples, TOK, batch_size=1, masking="static",
                                       copies=4), steps)
    dynamic = masks_seen(MaskedBatches(examples, TOK, batch_size=1), steps)
    assert all(len(s) == 1 for s in static1.values())
    assert all(len(s) == 4 for s in static4.values())
    assert all(len(s) == 8 for s in dynamic.values())


def test_tokens_per_batch_keeps_tokens_about_equal():
    examples = doc_sentences(docs() * 10, TOK, max_len=14)
    batches = MaskedBatches(examples, TOK, tokens_per_batch=60)
    for step in range(10):
        tokens = int(batches(step)["attention_mask"].sum())
        assert 60 <= tokens < 60 + 14 or step == len(batches._epochs[0]) - 1


def test_same_seed_same_batches():
    examples = full_sentences(docs(), TOK, max_len=14)
    a = MaskedBatches(examples, TOK, batch_size=2, seed=3)
    b = MaskedBatches(examples, TOK, batch_size=2, seed=3)
    for step in range(5):
        assert torch.equal(a(step)["input_ids"], b(step)["input_ids"])


def test_bad_arguments_name_the_fix():
    examples = full_sentences(docs(), TOK, max_len=14)
    with pytest.raises(ValueError, match="exactly one"):
        MaskedBatches(examples, TOK)
    with pytest.raises(ValueError, match="dynamic"):
        MaskedBatches(examples, TOK, batch_size=2, masking="sometimes")
    with pytest.raises(ValueError, match="documents is empty"):
        full_sentences([], TOK, 14)
