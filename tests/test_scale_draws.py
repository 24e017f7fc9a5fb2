"""The draws of the checks that name a scale slip tell every scale factor apart, under any secret.

Where two slips' factors are equal on a draw (d_model = 9 and head_size = 3: dividing by √d_model
is dividing by head_size), the answer's output matches both, and diagnose names neither: blind
answer k06-02 got a counterexample under its course's secret for that reason, and its cause under
the tests'. Only the draws are computed here, not a grading.
"""

from __future__ import annotations

import math

import pytest
import torch

from autograder.authoring.hidden_draws import hidden_generator, random_sizes
from autograder.authoring.hidden_seeds import secret_in_use
from autograder.authoring.operation_mistakes import scale_factors_apart
from autograder.checks.a06_char_lm.causal_head import head_trials
from autograder.checks.a07_attention_at_scale import split_case

SECRETS = [f"a course secret for the scale draws, number {i:04d}".encode() for i in range(400)]


def test_scale_factors_apart_tells_the_ties() -> None:
    assert not scale_factors_apart(3, {"d_model": 9})  # √d_model = head_size
    assert not scale_factors_apart(4, {"d_model": 2})  # d_model = √head_size
    assert not scale_factors_apart(1, {"d_model": 5})  # head_size = √head_size = 1
    assert not scale_factors_apart(5, {"d_model": 5})  # √d_model = √head_size
    assert scale_factors_apart(3, {"d_model": 8})
    assert scale_factors_apart(8, {"d_v": 6})


def test_the_old_head_draw_tied_two_scale_slips() -> None:
    """The test below can fail: the head check's former draw, random_sizes alone, ties two
    scale slips under some of these secrets."""
    tied = 0
    for secret in SECRETS[:50]:
        with secret_in_use(secret):
            g = hidden_generator("a06 head")
        for _ in range(4):
            _, d_model, head_size, _, _ = random_sizes(g, 5, low=2, high=9)
            tied += not scale_factors_apart(head_size, {"d_model": d_model})
    assert tied


@pytest.mark.parametrize("chunk", range(4))
def test_the_head_check_tells_every_scale_factor_apart(chunk: int) -> None:
    for secret in SECRETS[chunk::4]:
        with secret_in_use(secret):
            trials = head_trials(hidden_generator("a06 head"))
        assert len(trials) == 4
        for b, d_model, head_size, length, extra in trials:
            assert len({b, d_model, head_size, length, extra}) == 5
            assert all(2 <= n <= 9 for n in (b, d_model, head_size, length, extra))
            assert scale_factors_apart(head_size, {"d_model": d_model}), (secret, trials)


def test_the_multi_head_draws_tell_the_factors_apart() -> None:
    """06's multi-head cell: d_model = num_heads x head_size with num_heads and head_size
    distinct and at least 2, so √d_model is never head_size, nor d_model √head_size; its one-head
    trial has d_model = head_size, where √d_model is the right factor (no slip to name)."""
    for num_heads in range(2, 8):
        for head_size in range(2, 8):
            if num_heads != head_size:
                assert scale_factors_apart(head_size, {"d_model": num_heads * head_size})


def test_the_merge_cases_tell_every_scale_factor_apart() -> None:
    for secret in SECRETS[:100]:
        with secret_in_use(secret):
            g = hidden_generator("a07 split exact")
        for count in (1, 2, 2, 3, 5):
            q, _, v, sizes = split_case(g, low_keys=count)
            assert scale_factors_apart(q.shape[-1], {"d_v": v.shape[-1]}), (secret, sizes)
            assert math.isfinite(float(q.sum()))
            torch.randperm(3, generator=g)  # the check's key split moves the generator too
