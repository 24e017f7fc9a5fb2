"""Every private API of a library that the grader relies on, each behind one function here, so
that an upgrade that changes one fails by name (tests/test_private_api_canaries.py) rather than
deep inside a grading batch.

- ``multiprocessing.forkserver._forkserver`` with ``_forkserver_pid`` and ``_stop()``: no public
  API stops a forkserver, and a new preload list is read only by a new server
  (pipeline/engines/preloaded_workers.py); ``multiprocessing.forkserver.ensure_running()``,
  undocumented, starts one before the first worker asks for it;
- ``multiprocessing.process.current_process()._config["daemon"]``: multiprocessing refuses
  children to a daemonic process (a Dask worker is one, under its nanny), since it could not end
  them; a Dask worker's grading processes end with it by themselves (pipeline/engines/
  dask_engine.py), so the refusal is lifted while they start;
- ``ProcessPoolExecutor._processes``: a pool's processes, to kill them with what they are grading
  (Python 3.14 adds ``kill_workers()``; this project supports 3.11);
- ``torch.utils._python_dispatch.TorchDispatchMode``: the only way to see the aten ops a call
  runs (judging/kernel.py), documented by torch under this path;
- ``nbgrader.api.get_alembic_version``: nbgrader stamps each new gradebook with its schema's
  revision, which it asks of the ``alembic heads`` program (3 s of CPU, and a failure where this
  interpreter's scripts are not on PATH); the same revision is read here in-process.

Two subclass hooks cannot live here, since a subclass overrides them where it is defined; their
canaries are in the same test file: nbgrader's ``GetGrades._get_score`` and nbconvert's
``TemplateExporter._template_paths`` (both in pipeline/feedback/feedback.py).
``attention_lab/profiling.py`` keeps its own (torch's legacy profiler, for CPU peak memory): the
student package cannot import the grader's; it has a canary there too.

This module is copied into the grading sandbox (the kernel's side of judging uses the dispatch
mode), so it imports only the standard library at module level.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from multiprocessing.process import BaseProcess, current_process


def forkserver_pid() -> int | None:
    """The process id of this process's multiprocessing forkserver, if one runs."""
    from multiprocessing import forkserver

    return forkserver._forkserver._forkserver_pid  # noqa: SLF001


def start_forkserver() -> None:
    """Start this process's forkserver now, if none runs: it imports its preload list while this
    process goes on (the first worker would otherwise start it, and wait for it)."""
    from multiprocessing import forkserver

    forkserver.ensure_running()


def forget_forkserver() -> None:
    """Close this process's links to its forkserver, so that the next use starts a new one."""
    from multiprocessing import forkserver

    forkserver._forkserver._stop()  # noqa: SLF001


@contextlib.contextmanager
def children_allowed() -> Iterator[None]:
    """Let this process start multiprocessing children even if it is daemonic."""
    config = current_process()._config  # noqa: SLF001
    daemon = config.get("daemon")
    config["daemon"] = False
    try:
        yield
    finally:
        if daemon is None:
            config.pop("daemon", None)
        else:
            config["daemon"] = daemon


def pool_processes(pool: ProcessPoolExecutor) -> list[BaseProcess]:
    """The worker processes ``pool`` has started and not yet reaped."""
    return list((pool._processes or {}).values())  # noqa: SLF001


def torch_dispatch_mode() -> type:
    """torch's ``TorchDispatchMode``: a subclass's ``__torch_dispatch__`` sees every aten op."""
    from torch.utils._python_dispatch import TorchDispatchMode

    return TorchDispatchMode


def stamp_gradebooks_in_process() -> None:
    """Have nbgrader stamp every new gradebook of this process with its schema's revision read
    in-process from nbgrader's own migrations, as the ``alembic heads`` program would print it."""
    import nbgrader.api

    nbgrader.api.get_alembic_version = gradebook_schema_revision


@functools.cache
def gradebook_schema_revision() -> str:
    """The head revision of nbgrader's gradebook migrations (its ``alembic`` folder)."""
    from alembic.script import ScriptDirectory
    from nbgrader.dbutil import ALEMBIC_DIR

    return ScriptDirectory(ALEMBIC_DIR).get_current_head()
