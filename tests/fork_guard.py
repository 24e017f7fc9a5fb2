"""A test whose process forks beside a thread that the test started fails (loaded by conftest.py).

A fork copies only the forking thread, and a lock another thread held stays held in the child, so
Python 3.12 and later warn (DeprecationWarning) when a process with other threads forks.  The
suite cannot turn that warning into an error with filterwarnings: on 3.12 and 3.13 the error is
cleared inside os.fork() and the fork goes on, silently (python/cpython#135427).  So this module
counts the threads itself before each fork of a test process (os.fork(), multiprocessing's fork, a
subprocess with a preexec_fn), from the kernel's list, so that threads Python did not start count
too, as in CPython's warning, and fails the test phase that forked.

Only threads that the test started (its fixtures included) count: those already running when it
began are the harness's (under pytest-xdist, execnet's receiver, blocked reading its pipe), which
no grading process has and tests/test_mutants.py's ``in_a_fork`` forks beside, or ones an earlier
test left running, whose forks beside them this one did not ask for.
"""

from __future__ import annotations

import os
import threading
import traceback
from collections.abc import Generator
from pathlib import Path

import pytest

_TASKS = Path("/proc/self/task")


def _threads() -> set[str]:
    """The kernel's ids of this process's threads."""
    return {task.name for task in _TASKS.iterdir()}


def _name(thread: str) -> str:
    """A thread's name: Python's for a thread Python started, else the kernel's, or '?' once it
    has ended."""
    for started in threading.enumerate():
        if str(started.native_id) == thread:
            return started.name
    try:
        return (_TASKS / thread / "comm").read_text().strip()
    except OSError:
        return "?"


_before_the_test: set[str] = set()
_noted: list[str] = []


def a_test_begins() -> None:
    """Take the threads running now, but the calling one, as not the test's: a fork beside them
    alone is not noted."""
    _before_the_test.clear()
    _before_the_test.update(_threads() - {str(threading.get_native_id())})


def _note_a_fork_beside_threads() -> None:
    """Before this process forks: note where, if a thread besides the caller runs that the test
    started."""
    others = sorted(_threads() - _before_the_test - {str(threading.get_native_id())})
    if others:
        names = ", ".join(f"{_name(thread)} ({thread})" for thread in others)
        where = "".join(traceback.format_stack(limit=12)[:-1])  # the innermost callers
        _noted.append(f"forked beside {len(others)} other thread(s): {names}; at\n{where}")


def take_noted_forks() -> list[str]:
    """The forks noted since the last call (or the current test phase began), forgotten."""
    noted = _noted[:]
    _noted.clear()
    return noted


a_test_begins()
os.register_at_fork(before=_note_a_fork_beside_threads)


def _failing_on_a_noted_fork() -> Generator[None, object, object]:
    take_noted_forks()  # one made between phases (collection, another plugin) is not this test's
    result = yield
    noted = take_noted_forks()
    if noted:
        pytest.fail("a fork copies only the forking thread: " + "\n".join(noted), pytrace=False)
    return result


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Generator[None, object, object]:
    a_test_begins()
    return (yield from _failing_on_a_noted_fork())


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, object, object]:
    return (yield from _failing_on_a_noted_fork())


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item) -> Generator[None, object, object]:
    return (yield from _failing_on_a_noted_fork())
