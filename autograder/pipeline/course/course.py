"""The nbgrader course a batch grades: its folders, released notebook, gradebook and submissions.

Only the main process writes the gradebook (:func:`record`), as nbgrader autograde would.
"""

from __future__ import annotations

import copy
import os
import sys
import tempfile
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import nbformat

from autograder.pipeline.engines.jobs_and_outcomes import Outcome
from autograder.pipeline.intake.student_ids import canonical


@dataclass
class Course:
    """Where an nbgrader course keeps its files, read from its nbgrader_config.py."""

    root: Path
    coursedir: Any

    @classmethod
    def load(cls, root: Path, db_url: str | None = None) -> Course:
        from nbgrader.coursedir import CourseDirectory
        from traitlets.config.loader import PyFileConfigLoader

        from autograder.private_apis import stamp_gradebooks_in_process

        stamp_gradebooks_in_process()  # the first command on a course makes its gradebook
        root = root.resolve()
        if not (root / "nbgrader_config.py").exists():
            raise GradingError(f"{root} has no nbgrader_config.py: run from the course folder")
        config = PyFileConfigLoader("nbgrader_config.py", path=str(root)).load_config()
        if db_url:
            config.CourseDirectory.db_url = db_url
        return cls(root, CourseDirectory(config=config))

    @property
    def db_shown(self) -> str:
        """The gradebook URL with any password masked, for messages."""
        from sqlalchemy.engine import make_url
        from sqlalchemy.exc import ArgumentError

        try:
            url = make_url(self.coursedir.db_url)
        except (ArgumentError, ValueError):
            return "(an unreadable gradebook URL)"
        if "password" in url.query:  # libpq also takes it as ?password=...
            url = url.update_query_dict({"password": "***"})
        return url.render_as_string(hide_password=True)

    def path(self, directory: str, student: str, assignment: str) -> Path:
        return Path(self.coursedir.format_path(directory, student, assignment))


class GradingError(RuntimeError):
    """The batch itself cannot go on (not a problem of one submission)."""


def instructor_side(course: Course, assignment: str) -> tuple[dict, dict[str, str]]:
    """The released notebook and the gradebook's sources of every test and locked cell."""
    from nbgrader.api import MissingEntry
    from sqlalchemy.exc import SQLAlchemyError

    release_path = course.path(course.coursedir.release_directory, ".", assignment)
    notebook_file = release_path / f"{assignment}.ipynb"
    if not notebook_file.exists():
        raise GradingError(
            f"no released notebook {notebook_file}: run nbgrader generate_assignment {assignment}"
        )
    release = nbformat.read(notebook_file, as_version=4)
    url = course.db_shown
    try:
        try:
            sources = _gradebook_sources(course, assignment)
        except MissingEntry:  # released (python -m autograder release), never generated here
            register_assignment(course, assignment, release)
            sources = _gradebook_sources(course, assignment)
    except (ImportError, SQLAlchemyError, ValueError) as error:
        raise GradingError(f"cannot open the gradebook {url}: {_without(error, course)}") from None
    return dict(release), sources


def course_answers(course: Course, assignment: str) -> dict[str, str]:
    """Answer cell grade id -> the course's answer, from its source notebook (the solutions)."""
    from autograder.cells import course_answers_in

    source = course.path(course.coursedir.source_directory, ".", assignment)
    return course_answers_in(source / f"{assignment}.ipynb")


def _gradebook_sources(course: Course, assignment: str) -> dict[str, str]:
    """The gradebook's source of every test and locked cell of ``assignment``; MissingEntry when
    the assignment is not in the gradebook."""
    from nbgrader.api import Gradebook

    with Gradebook(course.coursedir.db_url, course.coursedir.course_id) as gb:
        notebook = gb.find_notebook(assignment, assignment)
        return {cell.name: cell.source for cell in notebook.source_cells}


def register_assignment(course: Course, assignment: str, release: nbformat.NotebookNode) -> None:
    """Put ``assignment`` in the gradebook as ``nbgrader generate_assignment`` does, from its
    source notebook (the gradebook keeps the hidden tests, which the released copy lacks), with
    the release written to a scratch folder: the course's released notebook is left as it is,
    and must be what nbgrader generates now, or the grades would not be the students' notebook's.
    """
    from nbgrader.converters import GenerateAssignment
    from nbgrader.coursedir import CourseDirectory

    command = f"nbgrader generate_assignment {assignment} --force"
    source = course.path(course.coursedir.source_directory, ".", assignment) / (
        f"{assignment}.ipynb"
    )
    if not source.exists():
        raise GradingError(
            f"{assignment} is not in the gradebook {course.db_shown}, and there is no source "
            f"notebook {source} to register it from: run `{command}` where the source is"
        )
    with tempfile.TemporaryDirectory(prefix="attention-lab-register-") as scratch:
        config = copy.deepcopy(course.coursedir.config)
        config.CourseDirectory.release_directory = scratch
        config.CourseDirectory.root = str(course.root)
        coursedir = CourseDirectory(config=config)
        coursedir.assignment_id = assignment
        converter = GenerateAssignment(coursedir=coursedir, config=config)
        converter.force = True
        converter.start()
        fresh = nbformat.read(Path(scratch) / assignment / f"{assignment}.ipynb", as_version=4)
    if _cells(fresh) != _cells(release):
        raise GradingError(
            f"{assignment} is now in the gradebook {course.db_shown}, but its released notebook "
            f"differs from what nbgrader generates from {source}: run `{command}` (and release "
            "that copy to students), then grade again"
        )
    print(
        f"{assignment} was not in the gradebook: registered it from {source}, as `{command}` "
        "would (the released notebook is unchanged)",
        file=sys.stderr,
    )


def _cells(notebook: nbformat.NotebookNode) -> list[tuple[str, str, dict]]:
    return [(c.cell_type, c.source, c.metadata.get("nbgrader", {})) for c in notebook.cells]


def _without(error: Exception, course: Course) -> str:
    """The error's message, with the gradebook URL (which may hold a password) masked."""
    return str(error).replace(course.coursedir.db_url, course.db_shown)


def find_submissions(
    course: Course, assignment: str, students: Sequence[str]
) -> list[tuple[str, Path]]:
    """The folders that hold ``assignment``, by folder name (of ``students`` only, when given,
    compared as student ids: a name typed composed finds a folder written decomposed)."""
    submitted_root = course.path(course.coursedir.submitted_directory, ".", ".")
    wanted = {canonical(s): s for s in students}
    found, seen = [], set()
    for folder in sorted(submitted_root.glob("*")):
        key = canonical(folder.name)
        if not (folder / assignment).is_dir() or (students and key not in wanted):
            continue
        found.append((folder.name, folder / assignment / f"{assignment}.ipynb"))
        seen.add(wanted.get(key))
    missing = set(students) - seen
    if missing:
        raise GradingError(f"no submission of {assignment} for: {', '.join(sorted(missing))}")
    return found


def record(course: Course, assignment: str, outcome: Outcome, folder: Path | None = None) -> None:
    """Record grades and late penalty as nbgrader autograde would; write Gradescope results.

    folder: what the student handed in, when its name is not the student id as written
    (``grading/submitted/<student>/<assignment>`` by default)."""
    with warnings.catch_warnings():
        # nbgrader's api.py builds a new student's rows in a way SQLAlchemy 2 warns about
        # ("Object of type <...> not in session"), three times per student; the rows are stored.
        warnings.filterwarnings(
            "ignore", r"Object of type <\w+> not in session", module=r"nbgrader\.api"
        )
        _record(course, assignment, outcome, folder)


def _record(course: Course, assignment: str, outcome: Outcome, folder: Path | None) -> None:
    from nbgrader.api import Gradebook
    from nbgrader.preprocessors import SaveAutoGrades

    from autograder.pipeline.course.deadlines import assign_late_penalty
    from autograder.pipeline.course.extensions import take_pending
    from autograder.pipeline.gradescope.gradescope import write_results
    from autograder.pipeline.intake.submission_time import (
        inbound_folder,
        mark_graded_copy,
        submission_time,
    )
    from autograder.pipeline.records.grade_record import grading_folder, totals_of
    from autograder.pipeline.records.report import max_points_of

    student = outcome.student
    source = folder or course.path(course.coursedir.submitted_directory, student, assignment)
    destination = course.path(course.coursedir.autograded_directory, student, assignment)
    destination.mkdir(parents=True, exist_ok=True)
    notebook = nbformat.from_dict(outcome.notebook)
    inbound = inbound_folder(course.coursedir.config, course.coursedir.course_id)
    # The exchange names the inbound copy as the folder was named, however it is spelled.
    when = submission_time(source, assignment, source.parent.name, inbound)
    with Gradebook(course.coursedir.db_url, course.coursedir.course_id) as gb:
        gb.update_or_create_student(student)
        # No time known now: none is kept from an earlier grading, so no penalty is invented.
        gb.update_or_create_submission(assignment, student, timestamp=when.counted)
        take_pending(gb, assignment, student)
    resources = {
        "nbgrader": {
            "notebook": assignment,
            "assignment": assignment,
            "student": student,
            "db_url": course.coursedir.db_url,
        }
    }
    SaveAutoGrades().preprocess(notebook, resources)
    dated = assign_late_penalty(
        course.coursedir.config, resources, notebook, outcome.notes, when.notes
    )
    mark_graded_copy(notebook, when.unverified if dated else None)  # for the feedback page
    with Gradebook(course.coursedir.db_url, course.coursedir.course_id) as gb:
        submitted = gb.find_submission_notebook(assignment, assignment, student)
        submitted.flagged = outcome.verdict == "tamper suspected"
        gb.db.commit()
        totals = totals_of(gb.find_submission(assignment, student))
    # Written whole or not at all: a failure never leaves an empty graded copy behind.
    partial = destination / f".{assignment}.ipynb.partial"
    nbformat.write(notebook, partial)
    partial.replace(destination / f"{assignment}.ipynb")
    if when.counted is not None:  # the time that counts, in nbgrader's own format
        (destination / "timestamp.txt").write_text(f"{when.counted:%Y-%m-%d %H:%M:%S.%f} UTC\n")
    results = grading_folder(course.coursedir) / "gradescope" / student / assignment
    write_results(outcome, max_points_of(outcome.notebook), results / "results.json", totals)


def due_date_notice(course: Course, assignment: str) -> str | None:
    """A line saying that ``assignment`` has no due date (so no late penalty), else None;
    :class:`GradingError` when the course's late-penalty plugin cannot be loaded."""
    from autograder.pipeline.course.deadlines import due_date_notice as notice

    coursedir = course.coursedir
    try:
        return notice(coursedir.config, coursedir.db_url, coursedir.course_id, assignment)
    except ValueError as error:
        raise GradingError(str(error)) from None


def check_pending_extensions(course: Course) -> None:
    """Move the extensions of an earlier version's ``grading/extensions.csv`` into the gradebook
    (autograder/pipeline/course/extensions.py); :class:`GradingError` when that file is
    malformed."""
    from nbgrader.api import Gradebook

    from autograder.pipeline.course.extensions import ExtensionError, adopt_legacy_file
    from autograder.pipeline.records.grade_record import grading_folder

    try:
        with Gradebook(course.coursedir.db_url, course.coursedir.course_id) as gb:
            adopt_legacy_file(gb, grading_folder(course.coursedir))
    except ExtensionError as error:
        raise GradingError(str(error)) from None


# nbgrader's command, started faster than `python -m nbgrader` (pipeline/course/nbgrader_app.py).
NBGRADER = [sys.executable, "-m", "autograder.pipeline.course.nbgrader_app"]


def tool_env(**extra: str) -> dict[str, str]:
    """This process's environment for nbgrader and grading subprocesses: this interpreter's
    scripts first on PATH (autograder and attention_lab are installed packages)."""
    env = dict(os.environ, **extra)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    return env
