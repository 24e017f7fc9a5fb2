"""A grading command interrupted mid-batch leaves no process behind: its workers, their
forkserver, their sandboxes and judges all end with it.

The command runs under a small parent that makes itself a child subreaper, so that whatever the
command leaves running becomes that parent's child (not init's) and can be seen, named and ended
there; only this test's own processes are ever looked at.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from autograder.examples import DEMO_CLASS, build_course
from autograder.pipeline.course.course import tool_env
from tests.processes import parent_of

pytestmark = [pytest.mark.slow, pytest.mark.sandbox, pytest.mark.usefixtures("sandbox_required")]

ASSIGNMENT = "01_attention"
# oscar's notebook loops until its cell times out: a submission still grading when interrupted.
CLASS = [s for s in DEMO_CLASS if s.student in ("ada", "alan", "oscar")]
# argv: the command.  Prints the command's PID, then (once it has exited and its leftovers had
# GRACE seconds to end) {"status": ..., "left": [the command line of each process left]}.
SUBREAPER = """
import ctypes, json, os, signal, subprocess, sys, time
from pathlib import Path

GRACE = 10
ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
# As in a terminal, whatever this run inherited (a shell's background job ignores SIGINT).
signal.signal(signal.SIGINT, signal.SIG_DFL)
with open(sys.argv[1], "wb") as log:
    command = subprocess.Popen(sys.argv[2:], stdout=log, stderr=log, start_new_session=True)
print(command.pid, flush=True)
status = command.wait()

def children():
    found = {}
    for entry in Path("/proc").iterdir():
        try:
            stat = (entry / "stat").read_text()
            if entry.name.isdigit() and int(stat[stat.rindex(")") + 2:].split()[1]) == os.getpid():
                found[int(entry.name)] = (entry / "cmdline").read_bytes().replace(b"\\0", b" ")
        except (OSError, ValueError):
            pass
    return found

def reap():
    try:
        while os.waitpid(-1, os.WNOHANG)[0] > 0:  # leftovers that ended (zombies, now ours)
            pass
    except ChildProcessError:  # none left to wait for
        pass

deadline = time.monotonic() + GRACE
while (left := children()) and time.monotonic() < deadline:
    reap()
    time.sleep(0.2)
print(json.dumps({"status": status, "left": [c.decode(errors="replace") for c in left.values()]}))
while left := children():  # each killed one's children become ours in turn: end them all
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    reap()
"""


@pytest.fixture(scope="module")
def three_students(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("interrupt") / "course"
    build_course(root, CLASS)
    return root


def _grading(command: int) -> bool:
    """Whether a worker of ``command`` is grading: a sandbox (bwrap) runs below a process below
    the command (the command itself runs one only to check that it can)."""
    for entry in Path("/proc").iterdir():
        try:
            if (entry / "comm").read_text().strip() != "bwrap":
                continue
            parent = parent_of(int(entry.name))
            if parent != command and Path(f"/proc/{parent}/comm").read_text() != "bwrap\n":
                while parent > 1 and parent != command:
                    parent = parent_of(parent)
                if parent == command:
                    return True
        except (OSError, ValueError, LookupError):
            continue
    return False


@pytest.mark.parametrize(
    ("whom", "how", "engine"),
    [
        ("group", signal.SIGINT, ["--workers", "2"]),
        ("grader", signal.SIGINT, ["--workers", "2"]),
        ("grader", signal.SIGKILL, ["--workers", "2"]),
        ("group", signal.SIGINT, ["--cluster", "local:2"]),
    ],
    ids=["ctrl-c", "kill-int", "kill-9", "dask-ctrl-c"],
)
def test_a_stopped_batch_leaves_no_process_behind(
    three_students: Path, tmp_path: Path, whom: str, how: signal.Signals, engine: list[str]
):
    """Ctrl-C in a terminal signals the command's whole process group, its workers included;
    `kill -INT` only the command, which must end its busy workers itself; after `kill -9` (or
    SIGTERM, which Python does not catch) it can end nothing, and its workers must end alone.
    A Dask LocalCluster's workers fork from a server too."""
    course = shutil.copytree(three_students, tmp_path / "course", symlinks=True)
    log = tmp_path / "command.log"
    command = [sys.executable, "-m", "autograder", "grade", ASSIGNMENT, "--no-feedback"]
    command += ["--course", str(course), "--cell-timeout", "20", *engine]
    # Its temporary folders under tmp_path: a command killed with -9 cannot remove its own.
    (scratch := tmp_path / "t").mkdir()
    parent = subprocess.Popen(
        [sys.executable, "-c", SUBREAPER, str(log), *command],
        env=tool_env(OMP_NUM_THREADS="1", TMPDIR=str(scratch)),
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        grader = int(parent.stdout.readline())
        deadline = time.monotonic() + 300
        while not _grading(grader):
            assert parent.poll() is None, f"the command ended first:\n{log.read_text()}"
            assert time.monotonic() < deadline, f"no submission started:\n{log.read_text()}"
            time.sleep(0.1)
        if whom == "group":
            os.killpg(grader, how)
        else:
            os.kill(grader, how)
        ended = json.loads(parent.communicate(timeout=300)[0])
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()
    output = log.read_text()
    assert ended["left"] == [], f"left running: {ended['left']}\n{output}"
    assert ended["status"] != 0, output
    assert "submissions graded in" not in output, output  # it stopped, rather than finished
    if how == signal.SIGINT:  # it says what it kept, and neither it nor a worker a traceback
        assert ended["status"] == 130 and "interrupted: the grades recorded so far" in output
        assert "Traceback" not in output and "KeyboardInterrupt" not in output, output
