"""Execute the lessons in place and record how long each one takes.

    python -m minibert.course.notebooks lessons/01_bert.ipynb lessons/02_roberta.ipynb

Each notebook runs top to bottom in a fresh "python3" kernel, from its own folder, with
MPLBACKEND=Agg and MINIBERT_PROGRESS=text (progress bars are stored as finished text lines, not
as widgets a viewer shows at 0%), and is saved with its new outputs. The seconds per lesson go to
`lessons/timings.json`, so the course's time budget can be checked. A cell that raises stops
that notebook (which is then left unchanged on disk) and makes the command exit with status 1.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from .. import progress
from ..atomic import atomic_path, write_text_atomically
from . import paths

__all__ = ["BUDGET_SECONDS", "RUNNER_STAMP", "TIMINGS", "coalesce_streams", "main", "read_timings",
           "run_notebook"]

BUDGET_SECONDS = 150  # what one lesson may take on a 2-core CPU
TIMINGS = paths.LESSONS / "timings.json"
# Written into the metadata of every notebook the runner saves: its progress bars are text.
RUNNER_STAMP = {"progress": "text"}


def run_notebook(path: str | Path, *, timeout: int = 600, kernel: str = "python3") -> float:
    """Execute the notebook at `path` in place; return its wall time in seconds.

    Raises nbclient's CellExecutionError (with the cell's traceback) if a cell fails; the
    notebook on disk is then not modified.
    """
    import nbformat  # the runner's dependencies are only needed when lessons are run
    from nbclient import NotebookClient

    path = Path(path)
    if path.suffix != ".ipynb" or not path.is_file():
        raise FileNotFoundError(f"no notebook at {path} (expected an existing .ipynb file)")
    os.environ["MPLBACKEND"] = "Agg"  # inherited by the kernel: figures render headless
    os.environ[progress.ENV] = "text"  # and progress bars are stored as finished text lines
    notebook = nbformat.read(path, as_version=4)
    client = NotebookClient(
        notebook,
        timeout=timeout,
        kernel_name=kernel,
        record_timing=False,  # no timestamps in cell metadata: reruns give clean diffs
        resources={"metadata": {"path": str(path.parent.resolve())}},  # cwd = lesson folder
    )
    start = time.perf_counter()
    client.execute()
    seconds = time.perf_counter() - start
    coalesce_streams(notebook)
    notebook.metadata["minibert"] = dict(RUNNER_STAMP)
    with atomic_path(path) as temporary:  # a failed write leaves the lesson as it was
        nbformat.write(notebook, temporary)
    return seconds


def coalesce_streams(notebook) -> None:
    """Merge each code cell's consecutive outputs of one stream (stdout or stderr), in place.

    How a cell's printed text is cut into outputs depends on when the kernel happened to flush
    it, so two runs of the same cell can save the same text in a different number of pieces.
    One output per stretch of a stream keeps the saved notebook, and its diffs, the same.
    Carriage returns are then folded as a terminal would (a text progress bar keeps only its
    last, finished line).
    """
    for cell in notebook.cells:
        if cell.get("cell_type") != "code":
            continue
        merged = []
        for output in cell.get("outputs", []):
            previous = merged[-1] if merged else None
            if (output.get("output_type") == "stream" and previous is not None
                    and previous.get("output_type") == "stream"
                    and previous.get("name") == output.get("name")):
                previous["text"] = "".join(previous["text"]) + "".join(output["text"])
            else:
                merged.append(output)
        for output in merged:
            if output.get("output_type") == "stream":
                output["text"] = progress.finish_lines("".join(output["text"]))
        cell["outputs"] = merged


def _update_timings(timings_path: Path, seconds: dict[str, float]) -> None:
    """Merge `seconds` (lesson name -> seconds) into the JSON file, keeping other lessons."""
    timings = read_timings(timings_path, warn=True)
    timings.update({name: round(value, 1) for name, value in seconds.items()})
    write_text_atomically(timings_path, json.dumps(dict(sorted(timings.items())), indent=2) + "\n")


def read_timings(timings_path: Path, *, warn: bool = False) -> dict[str, float]:
    """The seconds per lesson in `timings_path` ({} if there is no file).

    A file that is not a JSON object of numbers (cut short, edited by hand) raises ValueError
    naming the fix, or with warn=True is reported and read as empty (it is then rewritten).
    """
    if not timings_path.is_file():
        return {}
    try:
        timings = json.loads(timings_path.read_text(encoding="utf-8"))
        if not isinstance(timings, dict) or not all(
                isinstance(v, (int, float)) and not isinstance(v, bool) for v in timings.values()):
            raise ValueError("expected a JSON object of lesson name -> seconds")
    except (ValueError, UnicodeDecodeError) as error:
        problem = (f"{timings_path} is unreadable ({error}); delete it and `make lessons` "
                   "writes it again")
        if not warn:
            raise ValueError(problem) from None
        print(f"warning: {problem}; starting it afresh", file=sys.stderr)
        return {}
    return timings


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m minibert.course.notebooks", description="Execute lessons in place."
    )
    parser.add_argument("notebooks", nargs="+", type=Path, help="the .ipynb files to run")
    parser.add_argument("--timeout", type=int, default=600, help="seconds allowed per cell")
    parser.add_argument(
        "--timings", type=Path, default=TIMINGS, help="JSON file of seconds per lesson"
    )
    args = parser.parse_args(argv)

    from nbclient.exceptions import CellExecutionError, DeadKernelError

    seconds: dict[str, float] = {}
    failed: list[str] = []
    for path in args.notebooks:
        print(f"running {path} ...", flush=True)
        try:
            elapsed = run_notebook(path, timeout=args.timeout)
        except FileNotFoundError as error:
            reason = str(error)
        except CellExecutionError as error:
            reason = f"a cell raised an error; the notebook was not saved.\n{error}"
        except TimeoutError:
            reason = f"a cell ran longer than {args.timeout} s; the notebook was not saved."
        except DeadKernelError as error:
            reason = f"the kernel died (out of memory?); the notebook was not saved.\n{error}"
        else:
            seconds[path.stem] = elapsed
            over = f"  (over the {BUDGET_SECONDS} s budget)" if elapsed > BUDGET_SECONDS else ""
            print(f"{path}: {elapsed:.1f} s{over}", flush=True)
            continue
        print(f"FAILED {path}: {reason}", file=sys.stderr, flush=True)
        failed.append(str(path))

    if seconds:
        _update_timings(args.timings, seconds)
        total = sum(seconds.values())
        print(f"total {total:.1f} s for {len(seconds)} lesson(s); timings in {args.timings}")
    if failed:
        print(f"{len(failed)} lesson(s) failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
