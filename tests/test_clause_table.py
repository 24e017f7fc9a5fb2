"""The clause table (autograder/authoring/clause_table.py): every hidden check keeps clauses of its
exercise's statement, quoted from what students read; the lint reports a check that keeps none, a
quote that the statement does not hold and a table in docs/authoring.md that differs from the
checks; and the generated table lists every registered check of the course once, in its cell."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from autograder.authoring import scaffold
from autograder.authoring.clause_table import (
    BEGIN,
    DOC,
    END,
    Assignment,
    clause_problems,
    clause_table,
    doc_problems,
    rewrite_doc,
)
from autograder.authoring.lint import course_assignments
from autograder.authoring.registry import Check, check
from autograder.authoring.unconfirmed_causes import module_texts
from autograder.cells import is_test_cell

ROOT = Path(__file__).resolve().parents[1]
TINY = "09_tiny"


@pytest.fixture(scope="module")
def course() -> list[Assignment]:
    """Every assignment of the course with its solution notebook and registered checks."""
    assignments, problems = course_assignments()
    assert problems == []
    return assignments


def _statement() -> nbformat.NotebookNode:
    """A notebook of one exercise: its statement, its answer cell (a comment over two lines, a
    solution) and its graded test cell, then demo code."""
    notebook = new_notebook()
    notebook.cells = [
        new_markdown_cell("### Exercise · `halve`\n\nReturn **half** of `x`,\nin `x`'s dtype."),
        new_code_cell(
            "def halve(x):\n"
            "    # a clause that runs\n"
            "    # over two comment lines\n"
            "    ### BEGIN SOLUTION\n"
            "    return x / 2  # the secret answer\n"
            "    ### END SOLUTION",
            metadata={"nbgrader": {"grade_id": "halve", "solution": True, "grade": False}},
        ),
        new_code_cell(
            'assert halve(2) == 1, "a public message"\n'
            "### BEGIN HIDDEN TESTS\n"
            f'run_hidden_checks("{TINY}", "test_halve", globals())\n'
            "### END HIDDEN TESTS",
            metadata={"nbgrader": {"grade_id": "test_halve", "grade": True, "points": 2}},
        ),
        new_code_cell('print("demo code is no statement")'),
    ]
    return notebook


def _check(*keeps: str, name: str = "halves", gate: bool = False) -> Check:
    return Check(TINY, "test_halve", name, lambda ns: None, 0.0 if gate else 1.0, gate, keeps)


@pytest.mark.parametrize("gate", [False, True])
def test_a_check_that_keeps_no_clause_is_reported(gate: bool):
    (problem,) = clause_problems(TINY, _statement(), [_check(gate=gate)])
    assert problem.startswith(f"{TINY}/test_halve: check 'halves' keeps no clause: expected ")
    assert "keeps=(quote, ...)" in problem


@pytest.mark.parametrize(
    "quote",
    [
        "Return half of x, in x's dtype.",  # no marks, and over the line break
        "Return **half** of `x`, in `x`'s dtype.",  # the marks as written
        "Exercise · halve",  # a heading, without its '#'
        "a clause that runs over two comment lines",  # the answer cell's comment, unbroken
        "def halve(x):",
    ],
)
def test_a_quote_of_what_students_read_is_found(quote: str):
    assert clause_problems(TINY, _statement(), [_check(quote)]) == []


@pytest.mark.parametrize(
    "quote",
    [
        "return x / 2",  # inside the solution
        "the secret answer",
        "run_hidden_checks",  # the hidden tests
        "a public message",  # a public check: no statement
        "demo code is no statement",
        "return half of x",  # case counts
        "Return half of x, in the dtype of x.",  # a paraphrase
    ],
)
def test_a_quote_that_the_statement_does_not_hold_is_reported(quote: str):
    (problem,) = clause_problems(TINY, _statement(), [_check("Return half of x", quote)])
    assert problem.startswith(
        f"{TINY}/test_halve: check 'halves' keeps {quote!r}, which the statement does not hold: "
        f"expected words of solutions/{TINY}'s markdown or answer cells"
    )


def test_keeps_takes_a_tuple_of_quotes():
    # A bare string would be read as one quote per letter, each found somewhere.
    with pytest.raises(ValueError, match="keeps takes a tuple of quotes, got 'Return half'"):
        check(TINY, "test_halve", keeps="Return half")  # type: ignore[arg-type]


def test_the_cause_rule_reads_no_quote_of_the_statement():
    # "make sure" is a cause word in a message, and the statement's own words where quoted.
    source = (
        '@check(A, "test_halve", keeps=("make sure x is a tensor, try torch.as_tensor",))\n'
        "def halves(ns):\n"
        '    fail("make sure it halves")\n'
    )
    assert [text.text for text in module_texts(source, "a09_tiny.py")] == ["make sure it halves"]


def test_a_quote_named_once_for_several_checks_is_the_statement_s_words_too():
    # A clause several checks keep lives in one constant; one that a message also uses is read.
    source = (
        'TENSOR = "make sure x is a tensor, try torch.as_tensor"\n'
        'HINT = "make sure it halves"\n'
        '@check(A, "test_halve", keeps=(TENSOR,))\n'
        '@check(A, "test_double", keeps=(TENSOR, HINT))\n'
        "def halves(ns):\n"
        "    fail(HINT)\n"
    )
    assert [text.text for text in module_texts(source, "a09_tiny.py")] == ["make sure it halves"]


def _table(*checks: Check) -> str:
    return clause_table([(TINY, _statement(), list(checks))])


def _rows(table: str) -> list[str]:
    """The rows of the generated tables in ``table``, headers and rules left out."""
    return [line for line in table.splitlines() if re.match(r"\| (`| \|)", line)]


def _cells(row: str) -> list[str]:
    """A table row's cells; a '|' escaped in a quote is no border."""
    return [cell.strip() for cell in re.split(r"(?<!\\)\|", row)[1:-1]]


def test_a_doc_table_that_differs_from_the_checks_is_reported_and_rewritten(tmp_path: Path):
    page = tmp_path / DOC
    page.parent.mkdir()
    page.write_text(f"# Authoring\n\n{BEGIN}\n\n| an old row |\n\n{END}\n\nAfter the table.\n")
    table = _table(_check("Return half of x"), _check("in x's dtype", name="keeps_the_dtype"))
    (problem,) = doc_problems(tmp_path, table)
    assert problem.startswith(f"{DOC}: line 3 of the clause table reads '| an old row |', but ")
    assert problem.endswith("`python -m autograder lint --write-tables` rewrites it")
    assert rewrite_doc(tmp_path, table)
    assert doc_problems(tmp_path, table) == []
    assert page.read_text() == f"# Authoring\n\n{table}\n\nAfter the table.\n"
    assert not rewrite_doc(tmp_path, table)


def test_a_page_without_the_table_is_reported(tmp_path: Path):
    (tmp_path / DOC).parent.mkdir()
    (tmp_path / DOC).write_text("# Authoring\n")
    (problem,) = doc_problems(tmp_path, _table(_check("Return half of x")))
    assert problem == (
        f"{DOC}: no clause table: expected the lines {BEGIN!r} and {END!r}; then "
        "`python -m autograder lint --write-tables` rewrites it"
    )
    assert doc_problems(tmp_path / "a copy without docs", "any table") == []


def test_checks_that_keep_the_same_clauses_share_a_row():
    table = _table(
        _check("Return half of x", name="halves"),
        _check("in x's dtype", name="keeps_the_dtype", gate=True),
        _check("Return half of x", name="halves_at_size_one"),
    )
    assert _rows(table) == [
        "| `test_halve` (2 points) | “Return half of x” | `halves`, `halves_at_size_one` | 1, 1 |",
        "|  | “in x's dtype” | `keeps_the_dtype` | gate |",
    ]


def test_a_scaffolded_check_keeps_the_statement_until_it_is_written():
    notebook = new_notebook()
    notebook.cells = scaffold.exercise_cells(TINY, "row_max", 2.0)
    stub = ast.parse(scaffold._check_stub(TINY, "row_max", "a09_tiny.py"))
    checks = [
        _check(*ast.literal_eval(keyword.value), name=node.name)
        for node in stub.body
        if isinstance(node, ast.FunctionDef)
        for decorator in node.decorator_list
        for keyword in decorator.keywords
        if keyword.arg == "keeps"
    ]
    assert len(checks) == 2
    assert clause_problems(TINY, notebook, checks) == []
    notebook.cells[0].source = "### Exercise · `row_max`\n\nThe maximum of each row of `x`."
    assert len(clause_problems(TINY, notebook, checks)) == 2  # the statement is written


def test_the_course_keeps_a_clause_in_every_check_and_its_table_in_the_docs(course):
    assert [p for assignment in course for p in clause_problems(*assignment)] == []
    assert doc_problems(ROOT, clause_table(course)) == []


def test_the_table_lists_every_registered_check_once_in_its_cell(course):
    listed, weights = [], {}
    assignment = grade_id = None
    for line in clause_table(course).splitlines():
        if heading := re.fullmatch(r"\*\*(\w+)\*\*", line):
            assignment = heading[1]
        elif _rows(line):
            cell, _, names, weight = _cells(line)
            grade_id = re.match(r"`(\w+)`", cell)[1] if cell else grade_id
            named = re.findall(r"`(\w+)`", names)
            listed += [(assignment, grade_id, name) for name in named]
            weights.update(zip(named, weight.split(", "), strict=True))
    registered = [(a, entry.grade_id, entry.name) for a, _, entries in course for entry in entries]
    assert sorted(listed) == sorted(registered)
    assert len(set(listed)) == len(listed) == 156
    for a, notebook, entries in course:
        order = [c.metadata.nbgrader.grade_id for c in notebook.cells if is_test_cell(c)]
        cells = [grade_id for name, grade_id, _ in listed if name == a]
        assert sorted(set(cells), key=cells.index) == order
        for entry in entries:
            assert weights[entry.name] == ("gate" if entry.gate else f"{entry.weight:g}")
