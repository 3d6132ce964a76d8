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


def test_the_course_map_has_one_source_and_every_readme_shows_it():
    from minibert.course import course_map, paths

    notebooks = sorted(p.stem for p in paths.LESSONS.glob("[0-9][0-9]_*.ipynb"))
    assert [lesson.notebook for lesson in course_map.COURSE] == notebooks
    for lesson in course_map.COURSE:
        assert lesson.verdict in ("reproduced", "partly", "not yet"), lesson
        number = lesson.notebook[:2]
        assert all(first < number for first in lesson.after), (
            f"{lesson.notebook} reads later lessons first")
    assert course_map.stale() == [], (
        "a README's course map is stale: python -m minibert.course.course_map")


def test_the_readme_python_example_runs():
    import re

    from minibert.course import paths

    readme = (paths.ROOT / "README.md").read_text(encoding="utf-8")
    examples = re.findall(r"```python\n(.*?)```", readme, re.S)
    assert examples, "README.md lost its Python example"
    for example in examples:
        exec(compile(example, "README.md", "exec"), {})
