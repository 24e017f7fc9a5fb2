"""The trusted judge: it decides which cell is judged, runs its hidden checks, and reports.

One judge process serves one submission.  It listens on two channels:

* the **cell channel**, a socket pair whose other end only the runner holds (it reaches the
  sandbox as a file descriptor that the student's kernel neither inherits nor can reopen, see
  autograder/isolation/runner.py).  Before each code cell the runner says which cell runs and, for
  a graded test cell, its grade id from the instructor's copy of the notebook; after it, that the
  cell ended;
* the **checkpoint socket**, which the kernel connects to when a test cell's hidden-check line
  runs (autograder/judging/kernel.py).

A checkpoint is judged only for the graded test cell running at that moment, at most once per
cell and submission.  Any other call (from an answer cell, between cells, for another cell's
grade id, or a second time) is refused, reported as a refusal, and judged nothing.  The checks then
run against the kernel's namespace through proxies (autograder/judging/proxies.py), and each cell's
:class:`~autograder.authoring.registry.CellGrade` goes to the grading worker over a pipe.
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import selectors
import signal
import socket
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import torch

from autograder.authoring import student_errors
from autograder.authoring.registry import (
    CellGrade,
    CheckResult,
    StopChecks,
    checks_for,
    forget_shared,
    grade_cell,
    one_submission,
)
from autograder.authoring.used_answers import charged_elsewhere
from autograder.judging import protocol, source_bans
from autograder.judging.containment import confine, death, exiting
from autograder.judging.limits import JudgeLimits
from autograder.judging.proxies import Link, RemoteNamespace, _current

WORKER_POLL_SECONDS = 1.0  # how often an idle judge checks that its worker still lives
HELLO_SECONDS = 10.0  # a kernel that connects says which cell it means at once, or is dropped
_CONTROL_LINE_BYTES = 64 * 1024  # a runner's message is a short JSON line
# What the feedback says of a test cell whose visible checks failed in the grading run.
VISIBLE_FAILED = "run the cell in your notebook to see its message"


@dataclass
class _Window:
    """The code cell that the runner says is running now."""

    index: int
    grade_id: str | None  # the instructor's grade id, for a graded test cell
    replay: bool = False  # re-run after a kernel restart: answered from the first verdict


class Judge:
    """Judges the graded test cells of one sandboxed notebook, in a process of its own.

    The judge process is forked from the grading worker (torch and the checks are already
    imported) with its own address-space, CPU-time and file-size limits, sees ``read_only`` (the
    course, the checks) read-only in a mount namespace of its own (autograder/judging/
    containment.py), and reports to the worker over a pipe.  If it crashes, hangs or runs out of
    memory, only this submission's cells lose their grades, and :attr:`failure` says why.
    :attr:`cell_channel` is the runner's end of the cell channel: hand it to the runner and to
    nothing else.

    A fork copies only the forking thread, and a lock another thread held stays held in the
    child.  So the process that forks a judge runs no other thread, nor does a library start one
    in it: a pool worker forks from a preloaded forkserver (pipeline/engines/preloaded_workers.py,
    tests/test_preloaded_workers.py), and a Dask worker, which runs its event loop and each job in
    threads, hands its jobs to grading processes it spawned (pipeline/engines/dask_engine.py).
    """

    def __init__(
        self,
        assignment: str,
        socket_path: Path,
        sources: Sequence[str],
        limits: JudgeLimits,
        read_only: Sequence[Path] = (),
        answers: Mapping[int, tuple[str, str]] | None = None,
        charge_again: bool = False,
        course_answers: Mapping[str, str] | None = None,
    ):
        self.assignment = assignment
        # a mistake costs points in every cell it fails, not in the first only (registry.py)
        self.charge_again = charge_again
        self.sources = list(sources)
        # judged notebook index -> (grade id, submitted source) of each answer cell: where an
        # error the kernel reports was raised is shown from this text, not the kernel's
        self.answers = dict(answers or {})
        # answer cell grade id -> the course's answer, defined in the kernel in place of a wrong
        # one that another cell uses, once every cell is judged (authoring/used_answers.py)
        self.course_answers = dict(course_answers or {})
        self.limits = limits
        self.read_only = [str(p) for p in read_only]
        self.grades: dict[str, CellGrade] = {}
        self.checked: dict[str, list[CheckResult]] = {}  # each check's result, as it finished
        self.refusals: list[str] = []  # calls to the hidden checks that were not judged, why
        self.failure: str | None = None
        self.peak_kib = 0
        self.known = {entry.grade_id for entry in checks_for(assignment)}
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(str(socket_path))
        socket_path.chmod(0o777)  # the sandbox user must be able to connect
        self.listener.listen(4)
        self.cell_channel, self._control = socket.socketpair()
        self._judging: str | None = None
        self.pid = 0  # the judge process, once entered
        self._reader: threading.Thread | None = None
        self._exited = False

    def __enter__(self) -> Judge:
        read_end, write_end = os.pipe()
        worker = os.getpid()
        pid = os.fork()
        if pid == 0:  # the judge process: never returns
            os.close(read_end)
            status = 1
            with contextlib.suppress(BaseException):
                self.cell_channel.close()
                confine(self.limits, self.read_only)
                self._serve(os.fdopen(write_end, "w", buffering=1), worker)
                status = 0
            os._exit(status)
        os.close(write_end)
        self.listener.close()  # only the judge process accepts; once it is gone, connects fail
        self._control.close()
        self.pid = pid
        self._reader = threading.Thread(target=self._read, args=(read_end,), daemon=True)
        self._reader.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._exited:
            return
        self._exited = True
        self.cell_channel.close()
        ended, status = os.waitpid(self.pid, os.WNOHANG)
        if not ended and exiting(self.pid):  # dying by itself, not yet waitable: its status
            ended, status = os.waitpid(self.pid, 0)
        died = status if ended else None  # the judge process ended before the notebook did
        if died is None:
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
        assert self._reader is not None
        self._reader.join(timeout=10)
        if died is not None and not (os.WIFEXITED(died) and os.WEXITSTATUS(died) == 0):
            self._lost(death(died))

    def _lost(self, cause: str) -> None:
        """The judge process ended before the notebook did: the cell it was judging keeps the
        checks that had finished, fails the one that was running, and lists the rest as not
        run."""
        self.failure = f"the grader's judge for this notebook stopped ({cause})"
        grade_id = self._judging
        if grade_id is None or grade_id in self.grades:
            return
        done = list(self.checked.get(grade_id, ()))
        names = {result.name for result in done}
        left = [e for e in checks_for(self.assignment, grade_id) if e.name not in names]
        why = (
            f"[judge] {self.failure} while this check ran (a function of yours may have used too "
            "much memory or time)"
        )
        if left:
            done.append(CheckResult(left[0].name, left[0].weight, False, why, left[0].gate))
            stopped = f"not run: the judge stopped during {left[0].name}"
            done += [CheckResult(e.name, e.weight, False, stopped, e.gate) for e in left[1:]]
        self.grades[grade_id] = CellGrade(tuple(done), unjudged="" if done else why)

    def _read(self, read_end: int) -> None:
        """In the worker: collect the judge process's reports, one JSON line each."""
        with os.fdopen(read_end, encoding="utf-8", errors="replace") as reports:
            for line in reports:
                try:
                    report = json.loads(line)
                    if "judging" in report:
                        self._judging = str(report["judging"])
                    elif "checked" in report:
                        result = CheckResult.from_json(report["check"])
                        self.checked.setdefault(str(report["checked"]), []).append(result)
                    elif "refused" in report:
                        self.refusals.append(str(report["refused"]))
                    else:
                        grade_id = str(report["grade_id"])
                        self.grades[grade_id] = CellGrade.from_json(report["grade"])
                        self.peak_kib = max(self.peak_kib, int(report["peak_kib"]))
                except (ValueError, KeyError, TypeError):
                    continue

    # -- in the judge process

    def _serve(self, reports: Any, worker: int) -> None:
        torch.set_num_threads(1)
        signal.signal(signal.SIGALRM, _time_up)
        server = _Server(self, reports)
        selector = selectors.DefaultSelector()
        selector.register(self.listener, selectors.EVENT_READ, server.accept)
        selector.register(self._control, selectors.EVENT_READ, server.control)
        with one_submission(self.charge_again):  # this process judges one submission
            while not server.done:
                events = selector.select(WORKER_POLL_SECONDS)
                if not events and os.getppid() != worker:  # the worker was killed
                    return
                for key, _ in events:
                    key.data()


class _Server:
    """The judge process's state: the open cell window, what was judged, the time spent."""

    def __init__(self, judge: Judge, reports: Any):
        self.judge = judge
        self.reports = reports
        self.window: _Window | None = None
        self.judged: dict[str, CellGrade] = {}
        self.spent = 0.0  # judging time only: the notebook's own cells run between checkpoints
        self.done = False
        self.buffer = b""

    def report(self, message: dict) -> None:
        self.reports.write(json.dumps(message) + "\n")

    # -- the runner's channel

    def control(self) -> None:
        """Read the runner's messages and answer each (see autograder/isolation/runner.py)."""
        chunk = self.judge._control.recv(_CONTROL_LINE_BYTES)
        if not chunk:  # the runner is gone: no cell will run again
            self.done = True
            return
        self.buffer += chunk
        while b"\n" in self.buffer:
            line, self.buffer = self.buffer.split(b"\n", 1)
            self.judge._control.sendall(json.dumps(self._answer(json.loads(line))).encode() + b"\n")
        if len(self.buffer) > _CONTROL_LINE_BYTES:
            self.done = True  # not the runner's protocol: stop judging this notebook

    def _answer(self, message: dict) -> dict:
        if "open" in message:
            grade_id = message.get("grade_id")
            if message.get("replay"):  # a new kernel: values computed from the old one's go
                forget_shared()
            self.window = _Window(
                int(message["open"]),
                str(grade_id) if grade_id is not None else None,
                bool(message.get("replay")),
            )
            return {"ok": True}
        self.window = None  # "close", or anything else: no cell is running
        return {"ok": True}

    # -- the kernel's checkpoints

    def accept(self) -> None:
        connection, _ = self.judge.listener.accept()
        with connection:
            connection.settimeout(HELLO_SECONDS)
            with contextlib.suppress(Exception):  # a misbehaving kernel only loses its own cell
                hello, _ = protocol.receive_message(connection)
                claimed = (hello.get("hello") or [None, None])[1]
                refusal = self._refusal(claimed)
                if refusal is not None:
                    self.report({"refused": refusal})
                    self._send_verdict(connection, False, f"refused: {refusal}")
                    return
                window = self.window
                assert window is not None and window.grade_id is not None
                if window.replay:  # a replay after a restart gets the first verdict again
                    grade = self.judged.get(window.grade_id, CellGrade((), unjudged="not judged"))
                else:
                    grade = self._judge(connection, window, hello.get("visible") is not False)
                self._send_verdict(connection, grade.full_marks, grade.describe())

    def _refusal(self, claimed: object) -> str | None:
        """Why a call to the hidden checks of ``claimed`` is not judged now, or None."""
        name = f"`{claimed}`" if isinstance(claimed, str) else "an unnamed cell"
        window = self.window
        if window is None:
            return f"a call to the hidden checks of {name} came while no cell was running"
        if window.grade_id is None:
            return (
                f"cell {window.index}, which is no graded test cell, called the hidden checks "
                f"of {name}"
            )
        if claimed != window.grade_id:
            return (
                f"cell {window.index}, graded as `{window.grade_id}`, called the hidden checks of "
                f"{name}"
            )
        if window.grade_id in self.judged and not window.replay:
            return f"cell {window.index} called the hidden checks of {name} a second time"
        return None

    def _judge(self, connection: socket.socket, window: _Window, visible_passed: bool) -> CellGrade:
        grade_id = window.grade_id
        assert grade_id is not None
        self.report({"judging": grade_id})
        left = self.judge.limits.total_seconds - self.spent
        started = time.monotonic()
        if grade_id not in self.judge.known:
            grade = CellGrade((), unjudged=f"no hidden checks are registered for `{grade_id}`")
        elif left <= 0:
            grade = CellGrade(
                (),
                unjudged="[judge] the hidden checks of this notebook used up their time "
                f"({self.judge.limits.total_seconds:g} s in all), so this cell was not checked",
            )
        else:
            connection.settimeout(max(0.1, min(self.judge.limits.call_seconds, left)))
            signal.setitimer(signal.ITIMER_REAL, left)  # the whole cell's checks, all exchanges
            link = Link(connection)
            try:
                # The kernel's own words are never shown: they may hold hidden inputs by now.
                shown = "" if visible_passed else VISIBLE_FAILED
                grade = self.run_checks(grade_id, link, shown)
                self._judged(grade_id, grade)  # reported before anything else can go wrong
                if self.judged.keys() >= self.judge.known:  # no answer cell is left to run
                    for cell, repeat in self.waived(link).items():
                        self._judged(cell, repeat)
                    grade = self.judged[grade_id]
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
        self.spent += time.monotonic() - started
        if grade_id not in self.judged:
            self._judged(grade_id, grade)
        return grade

    def _judged(self, grade_id: str, grade: CellGrade) -> None:
        """Keep a cell's grade and report it (a later report of a cell replaces the earlier)."""
        self.judged[grade_id] = grade
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        self.report({"grade_id": grade_id, "grade": grade.to_json(), "peak_kib": peak})

    def waived(self, link: Link) -> dict[str, CellGrade]:
        """The cells that fail only because of a wrong answer cell they use, as repeats of its
        mistake (autograder/authoring/used_answers.py), graded with the course's answers defined
        in the kernel."""

        @contextlib.contextmanager
        def substitute(answers: Sequence[str]) -> Iterator[None]:
            link.request("define", None, *(self.judge.course_answers[a] for a in answers))
            try:
                yield
            finally:
                link.request("undefine")

        with self._checking(link):
            graded = charged_elsewhere(
                self.judge.assignment, self.judged, RemoteNamespace(link), substitute
            )
        return {cell: grade for cell, grade in graded.items() if grade != self.judged[cell]}

    @contextlib.contextmanager
    def _checking(self, link: Link) -> Iterator[None]:
        """Checks run against the kernel behind ``link``: the submitted sources judged for bans,
        the answer cells' text for where an error was raised, errors told as the kernel's."""
        _current.link = link
        try:
            with (
                source_bans.using_sources(self.judge.sources),
                student_errors.using_answers(self.judge.answers),
                student_errors.answers_elsewhere(),
            ):
                yield
        finally:
            _current.link = None

    def run_checks(self, grade_id: str, link: Link, visible_failure: str) -> CellGrade:
        """Run every hidden check of the cell against the kernel's namespace, reporting each
        result as it is known."""

        def checked(result: CheckResult) -> None:
            self.report({"checked": grade_id, "check": asdict(result)})

        with self._checking(link):
            return grade_cell(
                self.judge.assignment,
                grade_id,
                RemoteNamespace(link),
                visible_failure,
                on_check=checked,
            )

    @staticmethod
    def _send_verdict(connection: socket.socket, passed: bool, message: str) -> None:
        with contextlib.suppress(OSError):
            protocol.send_message(
                connection, {"op": "verdict", "passed": passed, "message": message}, []
            )


class JudgeTimeUp(StopChecks):
    """Raised inside a check when the submission's judging time is spent."""


def _time_up(signum: int, frame: Any) -> None:
    link = getattr(_current, "link", None)
    if link is not None:  # it may be mid-exchange: no later check may read its stale replies
        link.alive = False
    raise JudgeTimeUp(
        "the hidden checks of this notebook used up their judging time, so this one was stopped"
    )
