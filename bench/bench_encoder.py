"""Forward + backward speed of minibert's BERT encoder next to `transformers.BertModel` on CPU.

Shape: L=2, H=128, 4 heads, FFN 512, T=64, B=32, vocab 1000, dropout 0.1 (training mode), a
padded batch (attention_mask with zeros). All four models hold the same weights and run in one
process, interleaved in repeated rounds (the order rotates every round), so that a slow moment
of the machine hits them all alike. Reported: the median of the per-step times.

    make bench        (or: .venv/bin/python bench/bench_encoder.py --rounds 20)

A ratio minibert/HF above 1 means minibert is faster. Not run by the tests.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import torch

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))    # run from a checkout, too

from minibert.interop import from_transformers  # noqa: E402

LAYERS, HIDDEN, HEADS, LENGTH, BATCH, VOCAB = 2, 128, 4, 64, 32, 1000


def build_models() -> dict[str, torch.nn.Module]:
    """HF eager and sdpa, and minibert hand-written and SDPA, all with the same weights."""
    import transformers

    torch.manual_seed(0)
    config = transformers.BertConfig(
        vocab_size=VOCAB, hidden_size=HIDDEN, num_hidden_layers=LAYERS, num_attention_heads=HEADS,
        intermediate_size=4 * HIDDEN, max_position_embeddings=128,
    )
    hf_eager = transformers.BertModel(config, add_pooling_layer=False)
    hf_eager.set_attn_implementation("eager")
    hf_sdpa = transformers.BertModel(config, add_pooling_layer=False)
    hf_sdpa.load_state_dict(hf_eager.state_dict())
    hf_sdpa.set_attn_implementation("sdpa")
    models = {
        "HF eager": hf_eager,
        "HF sdpa": hf_sdpa,
        "minibert hand-written": from_transformers(hf_eager),
        "minibert SDPA": from_transformers(hf_eager, use_sdpa=True),
    }
    return {name: model.train() for name, model in models.items()}


def make_batch() -> dict[str, torch.Tensor]:
    generator = torch.Generator().manual_seed(0)
    ids = torch.randint(1, VOCAB, (BATCH, LENGTH), generator=generator)
    lengths = torch.randint(LENGTH // 2, LENGTH + 1, (BATCH,), generator=generator)
    lengths[0] = LENGTH
    mask = (torch.arange(LENGTH)[None, :] < lengths[:, None]).long()     # (B, T)
    segments = (torch.arange(LENGTH)[None, :] >= LENGTH // 2).long() * mask
    return dict(input_ids=ids * mask, token_type_ids=segments, attention_mask=mask)


def step(model: torch.nn.Module, batch: dict[str, torch.Tensor]) -> float:
    """One forward + backward pass; returns its wall time in seconds."""
    start = time.perf_counter()
    hidden = model(**batch).last_hidden_state                            # (B, T, H)
    hidden.pow(2).mean().backward()
    elapsed = time.perf_counter() - start
    for p in model.parameters():
        p.grad = None
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20, help="interleaved rounds")
    parser.add_argument("--steps", type=int, default=5, help="steps per model per round")
    parser.add_argument("--threads", type=int, default=2, help="torch.set_num_threads")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    import transformers

    models, batch = build_models(), make_batch()
    names = list(models)
    for name in names:                                                   # warm-up
        for _ in range(3):
            step(models[name], batch)
    times: dict[str, list[float]] = {name: [] for name in names}
    for r in range(args.rounds):
        order = names[r % len(names):] + names[:r % len(names)]
        for name in order:
            times[name] += [step(models[name], batch) for _ in range(args.steps)]

    median = {name: statistics.median(ts) for name, ts in times.items()}
    tokens = BATCH * LENGTH
    print(f"forward+backward, L={LAYERS} H={HIDDEN} heads={HEADS} T={LENGTH} B={BATCH} "
          f"V={VOCAB}, padded batch, {args.threads} threads, "
          f"{args.rounds} rounds x {args.steps} steps, median")
    print(f"torch {torch.__version__}, transformers {transformers.__version__}, "
          f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores visible\n")
    print(f"{'model':<24}{'ms/step':>9}{'tokens/s':>11}{'vs HF eager':>13}{'vs HF sdpa':>12}")
    for name in names:
        t = median[name]
        print(f"{name:<24}{1000 * t:>9.2f}{tokens / t:>11.0f}"
              f"{median['HF eager'] / t:>13.3f}{median['HF sdpa'] / t:>12.3f}")
    print("\nratio = HF time / minibert time: above 1 means minibert is faster")


if __name__ == "__main__":
    main()
