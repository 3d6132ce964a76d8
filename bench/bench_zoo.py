"""Zoo pretraining throughput: 2 data-parallel processes against 1, and minibert against
`transformers.BertForMaskedLM` at the zoo's shape.

    .venv/bin/python bench/bench_zoo.py                 # both measurements (about 3 minutes)
    .venv/bin/python bench/bench_zoo.py --steps 512 --rounds 30

1. **Data parallel.** `experiments.zoo` trains BERT for `--steps` steps twice from the same
   command line: on one process (one thread), and under torchrun with 2 processes (one thread
   each, gloo), each taking one of every step's two micro-batches. The seconds are those the
   runs record (training only, not start-up). Goal: at least 1.7x with 2 processes.
2. **Against transformers.** One process, one thread: minibert's masked LM at the zoo's shape
   (`BertForPreTraining(nsp=False)`) and `transformers.BertForMaskedLM` with the same config
   (eager attention, dropout 0), trained by the same AdamW loop on the same zoo batches (24
   sequences a step), interleaved in `--rounds` rounds of 10 steps whose order alternates.
   Reported: the median step time. Goal: minibert no slower than transformers.

Not run by the tests.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))                                   # run from a checkout, too

from minibert.course import zoo  # noqa: E402
from minibert.course.snapshots import load_snapshots  # noqa: E402


def data_parallel(steps: int) -> dict[int, float]:
    """{processes: recorded training seconds} for BERT's zoo run of `steps` steps."""
    seconds = {}
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    with tempfile.TemporaryDirectory() as folder:
        for processes in (1, 2):
            out, work = Path(folder) / f"out{processes}", Path(folder) / f"work{processes}"
            command = ["-m", "experiments.zoo", "--only", "BERT", "--steps", str(steps),
                       "--fresh", "--out", str(out), "--work", str(work)]
            if processes == 1:
                command = [sys.executable, *command, "--processes", "1"]
            else:
                command = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node",
                           str(processes), "--master_port", "29541", *command]
            done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
            if done.returncode:
                raise SystemExit(done.stderr[-3000:])
            meta, _ = load_snapshots(out / "bert.pt", remake="bench/bench_zoo.py")
            seconds[processes] = meta["seconds"]
    return seconds


def against_transformers(rounds: int, steps_per_round: int = 10) -> dict[str, float]:
    """Median ms per training step of minibert's and transformers' masked LM, one thread."""
    import transformers

    from minibert.models import BertForPreTraining
    torch.set_num_threads(1)
    s = zoo.setup()
    c = s.config
    hf_config = transformers.BertConfig(
        vocab_size=c.vocab_size, hidden_size=c.hidden_size, num_hidden_layers=c.num_layers,
        num_attention_heads=c.num_heads, intermediate_size=c.intermediate_size,
        max_position_embeddings=c.max_position, hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0, type_vocab_size=2)
    torch.manual_seed(0)
    hf = transformers.BertForMaskedLM(hf_config)
    hf.set_attn_implementation("eager")
    torch.manual_seed(0)
    ours = BertForPreTraining(c, nsp=False)
    batches = zoo.sentence_batches(s, "bench", seed=0)

    def hf_loss(model, batch):
        return model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"],
                     labels=batch["mlm_labels"]).loss

    def our_loss(model, batch):
        return model(batch["input_ids"], attention_mask=batch["attention_mask"],
                     mlm_labels=batch["mlm_labels"]).loss
    runs = {"minibert": (ours, our_loss), "transformers": (hf, hf_loss)}
    optimizers = {name: torch.optim.AdamW(m.parameters(), lr=1e-3) for name, (m, _) in runs.items()}
    times = {name: [] for name in runs}
    index = 0
    for r in range(rounds + 1):                                 # round 0 warms up
        order = list(runs) if r % 2 == 0 else list(runs)[::-1]
        for name in order:
            model, loss_fn = runs[name]
            model.train()
            for j in range(steps_per_round):
                # the same two micro-batches (one step of 24) for both models
                step = [batches(index + 2 * j + k) for k in (0, 1)]
                start = time.perf_counter()
                optimizers[name].zero_grad()
                for micro in step:
                    (loss_fn(model, micro) / 2).backward()
                optimizers[name].step()
                if r:
                    times[name].append(time.perf_counter() - start)
        index += 2 * steps_per_round
    return {name: 1e3 * statistics.median(t) for name, t in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1024, help="zoo steps per run (x32)")
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args()
    print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, torch "
          f"{torch.__version__}")
    seconds = data_parallel(args.steps)
    print(f"data parallel, BERT, {args.steps} steps of 24: 1 process {seconds[1]:.1f} s, "
          f"2 processes {seconds[2]:.1f} s: {seconds[1] / seconds[2]:.2f}x")
    ms = against_transformers(args.rounds)
    print(f"one training step of 24 sequences, one thread: minibert {ms['minibert']:.1f} ms, "
          f"transformers {ms['transformers']:.1f} ms: minibert "
          f"{ms['transformers'] / ms['minibert']:.2f}x as fast")


if __name__ == "__main__":
    main()
