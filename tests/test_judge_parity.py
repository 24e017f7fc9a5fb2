"""Every assignment gets the same verdicts from the trusted judge as from in-process grading.

The mutation corpus (tests/test_mutants.py) grades its notebooks in-process, hidden checks only.
Here, per assignment, the solution, the first and last known-wrong mutants, those marked
``in_notebook`` and every correct alternative are handed in to a fresh nbgrader course and graded
by the grading command's own path: the whole notebook runs in the sandbox, public checks included,
and every hidden check runs in the judge, against proxies of the kernel's objects.  What a wrong
mutant's student is shown in the graded notebook starts with the judge's expected diagnosis, even
where the cell's visible checks failed first.  The submissions leave out the solutions'
demonstration cells (tagged ``demo``), as the corpus does: a student may delete ungraded cells, no
answer or check depends on them, and they are most of 04's and 07's running time.
"""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path

import nbformat
import pytest

import tests.mutants
from autograder.cells import is_test_cell
from autograder.examples import Sample, build_course
from autograder.isolation import sandbox
from autograder.judging.judge import VISIBLE_CHECK_FAILED
from autograder.pipeline.batch import grade
from autograder.pipeline.course import Course
from autograder.pipeline.records import Outcome
from autograder.suite.submission import DEMO_TAG
from tests.mutants import Mutant, mutated_cells

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
    for student, outcome in outcomes.items():
        mutant = mutants[student]
        assert outcome.verdict == "ok", (mutant.name, outcome.notes)
        failed = {c.grade_id: c.message for c in outcome.cells if not c.passed}
        if mutant.is_correct:
            assert not failed, f"{mutant.name}: a correct alternative lost points: {failed}"
        shown = shown_errors(outcome.notebook)
        for grade_id, phrase in mutant.must_fail.items():
            assert grade_id in failed, f"{mutant.name}: {grade_id} passed ({failed})"
            assert shown[grade_id] == failed[grade_id], f"{mutant.name}: {shown[grade_id]}"
            # The judge's diagnosis comes first (it starts with the check's name in brackets),
            # before any visible check's message.
            judged = shown[grade_id].split(VISIBLE_CHECK_FAILED)[0]
            assert judged.startswith("[") and phrase in judged, f"{mutant.name}: {shown[grade_id]}"


def shown_errors(notebook: nbformat.NotebookNode) -> dict[str, str]:
    """grade_id -> the error a graded test cell shows in the graded notebook ("" if none)."""
    shown = {}
    for cell in notebook.cells:
        if is_test_cell(cell):
            errors = [o.evalue for o in cell.outputs if o.output_type == "error"]
            shown[cell.metadata["nbgrader"]["grade_id"]] = "\n".join(errors)
    return shown
