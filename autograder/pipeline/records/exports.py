"""nbgrader export plugins of this course: its grade record, and a Canvas gradebook CSV."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

from nbgrader.plugins import CsvExportPlugin, ExportPlugin
from traitlets import Dict, Unicode

from autograder.pipeline.gradescope.gradescope import refresh_results
from autograder.pipeline.intake.roster import RosterError, read_roster
from autograder.pipeline.intake.student_ids import canonical
from autograder.pipeline.records.grade_record import grading_folder, record_of, refresh_csv
from autograder.pipeline.records.safe_text import spreadsheet_safe


class GradeRecordExport(CsvExportPlugin):
    """nbgrader's CSV export (to ``grading/grades.csv`` unless ``--to``), then every
    ``grading/<assignment>_grades.csv`` brought up to date from the gradebook."""

    def export(self, gradebook: Any) -> None:
        folder = grading_folder(self.parent.coursedir)
        if not self.to:
            self.to = str(folder / "grades.csv")
        super().export(gradebook)
        for assignment in gradebook.assignments:
            path = folder / f"{assignment.name}_grades.csv"
            if self.assignment and assignment.name not in self.assignment:
                continue
            record = record_of(gradebook, assignment.name)
            if path.exists():
                changed = refresh_csv(path, record)
                self.log.info("Updated %d rows of %s from the gradebook", changed, path)
            for student, totals in record.totals.items():
                results = folder / "gradescope" / student / assignment.name / "results.json"
                refresh_results(results, totals)


class CanvasExportPlugin(ExportPlugin):
    """A CSV that Canvas's gradebook imports: a row per roster student (``Student``, ``ID``,
    ``SIS User ID``, ``SIS Login ID``, ``Section``), a column per assignment holding the total
    after late penalty (nbgrader export's ``score``), blank where nothing was submitted.

    ``nbgrader export --exporter autograder.pipeline.records.exports.CanvasExportPlugin
    [--CanvasExportPlugin.roster=FILE] [--to FILE]``; by default the roster is
    ``grading/roster.csv`` and the CSV ``grading/canvas_grades.csv``.
    """

    roster = Unicode("", help="the roster CSV (default grading/roster.csv)").tag(config=True)
    columns = Dict(
        {},
        help="assignment -> its Canvas column header, e.g. 'Attention (1234)' (default: its name)",
    ).tag(config=True)

    def export(self, gradebook: Any) -> None:
        folder = grading_folder(self.parent.coursedir)
        roster_path = Path(self.roster) if self.roster else folder / "roster.csv"
        try:
            roster = read_roster(roster_path)
        except RosterError as error:
            raise SystemExit(f"error: {error}") from None
        members = roster.members
        names = [a.name for a in gradebook.assignments]
        names = [n for n in names if not self.assignment or n in self.assignment]
        records = {name: record_of(gradebook, name) for name in names}
        # Ids are compared as Unicode text (NFC): a roster's "zoë" is the gradebook's, however
        # composed; two gradebook ids that are one name would give one row two grades.
        graded: dict[str, set[str]] = {}
        for record in records.values():
            for student in record.totals:
                graded.setdefault(canonical(student), set()).add(student)
        known = {canonical(m.student) for m in members}
        missing = sorted(s for key, ids in graded.items() if key not in known for s in ids)
        twins = {key: sorted(ids) for key, ids in graded.items() if len(ids) > 1}
        dest = Path(self.to) if self.to else folder / "canvas_grades.csv"
        with dest.open("w", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(
                ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
                + [self.columns.get(n, n) for n in names]
            )
            writer.writerow(
                ["    Points Possible", "", "", "", ""] + [records[n].max_score for n in names]
            )
            for m in members:
                if self.student and m.student not in {canonical(s) for s in self.student}:
                    continue
                key = canonical(m.student)
                ids = sorted(graded.get(key, ())) if key not in twins else []
                totals = [
                    next((records[n].totals[s] for s in ids if s in records[n].totals), None)
                    for n in names
                ]
                writer.writerow(
                    [spreadsheet_safe(m.name or m.student), spreadsheet_safe(m.canvas_id), ""]
                    + [spreadsheet_safe(m.sis_login_id), spreadsheet_safe(m.section)]
                    + ["" if t is None else t.total for t in totals]
                )
        problems = list(roster.refused)
        if missing:
            problems.append(
                f"roster {roster_path} lacks students who have grades: "
                f"{', '.join(ascii(s) if not s.isascii() else s for s in missing)}; add them "
                "(student, canvas_id or sis_login_id), or their grades would not reach Canvas"
            )
        problems += [
            f"the gradebook holds {' and '.join(ascii(s) for s in ids)}, which are one name "
            "written two ways: that student's cells were left blank"
            for ids in twins.values()
        ]
        if problems:
            raise SystemExit(f"error: {'; '.join(problems)} ({dest} holds everyone else)")
        self.log.info("Canvas gradebook CSV for %d students: %s", len(members), dest)
