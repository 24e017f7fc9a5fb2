"""Hidden inputs: generators seeded from the course secret, seeds and sizes drawn from them."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from typing import Literal, TypeVar

import torch

from autograder.authoring.hidden_seeds import hidden_seed

T = TypeVar("T")


def hidden_generator(label: str) -> torch.Generator:
    """A torch.Generator seeded from ``label`` and the course secret (:mod:`.hidden_seeds`)."""
    return torch.Generator().manual_seed(hidden_seed(label))


def draw_seed(generator: torch.Generator) -> int:
    """A seed for ``torch.manual_seed`` drawn from a hidden generator (model inits, dropout)."""
    return int(torch.randint(2**31, (1,), generator=generator))


def random_sizes(generator: torch.Generator, count: int, low: int = 2, high: int = 9) -> list[int]:
    """``count`` distinct sizes in [low, high], so no two axes can be confused."""
    if high - low + 1 < count:
        raise ValueError(f"cannot draw {count} distinct sizes from [{low}, {high}]")
    pool = torch.randperm(high - low + 1, generator=generator)[:count] + low
    return [int(x) for x in pool]


@contextlib.contextmanager
def under_seed(seed: int) -> Iterator[None]:
    """Run the block with torch's global RNG seeded by ``seed``, and restore the RNG after it: a
    check's draws neither follow nor move the random state of the student or of the next check."""
    with torch.random.fork_rng(devices=[]):
        # torch.manual_seed, less its lazy CUDA seeding where there is no GPU: that queues a
        # call with its stack formatted, 0.3 ms each, at every one of a grading's many draws
        torch.default_generator.manual_seed(seed)
        if torch.cuda.is_available():
            torch.cuda.manual_seed_all(seed)
        yield


def under_seeds(call: Callable[[], T], seeds: Sequence[int]) -> list[T]:
    """What ``call()`` gives under each of ``seeds`` in turn (:func:`under_seed`)."""
    outputs = []
    for seed in seeds:
        with under_seed(seed):
            outputs.append(call())
    return outputs


def eval_randomness(
    call: Callable[[], torch.Tensor], seed: int
) -> tuple[Literal["", "seeded", "unseeded"], torch.Tensor]:
    """How ``call()``, a model in eval mode, uses torch's global random numbers, and its output
    under ``seed``: "" where ``seed`` and ``seed + 1`` give the same output (it uses none),
    "seeded" where they differ but a second call under ``seed`` repeats the first (it draws from
    the global generator: dropout left on), "unseeded" where even that differs."""
    outputs = under_seeds(call, [seed, seed + 1])
    if torch.equal(outputs[0], outputs[1]):
        return "", outputs[0]
    seeded = torch.equal(under_seeds(call, [seed])[0], outputs[0])
    return ("seeded" if seeded else "unseeded"), outputs[0]
