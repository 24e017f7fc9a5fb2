"""Reference data of the hidden checks is built once per process, ahead of the first submission."""

import pytest

from autograder.authoring import registry


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


def test_a03_hidden_corpora_are_distinct_draws():
    from autograder.checks.a03_transformer_block.shared import course_corpora

    corpora = course_corpora()
    vals = [tuple(corpora[use].texts("val")) for use in ("clean", "vocab", "encode")]
    assert len(set(vals)) == 3
    assert course_corpora() is corpora
