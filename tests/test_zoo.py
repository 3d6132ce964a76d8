"""The checkpoint zoo: the committed files were made by this code under its one recipe, a run
resumes exactly, and 1 and 2 data-parallel processes train the same steps."""

import dataclasses
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from experiments import zoo as zoo_command
from minibert.course import paths, zoo
from minibert.course.snapshots import SnapshotError, load_snapshots

ROOT = Path(__file__).resolve().parents[1]
TINY = dataclasses.replace(zoo.RECIPE, steps=64)


def deterministic(function, *args, **kwargs):
    was = torch.are_deterministic_algorithms_enabled()
    torch.use_deterministic_algorithms(True)                   # as the zoo runs are
    try:
        return function(*args, **kwargs)
    finally:
        torch.use_deterministic_algorithms(was)


def test_every_member_has_its_file_in_the_repository():
    assert sorted(p.name for p in paths.ZOO.glob("*.pt")) == sorted(
        zoo.path_of(name).name for name in zoo.MEMBERS)
    assert sum(p.stat().st_size for p in paths.ZOO.glob("*.pt")) < 40e6


@pytest.mark.parametrize("name", list(zoo.MEMBERS))
def test_the_committed_file_was_made_by_this_code(name):
    # The record matches this recipe (load checks it), the shapes match the model this code
    # builds, the float16 copy gives the recorded loss, and the first 16 steps, trained again
    # here, give the losses recorded while the run was made.
    loaded = zoo.load(name)
    record = loaded.record
    assert record["steps"] == zoo.RECIPE.steps and record["stored_dtype"] == "float16"
    assert record["remake"] == zoo.remake_command(name)
    s = zoo.setup()
    again = zoo_command.check_loss(name, loaded.model if zoo.MEMBERS[name].teacher is None
                                   else _with_teacher(name, loaded.model), s)
    assert again == pytest.approx(record["check_loss"], rel=2e-2)
    replayed = deterministic(zoo_command.first_losses, name)
    assert replayed == pytest.approx(record["first_losses"], rel=1e-4)


def _with_teacher(name, student):
    teacher = zoo.load(zoo.MEMBERS[name].teacher).model
    model = zoo.build(name, teacher=teacher)
    zoo.saved_part(name, model).load_state_dict(student.state_dict())
    return model


def test_a_damaged_or_stale_file_is_refused_with_the_command_that_remakes_it(tmp_path):
    source = zoo.path_of("TinyBERT")
    copy = tmp_path / source.name
    raw = source.read_bytes()
    copy.write_bytes(raw[: len(raw) // 3])
    with pytest.raises(SnapshotError, match="make zoo ONLY=TinyBERT"):
        zoo.load("TinyBERT", folder=tmp_path)
    shutil.copy(source, copy)
    other = dataclasses.replace(zoo.RECIPE, steps=zoo.RECIPE.steps * 2)
    with pytest.raises(SnapshotError, match=r"recipe = .*stale.*make zoo ONLY=TinyBERT"):
        load_snapshots(copy, remake=zoo.remake_command("TinyBERT"),
                       expect=zoo.expected_record("TinyBERT", zoo.setup(other)))
    with pytest.raises(ValueError, match="fraction must be one of"):
        zoo.load("BERT", 0.3)
    with pytest.raises(KeyError, match="no zoo member 'GPT'"):
        zoo.load("GPT")


def test_batches_depend_on_their_index_alone():
    s = zoo.setup()
    for name, m in zoo.MEMBERS.items():
        a, b = m.batches(s, 0), m.batches(s, 0)
        later = b(7)                                           # b asked out of order
        first = a(7)
        assert all(torch.equal(first[k], later[k]) for k in first
                   if isinstance(first[k], torch.Tensor)), name


def test_a_run_trains_saves_and_resumes_where_it_was_killed(tmp_path, monkeypatch):
    # A tiny budget, end to end: BERT, then its student; the student's run is killed at step 50
    # and run again, and ends with the same file as an uninterrupted run.
    out, work = tmp_path / "out", tmp_path / "work"
    deterministic(zoo_command.run, "BERT", recipe=TINY, out=str(out), work=str(work),
                  progress=False)
    whole = tmp_path / "whole"
    whole.mkdir()
    shutil.copy(out / "bert.pt", whole / "bert.pt")
    deterministic(zoo_command.run, "DistilBERT", recipe=TINY, out=str(whole), work=str(work),
                  progress=False)

    member = zoo.MEMBERS["DistilBERT"]

    def killed_at_step_50(s, seed):
        batches = member.batches(s, seed)

        def next_batch(index):
            if index == 50 * TINY.shards:
                raise KeyboardInterrupt
            return batches(index)
        return next_batch
    monkeypatch.setitem(zoo.MEMBERS, "DistilBERT",
                        dataclasses.replace(member, batches=killed_at_step_50))
    with pytest.raises(KeyboardInterrupt):
        deterministic(zoo_command.run, "DistilBERT", recipe=TINY, out=str(out), work=str(work),
                      progress=False)
    assert (work / "distilbert.ckpt").is_file() and not (out / "distilbert.pt").exists()
    monkeypatch.setitem(zoo.MEMBERS, "DistilBERT", member)
    deterministic(zoo_command.run, "DistilBERT", recipe=TINY, out=str(out), work=str(work),
                  progress=False)

    resumed, resumed_states = load_snapshots(out / "distilbert.pt", remake="x")
    reference, reference_states = load_snapshots(whole / "distilbert.pt", remake="x")
    assert resumed["steps"] == 64 and resumed["teacher"] == "BERT" and len(resumed_states) == 4
    assert resumed["first_losses"] == reference["first_losses"]
    assert resumed["final_loss"] == pytest.approx(reference["final_loss"], rel=1e-6)
    assert resumed["tokens"] == reference["tokens"] > 64 * zoo.RECIPE.batch * 10
    for a, b in zip(resumed_states, reference_states):
        assert all(torch.equal(a[k], b[k]) for k in a)
    assert not list(work.iterdir())                            # the resume state is cleaned up


def test_two_processes_train_the_same_steps_as_one(tmp_path):
    # torchrun, 2 processes on CPU (gloo), each taking one of the two micro-batches of every
    # step, against the same command on one process.
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    common = ["-m", "experiments.zoo", "--only", "RoBERTa", "--steps", "32", "--fresh"]
    single = subprocess.run([sys.executable, *common, "--out", str(tmp_path / "one"),
                             "--work", str(tmp_path / "w1"), "--processes", "1"],
                            cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert single.returncode == 0, single.stderr[-2000:]
    double = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--nproc_per_node",
                             "2", "--master_port", "29533", *common, "--out",
                             str(tmp_path / "two"), "--work", str(tmp_path / "w2")],
                            cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert double.returncode == 0, double.stderr[-2000:]
    one, _ = load_snapshots(tmp_path / "one" / "roberta.pt", remake="x")
    two, two_states = load_snapshots(tmp_path / "two" / "roberta.pt", remake="x")
    assert two["processes"] == 2 and one["processes"] == 1
    assert two["first_losses"] == pytest.approx(one["first_losses"], rel=1e-5)
    assert two["final_loss"] == pytest.approx(one["final_loss"], rel=1e-4)
    assert two["tokens"] == one["tokens"]
