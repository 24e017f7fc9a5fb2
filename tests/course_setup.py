"""The example course that the records tests grade into: late penalties of a quarter per day
started, the due date in its gradebook, hand-ins as the grading command collects them."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from nbgrader.api import Gradebook
from traitlets.config import Configurable

from autograder.examples import build_course
from autograder.pipeline.course.course import Course

ASSIGNMENT = "01_attention"
DUE = datetime(2026, 11, 20, 12, 0)
LATE_PENALTIES = (
    '\nc.AssignLatePenalties.plugin_class = "autograder.pipeline.course.deadlines.'
    'FractionPerDayLate"\nc.FractionPerDayLate.fraction_per_day = 0.25\n'
)


def course_with_penalties(
    root: Path, *, due: datetime | None = DUE, more_config: str = ""
) -> Course:
    """The example course at ``root``, no students yet, with late penalties (and ``more_config``)
    in its nbgrader_config.py; ``due``, unless None, is written to its gradebook."""
    build_course(root, [])
    with (root / "nbgrader_config.py").open("a") as config:
        config.write(LATE_PENALTIES + more_config)
    course = Course.load(root)
    if due is not None:
        with Gradebook(course.coursedir.db_url, course.coursedir.course_id) as gb:
            gb.update_or_create_assignment(ASSIGNMENT, duedate=due)
    return course


def released(course: Course) -> Path:
    """The student notebook of ASSIGNMENT that the course released."""
    return course.root / "notebooks" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"


def hand_in(course: Course, folder_name: str, stamp: str) -> Path:
    """The released notebook handed in unchanged under grading/submitted/``folder_name``, with
    ``stamp`` as its timestamp.txt; its folder."""
    folder = course.root / "grading" / "submitted" / folder_name / ASSIGNMENT
    folder.mkdir(parents=True)
    (folder / f"{ASSIGNMENT}.ipynb").write_bytes(released(course).read_bytes())
    (folder / "timestamp.txt").write_text(stamp)
    return folder


def export_with(course: Course, plugin_class: type, **options: str) -> None:
    """Run an nbgrader export plugin over the course's gradebook, with ``options`` (``to``...)."""
    parent = Configurable()
    parent.coursedir = course.coursedir
    plugin = plugin_class(parent=parent, **options)
    with Gradebook(course.coursedir.db_url, course.coursedir.course_id) as gb:
        plugin.export(gb)
