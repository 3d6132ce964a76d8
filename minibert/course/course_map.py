"""The course map: the one list of lessons that the READMEs and `python -m minibert` show.

Each lesson has its notebook, its model, what it teaches, the lessons to read first, and the
paper's headline claim with how far the lesson reproduces it (its closing discussion says why).
The README's and `lessons/README.md`'s maps are rendered from this list:

    python -m minibert.course.course_map           # rewrite both maps
    python -m minibert.course.course_map --check   # exit 1 if a committed map is stale
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from ..atomic import write_text_atomically
from . import paths

__all__ = ["COURSE", "Lesson", "course_map_text", "markdown_map", "render", "stale"]


@dataclass(frozen=True)
class Lesson:
    notebook: str                 # e.g. "06_electra"; its figure is figures/<notebook>.png
    model: str
    teaches: str                  # one line
    after: tuple[str, ...]        # lessons to read first (by number)
    claim: str                    # the paper's headline, in a few words
    verdict: str                  # "reproduced", "partly", or "not yet", as the lesson measures it


COURSE = [
    Lesson("01_bert", "BERT", "attention by hand, MLM 80/10/10 + NSP, pretrain vs scratch", (),
           "pretraining then fine-tuning beats the task alone", "reproduced"),
    Lesson("02_tokenization", "Tokenization", "byte-level BPE vs WordPiece and [UNK]", ("01",),
           "a byte-level vocabulary never emits [UNK]", "reproduced"),
    Lesson("03_roberta", "RoBERTa", "dynamic masking, no NSP, input formats, large batches",
           ("01", "02"), "dynamic masking, no NSP, big batches (up to a point)", "partly"),
    Lesson("04_albert", "ALBERT", "factorized embeddings, cross-layer sharing, SOP", ("01",),
           "far fewer parameters; smoother layers; SOP solves NSP, not back", "partly"),
    Lesson("05_distilbert", "DistilBERT", "temperature, soft labels, the triple loss", ("01",),
           "smaller and faster, most of the teacher's quality", "reproduced"),
    Lesson("06_electra", "ELECTRA", "replaced token detection vs MLM at equal compute",
           ("01", "05"), "RTD beats MLM at equal compute (on replayed 4-layer runs)",
           "reproduced"),
    Lesson("07_deberta", "DeBERTa", "disentangled attention, Enhanced Mask Decoder", ("01",),
           "relative positions generalise; EMD restores absolute ones", "reproduced"),
    Lesson("08_tinybert", "TinyBERT", "layer-wise distillation in two stages, augmentation",
           ("05",), "layer-wise distillation beats labels alone", "partly"),
    Lesson("09_distil_bilstm", "BERT -> BiLSTM", "distilling into a recurrent student", ("05",),
           "a distilled BiLSTM, with augmentation, beats one trained on labels", "reproduced"),
    Lesson("10_fastbert", "FastBERT", "self-distillation and early exit by entropy", ("05",),
           "early exit speeds inference at little accuracy cost", "reproduced"),
    Lesson("11_structbert", "StructBERT", "word and sentence structural objectives", ("01",),
           "structural objectives help downstream tasks", "partly"),
    Lesson("12_soft_masked_bert", "Soft-Masked BERT", "detection + soft masking + correction",
           ("01",), "soft masking beats BERT-finetune on SIGHAN-2015", "not yet"),
    Lesson("13_comparison", "All of them", "the checkpoint zoo: one recipe, every model",
           ("01", "03", "04", "05", "06", "07"), "each paper's headline, side by side",
           "partly"),
]


def course_map_text() -> str:
    """The course map as text for a terminal, with the last run times where they exist."""
    from .notebooks import read_timings

    timings = read_timings(paths.LESSONS / "timings.json")
    lines = ["minibert: BERT and its descendants, built from scratch", ""]
    for lesson in COURSE:
        status = "ready" if (paths.LESSONS / f"{lesson.notebook}.ipynb").exists() else "planned"
        seconds = timings.get(lesson.notebook)
        when = f"{seconds:5.0f} s" if seconds else "       "
        lines.append(f"  {lesson.notebook:<22} {lesson.model:<17} {status:<8} {when}  "
                     f"{lesson.teaches}")
    lines += ["", "open the lessons: make lab | test the course: make test | rerun: make lessons",
              "list and grade the exercises: python -m minibert.check [answers.py ...]",
              "check this Python has what the lessons need: python -m minibert.course.environment"]
    return "\n".join(lines)


def markdown_map(link_prefix: str = "lessons/") -> str:
    """The course map as a Markdown table; notebook links start with `link_prefix`."""
    rows = ["| lesson | model | what it teaches | read first | the paper's claim | here |",
            "|---|---|---|---|---|---|"]
    for lesson in COURSE:
        link = f"[{lesson.notebook}]({link_prefix}{lesson.notebook}.ipynb)"
        after = ", ".join(lesson.after) or "—"
        rows.append(f"| {link} | {lesson.model} | {lesson.teaches} | {after} | {lesson.claim} "
                    f"| {lesson.verdict} |")
    return "\n".join(rows)


MAPS = {paths.ROOT / "README.md": "lessons/", paths.LESSONS / "README.md": ""}
BLOCK = re.compile(r"(<!-- generated: course map -->\n)(?:.*?\n)?(<!-- end: course map -->)", re.S)


def _rendered(path: Path, link_prefix: str) -> str:
    text = path.read_text(encoding="utf-8")
    if not BLOCK.search(text):
        raise ValueError(f"{path} has no '<!-- generated: course map -->' ... '<!-- end: course "
                         "map -->' block: add one where the map goes")
    return BLOCK.sub(lambda m: m.group(1) + markdown_map(link_prefix) + "\n" + m.group(2), text)


def stale() -> list[Path]:
    """The map files whose committed map differs from the one rendered from COURSE."""
    return [path for path, prefix in MAPS.items()
            if path.read_text(encoding="utf-8") != _rendered(path, prefix)]


def render() -> list[Path]:
    """Rewrite every stale map; returns the files written."""
    written = []
    for path in stale():
        write_text_atomically(path, _rendered(path, MAPS[path]))
        written.append(path)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m minibert.course.course_map",
                                     description="Render the course map into the READMEs.")
    parser.add_argument("--check", action="store_true", help="exit 1 if a map is stale")
    args = parser.parse_args(argv)
    if args.check:
        behind = stale()
        for path in behind:
            print(f"{path} is stale: run python -m minibert.course.course_map", file=sys.stderr)
        return 1 if behind else 0
    for path in render():
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
