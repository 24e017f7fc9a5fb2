"""Observations of a call are made in the process that runs it (authoring/kernel_objects.py)."""

import pytest
import torch

from autograder.authoring.kernel_objects import ObservedElsewhere, observe_call
from autograder.judging import proxies


def test_a_local_call_is_observed_here():
    _, peak = observe_call("peak_bytes", lambda: torch.zeros(1024, 1024))
    assert peak >= 4 * 2**20


def test_a_local_call_that_reaches_a_kernel_is_not_observed(monkeypatch: pytest.MonkeyPatch):
    """A repair's wrapper of a kernel's answer (issue 40, blind answer i07-06): its peak measured
    here holds nothing of the answer's, so a memory check passed on it and confirmed a cause."""

    def wrapper() -> None:
        monkeypatch.setattr(proxies, "_SENT", [proxies.requests_sent() + 1])  # a request sent

    with pytest.raises(ObservedElsewhere):
        observe_call("peak_bytes", wrapper)


def test_calls_held_keep_every_result_until_the_last_call_returns():
    """04's DepthStack check (blind answer t04-02): a list that every call returns and refills is
    seen, as one object and by what it holds after the later call."""
    kept: list[int] = []

    def refills(n: int) -> tuple[int, list[int]]:
        kept.clear()
        kept.extend(range(n))
        return n, kept

    results, shared = observe_call("calls_held", refills, 2, 3)
    assert results == [(2, [0, 1, 2]), (3, [0, 1, 2])] and shared == [[0, 1, 1]]
    results, shared = observe_call("calls_held", lambda n: (n, list(range(n))), 2, 3)
    assert results == [(2, [0, 1]), (3, [0, 1, 2])] and shared == []
