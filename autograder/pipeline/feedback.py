"""Feedback that shows hidden checks by name and message only, never their source.

nbgrader's own feedback prints the autograded notebook as is, hidden tests included
(nbgrader issues #917 and #1363). ``RedactHiddenTests`` runs in ``generate_feedback``
(see nbgrader_config.py) and, in every cell that had hidden tests, removes the hidden
region and cuts error tracebacks down to their last line: "CheckFailed: [check] diagnosis".
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Sequence

from nbconvert.preprocessors import Preprocessor
from nbformat import NotebookNode
from traitlets import Bool

from autograder.pipeline.course import Course, GradingError, tool_env

BEGIN, END = "### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS"
PLACEHOLDER = "# (hidden checks ran here; their names and results are shown below)"


def redact_source(source: str) -> tuple[str, bool]:
    """Replace each hidden region of a cell's source by one placeholder line."""
    kept, inside, found = [], False, False
    for line in source.splitlines():
        if BEGIN in line:
            inside, found = True, True
            kept.append(line[: line.index(BEGIN)] + PLACEHOLDER)
        elif END in line:
            inside = False
        elif not inside:
            kept.append(line)
    # An unterminated region is still hidden: everything after BEGIN stays out.
    return "\n".join(kept), found


def redact_cell(cell: NotebookNode) -> NotebookNode:
    """Redact one cell in place and return it."""
    if cell.cell_type != "code":
        return cell
    cell.source, had_hidden = redact_source(cell.source)
    if had_hidden:
        for output in cell.get("outputs", []):
            if output.get("output_type") == "error":
                output["traceback"] = [
                    f"{output.get('ename', 'Error')}: {output.get('evalue', '')}"
                ]
    return cell


class RedactHiddenTests(Preprocessor):
    """nbconvert preprocessor: hide hidden-test source and tracebacks in feedback."""

    enabled = Bool(True, help="nbconvert skips preprocessors that are not enabled").tag(config=True)

    def preprocess_cell(self, cell, resources, index):
        return redact_cell(cell), resources


# A figure wider than the page (a row of three plots is ~1600 px) is scaled down to fit it,
# instead of running past the page's right edge.
FIT_FIGURES_CSS = ".output_png img, .output_jpeg img { max-width: 100%; height: auto; }"


class FitFigures(Preprocessor):
    """nbconvert preprocessor: adds FIT_FIGURES_CSS to the page's inlined styles; it must come
    after CSSHTMLHeaderPreprocessor, which sets them."""

    enabled = Bool(True, help="nbconvert skips preprocessors that are not enabled").tag(config=True)

    def preprocess(self, nb, resources):
        resources.setdefault("inlining", {}).setdefault("css", []).append(FIT_FIGURES_CSS)
        return nb, resources


def generate_feedback(course: Course, assignment: str, students: Sequence[str] = ()) -> None:
    """nbgrader generate_feedback for every student, or only ``students``; hidden checks redacted
    by the course's config (RedactHiddenTests above)."""
    command = [
        sys.executable,
        "-m",
        "nbgrader",
        "generate_feedback",
        assignment,
        "--force",
        f"--CourseDirectory.db_url={course.coursedir.db_url}",  # --db may differ from the config
    ]
    for extra in [["--student", s] for s in students] or [[]]:
        done = subprocess.run(
            [*command, *extra, "--log-level", "ERROR"],
            cwd=course.root,
            env=tool_env(),
            check=False,
            stdout=subprocess.DEVNULL,
        )
        if done.returncode != 0:
            raise GradingError(
                f"nbgrader generate_feedback {assignment} {' '.join(extra)} failed (exit "
                f"{done.returncode}); the grades are recorded, rerun it to get the feedback"
            )
