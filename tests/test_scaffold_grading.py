"""A scaffolded exercise, filled in, grades as the course's own do: in a copy of the course, `python
-m autograder new exercise` adds one to 01 (the cheapest assignment to grade), the test fills in
its solution, check and mutant as an author would, and one batch of the grading command gives
the solution full marks and the mutant its diagnosis.  And a graded cell without its hidden line
earns nothing under the grading command and under plain `nbgrader autograde` alike, with the
same words, in a scaffolded assignment of one import and two tiny exercises."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbgrader.api import Gradebook

from autograder.cells import answer_cells, no_hidden_line
from autograder.pipeline.course.course import tool_env
from autograder.pipeline.worker.verdicts import shown_verdict
from tests.mutants import Replace, apply_patch

ROOT = Path(__file__).resolve().parents[1]
pytestmark = [pytest.mark.slow, pytest.mark.sandbox]

ASSIGNMENT = "01_attention"
CHECK_STUB = (
    '    require(ns, "row_max")\n'
    '    fail("this hidden check is a stub in autograder/checks/a01_attention.py")\n'
)
CHECK = """    row_max = require(ns, "row_max")
    x = torch.randn(3, 4, 5, generator=hidden_generator("row_max"))
    diagnose(
        row_max(x.clone()),
        x.amax(dim=-1),
        {"yours is the maximum over dim=-2, not over the last axis": x.amax(dim=-2)},
        "row_max(x) is not the maximum of each row of x",
    )
"""
EDGE_STUB = (
    '    require(ns, "row_max")\n'
    '    fail("this edge-case check is a stub in autograder/checks/a01_attention.py")\n'
)
# A single row: an answer that reduces the wrong axis returns one value per column.
EDGE = """    row_max = require(ns, "row_max")
    x = torch.randn(1, 3, generator=hidden_generator("row_max of one row"))
    diagnose(row_max(x.clone()), x.amax(dim=-1), {}, "row_max of a single row of x is wrong")
"""
STUBS = "autograder/checks"
MUTANT_STUB = 'Replace("TODO: text of the solution", "TODO: it, mistaken")'
MISTAKE = Replace("x.amax(dim=-1)", "x.amax(dim=-2)")


def _copy_course(root: Path, assignments: list[str]) -> Path:
    """A course checkout at ``root`` with the solutions of ``assignments`` only."""
    caches = shutil.ignore_patterns("__pycache__")
    for folder in ("attention_lab", "autograder", "tests/mutants"):
        shutil.copytree(ROOT / folder, root / folder, ignore=caches)
    for name in ("nbgrader_config.py", "pyproject.toml", "tests/__init__.py"):
        shutil.copy(ROOT / name, root / name)
    for assignment in assignments:
        shutil.copytree(ROOT / "solutions" / assignment, root / "solutions" / assignment)
    (root / "solutions").mkdir(exist_ok=True)
    (root / "grading").mkdir()
    return root


def _run(root: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    """A command in the copy, importing its autograder and attention_lab (not the checkout's)."""
    env = tool_env(PYTHONPATH=str(root))
    env.pop("ATTENTION_LAB_SECRET_FILE", None)
    result = subprocess.run(
        [sys.executable, *args], cwd=root, env=env, capture_output=True, text=True
    )
    if check:
        assert result.returncode == 0, f"{args}:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    return result


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert text.count(old) == 1, f"{path}: expected one {old!r}"
    path.write_text(text.replace(old, new))


def _edit_cell(notebook_path: Path, grade_id: str, old: str, new: str) -> None:
    notebook = nbformat.read(notebook_path, as_version=4)
    (cell,) = [
        c for c in notebook.cells if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id
    ]
    assert cell.source.count(old) == 1, f"{grade_id}: expected one {old!r} in\n{cell.source}"
    cell.source = cell.source.replace(old, new)
    nbformat.write(notebook, notebook_path)


def _submit(root: Path, assignment: str, student: str, answers: dict[str, str]) -> None:
    """The released notebook with ``answers`` (grade id -> source) in its answer cells."""
    release = nbformat.read(root / "notebooks" / assignment / f"{assignment}.ipynb", 4)
    for cell in release.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in answers:
            cell.source = answers[grade_id]
    folder = root / "grading" / "submitted" / student / assignment
    folder.mkdir(parents=True)
    nbformat.write(release, folder / f"{assignment}.ipynb")
    (folder / "timestamp.txt").write_text("2026-11-20 12:00:00.000000 UTC\n")


def _scores(root: Path, assignment: str, student: str) -> dict[str, float]:
    """grade id -> the gradebook's autograded score of every test cell of ``student``."""
    with Gradebook(f"sqlite:///{root / 'grading' / 'gradebook.db'}", "attention_lab") as gb:
        submission = gb.find_submission_notebook(assignment, assignment, student)
        return {g.name: g.auto_score for g in submission.grades if g.cell_type == "code"}


def _verdicts(root: Path, assignment: str, student: str) -> dict[str, str]:
    """grade id -> what each graded test cell of the autograded notebook says."""
    path = root / "grading" / "autograded" / student / assignment / f"{assignment}.ipynb"
    notebook = nbformat.read(path, as_version=4)
    return {
        c.metadata.nbgrader.grade_id: shown_verdict(c)
        for c in notebook.cells
        if c.metadata.get("nbgrader", {}).get("grade") and c.cell_type == "code"
    }


def test_a_scaffolded_exercise_grades_full_marks_and_diagnoses_its_mutant(tmp_path: Path):
    root = _copy_course(tmp_path / "course", [ASSIGNMENT])
    _run(root, "-m", "autograder", "new", "exercise", ASSIGNMENT, "row_max")
    release = root / "notebooks" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    generated = release.read_bytes()
    _run(root, "-m", "nbgrader", "generate_assignment", ASSIGNMENT, "--force")
    assert release.read_bytes() == generated, "the student copy changed when regenerated"
    assert "the course lints clean" in _run(root, "-m", "autograder", "lint").stdout

    # The author's part: the solution, the hidden check and the mutant, written into the stubs.
    solution = root / "solutions" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    _edit_cell(
        solution,
        "row_max",
        'raise NotImplementedError("TODO: the solution of row_max")',
        "return x.amax(dim=-1)",
    )
    _edit(root / "autograder" / "checks" / f"a{ASSIGNMENT}.py", CHECK_STUB, CHECK)
    _edit(root / "autograder" / "checks" / f"a{ASSIGNMENT}.py", EDGE_STUB, EDGE)
    _edit(root / "tests" / "mutants" / f"m{ASSIGNMENT}.py", MUTANT_STUB, repr(MISTAKE))
    _edit(
        root / "tests" / "mutants" / f"m{ASSIGNMENT}.py",
        '"TODO: a phrase its diagnosis must contain"',
        '"over dim=-2"',
    )
    assert "the course lints clean" in _run(root, "-m", "autograder", "lint").stdout
    _run(root, "-m", "nbgrader", "generate_assignment", ASSIGNMENT, "--force")

    answers = answer_cells(nbformat.read(solution, as_version=4))
    mutant = apply_patch(answers["row_max"], MISTAKE, "row_max")
    _submit(root, ASSIGNMENT, "ada", answers)
    _submit(root, ASSIGNMENT, "mia", {**answers, "row_max": mutant})
    _run(root, "-m", "autograder", "grade", ASSIGNMENT, "--development-secret", "--no-feedback")

    ada, mia = _scores(root, ASSIGNMENT, "ada"), _scores(root, ASSIGNMENT, "mia")
    notebook = nbformat.read(solution, as_version=4)
    points = {
        c.metadata.nbgrader.grade_id: float(c.metadata.nbgrader.points)
        for c in notebook.cells
        if c.metadata.get("nbgrader", {}).get("grade") and c.cell_type == "code"
    }
    assert points["test_row_max"] == 2.0
    assert ada == points, _verdicts(root, ASSIGNMENT, "ada")
    assert mia == {**points, "test_row_max": 0.0}, _verdicts(root, ASSIGNMENT, "mia")
    verdict = _verdicts(root, ASSIGNMENT, "mia")["test_row_max"]
    assert "yours is the maximum over dim=-2, not over the last axis" in verdict


def test_a_cell_without_its_hidden_line_earns_nothing_under_both_graders(tmp_path: Path):
    root = _copy_course(tmp_path / "course", [])
    tiny = "09_tiny"
    _run(root, "-m", "autograder", "new", "assignment", tiny, "--no-generate")
    for name in ("double", "halve"):
        _run(root, "-m", "autograder", "new", "exercise", tiny, name, "--no-generate")
    solution = root / "solutions" / tiny / f"{tiny}.ipynb"
    for name, answer in (("double", "return 2 * x"), ("halve", "return x / 2")):
        _edit_cell(
            solution, name, f'raise NotImplementedError("TODO: the solution of {name}")', answer
        )
        for stub in ("this hidden check is a stub", "this edge-case check is a stub"):
            _edit(
                root / "autograder" / "checks" / f"a{tiny}" / f"{name}.py",
                f'    fail("{stub} in {STUBS}/a{tiny}/{name}.py")\n',
                "",
            )  # checks that pass whatever the answer: only the hidden line matters here
    hidden = f'run_hidden_checks("{tiny}", "test_halve", globals())'
    _edit_cell(solution, "test_halve", hidden, "pass")
    lint = _run(root, "-m", "autograder", "lint", check=False)
    assert (
        lint.returncode == 1
        and "(test_halve): a graded test cell must end with its hidden" in lint.stdout
    )
    _run(root, "-m", "nbgrader", "generate_assignment", tiny, "--force")

    answers = answer_cells(nbformat.read(solution, as_version=4))
    for student in ("ada", "bob"):
        _submit(root, tiny, student, answers)
    _run(
        root,
        "-m",
        "autograder",
        "grade",
        tiny,
        "--student",
        "ada",
        "--development-secret",
        "--no-feedback",
    )
    _run(root, "-m", "nbgrader", "autograde", tiny, "--student", "bob")

    expected = {"test_double": 2.0, "test_halve": 0.0}
    assert _scores(root, tiny, "ada") == expected, _verdicts(root, tiny, "ada")
    assert _scores(root, tiny, "bob") == expected, _verdicts(root, tiny, "bob")
    for student in ("ada", "bob"):
        assert no_hidden_line("test_halve") in _verdicts(root, tiny, student)["test_halve"]
