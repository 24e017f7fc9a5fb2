"""A grading worker that dies costs nobody a grade: its submission is retried in a fresh worker.

The test kills, by its PID, the worker that is running a submission's sandbox, once, while the
batch is under way; every submission must still end with the verdict and score it gets alone.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import pytest

from autograder.examples import UNSCALED, Sample, build_course
from autograder.isolation import sandbox
from autograder.pipeline.course.course import Course
from autograder.pipeline.engines.batch import grade
from autograder.pipeline.engines.jobs_and_outcomes import Outcome, Settings
from autograder.pipeline.engines.worker_deaths import MAX_LOSSES_BEFORE_START
from tests.processes import descends_from_this_process, parent_of

pytestmark = pytest.mark.slow

SAMPLES = [
    Sample("ada", "correct", "ok", True),
    Sample("alan", "mistake", "ok", False, answers={"attention": UNSCALED}),
    Sample("grace", "correct", "ok", True),
]


def _a_sandboxed_worker() -> int | None:
    """The PID of a grading worker of this test that is running a sandbox right now, if any (the
    machine may be grading other tests' batches at the same time: their workers are left alone)."""
    bwrap = (sandbox.bwrap_executable() or ("bwrap",))[0]
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            command = (entry / "cmdline").read_bytes().split(b"\0")[0].decode()
            if os.path.basename(command) == os.path.basename(bwrap):
                worker = parent_of(int(entry.name))
                if descends_from_this_process(worker):
                    return worker
        except (OSError, LookupError):
            continue
    return None


def _kill_one_worker(done: threading.Event, killed: list[int]) -> None:
    while not done.is_set() and not killed:
        worker = _a_sandboxed_worker()
        if worker is not None and worker != os.getpid():
            os.kill(worker, signal.SIGKILL)
            killed.append(worker)
        time.sleep(0.05)


@pytest.mark.sandbox
def test_a_killed_worker_costs_no_grade(tmp_path: Path):
    available, why = sandbox.sandbox_available()
    if not available:
        pytest.fail(f"the grading sandbox is unavailable: {why}", pytrace=False)
    build_course(tmp_path, SAMPLES)
    course = Course.load(tmp_path)
    done, killed = threading.Event(), []
    killer = threading.Thread(target=_kill_one_worker, args=(done, killed), daemon=True)
    killer.start()
    try:
        outcomes: list[Outcome] = grade(
            "01_attention", course, workers=2, settings=Settings(cell_timeout=60)
        )
    finally:
        done.set()
        killer.join()
    assert killed, "no worker was caught running a sandbox, so nothing was tested"
    by_student = {o.student: o for o in outcomes}
    assert sorted(by_student) == [s.student for s in SAMPLES]
    for sample in SAMPLES:
        outcome = by_student[sample.student]
        assert outcome.verdict == sample.expected, (sample.student, outcome.verdict, outcome.notes)
        assert all(c.passed for c in outcome.cells) == sample.full_marks, outcome.cells


def test_workers_that_die_before_grading_anything_end_the_batch_with_a_row_each(tmp_path: Path):
    # A secret too short to use makes every worker's set-up raise, so each pool breaks before
    # any submission starts: the batch gives each submission up after MAX_LOSSES_BEFORE_START
    # such pools (pipeline/engines/worker_deaths.py), where it used to start new pools for ever.
    build_course(tmp_path, SAMPLES[:2])
    course = Course.load(tmp_path)
    finished: list[list[Outcome]] = []
    settings = Settings(cell_timeout=60, use_sandbox=False)

    def run() -> None:
        finished.append(grade("01_attention", course, workers=1, settings=settings, secret=b"x"))

    batch = threading.Thread(target=run, daemon=True)
    batch.start()
    batch.join(timeout=240)
    assert finished, "the batch was still starting pools after 4 minutes"
    assert [(o.student, o.verdict) for o in finished[0]] == [
        ("ada", "grader error"),
        ("alan", "grader error"),
    ]
    note = finished[0][0].notes[0]
    assert f"died {MAX_LOSSES_BEFORE_START} times before it started grading" in note, note
