"""03's LayerNorm check names an eps mistake under any course secret.

With d_model = 2 a missing eps and an eps added outside the square root can give the same numbers
on one draw, and a check that named only a mistake matched alone on its first failing draw gave
blind answer s03-03 (eps outside the root) a counterexample under its course's secret, and its
cause under the tests'. The check now names the mistake every failing draw bears out.
"""

from __future__ import annotations

import pytest
import torch
from torch import nn

from autograder.authoring.hidden_seeds import secret_in_use
from autograder.authoring.registry import CheckFailed
from autograder.checks.a03_transformer_block.layer_norm import NORM, layer_norm_matches_torch

SECRETS = [f"a course secret for the layer norm draws, number {i:04d}".encode() for i in range(24)]


def layer_norm(denominator) -> type:
    """A LayerNorm whose forward divides x - mean by ``denominator(variance, eps)``."""

    class LayerNorm(nn.Module):
        def __init__(self, d_model: int, eps: float = 1e-5):
            super().__init__()
            self.eps = eps
            self.weight = nn.Parameter(torch.ones(d_model))
            self.bias = nn.Parameter(torch.zeros(d_model))

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            mean = x.mean(dim=-1, keepdim=True)
            var = ((x - mean) ** 2).mean(dim=-1, keepdim=True)
            return self.weight * (x - mean) / denominator(var, self.eps) + self.bias

    return LayerNorm


ANSWERS = {
    "eps_outside": layer_norm(lambda var, eps: torch.sqrt(var) + eps),
    "fixed_eps_outside": layer_norm(lambda var, eps: torch.sqrt(var) + 1e-5),
    "no_eps": layer_norm(lambda var, eps: torch.sqrt(var)),
}


@pytest.mark.parametrize("mistake", sorted(ANSWERS))
def test_an_eps_mistake_is_named_under_every_secret(mistake: str) -> None:
    told = []
    for secret in SECRETS:
        with secret_in_use(secret), pytest.raises(CheckFailed) as failed:
            layer_norm_matches_torch({"LayerNorm": ANSWERS[mistake]})
        told.append(str(failed.value))
    assert all(str(NORM[mistake]) in message for message in told), told
