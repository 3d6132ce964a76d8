"""SIGHAN's scores: sentence-level and character-level detection and correction P/R/F1.

The task only has same-length substitutions: `source[i] != target[i]` marks an error at i, and
a corrector's output has the length of its input. The metrics compare three strings of equal
length: the source (with errors), the prediction and the target (gold).
"""

from __future__ import annotations

from collections.abc import Sequence

# ---------------------------------------------------------------------------------------------
# the metrics


def _check_lengths(sources, predictions, targets) -> None:
    if not len(sources) == len(predictions) == len(targets):
        raise ValueError(f"got {len(sources)} sources, {len(predictions)} predictions and "
                         f"{len(targets)} targets: pass one of each per sentence")
    for n, (s, p, t) in enumerate(zip(sources, predictions, targets)):
        if not len(s) == len(p) == len(t):
            raise ValueError(
                f"sentence {n}: source, prediction and target have lengths {len(s)}, {len(p)} "
                f"and {len(t)}; spelling correction here is same-length substitution, so drop "
                "pairs of different lengths (load_sighan2015 does) and keep one output "
                "character per input character"
            )


def _edits(source: str, other: str) -> set[tuple[int, str]]:
    """{(position, character)} where `other` differs from `source`."""
    return {(i, b) for i, (a, b) in enumerate(zip(source, other)) if a != b}


def _prf(true_positive: int, predicted: int, gold: int) -> tuple[float, float, float]:
    precision = true_positive / predicted if predicted else 0.0
    recall = true_positive / gold if gold else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1


def sentence_metrics(sources: Sequence[str], predictions: Sequence[str],
                     targets: Sequence[str]) -> dict[str, float]:
    """SIGHAN-style sentence-level detection and correction scores.

    For each sentence, gold edits = {(i, target[i]) : source[i] != target[i]} and predicted
    edits = {(i, prediction[i]) : source[i] != prediction[i]}.

    - detection: a sentence is right when the predicted positions equal the gold positions.
    - correction: a sentence is right when the predicted edits (position and character) equal
      the gold edits.
    - accuracy: right sentences / all sentences (a clean sentence left alone is right).
    - precision: right sentences that have gold errors / sentences the model changed
      (a false alarm on a clean sentence, or any wrong position, costs precision).
    - recall: right sentences that have gold errors / sentences that have gold errors.
    - F1: harmonic mean of precision and recall.

    Returns d_acc, d_p, d_r, d_f1, c_acc, c_p, c_r, c_f1 (fractions in [0, 1]).
    """
    _check_lengths(sources, predictions, targets)
    n = len(sources)
    changed = erroneous = 0
    right = {"d": 0, "c": 0}
    true_positive = {"d": 0, "c": 0}
    for source, prediction, target in zip(sources, predictions, targets):
        gold, predicted = _edits(source, target), _edits(source, prediction)
        changed += bool(predicted)
        erroneous += bool(gold)
        verdicts = {"d": {i for i, _ in predicted} == {i for i, _ in gold},
                    "c": predicted == gold}
        for level, ok in verdicts.items():
            right[level] += ok
            true_positive[level] += ok and bool(gold)
    scores = {}
    for level in ("d", "c"):
        p, r, f1 = _prf(true_positive[level], changed, erroneous)
        scores.update({f"{level}_acc": right[level] / n if n else 0.0,
                       f"{level}_p": p, f"{level}_r": r, f"{level}_f1": f1})
    return scores


def char_metrics(sources: Sequence[str], predictions: Sequence[str],
                 targets: Sequence[str]) -> dict[str, float]:
    """Character-level detection and correction precision, recall and F1.

    Counted over all sentences' positions: gold = positions with source != target, predicted =
    positions with source != prediction.
    - detection true positive: a predicted position that is a gold position.
    - correction true positive: a predicted position that is a gold position and whose
      character is the target's.
    - precision = true positives / predicted positions; recall = true positives / gold positions.

    Returns d_p, d_r, d_f1, c_p, c_r, c_f1.
    """
    _check_lengths(sources, predictions, targets)
    predicted = gold = detected = corrected = 0
    for source, prediction, target in zip(sources, predictions, targets):
        for s, p, t in zip(source, prediction, target):
            predicted += s != p
            gold += s != t
            detected += s != p and s != t
            corrected += s != p and s != t and p == t
    scores = {}
    for level, hits in (("d", detected), ("c", corrected)):
        p, r, f1 = _prf(hits, predicted, gold)
        scores.update({f"{level}_p": p, f"{level}_r": r, f"{level}_f1": f1})
    return scores
