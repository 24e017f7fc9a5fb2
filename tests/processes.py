"""Finding this test's own processes in /proc: other tests grade on the same machine at once."""

from __future__ import annotations

import multiprocessing
import os
from pathlib import Path

from autograder.private_apis import children_allowed


def parent_of(pid: int) -> int:
    """The parent PID of ``pid``; LookupError (or OSError) once it has gone."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("PPid:"):
            return int(line.split()[1])
    raise LookupError(pid)


def descends_from_this_process(pid: int) -> bool:
    """Whether ``pid`` is a child, grandchild, ... of the calling process."""
    while pid > 1:
        pid = parent_of(pid)
        if pid == os.getpid():
            return True
    return False


def start_a_child_of_a_daemon(results: multiprocessing.Queue) -> None:
    """In a daemonic process: whether it may start a child, refused and then allowed."""
    child = multiprocessing.get_context("spawn").Process(target=os.getpid)
    try:
        child.start()
    except AssertionError as refusal:
        results.put(("refused", str(refusal)))
    with children_allowed():
        child.start()
    child.join()
    results.put(("allowed", child.exitcode))
