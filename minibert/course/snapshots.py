"""Pretraining snapshots in a file, with a record of what made them.

Some runs are too long for a lesson: the checkpoint zoo (`make zoo`) and lesson 06's 4-layer
ELECTRA and MLM take minutes to hours to pretrain. They are trained once, and each run's model is
saved at 25, 50, 75 and 100% of its steps; the lessons load the files and fine-tune them. The
record in the file says what made it: the config, the vocabulary and corpus digests, the steps,
tokens and FLOPs, the seconds, the run's first training losses, the torch version and the command
that makes the file again. So a lesson can refuse snapshots its code would not make again (a
changed vocabulary would otherwise feed the encoder the wrong token ids, silently), and a test can
rerun the first steps and compare.

The file also holds a checksum of every tensor: a flipped byte, a truncated or foreign file is
refused with the command that remakes it, never loaded as slightly wrong weights. Files are
written atomically (a failed save leaves the old file). `dtype=torch.float16` halves the file;
the record says so, and the loaded tensors are float32 again.
"""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path
from typing import Any

import torch

from ..atomic import atomic_path
from . import paths

FORMAT = 2
SNAPSHOTS_DIR = paths.SNAPSHOTS  # the repo's

__all__ = ["FORMAT", "SNAPSHOTS_DIR", "SnapshotError", "checksum", "load_snapshots",
           "save_snapshots", "vocabulary_digest"]


class SnapshotError(ValueError):
    """A snapshot file that cannot be used: missing, foreign, corrupted or stale."""


def vocabulary_digest(tokens: list[str]) -> str:
    """A short fingerprint of a vocabulary, in id order: equal digests, equal token ids."""
    return hashlib.sha256("\n".join(tokens).encode("utf-8")).hexdigest()[:16]


def checksum(snapshots: list[dict[str, torch.Tensor]]) -> str:
    """SHA-256 over every tensor's name, dtype, shape and bytes, in order."""
    digest = hashlib.sha256()
    for index, state in enumerate(snapshots):
        for name in sorted(state):
            tensor = state[name].detach().cpu().contiguous()
            digest.update(f"{index}/{name}/{tensor.dtype}/{tuple(tensor.shape)}".encode())
            digest.update(tensor.view(-1).view(torch.uint8).numpy().tobytes()
                          if tensor.numel() else b"")
    return digest.hexdigest()


def _check_plain(value: Any, where: str) -> None:
    """Records hold what JSON holds (dict, list, str, int, finite float, bool, None)."""
    if value is None or isinstance(value, (str, bool, int)):
        return
    if isinstance(value, float):
        if not math.isfinite(value):
            raise TypeError(f"the record's {where} is {value}: records hold finite numbers")
        return
    if isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            _check_plain(item, f"{where}[{i}]")
        return
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                raise TypeError(f"the record's {where} has a key {key!r}: keys must be str")
            _check_plain(item, f"{where}.{key}" if where else key)
        return
    raise TypeError(f"the record's {where or 'value'} is a {type(value).__name__} ({value!r}): "
                    "records hold plain JSON values; convert it, e.g. float(x), x.tolist() "
                    "or str(x)")


def save_snapshots(path: str | Path, snapshots: list[dict[str, torch.Tensor]],
                   meta: dict[str, Any], *, dtype: torch.dtype | None = None) -> Path:
    """Write `snapshots` (state dicts, in training order) and `meta` (plain values) to `path`.

    dtype: store floating tensors in this dtype (e.g. torch.float16); None keeps them as they
           are. The record's "stored_dtype" says which.
    """
    if not snapshots:
        raise ValueError("save_snapshots needs at least one state dict")
    if not isinstance(meta, dict):
        raise TypeError(f"meta must be a dict of plain values, got {type(meta).__name__}")
    _check_plain(meta, "")
    path = Path(path)

    def stored(tensor: torch.Tensor) -> torch.Tensor:
        tensor = tensor.detach().cpu().clone()
        return tensor.to(dtype) if dtype is not None and tensor.is_floating_point() else tensor
    states = [{name: stored(tensor) for name, tensor in state.items()} for state in snapshots]
    record = json.loads(json.dumps(meta))            # a copy, as it will be read back
    record["stored_dtype"] = str(dtype).removeprefix("torch.") if dtype is not None else None
    with atomic_path(path) as temporary:
        torch.save({"format": FORMAT, "meta": record, "checksum": checksum(states),
                    "snapshots": states}, temporary)
    return path


def load_snapshots(path: str | Path, *, remake: str,
                   expect: dict[str, Any] | None = None) -> tuple[dict[str, Any], list[dict]]:
    """Return (meta, snapshots) from `path`, checking the checksum and every `expect` key.

    `remake` is the command that makes the file again; every error names it. Tensors stored in
    half precision come back as float32.
    """
    path = Path(path)
    again = f"run `{remake}` to make it again"
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing: run `{remake}` to make it")
    try:
        saved = torch.load(path, weights_only=True)
    except Exception as error:   # truncated, empty, text, or not a torch file at all
        raise SnapshotError(f"{path} cannot be read as a snapshot file ({type(error).__name__}:"
                            f" {str(error).splitlines()[0][:120] if str(error) else ''}); it may "
                            f"be truncated or corrupted: {again}") from None
    if not isinstance(saved, dict) or saved.get("format") != FORMAT:
        found = saved.get("format") if isinstance(saved, dict) else type(saved).__name__
        raise SnapshotError(f"{path} is not a snapshot file of format {FORMAT} (found "
                            f"{found!r}): {again}")
    states, meta = saved.get("snapshots"), saved.get("meta")
    if not isinstance(states, list) or not isinstance(meta, dict):
        raise SnapshotError(f"{path} lacks its snapshots or its record: {again}")
    if checksum(states) != saved.get("checksum"):
        raise SnapshotError(f"{path} does not match its checksum: some bytes changed since it "
                            f"was saved: {again}")
    for key, wanted in (expect or {}).items():
        if key not in meta:
            raise SnapshotError(f"{path} does not record {key!r}: {again}")
        if meta[key] != wanted:
            raise SnapshotError(f"{path} was made with {key} = {meta[key]!r}, but this code "
                                f"expects {wanted!r}: the snapshots are stale; {again}")
    if meta.get("stored_dtype") is not None:
        states = [{name: tensor.float() if tensor.is_floating_point() else tensor
                   for name, tensor in state.items()} for state in states]
    return meta, states
