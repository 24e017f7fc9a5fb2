"""Every assignment gets the same verdicts from the trusted judge as from in-process grading.

The mutation corpus (tests/test_mutants.py) grades its notebooks in-process, hidden checks only.
Here, per assignment, the solution, the first and last known-wrong mutants, those marked
``in_notebook`` and every correct alternative are handed in to a fresh nbgrader course and graded
by the grading command's own path: the whole notebook runs in the sandbox, public checks included,
and every hidden check runs in the judge, against proxies of the kernel's objects.  Every check
gets the same verdict in both, so every cell the same partial score (or, where its visible check
failed, what the rule for that gives: autograder/authoring/registry.py), which is what nbgrader
reads from the graded notebook.  What a wrong mutant's student is shown in the graded notebook
starts with the judge's expected diagnosis, even where the cell's visible checks failed first.
The submissions leave out the solutions' demonstration cells (tagged ``demo``), as the corpus
does: a student may delete ungraded cells, no answer or check depends on them, and they are most
of 04's and 07's running time.
"""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path

import nbformat
import pytest
from nbgrader.utils import determine_grade

import tests.mutants
from autograder.authoring.registry import CellGrade
from autograder.cells import is_test_cell
from autograder.examples import Sample, build_course
from autograder.isolation import sandbox
from autograder.judging.judge import VISIBLE_CHECK_FAILED
from autograder.pipeline.batch import grade
from autograder.pipeline.course import Course
from autograder.pipeline.records import Outcome
from autograder.pipeline.verdicts import shown_verdict
from autograder.suite.submission import DEMO_TAG, GradeResult
from tests.mutants import Mutant, mutated_cells
from tests.test_mutants import ROOT, graded
from tests.test_mutants import grade as grade_in_process

pytestmark = [pytest.mark.slow, pytest.mark.sandbox]


@pytest.fixture(autouse=True, scope="module")
def require_sandbox() -> None:
    available, reason = sandbox.sandbox_available()
    if not available:  # a failure, not a skip: CI installs bubblewrap
        pytest.fail(f"the grading sandbox is unavailable: {reason}", pytrace=False)


def _picked() -> dict[str, list[Mutant]]:
    picked = {}
    for info in pkgutil.iter_modules(tests.mutants.__path__):
        module = importlib.import_module(f"tests.mutants.{info.name}")
        marked = [m for m in module.WRONG[1:-1] if m.in_notebook]
        mutants = [module.WRONG[0], *marked, module.WRONG[-1], *module.CORRECT]
        picked[mutants[0].assignment] = mutants
    return picked


PICKED = _picked()


def _student(mutant: Mutant) -> str:
    return "".join(c if c.isalnum() else "-" for c in mutant.name.lower())[:40].strip("-")


def _leave_out_demonstrations(course: Path, assignment: str) -> None:
    """Delete the demonstration cells from every submission of ``assignment`` in ``course``."""
    submissions = sorted(
        (course / "grading" / "submitted").glob(f"*/{assignment}/{assignment}.ipynb")
    )
    assert submissions, "no submission was written"
    for path in submissions:
        notebook = nbformat.read(path, 4)
        notebook.cells = [c for c in notebook.cells if DEMO_TAG not in c.metadata.get("tags", ())]
        nbformat.write(notebook, path)


@pytest.mark.parametrize("assignment", sorted(PICKED))
def test_judge_agrees_with_the_mutation_corpus(assignment: str, tmp_path: Path):
    mutants = {_student(m): m for m in PICKED[assignment]}
    assert len(mutants) == len(PICKED[assignment]), "two mutants map to one student name"
    samples = [Sample("solution", "correct", "ok", True)] + [
        # mutated_cells patches the same answer cells that solution_answers gives students
        Sample(student, "mistake", "ok", m.is_correct, answers=mutated_cells(m))
        for student, m in mutants.items()
    ]
    build_course(tmp_path, samples, assignment)
    _leave_out_demonstrations(tmp_path, assignment)
    outcomes: dict[str, Outcome] = {
        o.student: o for o in grade(assignment, Course.load(tmp_path), workers=2)
    }

    solution = outcomes.pop("solution")
    assert solution.verdict == "ok", solution.notes
    assert solution.cells and all(c.passed for c in solution.cells), solution.cells
    in_process = grade_in_process(ROOT / "solutions" / assignment / f"{assignment}.ipynb")
    assert_same_scores("solution", solution, in_process)
    for student, outcome in outcomes.items():
        mutant = mutants[student]
        assert outcome.verdict == "ok", (mutant.name, outcome.notes)
        assert_same_scores(mutant.name, outcome, graded(mutant))
        lost = {c.grade_id: c.message for c in outcome.cells if not c.passed}
        if mutant.is_correct:
            assert not lost, f"{mutant.name}: a correct alternative lost points: {lost}"
        shown = shown_verdicts(outcome.notebook)
        for grade_id, phrase in mutant.must_fail.items():
            assert grade_id in lost, f"{mutant.name}: {grade_id} kept full marks ({lost})"
            assert shown[grade_id] == lost[grade_id], f"{mutant.name}: {shown[grade_id]}"
            # The judge's diagnosis comes first (it starts with the check's name in brackets),
            # before any visible check's message.
            judged = shown[grade_id].split(VISIBLE_CHECK_FAILED)[0]
            assert judged.startswith("[") and phrase in judged, f"{mutant.name}: {shown[grade_id]}"


def assert_same_scores(name: str, outcome: Outcome, in_process: dict[str, GradeResult]) -> None:
    """Each check's verdict and each cell's score agree between the graded notebook (what
    nbgrader reads from it) and in-process grading; a cell whose visible check failed scores
    what the registry's rule gives for that."""
    points = cell_points(outcome.notebook)
    assert {c.grade_id for c in outcome.cells} == set(in_process), name
    for cell in outcome.cells:
        expected = in_process[cell.grade_id]
        verdicts = [(c.name, c.passed) for c in cell.checks]
        assert verdicts == [(c.name, c.passed) for c in expected.checks], (name, cell.message)
        visible_failed = VISIBLE_CHECK_FAILED in cell.message or "its visible check failed" in (
            cell.message
        )
        score = CellGrade(expected.checks, "failed" if visible_failed else "").points(
            points[cell.grade_id]
        )
        assert cell.score == score == recorded(outcome.notebook)[cell.grade_id], (name, cell)


def cell_points(notebook: nbformat.NotebookNode) -> dict[str, float]:
    """grade_id -> the points of every graded test cell."""
    return {
        cell.metadata["nbgrader"]["grade_id"]: float(cell.metadata["nbgrader"]["points"])
        for cell in notebook.cells
        if is_test_cell(cell)
    }


def recorded(notebook: nbformat.NotebookNode) -> dict[str, float]:
    """grade_id -> the score nbgrader's SaveAutoGrades records from the graded notebook."""
    return {
        cell.metadata["nbgrader"]["grade_id"]: determine_grade(cell)[0]
        for cell in nbformat.from_dict(notebook).cells
        if is_test_cell(cell)
    }


def shown_verdicts(notebook: nbformat.NotebookNode) -> dict[str, str]:
    """grade_id -> the verdict a graded test cell shows in the graded notebook."""
    return {
        cell.metadata["nbgrader"]["grade_id"]: shown_verdict(cell)
        for cell in nbformat.from_dict(notebook).cells
        if is_test_cell(cell)
    }
