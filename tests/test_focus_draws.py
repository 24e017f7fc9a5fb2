"""04's calibration check catches a focus score that reads the number of keys from the first axis,
under any course secret.

Blind answer v04-05 normalised the entropy by log(len(weights)) and clamped the score to [0, 1]:
wherever the batch's first axis is shorter than the rows, uniform rows score 0 all the same. The
check drew that axis from 2 to 5 and the number of keys from 2 to 9 and above, so under some
secrets every uniform case had at least as many keys as rows, and the answer kept full marks. The
check now also scores more uniform rows than keys.
"""

from __future__ import annotations

import math

import torch

from autograder.authoring.hidden_seeds import secret_in_use
from autograder.authoring.registry import CheckFailed
from autograder.checks.a04_depth import attention_focus_is_calibrated

SECRETS = [f"a course secret for the focus draws, number {i:04d}".encode() for i in range(24)]


def focus_of_the_first_axis(weights: torch.Tensor) -> torch.Tensor:
    """1 - H / log(len(weights)), clamped to [0, 1]: the number of keys read from the wrong axis."""
    n = len(weights)
    if n < 2:
        return torch.ones(weights.shape[:-1], dtype=weights.dtype)
    entropy = -torch.special.xlogy(weights, weights).sum(dim=-1)
    return (1.0 - entropy / math.log(n)).clamp(0.0, 1.0)


def test_a_score_that_reads_the_first_axis_fails_under_every_secret() -> None:
    escaped = []
    for secret in SECRETS:
        with secret_in_use(secret):
            try:
                attention_focus_is_calibrated({"attention_focus": focus_of_the_first_axis})
            except CheckFailed:
                continue
        escaped.append(secret)
    assert not escaped, f"full marks under {len(escaped)} of {len(SECRETS)} secrets"
