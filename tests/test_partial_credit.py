"""Partial credit: a graded cell earns its passing checks' share of its points.

The rule is in autograder/authoring/registry.py; here it is held to its word on made-up cells, on
the course's own checks, on the graded notebook that nbgrader reads, and, end to end, through
``python -m autograder grade``, its gradebook, feedback, CSV and Gradescope results.
"""

from __future__ import annotations

import csv
import html
import inspect
import json
import math
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook, new_output
from nbgrader.api import Gradebook
from nbgrader.utils import determine_grade

from autograder.authoring import registry
from autograder.authoring.check_modules import check_modules
from autograder.authoring.registry import (
    CellGrade,
    CheckFailed,
    CheckResult,
    StopChecks,
    checks_for,
    grade_cell,
)
from autograder.examples import Sample, build_course
from autograder.pipeline.cli import main
from autograder.pipeline.worker.verdicts import apply_verdicts, shown_verdict
from tests.mutants import mutated_cells
from tests.mutants.m01_attention import WRONG
from tests.test_notebooks import marked_region

ROOT = Path(__file__).resolve().parents[1]


def result(name: str, passed: bool, weight: float = 1.0, gate: bool = False) -> CheckResult:
    return CheckResult(
        name, 0.0 if gate else weight, passed, "" if passed else f"{name} is wrong", gate
    )


# ------------------------------------------------------------------------------------------
# The rule, on made-up cells


def test_a_cell_earns_the_weight_of_its_passing_checks_rounded_down_to_a_hundredth():
    two_of_three = CellGrade((result("a", True), result("b", True), result("c", False)))
    assert two_of_three.fraction == pytest.approx(2 / 3)
    assert two_of_three.points(2) == 1.33  # 1.333...
    assert two_of_three.points(1) == 0.66  # down, not to the nearest: never rounds up to more
    weighted = CellGrade((result("a", True, 0.5), result("b", False, 1.5)))
    assert weighted.fraction == 0.25 and weighted.points(3) == 0.75
    tenths = CellGrade((result("a", True, 0.1), result("b", True, 0.2), result("c", False, 0.7)))
    assert tenths.points(1) == 0.3  # exact tenths: 0.1 + 0.2 is not 0.30000000000000004 here
    almost = CellGrade(tuple(result(f"c{i}", i > 0) for i in range(1000)))
    assert almost.points(2) == 1.99 and not almost.full_marks  # a failing check never rounds up
    everything = CellGrade((result("a", True), result("b", True)))
    assert everything.full_marks and everything.points(2.5) == 2.5
    # Full marks are all the cell's points, in the suite and in the grading command alike.
    assert everything.points(0.125) == 0.125


def test_a_failing_gate_voids_the_cell_and_a_passing_one_is_worth_nothing():
    assert CellGrade((result("g", False, gate=True), result("a", True))).points(2) == 0
    passing_gate = CellGrade((result("g", True, gate=True), result("a", True), result("b", False)))
    assert passing_gate.fraction == 0.5
    assert CellGrade(()).points(2) == 0  # never judged
    with pytest.raises(ValueError, match="worth points besides its gates"):
        _ = CellGrade((result("g", True, gate=True),)).fraction


def test_a_failing_visible_check_changes_no_score():
    """The kernel reports its visible checks, so they could be forged: the hidden ones alone
    score (each visible check has a hidden twin, which the mutation corpus shows)."""
    checks = (result("a", True), result("b", True, 2.0), result("c", True))
    found = (result("a", True), result("b", True, 2.0), result("c", False))
    for hidden in (checks, found, (result("a", True),)):
        shown = CellGrade(hidden, "AssertionError: shape")
        assert shown.fraction == CellGrade(hidden).fraction and shown.points(2) == CellGrade(
            hidden
        ).points(2)


def test_the_message_leads_with_the_first_failure_then_lists_every_check():
    grade = CellGrade(
        (
            result("shapes", True),
            CheckResult("scaled", 1.0, False, "divide by sqrt(d_k)\nyour code raised X"),
            CheckResult("parity", 2.0, False, "differs from the oracle"),
            CheckResult("again", 1.0, False, "differs from the oracle"),
        ),
        "AssertionError: public",
    )
    lines = grade.describe().splitlines()
    assert lines[:4] == [
        "[scaled] divide by sqrt(d_k)",
        "your code raised X",
        "the visible check in this cell failed too: AssertionError: public",
        "hidden checks: 1 of 4 passed",
    ]
    assert lines[4:] == [
        "  passed  shapes",
        "  FAILED  while checking scaled: see the first line",
        "  FAILED  while checking parity (weight 2): differs from the oracle",
        "  FAILED  while checking again: as parity",
    ]


def test_a_failing_check_is_listed_as_what_it_checked_never_as_a_claim():
    # Issue 40's k02-04: "FAILED  ablation_is_defined_at_the_edges" read as a claim about the
    # answer, where the message beside it was about an in-place write.
    in_place = "heads_switched_off changed a tensor it was given, in place"
    grade = CellGrade(
        (
            CheckResult("switched_off_heads_are_gone", 1.0, False, in_place),
            CheckResult("ablation_is_defined_at_the_edges", 0.5, False, "x is NaN"),
        )
    )
    lines = grade.describe().splitlines()
    assert lines[-2:] == [
        "  FAILED  while checking switched off heads are gone: see the first line",
        "  FAILED  while checking ablation is defined at the edges (weight 0.5): x is NaN",
    ]
    assert not [line for line in lines if "FAILED  ablation_is" in line]


# ------------------------------------------------------------------------------------------
# Running a cell's checks


@pytest.fixture
def cell(monkeypatch: pytest.MonkeyPatch):
    """Register checks of a made-up cell of 01_attention: ``cell(function, **options)``."""
    checks_for("01_attention")  # imported now, so that it registers nothing in the fresh registry
    monkeypatch.setattr(registry, "_REGISTRY", {})

    def add(function, **options) -> None:  # noqa: ANN001
        registry.check("01_attention", "test_made_up", **options)(function)

    return add


def test_every_check_runs_even_after_a_failure(cell):
    ran = []

    def first(ns):  # noqa: ANN001, ANN202
        ran.append("first")
        raise CheckFailed(registry.HELPER_LABEL, "first is wrong")

    def second(ns):  # noqa: ANN001, ANN202
        ran.append("second")

    def third(ns):  # noqa: ANN001, ANN202
        ran.append("third")
        raise ZeroDivisionError("division by zero")

    for function in (first, second, third):
        cell(function)
    grade = grade_cell("01_attention", "test_made_up", {})
    assert ran == ["first", "second", "third"]
    assert [(c.name, c.passed) for c in grade.checks] == [
        ("first", False),
        ("second", True),
        ("third", False),
    ]
    assert grade.first_failure == "[first] first is wrong"
    assert "ZeroDivisionError" in grade.checks[2].diagnosis


def test_a_reference_ban_or_a_failing_gate_voids_the_cell_and_stops_it(cell):
    ran = []

    def banned(ns):  # noqa: ANN001, ANN202
        raise CheckFailed("attention_does_not_call_the_reference", "calls F.softmax")

    def later(ns):  # noqa: ANN001, ANN202
        ran.append("later")

    cell(lambda ns: None, name="before")
    cell(banned)
    cell(later)
    grade = grade_cell("01_attention", "test_made_up", {})
    assert ran == [] and grade.fraction == 0
    assert [(c.name, c.passed) for c in grade.checks] == [
        ("before", True),
        ("attention_does_not_call_the_reference", False),
        ("banned", False),
        ("later", False),
    ]
    assert grade.first_failure == "[attention_does_not_call_the_reference] calls F.softmax"
    why = "not run: attention_does_not_call_the_reference failed first"
    assert [c.diagnosis for c in grade.checks[2:]] == [why, why]

    registry._REGISTRY.clear()
    cell(banned, name="precondition", gate=True)
    cell(later)
    grade = grade_cell("01_attention", "test_made_up", {})
    assert ran == [] and grade.fraction == 0
    assert grade.checks[1].diagnosis.startswith("not run: ")
    registry._REGISTRY.clear()
    cell(lambda ns: None, name="precondition", gate=True)
    cell(later)
    assert grade_cell("01_attention", "test_made_up", {}).full_marks and ran == ["later"]


def test_a_lost_kernel_keeps_the_credit_of_the_checks_before_it(cell):
    cell(lambda ns: None, name="before")
    cell(lambda ns: (_ for _ in ()).throw(StopChecks("the kernel is gone")), name="lost")
    cell(lambda ns: None, name="after")
    grade = grade_cell("01_attention", "test_made_up", {})
    assert [c.passed for c in grade.checks] == [True, False, False]
    assert grade.checks[1].diagnosis == "the kernel is gone"
    assert grade.checks[2].diagnosis == "not run: the checks stopped at lost"
    assert grade.fraction == pytest.approx(1 / 3)


def test_bad_weights_are_refused_when_registered():
    for weight in (0, -1, float("nan"), float("inf"), "2"):
        with pytest.raises(ValueError, match="weight must be a positive number"):
            registry.check("01_attention", "test_x", weight=weight)
    with pytest.raises(ValueError, match="a gate is worth no points"):
        registry.check("01_attention", "test_x", weight=2, gate=True)


@pytest.mark.parametrize("assignment", list(check_modules()))
def test_every_cells_checks_carry_weight(assignment: str):
    by_cell: dict[str, list[registry.Check]] = {}
    for entry in checks_for(assignment):
        by_cell.setdefault(entry.grade_id, []).append(entry)
    for grade_id, entries in by_cell.items():
        paying = [e.weight for e in entries if not e.gate]
        assert paying and all(w > 0 and math.isfinite(w) for w in paying), (grade_id, paying)
        assert all(e.weight == 0 for e in entries if e.gate), grade_id
        # A gate guards the checks after it: it comes before every check worth points.
        gates = [i for i, e in enumerate(entries) if e.gate]
        assert all(i < len(entries) - len(paying) for i in gates), (grade_id, gates)
        assert len({e.name for e in entries}) == len(entries), f"{grade_id}: a name twice"


# ------------------------------------------------------------------------------------------
# What nbgrader reads from the graded notebook


def _graded_cell(points: float, grade: CellGrade, kernel_outputs: list) -> nbformat.NotebookNode:
    cell = new_code_cell("check()")
    cell.metadata["nbgrader"] = {
        "grade": True,
        "solution": False,
        "grade_id": "test_q",
        "points": points,
        "locked": True,
    }
    notebook = new_notebook(cells=[cell])
    report = {"cells": [{"index": 0, "status": "error", "outputs": kernel_outputs}]}
    cells = apply_verdicts(notebook, report, {"test_q": grade}, [])
    nbformat.validate(notebook)
    assert cells[0].score == determine_grade(notebook.cells[0])[0], cells[0]
    return notebook.cells[0]


def test_nbgrader_records_partial_credit_and_never_a_grade_the_kernel_forged():
    checks = (result("a", True), result("b", False), result("c", True), result("d", True))
    partial = CellGrade(checks)
    forged = [
        new_output("execute_result", data={"text/plain": "3"}, execution_count=1),
        new_output("stream", name="stdout", text="hidden checks: 4 of 4 passed\n"),
        new_output("stream", name="stderr", text="a warning\n"),
    ]
    cell = _graded_cell(3, partial, forged)
    assert determine_grade(cell) == (2.25, 3.0)
    assert shown_verdict(cell) == partial.describe()
    assert "  FAILED  while checking b: see the first line" in shown_verdict(cell)
    shown = json.dumps(cell.outputs)
    assert len(cell.outputs) == 2 and "4 of 4" not in shown and "a warning" not in shown
    nothing = CellGrade((result("a", False),))
    cell = _graded_cell(3, nothing, forged)
    assert determine_grade(cell) == (0, 3.0)
    assert shown_verdict(cell).startswith("[a] a is wrong")
    everything = CellGrade((result("a", True),))
    cell = _graded_cell(3, everything, [])
    assert determine_grade(cell) == (3.0, 3.0)
    assert shown_verdict(cell) == "hidden checks: 1 of 1 passed\n  passed  a"


def test_the_judges_grade_crosses_its_pipe_whole_and_a_visible_failure_never_changes_it():
    checks = (result("a", True), result("b", True, 3.0), result("g", True, gate=True))
    grade = CellGrade(checks)
    assert CellGrade.from_json(json.loads(json.dumps(grade.to_json()))) == grade
    assert grade.full_marks and grade.points(4) == 4
    shown = CellGrade(checks, visible_failure="AssertionError: the public example")
    assert CellGrade.from_json(json.loads(json.dumps(shown.to_json()))) == shown
    assert shown.full_marks and shown.points(4) == 4  # the kernel's report decides nothing
    assert shown.describe().startswith("the hidden checks of this cell pass, but its visible")
    assert "  passed  g (a precondition, no points of its own)" in shown.describe()
    unjudged = CellGrade((), unjudged="[judge] it stopped")
    assert unjudged.points(4) == 0 and unjudged.describe() == "[judge] it stopped"


# ------------------------------------------------------------------------------------------
# End to end: python -m autograder grade


def _points(assignment: str) -> dict[str, float]:
    notebook = nbformat.read(ROOT / "notebooks" / assignment / f"{assignment}.ipynb", 4)
    return {
        c.metadata["nbgrader"]["grade_id"]: float(c.metadata["nbgrader"]["points"])
        for c in notebook.cells
        if c.metadata.get("nbgrader", {}).get("grade") and c.cell_type == "code"
    }


@pytest.mark.slow
@pytest.mark.sandbox
def test_a_partly_right_cell_gets_its_share_in_the_gradebook_feedback_csv_and_gradescope(
    tmp_path: Path, sandbox_required: None
):
    assignment = "01_attention"
    naive = next(m for m in WRONG if m.name == "naive exp in NumPy")
    stub = (ROOT / "notebooks" / assignment / f"{assignment}.ipynb").read_bytes()
    samples = [
        Sample("nora", "mistake", "ok", False, answers=mutated_cells(naive)),
        Sample("stub", "broken", "ok", False, raw=stub),
    ]
    root = tmp_path / "course"
    build_course(root, samples, assignment)
    assert main(["grade", assignment, "--course", str(root), "--workers", "2"]) == 0

    points = _points(assignment)
    # Three checks: the reference's values and NumPy arrays (pass), stability (fails).
    lost = "test_attention_numpy"
    share = math.floor(points[lost] * 2 / 3 * 100) / 100  # rounded down to 0.01 point
    with Gradebook(f"sqlite:///{root / 'grading' / 'gradebook.db'}", "attention_lab") as gb:
        scores = {}
        for student in ("nora", "stub"):
            notebook = gb.find_submission_notebook(assignment, assignment, student)
            scores[student] = {
                g.cell.name: g.auto_score for g in notebook.grades if g.cell.name in points
            }
    assert scores["nora"] == {g: (share if g == lost else points[g]) for g in points}
    assert scores["stub"] == dict.fromkeys(points, 0)

    with (root / "grading" / f"{assignment}_grades.csv").open(newline="") as handle:
        rows = {row["student"]: row for row in csv.DictReader(handle)}
    assert float(rows["nora"][lost]) == share
    assert float(rows["nora"]["score"]) == sum(scores["nora"].values())
    gradescope = root / "grading" / "gradescope" / "nora" / assignment / "results.json"
    tests = {t["name"]: t for t in json.loads(gradescope.read_text())["tests"]}
    assert (tests[lost]["score"], tests[lost]["max_score"]) == (share, points[lost])

    # The feedback names every check of the cell, passed and failed, the failure diagnosed,
    # and shows no line of a hidden region or of the checks' source.
    page = html.unescape(
        (root / "grading" / "feedback" / "nora" / assignment / f"{assignment}.html").read_text()
    )
    for shown in (
        "hidden checks: 2 of 3 passed",
        "  passed  numpy_attention_matches_reference",
        "  passed  numpy_attention_returns_numpy_arrays",
        "  FAILED  while checking numpy attention is stable for large scores: see the first line",
        "overflows",
    ):
        assert shown in page, shown
    for document in (page, json.dumps(tests[lost])):
        assert "numpy_attention_is_stable_for_large_scores" in document
        for entry in checks_for(assignment):
            body = inspect.getsource(entry.function).splitlines()[1:]
            leaked = [line for line in body if len(line.strip()) > 24 and line.strip() in document]
            assert not leaked, leaked
    solution = nbformat.read(ROOT / "solutions" / assignment / f"{assignment}.ipynb", 4)
    for cell in solution.cells:
        for line in marked_region(cell.source, "BEGIN HIDDEN TESTS", "END HIDDEN TESTS"):
            assert line.strip() not in page, line


def test_plain_nbgrader_stays_all_or_nothing_and_its_message_lists_every_check(cell):
    cell(lambda ns: None, name="shapes")

    def scaled(ns):  # noqa: ANN001, ANN202
        raise CheckFailed(registry.HELPER_LABEL, "divide by sqrt(d_k)\nyour code raised X")

    cell(scaled)
    with pytest.raises(CheckFailed) as raised:
        registry.run_hidden_checks("01_attention", "test_made_up", {})
    assert str(raised.value).splitlines() == [
        "[scaled] divide by sqrt(d_k)",
        "your code raised X",
        "hidden checks: 1 of 2 passed",
        "  passed  shapes",
        "  FAILED  while checking scaled: see the first line",
    ]
    registry._REGISTRY.clear()
    cell(lambda ns: None, name="shapes")
    assert registry.run_hidden_checks("01_attention", "test_made_up", {}) is None
