"""Byte-level BPE: the helpers, the classic example, naive = incremental, round trips on any
string, no [UNK], special tokens, surrogates, save/load, and compression next to HF tokenizers."""

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from minibert.data import load_bible
from minibert.tokenizers import SPECIAL_TOKENS, ByteLevelBPE, NaiveBPE, WordPiece
from minibert.tokenizers.bpe import (
    GPT2_SPLIT_PATTERN,
    PairCounter,
    bytes_to_unicode,
    get_stats,
    merge,
    pretokenize,
    train_naive,
)

FAST = settings(max_examples=200, deadline=None)
UTF8_TEXT = st.text(alphabet=st.characters(codec="utf-8"))  # any string without lone surrogates
STRINGS = [
    "", " ", "   ", "\t\n\r \x0b\x0c", "a", "hello world", "Hello  world!\n\n  bye  ",
    "\x00\x01\x1f\x7f\x1c", "naïve café résumé Ångström", "我爱自然语言处理。", "안녕하세요",
    "😀", "👨‍👩‍👧‍👦 family", "🇫🇷 flag", "e\u0301 (combining accent)", "x² ½ Ⅻ ①",
    "[MASK] [PAD][CLS]x[SEP] [UNK]", "don't you'll I'M", "\ufffd\uffff\U0010ffff", "a" * 500,
]


def bible_text(n_bytes, skip_bytes=0):
    """Whole chapters of the Bible (sentences joined by spaces) making about n_bytes bytes."""
    chapters, size = [], 0
    for doc in load_bible():
        chapter = " ".join(doc)
        size += len(chapter)
        if size <= skip_bytes:
            continue
        chapters.append(chapter)
        if size >= skip_bytes + n_bytes:
            break
    return chapters


@pytest.fixture(scope="module")
def tok():
    return ByteLevelBPE.train(bible_text(50_000), vocab_size=600)


# ------------------------------------------------------------------ the two helpers


def test_get_stats_and_merge_docstring_examples():
    assert get_stats([1, 2, 3, 1, 2]) == {(1, 2): 2, (2, 3): 1, (3, 1): 1}
    counts = get_stats([1, 2])
    assert get_stats([1, 2, 3], counts) is counts and counts == {(1, 2): 2, (2, 3): 1}
    assert get_stats([]) == {} and get_stats([7]) == {}
    assert merge([1, 2, 3, 1, 2], (1, 2), 4) == [4, 3, 4]
    assert merge([1, 1, 1], (1, 1), 9) == [9, 1]  # left to right, no overlap
    assert merge([1, 2], (2, 1), 9) == [1, 2]


def test_pair_counter_docstring_example():
    pc = PairCounter([[97, 98], [97, 98, 99]], [3, 1])
    assert pc.counts == {(97, 98): 4, (98, 99): 1}
    assert pc.most_frequent() == (97, 98)
    pc.merge((97, 98), 256)
    assert pc.words == [[256], [256, 99]]
    assert pc.counts == {(256, 99): 1}
    assert pc.where == {(256, 99): {1}}
    pc.merge((256, 99), 257)
    assert pc.most_frequent() is None


# ------------------------------------------------------------------ training


def test_classic_example_aaabdaaabac():
    tok = ByteLevelBPE.train("aaabdaaabac", vocab_size=256 + 3 + 5)
    assert tok.merges == {(97, 97): 256, (97, 98): 257, (256, 257): 258}  # Z=aa, Y=ab, X=ZY
    assert tok.encode("aaabdaaabac") == [258, 100, 258, 97, 99]  # XdXac
    assert tok.decode([258, 100, 258, 97, 99]) == "aaabdaaabac"
    assert tok.vocab_size == len(tok) == 264
    assert tok.vocab[258] == b"aaab"
    assert train_naive([list(b"aaabdaaabac")], 3) == tok.merges


def test_naive_and_incremental_learn_identical_merges():
    text = bible_text(8_000) + ["aaaa bbbb abab", "the the the", "😀😀 ééé 我我我"]
    fast = ByteLevelBPE.train(text, vocab_size=600)
    slow = NaiveBPE.train(text, vocab_size=600)
    assert len(fast.merges) == 600 - 261
    assert list(fast.merges.items()) == list(slow.merges.items())
    assert fast.encode(text[0]) == slow.encode(text[0])


def test_ties_go_to_the_smallest_pair_and_training_is_deterministic():
    # "ab" and "cd" occur twice each: (97, 98) < (99, 100), so "ab" is merged first
    tok = ByteLevelBPE.train(["cd ab", "ab cd"], vocab_size=262)
    assert tok.merges == {(97, 98): 256}
    again = ByteLevelBPE.train(bible_text(10_000), vocab_size=400)
    assert again.merges == ByteLevelBPE.train(bible_text(10_000), vocab_size=400).merges


def test_training_stops_when_nothing_is_left_to_merge():
    tok = ByteLevelBPE.train(["abc abc"], vocab_size=1000)
    # chunks "abc" and " abc": ab (2, the smaller pair of a tie with bc), abc (2), Ġabc (1)
    assert tok.id_to_token[256:-5] == ["ab", "abc", "Ġabc"]
    assert tok.vocab_size == 256 + 3 + 5


def test_bad_training_arguments():
    with pytest.raises(ValueError, match="at least 261"):
        ByteLevelBPE.train("abc", vocab_size=100)
    with pytest.raises(ValueError, match="must be an int"):
        ByteLevelBPE.train("abc", vocab_size=300.0)
    with pytest.raises(ValueError, match="merges must take the ids 256"):
        ByteLevelBPE({(97, 97): 300})


# ------------------------------------------------------------------ pre-tokenization


def test_pretokenize_splits_like_gpt2():
    assert pretokenize("Hello world, don't!") == ["Hello", " world", ",", " don", "'t", "!"]
    assert pretokenize("a  b\n\nc") == ["a", " ", " b", "\n", "\n", "c"]
    assert pretokenize("in 1984 x_y") == ["in", " 1984", " x", "_", "y"]
    assert "".join(pretokenize(STRINGS[6])) == STRINGS[6]


def test_pretokenize_equals_gpt2_regex_except_the_documented_characters():
    regex = pytest.importorskip("regex")
    gpt2 = regex.compile(GPT2_SPLIT_PATTERN)
    texts = bible_text(200_000) + [s for s in STRINGS if not any(c in s for c in "²½Ⅻ①\x1c\x1f")]
    for text in texts:
        assert pretokenize(text) == gpt2.findall(text)
    # the documented differences: non-decimal numbers are letters, U+001C..U+001F whitespace
    assert pretokenize("x² ½") == ["x²", " ½"] and gpt2.findall("x² ½") == ["x", "²", " ½"]
    assert pretokenize("a\x1cb") == ["a", "\x1c", "b"] and gpt2.findall("a\x1cb") == ["a", "\x1c",
                                                                                      "b"]


# ------------------------------------------------------------------ encode / decode


@pytest.mark.parametrize("text", STRINGS)
def test_round_trip_on_hard_strings(tok, text):
    ids = tok.encode(text)
    assert tok.decode(ids) == text
    assert tok.unk_id not in ids
    assert all(0 <= i < tok.vocab_size for i in ids)
    assert tok.decode(tok.encode(text, allowed_special="all")) == text


@FAST
@given(UTF8_TEXT)
def test_round_trip_on_any_string(tok, text):
    ids = tok.encode(text)
    assert tok.decode(ids) == text
    assert tok.unk_id not in ids  # byte-level never needs [UNK]
    assert not set(ids) & set(tok.special_ids)  # specials only when allowed


@FAST
@given(st.lists(st.sampled_from(["[MASK]", "[PAD]", "[CLS]", "[SEP]", "x", " ", "é", "😀"])))
def test_round_trip_with_special_tokens_allowed(tok, parts):
    text = "".join(parts)
    ids = tok.encode(text, allowed_special="all")
    assert tok.decode(ids) == text
    assert ids.count(tok.mask_id) == text.count("[MASK]")


@FAST
@given(st.lists(st.integers(0, 600 - 1), max_size=30))
def test_decode_any_ids_never_raises(tok, ids):
    assert isinstance(tok.decode(ids), str)


def test_decode_replaces_broken_utf8(tok):
    euro = list("€".encode("utf-8"))  # [226, 130, 172]
    assert tok.decode(euro) == "€"
    assert tok.decode(euro[:1]) == "\ufffd"
    assert tok.decode([104, 105, 255]) == "hi\ufffd"
    with pytest.raises(ValueError, match="outside the vocabulary"):
        tok.decode([tok.vocab_size])
    with pytest.raises(ValueError, match="outside the vocabulary"):
        tok.decode([-1])


def test_lone_surrogates_get_a_clear_error_naming_the_fix(tok):
    with pytest.raises(ValueError, match=r"lone surrogate '\\ud800' at position 2") as error:
        tok.encode("ab\ud800cd")
    assert "surrogatepass" in str(error.value)
    with pytest.raises(ValueError, match="lone surrogate"):
        ByteLevelBPE.train(["fine", "not \udfff fine"], vocab_size=300)
    with pytest.raises(ValueError, match="lone surrogate"):
        tok.encode("x\ud800", allowed_special="all")
    # the fix the message suggests: pairs become characters, lone halves become U+FFFD
    broken = "ab\ud800cd \ud83d\ude00"
    fixed = broken.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    assert fixed == "ab\ufffdcd 😀"
    assert tok.decode(tok.encode(fixed)) == fixed


@FAST
@given(st.text(alphabet=st.sampled_from("ab \ud800\udbff\udc00\udfff")))
def test_any_string_with_a_lone_surrogate_raises_value_error(tok, text):
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        with pytest.raises(ValueError, match="lone surrogate"):
            tok.encode(text)
    else:
        assert tok.decode(tok.encode(text)) == text


def test_encode_rejects_non_strings(tok):
    with pytest.raises(ValueError, match="expected a string"):
        tok.encode(b"bytes")


def test_cache_gives_the_same_ids(tok):
    text = " ".join(bible_text(5_000))
    first = tok.encode(text)
    tok._cache.clear()
    assert tok.encode(text) == first
    assert tok.encode(text) == first  # from the cache this time


# ------------------------------------------------------------------ special tokens


def test_special_tokens_after_the_merges(tok):
    n = len(tok.merges)
    assert tok.id_to_token[256 + n:] == SPECIAL_TOKENS
    assert (tok.pad_id, tok.unk_id, tok.cls_id, tok.sep_id, tok.mask_id) == tuple(
        range(256 + n, 261 + n))
    assert tok.special_ids == [tok.pad_id, tok.unk_id, tok.cls_id, tok.sep_id, tok.mask_id]
    assert tok.vocab_size == 256 + n + 5
    assert tok.id_to_token[32] == "Ġ" and tok.id_to_token[97] == "a"  # GPT-2's printable bytes
    assert all(tok.token_to_id[t] == i for i, t in enumerate(tok.id_to_token))
    assert len(set(bytes_to_unicode().values())) == 256


def test_allowed_special(tok):
    text = "the [MASK] sat [SEP]"
    assert tok.mask_id not in tok.encode(text)  # default: plain text
    assert tok.decode(tok.encode(text)) == text
    ids = tok.encode(text, allowed_special="all")
    assert tok.mask_id in ids and ids[-1] == tok.sep_id
    only_mask = tok.encode(text, allowed_special={"[MASK]"})
    assert tok.mask_id in only_mask and tok.sep_id not in only_mask
    assert tok.tokenize("the [MASK]", allowed_special="all")[-1] == "[MASK]"
    with pytest.raises(ValueError, match="not special tokens"):
        tok.encode(text, allowed_special={"<mask>"})
    with pytest.raises(ValueError, match="'none', 'all' or a set"):
        tok.encode(text, allowed_special="some")


def test_decode_can_skip_special_tokens(tok):
    ids = [tok.cls_id, *tok.encode("In the beginning"), tok.sep_id, tok.pad_id]
    assert tok.decode(ids) == "[CLS]In the beginning[SEP][PAD]"
    assert tok.decode(ids, skip_special=True) == "In the beginning"


def test_tokenize_shows_gpt2_style_tokens(tok):
    assert tok.tokenize(" the earth") == ["Ġthe", "Ġearth"]
    assert tok.decode(tok.encode(" the earth")) == " the earth"


# ------------------------------------------------------------------ save / load


def test_save_then_load_gives_identical_ids(tok, tmp_path):
    path = tmp_path / "bible.bpe"
    tok.save(path)
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines[0] == "minibert bpe v1"
    assert lines[3].startswith(" ".join(map(str, next(iter(tok.merges)))) + "\t")
    loaded = ByteLevelBPE.load(path)
    assert loaded.merges == tok.merges and loaded.vocab == tok.vocab
    for text in STRINGS + bible_text(3_000):
        assert loaded.encode(text, allowed_special="all") == tok.encode(text, allowed_special="all")


def test_load_refuses_other_formats_and_versions(tok, tmp_path):
    path = tmp_path / "tok.bpe"
    tok.save(path)
    text = path.read_text(encoding="utf-8")

    path.write_text(text.replace("minibert bpe v1", "minibert bpe v2", 1), encoding="utf-8")
    with pytest.raises(ValueError, match="version 'v2'.*train and save it again"):
        ByteLevelBPE.load(path)

    WordPiece.train(["some words"], vocab_size=40).save(path)
    with pytest.raises(ValueError, match="not a minibert BPE file.*WordPiece.load"):
        ByteLevelBPE.load(path)

    path.write_text(json.dumps({"format": "minibert-word-tokenizer", "version": 1}))
    with pytest.raises(ValueError, match="not a minibert BPE file"):
        ByteLevelBPE.load(path)

    path.write_bytes(b"\xff\xfe\x00binary")
    with pytest.raises(ValueError, match="not a UTF-8 text file"):
        ByteLevelBPE.load(path)

    path.write_text("\n".join(text.split("\n")[:10]) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match="cut short"):
        ByteLevelBPE.load(path)

    path.write_text("minibert bpe v1\nspecial <s> <pad>\nmerges 0\n", encoding="utf-8")
    with pytest.raises(ValueError, match="special tokens"):
        ByteLevelBPE.load(path)


# ------------------------------------------------------------------ next to Hugging Face


def test_compression_within_5_percent_of_hf_tokenizers():
    """Same text (the first 300 KB of the Bible), same vocabulary size, tokens per byte."""
    hf_tokenizers = pytest.importorskip("tokenizers")
    from tokenizers import models, pre_tokenizers, trainers

    train, held_out = bible_text(300_000), bible_text(100_000, skip_bytes=300_000)
    vocab_size = 2000
    ours = ByteLevelBPE.train(train, vocab_size)

    hf = hf_tokenizers.Tokenizer(models.BPE())
    hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)  # GPT-2's regex, bytes
    hf.train_from_iterator(train, trainers.BpeTrainer(
        vocab_size=vocab_size, special_tokens=SPECIAL_TOKENS, show_progress=False,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    assert hf.get_vocab_size() == ours.vocab_size == vocab_size

    for texts in (train, held_out):
        n_bytes = sum(len(t.encode("utf-8")) for t in texts)
        ours_per_byte = sum(len(ours.encode(t)) for t in texts) / n_bytes
        hf_per_byte = sum(len(e.ids) for e in hf.encode_batch(texts)) / n_bytes
        assert ours_per_byte == pytest.approx(hf_per_byte, rel=0.05)
    # the two learn (almost) the same vocabulary
    hf_vocab = set(hf.get_vocab())
    assert sum(t in hf_vocab for t in ours.id_to_token) / vocab_size > 0.95
