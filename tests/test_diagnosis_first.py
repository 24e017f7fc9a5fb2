"""A graded cell that fails before its hidden checks still gets the judge's diagnosis, first;
the visible check's error is only shown beside it, never scored.

The end-to-end proof is tests/judge_parity.py (mutants marked ``in_notebook``) and the
runner's side is in tests/test_runner.py; here are the grade's and the kernel's sides.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from autograder.authoring.registry import VISIBLE_CHECK_FAILED, CellGrade, CheckResult
from autograder.judging import kernel

INSIDE = (
    Path(__file__).resolve().parents[1] / "autograder" / "isolation" / "autograder_in_sandbox.py"
)
FAILED = CheckResult("scaled", 1.0, False, "scaled by √d_model")


def test_the_judges_diagnosis_comes_before_the_visible_checks_message():
    grade = CellGrade((FAILED,), visible_failure="AssertionError: weights differ")
    assert not grade.full_marks
    assert grade.describe().startswith(
        f"[scaled] scaled by √d_model{VISIBLE_CHECK_FAILED}AssertionError: weights differ"
    )


def test_a_visible_failure_changes_no_score():
    passed = (CheckResult("a", 1.0, True), CheckResult("b", 2.0, True))
    shown = CellGrade(passed, visible_failure="AssertionError: the public example")
    assert shown.points(3) == CellGrade(passed).points(3) == 3
    assert "which does not change the score" in shown.describe()
    partial = (CheckResult("a", 1.0, True), FAILED)
    assert CellGrade(partial, visible_failure="x").points(2) == CellGrade(partial).points(2) == 1


@pytest.fixture
def inside(monkeypatch: pytest.MonkeyPatch) -> tuple[ModuleType, list, dict]:
    """The sandbox's autograder package in a fake plain kernel whose ``__main__`` namespace is
    ``cells``, with a checkpoint that records what it is given."""
    spec = importlib.util.spec_from_file_location("inside_under_test", INSIDE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    calls: list = []
    main = ModuleType("__main__")
    main.attention = "the student's own"

    def checkpoint(assignment, grade_id, namespace):  # noqa: ANN001, ANN202
        calls.append((grade_id, namespace))
        raise AssertionError("the judge's verdict")

    monkeypatch.setattr(kernel, "checkpoint", checkpoint)
    monkeypatch.setitem(sys.modules, "__main__", main)
    return module, calls, main.__dict__


def test_the_judge_is_served_the_notebooks_namespace_never_the_one_a_cell_passes(inside):
    module, calls, cells = inside
    with pytest.raises(AssertionError):
        module.run_hidden_checks("01_attention", "test_x", {"attention": "the reference"})
    assert calls == [("test_x", cells)]
