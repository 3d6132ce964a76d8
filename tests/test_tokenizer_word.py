"""The word-level tokenizer: special ids, frequency ranking, round trips, bad input."""

import pytest

from minibert.tokenizers import SPECIAL_TOKENS, WordTokenizer

TEXTS = ["The cat sat on the mat.", "The dog sat!", "A cat, a dog; a mat?"]


def test_special_tokens_have_fixed_ids():
    tok = WordTokenizer.train(TEXTS, vocab_size=50)
    assert tok.id_to_token[:5] == ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    assert (tok.pad_id, tok.unk_id, tok.cls_id, tok.sep_id, tok.mask_id) == (0, 1, 2, 3, 4)
    assert tok.special_ids == [0, 1, 2, 3, 4]
    assert SPECIAL_TOKENS == tok.id_to_token[:5]
    assert all(tok.token_to_id[t] == i for i, t in enumerate(tok.id_to_token))


def test_train_keeps_most_frequent_words_ties_alphabetical():
    tok = WordTokenizer.train(["b a c a b a", "d"], vocab_size=5 + 3)
    assert tok.id_to_token[5:] == ["a", "b", "c"]  # a: 3, b: 2, then c and d tie at 1: c wins
    assert tok.vocab_size == len(tok) == 8
    again = WordTokenizer.train(["b a c a b a", "d"], vocab_size=8)
    assert again.id_to_token == tok.id_to_token


def test_vocab_smaller_when_few_words():
    tok = WordTokenizer.train(["one two"], vocab_size=1000)
    assert tok.vocab_size == 7


def test_tokenize_lowercases_and_splits_punctuation():
    tok = WordTokenizer.train(TEXTS, vocab_size=50)
    assert tok.tokenize("The Cat, don't sat!") == ["the", "cat", ",", "don't", "sat", "!"]
    assert tok.tokenize("the [MASK] sat") == ["the", "[MASK]", "sat"]
    assert tok.encode("the [MASK] sat")[1] == tok.mask_id


def test_encode_decode_round_trip_and_unknowns():
    tok = WordTokenizer.train(TEXTS, vocab_size=50)
    ids = tok.encode("The cat sat on the mat.")
    assert tok.unk_id not in ids
    assert tok.decode(ids) == "the cat sat on the mat."
    assert tok.encode("the zebra sat") == [tok.token_to_id["the"], tok.unk_id,
                                           tok.token_to_id["sat"]]
    padded = [tok.cls_id, *ids, tok.sep_id, tok.pad_id]
    assert tok.decode(padded, skip_special=True) == "the cat sat on the mat."


def test_encode_words_for_pre_split_text():
    tok = WordTokenizer.train([["bilo", "fumas", "."], ["bilo", "kera"]], vocab_size=20)
    assert tok.id_to_token[5] == "bilo"
    assert tok.encode_words(["bilo", "kera", "zzz"]) == [5, tok.token_to_id["kera"], tok.unk_id]
    direct = WordTokenizer(["x", "y", "x"])  # a given vocabulary, duplicates dropped
    assert direct.id_to_token[5:] == ["x", "y"]


def test_case_kept_when_asked():
    tok = WordTokenizer.train(["God said"], vocab_size=10, lowercase=False)
    assert tok.tokenize("God said") == ["God", "said"]
    assert tok.encode("god") == [tok.unk_id]


def test_save_load_round_trip(tmp_path):
    tok = WordTokenizer.train(TEXTS, vocab_size=12)
    path = tmp_path / "vocab.json"
    tok.save(path)
    loaded = WordTokenizer.load(path)
    assert loaded.id_to_token == tok.id_to_token
    assert loaded.encode("the cat sat") == tok.encode("the cat sat")
    path.write_text(path.read_text().replace('"version": 1', '"version": 99'))
    with pytest.raises(ValueError, match="version"):
        WordTokenizer.load(path)


def test_bad_input_is_explained():
    with pytest.raises(ValueError, match="vocab_size"):
        WordTokenizer.train(TEXTS, vocab_size=5)
    with pytest.raises(ValueError, match="not one string"):
        WordTokenizer.train("just a string", vocab_size=10)
    tok = WordTokenizer.train(TEXTS, vocab_size=10)
    with pytest.raises(ValueError, match="outside the vocabulary"):
        tok.decode([10])
    with pytest.raises(ValueError, match="encode_words"):
        tok.tokenize(["a", "list"])
    with pytest.raises(ValueError, match="encode\\(\\)"):
        tok.encode_words("a string")
