"""Numbers in a failure message print differently where they differ (authoring/closeness.py)."""

import torch

from autograder.authoring.closeness import first_difference, told_apart


def test_two_numbers_that_differ_in_the_fifth_digit_print_differently():
    assert told_apart(-0.30092, -0.30087) == ("-0.30092", "-0.30087")


def test_numbers_that_differ_early_keep_four_digits():
    assert told_apart(1.23456, 2.5) == ("1.235", "2.5")


def test_equal_numbers_print_alike():
    assert told_apart(0.125, 0.125) == ("0.125", "0.125")


def test_the_first_difference_shows_the_digits_that_differ():
    """Issue 40's blind answer i05-04 read "got -0.3009, expected -0.3009"."""
    expected = torch.tensor([[-0.30087, 1.0]], dtype=torch.float64)
    actual = torch.tensor([[-0.30092, 1.0]], dtype=torch.float64)
    said = first_difference(actual, expected, atol=1e-6)
    assert "got -0.30092, expected -0.30087" in said
