"""The course as a package: cheap import, the course map, figures written by lessons."""

from __future__ import annotations

import subprocess
import sys


def test_import_is_cheap():
    # `import minibert` must not import torch: submodules load on first use.
    code = "import sys, minibert; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_course_map_lists_every_lesson():
    out = subprocess.run([sys.executable, "-m", "minibert"], capture_output=True, text=True,
                         check=True)
    assert "01_bert" in out.stdout and "13_comparison" in out.stdout
    assert "ready" in out.stdout


def test_lazy_attributes():
    import minibert

    assert minibert.BertConfig.from_preset("bert-nano").hidden_size == 64
    try:
        minibert.not_a_module  # noqa: B018
    except AttributeError as error:
        assert "not_a_module" in str(error)
    else:
        raise AssertionError("unknown attributes must raise AttributeError")


def test_every_module_is_a_lazy_attribute():
    # `minibert.<module>` works for every module of the package, not only for imported ones.
    from pathlib import Path

    import minibert

    package = Path(minibert.__file__).parent
    modules = {p.stem for p in package.glob("*.py") if not p.stem.startswith("_")}
    modules |= {p.parent.name for p in package.glob("*/__init__.py")}
    assert modules - set(minibert.__all__) == set()
    for name in sorted(modules):
        assert getattr(minibert, name).__name__ == f"minibert.{name}"
