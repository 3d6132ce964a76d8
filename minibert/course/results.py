"""What the lessons measured, kept as small records, and the tables rendered from them.

An executed lesson saves its measured numbers with `save_results("06_electra", {...})` to
`lessons/results/06_electra.json`: the paper's claim, what the lesson measured (sentences
formatted from its own variables) and what it asserts. RESULTS.md's tables are rendered from
those records, never typed by hand:

    python -m minibert.course.results           # rewrite RESULTS.md's generated tables
    python -m minibert.course.results --check   # exit 1 if RESULTS.md and the records disagree

A generated table sits between `<!-- generated: NAME -->` and `<!-- end: NAME -->` lines.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from ..atomic import write_text_atomically
from . import paths

__all__ = ["RESULTS", "glance_table", "lessons_table", "load_results", "render_readme",
           "save_results"]

RESULTS = paths.LESSONS / "results"
RESULTS_MD = paths.ROOT / "RESULTS.md"


def save_results(lesson: str, results: dict, folder: Path | None = None) -> Path:
    """Write `results` (plain JSON values) as lesson `lesson`'s record, atomically."""
    text = json.dumps(results, indent=1, allow_nan=False) + "\n"     # in the lesson's order
    return write_text_atomically((folder or RESULTS) / f"{lesson}.json", text)


def load_results(lesson: str, folder: Path | None = None) -> dict:
    path = (folder or RESULTS) / f"{lesson}.json"
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing: execute lessons/{lesson}.ipynb "
                                f"(make lessons LESSONS=lessons/{lesson}.ipynb) to write it")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise ValueError(f"{path} is not valid JSON ({error}): execute lessons/{lesson}.ipynb "
                         "again to rewrite it") from None


def glance_table(results: dict) -> str:
    """The course at a glance: lesson 13's leaderboard as a Markdown table.

    One row per zoo member and the scratch encoder (accuracy at the record's label count, mean
    of its seeds), then the students trained in the lesson on one task alone; parameters and
    speed (BERT's latency over the model's, batch 1 / batch 32) where the lesson measured them.
    """
    tasks = results["tasks"]
    speed, size = results.get("speed", {}), results.get("parameters", {})
    lines = ["| model | parameters | speed, batch 1 / 32 | pretraining FLOPs | "
             + " | ".join(tasks) + " | mean | its paper's headline here |",
             "|---" * (len(tasks) + 6) + "|"]

    def cells(model, flops, accuracy, mean):
        verdict = results["verdicts"].get(model)
        said = ("holds" if verdict["holds"] else "not at this budget") if verdict else ""
        fast = " / ".join(f"{s:.2f}" for s in speed[model]) if model in speed else ""
        params = f"{size[model]:,}" if model in size else ""
        scores = " | ".join(f"{accuracy[t]:.3f}" if t in accuracy else "" for t in tasks)
        return f"| {model} | {params} | {fast} | {flops} | {scores} | {mean} | {said} |"

    for model, row in results["models"].items():
        flops = "none" if model == "scratch" else f"{row['flops_x_bert']:.2f}x BERT"
        lines.append(cells(model, flops, row["accuracy"], f"{row['mean']:.3f}"))
    for model, accuracy in results.get("students", {}).items():
        lines.append(cells(model, "+ its teacher", accuracy, ""))
    return "\n".join(lines)


def _comparison_row(results: dict) -> dict:
    """Lesson 13's row of the lessons table, from its own record."""
    pays = ", ".join(f"{task} {gap:+.3f}" for task, gap in results["pretraining_pays"].items())
    best = max(results["models"], key=lambda model: results["models"][model]["mean"])
    holds = [model for model, verdict in results["verdicts"].items() if verdict["holds"]]
    return {
        "claim": "each paper's headline, side by side, and pretraining pays with few labels or "
                 "where order matters",
        "measured": [f"BERT minus scratch by task and label count: {pays}",
                     f"best mean over the tasks: {best} {results['models'][best]['mean']:.3f}",
                     f"headlines that hold at the zoo's budget: {', '.join(holds) or 'none'}"],
        "asserted": "each model's headline as its verdict says (see the glance table)",
    }


def lessons_table(folder: Path | None = None) -> str:
    """Every lesson's claim, what it measured and what it asserts, from the lessons' records."""
    from .course_map import COURSE

    lines = ["| lesson | the paper's claim | what the lesson measured | asserted | here |",
             "|---|---|---|---|---|"]
    for lesson in COURSE:
        try:
            record = load_results(lesson.notebook, folder)
        except FileNotFoundError:
            remake = f"make lessons LESSONS=lessons/{lesson.notebook}.ipynb"
            lines.append(f"| {lesson.notebook} | {lesson.claim} | not recorded yet: run "
                         f"`{remake}` |  | {lesson.verdict} |")
            continue
        if "measured" not in record:
            record = _comparison_row(record)
        measured = "; ".join(record["measured"])
        lines.append(f"| {lesson.notebook} | {record['claim']} | {measured} | "
                     f"{record['asserted']} | {lesson.verdict} |")
    return "\n".join(lines)


TABLES = {"glance": lambda: glance_table(load_results("13_comparison")),
          "lessons": lessons_table}
_BLOCK = re.compile(r"(<!-- generated: (?P<name>[\w-]+) -->\n)(?P<body>.*?)"
                    r"(<!-- end: (?P=name) -->)", re.S)          # an empty block too


def render_readme(text: str) -> str:
    """`text` with every generated block replaced by its table rendered from the records."""
    def replace(match: re.Match) -> str:
        name = match["name"]
        if name not in TABLES:
            raise KeyError(f"RESULTS.md names a generated table {name!r}; known: "
                           f"{', '.join(TABLES)}")
        return match.group(1) + TABLES[name]() + "\n" + match.group(4)
    return _BLOCK.sub(replace, text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="exit 1 if RESULTS.md's generated tables are stale")
    args = parser.parse_args(argv)
    text = RESULTS_MD.read_text(encoding="utf-8")
    rendered = render_readme(text)
    if args.check:
        if rendered != text:
            print("RESULTS.md's generated tables differ from lessons/results/: run "
                  "`python -m minibert.course.results` to render them")
            return 1
        print("RESULTS.md's generated tables match lessons/results/")
        return 0
    if rendered != text:
        write_text_atomically(RESULTS_MD, rendered)
    print("RESULTS.md's generated tables rendered from lessons/results/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
