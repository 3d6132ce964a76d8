"""Move weights between Hugging Face `transformers` BERT models and minibert models.

The course uses this to check its from-scratch BERT against a well-known implementation (same
weights in, same numbers out) and to load real pretrained BERT weights. Every parameter is copied
through an explicit name map, minibert name -> Hugging Face name, so the correspondence between
the two codebases can be read line by line. `transformers` is optional: it is imported only
inside the functions that need it.
"""

from __future__ import annotations

import torch
from torch import nn

from .config import BertConfig
from .heads import Pooler
from .models.bert import BertForPreTraining, BertModel

# Hugging Face `hidden_act` -> minibert `activation`. "gelu" is exact x * Phi(x); the others are
# the tanh approximation of the original TF code, written in different ways.
ACTIVATIONS_FROM_HF = {
    "gelu": "gelu", "gelu_python": "gelu",
    "gelu_new": "gelu_tanh", "gelu_pytorch_tanh": "gelu_tanh", "gelu_fast": "gelu_tanh",
    "relu": "relu",
}

# The embedding tables: minibert name -> Hugging Face name (BERT, RoBERTa and ALBERT alike).
EMBEDDING_NAMES = {
    "word": "word_embeddings", "position": "position_embeddings",
    "segment": "token_type_embeddings",
}

# Inside one layer: minibert module -> Hugging Face module (each has .weight and .bias).
LAYER_NAMES = {
    "attention.attention.query": "attention.self.query",
    "attention.attention.key": "attention.self.key",
    "attention.attention.value": "attention.self.value",
    "attention.attention.output": "attention.output.dense",
    "attention.norm": "attention.output.LayerNorm",
    "feed_forward.up": "intermediate.dense",
    "feed_forward.down": "output.dense",
    "feed_forward.norm": "output.LayerNorm",
}


def config_from_transformers(hf_config) -> BertConfig:
    """A minibert BertConfig with the same shapes and settings as a Hugging Face BertConfig."""
    position = getattr(hf_config, "position_embedding_type", "absolute")
    if position != "absolute":
        raise ValueError(
            f"position_embedding_type={position!r} is not supported: minibert's BERT has learned "
            f"absolute positions only; load a model with position_embedding_type='absolute'"
        )
    act = hf_config.hidden_act
    if not isinstance(act, str) or act not in ACTIVATIONS_FROM_HF:
        raise ValueError(
            f"hidden_act={act!r} has no minibert equivalent: choose one of "
            f"{sorted(ACTIVATIONS_FROM_HF)}"
        )
    if getattr(hf_config, "add_cross_attention", False):
        raise ValueError("cross-attention (add_cross_attention=True) is not part of minibert")
    pad = hf_config.pad_token_id
    return BertConfig(
        vocab_size=hf_config.vocab_size,
        hidden_size=hf_config.hidden_size,
        num_layers=hf_config.num_hidden_layers,
        num_heads=hf_config.num_attention_heads,
        intermediate_size=hf_config.intermediate_size,
        max_position=hf_config.max_position_embeddings,
        type_vocab_size=hf_config.type_vocab_size,
        activation=ACTIVATIONS_FROM_HF[act],
        dropout=float(hf_config.hidden_dropout_prob),
        attention_dropout=float(hf_config.attention_probs_dropout_prob),
        layer_norm_eps=hf_config.layer_norm_eps,
        initializer_range=hf_config.initializer_range,
        pad_token_id=0 if pad is None else pad,   # only the padding row's gradient depends on it
        causal=bool(getattr(hf_config, "is_decoder", False)),
    )


def name_map(model: nn.Module) -> dict[str, str]:
    """minibert parameter name -> Hugging Face parameter name, for a minibert BERT model."""
    if isinstance(model, BertModel):
        bert, mine, hf = model, "", ""
    elif isinstance(model, BertForPreTraining):
        bert, mine, hf = model.bert, "bert.", "bert."
    else:
        raise TypeError(f"no name map for {type(model).__name__}: pass a BertModel or "
                        f"BertForPreTraining")
    names = {f"{mine}encoder.embeddings.{a}.weight": f"{hf}embeddings.{b}.weight"
             for a, b in EMBEDDING_NAMES.items()}
    modules = {"encoder.embeddings.norm": "embeddings.LayerNorm"}          # weight and bias
    for i in range(model.config.num_layers):
        modules.update({f"encoder.layers.{i}.{a}": f"encoder.layer.{i}.{b}"
                        for a, b in LAYER_NAMES.items()})
    if bert.pooler is not None:
        modules["pooler.dense"] = "pooler.dense"
    modules = {mine + a: hf + b for a, b in modules.items()}
    if isinstance(model, BertForPreTraining):   # the decoder matrix is the word table above
        names["mlm.bias"] = "cls.predictions.decoder.bias"
        modules["mlm.dense"] = "cls.predictions.transform.dense"
        modules["mlm.norm"] = "cls.predictions.transform.LayerNorm"
        if model.nsp is not None:
            modules["nsp.classifier"] = "cls.seq_relationship"
    for a, b in modules.items():
        names.update({f"{a}.weight": f"{b}.weight", f"{a}.bias": f"{b}.bias"})
    return names


LOADERS = {   # a Hugging Face config's model_type -> the minibert loader for it
    "bert": "from_transformers", "roberta": "roberta_from_transformers",
    "albert": "albert_from_transformers", "deberta": "deberta_from_transformers",
    "deberta-v2": "deberta_from_transformers", "distilbert": "distilbert_from_transformers",
    "electra": "electra_from_transformers",
}


def require_model(hf_model, class_names: tuple[str, ...], loader: str) -> None:
    """Refuse anything but the transformers classes `loader` converts, before reading its
    config, and name the loader that fits when there is one."""
    import transformers

    classes = tuple(getattr(transformers, name) for name in class_names)
    if isinstance(hf_model, classes):
        return
    model_type = getattr(getattr(hf_model, "config", None), "model_type", None)
    fits = LOADERS.get(model_type)
    if isinstance(hf_model, (str, bytes)) or hasattr(hf_model, "__fspath__"):
        hint = ("; this converts a model object: load it first with transformers, e.g. "
                "transformers.AutoModel.from_pretrained(a_local_folder)")
    elif fits and fits != loader:
        hint = f"; for a {model_type} model use minibert.interop.{fits}"
    elif fits:
        hint = "; for a model with another head, pass its encoder (e.g. model.bert)"
    elif model_type:
        hint = f"; minibert has no loader for {model_type} models"
    else:
        hint = ""
    wanted = ", ".join(class_names[:-1]) + " or " + class_names[-1]
    raise TypeError(f"{loader} cannot load {type(hf_model).__name__}: pass a transformers "
                    f"{wanted}{hint}")


def from_transformers(hf_model, **overrides) -> nn.Module:
    """The minibert twin of a Hugging Face BertModel, BertForPreTraining or BertForMaskedLM.

    `overrides` change minibert config fields that do not touch the weights, e.g.
    `from_transformers(hf, use_sdpa=True)`. The result is in eval mode, like `from_pretrained`.
    """
    require_model(hf_model, ("BertModel", "BertForPreTraining", "BertForMaskedLM"),
                  "from_transformers")
    import transformers

    config = config_from_transformers(hf_model.config).replace(**overrides)
    if isinstance(hf_model, transformers.BertModel):
        model = BertModel(config, add_pooler=hf_model.pooler is not None)
    elif isinstance(hf_model, (transformers.BertForPreTraining, transformers.BertForMaskedLM)):
        nsp = isinstance(hf_model, transformers.BertForPreTraining)
        model = BertForPreTraining(config, nsp=nsp)
        if model.bert.pooler is None and hf_model.bert.pooler is not None:
            model.bert.pooler = Pooler(config)
    else:
        raise TypeError(
            f"cannot load {type(hf_model).__name__}: pass a transformers BertModel, "
            f"BertForPreTraining or BertForMaskedLM (its .bert is a BertModel)"
        )
    hf_state = hf_model.state_dict()
    if isinstance(model, BertForPreTraining):
        check_tied(hf_state)
        # Second names of tensors mapped already: the decoder matrix is the word table, and
        # cls.predictions.bias is the decoder's bias (the one the HF forward adds).
        for alias in ("cls.predictions.decoder.weight", "cls.predictions.bias"):
            hf_state.pop(alias)
    copy_weights(model, hf_state, name_map(model))
    return model.eval()


def check_tied(hf_state: dict[str, torch.Tensor], decoder: str = "cls.predictions.decoder",
               encoder: str = "bert") -> None:
    """minibert always ties the MLM decoder to the word embeddings (BERT's choice).

    decoder: the Hugging Face name of the decoder module; encoder: the encoder's prefix.
    """
    if not torch.equal(hf_state[f"{decoder}.weight"],
                       hf_state[f"{encoder}.embeddings.word_embeddings.weight"]):
        raise ValueError(
            "this model's MLM decoder is not tied to its word embeddings "
            "(tie_word_embeddings=False), but minibert's always is: load the encoder alone "
            f"(hf_model.{encoder}) or build the Hugging Face model with tie_word_embeddings=True"
        )


def copy_weights(model: nn.Module, source: dict[str, torch.Tensor], names: dict[str, str]) -> None:
    """Copy source[names[p]] into each minibert parameter p, checking names and shapes."""
    params = dict(model.named_parameters())   # a tied or shared tensor appears once
    unmapped = sorted(set(params) - set(names))
    missing = sorted(set(names.values()) - set(source))
    unexpected = sorted(set(source) - set(names.values()))
    if unmapped or missing or unexpected:
        raise ValueError(
            "the two models do not have the same parameters:\n"
            f"  minibert parameters without a Hugging Face name: {unmapped}\n"
            f"  missing from the Hugging Face model: {missing}\n"
            f"  unexpected in the Hugging Face model: {unexpected}\n"
            "Build both from the same config (the names are in minibert.interop.name_map)."
        )
    wrong = [f"{mine} {tuple(params[mine].shape)} vs {hf} {tuple(source[hf].shape)}"
             for mine, hf in names.items() if params[mine].shape != source[hf].shape]
    if wrong:
        raise ValueError(f"shape mismatch: {'; '.join(wrong)}. Build both from the same config.")
    not_float = [f"{hf} ({source[hf].dtype})" for mine, hf in names.items()
                 if params[mine].is_floating_point() and not source[hf].is_floating_point()]
    if not_float:
        raise ValueError(f"weights must be floating point, but {', '.join(not_float[:3])} "
                         f"hold integers: their file's dtype is wrong or the file is damaged")
    with torch.no_grad():
        for mine, hf in names.items():
            params[mine].copy_(source[hf])


def to_transformers(model: nn.Module):
    """The Hugging Face twin of a minibert BertModel / BertForPreTraining (eval mode)."""
    import transformers

    c = model.config
    if c.sharing != "none" or c.embedding_size != c.hidden_size or c.type_vocab_size == 0:
        raise ValueError("only a plain BERT (sharing='none', embedding_size=hidden_size, "
                         "type_vocab_size>0) has a transformers.BertModel twin")
    if c.position_embedding != "absolute":
        raise ValueError("transformers' BERT needs position_embedding='absolute'")
    hf_config = transformers.BertConfig(
        vocab_size=c.vocab_size, hidden_size=c.hidden_size, num_hidden_layers=c.num_layers,
        num_attention_heads=c.num_heads, intermediate_size=c.intermediate_size,
        max_position_embeddings=c.max_position, type_vocab_size=c.type_vocab_size,
        hidden_act={"gelu": "gelu", "gelu_tanh": "gelu_pytorch_tanh", "relu": "relu"}[c.activation],
        hidden_dropout_prob=c.dropout, attention_probs_dropout_prob=c.attention_dropout,
        layer_norm_eps=c.layer_norm_eps, initializer_range=c.initializer_range,
        pad_token_id=c.pad_token_id, is_decoder=c.causal,
    )
    if isinstance(model, BertModel):
        hf_model = transformers.BertModel(hf_config, add_pooling_layer=model.pooler is not None)
    elif isinstance(model, BertForPreTraining) and model.nsp is not None:
        hf_model = transformers.BertForPreTraining(hf_config)
    elif isinstance(model, BertForPreTraining) and model.bert.pooler is None:
        hf_model = transformers.BertForMaskedLM(hf_config)
    else:
        raise TypeError(f"no transformers twin for {type(model).__name__} with these heads")
    params = dict(model.named_parameters())
    target = hf_model.state_dict()
    with torch.no_grad():
        for mine, hf in name_map(model).items():
            target[hf].copy_(params[mine])   # tied HF names share storage, so they follow
    return hf_model.eval()


# ============================================================================== RoBERTa


def roberta_from_transformers(hf_model, **overrides) -> nn.Module:
    """The minibert twin of a Hugging Face RobertaModel or RobertaForMaskedLM (eval mode).

    Same layers as BERT under other prefixes (`roberta.`, `lm_head.`); the position table keeps
    its padding offset, so minibert computes the same position ids (cumsum(non-pad) + pad id).
    """
    require_model(hf_model, ("RobertaModel", "RobertaForMaskedLM"), "roberta_from_transformers")
    import transformers

    from .models.roberta import RobertaForMaskedLM, RobertaModel

    hf_config = hf_model.config
    if hf_config.pad_token_id is None:
        raise ValueError("this RoBERTa config has no pad_token_id, so its position ids are "
                         "undefined: set config.pad_token_id (RoBERTa uses 1)")
    config = config_from_transformers(hf_config).replace(**overrides)
    pad = hf_config.pad_token_id
    if isinstance(hf_model, transformers.RobertaModel):
        model = RobertaModel(config, add_pooler=hf_model.pooler is not None, padding_idx=pad)
        names = name_map(model)   # a RobertaModel is a BertModel: the same names, no prefix
        hf_state = hf_model.state_dict()
    elif isinstance(hf_model, transformers.RobertaForMaskedLM):
        model = RobertaForMaskedLM(config, padding_idx=pad)
        names = {f"roberta.{a}": f"roberta.{b}" for a, b in name_map(model.roberta).items()}
        names["mlm.bias"] = "lm_head.bias"
        for a, b in (("dense", "dense"), ("norm", "layer_norm")):
            names.update({f"mlm.{a}.{p}": f"lm_head.{b}.{p}" for p in ("weight", "bias")})
        hf_state = hf_model.state_dict()
        check_tied(hf_state, decoder="lm_head.decoder", encoder="roberta")
        for alias in ("lm_head.decoder.weight", "lm_head.decoder.bias"):
            hf_state.pop(alias, None)   # the word table, and lm_head.bias again
    else:
        raise TypeError(f"cannot load {type(hf_model).__name__}: pass a transformers "
                        f"RobertaModel or RobertaForMaskedLM")
    copy_weights(model, hf_state, names)
    return model.eval()


# =============================================================================== ALBERT

# Inside one layer: minibert module -> Hugging Face AlbertLayer module. HF puts the attention
# LayerNorm inside AlbertAttention and calls the FFN's LayerNorm `full_layer_layer_norm`.
ALBERT_LAYER_NAMES = {
    "attention.attention.query": "attention.query",
    "attention.attention.key": "attention.key",
    "attention.attention.value": "attention.value",
    "attention.attention.output": "attention.dense",
    "attention.norm": "attention.LayerNorm",
    "feed_forward.up": "ffn",
    "feed_forward.down": "ffn_output",
    "feed_forward.norm": "full_layer_layer_norm",
}


def albert_config_from_transformers(hf_config) -> BertConfig:
    """A minibert config with the shapes, sharing and settings of a Hugging Face AlbertConfig.

    HF groups layers: layer i uses group int(i / (L / num_hidden_groups)). One group of one
    layer is sharing="all"; L groups of one layer each is sharing="none".
    """
    layers, groups = hf_config.num_hidden_layers, hf_config.num_hidden_groups
    if hf_config.inner_group_num != 1 or groups not in (1, layers):
        raise ValueError(
            f"num_hidden_groups={groups}, inner_group_num={hf_config.inner_group_num} has no "
            f"minibert sharing mode: use num_hidden_groups=1 (sharing='all') or "
            f"num_hidden_groups=num_hidden_layers (sharing='none'), with inner_group_num=1"
        )
    base = config_from_transformers(hf_config)
    return base.replace(embedding_size=hf_config.embedding_size,
                        sharing="all" if groups == 1 else "none")


def albert_name_map(model: nn.Module) -> dict[str, str]:
    """minibert parameter name -> Hugging Face name, for an AlbertModel / AlbertForPreTraining."""
    from .models.albert import AlbertForPreTraining, AlbertModel

    if isinstance(model, AlbertModel):
        albert, mine, hf = model, "", ""
    elif isinstance(model, AlbertForPreTraining):
        albert, mine, hf = model.albert, "albert.", "albert."
    else:
        raise TypeError(f"no ALBERT name map for {type(model).__name__}: pass an AlbertModel "
                        f"or AlbertForPreTraining")
    names = {f"encoder.embeddings.{a}.weight": f"embeddings.{b}.weight"
             for a, b in EMBEDDING_NAMES.items()}
    modules = {"encoder.embeddings.norm": "embeddings.LayerNorm",
               "encoder.embeddings.project": "encoder.embedding_hidden_mapping_in"}
    shared = model.config.sharing == "all"
    # With sharing="all", PyTorch names the one shared layer after its first use: layers.0.
    for i in range(1 if shared else model.config.num_layers):
        modules.update({f"encoder.layers.{i}.{a}": f"encoder.albert_layer_groups.{i}."
                        f"albert_layers.0.{b}" for a, b in ALBERT_LAYER_NAMES.items()})
    if albert.pooler is not None:
        modules["pooler.dense"] = "pooler"
    names = {mine + a: hf + b for a, b in names.items()}
    modules = {mine + a: hf + b for a, b in modules.items()}
    if isinstance(model, AlbertForPreTraining):   # the decoder matrix is the word table
        names["mlm.bias"] = "predictions.bias"
        modules.update({"mlm.dense": "predictions.dense", "mlm.norm": "predictions.LayerNorm",
                        "sop.classifier": "sop_classifier.classifier"})
    for a, b in modules.items():
        names.update({f"{a}.weight": f"{b}.weight", f"{a}.bias": f"{b}.bias"})
    return names


def albert_from_transformers(hf_model, **overrides) -> nn.Module:
    """The minibert twin of a Hugging Face AlbertModel or AlbertForPreTraining (eval mode)."""
    require_model(hf_model, ("AlbertModel", "AlbertForPreTraining"), "albert_from_transformers")
    import transformers

    from .models.albert import AlbertForPreTraining, AlbertModel

    config = albert_config_from_transformers(hf_model.config).replace(**overrides)
    if config.sharing not in ("all", "none"):
        raise ValueError("Hugging Face ALBERT shares all of a layer or nothing: do not override "
                         "sharing")
    if config.embedding_size == config.hidden_size:
        raise ValueError("minibert projects E -> H only when embedding_size != hidden_size, but "
                         "HF ALBERT always has the projection: use embedding_size < hidden_size")
    hf_state = hf_model.state_dict()
    if isinstance(hf_model, transformers.AlbertModel):
        model = AlbertModel(config, add_pooler=hf_model.pooler is not None)
    elif isinstance(hf_model, transformers.AlbertForPreTraining):
        model = AlbertForPreTraining(config)
        check_tied(hf_state, decoder="predictions.decoder", encoder="albert")
        for alias in ("predictions.decoder.weight", "predictions.decoder.bias"):
            hf_state.pop(alias)   # the word table, and predictions.bias again
    else:
        raise TypeError(f"cannot load {type(hf_model).__name__}: pass a transformers "
                        f"AlbertModel or AlbertForPreTraining")
    copy_weights(model, hf_state, albert_name_map(model))
    return model.eval()


# =============================================================================== DeBERTa

# Inside one layer: minibert module -> Hugging Face module, the same in v1 and v2.
DEBERTA_LAYER_NAMES = {
    "attention.attention.output": "attention.output.dense",
    "attention.norm": "attention.output.LayerNorm",
    "feed_forward.up": "intermediate.dense",
    "feed_forward.down": "output.dense",
    "feed_forward.norm": "output.LayerNorm",
}


def deberta_config_from_transformers(hf_config):
    """A minibert DebertaConfig with the shapes and switches of a Hugging Face DebertaConfig or
    DebertaV2Config. Supported: relative_attention=True, pos_att_type any subset of c2p|p2c,
    position_biased_input True or False, max_relative_positions, type_vocab_size; v2 also
    position_buckets, share_att_key and norm_rel_ebd 'none' | 'layer_norm'. Anything else
    raises a ValueError that says which setting to change."""
    from .models.deberta import DebertaConfig

    v2 = hf_config.model_type == "deberta-v2"
    if not getattr(hf_config, "relative_attention", False):
        raise ValueError("relative_attention=False is BERT with DeBERTa's names: minibert's "
                         "DeBERTa always uses relative positions; build the Hugging Face model "
                         "with relative_attention=True")
    terms = tuple(hf_config.pos_att_type or ())
    unknown = [t for t in terms if t not in ("c2p", "p2c")]
    if unknown:
        raise ValueError(f"pos_att_type {unknown} is not supported: use a subset of c2p|p2c")
    unsupported = {
        "talking_head": (getattr(hf_config, "talking_head", False), "talking_head=False"),
        "conv_kernel_size": (getattr(hf_config, "conv_kernel_size", 0) > 0,
                             "conv_kernel_size=0 (no convolution layer)"),
        "embedding_size": (getattr(hf_config, "embedding_size", hf_config.hidden_size)
                           != hf_config.hidden_size, "embedding_size=hidden_size"),
        "attention_head_size": (getattr(hf_config, "attention_head_size", None) not in
                                (None, hf_config.hidden_size // hf_config.num_attention_heads),
                                "attention_head_size=hidden_size // num_attention_heads"),
    }
    for name, (bad, fix) in unsupported.items():
        if bad:
            raise ValueError(f"{name}={getattr(hf_config, name)!r} is not supported by "
                             f"minibert's DeBERTa: build the Hugging Face model with {fix}")
    norm = [x.strip() for x in str(getattr(hf_config, "norm_rel_ebd", "none")).lower().split("|")]
    if set(norm) - {"none", "layer_norm"}:
        raise ValueError(f"norm_rel_ebd={hf_config.norm_rel_ebd!r}: use 'none' or 'layer_norm'")
    buckets = getattr(hf_config, "position_buckets", -1) if v2 else -1
    act = hf_config.hidden_act
    if not isinstance(act, str) or act not in ACTIVATIONS_FROM_HF:
        raise ValueError(f"hidden_act={act!r} has no minibert equivalent: choose one of "
                         f"{sorted(ACTIVATIONS_FROM_HF)}")
    max_relative = getattr(hf_config, "max_relative_positions", -1)
    pad = hf_config.pad_token_id
    return DebertaConfig(
        vocab_size=hf_config.vocab_size,
        hidden_size=hf_config.hidden_size,
        num_layers=hf_config.num_hidden_layers,
        num_heads=hf_config.num_attention_heads,
        intermediate_size=hf_config.intermediate_size,
        max_position=hf_config.max_position_embeddings,
        type_vocab_size=hf_config.type_vocab_size,
        position_embedding=("absolute" if getattr(hf_config, "position_biased_input", True)
                            else "none"),
        activation=ACTIVATIONS_FROM_HF[act],
        dropout=float(hf_config.hidden_dropout_prob),
        attention_dropout=float(hf_config.attention_probs_dropout_prob),
        layer_norm_eps=hf_config.layer_norm_eps,
        initializer_range=hf_config.initializer_range,
        pad_token_id=0 if pad is None else pad,
        relative_terms=tuple(t for t in ("c2p", "p2c") if t in terms),
        max_relative=max(max_relative, 0),
        position_buckets=max(buckets, 0),
        share_att_key=bool(getattr(hf_config, "share_att_key", False)) if v2 else False,
        norm_relative="layer_norm" in norm and v2,
    )


def _deberta_layer_weights(hf_state, hf: str, mine: str, config, v2: bool) -> dict:
    """One layer's tensors under minibert names. v1 fuses Q, K, V into `in_proj` (no bias,
    per head [q | k | v]) with separate q_bias and v_bias; v2 has three Linear layers."""
    out = {}
    attention = f"{hf}attention.self."
    me = f"{mine}attention.attention."
    if v2:
        for a, b in (("query", "query_proj"), ("key", "key_proj"), ("value", "value_proj"),
                     ("position_key", "pos_key_proj"), ("position_query", "pos_query_proj")):
            for p in ("weight", "bias"):
                if f"{attention}{b}.{p}" in hf_state:
                    out[f"{me}{a}.{p}"] = hf_state[f"{attention}{b}.{p}"]
    else:
        heads, d, hidden = config.num_heads, config.head_size, config.hidden_size
        fused = hf_state[f"{attention}in_proj.weight"].view(heads, 3, d, hidden)   # per head q|k|v
        for part, name in enumerate(("query", "key", "value")):
            out[f"{me}{name}.weight"] = fused[:, part].reshape(heads * d, hidden)
        out[f"{me}query.bias"] = hf_state[f"{attention}q_bias"]
        out[f"{me}key.bias"] = torch.zeros(hidden)                  # v1 keys have no bias
        out[f"{me}value.bias"] = hf_state[f"{attention}v_bias"]
        if f"{attention}pos_proj.weight" in hf_state:               # c2p: Kr = P W (no bias)
            out[f"{me}position_key.weight"] = hf_state[f"{attention}pos_proj.weight"]
            out[f"{me}position_key.bias"] = torch.zeros(hidden)
        if f"{attention}pos_q_proj.weight" in hf_state:             # p2c: Qr = P W + b
            out[f"{me}position_query.weight"] = hf_state[f"{attention}pos_q_proj.weight"]
            out[f"{me}position_query.bias"] = hf_state[f"{attention}pos_q_proj.bias"]
    for a, b in DEBERTA_LAYER_NAMES.items():
        for p in ("weight", "bias"):
            out[f"{mine}{a}.{p}"] = hf_state[f"{hf}{b}.{p}"]
    return out


class _RecordingDict(dict):
    """A dict that remembers which keys were read, to find tensors nobody used."""

    def __init__(self, *args):
        super().__init__(*args)
        self.read: set[str] = set()

    def __getitem__(self, key):
        self.read.add(key)
        return super().__getitem__(key)


def deberta_from_transformers(hf_model, **overrides) -> nn.Module:
    """The minibert twin of a Hugging Face DebertaModel or DebertaV2Model (eval mode).

    Every Hugging Face tensor is used exactly once (checked); v1's fused in_proj is split into
    query/key/value, and the biases v1 does not have (keys, c2p position keys) are set to 0.
    """
    require_model(hf_model, ("DebertaModel", "DebertaV2Model"), "deberta_from_transformers")
    import transformers

    from .models.deberta import DebertaModel

    if not isinstance(hf_model, (transformers.DebertaModel, transformers.DebertaV2Model)):
        raise TypeError(f"cannot load {type(hf_model).__name__}: pass a transformers "
                        f"DebertaModel or DebertaV2Model (e.g. hf_model.deberta)")
    v2 = isinstance(hf_model, transformers.DebertaV2Model)
    config = deberta_config_from_transformers(hf_model.config).replace(**overrides)
    model = DebertaModel(config)
    hf_state = _RecordingDict({k: v for k, v in hf_model.state_dict().items()
                               if not k.endswith("position_ids")})   # a buffer, not a weight
    converted = {}
    for a, b in EMBEDDING_NAMES.items():
        if f"embeddings.{b}.weight" in hf_state:
            converted[f"encoder.embeddings.{a}.weight"] = hf_state[f"embeddings.{b}.weight"]
    for p in ("weight", "bias"):
        converted[f"encoder.embeddings.norm.{p}"] = hf_state[f"embeddings.LayerNorm.{p}"]
        if config.norm_relative:
            converted[f"encoder.relative.norm.{p}"] = hf_state[f"encoder.LayerNorm.{p}"]
    converted["encoder.relative.table.weight"] = hf_state["encoder.rel_embeddings.weight"]
    for i in range(config.num_layers):
        converted.update(_deberta_layer_weights(hf_state, f"encoder.layer.{i}.",
                                                f"encoder.layers.{i}.", config, v2))
    leftover = sorted(set(hf_state) - hf_state.read)
    if leftover:
        raise ValueError(f"Hugging Face tensors with no minibert counterpart: {leftover}. "
                         "Build the Hugging Face model with the options listed in "
                         "deberta_config_from_transformers.")
    copy_weights(model, converted, {name: name for name in converted})
    return model.eval()


# =========================================================================== DistilBERT

# Inside one layer: minibert module -> Hugging Face DistilBERT TransformerBlock module.
DISTILBERT_LAYER_NAMES = {
    "attention.attention.query": "attention.q_lin",
    "attention.attention.key": "attention.k_lin",
    "attention.attention.value": "attention.v_lin",
    "attention.attention.output": "attention.out_lin",
    "attention.norm": "sa_layer_norm",
    "feed_forward.up": "ffn.lin1",
    "feed_forward.down": "ffn.lin2",
    "feed_forward.norm": "output_layer_norm",
}


def distilbert_config_from_transformers(hf_config) -> BertConfig:
    """A minibert config (no segment table) with the shapes of a Hugging Face DistilBertConfig.

    HF DistilBERT hard-codes LayerNorm eps 1e-12 and has no token types; its `dim` is H,
    `hidden_dim` the FFN width. Sinusoidal positions are stored as a table, so they load too.
    """
    act = hf_config.activation
    if not isinstance(act, str) or act not in ACTIVATIONS_FROM_HF:
        raise ValueError(f"activation={act!r} has no minibert equivalent: choose one of "
                         f"{sorted(ACTIVATIONS_FROM_HF)}")
    pad = hf_config.pad_token_id
    return BertConfig(
        vocab_size=hf_config.vocab_size,
        hidden_size=hf_config.dim,
        num_layers=hf_config.n_layers,
        num_heads=hf_config.n_heads,
        intermediate_size=hf_config.hidden_dim,
        max_position=hf_config.max_position_embeddings,
        type_vocab_size=0,
        activation=ACTIVATIONS_FROM_HF[act],
        dropout=float(hf_config.dropout),
        attention_dropout=float(hf_config.attention_dropout),
        layer_norm_eps=1e-12,
        initializer_range=hf_config.initializer_range,
        pad_token_id=0 if pad is None else pad,
    )


def distilbert_name_map(model: nn.Module) -> dict[str, str]:
    """minibert name -> Hugging Face name, for a DistilBertModel / DistilBertForMaskedLM."""
    from .models.distilbert import DistilBertForMaskedLM, DistilBertModel

    if isinstance(model, DistilBertModel):
        mine, hf = "", ""
    elif isinstance(model, DistilBertForMaskedLM):
        mine, hf = "distilbert.", "distilbert."
    else:
        raise TypeError(f"no DistilBERT name map for {type(model).__name__}: pass a "
                        f"DistilBertModel or DistilBertForMaskedLM")
    names = {f"{mine}encoder.embeddings.word.weight": f"{hf}embeddings.word_embeddings.weight",
             f"{mine}encoder.embeddings.position.weight":
                 f"{hf}embeddings.position_embeddings.weight"}
    modules = {f"{mine}encoder.embeddings.norm": f"{hf}embeddings.LayerNorm"}
    for i in range(model.config.num_layers):
        modules.update({f"{mine}encoder.layers.{i}.{a}": f"{hf}transformer.layer.{i}.{b}"
                        for a, b in DISTILBERT_LAYER_NAMES.items()})
    if isinstance(model, DistilBertForMaskedLM):   # the projector matrix is the word table
        names["mlm.bias"] = "vocab_projector.bias"
        modules.update({"mlm.dense": "vocab_transform", "mlm.norm": "vocab_layer_norm"})
    for a, b in modules.items():
        names.update({f"{a}.weight": f"{b}.weight", f"{a}.bias": f"{b}.bias"})
    return names


def distilbert_from_transformers(hf_model, **overrides) -> nn.Module:
    """The minibert twin of a Hugging Face DistilBertModel or DistilBertForMaskedLM (eval mode)."""
    require_model(hf_model, ("DistilBertModel", "DistilBertForMaskedLM"),
                  "distilbert_from_transformers")
    import transformers

    from .models.distilbert import DistilBertForMaskedLM, DistilBertModel

    config = distilbert_config_from_transformers(hf_model.config).replace(**overrides)
    hf_state = hf_model.state_dict()
    hf_state.pop("embeddings.position_ids", None)              # a buffer, not a weight
    hf_state.pop("distilbert.embeddings.position_ids", None)
    if isinstance(hf_model, transformers.DistilBertModel):
        model = DistilBertModel(config)
    elif isinstance(hf_model, transformers.DistilBertForMaskedLM):
        model = DistilBertForMaskedLM(config)
        check_tied(hf_state, decoder="vocab_projector", encoder="distilbert")
        hf_state.pop("vocab_projector.weight")                  # the word table again
    else:
        raise TypeError(f"cannot load {type(hf_model).__name__}: pass a transformers "
                        f"DistilBertModel or DistilBertForMaskedLM")
    copy_weights(model, hf_state, distilbert_name_map(model))
    return model.eval()


# ============================================================================== ELECTRA

# The discriminator's per-token head: minibert TokenHead -> Hugging Face ElectraForPreTraining.
ELECTRA_HEAD_NAMES = {"discriminator_head.dense": "discriminator_predictions.dense",
                      "discriminator_head.out": "discriminator_predictions.dense_prediction"}


def electra_name_map(model: nn.Module) -> dict[str, str]:
    """minibert name -> Hugging Face name, for an ElectraModel or an ElectraDiscriminator.

    The encoder's names are BERT's, except that Hugging Face calls the E -> H projection
    `embeddings_project` and puts it beside (not inside) `embeddings`.
    """
    from .models.electra import ElectraDiscriminator, ElectraModel

    if isinstance(model, ElectraModel):
        encoder, mine, hf = model, "", ""
    elif isinstance(model, ElectraDiscriminator):
        encoder, mine, hf = model.electra, "electra.", "electra."
    else:
        raise TypeError(f"no ELECTRA name map for {type(model).__name__}: pass an ElectraModel "
                        f"or an ElectraDiscriminator")
    names = {mine + a: hf + b for a, b in name_map(encoder).items()}   # BERT's names
    if encoder.encoder.embeddings.project is not None:
        for p in ("weight", "bias"):
            names[f"{mine}encoder.embeddings.project.{p}"] = f"{hf}embeddings_project.{p}"
    if isinstance(model, ElectraDiscriminator):
        for a, b in ELECTRA_HEAD_NAMES.items():
            names.update({f"{a}.{p}": f"{b}.{p}" for p in ("weight", "bias")})
    return names


def electra_from_transformers(hf_model, **overrides) -> nn.Module:
    """The minibert twin of a Hugging Face ElectraModel (-> ElectraModel) or
    ElectraForPreTraining (the discriminator with its head -> ElectraDiscriminator)."""
    require_model(hf_model, ("ElectraModel", "ElectraForPreTraining"), "electra_from_transformers")
    import transformers

    from .models.electra import ElectraDiscriminator, ElectraModel

    hf_config = hf_model.config
    config = config_from_transformers(hf_config).replace(
        embedding_size=hf_config.embedding_size, **overrides)
    if isinstance(hf_model, transformers.ElectraModel):
        model = ElectraModel(config)
    elif isinstance(hf_model, transformers.ElectraForPreTraining):
        model = ElectraDiscriminator(config)
    else:
        raise TypeError(f"cannot load {type(hf_model).__name__}: pass a transformers "
                        f"ElectraModel or ElectraForPreTraining (the discriminator)")
    copy_weights(model, hf_model.state_dict(), electra_name_map(model))
    return model.eval()


# ========================================================= a local transformers folder


def from_directory(path, **overrides) -> tuple[nn.Module, list[str]]:
    """(model, vocabulary) from a local folder in `transformers`' format; nothing downloads.

    The folder holds `config.json`, the weights (`model.safetensors` or `pytorch_model.bin`)
    and `vocab.txt` (one token a line, the id is the line number), as `save_pretrained` writes
    them and as e.g. albert_chinese_tiny ships (an ALBERT masked LM with BERT's character
    vocabulary: 4 layers, H = 312, E = 128, one shared layer group, 21,128 tokens). Get such a
    folder onto the machine yourself (a copy, `git lfs`), then

        model, vocab = interop.from_directory("path/to/albert_chinese_tiny")
        ids = [vocab.index(ch) for ch in "今天天气很好"]

    config.json's `model_type` picks the loader: "albert" gives a minibert
    AlbertForPreTraining (`albert_from_transformers`; a masked-LM-only folder has no SOP head,
    so that head starts random and transformers says so), "bert" a BertForPreTraining
    (`from_transformers`). `overrides` go to the loader. The model is in eval mode.
    """
    from pathlib import Path

    import transformers

    folder = Path(path)
    missing = [name for name in ("config.json", "vocab.txt") if not (folder / name).is_file()]
    if not folder.is_dir() or missing:
        raise FileNotFoundError(
            f"{folder} is not a transformers model folder (missing: "
            f"{', '.join(missing) if folder.is_dir() else 'the folder itself'}): pass a local "
            "folder with config.json, model.safetensors or pytorch_model.bin, and vocab.txt")
    if not any((folder / name).is_file() for name in ("model.safetensors", "pytorch_model.bin")):
        raise FileNotFoundError(f"{folder} has no weights: put model.safetensors or "
                                "pytorch_model.bin beside its config.json")
    hf_config = transformers.AutoConfig.from_pretrained(folder, local_files_only=True)
    if hf_config.model_type == "albert":
        hf = transformers.AlbertForPreTraining.from_pretrained(folder, local_files_only=True)
        model = albert_from_transformers(hf.eval(), **overrides)
    elif hf_config.model_type == "bert":
        hf = transformers.BertForMaskedLM.from_pretrained(folder, local_files_only=True)
        model = from_transformers(hf.eval(), **overrides)
    else:
        raise ValueError(f"{folder} holds a {hf_config.model_type!r} model; from_directory "
                         "loads 'albert' and 'bert' folders (see the other *_from_transformers)")
    vocab = (folder / "vocab.txt").read_text(encoding="utf-8").splitlines()
    if len(vocab) != model.config.vocab_size:
        raise ValueError(f"{folder}/vocab.txt has {len(vocab)} tokens but the model "
                         f"{model.config.vocab_size}: the folder mixes two models")
    return model, vocab
