"""Chinese spelling correction (lesson 12): the data, the characters as ids, SIGHAN's scores.

- `minibert.spelling.data`: Chinese text, confusion sets, injected errors, SIGHAN-2015;
- `minibert.spelling.vocab`: the character vocabulary, batches of pairs, correcting text;
- `minibert.spelling.metrics`: sentence- and character-level detection and correction P/R/F1.

Import the names from `minibert.spelling` (`spelling.load_sighan2015()`, `spelling.CharVocab`):
the three files are where they are written, not three ways to reach them.
"""

from __future__ import annotations

from .data import (
    PACKAGES,
    ConfusionSet,
    chunks,
    inject_errors,
    load_chinese_text,
    load_confusion_set,
    load_peoples_daily,
    load_reviews,
    load_sighan2015,
    load_stroke_confusion_set,
    make_pairs,
    package_file,
    split_chinese_sentences,
)
from .metrics import (
    char_metrics,
    sentence_metrics,
)
from .vocab import (
    CharVocab,
    apply_proposals,
    batches_by_length,
    correct,
    correction_batch,
)

__all__ = [
    "CharVocab", "ConfusionSet", "PACKAGES", "apply_proposals", "batches_by_length", "char_metrics",
    "chunks",
    "correct", "inject_errors", "load_chinese_text", "load_confusion_set", "load_peoples_daily",
    "load_reviews", "load_sighan2015", "load_stroke_confusion_set", "make_pairs", "package_file",
    "correction_batch", "sentence_metrics", "split_chinese_sentences",
]
