"""Lesson 13's shared classifier head and the Pareto front."""

from __future__ import annotations

import pytest
import torch

from minibert.config import BertConfig
from minibert.course.compare import EncoderClassifier, pareto_front
from minibert.models import (
    AlbertModel,
    BertModel,
    DebertaModel,
    DistilBertModel,
    ElectraModel,
    RobertaModel,
    albert_config,
    distilbert_config,
    roberta_config,
)
from minibert.models.deberta import deberta_config

SHAPE = dict(vocab_size=50, hidden_size=16, num_layers=2, num_heads=2, intermediate_size=32,
             max_position=16, dropout=0.0, attention_dropout=0.0)


def encoders():
    bert = BertConfig(**SHAPE)
    roberta = roberta_config(12, **{k: v for k, v in SHAPE.items() if k != "max_position"})
    return {
        "bert": (BertModel(bert, add_pooler=False), bert),
        "roberta": (RobertaModel(roberta), roberta),
        "albert": (AlbertModel(albert_config("bert-nano", **SHAPE, embedding_size=8)), None),
        "electra": (ElectraModel(bert), bert),
        "deberta": (DebertaModel(deberta_config("bert-nano", **SHAPE, max_relative=8)), None),
        "distilbert": (DistilBertModel(distilbert_config(bert, num_layers=1)), None),
    }


@pytest.mark.parametrize("name", ["bert", "roberta", "albert", "electra", "deberta", "distilbert"])
def test_every_encoder_gets_the_same_head_and_padding_changes_nothing(name):
    torch.manual_seed(0)
    encoder, config = encoders()[name]
    model = EncoderClassifier(encoder, config or encoder.config, num_classes=3).eval()
    ids = torch.tensor([[2, 7, 8, 9, 3, 0, 0], [2, 7, 8, 9, 3, 11, 3]])        # (2, 7)
    mask = (ids != 0).long()
    if name == "roberta":                                                    # RoBERTa pads with 1
        ids = ids.masked_fill(mask == 0, 1)
    out = model(ids, attention_mask=mask, labels=torch.tensor([0, 2]))
    assert out.logits.shape == (2, 3) and out.loss.ndim == 0
    alone = model(ids[:1, :5], attention_mask=mask[:1, :5]).logits
    assert torch.allclose(alone, out.logits[:1], atol=1e-5)
    out.loss.backward()
    assert model.encoder.parameters().__next__().grad is not None


def test_a_head_built_for_another_width_names_the_fix():
    encoder = BertModel(BertConfig(**SHAPE), add_pooler=False)
    model = EncoderClassifier(encoder, BertConfig(**{**SHAPE, "hidden_size": 32}), num_classes=2)
    with pytest.raises(ValueError, match="pass the encoder's config"):
        model(torch.tensor([[2, 5, 3]]))
    with pytest.raises(TypeError, match="nn.Module"):
        EncoderClassifier(None, BertConfig(**SHAPE), num_classes=2)


def test_pareto_front_on_hand_made_points():
    cost = torch.tensor([1.0, 2.0, 2.0, 3.0, 4.0])
    quality = torch.tensor([0.6, 0.8, 0.7, 0.8, 0.9])
    assert pareto_front(cost, quality).tolist() == [True, True, False, False, True]
    assert pareto_front([1.0, 1.0], [0.5, 0.5]).tolist() == [True, True]       # ties both stay
    assert pareto_front([1.0, 1.0], [0.5, 0.6]).tolist() == [False, True]      # same cost, better
    with pytest.raises(ValueError, match="same length"):
        pareto_front([1.0, 2.0], [0.5])
