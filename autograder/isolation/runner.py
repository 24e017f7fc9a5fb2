"""Run the judged notebook's code cells one by one, surviving timeouts, crashes and exits.

Usage::

    python -m autograder.isolation.runner NOTEBOOK.ipynb --report-fd FD [--judge-fd FD]
        [--cell-timeout SECONDS] [--max-restarts N]

This is the program that runs inside the grading sandbox, as an unprivileged user without network.
There the ``autograder`` package holds only this module and a few others, so it imports nothing
from ``autograder``: only the standard library.

NOTEBOOK is the judged notebook that the grader built from the release and the submitted answers
(pipeline/worker/judged_notebook.py).  Its code cells run in order in one plain Python process, the
plain kernel (isolation/plain_kernel.py), started fresh by this runner, with the notebook's folder
as working directory.  A graded test cell carries its checkpoint in its metadata
(``{"autograder": {"checkpoint": [assignment, grade_id]}}``): the plain kernel runs its visible
checks, then hands its namespace to the judge.  A cell that runs past the timeout or kills its
kernel (``os._exit``, a segfault, the memory limit) costs a restart: the kernel is killed, a fresh
one replays every earlier cell that succeeded, and the run goes on with the next cell.  So does a
cell that raises MemoryError: its kernel still holds the memory of the failed frame, which would
starve every later cell.  Once ``max_restarts`` restarts are spent, the remaining cells are
skipped.  The timeout counts a cell's wall time less the time its kernel waited for a CPU that
other processes held (``_Clock``), so that a busy machine changes no verdict.

The report goes to file descriptor FD, a pipe that the grader reads; it is never a file, so the
student's code, which runs as the same user, has nothing to replace or forge.  The kernel does not
inherit FD, and this process makes itself non-dumpable, so the kernel cannot open FD through
``/proc/<pid>/fd`` either.  The report is one JSON object per line, sent as soon as it is known,
so that a run killed from outside still tells which cells finished::

    {"cell": {                        # one per finished code cell, in notebook order
        "index": 3,                   # position in notebook.cells
        "status": "ok",               # ok | error | timeout | crashed | skipped
        "ename": "ValueError",        # these two only when status is "error": the kernel's words,
        "evalue": "...",              # for the grader to decide what a student may read
        "visible": true,              # a graded test cell only: its visible checks passed
        "execution_count": 2,         # the runner's count; null when the cell never ran
        "seconds": 0.012}}
    {"restarts": 1}                   # after each kernel restart
    {"finished": true}                # last; with "error": "..." when the run could not go on

With ``--judge-fd``, the runner tells the grader's judge which cell runs, over a socket that the
judge alone holds the other end of (autograder/judging/judge.py), one JSON line each way::

    {"open": 3, "grade_id": "test_x", "replay": false}   -> {"ok": true}   before each code cell
    {"close": 3}                                         -> {"ok": true}   after it

``grade_id`` is null for a cell that is no graded test cell.  The judge judges a test cell's
hidden checks only while its window is open, once; so the kernel can neither choose what is
judged nor call the checks from elsewhere.  Like the report pipe, this socket is kept from the
kernel.

Nothing the cells print is kept: the plain kernel writes its output to /dev/null.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import select
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

DEFAULT_CELL_TIMEOUT = 60.0
DEFAULT_MAX_RESTARTS = 3
# A cell's time is its wall time less what its kernel spent waiting for a CPU that other
# processes held, so that its verdict does not depend on the machine's load; whatever the
# credit, no cell runs past this many times its timeout on the wall clock.
WALL_FACTOR = 10.0
_PR_SET_DUMPABLE = 4
JUDGE_ANSWER_SECONDS = 60.0  # the judge answers at once unless it is gone or stuck
START_SECONDS = 60.0  # the plain kernel imports torch: about 1.5 s on an idle machine
_REPLY_BYTES = 64 * 1024  # a reply is one short JSON line

Record = dict[str, Any]


class KernelLost(Exception):
    """The plain kernel ended, or broke its protocol, while a cell ran."""


class _Clock:
    """The time charged to one cell of a kernel: wall time less the kernel's wait for a CPU.

    A busy machine makes every cell slower on the wall clock; Linux counts, per thread, the time
    it was ready to run but waited for a CPU (``run_delay`` in /proc/PID/task/TID/schedstat).
    Taking the most any one thread waited off the wall time charges a cell roughly what it would
    cost on an idle machine.  A cell that sleeps or blocks waits on nothing the scheduler counts,
    so it is charged its wall time.  Where schedstat cannot be read the credit is 0: the cell is
    charged its wall time, never less.
    """

    def __init__(self, pid: int, timeout: float) -> None:
        self.pid = pid
        self.timeout = timeout
        self.started = time.monotonic()
        self.waited_before = self._waits()

    def _waits(self) -> dict[str, int]:
        """Each of the kernel's threads: nanoseconds it has waited for a CPU so far."""
        waits: dict[str, int] = {}
        try:
            tids = os.listdir(f"/proc/{self.pid}/task")
        except OSError:
            return waits
        for tid in tids:
            try:
                with open(f"/proc/{self.pid}/task/{tid}/schedstat", "rb") as file:
                    waits[tid] = int(file.read().split()[1])
            except (OSError, ValueError, IndexError):
                continue  # a thread that ended, or a kernel without schedstat
        return waits

    def waited(self) -> float:
        """Seconds the kernel waited for a CPU since this cell began (its most delayed thread)."""
        now = self._waits()
        gains = [now[tid] - self.waited_before.get(tid, 0) for tid in now]
        return max([0, *gains]) / 1e9

    def left(self) -> float:
        """Seconds the cell may still run before it times out; 0 or less once it has."""
        wall = time.monotonic() - self.started
        charged = wall - min(self.waited(), wall)
        return min(self.timeout - charged, WALL_FACTOR * self.timeout - wall)


class _PlainKernel:
    """One plain kernel process: this runner sends it cells and reads how each went."""

    def __init__(self, cwd: Path) -> None:
        request_read, self._requests = os.pipe()
        self._replies, reply_write = os.pipe()
        # -P: the working directory, which cells may write to, is not searched for modules.
        argv = [sys.executable, "-P", "-m", "autograder.isolation.plain_kernel"]
        try:
            self.process = subprocess.Popen(
                [*argv, str(request_read), str(reply_write)],
                cwd=cwd,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                pass_fds=(request_read, reply_write),
                start_new_session=True,  # its group is killed whole, whatever it started
            )
        finally:
            os.close(request_read)
            os.close(reply_write)
        self.buffer = b""

    def wait_ready(self) -> None:
        """Wait until the kernel has started (its imports do not count against a cell)."""
        try:
            ready = self._reply(_Clock(self.process.pid, START_SECONDS))
        except TimeoutError:
            raise KernelLost(f"the kernel did not start within {START_SECONDS:g} s") from None
        if ready.get("ready") is not True:
            raise KernelLost("the kernel did not say it was ready")

    def execute(self, index: int, cell: dict[str, Any], timeout: float) -> Record:
        """Run cell ``index``; its status (ok, error, timeout or crashed) and the kernel's
        error, if any."""
        checkpoint = cell.get("metadata", {}).get("autograder", {}).get("checkpoint")
        request = {"index": index, "source": _source(cell), "checkpoint": checkpoint}
        try:
            self._send(json.dumps(request).encode() + b"\n")
            reply = self._reply(_Clock(self.process.pid, timeout))
            if reply.get("index") != index:  # a line the cell's code wrote into the channel
                raise KernelLost(f"the kernel answered for cell {reply.get('index')!r}")
        except TimeoutError:
            return {"status": "timeout"}
        except KernelLost:
            return {"status": "crashed"}
        record: Record = {"status": "error" if reply.get("status") == "error" else "ok"}
        if record["status"] == "error":
            record.update(ename=str(reply.get("ename")), evalue=str(reply.get("evalue")))
        if checkpoint:
            record["visible"] = reply.get("visible") is True
        return record

    def _send(self, data: bytes) -> None:
        view = memoryview(data)
        try:
            while view:
                view = view[os.write(self._requests, view) :]
        except OSError as error:  # the kernel is gone, or closed its end
            raise KernelLost(str(error)) from None

    def _reply(self, clock: _Clock) -> dict[str, Any]:
        """The kernel's next reply line, before ``clock`` runs out."""
        while b"\n" not in self.buffer:
            left = clock.left()
            if left <= 0:
                raise TimeoutError
            ready, _, _ = select.select([self._replies], [], [], left)
            if not ready:
                continue
            chunk = os.read(self._replies, 65536)
            if not chunk or len(self.buffer) > _REPLY_BYTES:
                raise KernelLost("the kernel ended, or wrote past a reply")
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        try:
            reply = json.loads(line)
        except ValueError:
            raise KernelLost("the kernel's reply is not JSON") from None
        if not isinstance(reply, dict):
            raise KernelLost("the kernel's reply is not an object")
        return reply

    def kill(self) -> None:
        """Kill the kernel's process group at once: a cell that ignores signals must not stall."""
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self.process.wait()
        for fd in (self._requests, self._replies):
            try:
                os.close(fd)
            except OSError:
                pass


def _source(cell: dict[str, Any]) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def _skipped(index: int) -> Record:
    """The record of a cell that never ran."""
    return {"index": index, "status": "skipped", "execution_count": None, "seconds": 0.0}


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


def _graded_test_cell(cell: dict[str, Any]) -> str | None:
    """The grade id of a graded test cell (nbgrader's metadata), else None."""
    nbgrader = cell.get("metadata", {}).get("nbgrader", {})
    if cell.get("cell_type") != "code" or not nbgrader.get("grade") or nbgrader.get("solution"):
        return None
    grade_id = nbgrader.get("grade_id")
    return grade_id if isinstance(grade_id, str) else None


def _needs_restart(record: Record) -> bool:
    """True when the kernel cannot be trusted to run the next cell after this one."""
    if record["status"] == "error":
        return record.get("ename") == "MemoryError"
    return record["status"] != "ok"


class _Run:
    """One notebook's run: its cells, the kernel now running them, and the count so far."""

    def __init__(self, cells: list[dict[str, Any]], cwd: Path, cell_timeout: float) -> None:
        self.cells = cells
        self.cwd = cwd
        self.cell_timeout = cell_timeout
        self.channel = _CellChannel(None)
        self.kernel: _PlainKernel | None = None
        self.count = 0  # the execution count: the grader's, never the kernel's

    def start(self) -> None:
        self.kernel = _PlainKernel(self.cwd)
        self.kernel.wait_ready()

    def stop(self) -> None:
        if self.kernel is not None:
            self.kernel.kill()
            self.kernel = None

    def execute(self, index: int, replay: bool = False) -> Record:
        """Run code cell ``index`` once, inside its judge window, and describe how it went."""
        assert self.kernel is not None
        cell = self.cells[index]
        self.channel.open(index, _graded_test_cell(cell), replay=replay)
        started = time.monotonic()
        record: Record = {"index": index, **self.kernel.execute(index, cell, self.cell_timeout)}
        self.channel.close(index)
        if not replay:
            self.count += 1
        record.update(execution_count=self.count, seconds=round(time.monotonic() - started, 3))
        return record

    def replay(self, indices: list[int]) -> bool:
        """Silently re-run the cells at ``indices``; False when one times out or crashes."""
        for index in indices:
            # A replayed cell that raises is let be: only a dead or stuck kernel needs a restart.
            if self.execute(index, replay=True)["status"] in ("timeout", "crashed"):
                return False
        return True

    def recover(self, report: _Report, ok: list[int], max_restarts: int) -> bool:
        """Restart the kernel and replay the ``ok`` cells; False once the restart budget is
        spent."""
        while report.result["restarts"] < max_restarts:
            report.restarted()
            self.stop()
            self.start()
            if self.replay(ok):
                return True
        return False


def _run_cells(run: _Run, report: _Report, max_restarts: int) -> None:
    """Run every code cell, restarting and replaying after timeouts and crashes."""
    code = [i for i, cell in enumerate(run.cells) if cell.get("cell_type") == "code"]
    ok: list[int] = []
    for position, index in enumerate(code):
        record = run.execute(index)
        report.cell(record)
        if record["status"] == "ok":
            ok.append(index)
        elif (
            _needs_restart(record)
            and position + 1 < len(code)  # after the last cell, no kernel is needed
            and not run.recover(report, ok, max_restarts)
        ):
            for skipped in code[position + 1 :]:
                report.cell(_skipped(skipped))
            return


def run_notebook(
    path: str | os.PathLike[str],
    report_fd: int | None = None,
    cell_timeout: float = DEFAULT_CELL_TIMEOUT,
    max_restarts: int = DEFAULT_MAX_RESTARTS,
    judge_fd: int | None = None,
) -> dict[str, Any]:
    """Run the notebook at ``path``, report to ``report_fd`` as it goes, and return the result:
    ``{"cells": [...], "restarts": N, "finished": True}``, plus ``"error"`` on an early stop.

    Failing cells are recorded, not raised.  When the run cannot go on (unreadable notebook, a
    kernel that will not start) the result carries ``"error"`` and the code cells not run are
    skipped.
    """
    path = Path(path).resolve()
    report = _Report(report_fd)
    channel = _CellChannel(judge_fd)
    cells: list[dict[str, Any]] | None = None
    error: str | None = None
    run: _Run | None = None
    try:
        cells = _read_cells(path)
        run = _Run(cells, path.parent, cell_timeout)
        run.channel = channel
        run.start()
        _run_cells(run, report, max_restarts)
    except BrokenPipeError:
        raise  # the grader stopped listening: nobody is left to tell
    except Exception as failure:  # the grader learns why from the report, not a traceback
        error = f"{type(failure).__name__}: {failure}"
        if cells is not None:
            for index in _unrecorded(cells, report.result["cells"]):
                report.cell(_skipped(index))
    finally:
        if run is not None:
            run.stop()
    report.finish(error)
    return report.result


def _read_cells(path: Path) -> list[dict[str, Any]]:
    """The cells of the notebook at ``path`` (read once, before any cell runs)."""
    with open(path, encoding="utf-8") as file:
        notebook = json.load(file)
    cells = notebook.get("cells") if isinstance(notebook, dict) else None
    if not isinstance(cells, list) or not all(isinstance(c, dict) for c in cells):
        raise ValueError(f"{path.name} is not a notebook: it has no list of cells")
    return cells


def _unrecorded(cells: list[dict[str, Any]], records: list[Record]) -> list[int]:
    """Indices of the code cells after the last recorded one."""
    last = records[-1]["index"] if records else -1
    return [i for i, cell in enumerate(cells) if cell.get("cell_type") == "code" and i > last]


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
    args = parser.parse_args(argv)
    if args.cell_timeout <= 0:
        parser.error("--cell-timeout must be positive")
    if args.max_restarts < 0:
        parser.error("--max-restarts must not be negative")
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
    os._exit(status)
