"""Two graders at once, on one PostgreSQL gradebook: every grade lands, and nbgrader reads them.

A throwaway PostgreSQL server is started in a temporary folder, listening on a Unix socket only.
"""

from __future__ import annotations

import csv
import glob
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path

import nbformat
import pytest
from nbgrader.api import Gradebook

from autograder.examples import UNSCALED, Sample, build_course
from autograder.isolation import sandbox
from autograder.pipeline.course.course import Course, tool_env
from autograder.pipeline.course.extensions import pending
from autograder.pipeline.records.report import max_points_of

ROOT = Path(__file__).resolve().parents[1]
ASSIGNMENT = "01_attention"
ENV = tool_env(OMP_NUM_THREADS="1")


def _server_binaries() -> Path | None:
    found = shutil.which("initdb") or next(
        iter(sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), reverse=True)), None
    )
    return Path(found).parent if found else None


BINARIES = _server_binaries()


@pytest.fixture
def postgres_url() -> Iterator[str]:
    """A fresh PostgreSQL server's URL; as root, the server runs as the postgres user."""
    if BINARIES is None:  # a failure, not a skip: CI must exercise the shared gradebook
        pytest.fail("PostgreSQL's server (initdb) is not installed; .ci/run installs it")
    available, why = sandbox.sandbox_available()
    if not available:
        pytest.fail(f"the grading sandbox is unavailable: {why}")
    folder = Path(tempfile.mkdtemp(prefix="attention-lab-pg-"))
    as_user: list[str] = []
    if os.geteuid() == 0:  # PostgreSQL refuses to run as root
        owner = pwd.getpwnam("postgres")
        os.chown(folder, owner.pw_uid, owner.pw_gid)
        as_user = ["runuser", "-u", "postgres", "--"]
    data, log = folder / "data", folder / "log"

    def run(*argv: str, check: bool = True) -> None:
        done = subprocess.run([*as_user, *argv], capture_output=True, text=True, timeout=120)
        if check and done.returncode != 0:
            server_log = log.read_text() if log.exists() else ""
            pytest.fail(f"{argv[0]} failed: {done.stdout}{done.stderr}{server_log}"[-3000:])

    options = f"-k {folder} -c listen_addresses='' -p 5432 -F"
    try:
        run(
            str(BINARIES / "initdb"), "-D", str(data), "-U", "postgres", "--auth=trust", "--no-sync"
        )
        run(str(BINARIES / "pg_ctl"), "-D", str(data), "-o", options, "-l", str(log), "-w", "start")
        yield f"postgresql://postgres@/postgres?host={folder}&port=5432"
    finally:
        if data.exists():
            run(str(BINARIES / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop", check=False)
        shutil.rmtree(folder, ignore_errors=True)


def _start_grader(course: Path, url: str, *extra: str) -> subprocess.Popen[str]:
    command = [
        sys.executable,
        "-m",
        "autograder",
        "grade",
        ASSIGNMENT,
        "--db",
        url,
        "--workers",
        "1",
        "--cell-timeout",
        "30",
        *extra,
    ]
    return subprocess.Popen(
        command, cwd=course, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )


@pytest.mark.slow
@pytest.mark.sandbox
@pytest.mark.postgres
def test_two_graders_share_one_postgres_gradebook(tmp_path: Path, postgres_url: str):
    samples = [
        Sample("ada", "correct", "ok", True),
        Sample("alan", "mistake", "ok", False, answers={"attention": UNSCALED}),
        Sample("grace", "correct", "ok", True),
        Sample("edsger", "mistake", "ok", False, answers={"attention": UNSCALED}),
    ]
    build_course(tmp_path, samples)
    nbgrader = [sys.executable, "-m", "nbgrader"]
    db = f"--CourseDirectory.db_url={postgres_url}"
    subprocess.run(
        [*nbgrader, "generate_assignment", ASSIGNMENT, "--force", db],
        cwd=tmp_path,
        env=ENV,
        check=True,
        capture_output=True,
    )

    # An extension before grace's first grade waits in the shared gradebook, for any grader.
    course_id = Course.load(tmp_path).coursedir.course_id
    with Gradebook(postgres_url, course_id) as gb:  # a due date no one misses
        gb.update_or_create_assignment(ASSIGNMENT, duedate=datetime(2030, 1, 1))
    extend = ["extend", ASSIGNMENT, "grace", "--days", "1", "--db", postgres_url]
    subprocess.run([sys.executable, "-m", "autograder", *extend], cwd=tmp_path, env=ENV, check=True)
    graders = [
        _start_grader(tmp_path, postgres_url, "--student", "ada", "--student", "alan"),
        _start_grader(
            tmp_path, postgres_url, "--student", "grace", "--student", "edsger", "--no-feedback"
        ),
    ]
    try:
        outputs = [grader.communicate(timeout=600)[0] for grader in graders]
    finally:
        for grader in graders:
            grader.kill()  # only matters when one of them timed out
            grader.wait()
    for grader, output in zip(graders, outputs, strict=True):
        assert grader.returncode == 0, output
        assert "postgres" in output and "sqlite" not in output.split("grades in")[-1]

    # nbgrader's own export reads every grade back from PostgreSQL.
    subprocess.run(
        [*nbgrader, "export", db, "--to", "grades.csv"],
        cwd=tmp_path,
        env=ENV,
        check=True,
        capture_output=True,
    )
    with (tmp_path / "grades.csv").open() as handle:
        rows = {row["student_id"]: row for row in csv.DictReader(handle)}
    assert set(rows) == {s.student for s in samples}
    release = nbformat.read(tmp_path / "notebooks" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", 4)
    autograded = sum(max_points_of(release).values())  # the rest is graded by hand
    assert autograded > 0
    for sample in samples:
        score = float(rows[sample.student]["score"])
        assert (score == autograded) == sample.full_marks, (sample.student, score, autograded)
    # The course's own SQLite gradebook was never written, and feedback came from PostgreSQL.
    with Gradebook(postgres_url, course_id) as gb:
        assert gb.find_submission(ASSIGNMENT, "grace").extension == timedelta(days=1)
        assert pending(gb) == {}

    with Gradebook(f"sqlite:///{tmp_path / 'grading' / 'gradebook.db'}") as gb:
        assert gb.students == []
    feedback = tmp_path / "grading" / "feedback"
    assert sorted(p.name for p in feedback.iterdir()) == ["ada", "alan"]


@pytest.mark.slow  # seconds: kept out of the fast tier, which must fit 30 s
@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("postgresql://grader:s3cret@/gradebook?host={}", "postgresql://grader:***@/gradebook"),
        ("postgresql:///gradebook?host={}&password=s3cret", "postgresql:///gradebook?host="),
    ],
)
def test_an_unreachable_gradebook_is_a_clear_error(tmp_path: Path, url: str, shown: str):
    (tmp_path / "nbgrader_config.py").write_text(
        "c = get_config()  # noqa: F821\n"
        f"c.CourseDirectory.root = {str(tmp_path)!r}\n"
        "c.CourseDirectory.release_directory = 'notebooks'\n"
    )
    shutil.copytree(ROOT / "notebooks" / ASSIGNMENT, tmp_path / "notebooks" / ASSIGNMENT)
    url = url.format(tmp_path / "no-server")
    done = subprocess.run(
        [sys.executable, "-m", "autograder", "grade", ASSIGNMENT, "--db", url],
        cwd=tmp_path,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    lines = done.stderr.splitlines()
    assert lines[0].startswith("sandbox: bubblewrap"), lines  # the command's first line
    errors = [line for line in lines if line.startswith("error:")]
    assert errors and errors[0].startswith(f"error: cannot open the gradebook {shown}"), lines
    assert "s3cret" not in done.stderr and "Traceback" not in done.stderr
