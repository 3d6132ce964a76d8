"""Write a file so that a failed write leaves the old file as it was.

A plain `open(path, "w")` empties the file first: if the write then fails (a character that
cannot be encoded, a value that cannot be serialised, a full disk, Ctrl-C), the old file is gone
and a half-written one is left in its place. Every file the library writes goes through
`atomic_path` instead: the content goes to a temporary file in the same folder, and only a
complete file is renamed over the old one (a rename within one folder is atomic on POSIX and
Windows).

    with atomic_path("vocab.json") as tmp:
        tmp.write_text(text, encoding="utf-8")      # or torch.save(obj, tmp), fig.savefig(tmp)
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

__all__ = ["atomic_path", "write_text_atomically"]


@contextlib.contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """Yield a temporary path beside `path`; on success rename it to `path`, on error delete it.

    The folder is created if missing. The new file gets the usual permissions (0o666 less the
    umask), not the 0o600 of a temporary file.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(handle)
    temporary = Path(name)
    try:
        yield temporary
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temporary, 0o666 & ~umask)
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def write_text_atomically(path: str | Path, text: str, encoding: str = "utf-8") -> Path:
    """`Path(path).write_text(text)`, but all or nothing."""
    with atomic_path(path) as temporary:
        temporary.write_text(text, encoding=encoding)
    return Path(path)
