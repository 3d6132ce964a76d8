"""`make lab`'s configuration, seen in the browser: the lessons folder open, no news prompt,
a lesson opened on the course's kernel without a kernel dialog."""

from __future__ import annotations

import json

from conftest import checked, new_page
from lab_page import LessonPage

from minibert.course import lab


def test_make_lab_opens_the_lessons_with_the_course_kernel_and_no_news(jupyterlab, browser,
                                                                        pages):
    page = new_page(browser, pages)
    page.goto(jupyterlab.page_url(""))                     # the server's front door
    page.wait_for_selector(".jp-DirListing-item")
    checked["pages"] += 1
    assert page.url.split("?")[0].endswith(f"/lab/tree/{lab.OPEN_FOLDER}"), page.url
    crumbs = page.locator(".jp-BreadCrumbs").inner_text()
    assert lab.OPEN_FOLDER in crumbs, f"the file browser shows {crumbs!r}, not the lessons"
    names = page.locator(".jp-DirListing-itemName").all_inner_texts()
    assert "01_bert.ipynb" in names and "README.md" in names, names
    page.wait_for_timeout(2000)                            # time for a news toast to appear
    toasts = page.locator(".Toastify__toast").all_inner_texts()
    assert not [t for t in toasts if "news" in t.lower()], f"a news prompt appeared: {toasts}"
    kernels = json.loads(jupyterlab.api("GET", "/api/kernelspecs"))
    assert kernels["default"] == lab.KERNEL_NAME
    spec = kernels["kernelspecs"][lab.KERNEL_NAME]["spec"]
    assert spec["display_name"] == lab.KERNEL_DISPLAY_NAME, spec

    lesson = LessonPage(page, jupyterlab, "lessons/02_tokenization.ipynb", "lab-check")
    lesson.open()
    checked["pages"] += 1
    assert not page.locator(".jp-Dialog").count(), "opening a lesson asked for a kernel"
    assert lesson.kernel_name() == lab.KERNEL_DISPLAY_NAME
    # windowing mode "none": every cell is in the page, not only those scrolled into view
    in_model = page.evaluate("() => window.jupyterapp.shell.currentWidget.content.widgets.length")
    in_page = page.locator(".jp-NotebookPanel .jp-Notebook .jp-Cell").count()
    assert in_page == in_model, f"{in_page} of the lesson's {in_model} cells are in the page"
