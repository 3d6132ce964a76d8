"""BERT assembled from the library: shapes, tied weights, the MLM loss, gradients, sharing,
clear errors, determinism and the causal mask."""

import pytest
import torch
import torch.nn.functional as F

from minibert.config import BertConfig
from minibert.models import BertForPreTraining, BertForSequenceClassification, BertModel

V, H, L, HEADS, FFN, P = 50, 32, 3, 4, 48, 16
B, T = 4, 10


def config(**changes) -> BertConfig:
    settings = dict(vocab_size=V, hidden_size=H, num_layers=L, num_heads=HEADS,
                    intermediate_size=FFN, max_position=P, dropout=0.0, attention_dropout=0.0)
    return BertConfig(**{**settings, **changes})


def inputs(seed=0):
    """ids (B, T) with [PAD]=0 after each sequence's length, segments 0 then 1, the mask."""
    generator = torch.Generator().manual_seed(seed)
    ids = torch.randint(1, V, (B, T), generator=generator)
    mask = (torch.arange(T)[None, :] < torch.tensor([10, 8, 5, 3])[:, None]).long()
    ids[mask == 0] = 0
    segments = (torch.arange(T)[None, :] >= 4).long() * mask
    return ids, segments, mask


def mlm_labels(ids):
    labels = torch.full_like(ids, -100)
    labels[0, [1, 5, 9]] = ids[0, [1, 5, 9]]
    labels[2, 2] = ids[2, 2]
    return labels


def unique_parameter_count(model: torch.nn.Module) -> int:
    """Each tensor once, however many layers (or heads) hold it."""
    unique = {id(p): p for module in model.modules() for p in module.parameters(recurse=False)}
    return sum(p.numel() for p in unique.values())


# --- shapes -------------------------------------------------------------------------------

def test_bert_model_shapes():
    model = BertModel(config()).eval()
    ids, segments, mask = inputs()
    out = model(ids, token_type_ids=segments, attention_mask=mask, output_hidden_states=True,
                output_attentions=True)
    assert out.last_hidden_state.shape == (B, T, H)
    assert out.pooled.shape == (B, H)
    assert len(out.hidden_states) == L + 1
    assert all(h.shape == (B, T, H) for h in out.hidden_states)
    assert len(out.attentions) == len(out.scores) == L
    assert all(a.shape == (B, HEADS, T, T) for a in out.attentions + out.scores)
    assert torch.equal(out.hidden_states[-1], out.last_hidden_state)
    plain = model(ids)
    assert plain.hidden_states is None and plain.attentions is None and plain.scores is None


def test_pretraining_shapes():
    model = BertForPreTraining(config()).eval()
    ids, segments, mask = inputs()
    out = model(ids, token_type_ids=segments, attention_mask=mask)
    assert out.mlm_logits.shape == (B, T, V)
    assert out.nsp_logits.shape == (B, 2)
    assert out.loss is None
    labels = mlm_labels(ids)
    out = model(ids, token_type_ids=segments, attention_mask=mask, mlm_labels=labels,
                nsp_labels=torch.tensor([0, 1, 1, 0]))
    assert out.mlm_logits.shape == (4, V)          # only the 4 labelled positions are scored
    assert out.mlm_targets.tolist() == labels[labels != -100].tolist()
    assert out.loss.shape == () and torch.allclose(out.loss, out.mlm_loss + out.nsp_loss)


def test_pretraining_without_nsp_has_no_pooler():
    model = BertForPreTraining(config(), nsp=False)
    assert model.nsp is None and model.bert.pooler is None
    ids, segments, mask = inputs()
    assert model(ids, token_type_ids=segments, attention_mask=mask).nsp_logits is None
    with pytest.raises(ValueError, match="nsp=False"):
        model(ids, nsp_labels=torch.zeros(B, dtype=torch.long))


def test_sequence_classification_shapes():
    model = BertForSequenceClassification(config(), num_classes=3)
    ids, segments, mask = inputs()
    out = model(ids, token_type_ids=segments, attention_mask=mask, labels=torch.tensor([0, 1, 2,
                                                                                        1]))
    assert out.logits.shape == (B, 3)
    assert out.loss.shape == ()


def test_classifier_on_an_encoder_pretrained_without_nsp():
    pretrained = BertForPreTraining(config(), nsp=False)
    model = BertForSequenceClassification(config(), num_classes=2, bert=pretrained.bert)
    assert model.bert is pretrained.bert and model.bert.pooler is not None
    assert model(inputs()[0]).logits.shape == (B, 2)


# --- the MLM head -------------------------------------------------------------------------

def test_mlm_decoder_is_the_word_embedding_with_its_own_bias():
    model = BertForPreTraining(config())
    table = model.bert.word_embeddings.weight
    assert model.mlm.word_embeddings.weight is table
    assert model.mlm.word_embeddings.weight.data_ptr() == table.data_ptr()
    assert model.mlm.bias.shape == (V,)
    assert all(model.mlm.bias is not p for name, p in model.named_parameters()
               if name != "mlm.bias")
    with torch.no_grad():                  # one tensor: a change to one is a change to the other
        table[3, 0] = 7.0
    assert model.mlm.word_embeddings.weight[3, 0].item() == 7.0


def test_mlm_loss_is_mean_cross_entropy_over_selected_positions_only():
    model = BertForPreTraining(config()).eval()
    ids, segments, mask = inputs()
    labels = mlm_labels(ids)
    with torch.no_grad():
        full = model(ids, token_type_ids=segments,
                     attention_mask=mask).mlm_logits                        # (B, T, V)
        loss = model(ids, token_type_ids=segments, attention_mask=mask, mlm_labels=labels).mlm_loss
    selected = labels != -100
    per_position = F.cross_entropy(full[selected], labels[selected], reduction="none")
    assert torch.allclose(loss, per_position.sum() / selected.sum(), atol=1e-6)
    everywhere = F.cross_entropy(full.reshape(-1, V), ids.reshape(-1))
    assert not torch.allclose(loss, everywhere), "unselected positions must carry no loss"


def test_mlm_loss_with_nothing_selected_is_zero_and_differentiable():
    model = BertForPreTraining(config())
    ids, segments, mask = inputs()
    out = model(ids, token_type_ids=segments, attention_mask=mask,
                mlm_labels=torch.full_like(ids, -100))
    assert out.mlm_loss.item() == 0.0
    out.mlm_loss.backward()


# --- gradients ----------------------------------------------------------------------------

def test_gradient_reaches_every_parameter():
    model = BertForPreTraining(config())
    ids, segments, mask = inputs()
    out = model(ids, token_type_ids=segments, attention_mask=mask, mlm_labels=mlm_labels(ids),
                nsp_labels=torch.tensor([0, 1, 1, 0]))
    out.loss.backward()
    names = [name for name, _ in model.named_parameters()]
    assert any(name.startswith("bert.pooler.") for name in names)
    for name, p in model.named_parameters():
        assert p.grad is not None and p.grad.abs().sum() > 0, f"no gradient reaches {name}"


def test_gradient_reaches_every_classifier_parameter():
    model = BertForSequenceClassification(config(), num_classes=2)
    ids, segments, mask = inputs()
    model(ids, token_type_ids=segments, attention_mask=mask, labels=torch.tensor([0, 1, 1,
                                                                                  0])).loss.backward()
    for name, p in model.named_parameters():
        assert p.grad is not None and p.grad.abs().sum() > 0, f"no gradient reaches {name}"


# --- cross-layer sharing ------------------------------------------------------------------

def expected_counts(num_layers: int) -> dict[str, int]:
    embeddings = V * H + P * H + 2 * H + 2 * H                  # word, position, segment, LN
    attention = 4 * (H * H + H) + 2 * H                         # Q, K, V, output, LN
    ffn = H * FFN + FFN + FFN * H + H + 2 * H                    # up, down, LN
    pooler = H * H + H
    n = num_layers
    return {
        "none": embeddings + n * (attention + ffn) + pooler,
        "all": embeddings + attention + ffn + pooler,
        "attention": embeddings + attention + n * ffn + pooler,
        "ffn": embeddings + n * attention + ffn + pooler,
    }


@pytest.mark.parametrize("sharing", ["none", "all", "attention", "ffn"])
def test_sharing_parameter_counts(sharing):
    model = BertModel(config(sharing=sharing))
    assert unique_parameter_count(model) == expected_counts(L)[sharing]
    assert sum(p.numel() for p in model.parameters()) == expected_counts(L)[sharing]


def test_sharing_all_count_does_not_depend_on_depth():
    counts = {n: unique_parameter_count(BertModel(config(sharing="all", num_layers=n)))
              for n in (1, 3, 12)}
    assert len(set(counts.values())) == 1, counts


@pytest.mark.parametrize("sharing", ["all", "attention", "ffn"])
def test_shared_blocks_are_the_same_objects(sharing):
    layers = BertModel(config(sharing=sharing)).encoder.layers
    same_attention = all(layer.attention is layers[0].attention for layer in layers)
    same_ffn = all(layer.feed_forward is layers[0].feed_forward for layer in layers)
    assert same_attention == (sharing in ("all", "attention"))
    assert same_ffn == (sharing in ("all", "ffn"))


def test_shared_weights_receive_the_gradient_of_every_layer():
    """The shared gradient equals the sum of the per-layer gradients of an unshared copy."""
    torch.manual_seed(0)
    shared = BertModel(config(sharing="all"))
    unshared = BertModel(config(sharing="none"))
    unshared.load_state_dict(shared.state_dict())    # lists the shared block under every layer
    ids, segments, mask = inputs()
    for model in (shared, unshared):
        model(ids, token_type_ids=segments,
              attention_mask=mask).last_hidden_state.pow(2).mean().backward()
    layer0 = shared.encoder.layers[0]
    for block in ("attention", "feed_forward"):
        for name, p in getattr(layer0, block).named_parameters():
            per_layer = [dict(getattr(layer, block).named_parameters())[name].grad
                         for layer in unshared.encoder.layers]
            assert all(g.abs().sum() > 0 for g in per_layer), f"{block}.{name}: a layer is idle"
            assert torch.allclose(p.grad, sum(per_layer), atol=1e-6), f"{block}.{name}"


# --- clear errors that name the fix -------------------------------------------------------

def test_hidden_size_not_divisible_by_heads():
    with pytest.raises(ValueError, match="not divisible by num_heads=5.*Pick num_heads from"):
        config(num_heads=5)


def test_sequence_longer_than_position_table():
    model = BertModel(config())
    with pytest.raises(ValueError, match="max_position=16.*truncate the inputs"):
        model(torch.ones(1, P + 1, dtype=torch.long))


def test_token_id_out_of_vocabulary():
    model = BertModel(config())
    with pytest.raises(ValueError, match="outside the vocabulary.*vocab_size >= 51"):
        model(torch.tensor([[1, 2, V]]))


def test_unknown_preset():
    with pytest.raises(ValueError, match="unknown preset 'bert-huge'.*bert-mini"):
        BertConfig.from_preset("bert-huge")


def test_unknown_sharing_mode():
    with pytest.raises(ValueError, match="unknown sharing mode 'layers'.*'attention'"):
        config(sharing="layers")


def test_one_dimensional_input_ids():
    model = BertModel(config())
    with pytest.raises(ValueError, match=r"unsqueeze\(0\)"):
        model(torch.tensor([1, 2, 3]))


def test_presets_build():
    assert BertConfig.from_preset("bert-nano").hidden_size == 64
    assert BertConfig.from_preset("bert-mini", vocab_size=2000).vocab_size == 2000


# --- determinism and the causal mask ------------------------------------------------------

def test_same_seed_same_initialisation():
    def build(seed):
        torch.manual_seed(seed)
        return BertForPreTraining(config()).state_dict()

    first, again, other = build(0), build(0), build(1)
    assert all(torch.equal(first[name], again[name]) for name in first)
    assert not all(torch.equal(first[name], other[name]) for name in first)


def test_initialisation_follows_bert():
    model = BertForPreTraining(config(hidden_size=64, intermediate_size=256))
    query = model.bert.encoder.layers[0].attention.attention.query
    assert abs(query.weight.std().item() - 0.02) < 0.003
    assert torch.all(query.bias == 0) and torch.all(model.mlm.bias == 0)
    assert torch.all(model.bert.encoder.embeddings.norm.weight == 1)
    assert torch.all(model.bert.word_embeddings.weight[0] == 0)           # the [PAD] row


@pytest.mark.parametrize("causal", [True, False])
def test_causal_output_ignores_later_tokens(causal):
    model = BertModel(config(causal=causal)).eval()
    ids = inputs()[0][:1]                                                  # (1, T), no padding
    t = 4
    changed = ids.clone()
    changed[0, t + 1:] = (changed[0, t + 1:] % (V - 1)) + 1              # new tokens after t
    with torch.no_grad():
        before = model(ids, output_hidden_states=True).hidden_states
        after = model(changed, output_hidden_states=True).hidden_states
    same = all(torch.allclose(a[:, :t + 1], b[:, :t + 1], atol=1e-6)
               for a, b in zip(before, after))
    assert same == causal, "a causal model's position t must not see tokens after t"


def test_roberta_and_distilbert_share_one_masked_lm_wrapper_and_keep_their_parameter_names():
    from minibert.models import (
        DistilBertForMaskedLM,
        EncoderForMaskedLM,
        MaskedLMOutput,
        RobertaForMaskedLM,
        distilbert_config,
        roberta_config,
    )

    torch.manual_seed(0)
    for model, prefix in ((RobertaForMaskedLM(roberta_config(16, vocab_size=40, num_layers=1,
                                                             hidden_size=16, num_heads=2,
                                                             intermediate_size=32)), "roberta."),
                          (DistilBertForMaskedLM(distilbert_config(
                              "bert-mini", vocab_size=40, num_layers=1)), "distilbert.")):
        assert isinstance(model, EncoderForMaskedLM)
        names = list(model.state_dict())
        assert all(n.startswith((prefix, "mlm.")) for n in names), names[:3]
        assert model.base_model is getattr(model, prefix[:-1])
        ids = torch.randint(3, 40, (2, 6))
        labels = torch.full_like(ids, -100)
        labels[:, 2] = ids[:, 2]
        out = model(ids, mlm_labels=labels)
        assert isinstance(out, MaskedLMOutput) and out.logits.shape == (2, 40)
        assert out.encoder_output.last_hidden_state.shape[:2] == (2, 6)
