"""make site's builder on a tiny course, and make lab's settings file (no browser needed)."""

from __future__ import annotations

import json

import nbformat

from minibert.course import lab, site


def tiny_course(root):
    (root / "lessons").mkdir(parents=True)
    (root / "figures").mkdir()
    (root / "minibert").mkdir()
    (root / "minibert" / "train.py").write_text("def train():\n    pass\n")
    (root / "figures" / "01_x.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    (root / "README.md").write_text("# The course\n\n[the map](lessons/README.md)\n")
    (root / "lessons" / "README.md").write_text(
        "# Map\n\n[lesson 1](01_x.ipynb) ![result](../figures/01_x.png) [gone](02_y.ipynb)\n")
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_markdown_cell("Read `minibert/train.py`, then "
                                                    "`minibert.train.train`; [map](README.md)"),
                      nbformat.v4.new_code_cell("print(1)", outputs=[nbformat.v4.new_output(
                          "display_data", data={
                              "text/plain": "interactive(children=(IntSlider(value=0)))",
                              site.WIDGET_MIME: {"model_id": "x"}})])]
    nbformat.write(notebook, root / "lessons" / "01_x.ipynb")


def test_the_site_follows_links_and_reports_the_broken_ones(tmp_path):
    root, out = tmp_path / "course", tmp_path / "site"
    tiny_course(root)
    built = site.build(root, out)
    assert built.broken == [("lessons/README.md", "02_y.ipynb")]
    index = (out / "index.html").read_text()
    assert 'href="lessons/01_x.html"' in index and 'src="figures/01_x.png"' in index
    assert (out / "figures" / "01_x.png").is_file() and (out / "readme.html").is_file()
    lesson = (out / "lessons" / "01_x.html").read_text()
    assert lesson.count('href="../minibert/train.py.html"') == 2      # the path and the module
    assert 'href="../index.html"' in lesson                              # README.md is the index
    assert site.WIDGET_NOTE in lesson and "cdnjs" not in lesson and "unpkg" not in lesson
    assert '<span class="k">pass</span>' in (out / "minibert" / "train.py.html").read_text()


def test_make_lab_merges_its_settings_into_the_overrides(tmp_path):
    path = lab.overrides_path(tmp_path)
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"@jupyterlab/notebook-extension:tracker": {"lineNumbers": True},
                                "other": {"kept": 1}}))
    lab.write_overrides(tmp_path)
    merged = json.loads(path.read_text())
    assert merged["other"] == {"kept": 1}
    assert merged["@jupyterlab/notebook-extension:tracker"] == {
        "lineNumbers": True, "autoStartDefaultKernel": True, "windowingMode": "none"}
    assert merged["@jupyterlab/apputils-extension:notification"]["fetchNews"] == "false"
    command = lab.lab_command("--no-browser", root=tmp_path)
    assert f"--ServerApp.root_dir={tmp_path.resolve()}" in command and command[-1] == "--no-browser"
