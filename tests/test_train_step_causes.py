"""05's `train_step`: a cause outside the simulated mistakes is named only where an experiment on
the answer confirms it (issue 40), here a step that sets torch's random state itself."""

from __future__ import annotations

import pytest
import torch
from torch import Tensor, nn
from torch.nn import functional as F

from autograder.authoring.registry import grade_cell

A = "05_sentiment"
pytestmark = pytest.mark.slow  # seconds: the cell's three checks, twice per test


def a_step(seed: int | None = None, updates: int = 1):  # noqa: ANN201
    """train_step as the statement asks, but seeding torch first (``seed``) or stepping the
    optimizer ``updates`` times."""

    def train_step(
        model: nn.Module, inputs: Tensor, labels: Tensor, optimizer, max_grad_norm, scheduler=None
    ) -> float:
        if seed is not None:
            torch.manual_seed(seed)  # "for reproducibility", as blind answer ab05-04 did
        model.train()
        loss = F.cross_entropy(model(inputs), labels)
        optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
        for _ in range(updates):
            optimizer.step()
        if scheduler is not None:
            scheduler.step()
        return loss.item()

    return train_step


def told(train_step) -> str:  # noqa: ANN001
    grade = grade_cell(A, "test_train_step", {"train_step": train_step, "torch": torch, "nn": nn})
    return grade.describe()


def test_a_step_that_seeds_torch_is_told_so_whatever_seed_it_sets():
    for seed in (0, 1234):
        message = told(a_step(seed=seed))
        assert "train_step sets torch's random state itself" in message, message


def test_a_step_wrong_another_way_is_not_told_it_seeds_torch():
    message = told(a_step(updates=2))
    assert "hidden checks: 3 of 3 passed" not in message, message  # it is wrong
    assert "random state" not in message, message
    assert "hidden checks: 3 of 3 passed" in told(a_step())
