"""BERT's WordPiece tokenizer: words split into known pieces, with `##` continuations.

Encoding has two steps, as in Google's `tokenization.py`:

1. Pre-tokenization (`basic_tokenize`, BERT's BasicTokenizer): drop control characters, put
   spaces around CJK characters (each Chinese character becomes a word), split on whitespace,
   lowercase and strip accents ("Café" -> "cafe") if asked, and split off every punctuation
   mark.
2. WordPiece (`WordPiece.tokenize_word`): greedy longest-match-first. Take the longest prefix
   of the word that is in the vocabulary, then the longest continuation of the rest written
   with "##", and so on: "unaffable" -> ['un', '##aff', '##able']. If some part
   of the word matches nothing (a character the vocabulary lacks), or the word is longer than
   `max_chars_per_word`, the whole word becomes `[UNK]`.

So unlike byte-level BPE, WordPiece has an `[UNK]`: an emoji, a Chinese character or an
accented letter that never occurred in the training text cannot be written with the vocabulary.

Training (`WordPiece.train`) learns the vocabulary the way Hugging Face `tokenizers`'
WordPieceTrainer does, with BPE merges over characters:

- the alphabet is every character seen at least `min_frequency` times; each goes in the
  vocabulary twice, as a word start ("a") and as a continuation ("##a"), so every word made of
  alphabet characters can be pieced;
- words are spelled as a start and continuations, "cat" -> ['c', '##a', '##t'], and the most
  frequent adjacent pair is merged into a new token ('c' + '##a' -> 'ca', '##a' + '##t' ->
  '##at'), again and again, until the vocabulary has `vocab_size` tokens. The pair counts are
  updated incrementally (`minibert.tokenizers.bpe.PairCounter`), ties go to the smallest pair.

(Google's original WordPiece chooses the merge by likelihood, count(ab) / (count(a) count(b)),
rather than by count(ab); its trainer was never released. The encoding side is the same.)

The special tokens are found by name, so a BERT `vocab.txt` ([PAD]=0, [UNK]=100, [CLS]=101,
[SEP]=102, [MASK]=103) loads as it is (`WordPiece.from_vocab_file`); a vocabulary trained here
puts them first, [PAD]=0 [UNK]=1 [CLS]=2 [SEP]=3 [MASK]=4, as `WordTokenizer` does. Special
tokens written in the text ("the [MASK] sat") are ordinary text by default, as in ByteLevelBPE,
so text from a user or a corpus cannot smuggle in a [SEP] or a [CLS]; pass
`allowed_special="all"` (or a set such as {"[MASK]"}) to recognise them, as BERT's own
tokenizer does.

Lone surrogates, control characters, and unassigned or private-use code points (every
category C* except tab, newline and carriage return) are dropped by the pre-tokenizer, as in
Google's BERT (transformers' fast BertTokenizer keeps the unassigned and private-use ones). So
any string can be encoded; decoding gives the normalised text, not the original.

Example:

    >>> tok = WordPiece.train(["hug " * 10 + "pug " * 5 + "pun " * 12 + "bun " * 4
    ...                        + "hugs " * 5], vocab_size=5 + 14 + 3)
    >>> tok.id_to_token[19:]                  # the three merges
    ['##ug', '##un', 'hug']
    >>> tok.tokenize("Hugs bun!")             # '!' was never seen
    ['hug', '##s', 'b', '##un', '[UNK]']
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable

from minibert.tokenizers.bpe import PairCounter, _read_lines
from minibert.tokenizers.word import (
    SPECIAL_TOKENS,
    check_text_tokens,
    token_id,
    write_tokenizer_file,
)

__all__ = ["WordPiece", "basic_tokenize"]

_FILE_HEADER = "minibert wordpiece v1"  # the first line of a saved file: format and version
_CACHE_SIZE = 100_000  # words remembered by tokenize_word; emptied when full
_NO_SPACE_BEFORE = re.compile(r" ([.,;:!?])")  # decode: "sat ." -> "sat." (as WordTokenizer)


# ------------------------------------------------------------------ BERT's pre-tokenizer


def _is_whitespace(char):
    """Space, tab, newline, carriage return, or a Unicode space separator (Zs)."""
    return char in " \t\n\r" or unicodedata.category(char) == "Zs"


def _is_control(char):
    """A control, format, surrogate or unassigned character (category C*), except \\t \\n \\r."""
    return char not in "\t\n\r" and unicodedata.category(char).startswith("C")


@functools.lru_cache(maxsize=65536)  # a text has few distinct characters: classify each once
def _is_punctuation(char):
    """Unicode punctuation (P*), and every ASCII non-letter non-digit such as $ + < ^ `."""
    cp = ord(char)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(char).startswith("P")


def _is_cjk(char):
    """A CJK ideograph (the blocks Google's BERT lists). Japanese kana and Korean Hangul are not.

    (transformers' fast BertTokenizer does not split U+2B820..U+2B91F: rare ideographs.)
    """
    cp = ord(char)
    return (0x4E00 <= cp <= 0x9FFF or 0x3400 <= cp <= 0x4DBF or 0x20000 <= cp <= 0x2A6DF
            or 0x2A700 <= cp <= 0x2B73F or 0x2B740 <= cp <= 0x2B81F or 0x2B820 <= cp <= 0x2CEAF
            or 0xF900 <= cp <= 0xFAFF or 0x2F800 <= cp <= 0x2FA1F)


@functools.lru_cache(maxsize=65536)
def _clean_char(char):
    """What the pre-tokenizer keeps of one character: '' (dropped), ' ', ' 世 ' or the char."""
    if char == "\x00" or char == "\ufffd" or _is_control(char):
        return ""  # dropped: NUL, the replacement character, controls, lone surrogates
    if _is_whitespace(char):
        return " "
    if _is_cjk(char):
        return f" {char} "  # every Chinese character is a word of its own
    return char


def _strip_accents(word):
    """'Café' -> 'Cafe': decompose (NFD) and drop the combining marks (category Mn)."""
    return "".join(c for c in unicodedata.normalize("NFD", word)
                   if unicodedata.category(c) != "Mn")


def basic_tokenize(text, lowercase=True, strip_accents=None):
    """BERT's BasicTokenizer: text -> words and punctuation marks.

    Example: "Héllo, 世界!" -> ['hello', ',', '世', '界', '!']

    `strip_accents=None` follows `lowercase`, as in BERT (uncased models strip accents).
    """
    if not isinstance(text, str):
        raise ValueError(f"expected a string, got {type(text).__name__}")
    if strip_accents is None:
        strip_accents = lowercase
    text = "".join(map(_clean_char, text))  # no controls, one kind of space, CJK spaced out
    text = unicodedata.normalize("NFC", text)  # one way to write "é" (one code point, not two)
    words = []
    for word in text.split():
        if lowercase:
            word = word.lower()
        if strip_accents and not word.isascii():  # (ASCII has no accents to strip)
            word = _strip_accents(word)
        if word.isalnum():  # letters and digits only, the common case: nothing to split
            words.append(word)
            continue
        # split off every punctuation mark: "don't!" -> "don", "'", "t", "!"
        current = ""
        for char in word:
            if _is_punctuation(char):
                if current:
                    words.append(current)
                words.append(char)
                current = ""
            else:
                current += char
        if current:
            words.append(current)
    return words


# ------------------------------------------------------------------ the tokenizer


class WordPiece:
    """BERT-style WordPiece over a fixed vocabulary of words, pieces and "##" continuations.

    Build one with `WordPiece.train(texts, vocab_size)`, `WordPiece.load(path)` (a file from
    `save`), `WordPiece.from_vocab_file(path)` (a BERT vocab.txt), or from a token list,
    `WordPiece(tokens)`: the whole vocabulary in id order, the five special tokens included.
    """

    def __init__(self, tokens, lowercase=True, strip_accents=None, max_chars_per_word=100):
        self.lowercase = lowercase
        self.strip_accents = strip_accents
        self.max_chars_per_word = max_chars_per_word
        self.id_to_token = list(tokens)
        self.token_to_id = {}
        for i, token in enumerate(self.id_to_token):
            if not isinstance(token, str) or not token:
                raise ValueError(f"token {i} must be a non-empty string, got {token!r}")
            if token in self.token_to_id:
                raise ValueError(f"token {token!r} appears twice (ids {self.token_to_id[token]} "
                                 f"and {i}): a vocabulary lists each token once")
            self.token_to_id[token] = i
        check_text_tokens(self.id_to_token)
        missing = [t for t in SPECIAL_TOKENS if t not in self.token_to_id]
        if missing:
            raise ValueError(f"the vocabulary lacks the special tokens {missing}; every "
                             f"vocabulary of the course holds {SPECIAL_TOKENS}")
        self.special_tokens = {t: self.token_to_id[t] for t in SPECIAL_TOKENS}
        self.pad_id, self.unk_id, self.cls_id, self.sep_id, self.mask_id = (
            self.special_tokens[t] for t in SPECIAL_TOKENS)
        self.special_ids = [self.pad_id, self.unk_id, self.cls_id, self.sep_id, self.mask_id]
        self._cache = {}  # word -> its pieces, filled by tokenize_word

    # ------------------------------------------------------------------ building a vocabulary

    @classmethod
    def train(cls, texts, vocab_size, lowercase=True, strip_accents=None, min_frequency=1,
              max_chars_per_word=100):
        """Learn a vocabulary of `vocab_size` tokens from `texts` (a string or a list of them).

        The vocabulary: the 5 special tokens, each alphabet character as "c" and "##c" (the
        alphabet = characters seen at least `min_frequency` times), then the merged tokens in
        the order they were learned. It is smaller if the words run out of pairs to merge.
        """
        if isinstance(vocab_size, bool) or not isinstance(vocab_size, int):
            raise ValueError(f"vocab_size must be an int, got {vocab_size!r}")
        if isinstance(texts, str):
            texts = [texts]
        word_counts = Counter()
        for text in texts:
            word_counts.update(basic_tokenize(text, lowercase, strip_accents))
        char_counts = Counter()
        for word, n in word_counts.items():
            for char in word:
                char_counts[char] += n
        alphabet = sorted(c for c, n in char_counts.items() if n >= min_frequency)
        tokens = list(SPECIAL_TOKENS) + alphabet + ["##" + c for c in alphabet]
        if vocab_size < len(tokens):
            raise ValueError(f"vocab_size {vocab_size} is too small for the 5 special tokens "
                             f"and the {len(alphabet)} characters of the alphabet (each as 'c' "
                             f"and '##c'): use vocab_size >= {len(tokens)}, or raise "
                             "min_frequency to keep fewer characters")
        token_to_id = {t: i for i, t in enumerate(tokens)}

        # spell every trainable word as ids: "cat" -> [id('c'), id('##a'), id('##t')]
        words, weights = [], []
        for word, n in word_counts.items():
            if len(word) > max_chars_per_word or any(c not in token_to_id for c in word):
                continue  # it will be [UNK] anyway: do not learn from it
            words.append([token_to_id[word[0]]] + [token_to_id["##" + c] for c in word[1:]])
            weights.append(n)

        stats = PairCounter(words, weights)
        while len(tokens) < vocab_size:
            pair = stats.most_frequent()
            if pair is None:  # every word is a single token: nothing left to merge
                break
            left, right = tokens[pair[0]], tokens[pair[1]]
            new = left + right[2:]  # 'c' + '##a' -> 'ca';  '##a' + '##t' -> '##at'
            idx = token_to_id.get(new)  # two different pairs can spell the same token
            if idx is None:
                idx = token_to_id[new] = len(tokens)
                tokens.append(new)
            stats.merge(pair, idx)
        return cls(tokens, lowercase=lowercase, strip_accents=strip_accents,
                   max_chars_per_word=max_chars_per_word)

    @classmethod
    def from_vocab_file(cls, path, lowercase=True, strip_accents=None, max_chars_per_word=100):
        """Read a BERT `vocab.txt`: one token per line, the line number is the id.

        bert-base-uncased's file has [PAD]=0, [unused0..98], [UNK]=100, [CLS]=101, [SEP]=102,
        [MASK]=103; use lowercase=True for the uncased models, False for the cased ones.
        """
        return cls(_read_lines(path), lowercase=lowercase, strip_accents=strip_accents,
                   max_chars_per_word=max_chars_per_word)

    # ------------------------------------------------------------------ text <-> pieces <-> ids

    @property
    def vocab_size(self):
        return len(self.id_to_token)

    def __len__(self):
        return self.vocab_size

    def __repr__(self):
        return f"WordPiece(vocab_size={self.vocab_size}, lowercase={self.lowercase})"

    def pre_tokenize(self, text):
        """Text -> words and punctuation marks, with this tokenizer's casing and accents."""
        return basic_tokenize(text, self.lowercase, self.strip_accents)

    def tokenize_word(self, word):
        """One word -> its pieces, greedy longest-match-first; ['[UNK]'] if it cannot be pieced.

        Example (Google's): with 'un', '##aff', '##able' in the vocabulary,
        "unaffable" -> ['un', '##aff', '##able']
        """
        pieces = self._cache.get(word)
        if pieces is not None:
            return pieces
        if len(word) > self.max_chars_per_word:
            pieces = ["[UNK]"]
        else:
            pieces = []
            start = 0
            while start < len(word):
                # the longest piece of the vocabulary that starts at `start`
                end = len(word)
                piece = None
                while start < end:
                    candidate = word[start:end] if start == 0 else "##" + word[start:end]
                    if candidate in self.token_to_id:
                        piece = candidate
                        break
                    end -= 1  # one character shorter
                if piece is None:  # nothing matches here: the word cannot be written
                    pieces = ["[UNK]"]
                    break
                pieces.append(piece)
                start = end
        if len(self._cache) >= _CACHE_SIZE:
            self._cache.clear()
        self._cache[word] = pieces
        return pieces

    def tokenize(self, text, allowed_special="none"):
        """Text -> pieces: "The cat's" -> ['the', 'cat', "'", 's'] (if the vocabulary has them).

        Special tokens written in the text are ordinary text ("[MASK]" -> '[', 'mask', ']')
        unless allowed_special="all" (or a set of special tokens to recognize, e.g.
        {"[MASK]"}): the same default as ByteLevelBPE.
        """
        special = _allowed_special(allowed_special)
        if not special:
            parts = [text]
        else:  # split around the special tokens; the () keeps them in the result
            parts = re.split("(" + "|".join(re.escape(t) for t in special) + ")", text)
        pieces = []
        for part in parts:
            if part in special:
                pieces.append(part)
            else:
                for word in self.pre_tokenize(part):
                    pieces.extend(self.tokenize_word(word))
        return pieces

    def encode(self, text, allowed_special="none"):
        """Text -> ids; words that cannot be pieced become [UNK]. See `tokenize`."""
        return [self.token_to_id[piece] for piece in self.tokenize(text, allowed_special)]

    def decode(self, ids, skip_special=False):
        """Ids -> text: pieces joined by spaces, "##" continuations glued to the piece before.

        No space before . , ; : ! ? (as WordTokenizer). Lowercasing, accents and [UNK] are not
        undone, so decode(encode(text)) is the normalised text.
        """
        skip = set(self.special_ids) if skip_special else set()
        pieces = []
        for i in ids:
            i = token_id(i, self.vocab_size)  # also numpy and torch integers
            if i not in skip:
                pieces.append(self.id_to_token[i])
        text = " ".join(pieces).replace(" ##", "")
        return _NO_SPACE_BEFORE.sub(r"\1", text)

    # ------------------------------------------------------------------ saving

    def save(self, path):
        """Write a text file: a header, the settings, then the tokens one per line (vocab.txt).

            minibert wordpiece v1
            lowercase true
            strip_accents none
            max_chars_per_word 100
            tokens 22
            [PAD]
            ...
        """
        lines = [_FILE_HEADER, f"lowercase {_flag(self.lowercase)}",
                 f"strip_accents {_flag(self.strip_accents)}",
                 f"max_chars_per_word {self.max_chars_per_word}",
                 f"tokens {self.vocab_size}", *self.id_to_token]
        write_tokenizer_file(path, "\n".join(lines) + "\n")

    @classmethod
    def load(cls, path):
        """Read a file written by `save`; other formats and versions get a clear error."""
        lines = _read_lines(path)
        header = lines[0] if lines else ""
        if header != _FILE_HEADER:
            if header.startswith("minibert wordpiece v"):
                raise ValueError(f"{path} is a WordPiece file of version {header[19:]!r}; this "
                                 f"minibert reads {_FILE_HEADER!r}: train and save it again")
            if header == "[PAD]":
                raise ValueError(f"{path} looks like a BERT vocab.txt: read it with "
                                 "WordPiece.from_vocab_file")
            raise ValueError(f"{path} is not a minibert WordPiece file (its first line is "
                             f"{header[:40]!r}, expected {_FILE_HEADER!r}); was it saved by "
                             "another tokenizer class? ByteLevelBPE.load and "
                             "WordTokenizer.load read theirs")
        settings = {}
        for n, name in enumerate(["lowercase", "strip_accents", "max_chars_per_word", "tokens"]):
            line = lines[n + 1] if n + 1 < len(lines) else ""
            key, _, value = line.partition(" ")
            if key != name:
                raise ValueError(f"{path}, line {n + 2}: expected '{name} ...', got {line!r}")
            settings[name] = value
        if not settings["tokens"].isdigit():
            raise ValueError(f"{path}, line 5: expected 'tokens N', got 'tokens "
                             f"{settings['tokens']}'")
        count = int(settings["tokens"])
        tokens = lines[5:]
        if len(tokens) != count:
            cause = "the file is cut short" if len(tokens) < count else "the count was edited"
            raise ValueError(f"{path} promises {count} tokens but holds {len(tokens)} ({cause}): "
                             "the count and the tokens must agree; save the tokenizer again")
        return cls(tokens, lowercase=_unflag(settings["lowercase"]),
                   strip_accents=_unflag(settings["strip_accents"]),
                   max_chars_per_word=int(settings["max_chars_per_word"]))


def _allowed_special(allowed_special):
    """'all' / 'none' / a set of special tokens -> the set of special tokens to recognize."""
    if allowed_special == "none":
        return set()
    if allowed_special == "all":
        return set(SPECIAL_TOKENS)
    if isinstance(allowed_special, str) or not isinstance(allowed_special, Iterable):
        raise ValueError(f"allowed_special must be 'none', 'all' or a set of special tokens, "
                         f"got {allowed_special!r}")
    allowed = set(allowed_special)
    unknown = allowed - set(SPECIAL_TOKENS)
    if unknown:
        raise ValueError(f"{sorted(unknown)} are not special tokens; they are {SPECIAL_TOKENS}")
    return allowed


def _flag(value):
    return {True: "true", False: "false", None: "none"}[value]


def _unflag(text):
    if text not in ("true", "false", "none"):
        raise ValueError(f"expected true, false or none in a WordPiece file, got {text!r}")
    return {"true": True, "false": False, "none": None}[text]
