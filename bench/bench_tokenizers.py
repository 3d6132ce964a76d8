"""Training and encoding speed of minibert's byte-level BPE next to HF `tokenizers` and naive BPE.

The text: whole chapters of the World English Bible, about 1 MB (`--mb`). For each vocabulary
size (`--vocab`, default 2000 and 8000, special tokens included) it trains:

- `minibert`: `ByteLevelBPE.train`, distinct chunks weighted by frequency, pair counts updated
  incrementally after each merge (`PairCounter`).
- `HF tokenizers`: the Rust library, BPE with the ByteLevel pre-tokenizer (GPT-2's regex),
  the same vocabulary size and special tokens.
- `naive, distinct chunks`: recounts every pair after every merge, but over the distinct chunks
  weighted by frequency (so the gap to minibert is the incremental update alone). Run fully.
- `naive, minbpe`: `minibert.tokenizers.NaiveBPE`, minbpe's loop over every chunk of the text.
  At ~0.5 s per merge it would take most of an hour, so by default it is *estimated*: the time
  per merge is measured at `--samples` points k = 0 ... N-1 (from the state after the first k
  merges, `--per-sample` merges each) and integrated with the trapezoid rule. `--full-naive`
  runs it for real instead. Both naive trainers are checked to learn minibert's merges.

Then encoding throughput in MB/s over the same text: minibert's `encode` with an empty chunk
cache (cold) and again (warm), HF `encode` one chapter at a time and `encode_batch` (threads).

    .venv/bin/python bench/bench_tokenizers.py                 # about 4 minutes
    .venv/bin/python bench/bench_tokenizers.py --vocab 2000 --full-naive     # + 10 minutes
    .venv/bin/python bench/bench_tokenizers.py --mb 4 --vocab 8000 32000 --no-naive

Ratios: "naive / minibert" is how many times faster minibert trains; "minibert / HF" how many
times slower than Rust. Not run by the tests.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout, too

from minibert.data import load_bible  # noqa: E402
from minibert.tokenizers import SPECIAL_TOKENS, ByteLevelBPE, NaiveBPE  # noqa: E402
from minibert.tokenizers.bpe import merge, pretokenize, train_naive  # noqa: E402


def bible_text(megabytes: float) -> list[str]:
    """Whole chapters (sentences joined by spaces) until there are `megabytes` MB of text."""
    chapters, size = [], 0
    for doc in load_bible():
        chapters.append(" ".join(doc))
        size += len(chapters[-1].encode("utf-8"))
        if size >= megabytes * 1e6:
            break
    return chapters


def timed(function, *args):
    start = time.perf_counter()
    result = function(*args)
    return time.perf_counter() - start, result


# ------------------------------------------------------------------ the trainers


def train_hf(texts: list[str], vocab_size: int):
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=SPECIAL_TOKENS,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  show_progress=False)
    tokenizer.train_from_iterator(texts, trainer)
    return tokenizer


def train_naive_distinct(texts: list[str], vocab_size: int) -> dict:
    """Recount every pair after every merge, over the distinct chunks weighted by frequency."""
    chunk_counts = ByteLevelBPE._count_chunks(texts)
    words = [list(chunk.encode("utf-8")) for chunk in chunk_counts]
    weights = list(chunk_counts.values())
    merges = {}
    for i in range(vocab_size - 256 - len(SPECIAL_TOKENS)):
        stats = {}
        for word, weight in zip(words, weights):  # every pair, every time
            for pair in zip(word, word[1:]):
                stats[pair] = stats.get(pair, 0) + weight
        if not stats:
            break
        pair = min(stats, key=lambda p: (-stats[p], p))
        words = [merge(word, pair, 256 + i) for word in words]
        merges[pair] = 256 + i
    return merges


def estimate_naive_minbpe(texts, merges, samples: int, per_sample: int) -> tuple[float, float]:
    """Estimated seconds of `NaiveBPE.train` for all `merges`, and the seconds really spent.

    The naive trainer's state after k merges is the text encoded with the first k merges, so it
    can be rebuilt quickly; from there, `per_sample` naive merges are timed (and checked
    against minibert's). The per-merge times are integrated over k with the trapezoid rule.
    """
    spent = time.perf_counter()
    setup, chunks = timed(lambda: [chunk for t in texts for chunk in pretokenize(t)])
    setup += timed(lambda: [list(chunk.encode("utf-8")) for chunk in chunks])[0]
    merge_list = list(merges.items())
    n = len(merge_list)
    points = sorted({round(j * (n - per_sample) / (samples - 1)) for j in range(samples)})
    per_merge = []
    for k in points:
        partial = ByteLevelBPE(dict(merge_list[:k]))  # the first k merges
        ids = [partial.encode_ordinary(chunk) for chunk in chunks]  # the state after k merges
        seconds, learned = timed(train_naive, ids, per_sample, 256 + k)
        assert list(learned.items()) == merge_list[k:k + per_sample], "naive != minibert"
        copying, _ = timed(lambda state: [list(chunk) for chunk in state], ids)  # its own copy
        per_merge.append((seconds - copying) / per_sample)
    total = setup
    for k0, t0, k1, t1 in zip(points, per_merge, points[1:], per_merge[1:]):
        total += (k1 - k0) * (t0 + t1) / 2  # a trapezoid between two sample points
    total += (n - points[-1]) * per_merge[-1]  # the last few merges
    return total, time.perf_counter() - spent


# ------------------------------------------------------------------ encoding


def encode_speed(texts: list[str], tok: ByteLevelBPE, hf) -> dict[str, float]:
    """MB/s of each way of encoding `texts`, and the tokens per byte."""
    n_bytes = sum(len(t.encode("utf-8")) for t in texts)
    fresh = ByteLevelBPE(tok.merges)  # an empty chunk cache
    cold, ids = timed(lambda: [fresh.encode(t) for t in texts])
    warm, _ = timed(lambda: [fresh.encode(t) for t in texts])
    one, _ = timed(lambda: [hf.encode(t) for t in texts])
    batch, encodings = timed(hf.encode_batch, texts)
    return {
        "minibert (cold cache)": n_bytes / cold / 1e6,
        "minibert (warm cache)": n_bytes / warm / 1e6,
        "HF encode": n_bytes / one / 1e6,
        "HF encode_batch": n_bytes / batch / 1e6,
        "tokens/byte minibert": sum(map(len, ids)) / n_bytes,
        "tokens/byte HF": sum(len(e.ids) for e in encodings) / n_bytes,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=1.0, help="MB of Bible text")
    parser.add_argument("--vocab", type=int, nargs="+", default=[2000, 8000])
    parser.add_argument("--rounds", type=int, default=3, help="runs of the fast trainers")
    parser.add_argument("--samples", type=int, default=9, help="naive minbpe sample points")
    parser.add_argument("--per-sample", type=int, default=3, help="naive merges per sample")
    parser.add_argument("--full-naive", action="store_true", help="run NaiveBPE fully")
    parser.add_argument("--no-naive", action="store_true", help="only minibert and HF")
    args = parser.parse_args()

    import tokenizers

    texts = bible_text(args.mb)
    n_bytes = sum(len(t.encode("utf-8")) for t in texts)
    print(f"text: {len(texts)} Bible chapters, {n_bytes / 1e6:.2f} MB")
    print(f"Python {platform.python_version()}, tokenizers {tokenizers.__version__}, "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} at the start\n")

    rows = []
    for vocab_size in args.vocab:
        ours_times, hf_times = [], []
        for _ in range(args.rounds):  # alternate, so a slow moment hits both
            seconds, tok = timed(ByteLevelBPE.train, texts, vocab_size)
            ours_times.append(seconds)
            seconds, hf = timed(train_hf, texts, vocab_size)
            hf_times.append(seconds)
        ours, theirs = statistics.median(ours_times), statistics.median(hf_times)
        if args.no_naive:
            rows.append((vocab_size, len(tok.merges), ours, theirs, None, None, ""))
            print(f"vocab {vocab_size}: minibert {ours:.2f} s, HF {theirs:.2f} s", flush=True)
            continue
        distinct, distinct_merges = timed(train_naive_distinct, texts, vocab_size)
        assert distinct_merges == tok.merges, "naive (distinct chunks) != minibert"
        if args.full_naive:
            minbpe, naive_tok = timed(NaiveBPE.train, texts, vocab_size)
            assert naive_tok.merges == tok.merges, "naive (minbpe) != minibert"
            label, spent = "measured", minbpe
        else:
            minbpe, spent = estimate_naive_minbpe(texts, tok.merges, args.samples,
                                                  args.per_sample)
            label = "estimated"
        rows.append((vocab_size, len(tok.merges), ours, theirs, distinct, minbpe, label))
        print(f"vocab {vocab_size}: minibert {ours:.2f} s, HF {theirs:.2f} s, naive distinct "
              f"{distinct:.1f} s, naive minbpe {minbpe:.0f} s ({label}, {spent:.0f} s spent)",
              flush=True)

    print("\n| vocab | merges | minibert s | HF tokenizers s | naive distinct s | naive minbpe s "
          "| naive distinct / minibert | naive minbpe / minibert | minibert / HF |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for vocab_size, merges, ours, theirs, distinct, minbpe, label in rows:
        naive = ("| - | - | - | - " if distinct is None else
                 f"| {distinct:.1f} | {minbpe:.0f} ({label}) | **{distinct / ours:.0f}x** "
                 f"| **{minbpe / ours:.0f}x** ")
        print(f"| {vocab_size} | {merges} | {ours:.2f} | {theirs:.2f} {naive}| "
              f"{ours / theirs:.1f}x |")

    speeds = encode_speed(texts, tok, hf)
    print(f"\nencoding {n_bytes / 1e6:.2f} MB with the {args.vocab[-1]} vocabulary:\n")
    print("| encoder | MB/s |\n|---|---:|")
    for name, value in speeds.items():
        if name.startswith("tokens"):
            continue
        print(f"| {name} | {value:.2f} |")
    ratio = speeds["tokens/byte minibert"] / speeds["tokens/byte HF"]
    print(f"\ntokens per byte: minibert {speeds['tokens/byte minibert']:.4f}, HF "
          f"{speeds['tokens/byte HF']:.4f} (ratio {ratio:.4f})")
    print(f"load average {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
