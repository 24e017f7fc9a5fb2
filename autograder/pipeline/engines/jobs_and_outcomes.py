"""What a batch passes around: how to run it, one job, and what grading one submission produced."""

from __future__ import annotations

from dataclasses import dataclass, field

from autograder.authoring.registry import CellGrade, CheckResult
from autograder.isolation import sandbox
from autograder.judging.limits import JudgeLimits

# Row verdicts, most serious first: a row shows the first that applies.
VERDICTS = (
    "invalid name",
    "invalid notebook",
    "tamper suspected",
    "memory limit",
    "timeout",
    "crashed",
    "output limit",
    "file limit",
    "cpu limit",
    "restored",
    "ok",
)


@dataclass(frozen=True)
class Settings:
    """How every submission of one batch is run."""

    cell_timeout: float = 120.0
    max_restarts: int = 3
    limits: sandbox.Limits = field(default_factory=lambda: sandbox.Limits(wall_seconds=900.0))
    use_sandbox: bool = True
    judge: JudgeLimits = field(default_factory=JudgeLimits)
    # Charge a mistake in every cell it fails, not once: the course's choice, which batch.grade
    # reads from its configuration (autograder/pipeline/course/charges.py).
    charge_again: bool = False


@dataclass(frozen=True)
class GradedCell:
    """One graded test cell of a submission: its grade (the one type of a cell's grade,
    :class:`CellGrade`), out of how many points, and what the kernel itself reported.  Every
    record (the graded notebook, the CSV, the table, results.json) reads these properties."""

    grade_id: str
    grade: CellGrade
    max_points: float
    in_kernel_passed: bool = False

    @property
    def passed(self) -> bool:
        """Full marks."""
        return self.grade.full_marks

    @property
    def score(self) -> float:
        """The points earned (partial credit: see autograder/authoring/registry.py)."""
        return self.grade.points(self.max_points)

    @property
    def message(self) -> str:
        """What the student reads: diagnosis first, then every check's verdict."""
        return self.grade.describe()

    @property
    def checks(self) -> tuple[CheckResult, ...]:
        """Each hidden check's verdict; none if the cell was never judged."""
        return self.grade.checks


@dataclass
class Outcome:
    """What grading one submission produced."""

    student: str
    verdict: str
    notes: list[str]
    notebook: dict | None  # the autograded notebook, as JSON
    cells: list[GradedCell]
    seconds: float
    grader_peak_mib: float = 0.0  # the most memory its grading worker or judge process held


def grader_error(student: str, why: str) -> Outcome:
    """The row of a submission that grading itself failed on, saying why."""
    return Outcome(student, "grader error", [why], None, [], 0.0)


@dataclass(frozen=True)
class Job:
    """What a worker needs to grade one submission, beyond what warm_up gave it (picklable, and
    small for the pool: a job must never fill the pool's call-queue pipe, or a broken pool cannot
    shut down; a Dask job carries the file's bytes, since no file system is shared)."""

    student: str
    assignment: str
    submitted: str | bytes  # the notebook's path on the worker's machine, or its bytes
    staging: str
    hide: tuple[str, ...]
    settings: Settings
    marker: str = ""  # a file the worker creates when it starts this job and removes when done


@dataclass(frozen=True)
class DaskCluster:
    """Where a batch runs instead of the local process pool: a Dask cluster, one of three ways."""

    scheduler: str = ""  # tcp://HOST:PORT or tls://HOST:PORT of a running scheduler
    scheduler_file: str = ""  # the JSON file `dask scheduler --scheduler-file` writes
    local_workers: int = 0  # a LocalCluster of this many processes on 127.0.0.1
    tls_ca_file: str = ""
    tls_cert: str = ""
    tls_key: str = ""
    allow_insecure: bool = False  # connect to a non-loopback scheduler without TLS
    connect_seconds: float = 30.0
