"""Public checks for the notebooks: a failure is one sentence, a pass is one line.

``torch.testing.assert_close`` buries the message under frames from inside torch. These helpers
raise a plain ``AssertionError`` whose message says what was expected, what was received and what
to look at, and print nothing to stderr (an nbgrader test cell with stderr output scores 0).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch


def _as_float64(value: Any) -> torch.Tensor | None:
    """``value`` as a float64 CPU tensor, or None when it is not numeric array-like."""
    if isinstance(value, torch.Tensor):
        return value.detach().to("cpu", torch.float64)
    if not isinstance(value, np.ndarray | np.generic | list | tuple | int | float):
        return None
    try:
        return torch.as_tensor(np.asarray(value, dtype=np.float64))
    except (TypeError, ValueError):
        return None


def _describe(value: Any) -> str:
    """A short description of what a check received."""
    shape = getattr(value, "shape", None)
    return f"{type(value).__name__} of shape {tuple(shape)}" if shape is not None else repr(value)


def _difference(actual: Any, expected: Any, atol: float, rtol: float) -> str | None:
    """How ``actual`` departs from ``expected`` in type, shape or values; None when it does not."""
    got, want = _as_float64(actual), _as_float64(expected)
    if got is None:
        return f"expected a tensor, got {_describe(actual)}"
    if got.shape != want.shape:
        return f"expected shape {tuple(want.shape)}, got {tuple(got.shape)}"
    wrong = ~torch.isclose(got, want, atol=atol, rtol=rtol)  # NaN never matches
    if not wrong.any():
        return None
    index = tuple(int(i) for i in wrong.nonzero()[0])
    where = f" at index {index}" if index else ""
    return (
        f"{int(wrong.sum())} of {wrong.numel()} values differ; first{where}: "
        f"got {got[index].item():.6g}, expected {want[index].item():.6g}"
    )


class PublicCheckFailed(AssertionError):
    """A failed public check: IPython (JupyterLab's kernel) renders its message alone, so no
    frame of this module pushes it below the fold (IPython ignores ``__tracebackhide__``)."""

    def _render_traceback_(self) -> list[str]:
        return [f"AssertionError: {self}"]


# The grader and nbgrader read the error's class name: a public check still fails as one.
PublicCheckFailed.__name__ = PublicCheckFailed.__qualname__ = "AssertionError"


def check(condition: object, message: str) -> None:
    """Raise AssertionError(message) unless ``condition`` is true."""
    __tracebackhide__ = True  # pytest and IPython's debugger skip this frame
    if not condition:
        raise PublicCheckFailed(message)


def check_close(
    actual: Any, expected: Any, message: str, *, atol: float = 1e-5, rtol: float = 1e-4
) -> None:
    """Raise AssertionError unless ``actual`` matches ``expected`` in shape and values.

    Tensors, NumPy arrays and nested lists compare alike, in float64; the message gets the
    first place where they differ.
    """
    __tracebackhide__ = True
    problem = _difference(actual, expected, atol, rtol)
    if problem is not None:
        raise PublicCheckFailed(f"{message} ({problem})")


def all_passed(topic: str) -> None:
    """Print the one line that says a cell's public checks passed."""
    print(f"\u2713 {topic}: all public checks passed")
