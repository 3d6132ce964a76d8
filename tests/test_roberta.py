"""RoBERTa: position ids with the padding offset, errors, and parity with transformers."""

import os

import pytest
import torch

from minibert.models import (
    RobertaForMaskedLM,
    RobertaModel,
    position_ids_from_input_ids,
    roberta_config,
)

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"


def test_position_ids_count_real_tokens_from_padding_idx_plus_one():
    ids = torch.tensor([[0, 7, 8, 2, 1, 1], [0, 7, 2, 1, 1, 1]])
    assert position_ids_from_input_ids(ids, pad_token_id=1).tolist() == [
        [2, 3, 4, 5, 1, 1], [2, 3, 4, 1, 1, 1]]


def test_the_position_ids_can_come_from_the_students_function():
    calls = []

    def my_positions(input_ids, pad_token_id, padding_idx):
        calls.append((pad_token_id, padding_idx))
        return position_ids_from_input_ids(input_ids, pad_token_id, padding_idx)

    config = roberta_config(10, vocab_size=50, hidden_size=32, num_heads=2, pad_token_id=1)
    ids = torch.tensor([[0, 7, 8, 2, 1, 1]])
    outs = []
    for fn in (None, my_positions):
        torch.manual_seed(0)
        outs.append(RobertaForMaskedLM(config, position_ids_fn=fn).eval()(ids).logits)
    assert calls == [(1, 1)] and torch.equal(outs[0], outs[1])


def test_config_has_one_segment_and_offset_positions():
    config = roberta_config(512, vocab_size=100)
    assert config.type_vocab_size == 1 and config.max_position == 514


def test_model_rejects_bert_configs_and_long_inputs():
    from minibert.config import BertConfig

    with pytest.raises(ValueError, match="roberta_config"):
        RobertaModel(BertConfig(vocab_size=50))
    model = RobertaModel(roberta_config(8, vocab_size=50, hidden_size=32, num_heads=2))
    with pytest.raises(ValueError, match="max_len=9"):
        model(torch.full((1, 9), 5))
    model(torch.full((1, 8), 5))   # 8 tokens fit: positions 2..9 of a 10-row table


def test_padding_does_not_change_real_tokens():
    torch.manual_seed(0)
    model = RobertaForMaskedLM(roberta_config(10, vocab_size=50, hidden_size=32, num_heads=2,
                                              pad_token_id=1)).eval()
    ids = torch.randint(5, 50, (1, 6))
    padded = torch.cat([ids, torch.ones(1, 3, dtype=torch.long)], dim=1)
    mask = (padded != 1).long()
    with torch.no_grad():
        short = model(ids).logits
        long = model(padded, attention_mask=mask).logits
    assert torch.allclose(short, long[:, :6], atol=1e-5)


transformers = pytest.importorskip("transformers")


def hf_pair(cls):
    from minibert.interop import roberta_from_transformers

    torch.manual_seed(0)
    config = transformers.RobertaConfig(
        vocab_size=99, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
        intermediate_size=37, max_position_embeddings=14, type_vocab_size=1, pad_token_id=1)
    hf = cls(config)
    hf.set_attn_implementation("eager")
    hf.eval()
    return hf, roberta_from_transformers(hf)


def padded_batch():
    generator = torch.Generator().manual_seed(1)
    ids = torch.randint(2, 99, (3, 12), generator=generator)
    mask = torch.ones(3, 12, dtype=torch.long)
    mask[1, 7:] = 0
    mask[2, 3:] = 0
    ids[mask == 0] = 1                                                   # <pad> = 1
    return ids, mask


@pytest.mark.parametrize("name", ["RobertaModel", "RobertaForMaskedLM"])
def test_parity_with_transformers_with_padding(name):
    hf, mine = hf_pair(getattr(transformers, name))
    ids, mask = padded_batch()
    with torch.no_grad():
        theirs = hf(input_ids=ids, attention_mask=mask)
        ours = mine(ids, attention_mask=mask)
    if name == "RobertaModel":
        a, b = ours.last_hidden_state, theirs.last_hidden_state
    else:
        a, b = ours.logits, theirs.logits
    real = mask.bool()
    assert (a[real] - b[real]).abs().max().item() <= 1e-5
    assert (a - b).abs().max().item() <= 1e-5


def test_parity_fails_without_the_offset():
    """The +2 matters: plain 0-based positions give different numbers."""
    hf, mine = hf_pair(transformers.RobertaModel)
    ids, mask = padded_batch()
    plain = torch.arange(12)[None].expand(3, 12)
    with torch.no_grad():
        theirs = hf(input_ids=ids, attention_mask=mask).last_hidden_state
        ours = mine(ids, attention_mask=mask, position_ids=plain).last_hidden_state
    assert (ours - theirs).abs().max().item() > 1e-2
