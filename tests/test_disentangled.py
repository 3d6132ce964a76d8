"""DeBERTa's disentangled attention: indices, buckets, the vectorized scores against the double
loop, masked query rows, the shared table, the Enhanced Mask Decoder, and clear errors."""

import math

import pytest
import torch

from minibert.disentangled import (
    RelativeEmbeddings,
    attention_span,
    disentangled_scores,
    disentangled_scores_loop,
    log_bucket_positions,
    masked_softmax,
    relative_index,
    relative_positions,
)
from minibert.models.deberta import DebertaConfig, DebertaForMaskedLM, DebertaModel, deberta_config


def test_relative_positions_are_query_minus_key():
    r = relative_positions(3, 4)
    assert r.tolist() == [[0, -1, -2, -3], [1, 0, -1, -2], [2, 1, 0, -1]]


def test_relative_index_clamps_instead_of_wrapping():
    r = torch.tensor([-10, -3, -2, 0, 1, 2, 9])
    assert relative_index(r, 2).tolist() == [0, 0, 0, 2, 3, 3, 3]


@pytest.mark.parametrize("r, bucket", [(0, 0), (5, 5), (128, 128), (129, 129), (150, 143),
                                       (256, 192), (511, 255)])
def test_log_bucket_values_for_256_buckets_and_max_512(r, bucket):
    got = log_bucket_positions(torch.tensor([r, -r]), 256, 512)
    assert got.tolist() == [bucket, -bucket]


def test_log_buckets_are_identity_up_to_half_and_monotone_beyond():
    r = torch.arange(-511, 512)
    b = log_bucket_positions(r, 256, 512)
    inside = r.abs() <= 128
    assert torch.equal(b[inside], r[inside])
    assert bool((b[1:] >= b[:-1]).all()) and int(b.abs().max()) == 255


def random_inputs(batch=2, heads=3, tq=6, tk=6, d=4, span=3, integer=True, seed=0):
    """Integer-valued float64 tensors: every product and sum is exact, so the loop and the
    vectorized version must agree bit for bit."""
    g = torch.Generator().manual_seed(seed)

    def draw(*shape):
        x = torch.randint(-3, 4, shape, generator=g).double()
        return x if integer else torch.randn(shape, generator=g, dtype=torch.float64)

    q, k = draw(batch, heads, tq, d), draw(batch, heads, tk, d)
    qr, kr = draw(heads, 2 * span, d), draw(heads, 2 * span, d)
    return q, k, qr, kr, relative_positions(tq, tk)


@pytest.mark.parametrize("terms", [("c2p", "p2c"), ("c2p",), ("p2c",), ()])
@pytest.mark.parametrize("span", [2, 3, 8])   # 2 and 3 clamp distances of up to 5
def test_vectorized_scores_equal_the_double_loop_exactly(terms, span):
    q, k, qr, kr, r = random_inputs(span=span)
    fast = disentangled_scores(q, k, qr, kr, relative_index(r, span), terms)
    slow = disentangled_scores_loop(q, k, qr, kr, r, span, terms)
    assert torch.equal(fast, slow)


def test_vectorized_scores_match_the_loop_when_queries_and_keys_differ_in_length():
    q, k, qr, kr, r = random_inputs(tq=4, tk=7, span=3, integer=False)
    fast = disentangled_scores(q, k, qr, kr, relative_index(r, 3))
    slow = disentangled_scores_loop(q, k, qr, kr, r, 3)
    assert torch.allclose(fast, slow, atol=1e-12)


def test_scale_is_one_over_sqrt_3d_and_p2c_uses_the_same_row_as_c2p():
    d, span = 4, 2
    q = torch.zeros(1, 1, 2, d, dtype=torch.float64)
    k = torch.zeros(1, 1, 2, d, dtype=torch.float64)
    q[0, 0, 1, 0] = 1.0                      # only query 1 has content
    k[0, 0, 0, 1] = 1.0                      # only key 0 has content
    kr = torch.zeros(1, 2 * span, d, dtype=torch.float64)
    qr = torch.zeros(1, 2 * span, d, dtype=torch.float64)
    kr[0, 1 + span, 0] = 5.0                 # row d(1, 0) = r + k = 1 + 2 = 3
    qr[0, 1 + span, 1] = 7.0                 # the same row, for p2c
    qr[0, -1 + span, 1] = 100.0              # row d(0, 1): the paper's d(j, i); must not be used
    scores = disentangled_scores(q, k, qr, kr, relative_index(relative_positions(2, 2), span))
    assert scores[0, 0, 1, 0].item() == pytest.approx((5.0 + 7.0) / math.sqrt(3 * d))
    assert scores[0, 0, 0, 1].item() == 0.0  # query 0 . Kr and key 1 . Qr are zero


def test_masked_query_rows_are_zero_and_real_rows_sum_to_one():
    scores = torch.randn(2, 3, 5, 5)
    mask = torch.tensor([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0]])
    p = masked_softmax(scores, mask)
    assert torch.equal(p[1, :, 3:], torch.zeros(3, 2, 5))           # padding queries
    assert torch.equal(p[1, :, :, 3:], torch.zeros(3, 5, 2))        # padding keys
    assert torch.allclose(p[0].sum(-1), torch.ones(3, 5))
    assert torch.allclose(p[1, :, :3].sum(-1), torch.ones(3, 3))


def tiny(**changes):
    settings = dict(vocab_size=50, max_position=32, dropout=0.0, attention_dropout=0.0)
    return deberta_config("bert-nano", **{**settings, **changes})


def test_the_relative_table_is_shared_by_every_layer_and_projections_are_not():
    model = DebertaModel(tiny(num_layers=3))
    tables = [p for n, p in model.named_parameters() if "relative" in n]
    assert len(tables) == 1 and tables[0].shape == (2 * 32, 64)
    keys = {id(layer.attention.attention.position_key) for layer in model.encoder.layers}
    assert len(keys) == 3


def test_slicing_the_v1_table_to_the_span_changes_no_score():
    config = tiny(max_relative=8)
    relative = RelativeEmbeddings(config).eval()
    rows, index = relative(5, 5)
    assert attention_span(5, 5, config) == 5 and rows.shape[0] == 10
    full = relative.table.weight                                   # (16, H), k = 8
    same_rows = full[relative_index(relative_positions(5, 5), 8)]
    assert torch.equal(rows[index], same_rows)


def test_padding_does_not_change_real_tokens_and_left_padding_is_invisible():
    torch.manual_seed(0)
    model = DebertaModel(tiny()).eval()
    ids = torch.randint(5, 50, (1, 6))
    with torch.no_grad():
        alone = model(ids).last_hidden_state
        right = model(torch.cat([ids, torch.zeros(1, 3, dtype=torch.long)], 1),
                      attention_mask=torch.tensor([[1] * 6 + [0] * 3])).last_hidden_state
        left = model(torch.cat([torch.zeros(1, 3, dtype=torch.long), ids], 1),
                     attention_mask=torch.tensor([[0] * 3 + [1] * 6])).last_hidden_state
    assert torch.allclose(right[:, :6], alone, atol=1e-6)
    # No absolute positions: shifting the real tokens right by masked padding changes nothing.
    assert torch.allclose(left[:, 3:], alone, atol=1e-6)


def test_emd_reuses_the_last_layer_and_sees_absolute_positions():
    torch.manual_seed(0)
    model = DebertaForMaskedLM(tiny(), emd=True).eval()
    names = [n for n, _ in model.named_parameters()]
    assert not any(n.startswith("emd.") and "layers" in n for n in names)   # no copy of a layer
    ids = torch.randint(5, 50, (1, 6))
    pad = torch.zeros(1, 3, dtype=torch.long)
    with torch.no_grad():
        alone = model(ids).decoded
        left = model(torch.cat([pad, ids], 1),
                     attention_mask=torch.tensor([[0] * 3 + [1] * 6])).decoded
    assert not torch.allclose(left[:, 3:], alone, atol=1e-4)   # Z[position] moved with the shift
    no_emd = DebertaForMaskedLM(tiny(), emd=False)
    assert sum(p.numel() for p in model.parameters()) - sum(
        p.numel() for p in no_emd.parameters()) == 32 * 64       # only the Z table is new


def test_mlm_loss_and_gradients_flow_to_the_shared_table():
    torch.manual_seed(0)
    model = DebertaForMaskedLM(tiny())
    ids = torch.randint(5, 50, (2, 7))
    labels = torch.full_like(ids, -100)
    labels[:, 2] = ids[:, 2]
    out = model(ids, mlm_labels=labels)
    out.loss.backward()
    assert out.logits.shape == (2, 50)
    assert model.deberta.encoder.relative.table.weight.grad.abs().sum() > 0


@pytest.mark.parametrize("changes, words", [
    (dict(relative_terms=("c2p", "p2p")), "relative_terms"),
    (dict(position_buckets=1), "position_buckets"),
    (dict(position_buckets=64, max_relative=20), "max_relative"),
    (dict(max_relative=-1), "max_relative"),
])
def test_bad_configs_say_what_to_change(changes, words):
    with pytest.raises(ValueError, match=words):
        DebertaConfig(**changes)


def test_the_emd_refuses_sequences_longer_than_its_position_table():
    model = DebertaForMaskedLM(tiny(max_position=8))
    with pytest.raises(ValueError, match="max_position"):
        model(torch.randint(5, 50, (1, 9)))
