"""Widgets wrap plain functions that run headless."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

from minibert.widgets import attention_explorer, show_attention  # noqa: E402


def maps(layers=2, batch=2, heads=3, length=5):
    return [torch.rand(batch, heads, length, length).softmax(-1) for _ in range(layers)]


def test_show_attention_draws_the_chosen_head():
    attentions = maps()
    ax = show_attention(attentions, list("abcde"), layer=1, head=2, example=1)
    image = ax.images[0].get_array()
    assert torch.allclose(torch.as_tensor(image.data).float(), attentions[1][1, 2], atol=1e-6)
    assert "layer 1, head 2" in ax.get_title()
    plt.close("all")


@pytest.mark.parametrize("kwargs, message", [
    (dict(layer=2), "layer must be in [0, 2)"),
    (dict(head=3), "head must be in [0, 3)"),
    (dict(example=5), "example must be in [0, 2)"),
])
def test_show_attention_rejects_out_of_range(kwargs, message):
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace(")", r"\)")):
        show_attention(maps(), list("abcde"), **kwargs)


def test_show_attention_needs_matching_tokens():
    with pytest.raises(ValueError, match="tokens"):
        show_attention(maps(), list("abc"))


def test_explorer_has_a_slider_per_layer_and_head():
    widget = attention_explorer(maps(layers=4, heads=2), list("abcde"))
    sliders = {child.description: child for child in widget.children if hasattr(child, "max")}
    assert sliders["layer"].max == 3 and sliders["head"].max == 1
    plt.close("all")
