"""The file name a judged cell's code is compiled under, so that a traceback names its cell.

The plain kernel compiles each cell of the judged notebook as ``<cell N>``, N its index there
(isolation/plain_kernel.py); the judge's client reads the cell and line an error passed through
back from the traceback (judging/kernel.py).  Standard library only: it is staged into the sandbox.
"""

from __future__ import annotations

CELL_FILENAME = "<cell {}>"


def cell_of(filename: str) -> int | None:
    """The judged notebook's index of the cell compiled under ``filename``, if it is one."""
    head, _, tail = CELL_FILENAME.partition("{}")
    number = filename.removeprefix(head).removesuffix(tail)
    if filename.startswith(head) and filename.endswith(tail) and number.isdecimal():
        return int(number)
    return None
