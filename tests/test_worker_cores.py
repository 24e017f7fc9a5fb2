"""Each grading worker keeps to one core, taking the cores in turn, so that a submission whose
processes are all busy slows only its own grading (issue 24: the honest pair beside the attacks
after the sandbox, benchmarks/attacks_after_the_sandbox.py)."""

from __future__ import annotations

import multiprocessing
import os

from autograder.pipeline.engines.batch import first_core_turn, keep_to_one_core


def _report_core(cores, answers) -> None:  # noqa: ANN001 - multiprocessing's proxies
    keep_to_one_core(cores)
    answers.put(sorted(os.sched_getaffinity(0)))


def test_workers_take_the_cores_in_turn_and_keep_to_one():
    allowed = sorted(os.sched_getaffinity(0))
    context = multiprocessing.get_context("fork")
    cores, answers = context.Value("i", 0), context.Queue()
    taken = []
    for _ in range(len(allowed) + 1):  # one more worker than cores: the first core again
        process = context.Process(target=_report_core, args=(cores, answers))
        process.start()
        taken.append(answers.get(timeout=30))
        process.join()
    assert taken == [[core] for core in [*allowed, allowed[0]]]
    assert sorted(os.sched_getaffinity(0)) == allowed  # the grading process itself is not bound


def test_each_batch_starts_its_turn_at_a_core_drawn_at_random():
    allowed = len(os.sched_getaffinity(0))
    # 40 draws per core: the chance that a fair draw misses a core is below cores * e^-40
    drawn = {first_core_turn() for _ in range(40 * allowed)}
    assert drawn == set(range(allowed))
