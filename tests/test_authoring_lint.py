"""The authoring lint (autograder/authoring/lint.py) passes on the course, and each of its rules
catches the mistake it is for, planted in a copy of a real solution notebook: the hidden line,
the registered checks, the "What is graded" table, the cells' ids and the checks worth points."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest

from autograder.authoring.cause_words import cause_words
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
from autograder.authoring.unconfirmed_causes import (
    cause_problems,
    mistake_names,
    module_texts,
    notebook_texts,
    unguarded_mistakes,
)
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


@pytest.mark.slow  # half a second or more in the fast tier (tests/tiers.py)
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
        f"{ASSIGNMENT}: the table's heading says 21 points in all, the graded cells hold 22; "
        "`python -m autograder lint --write-tables` rewrites it from the cells",
    ]
    assert rewrite_table(notebook)
    assert table_problems(ASSIGNMENT, notebook) == []
    assert f"| NumPy attention | `{GRADE_ID}` | 3 | auto |" in notebook.cells[0].source
    assert "(22 points in all)" in notebook.cells[0].source
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


# The cause rule (issue 40): no text that reaches a student names an unconfirmed cause.

MADE_UP_CHECKS = '''
"""A made-up check module: its docstrings may say anything, use dim=-1."""
from autograder.authoring.diagnosis import diagnose
from autograder.authoring.mistakes import catalogue
from autograder.authoring.registry import fail

MADE_UP = catalogue("00_made_up", "attention", {"axis": {
    "over_queries": "rows sum to 1 over queries: use dim=-1"}})


def judge(weights, expected, over_queries, order="count, alphabetical"):
    """Did you read this? Docstrings never reach a student."""
    if order == "count, alphabetical":
        pass
    diagnose(weights, expected, {MADE_UP["over_queries"]: over_queries},
             otherwise=f"weights differ from softmax(q k^T / sqrt(d_k)) on {weights.shape}")
    fail(f"expected shape (2, 3), got {tuple(weights.shape)}")
'''


def _made_up_problems(source: str) -> list[str]:
    return cause_problems(module_texts(source, "made_up.py"), {})


def test_a_check_module_that_only_observes_and_names_catalogued_mistakes_passes():
    assert _made_up_problems(MADE_UP_CHECKS) == []


@pytest.mark.parametrize(
    "line",
    [
        'fail("rows do not sum to 1: is your softmax over dim=-1?")',
        'fail(f"expected 3 maps, got {n}: did you forget the factor 1/2?")',
        'diagnose(a, b, {}, "differs from the reference: use key.shape[1]")',
        'diagnose(a, b, {}, otherwise="differs; check the padding and the positions")',
        'HINT = "the gradient doubled: call optimizer.zero_grad() before backward()"',
        'fail(f"{seen}; transpose(1, 2) before flattening")',
    ],
)
def test_a_check_with_a_cause_hint_is_caught(line: str):
    (problem,) = _made_up_problems(f"{MADE_UP_CHECKS}\n{line}\n")
    assert problem.startswith("made_up.py:") and "names a cause" in problem


@pytest.mark.parametrize(
    "message",
    [
        "expected (B, d_model) = (2, 3), got (3, 2)",
        "the statement asks for shape (B, L, d_model); got (B, d_model, L)",
        "chunk_size=0 should raise ValueError",
        "the block needs a submodule named 'norm1' (see the table above)",
        "rows must sum to 1 over the keys (the last dim); yours sum to 1 over the queries",
        "a fully masked row must have a zero output (zero weights @ v)",
    ],
)
def test_an_observation_is_no_cause(message: str):
    assert cause_words(message) == []


PUBLIC_CELL = """_w = attention(_q, _k, _v)
check_close(_w.sum(-1), torch.ones(5), "rows must sum to 1 over the keys")
assert _w.shape == (5, 7), f"expected (5, 7), got {tuple(_w.shape)}"
{extra}
all_passed("attention")
### BEGIN HIDDEN TESTS
assert True, "hidden lines are not public checks: use anything"
### END HIDDEN TESTS
"""


@pytest.mark.parametrize(
    "extra",
    [
        'check(_ok, "swapping two words changed nothing: did you add the positions?")',
        'check_close(_a, _b, message="differs: check the scale (d_k = Q.shape[-1])")',
        'assert _ok, "weights must be (5, 7): use k.transpose(-2, -1)"',
        'raise AssertionError("the sum overflowed: subtract the maximum before exp")',
    ],
)
def test_a_public_check_with_a_cause_hint_is_caught(extra: str):
    notebook = _solution()
    cell = _test_cell(notebook)

    def problems() -> list[str]:
        texts = notebook_texts(ASSIGNMENT, notebook)
        return cause_problems([t for t in texts if t.where.endswith(GRADE_ID)], {})

    cell.source = PUBLIC_CELL.replace("{extra}", "")
    assert problems() == []
    cell.source = PUBLIC_CELL.replace("{extra}", extra)
    (problem,) = problems()
    assert problem.startswith(f"{ASSIGNMENT}/{GRADE_ID}: ")


def test_the_lists_of_exceptions_hold_only_what_is_needed():
    hinted = MADE_UP_CHECKS + '\nfail("differs: use dim=-1")\n'
    reason = {("made_up.py", "differs: use"): "confirmed on the spot by the line above"}
    assert cause_problems(module_texts(hinted, "made_up.py"), reason) == []
    (stale,) = cause_problems(module_texts(MADE_UP_CHECKS, "made_up.py"), reason)
    assert "listed in DELIBERATE" in stale
    (unlisted,) = cause_problems(module_texts(hinted, "made_up.py"), {})
    assert "'use'" in unlisted


@pytest.mark.parametrize(
    ("line", "told"),
    [
        ('    fail(MADE_UP["over_queries"])', "fail() names a catalogued mistake unconditionally"),
        ('    fail(f"{AXIS} (rows of {weights.shape})")', "unconditionally"),
        ("    diagnose(weights, expected, {}, otherwise=str(AXIS))", "diagnose's otherwise"),
        ("    if weights.sum(-2).allclose(expected.sum(-2)):\n        fail(AXIS)", None),
        ("    try:\n        weights.sum()\n    except TypeError:\n        fail(AXIS)", None),
    ],
)
def test_a_catalogued_mistake_is_named_only_under_a_confirmer(line: str, told: str | None):
    named = f"def named(weights, expected):\n{line}\n"
    source = f'{MADE_UP_CHECKS}\nAXIS = MADE_UP["over_queries"]\n\n\n{named}'
    problems = unguarded_mistakes(source, "made_up.py", mistake_names([source]))
    assert [told in p for p in problems] == ([True] if told else [])
