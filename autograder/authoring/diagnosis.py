"""Diagnosing a wrong value: the known mistake whose output it matches, or where it differs."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import torch

from autograder.authoring.closeness import first_difference, is_close
from autograder.authoring.mistakes import Mistake, catalogue
from autograder.authoring.registry import fail

SQUEEZED = (
    "an axis of size 1 disappeared (a batch of one, one head, or a length of one): squeeze() "
    "drops every such axis, and squeeze(dim) drops axis dim whenever its size is 1: keep every "
    "axis of the expected shape"
)


def squeezed_mistake(assignment: str) -> Mistake:
    """SQUEEZED as a named mistake of ``assignment``: any of its exercises may make it, and
    :func:`diagnose` (or a check, through :func:`squeezed`) names it only where the answer has the
    expected shape with its size-1 axes dropped. Its key is "shapes.squeezed"."""
    return catalogue(assignment, "shapes", {"axes of size 1": {"squeezed": SQUEEZED}})["squeezed"]


def squeezed(actual: Any, expected_shape: Sequence[int]) -> bool:
    """True when ``actual`` is a tensor of ``expected_shape`` with its size-1 axes dropped."""
    kept = tuple(size for size in expected_shape if size != 1)
    shape = tuple(getattr(actual, "shape", ()))
    return isinstance(actual, torch.Tensor) and shape != tuple(expected_shape) and shape == kept


def size_one_axes(expected_shape: Sequence[int], names: Sequence[str]) -> str:
    """The names of the axes of size 1 of ``expected_shape``, whose axes are ``names``: "the
    axis H", "the axes B, H" (those a squeezed answer lacks, :func:`squeezed`)."""
    ones = [name for name, size in zip(names, expected_shape, strict=True) if size == 1]
    return f"the axis {ones[0]}" if len(ones) == 1 else f"the axes {', '.join(ones)}"


def diagnose(
    actual: Any,
    expected: torch.Tensor,
    mistakes: Mapping[Any, torch.Tensor],
    otherwise: str,
    *,
    atol: float = 1e-5,
    counterexample: Callable[[], str | None] | None = None,
) -> None:
    """Pass if ``actual`` matches ``expected``; else fail naming the known mistake it matches.

    mistakes: diagnosis (a str or a :class:`~autograder.authoring.mistakes.Mistake`) -> what a
    submission with that misconception would return. A mistake is named only when ``actual``
    matches its output and no other mistake's: where two match, the answer could make either.
    otherwise: what is wrong when no known mistake matches; where the values first differ, and
    by how much, is added to it, and then, where ``counterexample`` finds one, a small public
    input on which the answer differs (autograder/authoring/counterexample.py).
    """
    if is_close(actual, expected, atol=atol):
        return
    if squeezed(actual, expected.shape):
        fail(f"{SQUEEZED} (expected shape {tuple(expected.shape)}, got {tuple(actual.shape)})")
    # A NaN or inf answer matches a mistake only where that mistake has its NaN and inf, and
    # its other values: a NaN elsewhere is another fault.
    matched = [
        str(diagnosis)
        for diagnosis, value in mistakes.items()
        if is_close(actual, value, atol=atol, equal_nan=True)
    ]
    if len(set(matched)) == 1:
        fail(matched[0])
    if isinstance(actual, torch.Tensor) and actual.shape != expected.shape:
        fail(f"{otherwise} (expected shape {tuple(expected.shape)}, got {tuple(actual.shape)})")
    found = counterexample() if counterexample is not None else None
    seen = f"{otherwise} ({first_difference(actual, expected, atol)})"
    fail(f"{seen}\n{found}" if found else seen)


def borne_out(
    cases: Sequence[tuple[Any, torch.Tensor, Mapping[Any, torch.Tensor]]],
    *,
    atol: float = 1e-5,
    where_defined: bool = False,
) -> set[Any]:
    """The mistakes whose output the answer matches on every case it gets wrong, of ``cases``
    (actual, expected, {mistake: its output}): on one draw two mistakes may give the same
    numbers (1/d_k and 1/√d_v when d_v = d_k²), and the other draws tell them apart.
    ``where_defined``: a mistake that a case leaves out (one about an axis its input lacks) is
    judged on the wrong cases that hold it, at least one."""
    wrong = [case for case in cases if not is_close(case[0], case[1], atol=atol)]
    return {
        mistake
        for mistake in set().union(*(mistakes for _, _, mistakes in wrong))
        if all(
            is_close(actual, mistakes[mistake], atol=atol, equal_nan=True)
            if mistake in mistakes
            else where_defined
            for actual, _, mistakes in wrong
        )
    }
