"""What the trusted grader does after the sandbox stops is bounded, and one submission's text
cannot break another's records: a lone surrogate, outputs by the hundred thousand, attachments
referenced thousands of times."""

from __future__ import annotations

import csv
import html
import json
import time
from pathlib import Path

import nbformat
import pytest

from autograder.examples import build_course
from autograder.pipeline.course.course import Course, GradingError
from autograder.pipeline.engines.batch import _recorded
from autograder.pipeline.engines.jobs_and_outcomes import Outcome
from autograder.pipeline.feedback import feedback
from autograder.pipeline.feedback.feedback import generate_feedback
from autograder.pipeline.records.report import format_table, max_points_of, write_csv
from tests.graded_cells import graded_cell

ASSIGNMENT = "01_attention"
LONE = "\udcff"  # what a kernel's error message can hold: not UTF-8 at all


def _outcome(course: Course, student: str, evalue: str) -> Outcome:
    """A graded notebook (every test cell passed) whose first code cell raised ``evalue``."""
    release = course.root / "notebooks" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    folder = course.root / "grading" / "submitted" / student / ASSIGNMENT
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{ASSIGNMENT}.ipynb").write_bytes(release.read_bytes())
    notebook = nbformat.read(release, 4)
    code = next(cell for cell in notebook.cells if cell.cell_type == "code")
    code.outputs = [
        nbformat.v4.new_output("error", ename="ValueError", evalue=evalue, traceback=[evalue])
    ]
    points = max_points_of(dict(notebook))
    cells = [graded_cell(g, p, p, name=f"passed {evalue}") for g, p in points.items()]
    return Outcome(student, "ok", [f"said {evalue}"], dict(notebook), cells, 0.0)


@pytest.mark.slow
def test_a_lone_surrogate_costs_nothing_and_leaves_every_record_whole(tmp_path: Path):
    build_course(tmp_path, [])
    course = Course.load(tmp_path)
    started = time.monotonic()
    outcomes = [
        _recorded(course, ASSIGNMENT, _outcome(course, "mallory", f"bad {LONE} byte")),
        _recorded(course, ASSIGNMENT, _outcome(course, "ada", "fine")),
    ]
    assert [o.verdict for o in outcomes] == ["ok", "ok"], [o.notes for o in outcomes]
    grading = tmp_path / "grading"
    graded = grading / "autograded" / "mallory" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    text = graded.read_text(encoding="utf-8")  # whole, and UTF-8
    assert "bad \\\\udcff byte" in text  # what was seen, escaped
    points = max_points_of(outcomes[0].notebook)
    write_csv(outcomes, grading / "grades.csv", points)
    with (grading / "grades.csv").open(newline="", encoding="utf-8") as handle:
        assert len(list(csv.reader(handle))) == 3
    assert "\\udcff" in format_table(outcomes, points)
    results = grading / "gradescope" / "mallory" / ASSIGNMENT / "results.json"
    json.loads(results.read_bytes().decode("utf-8"))
    generate_feedback(course, ASSIGNMENT)  # the class's feedback, surrogate and all
    for student in ("mallory", "ada"):
        page = tmp_path / "grading" / "feedback" / student / ASSIGNMENT / f"{ASSIGNMENT}.html"
        assert page.stat().st_size > 0, student
    assert time.monotonic() - started < 180


@pytest.mark.slow
def test_one_students_broken_graded_copy_costs_only_her_feedback(tmp_path: Path):
    build_course(tmp_path, [])
    course = Course.load(tmp_path)
    for student in ("ada", "broken"):
        _recorded(course, ASSIGNMENT, _outcome(course, student, "fine"))
    graded = tmp_path / "grading" / "autograded" / "broken" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    graded.write_text("")  # what the old grader left after a lone surrogate
    started = time.monotonic()
    with pytest.raises(GradingError) as caught:
        generate_feedback(course, ASSIGNMENT)
    assert "--student broken failed" in str(caught.value) and "ada" not in str(caught.value)
    page = tmp_path / "grading" / "feedback" / "ada" / ASSIGNMENT / f"{ASSIGNMENT}.html"
    assert page.stat().st_size > 0
    assert time.monotonic() - started < 240  # the class's run, then each student's


@pytest.mark.slow
def test_links_that_repeat_a_long_address_cost_seconds_not_the_page(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    # Issue 39's attack: nine markdown cells, each a 60 kB address used 5,700 times by
    # reference links (3 GB of links): the feedback ran into its 4 GiB limit twice (222 s), the
    # student had no page and the command exited 1.  A tighter time limit shows it sooner.
    monkeypatch.setattr(feedback, "SECONDS_PER_STUDENT", 45.0)
    build_course(tmp_path, [])
    course = Course.load(tmp_path)
    hostile = _outcome(course, "mallory", "fine")
    address = "https://example.com/" + "a" * 60_000
    cell = f"[ref]: <{address}>\n\n" + "[x][ref] " * 5_700
    hostile.notebook["cells"] += [nbformat.v4.new_markdown_cell(cell) for _ in range(9)]
    for outcome in (_outcome(course, "ada", "fine"), hostile):
        assert _recorded(course, ASSIGNMENT, outcome).verdict == "ok", outcome.notes
    started = time.monotonic()
    generate_feedback(course, ASSIGNMENT)  # raises GradingError when a page is missing
    took = time.monotonic() - started
    feedback_folder = tmp_path / "grading" / "feedback"
    page = (feedback_folder / "mallory" / ASSIGNMENT / f"{ASSIGNMENT}.html").read_text()
    assert page.count(html.escape(feedback.LINKS_TOO_LONG)) == 9
    assert len(page) < 10_000_000, f"{len(page):,} characters"
    assert (feedback_folder / "ada" / ASSIGNMENT / f"{ASSIGNMENT}.html").stat().st_size > 0
    assert took < 90, f"{took:.0f} s"  # about 10 s here, nbgrader's start included
