"""A lesson open in JupyterLab, driven the way a student uses it: through the page.

Cells are run with JupyterLab's own commands (those of the Run menu), edited by typing into
their editor, and read back from the page's text. `window.jupyterapp` (the server runs with
--LabApp.expose_app_in_browser) is used to select a cell and to read the notebook's cells.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

PROMPT_DONE = re.compile(r"\[\d+\]")
ERROR_SELECTOR = ('.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.error"], '
                  ".jp-OutputArea-output .ansi-red-fg")

_PANEL = "window.jupyterapp.shell.currentWidget"


class LessonPage:
    """One lesson in its own JupyterLab workspace (so several can run side by side)."""

    def __init__(self, page, server, path: str, workspace: str):
        self.page, self.server, self.path, self.workspace = page, server, path, workspace

    # --- opening -------------------------------------------------------------------------------
    def open(self, timeout: float = 90) -> None:
        self.page.goto(self.server.page_url(f"lab/workspaces/{self.workspace}/tree/{self.path}"))
        self.page.wait_for_function(
            f"() => {{ const w = window.jupyterapp && {_PANEL};"
            " return w && w.content && w.sessionContext && w.sessionContext.session"
            " && w.sessionContext.session.kernel && w.sessionContext.kernelDisplayName"
            " && w.content.widgets.length > 0; }", timeout=timeout * 1000)
        self.page.wait_for_function(
            f"() => {_PANEL}.sessionContext.session.kernel.status === 'idle'",
            timeout=timeout * 1000)

    def kernel_name(self) -> str:
        """The kernel name in the notebook's toolbar, as the student sees it."""
        return self.page.locator(".jp-NotebookPanel-toolbar .jp-KernelName").first.inner_text()

    # --- reading the notebook ------------------------------------------------------------------
    def sources(self) -> list[tuple[str, str]]:
        """(cell type, source) of every cell, in order."""
        return self.page.evaluate(
            f"() => {_PANEL}.content.widgets.map("
            "c => [c.model.type, c.model.sharedModel.getSource()])")

    def find(self, marker: str) -> int:
        """The index of the first code cell whose source contains `marker`."""
        for index, (kind, source) in enumerate(self.sources()):
            if kind == "code" and marker in source:
                return index
        raise LookupError(f"{self.path}: no code cell contains {marker!r}: the lesson changed, "
                          "update the spec in tests/browser/test_lessons.py")

    def cell(self, index: int):
        return self.page.locator(".jp-NotebookPanel .jp-Notebook .jp-Cell").nth(index)

    def output_text(self, index: int) -> str:
        outputs = self.cell(index).locator(".jp-OutputArea")
        return outputs.first.inner_text() if outputs.count() else ""

    def errors(self) -> list[tuple[int, str]]:
        """(cell index, text) of every cell that shows an error."""
        found = []
        cells = self.page.locator(".jp-NotebookPanel .jp-Notebook .jp-Cell")
        for index in range(cells.count()):
            shown = cells.nth(index).locator(ERROR_SELECTOR)
            if shown.count():
                found.append((index, shown.first.inner_text()[:2000]))
        return found

    # --- running -------------------------------------------------------------------------------
    def command(self, name: str) -> None:
        self.page.evaluate("(name) => { window.jupyterapp.commands.execute(name); }", name)

    def select(self, index: int) -> None:
        self.page.evaluate(f"(i) => {{ const nb = {_PANEL}.content; nb.deselectAll();"
                           " nb.activeCellIndex = i; nb.mode = 'command'; }", index)

    def run(self, *indices: int) -> None:
        """Queue the cells, in order (Run > Run Selected Cell, one at a time); do not wait."""
        for index in indices:
            self.select(index)
            self.command("notebook:run-cell")

    def wait(self, index: int, timeout: float) -> None:
        """Wait until cell `index` has run (its prompt shows a number) and the kernel is idle."""
        prompt = self.cell(index).locator(".jp-InputArea-prompt").first
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if PROMPT_DONE.search(prompt.inner_text()) and self.page.evaluate(
                    f"() => {_PANEL}.sessionContext.session.kernel.status === 'idle'"):
                return
            time.sleep(0.5)
        raise TimeoutError(f"{self.path}: cell {index} had not run after {timeout:.0f} s")

    def run_and_wait(self, index: int, timeout: float = 60) -> str:
        self.run(index)
        self.wait(index, timeout)
        return self.output_text(index)

    # --- editing -------------------------------------------------------------------------------
    def type_into(self, index: int, text: str) -> None:
        """Replace the cell's source by typing: click its editor, select all, type."""
        editor = self.cell(index).locator(".cm-content").first
        editor.scroll_into_view_if_needed()
        editor.click()
        self.page.keyboard.press("ControlOrMeta+a")
        self.page.keyboard.insert_text(text)
        self.page.keyboard.press("Escape")          # back to command mode

    def insert_below(self, index: int, text: str) -> int:
        """A new code cell after `index` holding `text` (a student's scratch cell)."""
        self.select(index)
        self.command("notebook:insert-cell-below")
        self.page.wait_for_function(f"() => {_PANEL}.content.activeCellIndex === {index + 1}")
        self.type_into(index + 1, text)
        return index + 1

    def screenshot(self, folder: Path, name: str) -> Path:
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{name}.png"
        self.page.screenshot(path=str(path), full_page=False)
        return path
