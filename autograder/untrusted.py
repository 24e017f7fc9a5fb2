"""Reading what a student or the sandbox controls: no links, no FIFOs, a size cap, a deadline."""

from __future__ import annotations

import codecs
import dataclasses
import errno
import json
import os
import selectors
import stat
import time
from pathlib import Path


class UntrustedFile(ValueError):
    """The file cannot be read safely; the message says why, in words."""


class TooLarge(UntrustedFile):
    """The file is a regular one, but larger than the cap."""


def read_regular_file(path: str | os.PathLike[str], max_bytes: int) -> bytes:
    """The bytes of ``path`` if it is a regular file of at most ``max_bytes``.

    A symbolic link is not followed (it could point at a solution, a classmate's file or
    /dev/zero), and opening never blocks (a FIFO would stall the grader).
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as error:
        why = "it is a symbolic link" if error.errno == errno.ELOOP else error.strerror
        raise UntrustedFile(f"{Path(path).name} could not be read ({why})") from None
    with open(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise UntrustedFile(f"{Path(path).name} is not a regular file")
        data = handle.read(max_bytes + 1)  # one byte past the cap is enough to refuse
    if len(data) > max_bytes:
        raise TooLarge(f"{Path(path).name} is larger than {max_bytes} bytes")
    return data


def read_pipe(fd: int, max_bytes: int, seconds: float) -> tuple[bytes, bool]:
    """What the writers of pipe ``fd`` send until they all close it or ``seconds`` pass.

    At most ``max_bytes`` are kept; the rest is read and dropped, so a writer never blocks on a
    full pipe.  Also returns whether anything was dropped.
    """
    kept = bytearray()
    truncated = False
    deadline = time.monotonic() + seconds
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_READ)
        while (left := deadline - time.monotonic()) > 0:
            if not selector.select(timeout=left):
                continue
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                break
            room = chunk[: max_bytes - len(kept)]
            kept += room
            truncated = truncated or len(room) < len(chunk)
    return bytes(kept), truncated


def _escaped_in_json(error: UnicodeError) -> tuple[str, int]:
    """A codec error handler: characters UTF-8 cannot hold, as JSON escapes of their escapes."""
    bad = error.object[error.start : error.end]  # type: ignore[attr-defined]
    return "".join(f"\\\\u{ord(c):04x}" for c in bad), error.end  # type: ignore[attr-defined]


codecs.register_error("autograder.escaped_in_json", _escaped_in_json)


def valid_text(value: object) -> object:
    """``value`` with every string made valid UTF-8 (in lists, dataclasses and JSON-like dicts
    too): a lone surrogate, which a kernel's error message can hold, becomes its escape
    ``\\udcff``, so writing it (a notebook, a CSV, JSON) cannot fail half-way or be refused by a
    reader.  A dict goes through JSON text, so its depth costs no Python recursion."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return value.encode("utf-8", "backslashreplace").decode("utf-8")
        return value
    if isinstance(value, dict):
        text = json.dumps(value, ensure_ascii=False)
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            return type(value)(json.loads(text.encode("utf-8", "autograder.escaped_in_json")))
        return value
    if isinstance(value, (list, tuple)):
        return type(value)(valid_text(item) for item in value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changes = {f.name: valid_text(getattr(value, f.name)) for f in dataclasses.fields(value)}
        return dataclasses.replace(value, **changes)
    return value
