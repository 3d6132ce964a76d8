"""One configuration dataclass for every encoder in the course, with tiny named presets.

Each later model (RoBERTa, ALBERT, ELECTRA, ...) is the same encoder with a few switches
flipped: factorized embeddings (`embedding_size`), cross-layer sharing (`sharing`), no
absolute positions (`position_embedding="none"`), a causal mask for a left-to-right LM.
Keeping them in one place makes the differences between papers easy to see and diff.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields, replace

SHARING_MODES = ("none", "all", "attention", "ffn")
POSITION_EMBEDDINGS = ("absolute", "none")
ACTIVATIONS = ("gelu", "gelu_tanh", "relu")

# Tiny presets that train on a laptop CPU in seconds. Names follow BERT's "L/H/A" shapes:
# nano = 2 layers x 64 hidden x 2 heads, and so on; every head has 32 dimensions.
PRESETS: dict[str, dict] = {
    "bert-nano": dict(num_layers=2, hidden_size=64, num_heads=2),
    "bert-micro": dict(num_layers=2, hidden_size=128, num_heads=4),
    "bert-mini": dict(num_layers=4, hidden_size=128, num_heads=4),
    "bert-small": dict(num_layers=4, hidden_size=256, num_heads=8),
    # The shape of the original BERT-base, for parameter accounting only (do not train it here).
    "bert-base": dict(
        num_layers=12, hidden_size=768, num_heads=12, vocab_size=30522, max_position=512
    ),
}


def _is_int(value) -> bool:
    """An int that is not a bool (True is an int in Python, but not a layer count)."""
    return isinstance(value, int) and not isinstance(value, bool)


@dataclass
class BertConfig:
    """Every hyperparameter of a BERT-style encoder.

    `intermediate_size` defaults to 4 x hidden_size and `embedding_size` to hidden_size
    (set it smaller for ALBERT's factorized embeddings: V x E + E x H instead of V x H).
    """

    vocab_size: int = 1000
    hidden_size: int = 128
    num_layers: int = 2
    num_heads: int = 4
    intermediate_size: int | None = None
    embedding_size: int | None = None
    max_position: int = 128
    type_vocab_size: int = 2
    position_embedding: str = "absolute"
    sharing: str = "none"
    activation: str = "gelu"
    dropout: float = 0.1
    attention_dropout: float = 0.1
    layer_norm_eps: float = 1e-12
    initializer_range: float = 0.02
    pad_token_id: int = 0
    causal: bool = False
    use_sdpa: bool = False

    def __post_init__(self) -> None:
        if self.intermediate_size is None:
            self.intermediate_size = 4 * self.hidden_size
        if self.embedding_size is None:
            self.embedding_size = self.hidden_size
        for name in ("vocab_size", "hidden_size", "num_layers", "num_heads",
                     "intermediate_size", "embedding_size", "max_position"):
            value = getattr(self, name)
            if not _is_int(value) or value <= 0:
                raise ValueError(f"BertConfig.{name} must be a positive integer, got {value!r}")
        for name in ("type_vocab_size", "pad_token_id"):
            value = getattr(self, name)
            if not _is_int(value) or value < 0:
                raise ValueError(
                    f"BertConfig.{name} must be an integer >= 0, got {value!r}"
                    + (" (0 disables segments)" if name == "type_vocab_size" else "")
                )
        for name in ("causal", "use_sdpa"):
            value = getattr(self, name)
            if not isinstance(value, bool):
                raise ValueError(
                    f"BertConfig.{name} must be True or False, got {value!r}: a string such as "
                    f"'no' is truthy and would switch it on"
                )
        for name in ("dropout", "attention_dropout", "layer_norm_eps", "initializer_range"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) \
                    or not math.isfinite(value):
                raise ValueError(f"BertConfig.{name} must be a finite number, got {value!r}")
        for name in ("layer_norm_eps", "initializer_range"):
            if getattr(self, name) <= 0:
                raise ValueError(
                    f"BertConfig.{name} must be > 0, got {getattr(self, name)!r}"
                    + (" (LayerNorm divides by sqrt(var + eps))" if name == "layer_norm_eps"
                       else "")
                )
        if self.hidden_size % self.num_heads != 0:
            divisors = [h for h in range(1, self.hidden_size + 1) if self.hidden_size % h == 0]
            raise ValueError(
                f"hidden_size={self.hidden_size} is not divisible by num_heads={self.num_heads}: "
                f"each head gets hidden_size / num_heads dimensions. Pick num_heads from "
                f"{divisors[:12]} or change hidden_size to a multiple of {self.num_heads}."
            )
        if self.sharing not in SHARING_MODES:
            raise ValueError(
                f"unknown sharing mode {self.sharing!r}: choose one of {SHARING_MODES}"
            )
        if self.position_embedding not in POSITION_EMBEDDINGS:
            raise ValueError(
                f"unknown position_embedding {self.position_embedding!r}: "
                f"choose one of {POSITION_EMBEDDINGS}"
            )
        if self.activation not in ACTIVATIONS:
            raise ValueError(
                f"unknown activation {self.activation!r}: choose one of {ACTIVATIONS}"
            )
        for name in ("dropout", "attention_dropout"):
            p = getattr(self, name)
            if not 0.0 <= p < 1.0:
                raise ValueError(f"BertConfig.{name} must be in [0, 1), got {p}")
        if not 0 <= self.pad_token_id < self.vocab_size:
            raise ValueError(
                f"pad_token_id={self.pad_token_id} must be a token id below "
                f"vocab_size={self.vocab_size}"
            )

    @property
    def head_size(self) -> int:
        """Dimensions per attention head (d_head)."""
        return self.hidden_size // self.num_heads

    @classmethod
    def from_preset(cls, name: str, **overrides) -> BertConfig:
        """A named tiny preset, e.g. `BertConfig.from_preset("bert-mini", vocab_size=2000)`."""
        if name not in PRESETS:
            raise ValueError(f"unknown preset {name!r}: choose one of {sorted(PRESETS)}")
        known = {f.name for f in fields(cls)}
        unknown = set(overrides) - known
        if unknown:
            raise ValueError(f"unknown BertConfig field(s) {sorted(unknown)}")
        return cls(**{**PRESETS[name], **overrides})

    def replace(self, **changes) -> BertConfig:
        """A copy with some fields changed (validated again).

        Sizes that were derived from hidden_size (FFN = 4H, E = H) follow a new hidden_size.
        """
        if "hidden_size" in changes:
            derived_ffn = self.intermediate_size == 4 * self.hidden_size
            if "intermediate_size" not in changes and derived_ffn:
                changes["intermediate_size"] = None
            if "embedding_size" not in changes and self.embedding_size == self.hidden_size:
                changes["embedding_size"] = None
        return replace(self, **changes)

    def to_dict(self) -> dict:
        return asdict(self)
