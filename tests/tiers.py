"""Which tests leave the fast tier and the tier before pushing (README, docs/development.md).

The budgets are those of the 2-core CI machine: 30 s, 5 minutes and 25 minutes.  A test of half a
second or more is marked `slow`, out of the fast tier.  One that grades through the bubblewrap
sandbox, grades an assignment's mutation corpus, or costs 20 s or more of a worker in the complete
run (three workers on the two cores) is also marked `sandbox`: the complete tier's only.  No test
leaves the complete tier.
"""

from __future__ import annotations

from collections.abc import Iterable

import pytest

# Grading one of these notebooks in-process trains its model (about 10 s of CPU; 05's held-out
# checks then run it over 12,000 sentences): a test that grades many variants of one, such as
# their mutation corpus, costs minutes, more than the rest of the tier before pushing together.
TRAINED = ("05_sentiment", "06_char_lm")


def by_assignment(assignments: Iterable[str]) -> list[str | pytest.ParameterSet]:
    """``assignments`` as parameters of a test that grades many variants of each notebook: those
    in TRAINED run in the complete tier only."""
    return [pytest.param(a, marks=pytest.mark.sandbox) if a in TRAINED else a for a in assignments]
