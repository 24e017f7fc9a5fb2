"""Where a train-mode output says dropout sits: masks recovered from the output itself.

Comparing a student's train-mode output with the reference's under one seed would fail correct
answers that draw their random numbers in another order (two dropout calls swapped, a mask from
``torch.bernoulli``). These helpers ask instead which masks, at which site, explain the output
the student's code produced: a property of the output, whatever drew the masks.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import Tensor

# Two computations of one value differ by far less (a float32 factor such as 1/(1-p) included);
# two masks' outputs by far more.
MATCH_ATOL = 1e-6
# Drop rates within this of p pass: the recovered masks hold hundreds of units (a standard
# error of about 0.02), so a correct dropout never misses it and a wrong p rarely hits it.
RATE_TOLERANCE = 0.15
# Values this small show no drop: zeroed or kept, they stay within MATCH_ATOL of 0.
VISIBLE = 1e-3


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


@dataclass(frozen=True)
class Drop:
    """One tensor as another with entries dropped: the share zeroed and the kept ones' factor."""

    rate: float  # the share of the entries zeroed, over those that show a drop
    factor: float | None  # what every kept entry is multiplied by (None: none is kept)

    def describe(self) -> str:
        """What was dropped, in words: "35% of the values zeroed, the others times 1.538"."""
        kept = "" if self.factor is None else f", the others multiplied by {self.factor:.3f}"
        return f"{self.rate:.0%} of the values zeroed{kept}"


def elementwise_drop(seen: Tensor, clean: Tensor) -> Drop | None:
    """``seen`` as ``clean`` (same shape) with entries zeroed and the others all multiplied by
    one factor, or None when it is not."""
    seen, clean = seen.detach().double().flatten(), clean.detach().double().flatten()
    shows = clean.abs() > VISIBLE
    zeroed = seen.abs() <= MATCH_ATOL
    ratios = seen[shows & ~zeroed] / clean[shows & ~zeroed]
    rate = float(zeroed[shows].double().mean()) if shows.any() else 0.0
    if ratios.numel() == 0:
        return Drop(rate, None)
    factor = float(ratios.median())
    if ((ratios - factor).abs() > 1e-6 * abs(factor)).any():
        return None
    return Drop(rate, factor)


def mismatch_kind(drop: Drop, p: float) -> str | None:
    """How ``drop`` departs from dropout with probability ``p``, or None when it does not:
    "all_zeroed", "rate" (scaled right, another share zeroed), "twice" (two dropouts at p in a
    row), "unscaled" (the kept values not scaled), "keep_probability" or "other_rate" (exactly
    dropout at 1 - p, or at another rate), "scale" (any other factor)."""
    expected = 1 / (1 - p)
    factor = drop.factor
    if factor is None:
        return "all_zeroed"
    if abs(factor - expected) <= 1e-6 * expected:
        return None if abs(drop.rate - p) <= RATE_TOLERANCE else "rate"
    twice = 1 - (1 - p) ** 2  # two dropouts in a row zero this share, and keep at 1/(1-p)**2
    if abs(factor - expected**2) <= 1e-6 * expected**2 and abs(drop.rate - twice) <= RATE_TOLERANCE:
        return "twice"
    if abs(factor - 1) <= 1e-6:
        return "unscaled"
    implied = implied_rate(drop)
    if implied is not None and abs(drop.rate - implied) <= RATE_TOLERANCE:
        return "keep_probability" if abs(implied - (1 - p)) <= 1e-3 else "other_rate"
    return "scale"


def implied_rate(drop: Drop) -> float | None:
    """The p whose 1/(1-p) is the factor of ``drop``, None where no p in [0, 1) gives it."""
    return 1 - 1 / drop.factor if drop.factor is not None and drop.factor > 1 else None


def dropout_mismatch(drop: Drop, p: float) -> str | None:
    """Why ``drop`` is not dropout with probability ``p`` (each value zeroed with probability p,
    the others scaled by 1/(1-p)), or None when it is."""
    kind = mismatch_kind(drop, p)
    expected = 1 / (1 - p)
    if kind is None:
        return None
    if kind == "all_zeroed":
        return f"every value is zeroed, for dropout={p}"
    if kind == "rate":
        return (
            f"{drop.rate:.0%} of the values are zeroed for dropout={p}, the kept ones scaled by "
            "1/(1-p): zero each value with probability p"
        )
    if kind == "twice":
        return f"the values are dropped twice ({drop.describe()}: 1/(1-p) squared, for dropout={p})"
    if kind == "unscaled":
        return (
            f"the kept values are not scaled by 1/(1-p) = {expected:.3f} ({drop.describe()}): "
            "dropout divides what it keeps by (1 - p), so the expected value stays the same"
        )
    if kind in ("keep_probability", "other_rate"):
        keep = " (the keep probability 1 - p)" if kind == "keep_probability" else ""
        return (
            f"the values are dropped as by dropout={implied_rate(drop):.3f}{keep}, not "
            f"dropout={p} ({drop.describe()})"
        )
    return (
        f"the kept values are scaled by {drop.factor:.3f}, not by 1/(1-p) = {expected:.3f} "
        f"({drop.describe()})"
    )
