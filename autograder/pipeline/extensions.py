"""Extensions granted before a student's first grading.

nbgrader keeps an extension on the student's submission in the gradebook, and a submission has no
row there until it is first graded; a placeholder row would read as a 0 handed in (in the CSVs and
in Canvas).  So ``python -m autograder extend`` grants an extension in the gradebook when the
submission is there, and otherwise keeps it in ``grading/extensions.csv`` (``assignment``,
``student``, ``minutes``) until recording that student's first grade moves it into the gradebook
(:func:`take_pending`), before the late penalty is assigned.  An extension lives in one place at a
time: the file holds only those not yet in the gradebook.
"""

from __future__ import annotations

import csv
import math
from datetime import timedelta
from pathlib import Path
from typing import Any

from autograder.pipeline.csv_file import locked, replace_csv

PENDING_NAME = "extensions.csv"
HEADER = ["assignment", "student", "minutes"]


class ExtensionError(ValueError):
    """A request or a pending-extensions file that cannot be used; the message says why."""


def pending_path(grading: Path) -> Path:
    """The file of extensions not yet in the gradebook, in the course's ``grading/`` folder."""
    return grading / PENDING_NAME


def read_pending(path: Path) -> dict[tuple[str, str], float]:
    """(assignment, student) -> minutes, from ``path`` (none when it does not exist)."""
    if not path.exists():
        return {}
    with path.open(newline="") as handle:
        rows = list(csv.reader(handle))
    if not rows or rows[0] != HEADER:
        raise ExtensionError(f"{path}: expected a CSV whose header is {','.join(HEADER)}")
    found = {}
    for number, row in enumerate(rows[1:], start=2):
        try:
            assignment, student, minutes = row
            found[(assignment, student)] = _positive(float(minutes))
        except ValueError:
            raise ExtensionError(
                f"{path}, line {number}: expected assignment,student,minutes with a positive "
                f"number of minutes, got {row}"
            ) from None
    return found


def _positive(minutes: float) -> float:
    if not (math.isfinite(minutes) and minutes > 0):
        raise ValueError(minutes)
    return minutes


def _write(path: Path, pending: dict[tuple[str, str], float]) -> None:
    rows = [[a, s, f"{m:g}"] for (a, s), m in sorted(pending.items())]
    replace_csv(path, [HEADER, *rows])


def grant(gb: Any, grading: Path, assignment: str, student: str, span: timedelta) -> bool:
    """Grant ``student`` an extension of ``span`` on ``assignment`` (replacing any earlier one),
    in the open nbgrader ``Gradebook`` ``gb`` if the submission is there, else in the pending
    file; True when it went into the gradebook."""
    from nbgrader.api import MissingEntry

    minutes = span.total_seconds() / 60
    try:
        _positive(minutes)
    except ValueError:
        raise ExtensionError(f"an extension must be longer than 0 minutes, got {span}") from None
    try:
        gb.find_assignment(assignment)
    except MissingEntry:
        raise ExtensionError(
            f"{assignment} is not in the gradebook: run nbgrader generate_assignment {assignment}"
        ) from None
    try:
        gb.find_submission(assignment, student)
    except MissingEntry:
        path = pending_path(grading)
        with locked(path):
            pending = read_pending(path)
            pending[(assignment, student)] = minutes
            _write(path, pending)
        return False
    gb.grant_extension(assignment, student, minutes=minutes)
    return True


def take_pending(gb: Any, grading: Path, assignment: str, student: str) -> None:
    """Move a pending extension of ``student`` on ``assignment`` into the gradebook, whose
    submission row now exists; :class:`ExtensionError` if the pending file is malformed."""
    path = pending_path(grading)
    if not path.exists():
        return
    with locked(path):
        pending = read_pending(path)
        minutes = pending.pop((assignment, student), None)
        if minutes is None:
            return
        gb.grant_extension(assignment, student, minutes=minutes)
        _write(path, pending)
