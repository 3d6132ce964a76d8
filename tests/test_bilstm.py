"""The BiLSTM student: its summary ignores padding in both directions."""

from __future__ import annotations

import pytest
import torch

from minibert.models.bilstm import BiLSTMClassifier, bilstm_summary, bilstm_summary_reference


def test_summary_matches_the_loop_reference():
    outputs = torch.randn(3, 6, 8)
    lengths = torch.tensor([6, 2, 4])
    assert torch.equal(bilstm_summary(outputs, lengths), bilstm_summary_reference(outputs, lengths))


def test_summary_equals_h_n_of_the_packed_lstm():
    torch.manual_seed(0)
    model = BiLSTMClassifier(30, 2, embedding_size=8, hidden_size=5)
    ids = torch.randint(5, 30, (3, 6))
    mask = torch.tensor([[1] * 6, [1] * 2 + [0] * 4, [1] * 4 + [0] * 2])
    ids = ids * mask
    lengths = mask.sum(1)
    packed = torch.nn.utils.rnn.pack_padded_sequence(model.embedding(ids), lengths,
                                                     batch_first=True, enforce_sorted=False)
    _, (h_n, _) = model.lstm(packed)                                          # (2, B, H)
    expected = torch.cat([h_n[0], h_n[1]], dim=-1)                            # (B, 2H)
    assert torch.allclose(model.encode(ids, mask), expected, atol=1e-6)


def test_padding_does_not_change_the_logits():
    torch.manual_seed(0)
    model = BiLSTMClassifier(30, 3, embedding_size=8, hidden_size=5).eval()
    sentence = torch.tensor([[7, 8, 9, 10]])
    padded = torch.tensor([[7, 8, 9, 10, 0, 0, 0]])
    assert torch.allclose(model(sentence), model(padded), atol=1e-6)
    # the naive out[:, -1] summary would differ: the backward state there has read only padding


def test_bad_input_names_the_fix():
    model = BiLSTMClassifier(30, 2, embedding_size=8, hidden_size=5)
    with pytest.raises(ValueError, match=r"input_ids\[None\]"):
        model(torch.tensor([5, 6, 7]))
    with pytest.raises(ValueError, match="at least one real token"):
        model(torch.tensor([[5, 6], [0, 0]]))


def test_the_summary_can_be_the_students_own():
    seen = []

    def my_summary(outputs, lengths):
        seen.append(tuple(outputs.shape))
        return bilstm_summary_reference(outputs, lengths)

    torch.manual_seed(0)
    ours = BiLSTMClassifier(vocab_size=20, num_classes=2, embedding_size=8, hidden_size=4).eval()
    torch.manual_seed(0)
    theirs = BiLSTMClassifier(vocab_size=20, num_classes=2, embedding_size=8, hidden_size=4,
                              summary=my_summary).eval()
    ids = torch.tensor([[3, 4, 5, 0], [6, 7, 0, 0]])
    mask = (ids != 0).long()
    assert torch.allclose(ours(ids, attention_mask=mask), theirs(ids, attention_mask=mask))
    assert seen == [(2, 4, 8)]
