"""The notebook the grading run executes: the release's cells, with the submitted answers in place.

What is judged must depend only on what the student wrote in the answer cells and on the
released cells, not on what a kernel was made to hold.  So the grading run does not execute the
submitted notebook.  It executes this one, built here in the trusted grader from:

* every code cell of the release, in the release's order, with the release's own text: set-up,
  demonstrations and trainings, whatever the student did to them;
* in each answer cell's place, the answer cell's text as submitted (pipeline/intake/intake.py
  matched it to the release by its grade id);
* each graded test cell as the instructor wrote it, split in two: its visible checks, which run
  as cell text, and its checkpoint (assignment and grade id, read from its hidden line), which
  the plain kernel hands the judge after them whatever they did (isolation/plain_kernel.py).

Cells the student added are not run: no scratch cell can register a hook, rebind an answer or
call the checks.  The graded copy still shows them, with the outputs they were submitted with.
"""

from __future__ import annotations

import ast
import builtins
import copy
from dataclasses import dataclass

import nbformat

from autograder.cells import HIDDEN_TESTS, hidden_calls, is_test_cell, region_lines
from autograder.pipeline.intake.intake import role


@dataclass(frozen=True)
class JudgedNotebook:
    """The notebook to run, and where each of its cells sits in the graded copy (None: nowhere,
    a release cell the student deleted)."""

    notebook: nbformat.NotebookNode
    in_copy: dict[int, int | None]


def visible_part(source: str) -> str:
    """A test cell's source without its hidden tests (the markers' lines included)."""
    return "".join(line for line, place in region_lines(source, HIDDEN_TESTS) if place == "outside")


def build(copy_notebook: nbformat.NotebookNode, release: nbformat.NotebookNode) -> JudgedNotebook:
    """The judged notebook of a submission, from its graded copy (the intake's rebuild: answers
    as submitted, test and locked cells from the instructor) and the release."""
    by_grade_id: dict[str, int] = {}
    by_cell_id: dict[str, int] = {}
    for index, cell in enumerate(copy_notebook.cells):
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if isinstance(grade_id, str):
            by_grade_id.setdefault(grade_id, index)
        elif isinstance(cell.get("id"), str):
            by_cell_id.setdefault(cell["id"], index)
    cells, in_copy = [], {}
    for cell in release.cells:
        if cell.cell_type != "code":
            continue
        if role(cell.metadata.get("nbgrader", {})) is None:
            place = by_cell_id.get(cell.get("id"))
            cells.append(_code_cell(cell.source, cell.metadata))
        else:
            place = by_grade_id.get(cell.metadata["nbgrader"]["grade_id"])
            source = copy_notebook.cells[place].source if place is not None else ""
            cells.append(_graded(source, copy_notebook.cells[place] if place is not None else cell))
        in_copy[len(cells) - 1] = place
    notebook = nbformat.v4.new_notebook(cells=cells, metadata=copy.deepcopy(release.metadata))
    return JudgedNotebook(notebook, in_copy)


def _code_cell(source: str, metadata: dict) -> nbformat.NotebookNode:
    return nbformat.v4.new_code_cell(source, metadata=copy.deepcopy(dict(metadata)))


def _graded(source: str, cell: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """An answer cell as submitted, or a test cell split into visible checks and checkpoint."""
    if not is_test_cell(cell):
        return _code_cell(source, cell.metadata)
    grade_id = cell.metadata["nbgrader"]["grade_id"]
    judged = _code_cell(visible_part(source), cell.metadata)
    own = [call for call in hidden_calls(source) if call[1] == grade_id]
    if own:
        judged.metadata["autograder"] = {"checkpoint": list(own[0])}
    return judged


def ban_sources(copy_notebook: nbformat.NotebookNode, program: JudgedNotebook) -> list[str]:
    """What reference bans are judged on (judging/source_bans.py): the code the grading run
    executes besides the test cells, one entry per code cell of the graded copy that is no test
    cell, so that "your code cell N" counts as the student's notebook does.  A cell the student
    added is empty there: it never runs."""
    ran = {place: index for index, place in program.in_copy.items() if place is not None}
    return [
        program.notebook.cells[ran[index]].source if index in ran else ""
        for index, cell in enumerate(copy_notebook.cells)
        if cell.cell_type == "code" and not is_test_cell(cell)
    ]


def answer_cells(program: JudgedNotebook) -> dict[int, tuple[str, str]]:
    """Judged notebook index -> (grade id, submitted source) of each answer cell: the text an
    error's line is read from (authoring/student_errors.py)."""
    return {
        index: (cell.metadata["nbgrader"]["grade_id"], cell.source)
        for index, cell in enumerate(program.notebook.cells)
        if role(cell.metadata.get("nbgrader", {})) == "answer"
    }


def in_copy(result: dict, program: JudgedNotebook) -> dict:
    """The runner's ``result`` with each cell record moved to its cell's index in the graded
    copy; records of release cells the student deleted are left out."""
    records = []
    for record in result.get("cells", []):
        if not isinstance(record, dict):
            continue
        place = program.in_copy.get(record.get("index"))  # type: ignore[arg-type]
        if place is not None:
            records.append({**record, "index": place})
    return {**result, "cells": records}


def _defined(source: str) -> set[str]:
    """The module-level names a cell's code binds (none if it does not parse)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return set()
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names.update(a.asname or a.name.split(".")[0] for a in node.names)
    return names


def _free(source: str) -> set[str]:
    """The names a cell's code reads and binds nowhere in it, arguments included (none if it does
    not parse): they must come from another cell or the builtins."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return set()
    read, bound = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (read if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            bound.add(node.name)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            bound.update(a.asname or a.name.split(".")[0] for a in node.names)
    return read - bound


def left_behind(
    copy_notebook: nbformat.NotebookNode, program: JudgedNotebook
) -> dict[int, list[str]]:
    """Index in the graded copy of each answer cell -> the names it reads that only a cell the
    student added defines: the grading run never defines them, as it never runs those cells."""
    ran = set(program.in_copy.values())
    judged: set[str] = set(dir(builtins))
    for cell in program.notebook.cells:
        judged |= _defined(cell.source)
    added: set[str] = set()
    for index, cell in enumerate(copy_notebook.cells):
        if cell.cell_type == "code" and index not in ran:
            added |= _defined(cell.source)
    found = {}
    for index, cell in enumerate(copy_notebook.cells):
        if index in ran and cell.metadata.get("nbgrader", {}).get("solution"):
            names = sorted((_free(cell.source) & added) - judged)
            if names:
                found[index] = names
    return found


def left_behind_note(names: list[str]) -> str:
    """What the graded copy says under an answer cell that uses ``names``."""
    shown = ", ".join(f"`{name}`" for name in names)
    return (
        f"[grading run] this answer uses {shown}, which only a cell you added defines; cells you "
        "add do not run when your notebook is graded, so move what the answer needs into this cell"
    )
