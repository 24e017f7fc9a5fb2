"""The smallest public input on which an answer differs from the reference: a counterexample.

Where no known mistake explains a wrong value, naming a cause would be a guess.  A small input on
which the answer and the reference disagree is no guess: the student can run it, print what their
code computes step by step and see where it departs.  The inputs come from a fixed public seed,
never from a course's hidden draws, so showing them reveals nothing the checks keep secret; they
are tried smallest first, with small integer values, so the first one that differs is as easy to
work by hand as the mistake allows.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch
from torch import Tensor

from autograder.authoring.closeness import first_difference, is_close

# Not the course secret: anyone may reproduce these inputs.
PUBLIC_SEED = 20260
# Draws per size: one draw of small integers may hide a mistake (a tie, a zero).
DRAWS = 3


def small_integers(generator: torch.Generator, *shape: int) -> Tensor:
    """A float64 tensor of integers in [-2, 2]: simple to read and to compute by hand."""
    return torch.randint(-2, 3, shape, generator=generator).to(torch.float64)


def smallest_counterexample(
    answer: Callable[..., Any],
    reference: Callable[..., Any],
    inputs: Callable[[torch.Generator, tuple[int, ...]], dict[str, Tensor]],
    sizes: Sequence[tuple[int, ...]],
    *,
    atol: float = 1e-6,
) -> str | None:
    """The first input, over ``sizes`` (smallest first) and DRAWS draws each, on which
    ``answer(**args)`` differs from ``reference(**args)``, described; None if there is none.

    An input on which the answer raises is skipped: the checks report errors themselves.
    """
    generator = torch.Generator().manual_seed(PUBLIC_SEED)
    for size in sizes:
        for _ in range(DRAWS):
            args = inputs(generator, size)
            expected = reference(**args)
            try:
                with torch.no_grad():
                    got = answer(**{name: value.clone() for name, value in args.items()})
            except Exception:  # noqa: BLE001 - an error is another check's business
                continue
            if not (isinstance(got, Tensor) and got.shape == expected.shape):
                continue  # a shape mistake is told by the checks of shapes
            if not is_close(got, expected, atol=atol):
                return describe(args, got, expected, atol)
    return None


def describe(args: dict[str, Tensor], got: Tensor, expected: Tensor, atol: float) -> str:
    """'a small input on which yours differs (...): q = [...], k = [...]; yours gives [...],
    expected [...]', with where they first differ when there are many values."""
    shown = ", ".join(f"{name} = {_values(value)}" for name, value in args.items())
    where = f" ({first_difference(got, expected, atol)})" if got.numel() > 8 else ""
    return (
        f"a small input on which yours differs (public, not a hidden input): {shown}; yours "
        f"gives {_values(got)}, expected {_values(expected)}{where}"
    )


def _values(tensor: Tensor) -> str:
    """A tensor's values as nested lists, at most 4 significant digits."""
    rounded = [float(f"{value:.4g}") for value in tensor.detach().double().flatten().tolist()]
    nested: Any = rounded
    for size in reversed(tensor.shape[1:]):
        nested = [nested[i : i + size] for i in range(0, len(nested), size)]
    text = str(nested).replace(".0,", ",").replace(".0]", "]")
    return text if tensor.dim() else str(rounded[0])
