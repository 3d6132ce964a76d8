"""Byte-level BPE, the tokenizer of GPT-2 and RoBERTa, written to be read.

Byte pair encoding starts from the 256 possible bytes and learns *merges*: it finds the most
frequent pair of adjacent tokens in the training text, gives the pair a new id, replaces
every occurrence, and repeats. Text is first turned into UTF-8 bytes, so every string can be
encoded and nothing is ever unknown: the byte-level tokenizer never emits `[UNK]`.

The ids of a tokenizer with N merges:

    0 ... 255               the bytes themselves (id 97 is b"a")
    256 ... 255 + N         the merges, in the order they were learned (= their rank)
    256 + N ... 260 + N     the special tokens [PAD] [UNK] [CLS] [SEP] [MASK]

The course uses BERT's special-token names for every tokenizer (RoBERTa calls them
<pad> <unk> <s> </s> <mask>), so the masking and model code reads `pad_id`, `cls_id`, `sep_id`,
`mask_id`, `special_ids` and `vocab_size` the same way from any tokenizer. They come after the
merges, so the byte ids keep their values. `unk_id` exists for the same reason, but `encode`
never produces it.

The classic example (Wikipedia's "aaabdaaabac", three merges: aa -> Z, ab -> Y, ZY -> X):

    >>> tok = ByteLevelBPE.train("aaabdaaabac", vocab_size=256 + 3 + 5)
    >>> tok.merges
    {(97, 97): 256, (97, 98): 257, (256, 257): 258}
    >>> tok.encode("aaabdaaabac")
    [258, 100, 258, 97, 99]
    >>> tok.decode([258, 100, 258, 97, 99])
    'aaabdaaabac'

What is and is not handled:

- Pre-tokenization. Like GPT-2, text is first split into chunks (words with their leading
  space, numbers, runs of punctuation, whitespace) and merges never cross a chunk boundary.
  GPT-2's pattern needs the `regex` package (`\\p{L}`, `\\p{N}`); minibert writes the same
  pattern with the standard `re` module (see `SPLIT_PATTERN`), so it has no extra dependency
  and gives the same chunks on every machine. It differs from GPT-2's in three places only:
  numbers that are not decimal digits (² ½ Ⅻ) count as letters, the control characters
  U+001C..U+001F count as whitespace, and characters newer than Python's Unicode tables count
  as punctuation. On ordinary text, the Bible included, the chunks are identical.
- Training counts each distinct chunk once, with its frequency, and updates the pair counts
  incrementally after every merge (`PairCounter`): only the chunks that contain the merged
  pair are looked at again. `NaiveBPE` is the textbook version that recounts every pair of the
  whole text after every merge; it learns exactly the same merges, much more slowly.
- Ties. When two pairs are equally frequent, the smallest pair wins: (97, 98) before
  (256, 97), i.e. compare the first ids, then the second. Training is deterministic.
- Encoding applies the merges in rank order inside each chunk, like minbpe, and remembers the
  ids of every chunk it has seen (a cache), so a repeated word costs one dictionary look-up.
- Special tokens written in the text, such as "[MASK]", are ordinary text by default (they
  become the bytes "[", "MASK", "]"). Pass `allowed_special="all"` (or a set of strings) to
  `encode` to turn them into their ids, as tiktoken and minbpe do.
- Decoding joins the bytes of the ids and reads them as UTF-8 with errors="replace": a list of
  ids that cuts a character in half (e.g. [226] alone, the first byte of "€") decodes to
  "\\ufffd" instead of raising. decode(encode(text)) == text for every string.
- Lone surrogates ("\\ud800", half of a UTF-16 pair) are not characters and have no UTF-8
  bytes. `encode` and `train` raise a ValueError that shows where one is and how to clean it.
- Files: `save` writes a small text file that starts with the line "minibert bpe v1";
  `load` refuses any other format or version with an error that says what to do.
"""

from __future__ import annotations

import heapq
import re
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from minibert.tokenizers.word import SPECIAL_TOKENS, token_id, write_tokenizer_file

__all__ = [
    "GPT2_SPLIT_PATTERN",
    "SPLIT_PATTERN",
    "ByteLevelBPE",
    "NaiveBPE",
    "PairCounter",
    "bytes_to_unicode",
    "get_stats",
    "merge",
    "pretokenize",
    "train_naive",
]

# ------------------------------------------------------------------ the two helpers of BPE


def get_stats(ids, counts=None):
    """Count the consecutive pairs in a list of ids.

    Example: [1, 2, 3, 1, 2] -> {(1, 2): 2, (2, 3): 1, (3, 1): 1}

    Pass an existing dictionary as `counts` to add to it instead (used to count the pairs of
    many chunks into one dictionary).
    """
    counts = {} if counts is None else counts
    for pair in zip(ids, ids[1:]):  # iterate consecutive elements: (ids[0], ids[1]), ...
        counts[pair] = counts.get(pair, 0) + 1
    return counts


def merge(ids, pair, idx):
    """Replace every occurrence of `pair` in the list `ids` with the new id `idx`.

    Example: ids=[1, 2, 3, 1, 2], pair=(1, 2), idx=4 -> [4, 3, 4]

    Occurrences are replaced left to right, so [1, 1, 1] with pair (1, 1) gives [idx, 1].
    """
    newids = []
    i = 0
    while i < len(ids):
        # the pair starts here if this id is its first half and the next one its second half
        if ids[i] == pair[0] and i < len(ids) - 1 and ids[i + 1] == pair[1]:
            newids.append(idx)
            i += 2  # skip both halves
        else:
            newids.append(ids[i])
            i += 1
    return newids


# ------------------------------------------------------------------ pre-tokenization

# GPT-2's pattern (openai/gpt-2, encoder.py), for the `regex` package. Shown for reference.
GPT2_SPLIT_PATTERN = (
    r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
)

# The same pattern for the standard `re` module, which has no \p{L} (letter) or \p{N} (number).
# In `re`, \w is "a letter, a digit, a number or _", so:
#   [^\W\d_]       a letter: a \w character that is neither a decimal digit nor _
#   \d             a number: a decimal digit (GPT-2's \p{N} also has ² ½ Ⅻ; here they are letters)
#   [^\s\w]|_      anything else: punctuation, symbols, emoji... (_ is in \w, so add it back)
SPLIT_PATTERN = (
    r"""'s|'t|'re|'ve|'m|'ll|'d"""  # English contractions: "don't" -> "don", "'t"
    r"""| ?[^\W\d_]+"""  # a word, with the space before it: " cat"
    r"""| ?\d+"""  # a number, with the space before it: " 1984"
    r"""| ?(?:[^\s\w]|_)+"""  # a run of punctuation or symbols: " ...", "!\"", " 😀"
    r"""|\s+(?!\S)"""  # whitespace, except the last space before a word (it goes to the word)
    r"""|\s+"""  # any whitespace left
)
_SPLIT = re.compile(SPLIT_PATTERN)


def pretokenize(text):
    """Split text into the chunks that BPE merges inside of (never across).

    Example: "Hello world, don't!" -> ['Hello', ' world', ',', ' don', "'t", '!']
    """
    return _SPLIT.findall(text)


def _utf8(text):
    """text -> its UTF-8 bytes, or a clear ValueError if it holds a lone surrogate."""
    if not isinstance(text, str):
        raise ValueError(f"expected a string, got {type(text).__name__}")
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as error:
        position = error.start
        raise ValueError(
            f"the text holds a lone surrogate {text[position]!r} at position {position}: half "
            "of a UTF-16 pair, which is not a character and has no UTF-8 bytes. Clean the text "
            "first: text.encode('utf-16', 'surrogatepass').decode('utf-16', 'replace') joins "
            "complete pairs into their characters and turns lone halves into '\\ufffd'."
        ) from None


def bytes_to_unicode():
    """GPT-2's table byte -> printable character, used to show byte tokens as text.

    Printable bytes stand for themselves (b"a" -> "a"); the others (space, newline, control
    bytes...) are mapped to characters from 256 upwards, so the space becomes "Ġ" and the
    newline "Ċ". The token " the" is shown as "Ġthe", as in GPT-2's and RoBERTa's vocabularies.
    """
    # the bytes that are printable characters already: ! to ~, ¡ to ¬, ® to ÿ
    printable = (
        list(range(ord("!"), ord("~") + 1))
        + list(range(ord("¡"), ord("¬") + 1))
        + list(range(ord("®"), ord("ÿ") + 1))
    )
    table = {b: chr(b) for b in printable}
    shift = 0
    for b in range(256):
        if b not in table:  # not printable: give it the next unused character from 256 on
            table[b] = chr(256 + shift)
            shift += 1
    return table


# ------------------------------------------------------------------ training, the fast way


class PairCounter:
    """The pair counts of a corpus of words, kept up to date while pairs are merged.

    `words` are lists of ids (for byte-level BPE: the bytes of each distinct chunk) and
    `weights` say how often each word occurs in the text. The counter keeps

        counts: pair -> how often the pair occurs in the text (occurrences in a word x weight)
        where:  pair -> the set of words (their indices) that contain the pair
        heap:   (-count, pair) entries, so the most frequent pair is found without a scan

    and `merge(pair, idx)` rewrites only the words in `where[pair]`, then corrects the counts
    of the pairs those words lost and gained. Everything else is left alone; this is why the
    training is fast. (The naive trainer, `train_naive`, recounts every pair instead.)

    Example, the words "ab" x3 and "abc" x1 (as ids):

        >>> pc = PairCounter([[97, 98], [97, 98, 99]], [3, 1])
        >>> pc.counts
        {(97, 98): 4, (98, 99): 1}
        >>> pc.most_frequent()
        (97, 98)
        >>> pc.merge((97, 98), 256)
        >>> pc.words, pc.counts
        ([[256], [256, 99]], {(256, 99): 1})
    """

    def __init__(self, words, weights):
        self.words = [list(word) for word in words]  # list of lists of ids, rewritten by merges
        self.weights = list(weights)  # how often each word occurs
        self.counts = {}  # (int, int) -> int
        self.where = {}  # (int, int) -> set of word indices
        for w, word in enumerate(self.words):
            for pair, n in get_stats(word).items():
                self.counts[pair] = self.counts.get(pair, 0) + n * self.weights[w]
                self.where.setdefault(pair, set()).add(w)
        # A heap of (-count, pair): its smallest entry is the highest count and, among equal
        # counts, the smallest pair. Entries are never updated in place: a changed count gets
        # a new entry, and out-of-date ones are thrown away when they reach the top.
        self.heap = [(-count, pair) for pair, count in self.counts.items()]
        heapq.heapify(self.heap)

    def most_frequent(self):
        """The pair to merge next: highest count, ties to the smallest pair; None if no pairs."""
        while self.heap:
            negative_count, pair = self.heap[0]
            if self.counts.get(pair) == -negative_count:  # the entry is up to date
                return pair
            heapq.heappop(self.heap)  # out of date: that count has changed since
        return None

    def merge(self, pair, idx):
        """Replace `pair` by `idx` in every word that contains it and fix the counts."""
        changes = {}  # pair -> change of its count, summed over the rewritten words
        for w in self.where.pop(pair, ()):
            old_word = self.words[w]
            new_word = merge(old_word, pair, idx)
            self.words[w] = new_word
            old_stats, new_stats = get_stats(old_word), get_stats(new_word)
            for p in old_stats.keys() - new_stats.keys():  # pairs this word no longer has
                if p != pair:  # (the merged pair's own set was popped above)
                    self.where[p].discard(w)
            for p in new_stats.keys() - old_stats.keys():  # pairs that are new in this word
                self.where.setdefault(p, set()).add(w)
            for p in old_stats.keys() | new_stats.keys():
                change = (new_stats.get(p, 0) - old_stats.get(p, 0)) * self.weights[w]
                if change:
                    changes[p] = changes.get(p, 0) + change
        for p, change in changes.items():
            count = self.counts.get(p, 0) + change
            if count > 0:
                self.counts[p] = count
                heapq.heappush(self.heap, (-count, p))  # the new count; the old entry goes stale
            else:  # the pair is gone from the text (the merged pair always ends here)
                self.counts.pop(p, None)
                self.where.pop(p, None)


# ------------------------------------------------------------------ training, the naive way


def train_naive(chunks, num_merges, first_id=256):
    """The textbook BPE loop: count all pairs, merge the most frequent, repeat.

    `chunks` is a list of lists of ids (every chunk of the text, repeats included). Returns the
    merges {pair: new id}, the first one getting `first_id`. Each merge costs a pass over the
    whole text, which is what `PairCounter` avoids; both give the same merges.

    Example: train_naive([[97, 97, 97, 98, 100, 97, 97, 97, 98, 97, 99]], 3)
             -> {(97, 97): 256, (97, 98): 257, (256, 257): 258}
    """
    ids = [list(chunk) for chunk in chunks]
    merges = {}  # (int, int) -> int
    for i in range(num_merges):
        stats = {}
        for chunk_ids in ids:  # count the pairs of the whole text, every time
            get_stats(chunk_ids, stats)
        if not stats:  # every chunk is a single token: nothing left to merge
            break
        pair = min(stats, key=lambda p: (-stats[p], p))  # highest count, then smallest pair
        idx = first_id + i
        ids = [merge(chunk_ids, pair, idx) for chunk_ids in ids]
        merges[pair] = idx
    return merges


# ------------------------------------------------------------------ the tokenizer

_FILE_HEADER = "minibert bpe v1"  # the first line of a saved file: format and version
_CACHE_SIZE = 100_000  # chunks remembered by encode; the cache is emptied when it is full


def _num_merges(vocab_size):
    """How many merges a byte-level vocabulary of `vocab_size` tokens holds (checked)."""
    if isinstance(vocab_size, bool) or not isinstance(vocab_size, int):
        raise ValueError(f"vocab_size must be an int, got {vocab_size!r}")
    num_merges = vocab_size - 256 - len(SPECIAL_TOKENS)
    if num_merges < 0:
        raise ValueError(f"vocab_size must be at least {256 + len(SPECIAL_TOKENS)} (256 "
                         f"bytes + {len(SPECIAL_TOKENS)} special tokens), got {vocab_size}")
    return num_merges


class ByteLevelBPE:
    """GPT-2 style byte-level BPE: train, encode, decode, special tokens, save/load.

    Build one with `ByteLevelBPE.train(texts, vocab_size)`, `ByteLevelBPE.load(path)`, or
    directly from merges, `ByteLevelBPE({(97, 97): 256, ...})` (ids from 256 on, in order).
    """

    def __init__(self, merges=None):
        self.merges = dict(merges or {})  # (int, int) -> int, in the order they were learned
        self.vocab = {i: bytes([i]) for i in range(256)}  # int -> bytes
        for (p0, p1), idx in self.merges.items():
            if idx != len(self.vocab) or not (0 <= p0 < idx and 0 <= p1 < idx):
                raise ValueError(f"merge {(p0, p1)} -> {idx}: merges must take the ids 256, "
                                 "257, ... in order, each made of two smaller ids")
            self.vocab[idx] = self.vocab[p0] + self.vocab[p1]
        # the special tokens come right after the merges: [PAD] [UNK] [CLS] [SEP] [MASK]
        first = len(self.vocab)
        self.special_tokens = {token: first + i for i, token in enumerate(SPECIAL_TOKENS)}
        for token, idx in self.special_tokens.items():
            self.vocab[idx] = token.encode("utf-8")  # so that decode writes "[MASK]" back
        self.pad_id, self.unk_id, self.cls_id, self.sep_id, self.mask_id = (
            self.special_tokens[t] for t in SPECIAL_TOKENS)
        self.special_ids = [self.pad_id, self.unk_id, self.cls_id, self.sep_id, self.mask_id]
        # tokens shown as text, GPT-2 style: b" the" -> "Ġthe"
        printable = bytes_to_unicode()
        self.id_to_token = ["".join(printable[b] for b in self.vocab[i]) for i in range(first)]
        self.id_to_token += SPECIAL_TOKENS
        self.token_to_id = {}
        for i, token in enumerate(self.id_to_token):
            # (two merges could spell the same bytes in principle: the first id is kept)
            self.token_to_id.setdefault(token, i)
        self._cache = {}  # chunk (str) -> its ids, filled by encode

    # ------------------------------------------------------------------ training

    @classmethod
    def train(cls, texts, vocab_size):
        """Learn `vocab_size - 256 - 5` merges from `texts` (a string or a list of strings).

        `vocab_size` counts everything: the 256 bytes, the merges and the 5 special tokens, as
        Hugging Face `tokenizers` counts it. If the text runs out of pairs first, the vocabulary
        is smaller.
        """
        num_merges = _num_merges(vocab_size)
        chunks = cls._count_chunks(texts)  # chunk -> how often it occurs
        # each distinct chunk once, as its bytes, weighted by its frequency
        stats = PairCounter([list(chunk.encode("utf-8")) for chunk in chunks], chunks.values())
        merges = {}  # (int, int) -> int
        for i in range(num_merges):
            pair = stats.most_frequent()
            if pair is None:  # every chunk is a single token: nothing left to merge
                break
            idx = 256 + i
            stats.merge(pair, idx)
            merges[pair] = idx
        return cls(merges)

    @staticmethod
    def _count_chunks(texts):
        """Counter of the pre-tokenized chunks of all texts (checked for lone surrogates)."""
        if isinstance(texts, str):
            texts = [texts]
        counts = Counter()
        for text in texts:
            _utf8(text)  # raises a clear error for a lone surrogate (or a non-string)
            counts.update(pretokenize(text))
        return counts

    # ------------------------------------------------------------------ text <-> ids

    @property
    def vocab_size(self):
        return len(self.vocab)

    def __len__(self):
        return self.vocab_size

    def __repr__(self):
        return f"{type(self).__name__}(vocab_size={self.vocab_size}, merges={len(self.merges)})"

    def _encode_chunk(self, text_bytes):
        """The bytes of one chunk -> ids, applying the merges in the order they were learned."""
        ids = list(text_bytes)
        while len(ids) >= 2:
            stats = get_stats(ids)
            # the pair that was merged first in training (lowest id); unknown pairs rank last
            pair = min(stats, key=lambda p: self.merges.get(p, float("inf")))
            if pair not in self.merges:
                break  # no pair left that training merged
            ids = merge(ids, pair, self.merges[pair])
        return ids

    def encode_ordinary(self, text):
        """Text -> ids, with special-token strings treated as ordinary text."""
        _utf8(text)  # a clear error for a lone surrogate
        ids = []
        for chunk in pretokenize(text):
            chunk_ids = self._cache.get(chunk)
            if chunk_ids is None:  # first time we see this chunk: run the merges
                chunk_ids = self._encode_chunk(chunk.encode("utf-8"))
                if len(self._cache) >= _CACHE_SIZE:
                    self._cache.clear()  # keep memory bounded on endless distinct text
                self._cache[chunk] = chunk_ids
            ids.extend(chunk_ids)
        return ids

    def encode(self, text, allowed_special="none"):
        """Text -> ids. Special-token strings in the text become their ids only if allowed.

        allowed_special: "none" (default: "[MASK]" is encoded as plain text), "all", or a set
        of special tokens such as {"[MASK]"}.

            >>> tok = ByteLevelBPE.train("the cat sat", vocab_size=256 + 3 + 2)
            >>> tok.mask_id in tok.encode("the [MASK] sat", allowed_special="all")
            True
            >>> tok.mask_id in tok.encode("the [MASK] sat")
            False
        """
        special = self._allowed_special(allowed_special)  # str -> id
        if not special:
            return self.encode_ordinary(text)
        _utf8(text)  # check the whole text, so the error gives the right position
        # split around the allowed special tokens; the () keeps them in the result
        pattern = "(" + "|".join(re.escape(token) for token in special) + ")"
        ids = []
        for part in re.split(pattern, text):
            if part in special:
                ids.append(special[part])
            elif part:
                ids.extend(self.encode_ordinary(part))
        return ids

    def _allowed_special(self, allowed_special):
        if allowed_special == "none":
            return {}
        if allowed_special == "all":
            return dict(self.special_tokens)
        if isinstance(allowed_special, str) or not isinstance(allowed_special, Iterable):
            raise ValueError(f"allowed_special must be 'none', 'all' or a set of special "
                             f"tokens, got {allowed_special!r}")
        allowed = set(allowed_special)
        unknown = allowed - self.special_tokens.keys()
        if unknown:
            raise ValueError(f"{sorted(unknown)} are not special tokens of this tokenizer; "
                             f"they are {SPECIAL_TOKENS}")
        return {token: self.special_tokens[token] for token in allowed}

    def decode(self, ids, skip_special=False):
        """Ids -> text. Byte sequences that are not valid UTF-8 become '\\ufffd' (replace).

        `skip_special=True` drops [PAD], [CLS], [SEP] etc.; otherwise they are written out.
        """
        skip = set(self.special_ids) if skip_special else set()
        parts = []
        for i in ids:
            i = token_id(i, self.vocab_size)  # also numpy and torch integers
            if i not in skip:
                parts.append(self.vocab[i])
        return b"".join(parts).decode("utf-8", errors="replace")

    def tokenize(self, text, allowed_special="none"):
        """Text -> tokens shown GPT-2 style: "the cat" -> ['the', 'Ġcat']."""
        return [self.id_to_token[i] for i in self.encode(text, allowed_special)]

    # ------------------------------------------------------------------ saving

    def save(self, path):
        """Write the merges to a text file: a header, the special tokens, one merge a line.

            minibert bpe v1
            special [PAD] [UNK] [CLS] [SEP] [MASK]
            merges 3
            97 97	aa
            97 98	ab
            256 257	aaab

        Each merge line holds the two ids that merge (the new id is 256 + the line's number);
        the token after the tab is there for reading and is ignored by `load`.
        """
        lines = [_FILE_HEADER, "special " + " ".join(SPECIAL_TOKENS), f"merges {len(self.merges)}"]
        for (p0, p1), idx in self.merges.items():
            lines.append(f"{p0} {p1}\t{self.id_to_token[idx]}")
        write_tokenizer_file(path, "\n".join(lines) + "\n")

    @classmethod
    def load(cls, path):
        """Read a file written by `save`; other formats and versions get a clear error."""
        lines = _read_lines(path)
        header = lines[0] if lines else ""
        if header != _FILE_HEADER:
            if header.startswith("minibert bpe v"):
                raise ValueError(f"{path} is a BPE file of version {header[13:]!r}; this "
                                 f"minibert reads {_FILE_HEADER!r}: train and save it again")
            raise ValueError(f"{path} is not a minibert BPE file (its first line is "
                             f"{header[:40]!r}, expected {_FILE_HEADER!r}); was it saved by "
                             "another tokenizer class? WordPiece.load and WordTokenizer.load "
                             "read theirs")
        if len(lines) < 3 or lines[1] != "special " + " ".join(SPECIAL_TOKENS):
            raise ValueError(f"{path}: line 2 must list the special tokens {SPECIAL_TOKENS}")
        if not re.fullmatch(r"merges \d+", lines[2]):
            raise ValueError(f"{path}: line 3 must be 'merges N', got {lines[2]!r}")
        count = int(lines[2].split()[1])
        merge_lines = lines[3:]
        if len(merge_lines) != count:
            cause = "the file is cut short" if len(merge_lines) < count else "the count was edited"
            raise ValueError(f"{path} promises {count} merges but holds {len(merge_lines)} "
                             f"({cause}): the count and the merges must agree; save the "
                             "tokenizer again")
        merges = {}
        for n, line in enumerate(merge_lines):
            fields = line.split("\t")[0].split(" ")
            if len(fields) != 2 or not all(f.isdigit() for f in fields):
                raise ValueError(f"{path}, line {n + 4}: expected two ids, got {line!r}")
            merges[int(fields[0]), int(fields[1])] = 256 + n
        return cls(merges)


def _read_lines(path):
    """The lines of a UTF-8 text file (without a trailing empty line), or a clear error."""
    data = Path(path).read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        if error.reason == "unexpected end of data":   # the last character is cut in half
            raise ValueError(f"{path} is truncated: it ends in the middle of a character; "
                             "save the tokenizer again") from None
        raise ValueError(f"{path} is not a UTF-8 text file, so not a minibert tokenizer "
                         "file") from None
    return text.split("\n")[:-1] if text.endswith("\n") else text.split("\n")


# ------------------------------------------------------------------ the naive trainer


class NaiveBPE(ByteLevelBPE):
    """The same tokenizer trained the textbook way: recount every pair after every merge.

    It is the readable baseline (minbpe's loop) and the correctness reference of the fast
    trainer: both learn the same merges. The time per merge grows with the text, so keep it
    to small texts (the benchmark measures it on a megabyte).
    """

    @classmethod
    def train(cls, texts, vocab_size):
        """Like `ByteLevelBPE.train`, but with `train_naive` over every chunk of the text."""
        num_merges = _num_merges(vocab_size)
        if isinstance(texts, str):
            texts = [texts]
        chunks = []  # every chunk of the text in order, repeats included, as lists of bytes
        for text in texts:
            _utf8(text)  # a clear error for a lone surrogate
            chunks.extend(list(chunk.encode("utf-8")) for chunk in pretokenize(text))
        return cls(train_naive(chunks, num_merges))
