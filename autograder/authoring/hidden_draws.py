"""Hidden inputs: generators seeded from the course secret, seeds and sizes drawn from them."""

from __future__ import annotations

import torch

from autograder.authoring.hidden_seeds import hidden_seed


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
