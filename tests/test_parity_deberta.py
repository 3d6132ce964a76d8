"""minibert's DeBERTa and Hugging Face's DebertaModel / DebertaV2Model compute the same numbers.

Tiny random models from configs (no downloads), eval mode, a batch with padding. Every bias and
LayerNorm is perturbed away from its initial 0 / 1, so a mis-mapped bias would show.

Supported Hugging Face options (anything else raises a ValueError naming the fix):
relative_attention=True; pos_att_type any subset of c2p|p2c; position_biased_input True or False;
max_relative_positions; type_vocab_size; v2: position_buckets, share_att_key, norm_rel_ebd
'none' | 'layer_norm'.

Hidden states are compared at the real tokens. Padding positions differ on purpose: minibert
zeroes the attention rows of padding queries (DeBERTa's XSoftmax), while transformers 5 gives
them uniform attention; neither reaches a real token, which never attends to padding.
"""

import os

import pytest
import torch
from padded import padded_batch

from minibert.interop import deberta_config_from_transformers, deberta_from_transformers

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
transformers = pytest.importorskip("transformers")

ATOL = 1e-5
BASE = dict(vocab_size=99, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
            intermediate_size=37, max_position_embeddings=64, relative_attention=True)

V1_CASES = {
    "c2p|p2c, no absolute": dict(pos_att_type="c2p|p2c", position_biased_input=False),
    "c2p|p2c, absolute, k=5, segments": dict(pos_att_type="c2p|p2c", position_biased_input=True,
                                             max_relative_positions=5, type_vocab_size=2),
    "c2p only, k=8": dict(pos_att_type="c2p", position_biased_input=False,
                          max_relative_positions=8),
    "p2c only": dict(pos_att_type="p2c", position_biased_input=False),
}
V2_CASES = {
    "buckets 8/16, shared keys, normed table": dict(
        pos_att_type="p2c|c2p", position_biased_input=False, share_att_key=True,
        position_buckets=8, max_relative_positions=16, norm_rel_ebd="layer_norm"),
    "own position projections, no buckets": dict(pos_att_type="p2c|c2p",
                                                 position_biased_input=False,
                                                 share_att_key=False),
    "c2p only, buckets 4/10, absolute, segments": dict(
        pos_att_type="c2p", position_biased_input=True, share_att_key=False,
        position_buckets=4, max_relative_positions=10, type_vocab_size=2),
}


def hf_model(version, **changes):
    torch.manual_seed(0)
    if version == 1:
        model = transformers.DebertaModel(transformers.DebertaConfig(**{**BASE, **changes}))
    else:
        model = transformers.DebertaV2Model(transformers.DebertaV2Config(**{**BASE, **changes}))
    with torch.no_grad():
        for parameter in model.parameters():
            if parameter.ndim == 1:                  # biases and LayerNorms
                parameter.add_(0.1 * torch.randn_like(parameter))
    return model.eval()


def batch():
    return padded_batch()


def compare(hf):
    mine = deberta_from_transformers(hf)
    ids, segments, mask = batch()
    if hf.config.type_vocab_size == 0:
        segments = None
    with torch.no_grad():
        theirs = hf(ids, attention_mask=mask, token_type_ids=segments, output_hidden_states=True,
                    output_attentions=True)
        ours = mine(ids, token_type_ids=segments, attention_mask=mask, output_attentions=True)
    real = mask.bool()
    assert len(ours.hidden_states) == len(theirs.hidden_states) == 3
    for i, (a, b) in enumerate(zip(ours.hidden_states, theirs.hidden_states)):
        gap = (a - b)[real].abs().max().item()
        assert gap <= ATOL, f"hidden state {i}: max difference {gap:.2e} > {ATOL}"
    for i, (a, b) in enumerate(zip(ours.attentions, theirs.attentions)):
        rows = real[:, None, :, None] & real[:, None, None, :]
        gap = (a - b).masked_fill(~rows, 0).abs().max().item()
        assert gap <= ATOL, f"attention map {i}: max difference {gap:.2e}"


@pytest.mark.parametrize("changes", V1_CASES.values(), ids=V1_CASES.keys())
def test_deberta_v1_hidden_states_match(changes):
    compare(hf_model(1, **changes))


@pytest.mark.parametrize("changes", V2_CASES.values(), ids=V2_CASES.keys())
def test_deberta_v2_hidden_states_match(changes):
    compare(hf_model(2, **changes))


def test_the_buckets_really_compress_in_the_v2_case():
    config = deberta_config_from_transformers(hf_model(2, **V2_CASES[
        "buckets 8/16, shared keys, normed table"]).config)
    assert config.position_buckets == 8 and config.share_att_key and config.norm_relative
    from minibert.disentangled import log_bucket_positions, relative_positions
    buckets = log_bucket_positions(relative_positions(12, 12), 8, 16)
    assert int(buckets.max()) < 11                   # distance 11 got a compressed bucket


@pytest.mark.parametrize("version, changes, words", [
    (1, dict(relative_attention=False), "relative_attention"),
    (1, dict(pos_att_type="c2p|p2p"), "pos_att_type"),
    (1, dict(pos_att_type="c2p", talking_head=True), "talking_head"),
    (2, dict(pos_att_type="c2p", conv_kernel_size=3), "conv_kernel_size"),
    (2, dict(pos_att_type="c2p", embedding_size=16), "embedding_size"),
])
def test_unsupported_options_raise_a_clear_error(version, changes, words):
    config_class = transformers.DebertaConfig if version == 1 else transformers.DebertaV2Config
    with pytest.raises(ValueError, match=words):
        deberta_config_from_transformers(config_class(**{**BASE, **changes}))


def test_other_models_are_refused():
    bert = transformers.BertModel(transformers.BertConfig(
        vocab_size=99, hidden_size=32, num_hidden_layers=1, num_attention_heads=4,
        intermediate_size=37))
    with pytest.raises(TypeError, match="DebertaModel"):
        deberta_from_transformers(bert)
