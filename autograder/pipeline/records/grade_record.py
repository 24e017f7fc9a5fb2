"""One grade record: the gradebook's points per student, as ``nbgrader export`` reckons them.

``grading/<assignment>_grades.csv`` shows, beside the grader's verdicts, the autograded points
(``score`` of ``max_score``), the points entered by hand (``manual``: formgrader's grades,
overrides and extra credit), the ``late_penalty`` and the ``total`` of ``total_max`` (nbgrader
export's ``score`` and ``max_score``), all read from the gradebook.  ``nbgrader export`` (this
course's default exporter, :class:`autograder.pipeline.records.exports.GradeRecordExport`) brings
those columns up to date, so after grading by hand the CSV and the export still agree.
"""

from __future__ import annotations

import csv
import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from autograder.pipeline.records.csv_file import locked, replace_csv
from autograder.pipeline.records.safe_text import spreadsheet_safe

# The CSV's columns that come from the gradebook, after the autograded ``score``.
COLUMNS = ("manual", "late_penalty", "total", "total_max")


@dataclass(frozen=True)
class Totals:
    """One submission's points: total = max(0, autograded + manual - late_penalty).

    ``pending``: the points of graded cells that hold no score yet (a written answer before hand
    grading), which the total does not count until someone grades them; the feedback page says
    "pending" for the same cells (feedback.GetGradesOrPending)."""

    autograded: float
    manual: float
    late_penalty: float
    total: float
    pending: float = 0.0

    def cells(self) -> list[float]:
        """The CSV's values of :data:`COLUMNS` but ``total_max``."""
        return [self.manual, self.late_penalty, self.total]


@dataclass(frozen=True)
class GradeRecord:
    """An assignment's totals per student, and its maximum score (manual questions included)."""

    totals: dict[str, Totals]
    max_score: float


def read_record(
    db_url: str, course_id: str, assignment: str, students: Iterable[str] = ()
) -> GradeRecord:
    """The gradebook's totals of ``assignment`` (of ``students``, or of every submission)."""
    from nbgrader.api import Gradebook

    with Gradebook(db_url, course_id) as gb:
        return record_of(gb, assignment, students)


def record_of(gb: Any, assignment: str, students: Iterable[str] = ()) -> GradeRecord:
    """:func:`read_record` from an open nbgrader ``Gradebook``."""
    found = gb.find_assignment(assignment)
    wanted = set(students)
    totals = {
        submission.student.id: totals_of(submission)
        for submission in found.submissions
        if not wanted or submission.student.id in wanted
    }
    return GradeRecord(totals, float(found.max_score))


def totals_of(submission: Any) -> Totals:
    """As nbgrader's CsvExportPlugin: raw = submission.score, score = max(0, raw - penalty)."""
    raw = float(submission.score)
    autograded = sum(
        float(grade.auto_score or 0)
        for notebook in submission.notebooks
        for grade in notebook.grades
        if grade.manual_score is None  # a hand-entered score replaces the autograder's
    )
    pending = sum(
        (
            float(grade.max_score or 0)
            for notebook in submission.notebooks
            for grade in notebook.grades
            if grade.auto_score is None and grade.manual_score is None
        ),
        0.0,
    )
    penalty = float(submission.late_submission_penalty or 0)
    return Totals(autograded, raw - autograded, penalty, max(0.0, raw - penalty), pending)


def grade_states(
    db_url: str, course_id: str, assignment: str, students: Iterable[str] = ()
) -> dict[str, str]:
    """student -> a digest of everything of ``assignment`` a feedback page shows from the
    gradebook: every score (auto, manual, extra credit), every comment, the late penalty."""
    from nbgrader.api import Gradebook, MissingEntry

    wanted = set(students)
    with Gradebook(db_url, course_id) as gb:
        try:
            found = gb.find_assignment(assignment)
        except MissingEntry:
            return {}
        return {
            submission.student.id: _digest(submission)
            for submission in found.submissions
            if not wanted or submission.student.id in wanted
        }


def _digest(submission: Any) -> str:
    shown = [
        [
            notebook.name,
            sorted([g.name, g.auto_score, g.manual_score, g.extra_credit] for g in notebook.grades),
            sorted([c.name, c.auto_comment, c.manual_comment] for c in notebook.comments),
        ]
        for notebook in submission.notebooks
    ]
    state = [sorted(shown), submission.late_submission_penalty]
    return hashlib.sha256(json.dumps(state, default=str).encode()).hexdigest()


def grading_folder(coursedir: Any) -> Path:
    """The folder that holds the autograded copies (``grading/``): the CSVs go there too."""
    return Path(coursedir.format_path(coursedir.autograded_directory, ".", ".")).parent


def refresh_csv(path: Path, record: GradeRecord) -> int:
    """Bring the gradebook columns of an assignment's CSV up to date; the rows changed."""
    with locked(path):
        with path.open(newline="") as handle:
            header, *rows = list(csv.reader(handle)) or [[]]
        changed = fill_rows(header, rows, record)
        if changed:
            replace_csv(path, [header, *rows])
        return changed


def fill_rows(header: list[str], rows: list[list[object]], record: GradeRecord) -> int:
    """Write ``record``'s ``score`` and :data:`COLUMNS` into the rows (of a CSV with ``header``)
    of the students it holds; how many.  A row is found by its first cell as written (a guard
    is never stripped to match a row back), and a row the record lacks is left as it is."""
    names = ("score", *COLUMNS)
    if not set(names) <= set(header):
        return 0
    where = [header.index(name) for name in names]
    by_cell = {spreadsheet_safe(student): totals for student, totals in record.totals.items()}
    changed = 0
    for row in rows:
        totals = by_cell.get(str(row[0])) if row else None
        if totals is None:
            continue
        values = [totals.autograded, *totals.cells(), record.max_score]
        for index, value in zip(where, values, strict=True):
            row[index] = str(value)
        changed += 1
    return changed
