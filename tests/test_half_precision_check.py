"""05's half-precision check of `masked_mean` tells what half precision changes, and only that.

Blind answer v05-01 hard-coded the pad id to 0. Its mean was wrong at every dtype, and the check
`masked_mean_keeps_half_precision` failed too, saying it differed "from the mean over the real
positions by more than float16 rounding": a title that reads as a precision mistake the answer
does not make (its author's remark). The check now compares the answer's half-precision mean with
its own in float64, so a mean wrong at every dtype is left to the value checks.
"""

from __future__ import annotations

import pytest
import torch
from torch import Tensor

from autograder.authoring.registry import CheckFailed
from autograder.checks.a05_sentiment.masked_mean import masked_mean_keeps_half_precision


def mean_of_the_ids_other_than_0(hidden: Tensor, token_ids: Tensor, pad_id: int) -> Tensor:
    """The pad id hard-coded to 0, computed in hidden's dtype."""
    keep = (token_ids != 0).unsqueeze(-1).to(hidden.dtype)
    return (hidden * keep).sum(1) / keep.sum(1).clamp(min=1)


def mean_off_in_half_precision(hidden: Tensor, token_ids: Tensor, pad_id: int) -> Tensor:
    """Right in float64, a tenth off in float16 and bfloat16."""
    keep = (token_ids != pad_id).unsqueeze(-1).to(hidden.dtype)
    mean = (hidden * keep).sum(1) / keep.sum(1).clamp(min=1)
    return mean + 0.1 if hidden.dtype in (torch.float16, torch.bfloat16) else mean


def test_a_mean_wrong_at_every_dtype_is_not_told_of_half_precision() -> None:
    masked_mean_keeps_half_precision({"masked_mean": mean_of_the_ids_other_than_0})


def test_a_mean_that_half_precision_alone_makes_wrong_fails() -> None:
    with pytest.raises(CheckFailed, match="what it returns for the same values in float64"):
        masked_mean_keeps_half_precision({"masked_mean": mean_off_in_half_precision})
