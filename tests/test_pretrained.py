"""all-MiniLM-L6-v2 in minibert: the package's files, read without transformers, give the
same token ids as the package's own tokenizer and the same sentence embeddings as
transformers.AutoModel."""

import os
import shutil

import pytest
import torch

from minibert import pretrained

os.environ.setdefault("HF_HUB_OFFLINE", "1")

SENTENCES = [
    "The cat sat on the mat.",
    "A man is playing a guitar!",
    "Café au lait, naïve résumé; Zürich's façade.",   # accents are stripped (uncased model)
    "Numbers: 3.14159, 2,718 and 1e-5 (roughly).",
    "unbelievably hyperparameterization antidisestablishmentarianism",  # many ## pieces
    "北京大学 is in 中国.",                               # each CJK character is a word
    "Emoji 🤖 and symbols ☃ ⚗ are unknown: \u2603\ufe0f",  # [UNK] and stripped controls
    "   spaced\tout\nover lines   ",
    "",
]


@pytest.fixture(scope="module")
def minilm():
    return pretrained.load_minilm()


def test_token_ids_equal_the_packages_tokenizer(minilm):
    tokenizers = pytest.importorskip("tokenizers")
    _, tokenizer = minilm
    reference = tokenizers.Tokenizer.from_file(str(pretrained.minilm_dir() / "tokenizer.json"))
    reference.no_truncation()
    reference.no_padding()
    batch = pretrained.encode_batch(tokenizer, SENTENCES, max_len=512)
    for i, text in enumerate(SENTENCES):
        expected = reference.encode(text).ids
        mine = batch["input_ids"][i, : int(batch["attention_mask"][i].sum())].tolist()
        assert mine == expected, f"{text!r}: {tokenizer.tokenize(text)}"


def test_unknown_characters_become_unk(minilm):
    _, tokenizer = minilm
    assert tokenizer.unk_id in tokenizer.encode("🤖")


def test_sentence_embeddings_equal_transformers(minilm):
    transformers = pytest.importorskip("transformers")
    model, tokenizer = minilm
    reference = transformers.AutoModel.from_pretrained(
        str(pretrained.minilm_dir()), attn_implementation="eager").eval()
    batch = pretrained.encode_batch(tokenizer, SENTENCES[:-1])
    with torch.no_grad():
        hidden = reference(**batch).last_hidden_state  # (B, T, H)
        expected = pretrained.mean_pool(hidden, batch["attention_mask"])
        expected = expected / expected.norm(dim=-1, keepdim=True)
        mine = pretrained.sentence_embeddings(model, tokenizer, SENTENCES[:-1])
        mine_hidden = model(**batch).last_hidden_state
    mask = batch["attention_mask"].bool()
    assert (mine_hidden[mask] - hidden[mask]).abs().max() < 1e-5  # every real token
    assert mine.shape == (len(SENTENCES) - 1, 384)
    assert (mine - expected).abs().max() < 1e-5


def test_batched_embeddings_keep_the_order_and_the_vectors(minilm):
    model, tokenizer = minilm
    sentences = SENTENCES[:-1]
    whole = torch.cat([pretrained.sentence_embeddings(model, tokenizer, [s]) for s in sentences])
    batched = pretrained.sentence_embeddings(model, tokenizer, sentences, batch_size=3)
    assert batched.shape == whole.shape
    assert (batched - whole).abs().max() < 1e-5  # row i is sentence i, whatever its batch
    with pytest.raises(ValueError, match="batch_size"):
        pretrained.sentence_embeddings(model, tokenizer, sentences, batch_size=0)


def test_similar_sentences_are_closer_than_unrelated_ones(minilm):
    model, tokenizer = minilm
    a, b, c = pretrained.sentence_embeddings(
        model, tokenizer, ["A man is playing a guitar.", "Someone plays an instrument.",
                           "The stock market fell sharply today."])
    assert float(a @ b) > float(a @ c) + 0.2


def test_read_safetensors_equals_the_safetensors_library():
    safetensors_torch = pytest.importorskip("safetensors.torch")
    path = pretrained.minilm_dir() / "model.safetensors"
    mine, theirs = pretrained.read_safetensors(path), safetensors_torch.load_file(str(path))
    assert mine.keys() == theirs.keys()
    for name in mine:
        assert mine[name].dtype == theirs[name].dtype and torch.equal(mine[name], theirs[name])


def test_mean_pool_ignores_padding():
    hidden = torch.tensor([[[1.0, 2.0], [3.0, 4.0], [100.0, 100.0]]])  # (1, 3, 2)
    pooled = pretrained.mean_pool(hidden, torch.tensor([[1, 1, 0]]))
    assert torch.equal(pooled, torch.tensor([[2.0, 3.0]]))


def _copy_folder(tmp_path):
    folder = tmp_path / "model"
    folder.mkdir()
    for name in ("config.json", "vocab.txt"):
        shutil.copy(pretrained.minilm_dir() / name, folder / name)
    return folder


def test_truncated_weights_give_a_clear_error(tmp_path):
    folder = _copy_folder(tmp_path)
    data = (pretrained.minilm_dir() / "model.safetensors").read_bytes()
    (folder / "model.safetensors").write_bytes(data[: len(data) // 2])
    with pytest.raises(ValueError, match="truncated"):
        pretrained.load_bert(folder)


def test_wrong_files_give_clear_errors(tmp_path):
    folder = _copy_folder(tmp_path)
    (folder / "model.safetensors").write_text(
        "version https://git-lfs.github.com/spec/v1\noid sha256:0\nsize 90868376\n")
    with pytest.raises(ValueError, match="not a safetensors file"):
        pretrained.load_bert(folder)
    (folder / "model.safetensors").write_bytes(b"abc")
    with pytest.raises(ValueError, match="too short"):
        pretrained.load_bert(folder)
    with pytest.raises(FileNotFoundError, match="config.json and model.safetensors"):
        pretrained.load_bert(tmp_path)
    with pytest.raises(TypeError, match="list of sentences"):
        pretrained.encode_batch(None, "one string")
