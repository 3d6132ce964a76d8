"""ALBERT: factorized embeddings, cross-layer sharing, SOP pairs, Figure 1's measure, HF parity."""

from __future__ import annotations

import math
import os

import pytest
import torch

from minibert import data
from minibert.config import BertConfig
from minibert.measure import count_parameters, layer_transitions
from minibert.models import AlbertForPreTraining, AlbertModel, albert_config

os.environ.setdefault("HF_HUB_OFFLINE", "1")

V, H, E, L, FFN = 100, 32, 8, 3, 64


def tiny(sharing: str, embedding_size: int = E) -> BertConfig:
    return BertConfig(vocab_size=V, hidden_size=H, num_layers=L, num_heads=4,
                      intermediate_size=FFN, embedding_size=embedding_size, max_position=16,
                      sharing=sharing, activation="gelu_tanh", dropout=0.0,
                      attention_dropout=0.0)


def layer_params(sharing: str) -> int:
    attention = 4 * (H * H + H) + 2 * H          # Q, K, V, O and the attention LayerNorm
    ffn = H * FFN + FFN + FFN * H + H + 2 * H     # up, down and the FFN LayerNorm
    copies = {"none": (L, L), "all": (1, 1), "attention": (1, L), "ffn": (L, 1)}[sharing]
    return copies[0] * attention + copies[1] * ffn


@pytest.mark.parametrize("sharing", ["none", "all", "attention", "ffn"])
def test_parameter_counts_count_shared_weights_once(sharing):
    model = AlbertModel(tiny(sharing), add_pooler=False)
    embeddings = V * E + 16 * E + 2 * E + 2 * E + (E * H + H)   # tables, LayerNorm(E), E -> H
    assert count_parameters(model) == embeddings + layer_params(sharing)


def test_factorized_embedding_table_is_v_by_e_plus_e_by_h():
    factorized = AlbertModel(tiny("none"), add_pooler=False).encoder.embeddings
    full = AlbertModel(tiny("none", embedding_size=H), add_pooler=False).encoder.embeddings
    assert factorized.word.weight.shape == (V, E)
    assert factorized.project.weight.shape == (H, E)
    assert full.project is None and full.word.weight.shape == (V, H)


@pytest.mark.parametrize("sharing,attention_same,ffn_same", [
    ("none", False, False), ("all", True, True), ("attention", True, False),
    ("ffn", False, True)])
def test_sharing_reuses_module_objects(sharing, attention_same, ffn_same):
    layers = AlbertModel(tiny(sharing)).encoder.layers
    for layer in layers[1:]:
        assert (layer.attention is layers[0].attention) == attention_same
        assert (layer.feed_forward is layers[0].feed_forward) == ffn_same


@pytest.mark.parametrize("sharing", ["all", "attention", "ffn"])
def test_gradient_reaches_shared_weights_from_every_layer(sharing):
    torch.manual_seed(0)
    model = AlbertModel(tiny(sharing))
    ids = torch.randint(5, V, (2, 7))
    out = model(ids, output_hidden_states=True)
    shared = (model.encoder.layers[0].attention.attention.query.weight if sharing != "ffn"
              else model.encoder.layers[0].feed_forward.up.weight)
    # A loss that reads only layer l's output still reaches the shared weight for every l,
    # and the full gradient is the sum of the per-layer contributions.
    for l in range(1, L + 1):
        (grad,) = torch.autograd.grad(out.hidden_states[l].pow(2).sum(), shared,
                                      retain_graph=True)
        assert grad.abs().sum() > 0, f"no gradient from layer {l}"
    out.last_hidden_state.sum().backward()
    assert shared.grad is not None and shared.grad.abs().sum() > 0


def test_pretraining_heads_shapes_and_tied_decoder():
    torch.manual_seed(0)
    model = AlbertForPreTraining(tiny("all"))
    ids = torch.randint(5, V, (2, 6))
    labels = torch.full_like(ids, -100)
    labels[:, 2] = ids[:, 2]
    out = model(ids, mlm_labels=labels, sop_labels=torch.tensor([0, 1]))
    assert out.mlm_logits.shape == (2, V) and out.sop_logits.shape == (2, 2)
    assert torch.isfinite(out.loss) and out.sop_loss is not None
    assert model.mlm.word_embeddings.weight is model.albert.word_embeddings.weight
    assert model.mlm.dense.weight.shape == (E, H)   # the MLM transform maps H -> E


def test_albert_config_defaults():
    config = albert_config("bert-micro", vocab_size=500)
    assert (config.embedding_size, config.sharing, config.activation) == (32, "all", "gelu_tanh")


def test_sop_negatives_are_the_same_two_segments_swapped():
    docs = [[["a0"], ["a1"], ["a2"]], [["b0"], ["b1"]], [["c0"], ["c1"], ["c2"], ["c3"]]]
    examples = data.sop_examples(docs, seed=0)
    assert len(examples) == 2 + 1 + 3
    assert sorted(label for *_, label in examples) == [0, 0, 0, 1, 1, 1]
    for a, b, label in examples:
        doc = next(d for d in docs if a in d)
        assert b in doc, "both segments come from one document"
        i, j = doc.index(a), doc.index(b)
        assert (j - i) == (1 if label == 0 else -1)
    assert data.sop_examples(docs, seed=0) == examples          # deterministic
    assert len(data.sop_examples(docs, seed=1, n_examples=4)) == 4
    with pytest.raises(ValueError, match="no document has two sentences"):
        data.sop_examples([[["x"]]], seed=0)


def test_layer_transitions_on_a_hand_made_example():
    x0 = torch.tensor([[[1.0, 0.0], [0.0, 2.0], [9.0, 9.0]]])   # (B=1, T=3, H=2); token 2 = pad
    x1 = torch.tensor([[[0.0, 1.0], [0.0, 4.0], [-9.0, 0.0]]])  # rotated 90 deg; stretched x2
    x2 = x1.clone()                                              # a layer that changes nothing
    mask = torch.tensor([[1, 1, 0]])
    distances, angles = layer_transitions((x0, x1, x2), mask)
    assert distances[0] == pytest.approx((math.sqrt(2) + 2.0) / 2)
    assert angles[0] == pytest.approx((90.0 + 0.0) / 2)
    assert distances[1] == pytest.approx(0.0) and angles[1] == pytest.approx(0.0, abs=1e-4)
    with pytest.raises(ValueError, match="output_hidden_states=True"):
        layer_transitions((x0,), mask)


# ------------------------------------------------------------------------ parity with HF


transformers = pytest.importorskip("transformers")


def hf_albert_config(groups: int):
    return transformers.AlbertConfig(
        vocab_size=V, embedding_size=E, hidden_size=H, num_hidden_layers=L,
        num_hidden_groups=groups, inner_group_num=1, num_attention_heads=4,
        intermediate_size=FFN, max_position_embeddings=16, hidden_act="gelu_new",
        hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0, pad_token_id=0)


def padded_batch():
    generator = torch.Generator().manual_seed(0)
    ids = torch.randint(5, V, (3, 9), generator=generator)
    mask = torch.ones_like(ids)
    mask[1, 6:] = 0
    mask[2, 3:] = 0
    ids = ids.masked_fill(mask == 0, 0)
    types = torch.zeros_like(ids)
    types[:, 4:] = 1
    return ids, types, mask


@pytest.mark.parametrize("groups,sharing", [(1, "all"), (L, "none")])
def test_parity_with_transformers_albert_model(groups, sharing):
    from minibert.interop import albert_from_transformers

    torch.manual_seed(0)
    hf = transformers.AlbertModel(hf_albert_config(groups)).eval()
    ours = albert_from_transformers(hf)
    assert ours.config.sharing == sharing
    assert count_parameters(ours) == count_parameters(hf)
    ids, types, mask = padded_batch()
    with torch.no_grad():
        expected = hf(input_ids=ids, token_type_ids=types, attention_mask=mask)
        got = ours(ids, token_type_ids=types, attention_mask=mask)
    real = mask.bool()
    torch.testing.assert_close(got.last_hidden_state[real],
                               expected.last_hidden_state[real], atol=1e-5, rtol=0)
    torch.testing.assert_close(got.pooled, expected.pooler_output, atol=1e-5, rtol=0)


def test_parity_with_transformers_albert_for_pretraining():
    from minibert.interop import albert_from_transformers

    torch.manual_seed(1)
    hf = transformers.AlbertForPreTraining(hf_albert_config(1)).eval()
    ours = albert_from_transformers(hf)
    ids, types, mask = padded_batch()
    with torch.no_grad():
        expected = hf(input_ids=ids, token_type_ids=types, attention_mask=mask)
        got = ours(ids, token_type_ids=types, attention_mask=mask)
    real = mask.bool()
    torch.testing.assert_close(got.mlm_logits[real], expected.prediction_logits[real],
                               atol=1e-5, rtol=0)
    torch.testing.assert_close(got.sop_logits, expected.sop_logits, atol=1e-5, rtol=0)


def test_unsupported_hf_grouping_names_the_fix():
    from minibert.interop import albert_config_from_transformers

    config = hf_albert_config(1)
    config.inner_group_num = 2
    with pytest.raises(ValueError, match="num_hidden_groups=1"):
        albert_config_from_transformers(config)
