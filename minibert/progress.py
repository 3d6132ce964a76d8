"""Progress bars that read well wherever a lesson is seen.

In JupyterLab a training loop shows tqdm's live widget bar. A widget cannot be saved finished:
a viewer without widget support (GitHub, nbconvert, the course site) shows its text fallback
as it was when the bar was created, `0%| | 0/600`. So the lesson runner (`make lessons`) sets
MINIBERT_PROGRESS=text, and the bars it stores are plain text lines, which end finished:

    MLM: 100%|██████████| 480/480 [00:21<00:00, 22.4it/s]

    MINIBERT_PROGRESS=auto   (or unset) tqdm.auto: a widget in a notebook, text in a terminal
    MINIBERT_PROGRESS=text   plain text on stdout, whatever the front end
"""

from __future__ import annotations

import os
import sys

__all__ = ["ENV", "MODES", "finish_lines", "progress_bar", "progress_mode"]

ENV = "MINIBERT_PROGRESS"
MODES = ("auto", "text")


def progress_mode() -> str:
    """The mode MINIBERT_PROGRESS asks for ("auto" when it is unset or empty)."""
    mode = os.environ.get(ENV, "").strip().lower() or "auto"
    if mode not in MODES:
        raise ValueError(f"{ENV}={os.environ[ENV]!r} is not a progress mode: set it to one of "
                         f"{', '.join(MODES)} (or unset it)")
    return mode


def progress_bar(*, total: int, desc: str | None = None, initial: int = 0,
                 disable: bool = False, mininterval: float = 0.5):
    """A tqdm bar over `total` steps, live in a notebook, plain text when MINIBERT_PROGRESS=text.

    Use it like tqdm: `bar.update(1)`, `bar.set_postfix(loss=...)`, `bar.close()`.
    """
    if progress_mode() == "text":
        from tqdm.std import tqdm

        # Redrawn at most every 30 s: a stored cell keeps only the finished line (the runner
        # folds carriage returns, see finish_lines), so fewer redraws mean less text in between.
        # No width: the line is never cut (the bar is 10 characters, the postfix whole), and it
        # does not depend on the terminal that made it.
        return tqdm(total=total, initial=initial, desc=desc, disable=disable, file=sys.stdout,
                    mininterval=max(mininterval, 30.0), ncols=None, dynamic_ncols=False)
    from tqdm.auto import tqdm

    return tqdm(total=total, initial=initial, desc=desc, disable=disable,
                mininterval=mininterval, dynamic_ncols=True)


def finish_lines(text: str) -> str:
    """`text` as a terminal would leave it: each line keeps what follows its last carriage return.

    A text progress bar redraws itself with "\\r"; a stored output keeps every redraw, and a
    viewer may show them all. Folding them leaves the last state of each bar (the finished one).
    """
    lines = []
    for line in text.split("\n"):
        pieces = [piece for piece in line.split("\r") if piece]
        lines.append(pieces[-1] if pieces else "")
    return "\n".join(lines)
