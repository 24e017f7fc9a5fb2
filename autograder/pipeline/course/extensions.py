"""Extensions granted before a student's first grading, kept in the gradebook.

nbgrader keeps an extension on the student's submission in the gradebook, and a submission has no
row there until it is first graded; a placeholder row would read as a 0 handed in (in the CSVs and
in Canvas).  So ``python -m autograder extend`` grants an extension on the submission when it is
there, and otherwise keeps it in the gradebook's own database, in the table
``autograder_pending_extension`` (course, assignment, student, minutes), until recording that
student's first grade moves it onto the submission in one transaction (:func:`take_pending`),
before the late penalty is assigned.  Every grader of a shared gradebook (PostgreSQL) sees it, and
an extension lives in one place at a time.  ``grading/extensions.csv``, where they waited before,
is moved into that table, and removed, when the next command opens the gradebook.
"""

from __future__ import annotations

import csv
import math
from datetime import timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import Column, Float, MetaData, String, Table, delete, insert, select
from sqlalchemy.exc import SQLAlchemyError

from autograder.pipeline.intake.student_ids import canonical, spelled_as_recorded, twin_of
from autograder.pipeline.records.csv_file import locked

PENDING = Table(
    "autograder_pending_extension",
    MetaData(),
    Column("course_id", String(128), primary_key=True),  # nbgrader's sizes for its ids
    Column("assignment", String(128), primary_key=True),
    Column("student", String(128), primary_key=True),
    Column("minutes", Float, nullable=False),
)
LEGACY_NAME = "extensions.csv"
LEGACY_HEADER = ["assignment", "student", "minutes"]


class ExtensionError(ValueError):
    """A request or a pending extension that cannot be used; the message says why."""


def _positive(minutes: float) -> float:
    if not (math.isfinite(minutes) and minutes > 0):
        raise ValueError(minutes)
    return minutes


def _ensure_table(gb: Any) -> None:
    """Create the table in the open ``Gradebook`` ``gb`` if it is missing (another grader may be
    creating it at the same moment)."""
    try:
        PENDING.create(gb.engine, checkfirst=True)
    except SQLAlchemyError:
        PENDING.create(gb.engine, checkfirst=True)  # it lost the race: the table is there now


def pending(gb: Any) -> dict[tuple[str, str], float]:
    """(assignment, student) -> minutes of the extensions of ``gb``'s course waiting for a first
    grade."""
    _ensure_table(gb)
    rows = gb.db.execute(
        select(PENDING.c.assignment, PENDING.c.student, PENDING.c.minutes).where(
            PENDING.c.course_id == gb.course_id
        )
    )
    return {(assignment, student): minutes for assignment, student, minutes in rows}


def grant(gb: Any, assignment: str, student: str, span: timedelta) -> tuple[str, bool]:
    """Grant ``student`` an extension of ``span`` on ``assignment`` (replacing any earlier one)
    in the open nbgrader ``Gradebook`` ``gb``: on the submission if it is there, else pending.

    Returns the student id as the gradebook holds it, and True when it went onto the submission.
    An id that prints like another student's of this assignment is refused.
    """
    from nbgrader.api import MissingEntry

    minutes = span.total_seconds() / 60
    try:
        _positive(minutes)
    except ValueError:
        raise ExtensionError(f"an extension must be longer than 0 minutes, got {span}") from None
    try:
        found = gb.find_assignment(assignment)
    except MissingEntry:
        raise ExtensionError(
            f"{assignment} is not in the gradebook: run nbgrader generate_assignment {assignment}"
        ) from None
    if found.duedate is None:
        raise ExtensionError(
            f"{assignment} has no due date in the gradebook, so an extension means nothing (and "
            f"nbgrader cannot read one): set it first, with nbgrader db assignment add "
            f'{assignment} --duedate "YYYY-MM-DD HH:MM UTC"'
        )
    recorded = {submission.student.id for submission in found.submissions}
    waiting = {s for (a, s) in pending(gb) if a == assignment}
    student = spelled_as_recorded(student, recorded | waiting)
    twin = twin_of(student, recorded | waiting)
    if twin is not None:
        raise ExtensionError(
            f"{ascii(student)} prints like {ascii(twin)}, who is in the gradebook for "
            f"{assignment}: give the id exactly as the gradebook holds it"
        )
    if student in recorded:
        gb.grant_extension(assignment, student, minutes=minutes)
        return student, True
    _forget(gb, assignment, student)
    gb.db.execute(
        insert(PENDING).values(
            course_id=gb.course_id, assignment=assignment, student=student, minutes=minutes
        )
    )
    gb.db.commit()
    return student, False


def _forget(gb: Any, assignment: str, student: str) -> None:
    """Delete the pending extension of ``student`` on ``assignment`` (not yet committed)."""
    gb.db.execute(
        delete(PENDING).where(
            PENDING.c.course_id == gb.course_id,
            PENDING.c.assignment == assignment,
            PENDING.c.student == student,
        )
    )


def take_pending(gb: Any, assignment: str, student: str) -> None:
    """Move a pending extension of ``student`` on ``assignment`` onto her submission, whose row
    now exists in ``gb``: both changes are committed together, or neither."""
    minutes = pending(gb).get((assignment, student))
    if minutes is not None:
        _forget(gb, assignment, student)
        gb.grant_extension(assignment, student, minutes=minutes)  # commits the deletion too


def adopt_legacy_file(gb: Any, grading: Path) -> int:
    """Move the extensions of ``grading/extensions.csv`` (where earlier versions kept them) into
    the gradebook and remove the file; how many.  :class:`ExtensionError` when it is malformed
    (nothing is moved then)."""
    path = grading / LEGACY_NAME
    if not path.exists():
        return 0
    with locked(path):
        if not path.exists():  # another command moved it meanwhile
            return 0
        with path.open(newline="") as handle:
            rows = list(csv.reader(handle))
        if not rows or rows[0] != LEGACY_HEADER:
            raise ExtensionError(
                f"{path}: expected a CSV whose header is {','.join(LEGACY_HEADER)}"
            )
        found = {}
        for number, row in enumerate(rows[1:], start=2):
            try:
                assignment, student, minutes = row
                found[(assignment, canonical(student))] = _positive(float(minutes))
            except ValueError:
                raise ExtensionError(
                    f"{path}, line {number}: expected assignment,student,minutes with a "
                    f"positive number of minutes, got {row}"
                ) from None
        waiting = pending(gb)
        for (assignment, student), minutes in found.items():
            if (assignment, student) in waiting:
                _forget(gb, assignment, student)
            gb.db.execute(
                insert(PENDING).values(
                    course_id=gb.course_id, assignment=assignment, student=student, minutes=minutes
                )
            )
        gb.db.commit()
        path.unlink()
    return len(found)
