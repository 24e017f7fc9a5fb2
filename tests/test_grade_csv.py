"""The grading command's CSV: one row per student, kept whole when a few are graded again."""

import csv
import multiprocessing
import re
from multiprocessing.synchronize import Barrier
from pathlib import Path
from types import SimpleNamespace

from autograder.pipeline.engines.jobs_and_outcomes import Outcome
from autograder.pipeline.records.grade_record import (
    COLUMNS,
    GradeRecord,
    Totals,
    refresh_csv,
    totals_of,
)
from autograder.pipeline.records.report import PENDING_LEGEND, SIMILARITY, format_table, write_csv
from tests.graded_cells import graded_cell

POINTS = {"q1": 2.0, "q2": 1.0}


def outcome(student: str, passed: dict[str, bool | float], verdict: str = "ok") -> Outcome:
    """``passed``: grade_id -> full marks (True), nothing (False) or the points earned."""
    cells = []
    for g, ok in passed.items():
        score = ok if isinstance(ok, float) else POINTS[g] * ok
        cells.append(graded_cell(g, POINTS[g], score))
    return Outcome(student, verdict, [], {}, cells, 1.0)


def read(path: Path) -> list[list[str]]:
    with path.open(newline="") as handle:
        return list(csv.reader(handle))


def test_rows_hold_scores_per_question_and_totals(tmp_path: Path):
    path = tmp_path / "grades.csv"
    write_csv([outcome("bo", {"q1": True, "q2": False}, "timeout")], path, POINTS)
    assert read(path) == [
        ["student", "verdict", "score", "max_score", *COLUMNS, *SIMILARITY, "q1", "q2", "notes"],
        ["bo", "timeout", "2.0", "3.0", "", "", "", "", "", "", "2.0", "0.0", ""],
    ]


def test_partial_credit_shows_per_question_and_in_the_score(tmp_path: Path):
    path = tmp_path / "grades.csv"
    write_csv([outcome("bo", {"q1": 1.33, "q2": True})], path, POINTS)
    assert read(path)[1][:4] == ["bo", "ok", "2.33", "3.0"]
    assert read(path)[1][-3:-1] == ["1.33", "1.0"]


def test_the_gradebook_columns_come_from_the_record_and_refresh_in_place(tmp_path: Path):
    path = tmp_path / "grades.csv"
    record = GradeRecord({"bo": Totals(2.0, 1.5, 0.5, 3.0), "=cy": Totals(3.0, 0, 0, 3.0)}, 5.0)
    write_csv(
        [outcome("bo", {"q1": True}), outcome("=cy", {"q1": True, "q2": True})],
        path,
        POINTS,
        record=record,
    )
    rows = {row[0]: row for row in read(path)[1:]}
    assert rows["bo"][2:8] == ["2.0", "3.0", "1.5", "0.5", "3.0", "5.0"]
    later = GradeRecord({"bo": Totals(2.0, 3.0, 0.0, 5.0), "=cy": Totals(1.0, 0, 0, 1.0)}, 5.0)
    assert refresh_csv(path, later) == 2
    rows = {row[0]: row for row in read(path)[1:]}
    assert rows["bo"][2:8] == ["2.0", "3.0", "3.0", "0.0", "5.0", "5.0"]
    assert rows["'=cy"][2] == "1.0" and rows["'=cy"][-1] == ""  # matched through the guard


def test_merge_replaces_the_regraded_and_keeps_the_others(tmp_path: Path):
    path = tmp_path / "grades.csv"
    write_csv([outcome("cy", {"q1": True, "q2": True}), outcome("al", {"q1": False})], path, POINTS)
    write_csv([outcome("al", {"q1": True, "q2": True})], path, POINTS, merge=True)
    rows = read(path)
    assert [r[0] for r in rows[1:]] == ["al", "cy"]
    assert rows[1][2] == rows[2][2] == "3.0"
    write_csv([outcome("al", {"q1": False})], path, POINTS)  # no merge: this batch only
    assert [r[0] for r in read(path)[1:]] == ["al"]


def test_similarity_is_a_sortable_number_and_a_name_refreshed_for_the_whole_class(tmp_path: Path):
    path = tmp_path / "grades.csv"
    write_csv([outcome("cy", {"q1": True}), outcome("al", {"q1": True})], path, POINTS)
    similar = {"al": (0.91234, "=cy"), "cy": (0.5, "/reference"), "=cy": (0.91234, "al")}
    write_csv([outcome("=cy", {"q1": True})], path, POINTS, merge=True, similarity=similar)
    rows = {row[0]: row[8:10] for row in read(path)[1:]}
    assert rows == {"al": ["0.912", "'=cy"], "cy": ["0.5", "/reference"], "'=cy": ["0.912", "al"]}


def test_merge_drops_rows_written_for_other_questions(tmp_path: Path):
    path = tmp_path / "grades.csv"
    write_csv([outcome("cy", {"q1": True})], path, {"q1": 2.0})
    write_csv([outcome("al", {"q1": True, "q2": True})], path, POINTS, merge=True)
    assert [r[0] for r in read(path)[1:]] == ["al"]


def test_hand_entered_scores_and_extra_credit_count_as_manual():
    def grade(auto: float, manual: float | None = None, extra: float | None = None):
        return SimpleNamespace(auto_score=auto, manual_score=manual, extra_credit=extra)

    # nbgrader's score of a grade: the manual score if any, else the auto score, plus extra.
    grades = [grade(3.0, manual=1.0), grade(2.0, extra=1.0), grade(4.0)]
    raw = 1.0 + (2.0 + 1.0) + 4.0
    submission = SimpleNamespace(
        score=raw, late_submission_penalty=0.5, notebooks=[SimpleNamespace(grades=grades)]
    )
    assert totals_of(submission) == Totals(autograded=6.0, manual=2.0, late_penalty=0.5, total=7.5)


def test_a_cell_nobody_has_scored_is_pending_not_manual():
    def grade(auto: float | None, manual: float | None = None, most: float = 2.0):
        return SimpleNamespace(
            auto_score=auto, manual_score=manual, extra_credit=None, max_score=most
        )

    # a written answer not graded yet, one graded by hand, and one left as released (nbgrader
    # scores it 0 itself: it waits for no one)
    grades = [grade(None, most=6.0), grade(None, manual=1.0), grade(0.0), grade(4.0)]
    submission = SimpleNamespace(
        score=5.0, late_submission_penalty=None, notebooks=[SimpleNamespace(grades=grades)]
    )
    assert totals_of(submission) == Totals(4.0, 1.0, 0.0, 5.0, pending=6.0)


def _table_rows(table: str) -> dict[str, list[str]]:
    """student -> the cells of her row, read from the table's column rule."""
    lines = table.splitlines()
    bounds = [(m.start(), m.end()) for m in re.finditer(r"-+", lines[1])]
    rows = {}
    for line in lines[2:]:
        if not line.strip():
            break
        cells = [line[a:b].strip() for a, b in bounds[:-1]] + [line[bounds[-1][0] :].strip()]
        rows[cells[0]] = cells
    return rows


def test_the_table_shows_hand_graded_points_as_pending_and_no_minus_zero():
    # Issue 41: a perfect submission read "manual 0, late -0, total 13/19" while its feedback
    # said 6 points wait for hand grading.
    outcomes = [outcome(s, {"q1": True, "q2": True}) for s in ("ada", "bo", "cy")]
    record = GradeRecord(
        {
            "ada": Totals(3.0, 0.0, 0.0, 3.0, pending=6.0),
            "bo": Totals(3.0, 2.0, 0.75, 4.25, pending=4.0),
            "cy": Totals(3.0, 6.0, 0.0, 9.0),
        },
        9.0,
    )
    table = format_table(outcomes, POINTS, record)
    rows = _table_rows(table)
    header = table.splitlines()[0].split()
    manual, late, total = (header.index(c) for c in ("manual", "late", "total"))
    assert [rows[s][manual] for s in ("ada", "bo", "cy")] == ["6 pending", "2 + 4 pending", "6"]
    assert [rows[s][late] for s in ("ada", "bo", "cy")] == ["0", "-0.75", "0"]
    assert rows["ada"][total] == "3/9"
    assert not re.search(r"-0(?![.\d])", table), table
    assert PENDING_LEGEND in table.splitlines()
    graded = GradeRecord({"cy": record.totals["cy"]}, 9.0)
    assert PENDING_LEGEND not in format_table(outcomes[2:], POINTS, graded)  # nothing waits


def _grade_one_at_a_time(path: Path, prefix: str, count: int, start: Barrier) -> None:
    """A grader that records its students one by one, each time merging into the class's file."""
    start.wait()
    for number in range(count):
        write_csv([outcome(f"{prefix}{number:03d}", {"q1": True})], path, POINTS, merge=True)


def test_graders_merging_at_once_lose_no_row(tmp_path: Path):
    path = tmp_path / "grades.csv"
    context = multiprocessing.get_context("fork")
    graders, count = "abcd", 40
    start = context.Barrier(len(graders))
    processes = [
        context.Process(target=_grade_one_at_a_time, args=(path, prefix, count, start))
        for prefix in graders
    ]
    for process in processes:
        process.start()
    for process in processes:
        process.join(timeout=60)
        assert process.exitcode == 0, process.exitcode
    students = [row[0] for row in read(path)[1:]]
    expected = sorted(f"{prefix}{n:03d}" for prefix in graders for n in range(count))
    assert students == expected, f"{len(expected) - len(students)} rows lost"
    assert sorted(p.name for p in tmp_path.iterdir()) == [".grades.csv.lock", "grades.csv"]


def test_a_guarded_name_keeps_its_own_row_when_the_gradebook_is_read_back(tmp_path: Path):
    path = tmp_path / "grades.csv"
    students = ["alice", "'alice", "=alice", "'=alice"]  # no two may share a cell
    write_csv([outcome(s, {"q1": True}) for s in students], path, POINTS)
    cells = [row[0] for row in read(path)[1:]]
    assert len(set(cells)) == len(students), cells
    totals = {s: Totals(float(n), 0.0, 0.0, float(n)) for n, s in enumerate(students, start=1)}
    assert refresh_csv(path, GradeRecord(totals, 3.0)) == len(students)
    header, *rows = read(path)
    got = {row[0]: float(row[header.index("total")]) for row in rows}
    assert got == {"alice": 1.0, "''alice": 2.0, "'=alice": 3.0, "''=alice": 4.0}


def test_merged_rows_kept_from_the_file_show_the_gradebooks_points(tmp_path: Path):
    path = tmp_path / "grades.csv"
    first = GradeRecord({"al": Totals(3.0, 0, 0, 3.0), "cy": Totals(3.0, 0, 0, 3.0)}, 5.0)
    write_csv(
        [outcome(s, {"q1": True, "q2": True}) for s in ("al", "cy")], path, POINTS, record=first
    )
    # cy is graded by hand (2 points), then al alone is graded again: cy's kept row follows.
    later = GradeRecord({"al": Totals(1.0, 0, 0, 1.0), "cy": Totals(3.0, 2.0, 0, 5.0)}, 5.0)
    write_csv([outcome("al", {"q1": False, "q2": True})], path, POINTS, merge=True, record=later)
    header, *rows = read(path)
    totals = {row[0]: (row[header.index("manual")], row[header.index("total")]) for row in rows}
    assert totals == {"al": ("0", "1.0"), "cy": ("2.0", "5.0")}
