"""minibert: BERT and its descendants, built from scratch to be read.

`import minibert` is cheap: submodules (and torch) load on first use, e.g.
`minibert.BertConfig`, `minibert.models.BertForPreTraining`, `minibert.check`.
The model library is `minibert.*`; the course machinery (lesson runner, widgets, plots,
snapshots, the zoo) is `minibert.course.*`; minibert/README.md is the map.
`python -m minibert` prints the course map.
"""

from __future__ import annotations

import importlib

__version__ = "0.1.0"

_SUBMODULES = {  # the model library; the course machinery is minibert.course
    "atomic", "attention", "augment", "check", "config", "corruption", "course", "data",
    "disentangled", "distill", "distributed", "encoder", "finetune", "formats", "heads", "interop",
    "masking", "measure", "models", "ngram_speller", "packages", "pretrained", "progress",
    "spelling", "structure", "tokenizers", "toylang", "train",
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
