"""TinyBERT's layer mapping and layer losses."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from minibert.attention import attention_bias
from minibert.config import BertConfig
from minibert.models.bert import BertForSequenceClassification
from minibert.models.tinybert import (
    TinyBertStudent,
    attention_mse,
    attention_mse_reference,
    classifier_layer_outputs,
    hidden_mse,
    intermediate_loss,
    layer_mapping,
    prediction_loss,
)


def test_layer_mapping_is_uniform_and_starts_at_the_embeddings():
    assert layer_mapping(4, 12) == [0, 3, 6, 9, 12]
    assert layer_mapping(2, 4) == [0, 2, 4]
    assert layer_mapping(3, 3) == [0, 1, 2, 3]
    with pytest.raises(ValueError, match="multiple"):
        layer_mapping(3, 4)


def test_attention_mse_zeroes_masked_entries_in_both_models():
    generator = torch.Generator().manual_seed(0)
    student = torch.randn(2, 4, 5, 5, generator=generator)
    teacher = torch.randn(2, 4, 5, 5, generator=generator)
    mask = torch.tensor([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0]])
    bias = attention_bias(mask, 5, 5)                                         # (B, 1, 1, T)
    masked_s, masked_t = student + bias, teacher + 3.0 * bias
    loss = attention_mse(masked_s, masked_t)
    assert torch.isfinite(loss)
    keep = mask.bool()[:, None, None, :].expand_as(student)
    expected = torch.where(keep, student - teacher, 0.0).pow(2).mean()
    assert torch.allclose(loss, expected)
    assert torch.allclose(loss, attention_mse_reference(masked_s, masked_t))


def test_attention_mse_names_the_head_count_fix():
    with pytest.raises(ValueError, match="num_heads"):
        attention_mse(torch.zeros(1, 2, 3, 3), torch.zeros(1, 4, 3, 3))


def test_hidden_mse_projects_the_student():
    projection = nn.Linear(8, 16)
    student, teacher = torch.randn(2, 3, 8), torch.randn(2, 3, 16)
    assert torch.allclose(hidden_mse(student, teacher, projection),
                          ((projection(student) - teacher) ** 2).mean())
    with pytest.raises(ValueError, match="d_S to d_T"):
        hidden_mse(student, torch.randn(2, 3, 12), projection)


def test_prediction_loss_is_soft_cross_entropy():
    student, teacher = torch.randn(5, 3), torch.randn(5, 3)
    expected = -(teacher.softmax(-1) * student.log_softmax(-1)).sum(-1).mean()
    assert torch.allclose(prediction_loss(student, teacher), expected)


def test_intermediate_loss_runs_end_to_end_and_reaches_every_student_weight():
    torch.manual_seed(0)
    teacher_config = BertConfig(vocab_size=40, hidden_size=32, num_layers=4, num_heads=4,
                                max_position=16, dropout=0.0, attention_dropout=0.0)
    teacher = BertForSequenceClassification(teacher_config, 2).eval()
    student = TinyBertStudent(teacher_config.replace(hidden_size=16, num_layers=2), 2, 32)
    ids = torch.randint(5, 40, (3, 7))
    mask = torch.tensor([[1] * 7, [1] * 5 + [0] * 2, [1] * 3 + [0] * 4])
    with torch.no_grad():
        teacher_out = classifier_layer_outputs(teacher, ids, mask)
    assert len(teacher_out.hidden_states) == 5 and len(teacher_out.scores) == 4
    losses = intermediate_loss(student(ids, attention_mask=mask), teacher_out, layer_mapping(2, 4),
                               student.fit_dense)
    assert all(torch.isfinite(v) for v in losses.values())
    losses["loss"].backward()
    assert student.fit_dense.weight.grad.abs().sum() > 0
    layer = student.model.bert.encoder.layers[1].attention.attention.query
    assert layer.weight.grad.abs().sum() > 0
    with pytest.raises(ValueError, match="layer_mapping"):
        intermediate_loss(student(ids, attention_mask=mask), teacher_out, [0, 4], student.fit_dense)
