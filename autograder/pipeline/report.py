"""What the instructor reads: the progress bar, the table of scores and verdicts, and the CSV."""

from __future__ import annotations

import csv
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import nbformat

from autograder.cells import is_test_cell
from autograder.pipeline.records import Outcome


def scores_of(outcome: Outcome, max_points: dict[str, float]) -> dict[str, float]:
    """Points per graded cell, from the trusted verdicts."""
    return {c.grade_id: max_points.get(c.grade_id, 0) if c.passed else 0 for c in outcome.cells}


def max_points_of(release: dict) -> dict[str, float]:
    """grade_id -> points of every autograded test cell, in notebook order."""
    points = {}
    for cell in nbformat.from_dict(release).cells:
        if is_test_cell(cell):
            meta = cell.metadata["nbgrader"]
            points[meta["grade_id"]] = float(meta.get("points", 0))
    return points


def write_csv(
    outcomes: Sequence[Outcome], path: Path, max_points: dict[str, float], *, merge: bool = False
) -> None:
    """One row per student: verdict, total, each graded cell's score, and the notes.

    With ``merge``, the rows of students not in ``outcomes`` are kept from the existing file
    (when it has the same columns), so grading a few students again keeps the class's file whole.
    """
    header = ["student", "verdict", "score", "max_score", *max_points, "notes"]
    rows = {}
    if merge and path.exists():
        with path.open(newline="") as handle:
            reader = csv.reader(handle)
            if next(reader, None) == header:
                rows = {row[0]: row for row in reader if row}
    for outcome in outcomes:
        scores = scores_of(outcome, max_points)
        rows[outcome.student] = [
            outcome.student, outcome.verdict, sum(scores.values()), sum(max_points.values()),
            *(scores.get(g, 0) for g in max_points), " | ".join(outcome.notes),
        ]  # fmt: skip
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows[student] for student in sorted(rows))


class Progress:
    """A one-line progress bar with an ETA, on stderr."""

    def __init__(self, total: int):
        self.total, self.done, self.started = total, 0, time.monotonic()

    def __call__(self, outcome: Outcome) -> None:
        self.done += 1
        elapsed = time.monotonic() - self.started
        eta = elapsed / self.done * (self.total - self.done)
        filled = int(30 * self.done / max(self.total, 1))
        sys.stderr.write(
            f"\r[{'#' * filled}{'.' * (30 - filled)}] {self.done}/{self.total} "
            f"{elapsed:5.0f}s elapsed, ETA {eta:4.0f}s  {outcome.student[:24]:<24}"
        )
        if self.done == self.total:
            sys.stderr.write("\n")
        sys.stderr.flush()


def format_table(outcomes: Sequence[Outcome], max_points: dict[str, float]) -> str:
    """Score per student and question, total and verdict; notes below the table."""
    questions = list(max_points)
    short = [f"Q{i + 1}" for i in range(len(questions))]
    header = ["student", *short, "total", "verdict"]
    rows = []
    for outcome in outcomes:
        scores = scores_of(outcome, max_points)
        total = sum(scores.values())
        rows.append([
            outcome.student, *(f"{scores.get(q, 0):g}" for q in questions),
            f"{total:g}/{sum(max_points.values()):g}", outcome.verdict,
        ])  # fmt: skip
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    lines = [
        "  ".join(str(c).ljust(w) for c, w in zip(row, widths, strict=True))
        for row in [header, *rows]
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    lines.append("")
    lines += [f"{s} = {q} ({max_points[q]:g} pt)" for s, q in zip(short, questions, strict=True)]
    notes = [(o.student, n) for o in outcomes for n in o.notes]
    if notes:
        lines += ["", "Notes:"] + [f"  {student}: {note}" for student, note in notes]
    return "\n".join(lines)
