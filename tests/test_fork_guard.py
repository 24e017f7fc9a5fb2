"""tests/fork_guard.py notes a fork of the test process beside a thread the test started, and only
such a fork: filterwarnings cannot catch it on Python 3.12 and 3.13 (the module says why)."""

from __future__ import annotations

import os
import threading
import warnings

from tests.fork_guard import take_noted_forks


def _fork_a_child_that_exits() -> None:
    with warnings.catch_warnings():
        # Python 3.12 and later warn of this fork; under filterwarnings' error the warning
        # vanishes, and this test checks what notes the fork instead.
        warnings.simplefilter("ignore", DeprecationWarning)
        child = os.fork()
    if child == 0:
        os._exit(0)
    os.waitpid(child, 0)


def test_a_fork_beside_a_thread_the_test_started_is_noted_with_where_it_was_asked_for():
    stop = threading.Event()
    beside = threading.Thread(target=stop.wait, name="beside-a-fork")
    beside.start()
    try:
        _fork_a_child_that_exits()
    finally:
        stop.set()
        beside.join()
    (noted,) = take_noted_forks()  # taken, so that this test passes
    assert "forked beside 1 other thread(s): beside-a-fork" in noted, noted
    assert "in _fork_a_child_that_exits" in noted, noted


def test_a_fork_beside_no_thread_but_the_harness_is_not_noted():
    _fork_a_child_that_exits()
    assert take_noted_forks() == []
