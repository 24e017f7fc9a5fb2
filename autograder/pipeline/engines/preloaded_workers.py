"""Grading workers fork from a server that imported torch, the judge and the checks once, and end
with their batch.

A worker forked from such a server is ready in a fraction of a second, where a fresh interpreter
imports them again (seconds of CPU per worker).  multiprocessing keeps one forkserver per process,
reads its preload list only when it starts, and never ends the server's children: so a batch ends
its workers itself on every exit path it sees, then stops the server, and each worker exits when
the grading process ends even if it was killed and could end nothing.  No process is left behind,
and the next batch preloads its own assignment's checks.
"""

from __future__ import annotations

import contextlib
import fcntl
import multiprocessing
import os
import select
import signal
import threading
from collections.abc import Iterator, Sequence
from multiprocessing.connection import Connection
from multiprocessing.context import ForkServerContext
from multiprocessing.process import BaseProcess

from autograder.authoring.check_modules import check_modules
from autograder.private_apis import forget_forkserver, forkserver_pid, start_forkserver


def preloaded_modules(assignment: str) -> list[str]:
    """What a grading worker imports before its first submission of ``assignment``."""
    modules = ["autograder.pipeline.worker.one_submission", "autograder.judging.judge"]
    checks = check_modules().get(assignment)
    if checks is not None:
        modules.append(f"autograder.checks.{checks}")
    return modules


@contextlib.contextmanager
def preloaded_forkserver(assignment: str, also: Sequence[str] = ()) -> Iterator[ForkServerContext]:
    """A forkserver context whose server imports ``also`` and the modules of ``assignment``'s
    workers, starting at once (the caller's own work overlaps those imports); the server is
    stopped on leaving, once its children have been ended."""
    context = multiprocessing.get_context("forkserver")
    # first: workers ignore Ctrl-C from birth
    shield = "autograder.pipeline.engines.workers_ignore_ctrl_c"
    context.set_forkserver_preload([shield, *also, *preloaded_modules(assignment)])
    try:
        with one_blas_thread(), ctrl_c_ignored():
            start_forkserver()
        yield context
    finally:
        stop_forkserver()


# The blocks in ctrl_c_ignored now, on the main thread, and SIGINT's handler before the first.
_ignoring = 0
_handler_before: object = None


@contextlib.contextmanager
def ctrl_c_ignored() -> Iterator[None]:
    """Ctrl-C ignored in this process while the block spawns fresh interpreters (the forkserver;
    a Dask worker's grading processes, spawned from a set-up's thread): each keeps the ignored
    signal through exec, so a Ctrl-C that reaches one in its start-up, before its own handler is
    set (workers_ignore_ctrl_c.py, dask_engine.ignore_ctrl_c), is not a KeyboardInterrupt there.
    A blocked mask would not do: the spawn clears it.  Only the main thread may set a handler,
    and blocks may overlap there (two Dask set-ups), so it comes back when the last one ends."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    global _ignoring, _handler_before
    if _ignoring == 0:
        _handler_before = signal.signal(signal.SIGINT, signal.SIG_IGN)
    _ignoring += 1
    try:
        yield
    finally:
        _ignoring -= 1
        if _ignoring == 0:
            signal.signal(signal.SIGINT, _handler_before)


_OPENBLAS_THREADS = "OPENBLAS_NUM_THREADS"


@contextlib.contextmanager
def one_blas_thread() -> Iterator[None]:
    """OPENBLAS_NUM_THREADS=1 in this process's environment while the forkserver starts from it.

    OpenBLAS (numpy's) starts a thread per core but one when it loads, and again in a worker when
    warm_up sets its thread count: threads that idle in the worker until its first judge fork.
    Workers use one BLAS thread anyway, and with this variable OpenBLAS starts none.
    """
    before = os.environ.get(_OPENBLAS_THREADS)
    os.environ[_OPENBLAS_THREADS] = "1"
    try:
        yield
    finally:
        if before is None:
            del os.environ[_OPENBLAS_THREADS]
        else:
            os.environ[_OPENBLAS_THREADS] = before


def stop_forkserver() -> None:
    """Stop this process's forkserver, if it runs; its workers must have ended."""
    pid = forkserver_pid()
    if pid is not None:
        # It exits once every process forked from it (and every judge forked from those) has
        # closed the pipe that keeps it alive: a judge still noticing its worker's end would keep
        # this waiting for a server with nothing left to do.
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    forget_forkserver()


@contextlib.contextmanager
def lifeline(context: ForkServerContext) -> Iterator[Connection]:
    """The reading end of a pipe whose writing end only this process holds: it closes when this
    process ends, however it ends (even killed), which the workers watch (see end_with)."""
    reader, writer = context.Pipe(duplex=False)
    try:
        yield reader
    finally:
        reader.close()
        writer.close()


def end_with(grader: Connection) -> None:
    """In a worker: be ended by the kernel the moment the grading process ends (its end of the
    lifeline closes), with no thread of its own.

    The worker forks a judge per submission, and a fork copies only the forking thread: any lock
    another thread held stays held in the child, so the worker runs no other thread.  Its own
    open file of the lifeline (each worker's, so that each is its owner) asks the kernel for
    SIGIO when the pipe becomes readable, which for this pipe, never written to, is only when the
    grader has ended; SIGIO's default action ends the process.  The forkserver cannot do it: it
    lives as long as any process forked from it does, and a pool worker waits for its next job
    for ever.
    """
    own = os.open(f"/proc/self/fd/{grader.fileno()}", os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    fcntl.fcntl(own, fcntl.F_SETOWN, os.getpid())
    fcntl.fcntl(own, fcntl.F_SETFL, fcntl.fcntl(own, fcntl.F_GETFL) | os.O_ASYNC)
    signal.signal(signal.SIGIO, signal.SIG_DFL)
    if select.select([own], [], [], 0)[0]:  # the grader ended before this was armed
        os._exit(1)


def end_processes(processes: Sequence[BaseProcess]) -> None:
    """Kill ``processes`` and wait for them: their sandboxes die with them (bwrap
    --die-with-parent) and their judges within a second (they watch their parent)."""
    for process in processes:
        with contextlib.suppress(ProcessLookupError, AttributeError):
            process.kill()  # AttributeError: a process that never started
    for process in processes:
        with contextlib.suppress(AssertionError):  # one that never started
            process.join()
