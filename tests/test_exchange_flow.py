"""nbgrader's own distribution flow with this course, as on JupyterHub: release_assignment, each
student's fetch_assignment and submit, collect, then ``python -m autograder grade``; and the
commands that take nbgrader's instructor tools out of a student's JupyterLab."""

from __future__ import annotations

import csv
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import nbformat
import pytest
from nbgrader.api import Gradebook

from autograder.examples import UNSCALED, Sample, build_course, build_submission, solution_answers
from autograder.pipeline.cli import main
from autograder.pipeline.course.course import tool_env

pytestmark = pytest.mark.slow

ASSIGNMENT = "01_attention"
COURSE = "attention_lab"
STUDENTS = (
    Sample("ada", "correct", "ok", True),
    Sample("alan", "mistake", "ok", False, answers={"attention": UNSCALED}),
)
# What a course's JupyterHub image runs so that students' JupyterLab has the Assignment List only.
INSTRUCTOR_TOOLS = (
    "@jupyter/nbgrader:create-assignment",
    "@jupyter/nbgrader:formgrader",
    "@jupyter/nbgrader:course-list",
)


def _nbgrader(cwd: Path, *args: str, env: dict[str, str] | None = None) -> str:
    result = subprocess.run(
        [sys.executable, "-m", "nbgrader", *args],
        cwd=cwd,
        env=env or tool_env(),
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, f"nbgrader {args[0]}: {result.stderr[-3000:]}"
    return result.stderr


@pytest.mark.sandbox
@pytest.mark.usefixtures("sandbox_required")
def test_release_fetch_submit_collect_then_grade(tmp_path: Path):
    root, exchange = tmp_path / "course", tmp_path / "exchange"
    exchange.mkdir(mode=0o777)
    exchange.chmod(0o777)  # nbgrader refuses an exchange that students cannot write to
    build_course(root, [])
    with (root / "nbgrader_config.py").open("a") as config:
        config.write(f"\nc.Exchange.root = {str(exchange)!r}\n")
    _nbgrader(root, "release_assignment", ASSIGNMENT)

    student_flags = [f"--Exchange.root={exchange}", f"--CourseDirectory.course_id={COURSE}"]
    answers = solution_answers()
    for sample in STUDENTS:
        home = tmp_path / "home" / sample.student  # no nbgrader_config.py: a student's folder
        home.mkdir(parents=True)
        _nbgrader(home, "fetch_assignment", ASSIGNMENT, *student_flags)
        fetched = home / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
        release = nbformat.read(fetched, 4)
        fetched.write_bytes(build_submission(sample, release, answers))
        _nbgrader(home, "submit", ASSIGNMENT, f"--student={sample.student}", *student_flags)
    # alan then backdates his claim (his own process writes it); the exchange's ctime stands.
    (forged,) = (exchange / COURSE / "inbound").glob(f"alan+{ASSIGNMENT}+*/timestamp.txt")
    forged.write_text("2020-01-01 00:00:00.000000 UTC")
    due = datetime.now(UTC).replace(tzinfo=None) - timedelta(hours=1)  # the gradebook: naive UTC
    with Gradebook(f"sqlite:///{root / 'grading' / 'gradebook.db'}", COURSE) as gb:
        gb.update_or_create_assignment(ASSIGNMENT, duedate=due)
    # One OS user plays every student here, so nbgrader's owner check would only warn.
    _nbgrader(root, "collect", ASSIGNMENT, "--CollectApp.check_owner=False")
    for sample in STUDENTS:
        collected = root / "grading" / "submitted" / sample.student / ASSIGNMENT
        assert (collected / f"{ASSIGNMENT}.ipynb").exists() and (
            collected / "timestamp.txt"
        ).exists()

    assert main(["grade", ASSIGNMENT, "--course", str(root), "--no-feedback"]) == 0
    with (root / "grading" / f"{ASSIGNMENT}_grades.csv").open(newline="") as handle:
        rows = {row["student"]: row for row in csv.DictReader(handle)}
    assert rows["ada"]["score"] == rows["ada"]["max_score"] and rows["ada"]["verdict"] == "ok"
    assert float(rows["alan"]["score"]) < float(rows["alan"]["max_score"])
    with Gradebook(f"sqlite:///{root / 'grading' / 'gradebook.db'}", COURSE) as gb:
        stamps = {s.student: gb.find_submission(ASSIGNMENT, s.student).timestamp for s in STUDENTS}
    assert all(stamp > due for stamp in stamps.values()), stamps  # both handed in after it
    assert "a time the student cannot set" in rows["alan"]["notes"], rows["alan"]["notes"]
    assert "after the due date" in rows["ada"]["notes"] and "claims" not in rows["ada"]["notes"]


@pytest.mark.sandbox  # 20 s of a worker (tests/tiers.py)
def test_students_jupyterlab_can_lose_the_instructor_tools(tmp_path: Path):
    env = tool_env(JUPYTER_CONFIG_DIR=str(tmp_path / "config"))
    jupyter = [sys.executable, "-m", "jupyter", "labextension"]
    disable = [*jupyter, "disable", "--level=user", *INSTRUCTOR_TOOLS]
    subprocess.run(disable, env=env, check=True, capture_output=True)
    listed = subprocess.run([*jupyter, "list"], env=env, capture_output=True, text=True)
    shown = listed.stdout + listed.stderr
    assert "@jupyter/nbgrader" in shown, shown  # the extension is installed ...
    for plugin in INSTRUCTOR_TOOLS:  # ... and these parts of it are off
        assert plugin in shown.split("Disabled extensions:")[-1], shown
    assert "assignment-list" not in shown.split("Disabled extensions:")[-1], shown
