"""Where the course's files live: the one module that knows the repository's layout.

The library works from a clone (the default: the folder above `minibert/`) or installed
elsewhere, with `MINIBERT_HOME` set to a clone of the course (its lessons, snapshots, figures).
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["FIGURES", "LESSONS", "ROOT", "SNAPSHOTS", "ZOO"]

ROOT = Path(os.environ.get("MINIBERT_HOME") or Path(__file__).resolve().parents[2])
LESSONS = ROOT / "lessons"
FIGURES = ROOT / "figures"
SNAPSHOTS = LESSONS / "snapshots"          # pretrained checkpoints, committed with their record
ZOO = SNAPSHOTS / "zoo"                    # the checkpoint zoo (`make zoo`)
