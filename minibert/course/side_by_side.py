"""Run independent jobs at the same time, one process per core, with the same results.

The lessons train on one thread (at their sizes one thread is faster than two), so on a 2-core
machine one core waits. Two trainings that do not depend on each other can use it: each runs in
its own process, on one thread, and returns what it would have returned in this process, bit for
bit, because a training run depends only on its arguments and its seed.

    models = run_side_by_side(pretrain, [dict(config=c, steps=100, seed=0, ...),
                                         dict(config=d, steps=100, seed=0, ...)])

The processes are started with "spawn" (a fresh interpreter), not "fork", because forking a
process that already runs threads, like a Jupyter kernel with torch loaded, is unsafe. A spawned
process imports the function by name, so it must be defined in a module (such as
`minibert.course.sentence_pairs.pretrain`), not in a notebook or inside another function.
"""

from __future__ import annotations

import multiprocessing
import pickle
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import torch

__all__ = ["run_side_by_side"]


def run_side_by_side(function: Callable[..., Any], jobs: Sequence[Mapping[str, Any]], *,
                     processes: int = 2, threads: int = 1) -> list[Any]:
    """Return `[function(**job) for job in jobs]`, computed by `processes` processes at once.

    Each process uses `threads` torch threads and copies this process's
    `torch.use_deterministic_algorithms` setting. `processes=1` (or a single job) runs the jobs
    here, one after the other: the reference the parallel run must equal.
    """
    for name, value in (("processes", processes), ("threads", threads)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be a positive int, got {value!r}")
    if not all(isinstance(job, Mapping) for job in jobs):
        raise TypeError("jobs must be a list of dicts of keyword arguments, "
                        "e.g. [dict(steps=100, seed=0), dict(steps=100, seed=1)]")
    if processes == 1 or len(jobs) <= 1:
        return [function(**job) for job in jobs]
    _check_importable(function)
    payloads = [_pickled(function, job, index) for index, job in enumerate(jobs)]
    context = multiprocessing.get_context("spawn")
    deterministic = torch.are_deterministic_algorithms_enabled()
    with context.Pool(min(processes, len(jobs)), initializer=_set_up_worker,
                      initargs=(threads, deterministic)) as pool:
        results = pool.map(_run_job, payloads, chunksize=1)
    return [pickle.loads(result) for result in results]


def _check_importable(function: Callable) -> None:
    """A spawned process finds `function` by module and name; fail here if it cannot."""
    module = getattr(function, "__module__", None)
    name = getattr(function, "__qualname__", "")
    if module in (None, "__main__") or "<" in name:
        where = "in a notebook or script" if module == "__main__" else "inside another function"
        raise TypeError(
            f"run_side_by_side cannot send {name or function!r} to another process: it is defined "
            f"{where}, and a new process can only import functions from a module. Move it into "
            "a .py module (for example next to minibert/course/sentence_pairs.py) and import "
            "it, or "
            "pass processes=1 to run the jobs here, one after the other.")


def _pickled(function: Callable, job: Mapping[str, Any], index: int) -> bytes:
    try:
        return pickle.dumps((function, dict(job)))
    except Exception as error:  # which argument cannot be sent, not a trace from the pool
        bad = [key for key, value in job.items() if not _can_pickle(value)]
        raise TypeError(f"job {index} cannot be sent to another process: argument(s) {bad} "
                        f"cannot be pickled ({error}). Pass plain data (lists, configs, "
                        "tokenizers) and build generators and models inside the function."
                        ) from None


def _can_pickle(value: Any) -> bool:
    try:
        pickle.dumps(value)
    except Exception:
        return False
    return True


def _set_up_worker(threads: int, deterministic: bool) -> None:
    torch.set_num_threads(threads)
    torch.use_deterministic_algorithms(deterministic)


def _run_job(payload: bytes) -> bytes:
    # Results travel back as plain pickles: tensors by value, not through shared memory.
    function, job = pickle.loads(payload)
    return pickle.dumps(function(**job))
