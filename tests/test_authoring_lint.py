"""The authoring lint (autograder/authoring/lint.py) passes on the course, and each of its rules
catches the mistake it is for, planted in a copy of a real solution notebook: the hidden line,
the registered checks, the "What is graded" table, the cells' ids and the checks worth points."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest

from autograder.authoring.graded_table import rewrite_table, table_problems
from autograder.authoring.lint import (
    hidden_calls,
    lint_course,
    lint_notebook,
    missing_ids,
    paying_problems,
    registered_checks,
)
from autograder.authoring.registry import Check
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


def test_a_table_that_disagrees_with_the_points_is_caught_and_rewritten():
    notebook = _solution()
    _test_cell(notebook).metadata.nbgrader.points = 3
    problems = table_problems(ASSIGNMENT, notebook)
    assert problems == [
        f'{ASSIGNMENT}: row 1 of the "What is graded" table reads (grade id, points, how) '
        f"('{GRADE_ID}', '2', 'auto'), but the graded cells make it ('{GRADE_ID}', '3', 'auto'); "
        "`python -m autograder lint --write-tables` rewrites it from the cells",
        f"{ASSIGNMENT}: the table's heading says 19 points in all, the graded cells hold 20; "
        "`python -m autograder lint --write-tables` rewrites it from the cells",
    ]
    assert rewrite_table(notebook)
    assert table_problems(ASSIGNMENT, notebook) == []
    assert f"| NumPy attention | `{GRADE_ID}` | 3 | auto |" in notebook.cells[0].source
    assert "(20 points in all)" in notebook.cells[0].source
    assert not rewrite_table(notebook)  # written from the cells, it stays as it is


def test_a_graded_cell_missing_from_the_table_is_caught():
    notebook = _solution()
    title = notebook.cells[0]
    title.source = "\n".join(line for line in title.source.splitlines() if GRADE_ID not in line)
    (problem,) = table_problems(ASSIGNMENT, notebook)
    assert 'row 1 of the "What is graded" table reads (grade id, points, how) ' in problem
    assert f"the graded cells make it ('{GRADE_ID}', '2', 'auto')" in problem


def test_the_untouched_tables_agree_with_their_cells():
    for path in sorted((ROOT / "solutions").glob("*/*.ipynb")):
        notebook = nbformat.read(path, as_version=4)
        assert table_problems(path.stem, notebook) == []
        assert not rewrite_table(notebook), f"{path.stem}: rewriting changes its table"


def test_a_cell_without_an_id_in_the_file_is_caught(tmp_path: Path):
    raw = json.loads((ROOT / "solutions" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").read_text())
    del raw["cells"][3]["id"]
    path = tmp_path / f"{ASSIGNMENT}.ipynb"
    path.write_text(json.dumps(raw))
    (problem,) = missing_ids(ASSIGNMENT, path)
    assert problem.startswith(f"{ASSIGNMENT}: cells [3] have no id in {ASSIGNMENT}.ipynb")


def _made_up(name: str, weight: float = 1.0, gate: bool = False) -> Check:
    return Check(ASSIGNMENT, "test_made_up", name, lambda ns: None, weight, gate)


def test_a_cell_with_one_check_worth_points_is_caught_by_name():
    """A gate earns nothing, so a gate and one weighted check leave one edge case the whole cell."""
    entries = [_made_up("precondition", 0.0, gate=True), _made_up("main_case")]
    (problem,) = paying_problems(ASSIGNMENT, entries, single_clause={})
    assert problem.startswith(f"{ASSIGNMENT}/test_made_up: 1 hidden check(s) worth points")
    assert "['main_case']" in problem
    entries.append(_made_up("edge_cases", 0.5))
    assert paying_problems(ASSIGNMENT, entries, single_clause={}) == []


def test_a_single_clause_cell_needs_its_reason_and_leaves_the_list_once_split():
    allowed = {(ASSIGNMENT, "test_made_up"): "it judges one clause"}
    assert paying_problems(ASSIGNMENT, [_made_up("only")], single_clause=allowed) == []
    split = [_made_up("main_case"), _made_up("edge_cases", 0.5)]
    (problem,) = paying_problems(ASSIGNMENT, split, single_clause=allowed)
    assert "listed in lint.SINGLE_CLAUSE" in problem and "remove it" in problem
