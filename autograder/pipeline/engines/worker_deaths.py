"""What a batch does when a grading worker dies: one policy, with one set of limits, for the local
pool (batch.py) and for Dask (dask_engine.py).

A submission whose worker died while grading it is graded once more in another worker; a second
such death gives it a ``grader error`` row, so a submission that kills its worker cannot stall
the batch, and one that was only unlucky loses nothing.  A worker that dies before it started a
submission is no fault of that submission: it is run again, but only so many times, so that
workers that cannot start (a set-up that fails, a machine out of memory) end the batch's waiting.

Whether a submission had started is known: ``grade_one`` marks it (the pool sees its marker file,
Dask the event the worker logs).  Whether a submission that had not started had been handed to
the dead worker is not always known: Dask's scheduler sends a worker only the job it runs, but
the pool's executor queues jobs in a pipe its workers read, and every job of a broken pool fails
alike.  So the pool counts such a loss only when its pool broke with no submission under way (no
running submission can be the cause), for every submission then waiting.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

MAX_DEATHS_WHILE_GRADING = 2
MAX_LOSSES_BEFORE_START = 5


@dataclass
class WorkerDeaths:
    """One batch's count of worker deaths per student, and what follows from each."""

    worker: str  # what the rows call a worker: "grader worker", "Dask worker"
    while_grading: Counter[str] = field(default_factory=Counter)
    before_start: Counter[str] = field(default_factory=Counter)

    def died(self, student: str, started: bool) -> str:
        """Count the death of a worker that held ``student``'s submission (``started``: it was
        grading it); "" to run it again, else why it is given up (its grader-error note)."""
        counts = self.while_grading if started else self.before_start
        counts[student] += 1
        if self.while_grading[student] >= MAX_DEATHS_WHILE_GRADING:
            return (
                f"grading this submission killed its {self.worker} twice (once more when retried)"
            )
        if self.before_start[student] >= MAX_LOSSES_BEFORE_START:
            return (
                f"the {self.worker}s given this submission died {MAX_LOSSES_BEFORE_START} times "
                "before it started grading"
            )
        return ""
