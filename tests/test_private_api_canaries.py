"""Canaries for the private APIs the grader relies on: an upgrade that changes one fails here,
by name, instead of somewhere deep in a grading batch.

- ``multiprocessing.forkserver._forkserver`` with ``_forkserver_pid`` and ``_stop()``
  (autograder/pipeline/preloaded_workers.py stops the preloaded server with them);
- ``ProcessPoolExecutor._processes`` (autograder/pipeline/batch.py kills a pool's workers);
- ``torch.utils._python_dispatch.TorchDispatchMode`` (autograder/judging/kernel.py observes the
  aten ops a student's function runs).
"""

from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor

import torch

from autograder.judging.kernel import observe
from autograder.pipeline.preloaded_workers import stop_forkserver


def test_the_forkserver_is_reachable_and_stoppable_as_the_grader_does_it():
    from multiprocessing import forkserver

    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload([])
    with ProcessPoolExecutor(1, mp_context=context) as pool:
        assert pool.submit(os.getpid).result(timeout=60) > 0
        processes = pool._processes  # noqa: SLF001 - the canary
        assert isinstance(processes, dict) and all(p.pid for p in processes.values())
    server = forkserver._forkserver  # noqa: SLF001 - the canary
    assert isinstance(server._forkserver_pid, int)  # noqa: SLF001
    stop_forkserver()
    assert server._forkserver_pid is None  # noqa: SLF001


def test_torch_dispatch_modes_still_observe_aten_ops():
    result, ops = observe("aten_ops", torch.add, (torch.ones(2), torch.ones(2)), {})
    assert torch.equal(result, torch.full((2,), 2.0)) and "aten.add.Tensor" in ops
