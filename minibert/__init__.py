"""minibert: BERT and its descendants, built from scratch to be read.

`import minibert` is cheap: submodules (and torch) load on first use, e.g.
`minibert.BertConfig`, `minibert.models.BertForPreTraining`, `minibert.check`.
`python -m minibert` prints the course map.
"""

from __future__ import annotations

import importlib

__version__ = "0.1.0"

_SUBMODULES = {
    "atomic", "attention", "augment", "check", "compare", "config", "corruption", "course",
    "data", "disentangled", "distill", "distributed", "encoder", "environment", "finetune",
    "formats", "heads", "interop", "masking", "measure", "models", "ngram_speller", "notebooks",
    "plots", "pretrained", "sentence_pairs", "side_by_side", "snapshots", "spelling", "structure",
    "tokenizers", "toylang", "train", "widgets",
}
_SHORTCUTS = {
    "BertConfig": ("config", "BertConfig"),
    "BertModel": ("models", "BertModel"),
    "BertForPreTraining": ("models", "BertForPreTraining"),
    "BertForSequenceClassification": ("models", "BertForSequenceClassification"),
    "set_seed": ("train", "set_seed"),
}

__all__ = sorted(_SUBMODULES | set(_SHORTCUTS))


def __getattr__(name: str):
    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    if name in _SHORTCUTS:
        module, attribute = _SHORTCUTS[name]
        return getattr(importlib.import_module(f"{__name__}.{module}"), attribute)
    raise AttributeError(f"module 'minibert' has no attribute {name!r}")


def __dir__():
    return __all__
