"""What the instructor reads: the progress bar, the table of scores and verdicts, and the CSV."""

from __future__ import annotations

import csv
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TextIO

import nbformat
from tqdm import tqdm

from autograder.cells import is_test_cell
from autograder.pipeline.engines.jobs_and_outcomes import Outcome
from autograder.pipeline.records.csv_file import locked, replace_csv
from autograder.pipeline.records.grade_record import COLUMNS, GradeRecord, Totals, fill_rows
from autograder.pipeline.records.safe_text import shown, spreadsheet_safe


def scores_of(outcome: Outcome, max_points: dict[str, float]) -> dict[str, float]:
    """Points per graded cell of ``max_points``, from the trusted verdicts (partial credit
    included): what the graded notebook holds, so what nbgrader records."""
    return {c.grade_id: c.score for c in outcome.cells if c.grade_id in max_points}


def max_points_of(release: dict) -> dict[str, float]:
    """grade_id -> points of every autograded test cell, in notebook order."""
    points = {}
    for cell in nbformat.from_dict(release).cells:
        if is_test_cell(cell):
            meta = cell.metadata["nbgrader"]
            points[meta["grade_id"]] = float(meta.get("points", 0))
    return points


# The CSV's similarity columns (autograder/pipeline/records/similarity.py): a flag for human review.
SIMILARITY = ("similarity", "most_similar_to")


def write_csv(
    outcomes: Sequence[Outcome],
    path: Path,
    max_points: dict[str, float],
    *,
    merge: bool = False,
    record: GradeRecord | None = None,
    similarity: Mapping[str, tuple[float, str]] | None = None,
) -> None:
    """One row per student: verdict, the autograded score, the gradebook's manual points, late
    penalty and total (as ``nbgrader export``), the highest similarity and with whom, each graded
    cell's score, and the notes.

    The score and the gradebook columns of every row, kept rows included, are ``record``'s (the
    gradebook's); without it (or for a student it lacks: nothing recorded), the score is the
    verdicts' and the other gradebook columns are empty.
    With ``merge``, the rows of students not in ``outcomes`` are kept from the existing file
    (when it has the same columns), so grading a few students again keeps the class's file whole.
    Graders that finish together take turns: the file is read and rewritten under a lock on
    ``.<name>.lock`` beside it, and replaced in one rename, so a reader never sees half of it.
    """
    header = [
        "student",
        "verdict",
        "score",
        "max_score",
        *COLUMNS,
        *SIMILARITY,
        *max_points,
        "notes",
    ]
    with locked(path):
        rows = {}
        if merge and path.exists():
            with path.open(newline="") as handle:
                reader = csv.reader(handle)
                if next(reader, None) == header:
                    rows = {row[0]: row for row in reader if row}
        for outcome in outcomes:
            scores = scores_of(outcome, max_points)
            student = spreadsheet_safe(outcome.student)
            rows[student] = [
                student,
                outcome.verdict,
                sum(scores.values()),
                sum(max_points.values()),
                "",
                "",
                "",
                "",
                "",
                "",
                *(scores.get(g, 0) for g in max_points),
                spreadsheet_safe(" | ".join(outcome.notes)),
            ]
        if record is not None:
            fill_rows(header, list(rows.values()), record)
        if similarity is not None:  # the whole class was compared: kept rows are refreshed too
            at = header.index(SIMILARITY[0])
            found = {spreadsheet_safe(s): match for s, match in similarity.items()}
            for student, row in rows.items():
                match = found.get(student)
                row[at : at + 2] = (
                    [round(match[0], 3), spreadsheet_safe(match[1])] if match else ["", ""]
                )
        replace_csv(path, [header, *(rows[student] for student in sorted(rows))])


class _Bar(tqdm):
    """tqdm without its monitor thread, which would live on in the grading process: that process
    forks after the bar is shown (similarity.py), and a fork beside another thread can leave the
    child a lock that thread held.  The monitor only retunes ``miniters``, which is 1 here."""

    monitor_interval = 0


class Progress:
    """What the grader is doing, on stderr: a line per stage, then a tqdm bar with an ETA.

    tqdm redraws a bar only when it advances (its monitor thread only tunes how often), so on a
    terminal a timer redraws it every second: the elapsed time moves while the first submissions
    are still running.  In a log file (not a terminal) the bar is written at the start and once
    per finished submission, nothing in between.
    """

    TICK_SECONDS = 1.0

    def __init__(self, total: int, stream: TextIO | None = None):
        self.total, self.started = total, time.monotonic()
        self.stream = stream or sys.stderr
        self._bar: _Bar | None = None
        self._stop = threading.Event()

    def stage(self, text: str) -> None:
        """Say what the grader is doing (above the bar, once it is shown)."""
        line = f"[{time.monotonic() - self.started:5.1f}s] {text}"
        if self._bar is None or self._bar.disable:
            self.stream.write(line + "\n")
            self.stream.flush()
        else:
            self._bar.write(line, file=self.stream)

    def start(self) -> None:
        """Show the bar at 0/total; on a terminal, keep its clock moving."""
        bar = self._shown()
        if self.stream.isatty() and not self._stop.is_set():
            threading.Thread(target=self._tick, args=(bar,), daemon=True).start()

    def __call__(self, outcome: Outcome) -> None:
        bar = self._shown()
        bar.set_description_str(shown(outcome.student)[:24], refresh=False)
        if bar.n + 1 < self.total:
            bar.update(1)
        else:  # the last: drawn once, by closing
            bar.n += 1
            self._end(bar)

    def _shown(self) -> _Bar:
        """The bar, drawn at 0/total the first time."""
        if self._bar is None:
            self._bar = _Bar(
                total=self.total,
                file=self.stream,
                bar_format="[{bar:30}] {n}/{total} {elapsed} elapsed, ETA {remaining}  {desc}",
                ascii=".#",
                mininterval=0,  # every submission is drawn, as it finishes
                miniters=1,
                smoothing=0,  # the ETA from the average time per submission so far
            )
            if self.total == 0:
                self._end(self._bar)
        return self._bar

    def _end(self, bar: tqdm) -> None:
        self._stop.set()
        bar.close()

    def _tick(self, bar: tqdm) -> None:
        while not self._stop.wait(self.TICK_SECONDS):
            bar.refresh()


PENDING_LEGEND = (
    "manual = points graded by hand; N pending = points of answers no one has graded by hand yet "
    "(Formgrader), not in the total until they are"
)


def _manual(totals: Totals) -> str:
    """The manual column: the points graded by hand, and those still waiting for it."""
    if not totals.pending:
        return f"{totals.manual:g}"
    waiting = f"{totals.pending:g} pending"
    return waiting if not totals.manual else f"{totals.manual:g} + {waiting}"


def format_table(
    outcomes: Sequence[Outcome], max_points: dict[str, float], record: GradeRecord | None = None
) -> str:
    """Score per student and question, total and verdict; notes below the table.

    With ``record``, the manual points, late penalty and total are the gradebook's (as in every
    other record); a student it lacks shows the verdicts' sum, as without one.  Points that wait
    for hand grading show as pending in the manual column (the total counts them once graded),
    with a line below that says so; no penalty shows as 0.
    """
    questions = list(max_points)
    short = [f"Q{i + 1}" for i in range(len(questions))]
    extra = ["manual", "late"] if record else []
    header = ["student", *short, *extra, "total", "verdict"]
    rows = []
    for outcome in outcomes:
        scores = scores_of(outcome, max_points)
        totals = record.totals.get(outcome.student) if record else None
        if totals is None:
            parts = [""] * len(extra)
            total = f"{sum(scores.values()):g}/{sum(max_points.values()):g}"
        else:
            parts = [_manual(totals), f"-{totals.late_penalty:g}" if totals.late_penalty else "0"]
            total = f"{totals.total:g}/{record.max_score:g}"
        rows.append(
            [
                shown(outcome.student),
                *(f"{scores.get(q, 0):g}" for q in questions),
                *parts,
                total,
                outcome.verdict,
            ]
        )
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    lines = [
        "  ".join(str(c).ljust(w) for c, w in zip(row, widths, strict=True))
        for row in [header, *rows]
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    lines.append("")
    lines += [f"{s} = {q} ({max_points[q]:g} pt)" for s, q in zip(short, questions, strict=True)]
    if record and any(
        record.totals[o.student].pending for o in outcomes if o.student in record.totals
    ):
        lines.append(PENDING_LEGEND)
    notes = [(o.student, n) for o in outcomes for n in o.notes]
    if notes:
        lines += ["", "Notes:"] + [f"  {shown(student)}: {shown(note)}" for student, note in notes]
    return "\n".join(lines)
