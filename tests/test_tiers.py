"""The complete suite hands its costliest scopes to the workers first (tests/tiers.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# Collects the complete suite as CI runs it and prints, in the order xdist will hand them out,
# each test's node id and the markers that rank it.
COLLECT = """
import json, sys
import pytest

class Order:
    def pytest_collection_finish(self, session):
        marks = ("trained", "sandbox", "slow")
        rows = [[i.nodeid, [m for m in marks if i.get_closest_marker(m)]] for i in session.items]
        print("ORDER " + json.dumps(rows))

options = ["--collect-only", "-q", "-m", "not timing", "-p", "no:cacheprovider"]
pytest.main(options, plugins=[Order()])
"""


@pytest.mark.slow
def test_the_corpora_of_trained_notebooks_are_handed_out_first():
    done = subprocess.run(
        [sys.executable, "-c", COLLECT], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    line = next((x for x in done.stdout.splitlines() if x.startswith("ORDER ")), None)
    assert line is not None, done.stdout[-2000:] + done.stderr[-2000:]
    rows = json.loads(line.removeprefix("ORDER "))
    # The work units of `--dist loadscope`, in the order it hands them out (its _split_scope).
    weight: dict[str, int] = {}
    for nodeid, marks in rows:
        rank = 3 if "trained" in marks else 2 if "sandbox" in marks else 1 if "slow" in marks else 0
        scope = nodeid.rsplit("::", 1)[0]
        weight[scope] = max(weight.get(scope, 0), rank)
    starts = list(weight)
    order = list(weight.values())
    assert order == sorted(order, reverse=True), list(weight.items())[:12]
    trained = [s for s in starts if weight[s] == 3]
    assert {
        "tests/test_mutants.py::TestMutantsOf05Sentiment",
        "tests/test_mutants.py::TestMutantsOf06CharLm",
    } <= set(trained), trained
    assert starts[: len(trained)] == trained
    # `trained` is a part of the complete tier: the tier before pushing leaves all of it out.
    assert all("sandbox" in m for _, m in rows if "trained" in m)
