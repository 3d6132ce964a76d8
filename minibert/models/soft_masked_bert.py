"""Soft-Masked BERT (Zhang et al., 2020) for Chinese spelling correction, and its baseline.

    e_i   = BERT's input embedding of x_i (word + position + segment, LayerNorm)
    p_i   = sigmoid(W_d [GRU_fwd(e)_i ; GRU_bwd(e)_i] + b_d)     detection: is x_i wrong?
    e'_i  = p_i * e_mask_i + (1 - p_i) * e_i                     soft masking
    h^c   = BERT layers(e')                                      correction network
    h'_i  = h^c_i + e_i                                          residual: the ORIGINAL e_i
    P(y_i) = softmax(MLM head(h'_i))
    L     = 0.8 * CE(y, P) over every non-pad position + 0.2 * BCE(g, p) over non-pad positions

`e_mask_i` is the embedding of [MASK] at position i with the segment of x_i, so it lives in
the same space as e_i; it is detached (a constant target of the interpolation), as in the
reference reimplementation. The correction loss covers unchanged characters too: copying a
right character is a prediction the model must learn. `g_i = 1[x_i != y_i]`.

The baseline "BERT-finetune" is the same encoder and MLM head predicting y_i at every position
from x_i directly. Switches for the paper's ablations: `residual=False`, and `hard_mask=True`
(e'_i = e_mask_i where p_i > 0.5, else e_i; no gradient reaches the detector through it).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from ..config import BertConfig
from ..encoder import init_weights
from ..heads import MLMHead
from .bert import BertForPreTraining, BertModel

__all__ = [
    "BertCorrector",
    "CorrectionOutput",
    "DetectionNetwork",
    "SoftMaskedBert",
    "correction_loss",
    "detection_loss",
    "reverse_padded",
    "soft_mask",
]


def soft_mask(p: torch.Tensor, embeddings: torch.Tensor,
              mask_embeddings: torch.Tensor) -> torch.Tensor:
    """e' = p * e_mask + (1 - p) * e. p: (B, T) error probabilities; e, e_mask: (B, T, H)."""
    if p.shape != embeddings.shape[:2] or mask_embeddings.shape != embeddings.shape:
        raise ValueError(
            f"p must be (B, T) and both embeddings (B, T, H) for the same B, T; got p "
            f"{tuple(p.shape)}, e {tuple(embeddings.shape)}, e_mask {tuple(mask_embeddings.shape)}"
        )
    p = p.unsqueeze(-1)                                                       # (B, T, 1)
    return p * mask_embeddings + (1 - p) * embeddings                         # (B, T, H)


def detection_loss(logits: torch.Tensor, labels: torch.Tensor,
                   attention_mask: torch.Tensor) -> torch.Tensor:
    """Mean binary cross-entropy of the error logits over the real (non-pad) positions."""
    real = attention_mask.bool()                                              # (B, T)
    return F.binary_cross_entropy_with_logits(logits[real], labels[real].float())


def correction_loss(logits: torch.Tensor, target_ids: torch.Tensor,
                    attention_mask: torch.Tensor) -> torch.Tensor:
    """Mean cross-entropy over every real position, unchanged characters included.

    Padding is skipped through `ignore_index` rather than by indexing `logits[real]`: the
    value is the same, and the backward pass does not scatter into a zero (B, T, V) tensor.
    """
    ignored = target_ids.masked_fill(attention_mask == 0, -100)              # (B, T)
    return F.cross_entropy(logits.flatten(0, 1), ignored.flatten(), ignore_index=-100)


@dataclass
class CorrectionOutput:
    loss: torch.Tensor | None
    logits: torch.Tensor                          # (B, T, V) the corrected character
    detection_probs: torch.Tensor | None = None   # (B, T) p_i (Soft-Masked BERT only)
    correction_loss: torch.Tensor | None = None
    detection_loss: torch.Tensor | None = None


class DetectionNetwork(nn.Module):
    """A bidirectional GRU over the embeddings and a linear layer: one error logit per position.

    The two directions are two GRUs. The backward one reads each sentence reversed within its
    own length, so padding never enters either direction (the same result as a packed
    bidirectional GRU, without the packing, whose backward pass is slow on CPU).
    """

    def __init__(self, hidden_size: int, gru_size: int | None = None):
        super().__init__()
        gru_size = gru_size or hidden_size // 2
        self.forward_gru = nn.GRU(hidden_size, gru_size, batch_first=True)
        self.backward_gru = nn.GRU(hidden_size, gru_size, batch_first=True)
        self.out = nn.Linear(2 * gru_size, 1)

    def forward(self, embeddings: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        lengths = attention_mask.long().sum(dim=1)                            # (B,)
        forward_states, _ = self.forward_gru(embeddings)                      # (B, T, G)
        reversed_states, _ = self.backward_gru(reverse_padded(embeddings, lengths))
        backward_states = reverse_padded(reversed_states, lengths)            # (B, T, G)
        states = torch.cat([forward_states, backward_states], dim=-1)         # (B, T, 2G)
        return self.out(states).squeeze(-1)                                   # (B, T) logits


def reverse_padded(x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """Reverse each row of x (B, T, D) within its first lengths[b] positions; padding stays.

    Applying it twice gives x back, so it also maps the backward GRU's outputs home.
    """
    positions = torch.arange(x.size(1), device=x.device)                      # (T,)
    source = lengths[:, None] - 1 - positions[None, :]                        # (B, T)
    source = torch.where(source >= 0, source, positions[None, :])             # pads: stay
    return x.gather(1, source[:, :, None].expand(-1, -1, x.size(-1)))         # (B, T, D)


class _Corrector(nn.Module):
    """What both models share: a BERT encoder, its tied MLM head, loading an MLM checkpoint."""

    def __init__(self, config: BertConfig, mask_token_id: int):
        super().__init__()
        if not 0 <= mask_token_id < config.vocab_size:
            raise ValueError(f"mask_token_id={mask_token_id} is not a token id below "
                             f"vocab_size={config.vocab_size}")
        self.config = config
        self.mask_token_id = mask_token_id
        self.bert = BertModel(config, add_pooler=False)
        self.mlm = MLMHead(config, self.bert.word_embeddings)
        self.mlm.apply(lambda m: init_weights(m, config.initializer_range))

    def load_pretrained(self, pretrained: BertForPreTraining):
        """Copy the weights of a pretrained masked LM's encoder and MLM head (copied, not
        shared: fine-tuning this model leaves the pretrained one untouched)."""
        if pretrained.config.vocab_size != self.config.vocab_size:
            raise ValueError(
                f"the pretrained model has vocab_size={pretrained.config.vocab_size}, this one "
                f"{self.config.vocab_size}: build both from the same vocabulary"
            )
        self.bert.encoder.load_state_dict(pretrained.bert.encoder.state_dict())
        self.mlm.load_state_dict(pretrained.mlm.state_dict())
        return self

    def _checked_mask(self, input_ids, target_ids, attention_mask) -> torch.Tensor:
        """Check a batch's shapes; return its attention mask (1 on non-pad ids if not given)."""
        if target_ids is not None and target_ids.shape != input_ids.shape:
            raise ValueError(
                f"target_ids has shape {tuple(target_ids.shape)} but input_ids has "
                f"{tuple(input_ids.shape)}: spelling correction needs a source and a target of "
                "the same length (same-length substitution); drop pairs whose lengths differ"
            )
        if attention_mask is None:
            return (input_ids != self.config.pad_token_id).long()             # (B, T)
        if attention_mask.shape != input_ids.shape:
            raise ValueError(f"attention_mask has shape {tuple(attention_mask.shape)}, expected "
                             f"{tuple(input_ids.shape)} (1 on real characters, 0 on padding)")
        return attention_mask

    def predict(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        """The id of the most likely character at each position, (B, T)."""
        logits = self.forward(input_ids, attention_mask=attention_mask).logits         # (B, T, V)
        return logits.argmax(-1)                                              # (B, T)


class BertCorrector(_Corrector):
    """The baseline "BERT-finetune": the MLM head predicts the right character everywhere."""

    def forward(self, input_ids: torch.Tensor, *, attention_mask: torch.Tensor | None = None,
                target_ids: torch.Tensor | None = None) -> CorrectionOutput:
        attention_mask = self._checked_mask(input_ids, target_ids, attention_mask)  # (B, T)
        hidden = self.bert(input_ids, attention_mask=attention_mask).last_hidden_state
        logits = self.mlm(hidden)                                             # (B, T, V)
        loss = None
        if target_ids is not None:
            loss = correction_loss(logits, target_ids, attention_mask)
        return CorrectionOutput(loss, logits, correction_loss=loss)


class SoftMaskedBert(_Corrector):
    """Detection (Bi-GRU) -> soft masking -> correction (BERT) with the residual e_i."""

    def __init__(self, config: BertConfig, mask_token_id: int, *, residual: bool = True,
                 hard_mask: bool = False, threshold: float = 0.5,
                 correction_weight: float = 0.8, gru_size: int | None = None):
        super().__init__(config, mask_token_id)
        if not 0.0 <= correction_weight <= 1.0:
            raise ValueError(f"correction_weight (the paper's lambda) must lie in [0, 1], got "
                             f"{correction_weight}")
        self.residual = residual
        self.hard_mask = hard_mask
        self.threshold = threshold
        self.correction_weight = correction_weight
        self.detector = DetectionNetwork(config.hidden_size, gru_size)

    def forward(self, input_ids: torch.Tensor, *, attention_mask: torch.Tensor | None = None,
                target_ids: torch.Tensor | None = None,
                token_type_ids: torch.Tensor | None = None,
                detection_probs: torch.Tensor | None = None) -> CorrectionOutput:
        """detection_probs (B, T), for analysis only: soft-mask with these error probabilities
        instead of the detector's (e.g. the gold labels, to see what perfect detection would
        give the correction network). The output's detection_probs stay the detector's."""
        attention_mask = self._checked_mask(input_ids, target_ids, attention_mask)  # (B, T)
        if detection_probs is not None and detection_probs.shape != input_ids.shape:
            raise ValueError(f"detection_probs has shape {tuple(detection_probs.shape)}, expected "
                             f"{tuple(input_ids.shape)}: one error probability per character")
        self.bert.encoder.check_inputs(input_ids, token_type_ids, attention_mask, None)
        embed = self.bert.encoder.embeddings
        e = embed(input_ids, token_type_ids)                                  # (B, T, H)
        mask_ids = torch.full_like(input_ids, self.mask_token_id)             # (B, T)
        e_mask = embed(mask_ids, token_type_ids).detach()                     # (B, T, H)

        detection_logits = self.detector(e, attention_mask)                   # (B, T)
        p = torch.sigmoid(detection_logits)                                   # (B, T)
        p_used = p if detection_probs is None else detection_probs.to(e.dtype)  # (B, T)
        if self.hard_mask:
            p_used = (p_used > self.threshold).to(e.dtype)                    # (B, T) 0 or 1
        e_soft = soft_mask(p_used, e, e_mask)                                 # (B, T, H)

        h = self.bert(None, attention_mask=attention_mask,
                      inputs_embeds=e_soft).last_hidden_state                 # (B, T, H)
        if self.residual:
            h = h + e                                                         # (B, T, H)
        logits = self.mlm(h)                                                  # (B, T, V)

        loss = l_c = l_d = None
        if target_ids is not None:
            is_error = (input_ids != target_ids).long()                       # (B, T) g_i
            l_c = correction_loss(logits, target_ids, attention_mask)
            l_d = detection_loss(detection_logits, is_error, attention_mask)
            loss = self.correction_weight * l_c + (1 - self.correction_weight) * l_d
        return CorrectionOutput(loss, logits, p, l_c, l_d)
