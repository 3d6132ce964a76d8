"""Tang et al. (2019)'s student: a one-layer BiLSTM sentence classifier.

    e_t = Embedding(x_t)
    (h_fwd_t, h_bwd_t) = BiLSTM(e_1..e_n)       run over the n real tokens only (packed)
    s = [h_fwd_n ; h_bwd_1]                     forward state at the true last token,
                                                backward state at the first token
    logits = W_2 ReLU(W_1 s + b_1) + b_2

The summary is the classic trap. With right padding, `out[:, -1]` is the forward LSTM after
the padding and the backward LSTM after a single (padding) token. Packing the sequence keeps
the padding out of both directions; then the forward state is read at position n - 1 and the
backward state at position 0 (the same numbers as `h_n`, tested).
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from ..attention import check_attention_mask

__all__ = ["BiLSTMClassifier", "bilstm_summary", "bilstm_summary_reference"]


def bilstm_summary(outputs: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """[forward state at the last real token ; backward state at the first token].

    outputs: (B, T, 2H) from a bidirectional LSTM run on packed (unpadded) sequences, forward
    half first. lengths: (B,) real tokens per row. Returns (B, 2H).
    """
    if outputs.dim() != 3 or outputs.size(-1) % 2:
        raise ValueError(f"outputs must be (B, T, 2H), got shape {tuple(outputs.shape)}")
    hidden = outputs.size(-1) // 2
    rows = torch.arange(outputs.size(0), device=outputs.device)               # (B,)
    forward_last = outputs[rows, lengths - 1, :hidden]                        # (B, H)
    backward_first = outputs[:, 0, hidden:]                                   # (B, H)
    return torch.cat([forward_last, backward_first], dim=-1)                  # (B, 2H)


def bilstm_summary_reference(outputs: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """The same summary, one sequence at a time (slow, to read and to test against)."""
    hidden = outputs.size(-1) // 2
    rows = []
    for row, length in enumerate(lengths.tolist()):
        forward_last = outputs[row, length - 1, :hidden]                      # (H,)
        backward_first = outputs[row, 0, hidden:]                             # (H,)
        rows.append(torch.cat([forward_last, backward_first]))                # (2H,)
    return torch.stack(rows)                                                  # (B, 2H)


class BiLSTMClassifier(nn.Module):
    """Embedding, one BiLSTM layer, the [fwd_last ; bwd_first] summary, ReLU layer, output."""

    def __init__(self, vocab_size: int, num_classes: int, *, embedding_size: int = 64,
                 hidden_size: int = 64, fc_size: int | None = None, pad_id: int = 0,
                 dropout: float = 0.0, summary=None):
        """summary(outputs, lengths) -> (B, 2H): `bilstm_summary` when None (a lesson passes the
        student's own once it is graded correct)."""
        super().__init__()
        self.summary = summary or bilstm_summary
        if num_classes < 2:
            raise ValueError(f"a classifier needs at least 2 classes, got {num_classes}")
        fc_size = fc_size or 2 * hidden_size
        self.pad_id = pad_id
        self.embedding = nn.Embedding(vocab_size, embedding_size, padding_idx=pad_id)
        self.lstm = nn.LSTM(embedding_size, hidden_size, batch_first=True, bidirectional=True)
        self.dropout = nn.Dropout(dropout)
        self.fc = nn.Linear(2 * hidden_size, fc_size)
        self.out = nn.Linear(fc_size, num_classes)

    def encode(self, input_ids: torch.Tensor, attention_mask: torch.Tensor | None = None
               ) -> torch.Tensor:
        """(B, T) ids -> (B, 2H) sentence vectors. Padding is read from `attention_mask`
        (1 = real token), or from the pad id when no mask is given."""
        if input_ids.dim() != 2:
            raise ValueError(
                f"input_ids must be (batch, length), got shape {tuple(input_ids.shape)}: "
                f"use input_ids[None] for a single sequence"
            )
        vocab_size = self.embedding.num_embeddings
        if input_ids.numel() and (int(input_ids.min()) < 0 or int(input_ids.max()) >= vocab_size):
            bad = int(input_ids.min()) if int(input_ids.min()) < 0 else int(input_ids.max())
            raise ValueError(f"token id {bad} is outside the vocabulary (vocab_size={vocab_size}): "
                             f"encode with the tokenizer the model was built for")
        check_attention_mask(attention_mask, tuple(input_ids.shape))
        mask = attention_mask if attention_mask is not None else input_ids != self.pad_id
        mask = mask.to(torch.bool)                                            # (B, T)
        lengths = mask.long().sum(dim=1)                                      # (B,)
        if int(lengths.min()) < 1:
            raise ValueError("every sequence needs at least one real token (a length of 0)")
        # The LSTM reads the first `length` tokens of each row, so padding must be on the right:
        # a left-padded row would be read as padding followed by a cut-off sentence.
        positions = torch.arange(input_ids.size(1), device=input_ids.device)  # (T,)
        if bool((mask != (positions[None, :] < lengths[:, None])).any()):
            raise ValueError(
                "BiLSTMClassifier needs padding on the right (real tokens first, then padding): "
                "some rows have padding before a real token. Pad on the right, or flip "
                "left-padded rows before calling the model"
            )
        embedded = self.embedding(input_ids)                                  # (B, T, E)
        packed = pack_padded_sequence(embedded, lengths.cpu(), batch_first=True,
                                      enforce_sorted=False)
        outputs, _ = self.lstm(packed)
        outputs, _ = pad_packed_sequence(outputs, batch_first=True,
                                         total_length=input_ids.size(1))      # (B, T, 2H)
        return self.summary(outputs, lengths)                                 # (B, 2H)

    def forward(self, input_ids: torch.Tensor, *, attention_mask: torch.Tensor | None = None
                ) -> torch.Tensor:
        summary = self.dropout(self.encode(input_ids, attention_mask))        # (B, 2H)
        return self.out(torch.relu(self.fc(summary)))                         # (B, classes)
