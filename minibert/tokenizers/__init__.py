"""Tokenizers: text -> ids -> text.

`WordTokenizer` (word.py) splits on words and punctuation; the early lessons use it.
"""

from minibert.tokenizers.word import SPECIAL_TOKENS, WordTokenizer

__all__ = ["SPECIAL_TOKENS", "WordTokenizer"]
