"""A pool worker runs no thread besides its own (it forks a judge per submission, and a fork copies
only the forking thread), and still ends the moment the grading process does."""

from __future__ import annotations

import multiprocessing
import threading
import time
from concurrent.futures import ProcessPoolExecutor

from autograder.pipeline.preloaded_workers import end_processes, end_with, lifeline
from autograder.private_apis import pool_processes


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
