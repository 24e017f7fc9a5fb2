"""The hidden checks catch every known-wrong answer and accept every known-correct one.

Each mutant is a solution notebook with some answer cells patched; it is graded in-process by the
same checks that nbgrader's hidden-test cells call.
"""

from __future__ import annotations

import ast
import importlib
import pkgutil
import tempfile
from pathlib import Path

import nbformat
import pytest

import tests.mutants
from autograder.suite.submission import (
    DEMO_TAG,
    GradeResult,
    grade_submission,
    load_submission,
)
from tests.mutants import Body, Mutant, Replace, apply_patch, mutated_cells

ROOT = Path(__file__).resolve().parents[1]
CORPUS: list[Mutant] = [
    mutant
    for info in pkgutil.iter_modules(tests.mutants.__path__)
    for module in [importlib.import_module(f"tests.mutants.{info.name}")]
    for mutant in (*module.WRONG, *module.CORRECT)
]
ASSIGNMENTS = sorted({m.assignment for m in CORPUS})
AGREED_WRONG, AGREED_CORRECT = 101, 25  # the README's figures: the corpus may grow, never shrink
_GRADED: dict[str, dict[str, GradeResult]] = {}  # mutant id -> its grades, once per run


def mutant_id(mutant: Mutant) -> str:
    """The mutant's test id: assignment and name."""
    return f"{mutant.assignment}: {mutant.name}"


def build(mutant: Mutant, folder: Path) -> Path:
    """Write the solution notebook with the mutant's patched answer cells swapped in."""
    cells = mutated_cells(mutant)
    source = ROOT / "solutions" / mutant.assignment / f"{mutant.assignment}.ipynb"
    nb = nbformat.read(source, as_version=4)
    replaced = set()
    for cell in nb.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in cells:
            cell.source = cells[grade_id]
            replaced.add(grade_id)
    assert replaced == set(cells), f"no such answer cells: {set(cells) - replaced}"
    path = folder / f"{mutant.assignment}.ipynb"
    nbformat.write(nb, path)
    return path


def grade(path: Path) -> dict[str, GradeResult]:
    """grade_id -> result of every graded cell of the notebook at ``path``; the solutions'
    demonstration cells are skipped (the solution's full marks below prove nothing needs them)."""
    return grade_submission(load_submission(path, skip_tags=(DEMO_TAG,)))


def graded(mutant: Mutant) -> dict[str, GradeResult]:
    """The mutant's grades, computed by whichever test asks first."""
    key = mutant_id(mutant)
    if key not in _GRADED:
        with tempfile.TemporaryDirectory() as folder:
            _GRADED[key] = grade(build(mutant, Path(folder)))
    return _GRADED[key]


def mismatches(mutant: Mutant, results: dict[str, GradeResult]) -> list[str]:
    """How the grades depart from what the mutant must get; empty when they do not."""
    failed = {gid: r.diagnosis for gid, r in results.items() if not r.passed}
    if mutant.is_correct:
        return [f"a correct alternative lost points: {failed}"] if failed else []
    problems = []
    for grade_id, phrase in mutant.must_fail.items():
        if grade_id not in failed:
            problems.append(f"{grade_id} passed, but should have failed ({failed})")
        elif phrase not in failed[grade_id]:
            problems.append(f"wrong diagnosis for {grade_id}: {failed[grade_id]}")
    return problems


@pytest.mark.parametrize("mutant", CORPUS, ids=mutant_id)
def test_every_patch_applies_and_parses(mutant: Mutant):
    for grade_id, source in mutated_cells(mutant).items():
        ast.parse(source, filename=f"{mutant_id(mutant)} [{grade_id}]")


def test_a_patch_that_no_longer_matches_fails_loudly():
    source = "def f(x):\n    y = x + 1\n    return y\n"
    assert apply_patch(source, Replace("x + 1", "x - 1"), "cell") == source.replace("+", "-")
    with pytest.raises(AssertionError, match=r"(?s)here: this text occurs 0 times.*x \* 2"):
        apply_patch(source, Replace("x * 2", "x"), "here")
    with pytest.raises(AssertionError, match="occurs 2 times"):
        apply_patch(source, Replace("y", "z"), "here")
    with pytest.raises(AssertionError, match="one `def g`"):
        apply_patch(source, Body("g", "return 0"), "here")
    assert apply_patch(source, Body("f", "return 0"), "cell") == "def f(x):\n    return 0\n"


def test_the_corpus_keeps_its_agreed_size():
    wrong = [m for m in CORPUS if not m.is_correct]
    assert len(wrong) >= AGREED_WRONG, len(wrong)
    assert len(CORPUS) - len(wrong) >= AGREED_CORRECT, len(CORPUS) - len(wrong)
    solutions = {p.stem for p in ROOT.glob("solutions/*/*.ipynb") if p.stem == p.parent.name}
    assert {m.assignment for m in wrong} == set(ASSIGNMENTS) == solutions


@pytest.mark.slow
@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_solution_gets_full_marks_and_the_stub_gets_none(assignment: str):
    solution = grade(ROOT / "solutions" / assignment / f"{assignment}.ipynb")
    assert solution and all(r.passed for r in solution.values()), solution
    stub = grade(ROOT / "notebooks" / assignment / f"{assignment}.ipynb")
    assert stub.keys() == solution.keys()
    assert not any(r.passed for r in stub.values()), [g for g, r in stub.items() if r.passed]


@pytest.mark.slow
def test_grading_is_deterministic(tmp_path: Path):
    wrong = next(m for m in CORPUS if not m.is_correct)
    path = build(wrong, tmp_path)
    assert grade(path) == grade(path)


class _AssignmentCorpus:
    """The graded tests of one assignment's mutants.  A class per assignment, so that under
    `pytest -n N --dist loadscope` its tests share a worker (each mutant is graded once) while
    the assignments spread over the workers."""

    assignment: str

    def test_mutant_is_graded_as_expected(self, mutant: Mutant):
        problems = mismatches(mutant, graded(mutant))
        assert not problems, "\n".join(problems)

    def test_corpus_figures(self):
        """Print caught/total and accepted/total of the assignment's mutants; both must be 100%."""
        wrong = [m for m in CORPUS if m.assignment == self.assignment and not m.is_correct]
        correct = [m for m in CORPUS if m.assignment == self.assignment and m.is_correct]
        caught = sum(not mismatches(m, graded(m)) for m in wrong)
        accepted = sum(not mismatches(m, graded(m)) for m in correct)
        print(
            f"\n{self.assignment}: wrong implementations caught: {caught}/{len(wrong)}; "
            f"correct alternatives accepted: {accepted}/{len(correct)}"
        )
        assert wrong and caught == len(wrong) and accepted == len(correct)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Each assignment's class takes that assignment's mutants."""
    if metafunc.cls is not None and "mutant" in metafunc.fixturenames:
        mutants = [m for m in CORPUS if m.assignment == metafunc.cls.assignment]
        metafunc.parametrize("mutant", mutants, ids=mutant_id)


for _assignment in ASSIGNMENTS:
    _name = "TestMutantsOf" + _assignment.title().replace("_", "")
    globals()[_name] = pytest.mark.slow(
        type(_name, (_AssignmentCorpus,), {"assignment": _assignment})
    )
