"""Which way a recovered drop departs from dropout at p: each kind is one mistake's output."""

from __future__ import annotations

import pytest

from autograder.authoring.dropout_sites import Drop, dropout_mismatch, mismatch_kind

P = 0.25


@pytest.mark.parametrize(
    ("drop", "kind"),
    [
        (Drop(0.26, 1 / (1 - P)), None),  # dropout at p
        (Drop(0.60, 1 / (1 - P)), "rate"),
        (Drop(1 - (1 - P) ** 2, 1 / (1 - P) ** 2), "twice"),
        (Drop(0.24, 1.0), "unscaled"),
        (Drop(0.76, 1 / P), "keep_probability"),  # dropout at 1 - p
        (Drop(0.10, 1 / 0.9), "other_rate"),  # dropout at 0.1
        (Drop(0.25, 2.5), "scale"),
        (Drop(1.0, None), "all_zeroed"),
    ],
)
def test_each_drop_is_told_by_its_kind(drop: Drop, kind: str | None):
    assert mismatch_kind(drop, P) == kind
    assert (dropout_mismatch(drop, P) is None) == (kind is None)


def test_the_words_name_the_rate_a_drop_implies():
    words = dropout_mismatch(Drop(0.76, 1 / P), P)
    assert words is not None and "dropout=0.750 (the keep probability 1 - p)" in words
    words = dropout_mismatch(Drop(0.10, 1 / 0.9), P)
    assert words is not None and words.startswith("the values are dropped as by dropout=0.100,")
