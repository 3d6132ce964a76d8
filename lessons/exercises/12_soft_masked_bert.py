"""The exercises of lesson 12_soft_masked_bert: each one's reference, inputs and hint.

`minibert.check` loads this file; the lesson grades an answer with
`check.grade(name, my_function)`, and `lessons/solutions/12_soft_masked_bert.py` answers them.
"""

from __future__ import annotations

import torch

from minibert.check import register

# ---------------------------------------------------------------------------------------------
# exercises "soft_mask" and "sentence_detection": Soft-Masked BERT (lesson 12)


def _reference_soft_mask(p: torch.Tensor, e: torch.Tensor, e_mask: torch.Tensor) -> torch.Tensor:
    from minibert.models.soft_masked_bert import soft_mask

    return soft_mask(p, e, e_mask)


def _soft_mask_inputs(trial: int, generator: torch.Generator) -> tuple:
    """Trial 0: one sentence, p of exactly 0, 1 and 0.5; then random batches whose T differs
    from H (a missing unsqueeze cannot broadcast by luck)."""
    if trial == 0:
        p = torch.tensor([[0.0, 1.0, 0.5]])                                      # (1, 3)
        e = torch.randn(1, 3, 4, generator=generator)                            # (1, 3, 4)
        return p, e, torch.randn(1, 3, 4, generator=generator)
    B, T, H = [(2, 5, 8), (3, 7, 4), (1, 9, 6), (4, 6, 10), (2, 3, 16)][trial % 5]
    p = torch.rand(B, T, generator=generator)                                    # (B, T)
    e = torch.randn(B, T, H, generator=generator)                                # (B, T, H)
    e_mask = torch.randn(B, T, H, generator=generator)                           # (B, T, H)
    return p, e, e_mask


register(
    "soft_mask",
    _reference_soft_mask,
    _soft_mask_inputs,
    hint=("p is (B, T) and the embeddings (B, T, H): give p a last axis with p.unsqueeze(-1), "
          "then p * e_mask + (1 - p) * e. p is the probability of an ERROR, so p = 1 means "
          "'use [MASK]' and p = 0 means 'keep the character'"),
    trials=6,
    lesson="12_soft_masked_bert",
)


def _reference_sentence_detection(sources: list, predictions: list,
                                  targets: list) -> tuple[float, float, float, float]:
    from minibert.spelling import sentence_metrics

    s = sentence_metrics(sources, predictions, targets)
    return s["d_acc"], s["d_p"], s["d_r"], s["d_f1"]


def _sentence_detection_inputs(trial: int, generator: torch.Generator) -> tuple:
    """Trial 0: the lesson's four sentences; then random sentences over a 6-letter alphabet
    with gold errors, missed errors, false alarms and right positions with wrong letters."""
    if trial == 0:
        return (["今天天汽好", "我们去学校", "他很高心", "你好吗"],
                ["今天天气好", "我们去学笑", "他很高星", "你好吗"],
                ["今天天气好", "我们去学校", "他很高兴", "你好吗"])
    letters = "abcdef"
    sources, predictions, targets = [], [], []
    for _ in range(6 + 3 * trial):
        n = int(torch.randint(3, 9, (1,), generator=generator))
        target = [letters[int(i)] for i in torch.randint(0, 6, (n,), generator=generator)]
        source, prediction = list(target), list(target)
        for i in range(n):
            roll = float(torch.rand(1, generator=generator))
            other = letters[(letters.index(target[i]) + 1) % 6]
            if roll < 0.15:                          # a gold error the model fixes
                source[i] = other
            elif roll < 0.25:                        # a gold error the model misses
                source[i] = prediction[i] = other
            elif roll < 0.30:                        # found, but the wrong letter
                source[i] = other
                prediction[i] = letters[(letters.index(target[i]) + 2) % 6]
            elif roll < 0.35:                        # a false alarm
                prediction[i] = other
        sources.append("".join(source))
        predictions.append("".join(prediction))
        targets.append("".join(target))
    return sources, predictions, targets


register(
    "sentence_detection",
    _reference_sentence_detection,
    _sentence_detection_inputs,
    hint=("per sentence: gold = {i: source[i] != target[i]}, flagged = {i: source[i] != "
          "prediction[i]}; a sentence is right when flagged == gold (the letters do not matter "
          "for detection). accuracy = right / all; precision = right sentences WITH gold errors "
          "/ sentences with any flag; recall = the same / sentences with gold errors; F1 = "
          "2PR / (P + R), and 0.0 when a denominator is 0"),
    trials=6,
    output_names=("accuracy", "precision", "recall", "f1"),
    lesson="12_soft_masked_bert",
)
