"""minibert's BERT and Hugging Face's, given the same weights, compute the same numbers.

Tiny random models built from configs (no downloads), both in eval mode, a batch with padding
and two segments. Hidden states are compared at every position, padding included: both models
mask padding *keys* only, so padded query rows are computed the same way too.
"""

import os

import pytest
import torch
from padded import padded_batch

from minibert.interop import (
    config_from_transformers,
    copy_weights,
    from_transformers,
    name_map,
    to_transformers,
)

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
transformers = pytest.importorskip("transformers")

ATOL = 1e-5


def hf_config(**changes):
    settings = dict(vocab_size=99, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                    intermediate_size=37, max_position_embeddings=64)
    return transformers.BertConfig(**{**settings, **changes})


def hf_model(cls, attn="eager", **changes):
    torch.manual_seed(0)
    model = cls(hf_config(**changes))
    model.set_attn_implementation(attn)
    return model.eval()


def batch():
    return padded_batch()


def assert_close(mine, theirs, what):
    gap = (mine - theirs).abs().max().item()
    assert mine.shape == theirs.shape, f"{what}: shape {mine.shape} vs {theirs.shape}"
    assert gap <= ATOL, f"{what}: max difference {gap:.2e} > {ATOL}"


def compare_encoders(hf, mine):
    ids, segments, mask = batch()
    with torch.no_grad():
        theirs = hf(ids, attention_mask=mask, token_type_ids=segments, output_hidden_states=True)
        ours = mine(ids, token_type_ids=segments, attention_mask=mask, output_hidden_states=True)
    assert len(ours.hidden_states) == len(theirs.hidden_states) == hf.config.num_hidden_layers + 1
    for i, (a, b) in enumerate(zip(ours.hidden_states, theirs.hidden_states)):
        assert_close(a, b, f"hidden state {i}")
    assert_close(ours.last_hidden_state, theirs.last_hidden_state, "last hidden state")
    assert_close(ours.pooled, theirs.pooler_output, "pooled output")


def test_bert_model_every_hidden_state_and_pooler():
    hf = hf_model(transformers.BertModel)
    compare_encoders(hf, from_transformers(hf))


def test_attention_maps_match_eager():
    hf = hf_model(transformers.BertModel)
    mine = from_transformers(hf)
    ids, segments, mask = batch()
    with torch.no_grad():
        theirs = hf(ids, attention_mask=mask, token_type_ids=segments, output_attentions=True)
        ours = mine(ids, token_type_ids=segments, attention_mask=mask, output_attentions=True)
    for i, (a, b) in enumerate(zip(ours.attentions, theirs.attentions)):
        assert_close(a, b, f"attention probabilities of layer {i}")


def test_pretraining_mlm_and_nsp_logits_and_loss():
    hf = hf_model(transformers.BertForPreTraining)
    mine = from_transformers(hf)
    ids, segments, mask = batch()
    labels = torch.full_like(ids, -100)
    labels[0, [1, 4]] = ids[0, [1, 4]]
    labels[1, 2] = ids[1, 2]
    nsp_labels = torch.tensor([0, 1, 0])
    with torch.no_grad():
        theirs = hf(ids, attention_mask=mask, token_type_ids=segments, output_hidden_states=True)
        ours = mine(ids, token_type_ids=segments, attention_mask=mask, output_hidden_states=True)
        assert_close(ours.mlm_logits, theirs.prediction_logits, "MLM logits")
        assert_close(ours.nsp_logits, theirs.seq_relationship_logits, "NSP logits")
        for i, (a, b) in enumerate(zip(ours.bert.hidden_states, theirs.hidden_states)):
            assert_close(a, b, f"hidden state {i}")
        hf_loss = hf(ids, attention_mask=mask, token_type_ids=segments, labels=labels,
                     next_sentence_label=nsp_labels).loss
        our_loss = mine(ids, token_type_ids=segments, attention_mask=mask, mlm_labels=labels,
                        nsp_labels=nsp_labels).loss
    assert_close(our_loss, hf_loss, "MLM + NSP loss")


def test_masked_lm_logits():
    hf = hf_model(transformers.BertForMaskedLM)
    mine = from_transformers(hf)
    assert mine.nsp is None and mine.bert.pooler is None
    ids, segments, mask = batch()
    with torch.no_grad():
        theirs = hf(ids, attention_mask=mask, token_type_ids=segments).logits
        ours = mine(ids, token_type_ids=segments, attention_mask=mask).mlm_logits
    assert_close(ours, theirs, "MLM logits")


@pytest.mark.parametrize("hf_attn", ["sdpa", "eager"])
def test_sdpa_fast_path_matches(hf_attn):
    hf = hf_model(transformers.BertModel, attn=hf_attn)
    mine = from_transformers(hf, use_sdpa=True)
    assert mine.config.use_sdpa
    compare_encoders(hf, mine)


def test_gelu_new_loads_as_tanh_gelu():
    hf = hf_model(transformers.BertForPreTraining, hidden_act="gelu_new")
    mine = from_transformers(hf)
    assert mine.config.activation == "gelu_tanh"
    ids, segments, mask = batch()
    with torch.no_grad():
        theirs = hf(ids, attention_mask=mask, token_type_ids=segments).prediction_logits
        ours = mine(ids, token_type_ids=segments, attention_mask=mask).mlm_logits
    assert_close(ours, theirs, "MLM logits with gelu_new")


def test_causal_decoder_matches():
    hf = hf_model(transformers.BertModel, is_decoder=True, use_cache=False)
    mine = from_transformers(hf)
    assert mine.config.causal
    compare_encoders(hf, mine)


def test_config_conversion():
    config = config_from_transformers(hf_config(hidden_dropout_prob=0.2, layer_norm_eps=1e-7,
                                                pad_token_id=3, hidden_act="relu"))
    assert (config.vocab_size, config.hidden_size, config.num_layers, config.num_heads) == (
        99, 32, 2, 4)
    assert (config.intermediate_size, config.max_position, config.type_vocab_size) == (37, 64, 2)
    assert (config.dropout, config.attention_dropout) == (0.2, 0.1)
    assert (config.layer_norm_eps, config.pad_token_id, config.activation) == (1e-7, 3, "relu")


def test_relative_positions_are_refused():
    config = hf_config()
    config.position_embedding_type = "relative_key"
    with pytest.raises(ValueError, match="absolute"):
        config_from_transformers(config)


def test_unknown_activation_is_refused():
    with pytest.raises(ValueError, match="choose one of"):
        config_from_transformers(hf_config(hidden_act="swish"))


def test_untied_decoder_is_refused():
    hf = hf_model(transformers.BertForPreTraining, tie_word_embeddings=False)
    with pytest.raises(ValueError, match="tie_word_embeddings=True"):
        from_transformers(hf)


def test_other_heads_are_refused():
    hf = hf_model(transformers.BertForSequenceClassification)
    with pytest.raises(TypeError, match="BertModel, BertForPreTraining"):
        from_transformers(hf)


def test_missing_and_unexpected_names_are_listed():
    hf = hf_model(transformers.BertModel)
    hf.extra = torch.nn.Linear(2, 2)
    with pytest.raises(ValueError, match=r"unexpected in the Hugging Face model: \['extra.bias'"):
        from_transformers(hf)


def test_missing_names_and_wrong_shapes_are_reported():
    hf = hf_model(transformers.BertModel)
    mine = from_transformers(hf)
    state = hf.state_dict()
    del state["pooler.dense.bias"]
    with pytest.raises(ValueError, match=r"missing from the Hugging Face model: \['pooler"):
        copy_weights(mine, state, name_map(mine))
    state = hf.state_dict()
    state["pooler.dense.bias"] = torch.zeros(5)
    with pytest.raises(ValueError, match=r"shape mismatch: pooler.dense.bias \(32,\)"):
        copy_weights(mine, state, name_map(mine))


@pytest.mark.parametrize("cls", ["BertModel", "BertForPreTraining", "BertForMaskedLM"])
def test_round_trip_to_transformers(cls):
    hf = hf_model(getattr(transformers, cls))
    back = to_transformers(from_transformers(hf))
    assert type(back) is type(hf)
    original, returned = hf.state_dict(), back.state_dict()
    assert original.keys() == returned.keys()
    for name in original:
        assert torch.equal(original[name], returned[name]), name
