"""Widgets wrap plain functions that run headless."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

from minibert.course.widgets import attention_explorer, show_attention  # noqa: E402


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


def test_show_detection_draws_one_bar_per_token_coloured_by_label():
    from minibert.course.widgets import show_detection

    tokens = ["[CLS]", "the", "cat", "ran", "[SEP]"]
    originals = ["[CLS]", "the", "dog", "ran", "[SEP]"]
    p = torch.tensor([0.1, 0.2, 0.9, 0.3, 0.0])
    ax = show_detection(tokens, p, torch.tensor([0, 0, 1, 0, 0]), originals)
    heights = [bar.get_height() for bar in ax.patches]
    assert heights == pytest.approx(p.tolist())
    red_rgba = matplotlib.colors.to_rgba("C3")
    red = [i for i, bar in enumerate(ax.patches) if bar.get_facecolor() == red_rgba]
    assert red == [2]
    assert [t.get_text() for t in ax.get_xticklabels()][2] == "cat\n(dog)"
    assert "mean 0.90; others 0.15" in ax.get_title()
    plt.close("all")


@pytest.mark.parametrize("p, labels, message", [
    (torch.tensor([0.1, 0.2]), torch.tensor([0, 1, 0]), "pass one of each per token"),
    (torch.tensor([-2.0, 0.5, 3.0]), torch.tensor([0, 1, 0]), "not the logits"),
])
def test_show_detection_names_the_fix_for_bad_input(p, labels, message):
    from minibert.course.widgets import show_detection

    with pytest.raises(ValueError, match=message):
        show_detection(list("abc"), p, labels, list("abd"))


def test_detection_explorer_has_a_slider_over_the_examples():
    from minibert.course.widgets import detection_explorer

    example = dict(tokens=list("ab"), p_replaced=[0.2, 0.7], is_replaced=[0, 1],
                   originals=list("ac"))
    widget = detection_explorer([example, example, example])
    slider = widget.children[0]
    assert (slider.min, slider.max, slider.description) == (0, 2, "sequence")
    plt.close("all")
    with pytest.raises(ValueError, match="at least one"):
        detection_explorer([])


# The views print their numbers, so a reader (and the browser suite) can read them off the page.

def test_show_attention_prints_the_strongest_links(capsys):
    attentions = [torch.tensor([[[[0.1, 0.9], [0.6, 0.4]]]])]                 # (1, 1, 2, 2)
    show_attention(attentions, ["a", "b"])
    line = capsys.readouterr().out.strip()
    assert line == "layer 0, head 0: the strongest link of each token averages 0.750; 'a' " \
                   "attends most to 'b' (0.900)"
    plt.close("all")


def test_show_temperature_prints_an_entropy_that_grows_with_t(capsys):
    from minibert.course.widgets import show_temperature

    logits = torch.tensor([3.0, 1.0, 0.0, -1.0])
    entropies = []
    for temperature in (0.5, 1.0, 4.0):
        show_temperature(logits, temperature, labels=list("wxyz"))
        line = capsys.readouterr().out
        assert line.startswith(f"T = {temperature:g}: entropy ") and "top class 'w'" in line
        entropies.append(float(line.split("entropy ")[1].split(" bits")[0]))
    assert entropies == sorted(entropies) and entropies[0] < entropies[-1]
    plt.close("all")


def test_show_detection_prints_the_two_means(capsys):
    from minibert.course.widgets import show_detection

    show_detection(["a", "b", "c", "d"], torch.tensor([0.9, 0.7, 0.2, 0.0]),
                   torch.tensor([1, 1, 0, 0]), ["a", "x", "c", "d"])
    assert capsys.readouterr().out.strip() == (
        "a b c d ...: 2 of 4 tokens replaced, mean P(replaced) 0.80 on them and 0.10 on the "
        "others")


def test_show_correction_marks_the_changed_characters(capsys):
    from minibert.course.widgets import show_correction

    ax = show_correction(list("他很高心"), [0.1, 0.05, 0.2, 0.9], "他很高兴")
    assert capsys.readouterr().out.strip() == \
        "他很高心 -> 他很高兴: 1 of 4 characters changed; highest p 0.90 on '心'"
    colors = [bar.get_facecolor() for bar in ax.patches]
    assert len(colors) == 4 and colors[3] != colors[0]               # the changed one stands out
    assert [bar.get_height() for bar in ax.patches] == pytest.approx([0.1, 0.05, 0.2, 0.9])
    assert "他很高兴" in ax.get_title()
    ax = show_correction(list("你好"), None, "你好")                 # no detector: flat bars
    assert "unchanged" in ax.get_title()
    plt.close("all")
    with pytest.raises(ValueError, match="keeps the sentence's length"):
        show_correction(list("你好"), None, "你")
    with pytest.raises(ValueError, match="in \\[0, 1\\]"):
        show_correction(list("你好"), [0.5, 2.0], "你好")


def test_correction_explorer_is_a_text_box_over_a_plain_function():
    from minibert.course.widgets import correction_explorer

    calls = []

    def correct(sentence):
        calls.append(sentence)
        return {"chars": list(sentence), "p": [0.5] * len(sentence), "output": sentence}

    widget = correction_explorer(correct, "你好")
    box = widget.children[0]
    assert (box.description, box.value) == ("sentence", "你好") and calls == ["你好"]
    plt.close("all")
