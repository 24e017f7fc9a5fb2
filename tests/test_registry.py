"""Reference data of the hidden checks is built once per process, ahead of the first submission;
a value that several cells of one submission judge is computed once per grading of it."""

import pytest

from autograder.authoring import registry
from autograder.authoring.hidden_seeds import secret_in_use


@pytest.fixture
def fresh_reference_data(monkeypatch):
    monkeypatch.setattr(registry, "_REFERENCE_DATA", {})


def test_prepare_builds_reference_data_once(fresh_reference_data):
    built = []

    @registry.reference_data("01_attention")
    def data():
        built.append(1)
        return object()

    registry.prepare("01_attention")
    assert built == [1]  # built by prepare, before any check asks for it
    first = data()
    registry.prepare("01_attention")
    assert built == [1]
    assert data() is first


def test_prepare_leaves_other_assignments_alone(fresh_reference_data):
    built = []
    registry.reference_data("05_sentiment")(lambda: built.append(1))
    registry.prepare("01_attention")
    registry.prepare("not_an_assignment_of_this_course")  # a course may grade notebooks we lack
    assert built == []


@pytest.mark.slow  # half a second or more in the fast tier (tests/tiers.py)
def test_a03_hidden_corpora_are_distinct_draws():
    from autograder.checks.a03_transformer_block.shared import course_corpora

    corpora = course_corpora()
    vals = [tuple(corpora[use].texts("val")) for use in ("clean", "vocab", "encode")]
    assert len(set(vals)) == 3
    assert course_corpora() is corpora


def test_a_shared_value_is_computed_once_per_grading_and_never_across_gradings():
    calls = []

    def predictions():
        calls.append(1)
        return len(calls)

    assert registry.shared(("p",), predictions) == 1  # outside a grading: every call computes
    assert registry.shared(("p",), predictions) == 2
    with registry.one_submission():
        assert registry.shared(("p",), predictions) == 3
        assert registry.shared(("p",), predictions) == 3  # the second cell: the same value
        with secret_in_use(b"another course's secret, for this test only"):
            assert registry.shared(("p",), predictions) == 4  # other hidden inputs
        registry.forget_shared()  # the kernel restarted
        assert registry.shared(("p",), predictions) == 5
    with registry.one_submission():  # the next submission
        assert registry.shared(("p",), predictions) == 6


def test_a_failed_computation_is_not_kept():
    calls = []

    def flaky():
        calls.append(1)
        if len(calls) == 1:
            registry.fail("the model crashed")
        return "predictions"

    with registry.one_submission():
        with pytest.raises(registry.CheckFailed):
            registry.shared(("q",), flaky)
        assert registry.shared(("q",), flaky) == "predictions"
    assert len(calls) == 2
