"""Load a submission's definitions by running its cells, without trusting its test cells."""

from __future__ import annotations

import contextlib
import functools
import io
import linecache
import os
import tempfile
import traceback
from collections.abc import Collection, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import nbformat

from autograder.authoring.registry import CellGrade, checks_for, grade_cell, one_submission
from autograder.authoring.used_answers import charged_elsewhere, defined_here
from autograder.cells import course_answers_in, is_test_cell, to_python

SUBMISSION_MODULE = "__submission__"


@dataclass
class Submission:
    """The namespace left by running a notebook's non-test cells, and what went wrong."""

    assignment: str
    namespace: dict[str, Any]
    cell_errors: dict[int, str] = field(default_factory=dict)
    points: dict[str, float] = field(default_factory=dict)  # grade_id -> the test cell's points
    next_cell: int | None = None  # where a run stopped early (load_submission's ``stop``)


@contextlib.contextmanager
def _quiet_plots() -> Iterator[None]:
    """Use the Agg backend and make plt.show() close figures instead of drawing them."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    original_show = plt.show
    plt.show = lambda *args, **kwargs: plt.close("all")
    try:
        yield
    finally:
        plt.show = original_show
        plt.close("all")


DEMO_TAG = "demo"


def load_submission(
    path: str | os.PathLike[str],
    assignment: str | None = None,
    *,
    skip_tags: Collection[str] = (),
    stop: int | None = None,
    after: Submission | None = None,
) -> Submission:
    """Run every code cell except the autograder test cells, in order, in one namespace.

    A cell that raises is recorded and skipped, as nbgrader does, so one broken answer
    costs only the checks that need it. Cells run in a scratch folder with output hidden.
    skip_tags: cells with any of these tags are not run; ``(DEMO_TAG,)`` skips the solutions'
    demonstration cells (training studies, timings, plots), on which no answer or check depends.
    stop: run only the cells before this index (the result's ``next_cell``).
    after: a run stopped early; carry it on from its ``next_cell``, in its namespace (which
    becomes the result's), with this notebook's later cells and a fresh scratch folder.
    """
    path = Path(path)
    assignment = assignment or path.stem
    try:
        notebook = nbformat.read(path, as_version=4)
    except Exception as error:
        raise ValueError(f"{path} is not a readable notebook: {error}") from None
    if after is None:
        start, errors = 0, {}
        namespace: dict[str, Any] = {"__name__": SUBMISSION_MODULE, "display": lambda *a, **k: None}
    elif after.next_cell is None:
        raise ValueError("`after` must be a run that stopped early (load_submission's `stop`)")
    else:
        start, namespace, errors = after.next_cell, after.namespace, dict(after.cell_errors)
    submission = Submission(assignment, namespace, errors, next_cell=stop)
    for cell in notebook.cells:
        if is_test_cell(cell):
            meta = cell.metadata["nbgrader"]
            submission.points[meta.get("grade_id", "")] = float(meta.get("points", 0))
    start_dir = os.getcwd()
    with tempfile.TemporaryDirectory() as scratch, _quiet_plots():
        os.chdir(scratch)
        try:
            for index, cell in enumerate(notebook.cells[start:stop], start):
                if cell.cell_type != "code" or is_test_cell(cell):
                    continue
                if set(cell.metadata.get("tags", ())) & set(skip_tags):
                    continue
                filename = f"<{path.name} cell {index}>"
                source = to_python(cell.source)
                # Register the source so inspect.getsource works, as it does in a kernel.
                linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
                sink = io.StringIO()
                try:
                    code = compile(source, filename, "exec")
                    with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
                        exec(code, namespace)
                except Exception as error:
                    last = traceback.format_exception_only(type(error), error)[-1].strip()
                    submission.cell_errors[index] = last
        finally:
            os.chdir(start_dir)
    return submission


def grade_submission(submission: Submission, charge_again: bool = False) -> dict[str, CellGrade]:
    """Run every hidden check of the submission's assignment, graded cell by graded cell: each
    cell's grade, which scores it as the grading command does (the visible checks are not run
    here); ``charge_again`` as the course chooses (autograder/pipeline/course/charges.py)."""
    assignment = submission.assignment
    grade_ids = dict.fromkeys(entry.grade_id for entry in checks_for(assignment))
    with one_submission(charge_again):
        grades = {
            grade_id: grade_cell(assignment, grade_id, submission.namespace)
            for grade_id in grade_ids
        }
        return charged_elsewhere(
            assignment,
            grades,
            submission.namespace,
            lambda wrong: defined_here(submission.namespace, course_answers(assignment), wrong),
        )


@functools.cache  # read once per process, and only when a cell is graded again with it
def course_answers(assignment: str) -> dict[str, str]:
    """Answer cell grade id -> the course's answer, from this checkout's solutions/."""
    root = Path(__file__).resolve().parents[2]
    return course_answers_in(root / "solutions" / assignment / f"{assignment}.ipynb")
