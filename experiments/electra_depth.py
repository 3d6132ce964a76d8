"""ELECTRA vs MLM at equal compute, fine-tuned, at a depth and budget no lesson can afford.

Lesson 06 compares a 2-layer ELECTRA with a 2-layer masked LM given the same pretraining FLOPs,
and the MLM stays ahead when both are fine-tuned, at every budget up to thirty times the
lesson's. With 4 layers and thirty times the lesson's steps (59 times its FLOPs, since a 4-layer
step costs about twice a 2-layer one), ELECTRA is ahead. That takes about twenty minutes on two
cores, so the pretraining lives here and not in `make test`:

    .venv/bin/python -m experiments.electra_depth                        # 4 layers, 30x steps
    .venv/bin/python -m experiments.electra_depth --layers 2             # the lesson's depth
    .venv/bin/python -m experiments.electra_depth --budget 10 --mlm-lr 3e-3 1e-3
    .venv/bin/python -m experiments.electra_depth --seeds 0 --save lessons/snapshots

The setup is lesson 06's sections 1 to 6 (the same language, packing, masking, models, FLOP
count, optimizer and seeds), with `num_layers` set in both `electra_configs` calls, and the
fine-tune of lesson 06's section 10: 300 steps on 1,024 labelled sentences (lr 1e-3, two
fine-tuning seeds), tested on the probe's 1,024 test sentences. Every pretraining run is a
separate job; `run_side_by_side` trains two at a time, one per core.

`--budget` counts the MLM's steps in multiples of lesson 06's 480 (at the lesson's 2 layers, its
FLOP budget); ELECTRA gets as many steps as cost the same FLOPs, the generator's counted.

The command prints the fine-tuned accuracy and the linear probe of every run at 25/50/75/100%
of the budget, and exits with status 1 unless every ELECTRA run ends above every MLM run
(fine-tuned, the mean of the two fine-tunes): the paper's direction, asserted as the lessons
assert theirs. With `--save`, every run's encoder snapshots go to a folder
(`minibert.course.snapshots`
format); the last line above (`make electra-depth-snapshots`) makes the ones lesson 06's
section 10 loads and fine-tunes.
"""

from __future__ import annotations

import argparse
import copy
import random
import statistics
import sys
import time
from pathlib import Path

import torch

from minibert import data, toylang
from minibert.corruption import electra_mask
from minibert.course.side_by_side import run_side_by_side
from minibert.course.snapshots import save_snapshots, vocabulary_digest
from minibert.finetune import fine_tune, linear_probe
from minibert.formats import pack_documents
from minibert.masking import mask_tokens
from minibert.models.bert import BertForPreTraining
from minibert.models.electra import (
    ElectraForPreTraining,
    electra_configs,
    electra_step_flops,
    mlm_step_flops,
)
from minibert.tokenizers import WordTokenizer
from minibert.train import first_steps_schedule, set_seed, train

LENGTH, BATCH = 32, 32            # lesson 06: sequences of 32 tokens, batches of 32
LESSON_MLM_STEPS = 480            # lesson 06's budget: the MLM's steps at 1x
FINE_TUNE_SEEDS = (0, 1)
FIRST_LOSSES = 16                 # the first training losses a snapshot file records
WARMUP = 0.1                      # the pretraining warmup, a fraction of the steps (lesson 06)


def language():
    """Lesson 06's ToyLang (162 ids) and its word tokenizer."""
    lang = toylang.ToyLang(seed=0, nouns_per_topic=15, shared_nouns=15, verbs_per_topic=6,
                           shared_verbs=6, n_adjectives=20, n_sentiment=4, n_adverbs=9)
    return lang, WordTokenizer(lang.vocabulary)


def budget_steps(disc, gen, budget: float, mean_words: float) -> dict[str, int]:
    """The MLM's steps, `budget` times lesson 06's 480, and ELECTRA's at the same FLOPs (the
    generator's cost counted)."""
    predicted = round(0.15 * mean_words) * BATCH              # tokens the MLM heads score per batch
    mlm_flops = mlm_step_flops(disc, BATCH, LENGTH, predicted)
    electra_flops = electra_step_flops(disc, gen, BATCH, LENGTH, predicted)
    mlm_steps = 8 * round(LESSON_MLM_STEPS * budget / 8)          # 8 log entries, 4 snapshots
    return {"mlm": mlm_steps, "electra": 8 * round(mlm_steps * mlm_flops / electra_flops / 8)}


def configs(layers: int, vocab_size: int):
    """(discriminator, generator): lesson 06's H = 64 / 16, E = 32, no dropout, `layers` deep."""
    return electra_configs("bert-nano", generator_fraction=0.25, embedding_size=32,
                           vocab_size=vocab_size, max_position=LENGTH, dropout=0.0,
                           attention_dropout=0.0, num_layers=layers)


def pretraining(kind: str, layers: int, lr: float, seed: int, budget: float) -> dict:
    """One run's setup, as lesson 06 builds it: the model, its batches, its steps and its data."""
    if kind not in ("mlm", "electra"):
        raise ValueError(f"kind must be 'mlm' or 'electra', got {kind!r}")
    lang, tokenizer = language()
    train_sequences = pack_documents(lang.documents(3000, (4, 8), seed=1), tokenizer, LENGTH)
    mean_words = sum(len(s) - 2 for s in train_sequences) / len(train_sequences)
    disc_config, gen_config = configs(layers, tokenizer.vocab_size)
    steps = budget_steps(disc_config, gen_config, budget, mean_words)[kind]
    if steps < 8:
        raise ValueError(f"budget {budget} gives {kind} {steps} steps; it needs at least 8 "
                         f"(two per snapshot): raise --budget")

    def next_batch_fn():
        # Same seed, same sequences for both kinds; each masks them its own way (lesson 06).
        rng, masking = random.Random(seed), torch.Generator().manual_seed(seed)
        corrupt = electra_mask if kind == "electra" else mask_tokens

        def next_batch(step):
            chosen = [train_sequences[rng.randrange(len(train_sequences))] for _ in range(BATCH)]
            ids, attention_mask = data.pad_batch(chosen, tokenizer.pad_id, length=LENGTH)  # (B, T)
            masked_ids, labels = corrupt(ids, vocab_size=tokenizer.vocab_size,
                                         mask_id=tokenizer.mask_id,
                                         special_ids=tokenizer.special_ids, generator=masking)
            batch = {"input_ids": masked_ids, "mlm_labels": labels,
                     "attention_mask": attention_mask}
            if kind == "electra":
                batch["generator"] = masking                         # seeded sampling
            return batch
        return next_batch

    set_seed(seed)
    if kind == "electra":
        model, encoder = ElectraForPreTraining(disc_config, gen_config), (lambda m: m.electra)
    else:
        model, encoder = BertForPreTraining(disc_config, nsp=False), (lambda m: m.bert)
    return {"model": model, "encoder": encoder, "next_batch": next_batch_fn(), "steps": steps,
            "lang": lang, "tokenizer": tokenizer, "config": disc_config}


def first_losses(kind: str, layers: int, lr: float, seed: int, budget: float,
                 count: int = FIRST_LOSSES) -> list[float]:
    """The training loss of a run's first `count` steps, without training the rest.

    They fall inside the warmup, so a short run takes the same steps (`first_steps_schedule`).
    """
    run = pretraining(kind, layers, lr, seed, budget)
    warmup = round(WARMUP * run["steps"])                  # as train() rounds a fraction
    schedule = first_steps_schedule(lr, warmup, count)
    history = train(run["model"], run["next_batch"], lambda m, batch: m(**batch).loss,
                    **schedule, seed=seed, progress=False)
    return history.loss


def run(kind: str, layers: int, lr: float, seed: int, budget: float,
        fine_tune_steps: int = 300, fine_tune_labels: int = 1024, save: str | None = None) -> dict:
    """Pretrain one model ("mlm" or "electra"), then probe and fine-tune its four snapshots.

    With `save`, a folder, the encoder's snapshots are also written there (see `snapshot_path`).
    """
    torch.use_deterministic_algorithms(True)
    setup = pretraining(kind, layers, lr, seed, budget)
    model, encoder, steps = setup["model"], setup["encoder"], setup["steps"]
    snapshots, losses = [], []

    def snapshot(m):
        snapshots.append(copy.deepcopy(encoder(m).state_dict()))
        return 0.0

    def loss_fn(m, batch):
        loss = m(**batch).loss
        if len(losses) < FIRST_LOSSES:
            losses.append(loss.item())                  # the record a test replays
        return loss
    started = time.perf_counter()
    train(model, setup["next_batch"], loss_fn, steps=steps, lr=lr, warmup=WARMUP, seed=seed,
          log_every=max(1, steps // 8), eval_fn=snapshot, eval_every=steps // 4, progress=False)
    seconds = time.perf_counter() - started

    evaluate = Evaluation(setup["lang"], setup["tokenizer"], setup["config"], fine_tune_labels)
    result = {"kind": kind, "layers": layers, "lr": lr, "seed": seed, "budget": budget,
              "steps": steps, "seconds": seconds,
              "probe": [evaluate.probe(state) for state in snapshots],
              "fine_tune": [[evaluate.fine_tune(state, s, fine_tune_steps) for s in FINE_TUNE_SEEDS]
                            for state in snapshots]}
    if save is not None:
        meta = {key: result[key] for key in ("kind", "layers", "lr", "seed", "budget", "steps")}
        meta.update(fractions=[0.25, 0.5, 0.75, 1.0], config=setup["config"].to_dict(),
                    vocabulary=vocabulary_digest(setup["tokenizer"].id_to_token),
                    first_losses=losses, seconds=round(seconds, 1),
                    torch=str(torch.__version__), fine_tune_steps=fine_tune_steps,
                    fine_tune_labels=fine_tune_labels, fine_tune=result["fine_tune"],
                    probe=result["probe"])
        meta["remake"] = "make electra-depth-snapshots"
        save_snapshots(snapshot_path(save, kind, layers, budget, lr, seed), snapshots, meta)
    return result


def snapshot_path(folder: str | Path, kind: str, layers: int, budget: float, lr: float,
                  seed: int) -> Path:
    """Where `--save folder` puts a run's snapshots: electra_4_layers_30x_lr0.001_seed0.pt."""
    return Path(folder) / f"{kind}_{layers}_layers_{budget:g}x_lr{lr:g}_seed{seed}.pt"


class Evaluation:
    """Lesson 06's acceptability task: the fine-tune, and the linear probe on mean-pooled
    features."""

    def __init__(self, lang, tokenizer, config, labels: int):
        self.tokenizer = tokenizer
        self.config = config.replace(dropout=0.1, attention_dropout=0.1)
        self.fine_tune_train = self.encode(toylang.acceptability_task(lang, labels, seed=10))
        self.probe_train = self.encode(toylang.acceptability_task(lang, 512, seed=12))
        self.test = self.encode(toylang.acceptability_task(lang, 1024, seed=13))

    def encode(self, examples):
        tok = self.tokenizer
        ids, attention_mask = data.pad_batch(
            [data.encode_single(tok, tok.encode_words(w), LENGTH) for w, _ in examples], tok.pad_id)
        return {"input_ids": ids, "attention_mask": attention_mask,
                "labels": torch.tensor([label for _, label in examples])}

    def fine_tune(self, state, seed: int, steps: int) -> float:
        return fine_tune(self.config, state, self.fine_tune_train, self.test, seed=seed,
                         steps=steps, lr=1e-3)

    def probe(self, state) -> float:
        return linear_probe(self.config, state, self.probe_train, self.test)


def final_fine_tuned(result: dict) -> float:
    """The mean of a run's fine-tunes of its last snapshot."""
    return statistics.mean(result["fine_tune"][-1])


def electra_ahead(results: list[dict]) -> bool:
    """True when every ELECTRA run ends above every MLM run, fine-tuned."""
    electra = [final_fine_tuned(r) for r in results if r["kind"] == "electra"]
    mlm = [final_fine_tuned(r) for r in results if r["kind"] == "mlm"]
    if not electra or not mlm:
        raise ValueError("the comparison needs at least one ELECTRA run and one MLM run")
    return min(electra) > max(mlm)


def report(results: list[dict]) -> str:
    lines = [f"{'run':<26} {'steps':>6} {'time':>6} | fine-tuned at 25/50/75/100% "
             f"(mean of {len(FINE_TUNE_SEEDS)}) | linear probe"]
    for r in results:
        name = f"{r['kind'].upper()} lr {r['lr']:g} seed {r['seed']}"
        tuned = " / ".join(f"{statistics.mean(f):.3f}" for f in r["fine_tune"])
        probed = " / ".join(f"{p:.3f}" for p in r["probe"])
        lines.append(f"{name:<26} {r['steps']:>6} {r['seconds']:>5.0f}s | {tuned} | {probed}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--layers", type=int, default=4, help="encoder depth (lesson 06: 2)")
    parser.add_argument("--budget", type=float, default=30.0,
                        help="the MLM's steps as a multiple of lesson 06's 480 (ELECTRA gets "
                             "the same FLOPs)")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1], help="pretraining seeds")
    parser.add_argument("--electra-lr", type=float, nargs="+", default=[1e-3])
    parser.add_argument("--mlm-lr", type=float, nargs="+", default=[3e-3])
    parser.add_argument("--fine-tune-steps", type=int, default=300)
    parser.add_argument("--processes", type=int, default=2, help="runs trained at once")
    parser.add_argument("--save", metavar="FOLDER",
                        help="also write every run's encoder snapshots to FOLDER")
    args = parser.parse_args(argv)
    if args.layers < 1 or args.budget <= 0 or args.fine_tune_steps < 1:
        parser.error("--layers and --fine-tune-steps must be at least 1 and --budget positive")

    jobs = [dict(kind=kind, layers=args.layers, lr=lr, seed=seed, budget=args.budget,
                 fine_tune_steps=args.fine_tune_steps, save=args.save)
            for kind, rates in (("electra", args.electra_lr), ("mlm", args.mlm_lr))
            for lr in rates for seed in args.seeds]
    print(f"{len(jobs)} runs, {args.layers} layers, {args.budget:g}x lesson 06's steps, "
          f"{args.processes} at a time", flush=True)
    # The workers import `run` by its module's name, which is not __main__.
    from experiments import electra_depth
    results = run_side_by_side(electra_depth.run, jobs, processes=args.processes)
    print(report(results))
    if electra_ahead(results):
        print("ELECTRA ends above every MLM run, fine-tuned: the paper's direction")
        return 0
    print("ELECTRA does not end above every MLM run, fine-tuned: the paper's direction does not "
          "show in this setting")
    return 1


if __name__ == "__main__":
    sys.exit(main())
