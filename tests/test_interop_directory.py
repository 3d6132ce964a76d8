"""`interop.from_directory`: real transformers-format weights from a local folder, tested on the
course's own checkpoints written in that format here (nothing downloads)."""

import pytest
import torch

transformers = pytest.importorskip("transformers")

from minibert import interop  # noqa: E402


def test_the_course_chinese_model_goes_through_a_transformers_folder_unchanged(tmp_path):
    from minibert.course import sighan

    model, _ = sighan.load_pretrained()
    model = model.float()
    hf = interop.to_transformers(model)
    hf.save_pretrained(tmp_path)
    (tmp_path / "vocab.txt").write_text("\n".join(sighan.setup().vocab.itos) + "\n",
                                        encoding="utf-8")
    again, vocab = interop.from_directory(tmp_path)
    assert vocab == sighan.setup().vocab.itos
    ids = torch.tensor([sighan.setup().vocab.encode("今天天气很好，我们去公园。")])
    with torch.no_grad():
        torch.testing.assert_close(again(ids).mlm_logits, model(ids).mlm_logits,
                                   atol=1e-5, rtol=0)


def test_an_albert_chinese_tiny_layout_folder_loads(tmp_path):
    # albert_chinese_tiny's layout (AlbertForMaskedLM, one shared group, E < H), shrunk
    config = transformers.AlbertConfig(
        vocab_size=40, embedding_size=16, hidden_size=32, num_hidden_layers=4,
        num_hidden_groups=1, inner_group_num=1, num_attention_heads=4, intermediate_size=64,
        max_position_embeddings=24, hidden_act="gelu", hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0, pad_token_id=0)
    torch.manual_seed(0)
    hf = transformers.AlbertForMaskedLM(config).eval()
    hf.save_pretrained(tmp_path)
    (tmp_path / "vocab.txt").write_text("\n".join(f"t{i}" for i in range(40)) + "\n")
    model, vocab = interop.from_directory(tmp_path)
    assert model.config.sharing == "all" and model.config.embedding_size == 16
    assert vocab[3] == "t3"
    ids = torch.randint(1, 40, (2, 10), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        torch.testing.assert_close(model(ids).mlm_logits, hf(ids).logits, atol=1e-5, rtol=0)


def test_a_folder_without_weights_or_vocabulary_names_what_is_missing(tmp_path):
    with pytest.raises(FileNotFoundError, match="config.json"):
        interop.from_directory(tmp_path)
    (tmp_path / "config.json").write_text("{}")
    (tmp_path / "vocab.txt").write_text("a\n")
    with pytest.raises(FileNotFoundError, match="model.safetensors"):
        interop.from_directory(tmp_path)
