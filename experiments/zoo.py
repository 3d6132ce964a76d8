"""`make zoo`: pretrain every model of the checkpoint zoo under one recipe, and save each.

    .venv/bin/python -m experiments.zoo                      # all eight, two at a time
    .venv/bin/python -m experiments.zoo --only BERT ELECTRA  # some of them
    torchrun --nproc_per_node=2 -m experiments.zoo --only BERT   # data parallel, same steps

The recipe, the members and how a lesson loads them are in `minibert.course.zoo`. Each run saves
its model at 25/50/75/100% of its steps to `lessons/snapshots/zoo/<name>.pt` (float16 on disk)
with the record of what made it, and ends with a table of every run: steps, tokens, FLOPs,
seconds and the final losses.

A killed run resumes: every eighth of its steps the training state goes to `--work`
(`.zoo-work/` by default), and the same command continues from there; `--fresh` starts over.
Without torchrun, runs go two at a time, one thread each (`run_side_by_side`); the distilled
members (DistilBERT, TinyBERT) start when BERT's file exists. Under torchrun every run uses all
the processes, one after another, and each process takes its share of every step's
micro-batches, so the steps are the same as on one process up to rounding.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import statistics
import sys
import time
from pathlib import Path

import torch

from minibert.course import paths, zoo
from minibert.course.side_by_side import run_side_by_side
from minibert.course.snapshots import save_snapshots
from minibert.train import first_steps_schedule, train

ROOT = Path(__file__).resolve().parents[1]
WORK = ROOT / ".zoo-work"
CHECK_BATCHES = 4                  # fixed held-out micro-batches whose loss the record keeps


def loss_of(output) -> torch.Tensor:
    """The loss of a model's output: a dict's "loss" or an output dataclass's `.loss`."""
    return output["loss"] if isinstance(output, dict) else output.loss


def check_loss(name: str, model, s: zoo.Setup) -> float:
    """The model's loss on CHECK_BATCHES fixed micro-batches no run trains on: a loaded file
    (float16 on disk) must give it again."""
    batches = zoo.MEMBERS[name].batches(s, 10_000)          # another seed than any run's
    model.eval()
    with torch.no_grad():
        losses = [loss_of(model(**batches(i))).item() for i in range(CHECK_BATCHES)]
    return statistics.mean(losses)


def rank() -> int:
    return int(os.environ.get("RANK", "0"))


def run(name: str, *, recipe: zoo.Recipe = zoo.RECIPE, out: str | None = None,
        work: str | None = None, fresh: bool = False, progress: bool = True) -> dict:
    """Pretrain member `name` (resuming from `work` if a run was interrupted) and save its file.

    Returns the row of the final table.
    """
    torch.use_deterministic_algorithms(True)
    s = zoo.setup(recipe)
    out_dir = Path(out) if out is not None else paths.ZOO
    work_dir = Path(work) if work is not None else WORK
    work_dir.mkdir(parents=True, exist_ok=True)
    checkpoint = work_dir / f"{name.lower()}.ckpt"
    snapshot_file = {f: work_dir / f"{name.lower()}.{round(100 * f)}.pt" for f in recipe.fractions}
    if fresh:
        for path in (checkpoint, *snapshot_file.values()):
            path.unlink(missing_ok=True)

    teacher = None
    if zoo.MEMBERS[name].teacher is not None:
        teacher = zoo.load(zoo.MEMBERS[name].teacher, s=s, folder=out_dir).model
    model = zoo.build(name, s, teacher=teacher)
    saved = zoo.saved_part(name, model)
    batches = zoo.MEMBERS[name].batches(s, recipe.seed)
    steps, shards = recipe.steps, recipe.shards
    last_index = [0]

    def next_batch(index):
        return {**batches(index), "index": index}

    def loss_fn(m, batch):
        last_index[0] = batch.pop("index")
        tokens = int(batch["attention_mask"].sum())
        return {"loss": loss_of(m(**batch)), "tokens": tokens}

    def snapshot(m):
        done = last_index[0] // shards + 1
        fraction = done / steps
        if fraction in snapshot_file and rank() == 0:
            state = {k: v.detach().clone() for k, v in saved.state_dict().items()}
            from minibert.atomic import atomic_path
            with atomic_path(snapshot_file[fraction]) as temporary:
                torch.save(state, temporary)
        return 0.0

    history = train(model, next_batch, loss_fn, steps=steps, lr=recipe.lr, warmup=recipe.warmup,
                    accumulation=shards, seed=recipe.seed, progress=progress, desc=name,
                    eval_fn=snapshot, eval_every=steps // len(recipe.fractions),
                    checkpoint=checkpoint, checkpoint_every=steps // 8)
    tokens = round(sum(history.metrics["tokens"]) * shards)
    row = {"name": name, "steps": steps, "tokens": tokens,
           "flops": steps * zoo.step_flops(name, s), "seconds": round(history.seconds, 1),
           "first_loss": history.loss[0],
           "final_loss": statistics.mean(history.loss[-steps // 20:])}
    if rank() != 0:
        return row
    states = [torch.load(snapshot_file[f], weights_only=True) for f in recipe.fractions]
    record = {**zoo.expected_record(name, s), **row,
              "first_losses": history.loss[:zoo.FIRST_LOSSES],
              "check_loss": check_loss(name, model, s), "skipped_steps": history.skipped,
              "processes": int(os.environ.get("WORLD_SIZE", "1")),
              "torch": str(torch.__version__), "remake": zoo.remake_command(name),
              "teacher": zoo.MEMBERS[name].teacher}
    save_snapshots(zoo.path_of(name, out_dir), states, record, dtype=torch.float16)
    for path in (checkpoint, *snapshot_file.values()):
        path.unlink(missing_ok=True)
    return row


def first_losses(name: str, recipe: zoo.Recipe = zoo.RECIPE, count: int = zoo.FIRST_LOSSES,
                 folder=None) -> list[float]:
    """The training losses of member `name`'s first `count` steps, without training the rest.

    They fall inside the warmup, so a short run takes the same steps (`first_steps_schedule`).
    """
    s = zoo.setup(recipe)
    warmup = round(recipe.warmup * recipe.steps)
    schedule = first_steps_schedule(recipe.lr, warmup, count)
    teacher = None
    if zoo.MEMBERS[name].teacher is not None:
        teacher = zoo.load(zoo.MEMBERS[name].teacher, s=s, folder=folder).model
    model = zoo.build(name, s, teacher=teacher)
    batches = zoo.MEMBERS[name].batches(s, recipe.seed)
    history = train(model, batches, lambda m, b: loss_of(m(**b)), **schedule,
                    accumulation=recipe.shards, seed=recipe.seed, progress=False)
    return history.loss


def table(rows: list[dict]) -> str:
    lines = [f"{'model':<11} {'steps':>6} {'tokens':>11} {'TFLOPs':>7} {'seconds':>8} "
             f"{'first loss':>10} {'final loss':>10}"]
    for r in rows:
        lines.append(f"{r['name']:<11} {r['steps']:>6} {r['tokens']:>11,} "
                     f"{r['flops'] / 1e12:>7.2f} {r['seconds']:>8.0f} "
                     f"{r['first_loss']:>10.3f} {r['final_loss']:>10.3f}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="+", metavar="NAME", choices=list(zoo.MEMBERS),
                        help=f"train only these ({', '.join(zoo.MEMBERS)})")
    parser.add_argument("--out", help=f"folder of the files (default {paths.ZOO})")
    parser.add_argument("--work", help=f"folder of the resume state (default {WORK})")
    parser.add_argument("--fresh", action="store_true", help="ignore saved resume state")
    parser.add_argument("--steps", type=int, help="another budget (the files then record it, "
                        "and the lessons refuse them: for trying the command out)")
    parser.add_argument("--processes", type=int, default=2,
                        help="runs trained at once without torchrun (one thread each)")
    args = parser.parse_args(argv)
    recipe = zoo.RECIPE
    if args.steps is not None:
        if args.steps < 32 or args.steps % 32:
            parser.error("--steps must be a positive multiple of 32 (8 checkpoints, 4 snapshots)")
        recipe = dataclasses.replace(recipe, steps=args.steps)
    names = args.only or list(zoo.MEMBERS)
    options = dict(recipe=recipe, out=args.out, work=args.work, fresh=args.fresh)
    started = time.perf_counter()

    if "WORLD_SIZE" in os.environ and int(os.environ["WORLD_SIZE"]) > 1:   # under torchrun
        import torch.distributed as dist
        torch.set_num_threads(1)
        # gloo: the zoo's models and batches stay on the CPU, also on a machine with GPUs
        dist.init_process_group("gloo")
        try:
            rows = [run(name, **options, progress=rank() == 0) for name in _in_order(names)]
        finally:
            dist.destroy_process_group()
    else:
        torch.set_num_threads(1)
        first = [n for n in names if zoo.MEMBERS[n].teacher is None]
        later = [n for n in names if zoo.MEMBERS[n].teacher is not None]
        print(f"{len(names)} runs of {recipe.steps} steps, {args.processes} at a time",
              flush=True)
        from experiments import zoo as this  # spawned workers import it by name
        rows = []
        for group in (first, later):
            rows += run_side_by_side(this.run_job, [dict(name=n, **options) for n in group],
                                     processes=args.processes)
    if rank() == 0:
        print(table(rows))
        print(f"done in {time.perf_counter() - started:.0f} s", flush=True)
    return 0


def run_job(**job) -> dict:
    """`run` for a spawned worker: its progress bar goes to its own line."""
    return run(**job)


def _in_order(names: list[str]) -> list[str]:
    """The teachers first."""
    return sorted(names, key=lambda n: zoo.MEMBERS[n].teacher is not None)


if __name__ == "__main__":
    sys.exit(main())
