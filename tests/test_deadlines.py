"""Late penalties: nbgrader's AssignLatePenalties step runs when a grade is recorded, with the
course's plugin, each submission's timestamp, the gradebook's due date and extensions."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import nbformat
import pytest
from nbgrader.api import Gradebook, MissingEntry

from autograder.pipeline.cli import main
from autograder.pipeline.course.course import (
    Course,
    GradingError,
    check_pending_extensions,
    due_date_notice,
    record,
    tool_env,
)
from autograder.pipeline.course.deadlines import FractionPerDayLate
from autograder.pipeline.course.extensions import pending
from autograder.pipeline.engines.jobs_and_outcomes import Outcome
from autograder.pipeline.records.grade_record import read_record
from autograder.pipeline.records.report import format_table, max_points_of, write_csv
from tests.course_setup import ASSIGNMENT, DUE, course_with_penalties, released
from tests.graded_cells import graded_cell

STUDENTS = ("ontime", "late", "extended", "garbled", "unstamped")
STAMPS = {
    "ontime": "2026-11-20 11:59:00 UTC",
    "late": "2026-11-21 13:00:00 UTC",  # 25 h late: two days started
    "extended": "2026-11-21 13:00:00 UTC",
    "garbled": "2026-11-21 13:00:00 UTC",  # first graded late, then the file is garbled
}


@pytest.fixture(scope="module")
def course(tmp_path_factory: pytest.TempPathFactory) -> Course:
    return course_with_penalties(tmp_path_factory.mktemp("deadlines"), due=None)


def _submit(course: Course, student: str, stamp: str | None) -> Outcome:
    """Hand in the released notebook (no outputs: every test cell scores) with ``stamp``."""
    folder = course.root / "grading" / "submitted" / student / ASSIGNMENT
    folder.mkdir(parents=True, exist_ok=True)
    release = released(course)
    (folder / f"{ASSIGNMENT}.ipynb").write_bytes(release.read_bytes())
    (folder / "timestamp.txt").unlink(missing_ok=True)
    if stamp is not None:
        (folder / "timestamp.txt").write_text(stamp)
    notebook = dict(nbformat.read(release, 4))
    return Outcome(student, "ok", [], notebook, [], 0.0)


def _graded(course: Course, student: str, stamp: str | None) -> tuple[float, float, list[str]]:
    """Record a submission; its score, its late penalty and its notes."""
    outcome = _submit(course, student, stamp)
    record(course, ASSIGNMENT, outcome)
    with Gradebook(course.coursedir.db_url, course.coursedir.course_id) as gb:
        submission = gb.find_submission(ASSIGNMENT, student)
        return submission.score, submission.late_submission_penalty, outcome.notes


def _unverified(stamp: str) -> str:
    """The note on a time that only the student's timestamp.txt gives (handed in by hand)."""
    return (
        f"submission time unverified: timestamp.txt, which the student can write, says {stamp}, "
        "and no copy in nbgrader's exchange confirms it"
    )


@pytest.mark.slow
def test_penalties_follow_the_due_date_extensions_and_timestamps(course: Course):
    with Gradebook(course.coursedir.db_url, course.coursedir.course_id) as gb:
        gb.update_or_create_assignment(ASSIGNMENT, duedate=None)
    assert "no due date" in due_date_notice(course, ASSIGNMENT)
    score, penalty, notes = _graded(course, "late", STAMPS["late"])
    assert score > 0 and penalty == 0 and notes == []  # no due date: no penalty, no note

    with Gradebook(course.coursedir.db_url, course.coursedir.course_id) as gb:
        gb.update_or_create_assignment(ASSIGNMENT, duedate=DUE)
    assert due_date_notice(course, ASSIGNMENT) is None
    results = {s: _graded(course, s, STAMPS.get(s)) for s in STUDENTS}

    score, penalty, notes = results["ontime"]
    assert penalty == 0 and notes == [_unverified(STAMPS["ontime"])]
    score, penalty, notes = results["late"]
    assert penalty == pytest.approx(0.5 * score)  # 0.25 per day started, two days
    assert notes == [
        _unverified(STAMPS["late"]),
        "submitted 1 d 1 h after the due date 2026-11-20 12:00 UTC: "
        f"late penalty {0.5 * score:g} points",
    ]
    assert results["unstamped"][1] == 0
    assert len(results["unstamped"][2]) == 1
    assert results["unstamped"][2][0].startswith(
        "no timestamp.txt, and no copy in nbgrader's exchange shows when it was handed in: "
        "lateness unknown, no late penalty applied; the grader's copy was made at "
    )

    # An extension granted after a first grading: grading again lifts the penalty.
    assert results["extended"][1] > 0
    with Gradebook(course.coursedir.db_url, course.coursedir.course_id) as gb:
        gb.grant_extension(ASSIGNMENT, "extended", days=2)
    assert _graded(course, "extended", STAMPS["extended"])[1:] == (
        0,
        [_unverified(STAMPS["extended"])],
    )
    with Gradebook(course.coursedir.db_url, course.coursedir.course_id) as gb:
        gb.grant_extension(ASSIGNMENT, "extended", hours=1)  # 1 h is not enough
    score, penalty, notes = _graded(course, "extended", STAMPS["extended"])
    assert penalty == pytest.approx(0.25 * score)
    assert "(with an extension of 1 h)" in notes[-1], notes

    # The same file, garbled after a late first grading: no timestamp, so no penalty.
    assert results["garbled"][1] > 0
    score, penalty, notes = _graded(course, "garbled", "next tuesday, probably")
    assert penalty == 0
    assert len(notes) == 1 and notes[0].startswith(
        "timestamp.txt 'next tuesday, probably' is refused: it is not written as nbgrader's "
    ), notes
    assert "lateness unknown, no late penalty applied" in notes[0]
    with Gradebook(course.coursedir.db_url, course.coursedir.course_id) as gb:
        assert gb.find_submission(ASSIGNMENT, "garbled").timestamp is None


@pytest.mark.slow
def test_an_extension_granted_before_the_first_grading_counts(course: Course, capsys):
    with Gradebook(course.coursedir.db_url, course.coursedir.course_id) as gb:
        gb.update_or_create_assignment(ASSIGNMENT, duedate=DUE)
    extend = ["extend", ASSIGNMENT, "early", "--course", str(course.root)]
    assert main([*extend, "--days", "2"]) == 0
    assert "until early's first grading" in capsys.readouterr().out
    with Gradebook(course.coursedir.db_url, course.coursedir.course_id) as gb:
        with pytest.raises(MissingEntry):  # no placeholder that would read as a 0 handed in
            gb.find_submission(ASSIGNMENT, "early")
    score, penalty, notes = _graded(course, "early", STAMPS["late"])  # 25 h late
    assert score > 0 and (penalty, notes) == (0, [_unverified(STAMPS["late"])])
    with Gradebook(course.coursedir.db_url, course.coursedir.course_id) as gb:
        assert gb.find_submission(ASSIGNMENT, "early").extension == timedelta(days=2)
        assert pending(gb) == {}  # moved, not copied

    # Once she is in the gradebook, an extension goes there at once (and replaces hers).
    assert main([*extend, "--hours", "1"]) == 0
    assert "kept in the gradebook" in capsys.readouterr().out
    score, penalty, notes = _graded(course, "early", STAMPS["late"])
    assert penalty == pytest.approx(0.25 * score)  # 24 h late: one day started
    assert "(with an extension of 1 h)" in notes[-1], notes

    # Bad requests and a garbled file of an earlier version are refused, saying what was
    # expected; a well-formed one is moved into the gradebook and removed.
    assert main(["extend", "no_such", "early", "--days", "1", "--course", str(course.root)]) == 2
    assert main(extend) == 2
    assert main([*extend[:2], "ev\x1bil", *extend[3:], "--days", "1"]) == 2
    err = capsys.readouterr().err
    assert "no_such is not in the gradebook" in err and "longer than 0 minutes" in err
    assert "expected a student id" in err and "\x1b" not in err
    legacy = course.root / "grading" / "extensions.csv"
    legacy.write_text("assignment,student,minutes\n01_attention,ada,soon\n")
    with pytest.raises(GradingError, match="line 2: expected assignment,student,minutes"):
        check_pending_extensions(course)
    legacy.write_text("assignment,student,minutes\n01_attention,ada,90\n")
    check_pending_extensions(course)
    assert not legacy.exists()
    with Gradebook(course.coursedir.db_url, course.coursedir.course_id) as gb:
        assert pending(gb) == {(ASSIGNMENT, "ada"): 90.0}


@pytest.mark.slow
def test_nbgraders_own_plugin_is_used_when_configured(course: Course, tmp_path: Path):
    with (course.root / "nbgrader_config.py").open() as handle:
        original = handle.read()
    try:
        with (course.root / "nbgrader_config.py").open("a") as config:
            config.write(
                '\nc.AssignLatePenalties.plugin_class = "nbgrader.plugins.'
                'LateSubmissionPlugin"\nc.LateSubmissionPlugin.penalty_method = "zero"\n'
            )
        zeroing = Course.load(course.root)
        with Gradebook(zeroing.coursedir.db_url, zeroing.coursedir.course_id) as gb:
            gb.update_or_create_assignment(ASSIGNMENT, duedate=DUE)
        score, penalty, _ = _graded(zeroing, "zeroed", STAMPS["late"])
        assert score > 0 and penalty == score
        with (course.root / "nbgrader_config.py").open("a") as config:
            config.write('\nc.AssignLatePenalties.plugin_class = "no_such.Plugin"\n')
        with pytest.raises(GradingError, match="plugin_class cannot be used"):
            due_date_notice(Course.load(course.root), ASSIGNMENT)  # before any grading
    finally:
        (course.root / "nbgrader_config.py").write_text(original)


def test_fraction_per_day_counts_days_started_and_caps():
    plugin = FractionPerDayLate(fraction_per_day=0.1, max_days=3)
    assert plugin.late_submission_penalty("s", 10.0, 1) == pytest.approx(1.0)
    assert plugin.late_submission_penalty("s", 10.0, 86400) == pytest.approx(1.0)
    assert plugin.late_submission_penalty("s", 10.0, 86401) == pytest.approx(2.0)
    assert plugin.late_submission_penalty("s", 10.0, 4 * 86400) == 10.0  # past max_days
    assert FractionPerDayLate(fraction_per_day=0.5).late_submission_penalty("s", 4, 9e6) == 4


# What a late student may write in timestamp.txt to look on time (issue 24), and a future time.
FORGED = {
    "earlier": "{due_minus_hour:%Y-%m-%d %H:%M:%S}.000000 UTC",
    "numeric_zone": "{now:%Y-%m-%d %H:%M:%S} 86340",
    "etc_zone": "{now:%Y-%m-%d %H:%M:%S} Etc/GMT-14",
    "day_first": "{due:%m/%d/%Y}",
    "future": "{future:%Y-%m-%d %H:%M:%S}.000000 UTC",
    "missing": None,
}


@pytest.fixture
def exchange_course(tmp_path: Path) -> tuple[Course, Path]:
    """A course whose students handed in through nbgrader's exchange, due 25 hours ago."""
    root, exchange = tmp_path / "course", tmp_path / "exchange"
    more_config = (
        f'c.Exchange.root = {str(exchange)!r}\nc.CourseDirectory.course_id = "attention_lab"\n'
    )
    course = course_with_penalties(root, due=None, more_config=more_config)
    inbound = exchange / "attention_lab" / "inbound"
    inbound.mkdir(parents=True)
    return course, inbound


def _hand_in(course: Course, inbound: Path, student: str, stamp: str | None) -> Outcome:
    """What nbgrader submit then collect leave: the notebook in the exchange (its ctime is now,
    whatever timestamp.txt says) and the collected copy with the student's timestamp.txt."""
    release = released(course)
    received = inbound / f"{student}+{ASSIGNMENT}+2020-01-01 00:00:00.000000 UTC+abc"
    received.mkdir()
    (received / f"{ASSIGNMENT}.ipynb").write_bytes(release.read_bytes())
    outcome = _submit(course, student, stamp)
    if stamp is not None:
        (received / "timestamp.txt").write_text(stamp)
    return outcome


@pytest.mark.slow
def test_a_forged_timestamp_pays_what_the_exchange_says(exchange_course):
    course, inbound = exchange_course
    started = time.monotonic()
    now = datetime.now(UTC).replace(tzinfo=None)  # the gradebook keeps naive UTC
    due = now - timedelta(hours=25)  # the honest late student: two days started
    with Gradebook(course.coursedir.db_url, course.coursedir.course_id) as gb:
        gb.update_or_create_assignment(ASSIGNMENT, duedate=due)
    values = {
        "now": now,
        "due": due,
        "due_minus_hour": due - timedelta(hours=1),
        "future": now + timedelta(days=3),
    }
    stamps = {"honest": f"{now:%Y-%m-%d %H:%M:%S.%f} UTC"}
    stamps |= {s: None if f is None else f.format(**values) for s, f in FORGED.items()}
    results = {}
    for student, stamp in stamps.items():
        outcome = _hand_in(course, inbound, student, stamp)
        record(course, ASSIGNMENT, outcome)
        with Gradebook(course.coursedir.db_url, course.coursedir.course_id) as gb:
            submission = gb.find_submission(ASSIGNMENT, student)
            results[student] = (submission.score, submission.late_submission_penalty)
        results[student] += (outcome.notes,)

    score, penalty, notes = results["honest"]
    assert penalty == pytest.approx(0.5 * score) and penalty > 0, results["honest"]
    assert len(notes) == 1 and "after the due date" in notes[0], notes
    for student in FORGED:
        assert results[student][:2] == results["honest"][:2], (student, results[student])
        why = results[student][2]
        assert len(why) == 2 and "a time the student cannot set" in why[0], (student, why)
    assert "earlier than the exchange received" in results["earlier"][2][0]
    assert "later than the exchange received" in results["future"][2][0]
    assert "Etc/GMT zones read their sign backwards" in results["etc_zone"][2][0]
    assert "is refused: 86340 is not a time zone name" in results["numeric_zone"][2][0]
    assert "is refused: it is not written as" in results["day_first"][2][0]
    assert results["missing"][2][0].startswith("no timestamp.txt: the time the exchange received")
    assert time.monotonic() - started < 60  # seven recordings (about 0.5 s each here)


@pytest.mark.slow
def test_an_honestly_late_submission_reads_the_same_in_every_record(exchange_course):
    """The gradebook, the grade CSV, the terminal table, results.json and the Canvas CSV give
    one total after the late penalty, after grading and again after nbgrader export."""
    course, _ = exchange_course
    started = time.monotonic()
    with Gradebook(course.coursedir.db_url, course.coursedir.course_id) as gb:
        gb.update_or_create_assignment(ASSIGNMENT, duedate=DUE)
    outcome = _submit(course, "late", STAMPS["late"])  # 25 h late: half the score
    points = max_points_of(outcome.notebook)
    outcome.cells = [graded_cell(g, p, p) for g, p in points.items()]
    record(course, ASSIGNMENT, outcome)
    grading = course.root / "grading"
    grades_csv = grading / f"{ASSIGNMENT}_grades.csv"
    results_json = grading / "gradescope" / "late" / ASSIGNMENT / "results.json"
    (grading / "roster.csv").write_text("student,canvas_id,sis_login_id,name\nlate,7,,Late\n")

    def every_record() -> dict[str, float]:
        graded = read_record(course.coursedir.db_url, course.coursedir.course_id, ASSIGNMENT)
        write_csv([outcome], grades_csv, points, merge=True, record=graded)
        table = format_table([outcome], points, graded).splitlines()[2].split()
        with grades_csv.open(newline="") as handle:
            row = next(csv.DictReader(handle))
        canvas = _nbgrader_export(
            course, "--exporter", "autograder.pipeline.records.exports.CanvasExportPlugin"
        )
        with canvas.open(newline="") as handle:
            canvas_row = list(csv.reader(handle))[2]
        return {
            "gradebook": graded.totals["late"].total,
            "grade CSV": float(row["total"]),
            "table": float(table[-2].split("/")[0]),
            "results.json": json.loads(results_json.read_text())["score"],
            "Canvas CSV": float(canvas_row[5]),
        }

    first = every_record()
    total = first["gradebook"]
    assert 0 < total < float(sum(points.values())), first  # a penalty was taken
    assert first == dict.fromkeys(first, total), first
    # A grade entered by hand (extra credit), then nbgrader export: every record follows it.
    with Gradebook(course.coursedir.db_url, course.coursedir.course_id) as gb:
        grade = gb.find_submission_notebook(ASSIGNMENT, ASSIGNMENT, "late").grades[0]
        grade.extra_credit = 2
        gb.db.commit()
    _nbgrader_export(course)
    second = every_record()
    assert second == dict.fromkeys(second, second["gradebook"]), second
    assert second["gradebook"] > total
    results = json.loads(results_json.read_text())
    assert results["extra_data"]["late_penalty"] > 0 and results["extra_data"]["manual"] == 2
    assert time.monotonic() - started < 240  # three nbgrader exports (about 20 s each here)


@pytest.mark.slow
def test_a_claimed_time_no_evidence_confirms_reads_unverified_in_every_record(course: Course):
    """Issue 39: handed in by hand, with a timestamp.txt an hour before the due date: no penalty
    is invented, and the grade CSV, the table and the feedback page say the time is unverified."""
    from autograder.pipeline.feedback.feedback import generate_feedback

    with Gradebook(course.coursedir.db_url, course.coursedir.course_id) as gb:
        gb.update_or_create_assignment(ASSIGNMENT, duedate=DUE)
    outcome = _submit(course, "claimed", "2026-11-20 11:00:00 UTC")
    record(course, ASSIGNMENT, outcome)
    said = _unverified("2026-11-20 11:00:00 UTC")
    assert outcome.notes == [said]
    graded = read_record(course.coursedir.db_url, course.coursedir.course_id, ASSIGNMENT)
    assert graded.totals["claimed"].late_penalty == 0
    points = max_points_of(outcome.notebook)
    grades_csv = course.root / "grading" / "claimed_grades.csv"
    write_csv([outcome], grades_csv, points, record=graded)
    with grades_csv.open(newline="") as handle:
        assert next(csv.DictReader(handle))["notes"] == said
    assert f"  claimed: {said}" in format_table([outcome], points, graded).splitlines()
    generate_feedback(course, ASSIGNMENT, ["claimed"])
    page = course.root / "grading" / "feedback" / "claimed" / ASSIGNMENT / f"{ASSIGNMENT}.html"
    assert f'<li class="submission-time">{said}</li>' in page.read_text()


def _nbgrader_export(course: Course, *args: str) -> Path:
    """Run nbgrader export in the course; the CSV it wrote."""
    done = subprocess.run(
        [sys.executable, "-m", "nbgrader", "export", *args],
        cwd=course.root,
        env=tool_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    grading = course.root / "grading"
    return grading / ("canvas_grades.csv" if args else "grades.csv")


@pytest.mark.slow
def test_an_extension_without_a_due_date_is_refused_and_never_costs_a_grade(course: Course, capsys):
    with Gradebook(course.coursedir.db_url, course.coursedir.course_id) as gb:
        gb.update_or_create_assignment(ASSIGNMENT, duedate=None)
    extend = ["extend", ASSIGNMENT, "undated", "--days", "1", "--course", str(course.root)]
    assert main(extend) == 2
    assert "has no due date in the gradebook" in capsys.readouterr().err
    # One granted there by other means (nbgrader's own API): nbgrader's late-penalty step
    # cannot add it to no due date, and the grade was lost ("grader error"); now it is kept.
    _graded(course, "undated", STAMPS["late"])
    with Gradebook(course.coursedir.db_url, course.coursedir.course_id) as gb:
        gb.grant_extension(ASSIGNMENT, "undated", days=1)
    score, penalty, notes = _graded(course, "undated", STAMPS["late"])
    assert score > 0 and penalty == 0 and notes == []
