"""Corpora, ToyLang and its tasks, NSP pairs, BERT input encoding and padding."""

import signal
import time
from collections import Counter

import pytest
import torch

from minibert.data import (
    bible_chapter_names,
    encode_pair,
    encode_single,
    load_bible,
    nsp_examples,
    pad_batch,
    pad_token_types,
    pair_batch,
    split_sentences,
)
from minibert.tokenizers import WordTokenizer
from minibert.toylang import (
    POS_TAGS,
    ToyLang,
    acceptability_task,
    continuation_task,
    polarity_task,
    topic_task,
)


@pytest.fixture(scope="module")
def lang():
    return ToyLang(seed=0)


# ------------------------------------------------------------------ the Bible


def test_bible_loads_fast_with_sensible_sentences():
    start = time.perf_counter()
    docs = load_bible()
    assert time.perf_counter() - start < 3.0
    assert len(docs) == 1189 > 1000
    names = bible_chapter_names()
    assert names[0] == "Genesis 1" and names[-1] == "Revelation 22" and len(names) == len(docs)
    assert docs[0][0] == "In the beginning God created the heavens and the earth."
    sentences = [s for doc in docs for s in doc]
    assert len(sentences) > 30_000
    assert sum(len(s.split()) for s in sentences) > 700_000
    assert all(doc for doc in docs)
    assert all(s[-1] in ".!?\"')" for doc in docs for s in doc[:-1])  # split after an ending
    text = " ".join(sentences)
    for leftover in ("`", "[", "]", "  ", "Psalm 23 ", "ALEPH"):
        assert leftover not in text


def test_bible_is_cached_and_copied():
    docs = load_bible(max_chapters=3)
    assert len(docs) == 3
    docs[0].clear()
    assert load_bible(max_chapters=1)[0][0].startswith("In the beginning")
    with pytest.raises(ValueError, match="max_chapters"):
        load_bible(max_chapters=0)


def test_split_sentences():
    text = 'He said, "Come!" They came.   Why? it is so. (Truly.) Amen.'
    assert split_sentences(text) == ['He said, "Come!"', "They came.", "Why? it is so.",
                                     "(Truly.)", "Amen."]
    assert split_sentences("  ") == []


# ------------------------------------------------------------------ ToyLang


def test_toylang_is_deterministic(lang):
    again = ToyLang(seed=0)
    assert again.vocabulary == lang.vocabulary
    assert again.confusion_sets == lang.confusion_sets
    assert lang.documents(5, 6, seed=1) == again.documents(5, 6, seed=1)
    assert lang.documents(5, 6, seed=1) != lang.documents(5, 6, seed=2)
    assert ToyLang(seed=1).vocabulary != lang.vocabulary


def test_pos_vocabularies_are_disjoint(lang):
    pools = [set(lang.words_by_pos[pos]) for pos in POS_TAGS]
    assert sum(len(p) for p in pools) == len(set().union(*pools)) == len(lang.vocabulary)
    assert {"DET", "ADJ", "NOUN", "VERB", "PREP", "ADV", "MARKER"} <= set(lang.words_by_pos)
    for pos in POS_TAGS:
        assert all(lang.pos_of(w) == pos for w in lang.words_by_pos[pos])
    with pytest.raises(ValueError, match="not a ToyLang word"):
        lang.pos_of("zebra")


def test_confusion_sets_partition_content_words(lang):
    content = [w for pos in ("NOUN", "VERB", "ADJ", "ADV") for w in lang.words_by_pos[pos]]
    grouped = [w for group in lang.confusion_sets for w in group]
    assert sorted(grouped) == sorted(content)  # every content word exactly once
    assert all(3 <= len(group) <= 5 for group in lang.confusion_sets)
    for group in lang.confusion_sets:
        assert len({lang.pos_of(w) for w in group}) == 1
        assert all(len(w) == len(group[0]) for w in group)  # look-alikes: one vowel differs
        assert lang.confusable(group[0]) == group[1:]
    assert lang.confusable("the") == []


def test_documents_follow_the_grammar_topics_and_chains(lang):
    docs = lang.generate(200, (3, 8), seed=3)
    assert {len(d.sentences) for d in docs} == set(range(3, 9))
    topical_hits = total = 0
    for doc in docs:
        for k, sentence in enumerate(doc.sentences):
            assert lang.is_grammatical(sentence), sentence
            if k > 0:  # "the N_{k-1}" opens the sentence (after an optional marker)
                previous_entity = _introduced(lang, doc.sentences[k - 1])
                assert _subject(lang, sentence) == previous_entity
            assert ("first" in sentence) <= (k == 0)
            assert ("finally" in sentence) <= (k == len(doc.sentences) - 1)
            for word in sentence:
                topic = lang.topic_of(word)
                if topic is not None:
                    topical_hits += topic == doc.topic
                    total += 1
    assert topical_hits / total > 0.95  # topical words are the document's topic's


def test_ordered_markers_count_up_and_change_nothing_else():
    unordered = ToyLang(seed=0, marker_prob=0.0).documents(50, (2, 8), seed=4)
    ordered = ToyLang(seed=0, marker_prob=1.0, ordered_markers=True).documents(50, (2, 8), seed=4)
    expected = ["first", "then", "next", "later", "afterwards", "afterwards", "afterwards"]
    for plain, doc in zip(unordered, ordered):
        markers = [sentence[0] for sentence in doc]
        assert markers == expected[:len(doc) - 1] + ["finally"]
        assert [sentence[1:] for sentence in doc] == plain  # the same text after the marker
    with pytest.raises(ValueError, match="ordered_markers"):
        ToyLang(ordered_markers="yes")


def test_small_topics_repeat_entities_instead_of_hanging():
    # With every noun from the topic (topic_prob=1.0) a 3-noun topic cannot give an 8-sentence
    # document 8 distinct entities: they repeat once all 3 are used (this used to loop forever).
    def give_up(signum, frame):
        raise TimeoutError("ToyLang.documents did not finish")
    previous = signal.signal(signal.SIGALRM, give_up)
    signal.alarm(10)
    try:
        lang = ToyLang(seed=0, nouns_per_topic=3, topic_prob=1.0)
        docs = lang.generate(20, 8, seed=0)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    for doc in docs:
        entities = [_subject(lang, sentence) for sentence in doc.sentences[1:]]   # N_0 ... N_6
        assert all(lang.topic_of(noun) == doc.topic for noun in entities)
        assert len(set(entities[:3])) == 3, "the first three entities are still all different"


def _subject(lang, sentence):
    """The noun of the opening 'the ...' noun phrase (None for a document's first sentence)."""
    start = 1 if lang.pos_of(sentence[0]) == "MARKER" else 0
    if sentence[start] != "the":
        return None
    return next(w for w in sentence[start:] if lang.pos_of(w) == "NOUN")


def _introduced(lang, sentence):
    """The noun of the last 'a ...' noun phrase: the entity the sentence introduces."""
    start = max(i for i, w in enumerate(sentence) if w == "a")
    return next(w for w in sentence[start:] if lang.pos_of(w) == "NOUN")


def test_bad_toylang_arguments_are_explained():
    with pytest.raises(ValueError, match="n_topics"):
        ToyLang(n_topics=1)
    with pytest.raises(ValueError, match="n_sentiment"):
        ToyLang(n_adjectives=10, n_sentiment=5)
    with pytest.raises(ValueError, match="sentences_per_doc"):
        ToyLang().documents(2, (5, 3), seed=0)


# ------------------------------------------------------------------ ToyLang tasks


def test_topic_task_balanced_and_decidable(lang):
    examples = topic_task(lang, 400, seed=0)
    assert Counter(label for _, label in examples) == {t: 100 for t in range(4)}
    # a keyword oracle (the majority topic of the topical words) is right almost always
    correct = 0
    for words, label in examples:
        votes = Counter(lang.topic_of(w) for w in words if lang.topic_of(w) is not None)
        correct += bool(votes) and votes.most_common(1)[0][0] == label
    assert correct / len(examples) > 0.9
    long = topic_task(lang, 8, seed=0, n_sentences=3)
    assert all(words.count(".") == 3 for words, _ in long)
    assert topic_task(lang, 50, seed=5) == topic_task(lang, 50, seed=5)


def test_acceptability_task_swaps_break_the_grammar(lang):
    examples = acceptability_task(lang, 400, seed=0)
    assert Counter(label for _, label in examples) == {0: 200, 1: 200}
    for words, label in examples:
        assert lang.is_grammatical(words) == (label == 1)
        assert words[-1] == "."


def test_continuation_task(lang):
    for negatives in ("same_doc", "other_doc"):
        examples = continuation_task(lang, 200, seed=0, negatives=negatives)
        assert Counter(label for _, label in examples) == {0: 100, 1: 100}
    for (a, b), label in continuation_task(lang, 200, seed=1):
        continues = _subject(lang, b) == _introduced(lang, a)
        assert continues == (label == 1)
    with pytest.raises(ValueError, match="negatives"):
        continuation_task(lang, 10, seed=0, negatives="random")


def test_polarity_task_needs_negation_scope(lang):
    examples = polarity_task(lang, 600, seed=0, return_kinds=True)
    assert Counter(label for _, label, _ in examples) == {0: 300, 1: 300}
    assert Counter(kind for _, _, kind in examples) == {"plain": 200, "negated": 200,
                                                        "distractor": 200}
    for words, label, kind in examples:
        sentiment = [i for i, w in enumerate(words) if lang.polarity_of(w) != 0]
        assert len(sentiment) == 1
        i = sentiment[0]
        negated = words[i - 1] == "not"
        assert negated == (kind == "negated")
        assert ((lang.polarity_of(words[i]) > 0) != negated) == (label == 1)
        assert ("not" in words) == (kind != "plain")
        assert lang.is_grammatical(words)


# ------------------------------------------------------------------ BERT inputs


def test_nsp_negatives_come_from_another_document():
    docs = [[f"d{d}s{i}" for i in range(5)] for d in range(30)]
    examples = nsp_examples(docs, seed=0)
    assert len(examples) == 30 * 4
    labels = Counter(label for _, _, label in examples)
    assert labels[0] == labels[1] == 60
    for a, b, label in examples:
        doc_a, sent_a = a[1:].split("s")
        doc_b, sent_b = b[1:].split("s")
        if label == 0:
            assert doc_a == doc_b and int(sent_b) == int(sent_a) + 1
        else:
            assert doc_a != doc_b
    assert nsp_examples(docs, seed=0) == examples
    assert len(nsp_examples(docs, seed=1, n_examples=10)) == 10
    with pytest.raises(ValueError, match="2 non-empty documents"):
        nsp_examples(docs[:1], seed=0)


def test_nsp_on_toylang_and_bible_is_half_positive(lang):
    examples = nsp_examples(lang.documents(50, 6, seed=0), seed=0)
    assert abs(sum(label for *_, label in examples) / len(examples) - 0.5) < 0.01
    examples = nsp_examples(load_bible(max_chapters=50), seed=0)
    assert abs(sum(label for *_, label in examples) / len(examples) - 0.5) < 0.01


def test_encode_pair_layout_and_truncation():
    tok = WordTokenizer(["x"])
    ids, types = encode_pair(tok, [7, 8], [9], max_len=10)
    assert ids == [tok.cls_id, 7, 8, tok.sep_id, 9, tok.sep_id]
    assert types == [0, 0, 0, 0, 1, 1]
    ids, types = encode_pair(tok, list(range(10, 20)), [5, 6, 7], max_len=9)
    assert ids == [tok.cls_id, 10, 11, 12, tok.sep_id, 5, 6, 7, tok.sep_id]  # longer cut first
    assert len(types) == 9 and types.count(1) == 4
    assert encode_single(tok, [5, 6, 7], max_len=4) == [tok.cls_id, 5, 6, tok.sep_id]
    with pytest.raises(ValueError, match="max_len"):
        encode_pair(tok, [5], [6], max_len=2)


def test_padding():
    input_ids, mask = pad_batch([[5, 6, 7], [8]], pad_id=0)
    assert input_ids.dtype == mask.dtype == torch.long
    assert input_ids.tolist() == [[5, 6, 7], [8, 0, 0]]
    assert mask.tolist() == [[1, 1, 1], [1, 0, 0]]
    assert pad_token_types([[0, 1], [0]], length=4).tolist() == [[0, 1, 0, 0], [0, 0, 0, 0]]
    with pytest.raises(ValueError, match="empty batch"):
        pad_batch([], pad_id=0)
    with pytest.raises(ValueError, match="length"):
        pad_batch([[1, 2, 3]], pad_id=0, length=2)
    tok = WordTokenizer(["x"])
    batch = pair_batch(tok, [([5, 5], [5]), ([5], [5])], max_len=8)
    assert batch["input_ids"].shape == batch["token_type_ids"].shape == (2, 6)
    assert batch["attention_mask"].tolist() == [[1] * 6, [1] * 5 + [0]]
