"""A fast lint of what an author wrote: every graded test cell of ``solutions/`` and the hidden
checks registered for it must name each other, before a class is graded.

Without it a typo in a grade id goes unnoticed until grading: the solution notebook still "passes"
in-process, plain nbgrader fails every student with "no hidden checks registered", and a graded
cell without its hidden line earns nothing for anyone (``autograder.cells.lacks_hidden_line``:
nothing judges it, under the grading command and plain nbgrader alike).  The rules:

- every graded test cell holds its hidden line, ``run_hidden_checks("<assignment>", "<grade id>",
  globals())`` with its own assignment and grade id, in single or double quotes;
- every graded test cell has hidden checks registered (``checks_for``);
- every registered check names a graded test cell of the assignment's notebook;
- every cell has an id in the file (one without gets a new random id at each read, so nbgrader's
  student copy would differ at every ``generate_assignment``);
- the notebook's "What is graded" table lists its graded cells with their points
  (:mod:`autograder.authoring.graded_table`; ``python -m autograder lint --write-tables``
  rewrites it);
- every exercise heading states its points, and they are the sum of the graded cells it covers
  (:mod:`autograder.authoring.heading_points`).

The hidden line is read with the grading runner's own pattern (``autograder.cells.hidden_calls``),
so the lint and the grading command cannot disagree on what counts as one.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

import nbformat

from autograder.authoring.graded_table import rewrite_table, table_problems
from autograder.authoring.heading_points import heading_problems
from autograder.cells import hidden_calls, is_test_cell

ROOT = Path(__file__).resolve().parents[2]


def lint_notebook(
    assignment: str, notebook: nbformat.NotebookNode, registered: Mapping[str, Sequence[str]]
) -> list[str]:
    """The problems of one assignment: ``registered`` maps each grade id that has hidden checks
    to their names."""
    problems = []
    graded = []
    for index, cell in enumerate(notebook.cells):
        if not is_test_cell(cell):
            continue
        grade_id = cell.metadata["nbgrader"].get("grade_id", "")
        graded.append(grade_id)
        where = f"{assignment} cell {index} ({grade_id})"
        calls = hidden_calls(cell.source)
        if (assignment, grade_id) not in calls:
            problems.append(
                f"{where}: a graded test cell must end with its hidden line "
                f'run_hidden_checks("{assignment}", "{grade_id}", globals()); found '
                f"{calls or 'none'} (without it the cell earns nothing for anyone)"
            )
        if not registered.get(grade_id):
            problems.append(
                f"{where}: no hidden checks are registered for it: add "
                f'@check("{assignment}", "{grade_id}") to a check in autograder/checks/'
            )
    for grade_id, names in sorted(registered.items()):
        if grade_id not in graded:
            problems.append(
                f"{assignment}: checks {sorted(names)} are registered for {grade_id!r}, which is "
                f"no graded test cell of its notebook (graded cells: {graded})"
            )
    return problems


def registered_checks(assignment: str) -> dict[str, list[str]]:
    """grade id -> the names of its registered hidden checks."""
    from autograder.authoring.registry import checks_for

    by_cell: dict[str, list[str]] = {}
    for entry in checks_for(assignment):
        by_cell.setdefault(entry.grade_id, []).append(entry.name)
    return by_cell


def missing_ids(assignment: str, path: Path) -> list[str]:
    """The cells of the notebook file ``path`` that have no id of their own in the file."""
    cells = json.loads(path.read_text())["cells"]
    missing = [index for index, cell in enumerate(cells) if not cell.get("id")]
    if not missing:
        return []
    return [
        f"{assignment}: cells {missing} have no id in {path.name}, so each read gives them a new "
        "random one and nbgrader's student copy changes at every generate_assignment: give each "
        'a fixed "id" (letters, digits, - and _), as `python -m autograder new exercise` does'
    ]


def solution_notebooks(root: Path = ROOT) -> list[Path]:
    """``solutions/NN_name/NN_name.ipynb`` of every assignment, in order."""
    found = sorted((root / "solutions").glob("*/*.ipynb"))
    return [path for path in found if path.stem == path.parent.name]


def lint_course(root: Path = ROOT) -> list[str]:
    """The problems of every assignment of ``root/solutions``."""
    problems = []
    for path in solution_notebooks(root):
        assignment = path.parent.name
        try:
            registered = registered_checks(assignment)
        except ValueError as error:
            problems.append(f"{assignment}: {error}")
            registered = {}
        notebook = nbformat.read(path, as_version=4)
        problems += lint_notebook(assignment, notebook, registered)
        problems += missing_ids(assignment, path)
        problems += table_problems(assignment, notebook)
        problems += heading_problems(assignment, notebook)
    return problems


def write_tables(root: Path = ROOT) -> list[Path]:
    """Rewrite each solution notebook's "What is graded" table from its cells; those changed."""
    changed = []
    for path in solution_notebooks(root):
        notebook = nbformat.read(path, as_version=4)
        if rewrite_table(notebook):
            nbformat.write(notebook, path)
            changed.append(path)
    return changed
