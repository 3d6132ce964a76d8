"""Data-parallel training on CPU with `torch.distributed` (gloo), launched by torchrun.

Each of N processes holds a full copy of the model, computes the gradient of its own slice
of the batch, and the gradients are averaged across processes (all-reduce) before every
optimizer step; all copies then take the same step and stay identical. With equal slices of
equal weight, one step of N processes x batch B equals one step of one process on batch N*B.

    python -m torch.distributed.run --nproc_per_node 2 -m minibert.distributed --out step.pt

runs that one step (the check used by tests/test_ddp.py and lesson 03) and saves the
parameters from rank 0.
"""

from __future__ import annotations

import argparse
import os

import torch
import torch.distributed as dist
from torch import nn

from minibert.atomic import atomic_path

__all__ = ["average_gradients", "check_batch", "check_model", "init_from_env", "main",
           "one_step"]


def init_from_env() -> tuple[int, int]:
    """Join the process group described by torchrun's variables; return (rank, world_size)."""
    needed = ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")
    missing = [name for name in needed if name not in os.environ]
    if missing:
        raise RuntimeError(
            f"{', '.join(missing)} not set: start this with torchrun, e.g. "
            f"python -m torch.distributed.run --nproc_per_node 2 -m minibert.distributed"
        )
    if not dist.is_initialized():
        dist.init_process_group("gloo")           # the CPU backend
    return dist.get_rank(), dist.get_world_size()


def average_gradients(model: nn.Module) -> None:
    """Replace every parameter's gradient by its mean over all processes (sum, then / N)."""
    world = dist.get_world_size()
    for p in model.parameters():
        if p.grad is not None:
            dist.all_reduce(p.grad, op=dist.ReduceOp.SUM)
            p.grad /= world


def check_model() -> nn.Module:
    """The tiny RoBERTa of the check, with dropout 0 so every process computes the same."""
    from .models.roberta import RobertaForMaskedLM, roberta_config

    torch.manual_seed(0)
    config = roberta_config(16, vocab_size=60, hidden_size=32, num_layers=2, num_heads=4,
                            dropout=0.0, attention_dropout=0.0)
    return RobertaForMaskedLM(config)


def check_batch(batch_size: int) -> dict[str, torch.Tensor]:
    """A fixed masked batch (B, 16): no padding and the same number of masks in every row,
    so the mean loss of each half is exactly half of the work of the mean over the whole."""
    from .masking import mask_tokens

    generator = torch.Generator().manual_seed(1)
    ids = torch.randint(5, 60, (batch_size, 16), generator=generator)              # (B, T)
    masked, labels = mask_tokens(ids, vocab_size=60, mask_id=4, special_ids=[0, 1, 2, 3, 4],
                                 generator=generator)                              # (B, T) x 2
    return {"input_ids": masked, "mlm_labels": labels}


def one_step(model: nn.Module, batch: dict[str, torch.Tensor], lr: float = 0.1,
             distributed: bool = False) -> None:
    """Forward, backward, (all-reduce), one SGD step.

    SGD, not Adam, for the check: Adam's first step divides by |g|, so a gradient that is 0 up
    to rounding could move by a whole learning rate; SGD keeps rounding differences tiny.
    """
    model.train()
    model.zero_grad(set_to_none=True)
    model(**batch).loss.backward()
    if distributed:
        average_gradients(model)
    with torch.no_grad():
        for p in model.parameters():
            if p.grad is not None:
                p -= lr * p.grad


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="where rank 0 saves the parameters")
    parser.add_argument("--per-rank-batch", type=int, default=4)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    rank, world = init_from_env()
    try:
        model = check_model()
        full = check_batch(args.per_rank_batch * world)
        rows = slice(rank * args.per_rank_batch, (rank + 1) * args.per_rank_batch)
        one_step(model, {k: v[rows] for k, v in full.items()}, distributed=True)  # my slice
        if rank == 0:
            with atomic_path(args.out) as temporary:
                torch.save({k: v.detach().clone() for k, v in model.state_dict().items()},
                           temporary)
            print(f"{world} processes x batch {args.per_rank_batch}: one step done, "
                  f"saved to {args.out}")
    finally:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
