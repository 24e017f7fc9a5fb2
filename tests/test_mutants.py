"""The hidden checks catch every known-wrong answer and accept every known-correct one.

Each mutant is a solution notebook with some answer cells replaced; it is graded in-process
by the same checks that nbgrader's hidden-test cells call.
"""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path

import nbformat
import pytest

import tests.mutants
from autograder.suite.submission import GradeResult, grade_submission, load_submission
from tests.mutants import Mutant

ROOT = Path(__file__).resolve().parents[1]
CORPUS: list[Mutant] = [
    mutant
    for info in pkgutil.iter_modules(tests.mutants.__path__)
    for module in [importlib.import_module(f"tests.mutants.{info.name}")]
    for mutant in (*module.WRONG, *module.CORRECT)
]
OUTCOMES: dict[str, bool] = {}  # mutant id -> graded as expected


def mutant_id(mutant: Mutant) -> str:
    return f"{mutant.assignment}: {mutant.name}"


def build(mutant: Mutant, folder: Path) -> Path:
    """Write the solution notebook with the mutant's answer cells swapped in."""
    source = ROOT / "solutions" / mutant.assignment / f"{mutant.assignment}.ipynb"
    nb = nbformat.read(source, as_version=4)
    replaced = set()
    for cell in nb.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in mutant.cells:
            cell.source = mutant.cells[grade_id]
            replaced.add(grade_id)
    assert replaced == set(mutant.cells), f"no such answer cells: {set(mutant.cells) - replaced}"
    path = folder / f"{mutant.assignment}.ipynb"
    nbformat.write(nb, path)
    return path


def grade(path: Path) -> dict[str, GradeResult]:
    return grade_submission(load_submission(path))


@pytest.mark.parametrize("mutant", CORPUS, ids=mutant_id)
def test_mutant_is_graded_as_expected(mutant: Mutant, tmp_path: Path):
    OUTCOMES[mutant_id(mutant)] = False
    results = grade(build(mutant, tmp_path))
    failed = {gid: r.diagnosis for gid, r in results.items() if not r.passed}
    if mutant.is_correct:
        assert not failed, f"a correct alternative lost points: {failed}"
    else:
        for grade_id, phrase in mutant.must_fail.items():
            assert grade_id in failed, f"{grade_id} passed, but should have failed ({failed})"
            assert phrase in failed[grade_id], f"wrong diagnosis for {grade_id}: {failed[grade_id]}"
    OUTCOMES[mutant_id(mutant)] = True


@pytest.mark.parametrize("assignment", sorted({m.assignment for m in CORPUS}))
def test_solution_gets_full_marks_and_the_stub_gets_none(assignment: str):
    solution = grade(ROOT / "solutions" / assignment / f"{assignment}.ipynb")
    assert solution and all(r.passed for r in solution.values()), solution
    stub = grade(ROOT / "notebooks" / assignment / f"{assignment}.ipynb")
    assert stub.keys() == solution.keys()
    assert not any(r.passed for r in stub.values()), [g for g, r in stub.items() if r.passed]


def test_grading_is_deterministic(tmp_path: Path):
    wrong = next(m for m in CORPUS if not m.is_correct)
    path = build(wrong, tmp_path)
    assert grade(path) == grade(path)


def test_corpus_figures():
    """Print caught/total and accepted/total; both must be 100% over a corpus of the agreed size."""
    wrong = [m for m in CORPUS if not m.is_correct]
    correct = [m for m in CORPUS if m.is_correct]
    caught = sum(OUTCOMES.get(mutant_id(m), False) for m in wrong)
    accepted = sum(OUTCOMES.get(mutant_id(m), False) for m in correct)
    print(
        f"\nwrong implementations caught: {caught}/{len(wrong)}; "
        f"correct alternatives accepted: {accepted}/{len(correct)}"
    )
    assert caught == len(wrong) and accepted == len(correct)
