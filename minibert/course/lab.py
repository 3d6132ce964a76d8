"""JupyterLab set up for the course: `make lab`, or `python -m minibert.course.lab`.

What it configures (and what the browser suite checks, tests/browser/test_lab.py):
- the kernel: lessons open on the course's "Python 3 (minibert)" kernel (installed into .venv
  by `make setup`), started without asking; the .venv's kernels come before a user's own;
- no news prompt and no update check (the machine may be offline);
- the file browser opens in lessons/, the server's root is the repository, so a lesson's links
  to ../minibert/ and ../figures/ open;
- every cell of a notebook is kept in the page (windowing mode "none"): the lessons are a few
  dozen cells, and outputs scrolled out of view stay searchable and printable.

The settings are written to the .venv's JupyterLab overrides (defaults a user's own settings
still override). Extra arguments go to `jupyter lab` (e.g. --port 8899 --no-browser).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from ..atomic import write_text_atomically
from . import paths

__all__ = ["KERNEL_DISPLAY_NAME", "KERNEL_NAME", "SETTINGS", "lab_command", "lab_environment",
           "main", "overrides_path", "write_overrides"]

KERNEL_NAME = "python3"                         # what the lessons' metadata asks for
KERNEL_DISPLAY_NAME = "Python 3 (minibert)"     # the spec `make setup` installs under that name
OPEN_FOLDER = "lessons"

# JupyterLab settings, by plugin id (see each plugin's schema in share/jupyter/lab/schemas).
SETTINGS = {
    "@jupyterlab/apputils-extension:notification": {"fetchNews": "false",
                                                    "checkForUpdates": False},
    "@jupyterlab/notebook-extension:tracker": {"autoStartDefaultKernel": True,
                                               "windowingMode": "none"},
}


def overrides_path(prefix: str | Path = sys.prefix) -> Path:
    """The overrides file of the JupyterLab installed in `prefix` (the .venv)."""
    return Path(prefix) / "share" / "jupyter" / "lab" / "settings" / "overrides.json"


def write_overrides(prefix: str | Path = sys.prefix) -> Path:
    """Merge SETTINGS into the overrides of the JupyterLab in `prefix`; return the file."""
    path = overrides_path(prefix)
    current = {}
    if path.is_file():
        try:
            current = json.loads(path.read_text(encoding="utf-8"))
        except ValueError as error:
            raise ValueError(f"{path} is not JSON ({error}): fix or delete it, then run "
                             "`make lab` again") from None
    for plugin, values in SETTINGS.items():
        current[plugin] = {**current.get(plugin, {}), **values}
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomically(path, json.dumps(current, indent=2) + "\n")
    return path


def lab_environment(base: dict[str, str] | None = None) -> dict[str, str]:
    """The environment `jupyter lab` runs in: the .venv's kernel spec before a user's own."""
    env = dict(os.environ if base is None else base)
    env["JUPYTER_PREFER_ENV_PATH"] = "1"
    return env


def lab_command(*extra: str, root: str | Path = paths.ROOT) -> list[str]:
    """The `jupyter lab` command line for the course, served from `root` (the repository)."""
    return [sys.executable, "-m", "jupyterlab",
            f"--ServerApp.root_dir={Path(root).resolve()}",
            f"--LabApp.default_url=/lab/tree/{OPEN_FOLDER}",
            f"--MappingKernelManager.default_kernel_name={KERNEL_NAME}",
            "--LabApp.news_url=",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
            *extra]


def main(argv: list[str] | None = None) -> int:
    extra = sys.argv[1:] if argv is None else argv
    write_overrides()
    return subprocess.call(lab_command(*extra), env=lab_environment())


if __name__ == "__main__":
    sys.exit(main())
