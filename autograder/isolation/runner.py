"""Execute a notebook's code cells one by one, surviving timeouts, kernel crashes and huge output.

Usage::

    python -m autograder.isolation.runner NOTEBOOK.ipynb --report-fd FD [--judge-fd FD]
        [--cell-timeout SECONDS] [--max-restarts N] [--max-output-bytes B]

This is the program that runs inside the grading sandbox, as an unprivileged user without network.
There the ``autograder`` package holds only this module and one other, so it imports nothing from
``autograder``: only the standard library, nbformat, nbclient and jupyter_client.

The code cells run in order in one IPython kernel (the ipykernel of this interpreter), with the
notebook's folder as working directory.  A cell that runs past the timeout or kills its kernel
(``os._exit``, a segfault, the memory limit) costs a restart: the kernel is killed, a fresh one
replays every earlier cell that succeeded (their outputs are not recorded again), and the run goes
on with the next cell.  So does a cell that raises MemoryError: its kernel still holds the failed
frame (``sys.last_traceback``) and the memory in it, which would starve every later cell.
Once ``max_restarts`` restarts are spent, the remaining cells are skipped.

The report goes to file descriptor FD, a pipe that the grader reads; it is never a file, so the
student's code, which runs as the same user, has nothing to replace or forge.  The kernel does not
inherit FD, and this process makes itself non-dumpable, so the kernel cannot open FD through
``/proc/<pid>/fd`` either.  The report is one JSON object per line, sent as soon as it is known,
so that a run killed from outside still tells which cells finished::

    {"cell": {                        # one per finished code cell, in notebook order
        "index": 3,                   # position in notebook.cells
        "status": "ok",               # ok | error | timeout | crashed | skipped
        "ename": "ValueError",        # these two only when status is "error"
        "evalue": "...",
        "outputs": [...],             # nbformat v4 output dicts, capped (see below)
        "execution_count": 2,         # null when the cell never reached the kernel
        "seconds": 0.012}}
    {"restarts": 1}                   # after each kernel restart
    {"finished": true}                # last; with "error": "..." when the run could not go on

With ``--judge-fd``, the runner tells the grader's judge which cell runs, over a socket that the
judge alone holds the other end of (autograder/judging/judge.py), one JSON line each way::

    {"open": 3, "grade_id": "test_x", "replay": false}   -> {"ok": true}   before each code cell
    {"follow_up": "test_x", "visible_failure": "..."}    -> {"needed": b}  a test cell that failed
    {"close": 3}                                         -> {"ok": true}   after it

``grade_id`` is null for a cell that is no graded test cell.  The judge judges a test cell's
hidden checks only while its window is open, once; so the kernel can neither choose what is
judged nor call the checks from elsewhere.  Like the report pipe, this socket is kept from the
kernel.

After ``"finished"`` there has been one cell record per code cell.  A cell's outputs are capped at
``max_output_bytes``, measured on their JSON, as they arrive: an output that would pass the cap is
dropped (a stream is cut to what fits), so are all later outputs of that cell, and one stdout
stream saying so ends the list.  A single kernel message is still held whole while it is handled
(about three times its size at the peak: a 100 MB print costs ~300 MB for a moment).
Outputs of widgets (output hooks) and in-place display updates are not counted.
"""

from __future__ import annotations

import argparse
import asyncio
import ctypes
import json
import os
import re
import socket
import sys
import time
from pathlib import Path
from typing import Any

# nbformat imports jsonschema, which builds an IRI grammar (rfc3987_syntax) for ~0.8 s at import.
# Notebook schemas check no IRI format, and this runs once per submission: skip that import.
sys.modules.setdefault("rfc3987_syntax", None)  # type: ignore[arg-type]

import nbformat  # noqa: E402
from jupyter_client.kernelspec import KernelSpec, KernelSpecManager  # noqa: E402
from jupyter_client.manager import AsyncKernelManager  # noqa: E402
from nbclient import NotebookClient  # noqa: E402
from nbclient.exceptions import CellTimeoutError, DeadKernelError  # noqa: E402
from nbformat import NotebookNode  # noqa: E402
from nbformat.v4 import new_output, output_from_msg  # noqa: E402

MiB = 1 << 20
KERNEL_NAME = "python3"
DEFAULT_CELL_TIMEOUT = 60.0
DEFAULT_MAX_RESTARTS = 3
DEFAULT_MAX_OUTPUT_BYTES = 1 * MiB
_PR_SET_DUMPABLE = 4
JUDGE_ANSWER_SECONDS = 60.0  # the judge answers at once unless it is gone or stuck

Record = dict[str, Any]


class _OwnPythonSpecs(KernelSpecManager):
    """Resolves "python3" to this interpreter's ipykernel, whatever kernelspecs are installed."""

    def get_kernel_spec(self, kernel_name: str) -> KernelSpec:
        """The kernelspec for ``kernel_name``; "python3" never comes from disk."""
        if kernel_name != KERNEL_NAME:
            return super().get_kernel_spec(kernel_name)
        argv = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
        return KernelSpec(argv=argv, display_name="Python 3", language="python")


def _json_size(value: Any) -> int:
    """Bytes of ``value`` as (ASCII-escaped) JSON."""
    return len(json.dumps(value))


def _prefix_within(text: str, budget: int) -> int:
    """How many leading characters of ``text`` fit in ``budget`` bytes of JSON string body."""
    if budget <= 0:
        return 0
    # Every character takes at least one byte, so no more than `budget` can fit; slicing first
    # keeps a 100 MB text from being escaped whole.
    count = min(len(text), budget)
    excess = _json_size(text[:count]) - 2 - budget
    # Dropping `excess` characters frees at least `excess` bytes, so one step is enough.
    return count - max(excess, 0)


def _fit_message(msg: dict[str, Any], room: int) -> dict[str, Any] | None:
    """``msg`` if its output fits in ``room`` bytes, a stream cut to fit, or None to drop it."""
    try:
        out = output_from_msg(msg)
    except ValueError:
        return msg  # not an output: NotebookClient.output logs and ignores it
    if out.output_type != "stream":
        return msg if _json_size(out) <= room else None
    text = out.text
    keep = _prefix_within(text, room - _json_size({**out, "text": ""}))
    if keep == len(text):
        return msg
    if keep == 0:
        return None
    return {**msg, "content": {**msg["content"], "text": text[:keep]}}


class _CappedClient(NotebookClient):
    """A NotebookClient that keeps at most ``max_output_bytes`` of each cell's outputs."""

    def __init__(self, nb: NotebookNode, max_output_bytes: int, **kwargs: Any) -> None:
        super().__init__(nb, on_cell_executed=self._keep_reply, **kwargs)
        self.max_output_bytes = max_output_bytes
        self.channel = _CellChannel(None)
        self.start_cell()

    def start_cell(self) -> None:
        """Forget the previous cell's reply and output count."""
        self.reply: dict[str, Any] | None = None
        self.kept_bytes = 0
        self.truncated = False

    def _keep_reply(self, execute_reply: dict[str, Any] | None, **_: Any) -> None:
        """on_cell_executed hook: the execute reply tells ok from error."""
        self.reply = execute_reply

    def output(
        self,
        outs: list[NotebookNode],
        msg: dict[str, Any],
        display_id: str | None,
        cell_index: int,
    ) -> NotebookNode | None:
        """Add an output as it arrives, within the cap, so a flood never piles up in memory."""
        if self.truncated:
            return None
        if self.clear_before_next_output:
            self.kept_bytes = 0  # super() clears the pending outputs before adding this one
        fitted = _fit_message(msg, self.max_output_bytes - self.kept_bytes)
        if fitted is not msg:
            self.truncated = True
        if fitted is None:
            return None
        out = super().output(outs, fitted, display_id, cell_index)
        if out is not None:
            self.kept_bytes += _json_size(out)
        return out

    def clear_output(self, outs: list[NotebookNode], msg: dict[str, Any], cell_index: int) -> None:
        """Clear outputs; what was cleared no longer counts against the cap."""
        super().clear_output(outs, msg, cell_index)
        if not outs:
            self.kept_bytes = 0


def _truncation_note(max_output_bytes: int) -> NotebookNode:
    """The stream output that ends a truncated cell's outputs."""
    text = f"\n[output truncated: this cell's output passed {max_output_bytes} bytes]\n"
    return new_output("stream", name="stdout", text=text)


async def _start_kernel(client: _CappedClient, cwd: Path) -> None:
    """Start a fresh kernel in ``cwd`` and connect ``client`` to it."""
    client.km = AsyncKernelManager(kernel_name=KERNEL_NAME, kernel_spec_manager=_OwnPythonSpecs())
    await client.async_start_new_kernel(cwd=str(cwd))
    await client.async_start_new_kernel_client()


async def _kill_kernel(client: _CappedClient) -> None:
    """Kill the kernel's process group at once: a cell that ignores interrupts must not stall."""
    km, kc = client.km, client.kc
    client.km = client.kc = None
    if kc is not None:
        kc.stop_channels()
    if km is not None:
        await km.shutdown_kernel(now=True)  # also removes the connection file of a failed start


async def _execute(client: _CappedClient, index: int) -> Record:
    """Run code cell ``index`` once and describe how it went."""
    cell = client.nb.cells[index]
    # Stale values from the submitted file must not survive a cell that never reaches the kernel.
    cell.outputs, cell.execution_count = [], None
    client.start_cell()
    started = time.monotonic()
    record: Record = {"index": index, "status": "ok"}
    try:
        await client.async_execute_cell(cell, index)
    except CellTimeoutError:
        record["status"] = "timeout"
    except DeadKernelError:
        record["status"] = "crashed"
    else:
        content = (client.reply or {}).get("content", {})
        if content.get("status", "ok") != "ok":
            record.update(status="error", ename=content.get("ename"), evalue=content.get("evalue"))
    outputs = list(cell.outputs)
    if client.truncated:
        outputs.append(_truncation_note(client.max_output_bytes))
    record.update(
        outputs=outputs,
        execution_count=cell.execution_count,
        seconds=round(time.monotonic() - started, 3),
    )
    return record


def _skipped(index: int) -> Record:
    """The record of a cell that never ran."""
    return {
        "index": index,
        "status": "skipped",
        "outputs": [],
        "execution_count": None,
        "seconds": 0.0,
    }


async def _replay(client: _CappedClient, indices: list[int]) -> bool:
    """Silently re-run the cells at ``indices``; False when one times out or crashes."""
    for index in indices:
        client.channel.open(index, _graded_test_cell(client.nb.cells[index]), replay=True)
        status = (await _execute(client, index))["status"]
        client.channel.close(index)
        # A replayed cell that raises is let be: only a dead or stuck kernel needs a restart.
        if status in ("timeout", "crashed"):
            return False
    return True


async def _recover(
    client: _CappedClient, report: _Report, ok: list[int], max_restarts: int, cwd: Path
) -> bool:
    """Restart the kernel and replay the ``ok`` cells; False once the restart budget is spent."""
    while report.result["restarts"] < max_restarts:
        report.restarted()
        await _kill_kernel(client)
        client.reset_execution_trackers()  # display ids and widgets of the dead kernel
        await _start_kernel(client, cwd)
        if await _replay(client, ok):
            return True
    return False


def _keep_from_kernels(fd: int) -> None:
    """Keep ``fd`` from the kernels this process starts, and from /proc/<pid>/fd (which needs
    this process to be dumpable); a kernel's exec makes it dumpable again."""
    os.set_inheritable(fd, False)
    ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_DUMPABLE, 0)


class _CellChannel:
    """The runner's end of the judge's cell channel (see the module docstring)."""

    def __init__(self, fd: int | None) -> None:
        self.sock: socket.socket | None = None
        if fd is not None:
            _keep_from_kernels(fd)
            self.sock = socket.socket(fileno=fd)
            self.sock.settimeout(JUDGE_ANSWER_SECONDS)
        self.buffer = b""

    def _tell(self, message: dict[str, Any]) -> dict[str, Any]:
        """Send one message and read the judge's answer; {} once the judge is gone."""
        if self.sock is None:
            return {}
        try:
            self.sock.sendall(json.dumps(message).encode() + b"\n")
            while b"\n" not in self.buffer:
                chunk = self.sock.recv(4096)
                if not chunk:
                    raise ConnectionError("the judge closed its channel")
                self.buffer += chunk
        except OSError:  # the judge died or hangs: the grader notes it; the cells still run
            self.sock.close()
            self.sock = None
            return {}
        line, self.buffer = self.buffer.split(b"\n", 1)
        answer = json.loads(line)
        return answer if isinstance(answer, dict) else {}

    def open(self, index: int, grade_id: str | None, replay: bool = False) -> None:
        """Cell ``index`` starts (``grade_id``: the graded test cell's, else None)."""
        self._tell({"open": index, "grade_id": grade_id, "replay": replay})

    def follow_up(self, grade_id: str, visible_failure: str) -> bool:
        """True when the judge wants the failed test cell ``grade_id`` judged all the same."""
        answer = self._tell({"follow_up": grade_id, "visible_failure": visible_failure})
        return answer.get("needed") is True

    def close(self, index: int) -> None:
        """Cell ``index`` ended."""
        self._tell({"close": index})


class _Report:
    """The run's result, built here and sent line by line to the grader's pipe as it grows."""

    def __init__(self, fd: int | None) -> None:
        self.fd = fd
        self.result: dict[str, Any] = {"cells": [], "restarts": 0, "finished": False}
        if fd is not None:
            _keep_from_kernels(fd)

    def cell(self, record: Record) -> None:
        """One more finished (or skipped) code cell."""
        self.result["cells"].append(record)
        self._send({"cell": record})

    def restarted(self) -> None:
        """The kernel was restarted once more."""
        self.result["restarts"] += 1
        self._send({"restarts": self.result["restarts"]})

    def finish(self, error: str | None) -> None:
        """The last message: the run is over, and why it stopped early, if it did."""
        self.result["finished"] = True
        if error is not None:
            self.result["error"] = error
        self._send({"finished": True, **({"error": error} if error is not None else {})})

    def _send(self, message: dict[str, Any]) -> None:
        if self.fd is None:
            return
        # ASCII JSON holds no raw newline, so each message is exactly one line.
        remaining = memoryview((json.dumps(message) + "\n").encode())
        while remaining:
            remaining = remaining[os.write(self.fd, remaining) :]


# A graded test cell's hidden-check line: run_hidden_checks("<assignment>", "<grade id>", ...).
_HIDDEN_CHECK_CALL = re.compile(
    r"""run_hidden_checks\(\s*(["'])([\w.-]+)\1\s*,\s*(["'])([\w.-]+)\3"""
)


def _graded_test_cell(cell: NotebookNode) -> str | None:
    """The grade id of a graded test cell (nbgrader's metadata), else None."""
    nbgrader = cell.get("metadata", {}).get("nbgrader", {})
    if cell.cell_type != "code" or not nbgrader.get("grade") or nbgrader.get("solution"):
        return None
    grade_id = nbgrader.get("grade_id")
    return grade_id if isinstance(grade_id, str) else None


async def _judge_failed_test_cell(client: _CappedClient, index: int, record: Record) -> None:
    """A graded test cell that raised before its hidden-check line is judged all the same, when
    the judge says its checks were not reached: the grade is the hidden checks', and the error is
    only shown beside it.  Nothing is recorded: the verdict replaces the cell's outputs."""
    cell = client.nb.cells[index]
    grade_id = _graded_test_cell(cell)
    found = _HIDDEN_CHECK_CALL.search(cell.source)
    if grade_id is None or not found or record["status"] != "error":
        return
    if record.get("ename") == "MemoryError":
        return  # a kernel that needs a restart cannot be asked anything
    failure = f"{record.get('ename')}: {record.get('evalue')}"
    if not client.channel.follow_up(grade_id, failure):
        return
    call = f"judge_failed_cell({found[2]!r}, {grade_id!r})"
    try:
        await client.kc.execute_interactive(
            f"__import__('autograder').{call}",
            silent=True,
            store_history=False,
            timeout=client.timeout_func(cell),
            output_hook=lambda _msg: None,
        )
    except TimeoutError:  # the student's code hung when the judge called it
        record["status"] = "timeout"


def _needs_restart(record: Record) -> bool:
    """True when the kernel cannot be trusted to run the next cell after this one."""
    if record["status"] == "error":
        return record.get("ename") == "MemoryError"
    return record["status"] != "ok"


async def _run_cells(client: _CappedClient, report: _Report, max_restarts: int, cwd: Path) -> None:
    """Run every code cell, restarting and replaying after timeouts and crashes."""
    code = [i for i, cell in enumerate(client.nb.cells) if cell.cell_type == "code"]
    ok: list[int] = []
    for position, index in enumerate(code):
        client.channel.open(index, _graded_test_cell(client.nb.cells[index]))
        record = await _execute(client, index)
        await _judge_failed_test_cell(client, index, record)
        client.channel.close(index)
        report.cell(record)
        if record["status"] == "ok":
            ok.append(index)
        elif _needs_restart(record) and not await _recover(client, report, ok, max_restarts, cwd):
            for skipped in code[position + 1 :]:
                report.cell(_skipped(skipped))
            return


async def _run(
    nb: NotebookNode,
    cwd: Path,
    report: _Report,
    cell_timeout: float,
    max_restarts: int,
    max_output_bytes: int,
    channel: _CellChannel,
) -> None:
    """Execute ``nb`` in ``cwd`` into ``report``; the kernel is gone when this returns."""
    # timeout_func rather than timeout: nbclient's `timeout` takes whole seconds only.
    client = _CappedClient(
        nb,
        max_output_bytes,
        timeout_func=lambda _cell: cell_timeout,
        interrupt_on_timeout=False,
        allow_errors=True,
    )
    client.channel = channel
    try:
        await _start_kernel(client, cwd)
        await _run_cells(client, report, max_restarts, cwd)
    finally:
        await _kill_kernel(client)


def run_notebook(
    path: str | os.PathLike[str],
    report_fd: int | None = None,
    cell_timeout: float = DEFAULT_CELL_TIMEOUT,
    max_restarts: int = DEFAULT_MAX_RESTARTS,
    max_output_bytes: int = DEFAULT_MAX_OUTPUT_BYTES,
    judge_fd: int | None = None,
) -> dict[str, Any]:
    """Run the notebook at ``path``, report to ``report_fd`` as it goes, and return the result:
    ``{"cells": [...], "restarts": N, "finished": True}``, plus ``"error"`` on an early stop.

    Failing cells are recorded, not raised.  When the run cannot go on (unreadable notebook, a
    kernel that will not start) the result carries ``"error"`` and the code cells not run are
    skipped.  Uses asyncio.run, so it must not be called from a running event loop.
    """
    path = Path(path).resolve()
    report = _Report(report_fd)
    channel = _CellChannel(judge_fd)
    nb: NotebookNode | None = None
    error: str | None = None
    try:
        nb = nbformat.read(path, as_version=4)
        asyncio.run(
            _run(nb, path.parent, report, cell_timeout, max_restarts, max_output_bytes, channel)
        )
    except BrokenPipeError:
        raise  # the grader stopped listening: nobody is left to tell
    except Exception as failure:  # the grader learns why from the report, not a traceback
        error = f"{type(failure).__name__}: {failure}"
        if nb is not None:
            for index in _unrecorded(nb, report.result["cells"]):
                report.cell(_skipped(index))
    report.finish(error)
    return report.result


def _unrecorded(nb: NotebookNode, cells: list[Record]) -> list[int]:
    """Indices of the code cells of ``nb`` after the last recorded one."""
    last = cells[-1]["index"] if cells else -1
    return [i for i, cell in enumerate(nb.cells) if cell.cell_type == "code" and i > last]


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    """The command line, checked."""
    parser = argparse.ArgumentParser(
        prog="python -m autograder.isolation.runner", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("notebook", type=Path)
    parser.add_argument("--report-fd", type=int, required=True, help="a pipe open for writing")
    parser.add_argument("--judge-fd", type=int, help="the judge's cell channel, a socket")
    parser.add_argument("--cell-timeout", type=float, default=DEFAULT_CELL_TIMEOUT)
    parser.add_argument("--max-restarts", type=int, default=DEFAULT_MAX_RESTARTS)
    parser.add_argument("--max-output-bytes", type=int, default=DEFAULT_MAX_OUTPUT_BYTES)
    args = parser.parse_args(argv)
    if args.cell_timeout <= 0:
        parser.error("--cell-timeout must be positive")  # nbclient reads 0 as "no limit"
    if args.max_restarts < 0 or args.max_output_bytes < 0:
        parser.error("--max-restarts and --max-output-bytes must not be negative")
    return args


def main(argv: list[str] | None = None) -> int:
    """CLI entry point: 0 when the notebook ran to the end, even with failing cells."""
    args = _parse_args(argv)
    try:
        result = run_notebook(
            args.notebook,
            args.report_fd,
            cell_timeout=args.cell_timeout,
            max_restarts=args.max_restarts,
            max_output_bytes=args.max_output_bytes,
            judge_fd=args.judge_fd,
        )
    except OSError as error:  # the report pipe is closed or was never open
        print(f"runner: cannot report on fd {args.report_fd}: {error}", file=sys.stderr)
        return 1
    if "error" in result:
        print(f"runner: {result['error']}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    status = main()
    sys.stdout.flush()
    sys.stderr.flush()
    # The report is sent; skip the ~0.3 s teardown of zmq and asyncio objects.
    os._exit(status)
