"""After hand grading, `python -m autograder feedback` writes again the pages whose grades
changed, and only those (nbgrader's own generate_feedback skips every existing page)."""

from __future__ import annotations

import html
import re
import time
from pathlib import Path

import pytest
from nbgrader.api import Gradebook

from autograder.examples import UNSCALED, Sample, build_course
from autograder.pipeline.cli import main

pytestmark = [pytest.mark.slow, pytest.mark.sandbox, pytest.mark.usefixtures("sandbox_required")]

ASSIGNMENT = "01_attention"


def _page(course: Path, student: str) -> Path:
    return course / "grading" / "feedback" / student / ASSIGNMENT / f"{ASSIGNMENT}.html"


def _headline(course: Path, student: str) -> str:
    """The page's first line: "01_attention: X of Y points; ..."."""
    text = html.unescape(re.sub(r"<[^>]+>", " ", _page(course, student).read_text()))
    return re.search(rf"{ASSIGNMENT}: [^;\n]*points", " ".join(text.split()))[0]


def test_a_hand_grade_rewrites_that_page_and_leaves_the_others(tmp_path: Path, capsys):
    course = tmp_path / "course"
    samples = [
        Sample("ada", "correct", "ok", True),
        Sample("alan", "mistake", "ok", False, answers={"attention": UNSCALED}),
    ]
    build_course(course, samples)
    arguments = ["--course", str(course)]
    assert main(["grade", ASSIGNMENT, *arguments, "--workers", "2", "--development-secret"]) == 0
    before = {s: _page(course, s).stat().st_mtime_ns for s in ("ada", "alan")}
    headline = _headline(course, "ada")
    capsys.readouterr()

    time.sleep(0.05)  # a page written again gets a later time
    assert main(["feedback", ASSIGNMENT, *arguments]) == 0
    assert "0 pages written again; 2 unchanged" in capsys.readouterr().out
    assert {s: _page(course, s).stat().st_mtime_ns for s in before} == before

    with Gradebook(f"sqlite:///{course / 'grading' / 'gradebook.db'}", "attention_lab") as gb:
        written = [
            grade
            for grade in gb.find_submission_notebook(ASSIGNMENT, ASSIGNMENT, "ada").grades
            if grade.cell.cell_type == "markdown"  # a written answer, graded by hand
        ]
        assert written, "the notebook has no hand-graded answer"
        written[0].manual_score = written[0].cell.max_score
        gb.db.commit()
        raised = written[0].cell.max_score
    assert main(["feedback", ASSIGNMENT, *arguments]) == 0
    assert "1 page written again: ada; 1 unchanged" in capsys.readouterr().out
    assert _page(course, "ada").stat().st_mtime_ns > before["ada"]
    assert _page(course, "alan").stat().st_mtime_ns == before["alan"]
    old, new = (
        float(re.search(r": ([\d.]+) of", h)[1]) for h in (headline, _headline(course, "ada"))
    )
    assert new == old + raised, (headline, _headline(course, "ada"))
