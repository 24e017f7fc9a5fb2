"""Which tests leave the tier before pushing for the complete one (marker `sandbox`, README), and
the order in which `--dist loadscope` hands their scopes to the workers (conftest.py)."""

from __future__ import annotations

from collections.abc import Iterable

import pytest

# Grading one of these notebooks in-process trains its model (about 10 s of CPU; 05's held-out
# checks then run it over 12,000 sentences): a test that grades many variants of one, such as
# their mutation corpus, costs minutes, more than the rest of the tier before pushing together.
TRAINED = ("05_sentiment", "06_char_lm")
# Such a test is the complete tier's (`sandbox`), and its scope is among the longest (`trained`).
TRAINED_MARKS = (pytest.mark.sandbox, pytest.mark.trained)


def by_assignment(assignments: Iterable[str]) -> list[str | pytest.ParameterSet]:
    """``assignments`` as parameters of a test that grades many variants of each notebook: those
    in TRAINED run in the complete tier only."""
    return [pytest.param(a, marks=TRAINED_MARKS) if a in TRAINED else a for a in assignments]


def cost(item: pytest.Item) -> int:
    """How long the test's scope may take, coarsely: 3 when it grades many variants of a notebook
    that trains its model (05's and 06's mutation corpus, minutes each), 2 when it grades through
    the sandbox, 1 when otherwise slow, else 0."""
    for rank, marker in ((3, "trained"), (2, "sandbox"), (1, "slow")):
        if item.get_closest_marker(marker):
            return rank
    return 0


def longest_first(items: list[pytest.Item]) -> None:
    """Order ``items`` (in place) so that the costliest scopes come first, each kept whole and in
    its order.  `--dist loadscope` hands scopes out in this order (`--no-loadscope-reorder`): a
    worker that takes a mutation corpus of a trained notebook at the start is done with it while
    the others work through the rest, and the quick scopes fill the end, so no worker idles
    while another finishes a long scope it took last."""

    def scope(item: pytest.Item) -> str:
        return item.nodeid.rsplit("::", 1)[0]  # as xdist's loadscope splits it

    weight: dict[str, int] = {}
    for item in items:
        weight[scope(item)] = max(weight.get(scope(item), 0), cost(item))
    items.sort(key=lambda item: -weight[scope(item)])  # stable
