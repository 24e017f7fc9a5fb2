"""What every layer needs to know about notebook cells: which ones grade, and their Python."""

from __future__ import annotations

import nbformat


def is_test_cell(cell: nbformat.NotebookNode) -> bool:
    """True for an autograder test cell (graded, not an answer): its code is never trusted."""
    meta = cell.metadata.get("nbgrader", {})
    return cell.cell_type == "code" and bool(meta.get("grade")) and not meta.get("solution")


def to_python(source: str) -> str:
    """Turn IPython syntax (magics, shell escapes) into plain Python."""
    from IPython.core.inputtransformer2 import TransformerManager

    return TransformerManager().transform_cell(source)
