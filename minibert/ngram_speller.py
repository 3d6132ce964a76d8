"""The pre-neural Chinese spelling corrector: confusion-set candidates scored by a character
n-gram language model (the approach of SIGHAN-era systems), the baseline of lesson 12.

    lm = CharNgramLM.train(sentences)                 # trigram counts of the text
    speller = NgramSpeller(lm, confusion, margin=4.0)
    speller.correct("我今天很高心")                      # -> "我今天很高兴"

For each character x_i with confusions, every candidate c of x_i is put in its place and the
trigrams that touch position i are scored; c replaces x_i when its log-probability beats the
original's by more than `margin` nats. Each position is judged against the source as written
(not against earlier replacements), so the result does not depend on the reading order. The
margin trades false alarms for recall: `NgramSpeller.choose_margin` picks it on pairs held apart
from the test set.

The language model interpolates trigram, bigram and add-one unigram relative frequencies:

    P(c | a b) = l3 f(abc) / f(ab) + l2 f(bc) / f(b) + l1 (f(c) + 1) / (N + V)

(an unseen context drops its term, and the others are scaled up to sum to 1).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from .spelling import ConfusionSet, apply_proposals, sentence_metrics

__all__ = ["CharNgramLM", "NgramSpeller"]

BOS, EOS = "\x02", "\x03"            # sentence boundaries (never in Chinese text)


@dataclass
class CharNgramLM:
    """Character unigram, bigram and trigram counts of a text, and interpolated probabilities."""

    unigrams: Counter
    bigrams: Counter
    trigrams: Counter
    weights: tuple[float, float, float] = (0.6, 0.3, 0.1)     # trigram, bigram, unigram

    @classmethod
    def train(cls, sentences: Sequence[str],
              weights: tuple[float, float, float] = (0.6, 0.3, 0.1)) -> CharNgramLM:
        if not sentences:
            raise ValueError("CharNgramLM.train needs at least one sentence")
        if abs(sum(weights) - 1.0) > 1e-9 or min(weights) < 0:
            raise ValueError(f"weights must be non-negative and sum to 1, got {weights}")
        unigrams, bigrams, trigrams = Counter(), Counter(), Counter()
        for sentence in sentences:
            chars = BOS + BOS + sentence + EOS
            unigrams.update(chars[2:])
            bigrams.update(chars[i:i + 2] for i in range(1, len(chars) - 1))
            trigrams.update(chars[i:i + 3] for i in range(len(chars) - 2))
        unigrams[BOS] = len(sentences)                        # the context of the first bigram
        bigrams[BOS + BOS] = len(sentences)
        return cls(unigrams, bigrams, trigrams, weights)

    def __post_init__(self):
        self.total = sum(n for ch, n in self.unigrams.items() if ch != BOS)
        self.size = len(self.unigrams) - (BOS in self.unigrams)    # what may come next

    def prob(self, a: str, b: str, c: str) -> float:
        """P(c | a b), interpolated (never 0); an unseen context's weight goes to the orders
        below it, so the probabilities of what comes next still sum to 1."""
        l3, l2, l1 = self.weights
        p, weight = l1 * (self.unigrams[c] + 1) / (self.total + self.size), l1
        if self.unigrams[b]:
            p, weight = p + l2 * self.bigrams[b + c] / self.unigrams[b], weight + l2
        if self.bigrams[a + b]:
            p, weight = p + l3 * self.trigrams[a + b + c] / self.bigrams[a + b], weight + l3
        return p / weight

    def logprob(self, sentence: str) -> float:
        """log P(sentence and its end), in nats."""
        chars = BOS + BOS + sentence + EOS
        return sum(math.log(self.prob(*chars[i:i + 3])) for i in range(len(chars) - 2))

    def local_logprob(self, padded: str, i: int) -> float:
        """The log-probability of the trigrams that contain padded[i] (BOS BOS + text + EOS)."""
        return sum(math.log(self.prob(*padded[j:j + 3]))
                   for j in range(max(0, i - 2), min(i, len(padded) - 3) + 1))


class NgramSpeller:
    """Replace a character by a confusion when the n-gram LM prefers it by `margin` nats."""

    def __init__(self, lm: CharNgramLM, confusion: ConfusionSet, margin: float = 4.0):
        self.lm, self.confusion, self.margin = lm, confusion, margin

    def proposals(self, sentence: str) -> list[tuple[int, str, float]]:
        """(position, best candidate, gain in nats over the source character) for each position
        with confusions whose best candidate scores higher than what is written."""
        padded = BOS + BOS + sentence + EOS
        found = []
        for i, ch in enumerate(sentence):
            if ch not in self.confusion:
                continue
            k = i + 2                                             # position in `padded`
            written = self.lm.local_logprob(padded, k)
            best, best_score = ch, written
            for candidate in self.confusion[ch]:
                score = self.lm.local_logprob(padded[:k] + candidate + padded[k + 1:], k)
                if score > best_score:
                    best, best_score = candidate, score
            if best != ch:
                found.append((i, best, best_score - written))
        return found

    def correct(self, sentence: str, margin: float | None = None) -> str:
        margin = self.margin if margin is None else margin
        return apply_proposals([sentence], [self.proposals(sentence)], margin)[0]

    def choose_margin(self, pairs: Sequence[tuple[str, str]],
                      margins: Sequence[float] = (0, 1, 2, 3, 4, 5, 6, 8, 10, 12)) -> float:
        """The margin of best sentence-level correction F1 on `pairs` (keep them apart from
        the pairs you report on); sets self.margin and returns it."""
        sources, targets = [s for s, _ in pairs], [t for _, t in pairs]
        found = [self.proposals(s) for s in sources]

        def f1(margin):
            outputs = apply_proposals(sources, found, margin)
            return sentence_metrics(sources, outputs, targets)["c_f1"]
        self.margin = max(margins, key=lambda m: (f1(m), m))
        return self.margin
