"""`make sighan`: lesson 12's Chinese character masked LM, then its correctors for SIGHAN-2015.

    .venv/bin/python -m experiments.sighan                     # pretrain, then fine-tune all
    .venv/bin/python -m experiments.sighan --only pretrain     # one stage
    .venv/bin/python -m experiments.sighan --only finetune --seeds 0

The recipe is `minibert.course.sighan`. Pretraining saves `lessons/snapshots/sighan/
pretrained.pt` (float16 on disk) with its record; fine-tuning saves one file per model and seed,
`<model>-seed<k>.pt`, with its record (the recipe, the pretrained file's checksum, the first
losses, the SIGHAN-2015 scores and outputs). One thread per run (`torch.set_num_threads(1)`).

A killed run resumes: every few hundred steps its training state goes to `--work`
(`.sighan-work/` by default) and the same command continues from there; `--fresh` starts over.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import sys
import time
from pathlib import Path

import torch

from minibert import spelling
from minibert.course import sighan
from minibert.course.snapshots import checksum, save_snapshots
from minibert.train import first_steps_schedule, train

ROOT = Path(__file__).resolve().parents[1]
WORK = ROOT / ".sighan-work"
CHECK_BATCHES = 8                 # fixed held-out batches whose loss the record keeps


def check_loss(model, s: sighan.Setup) -> float:
    """The masked-LM loss on CHECK_BATCHES fixed batches of held-out sentences."""
    held = dataclasses.replace(s, train_sentences=s.held_out)
    batches = sighan.pretrain_batches(held, seed=10_000)
    model.eval()
    with torch.no_grad():
        return statistics.mean(model(**batches(i)).loss.item() for i in range(CHECK_BATCHES))


def pretrain(recipe: sighan.Recipe = sighan.RECIPE, *, out: Path | None = None,
             work: Path | None = None, fresh: bool = False, progress: bool = True) -> dict:
    """Pretrain the character masked LM (resuming from `work`) and save its file."""
    torch.use_deterministic_algorithms(True)
    s = sighan.setup(recipe)
    work = Path(work or WORK)
    work.mkdir(parents=True, exist_ok=True)
    checkpoint = work / "pretrain.ckpt"
    if fresh:
        checkpoint.unlink(missing_ok=True)
    model = sighan.build_pretraining(s)
    batches = sighan.pretrain_batches(s)

    def loss_fn(m, batch):
        return {"loss": m(**batch).loss, "tokens": int(batch["attention_mask"].sum())}

    history = train(model, batches, loss_fn, steps=recipe.steps, lr=recipe.lr,
                    warmup=recipe.warmup, seed=recipe.seed, progress=progress,
                    desc="pretrain", log_every=1, checkpoint=checkpoint,
                    checkpoint_every=max(1, recipe.steps // 30))
    row = {"steps": recipe.steps, "tokens": round(sum(history.metrics["tokens"])),
           "seconds": round(history.seconds, 1), "first_loss": history.loss[0],
           "final_loss": statistics.mean(history.loss[-max(1, recipe.steps // 20):])}
    record = {**sighan.expected_record(s), **row,
              "first_losses": history.loss[:sighan.FIRST_LOSSES],
              "loss_curve": [round(x, 4) for x in history.loss[::max(1, recipe.steps // 200)]],
              "check_loss": check_loss(model, s), "torch": str(torch.__version__),
              "threads": torch.get_num_threads(), "remake": sighan.remake_command("pretrain")}
    save_snapshots(sighan.pretrained_path(out), [model.state_dict()], record,
                   dtype=torch.float16)
    checkpoint.unlink(missing_ok=True)
    return row


def first_losses(recipe: sighan.Recipe = sighan.RECIPE,
                 count: int = sighan.FIRST_LOSSES) -> list[float]:
    """The pretraining losses of the first `count` steps, without training the rest.

    They fall inside the warmup, so a short run takes the same steps (`first_steps_schedule`).
    """
    s = sighan.setup(recipe)
    warmup = round(recipe.warmup * recipe.steps)
    schedule = first_steps_schedule(recipe.lr, warmup, count)
    model = sighan.build_pretraining(s)
    history = train(model, sighan.pretrain_batches(s), lambda m, b: m(**b).loss, **schedule,
                    seed=recipe.seed, progress=False)
    return history.loss


def correction_step(model, batch):
    out = model(batch["input_ids"], attention_mask=batch["attention_mask"],
                target_ids=batch["target_ids"])
    logged = {"loss": out.loss, "correction": out.correction_loss.item()}
    if out.detection_loss is not None:
        logged["detection"] = out.detection_loss.item()
    return logged


def _corrector_and_pretrained(name: str, s: sighan.Setup, folder,
                              f: sighan.FinetuneRecipe = sighan.FINETUNE):
    pretrained, record = sighan.load_pretrained(s, folder)
    torch.manual_seed(0)                             # the heads start the same for every seed
    model = sighan.build_corrector(name, s, pretrained.float(), f)
    return model, checksum([pretrained.state_dict()])


CURVE_PAIRS = 300                 # held-out synthetic pairs scored along each fine-tuning run


def held_out_f1(model, s: sighan.Setup, pairs) -> dict:
    """Sentence correction F1 on held-out synthetic pairs: argmax, and constrained (margin 0)."""
    sources, targets = [p[0] for p in pairs], [p[1] for p in pairs]
    out = {}
    for label, constrained in (("argmax", False), ("constrained", True)):
        found = sighan.proposals(model, s, sources, constrained=constrained)
        out[label] = spelling.sentence_metrics(sources, spelling.apply_proposals(sources, found),
                                               targets)["c_f1"]
    return out


def finetune(name: str, seed: int, finetune_recipe: sighan.FinetuneRecipe = sighan.FINETUNE, *,
             recipe: sighan.Recipe = sighan.RECIPE, out: Path | None = None,
             work: Path | None = None, fresh: bool = False, progress: bool = True) -> dict:
    """Fine-tune one corrector from the pretrained file, score it on SIGHAN-2015, save it."""
    torch.use_deterministic_algorithms(True)
    s = sighan.setup(recipe)
    work = Path(work or WORK)
    work.mkdir(parents=True, exist_ok=True)
    checkpoint = work / f"{sighan.corrector_path(name, seed).stem}.ckpt"
    if fresh:
        checkpoint.unlink(missing_ok=True)
    f = finetune_recipe
    model, pretrained_checksum = _corrector_and_pretrained(name, s, out, f)
    curve_pairs = sighan.tuning_pairs(s)[:CURVE_PAIRS]
    history = train(model, sighan.finetune_batches(s, seed, f), correction_step, steps=f.steps,
                    lr=f.lr, warmup=f.warmup, seed=seed, progress=progress,
                    desc=f"{name} seed {seed}", checkpoint=checkpoint,
                    checkpoint_every=max(1, f.steps // 10),
                    eval_fn=lambda m: held_out_f1(m, s, curve_pairs), eval_every=f.curve_every)
    scores, outputs = sighan.evaluate(model, s)
    margin, tuning = sighan.choose_margin(model, s)
    sources = [p[0] for p in spelling.load_sighan2015()[0]]
    constrained = spelling.apply_proposals(sources, sighan.proposals(model, s, sources), margin)
    row = {"name": name, "seed": seed, "seconds": round(history.seconds, 1),
           "final_loss": statistics.mean(history.loss[-max(1, f.steps // 20):]),
           **{k: round(v, 4) for k, v in scores.items()}}
    record = {**sighan.expected_corrector_record(name, seed, s, f), **row,
              "constrained": {"margin": margin, "tuning_f1": {str(k): round(v, 4)
                                                              for k, v in tuning.items()},
                              "scores": {k: round(v, 4) for k, v in
                                         sighan.score_outputs(constrained).items()},
                              "outputs": constrained},
              "held_out_curve": {"step": history.eval_step,
                                 **{k: [round(x, 4) for x in v]
                                    for k, v in history.eval.items()}},
              "pretrained_checksum": pretrained_checksum,
              "first_losses": history.loss[:sighan.FIRST_LOSSES],
              "loss_curve": [round(x, 4) for x in history.loss[::max(1, f.steps // 200)]],
              "outputs": outputs, "torch": str(torch.__version__),
              "threads": torch.get_num_threads(),
              "remake": sighan.remake_command(f"finetune SEEDS={seed}")}
    if name == "Soft-Masked":
        sources = [p[0] for p in spelling.load_sighan2015()[0]]
        record["detection_probs"] = [[round(x, 4) for x in row_]
                                     for row_ in sighan.detection_probabilities(model, s, sources)]
    save_snapshots(sighan.corrector_path(name, seed, out), [model.state_dict()], record,
                   dtype=torch.float16)
    checkpoint.unlink(missing_ok=True)
    return row


def finetune_first_losses(name: str, seed: int, finetune_recipe=sighan.FINETUNE,
                          count: int = sighan.FIRST_LOSSES, folder=None,
                          recipe: sighan.Recipe = sighan.RECIPE) -> list[float]:
    """A corrector's first `count` fine-tuning losses, trained again (see first_losses)."""
    s = sighan.setup(recipe)
    f = finetune_recipe
    warmup = round(f.warmup * f.steps)
    schedule = first_steps_schedule(f.lr, warmup, count)
    model, _ = _corrector_and_pretrained(name, s, folder, f)
    history = train(model, sighan.finetune_batches(s, seed, f), correction_step, **schedule,
                    seed=seed, progress=False)
    return history.loss


def baselines(recipe: sighan.Recipe = sighan.RECIPE, out: Path | None = None) -> dict:
    """Score the copy and n-gram baselines on SIGHAN-2015; save their outputs and scores."""
    s = sighan.setup(recipe)
    sources = [p[0] for p in spelling.load_sighan2015()[0]]
    started = time.perf_counter()
    speller = sighan.ngram_speller(s)
    ngram = [speller.correct(x) for x in sources]
    curve_pairs = sighan.tuning_pairs(s)[:CURVE_PAIRS]
    held = [speller.correct(x) for x, _ in curve_pairs]
    record = {"pretrain": sighan.expected_record(s),
              "copy": {"scores": sighan.score_outputs(sources), "outputs": sources},
              "n-gram": {"scores": sighan.score_outputs(ngram), "outputs": ngram,
                         "margin": speller.margin,
                         # the held-out synthetic pairs the correctors' curves are scored on
                         "held_out": sighan.score_outputs(held, curve_pairs)},
              "seconds": round(time.perf_counter() - started, 1),
              "remake": sighan.remake_command("baselines")}
    path = sighan.baselines_path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return {name: record[name]["scores"] for name in ("copy", "n-gram")}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", choices=["pretrain", "finetune", "baselines"], help="one stage")
    parser.add_argument("--out", help=f"folder of the files (default {sighan.FOLDER})")
    parser.add_argument("--work", help=f"folder of the resume state (default {WORK})")
    parser.add_argument("--fresh", action="store_true", help="ignore saved resume state")
    parser.add_argument("--models", nargs="+", choices=sighan.MODELS, default=sighan.MODELS)
    parser.add_argument("--seeds", nargs="+", type=int, default=list(sighan.FINETUNE.seeds))
    parser.add_argument("--finetune-steps", type=int, help="another fine-tuning budget (for "
                        "trying the command out)")
    parser.add_argument("--finetune-lr", type=float, help="another fine-tuning learning rate")
    parser.add_argument("--steps", type=int, help="another pretraining budget (the files then "
                        "record it, and the lesson refuses them: for trying the command out)")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    recipe = sighan.RECIPE
    if args.steps is not None:
        recipe = dataclasses.replace(recipe, steps=args.steps)
    f = sighan.FINETUNE
    if args.finetune_steps is not None:
        f = dataclasses.replace(f, steps=args.finetune_steps)
    if args.finetune_lr is not None:
        f = dataclasses.replace(f, lr=args.finetune_lr)
    out = Path(args.out) if args.out else None
    started = time.perf_counter()
    if args.only in (None, "pretrain"):
        row = pretrain(recipe, out=out, work=args.work, fresh=args.fresh)
        print("pretrained:", row, flush=True)
    if args.only in (None, "baselines"):
        print("baselines:", baselines(recipe, out), flush=True)
    if args.only in (None, "finetune"):
        for seed in args.seeds:
            for name in args.models:
                row = finetune(name, seed, f, recipe=recipe, out=out, work=args.work,
                               fresh=args.fresh)
                print("fine-tuned:", row, flush=True)
    print(f"done in {time.perf_counter() - started:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
