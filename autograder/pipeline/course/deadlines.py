"""Late penalties, as nbgrader autograde assigns them: its ``AssignLatePenalties`` step with the
course's ``LateSubmissionPlugin``, from the submission's timestamp, the assignment's due date in
the gradebook, and the student's extension there.

Set the due date with ``nbgrader db assignment add NAME --duedate "2026-11-20 23:59 UTC"``, the
penalty with ``c.AssignLatePenalties.plugin_class`` in ``nbgrader_config.py`` (nbgrader's own
plugin gives none or zero; :class:`FractionPerDayLate` takes a fraction of the score per day
started), and an extension with ``Gradebook.grant_extension``.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from datetime import timedelta
from typing import Any

from nbgrader.plugins import LateSubmissionPlugin
from traitlets import Float, Int

# nbgrader's step logs each late submission as a warning; the row's note says it instead.
_QUIET = logging.getLogger("autograder.late")
_QUIET.addHandler(logging.NullHandler())
_QUIET.propagate = False


class FractionPerDayLate(LateSubmissionPlugin):
    """A fraction of the notebook's score per day (or part of a day) late, up to all of it."""

    fraction_per_day = Float(0.1, help="fraction of the score lost per day started").tag(
        config=True
    )
    max_days = Int(0, help="days after which the whole score is lost (0: never)").tag(config=True)

    def late_submission_penalty(
        self, student_id: str, score: float, total_seconds_late: float
    ) -> float | None:
        days = math.ceil(total_seconds_late / 86400)
        if self.max_days and days > self.max_days:
            return score
        return min(score, score * self.fraction_per_day * days)


def due_date_notice(config: Any, db_url: str, course_id: str, assignment: str) -> str | None:
    """One line to say when ``assignment`` has no due date (so no late penalty), else None;
    ValueError when the configured late-penalty plugin cannot be loaded."""
    from nbgrader.api import Gradebook
    from nbgrader.preprocessors import AssignLatePenalties
    from traitlets import TraitError

    try:
        AssignLatePenalties(config=config, log=_QUIET).init_plugin()
    except (TraitError, ImportError) as error:
        raise ValueError(f"c.AssignLatePenalties.plugin_class cannot be used: {error}") from None
    with Gradebook(db_url, course_id) as gb:
        if gb.find_assignment(assignment).duedate is not None:
            return None
    return (
        f"{assignment} has no due date in the gradebook, so no late penalty is applied "
        f'(set one with: nbgrader db assignment add {assignment} --duedate "YYYY-MM-DD HH:MM UTC")'
    )


def assign_late_penalty(
    config: Any, resources: dict, notebook: Any, notes: list[str], time_notes: Sequence[str]
) -> bool:
    """Run nbgrader's late-penalty step on one recorded submission; a note says what it did.

    time_notes: why the submission's time is the one recorded (see ``submission_time``); they
    matter, and are added, only when the assignment has a due date (True: it has one).
    """
    from nbgrader.api import Gradebook
    from nbgrader.preprocessors import AssignLatePenalties

    meta = resources["nbgrader"]
    with Gradebook(meta["db_url"]) as gb:
        if gb.find_assignment(meta["assignment"]).duedate is None:
            # Said once for the whole batch.  nbgrader cannot add an extension to no due date
            # (a TypeError in its step), so the step is not run at all.
            return False
    AssignLatePenalties(config=config, log=_QUIET).preprocess(notebook, resources)
    with Gradebook(meta["db_url"]) as gb:
        submission = gb.find_submission(meta["assignment"], meta["student"])
        due = submission.duedate
        notes.extend(time_notes)
        extension = submission.extension
        granted = f" (with an extension of {_span(extension)})" if extension else ""
        if submission.timestamp is None:
            return True  # a time note says why
        late = submission.total_seconds_late
        if late <= 0:
            return True
        penalty = gb.find_submission_notebook(
            meta["notebook"], meta["assignment"], meta["student"]
        ).late_submission_penalty
        notes.append(
            f"submitted {_span(timedelta(seconds=late))} after the due date {due:%Y-%m-%d %H:%M} "
            f"UTC{granted}: late penalty {penalty or 0:g} points"
        )
    return True


def _span(delta: timedelta) -> str:
    """``delta`` in days, hours and minutes: '1 d 2 h 5 min'."""
    minutes = math.ceil(delta.total_seconds() / 60)
    days, rest = divmod(minutes, 1440)
    hours, minutes = divmod(rest, 60)
    parts = [f"{n} {unit}" for n, unit in ((days, "d"), (hours, "h"), (minutes, "min")) if n]
    return " ".join(parts) or "0 min"
