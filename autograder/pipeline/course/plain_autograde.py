"""What plain ``nbgrader autograde`` does differently here: a graded test cell without its hidden
line earns nothing, as under the grading command.

The grading command scores a test cell by its hidden checks only, so a cell that calls none (an
authoring error: ``python -m autograder lint`` finds it) earns 0 there.  Plain nbgrader scores a
test cell by its outputs, and such a cell runs without error: it would earn full marks.  The
preprocessor below, which nbgrader_config.py puts just before nbgrader's SaveAutoGrades, ends such
a cell with an error that says why, so both give it 0 with the same words.  A student cannot use
it: nbgrader restores every test cell from the gradebook before it runs.
"""

from __future__ import annotations

from nbformat import NotebookNode
from nbformat.v4 import new_output
from nbgrader.converters import Autograde
from nbgrader.preprocessors import NbGraderPreprocessor, SaveAutoGrades

from autograder.cells import lacks_hidden_line, no_hidden_line


class FailCellsWithoutHiddenLine(NbGraderPreprocessor):
    """A graded test cell without its hidden line ends with an error (nbgrader scores it 0)."""

    def preprocess_cell(
        self, cell: NotebookNode, resources: dict, index: int
    ) -> tuple[NotebookNode, dict]:
        if lacks_hidden_line(cell):
            message = no_hidden_line(cell.metadata["nbgrader"]["grade_id"])
            failed = f"CheckFailed: {message}"
            cell.outputs.append(
                new_output("error", ename="CheckFailed", evalue=message, traceback=[failed])
            )
        return cell, resources


def autograde_preprocessors() -> list[type]:
    """nbgrader's own autograde steps, with :class:`FailCellsWithoutHiddenLine` before the step
    that records the scores."""
    steps = list(Autograde.class_traits()["autograde_preprocessors"].default())
    steps.insert(steps.index(SaveAutoGrades), FailCellsWithoutHiddenLine)
    return steps
