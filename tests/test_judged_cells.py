"""Only the student's own work earns points: what a student's kernel does to the hidden checks'
calls, graded end to end in the sandbox (one batch of 01_attention).

Each trick sits in an answer cell, since a cell the student adds never runs when graded.

- An answer cell that calls the hidden checks itself, with correct objects, then tries to empty
  the real test cells: nothing it calls is judged, and the row is ``tamper suspected``.
- A transformer that would strip the visible checks from the test cells (there is no IPython to
  take it), and visible checks that fail whatever the answer: the visible checks never change a
  score.
- An answer that records what the judge passes it, and a later answer cell that raises with the
  record: the graded copy and the feedback hold none of it.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from autograder.examples import UNSCALED, Sample, build_course, solution_answers
from autograder.pipeline.course.course import tool_env
from tests.judge_parity import recorded

pytestmark = [pytest.mark.usefixtures("sandbox_required"), pytest.mark.slow, pytest.mark.sandbox]

ASSIGNMENT = "01_attention"
ROOT = Path(__file__).resolve().parents[1]
MARK = "RECORDED-HIDDEN-INPUT"


def _stubs() -> dict[str, str]:
    """grade_id -> the released (unanswered) source of every answer cell."""
    release = nbformat.read(ROOT / "notebooks" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", 4)
    return {
        cell.metadata["nbgrader"]["grade_id"]: cell.source
        for cell in release.cells
        if cell.metadata.get("nbgrader", {}).get("solution") and cell.cell_type == "code"
    }


def _grade_ids() -> list[str]:
    release = nbformat.read(ROOT / "notebooks" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", 4)
    return [
        c.metadata["nbgrader"]["grade_id"]
        for c in release.cells
        if c.metadata.get("nbgrader", {}).get("grade")
        and not c.metadata["nbgrader"]["solution"]
        and c.cell_type == "code"
    ]


# Calls every graded cell's hidden checks with correct objects, then empties the test cells.
SCRATCH_CALLER = f"""
import math, numpy as np, torch
from IPython import get_ipython
from autograder import run_hidden_checks
from autograder.judging.kernel import checkpoint
_correct = {{"math": math, "torch": torch, "np": np, "Tensor": torch.Tensor}}
for _source in {list(solution_answers(ASSIGNMENT).values())!r}:
    exec(_source, _correct)
for _grade_id in {_grade_ids()!r}:
    for _call in (run_hidden_checks, checkpoint):
        try:
            _call({ASSIGNMENT!r}, _grade_id, _correct)
        except Exception:
            pass
get_ipython().input_transformers_cleanup.append(
    lambda lines: [] if any("run_hidden_checks" in line for line in lines) else lines
)
"""
# Keeps only the imports and the hidden-check line of every test cell.
STRIP_VISIBLE = """
from IPython import get_ipython
def _strip(lines):
    if not any("run_hidden_checks" in line for line in lines):
        return lines
    return [l for l in lines if "run_hidden_checks" in l or l.startswith(("from ", "import "))]
get_ipython().input_transformers_cleanup.append(_strip)
"""
# Makes every visible check fail, right or wrong: only the kernel says so.
BREAK_VISIBLE = """
def check_close(*args, **kwargs):
    raise AssertionError("the visible check failed")
"""
# Looks for the runner's pipe and the judge's cell channel: in this process, and through /proc
# in every other process it can see (the runner's, the launcher's).  Ends its cell with an error
# that says what it could open: the cell runs before any hidden check, so the graded copy quotes it.
FD_PROBE = """
import os, stat
_reached = []
for _pid in [p for p in os.listdir("/proc") if p.isdigit()]:
    if _pid == str(os.getpid()):
        continue  # the kernel's own pipes to the runner, which it was given
    try:
        _fds = os.listdir(f"/proc/{_pid}/fd")
    except OSError:
        continue
    for _fd in _fds:
        _path = f"/proc/{_pid}/fd/{_fd}"
        try:
            _mode = os.stat(_path).st_mode
        except OSError:
            continue
        if stat.S_ISSOCK(_mode) or stat.S_ISFIFO(_mode):
            try:
                os.close(os.open(_path, os.O_WRONLY))
                _reached.append(_path)
            except OSError:
                pass
raise RuntimeError(f"fds reached: {_reached}")
"""
# The attention answer records what it is called with; the causal_mask cell, which runs after
# attention's test cells, raises with the record.
RECORDING = {
    "attention": solution_answers(ASSIGNMENT)["attention"].replace(
        "def attention(", "def _attention(", 1
    )
    + """
_seen = []
_MARK = "RECORDED-" + "HIDDEN-INPUT"  # built at run time: the source itself is shown


def attention(*args, **kwargs):
    _seen.append(repr((args, kwargs))[:300])
    return _attention(*args, **kwargs)
""",
    "causal_mask": solution_answers(ASSIGNMENT)["causal_mask"]
    + "\nraise RuntimeError(f'{_MARK} {len(_seen)} {_seen[-3:]}')\n",
}

CLASS = (
    Sample("stub", "broken", "ok", False, answers=_stubs()),
    Sample(
        "scratch-caller",
        "hostile",
        "tamper suspected",
        False,
        answers=_stubs(),
        extra=SCRATCH_CALLER,
    ),
    Sample("unscaled", "mistake", "ok", False, answers={"attention": UNSCALED}),
    Sample(
        "unscaled-stripped",
        "hostile",
        "ok",
        False,
        answers={"attention": UNSCALED},
        extra=STRIP_VISIBLE,
    ),
    Sample("visible-fails", "hostile", "ok", True, extra=BREAK_VISIBLE),
    Sample("visible-fails-stripped", "hostile", "ok", True, extra=BREAK_VISIBLE + STRIP_VISIBLE),
    Sample("recorder", "hostile", "ok", True, answers=RECORDING),
    Sample("fd-prober", "hostile", "ok", True, extra=FD_PROBE),
)


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    course = tmp_path_factory.mktemp("judged") / "course"
    build_course(course, CLASS)
    command = [sys.executable, "-m", "autograder", "grade", ASSIGNMENT, "--course", str(course)]
    command += ["--workers", "2", "--cell-timeout", "30"]
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=900, env=tool_env(OMP_NUM_THREADS="1")
    )
    assert done.returncode in (0, 1), done.stdout[-3000:] + done.stderr[-3000:]
    (course / "table.txt").write_text(done.stdout)
    return course


def _graded(course: Path, student: str) -> nbformat.NotebookNode:
    path = course / "grading" / "autograded" / student / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    return nbformat.read(path, 4)


def _row(course: Path, student: str) -> str:
    return next(
        line
        for line in (course / "table.txt").read_text().splitlines()
        if line.startswith(student + " ")
    )


def test_calls_from_a_scratch_cell_earn_nothing_and_are_flagged(graded: Path):
    scores = recorded(_graded(graded, "scratch-caller"))
    assert scores and set(scores.values()) == {0}, scores
    assert scores == recorded(_graded(graded, "stub"))
    table = (graded / "table.txt").read_text()
    assert "tamper suspected" in _row(graded, "scratch-caller"), table
    assert "scratch-caller: not judged: cell " in table and "no graded test cell" in table, table


def test_stripping_the_visible_checks_changes_no_score(graded: Path):
    plain, stripped = (recorded(_graded(graded, s)) for s in ("unscaled", "unscaled-stripped"))
    assert plain == stripped and sum(plain.values()) < 15, (plain, stripped)
    # Visible checks that fail for a right answer cost nothing either.
    failing, stripped = (
        recorded(_graded(graded, s)) for s in ("visible-fails", "visible-fails-stripped")
    )
    assert failing == stripped and sum(failing.values()) == 15, (failing, stripped)


def test_inputs_the_judge_passed_reach_neither_the_graded_copy_nor_the_feedback(graded: Path):
    graded_copy = nbformat.writes(_graded(graded, "recorder"))
    feedback = graded / "grading" / "feedback" / "recorder" / ASSIGNMENT / f"{ASSIGNMENT}.html"
    assert MARK not in graded_copy
    assert MARK not in feedback.read_text()
    assert "its message is not shown, since the hidden checks had already called" in graded_copy
    assert set(recorded(_graded(graded, "recorder")).values()) != {0}


def test_the_kernel_reaches_neither_the_report_pipe_nor_the_cell_channel(graded: Path):
    said = [
        output.get("text", "").split("fds reached: ")[1]
        for cell in _graded(graded, "fd-prober").cells
        for output in cell.get("outputs", [])
        if "fds reached:" in output.get("text", "")
    ]
    assert said == ["[]\n"], said
