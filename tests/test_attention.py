"""The written-out attention equals PyTorch's fused kernel, and its maps mean what they say."""

import pytest
import torch
import torch.nn.functional as F

from minibert.attention import (
    MultiHeadSelfAttention,
    attention_bias,
    scaled_dot_product_attention,
)
from minibert.config import BertConfig

B, HEADS, T, D = 3, 4, 7, 8
LENGTHS = (7, 4, 1)                       # real tokens per sequence; the rest is padding


def qkv(seed=0):
    generator = torch.Generator().manual_seed(seed)
    return [torch.randn(B, HEADS, T, D, generator=generator) for _ in range(3)]


def padding_mask():
    """(B, T): 1 for real tokens, 0 for padding."""
    return (torch.arange(T)[None, :] < torch.tensor(LENGTHS)[:, None]).long()


def assert_close(a, b, atol=1e-6):
    gap = (a - b).abs().max().item()
    assert gap <= atol, f"max difference {gap:.2e} > {atol}"


def test_unmasked_matches_torch():
    q, k, v = qkv()
    ours, _, _ = scaled_dot_product_attention(q, k, v)
    assert_close(ours, F.scaled_dot_product_attention(q, k, v))


def test_padding_bias_matches_torch():
    q, k, v = qkv()
    bias = attention_bias(padding_mask(), T, T)
    assert bias.shape == (B, 1, 1, T)
    ours, _, _ = scaled_dot_product_attention(q, k, v, bias)
    assert_close(ours, F.scaled_dot_product_attention(q, k, v, attn_mask=bias))
    boolean = padding_mask().bool()[:, None, None, :]                   # True = may attend
    assert_close(ours, F.scaled_dot_product_attention(q, k, v, attn_mask=boolean))


def test_causal_matches_torch():
    q, k, v = qkv()
    bias = attention_bias(None, T, T, causal=True)
    assert bias.shape == (1, 1, T, T)
    ours, probabilities, _ = scaled_dot_product_attention(q, k, v, bias)
    assert_close(ours, F.scaled_dot_product_attention(q, k, v, is_causal=True))
    assert torch.all(probabilities.triu(1) == 0), "a query attended to a later key"


def test_causal_with_padding_matches_torch():
    q, k, v = qkv()
    bias = attention_bias(padding_mask(), T, T, causal=True)
    assert bias.shape == (B, 1, T, T)
    ours, _, _ = scaled_dot_product_attention(q, k, v, bias)
    assert_close(ours, F.scaled_dot_product_attention(q, k, v, attn_mask=bias))


def test_no_mask_means_no_bias():
    assert attention_bias(None, T, T) is None


def test_probabilities_sum_to_one_and_ignore_padding():
    q, k, v = qkv()
    bias = attention_bias(padding_mask(), T, T)
    _, probabilities, _ = scaled_dot_product_attention(q, k, v, bias)
    assert_close(probabilities.sum(-1), torch.ones(B, HEADS, T))
    padded_keys = (padding_mask() == 0)[:, None, None, :].expand_as(probabilities)
    assert torch.all(probabilities[padded_keys] == 0), "padding keys must get exactly 0"
    assert torch.all(probabilities[~padded_keys] > 0)


def test_scale_is_one_over_sqrt_head_size():
    q, k, v = qkv()
    _, _, scores = scaled_dot_product_attention(q, k, v)
    assert_close(scores, q @ k.transpose(-2, -1) / D**0.5)


def config(**changes):
    settings = dict(hidden_size=32, num_heads=4, dropout=0.0, attention_dropout=0.0)
    return BertConfig(**{**settings, **changes})


def layers_with_same_weights():
    torch.manual_seed(0)
    slow = MultiHeadSelfAttention(config(use_sdpa=False))
    fast = MultiHeadSelfAttention(config(use_sdpa=True))
    fast.load_state_dict(slow.state_dict())
    return slow.eval(), fast.eval()


@pytest.mark.parametrize("masked", [False, True])
@pytest.mark.parametrize("causal", [False, True])
def test_multi_head_sdpa_equals_written_out(masked, causal):
    slow, fast = layers_with_same_weights()
    x = torch.randn(B, T, 32, generator=torch.Generator().manual_seed(2))
    bias = attention_bias(padding_mask() if masked else None, T, T, causal=causal)
    with torch.no_grad():
        assert_close(fast(x, bias).output, slow(x, bias).output)


def test_return_attention_shapes():
    slow, fast = layers_with_same_weights()
    x = torch.randn(B, T, 32)
    bias = attention_bias(padding_mask(), T, T)
    for layer in (slow, fast):                    # the fast path falls back when maps are asked
        out = layer(x, bias, return_attention=True)
        assert out.output.shape == (B, T, 32)
        assert out.probabilities.shape == (B, 4, T, T)
        assert out.scores.shape == (B, 4, T, T)
        assert_close(out.scores.softmax(-1), out.probabilities)
    plain = slow(x, bias)
    assert plain.probabilities is None and plain.scores is None
    assert_close(plain.output, slow(x, bias, return_attention=True).output)
