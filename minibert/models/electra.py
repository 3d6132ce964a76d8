"""ELECTRA (Clark et al., 2020): a small generator corrupts, a discriminator detects.

    generator input:      [CLS] the bako [MASK] a lumo . [SEP]     15% selected, 85% [MASK]
    generator (MLM):      samples x_hat ~ p_G(x_t | masked) at each selected position
    discriminator input:  [CLS] the bako fumas a lumo . [SEP]      samples put back in
    discriminator labels:   0    0    0     1   0   0   0    0     1 = "this token was replaced"

    loss = L_MLM(generator)  +  50 * L_disc(discriminator)

The discriminator's sigmoid loss is averaged over *every* non-pad token, so it learns from all
positions, not only the 15% an MLM learns from: that is where ELECTRA's efficiency comes from.
`disc_positions="selected"` is the paper's "ELECTRA 15%" ablation (Table 5), which scores the
discriminator only on the selected positions, to show it.
The generator is small (1/4 of the discriminator's hidden size here) and shares the token,
position and segment tables (and their LayerNorm) with the discriminator; both networks
project the E-wide embeddings to their own hidden size. Only the discriminator is fine-tuned.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from ..config import BertConfig
from ..corruption import originals_from_labels, replace_tokens, sample_tokens
from ..encoder import init_weights
from ..heads import MLMHead, TokenHead
from .bert import IGNORE_INDEX, BertModel, ClassifierOutput, masked_lm_loss

__all__ = ["DISCRIMINATOR_WEIGHT", "DISC_POSITIONS", "ElectraDiscriminator",
           "ElectraForPreTraining", "ElectraForSequenceClassification", "ElectraModel",
           "ElectraPreTrainingOutput", "discriminator_loss", "electra_configs",
           "electra_step_flops", "encoder_flops", "mlm_step_flops"]

DISCRIMINATOR_WEIGHT = 50.0   # lambda: the discriminator's loss is ~50x smaller than the MLM's
# Where the discriminator's loss is taken: every non-pad token (ELECTRA), or only the selected
# 15% ("ELECTRA 15%", the ablation of the paper's Table 5).
DISC_POSITIONS = ("all", "selected")

# The embedding modules the generator borrows from the discriminator (tables and their norm).
SHARED_EMBEDDINGS = ("word", "position", "segment", "norm")


def electra_configs(
    preset: str = "bert-micro", generator_fraction: float = 0.25, embedding_size: int = 64,
    **overrides,
) -> tuple[BertConfig, BertConfig]:
    """(discriminator, generator) configs. The generator has `generator_fraction` of the
    discriminator's hidden size, the same depth, an FFN of 4x its width and heads of the
    discriminator's head size (ELECTRA keeps 64-dim heads; the course's heads have 32).
    Both use the same embedding width E, which is what lets them share the tables."""
    discriminator = BertConfig.from_preset(preset, embedding_size=embedding_size, **overrides)
    hidden = round(discriminator.hidden_size * generator_fraction)
    if hidden < 1 or generator_fraction <= 0:
        raise ValueError(f"generator_fraction={generator_fraction} leaves the generator no "
                         f"hidden units: use a fraction like 0.25 (ELECTRA-Small) or 1/3 (Base)")
    heads = max(1, hidden // discriminator.head_size)
    while hidden % heads:
        heads -= 1
    generator = discriminator.replace(hidden_size=hidden, num_heads=heads,
                                      intermediate_size=4 * hidden,
                                      embedding_size=embedding_size)
    return discriminator, generator


class ElectraModel(BertModel):
    """The discriminator's encoder: BERT's embeddings (E -> H projected when E != H) and
    layers, without a pooler (as Hugging Face's ElectraModel). This is what gets fine-tuned."""

    def __init__(self, config: BertConfig, add_pooler: bool = False):
        super().__init__(config, add_pooler=add_pooler)


class ElectraDiscriminator(nn.Module):
    """The discriminator alone: encoder + per-token head, logit > 0 means "replaced".

    The twin of Hugging Face's ElectraForPreTraining (which, despite its name, holds only the
    discriminator); `ElectraForPreTraining` below holds this pair plus the generator.
    """

    def __init__(self, config: BertConfig):
        super().__init__()
        self.config = config
        self.electra = ElectraModel(config)
        self.discriminator_head = TokenHead(config)
        self.discriminator_head.apply(lambda m: init_weights(m, config.initializer_range))

    def forward(self, input_ids: torch.Tensor, *, token_type_ids: torch.Tensor | None = None,
                attention_mask: torch.Tensor | None = None) -> torch.Tensor:
        hidden = self.electra(input_ids, token_type_ids=token_type_ids,
                              attention_mask=attention_mask).last_hidden_state
        return self.discriminator_head(hidden)                                # (B, T)


class ElectraForSequenceClassification(nn.Module):
    """A classifier on the mean of the encoder's non-pad token vectors (any BertModel).

    ELECTRA (and Hugging Face) classify from the first token. The course's fine-tunes are a
    few dozen steps, too short to teach a tiny encoder's [CLS] vector a task it never needed
    in pretraining (a discriminator's [CLS] is never replaced, so it barely varies), so the
    lessons pool the mean instead, the same way for every pretrained encoder they compare.
    """

    def __init__(self, config: BertConfig, num_classes: int, encoder: BertModel | None = None):
        super().__init__()
        if num_classes < 2:
            raise ValueError(f"a classifier needs at least 2 classes, got {num_classes}")
        self.config = config
        self.electra = encoder if encoder is not None else ElectraModel(config)
        self.dropout = nn.Dropout(config.dropout)
        self.out = nn.Linear(config.hidden_size, num_classes)
        init_weights(self.out, config.initializer_range)

    def forward(self, input_ids: torch.Tensor, *, attention_mask: torch.Tensor | None = None,
                labels: torch.Tensor | None = None, token_type_ids: torch.Tensor | None = None):
        hidden = self.electra(input_ids, token_type_ids=token_type_ids,
                              attention_mask=attention_mask).last_hidden_state
        if attention_mask is None:
            attention_mask = torch.ones_like(input_ids)
        real = attention_mask.unsqueeze(-1).to(hidden.dtype)                  # (B, T, 1)
        pooled = (hidden * real).sum(dim=1) / real.sum(dim=1).clamp(min=1.0)  # (B, H)
        logits = self.out(self.dropout(pooled))                               # (B, classes)
        loss = F.cross_entropy(logits, labels) if labels is not None else None
        return ClassifierOutput(loss, logits)


def discriminator_loss(
    logits: torch.Tensor, is_replaced: torch.Tensor, attention_mask: torch.Tensor | None
) -> torch.Tensor:
    """Sigmoid cross-entropy averaged over every non-pad token ([CLS] and [SEP] included).

    logits, is_replaced: (B, T); attention_mask: (B, T), 1 on real tokens (None: all real).
    """
    if logits.shape != is_replaced.shape:
        raise ValueError(f"logits {tuple(logits.shape)} and is_replaced "
                         f"{tuple(is_replaced.shape)} must both be (B, T)")
    per_token = F.binary_cross_entropy_with_logits(logits, is_replaced.float(),
                                                   reduction="none")         # (B, T)
    if attention_mask is None:
        return per_token.mean()
    real = attention_mask.to(per_token.dtype)                                 # (B, T)
    return (per_token * real).sum() / real.sum().clamp(min=1.0)


@dataclass
class ElectraPreTrainingOutput:
    loss: torch.Tensor               # mlm_loss + disc_weight * disc_loss
    mlm_loss: torch.Tensor           # the generator's CE over the selected positions
    disc_loss: torch.Tensor          # the discriminator's sigmoid CE over non-pad tokens (or
                                     # over the selected ones, with disc_positions="selected")
    mlm_logits: torch.Tensor         # (N, V) the generator's scores at the selected positions
    mlm_targets: torch.Tensor        # (N,) the original tokens there
    sampled_ids: torch.Tensor        # (N,) the generator's samples there
    corrupted_ids: torch.Tensor      # (B, T) the discriminator's input
    is_replaced: torch.Tensor        # (B, T) float, 1.0 where the token was replaced
    disc_logits: torch.Tensor        # (B, T) the discriminator's "replaced" logits


class ElectraForPreTraining(nn.Module):
    """Generator + discriminator trained jointly, with shared embeddings.

    `model.electra` is the discriminator's encoder (fine-tune it); `model.generator` and
    `model.generator_head` form the small masked LM; `model.discriminator_head` is the
    per-token "replaced?" head. `disc_positions="selected"` takes the discriminator's loss
    over the selected positions only (the paper's "ELECTRA 15%"); the default, "all", is
    ELECTRA.
    """

    def __init__(self, discriminator_config: BertConfig, generator_config: BertConfig,
                 disc_weight: float = DISCRIMINATOR_WEIGHT, temperature: float = 1.0,
                 disc_positions: str = "all", replace=None):
        """replace(input_ids, selected, sampled_ids) -> (corrupted, is_replaced): the
        discriminator's input and labels, `replace_tokens` when None (a lesson passes the
        student's own once it is graded correct)."""
        super().__init__()
        self.replace = replace or replace_tokens
        d, g = discriminator_config, generator_config
        for field in ("vocab_size", "embedding_size", "max_position", "type_vocab_size",
                      "position_embedding", "pad_token_id"):
            if getattr(d, field) != getattr(g, field):
                raise ValueError(
                    f"generator and discriminator must agree on {field} to share embeddings "
                    f"(got {getattr(g, field)!r} vs {getattr(d, field)!r}): build both with "
                    f"electra_configs(...)"
                )
        if disc_weight < 0 or temperature <= 0:
            raise ValueError("disc_weight must be >= 0 and temperature > 0 "
                             "(ELECTRA: 50 and 1.0)")
        if disc_positions not in DISC_POSITIONS:
            raise ValueError(f"unknown disc_positions {disc_positions!r}: choose 'all' (ELECTRA: "
                             f"every non-pad token) or 'selected' (the 'ELECTRA 15%' ablation)")
        self.config, self.generator_config = d, g
        self.disc_weight, self.temperature = disc_weight, temperature
        self.disc_positions = disc_positions
        self.electra = ElectraModel(d)
        self.generator = BertModel(g, add_pooler=False)
        self.tie_embeddings()
        self.generator_head = MLMHead(g, self.electra.word_embeddings)
        self.discriminator_head = TokenHead(d)
        for head, config in ((self.generator_head, g), (self.discriminator_head, d)):
            head.apply(lambda m, c=config: init_weights(m, c.initializer_range))

    def tie_embeddings(self) -> None:
        """Make the generator use the discriminator's embedding modules (the same objects).

        Each network keeps its own E -> H projection (`embeddings.project`), because the two
        hidden sizes differ.
        """
        mine, theirs = self.generator.encoder.embeddings, self.electra.encoder.embeddings
        for name in SHARED_EMBEDDINGS:
            setattr(mine, name, getattr(theirs, name))

    def forward(
        self,
        input_ids: torch.Tensor,
        *,
        mlm_labels: torch.Tensor,
        attention_mask: torch.Tensor | None = None,
        token_type_ids: torch.Tensor | None = None,
        generator: torch.Generator | None = None,
    ) -> ElectraPreTrainingOutput:
        """input_ids: (B, T) the masked generator input; mlm_labels: (B, T) the original
        token where selected, -100 elsewhere (from `corruption.electra_mask`). `generator`
        is the torch.Generator the samples are drawn with (None: the global one)."""
        # 1. the generator's masked-LM loss at the selected positions
        gen_hidden = self.generator(input_ids, token_type_ids=token_type_ids,
                                    attention_mask=attention_mask
                                    ).last_hidden_state                       # (B, T, Hg)
        logits, targets, mlm_loss = masked_lm_loss(self.generator_head, gen_hidden,
                                                   mlm_labels)                # (N, V), (N,)
        # 2. sample replacements: a discrete draw, so no gradient flows back to the generator
        sampled = sample_tokens(logits, generator, self.temperature)          # (N,)
        selected = mlm_labels != IGNORE_INDEX                                 # (B, T)
        original = originals_from_labels(input_ids, mlm_labels)               # (B, T)
        proposals = original.clone()                                          # (B, T)
        proposals[selected] = sampled
        corrupted, is_replaced = self.replace(original, selected, proposals)  # (B, T) x2
        # 3. the discriminator: was each token replaced?
        disc_hidden = self.electra(corrupted, token_type_ids=token_type_ids,
                                   attention_mask=attention_mask
                                   ).last_hidden_state                        # (B, T, H)
        disc_logits = self.discriminator_head(disc_hidden)                    # (B, T)
        scored = attention_mask if self.disc_positions == "all" else selected  # (B, T)
        disc_loss = discriminator_loss(disc_logits, is_replaced, scored)
        loss = mlm_loss + self.disc_weight * disc_loss
        return ElectraPreTrainingOutput(loss, mlm_loss, disc_loss, logits, targets, sampled,
                                        corrupted, is_replaced, disc_logits)


# ------------------------------------------------------------------------ counting compute
# Compute is counted, not timed, so that a "same budget" comparison gives the same numbers on
# every machine. FLOPs are 2 per multiply-add of the matrix products (embedding lookups,
# LayerNorm, softmax and GELU are left out: they are a few percent at these sizes), and a
# training step costs 3x its forward pass (the backward pass is about twice the forward), the
# usual convention, also the one of ELECTRA's own FLOP counts.

TRAIN_MULTIPLIER = 3


def encoder_flops(config: BertConfig, batch: int, length: int) -> int:
    """Forward FLOPs of the E -> H projection and the L layers on a (batch, length) input."""
    h, e, ffn = config.hidden_size, config.embedding_size, config.intermediate_size
    projection = 2 * e * h if e != h else 0
    dense = 2 * (4 * h * h + 2 * h * ffn)            # Q, K, V, O and the FFN's two matrices
    attention = 2 * 2 * length * h                   # Q K^T and probabilities x V
    return batch * length * (projection + config.num_layers * (dense + attention))


def mlm_head_flops(config: BertConfig, n_predicted: int) -> int:
    """Forward FLOPs of the MLM head (H -> E, then the tied E -> V decoder) at N positions."""
    h, e, v = config.hidden_size, config.embedding_size, config.vocab_size
    return n_predicted * (2 * h * e + 2 * e * v)


def mlm_step_flops(config: BertConfig, batch: int, length: int, n_predicted: int) -> int:
    """Training FLOPs of one masked-LM step (BERT/RoBERTa without a sentence head)."""
    forward = encoder_flops(config, batch, length) + mlm_head_flops(config, n_predicted)
    return TRAIN_MULTIPLIER * forward


def electra_step_flops(discriminator: BertConfig, generator: BertConfig, batch: int,
                       length: int, n_predicted: int) -> int:
    """Training FLOPs of one ELECTRA step: the generator's MLM step, plus the discriminator's
    encoder and its per-token head on every position (sampling is negligible)."""
    h = discriminator.hidden_size
    token_head = batch * length * (2 * h * h + 2 * h)
    forward = (encoder_flops(generator, batch, length) + mlm_head_flops(generator, n_predicted)
               + encoder_flops(discriminator, batch, length) + token_head)
    return TRAIN_MULTIPLIER * forward
