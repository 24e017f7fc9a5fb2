"""Errors raised by the student's code: what the error establishes, the original, and where."""

from __future__ import annotations

import warnings
from collections.abc import Callable

import numpy as np
import pytest
import torch
from torch.nn import functional as F

from autograder.authoring.registry import Check, CheckFailed, run_check
from autograder.authoring.student_errors import explain, likely_cause, using_answers
from autograder.isolation.cell_files import CELL_FILENAME
from autograder.judging.kernel import raised_in_cell

Q = torch.randn(2, 3, 5, 4)  # (B, H, L_q, d_k)
K = torch.randn(2, 3, 6, 4)  # (B, H, L_k, d_k)
SCORES = torch.randn(2, 3, 5, 6)  # (B, H, L_q, L_k)


def k_dot_t() -> None:
    with warnings.catch_warnings():  # torch warns that .T on 4-D tensors is deprecated
        warnings.simplefilter("ignore")
        Q @ K.T


MISTAKES: dict[str, tuple[Callable[[], object], str]] = {
    "k.T on a batched tensor": (k_dot_t, "two shapes do not broadcast: sizes 3 and 6"),
    "bmm given 4-D input": (lambda: torch.bmm(Q, K.transpose(-2, -1)), "torch.bmm takes 3-D"),
    "Linear on the wrong axis": (
        lambda: torch.nn.Linear(5, 3)(torch.randn(2, 4)),
        "inner sizes of a matrix product differ",
    ),
    "cross_entropy on (B, L, V) logits": (
        lambda: F.cross_entropy(torch.randn(2, 5, 7), torch.randint(7, (2, 5))),
        "so it expected targets of shape (2, 7) and got (2, 5)",
    ),
    "cross_entropy with flat targets only": (
        lambda: F.cross_entropy(torch.randn(2, 5, 7), torch.randint(7, (10,))),
        "cross_entropy got 2 rows of logits and 10 targets",
    ),
    "mask of the wrong shape": (
        lambda: SCORES.masked_fill(torch.ones(5, 5, dtype=torch.bool), 0.0),
        "two shapes do not broadcast: sizes 5 and 6 meet at dimension 3",
    ),
    "(B, L_q, L_k) mask expanded to the heads without unsqueeze": (
        lambda: torch.ones(2, 5, 6, dtype=torch.bool).expand(2, 3, 5, 6),
        "a tensor does not broadcast to the shape it is expanded or used with",
    ),
    "view after a transpose": (
        lambda: Q.transpose(1, 2).view(2, 5, 12),
        ".reshape(...) or .contiguous().view(...)",
    ),
    "view with the wrong sizes": (lambda: Q.view(2, 7, 4), "more or fewer elements"),
    # blind answer aa04-05: the maxima of the weights as max(dim=-1), without .values
    "max over a dim used as its values": (
        lambda: SCORES.softmax(-1).max(dim=-1) - 1.0,
        "the (values, indices) pair that max returns, was used as a tensor: take its .values",
    ),
    "topk used as its values": (
        lambda: SCORES.topk(2).sum(),
        "the (values, indices) pair that topk returns",
    ),
    "an axis squeezed away": (lambda: Q[:1].squeeze().sum(dim=3), "an axis index is out of range"),
    "NumPy q @ k without the transpose": (
        lambda: np.ones((3, 4)) @ np.ones((5, 4)),
        "inner sizes of a matrix product differ",
    ),
}


@pytest.mark.parametrize("name", MISTAKES)
def test_a_real_error_gets_what_it_establishes_and_keeps_the_original(name: str):
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


# Guesses the errors above were once told, which their messages do not establish (issue 40).
GUESSES = ("k.transpose", "mask.unsqueeze", "did squeeze()", "flatten the logits", "e.g. (batch")


@pytest.mark.parametrize("name", MISTAKES)
def test_no_error_is_told_a_guess(name: str):
    mistake, _ = MISTAKES[name]
    with pytest.raises(Exception) as raised:
        mistake()
    told = explain(raised.value)
    assert not [guess for guess in GUESSES if guess in told], told


ANSWER = "def attention(q, k):\n    scores = q @ k.T\n    return scores.softmax(-1)\n"


def located(where: object) -> RuntimeError:
    """An error as the judge gets it from the kernel, located at ``where``."""
    error = RuntimeError("mat1 and mat2 shapes cannot be multiplied (6x4 and 5x3)")
    error.raised_at = where  # type: ignore[attr-defined]
    return error


def test_the_line_an_error_was_raised_at_is_read_from_the_submitted_answer():
    with using_answers({7: ("attention", ANSWER)}):
        told = explain(located((7, 2)))
    assert told.splitlines()[-1] == "in your answer cell `attention`, line 2: scores = q @ k.T"


@pytest.mark.parametrize("where", [(7, 0), (7, 4), (8, 1), ("7", 2), None])
def test_a_place_that_is_no_line_of_an_answer_shows_nothing(where: object):
    """The kernel names the place; the line comes from the grader's copy, or nothing does."""
    with using_answers({7: ("attention", ANSWER)}):
        told = explain(located(where))
    assert "answer cell" not in told and len(told.splitlines()) == 2


def test_the_kernel_names_the_innermost_cell_line_an_error_passed_through():
    namespace: dict = {}
    exec(compile(ANSWER, CELL_FILENAME.format(7), "exec"), namespace)
    helper = "def run(f):\n    return f(torch.ones(6, 4), torch.ones(5, 3))\n"
    exec(compile("import torch\n" + helper, CELL_FILENAME.format(9), "exec"), namespace)
    with pytest.raises(RuntimeError) as raised:
        namespace["run"](namespace["attention"])
    assert raised_in_cell(raised.value) == (7, 2)
    assert raised_in_cell(ValueError("never raised")) is None
