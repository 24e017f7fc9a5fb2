"""tests/fork_guard.py notes a fork of the test process beside a thread the test started, and only
such a fork: filterwarnings cannot catch it on Python 3.12 and 3.13 (the module says why)."""

from __future__ import annotations

import os
import threading
import warnings

from tests.fork_guard import a_test_begins, take_noted_forks


def _fork_a_child_that_exits() -> None:
    with warnings.catch_warnings():
        # Python 3.12 and later warn of this fork; under filterwarnings' error the warning
        # vanishes, and this test checks what notes the fork instead.
        warnings.simplefilter("ignore", DeprecationWarning)
        child = os.fork()
    if child == 0:
        os._exit(0)
    os.waitpid(child, 0)


def _fork_beside_a_thread(already_running: bool) -> list[str]:
    """The forks noted when this process forks beside a thread started now, taken as one that
    ran before the test began or not."""
    stop = threading.Event()
    beside = threading.Thread(target=stop.wait, name="beside-a-fork")
    beside.start()
    try:
        if already_running:
            a_test_begins()
        _fork_a_child_that_exits()
    finally:
        stop.set()
        beside.join()
    return take_noted_forks()  # taken, so that this test passes


def test_a_fork_beside_a_thread_the_test_started_is_noted_with_where_it_was_asked_for():
    (noted,) = _fork_beside_a_thread(already_running=False)
    assert "forked beside 1 other thread(s): beside-a-fork" in noted, noted
    assert "in _fork_a_child_that_exits" in noted, noted


def test_a_fork_beside_no_thread_the_test_started_is_not_noted():
    _fork_a_child_that_exits()  # under xdist, beside execnet's receiver
    assert take_noted_forks() == []
    assert _fork_beside_a_thread(already_running=True) == []  # as one an earlier test left
