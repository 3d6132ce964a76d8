"""experiments/electra_depth.py: the verdict, its errors, and the command run end to end on a
budget small enough for a test (the real run takes about twenty minutes)."""

import subprocess
import sys
from pathlib import Path

import pytest
import torch

from experiments import electra_depth
from minibert.course.snapshots import SNAPSHOTS_DIR, load_snapshots, vocabulary_digest
from minibert.formats import pack_documents

ROOT = Path(__file__).resolve().parents[1]


def result(kind, *final):
    return {"kind": kind, "fine_tune": [[0.5, 0.5], list(final)]}


def test_electra_is_ahead_only_when_every_run_ends_above_every_mlm_run():
    mlm = [result("mlm", 0.96, 0.98), result("mlm", 0.95, 0.97)]          # means 0.97, 0.96
    assert electra_depth.electra_ahead([result("electra", 0.99, 0.98), *mlm])
    assert not electra_depth.electra_ahead([result("electra", 0.99, 0.98),
                                            result("electra", 0.97, 0.97), *mlm])
    tie = result("electra", 0.96, 0.98)                                   # mean 0.97
    assert not electra_depth.electra_ahead([tie, *mlm])


def test_the_verdict_needs_both_kinds():
    with pytest.raises(ValueError, match="at least one ELECTRA run and one MLM run"):
        electra_depth.electra_ahead([result("mlm", 0.9, 0.9)])


def test_the_budget_matches_the_lesson_and_counts_the_generator():
    lang, tokenizer = electra_depth.language()
    sequences = pack_documents(lang.documents(3000, (4, 8), seed=1), tokenizer,
                               electra_depth.LENGTH)
    mean_words = sum(len(s) - 2 for s in sequences) / len(sequences)
    # Lesson 06 prints: MLM 480 steps, ELECTRA 432 steps at its budget (2 layers).
    shallow = electra_depth.configs(2, tokenizer.vocab_size)
    assert electra_depth.budget_steps(*shallow, 1.0, mean_words) == {"mlm": 480, "electra": 432}
    deep = electra_depth.budget_steps(*electra_depth.configs(4, tokenizer.vocab_size), 30.0,
                                      mean_words)
    assert deep["mlm"] == 14400 and deep["mlm"] > deep["electra"]


def test_bad_arguments_name_the_fix():
    with pytest.raises(ValueError, match="kind must be 'mlm' or 'electra'"):
        electra_depth.run("bert", layers=1, lr=1e-3, seed=0, budget=1.0)
    with pytest.raises(ValueError, match="raise --budget"):
        electra_depth.run("mlm", layers=1, lr=1e-3, seed=0, budget=0.001)


def test_the_command_trains_side_by_side_and_reports_every_run():
    command = [sys.executable, "-m", "experiments.electra_depth", "--layers", "1",
               "--budget", "0.04", "--seeds", "0", "--fine-tune-steps", "2"]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode in (0, 1), done.stderr
    assert "2 runs, 1 layers, 0.04x lesson 06's steps, 2 at a time" in done.stdout
    assert "ELECTRA lr 0.001 seed 0" in done.stdout and "MLM lr 0.003 seed 0" in done.stdout
    verdict = "ELECTRA ends above every MLM run" if done.returncode == 0 else "does not end above"
    assert verdict in done.stdout


LESSON_SNAPSHOTS = [("mlm", 3e-3), ("electra", 1e-3)]


@pytest.mark.parametrize("kind, lr", LESSON_SNAPSHOTS)
def test_the_lesson_snapshots_were_made_by_this_code(kind, lr):
    # Lesson 06, section 10, fine-tunes these; `make electra-depth-snapshots` makes them.
    path = electra_depth.snapshot_path(SNAPSHOTS_DIR, kind, 4, 30.0, lr, 0)
    setup = electra_depth.pretraining(kind, layers=4, lr=lr, seed=0, budget=30.0)
    meta, snapshots = load_snapshots(
        path, remake="make electra-depth-snapshots",
        expect={"kind": kind, "layers": 4, "lr": lr, "seed": 0, "budget": 30.0,
                "steps": setup["steps"], "config": setup["config"].to_dict(),
                "vocabulary": vocabulary_digest(setup["tokenizer"].id_to_token)})
    assert len(snapshots) == 4
    encoder = setup["encoder"](setup["model"])
    shapes = {name: tuple(t.shape) for name, t in encoder.state_dict().items()}
    assert all({name: tuple(t.shape) for name, t in s.items()} == shapes for s in snapshots)
    # The first steps, trained again here, give the losses recorded while the run was made.
    deterministic = torch.are_deterministic_algorithms_enabled()
    torch.use_deterministic_algorithms(True)                    # as the run was
    try:
        replayed = electra_depth.first_losses(kind, layers=4, lr=lr, seed=0, budget=30.0)
    finally:
        torch.use_deterministic_algorithms(deterministic)
    assert replayed == pytest.approx(meta["first_losses"], rel=1e-4)
    assert len(replayed) == electra_depth.FIRST_LOSSES
