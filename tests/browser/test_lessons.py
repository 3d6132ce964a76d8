"""Four lessons used in JupyterLab as a student uses them, in headless Chromium.

For each lesson: open it (the course's kernel must be the one running), run its cells up to
the exercise, answer the exercise wrong and then right and read the grader's verdicts, run on
to the widget, move its sliders, and check that the widget's printed numbers changed the way
the plain function behind it says (the same call run in a scratch cell prints the same line).
No cell may show an error.

Time: the cells before a widget train models (measured alone on 2 cores: lesson 01 about 85 s,
06 about 70 s, 10 about 60 s, 05 about 35 s), so the four lessons run side by side, one kernel
and one thread each, and cells a widget does not need are skipped (`skip`, `trim` below: lesson
01's fine-tuning comparison, 67 s, and lesson 06's, 19 s). A skipped cell that turns out to be
needed shows up as a NameError in the page, and the test says which cell.
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass, field

import pytest
from conftest import PAGE_TIMEOUT_MS, REPO, SHOTS, checked
from lab_page import LessonPage

from minibert.course.lab import KERNEL_DISPLAY_NAME

WIDGET_TIMEOUT = 480       # seconds for a lesson's cells to reach its widget (4 kernels, 2 cores)


@dataclass
class Spec:
    name: str
    exercise: str                       # a line of the exercise cell
    grader: str                         # the exercise the cell's first check grades
    mistake: tuple[str, str]            # (right, wrong): one change to the solution
    widget: str                         # a line of the widget's cell
    sliders: dict[str, str]             # slider label -> the value typed into its readout
    plain: str                          # the plain function at those values (prints a line)
    grows: str | None = None            # a number in the printed line that must grow
    skip: tuple[str, ...] = ()          # lines of cells the widget does not need
    trim: dict[str, str] = field(default_factory=dict)  # a cell's line -> its last line kept


SPECS = [
    Spec("01_bert", exercise="def my_attention(q, k, v, mask=None):", grader="attention",
         mistake=("/ math.sqrt(d)", ""),
         widget="attention_explorer(maps, tokens)", sliders={"layer": "1", "head": "1"},
         plain="show_attention(maps, tokens, layer=1, head=1)\nplt.close('all')",
         skip=("acceptability_task(lang, 256, seed=10)",),
         trim={"sentence_a, sentence_b = heldout_docs[0][0]": "tokens = "}),
    Spec("06_electra", exercise="def electra_labels(input_ids, selected, sampled_ids):",
         grader="electra_labels",
         mistake=("(corrupted != input_ids).float()", "selected.float()"),
         widget="widgets.detection_explorer(examples)", sliders={"sequence": "3"},
         plain="widgets.show_detection(**examples[3])\nplt.close('all')",
         skip=("FINE_TUNE_AT, SEEDS = (0, 1, 3), (0, 1)", "def mean(values):")),
    Spec("10_fastbert", exercise="def uncertainty(logits):", grader="fastbert_uncertainty",
         mistake=("entropy / math.log(logits.shape[-1])", "entropy"),
         widget="widgets.early_exit_slider(", sliders={"speed": "1.0"},
         plain=("widgets.show_early_exit(all_logits, test['labels'], 1.0, layer_cost=LAYER, "
                "branch_cost=BRANCH)\nplt.close('all')"), grows="speed-up"),
    Spec("05_distilbert", exercise="def my_temperature_softmax(logits, temperature):",
         grader="temperature_softmax", mistake=("logits / temperature", "logits"),
         widget="temperature_explorer(row", sliders={"T": "4"},
         plain=("show_temperature(row, 4.0, labels=tokenizer.id_to_token)\n"
                "plt.close('all')"), grows="entropy"),
]


def solution_with_checks(spec: Spec, cell_source: str, wrong: bool) -> str:
    """The lesson's solution file (with the spec's mistake if `wrong`) and the cell's checks."""
    text = (REPO / "lessons" / "solutions" / f"{spec.name}.py").read_text(encoding="utf-8")
    text = re.sub(r'^"""[\s\S]*?"""\n', "", text).split("\nGRADERS")[0].strip()
    right, mistaken = spec.mistake
    assert right in text, f"the solution of {spec.name} no longer has {right!r}: update the spec"
    if wrong:
        text = text.replace(right, mistaken, 1)
    checks = [line for line in cell_source.splitlines() if "check.grade(" in line]
    return text + "\n\n\n" + "\n".join(checks) + "\n"


class Started:
    """A lesson open in its own page, its exercise answered, its cells running to the widget."""

    def __init__(self, spec: Spec, lesson: LessonPage):
        self.spec, self.lesson = spec, lesson
        self.kernel = ""
        self.verdicts: dict[str, str] = {}
        self.widget = -1


def start(spec: Spec, browser, server) -> Started:
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    context.set_default_timeout(PAGE_TIMEOUT_MS)
    lesson = LessonPage(context.new_page(), server, f"lessons/{spec.name}.ipynb", spec.name)
    started = Started(spec, lesson)
    lesson.open()
    checked["pages"] += 1
    started.kernel = lesson.kernel_name()
    lesson.command("notebook:clear-all-cell-outputs")
    sources = lesson.sources()
    exercise = lesson.find(spec.exercise)
    before = [i for i, (kind, _) in enumerate(sources) if kind == "code" and i < exercise]
    lesson.run(*before)
    lesson.wait(before[-1], 120)
    for verdict, wrong in (("wrong", True), ("right", False)):
        lesson.type_into(exercise, solution_with_checks(spec, sources[exercise][1], wrong))
        started.verdicts[verdict] = lesson.run_and_wait(exercise, 60)
    started.widget = lesson.find(spec.widget)
    skipped = {lesson.find(marker) for marker in spec.skip}
    for marker, last in spec.trim.items():
        index = lesson.find(marker)
        lines = sources[index][1].splitlines()
        keep = next(n for n, line in enumerate(lines) if line.startswith(last))
        lesson.type_into(index, "\n".join(lines[:keep + 1]) + "\n")
    rest = [i for i, (kind, _) in enumerate(sources)
            if kind == "code" and exercise < i <= started.widget and i not in skipped]
    lesson.run(*rest)
    return started


@pytest.fixture(scope="module")
def lessons(browser, jupyterlab):
    started = {}
    try:
        for spec in SPECS:
            started[spec.name] = start(spec, browser, jupyterlab)
        yield started
    finally:
        for one in started.values():
            one.lesson.page.context.close()


@pytest.fixture
def lesson(lessons, request):
    one = lessons[request.param]
    yield one
    if getattr(request.node, "browser_failed", False) or os.environ.get(
            "MINIBERT_SCREENSHOTS") == "all":
        folder = SHOTS / re.sub(r"[^\w.-]+", "_", request.node.name)
        print(f"screenshot: {one.lesson.screenshot(folder, one.spec.name)}")


NAMES = [spec.name for spec in SPECS]


@pytest.mark.parametrize("lesson", NAMES, indirect=True)
def test_the_course_kernel_runs_the_lesson(lesson):
    assert lesson.kernel == KERNEL_DISPLAY_NAME, (
        f"{lesson.spec.name} opened on kernel {lesson.kernel!r}, not the course's "
        f"{KERNEL_DISPLAY_NAME!r}: run `make setup` (it installs the kernel into .venv)")


@pytest.mark.parametrize("lesson", NAMES, indirect=True)
def test_the_grader_answers_a_wrong_and_a_right_answer(lesson):
    grader = lesson.spec.grader
    wrong, right = lesson.verdicts["wrong"], lesson.verdicts["right"]
    assert wrong.startswith(f"✗ {grader}:"), f"a wrong answer was graded:\n{wrong}"
    assert "wrong values" in wrong or "differ" in wrong, wrong
    assert right.startswith(f"✓ {grader}: correct"), f"the solution was graded:\n{right}"
    assert "✗" not in right, right
    checked["exercises"] += 1


def number_after(word: str, text: str) -> float:
    match = re.search(rf"{re.escape(word)} (-?\d+(?:\.\d+)?)", text)
    assert match, f"no number after {word!r} in {text!r}"
    return float(match.group(1))


@pytest.mark.parametrize("lesson", NAMES, indirect=True)
def test_the_widget_follows_its_plain_function(lesson):
    spec, page = lesson.spec, lesson.lesson
    page.wait(lesson.widget, WIDGET_TIMEOUT)
    assert not page.errors(), f"cells show errors: {page.errors()}"
    cell = page.cell(lesson.widget)
    view = cell.locator(".widget-output").first
    view.wait_for()
    before = view.inner_text().strip()
    assert before, "the widget printed nothing at its start"
    checked["widgets"] += 1
    for label, value in spec.sliders.items():
        slider = cell.locator(".widget-slider", has=page.page.locator(
            ".widget-label", has_text=re.compile(rf"^{re.escape(label)}$")))
        assert slider.count() == 1, f"no slider labelled {label!r} in the widget"
        readout = slider.locator(".widget-readout")
        readout.click()
        page.page.keyboard.press("ControlOrMeta+a")
        page.page.keyboard.type(value)
        page.page.keyboard.press("Enter")
        checked["sliders"] += 1
    deadline = time.monotonic() + 60
    while view.inner_text().strip() == before and time.monotonic() < deadline:
        time.sleep(0.3)
    time.sleep(1.0)                                   # let the redraw finish
    after = view.inner_text().strip()
    assert after != before, f"moving {list(spec.sliders)} did not change the output: {after!r}"
    scratch = page.insert_below(lesson.widget, spec.plain)
    expected = page.run_and_wait(scratch, 60).strip().splitlines()[0]
    assert expected in after.splitlines(), (
        f"the widget shows\n{after}\nbut the plain function prints\n{expected}")
    if spec.grows:
        assert number_after(spec.grows, after) > number_after(spec.grows, before), (before, after)
    errors = page.errors()
    assert not errors, f"cells show errors: {errors}"
