"""`python -m autograder new exercise` and `new assignment` write pieces that name each other, in
a copy of two assignments (one whose checks are a module, one whose checks are a package), and
refuse bad input with a message that says what was expected.  Nothing here runs nbgrader or a
kernel; tests/test_scaffold_grading.py grades a scaffolded exercise end to end."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from autograder.authoring import scaffold
from autograder.authoring.check_modules import check_modules
from autograder.authoring.graded_table import table_problems
from autograder.authoring.heading_points import heading_problems
from autograder.authoring.lint import hidden_calls, missing_ids
from autograder.cells import is_test_cell
from autograder.pipeline import cli

ROOT = Path(__file__).resolve().parents[1]
MODULE, PACKAGE = "01_attention", "02_multi_head"  # checks in a module, checks in a package


@pytest.fixture
def course(tmp_path: Path) -> Path:
    """A course checkout with the solutions of 01 and 02 only; ruff reads the project's
    configuration there."""
    for assignment in (MODULE, PACKAGE):
        shutil.copytree(ROOT / "solutions" / assignment, tmp_path / "solutions" / assignment)
        shutil.copy(ROOT / "tests" / "mutants" / f"m{assignment}.py", _mutants(tmp_path))
    caches = shutil.ignore_patterns("__pycache__")
    for package in ("attention_lab", "autograder"):  # ruff sorts their imports as first-party
        shutil.copytree(ROOT / package, tmp_path / package, ignore=caches)
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    return tmp_path


def _mutants(root: Path) -> Path:
    folder = root / "tests" / "mutants"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _notebook(root: Path, assignment: str) -> nbformat.NotebookNode:
    return nbformat.read(root / "solutions" / assignment / f"{assignment}.ipynb", as_version=4)


def _checks_of(path: Path) -> dict[str, str]:
    """check function -> the grade id its @check names, read from the source."""
    found = {}
    for node in ast.parse(path.read_text()).body:
        for decorator in getattr(node, "decorator_list", []):
            if isinstance(decorator, ast.Call) and getattr(decorator.func, "id", "") == "check":
                found[node.name] = decorator.args[1].value
    return found


def _ruff(root: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "ruff", *args, "--no-cache", "."],
        cwd=root,
        capture_output=True,
        text=True,
    )


@pytest.mark.slow  # half a second or more in the fast tier (tests/tiers.py)
@pytest.mark.parametrize("assignment", [MODULE, PACKAGE])
def test_a_new_exercise_names_itself_everywhere(course: Path, assignment: str):
    before = _notebook(course, assignment)
    scaffold.new_exercise(course, assignment, "row_max", points=1.5, regenerate=False)
    notebook = _notebook(course, assignment)
    statement, answer, test = notebook.cells[len(before.cells) :]
    assert [c.id for c in (statement, answer, test)] == [
        f"{assignment}-row_max-statement",
        f"{assignment}-row_max",
        f"{assignment}-test_row_max",
    ]
    assert answer.metadata.nbgrader == {
        "grade": False,
        "grade_id": "row_max",
        "locked": False,
        "schema_version": 3,
        "solution": True,
        "task": False,
    }
    assert is_test_cell(test) and test.metadata.nbgrader.points == 1.5
    assert test.metadata.nbgrader.locked is True
    assert hidden_calls(test.source) == [(assignment, "test_row_max")]
    assert "### BEGIN SOLUTION" in answer.source and "### END SOLUTION" in answer.source
    assert "### BEGIN HIDDEN TESTS" in test.source and "### END HIDDEN TESTS" in test.source
    nbformat.validate(notebook)
    path = course / "solutions" / assignment / f"{assignment}.ipynb"
    assert missing_ids(assignment, path) == []
    assert table_problems(assignment, notebook) == []
    assert heading_problems(assignment, notebook) == []
    assert "| `row_max` | `test_row_max` | 1.5 | auto |" in notebook.cells[0].source

    module = check_modules(course / "autograder" / "checks")[assignment]
    checks = course / "autograder" / "checks" / module
    stub = checks / "row_max.py" if checks.is_dir() else checks.with_suffix(".py")
    assert _checks_of(stub)["row_max_matches_the_oracle"] == "test_row_max"
    assert 'ban(ASSIGNMENT, "row_max", {})' in stub.read_text()
    if checks.is_dir():
        init = ast.parse((checks / "__init__.py").read_text())
        (exercises,) = [n.value for n in init.body if isinstance(n, ast.Assign)]
        assert ast.literal_eval(exercises)[-1] == "row_max"
    mutants = (course / "tests" / "mutants" / f"m{assignment}.py").read_text()
    assert '{"row_max": Replace("TODO: text of the solution"' in mutants
    assert '{"test_row_max": "TODO: a phrase its diagnosis must contain"}' in mutants
    assert _ruff(course, "check").returncode == 0, _ruff(course, "check").stdout
    assert _ruff(course, "format", "--check").returncode == 0, _ruff(course, "format", "--diff")


@pytest.mark.slow  # half a second or more in the fast tier (tests/tiers.py)
def test_a_new_assignment_is_a_course_of_its_own(course: Path):
    scaffold.new_assignment(course, "08_rotary_positions", regenerate=False)
    assert check_modules(course / "autograder" / "checks")["08_rotary_positions"] == (
        "a08_rotary_positions"
    )
    notebook = _notebook(course, "08_rotary_positions")
    assert notebook.metadata == _notebook(course, PACKAGE).metadata
    assert table_problems("08_rotary_positions", notebook) == []
    raw = course / "solutions" / "08_rotary_positions" / "08_rotary_positions.ipynb"
    assert missing_ids("08_rotary_positions", raw) == []
    scaffold.new_exercise(course, "08_rotary_positions", "rotate", regenerate=False)
    notebook = _notebook(course, "08_rotary_positions")
    assert table_problems("08_rotary_positions", notebook) == []
    assert "(2 points in all)" in notebook.cells[0].source
    stub = course / "autograder" / "checks" / "a08_rotary_positions" / "rotate.py"
    assert "from autograder.checks.a08_rotary_positions.shared import ASSIGNMENT" in (
        stub.read_text()
    )
    assert _ruff(course, "check").returncode == 0, _ruff(course, "check").stdout
    assert _ruff(course, "format", "--check").returncode == 0, _ruff(course, "format", "--diff")


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["exercise", "09_nothing", "row_max"], "unknown assignment '09_nothing': expected one of"),
        (["exercise", MODULE, "attention"], "has a cell with the grade id 'attention' already"),
        (["exercise", MODULE, "causal_weights"], "grade id 'test_causal_weights' already"),
        (["exercise", MODULE, "Row-Max"], "expected an exercise name that is a lower-case Python"),
        (["exercise", MODULE, "lambda"], "expected an exercise name that is a lower-case Python"),
        (["exercise", MODULE, "row_max", "--points", "0"], "expected positive points"),
        (["exercise", MODULE, "row_max", "--points", "0.005"], "in hundredths at most"),
        (["exercise", MODULE, "row_max", "--points", "inf"], "expected positive points"),
        (["exercise", MODULE, "x" * 60], "longer than nbformat's 64 characters"),
        (["exercise", PACKAGE, "shared"], "a02_multi_head/shared.py exists already"),
        (["assignment", "8_rotary"], "expected an assignment name NN_name"),
        (["assignment", "08-rotary"], "expected an assignment name NN_name"),
        (["assignment", "02_again"], "the number 02 is taken by ['02_multi_head']"),
    ],
)
def test_bad_input_is_refused_before_anything_is_written(
    course: Path, argv: list[str], expected: str, capsys: pytest.CaptureFixture
):
    snapshot = {p: p.read_bytes() for p in course.rglob("*") if p.is_file()}
    assert cli.main(["new", *argv, "--course", str(course), "--no-generate"]) == 2
    assert expected in capsys.readouterr().err
    assert {p: p.read_bytes() for p in course.rglob("*") if p.is_file()} == snapshot


def test_an_assignment_without_mutants_is_refused_before_anything_is_written(course: Path):
    (course / "tests" / "mutants" / f"m{PACKAGE}.py").unlink()
    snapshot = {p: p.read_bytes() for p in course.rglob("*") if p.is_file()}
    with pytest.raises(scaffold.ScaffoldError, match=f"no mutation corpus for {PACKAGE}"):
        scaffold.new_exercise(course, PACKAGE, "row_max", regenerate=False)
    assert {p: p.read_bytes() for p in course.rglob("*") if p.is_file()} == snapshot


def test_a_folder_that_is_no_course_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture):
    assert cli.main(["new", "exercise", MODULE, "row_max", "--course", str(tmp_path)]) == 2
    assert "is not a course checkout: expected the folders solutions/" in capsys.readouterr().err


def test_check_modules_are_found_by_their_folder_name(tmp_path: Path):
    (tmp_path / "a09_extra.py").write_text("")
    (tmp_path / "a10_package").mkdir()
    (tmp_path / "a10_package" / "__init__.py").write_text("")
    (tmp_path / "a11_no_init").mkdir()  # not a package
    (tmp_path / "shared.py").write_text("")
    (tmp_path / "a12_notes.txt").write_text("")
    assert check_modules(tmp_path) == {"09_extra": "a09_extra", "10_package": "a10_package"}


def test_every_assignment_of_the_course_has_its_checks_found():
    solutions = sorted(p.parent.name for p in (ROOT / "solutions").glob("*/*.ipynb"))
    assert list(check_modules()) == solutions


def test_the_lint_refuses_a_course_whose_checks_this_python_does_not_import(
    course: Path, capsys: pytest.CaptureFixture
):
    assert cli.main(["lint", "--course", str(course)]) == 2
    assert f"so its hidden checks are not those of {course}" in capsys.readouterr().err
