"""The notebook runner records every code cell's fate and survives errors, crashes and floods.

The runner runs here without the sandbox, on small notebooks built in tmp_path.  A kernel start
costs about 0.7 s and a crash is noticed within about 1 s, so cell timeouts are kept short.
"""

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbformat import NotebookNode
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from autograder.isolation.runner import run_notebook
from autograder.pipeline.verdicts import parse_report
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


def stdout(record: dict[str, Any]) -> str:
    """Everything a cell printed to stdout."""
    return "".join(
        out["text"]
        for out in record["outputs"]
        if out["output_type"] == "stream" and out["name"] == "stdout"
    )


def statuses(result: dict[str, Any]) -> list[str]:
    """The status of each recorded cell, in order."""
    return [cell["status"] for cell in result["cells"]]


def test_cli_runs_a_normal_notebook_in_its_folder(tmp_path):
    cells = [
        new_markdown_cell("# Title"),
        new_code_cell("x = 6 * 7\nprint('hello')"),
        new_markdown_cell("Some text."),
        new_code_cell("x"),
        new_code_cell("import os\nprint(os.getcwd())"),
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
    first, second, third = result["cells"]
    assert first["outputs"] == [{"output_type": "stream", "name": "stdout", "text": "hello\n"}]
    assert second["outputs"][0]["output_type"] == "execute_result"
    assert second["outputs"][0]["data"]["text/plain"] == "42"
    assert stdout(third) == f"{tmp_path}\n"
    assert all(cell["seconds"] >= 0 for cell in result["cells"])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["nb.ipynb"]  # no report file


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


def test_a_raising_cell_is_an_error_and_later_cells_run(tmp_path):
    result = run_code(tmp_path, "1 / 0", "print('still here')")
    assert statuses(result) == ["error", "ok"]
    error = result["cells"][0]
    assert error["ename"] == "ZeroDivisionError"
    assert error["evalue"] == "division by zero"
    assert error["outputs"][-1]["output_type"] == "error"
    assert stdout(result["cells"][1]) == "still here\n"
    assert result["restarts"] == 0


@pytest.mark.slow
def test_a_crash_restarts_the_kernel_and_replays_cells_that_succeeded(tmp_path):
    result = run_code(
        tmp_path,
        "a = 41\nprint('set a')",
        "b = 1\nraise ValueError('not replayed')",
        # The pause lets the kernel's output thread send "bye" before the process dies.
        "import os, time\nprint('bye', flush=True)\ntime.sleep(0.5)\nos._exit(1)",
        "print(a + 1, 'b' in globals())",
    )
    assert statuses(result) == ["ok", "error", "crashed", "ok"]
    assert result["restarts"] == 1
    assert stdout(result["cells"][0]) == "set a\n"
    assert stdout(result["cells"][2]) == "bye\n"
    # Only the succeeding cell came back, and it printed nothing into the next cell's record.
    assert stdout(result["cells"][3]) == "42 False\n"


def test_a_memory_error_restarts_the_kernel_so_its_memory_is_freed(tmp_path):
    result = run_code(
        tmp_path,
        "a = 1",
        "def bomb():\n    held = bytearray(2**20)\n    raise MemoryError('out of memory')\nbomb()",
        "print(a, 'bomb' in globals())",
    )
    assert statuses(result) == ["ok", "error", "ok"]
    assert result["cells"][1]["ename"] == "MemoryError"
    assert result["restarts"] == 1
    # A fresh kernel replayed the cell that succeeded, not the one that ran out of memory.
    assert stdout(result["cells"][2]) == "1 False\n"


@pytest.mark.slow
def test_a_stuck_cell_times_out_without_stalling_the_run(tmp_path):
    started = time.monotonic()
    result = run_code(tmp_path, "a = 1", STUBBORN_LOOP, "print(a)", cell_timeout=2)
    assert time.monotonic() - started < 8
    assert statuses(result) == ["ok", "timeout", "ok"]
    assert 2 <= result["cells"][1]["seconds"] < 4
    assert stdout(result["cells"][2]) == "1\n"
    assert result["restarts"] == 1


@pytest.mark.slow
def test_cells_after_the_last_allowed_restart_are_skipped(tmp_path):
    crash = "import os\nos._exit(1)"
    result = run_code(tmp_path, "a = 1", crash, crash, "print(a)", "print(a)", max_restarts=1)
    assert statuses(result) == ["ok", "crashed", "crashed", "skipped", "skipped"]
    assert result["restarts"] == 1
    assert [cell["index"] for cell in result["cells"]] == [0, 1, 2, 3, 4]
    assert result["cells"][3]["outputs"] == [] and result["cells"][3]["execution_count"] is None
    assert result["finished"] is True


@pytest.mark.slow
def test_a_replay_that_crashes_costs_a_restart(tmp_path):
    # Crashes when run a second time, that is when replayed.
    once = "import os\nif os.path.exists('ran'):\n    os._exit(1)\nopen('ran', 'w').close()"
    result = run_code(tmp_path, once, "import os\nos._exit(1)", "print(1)", max_restarts=2)
    assert statuses(result) == ["ok", "crashed", "skipped"]
    assert result["restarts"] == 2


def test_output_past_the_cap_is_truncated_with_a_note(tmp_path):
    cap = 2000
    result = run_code(
        tmp_path,
        "print('x' * 100_000)\nprint('lost')",
        "print('small')",
        max_output_bytes=cap,
    )
    assert statuses(result) == ["ok", "ok"]
    flooded = result["cells"][0]
    *kept, note = flooded["outputs"]
    assert sum(len(json.dumps(out)) for out in kept) <= cap
    assert stdout({"outputs": kept}).strip("x") == ""
    assert len(stdout({"outputs": kept})) > cap // 2
    assert note["output_type"] == "stream" and note["name"] == "stdout"
    assert "truncated" in note["text"] and str(cap) in note["text"]
    assert stdout(result["cells"][1]) == "small\n"


def test_an_output_too_big_to_cut_is_dropped(tmp_path):
    image = "from IPython.display import display\ndisplay({'image/png': 'A' * 50_000}, raw=True)"
    result = run_code(tmp_path, f"print('before')\n{image}", max_output_bytes=1000)
    outputs = result["cells"][0]["outputs"]
    assert [out["output_type"] for out in outputs] == ["stream", "stream"]
    assert outputs[0]["text"] == "before\n" and "truncated" in outputs[1]["text"]


def test_a_runner_killed_by_its_kernel_has_told_the_cells_before(tmp_path):
    # The kernel saves its pid (it outlives the runner, in a session of its own), then kills the
    # runner: the report ends after the first cell and reading it does not block.
    kill = "import os, signal\nopen('kernel.pid', 'w').write(str(os.getpid()))\n"
    kill += "os.kill(os.getppid(), signal.SIGKILL)"
    path = write_notebook(tmp_path, [new_code_cell("print('one')"), new_code_cell(kill)])
    try:
        returncode, _, report = run_cli(str(path), "--cell-timeout", "10")
    finally:
        os.kill(int((tmp_path / "kernel.pid").read_text()), signal.SIGKILL)
    assert returncode == -signal.SIGKILL
    result = parse_report(report)
    assert statuses(result) == ["ok"] and stdout(result["cells"][0]) == "one\n"
    assert result["finished"] is False


# Stands for the sandbox's autograder package (isolation/autograder_in_sandbox.py) in the kernel.
FAKE_AUTOGRADER = """
import json

def run_hidden_checks(assignment, grade_id, namespace):
    pass

def judge_failed_cell(assignment, grade_id):
    with open("judged.json", "a") as file:
        file.write(json.dumps([assignment, grade_id]) + "\\n")
"""


class _FakeJudge(threading.Thread):
    """The judge's end of the cell channel: records what the runner says, asks for every
    follow-up."""

    def __init__(self, sock: socket.socket):
        super().__init__(daemon=True)
        self.sock, self.said = sock, []

    def run(self) -> None:
        with self.sock, self.sock.makefile("rwb", buffering=0) as stream:
            for line in stream:
                message = json.loads(line)
                self.said.append(message)
                answer = {"needed": True} if "follow_up" in message else {"ok": True}
                stream.write(json.dumps(answer).encode() + b"\n")


@pytest.mark.slow  # seconds: kept out of the fast tier
def test_the_runner_tells_the_judge_each_cell_and_asks_before_a_follow_up(tmp_path):
    (tmp_path / "autograder").mkdir()
    (tmp_path / "autograder" / "__init__.py").write_text(FAKE_AUTOGRADER)
    hidden = (
        "from autograder import run_hidden_checks\n"
        "run_hidden_checks('01_attention', '{}', globals())"  # single quotes are found too
    )

    def test_cell(source: str, name: str) -> NotebookNode:
        graded = {"grade": True, "solution": False, "grade_id": name, "points": 1}
        return new_code_cell(f"{source}\n{hidden.format(name)}", metadata={"nbgrader": graded})

    answer_cell = {"nbgrader": {"grade": False, "solution": True, "grade_id": "a"}}
    cells = [
        new_code_cell("answer = 42", metadata=answer_cell),
        new_code_cell("1 / 0", metadata=answer_cell),  # an answer cell: nothing to judge
        test_cell("assert answer == 41, 'public'", "one"),
        test_cell("assert answer == 42", "two"),
        test_cell("raise KeyError('k')", "three"),
    ]
    path = write_notebook(tmp_path, cells)
    ours, theirs = socket.socketpair()
    judge = _FakeJudge(ours)
    judge.start()
    result = run_notebook(path, cell_timeout=TIMEOUT, judge_fd=theirs.detach())
    judge.join(10)
    assert statuses(result) == ["ok", "error", "error", "ok", "error"]
    judged = [json.loads(line) for line in (tmp_path / "judged.json").read_text().splitlines()]
    assert judged == [["01_attention", "one"], ["01_attention", "three"]]
    assert judge.said == [
        {"open": 0, "grade_id": None, "replay": False},
        {"close": 0},
        {"open": 1, "grade_id": None, "replay": False},
        {"close": 1},
        {"open": 2, "grade_id": "one", "replay": False},
        {"follow_up": "one", "visible_failure": "AssertionError: public"},
        {"close": 2},
        {"open": 3, "grade_id": "two", "replay": False},
        {"close": 3},
        {"open": 4, "grade_id": "three", "replay": False},
        {"follow_up": "three", "visible_failure": "KeyError: 'k'"},
        {"close": 4},
    ]
    assert [o["output_type"] for o in result["cells"][2]["outputs"]] == ["error"]
