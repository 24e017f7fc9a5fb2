"""Grade a whole class: a pool of workers over the submissions, recording as each one finishes.

The workers fork from a server that imported torch, the judge and the assignment's checks once,
and end with the batch however it ends; only this (the main) process writes the gradebook.
"""

from __future__ import annotations

import contextlib
import os
import random
import tempfile
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from dataclasses import replace
from multiprocessing.connection import Connection
from multiprocessing.sharedctypes import Synchronized
from pathlib import Path

from autograder.isolation import sandbox
from autograder.isolation.staging import build_staging, secret_paths
from autograder.pipeline.course.charges import charge_again
from autograder.pipeline.course.course import (
    Course,
    GradingError,
    course_answers,
    find_submissions,
    instructor_side,
    record,
)
from autograder.pipeline.course.course_secret import course_secret
from autograder.pipeline.engines.jobs_and_outcomes import (
    DaskCluster,
    Job,
    Outcome,
    Settings,
    grader_error,
)
from autograder.pipeline.engines.preloaded_workers import (
    end_processes,
    end_with,
    lifeline,
    preloaded_forkserver,
)
from autograder.pipeline.engines.worker_deaths import WorkerDeaths
from autograder.pipeline.intake.student_ids import (
    EXPECTED,
    escaped,
    is_student_id,
    look_alike,
    spelled_as_recorded,
    student_id_problem,
)
from autograder.pipeline.records.safe_text import shown
from autograder.pipeline.worker.one_submission import grade_one, warm_up
from autograder.private_apis import pool_processes
from autograder.untrusted import valid_text


def grade(
    assignment: str,
    course: Course,
    *,
    students: Sequence[str] = (),
    workers: int = 0,
    settings: Settings | None = None,
    progress: Callable[[Outcome], None] | None = None,
    stage: Callable[[str], None] = lambda text: None,
    on_start: Callable[[], None] = lambda: None,
    cluster: DaskCluster | None = None,
    secret: bytes | None = None,
) -> list[Outcome]:
    """Grade every submission of ``assignment`` (or only ``students``) and record the grades.

    progress: called in this process with each outcome, as soon as it is recorded.
    stage: called with a line saying what the batch does before the first outcome.
    on_start: called once the staging is built and the workers are about to start.
    cluster: grade on this Dask cluster instead of a local process pool (recording stays here).
    secret: what hidden inputs derive from; by default the course's
    (pipeline/course/course_secret.py).
    How often a mistake is charged is the course's choice (pipeline/course/charges.py), read from
    its configuration here, whatever ``settings`` says.
    """
    settings = replace(settings or Settings(), charge_again=charge_again(course))
    secret = course_secret(course.root) if secret is None else secret
    if settings.use_sandbox and cluster is None:  # a Dask worker checks its own machine
        stage("checking that a sandbox can be built")
        available, why = sandbox.sandbox_available()
        if not available:
            raise GradingError(why)
    release, sources = instructor_side(course, assignment)
    answers = course_answers(course, assignment)
    submitted = find_submissions(course, assignment, students)
    outcomes = [_refused_name(s) for s, _ in submitted if not is_student_id(s)]
    submitted = [(s, path) for s, path in submitted if is_student_id(s)]
    submitted, twins = without_twins(submitted, _recorded_students(course, assignment))
    outcomes += twins
    for outcome in outcomes:
        if progress is not None:
            progress(outcome)
    folders = {student: path.parent for student, path in submitted}
    instructor = (assignment, release, sources, answers, secret)
    if cluster is None:
        graded = _pooled(instructor, course, submitted, workers, settings, stage, on_start)
    else:  # imported only here: the local pool never imports Dask
        from autograder.pipeline.engines import dask_engine

        graded = dask_engine.graded(
            cluster, instructor, course, submitted, settings, stage, on_start
        )
    with contextlib.closing(graded):  # stopped on any error here, its workers ended at once
        for outcome in graded:  # each recorded before the next is taken
            folder = folders[outcome.student]
            outcomes.append(recorded := _recorded(course, assignment, outcome, folder))
            if progress is not None:
                progress(recorded)
    outcomes.sort(key=lambda o: o.student)
    return outcomes


def _pooled(
    instructor: tuple[str, dict, dict[str, str], dict[str, str], bytes],
    course: Course,
    submitted: Sequence[tuple[str, Path]],
    workers: int,
    settings: Settings,
    stage: Callable[[str], None],
    on_start: Callable[[], None],
) -> Iterator[Outcome]:
    """Grade on this machine: rounds of a process pool, a new one after each worker death (see
    pipeline/engines/worker_deaths.py); the outcomes as they finish.

    instructor: the assignment, its release notebook, the gradebook's sources, the course's
    answers, the course secret.
    """
    assignment, release, sources, answers, secret = instructor
    hide = tuple(sorted({*(str(p) for p in secret_paths()), str(course.root)}))
    with tempfile.TemporaryDirectory(prefix="attention-lab-staging-") as folder:
        stage(
            f"staging what the sandbox may import (attention_lab as students of {assignment} have "
            "it, the runner, the judge client)"
        )
        Path(folder).chmod(0o755)
        staging = build_staging(Path(folder) / "site", assignment)
        jobs = [
            Job(student, assignment, str(path), str(staging), hide, settings)
            for student, path in submitted
        ]
        count = max(1, min(workers or os.cpu_count() or 1, len(jobs) or 1))
        stage(
            f"starting {count} worker{'s' * (count > 1)}: torch and the checks are imported "
            "once, and each worker builds the hidden reference data before its first "
            "submission"
        )
        markers = Path(folder) / "started"
        markers.mkdir()
        pending = {i: replace(job, marker=str(markers / str(i))) for i, job in enumerate(jobs)}
        deaths = WorkerDeaths("grader worker")
        if not pending:  # the forkserver starts at once, and would import torch for nothing
            on_start()
            return
        with preloaded_forkserver(assignment) as context, lifeline(context) as grader:
            cores = context.Value("i", first_core_turn())  # the next worker's, modulo the cores
            on_start()
            while pending:  # a round per pool: a worker's death breaks the pool, not the batch
                pool = ProcessPoolExecutor(
                    count,
                    mp_context=context,
                    initializer=_start_worker,
                    initargs=(grader, cores, assignment, release, sources, answers, secret),
                )
                try:
                    yield from _round(pool, pending, deaths)
                except BaseException:  # Ctrl-C, or the batch stopped: not after the running ones
                    _end_now(pool)
                    raise
                pool.shutdown()
                for index in pending:
                    Path(pending[index].marker).unlink(missing_ok=True)


def _round(
    pool: ProcessPoolExecutor, pending: dict[int, Job], deaths: WorkerDeaths
) -> Iterator[Outcome]:
    """Grade ``pending`` on ``pool`` until it breaks; the outcomes as they finish, each removed
    from ``pending``.  What a broken pool costs the submissions it held is ``deaths``' decision
    (pipeline/engines/worker_deaths.py): a started one counts a death, the waiting ones a loss only
    when none had started."""
    futures = {pool.submit(grade_one, job): i for i, job in pending.items()}
    waiting: list[int] = []  # lost to a broken pool before they started
    under_way = False
    for future in as_completed(futures):
        index = futures[future]
        job = pending[index]
        try:
            outcome = future.result()
        except BrokenProcessPool:
            if not Path(job.marker).exists():
                waiting.append(index)
                continue
            under_way = True
            why = deaths.died(job.student, started=True)
            if not why:
                continue  # graded again in a fresh pool
            outcome = grader_error(job.student, why)
        except Exception as error:  # noqa: BLE001 - reported; the batch goes on
            outcome = grader_error(job.student, repr(error))
        del pending[index]
        yield outcome
    if under_way:  # the running submission is the likely cause: the waiting ones go free
        return
    for index in waiting:
        why = deaths.died(pending[index].student, started=False)
        if why:
            yield grader_error(pending.pop(index).student, why)


def _start_worker(
    grader: Connection,
    cores: Synchronized,
    assignment: str,
    release: dict,
    sources: dict[str, str],
    answers: dict[str, str],
    secret: bytes,
) -> None:
    """A pool worker's set-up: it ends with the grading process, keeps to a core of its own, and
    warms up."""
    end_with(grader)
    keep_to_one_core(cores)
    warm_up(assignment, release, sources, secret, answers)


def first_core_turn() -> int:
    """A batch's first worker's core, drawn at random: one-worker batches, and grading commands
    run at once on one machine, would otherwise all start on the first core."""
    return random.randrange(len(os.sched_getaffinity(0)))


def keep_to_one_core(cores: Synchronized) -> None:
    """Run this worker, and every process it starts (the judge, the sandbox, the kernel), on one
    core: the next in turn of those this process may use.

    A submission whose kernel and runner are both busy (a flood of outputs) would otherwise
    take a share of the core an honest classmate's grading runs on.  The student's code may
    widen its own affinity again; this bounds the honest case and the flood, not a determined
    thief of CPU time (the sandbox's CPU-time limit bounds that)."""
    allowed = sorted(os.sched_getaffinity(0))
    with cores.get_lock():
        turn = cores.value
        cores.value += 1
    os.sched_setaffinity(0, {allowed[turn % len(allowed)]})


def _end_now(pool: ProcessPoolExecutor) -> None:
    """Drop the pool's queued submissions and kill its workers, with what they were grading."""
    processes = pool_processes(pool)
    pool.shutdown(wait=False, cancel_futures=True)
    end_processes(processes)


def without_twins(
    submitted: Sequence[tuple[str, Path]], recorded: set[str]
) -> tuple[list[tuple[str, Path]], list[Outcome]]:
    """The submissions under their student ids, none printing like another, and a refusal for
    each newer twin.

    ``submitted``: (folder name, notebook) pairs.  A folder name becomes its id as written in
    the gradebook already, else in NFC (:mod:`autograder.pipeline.intake.student_ids`).  Two folder
    names that print alike (``zoë`` composed or as ``e`` plus a combining diaeresis, full-width
    digits, a hyphen U+2010 for ``-``: :func:`~autograder.pipeline.intake.student_ids.look_alike`)
    would give two rows that read as one student.  The name already in the gradebook
    keeps it, else the older folder; the other is not graded, so it can neither take nor split
    that student's row, and its row shows its name escaped.
    """
    groups: dict[str, list[tuple[str, Path]]] = {}
    for folder, path in submitted:
        groups.setdefault(look_alike(folder), []).append((folder, path))
    kept, refused = [], []
    for group in groups.values():
        group.sort(
            key=lambda item: (
                item[0] not in recorded,
                spelled_as_recorded(item[0], recorded) not in recorded,
                _folder_age(item[1]),
                item[0],
            )
        )
        kept.append((spelled_as_recorded(group[0][0], recorded), group[0][1]))
        for folder, _ in group[1:]:
            note = (
                f"the folder name {ascii(folder)} prints like {ascii(group[0][0])}, which is "
                "graded (Unicode's confusables data reads them as one name): it is not graded, "
                "so that it cannot take that student's row; rename the folder and grade again"
            )
            refused.append(Outcome(escaped(folder), "invalid name", [note], None, [], 0.0))
    kept.sort()
    return kept, refused


def _folder_age(notebook: Path) -> float:
    """When the student's folder was made or last changed (the inode change time)."""
    try:
        return notebook.parent.parent.lstat().st_ctime
    except OSError:
        return float("inf")


def _recorded_students(course: Course, assignment: str) -> set[str]:
    """The students with a submission of ``assignment`` in the gradebook."""
    from nbgrader.api import Gradebook, MissingEntry

    with Gradebook(course.coursedir.db_url, course.coursedir.course_id) as gb:
        try:
            return {s.student.id for s in gb.find_assignment(assignment).submissions}
        except MissingEntry:
            return set()


def _refused_name(student: str) -> Outcome:
    note = (
        f"the folder name {shown(student)} cannot be a student id in the gradebook "
        f"({student_id_problem(student)}; expected {EXPECTED}): rename the folder (keeping its "
        "submission) and grade again"
    )
    return Outcome(student, "invalid name", [note], None, [], 0.0)


def _recorded(
    course: Course, assignment: str, outcome: Outcome, folder: Path | None = None
) -> Outcome:
    """Record ``outcome`` (handed in as ``folder``) in the gradebook; a failure there is this
    student's, not the batch's.

    Every text in it is made valid UTF-8 first: what the student's code printed reaches the
    graded copy, the CSV, results.json and the feedback."""
    outcome = valid_text(outcome)
    if outcome.notebook is None:
        return outcome
    try:
        record(course, assignment, outcome, folder)
    except Exception as error:  # noqa: BLE001 - a bad timestamp or name costs only this row
        outcome.notes.append(f"the grade could not be recorded: {type(error).__name__}: {error}")
        outcome.verdict = "grader error"
    return outcome
