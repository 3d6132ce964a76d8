"""The browser suite: `make test-browser` (part of `make test`).

Debian's Chromium (/usr/bin/chromium, or MINIBERT_CHROMIUM) driven by Playwright's Python
package; no browser is ever downloaded. Without Chromium the suite is skipped with the command
that installs it. Collected only when asked for (`pytest tests/browser`): `pytest tests` skips
it, since it starts a server and trains models for a few minutes.

On a failure, screenshots of the pages the test used go to browser-screenshots/<test name>/
(MINIBERT_SCREENSHOTS=all saves them for passing tests too). The pages, widgets and links
checked are counted and printed at the end.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections import Counter
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CHROMIUM = Path(os.environ.get("MINIBERT_CHROMIUM", "/usr/bin/chromium"))
SHOTS = REPO / "browser-screenshots"
INSTALL = ("install it with `sudo apt-get install -y chromium chromium-driver` (Debian, Ubuntu; "
           "`make test-browser` does this itself when run as root), or point MINIBERT_CHROMIUM "
           "at a Chromium binary, then run `make test-browser`")
# As root, without a sandbox; no background connections (the machine may have no network).
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--disable-quic"]
PAGE_TIMEOUT_MS = 60_000

checked: Counter = Counter()      # "pages", "widgets", "sliders", "links", "images", "exercises"


def pytest_collection_modifyitems(config, items):
    here = str(Path(__file__).parent)
    asked = any(str(Path(arg.split("::")[0]).resolve()).startswith(here) for arg in config.args)
    if asked:
        return
    skip = pytest.mark.skip(reason="the browser suite runs with `make test-browser`")
    for item in items:
        if str(item.fspath).startswith(here):
            item.add_marker(skip)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.when == "call" or (report.when == "setup" and report.failed):
        item.browser_failed = report.failed


def pytest_terminal_summary(terminalreporter):
    if checked:
        terminalreporter.write_line(
            "browser suite checked: " + ", ".join(f"{count} {what}"
                                                   for what, count in sorted(checked.items())))


@pytest.fixture(scope="session")
def browser():
    if not CHROMIUM.exists():
        pytest.skip(f"Chromium is not installed at {CHROMIUM}: {INSTALL}")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("Playwright is not installed: `pip install -e '.[dev]'` (or `make setup`)")
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS,
                                              timeout=PAGE_TIMEOUT_MS)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture(scope="session")
def work():
    folder = Path(tempfile.mkdtemp(prefix="minibert-browser-"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="session")
def jupyterlab(browser, work):
    from servers import JupyterLab, course_copy

    server = JupyterLab(course_copy(REPO, work / "course"), work)
    try:
        server.start()
        yield server
    finally:
        killed = server.stop()
        assert not server.kernel_pids(), "kernels still running after the server stopped"
        if killed:
            print(f"the server or its kernels had to be killed: pids {killed}")


def new_page(browser, pages: list):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    context.set_default_timeout(PAGE_TIMEOUT_MS)
    page = context.new_page()
    pages.append(page)
    return page


def save_screenshots(request, pages) -> None:
    failed = getattr(request.node, "browser_failed", False)
    if not (failed or os.environ.get("MINIBERT_SCREENSHOTS") == "all"):
        return
    folder = SHOTS / re.sub(r"[^\w.-]+", "_", request.node.name)
    folder.mkdir(parents=True, exist_ok=True)
    for number, page in enumerate(pages):
        if not page.is_closed():
            page.screenshot(path=str(folder / f"page{number}.png"), full_page=True)
    print(f"screenshots in {folder}")


@pytest.fixture
def pages(browser, request):
    """Pages the test opens (new_page(browser, pages)); screenshotted on failure, then closed."""
    opened: list = []
    yield opened
    save_screenshots(request, opened)
    for page in opened:
        page.context.close()
