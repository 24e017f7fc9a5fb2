"""A pool worker runs no thread besides its own (it forks a judge per submission, and a fork copies
only the forking thread), and still ends the moment the grading process does; the grade command
starts the workers' server first."""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest

from autograder.pipeline.cli import main
from autograder.pipeline.course.course import Course, GradingError
from autograder.pipeline.engines.preloaded_workers import (
    end_processes,
    end_with,
    lifeline,
    preloaded_forkserver,
    stop_forkserver,
)
from autograder.pipeline.worker.one_submission import one_thread
from autograder.private_apis import forkserver_pid, pool_processes


def test_a_worker_watching_the_grader_runs_one_thread_and_ends_with_its_lifeline():
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload([])
    with lifeline(context) as grader:
        pool = ProcessPoolExecutor(2, mp_context=context, initializer=end_with, initargs=(grader,))
        try:
            counts = [pool.submit(threading.active_count).result(timeout=60) for _ in range(4)]
            workers = pool_processes(pool)
        except BaseException:
            end_processes(pool_processes(pool))
            raise
    # The lifeline closed (as when the grading process ends): every worker ends at once, by
    # itself, although its pool was never shut down.
    deadline = time.monotonic() + 30
    while any(w.is_alive() for w in workers) and time.monotonic() < deadline:
        time.sleep(0.05)
    alive = [w.pid for w in workers if w.is_alive()]
    end_processes(workers)
    pool.shutdown(wait=False)
    assert counts == [1, 1, 1, 1], f"threads in a worker when it would fork a judge: {counts}"
    assert workers and not alive, f"workers left running after the grader: {alive}"


def _os_threads() -> int:
    """This process's threads as the kernel counts them: Python's and those libraries start."""
    return len(os.listdir("/proc/self/task"))


@pytest.mark.slow  # the server imports torch and the checks: seconds
def test_a_preloaded_worker_runs_no_thread_that_python_does_not_see_either(
    monkeypatch: pytest.MonkeyPatch,
):
    """numpy's OpenBLAS starts threads of its own (a thread per core but one) that
    threading.active_count() does not count; a worker set to one thread, as warm_up sets it, runs
    none of them when it would fork a judge."""
    for variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS"):  # the command's, not conftest's
        monkeypatch.delenv(variable, raising=False)
    stop_forkserver()  # one an earlier test started has the environment it started with
    with preloaded_forkserver("01_attention") as context:
        with ProcessPoolExecutor(1, mp_context=context, initializer=one_thread) as pool:
            threads = pool.submit(_os_threads).result(timeout=120)
    assert threads == 1, f"threads (/proc/self/task) in a warmed-up worker: {threads}"


def _servers_around_course_load(
    monkeypatch: pytest.MonkeyPatch, argv: list[str]
) -> tuple[bool, bool]:
    """Run the command ``argv`` in this process up to loading the course (which then fails):
    whether the workers' server was running when the course was loaded, and after the command."""
    stop_forkserver()  # one an earlier test left in this process would be seen
    seen = []

    def load(*args: object, **kwargs: object) -> Course:
        seen.append(forkserver_pid() is not None)
        raise GradingError("stopped by the test")

    monkeypatch.setattr(Course, "load", load)
    try:
        assert main(argv) == 2
        left = forkserver_pid() is not None
    finally:
        stop_forkserver()
    assert len(seen) == 1, seen
    return seen[0], left


def test_the_grade_command_starts_the_workers_server_before_it_loads_the_course(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
):
    """Its imports (torch, the judge, the checks) overlap the course's loading on another core;
    the command stops it on every path, here an error."""
    argv = ["grade", "01_attention", "--course", str(tmp_path), "--unsafe-no-sandbox"]
    running, left = _servers_around_course_load(monkeypatch, argv)
    assert running, "the course was loaded before the workers' server started"
    assert not left, "the grade command left its workers' server running"


def test_a_dask_grading_starts_no_local_server(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    """Dask's workers fork from a server with Dask's own preload list (dask_engine.py)."""
    argv = ["grade", "01_attention", "--course", str(tmp_path), "--cluster", "local:1"]
    running, _ = _servers_around_course_load(monkeypatch, [*argv, "--unsafe-no-sandbox"])
    assert not running


@pytest.mark.slow  # the server imports torch and the checks: seconds
def test_a_ctrl_c_in_the_workers_servers_start_up_does_not_end_it():
    """A terminal's Ctrl-C reaches the server too: one that arrives while it starts, before its
    preload list's first module makes it ignore the signal, must not end it in its start-up."""
    stop_forkserver()  # one an earlier test started would not start again
    with preloaded_forkserver("01_attention") as context:
        os.kill(forkserver_pid(), signal.SIGINT)  # at once: it is still importing Python's site
        with ProcessPoolExecutor(1, mp_context=context) as pool:
            assert pool.submit(os.getpid).result(timeout=120) > 0
