"""The exercises of lesson 04_albert: each one's reference, inputs and hint.

`minibert.check` loads this file; the lesson grades an answer with
`check.grade(name, my_function)`, and `lessons/solutions/04_albert.py` answers them.
"""

from __future__ import annotations

import torch

from minibert.check import register

# ---------------------------------------------------------------------------------------------
# exercise "albert_parameters": ALBERT's parameter count per embedding size and sharing mode


def _reference_albert_parameters(vocab_size, embedding_size, hidden_size, num_layers, sharing):
    """Parameters of the word table (+ the E -> H projection when E != H) and of the layers,
    counted from a model built on the meta device (no memory), each shared tensor once."""
    from minibert.config import BertConfig
    from minibert.encoder import Embeddings, build_layers
    from minibert.measure import count_parameters

    config = BertConfig(vocab_size=vocab_size, hidden_size=hidden_size, num_layers=num_layers,
                        num_heads=1, embedding_size=embedding_size, sharing=sharing)
    with torch.device("meta"):
        embeddings, layers = Embeddings(config), build_layers(config)
    table = embeddings.word.weight.numel()
    projection = count_parameters(embeddings.project) if embeddings.project is not None else 0
    return table + projection + count_parameters(layers)


def _albert_parameters_inputs(trial: int, generator: torch.Generator) -> tuple:
    """Trial 0: lesson 04's ALBERT; 1: BERT's full table; 2-5: each sharing mode, random sizes."""
    if trial == 0:
        return 500, 32, 128, 6, "all"
    if trial == 1:
        return 500, 128, 128, 6, "none"
    sharing = ("none", "all", "attention", "ffn")[(trial - 2) % 4]
    vocab = int(torch.randint(100, 3000, (1,), generator=generator))
    embedding = int(torch.randint(4, 64, (1,), generator=generator))
    hidden = 16 * int(torch.randint(5, 12, (1,), generator=generator))
    layers = int(torch.randint(2, 13, (1,), generator=generator))
    return vocab, embedding, hidden, layers, sharing


register(
    "albert_parameters",
    _reference_albert_parameters,
    _albert_parameters_inputs,
    hint=("table: V*E, plus E*H + H for the projection when E != H (V*H otherwise). One "
          "attention block: 4*(H*H + H) + 2*H; one FFN block (4H wide): 8*H*H + 5*H + 2*H. "
          "Count L copies of a block unless the sharing mode shares it, then count one"),
    trials=6,
    atol=0.5,
    rtol=0.0,
    lesson="04_albert",
)
