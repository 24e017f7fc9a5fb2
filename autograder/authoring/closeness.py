"""Whether an answer is close to an oracle's value, and where it first departs from it."""

from __future__ import annotations

from typing import Any

import torch


def is_close(
    actual: Any,
    expected: torch.Tensor,
    atol: float = 1e-5,
    rtol: float = 1e-4,
    *,
    equal_nan: bool = False,
) -> bool:
    """True when ``actual`` is a tensor of ``expected``'s shape and values; NaN never matches,
    unless ``equal_nan`` (a mistake's output NaN in places): then NaN matches NaN alone."""
    if not isinstance(actual, torch.Tensor) or actual.shape != expected.shape:
        return False
    actual = actual.detach().to(torch.float64).cpu()
    expected = expected.detach().to(torch.float64).cpu()
    return bool(torch.allclose(actual, expected, atol=atol, rtol=rtol, equal_nan=equal_nan))


def first_difference(actual: Any, expected: torch.Tensor, atol: float = 1e-5) -> str:
    """Where ``actual`` first departs from ``expected`` (same shape), and by how much at most."""
    if not isinstance(actual, torch.Tensor):
        return f"expected a tensor, got {type(actual).__name__}"
    got = actual.detach().to(torch.float64).cpu()
    want = expected.detach().to(torch.float64).cpu()
    differs = ~torch.isclose(got, want, atol=atol, rtol=1e-4)
    if not differs.any():
        return "the values agree within the tolerance"
    where = tuple(int(i) for i in differs.nonzero()[0])
    gap = (got - want).abs().nan_to_num(float("inf"))
    shown_got, shown_want = told_apart(got[where].item(), want[where].item())
    return (
        f"first difference at index {where}: got {shown_got}, expected {shown_want}; "
        f"{int(differs.sum())} of {differs.numel()} values differ, by up to {gap.max().item():.3g}"
    )


def told_apart(got: float, expected: float, digits: int = 4) -> tuple[str, str]:
    """Two numbers that differ, printed with ``digits`` significant digits or as many more as it
    takes for them to print differently (issue 40's blind answer i05-04 read "got -0.3009,
    expected -0.3009"); numbers that are equal print alike."""
    for shown in range(digits, 18):
        pair = f"{got:.{shown}g}", f"{expected:.{shown}g}"
        if pair[0] != pair[1]:
            return pair
    return f"{got:.{digits}g}", f"{expected:.{digits}g}"


def not_finite(actual: torch.Tensor, what: str = "the output") -> str:
    """Where ``actual`` holds NaN or inf (some value must): how many values, and the first's
    index."""
    bad = ~torch.isfinite(actual.detach())
    first = tuple(int(i) for i in bad.nonzero()[0])
    return (
        f"{what} of shape {tuple(actual.shape)} holds NaN or inf at {int(bad.sum())} of "
        f"{bad.numel()} values, first at index {first}"
    )
