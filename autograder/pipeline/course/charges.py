"""The course's choice for a mistake that fails several cells: charge it once (the default) or
in every cell it fails.

Set in ``nbgrader_config.py``::

    c.MistakeCharges.charge_again = True  # every cell a mistake fails loses its points

The grading command reads it from the course; how a cell is found to fail only because of a
mistake charged in another is autograder/authoring/registry.py's (``one_submission``).
"""

from __future__ import annotations

from traitlets import Bool
from traitlets.config import Configurable

from autograder.pipeline.course.course import Course


class MistakeCharges(Configurable):
    """How often one mistake costs points in one submission."""

    charge_again = Bool(
        False,
        help="charge a mistake in every cell it fails; by default a cell that fails only "
        "because of a mistake charged in an earlier cell (it passes with that mistake undone) "
        "keeps its points, and its feedback says so",
    ).tag(config=True)


def charge_again(course: Course) -> bool:
    """Whether ``course`` charges a mistake in every cell it fails (its nbgrader_config.py)."""
    return MistakeCharges(config=course.coursedir.config).charge_again
