"""The authoring lint (autograder/authoring/lint.py) passes on the course, and each of its rules
catches the mistake it is for, planted in a copy of a real solution notebook."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from autograder.authoring.lint import hidden_calls, lint_course, lint_notebook, registered_checks
from autograder.cells import is_test_cell

ROOT = Path(__file__).resolve().parents[1]
ASSIGNMENT = "01_attention"
GRADE_ID = "test_attention_numpy"


@pytest.fixture(scope="module")
def registered() -> dict[str, list[str]]:
    return registered_checks(ASSIGNMENT)


def _solution() -> nbformat.NotebookNode:
    return nbformat.read(ROOT / "solutions" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", as_version=4)


def _test_cell(notebook: nbformat.NotebookNode, grade_id: str = GRADE_ID):
    return next(
        c for c in notebook.cells if is_test_cell(c) and c.metadata.nbgrader.grade_id == grade_id
    )


def test_the_course_lints_clean():
    assert lint_course() == []


def test_the_untouched_solution_lints_clean(registered):
    assert lint_notebook(ASSIGNMENT, _solution(), registered) == []


@pytest.mark.parametrize(
    "line",
    [
        'run_hidden_checks("01_attention", "test_x", globals())',
        "run_hidden_checks('01_attention', 'test_x', globals())",
        "run_hidden_checks( '01_attention' ,\n 'test_x', globals())",
    ],
)
def test_the_hidden_line_is_recognised_however_it_is_quoted(line: str):
    assert hidden_calls(f"check()\n{line}\n") == [("01_attention", "test_x")]


def test_a_hidden_line_in_single_quotes_lints_clean(registered):
    notebook = _solution()
    cell = _test_cell(notebook)
    cell.source = cell.source.replace(
        f'run_hidden_checks("{ASSIGNMENT}", "{GRADE_ID}"',
        f"run_hidden_checks('{ASSIGNMENT}', '{GRADE_ID}'",
    )
    assert f"run_hidden_checks('{ASSIGNMENT}'" in cell.source
    assert lint_notebook(ASSIGNMENT, notebook, registered) == []


def test_a_graded_cell_without_its_hidden_line_is_caught(registered):
    """Plain nbgrader would give it full marks, the grading command 0."""
    notebook = _solution()
    cell = _test_cell(notebook)
    kept = [line for line in cell.source.splitlines() if "run_hidden_checks" not in line]
    cell.source = "\n".join(kept)
    (problem,) = lint_notebook(ASSIGNMENT, notebook, registered)
    assert f"({GRADE_ID}): a graded test cell must end with its hidden line" in problem


def test_a_hidden_line_naming_another_cell_is_caught(registered):
    notebook = _solution()
    cell = _test_cell(notebook)
    cell.source = cell.source.replace(f'"{GRADE_ID}"', '"test_attention_nmupy"')
    (problem,) = lint_notebook(ASSIGNMENT, notebook, registered)
    assert "must end with its hidden line" in problem and "test_attention_nmupy" in problem


def test_a_graded_cell_without_registered_checks_is_caught(registered):
    unregistered = {k: v for k, v in registered.items() if k != GRADE_ID}
    problems = lint_notebook(ASSIGNMENT, _solution(), unregistered)
    assert problems == [
        f"{ASSIGNMENT} cell {_solution().cells.index(_test_cell(_solution()))} ({GRADE_ID}): no "
        f"hidden checks are registered for it: add "
        f'@check("{ASSIGNMENT}", "{GRADE_ID}") to a check in autograder/checks/'
    ]


def test_a_check_with_a_typo_in_its_grade_id_is_caught(registered):
    typo = {**registered, "test_attention_nmupy": ["matches_reference"]}
    (problem,) = lint_notebook(ASSIGNMENT, _solution(), typo)
    assert "registered for 'test_attention_nmupy', which is no graded test cell" in problem
