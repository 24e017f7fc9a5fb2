"""Feedback keeps public checks and results but drops hidden-test source and tracebacks."""

from nbformat.v4 import new_code_cell, new_output

from autograder.pipeline.feedback.feedback import PLACEHOLDER, redact_cell, redact_source

CELL = """assert f(1) == 2, "public check"
### BEGIN HIDDEN TESTS
from autograder import run_hidden_checks
run_hidden_checks("01_attention", "test_x", globals())
### END HIDDEN TESTS
print("after")"""


def test_hidden_region_becomes_one_placeholder_line():
    source, found = redact_source(CELL)
    assert found
    assert source.splitlines() == [
        'assert f(1) == 2, "public check"',
        PLACEHOLDER,
        'print("after")',
    ]


def test_unterminated_region_hides_everything_after_it():
    source, found = redact_source("x = 1\n### BEGIN HIDDEN TESTS\nsecret()\nmore_secret()")
    assert found and "secret" not in source


def test_cell_without_hidden_tests_is_untouched():
    cell = new_code_cell("x = 1")
    cell.outputs = [new_output("error", ename="ValueError", evalue="bad", traceback=["a", "b"])]
    redact_cell(cell)
    assert cell.source == "x = 1" and cell.outputs[0].traceback == ["a", "b"]


def test_tracebacks_of_hidden_cells_keep_only_name_and_message():
    cell = new_code_cell(CELL)
    trace = ['File "autograder/checks/a01_attention.py", line 9', "    secret_line()"]
    cell.outputs = [
        new_output("error", ename="CheckFailed", evalue="[rows] over keys", traceback=trace)
    ]
    redact_cell(cell)
    assert cell.outputs[0].traceback == ["CheckFailed: [rows] over keys"]
    assert "run_hidden_checks" not in cell.source


def test_a_region_nbgrader_hides_is_redacted_however_its_marker_line_is_written():
    # nbgrader's ClearHiddenTests hides from "BEGIN HIDDEN TESTS" anywhere in a line: so does
    # the feedback (one parser, autograder/cells.py), not only after "### ".
    source, found = redact_source(
        "x = 1\n    # BEGIN HIDDEN TESTS\n    secret()\n# END HIDDEN TESTS"
    )
    assert found and "secret" not in source
    assert source.splitlines() == ["x = 1", "    " + PLACEHOLDER]
