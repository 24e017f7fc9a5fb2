"""``python -m autograder new``: the boilerplate of a new exercise or assignment, written so that
every piece names the others.

An exercise NAME of assignment A is five pieces:

- in ``solutions/A/A.ipynb``, a markdown cell that states it, an answer cell (an nbgrader
  solution cell, grade id NAME) and its graded test cell (grade id ``test_NAME``) ending with the
  hidden line ``run_hidden_checks("A", "test_NAME", globals())``, and a row of the notebook's
  "What is graded" table;
- in the assignment's checks (``autograder/checks/aA.py``, or a module NAME.py of the package
  ``aA/``), the exercise's ``ban`` and two ``@check`` stubs, its main case and its edge cases,
  each failing until it is written;
- in ``tests/mutants/mA.py``, a mutant stub whose patch fails loudly until it is written.

Every cell gets an id made from its grade id: a cell without one in the file gets a new random
id from nbformat at each read, so ``generate_assignment`` would never write the same student
notebook twice.  The notebook is then regenerated into ``notebooks/`` by nbgrader (which also
registers the assignment in the gradebook), and the Python files are formatted by ruff, as the
style test wants them.
"""

from __future__ import annotations

import ast
import keyword
import math
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import nbformat

from autograder.authoring.check_modules import CHECK_MODULE_NAME, check_modules
from autograder.authoring.graded_table import HEADER_ROWS, HEADING_TEXT, rewrite_table
from autograder.pipeline.course.course import NBGRADER, tool_env

EXERCISE_NAME = re.compile(r"[a-z][a-z0-9_]*")
CELL_ID_LENGTH = 64  # nbformat's limit


class ScaffoldError(ValueError):
    """What the author asked for cannot be written; the message says what was expected."""


@dataclass(frozen=True)
class Course:
    """The folders of a course checkout that a scaffold writes to."""

    root: Path

    @classmethod
    def at(cls, root: Path) -> Course:
        """The course whose checkout is ``root``, or a ScaffoldError saying what is missing."""
        course = cls(root.resolve())
        for folder in (course.solutions, course.checks, course.mutants):
            if not folder.is_dir():
                raise ScaffoldError(
                    f"{course.root} is not a course checkout: expected the folders solutions/, "
                    "autograder/checks/ and tests/mutants/ in it (use --course)"
                )
        return course

    @property
    def solutions(self) -> Path:
        return self.root / "solutions"

    @property
    def checks(self) -> Path:
        return self.root / "autograder" / "checks"

    @property
    def mutants(self) -> Path:
        return self.root / "tests" / "mutants"

    def notebook(self, assignment: str) -> Path:
        return self.solutions / assignment / f"{assignment}.ipynb"

    def assignments(self) -> list[str]:
        """The assignments of ``solutions/``, in order."""
        found = self.solutions.glob("*/*.ipynb")
        return sorted(path.stem for path in found if path.stem == path.parent.name)


def _assignment(course: Course, assignment: str) -> str:
    """``assignment``, if the course has it with its checks; else a ScaffoldError."""
    known = course.assignments()
    if assignment not in known:
        raise ScaffoldError(
            f"unknown assignment {assignment!r}: expected one of {known} (or make it first with "
            f"`python -m autograder new assignment {assignment}`)"
        )
    if assignment not in check_modules(course.checks):
        raise ScaffoldError(
            f"{assignment} has no checks: expected autograder/checks/a{assignment}.py or the "
            f"package autograder/checks/a{assignment}/"
        )
    return assignment


def _cell_id(assignment: str, suffix: str) -> str:
    """A stable cell id: the assignment and what the cell is."""
    cell_id = f"{assignment}-{suffix}"
    if len(cell_id) > CELL_ID_LENGTH:
        raise ScaffoldError(
            f"the cell id {cell_id!r} is longer than nbformat's {CELL_ID_LENGTH} characters: "
            "choose a shorter name"
        )
    return cell_id


def _nbgrader(grade_id: str, *, solution: bool, grade: bool, points: float = 0) -> dict:
    """nbgrader's metadata of a cell, as its Create Assignment toolbar writes it."""
    meta = {
        "grade": grade,
        "grade_id": grade_id,
        "locked": not solution,
        "schema_version": 3,
        "solution": solution,
        "task": False,
    }
    if grade:
        meta["points"] = int(points) if float(points).is_integer() else points
    return {"nbgrader": dict(sorted(meta.items()))}


def _todo_clause(name: str) -> str:
    """The statement's first words until it is written, which the check stubs keep."""
    return f"TODO: what `{name}` takes and returns"


def exercise_cells(assignment: str, name: str, points: float) -> list[nbformat.NotebookNode]:
    """The statement, answer and graded test cells of exercise ``name``."""
    test_id = f"test_{name}"
    shown = f"{points:g} point{'' if points == 1 else 's'}"
    statement = nbformat.v4.new_markdown_cell(
        f"### Exercise · `{name}` ({shown})\n\n"
        f"{_todo_clause(name)}, with the shapes of its inputs and output.",
        id=_cell_id(assignment, f"{name}-statement"),
    )
    answer = nbformat.v4.new_code_cell(
        f"def {name}(x):\n"
        f'    """TODO: one line on what {name} returns, with shapes: x (B, L) -> (B, L)."""\n'
        "    ### BEGIN SOLUTION\n"
        f'    raise NotImplementedError("TODO: the solution of {name}")\n'
        "    ### END SOLUTION",
        id=_cell_id(assignment, name),
        metadata=_nbgrader(name, solution=True, grade=False),
    )
    test = nbformat.v4.new_code_cell(
        "# Public checks: TODO what students can see, each assert saying what to fix.\n"
        f'assert callable({name}), "define {name} in the cell above, then run it"\n'
        f'print("✓ {name}: the public checks pass")\n'
        "### BEGIN HIDDEN TESTS\n"
        "from autograder import run_hidden_checks\n\n"
        f'run_hidden_checks("{assignment}", "{test_id}", globals())\n'
        "### END HIDDEN TESTS",
        id=_cell_id(assignment, test_id),
        metadata=_nbgrader(test_id, solution=False, grade=True, points=points),
    )
    return [statement, answer, test]


def _check_stub(assignment: str, name: str, where: str) -> str:
    """The exercise's ban and its two hidden checks, the main case and the edge cases (lint asks
    for two worth points per cell), each failing until it is written.  Each keeps the statement's
    TODO, so the lint asks for the clause it keeps once the statement is written."""
    keeps = f'keeps=("{_todo_clause(name)}",)'
    return (
        f"# TODO: the references `{name}` must not call, by the name students read, e.g.\n"
        '# {"F.softmax": F.softmax}: calling one earns nothing in any cell that uses the answer.\n'
        f'ban(ASSIGNMENT, "{name}", {{}})\n\n\n'
        f'@check(ASSIGNMENT, "test_{name}", {keeps})\n'
        f"def {name}_matches_the_oracle(ns: Namespace) -> None:\n"
        f'    """TODO: one property of {name}, on hidden inputs, against an oracle."""\n'
        f'    require(ns, "{name}")\n'
        f'    fail("this hidden check is a stub in {where}")\n\n\n'
        f'@check(ASSIGNMENT, "test_{name}", weight=EDGE_CASES, {keeps})\n'
        f"def {name}_at_its_edge_cases(ns: Namespace) -> None:\n"
        f'    """TODO: {name} at the edge cases its statement allows (a size of one, say)."""\n'
        f'    require(ns, "{name}")\n'
        f'    fail("this edge-case check is a stub in {where}")\n'
    )


def _mutant_stub(name: str) -> str:
    """A mutant of exercise ``name`` whose patch matches nothing until it is written."""
    return (
        "    Mutant(\n"
        f'        "{name}: TODO the mistake",\n'
        "        A,\n"
        f'        {{"{name}": Replace("TODO: text of the solution", "TODO: it, mistaken")}},\n'
        f'        {{"test_{name}": "TODO: a phrase its diagnosis must contain"}},\n'
        "    ),\n"
    )


def _assigned(tree: ast.Module) -> set[str]:
    """The names the module's top-level statements assign."""
    return {
        target.id
        for node in tree.body
        if isinstance(node, ast.Assign | ast.AnnAssign)
        for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
        if isinstance(target, ast.Name)
    }


def _imports_present(tree: ast.Module) -> set[str]:
    """The names bound by the module's top-level imports."""
    names = set()
    for node in tree.body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            names |= {alias.asname or alias.name.split(".")[0] for alias in node.names}
    return names


def _add_imports(source: str, wanted: dict[str, str]) -> str:
    """``source`` with ``from module import name`` added after its imports for each name it does
    not bind yet (``wanted``: name -> module); ruff sorts them afterwards."""
    tree = ast.parse(source)
    have = _imports_present(tree)
    missing = [
        f"from {module} import {name}\n" for name, module in wanted.items() if name not in have
    ]
    if not missing:
        return source
    imports = [n for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom)]
    lines = source.splitlines(keepends=True)
    at = imports[-1].end_lineno if imports else 0
    return "".join(lines[:at] + missing + lines[at:])


_CHECK_IMPORTS = {
    "ban": "autograder.authoring.reference_bans",
    "fail": "autograder.authoring.registry",
    "require": "autograder.authoring.requiring",
    "Namespace": "autograder.authoring.registry",
    "check": "autograder.authoring.registry",
    "EDGE_CASES": "autograder.authoring.registry",
}


def _checks_edits(course: Course, assignment: str, name: str) -> dict[Path, str]:
    """The assignment's checks with the stub of ``name`` added: path -> new text."""
    module = check_modules(course.checks)[assignment]
    package = course.checks / module
    if not package.is_dir():  # one module for the whole assignment: the stub goes at its end
        path = course.checks / f"{module}.py"
        source = _add_imports(path.read_text(), _CHECK_IMPORTS)
        if "ASSIGNMENT" not in _assigned(ast.parse(source)):
            raise ScaffoldError(f"{path} defines no ASSIGNMENT = {assignment!r}: add it first")
        where = f"autograder/checks/{module}.py"
        return {path: source.rstrip("\n") + "\n\n\n" + _check_stub(assignment, name, where)}
    path = package / f"{name}.py"
    if path.exists():
        raise ScaffoldError(f"{path} exists already: choose another exercise name")
    shared = package / "shared.py"
    constant = (
        f"from autograder.checks.{module}.shared import ASSIGNMENT\n"
        if shared.is_file() and "ASSIGNMENT" in shared.read_text()
        else f'ASSIGNMENT = "{assignment}"\n'
    )
    header = (
        f'"""Exercise `{name}` (test_{name}): TODO what its checks find."""\n\n'
        "from __future__ import annotations\n\n"
        "from autograder.authoring.reference_bans import ban\n"
        "from autograder.authoring.registry import EDGE_CASES, Namespace, check, fail\n"
        "from autograder.authoring.requiring import require\n"
    )
    where = f"autograder/checks/{module}/{name}.py"
    init = package / "__init__.py"
    return {
        path: header + constant + "\n" + _check_stub(assignment, name, where),
        init: _registered(init, name),
    }


def _registered(init: Path, name: str) -> str:
    """The package's ``__init__.py`` with ``name`` appended to its EXERCISES tuple (the order
    its checks register in)."""
    source = init.read_text()
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and _assigned(ast.Module([node], [])) == {"EXERCISES"}:
            names = ast.literal_eval(node.value)
            lines = source.splitlines(keepends=True)
            before = "".join(lines[: node.lineno - 1])
            after = "".join(lines[node.end_lineno :])
            listed = ", ".join(f'"{n}"' for n in (*names, name))
            comma = "," if not names else ""  # a tuple of one
            return f"{before}EXERCISES = ({listed}{comma})\n{after}"
    raise ScaffoldError(f"{init} has no EXERCISES = (...) tuple to add {name!r} to")


def _mutant_edit(course: Course, assignment: str, name: str) -> dict[Path, str]:
    """The assignment's mutants with the stub of ``name`` appended to WRONG: path -> new text."""
    path = course.mutants / f"m{assignment}.py"
    if not path.is_file():
        raise ScaffoldError(f"no mutation corpus for {assignment}: expected {path}")
    source = _add_imports(path.read_text(), {"Mutant": "tests.mutants", "Replace": "tests.mutants"})
    wrong = [
        node.value
        for node in ast.parse(source).body
        if isinstance(node, ast.Assign | ast.AnnAssign)
        and "WRONG" in _assigned(ast.Module([node], []))
        and isinstance(node.value, ast.List)
    ]
    if len(wrong) != 1:
        raise ScaffoldError(f"{path} has no WRONG = [...] list to add a mutant to")
    lines = source.splitlines(keepends=True)
    end = wrong[0].end_lineno - 1, wrong[0].end_col_offset - 1  # its closing bracket
    closing = lines[end[0]]
    head, tail = closing[: end[1]], closing[end[1] :]
    opening = "".join(lines[: end[0]]) + head
    separator = "" if opening.rstrip().endswith(("[", ",")) else ","
    new = opening.rstrip() + separator + "\n" + _mutant_stub(name) + tail
    return {path: new + "".join(lines[end[0] + 1 :])}


def _format(paths: list[Path]) -> None:
    """Sort the imports and format ``paths`` with ruff, as the style test checks them."""
    for args in (["check", "--select", "I", "--fix", "--quiet"], ["format", "--quiet"]):
        subprocess.run(
            [sys.executable, "-m", "ruff", *args, *map(str, paths)],
            check=True,
            capture_output=True,
        )


def _require_ruff() -> None:
    """Fail before writing anything when ruff, which formats what is written, is missing."""
    found = subprocess.run([sys.executable, "-m", "ruff", "--version"], capture_output=True)
    if found.returncode != 0:
        raise ScaffoldError(
            "ruff is not installed in this environment: `python -m pip install -r "
            "requirements.txt` installs it (the scaffold formats the files it writes)"
        )


def generate(course: Course, assignment: str) -> None:
    """Regenerate ``notebooks/<assignment>`` from the solution with nbgrader."""
    result = subprocess.run(
        [*NBGRADER, "generate_assignment", assignment, "--force"],
        cwd=course.root,
        env=tool_env(),
        capture_output=True,
        text=True,
    )
    if result.returncode != 0:
        raise ScaffoldError(
            f"nbgrader generate_assignment {assignment} failed:\n{result.stderr[-3000:]}"
        )


def new_exercise(
    root: Path, assignment: str, name: str, points: float = 2.0, regenerate: bool = True
) -> list[Path]:
    """Add exercise ``name`` to ``assignment`` of the course at ``root``; the files written."""
    course = Course.at(root)
    _assignment(course, assignment)
    if not EXERCISE_NAME.fullmatch(name) or keyword.iskeyword(name):
        raise ScaffoldError(
            f"expected an exercise name that is a lower-case Python name, such as row_softmax "
            f"(the function students write), got {name!r}"
        )
    hundredths = points * 100
    if not (math.isfinite(points) and points > 0 and abs(hundredths - round(hundredths)) < 1e-9):
        raise ScaffoldError(f"expected positive points, in hundredths at most, got {points!r}")
    path = course.notebook(assignment)
    notebook = nbformat.read(path, as_version=4)
    taken = {c.metadata.get("nbgrader", {}).get("grade_id") for c in notebook.cells}
    for grade_id in (name, f"test_{name}"):
        if grade_id in taken:
            raise ScaffoldError(
                f"{assignment} has a cell with the grade id {grade_id!r} already: choose another "
                "exercise name"
            )
    cells = exercise_cells(assignment, name, points)
    taken_ids = {c.get("id") for c in notebook.cells}
    clash = [c.id for c in cells if c.id in taken_ids]
    if clash:
        raise ScaffoldError(f"{assignment} has cells with the ids {clash} already")
    _require_ruff()
    notebook.cells.extend(cells)
    rewrite_table(notebook, {f"test_{name}": f"`{name}`"})
    nbformat.validate(notebook)
    edits = _checks_edits(course, assignment, name) | _mutant_edit(course, assignment, name)
    for edited, text in edits.items():  # nothing is written before every edit is known to apply
        edited.write_text(text)
    written = list(edits)
    _format(written)
    nbformat.write(notebook, path)
    if regenerate:
        generate(course, assignment)
    return [path, *written]


def assignment_notebook(assignment: str, metadata: dict) -> nbformat.NotebookNode:
    """A solution notebook with a title, an empty "What is graded" table and a setup cell."""
    number, _, words = assignment.partition("_")
    title = nbformat.v4.new_markdown_cell(
        f"# {number} · TODO the title of {words.replace('_', ' ')}\n\n"
        "TODO: what this notebook builds, and why.\n\n"
        "**Learning goals.** After this notebook you can\n\n- TODO\n\n"
        "**Estimated time:** TODO minutes.\n\n"
        f"{HEADING_TEXT}\n\n{HEADER_ROWS}\n\n"
        "Every autograded cell starts with public checks you can see; hidden checks with other "
        "sizes and seeds run when your notebook is graded.",
        id=_cell_id(assignment, "title"),
    )
    setup = nbformat.v4.new_code_cell(
        "# Setup (read-only): imports and seeds. Run this cell first.\n"
        "import torch\n\n"
        "torch.manual_seed(0)",
        id=_cell_id(assignment, "setup"),
        metadata=_nbgrader(f"cell-{assignment}-setup", solution=False, grade=False),
    )
    notebook = nbformat.v4.new_notebook(cells=[title, setup], metadata=metadata)
    nbformat.validate(notebook)
    return notebook


def new_assignment(root: Path, assignment: str, regenerate: bool = True) -> list[Path]:
    """Add an empty assignment to the course at ``root``; the files written."""
    course = Course.at(root)
    if not CHECK_MODULE_NAME.fullmatch(f"a{assignment}"):
        raise ScaffoldError(
            "expected an assignment name NN_name: two digits, an underscore, then a lower-case "
            f"Python name, such as 08_rotary_positions; got {assignment!r}"
        )
    known = course.assignments()
    number = assignment[:2]
    clash = [a for a in known if a[:2] == number] + [
        a for a in check_modules(course.checks) if a[:2] == number
    ]
    if clash:
        raise ScaffoldError(
            f"the number {number} is taken by {sorted(set(clash))}: an assignment's number says "
            "which reference answers its students may import, so each must be unique"
        )
    mutants = course.mutants / f"m{assignment}.py"
    package = course.checks / f"a{assignment}"
    for path in (course.solutions / assignment, package, mutants):
        if path.exists():
            raise ScaffoldError(f"{path} exists already")
    _require_ruff()
    metadata = (
        nbformat.read(course.notebook(known[-1]), as_version=4).metadata if known else {}
    )  # the kernel and language the other notebooks carry
    notebook = assignment_notebook(assignment, metadata)
    path = course.notebook(assignment)
    path.parent.mkdir(parents=True)
    nbformat.write(notebook, path)
    package.mkdir()
    (package / "__init__.py").write_text(
        f'"""Hidden checks for {assignment}, one module per exercise."""\n\n'
        "from importlib import import_module\n\n"
        "# In the notebook's order: checks register on import, and run in the order they\n"
        "# registered.\n"
        "EXERCISES = ()\n"
        "for exercise in EXERCISES:\n"
        '    import_module(f"{__name__}.{exercise}")\n'
    )
    (package / "shared.py").write_text(
        f'"""What the exercises of {assignment} share."""\n\nASSIGNMENT = "{assignment}"\n'
    )
    mutants.write_text(
        f'"""Mutants of {assignment}."""\n\n'
        "from tests.mutants import Mutant\n\n"
        f'A = "{assignment}"\n\n'
        "WRONG: list[Mutant] = []\n\n"
        "CORRECT: list[Mutant] = []\n"
    )
    written = [package / "__init__.py", package / "shared.py", mutants]
    _format(written)
    if regenerate:
        generate(course, assignment)
    return [path, *written]
