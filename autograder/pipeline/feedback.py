"""Feedback that shows hidden checks by name and message only, never their source.

nbgrader's own feedback prints the autograded notebook as is, hidden tests included
(nbgrader issues #917 and #1363). ``RedactHiddenTests`` runs in ``generate_feedback``
(see nbgrader_config.py) and, in every cell that had hidden tests, removes the hidden
region and cuts error tracebacks down to their last line: "CheckFailed: [check] diagnosis".
"""

from __future__ import annotations

import resource
import subprocess
import sys
import time
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


# Each feedback run is bounded: the whole class's run and, when it fails, each student's own.
SECONDS_PER_STUDENT = 120.0
MEMORY_BYTES = 4 * 2**30  # address space of one nbgrader process


def generate_feedback(course: Course, assignment: str, students: Sequence[str] = ()) -> None:
    """nbgrader generate_feedback for every student, or only ``students``; hidden checks redacted
    by the course's config (RedactHiddenTests above).

    The class runs in one process, bounded in time and memory; if it fails, each student runs
    alone, bounded the same way, so one submission's feedback cannot cost the others theirs.
    :class:`GradingError` names the students whose feedback could not be made.
    """
    command = [
        sys.executable,
        "-m",
        "nbgrader",
        "generate_feedback",
        assignment,
        "--force",
        f"--CourseDirectory.db_url={course.coursedir.db_url}",  # --db may differ from the config
    ]
    graded = course.path(course.coursedir.autograded_directory, ".", ".")
    wanted = list(students) or sorted(p.parent.name for p in graded.glob(f"*/{assignment}"))
    started = time.time() - 1  # a page older than this was not made by this run
    seen: dict[str, str] = {}
    if not students:
        why = _failure(course, command, [], SECONDS_PER_STUDENT * max(len(wanted), 1))
        if why is None and all(_made(course, assignment, s, started) for s in wanted):
            return
    for student in wanted:
        if students or not _made(course, assignment, student, started):
            why = _failure(course, command, ["--student", student], SECONDS_PER_STUDENT)
            if why is None and not _made(course, assignment, student, started):
                why = "wrote no feedback page"
            if why is not None:
                seen[student] = why
    if seen:
        raise GradingError(
            "; ".join(
                f"nbgrader generate_feedback {assignment} --student {s} {why}"
                for s, why in seen.items()
            )
            + "; the grades are recorded (and the others' feedback written), rerun it to get "
            "the feedback"
        )


def _made(course: Course, assignment: str, student: str, since: float) -> bool:
    """Whether ``student``'s feedback page was written at ``since`` or later."""
    folder = course.path(course.coursedir.feedback_directory, student, assignment)
    try:
        return (folder / f"{assignment}.html").stat().st_mtime >= since
    except OSError:
        return False


def _failure(course: Course, command: list[str], extra: list[str], seconds: float) -> str | None:
    """Run one bounded feedback command; None when it worked, else what was seen."""
    try:
        done = subprocess.run(
            [*command, *extra, "--log-level", "ERROR"],
            cwd=course.root,
            env=tool_env(),
            check=False,
            stdout=subprocess.DEVNULL,
            timeout=seconds,
            preexec_fn=_bounded_memory,
        )
    except subprocess.TimeoutExpired:
        return f"failed (stopped after {seconds:g} s)"
    return None if done.returncode == 0 else f"failed (exit {done.returncode})"


def _bounded_memory() -> None:
    """In the feedback process, before nbgrader starts: at most MEMORY_BYTES of address space
    (``resource`` is imported by the parent: the forked child takes no import lock)."""
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_BYTES, MEMORY_BYTES))
