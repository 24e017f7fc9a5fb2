"""Rewriting a grade CSV that other graders may be rewriting at the same moment."""

from __future__ import annotations

import contextlib
import csv
import fcntl
import os
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path


@contextlib.contextmanager
def locked(path: Path) -> Iterator[None]:
    """Hold an exclusive lock for rewriting ``path`` (on ``.<name>.lock`` beside it)."""
    with path.with_name(f".{path.name}.lock").open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)  # released when the file is closed, or the process dies
        yield


def replace_csv(path: Path, rows: Iterable[Sequence[object]]) -> None:
    """Write ``rows`` to a temporary file beside ``path`` and rename it over ``path``, so a
    reader never sees half a file; call it under :func:`locked`."""
    written = tempfile.NamedTemporaryFile(
        "w", newline="", dir=path.parent, prefix=f".{path.name}.", delete=False
    )
    try:
        with written as handle:
            csv.writer(handle).writerows(rows)
        # mkstemp makes it private; the CSV keeps the mode it had (new: readable by all)
        Path(written.name).chmod(path.stat().st_mode & 0o777 if path.exists() else 0o644)
        os.replace(written.name, path)
    except BaseException:
        Path(written.name).unlink(missing_ok=True)
        raise
