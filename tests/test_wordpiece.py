"""WordPiece: BERT's pre-tokenizer, greedy longest-match with ##, [UNK] on unseen characters
(where byte-level BPE has none), training, BERT vocab.txt files, save/load, parity with HF."""

import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from minibert.data import load_bible
from minibert.tokenizers import SPECIAL_TOKENS, ByteLevelBPE, WordPiece
from minibert.tokenizers.wordpiece import basic_tokenize

FAST = settings(max_examples=200, deadline=None)
HUG = ["hug " * 10 + "pug " * 5 + "pun " * 12 + "bun " * 4 + "hugs " * 5]  # HF course's corpus
UNSEEN = {  # text whose characters the Bible (plain ASCII) never shows
    "accents": "Café naïve résumé, déjà vu à Zürich",
    "cjk": "我爱自然语言处理",
    "emoji": "I ❤ BERT 😀 🎉 👍",
}


def bible_chapters(n):
    return [" ".join(doc) for doc in load_bible(max_chapters=n)]


@pytest.fixture(scope="module")
def tok():
    return WordPiece.train(bible_chapters(150), vocab_size=2000)


@pytest.fixture(scope="module")
def cased():
    return WordPiece.train(bible_chapters(150), vocab_size=2000, lowercase=False)


# ------------------------------------------------------------------ pre-tokenization


def test_basic_tokenize_like_bert():
    assert basic_tokenize("Héllo, 世界!") == ["hello", ",", "世", "界", "!"]
    assert basic_tokenize("Héllo", lowercase=False) == ["Héllo"]
    assert basic_tokenize("Héllo", lowercase=True, strip_accents=False) == ["héllo"]
    assert basic_tokenize("don't stop!!") == ["don", "'", "t", "stop", "!", "!"]
    assert basic_tokenize("$5+3=8 x_y") == ["$", "5", "+", "3", "=", "8", "x", "_", "y"]
    assert basic_tokenize("a\x00b\u200dc\ufffd d\t\ne") == ["abc", "d", "e"]  # controls dropped
    assert basic_tokenize("e\u0301") == ["e"]  # NFC, then the accent is stripped
    assert basic_tokenize("ab\ud800cd") == ["abcd"]  # a lone surrogate is dropped, no error
    assert basic_tokenize("   ") == [] and basic_tokenize("") == []


def test_greedy_longest_match_first_with_continuations():
    tok = WordPiece(SPECIAL_TOKENS + ["un", "##aff", "##able", "u", "##n", "a", "##a"])
    assert tok.tokenize("unaffable") == ["un", "##aff", "##able"]  # Google's example
    assert tok.tokenize("unaffablex") == ["[UNK]"]  # the whole word, not just the "x"
    assert tok.tokenize("una un") == ["un", "##a", "un"]
    assert tok.encode("unaffable") == [5, 6, 7]


def test_max_chars_per_word_gives_unk():
    tok = WordPiece(SPECIAL_TOKENS + ["a", "##a"], max_chars_per_word=5)
    assert tok.tokenize("aaaaa aaaaaa") == ["a", "##a", "##a", "##a", "##a", "[UNK]"]


# ------------------------------------------------------------------ training


def test_train_hf_course_example():
    tok = WordPiece.train(HUG, vocab_size=5 + 14 + 3)
    assert tok.id_to_token[:5] == SPECIAL_TOKENS
    assert (tok.pad_id, tok.unk_id, tok.cls_id, tok.sep_id, tok.mask_id) == (0, 1, 2, 3, 4)
    assert tok.special_ids == [0, 1, 2, 3, 4]
    assert tok.id_to_token[5:12] == list("bghnpsu")
    assert tok.id_to_token[12:19] == ["##" + c for c in "bghnpsu"]
    assert tok.id_to_token[19:] == ["##ug", "##un", "hug"]  # counts 20, 16, 15
    assert tok.tokenize("Hugs bun!") == ["hug", "##s", "b", "##un", "[UNK]"]


def test_train_is_deterministic_and_learns_whole_words(tok):
    again = WordPiece.train(bible_chapters(150), vocab_size=2000)
    assert again.id_to_token == tok.id_to_token
    assert tok.vocab_size == 2000
    for word in ["the", "and", "god", "earth", "said"]:
        assert tok.tokenize(word) == [word]
    pieces = tok.tokenize("unbelievable")
    assert len(pieces) > 1 and all(p.startswith("##") for p in pieces[1:])
    assert "".join(p.removeprefix("##") for p in pieces) == "unbelievable"


def test_train_merging_into_a_token_that_exists_keeps_one_id():
    tok = WordPiece.train(["abc " * 3 + "xbc " * 9 + "xab " * 8], vocab_size=100)
    assert len(set(tok.id_to_token)) == tok.vocab_size  # no duplicates
    assert tok.tokenize("abc") == ["abc"]


def test_train_arguments():
    with pytest.raises(ValueError, match="vocab_size >= 19"):
        WordPiece.train(HUG, vocab_size=10)
    with pytest.raises(ValueError, match="must be an int"):
        WordPiece.train(HUG, vocab_size="100")
    rare = WordPiece.train(HUG + ["zebra"], vocab_size=100, min_frequency=2)
    assert "z" not in rare.token_to_id and rare.tokenize("zebra hug") == ["[UNK]", "hug"]
    small = WordPiece.train(["ab"], vocab_size=1000)  # runs out of pairs
    assert small.id_to_token[5:] == ["a", "b", "##a", "##b", "ab"]


# ------------------------------------------------------------------ [UNK] vs byte-level


def test_unseen_characters_give_unk_byte_level_never(tok, cased):
    bpe = ByteLevelBPE.train(bible_chapters(150), vocab_size=2000)
    for kind, text in UNSEEN.items():
        pieces = cased.tokenize(text)
        assert "[UNK]" in pieces, kind
        assert bpe.unk_id not in bpe.encode(text) and bpe.decode(bpe.encode(text)) == text
    # uncased: accents are stripped, so the accented words are pieced from plain letters
    assert "[UNK]" not in tok.tokenize(UNSEEN["accents"])
    assert tok.tokenize(UNSEEN["cjk"]) == ["[UNK]"] * len(UNSEEN["cjk"])  # one word per char
    pieces = tok.tokenize("I ❤ BERT 😀")
    assert pieces[:2] == ["i", "[UNK]"] and pieces[-1] == "[UNK]" and pieces.count("[UNK]") == 2


@FAST
@given(st.text(alphabet=st.characters(exclude_categories=())))  # surrogates included
def test_any_string_encodes_and_pieces_glue_back_to_words(tok, text):
    ids = tok.encode(text, allowed_special="none")
    assert all(0 <= i < tok.vocab_size for i in ids)
    for word in tok.pre_tokenize(text):
        pieces = tok.tokenize_word(word)
        if pieces != ["[UNK]"]:
            assert pieces[0] in tok.token_to_id and not pieces[0].startswith("##")
            assert all(p.startswith("##") for p in pieces[1:])
            assert "".join(p.removeprefix("##") for p in pieces) == word


@FAST
@given(st.text(alphabet=st.sampled_from("abcdefghijklmnopqrstuvwxyz .,;!?'")))
def test_text_in_the_alphabet_never_gives_unk_and_decodes_back(tok, text):
    ids = tok.encode(text)
    assert tok.unk_id not in ids
    assert tok.decode(ids).replace(" ", "") == text.replace(" ", "")


# ------------------------------------------------------------------ special tokens, decode


def test_special_tokens_in_text(tok):
    ids = tok.encode("The [MASK] sat.", allowed_special="all")
    assert ids[1] == tok.mask_id
    assert tok.mask_id not in tok.encode("The [MASK] sat.")   # the default, as ByteLevelBPE
    assert basic_tokenize("the [MASK]") == ["the", "[", "mask", "]"]  # what "none" pieces
    only_sep = tok.tokenize("[CLS] x [SEP]", allowed_special={"[SEP]"})
    assert only_sep[0] != "[CLS]" and only_sep[-1] == "[SEP]"
    with pytest.raises(ValueError, match="not special tokens"):
        tok.encode("x", allowed_special={"<mask>"})


def test_decode_glues_continuations(tok):
    ids = tok.encode("Unbelievable, said the LORD.")
    assert tok.decode(ids) == "unbelievable, said the lord."
    padded = [tok.cls_id, *ids, tok.sep_id, tok.pad_id]
    assert tok.decode(padded).startswith("[CLS] unbelievable")
    assert tok.decode(padded, skip_special=True) == "unbelievable, said the lord."
    with pytest.raises(ValueError, match="outside the vocabulary"):
        tok.decode([tok.vocab_size])


# ------------------------------------------------------------------ files


def test_save_then_load_gives_identical_ids(tok, cased, tmp_path):
    texts = list(UNSEEN.values()) + bible_chapters(3) + ["The [MASK] sat.", "Ünïcödé"]
    for original in (tok, cased):
        path = tmp_path / "wp.txt"
        original.save(path)
        assert path.read_text(encoding="utf-8").startswith("minibert wordpiece v1\n")
        loaded = WordPiece.load(path)
        assert loaded.id_to_token == original.id_to_token
        assert loaded.lowercase == original.lowercase
        for text in texts:
            assert loaded.encode(text) == original.encode(text)


def test_load_refuses_other_formats_and_versions(tok, tmp_path):
    path = tmp_path / "wp.txt"
    tok.save(path)
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("wordpiece v1", "wordpiece v7", 1), encoding="utf-8")
    with pytest.raises(ValueError, match="version 'v7'.*train and save it again"):
        WordPiece.load(path)
    ByteLevelBPE.train("aaab", vocab_size=262).save(path)
    with pytest.raises(ValueError, match="not a minibert WordPiece file.*ByteLevelBPE.load"):
        WordPiece.load(path)
    path.write_text("\n".join(tok.id_to_token) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match="from_vocab_file"):
        WordPiece.load(path)
    path.write_text("\n".join(text.split("\n")[:50]) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match="cut short"):
        WordPiece.load(path)


def test_from_bert_vocab_file(tmp_path):
    # bert-base-uncased's layout: [PAD], [unused0..98], [UNK], [CLS], [SEP], [MASK], ...
    tokens = (["[PAD]"] + [f"[unused{i}]" for i in range(99)] + ["[UNK]", "[CLS]", "[SEP]",
              "[MASK]", "!", ".", "the", "cat", "sat", "s", "##s", "##at", "c"])
    path = tmp_path / "vocab.txt"
    path.write_text("\n".join(tokens) + "\n", encoding="utf-8")
    tok = WordPiece.from_vocab_file(path)
    assert (tok.pad_id, tok.unk_id, tok.cls_id, tok.sep_id, tok.mask_id) == (0, 100, 101, 102,
                                                                            103)
    assert tok.special_ids == [0, 100, 101, 102, 103]
    assert tok.vocab_size == len(tokens)
    assert tok.tokenize("The cats sat!") == ["the", "cat", "##s", "sat", "!"]
    assert tok.encode("The [MASK] sat.", allowed_special="all") == [106, 103, 108, 105]
    path.write_text("\n".join(tokens[1:]) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"lacks the special tokens \['\[PAD\]'\]"):
        WordPiece.from_vocab_file(path)
    with pytest.raises(ValueError, match="appears twice"):
        WordPiece(SPECIAL_TOKENS + ["a", "a"])


# ------------------------------------------------------------------ next to Hugging Face


PARITY_TEXTS = [
    "unbelievable Café naïve 我爱自然语言处理 I ❤️ BERT 😀🎉 the [MASK] sat.",
    "Hello,   world!\t\x00x\u200dy", "ΟΔΟΣ. İstanbul straße", "a\u0301b e\u0301",
    "don't $5+3=8 ½ ² x_y", "\u2028line\x1csep", "[CLS] In the beginning [SEP] [PAD]",
]


def test_same_pieces_as_transformers_bert_tokenizer(tok, cased):
    """transformers' BertTokenizer (Rust) with our vocabulary splits text exactly the same."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    transformers = pytest.importorskip("transformers")
    texts = PARITY_TEXTS + bible_chapters(5)
    for ours, lower in ((tok, True), (cased, False)):
        vocab = {t: i for i, t in enumerate(ours.id_to_token)}
        theirs = transformers.BertTokenizer(vocab=vocab, do_lower_case=lower)
        for text in texts:   # BertTokenizer recognises special tokens in text: "all"
            assert ours.tokenize(text, "all") == theirs.tokenize(text), text
            assert (ours.encode(text, "all")
                    == theirs.encode(text, add_special_tokens=False)), text
