"""The judge runs in a process of its own: if it dies while judging, only that cell (and the
notebook's later ones) lose their verdict, and the grader says why."""

from __future__ import annotations

import math
import os
import signal
import tempfile
import threading
import time
from pathlib import Path

import pytest
import torch

from autograder.authoring import registry
from autograder.examples import solution_answers
from autograder.isolation.runner import _CellChannel
from autograder.judging import kernel
from autograder.judging.containment import exiting
from autograder.judging.judge import WORKER_POLL_SECONDS, Judge, _Server
from autograder.judging.limits import JudgeLimits

ASSIGNMENT, CELL = "01_attention", "test_attention_scaling"


@pytest.mark.slow  # seconds: kept out of the fast tier
def test_a_judge_killed_mid_check_fails_that_cell_with_a_note(monkeypatch):
    answer = solution_answers(ASSIGNMENT)["attention"]
    namespace: dict = {"math": math, "torch": torch, "Tensor": torch.Tensor}
    exec(answer, namespace)
    correct = namespace["attention"]
    called = threading.Event()

    def slow_attention(*args, **kwargs):  # the judge is mid-check while this sleeps
        called.set()
        time.sleep(3)
        return correct(*args, **kwargs)

    namespace["attention"] = slow_attention
    folder = Path(tempfile.mkdtemp())
    folder.chmod(0o755)
    socket_path = folder / "judge.sock"
    monkeypatch.setenv(kernel.JUDGE_SOCKET_ENV, str(socket_path))
    judge = Judge(ASSIGNMENT, socket_path, [answer], JudgeLimits(call_seconds=30))
    kernel_said: list[BaseException] = []

    def run_cell() -> None:
        try:
            kernel.checkpoint(ASSIGNMENT, CELL, namespace)
        except BaseException as error:  # noqa: BLE001 - what the kernel's cell would show
            kernel_said.append(error)

    with judge:
        _CellChannel(os.dup(judge.cell_channel.fileno())).open(3, CELL)
        cell = threading.Thread(target=run_cell)
        cell.start()
        assert called.wait(60), "the judge never called the student's function"
        os.kill(judge.pid, signal.SIGKILL)
        cell.join(60)
    assert kernel_said, "the kernel's checkpoint should fail once its judge is gone"
    assert judge.failure is not None and "killed" in judge.failure, judge.failure
    grade = judge.grades[CELL]
    assert grade.points(1) == 0 and "[judge] the grader's judge" in grade.describe(), grade


@pytest.mark.slow  # seconds: kept out of the fast tier
def test_a_judge_killed_mid_cell_keeps_the_checks_that_had_passed(monkeypatch):
    """test_attention_parity has three checks: the judge dies during the second."""
    answer = solution_answers(ASSIGNMENT)["attention"]
    namespace: dict = {"math": math, "torch": torch, "Tensor": torch.Tensor}
    exec(answer, namespace)
    correct = namespace["attention"]
    namespace["attention"] = lambda *a, **k: (time.sleep(0.2), correct(*a, **k))[1]
    folder = Path(tempfile.mkdtemp())
    folder.chmod(0o755)
    socket_path = folder / "judge.sock"
    monkeypatch.setenv(kernel.JUDGE_SOCKET_ENV, str(socket_path))
    judge = Judge(ASSIGNMENT, socket_path, [answer], JudgeLimits(call_seconds=30))
    cell = "test_attention_parity"
    with judge:
        _CellChannel(os.dup(judge.cell_channel.fileno())).open(3, cell)
        thread = threading.Thread(
            target=_swallowing(kernel.checkpoint), args=(ASSIGNMENT, cell, namespace)
        )
        thread.start()
        deadline = time.monotonic() + 60
        while not judge.checked.get(cell) and time.monotonic() < deadline:
            time.sleep(0.05)
        os.kill(judge.pid, signal.SIGKILL)
        thread.join(60)
    grade = judge.grades[cell]
    first, second, third = grade.checks
    assert first.passed and not second.passed and "[judge]" in second.diagnosis, grade
    assert not third.passed, grade  # never run: the judge was gone
    assert 0 < grade.points(2) < 2


def _swallowing(function):  # noqa: ANN001, ANN202
    def call(*args):  # noqa: ANN002, ANN202
        try:
            function(*args)
        except BaseException:  # noqa: BLE001, S110 - the kernel's cell would show it
            pass

    return call


def test_a_judge_ends_when_its_worker_is_killed(tmp_path: Path):
    """A grading worker killed outright (SIGKILL: no __exit__ runs) leaves no judge behind."""
    tmp_path.chmod(0o755)
    read_end, write_end = os.pipe()
    worker = os.fork()
    if worker == 0:  # the worker: start a judge, say its PID, wait to be killed
        os.close(read_end)
        judge = Judge(ASSIGNMENT, tmp_path / "judge.sock", [], JudgeLimits())
        judge.__enter__()
        os.write(write_end, f"{judge.pid}\n".encode())
        time.sleep(120)
        os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end) as said:
        judge_pid = int(said.readline())
    os.kill(worker, signal.SIGKILL)
    os.waitpid(worker, 0)
    deadline = time.monotonic() + 10 * WORKER_POLL_SECONDS
    while time.monotonic() < deadline and _alive(judge_pid):
        time.sleep(0.1)
    if _alive(judge_pid):
        os.kill(judge_pid, signal.SIGKILL)  # it would hold this run's output open for good
        raise AssertionError(f"judge {judge_pid} outlived its killed worker")


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, ended but not yet reaped by init, counts as ended)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[-1][0] != "Z"
    except FileNotFoundError:
        return False


def test_a_process_is_exiting_only_once_it_has_begun_to_exit():
    child = os.fork()
    if child == 0:
        time.sleep(30)
        os._exit(0)
    try:
        assert not exiting(child)  # alive, asleep
    finally:
        os.kill(child, signal.SIGKILL)
        os.waitpid(child, 0)
    assert exiting(child)  # waited for: gone


def test_a_replayed_cell_means_a_new_kernel_so_values_shared_by_cells_are_recomputed():
    """After a restart the runner replays the cells that ran: the kernel's objects are new, and
    what the judge computed from the old ones (05's held-out predictions) is computed again."""
    server = _Server(None, None)  # type: ignore[arg-type]  # opening a cell touches neither
    with registry.one_submission():
        assert registry.shared(("predictions",), lambda: "old kernel's") == "old kernel's"
        server._answer({"open": 41, "grade_id": "test_heldout_accuracy", "replay": False})
        assert registry.shared(("predictions",), lambda: "new kernel's") == "old kernel's"
        server._answer({"open": 3, "grade_id": None, "replay": True})
        assert registry.shared(("predictions",), lambda: "new kernel's") == "new kernel's"
