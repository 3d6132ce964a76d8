"""`python -m minibert` prints the course map: every lesson, what it teaches, its figure."""

from __future__ import annotations

import sys

from .course import paths

# (notebook, model, what it teaches). Each lesson saves its figure as figures/<notebook>.png.
COURSE = [
    ("01_bert", "BERT", "attention by hand, MLM 80/10/10 + NSP, pretrain vs scratch"),
    ("02_tokenization", "Tokenization", "byte-level BPE vs WordPiece and [UNK]"),
    ("03_roberta", "RoBERTa", "dynamic masking, no NSP, input formats, large batches"),
    ("04_albert", "ALBERT", "factorized embeddings, cross-layer sharing, SOP"),
    ("05_distilbert", "DistilBERT", "temperature, soft labels, the triple loss"),
    ("06_electra", "ELECTRA", "replaced token detection vs MLM at equal compute"),
    ("07_deberta", "DeBERTa", "disentangled attention, Enhanced Mask Decoder"),
    ("08_tinybert", "TinyBERT", "layer-wise distillation in two stages, augmentation"),
    ("09_distil_bilstm", "BERT -> BiLSTM", "distilling into a recurrent student"),
    ("10_fastbert", "FastBERT", "self-distillation and early exit by entropy"),
    ("11_structbert", "StructBERT", "word and sentence structural objectives"),
    ("12_soft_masked_bert", "Soft-Masked BERT", "detection + soft masking + correction"),
    ("13_comparison", "All of them", "the checkpoint zoo: one recipe, four tasks, every model"),
]

ROOT = paths.ROOT


def course_map() -> str:
    """The course map as text, marking lessons that exist in this checkout."""
    from .course.notebooks import read_timings

    timings = read_timings(ROOT / "lessons" / "timings.json")
    lines = ["minibert: BERT and its descendants, built from scratch", ""]
    for notebook, model, teaches in COURSE:
        path = ROOT / "lessons" / f"{notebook}.ipynb"
        status = "ready" if path.exists() else "planned"
        seconds = timings.get(notebook)
        when = f"{seconds:5.0f} s" if seconds else "       "
        lines.append(f"  {notebook:<22} {model:<17} {status:<8} {when}  {teaches}")
    lines += ["", "open the lessons: make lab | test the course: make test | rerun: make lessons",
              "list and grade the exercises: python -m minibert.check [answers.py ...]",
              "check this Python has what the lessons need: python -m minibert.course.environment"]
    return "\n".join(lines)


def main() -> int:
    try:
        print(course_map())
    except ValueError as error:  # a lessons/timings.json cut short or edited by hand
        print(f"python -m minibert: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
