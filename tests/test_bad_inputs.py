"""The mistakes a student makes get an error that names the fix, never a silent wrong answer.

Each test is a repro of a finding: a config that switched on what it meant to switch off, a
mask the models would have misread, a weights file whose header lies, a loader handed the
wrong model, a loss that returned NaN.
"""

from __future__ import annotations

import json
import struct
import warnings

import pytest
import torch

from minibert import distill, pretrained
from minibert.config import BertConfig
from minibert.models import (
    AlbertModel,
    BertForPreTraining,
    BertForSequenceClassification,
    BertModel,
    DebertaModel,
    DistilBertModel,
    ElectraModel,
    RobertaModel,
    albert_config,
    distilbert_config,
    roberta_config,
)
from minibert.models.bilstm import BiLSTMClassifier
from minibert.models.deberta import DebertaConfig, deberta_config
from minibert.models.fastbert import FastBertForSequenceClassification
from minibert.models.soft_masked_bert import SoftMaskedBert

SHAPE = dict(vocab_size=50, hidden_size=16, num_layers=2, num_heads=2, intermediate_size=32,
             max_position=16, dropout=0.0, attention_dropout=0.0)


# --- BertConfig ------------------------------------------------------------------------------

@pytest.mark.parametrize("field, value, message", [
    ("causal", "no", "True or False"),          # a truthy string built a causal model
    ("use_sdpa", 1, "True or False"),
    ("num_heads", True, "positive integer"),    # True is an int in Python
    ("layer_norm_eps", -1, "> 0"),              # gave NaN outputs
    ("layer_norm_eps", float("nan"), "finite"),
    ("type_vocab_size", 2.5, "integer >= 0"),   # failed later inside nn.Embedding
    ("pad_token_id", -1, "integer >= 0"),
    ("dropout", "0.1", "finite number"),
    ("initializer_range", 0, "> 0"),
])
def test_config_refuses_wrong_types_and_ranges(field, value, message):
    with pytest.raises(ValueError, match=message):
        BertConfig(**{field: value})


def test_deberta_config_refuses_wrong_types():
    with pytest.raises(ValueError, match="True or False"):
        DebertaConfig(share_att_key="yes")
    with pytest.raises(ValueError, match="integer"):
        DebertaConfig(max_relative=2.5)


def test_a_config_read_back_from_json_is_accepted():
    config = BertConfig(**SHAPE, causal=True)
    assert BertConfig(**json.loads(json.dumps(config.to_dict()))) == config


# --- masks, on every model -------------------------------------------------------------------

def models() -> dict:
    torch.manual_seed(0)
    bert = BertConfig(**SHAPE)
    roberta = roberta_config(12, **{k: v for k, v in SHAPE.items() if k != "max_position"})
    return {
        "BertModel": BertModel(bert),
        "BertForPreTraining": BertForPreTraining(bert),
        "BertForSequenceClassification": BertForSequenceClassification(bert, num_classes=2),
        "RobertaModel": RobertaModel(roberta),
        "AlbertModel": AlbertModel(albert_config("bert-nano", **SHAPE, embedding_size=8)),
        "ElectraModel": ElectraModel(bert),
        "DebertaModel": DebertaModel(deberta_config("bert-nano", **SHAPE, max_relative=8)),
        "DistilBertModel": DistilBertModel(distilbert_config(bert, num_layers=1)),
        "FastBert": FastBertForSequenceClassification(bert, num_classes=2),
        "SoftMaskedBert": SoftMaskedBert(bert, mask_token_id=4),
        "BiLSTMClassifier": BiLSTMClassifier(vocab_size=50, num_classes=2, embedding_size=8,
                                             hidden_size=8, fc_size=8),
    }


MODELS = list(models())
IDS = torch.tensor([[2, 7, 8, 9, 3, 5], [2, 7, 8, 3, 5, 6]])                  # (2, 6)
BAD_MASKS = {
    "(1, T) for a batch of 2": (torch.ones(1, 6, dtype=torch.long), "shape"),
    "1-d": (torch.ones(6, dtype=torch.long), "shape"),
    "(B, T, T)": (torch.ones(2, 6, 6, dtype=torch.long), "shape"),
    "too short": (torch.ones(2, 5, dtype=torch.long), "shape"),
    "additive 0 / -10000": (torch.tensor([[0.0] * 4 + [-1e4] * 2] * 2), "additive"),
    "values other than 0 and 1": (torch.full((2, 6), 2), "only 0 and 1"),
    "an all-zero row": (torch.tensor([[1] * 6, [0] * 6]), "all zeros"),
}


@pytest.mark.parametrize("mask_name", list(BAD_MASKS))
@pytest.mark.parametrize("model_name", MODELS)
def test_no_model_accepts_a_mask_it_would_misread(model_name, mask_name):
    model = models()[model_name].eval()
    mask, message = BAD_MASKS[mask_name]
    with pytest.raises(ValueError, match=message):
        model(IDS, attention_mask=mask)


@pytest.mark.parametrize("model_name", MODELS)
def test_every_model_takes_everything_after_input_ids_by_keyword(model_name):
    # BertModel(ids, token_type_ids, mask) and RobertaModel(ids, mask) disagreed on the order,
    # so rob(ids, torch.zeros_like(ids)) was read as an all-zero mask.
    model = models()[model_name].eval()
    with pytest.raises(TypeError, match="positional"):
        model(IDS, torch.ones_like(IDS))
    model(IDS, attention_mask=torch.ones_like(IDS))               # the keyword form runs


def test_a_good_mask_of_any_integer_or_bool_dtype_gives_the_same_answer():
    model = models()["BertModel"].eval()
    mask = torch.tensor([[1, 1, 1, 1, 0, 0], [1, 1, 1, 1, 1, 1]])
    reference = model(IDS, attention_mask=mask).last_hidden_state
    for same in (mask.bool(), mask.float(), mask.int()):
        assert torch.allclose(model(IDS, attention_mask=same).last_hidden_state, reference)


def test_an_empty_batch_names_the_fix():
    with pytest.raises(ValueError, match="no sequences"):
        models()["BertModel"](torch.zeros(0, 6, dtype=torch.long))


# --- BiLSTMClassifier ------------------------------------------------------------------------

def test_bilstm_refuses_left_padding_instead_of_reading_it_as_a_sentence():
    model = models()["BiLSTMClassifier"].eval()
    right = torch.tensor([[7, 8, 9, 0, 0]])
    left = torch.tensor([[0, 0, 7, 8, 9]])
    model(right, attention_mask=(right != 0).long())
    with pytest.raises(ValueError, match="padding on the right"):
        model(left, attention_mask=(left != 0).long())


def test_bilstm_refuses_a_short_mask_and_ids_outside_its_vocabulary():
    model = models()["BiLSTMClassifier"].eval()
    with pytest.raises(ValueError, match="shape"):
        model(IDS, attention_mask=torch.ones(2, 4, dtype=torch.long))
    with pytest.raises(ValueError, match="outside the vocabulary"):
        model(IDS + 100)


# --- a safetensors header that lies ----------------------------------------------------------

def write_safetensors(path, header: dict, data: bytes) -> None:
    raw = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(raw)) + raw + data)


def test_the_reader_refuses_a_header_that_does_not_describe_the_data(tmp_path):
    values = torch.arange(6, dtype=torch.float32).numpy().tobytes()           # 24 bytes
    path = tmp_path / "model.safetensors"
    cases = {
        "F16 for 24 bytes of F32": ({"w": {"dtype": "F16", "shape": [2, 3],
                                           "data_offsets": [0, 24]}}, "takes 12 bytes"),
        "[0, 0] for a (2, 3) tensor": ({"w": {"dtype": "F32", "shape": [2, 3],
                                              "data_offsets": [0, 0]}}, "takes 24 bytes"),
        "negative offsets": ({"w": {"dtype": "F32", "shape": [2, 3],
                                    "data_offsets": [-24, 0]}}, "0 <= begin <= end"),
        "overlapping tensors": ({"a": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]},
                                 "b": {"dtype": "F32", "shape": [4], "data_offsets": [8, 24]}},
                                "overlaps"),
        "a gap": ({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},
                   "b": {"dtype": "F32", "shape": [4], "data_offsets": [8, 24]}}, "gap"),
        "no shape": ({"w": {"dtype": "F32", "data_offsets": [0, 24]}}, "lacks"),
    }
    for header, message in cases.values():
        write_safetensors(path, header, values)
        with pytest.raises(ValueError, match=message):
            pretrained.read_safetensors(path)
    write_safetensors(path, {"w": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]}},
                      values)
    assert torch.equal(pretrained.read_safetensors(path)["w"], torch.arange(6.0).view(2, 3))


def test_weights_relabelled_as_integers_are_refused(tmp_path):
    # Same width, so the byte count cannot tell: the loader refuses integer weights.
    from minibert.interop import copy_weights, name_map

    model = BertModel(BertConfig(**SHAPE))
    state = {hf: p.detach().clone() for p, hf in
             ((dict(model.named_parameters())[mine], hf) for mine, hf in name_map(model).items())}
    name = next(iter(state))
    state[name] = state[name].view(torch.int32)
    with pytest.raises(ValueError, match="hold integers"):
        copy_weights(BertModel(BertConfig(**SHAPE)), state, name_map(model))


# --- interop: the model type is checked before its config is read ----------------------------

def test_from_transformers_checks_the_model_type_first():
    transformers = pytest.importorskip("transformers")
    from minibert.interop import electra_from_transformers, from_transformers

    gpt2 = transformers.GPT2Model(transformers.GPT2Config(n_layer=1, n_embd=16, n_head=2,
                                                          vocab_size=50, bos_token_id=0,
                                                          eos_token_id=0))
    distil = transformers.DistilBertModel(transformers.DistilBertConfig(
        n_layers=1, dim=16, n_heads=2, hidden_dim=32, vocab_size=50))
    with pytest.raises(TypeError, match="no loader for gpt2"):
        from_transformers(gpt2)
    with pytest.raises(TypeError, match="distilbert_from_transformers"):
        from_transformers(distil)
    with pytest.raises(TypeError, match="load it first with transformers"):
        electra_from_transformers("google/electra-small-discriminator")


# --- losses that returned NaN ----------------------------------------------------------------

def test_an_infinite_temperature_is_refused():
    with pytest.raises(ValueError, match="finite"):
        distill.kd_loss(torch.randn(3, 5), torch.randn(3, 5), temperature=float("inf"))


def test_triple_loss_with_no_masked_position_is_zero_not_nan():
    hidden = torch.randn(2, 4, 8, requires_grad=True)
    logits = torch.zeros(0, 10, requires_grad=True)
    out = distill.triple_loss(logits, torch.zeros(0, 10), torch.zeros(0, dtype=torch.long),
                              hidden, hidden.detach() + 1, torch.ones(2, 4))
    assert torch.isfinite(out["loss"]) and out["ce"] == 0 and out["mlm"] == 0
    out["loss"].backward()


def test_mlm_labels_without_an_ignored_position_warn():
    model = models()["BertForPreTraining"]
    with pytest.warns(UserWarning, match="IGNORE_INDEX"):
        model(IDS, mlm_labels=torch.zeros_like(IDS))              # 0 where -100 was meant
    labels = torch.full_like(IDS, -100)
    labels[:, 2] = IDS[:, 2]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model(IDS, mlm_labels=labels)
    with pytest.raises(ValueError, match="outside the vocabulary"):
        model(IDS, mlm_labels=labels.masked_fill(labels >= 0, 99))
