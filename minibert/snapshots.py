"""Pretraining snapshots in a file, with a record of what made them.

Some runs are too long for a lesson: lesson 06's 4-layer ELECTRA and MLM take about ten minutes to
pretrain on two cores. `make electra-depth-snapshots` trains them once and saves each run's encoder
at 25, 50, 75 and 100% of its steps; the lesson loads them and fine-tunes them itself. The file
records the config, the vocabulary, the step counts and the run's first training losses, so that a
lesson can refuse snapshots its code would not make again (a changed vocabulary would otherwise feed
the encoder the wrong token ids, silently), and a test can rerun the first steps and compare.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import torch

FORMAT = 1
SNAPSHOTS_DIR = Path(__file__).resolve().parent.parent / "lessons" / "snapshots"  # the repo's


def vocabulary_digest(tokens: list[str]) -> str:
    """A short fingerprint of a vocabulary, in id order: equal digests, equal token ids."""
    return hashlib.sha256("\n".join(tokens).encode("utf-8")).hexdigest()[:16]


def save_snapshots(path: str | Path, snapshots: list[dict[str, torch.Tensor]],
                   meta: dict[str, Any]) -> Path:
    """Write `snapshots` (state dicts, in training order) and `meta` (plain values) to `path`."""
    if not snapshots:
        raise ValueError("save_snapshots needs at least one state dict")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    states = [{name: tensor.detach().clone() for name, tensor in state.items()}
              for state in snapshots]
    torch.save({"format": FORMAT, "meta": dict(meta), "snapshots": states}, path)
    return path


def load_snapshots(path: str | Path, *, remake: str,
                   expect: dict[str, Any] | None = None) -> tuple[dict[str, Any], list[dict]]:
    """Return (meta, snapshots) from `path`, checking every `expect` key against the meta.

    `remake` is the command that makes the file again; every error names it.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing: run `{remake}` to make it")
    saved = torch.load(path, weights_only=True)
    if not isinstance(saved, dict) or saved.get("format") != FORMAT:
        found = saved.get("format") if isinstance(saved, dict) else type(saved).__name__
        raise ValueError(f"{path} is not a snapshot file of format {FORMAT} (found {found!r}): "
                         f"run `{remake}` to make it again")
    meta = saved["meta"]
    for key, wanted in (expect or {}).items():
        if key not in meta:
            raise ValueError(f"{path} does not record {key!r}: run `{remake}` to make it again")
        if meta[key] != wanted:
            raise ValueError(f"{path} was made with {key} = {meta[key]!r}, but this code expects "
                             f"{wanted!r}: the snapshots are stale; run `{remake}` to make them "
                             f"again")
    return meta, saved["snapshots"]
