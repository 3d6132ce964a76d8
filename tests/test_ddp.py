"""Data parallelism is exact: 2 processes x batch B take the same step as 1 process on 2B."""

import socket
import subprocess
import sys
from pathlib import Path

import torch

from minibert.distributed import check_batch, check_model, one_step

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_two_processes_equal_one_process_on_the_whole_batch(tmp_path):
    out = tmp_path / "ddp.pt"
    command = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2",
               "--master_addr", "127.0.0.1", "--master_port", str(free_port()),
               "-m", "minibert.distributed", "--out", str(out), "--per-rank-batch", "4"]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, f"torchrun failed:\n{done.stdout}\n{done.stderr}"
    distributed = torch.load(out)

    model = check_model()
    one_step(model, check_batch(8))              # one process, the concatenated batch
    single = model.state_dict()
    assert distributed.keys() == single.keys()
    start = check_model().state_dict()
    moved = max((single[k] - start[k]).abs().max().item() for k in single)
    assert moved > 1e-4, "the step did not change the parameters"
    gap = max((distributed[k] - single[k]).abs().max().item() for k in single)
    assert gap <= 1e-6, f"2 x 4 and 1 x 8 differ by {gap:.2e}"
