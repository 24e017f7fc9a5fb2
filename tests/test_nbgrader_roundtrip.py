"""A whole class through real nbgrader: autograde, feedback and export, scored cell by cell.

The class holds the solution, the untouched stub, and one submission per mutant of the
assignments below, each made the way a student makes one: the released notebook with its
answer cells filled in.
"""

from __future__ import annotations

import csv
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbgrader.api import Gradebook

from tests.test_mutants import CORPUS

# a class through real nbgrader, 115 s of the 6-minute tier before pushing: complete tier only
pytestmark = [pytest.mark.slow, pytest.mark.sandbox]
ROOT = Path(__file__).resolve().parents[1]
ASSIGNMENTS = ["01_attention", "02_multi_head"]


def nbgrader(course: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    return subprocess.run(
        [sys.executable, "-m", "nbgrader", *args],
        cwd=course,
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
    )


def answer_cells(assignment: str) -> dict[str, str]:
    """grade_id -> source of every answer cell in the solution notebook."""
    nb = nbformat.read(ROOT / "solutions" / assignment / f"{assignment}.ipynb", as_version=4)
    return {
        cell.metadata["nbgrader"]["grade_id"]: cell.source
        for cell in nb.cells
        if cell.metadata.get("nbgrader", {}).get("solution")
    }


def submission(assignment: str, answers: dict[str, str]) -> nbformat.NotebookNode:
    """The released notebook with the given answer cells filled in."""
    nb = nbformat.read(ROOT / "notebooks" / assignment / f"{assignment}.ipynb", as_version=4)
    for cell in nb.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in answers:
            cell.source = answers[grade_id]
    return nb


def sampled(assignment: str) -> list:
    """The mutants put through real nbgrader: the first wrong one and the first correct
    alternative.  Every mutant's diagnosis is asserted in-process (test_mutants.py) and through
    the sandboxed judge (judge_parity.py); here the point is nbgrader's own autograde,
    feedback and export around our hidden checks, for each kind of submission (with the solution
    and the stub), at about 5 s a submission."""
    wrong = [m for m in CORPUS if m.assignment == assignment and not m.is_correct]
    correct = [m for m in CORPUS if m.assignment == assignment and m.is_correct]
    return [wrong[0], correct[0]]


def student_id(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


@pytest.fixture(scope="module")
def graded_class(tmp_path_factory):
    """Build the class, run autograde, feedback and export once; return what they left."""
    course = tmp_path_factory.mktemp("course")
    shutil.copy(ROOT / "nbgrader_config.py", course)
    shutil.copytree(
        ROOT / "solutions",
        course / "solutions",
        ignore=lambda d, names: [
            n for n in names if n not in ASSIGNMENTS and d.endswith("solutions")
        ],
    )
    expected: dict[
        tuple[str, str], dict[str, str | None]
    ] = {}  # (student, assignment) -> grade_id -> phrase
    for assignment in ASSIGNMENTS:
        result = nbgrader(course, "generate_assignment", assignment, "--force")
        assert result.returncode == 0, result.stderr[-2000:]
        solution = answer_cells(assignment)
        roster = {"solution": (solution, {}), "stub": ({}, None)}
        for mutant in sampled(assignment):
            roster[f"m-{student_id(mutant.name)}"] = (
                {**solution, **mutant.cells},
                mutant.must_fail,
            )
        for student, (answers, must_fail) in roster.items():
            folder = course / "grading" / "submitted" / student / assignment
            folder.mkdir(parents=True)
            nbformat.write(submission(assignment, answers), folder / f"{assignment}.ipynb")
            expected[(student, assignment)] = must_fail
        autograde = nbgrader(course, "autograde", assignment)
        # nbgrader exits 1 when any submission has failing cells; every one must still be graded.
        assert autograde.returncode in (0, 1), autograde.stderr[-3000:]
        feedback = nbgrader(course, "generate_feedback", assignment)
        assert feedback.returncode == 0, feedback.stderr[-3000:]
    export = nbgrader(course, "export")
    assert export.returncode == 0, export.stderr[-3000:]
    return course, expected


def autograded_cells(course: Path, student: str, assignment: str) -> dict[str, str]:
    """grade_id -> the error text a graded test cell printed in the autograded notebook."""
    path = course / "grading" / "autograded" / student / assignment / f"{assignment}.ipynb"
    nb = nbformat.read(path, as_version=4)
    errors = {}
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("grade") and cell.cell_type == "code":
            errors[meta["grade_id"]] = "\n".join(
                f"{o.ename}: {o.evalue}" for o in cell.outputs if o.output_type == "error"
            )
    return errors


def test_every_submission_gets_the_expected_score_per_cell(graded_class):
    course, expected = graded_class
    with Gradebook(f"sqlite:///{course / 'grading' / 'gradebook.db'}") as gradebook:
        for (student, assignment), must_fail in expected.items():
            graded = gradebook.find_submission(assignment, student).notebooks[0]
            errors = autograded_cells(course, student, assignment)
            for grade in graded.grades:
                if grade.cell.cell_type == "markdown":  # written answers are graded by hand
                    continue
                name = grade.cell.name
                if must_fail is None:  # the stub
                    assert grade.auto_score == 0, f"the stub earned points on {name}"
                elif name in must_fail:
                    assert grade.auto_score == 0, f"{student} was not penalised on {name}"
                    # The public checks run first and may stop the cell with their own message
                    # (or the student's code may crash there); when the hidden checks are what
                    # catches the mistake, their diagnosis must show.
                    assert errors[name], f"{student} lost {name} without any message"
                    if "CheckFailed" in errors[name]:
                        assert must_fail[name] in errors[name], f"{student}/{name}: {errors[name]}"
                elif not must_fail:  # the solution and correct alternatives
                    assert grade.auto_score == grade.max_score, (
                        f"{student} lost {name}: {errors[name]}"
                    )


def test_feedback_names_checks_but_never_shows_their_source(graded_class):
    course, expected = graded_class
    wrong = [(s, a) for (s, a), must_fail in expected.items() if must_fail]
    assert wrong
    for student, assignment in wrong:
        html = (
            course / "grading" / "feedback" / student / assignment / f"{assignment}.html"
        ).read_text()
        for secret in (
            "run_hidden_checks",
            "BEGIN HIDDEN TESTS",
            "autograder/",
            "hidden_generator",
        ):
            assert secret not in html, f"feedback for {student} shows {secret!r}"
        assert "CheckFailed" in html or "AssertionError" in html


def test_export_lists_every_submission(graded_class):
    course, expected = graded_class
    with open(course / "grading" / "grades.csv", newline="") as handle:  # nbgrader_config.py
        rows = {(row["student_id"], row["assignment"]) for row in csv.DictReader(handle)}
    assert set(expected) <= rows
