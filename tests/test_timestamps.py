"""A submission's timestamp.txt is untrusted data: a FIFO or a non-date costs only a note."""

from __future__ import annotations

import os
from datetime import datetime
from pathlib import Path

import pytest
from nbgrader.api import Gradebook

from autograder.examples import Sample, build_course
from autograder.isolation import sandbox
from autograder.pipeline.course.course import Course
from autograder.pipeline.engines.batch import grade
from autograder.pipeline.engines.jobs_and_outcomes import Settings

pytestmark = [pytest.mark.slow, pytest.mark.sandbox]

ASSIGNMENT = "01_attention"


def test_fifo_and_garbled_timestamps_are_notes_and_a_valid_one_is_recorded(tmp_path: Path):
    available, why = sandbox.sandbox_available()
    if not available:
        pytest.fail(f"the grading sandbox is unavailable: {why}", pytrace=False)
    students = ["ada", "alan", "grace"]
    build_course(tmp_path, [Sample(s, "correct", "ok", True) for s in students])
    submitted = tmp_path / "grading" / "submitted"
    for student in students:  # build_course writes a valid one for everybody
        (submitted / student / ASSIGNMENT / "timestamp.txt").unlink()
    os.mkfifo(submitted / "ada" / ASSIGNMENT / "timestamp.txt")  # would block a plain read
    (submitted / "alan" / ASSIGNMENT / "timestamp.txt").write_text("next tuesday, probably")
    (submitted / "grace" / ASSIGNMENT / "timestamp.txt").write_text("2026-11-20 10:00:00 UTC")
    course = Course.load(tmp_path)
    with Gradebook(course.coursedir.db_url, course.coursedir.course_id) as gb:
        gb.update_or_create_assignment(ASSIGNMENT, duedate=datetime(2026, 11, 21))  # time matters
    outcomes = {o.student: o for o in grade(ASSIGNMENT, course, workers=2, settings=Settings())}
    assert {s: o.verdict for s, o in outcomes.items()} == dict.fromkeys(students, "ok")
    assert all(c.passed for o in outcomes.values() for c in o.cells)
    assert any("not a regular file" in n for n in outcomes["ada"].notes), outcomes["ada"].notes
    assert any("is refused: it is not written as" in n for n in outcomes["alan"].notes), outcomes[
        "alan"
    ].notes
    # collected by hand, so her valid claim is all there is: counted, and said to be unverified
    assert [n.split(":")[0] for n in outcomes["grace"].notes] == ["submission time unverified"]
    with Gradebook(course.coursedir.db_url, course.coursedir.course_id) as gb:
        stamps = {s: gb.find_submission(ASSIGNMENT, s).timestamp for s in students}
    assert stamps["grace"] is not None and stamps["grace"].day == 20
    assert stamps["ada"] is None and stamps["alan"] is None  # no penalty invented from noise
