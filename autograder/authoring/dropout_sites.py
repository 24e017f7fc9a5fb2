"""Where a train-mode output says dropout sits: masks recovered from the output itself.

Comparing a student's train-mode output with the reference's under one seed would fail correct
answers that draw their random numbers in another order (two dropout calls swapped, a mask from
``torch.bernoulli``). These helpers ask instead which masks, at which site, explain the output
the student's code produced: a property of the output, whatever drew the masks.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor

# Two computations of one value differ by far less (a float32 factor such as 1/(1-p) included);
# two masks' outputs by far more.
MATCH_ATOL = 1e-6
# Drop rates within this of p pass: the recovered masks hold hundreds of units (a standard
# error of about 0.02), so a correct dropout never misses it and a wrong p rarely hits it.
RATE_TOLERANCE = 0.15


def all_masks(units: int, dtype: torch.dtype = torch.float64) -> Tensor:
    """Every 0/1 mask over ``units`` units: (2**units, units)."""
    codes = torch.arange(2**units)
    return ((codes[:, None] >> torch.arange(units)) & 1).to(dtype)


def matching_rows(observed: Tensor, candidates: Tensor) -> Tensor:
    """observed (N, d), candidates (N, K, d) -> (N,) index of the first candidate equal to each
    row, -1 where none is."""
    close = ((candidates - observed[:, None]).abs() <= MATCH_ATOL).all(-1)  # (N, K)
    index = close.to(torch.int8).argmax(-1)
    return torch.where(close.any(-1), index, -1)


def explained(observed: Tensor, site: Callable[[Tensor], Tensor], units: int) -> Tensor | None:
    """The (N, units) 0/1 masks that make ``site`` give ``observed`` (N, d) row by row, or None
    when some row has none.

    site: masks (K, units) -> the outputs they give, (N, K, d).
    """
    masks = all_masks(units, observed.dtype)
    index = matching_rows(observed, site(masks))
    if (index < 0).any():
        return None
    return masks[index]


def drop_rate(masks: Tensor, observable: Tensor | None = None) -> float:
    """The share of zeros in ``masks``, over the units where a drop shows (``observable``)."""
    kept = masks if observable is None else masks[observable]
    return float(1 - kept.mean()) if kept.numel() else 0.0
