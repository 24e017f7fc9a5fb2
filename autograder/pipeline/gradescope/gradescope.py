"""Gradescope's ``results.json`` for one graded submission: a test per graded cell.

Each test is named after its cell (the nbgrader grade id), scores what the cell earned (partial
credit included, as the gradebook records it) of its points, and shows the verdict as its output:
the first failed check's diagnosis (or why the cell could not be checked), then every hidden
check of the cell, passed or failed, by name and diagnosis, never a check's source.  The format
is the one Gradescope's autograder specification documents
(``schemas/gradescope_results.schema.json``);
a Gradescope autograder that grades one submission with ``python -m autograder grade`` copies
this file to ``/autograder/results/results.json``.

The top-level ``score`` is the gradebook's total after the late penalty (Gradescope documents it
as overriding the sum of the tests), the same number as every other record
(:func:`autograder.pipeline.records.grade_record.totals_of`); ``output`` and ``extra_data`` break it
down into autograded points, manual points and late penalty.  ``nbgrader export`` brings them up to
date after grading by hand (:func:`refresh_results`).
"""

from __future__ import annotations

import json
from pathlib import Path

from autograder.pipeline.engines.jobs_and_outcomes import Outcome
from autograder.pipeline.records.grade_record import Totals

SCHEMA = Path(__file__).with_name("schemas") / "gradescope_results.schema.json"


def results_of(
    outcome: Outcome, max_points: dict[str, float], totals: Totals | None = None
) -> dict:
    """The results.json object of ``outcome``; ``max_points``: grade id -> points; ``totals``:
    the gradebook's points for the submission (the top-level score), when recorded."""
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
    results = {
        "output": f"verdict: {outcome.verdict}",
        "stdout_visibility": "hidden",
        "tests": tests,
    }
    if totals is not None:
        _set_totals(results, totals)
    return results


def _set_totals(results: dict, totals: Totals) -> None:
    """Put the gradebook's total, and what it is made of, into ``results``."""
    verdict = str(results.get("output", "")).split("\n", 1)[0]
    results["score"] = totals.total
    results["output"] = (
        f"{verdict}\nautograded {totals.autograded:g} + manual {totals.manual:g} "
        f"- late penalty {totals.late_penalty:g} = {totals.total:g}"
    )
    results["extra_data"] = {
        "autograded": totals.autograded,
        "manual": totals.manual,
        "late_penalty": totals.late_penalty,
        "total": totals.total,
    }


def write_results(
    outcome: Outcome, max_points: dict[str, float], path: Path, totals: Totals | None = None
) -> None:
    """Write :func:`results_of` to ``path`` (its folders made)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(results_of(outcome, max_points, totals), indent=1) + "\n")


def refresh_results(path: Path, totals: Totals) -> bool:
    """Bring an existing results.json's total up to date; False when there is none to update."""
    try:
        results = json.loads(path.read_text())
    except (OSError, ValueError):
        return False
    if not isinstance(results, dict):
        return False
    _set_totals(results, totals)
    path.write_text(json.dumps(results, indent=1) + "\n")
    return True
