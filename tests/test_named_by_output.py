"""A mistake is named only when the answer's output is that mistake's, and no other's."""

from __future__ import annotations

import pytest
import torch

from autograder.authoring.closeness import is_close
from autograder.authoring.diagnosis import diagnose
from autograder.authoring.mistakes import Mistake
from autograder.authoring.registry import CheckFailed, grade_cell
from autograder.checks.a03_transformer_block.shared import explain_mismatch

DOUBLED = Mistake("test.doubled", "arithmetic", "every value is doubled")
SQUARED = Mistake("test.squared", "arithmetic", "every value is squared")
CASES = [0, 1, 2, 3]  # 2 * x and x * x agree on 0 and 2, differ on 1 and 3


def diagnosis(got: list[int], mistakes: dict[Mistake, object]) -> str:
    with pytest.raises(CheckFailed) as failed:
        explain_mismatch(CASES, got, CASES, mistakes, lambda case, a, e: f"case {case}: saw {a}")
    return failed.value.diagnosis


def test_the_one_mistake_whose_output_is_the_answer_s_is_named():
    mistakes = {DOUBLED: lambda x: 2 * x, SQUARED: lambda x: x * x}
    assert diagnosis([0, 2, 4, 6], mistakes) == str(DOUBLED)


def test_two_mistakes_with_the_answer_s_output_are_not_named():
    got = [0, 1, 4, 3]  # wrong on 2 only, where doubling and squaring both give 4
    assert diagnosis(got, {DOUBLED: lambda x: 2 * x, SQUARED: lambda x: x * x}) == "case 2: saw 4"


def test_a_mistake_that_explains_the_wrong_cases_but_not_the_right_ones_is_not_named():
    got = [0, 1, 4, 3]  # doubling explains case 2, but would have made 1 and 3 wrong too
    assert diagnosis(got, {DOUBLED: lambda x: 2 * x}) == "case 2: saw 4"


def test_nan_matches_a_mistake_s_nan_only_where_asked_and_only_in_place():
    mistake = torch.tensor([0.5, float("nan"), 0.25])
    assert not is_close(mistake.clone(), mistake)
    assert is_close(mistake.clone(), mistake, equal_nan=True)
    moved = torch.tensor([float("nan"), 0.5, 0.25])
    assert not is_close(moved, mistake, equal_nan=True)


def test_diagnose_names_a_nan_mistake_only_where_the_answer_s_nan_sits_in_its_place():
    expected = torch.tensor([0.5, 0.5, 0.25])
    masked_row = Mistake("test.masked_row", "masking", "a fully masked row gives NaN")
    mistakes = {masked_row: torch.tensor([0.5, float("nan"), 0.25])}
    with pytest.raises(CheckFailed) as same_place:
        diagnose(torch.tensor([0.5, float("nan"), 0.25]), expected, mistakes, "wrong values")
    assert same_place.value.diagnosis == str(masked_row)
    with pytest.raises(CheckFailed) as elsewhere:  # NaN too, but not that mistake's NaN
        diagnose(torch.tensor([float("nan"), 0.5, 0.25]), expected, mistakes, "wrong values")
    assert elsewhere.value.diagnosis.startswith("wrong values (")


@pytest.mark.slow  # about half a second (0.46 s measured): grades 01's parity cell
def test_a_failed_check_s_name_claims_no_overflow_of_finite_weights():
    """Feedback lists each failed check by name: 01's parity cell fails an answer scaled by
    √d_v (issue 40's h01-12), whose weights stay finite, under no name that says overflow."""

    def scaled_by_sqrt_d_v(q, k, v, mask=None, scale=True):
        scores = q @ k.transpose(-2, -1) / (v.shape[-1] ** 0.5 if scale else 1.0)
        if mask is not None:
            scores = scores.masked_fill(~mask.bool(), float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        return weights @ v, weights

    graded = grade_cell("01_attention", "test_attention_parity", {"attention": scaled_by_sqrt_d_v})
    failed = [check.name for check in graded.checks if not check.passed]
    assert failed and not [name for name in failed if "overflow" in name], failed


def test_overflow_is_named_only_where_the_weights_are_finite_without_the_large_scores():
    """NaN weights whatever the scores (0 * -inf for every visible key) are not told that exp
    overflowed; a softmax without the max, finite once the scores are small, is."""

    def nan_everywhere(q, k, v, mask=None, scale=True):
        scores = q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5
        hidden = torch.zeros_like(scores) if mask is None else (~mask.bool()).to(scores.dtype)
        weights = torch.softmax(scores + hidden * float("-inf"), dim=-1)
        return weights @ v, weights

    def without_the_max(q, k, v, mask=None, scale=True):
        scores = (q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5).exp()
        if mask is not None:
            scores = scores.masked_fill(~mask.bool(), 0.0)
        weights = scores / scores.sum(-1, keepdim=True)
        return weights @ v, weights

    def told(attention) -> str:
        graded = grade_cell("01_attention", "test_attention_parity", {"attention": attention})
        return "\n".join(check.diagnosis for check in graded.checks if not check.passed)

    assert "NaN or inf" in told(nan_everywhere) and "overflowed" not in told(nan_everywhere)
    assert "exp overflowed" in told(without_the_max)


def test_a_cause_one_input_cannot_show_is_confirmed_on_another():
    """token_importance averaged over every query, the padded ones too (issue 40's twelfth blind
    corpus, y05-04 and z05-05): appending pads to [8, 7] changes its scores, but its only padded
    sentence holds one real token, whose padded query reads that key whatever is redrawn, so the
    cause is confirmed on the public inputs."""
    from autograder.checks.a05_sentiment import token_importance as importance

    def over_every_query(weights, token_ids, pad_id):
        real = (token_ids != pad_id).to(weights[0].dtype)
        received = torch.stack([w.mean(dim=-2).mean(dim=1) for w in weights]).mean(0) * real
        total = received.sum(dim=-1, keepdim=True)
        return torch.where(total > 0, received / total.clamp_min(1e-30), 0.0)

    g = torch.Generator().manual_seed(0)
    ids = torch.tensor([[8, 7], [1, 0]])  # pad id 0
    case = importance.make_case(g, ids, 0, 2, 2, torch.float64)
    assert importance.padding_changes_nothing(over_every_query, case, g) is not None
    assert importance.padded_queries_read(over_every_query, case) is None
    with pytest.raises(CheckFailed) as failed:
        importance.judged(
            over_every_query,
            importance.padding_changes_nothing,
            case,
            g,
            importance.STATEMENT["padding"],
            importance.padded_queries_read,
        )
    assert "your score reads the padded queries' rows" in failed.value.diagnosis
    assert "on a public input" in failed.value.diagnosis
