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
    """Draw one head's attention map and print its strongest links; the plain function behind
    `attention_explorer`.

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
    strongest = probabilities.max(dim=-1)                                    # (T,) x2
    first = int(strongest.indices[0])
    print(f"layer {layer}, head {head}: the strongest link of each token averages "
          f"{strongest.values.mean().item():.3f}; {tokens[0]!r} attends most to "
          f"{tokens[first]!r} ({strongest.values[0].item():.3f})")
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


def show_early_exit(all_logits, labels, speed: float = 0.5, *, layer_cost: float = 1.0,
                    branch_cost: float = 0.0, ax=None):
    """FastBERT at one speed threshold: accuracy, cost, and where the samples exit.

    The plain function behind `early_exit_slider`. all_logits: (L, B, N) from
    `FastBertForSequenceClassification(...)`; labels: (B,). layer_cost / branch_cost: the
    cost of one layer and of one classifier (e.g. from `layer_flops` and `branch_flops`).
    Returns a dict of the numbers it printed.
    """
    import torch

    from ..models.fastbert import exit_cost, simulate_early_exit

    if all_logits.dim() != 3 or all_logits.shape[1] != len(labels):
        raise ValueError(f"all_logits must be (layers, batch, classes) with batch = "
                         f"len(labels) = {len(labels)}, got {tuple(all_logits.shape)}")
    num_layers = all_logits.shape[0]
    out = simulate_early_exit(all_logits, speed)
    accuracy = (out.logits.argmax(-1) == labels).float().mean().item()
    cost = exit_cost(out.exit_layer, layer_cost, branch_cost).mean().item()
    full = num_layers + branch_cost / layer_cost
    counts = torch.bincount(out.exit_layer, minlength=num_layers + 1)[1:]   # (L,)
    if ax is None:
        _, ax = plt.subplots(figsize=(5.5, 3.2))
    ax.bar(range(1, num_layers + 1), counts.tolist())
    ax.set(xlabel="exit layer", ylabel="samples", title=f"speed = {speed:.2f}: accuracy "
           f"{accuracy:.3f}, {cost:.2f} layers, speed-up {full / cost:.2f}x")
    print(f"speed {speed:.2f}: accuracy {accuracy:.3f}, average cost {cost:.2f} layers "
          f"(full model {full:.2f}), speed-up {full / cost:.2f}x")
    return {"accuracy": accuracy, "cost": cost, "speedup": full / cost}


def early_exit_slider(all_logits, labels, *, layer_cost: float = 1.0, branch_cost: float = 0.0):
    """A speed slider (0 to 1) that redraws `show_early_exit`. Returns the widget."""
    import ipywidgets as widgets

    def draw(speed: float):
        show_early_exit(all_logits, labels, speed, layer_cost=layer_cost,
                        branch_cost=branch_cost)
        plt.show()

    return widgets.interactive(
        draw, speed=widgets.FloatSlider(value=0.5, min=0.0, max=1.0, step=0.05,
                                        description="speed"))


# ---------------------------------------------------------------------------------------------
# the temperature slider (lesson 05, DistilBERT)


def show_temperature(logits, temperature: float = 1.0, labels: Sequence[str] | None = None,
                     top: int = 12, ax=None):
    """Bars of softmax(logits / T) for one distribution; the plain function behind
    `temperature_explorer`. Returns (ax, probabilities).

    logits: (C,) one row of a teacher's scores (a tensor or a list). The `top` classes by logit
    are drawn, in order, with the T = 1 probabilities as outlines for comparison; the title (and
    a printed line, with the top class's probability) gives the entropy in bits, which grows as
    T flattens the distribution.
    """
    import torch

    from ..distill import softmax_with_temperature

    logits = torch.as_tensor(logits, dtype=torch.float32).detach()
    if logits.dim() != 1:
        raise ValueError(f"show_temperature draws one distribution: pass a (C,) row of logits, "
                         f"got shape {tuple(logits.shape)} (select a row, e.g. logits[0])")
    if labels is not None and len(labels) != len(logits):
        raise ValueError(f"got {len(labels)} labels for {len(logits)} logits")
    probabilities = softmax_with_temperature(logits, temperature)            # (C,)
    plain = softmax_with_temperature(logits, 1.0)                             # (C,)
    entropy = -(probabilities * probabilities.clamp_min(1e-12).log2()).sum().item()
    order = logits.argsort(descending=True)[:top]
    names = [labels[i] if labels is not None else str(int(i)) for i in order]
    if ax is None:
        _, ax = plt.subplots(figsize=(6.5, 3.4))
    positions = range(len(order))
    ax.bar(positions, probabilities[order].numpy(), color="C0", label=f"T = {temperature:g}")
    ax.bar(positions, plain[order].numpy(), fill=False, edgecolor="C3", label="T = 1")
    ax.set_xticks(list(positions), names, rotation=45, ha="right")
    ax.set(ylim=(0, 1), ylabel="probability",
           title=f"softmax(z / T), T = {temperature:g}: entropy {entropy:.2f} bits")
    ax.legend()
    print(f"T = {temperature:g}: entropy {entropy:.2f} bits; top class {names[0]!r} at "
          f"{probabilities[order[0]].item():.3f} (at T = 1: {plain[order[0]].item():.3f})")
    return ax, probabilities


def temperature_explorer(logits, labels: Sequence[str] | None = None, top: int = 12):
    """A slider over T (0.25 to 16, log scale) that redraws `show_temperature`."""
    import ipywidgets as widgets

    def draw(temperature: float):
        show_temperature(logits, temperature, labels, top)
        plt.show()

    return widgets.interactive(
        draw,
        temperature=widgets.FloatLogSlider(value=1.0, base=2, min=-2, max=4, step=0.25,
                                           description="T"),
    )


# ---------------------------------------------------------------------------------------------
# what the discriminator flags (lesson 06, ELECTRA)


def show_detection(tokens: Sequence[str], p_replaced, is_replaced, originals: Sequence[str],
                   ax=None):
    """Bars of a discriminator's P(replaced) for each token of one sequence; the plain function
    behind `detection_explorer`. Returns the axes.

    tokens: the T tokens the discriminator read (padding left out). p_replaced: (T,) its
    probabilities. is_replaced: (T,) the labels, 1 where the generator's sample differs from the
    original. originals: the T original tokens, written under each replaced one. Replaced
    tokens are red, the rest blue; a perfect discriminator puts the red bars at 1 and the blue
    ones at 0. The same means are printed, after the sequence's first tokens.
    """
    import torch

    p_replaced = torch.as_tensor(p_replaced, dtype=torch.float32).detach().flatten()
    is_replaced = torch.as_tensor(is_replaced).detach().flatten().bool()
    if not len(tokens) == len(p_replaced) == len(is_replaced) == len(originals):
        raise ValueError(f"got {len(tokens)} tokens, {len(p_replaced)} probabilities, "
                         f"{len(is_replaced)} labels and {len(originals)} originals: pass one of "
                         "each per token of the same sequence, padding left out")
    if len(tokens) == 0 or p_replaced.min() < 0 or p_replaced.max() > 1:
        raise ValueError("p_replaced must hold one probability in [0, 1] per token: pass "
                         "torch.sigmoid(disc_logits), not the logits")
    if ax is None:
        _, ax = plt.subplots(figsize=(max(6.0, 0.42 * len(tokens)), 3.6))
    positions = list(range(len(tokens)))
    colors = ["C3" if replaced else "C0" for replaced in is_replaced.tolist()]
    ax.bar(positions, p_replaced.numpy(), color=colors)
    labels = [f"{token}\n({original})" if replaced else token
              for token, original, replaced in zip(tokens, originals, is_replaced.tolist())]
    ax.set_xticks(positions, labels, rotation=90, fontsize=8)
    ax.axhline(0.5, color="gray", linestyle=":", linewidth=1)
    flagged = p_replaced[is_replaced].mean().item() if is_replaced.any() else float("nan")
    kept = p_replaced[~is_replaced].mean().item() if (~is_replaced).any() else float("nan")
    ax.set(ylim=(0, 1), ylabel="P(replaced)",
           title=f"red = replaced (original in brackets): mean {flagged:.2f}; others {kept:.2f}")
    print(f"{' '.join(tokens[:6])} ...: {int(is_replaced.sum())} of {len(tokens)} tokens "
          f"replaced, mean P(replaced) {flagged:.2f} on them and {kept:.2f} on the others")
    return ax


def detection_explorer(examples: Sequence[dict]):
    """A slider over sequences that redraws `show_detection`. Returns the widget.

    examples: one dict per sequence with the keys of `show_detection`'s arguments
    (tokens, p_replaced, is_replaced, originals).
    """
    import ipywidgets as widgets

    if len(examples) == 0:
        raise ValueError("detection_explorer needs at least one example")

    def draw(example: int):
        show_detection(**examples[example])
        plt.show()

    return widgets.interactive(
        draw, example=widgets.IntSlider(value=0, min=0, max=len(examples) - 1,
                                        description="sequence"))


# ---------------------------------------------------------------------------------------------
# a spelling corrector on a sentence you type (lesson 12, Soft-Masked BERT)


def show_correction(chars: Sequence[str], p, output: str, ax=None):
    """Bars of each character's detection probability, the correction written under each; the
    plain function behind `correction_explorer`. Returns the axes.

    chars: the characters read. p: their detection probabilities in [0, 1], or None (a
    corrector without a detector: the bars are left out). output: the corrected sentence, of
    the same length; changed characters are red and shown as "written -> corrected". A line
    with the same facts is printed.
    """
    import numpy as np

    if len(output) != len(chars) or not chars:
        raise ValueError(f"got {len(chars)} characters and an output of {len(output)}: a "
                         "correction keeps the sentence's length (one output per character)")
    values = np.zeros(len(chars)) if p is None else np.asarray(p, dtype=float)
    if values.shape != (len(chars),) or values.min() < 0 or values.max() > 1:
        raise ValueError("p must hold one probability in [0, 1] per character (or be None)")
    if ax is None:
        _, ax = plt.subplots(figsize=(max(6.0, 0.42 * len(chars)), 3.4))
    changed = [a != b for a, b in zip(chars, output)]
    positions = list(range(len(chars)))
    ax.bar(positions, values, color=["C3" if c else "C0" for c in changed])
    labels = [f"{a}\n↓\n{b}" if c else a for a, b, c in zip(chars, output, changed)]
    ax.set_xticks(positions, labels, fontsize=9)
    ax.axhline(0.5, color="gray", linestyle=":", linewidth=1)
    title = f"correction: {output}" + ("" if any(changed) else " (unchanged)")
    ax.set(ylim=(0, 1), ylabel="p (detection)" if p is not None else "(no detector)",
           title=title)
    top = int(values.argmax())
    print(f"{''.join(chars)} -> {output}: {sum(changed)} of {len(chars)} characters changed"
          + (f"; highest p {values[top]:.2f} on {chars[top]!r}" if p is not None else ""))
    return ax


def correction_explorer(correct, sentence: str = ""):
    """A text box: type a sentence, see `show_correction` of `correct(sentence)`, a function
    returning a dict with chars, p and output (e.g. `sighan.correct_sentence` with its model).
    Returns the widget."""
    import ipywidgets as widgets

    def draw(sentence: str):
        if not sentence:
            print("type a sentence")
            return
        result = correct(sentence)
        show_correction(result["chars"], result["p"], result["output"])
        plt.show()

    return widgets.interactive(
        draw, sentence=widgets.Text(value=sentence, description="sentence",
                                    continuous_update=False))
