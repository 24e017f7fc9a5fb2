"""Property: over random classes (hostile names, lateness, extensions, grades by hand), every
record of a grade shows the gradebook's total, after grading and after ``nbgrader export``."""

from __future__ import annotations

import csv
import json
import shutil
import tempfile
import time
from datetime import timedelta
from pathlib import Path

import nbformat
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from nbgrader.api import Gradebook

from autograder.pipeline.course.course import Course, find_submissions, record
from autograder.pipeline.course.extensions import grant
from autograder.pipeline.engines.batch import without_twins
from autograder.pipeline.engines.jobs_and_outcomes import Outcome
from autograder.pipeline.records.exports import CanvasExportPlugin, GradeRecordExport
from autograder.pipeline.records.grade_record import grading_folder, read_record
from autograder.pipeline.records.report import format_table, max_points_of, write_csv
from tests.course_setup import (
    ASSIGNMENT,
    DUE,
    course_with_penalties,
    export_with,
    hand_in,
    released,
)
from tests.graded_cells import graded_cell

# Folder names: spreadsheet formula starts, the guard's own apostrophe, a letter outside ASCII,
# a combining diaeresis (e + it prints as the composed letter) and a full-width digit (prints
# like 1), so that twins that print alike occur.
NAMES = st.text(alphabet="ab'=+-@\u00eb\u0308e1\uff11", min_size=1, max_size=4)
STUDENT = st.fixed_dictionaries(
    {
        "hours_late": st.integers(-30, 80),
        "extension_hours": st.sampled_from([0, 0, 5, 48]),
        "passed": st.lists(st.booleans(), min_size=3, max_size=3),
        # Points entered by hand after grading: on a written answer, over an autograded
        # cell's score, or as extra credit.
        "by_hand": st.sampled_from([None, ("written", 1.5), ("override", 0.5), ("extra", 2.0)]),
    }
)
CLASSES = st.dictionaries(NAMES, STUDENT, min_size=1, max_size=4)
ON_TIME = {"hours_late": -1, "extension_hours": 0, "passed": [True] * 3, "by_hand": ("extra", 2.0)}
HONEST_LATE = {
    "hours_late": 25,
    "extension_hours": 0,
    "passed": [True, False, True],
    "by_hand": ("override", 0.5),
}
WRITTEN, OVERRIDDEN = "why_sqrt_dk", "test_attention_numpy"  # a manual and an autograded cell


def _outcome(course: Course, student: str, passed: list[bool]) -> Outcome:
    notebook = nbformat.read(released(course), 4)
    points = max_points_of(dict(notebook))
    cells, failing = [], dict(zip(points, [not p for p in passed], strict=False))
    for cell in notebook.cells:  # a failing test cell shows an error, as nbgrader scores it
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if failing.get(grade_id):
            cell.outputs = [nbformat.v4.new_output("error", ename="E", evalue="", traceback=[])]
    for grade_id, value in points.items():
        full = not failing.get(grade_id)
        cells.append(graded_cell(grade_id, value, value if full else 0.0))
    return Outcome(student, "ok", [], dict(notebook), cells, 0.0)


def _records(
    course: Course, students: list[str], export: bool = True
) -> dict[str, dict[str, float]]:
    """Each record's total per student, beside the gradebook's (after nbgrader export, or as
    the grading command left them)."""
    grading = grading_folder(course.coursedir)
    graded = read_record(course.coursedir.db_url, course.coursedir.course_id, ASSIGNMENT)
    if export:
        export_with(course, GradeRecordExport, to=str(grading / "grades.csv"))
    export_with(course, CanvasExportPlugin, to=str(grading / "canvas_grades.csv"))
    with (grading / f"{ASSIGNMENT}_grades.csv").open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    with (grading / "canvas_grades.csv").open(newline="") as handle:
        canvas = list(csv.reader(handle))[2:]  # after the header and points possible
    found = {}
    for position, student in enumerate(students):  # the roster's order
        results = grading / "gradescope" / student / ASSIGNMENT / "results.json"
        found[student] = {
            "gradebook": graded.totals[student].total,
            "results.json": json.loads(results.read_text())["score"],
            "Canvas CSV": float(canvas[position][5]),
        }
    by_cell = {row["student"]: row["total"] for row in rows}
    assert len(by_cell) == len(rows)  # no two names share a row
    for student in students:
        found[student]["grade CSV"] = float(by_cell.pop(_cell(student)))
    assert set(by_cell.values()) <= {""}  # the other rows, refused twins, hold no grade
    return found


def _cell(student: str) -> str:
    from autograder.pipeline.records.safe_text import spreadsheet_safe

    return spreadsheet_safe(student)


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A course with its (empty) gradebook, built once and copied for each example."""
    return course_with_penalties(tmp_path_factory.mktemp("records") / "course").root


@pytest.mark.slow
@pytest.mark.sandbox  # 32 s of a worker (tests/tiers.py)
@settings(
    max_examples=6,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(klass=CLASSES)
@example(klass={"'a": HONEST_LATE, "a": ON_TIME})  # the guard's apostrophe beside the name
@example(klass={"=a": ON_TIME, "'=a": HONEST_LATE, "-": ON_TIME})
@example(klass={"\u00eb": ON_TIME, "e\u0308": HONEST_LATE, "a1": ON_TIME, "a\uff11": ON_TIME})
def test_every_record_shows_the_gradebooks_total(template: Path, klass: dict):
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder) / "course"
        shutil.copytree(template, root)
        course = Course.load(root)
        for name, drawn in klass.items():
            stamp = DUE + timedelta(hours=drawn["hours_late"])
            hand_in(course, name, f"{stamp:%Y-%m-%d %H:%M:%S} UTC")
        # The folders come in as the grading command takes them: a twin that prints like an
        # older folder is refused (a row, no grade), the others get their ids.
        found = find_submissions(course, ASSIGNMENT, [])
        kept, refused = without_twins(found, recorded=set())
        folders = {student: path.parent for student, path in kept}
        drawn_for = {student: klass[path.parent.parent.name] for student, path in kept}
        students = sorted(folders)
        roster = ["student,canvas_id,sis_login_id,name"]
        roster += [f'"{s}",{100 + n},,"{s}"' for n, s in enumerate(students)]
        (root / "grading" / "roster.csv").write_text("\n".join(roster) + "\n")
        outcomes = list(refused)
        for student in students:
            drawn = drawn_for[student]
            outcome = _outcome(course, student, drawn["passed"])
            if drawn["extension_hours"]:
                with Gradebook(course.coursedir.db_url, course.coursedir.course_id) as gb:
                    span = timedelta(hours=drawn["extension_hours"])
                    grant(gb, ASSIGNMENT, student, span)
            record(course, ASSIGNMENT, outcome, folders[student])
            outcomes.append(outcome)
        outcomes.sort(key=lambda o: o.student)
        points = max_points_of(
            dict(nbformat.read(template / "notebooks" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", 4))
        )
        csv_path = root / "grading" / f"{ASSIGNMENT}_grades.csv"

        def grading_command_records(regraded: list[Outcome]) -> None:
            """The table and the CSV, as `python -m autograder grade` writes them."""
            graded = read_record(course.coursedir.db_url, course.coursedir.course_id, ASSIGNMENT)
            write_csv(regraded, csv_path, points, merge=True, record=graded)
            table = format_table(regraded, points, graded).splitlines()[2 : 2 + len(regraded)]
            for outcome, line in zip(regraded, table, strict=True):
                if outcome.notebook is None:  # a refused twin: no grade, never a row's total
                    assert outcome.student not in graded.totals and line.endswith("invalid name")
                    continue
                shown_total = float(line.split()[-2].split("/")[0])
                assert shown_total == graded.totals[outcome.student].total, line

        grading_command_records(outcomes)
        for student, found_totals in _records(course, students).items():
            assert len(set(found_totals.values())) == 1, (student, found_totals)

        # Points by hand; then the table and the CSV of grading one student again (the others'
        # rows kept), then nbgrader export: every record follows the gradebook.
        with Gradebook(course.coursedir.db_url, course.coursedir.course_id) as gb:
            for student in students:
                by_hand = drawn_for[student]["by_hand"]
                if by_hand is None:
                    continue
                kind, value = by_hand
                grades = {
                    g.name: g
                    for g in gb.find_submission_notebook(ASSIGNMENT, ASSIGNMENT, student).grades
                }
                if kind == "extra":
                    grades[OVERRIDDEN].extra_credit = value
                else:
                    grades[WRITTEN if kind == "written" else OVERRIDDEN].manual_score = value
            gb.db.commit()
        again = outcomes[-1]
        if again.notebook is not None:  # graded again, as `grade --student` records it
            record(course, ASSIGNMENT, again, folders[again.student])
        grading_command_records([again])
        for student, found_totals in _records(course, students, export=False).items():
            if student != again.student:  # results.json follows at export (below)
                del found_totals["results.json"]
            assert len(set(found_totals.values())) == 1, (student, found_totals)
        for student, found_totals in _records(course, students).items():
            assert len(set(found_totals.values())) == 1, (student, found_totals)
    assert time.monotonic() - started < 90
