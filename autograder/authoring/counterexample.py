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
from torch import Tensor, nn

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


def small_parameters(module: nn.Module, generator: torch.Generator) -> dict[str, Tensor]:
    """A state dict for ``module`` whose parameters are float64 integers in [-1, 1] (its buffers
    kept): small enough that a softmax of their products does not saturate at once."""
    state = {name: value.detach().clone() for name, value in module.state_dict().items()}
    for name, parameter in module.named_parameters():
        state[name] = torch.randint(-1, 2, parameter.shape, generator=generator).to(torch.float64)
    return state


def smallest_module_counterexample(
    answer: Callable[[tuple[int, ...]], nn.Module],
    reference: Callable[[tuple[int, ...]], nn.Module],
    inputs: Callable[[torch.Generator, tuple[int, ...]], dict[str, Tensor]],
    sizes: Sequence[tuple[int, ...]],
    *,
    output: Callable[[Any], Any] = lambda result: result,
    keywords: bool = False,
    atol: float = 1e-6,
) -> str | None:
    """The first input and parameters, over ``sizes`` (smallest first) and DRAWS draws each, on
    which the module ``answer(size)`` differs from ``reference(size)`` given the same small
    integer parameters (:func:`small_parameters`), both in float64 and eval mode; described with
    the parameters first; None if there is none.

    output: what is compared of a call's result (``lambda r: r[1]``: the weights of a pair).
    keywords: call ``module(**args)``, for a forward whose argument names the statement fixes;
    otherwise ``module(*args.values())``, whatever the answer names them.
    A size whose parameters the answer's module cannot load, or on which it raises, is skipped:
    the checks report those themselves.
    """
    generator = torch.Generator().manual_seed(PUBLIC_SEED)
    for size in sizes:
        for _ in range(DRAWS):
            with torch.random.fork_rng(devices=[]):
                theirs = reference(size).double().eval()
            parameters = small_parameters(theirs, generator)
            theirs.load_state_dict(parameters)
            args = inputs(generator, size)
            expected = output(_call(theirs, args, keywords))
            try:
                with torch.random.fork_rng(devices=[]):
                    mine = answer(size).double().eval()
                mine.load_state_dict(parameters)
                got = output(_call(mine, args, keywords))
            except Exception:  # noqa: BLE001 - an error is another check's business
                continue
            if not (isinstance(got, Tensor) and got.shape == expected.shape):
                continue  # a shape mistake is told by the checks of shapes
            if not is_close(got, expected, atol=atol):
                learned = dict(theirs.named_parameters())
                shown = {name: value for name, value in parameters.items() if name in learned}
                return describe({**shown, **args}, got, expected, atol)
    return None


def _call(module: nn.Module, args: dict[str, Tensor], keywords: bool) -> Any:
    """module on copies of ``args``, by name or in order, without autograd."""
    given = {name: value.clone() for name, value in args.items()}
    with torch.no_grad():
        return module(**given) if keywords else module(*given.values())
