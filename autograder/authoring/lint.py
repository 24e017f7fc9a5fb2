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
  (:mod:`autograder.authoring.heading_points`);
- every graded cell has at least two hidden checks worth points (gates aside), so that one edge
  case never costs the whole cell; a cell that judges a single clause is listed in
  :data:`SINGLE_CLAUSE` with the reason;
- every hidden check keeps a clause of its exercise's statement, quoted from what students
  read, and docs/authoring.md's clause table is the one the checks make
  (:mod:`autograder.authoring.clause_table`; ``--write-tables`` rewrites it too);
- no text that reaches a student names a cause without a confirmer: the strings of the hidden
  check modules (but docstrings and the messages of catalogued mistakes) and the messages of the
  notebooks' public checks say what was observed (:mod:`autograder.authoring.unconfirmed_causes`;
  a deliberate exception is listed there, in ``DELIBERATE``, with its reason), and a catalogued
  mistake is printed only under a condition or through diagnose's mapping.

The hidden line is read with the grading runner's own pattern (``autograder.cells.hidden_calls``),
so the lint and the grading command cannot disagree on what counts as one.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import nbformat

from autograder.authoring.clause_table import (
    DOC,
    Assignment,
    clause_problems,
    clause_table,
    doc_problems,
    rewrite_doc,
)
from autograder.authoring.graded_table import rewrite_table, table_problems
from autograder.authoring.heading_points import heading_problems
from autograder.authoring.unconfirmed_causes import (
    cause_problems,
    course_texts,
    course_unguarded_mistakes,
)
from autograder.cells import hidden_calls, is_test_cell

if TYPE_CHECKING:
    from autograder.authoring.registry import Check

ROOT = Path(__file__).resolve().parents[2]

# (assignment, grade id) -> why the cell has a single check worth points: it judges one clause
# of its statement, which no second check could weigh apart without judging the same thing twice.
SINGLE_CLAUSE: dict[tuple[str, str], str] = {
    # Section 8 of the notebook grades each held-out cell by one margin against the baseline.
    ("05_sentiment", "test_heldout_contrast"): "one stated clause: contrast accuracy at least the "
    "baseline's + 0.15",
    ("05_sentiment", "test_heldout_accuracy"): "one stated clause: overall accuracy at least the "
    "baseline's - 0.02",
    # Its other stated clause, causality, is a gate: a model that peeks earns nothing for its loss.
    ("06_char_lm", "test_trained_loss"): "one clause worth points: held-out loss below 0.6 ln V",
}


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


def paying_problems(
    assignment: str,
    entries: Iterable[Check],
    single_clause: Mapping[tuple[str, str], str] = SINGLE_CLAUSE,
) -> list[str]:
    """The graded cells of ``entries`` (one assignment's checks) with fewer than two checks worth
    points, unless ``single_clause`` says why, and the cells it lists that no longer need it."""
    paying: dict[str, list[str]] = {}
    for entry in entries:
        names = paying.setdefault(entry.grade_id, [])
        if not entry.gate:
            names.append(entry.name)
    problems = []
    for grade_id, names in paying.items():
        allowed = (assignment, grade_id) in single_clause
        if len(names) < 2 and not allowed:
            problems.append(
                f"{assignment}/{grade_id}: {len(names)} hidden check(s) worth points "
                f"({names}); give it at least two (the main case and its edge cases, each "
                "weighted) so that one edge case never costs the whole cell, or list it in "
                "lint.SINGLE_CLAUSE with the reason it judges one clause"
            )
        elif len(names) >= 2 and allowed:
            problems.append(
                f"{assignment}/{grade_id}: listed in lint.SINGLE_CLAUSE but it has "
                f"{len(names)} hidden checks worth points ({names}): remove it from the list"
            )
    return problems


def registered_checks(assignment: str) -> dict[str, list[str]]:
    """grade id -> the names of its registered hidden checks."""
    from autograder.authoring.registry import checks_for

    return names_by_cell(checks_for(assignment))


def names_by_cell(entries: Iterable[Check]) -> dict[str, list[str]]:
    """grade id -> the names of the checks of ``entries`` registered for it."""
    by_cell: dict[str, list[str]] = {}
    for entry in entries:
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


def course_assignments(root: Path = ROOT) -> tuple[list[Assignment], list[str]]:
    """Every assignment of ``root/solutions`` with its solution notebook and hidden checks, and
    the problems of those whose checks cannot be imported (listed with none)."""
    from autograder.authoring.registry import checks_for

    found, problems = [], []
    for path in solution_notebooks(root):
        assignment = path.parent.name
        try:
            entries = checks_for(assignment)
        except ValueError as error:
            problems.append(f"{assignment}: {error}")
            entries = []
        found.append((assignment, nbformat.read(path, as_version=4), entries))
    return found, problems


def lint_course(root: Path = ROOT) -> list[str]:
    """The problems of every assignment of ``root/solutions``."""
    assignments, problems = course_assignments(root)
    for assignment, notebook, entries in assignments:
        registered = names_by_cell(entries)
        problems += paying_problems(assignment, entries)
        problems += lint_notebook(assignment, notebook, registered)
        problems += missing_ids(assignment, root / "solutions" / assignment / f"{assignment}.ipynb")
        problems += table_problems(assignment, notebook)
        problems += heading_problems(assignment, notebook)
        problems += clause_problems(assignment, notebook, entries)
    problems += doc_problems(root, clause_table(assignments))
    problems += cause_problems(course_texts(root, solution_notebooks(root)))
    return problems + course_unguarded_mistakes(root)


def write_tables(root: Path = ROOT) -> list[Path]:
    """Rewrite each solution notebook's "What is graded" table from its cells, and the clause
    table of docs/authoring.md (where the course has the page) from the checks; those changed."""
    changed = []
    for path in solution_notebooks(root):
        notebook = nbformat.read(path, as_version=4)
        if rewrite_table(notebook):
            nbformat.write(notebook, path)
            changed.append(path)
    assignments, _ = course_assignments(root)  # the lint that follows reports those it lacks
    if (root / DOC).exists() and rewrite_doc(root, clause_table(assignments)):
        changed.append(root / DOC)
    return changed
