"""StructBERT's two structural objectives: the data side.

Word structural objective. After BERT's masking, choose 5% of the trigrams among the tokens
that were *not* selected for masking, and shuffle the three tokens inside each one (never the
identity order). The model must put the original tokens back: at the shuffled positions it
predicts the original token through the masked-LM head.

    the bako tiras a lumo .   ->   the tiras bako a lumo .      labels: -, bako, tiras, a, -, -

Sentence structural objective. A 3-way classification of a pair (S1, S2):
0 = S2 is the next sentence of S1, 1 = S2 is the *previous* sentence of S1 (same document),
2 = S2 is a random sentence of another document. One third of each.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Sequence

import torch

from .data import _adjacent_pairs
from .masking import IGNORE_INDEX
from .toylang import _balanced_labels

__all__ = ["SENTENCE_LABELS", "TRIGRAM_ORDERS", "sentence_structure_examples", "shuffle_trigrams",
           "trigram_starts"]

SENTENCE_LABELS = ("next", "previous", "random")

# The five orders of three tokens that move at least one of them (the identity is left out).
TRIGRAM_ORDERS = tuple(p for p in itertools.permutations(range(3)) if p != (0, 1, 2))


def trigram_starts(input_ids: torch.Tensor, mlm_labels: torch.Tensor | None,
                   special_ids: Sequence[int]) -> torch.Tensor:
    """Where a shuffled trigram may start: bool (B, T), True at j when positions j, j+1, j+2
    hold no special token, none was selected for MLM, and their three tokens are not all equal
    (such a trigram cannot be put in another order). The last two positions are always False.
    """
    special = torch.as_tensor(list(special_ids), dtype=torch.long)
    free = ~torch.isin(input_ids, special)                                    # (B, T)
    if mlm_labels is not None:
        free = free & (mlm_labels == IGNORE_INDEX)                            # (B, T)
    starts = torch.zeros_like(free)                                           # (B, T)
    if input_ids.shape[1] < 3:
        return starts
    a, b, c = input_ids[:, :-2], input_ids[:, 1:-1], input_ids[:, 2:]         # (B, T-2) each
    all_free = free[:, :-2] & free[:, 1:-1] & free[:, 2:]                     # (B, T-2)
    starts[:, :-2] = all_free & ~((a == b) & (b == c))
    return starts


def shuffle_trigrams(
    input_ids: torch.Tensor,
    mlm_labels: torch.Tensor | None,
    *,
    special_ids: Sequence[int],
    generator: torch.Generator,
    fraction: float = 0.05,
    starts=None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Shuffle `fraction` of each sequence's unmasked trigrams; return (ids, wso_labels).

    input_ids:  (B, T), usually already MLM-corrupted. mlm_labels: (B, T) from `mask_tokens`
                (-100 where not selected), or None when there is no masking; a position
                selected for MLM (masked, randomised or kept) is never part of a trigram.
    A trigram is three consecutive positions that hold no special token and no MLM position.
    Each sequence shuffles max(1, round(fraction * its number of trigrams)) non-overlapping
    trigrams (none if it has no trigram). Each gets one of the five non-identity orders,
    chosen among those that change the token sequence (a trigram of three equal tokens cannot
    change, so it is never chosen).
    wso_labels: (B, T), the original token at the three positions of each shuffled trigram,
    -100 elsewhere; disjoint from mlm_labels, so both losses go through the same MLM head.
    starts(input_ids, mlm_labels, special_ids) -> (B, T) bool says where a trigram may start:
    `trigram_starts` when None (a lesson passes the student's own once it is graded correct).
    """
    if not isinstance(input_ids, torch.Tensor) or input_ids.dim() != 2:
        raise ValueError("input_ids must be a LongTensor (B, T); use pad_batch() to build one")
    if mlm_labels is not None and mlm_labels.shape != input_ids.shape:
        raise ValueError(f"mlm_labels has shape {tuple(mlm_labels.shape)}, expected "
                         f"{tuple(input_ids.shape)} (the labels returned by mask_tokens)")
    if not 0.0 < fraction <= 1.0:
        raise ValueError(f"fraction must be in (0, 1], e.g. 0.05; got {fraction}")
    if not isinstance(generator, torch.Generator):
        raise ValueError("pass generator=torch.Generator().manual_seed(seed) so the shuffles "
                         "can be reproduced")
    can_start = (starts or trigram_starts)(input_ids, mlm_labels, special_ids)  # (B, T)
    shuffled = input_ids.clone()                                              # (B, T)
    labels = torch.full_like(input_ids, IGNORE_INDEX)                         # (B, T)
    for row in range(input_ids.shape[0]):
        ids = input_ids[row].tolist()
        starts = can_start[row].nonzero().flatten().tolist()
        if not starts:
            continue
        wanted = max(1, round(fraction * len(starts)))
        taken: set[int] = set()
        order = torch.randperm(len(starts), generator=generator).tolist()
        for j in (starts[k] for k in order):
            if len(taken) // 3 == wanted:
                break
            if taken & {j, j + 1, j + 2}:
                continue                                                      # overlaps one
            original = ids[j:j + 3]
            changing = [p for p in TRIGRAM_ORDERS if [original[i] for i in p] != original]
            pick = changing[int(torch.randint(len(changing), (1,), generator=generator))]
            shuffled[row, j:j + 3] = torch.tensor([original[i] for i in pick])
            labels[row, j:j + 3] = torch.tensor(original)
            taken |= {j, j + 1, j + 2}
    return shuffled, labels


def sentence_structure_examples(documents: Sequence[Sequence], seed: int,
                                n_examples: int | None = None) -> list[tuple]:
    """StructBERT's 3-way pairs (S1, S2, label), one third of each label, in random order.

    label 0 ("next"):     S1 = sentence i, S2 = sentence i + 1 of the same document.
    label 1 ("previous"): S1 = sentence i + 1, S2 = sentence i: S2 really precedes S1.
    label 2 ("random"):   S1 = sentence i, S2 = a random sentence of another document.
    Each adjacent pair of the corpus is used at most once; `n_examples` keeps that many.
    """
    sources = [d for d, doc in enumerate(documents) if len(doc) > 0]
    if len(sources) < 2:
        raise ValueError("sentence_structure_examples needs at least 2 non-empty documents: "
                         "the random class comes from another document")
    rng = random.Random(seed)
    pairs = _adjacent_pairs(documents, rng, n_examples, "there is no next or previous sentence")
    examples = []
    for (d, i), label in zip(pairs, _balanced_labels(len(pairs), 3, rng)):
        first, second = documents[d][i], documents[d][i + 1]
        if label == 0:
            examples.append((first, second, 0))
        elif label == 1:
            examples.append((second, first, 1))
        else:
            other = d
            while other == d:
                other = rng.choice(sources)
            examples.append((first, rng.choice(documents[other]), 2))
    return examples
