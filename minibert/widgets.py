"""Interactive views for the lessons, built on ipywidgets.

Each widget wraps a plain function that does the real work and also runs headless (in tests,
under nbval, in a script): the widget only adds sliders that call it again. So a lesson can
always show the plain function's result with default arguments, whatever the viewer.
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt

from . import plots


def show_attention(attentions: Sequence, tokens: Sequence[str], layer: int = 0, head: int = 0,
                   example: int = 0, ax=None):
    """Draw one head's attention map; the plain function behind `attention_explorer`.

    attentions: the per-layer maps a model returns with output_attentions=True,
                L tensors of shape (B, heads, T, T). tokens: the T token strings of `example`.
    """
    num_layers = len(attentions)
    if num_layers == 0:
        raise ValueError("no attention maps: call the model with output_attentions=True")
    batch, num_heads, length, _ = attentions[0].shape
    if not 0 <= layer < num_layers:
        raise ValueError(f"layer must be in [0, {num_layers}), got {layer}")
    if not 0 <= head < num_heads:
        raise ValueError(f"head must be in [0, {num_heads}), got {head}")
    if not 0 <= example < batch:
        raise ValueError(f"example must be in [0, {batch}), got {example}")
    if len(tokens) != length:
        raise ValueError(f"got {len(tokens)} tokens for maps over {length} positions: pass the "
                         f"tokens of the same (padded) input")
    if ax is None:
        _, ax = plt.subplots(figsize=(5.5, 4.8))
    probabilities = attentions[layer][example, head].detach()                # (T, T)
    plots.plot_attention(probabilities, tokens, ax=ax, title=f"layer {layer}, head {head}")
    return ax


def attention_explorer(attentions: Sequence, tokens: Sequence[str], example: int = 0):
    """Sliders over layer and head that redraw `show_attention`. Returns the widget."""
    import ipywidgets as widgets

    num_heads = attentions[0].shape[1]

    def draw(layer: int, head: int):
        show_attention(attentions, tokens, layer=layer, head=head, example=example)
        plt.show()

    return widgets.interactive(
        draw,
        layer=widgets.IntSlider(value=0, min=0, max=len(attentions) - 1, description="layer"),
        head=widgets.IntSlider(value=0, min=0, max=num_heads - 1, description="head"),
    )
