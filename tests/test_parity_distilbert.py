"""minibert's DistilBERT and Hugging Face's, given the same weights, compute the same numbers.

Tiny random models built from configs (no downloads), both in eval mode, a padded batch.
"""

import os

import pytest
import torch
from padded import padded_batch

from minibert.interop import distilbert_from_transformers, distilbert_name_map

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
transformers = pytest.importorskip("transformers")

ATOL = 1e-5


def hf_model(cls, **changes):
    settings = dict(vocab_size=99, dim=32, n_layers=3, n_heads=4, hidden_dim=37,
                    max_position_embeddings=64)
    torch.manual_seed(0)
    model = cls(transformers.DistilBertConfig(**{**settings, **changes}))
    model.set_attn_implementation("eager")
    return model.eval()


def batch():
    """(input_ids, attention_mask): DistilBERT has no segments."""
    input_ids, _, attention_mask = padded_batch()
    return input_ids, attention_mask


def assert_close(mine, theirs, what):
    assert mine.shape == theirs.shape, f"{what}: shape {mine.shape} vs {theirs.shape}"
    gap = (mine - theirs).abs().max().item()
    assert gap <= ATOL, f"{what}: max difference {gap:.2e} > {ATOL}"


@pytest.mark.parametrize("activation", ["gelu", "relu"])
def test_distilbert_model_every_hidden_state(activation):
    hf = hf_model(transformers.DistilBertModel, activation=activation)
    mine = distilbert_from_transformers(hf)
    ids, mask = batch()
    with torch.no_grad():
        theirs = hf(ids, attention_mask=mask, output_hidden_states=True, output_attentions=True)
        ours = mine(ids, attention_mask=mask, output_hidden_states=True, output_attentions=True)
    assert len(ours.hidden_states) == len(theirs.hidden_states) == 4
    for i, (a, b) in enumerate(zip(ours.hidden_states, theirs.hidden_states)):
        assert_close(a, b, f"hidden state {i}")
    for i, (a, b) in enumerate(zip(ours.attentions, theirs.attentions)):
        assert_close(a, b, f"attention probabilities of layer {i}")
    assert_close(ours.last_hidden_state, theirs.last_hidden_state, "last hidden state")


def test_sinusoidal_positions_load_as_a_table():
    hf = hf_model(transformers.DistilBertModel, sinusoidal_pos_embds=True)
    mine = distilbert_from_transformers(hf)
    ids, mask = batch()
    with torch.no_grad():
        assert_close(mine(ids, attention_mask=mask).last_hidden_state,
                     hf(ids, attention_mask=mask).last_hidden_state, "last hidden state")


def test_masked_lm_logits_and_loss():
    hf = hf_model(transformers.DistilBertForMaskedLM)
    mine = distilbert_from_transformers(hf)
    assert mine.mlm.word_embeddings is mine.distilbert.word_embeddings
    ids, mask = batch()
    labels = torch.full_like(ids, -100)
    labels[0, [1, 4]] = ids[0, [1, 4]]
    labels[1, 2] = ids[1, 2]
    with torch.no_grad():
        theirs = hf(ids, attention_mask=mask, labels=labels)
        assert_close(mine(ids, attention_mask=mask).logits, theirs.logits, "MLM logits")
        assert_close(mine(ids, attention_mask=mask, mlm_labels=labels).loss, theirs.loss,
                     "MLM loss")


def test_name_map_covers_every_parameter_once():
    hf = hf_model(transformers.DistilBertForMaskedLM)
    mine = distilbert_from_transformers(hf)
    names = distilbert_name_map(mine)
    assert set(names) == set(dict(mine.named_parameters()))
    assert names["distilbert.encoder.layers.2.attention.norm.weight"] == \
        "distilbert.transformer.layer.2.sa_layer_norm.weight"


def test_rejects_other_models():
    with pytest.raises(TypeError, match="DistilBertModel or DistilBertForMaskedLM"):
        distilbert_from_transformers(hf_model(transformers.DistilBertForSequenceClassification))
