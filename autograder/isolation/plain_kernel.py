"""The process that runs the judged cells: plain Python, with no IPython in it.

Usage (the runner starts it, inside the grading sandbox)::

    python -m autograder.isolation.plain_kernel REQUEST_FD REPLY_FD

The runner (autograder/isolation/runner.py) sends one JSON line per cell on REQUEST_FD::

    {"index": 14, "source": "...", "checkpoint": ["01_attention", "test_x"] | null}

and this process answers on REPLY_FD, first ``{"ready": true}`` once it has started, then once each
cell has ended::

    {"index": 14, "status": "ok" | "error", "ename": "...", "evalue": "...",
     "visible": true | false}            # "visible" only for a cell with a checkpoint

``source`` is compiled as plain Python and run in one namespace, a fresh ``__main__`` module, so
that the objects the judge calls are made by the text of the cells and nothing else: there is no
IPython shell, so no input transformer, event hook, magic or ``user_ns`` exists for a cell to
use.  A cell with a checkpoint runs its visible checks first (``source``), then hands the
namespace to the judge whatever they did, so every graded test cell is judged.

Standard output and error go to /dev/null: once the judge has called the student's code, that
code may hold the hidden inputs, and nothing it prints is kept.  ``ename`` and ``evalue`` are for
the runner and the grader, which decide what of them a student may read.

Besides the standard library, it imports the judge's client (judging/kernel.py, with torch) before
any cell runs, so that no cell can replace it.
"""

from __future__ import annotations

import builtins
import json
import os
import sys
import types
from typing import Any

from autograder.isolation.cell_files import CELL_FILENAME

MAX_REQUEST_BYTES = 4 * 2**20  # a cell holds at most 100,000 characters (pipeline/intake/intake.py)
_EVALUE_CHARS = 2000

# The judged cells' namespace: the fresh ``__main__`` module's, made before any cell runs.
NAMESPACE: dict[str, Any] = {}
# The judge's client, imported before any cell runs: no cell can stand in a module of its own.
_CHECKPOINT: Any = None


def _fresh_main() -> dict[str, Any]:
    """A new ``__main__`` module's namespace, as a notebook's cells have."""
    main = types.ModuleType("__main__")
    main.__dict__["__builtins__"] = builtins
    sys.modules["__main__"] = main
    return main.__dict__


def _silence() -> None:
    """Point file descriptors 1 and 2, and Python's streams, at /dev/null."""
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.dup2(null, 2)
    os.close(null)
    sys.stdout = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 - for the process's life
    sys.stderr = sys.stdout


def _close_figures() -> None:
    """Free the cell's figures: nothing shows them, and they would pile up cell after cell."""
    pyplot = sys.modules.get("matplotlib.pyplot")
    if pyplot is not None:
        try:
            pyplot.close("all")
        except Exception:  # noqa: BLE001, S110 - a cell may have broken pyplot; not our concern
            pass


def _failure(error: BaseException) -> dict[str, Any]:
    """The reply fields of a cell that raised ``error``."""
    try:
        evalue = str(error)[:_EVALUE_CHARS]
    except Exception:  # noqa: BLE001 - a student's exception whose __str__ raises
        evalue = ""
    return {"status": "error", "ename": type(error).__name__, "evalue": evalue}


def _run_source(source: str, index: int) -> dict[str, Any]:
    """Compile and run one cell's source in the namespace; its status."""
    try:
        code = compile(source, CELL_FILENAME.format(index), "exec")
        exec(code, NAMESPACE)  # noqa: S102 - running the student's cells is this module's job
    except BaseException as error:  # noqa: BLE001 - SystemExit and KeyboardInterrupt included
        return _failure(error)
    finally:
        _close_figures()
    return {"status": "ok"}


def _run_checkpoint(assignment: str, grade_id: str, visible: bool) -> dict[str, Any]:
    """Hand the namespace to the judge for ``grade_id``; its status."""
    try:
        _CHECKPOINT(assignment, grade_id, NAMESPACE, visible_passed=visible)
    except BaseException as error:  # noqa: BLE001 - the judge's verdict arrives as an error
        return _failure(error)
    return {"status": "ok"}


def execute(request: dict[str, Any]) -> dict[str, Any]:
    """Run one request: a cell's source, then its checkpoint when it has one."""
    index = int(request["index"])
    reply = _run_source(str(request["source"]), index)
    point = request.get("checkpoint")
    if point:
        visible = reply["status"] == "ok"
        reply = {**_run_checkpoint(str(point[0]), str(point[1]), visible), "visible": visible}
    return {"index": index, **reply}


def _send(replies: int, message: dict[str, Any]) -> None:
    data = memoryview((json.dumps(message) + "\n").encode())
    while data:
        data = data[os.write(replies, data) :]


def serve(requests: int, replies: int) -> None:
    """Say that this process is ready, then answer the runner's requests until it closes its
    end."""
    _send(replies, {"ready": True})
    buffer = b""
    while True:
        while b"\n" not in buffer:
            chunk = os.read(requests, 65536)
            if not chunk or len(buffer) > MAX_REQUEST_BYTES:
                return
            buffer += chunk
        line, buffer = buffer.split(b"\n", 1)
        _send(replies, execute(json.loads(line)))


def main() -> None:
    """Entry point: ``python -m autograder.isolation.plain_kernel REQUEST_FD REPLY_FD``."""
    requests, replies = int(sys.argv[1]), int(sys.argv[2])
    os.set_inheritable(requests, False)
    os.set_inheritable(replies, False)
    _silence()
    global NAMESPACE, _CHECKPOINT  # noqa: PLW0603 - made once, before any cell runs
    from autograder.judging.kernel import checkpoint

    _CHECKPOINT = checkpoint
    NAMESPACE = _fresh_main()
    serve(requests, replies)


if __name__ == "__main__":
    main()
    os._exit(0)
