"""Tokenizers: text -> ids -> text.

- `WordTokenizer` (word.py) splits on words and punctuation; the early lessons use it.
- `ByteLevelBPE` (bpe.py) is GPT-2's and RoBERTa's byte-level BPE: trained merges over UTF-8
  bytes, so any string is encoded and nothing is unknown. `NaiveBPE` trains it the textbook
  way (recount every pair after every merge), as a baseline and a reference.
- `WordPiece` (wordpiece.py) is BERT's: BasicTokenizer pre-tokenization, then greedy
  longest-match-first pieces with "##" continuations, and `[UNK]` for what cannot be pieced.

All of them share the special tokens [PAD] [UNK] [CLS] [SEP] [MASK] and the attributes
`pad_id`, `unk_id`, `cls_id`, `sep_id`, `mask_id`, `special_ids` and `vocab_size`, so the
masking and model code works with any of them.
"""

from minibert.tokenizers.bpe import ByteLevelBPE, NaiveBPE
from minibert.tokenizers.word import SPECIAL_TOKENS, WordTokenizer
from minibert.tokenizers.wordpiece import WordPiece

__all__ = ["SPECIAL_TOKENS", "ByteLevelBPE", "NaiveBPE", "WordPiece", "WordTokenizer"]
