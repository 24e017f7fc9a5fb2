"""The notebook runner records every code cell's fate and survives errors, crashes and exits.

The runner runs here without the sandbox, on small notebooks built in tmp_path.  Its plain kernel
prints to /dev/null, so cells that must say something write it to a file.
"""

import json
import os
import resource
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbformat import NotebookNode
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from autograder.isolation.runner import WALL_FACTOR, _Clock, run_notebook
from autograder.judging.kernel import JUDGE_SOCKET_ENV
from autograder.judging.protocol import receive_message, send_message
from autograder.pipeline.worker.verdicts import parse_report
from autograder.untrusted import read_pipe

REPO = Path(__file__).resolve().parents[1]
TIMEOUT = 3.0

# Ignores interrupts and SIGTERM, and holds the GIL so that the kernel's control thread cannot
# answer a shutdown request: only killing the kernel ends it.
STUBBORN_LOOP = """
import signal
signal.signal(signal.SIGTERM, signal.SIG_IGN)
while True:
    try:
        sum(range(10**12))
    except KeyboardInterrupt:
        pass
"""


def write_notebook(folder: Path, cells: list[NotebookNode]) -> Path:
    """Save a v4 notebook of ``cells`` as folder/nb.ipynb."""
    path = folder / "nb.ipynb"
    nbformat.write(new_notebook(cells=cells), path)
    return path


def run_code(folder: Path, *sources: str, **options: Any) -> dict[str, Any]:
    """Run a notebook of code cells with the runner's function; its result."""
    path = write_notebook(folder, [new_code_cell(source) for source in sources])
    options.setdefault("cell_timeout", TIMEOUT)
    return run_notebook(path, **options)


def run_cli(*args: str) -> tuple[int, str, bytes]:
    """Run ``python -m autograder.isolation.runner ARGS --report-fd FD`` from the repository
    root; its exit status, its stderr and what it sent on the report pipe."""
    report_read, report_write = os.pipe()
    argv = [sys.executable, "-m", "autograder.isolation.runner", *args]
    with subprocess.Popen(
        [*argv, "--report-fd", str(report_write)],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        pass_fds=(report_write,),
    ) as process:
        os.close(report_write)
        report, truncated = read_pipe(report_read, 1 << 20, 60)
        os.close(report_read)
        assert not truncated
        stderr = process.stderr.read().decode()
    return process.returncode, stderr, report


def written(folder: Path) -> str:
    """What the cells appended to folder/said.txt: the plain kernel's output goes nowhere."""
    path = folder / "said.txt"
    return path.read_text() if path.exists() else ""


SAY = "def say(*words):\n    with open('said.txt', 'a') as f:\n        print(*words, file=f)\n"


def statuses(result: dict[str, Any]) -> list[str]:
    """The status of each recorded cell, in order."""
    return [cell["status"] for cell in result["cells"]]


@pytest.mark.slow  # half a second or more: out of the fast tier (tests/tiers.py)
def test_cli_runs_a_normal_notebook_in_its_folder(tmp_path):
    cells = [
        new_markdown_cell("# Title"),
        new_code_cell(f"{SAY}x = 6 * 7\nprint('hello')"),
        new_markdown_cell("Some text."),
        new_code_cell("say(x)"),
        new_code_cell("import os\nsay(os.getcwd())"),
    ]
    path = write_notebook(tmp_path, cells)
    returncode, stderr, report = run_cli(str(path), "--cell-timeout", "3")
    assert returncode == 0, stderr
    # One line per cell, then the end: the grader reads it as the cells arrive.
    assert [json.loads(line).keys() for line in report.splitlines()] == [
        {"cell"},
        {"cell"},
        {"cell"},
        {"finished"},
    ]
    result = parse_report(report)
    assert result["finished"] is True and result["restarts"] == 0 and "error" not in result
    assert [cell["index"] for cell in result["cells"]] == [1, 3, 4]
    assert statuses(result) == ["ok", "ok", "ok"]
    assert [cell["execution_count"] for cell in result["cells"]] == [1, 2, 3]
    assert written(tmp_path) == f"42\n{tmp_path}\n"
    assert all(cell["seconds"] >= 0 for cell in result["cells"])
    # Nothing the cells print is kept, and no report file is written.
    assert all("outputs" not in cell for cell in result["cells"])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["nb.ipynb", "said.txt"]


def test_cli_reports_an_unreadable_notebook(tmp_path):
    (tmp_path / "nb.ipynb").write_text("{not json")
    returncode, stderr, report = run_cli(str(tmp_path / "nb.ipynb"))
    assert returncode == 1
    result = parse_report(report)
    assert result["cells"] == [] and result["finished"] is True
    assert result["error"] and result["error"] in stderr


def test_cli_without_an_open_report_pipe_says_so(tmp_path):
    path = write_notebook(tmp_path, [new_code_cell("1")])
    argv = [sys.executable, "-m", "autograder.isolation.runner", str(path), "--report-fd", "77"]
    completed = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=60)
    assert completed.returncode == 1
    assert "cannot report on fd 77" in completed.stderr


@pytest.mark.slow  # half a second or more: out of the fast tier (tests/tiers.py)
def test_a_raising_cell_is_an_error_and_later_cells_run(tmp_path):
    result = run_code(tmp_path, f"{SAY}1 / 0", "say('still here')")
    assert statuses(result) == ["error", "ok"]
    error = result["cells"][0]
    assert error["ename"] == "ZeroDivisionError"
    assert error["evalue"] == "division by zero"
    assert written(tmp_path) == "still here\n"
    assert result["restarts"] == 0


@pytest.mark.slow  # half a second or more: out of the fast tier (tests/tiers.py)
def test_cells_run_as_plain_python_without_ipython(tmp_path):
    result = run_code(
        tmp_path,
        "%time x = 1",  # a magic is no Python
        "get_ipython().user_ns['x'] = 1",  # nor is there a shell to write through
        f"{SAY}import IPython\nsay(IPython.get_ipython(), __name__)",
    )
    assert statuses(result) == ["error", "error", "ok"]
    assert result["cells"][0]["ename"] == "SyntaxError"
    assert result["cells"][1]["ename"] == "NameError"
    assert written(tmp_path) == "None __main__\n"


@pytest.mark.slow
def test_a_crash_restarts_the_kernel_and_replays_cells_that_succeeded(tmp_path):
    result = run_code(
        tmp_path,
        f"{SAY}a = 41\nsay('set a')",
        "b = 1\nraise ValueError('not replayed')",
        "import os\nsay('bye')\nos._exit(1)",
        "say(a + 1, 'b' in globals())",
    )
    assert statuses(result) == ["ok", "error", "crashed", "ok"]
    assert result["restarts"] == 1
    # Only the succeeding cell came back (it said "set a" again when replayed).
    assert written(tmp_path) == "set a\nbye\nset a\n42 False\n"


@pytest.mark.slow  # seconds: kept out of the fast tier, which must fit 30 s
def test_a_memory_error_restarts_the_kernel_so_its_memory_is_freed(tmp_path):
    result = run_code(
        tmp_path,
        f"{SAY}a = 1",
        "def bomb():\n    held = bytearray(2**20)\n    raise MemoryError('out of memory')\nbomb()",
        "say(a, 'bomb' in globals())",
    )
    assert statuses(result) == ["ok", "error", "ok"]
    assert result["cells"][1]["ename"] == "MemoryError"
    assert result["restarts"] == 1
    # A fresh kernel replayed the cell that succeeded, not the one that ran out of memory.
    assert written(tmp_path) == "1 False\n"


@pytest.mark.slow
@contextmanager
def busy_neighbours(cpu: int, count: int) -> Iterator[None]:
    """``count`` processes that spin on CPU ``cpu`` for as long as the block runs."""
    spin = f"import os\nos.sched_setaffinity(0, {{{cpu}}})\nwhile True:\n    pass"
    # Each in a session of its own, as each sandbox is: with autogroup scheduling the kernel
    # shares the CPU between sessions, so one session of spinners would take half, not most.
    neighbours = [
        subprocess.Popen([sys.executable, "-c", spin], start_new_session=True) for _ in range(count)
    ]
    try:
        time.sleep(0.3)  # every neighbour spinning before the block goes on
        yield
    finally:
        for neighbour in neighbours:
            neighbour.kill()
            neighbour.wait()


NEIGHBOURS = 11
# The grading corpus's memory bomb.  Under a 1 GiB limit it costs about 0.4 s of CPU alone (the
# kernel zeroes the pages; measured on a 2-core machine), more beside other memory-hungry work:
# eleven neighbours make that 4.8 s or more on the wall clock, past a 3 s timeout.
MEMORY_BOMB = """def bomb():
    chunks = []
    for _ in range(64):
        chunks.append(bytearray(128 * 2**20))
bomb()
"""
# The first cell holds the kernel until the neighbours spin, so that its start, which imports
# torch, is not slowed twelvefold.
HOLD = """import os, time
open("ready", "w").close()
while not os.path.exists("go"):
    time.sleep(0.02)
"""


@pytest.mark.slow
@pytest.mark.sandbox  # 20 s of a worker (tests/tiers.py)
def test_a_busy_machine_turns_no_memory_error_into_a_timeout(tmp_path):
    """The time a cell waits for a CPU that other processes hold is not charged to it."""
    path = write_notebook(tmp_path, [new_code_cell(HOLD), new_code_cell(MEMORY_BOMB)])
    cpu = min(os.sched_getaffinity(0))

    def limit() -> None:
        os.sched_setaffinity(0, {cpu})
        resource.setrlimit(resource.RLIMIT_DATA, (2**30, 2**30))

    report_read, report_write = os.pipe()
    argv = [sys.executable, "-m", "autograder.isolation.runner", str(path), "--cell-timeout", "3"]
    with subprocess.Popen(
        [*argv, "--report-fd", str(report_write)],
        cwd=REPO,
        stderr=subprocess.PIPE,
        pass_fds=(report_write,),
        preexec_fn=limit,
    ) as runner:
        os.close(report_write)
        deadline = time.monotonic() + 60
        while not (tmp_path / "ready").exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        with busy_neighbours(cpu, NEIGHBOURS):
            (tmp_path / "go").touch()
            report, _ = read_pipe(report_read, 1 << 20, 120)
        os.close(report_read)
        assert runner.wait() == 0, runner.stderr.read().decode()
    result = parse_report(report)
    assert statuses(result) == ["ok", "error"], result
    assert result["cells"][1]["ename"] == "MemoryError"
    # Its wall time went past the timeout: the load was real.
    assert result["cells"][1]["seconds"] > 3, result


@pytest.mark.slow
def test_the_clock_credits_waiting_for_a_cpu_and_never_sleeping():
    """Beside spinning neighbours on one CPU, a spinning process is credited most of its wall
    time, a sleeping one none of it."""
    cpu = min(os.sched_getaffinity(0))
    pinned = f"import os, time\nos.sched_setaffinity(0, {{{cpu}}})\n"
    with busy_neighbours(cpu, 3):
        spinner = subprocess.Popen([sys.executable, "-c", pinned + "while True:\n    pass"])
        sleeper = subprocess.Popen([sys.executable, "-c", pinned + "time.sleep(30)"])
        try:
            time.sleep(0.5)  # both started
            clocks = [_Clock(spinner.pid, 60), _Clock(sleeper.pid, 60)]
            time.sleep(2)
            (spun, slept), wall = [c.waited() for c in clocks], time.monotonic() - clocks[0].started
        finally:
            for process in (spinner, sleeper):
                process.kill()
                process.wait()
    assert spun > wall / 2, (spun, wall)  # one of four processes on the CPU: it waits 3/4
    assert slept < 0.1, slept


@pytest.mark.slow
def test_a_stuck_cell_times_out_without_stalling_the_run(tmp_path):
    started = time.monotonic()
    result = run_code(tmp_path, f"{SAY}a = 1", STUBBORN_LOOP, "say(a)", cell_timeout=2)
    # 2 s on an idle machine; on a busy one, the time it waited for a CPU on top, within bounds.
    assert time.monotonic() - started < 2 * WALL_FACTOR + 6
    assert statuses(result) == ["ok", "timeout", "ok"]
    assert 2 <= result["cells"][1]["seconds"] < 2 * WALL_FACTOR + 1
    assert written(tmp_path) == "1\n"
    assert result["restarts"] == 1


@pytest.mark.slow
def test_cells_after_the_last_allowed_restart_are_skipped(tmp_path):
    crash = "import os\nos._exit(1)"
    result = run_code(tmp_path, "a = 1", crash, crash, "print(a)", "print(a)", max_restarts=1)
    assert statuses(result) == ["ok", "crashed", "crashed", "skipped", "skipped"]
    assert result["restarts"] == 1
    assert [cell["index"] for cell in result["cells"]] == [0, 1, 2, 3, 4]
    assert result["cells"][3]["execution_count"] is None
    assert result["finished"] is True


@pytest.mark.slow
def test_a_replay_that_crashes_costs_a_restart(tmp_path):
    # Crashes when run a second time, that is when replayed.
    once = "import os\nif os.path.exists('ran'):\n    os._exit(1)\nopen('ran', 'w').close()"
    result = run_code(tmp_path, once, "import os\nos._exit(1)", "print(1)", max_restarts=2)
    assert statuses(result) == ["ok", "crashed", "skipped"]
    assert result["restarts"] == 2


@pytest.mark.slow  # seconds: kept out of the fast tier, which must fit 30 s
def test_a_runner_killed_by_its_kernel_has_told_the_cells_before(tmp_path):
    # The kernel saves its pid (it outlives the runner, in a session of its own), then kills the
    # runner: the report ends after the first cell and reading it does not block.
    kill = "import os, signal\nopen('kernel.pid', 'w').write(str(os.getpid()))\n"
    kill += "os.kill(os.getppid(), signal.SIGKILL)"
    path = write_notebook(tmp_path, [new_code_cell(f"{SAY}say('one')"), new_code_cell(kill)])
    try:
        returncode, _, report = run_cli(str(path), "--cell-timeout", "10")
    finally:
        os.kill(int((tmp_path / "kernel.pid").read_text()), signal.SIGKILL)
    assert returncode == -signal.SIGKILL
    result = parse_report(report)
    assert statuses(result) == ["ok"] and written(tmp_path) == "one\n"
    assert result["finished"] is False


class _FakeJudge(threading.Thread):
    """The judge's two ends: the cell channel, where it records what the runner says, and the
    checkpoint socket, where it records each hello and passes cell "two" only."""

    def __init__(self, channel: socket.socket, listener: socket.socket):
        super().__init__(daemon=True)
        self.channel, self.listener, self.said, self.hellos = channel, listener, [], []
        threading.Thread(target=self.serve_checkpoints, daemon=True).start()

    def run(self) -> None:
        with self.channel, self.channel.makefile("rwb", buffering=0) as stream:
            for line in stream:
                self.said.append(json.loads(line))
                stream.write(b'{"ok": true}\n')

    def serve_checkpoints(self) -> None:
        while True:
            connection, _ = self.listener.accept()
            with connection:
                hello, _ = receive_message(connection)
                self.hellos.append(hello)
                passed = hello["hello"][1] == "two"
                send_message(connection, {"op": "verdict", "passed": passed, "message": "m"}, [])


@pytest.mark.slow  # seconds: kept out of the fast tier
def test_the_runner_opens_a_window_per_cell_and_every_test_cell_reaches_the_judge(
    tmp_path, monkeypatch
):
    def test_cell(source: str, name: str) -> NotebookNode:
        graded = {"grade": True, "solution": False, "grade_id": name, "points": 1}
        metadata = {"nbgrader": graded, "autograder": {"checkpoint": ["01_attention", name]}}
        return new_code_cell(source, metadata=metadata)

    answer_cell = {"nbgrader": {"grade": False, "solution": True, "grade_id": "a"}}
    cells = [
        new_code_cell("answer = 42", metadata=answer_cell),
        new_code_cell("1 / 0", metadata=answer_cell),  # an answer cell: nothing to judge
        test_cell("assert answer == 41, 'public'", "one"),  # the visible check fails
        test_cell("assert answer == 42", "two"),
        test_cell("raise KeyError('k')", "three"),
    ]
    path = write_notebook(tmp_path, cells)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(tmp_path / "judge.sock"))
    listener.listen(4)
    monkeypatch.setenv(JUDGE_SOCKET_ENV, str(tmp_path / "judge.sock"))
    ours, theirs = socket.socketpair()
    judge = _FakeJudge(ours, listener)
    judge.start()
    result = run_notebook(path, cell_timeout=TIMEOUT, judge_fd=theirs.detach())
    judge.join(10)
    # The judge's verdict decides each test cell's status; the visible checks only their flag.
    assert statuses(result) == ["ok", "error", "error", "ok", "error"]
    assert [cell.get("visible") for cell in result["cells"]] == [None, None, False, True, False]
    assert judge.hellos == [
        {"hello": ["01_attention", "one"], "visible": False},
        {"hello": ["01_attention", "two"], "visible": True},
        {"hello": ["01_attention", "three"], "visible": False},
    ]
    assert judge.said == [
        message
        for index, grade_id in enumerate([None, None, "one", "two", "three"])
        for message in ({"open": index, "grade_id": grade_id, "replay": False}, {"close": index})
    ]
