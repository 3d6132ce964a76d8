"""A word-level tokenizer: the simplest thing that turns text into ids.

Text is split into words and punctuation marks with one regular expression; each word that was
frequent enough in the training text gets an id, every other word becomes `[UNK]`. That is all
the early lessons need. (The tokenizer lesson adds byte-level BPE and WordPiece, which never
need `[UNK]` for ordinary words.)

The five special tokens always come first, in this order, so their ids are the same in every
vocabulary of the course:

    [PAD]=0  [UNK]=1  [CLS]=2  [SEP]=3  [MASK]=4

Example:

    >>> tok = WordTokenizer.train(["The cat sat.", "The dog sat!"], vocab_size=10)
    >>> tok.id_to_token[5:]          # by frequency, ties A-Z; 'dog' did not fit
    ['sat', 'the', '!', '.', 'cat']
    >>> tok.tokenize("The cat ran.")
    ['the', 'cat', 'ran', '.']
    >>> tok.encode("The cat ran.")   # 'ran' was never seen: [UNK] = 1
    [6, 9, 1, 8]
"""

from __future__ import annotations

import json
import operator
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path

from minibert.atomic import write_text_atomically

__all__ = ["SPECIAL_TOKENS", "WordTokenizer", "check_text_tokens", "token_id",
           "write_tokenizer_file"]

SPECIAL_TOKENS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]

# A special token written in the text, or a word (letters/digits, with inner apostrophes as in
# "don't"), or any single other non-space character (punctuation).
_TOKEN_PATTERN = re.compile(
    r"\[(?:PAD|UNK|CLS|SEP|MASK)\]"  # [MASK] etc. typed into a sentence
    r"|\w+(?:'\w+)*"  # words: "cat", "don't", "1984"
    r"|[^\w\s]"  # punctuation: one character each
)
# decode() glues these back onto the previous word: "sat ." -> "sat."
_NO_SPACE_BEFORE = re.compile(r" ([.,;:!?])")

_FILE_FORMAT = "minibert-word-tokenizer"
_FILE_VERSION = 1


# ------------------------------------------------------------------ shared by the tokenizers


def token_id(value, vocab_size: int) -> int:
    """One id for `decode`: an int (or a numpy / torch integer), checked against the vocabulary.

    Floats and strings are refused rather than rounded: 2.7 is not an id, and neither is "2".
    """
    try:
        i = operator.index(value)
    except TypeError:
        raise ValueError(f"decode takes integer ids, got {value!r} ({type(value).__name__}); "
                         "pass ints or an integer tensor (ids.long() for a float tensor)") from None
    if not 0 <= i < vocab_size:
        raise ValueError(f"id {i} is outside the vocabulary (0..{vocab_size - 1})")
    return i


def check_text_tokens(tokens: Iterable[str]) -> None:
    """Refuse tokens that cannot be written as UTF-8 (a lone surrogate), naming the token."""
    for i, token in enumerate(tokens):
        try:
            token.encode("utf-8")
        except UnicodeEncodeError as error:
            raise ValueError(
                f"token {i} {token!r} holds a lone surrogate {token[error.start]!r}, half of a "
                "UTF-16 pair, which no text file can hold; repair the text before training: "
                "text.encode('utf-16', 'surrogatepass').decode('utf-16', 'replace')") from None


def write_tokenizer_file(path, text: str) -> None:
    """Write a tokenizer file all or nothing: a failed save leaves the old file as it was.

    Text that UTF-8 cannot hold (a lone surrogate put into the vocabulary by hand) is refused
    before the file is touched.
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        raise ValueError(
            f"cannot save {path}: the vocabulary holds a lone surrogate "
            f"{text[error.start]!r} (half of a UTF-16 pair), which UTF-8 cannot write; remove "
            "that token, or repair the training text and train again") from None
    write_text_atomically(path, text, encoding="utf-8")


class WordTokenizer:
    """Maps words to ids and back with a fixed vocabulary.

    Build one with `WordTokenizer.train(texts, vocab_size)` (keeps the most frequent words) or
    directly from a word list, `WordTokenizer(words)` (e.g. a synthetic language's vocabulary).
    """

    def __init__(self, words: Iterable[str], *, lowercase: bool = True):
        """`words`: the vocabulary after the special tokens, in id order (duplicates dropped)."""
        self.lowercase = lowercase
        self.id_to_token: list[str] = list(SPECIAL_TOKENS)
        self.token_to_id: dict[str, int] = {t: i for i, t in enumerate(SPECIAL_TOKENS)}
        for word in words:
            if not isinstance(word, str) or not word or any(c.isspace() for c in word):
                raise ValueError(f"vocabulary entries must be non-empty words, got {word!r}")
            check_text_tokens([word])
            if lowercase:
                word = word.lower()
            if word not in self.token_to_id:
                self.token_to_id[word] = len(self.id_to_token)
                self.id_to_token.append(word)

        self.pad_id, self.unk_id, self.cls_id, self.sep_id, self.mask_id = range(5)
        self.special_ids = [self.pad_id, self.unk_id, self.cls_id, self.sep_id, self.mask_id]

    # ------------------------------------------------------------------ building a vocabulary

    @classmethod
    def train(
        cls,
        texts: Iterable[str | Sequence[str]],
        vocab_size: int,
        lowercase: bool = True,
    ) -> WordTokenizer:
        """Keep the `vocab_size - 5` most frequent words of `texts` (5 ids go to special tokens).

        `texts` holds strings (split with `tokenize`) or already-split word lists. Ties in
        frequency are broken alphabetically, so the vocabulary is the same on every run. If the
        texts hold fewer distinct words, the vocabulary is smaller than `vocab_size`.
        """
        if isinstance(texts, str):
            raise ValueError("texts must be a list of strings or word lists, not one string: "
                             "wrap it as [text]")
        if isinstance(vocab_size, bool) or not isinstance(vocab_size, int):
            raise ValueError(f"vocab_size must be an int, got {vocab_size!r}")
        if vocab_size <= len(SPECIAL_TOKENS):
            raise ValueError(f"vocab_size must be more than the {len(SPECIAL_TOKENS)} special "
                             f"tokens, got {vocab_size}")
        splitter = cls([], lowercase=lowercase)  # an empty tokenizer, used only to split text
        counts: Counter[str] = Counter()
        for text in texts:
            words = splitter.tokenize(text) if isinstance(text, str) else splitter._clean(text)
            counts.update(w for w in words if w not in splitter.token_to_id)
        ranked = sorted(counts, key=lambda w: (-counts[w], w))  # most frequent, then A-Z
        return cls(ranked[: vocab_size - len(SPECIAL_TOKENS)], lowercase=lowercase)

    # ------------------------------------------------------------------ text <-> tokens <-> ids

    @property
    def vocab_size(self) -> int:
        return len(self.id_to_token)

    def __len__(self) -> int:
        return self.vocab_size

    def __repr__(self) -> str:
        return f"WordTokenizer(vocab_size={self.vocab_size}, lowercase={self.lowercase})"

    def tokenize(self, text: str) -> list[str]:
        """Split text into words and punctuation marks (lowercased if the tokenizer is).

        Special tokens typed into the text survive: "the [MASK] sat" -> ['the', '[MASK]', 'sat'].
        """
        if not isinstance(text, str):
            raise ValueError(f"tokenize() takes a string, got {type(text).__name__}; "
                             "use encode_words() for a list of words")
        tokens = _TOKEN_PATTERN.findall(text)
        return self._clean(tokens)

    def encode(self, text: str) -> list[int]:
        """Text -> ids; words outside the vocabulary become `[UNK]`."""
        return self.encode_words(self.tokenize(text))

    def encode_words(self, words: Sequence[str]) -> list[int]:
        """Already-split words (e.g. a synthetic-language sentence) -> ids."""
        if isinstance(words, str):
            raise ValueError("encode_words() takes a list of words; use encode() for a string")
        return [self.token_to_id.get(w, self.unk_id) for w in self._clean(words)]

    def decode(self, ids: Iterable[int], skip_special: bool = False) -> str:
        """Ids -> text: tokens joined by spaces, with no space before . , ; : ! ?

        `skip_special=True` drops [PAD], [CLS], [SEP] etc. Lowercasing and unknown words are
        not undone, so decode(encode(text)) is the normalised text, not always the original.
        """
        tokens = []
        for i in ids:
            i = token_id(i, self.vocab_size)
            if skip_special and i in self.special_ids:
                continue
            tokens.append(self.id_to_token[i])
        return _NO_SPACE_BEFORE.sub(r"\1", " ".join(tokens))

    def _clean(self, words: Iterable[str]) -> list[str]:
        """Lowercase words if asked, leaving special tokens such as [MASK] as they are."""
        if not self.lowercase:
            return list(words)
        return [w if w in SPECIAL_TOKENS else w.lower() for w in words]

    # ------------------------------------------------------------------ saving

    def save(self, path: str | Path) -> None:
        """Write the vocabulary to a small JSON file."""
        data = {"format": _FILE_FORMAT, "version": _FILE_VERSION, "lowercase": self.lowercase,
                "tokens": self.id_to_token}
        write_tokenizer_file(path, json.dumps(data, ensure_ascii=False, indent=0))

    @classmethod
    def load(cls, path: str | Path) -> WordTokenizer:
        """Read a file written by `save`."""
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as error:
            raise ValueError(f"{path} is not a word-tokenizer file ({error}); it may be cut "
                             "short or edited by hand: train and save it again") from None
        if not isinstance(data, dict) or data.get("format") != _FILE_FORMAT:
            raise ValueError(f"{path} is not a word-tokenizer file (no format "
                             f"{_FILE_FORMAT!r}); was it saved by another tokenizer class?")
        if data.get("version") != _FILE_VERSION:
            raise ValueError(f"{path} has word-tokenizer version {data.get('version')}, this "
                             f"minibert reads version {_FILE_VERSION}: train and save it again")
        tokens, lowercase = data.get("tokens"), data.get("lowercase")
        if not isinstance(tokens, list) or not isinstance(lowercase, bool):
            raise ValueError(f"{path} lacks its 'tokens' list or its 'lowercase' flag: train "
                             "and save it again")
        if tokens[: len(SPECIAL_TOKENS)] != SPECIAL_TOKENS:
            raise ValueError(f"{path} does not start with the special tokens {SPECIAL_TOKENS}")
        return cls(tokens[len(SPECIAL_TOKENS):], lowercase=lowercase)
