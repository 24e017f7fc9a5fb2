"""What every layer needs to know about notebook cells: which ones grade, their marked regions,
and their Python."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

import nbformat

# nbgrader's own region markers (the defaults of its ClearSolutions and ClearHiddenTests, which
# nbgrader_config.py keeps): a line holding one anywhere opens or closes the region, as there.
SOLUTION = ("BEGIN SOLUTION", "END SOLUTION")
HIDDEN_TESTS = ("BEGIN HIDDEN TESTS", "END HIDDEN TESTS")
REGIONS = (SOLUTION, HIDDEN_TESTS)

Place = Literal["begin", "inside", "end", "outside"]


def region_lines(source: str, region: tuple[str, str]) -> Iterator[tuple[str, Place]]:
    """Each line of ``source`` (with its line ending) and where it stands in ``region``'s blocks:
    on the opening marker, inside, on the closing marker, or outside.  A block left open runs to
    the end of the source, so nothing after an unmatched BEGIN counts as outside."""
    begin, end = region
    inside = False
    for line in source.splitlines(keepends=True):
        if begin in line:
            inside = True
            yield line, "begin"
        elif end in line:
            inside = False
            yield line, "end"
        else:
            yield line, "inside" if inside else "outside"


def is_test_cell(cell: nbformat.NotebookNode) -> bool:
    """True for an autograder test cell (graded, not an answer): its code is never trusted."""
    meta = cell.metadata.get("nbgrader", {})
    return cell.cell_type == "code" and bool(meta.get("grade")) and not meta.get("solution")


# A graded test cell's hidden-check line: run_hidden_checks("<assignment>", "<grade id>", ...).
_HIDDEN_CHECK_CALL = re.compile(
    r"""run_hidden_checks\(\s*(["'])([\w.-]+)\1\s*,\s*(["'])([\w.-]+)\3"""
)


def hidden_calls(source: str) -> list[tuple[str, str]]:
    """(assignment, grade id) of every hidden line ``run_hidden_checks("<assignment>", "<grade
    id>", ...)`` in a cell's source, however it is quoted: the grading run's checkpoint is read
    from it (pipeline/worker/judged_notebook.py), so nothing disagrees on what counts as one."""
    return [(found[2], found[4]) for found in _HIDDEN_CHECK_CALL.finditer(source)]


def lacks_hidden_line(cell: nbformat.NotebookNode) -> bool:
    """True for a graded test cell that calls no hidden checks of its own grade id: nothing
    judges it, so it earns nothing, under the grading command and plain nbgrader alike."""
    if not is_test_cell(cell):
        return False
    grade_id = cell.metadata["nbgrader"].get("grade_id")
    return all(called != grade_id for _, called in hidden_calls(cell.source))


def no_hidden_line(grade_id: str) -> str:
    """Why a graded test cell without its hidden line earns nothing, as the student reads it."""
    return (
        f"this graded cell ({grade_id}) has no hidden line run_hidden_checks(...) naming it, so "
        "no hidden check judges it and it earns no points: the course's author must add the line "
        "(`python -m autograder lint` finds such cells)"
    )


def answer_cells(notebook: nbformat.NotebookNode) -> dict[str, str]:
    """grade_id -> source of every autograded answer cell (code the student writes), in order,
    nbgrader's solution markers removed."""
    answers = {}
    for cell in notebook.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("solution") and not meta.get("grade") and cell.cell_type == "code":
            lines = region_lines(cell.source, SOLUTION)
            answers[meta["grade_id"]] = "".join(
                line for line, place in lines if place in ("inside", "outside")
            )
    return answers


def course_answers_in(source: Path) -> dict[str, str]:
    """:func:`answer_cells` of the source notebook at ``source`` (the course's answers), or an
    empty dict where there is none: then no cell is waived for a wrong answer cell it uses
    (autograder/authoring/used_answers.py)."""
    if not source.is_file():
        return {}
    return answer_cells(nbformat.read(source, as_version=4))


def to_python(source: str) -> str:
    """Turn IPython syntax (magics, shell escapes) into plain Python."""
    from IPython.core.inputtransformer2 import TransformerManager

    return TransformerManager().transform_cell(source)
