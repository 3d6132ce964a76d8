"""minibert.course.snapshots: saved pretraining snapshots and the record that keeps them honest."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from minibert import finetune
from minibert.config import BertConfig
from minibert.course.snapshots import (
    FORMAT,
    SNAPSHOTS_DIR,
    SnapshotError,
    load_snapshots,
    save_snapshots,
    vocabulary_digest,
)

REMAKE = "make electra-depth-snapshots"


def tiny_config(**changes) -> BertConfig:
    return BertConfig.from_preset("bert-nano", vocab_size=12, max_position=8, num_layers=1,
                                  **changes)


def states(count=2):
    return [finetune.encoder_from(tiny_config(), None, seed=s).state_dict() for s in range(count)]


def test_a_saved_file_loads_back_with_its_record(tmp_path):
    snapshots = states()
    meta = {"steps": 96, "config": tiny_config().to_dict(), "vocabulary": vocabulary_digest(["a"])}
    path = save_snapshots(tmp_path / "deep" / "run.pt", snapshots, meta)
    loaded_meta, loaded = load_snapshots(path, remake=REMAKE, expect={"steps": 96})
    assert loaded_meta == {**meta, "stored_dtype": None} and len(loaded) == 2
    for saved, back in zip(snapshots, loaded):
        assert saved.keys() == back.keys()
        assert all(torch.equal(saved[name], back[name]) for name in saved)


def test_a_stale_file_is_refused_with_the_command_that_remakes_it(tmp_path):
    path = save_snapshots(tmp_path / "run.pt", states(1), {"steps": 96, "vocabulary": "abc"})
    with pytest.raises(ValueError, match=rf"steps = 96, but this code expects 100.*{REMAKE}"):
        load_snapshots(path, remake=REMAKE, expect={"steps": 100})
    with pytest.raises(ValueError, match=rf"does not record 'config'.*{REMAKE}"):
        load_snapshots(path, remake=REMAKE, expect={"config": {}})


def test_a_missing_or_foreign_file_names_the_fix(tmp_path):
    with pytest.raises(FileNotFoundError, match=rf"missing: run `{REMAKE}`"):
        load_snapshots(tmp_path / "none.pt", remake=REMAKE)
    torch.save({"format": FORMAT + 1, "meta": {}, "snapshots": []}, tmp_path / "new.pt")
    with pytest.raises(ValueError, match=rf"not a snapshot file of format {FORMAT}"):
        load_snapshots(tmp_path / "new.pt", remake=REMAKE)
    torch.save(torch.zeros(2), tmp_path / "tensor.pt")
    with pytest.raises(ValueError, match="found 'Tensor'"):
        load_snapshots(tmp_path / "tensor.pt", remake=REMAKE)
    with pytest.raises(ValueError, match="at least one state dict"):
        save_snapshots(tmp_path / "empty.pt", [], {})


def test_the_vocabulary_digest_tells_orders_apart():
    assert vocabulary_digest(["[PAD]", "a", "b"]) == vocabulary_digest(["[PAD]", "a", "b"])
    assert vocabulary_digest(["[PAD]", "a", "b"]) != vocabulary_digest(["[PAD]", "b", "a"])


def test_the_lesson_snapshots_are_in_the_repository():
    files = sorted(path.name for path in SNAPSHOTS_DIR.glob("*.pt"))
    assert files == ["electra_4_layers_30x_lr0.001_seed0.pt", "mlm_4_layers_30x_lr0.003_seed0.pt"]


def test_flipped_bytes_are_caught_by_the_checksum(tmp_path):
    path = save_snapshots(tmp_path / "run.pt", states(1), {"steps": 96})
    raw = bytearray(path.read_bytes())
    # flip 64 bytes inside the largest tensor's data (the file is a zip of raw tensor bytes)
    state = states(1)[0]
    biggest = max(state.values(), key=lambda t: t.numel())
    start = bytes(raw).find(biggest.numpy().tobytes()[:64])
    assert start > 0
    raw[start:start + 64] = bytes(b ^ 0xFF for b in raw[start:start + 64])
    path.write_bytes(bytes(raw))
    with pytest.raises(SnapshotError, match=rf"does not match its checksum.*{REMAKE}"):
        load_snapshots(path, remake=REMAKE)


@pytest.mark.parametrize("damage", ["truncated", "empty", "text"])
def test_a_damaged_file_names_the_remake_command(tmp_path, damage):
    path = save_snapshots(tmp_path / "run.pt", states(1), {"steps": 96})
    raw = path.read_bytes()
    path.write_bytes({"truncated": raw[: len(raw) // 2], "empty": b"",
                      "text": b"version https://git-lfs.github.com/spec/v1\n"}[damage])
    with pytest.raises(SnapshotError, match=rf"cannot be read as a snapshot file.*{REMAKE}"):
        load_snapshots(path, remake=REMAKE)


def test_a_failed_save_leaves_the_old_file_and_records_must_be_plain(tmp_path):
    path = save_snapshots(tmp_path / "run.pt", states(1), {"steps": 96})
    before = path.read_bytes()
    with pytest.raises(TypeError, match="schedule is a function"):
        save_snapshots(path, states(1), {"schedule": lambda s: s})
    with pytest.raises(TypeError, match=r"lr is a float32.*float\(x\)"):
        save_snapshots(path, states(1), {"lr": np.float32(1e-3)})
    with pytest.raises(TypeError, match="finite"):
        save_snapshots(path, states(1), {"loss": float("nan")})
    assert path.read_bytes() == before
    assert load_snapshots(path, remake=REMAKE)[0]["steps"] == 96
    # a NumPy float64 is a float: it is saved as a plain number and loads back
    save_snapshots(path, states(1), {"lr": np.float64(1e-3)})
    assert type(load_snapshots(path, remake=REMAKE)[0]["lr"]) is float


def test_half_precision_on_disk_loads_as_float32_and_says_so(tmp_path):
    snapshots = states(1)
    path = save_snapshots(tmp_path / "half.pt", snapshots, {"steps": 1}, dtype=torch.float16)
    meta, (loaded,) = load_snapshots(path, remake=REMAKE)
    assert meta["stored_dtype"] == "float16"
    for name, tensor in snapshots[0].items():
        assert loaded[name].dtype == tensor.dtype
        assert torch.allclose(loaded[name], tensor, rtol=1e-3, atol=1e-4)
