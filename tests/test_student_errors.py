"""Errors raised by the student's code become a likely cause, with the original error kept."""

from __future__ import annotations

import warnings
from collections.abc import Callable

import numpy as np
import pytest
import torch
from torch.nn import functional as F

from autograder.authoring.registry import Check, CheckFailed, run_check
from autograder.authoring.student_errors import explain, likely_cause

Q = torch.randn(2, 3, 5, 4)  # (B, H, L_q, d_k)
K = torch.randn(2, 3, 6, 4)  # (B, H, L_k, d_k)
SCORES = torch.randn(2, 3, 5, 6)  # (B, H, L_q, L_k)


def k_dot_t() -> None:
    with warnings.catch_warnings():  # torch warns that .T on 4-D tensors is deprecated
        warnings.simplefilter("ignore")
        Q @ K.T


MISTAKES: dict[str, tuple[Callable[[], object], str]] = {
    "k.T on a batched tensor": (k_dot_t, "k.transpose(-2, -1)"),
    "bmm given 4-D input": (lambda: torch.bmm(Q, K.transpose(-2, -1)), "torch.bmm takes 3-D"),
    "Linear on the wrong axis": (
        lambda: torch.nn.Linear(5, 3)(torch.randn(2, 4)),
        "inner sizes of a matrix product differ",
    ),
    "cross_entropy on (B, L, V) logits": (
        lambda: F.cross_entropy(torch.randn(2, 5, 7), torch.randint(7, (2, 5))),
        "flatten the logits to (B*L, V)",
    ),
    "cross_entropy with flat targets only": (
        lambda: F.cross_entropy(torch.randn(2, 5, 7), torch.randint(7, (10,))),
        "flatten the logits to (B*L, V)",
    ),
    "mask of the wrong shape": (
        lambda: SCORES.masked_fill(torch.ones(5, 5, dtype=torch.bool), 0.0),
        "mask lack the head axis",
    ),
    "(B, L_q, L_k) mask expanded to the heads without unsqueeze": (
        lambda: torch.ones(2, 5, 6, dtype=torch.bool).expand(2, 3, 5, 6),
        "a mask must broadcast to the scores' shape",
    ),
    "view after a transpose": (
        lambda: Q.transpose(1, 2).view(2, 5, 12),
        ".reshape(...) or .contiguous().view(...)",
    ),
    "view with the wrong sizes": (lambda: Q.view(2, 7, 4), "more or fewer elements"),
    "an axis squeezed away": (lambda: Q[:1].squeeze().sum(dim=3), "did squeeze() drop an axis"),
    "NumPy q @ k without the transpose": (
        lambda: np.ones((3, 4)) @ np.ones((5, 4)),
        "inner sizes of a matrix product differ",
    ),
}


@pytest.mark.parametrize("name", MISTAKES)
def test_a_real_error_gets_its_likely_cause_and_keeps_the_original(name: str):
    mistake, phrase = MISTAKES[name]
    with pytest.raises(Exception) as raised:
        mistake()
    cause, original = explain(raised.value).split("\n")
    assert phrase in cause
    assert original == f"your code raised {type(raised.value).__name__}: {raised.value}"


def test_an_unknown_error_is_reported_as_it_is():
    error = KeyError("vocab")
    assert likely_cause(str(error)) is None
    assert explain(error) == "your code raised KeyError: 'vocab'"


def test_a_check_that_calls_failing_student_code_reports_the_cause_first():
    def check(namespace: dict) -> None:
        namespace["attention"](Q, K)

    def attention(q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
        return torch.bmm(q, k.transpose(-2, -1))

    with pytest.raises(CheckFailed) as failed:
        run_check(
            Check("01_attention", "test_x", "calls_attention", check), {"attention": attention}
        )
    first, second = str(failed.value).split("\n")
    assert first.startswith("[calls_attention] torch.bmm takes 3-D tensors only")
    assert second == "your code raised RuntimeError: batch1 must be a 3D tensor"
