"""BERT's masked-language-model corruption: choose 15% of the tokens, then 80/10/10.

For every sequence in a batch:

1. Candidates are the positions that do not hold a special token ([PAD], [CLS], [SEP], ...),
   so padding and the sentence markers are never predicted.
2. `mask_prob` of the candidates are *selected* for prediction:
   - `exact=True`: exactly max(1, round(mask_prob * n_candidates)) per sequence, the way
     Google's `create_pretraining_data.py` counts (it rounds 15% of the whole sequence,
     [CLS]/[SEP] included, and caps the count at `max_predictions_per_seq`);
   - `exact=False`: each candidate independently with probability `mask_prob`, the way
     Hugging Face's `DataCollatorForLanguageModeling` does (the count then varies).
3. Of the selected positions, 80% become [MASK], 10% become a random token and 10% keep the
   original token (each position draws its fate independently).
4. The labels hold the original token at every selected position, including the unchanged
   and random ones, and -100 (ignored by `F.cross_entropy`) everywhere else.

The random replacement is drawn from the ordinary tokens only (both reference codes may also
draw special tokens; the course avoids that).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

__all__ = ["IGNORE_INDEX", "MaskingStats", "mask_tokens", "masked_lm_loss", "masking_stats"]

IGNORE_INDEX = -100  # the label that F.cross_entropy skips


def mask_tokens(
    input_ids: torch.Tensor,
    *,
    vocab_size: int,
    mask_id: int,
    special_ids: Sequence[int],
    mask_prob: float = 0.15,
    generator: torch.Generator,
    exact: bool = True,
    random_ids: Sequence[int] | torch.Tensor | None = None,
    mask_frac: float = 0.8,
    random_frac: float = 0.1,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Corrupt a batch for MLM; return `(masked_input_ids, labels)`, both shaped like the input.

    input_ids:   LongTensor (B, T), or (T,) for one sequence; it is not modified.
    vocab_size:  ids must lie in [0, vocab_size).
    mask_id:     the id of [MASK].
    special_ids: ids never selected (must include [PAD], [CLS], [SEP]).
    mask_prob:   the fraction of candidate tokens selected for prediction (BERT: 0.15).
    generator:   the torch.Generator that draws every random number (same seed, same masks).
    exact:       exactly round(mask_prob * candidates) per sequence (True), or Bernoulli (False).
    random_ids:  the ids a "random token" is drawn from; default: every non-special id.
    mask_frac, random_frac: the 80/10 of "80/10/10"; the rest keep their token. Set
                 mask_frac=1.0, random_frac=0.0 for the paper's "100% [MASK]" ablation.
    """
    _check_arguments(input_ids, vocab_size, mask_id, mask_prob, generator, mask_frac,
                     random_frac)
    special = _as_id_tensor(special_ids, vocab_size, "special_ids")
    if random_ids is None:
        is_ordinary = ~torch.isin(torch.arange(vocab_size), special)
        random_ids = torch.arange(vocab_size)[is_ordinary]
    random_ids = _as_id_tensor(random_ids, vocab_size, "random_ids")
    if len(random_ids) == 0:
        raise ValueError("random_ids is empty: every id is special, so no random token can be "
                         "drawn; pass random_ids or fewer special_ids")
    if torch.isin(random_ids, special).any():
        raise ValueError("random_ids contains special ids; leave them out so a random "
                         "replacement is always an ordinary token")

    one_sequence = input_ids.dim() == 1
    ids = input_ids.unsqueeze(0) if one_sequence else input_ids  # (B, T)

    # 1. candidates: every position that does not hold a special token
    candidate = ~torch.isin(ids, special)  # (B, T) bool

    # 2. select mask_prob of the candidates
    if exact:
        selected = _select_exactly(candidate, mask_prob, generator)  # (B, T) bool
    else:
        coin = torch.rand(ids.shape, generator=generator)  # (B, T) uniform in [0, 1)
        selected = candidate & (coin < mask_prob)  # (B, T) bool

    # 3. decide the fate of each selected token: [MASK], random token, or unchanged
    fate = torch.rand(ids.shape, generator=generator)  # (B, T) uniform in [0, 1)
    to_mask = selected & (fate < mask_frac)  # (B, T) ~80% of selected
    to_random = selected & (fate >= mask_frac) & (fate < mask_frac + random_frac)  # ~10%
    pick = torch.randint(len(random_ids), ids.shape, generator=generator)  # (B, T)
    random_tokens = random_ids[pick]  # (B, T) ordinary ids

    masked = ids.clone()  # (B, T)
    masked[to_mask] = mask_id
    masked[to_random] = random_tokens[to_random]

    # 4. labels: the original token where selected, IGNORE_INDEX elsewhere
    labels = torch.where(selected, ids, torch.full_like(ids, IGNORE_INDEX))  # (B, T)

    if one_sequence:
        return masked[0], labels[0]
    return masked, labels


def masked_lm_loss(model, batch: dict, *, vocab_size: int, mask_id: int,
                   special_ids: Sequence[int], generator: torch.Generator) -> torch.Tensor:
    """The training loss of dynamic masking: mask `batch` afresh, return the model's MLM loss.

    batch: {"input_ids" (B, T), "attention_mask" (B, T)}, unmasked. Every call draws new masks
    from `generator` (BERT's 15% and 80/10/10, `mask_tokens`), so each epoch sees other masks
    (RoBERTa's dynamic masking); the model is called with `mlm_labels=` and returns `.loss`.
    For `train`: `loss_fn=lambda m, b: masked_lm_loss(m, b, vocab_size=..., ...)`.
    """
    masked, labels = mask_tokens(batch["input_ids"], vocab_size=vocab_size, mask_id=mask_id,
                                 special_ids=special_ids, generator=generator)    # (B, T) x2
    return model(masked, attention_mask=batch["attention_mask"], mlm_labels=labels).loss


def _select_exactly(candidate: torch.Tensor, mask_prob: float,
                    generator: torch.Generator) -> torch.Tensor:
    """Choose exactly max(1, round(mask_prob * n)) of the n candidates in each row."""
    n_candidates = candidate.sum(dim=1)  # (B,)
    # float64 and round-half-to-even give exactly Python's max(1, round(mask_prob * n))
    n_select = torch.round(n_candidates.double() * mask_prob).long().clamp(min=1)  # (B,)
    n_select = torch.minimum(n_select, n_candidates)  # rows with no candidate select nothing
    # Give every candidate a random score and every other position a score of 2 (above any
    # random number); the n_select lowest scores of a row are then a uniform random choice.
    score = torch.rand(candidate.shape, generator=generator)  # (B, T) in [0, 1)
    score = score.masked_fill(~candidate, 2.0)  # (B, T)
    rank = score.argsort(dim=1).argsort(dim=1)  # (B, T) 0 = lowest score in the row
    return rank < n_select[:, None]  # (B, T) bool


def _check_arguments(input_ids, vocab_size, mask_id, mask_prob, generator, mask_frac,
                     random_frac) -> None:
    if not isinstance(input_ids, torch.Tensor) or input_ids.dtype != torch.long:
        raise ValueError("input_ids must be a LongTensor (B, T); build it with pad_batch() or "
                         "torch.tensor(ids, dtype=torch.long)")
    if input_ids.dim() not in (1, 2):
        raise ValueError(f"input_ids must have shape (B, T) or (T,), got {tuple(input_ids.shape)}")
    if isinstance(vocab_size, bool) or not isinstance(vocab_size, int) or vocab_size < 1:
        raise ValueError(f"vocab_size must be a positive int, got {vocab_size!r}")
    if input_ids.numel() and (input_ids.min() < 0 or input_ids.max() >= vocab_size):
        raise ValueError(f"input_ids must lie in [0, {vocab_size}); got ids from "
                         f"{int(input_ids.min())} to {int(input_ids.max())}: "
                         "is vocab_size the tokenizer's?")
    if not 0 <= int(mask_id) < vocab_size:
        raise ValueError(f"mask_id {mask_id} is outside the vocabulary [0, {vocab_size})")
    if not 0.0 < mask_prob < 1.0:
        raise ValueError(f"mask_prob must be in (0, 1), e.g. 0.15; got {mask_prob}")
    if not isinstance(generator, torch.Generator):
        raise ValueError("pass generator=torch.Generator().manual_seed(seed) so the masks can be "
                         "reproduced")
    if not (0.0 <= mask_frac <= 1.0 and 0.0 <= random_frac <= 1.0
            and mask_frac + random_frac <= 1.0 + 1e-9):
        raise ValueError(f"mask_frac and random_frac must be in [0, 1] with sum <= 1 "
                         f"(BERT: 0.8 and 0.1); got {mask_frac} and {random_frac}")


def _as_id_tensor(ids, vocab_size: int, name: str) -> torch.Tensor:
    ids = torch.as_tensor(list(ids) if not isinstance(ids, torch.Tensor) else ids,
                          dtype=torch.long).flatten()
    if ids.numel() and (ids.min() < 0 or ids.max() >= vocab_size):
        raise ValueError(f"{name} must be ids in [0, {vocab_size}), got {ids.tolist()[:10]}...")
    return ids


@dataclass
class MaskingStats:
    """What a masking pass did, as fractions (to check 15% and 80/10/10 by eye)."""

    n_candidates: int  # non-special tokens
    n_selected: int  # positions with a label
    selected_frac: float  # n_selected / n_candidates             (BERT: 0.15)
    mask_frac: float  # of the selected, turned into [MASK]       (BERT: 0.80)
    random_frac: float  # of the selected, replaced by another token (BERT: 0.10)
    keep_frac: float  # of the selected, unchanged                (BERT: 0.10)

    def __str__(self) -> str:
        return (f"selected {self.selected_frac:.1%} of {self.n_candidates} tokens; of those "
                f"[MASK] {self.mask_frac:.1%}, random {self.random_frac:.1%}, "
                f"kept {self.keep_frac:.1%}")


def masking_stats(
    input_ids: torch.Tensor,
    masked_input_ids: torch.Tensor,
    labels: torch.Tensor,
    *,
    mask_id: int,
    special_ids: Sequence[int],
) -> MaskingStats:
    """Measure the observed selected / [MASK] / random / kept fractions of one masking pass.

    A random draw that happens to equal the original token counts as kept, so the observed
    random fraction sits slightly below `random_frac` (by a factor 1 - 1/len(random_ids)).
    """
    if not (input_ids.shape == masked_input_ids.shape == labels.shape):
        raise ValueError("input_ids, masked_input_ids and labels must have the same shape, got "
                         f"{tuple(input_ids.shape)}, {tuple(masked_input_ids.shape)}, "
                         f"{tuple(labels.shape)}")
    special = torch.as_tensor(list(special_ids), dtype=torch.long)
    candidate = ~torch.isin(input_ids, special)  # (B, T)
    selected = labels != IGNORE_INDEX  # (B, T)
    masked = selected & (masked_input_ids == mask_id)  # (B, T)
    kept = selected & (masked_input_ids == input_ids)  # (B, T)
    randomised = selected & ~masked & ~kept  # (B, T)
    n_candidates, n_selected = int(candidate.sum()), int(selected.sum())
    per_selected = max(n_selected, 1)
    return MaskingStats(
        n_candidates=n_candidates,
        n_selected=n_selected,
        selected_frac=n_selected / max(n_candidates, 1),
        mask_frac=int(masked.sum()) / per_selected,
        random_frac=int(randomised.sum()) / per_selected,
        keep_frac=int(kept.sum()) / per_selected,
    )
