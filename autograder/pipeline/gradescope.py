"""Gradescope's ``results.json`` for one graded submission: a test per graded cell.

Each test is named after its cell (the nbgrader grade id), scores what the cell earned (partial
credit included, as the gradebook records it) of its points, and shows the verdict as its output:
the first failed check's diagnosis (or why the cell could not be checked), then every hidden
check of the cell, passed or failed, by name and diagnosis, never a check's source.  The format
is the one Gradescope's autograder specification documents
(``schemas/gradescope_results.schema.json``);
a Gradescope autograder that grades one submission with ``python -m autograder grade`` copies
this file to ``/autograder/results/results.json``.
"""

from __future__ import annotations

import json
from pathlib import Path

from autograder.pipeline.records import Outcome

SCHEMA = Path(__file__).with_name("schemas") / "gradescope_results.schema.json"


def results_of(outcome: Outcome, max_points: dict[str, float]) -> dict:
    """The results.json object of ``outcome``; ``max_points``: grade id -> points."""
    tests = []
    for number, cell in enumerate(outcome.cells, start=1):
        points = float(max_points.get(cell.grade_id, 0.0))
        tests.append(
            {
                "name": cell.grade_id,
                "number": str(number),
                "score": cell.score,
                "max_score": points,
                "status": "passed" if cell.passed else "failed",
                "output": cell.message or ("passed" if cell.passed else "failed"),
                "visibility": "visible",
            }
        )
    return {
        "output": f"verdict: {outcome.verdict}",
        "stdout_visibility": "hidden",
        "tests": tests,
    }


def write_results(outcome: Outcome, max_points: dict[str, float], path: Path) -> None:
    """Write :func:`results_of` to ``path`` (its folders made)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(results_of(outcome, max_points), indent=1) + "\n")
