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


def _positions(q: torch.Tensor, device: torch.device | None, moved: bool) -> torch.Tensor:
    """Scores with the future hidden, the positions made with ``device`` (and moved to q's)."""
    n = q.shape[-2]
    rows, cols = torch.arange(n, device=device)[:, None], torch.arange(n, device=device)
    hidden = cols > rows
    scores = q @ q.transpose(-2, -1)
    return scores.masked_fill(hidden.to(q.device) if moved else hidden, float("-inf"))


@pytest.mark.parametrize(
    ("device", "moved", "seen"),
    [
        ("q", False, []),  # made with device=q.device
        (None, True, []),  # made on the default device, then moved where q is
        (None, False, ["meets", "arange"]),  # a GPU's masked_fill would raise here
    ],
)
def test_a_tensor_made_without_device_is_seen_where_it_meets_the_inputs(device, moved, seen):
    """07's device checks (issue 40's x07-03): grading has no GPU, so the call is followed."""
    q = torch.randn(2, 5, 3)
    where = q.device if device == "q" else None
    _, observed = observe_call("default_device", _positions, q, where, moved)
    assert observed == seen


def test_a_returned_tensor_made_without_device_is_seen():
    def out_on_the_default_device(q: torch.Tensor) -> torch.Tensor:
        out = torch.zeros(q.shape)
        out[:] = q  # a copy into it is allowed across devices; the result is not q's device
        return out

    assert observe_call("default_device", out_on_the_default_device, torch.ones(2, 3))[1] == [
        "returned",
        "zeros",
    ]
