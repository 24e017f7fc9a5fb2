"""What every layer needs to know about notebook cells: which ones grade, and their Python."""

from __future__ import annotations

import re

import nbformat

_SOLUTION_MARKER = re.compile(r"[ \t]*### (BEGIN|END) SOLUTION[ \t]*\n?")


def is_test_cell(cell: nbformat.NotebookNode) -> bool:
    """True for an autograder test cell (graded, not an answer): its code is never trusted."""
    meta = cell.metadata.get("nbgrader", {})
    return cell.cell_type == "code" and bool(meta.get("grade")) and not meta.get("solution")


def answer_cells(notebook: nbformat.NotebookNode) -> dict[str, str]:
    """grade_id -> source of every autograded answer cell (code the student writes), in order,
    nbgrader's solution markers removed."""
    answers = {}
    for cell in notebook.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("solution") and not meta.get("grade") and cell.cell_type == "code":
            answers[meta["grade_id"]] = _SOLUTION_MARKER.sub("", cell.source)
    return answers


def to_python(source: str) -> str:
    """Turn IPython syntax (magics, shell escapes) into plain Python."""
    from IPython.core.inputtransformer2 import TransformerManager

    return TransformerManager().transform_cell(source)
