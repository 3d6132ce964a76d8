"""ELECTRA's corruption: mask 15%, let a small generator refill the holes, label what changed.

1. Select 15% of the ordinary tokens, as BERT does (`masking.mask_tokens`). 85% of the selected
   positions become [MASK] and 15% keep their token; ELECTRA has *no* random replacement.
2. The generator (a small masked LM) predicts a distribution over the vocabulary at each
   selected position, and a token is *sampled* from it (not the argmax: the argmax would almost
   always be the most frequent word and the discriminator's task would be trivial).
3. The sampled tokens replace the originals at the selected positions. A position is labelled
   "replaced" (1) only if the sample *differs* from the original: when the generator guessed
   right, the token is real and is labelled 0.

The sample is a discrete draw, so no gradient flows through it: the discriminator's loss never
reaches the generator, which is trained by its own MLM loss only.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from .masking import IGNORE_INDEX, mask_tokens

__all__ = ["ELECTRA_MASK_FRAC", "electra_mask", "originals_from_labels", "replace_tokens",
           "sample_tokens", "sample_tokens_reference"]

ELECTRA_MASK_FRAC = 0.85  # of the selected positions: 85% [MASK], 15% unchanged, 0% random


def electra_mask(
    input_ids: torch.Tensor,
    *,
    vocab_size: int,
    mask_id: int,
    special_ids: Sequence[int],
    generator: torch.Generator,
    mask_prob: float = 0.15,
) -> tuple[torch.Tensor, torch.Tensor]:
    """The generator's input: `(masked_input_ids, mlm_labels)`, ELECTRA's 85/15/0 split.

    mlm_labels holds the original token at each selected position and -100 elsewhere, as for
    BERT; `mlm_labels != -100` is the selection the discriminator's labels are built on.
    """
    return mask_tokens(input_ids, vocab_size=vocab_size, mask_id=mask_id,
                       special_ids=special_ids, mask_prob=mask_prob, generator=generator,
                       mask_frac=ELECTRA_MASK_FRAC, random_frac=0.0)


def sample_tokens(
    logits: torch.Tensor, generator: torch.Generator | None = None, temperature: float = 1.0
) -> torch.Tensor:
    """One token per row of `logits` (..., V), drawn from softmax(logits / temperature).

    The Gumbel-max trick, as ELECTRA's code does it: argmax(logits / T + g) with
    g = -log(-log(u)), u ~ Uniform(0, 1), is an exact sample of the softmax. `generator`
    draws u, so the same seed gives the same samples. No gradient: the result is integer ids.
    """
    if temperature <= 0:
        raise ValueError(f"temperature must be positive (ELECTRA uses 1.0), got {temperature}")
    with torch.no_grad():
        uniform = torch.rand(logits.shape, generator=generator, dtype=torch.float32)  # (..., V)
        gumbel = -torch.log(-torch.log(uniform + 1e-9) + 1e-9)                       # (..., V)
        return (logits.detach().float() / temperature + gumbel).argmax(dim=-1)        # (...)


def sample_tokens_reference(
    logits: torch.Tensor, generator: torch.Generator | None = None, temperature: float = 1.0
) -> torch.Tensor:
    """The written-out twin of `sample_tokens`: softmax, then `torch.multinomial`.

    Same distribution, different random stream (a test checks the frequencies agree).
    """
    with torch.no_grad():
        probs = torch.softmax(logits.detach().float() / temperature, dim=-1)          # (..., V)
        flat = probs.reshape(-1, probs.shape[-1])                                     # (N, V)
        draws = torch.multinomial(flat, 1, generator=generator).squeeze(-1)           # (N,)
        return draws.reshape(probs.shape[:-1])                                        # (...)


def replace_tokens(
    input_ids: torch.Tensor, selected: torch.Tensor, sampled_ids: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """The discriminator's input and labels: `(corrupted_ids, is_replaced)`.

    input_ids:   (B, T) the original tokens.
    selected:    (B, T) bool, the positions the generator filled in.
    sampled_ids: (B, T) the generator's samples (only the selected positions are read).

    corrupted_ids takes the sample at selected positions and the original elsewhere.
    is_replaced (float, for the sigmoid loss) is 1.0 where the token changed. A selected
    position whose sample equals the original is labelled 0.0 (real), not 1.0.
    """
    if not (input_ids.shape == selected.shape == sampled_ids.shape):
        raise ValueError(
            f"input_ids {tuple(input_ids.shape)}, selected {tuple(selected.shape)} and "
            f"sampled_ids {tuple(sampled_ids.shape)} must have the same shape (B, T): "
            "scatter the N samples into a (B, T) tensor first"
        )
    if selected.dtype != torch.bool:
        raise ValueError(f"selected must be a bool mask, got {selected.dtype}: "
                         "use mlm_labels != -100")
    corrupted = torch.where(selected, sampled_ids, input_ids)                 # (B, T)
    is_replaced = (corrupted != input_ids).float()                            # (B, T) 1 = fake
    return corrupted, is_replaced


def originals_from_labels(masked_input_ids: torch.Tensor, mlm_labels: torch.Tensor) -> torch.Tensor:
    """The uncorrupted tokens: the label where one was selected, the input elsewhere."""
    selected = mlm_labels != IGNORE_INDEX                                     # (B, T)
    return torch.where(selected, mlm_labels, masked_input_ids)                # (B, T)
