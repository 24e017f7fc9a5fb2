"""A graded cell that fails before its hidden checks still gets the judge's diagnosis, first.

The end-to-end proof is tests/judge_parity.py (mutants marked ``in_notebook``) and the
runner's side is in tests/test_runner.py; here are the kernel's and the judge's sides.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

from autograder.judging import kernel
from autograder.judging.judge import VISIBLE_CHECK_FAILED, Verdict, after_public_failure

INSIDE = Path(__file__).resolve().parents[1] / "autograder" / "isolation" / "inside.py"


def test_the_judges_diagnosis_comes_before_the_visible_checks_message():
    verdict = after_public_failure(
        Verdict(False, "[check] scaled by √d_model"), "AssertionError: weights\n  differ"
    )
    assert not verdict.passed
    assert verdict.diagnosis == (
        f"[check] scaled by √d_model{VISIBLE_CHECK_FAILED}AssertionError: weights differ"
    )


def test_a_cell_whose_visible_check_failed_still_fails_when_the_hidden_checks_pass():
    verdict = after_public_failure(Verdict(True), "AssertionError: " + "x" * 5000)
    assert not verdict.passed
    assert verdict.diagnosis.startswith("the hidden checks of this cell pass, but its visible")
    assert len(verdict.diagnosis) < 1200  # the student's message is cut


@pytest.fixture
def inside(monkeypatch: pytest.MonkeyPatch) -> tuple[ModuleType, list]:
    """The sandbox's autograder package, with a checkpoint that records its calls."""
    spec = importlib.util.spec_from_file_location("inside_under_test", INSIDE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    calls = []

    def checkpoint(assignment, grade_id, namespace, public_failure=None):  # noqa: ANN001, ANN202
        calls.append((grade_id, public_failure))
        raise AssertionError("the judge's verdict")

    monkeypatch.setattr(kernel, "checkpoint", checkpoint)
    return module, calls


def test_the_kernel_asks_the_judge_once_per_cell_and_stays_silent(inside, capsys):
    module, calls = inside
    with pytest.raises(AssertionError):
        module.run_hidden_checks("01_attention", "test_reached", {})
    module.judge_failed_cell("01_attention", "test_reached", {}, "AssertionError: late")
    module.judge_failed_cell("01_attention", "test_stopped", {}, "AssertionError: public")
    module.judge_failed_cell("01_attention", "test_stopped", {}, "AssertionError: public")
    assert calls == [("test_reached", None), ("test_stopped", "AssertionError: public")]
    assert capsys.readouterr() == ("", "")  # nbgrader zeroes a test cell with stderr output
