"""minibert's ELECTRA discriminator and Hugging Face's, given the same weights, agree.

Tiny random models built from configs (no downloads), eval mode, a padded two-segment batch;
hidden states are compared at every position within 1e-5, as in tests/test_parity.py.
"""

import os

import pytest
import torch
from padded import padded_batch

from minibert.interop import electra_from_transformers, electra_name_map
from minibert.models.electra import ElectraDiscriminator, ElectraModel

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
transformers = pytest.importorskip("transformers")

ATOL = 1e-5


def hf_model(cls, embedding_size=16, **changes):
    settings = dict(vocab_size=99, embedding_size=embedding_size, hidden_size=32,
                    num_hidden_layers=2, num_attention_heads=4, intermediate_size=37,
                    max_position_embeddings=64)
    torch.manual_seed(0)
    model = cls(transformers.ElectraConfig(**{**settings, **changes}))
    model.set_attn_implementation("eager")
    return model.eval()


def batch():
    return padded_batch()


def gap(a, b):
    assert a.shape == b.shape, f"shape {tuple(a.shape)} vs {tuple(b.shape)}"
    return (a - b).abs().max().item()


@pytest.mark.parametrize("embedding_size", [16, 32])   # factorized (E -> H) and E = H
def test_electra_model_every_hidden_state(embedding_size):
    hf = hf_model(transformers.ElectraModel, embedding_size)
    mine = electra_from_transformers(hf)
    assert isinstance(mine, ElectraModel)
    assert (mine.encoder.embeddings.project is None) == (embedding_size == 32)
    ids, segments, mask = batch()
    with torch.no_grad():
        theirs = hf(ids, attention_mask=mask, token_type_ids=segments, output_hidden_states=True)
        ours = mine(ids, token_type_ids=segments, attention_mask=mask, output_hidden_states=True)
    assert len(ours.hidden_states) == len(theirs.hidden_states) == 3
    for i, (a, b) in enumerate(zip(ours.hidden_states, theirs.hidden_states)):
        assert gap(a, b) <= ATOL, f"hidden state {i}"
    assert gap(ours.last_hidden_state, theirs.last_hidden_state) <= ATOL


def test_discriminator_logits_match():
    hf = hf_model(transformers.ElectraForPreTraining)
    mine = electra_from_transformers(hf)
    assert isinstance(mine, ElectraDiscriminator)
    ids, segments, mask = batch()
    with torch.no_grad():
        theirs = hf(ids, attention_mask=mask, token_type_ids=segments).logits
        ours = mine(ids, token_type_ids=segments, attention_mask=mask)
    assert gap(ours, theirs) <= ATOL


def test_name_map_covers_every_parameter_once():
    hf = hf_model(transformers.ElectraForPreTraining)
    mine = electra_from_transformers(hf)
    names = electra_name_map(mine)
    assert set(names) == set(dict(mine.named_parameters()))
    assert set(names.values()) == set(hf.state_dict())


def test_wrong_model_type_is_a_clear_error():
    with pytest.raises(TypeError, match="ElectraModel or ElectraForPreTraining"):
        electra_from_transformers(hf_model(transformers.ElectraForMaskedLM))
