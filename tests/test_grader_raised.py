"""An error the student's code did not raise is never told as theirs: the check that raised it
says so, and the grade record asks for a human review (issue 40: i03-08 was told "your code
raised TypeError: cannot pickle 'socket' object", the grader's own failure)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

import autograder
from autograder.authoring import registry, student_errors
from autograder.authoring.registry import Check, CheckFailed, CheckResult, run_check
from autograder.authoring.student_errors import answers_elsewhere, explain, raised_by_answer
from autograder.isolation.cell_files import CELL_FILENAME
from autograder.judging.proxies import _exception_from
from autograder.pipeline.engines.jobs_and_outcomes import GradedCell
from autograder.pipeline.worker.one_submission import review_notes

# A check as the grader's own code: its frames are files of the autograder package.
CHECK_FILE = str(Path(autograder.__file__).parent / "checks" / "made_up_for_a_test.py")
CHECK = """
import torch

def reads_the_shape(ns):
    out = ns["answer"]()
    out.shape

def calls_on_a_bad_axis(ns):
    ns["answer"](torch.ones(2), dim=5)
"""
# An answer as a submitted cell: its frames are the cell's.
ANSWERS = """
def returns_a_list():
    return [1, 2]

def raises_itself():
    return [1, 2].shape
"""


def _made_up(name: str = "reads_the_shape") -> tuple[Check, dict]:
    namespace: dict = {}
    exec(compile(CHECK, CHECK_FILE, "exec"), namespace)
    answers: dict = {}
    exec(compile(ANSWERS, CELL_FILENAME.format(3), "exec"), answers)
    return Check("01_attention", "test_made_up", name, namespace[name]), answers


def _failure(entry: Check, answer) -> CheckFailed:
    with pytest.raises(CheckFailed) as failed:
        run_check(entry, {"answer": answer})
    return failed.value


def test_the_checks_own_error_on_what_the_answer_returned_is_not_the_students():
    entry, answers = _made_up()
    failure = _failure(entry, answers["returns_a_list"])
    assert "your code raised" not in failure.diagnosis
    assert failure.diagnosis.startswith(
        "the check itself raised AttributeError: 'list' object has no attribute 'shape'"
    )
    assert student_errors.GRADER_RAISED in failure.diagnosis
    assert failure.grader_raised == "AttributeError: 'list' object has no attribute 'shape'"


def test_the_same_error_raised_in_the_answer_is_told_as_the_students():
    entry, answers = _made_up()
    failure = _failure(entry, answers["raises_itself"])
    assert (
        failure.diagnosis
        == "your code raised AttributeError: 'list' object has no attribute 'shape'"
    )
    assert failure.grader_raised == ""


def test_a_library_raising_with_no_frame_of_either_is_told_as_before():
    """A library function bound as the answer (here torch's softmax) raises with no frame of the
    student's on the traceback: it may be their answer, so nothing says it is the grader's."""
    entry, _ = _made_up("calls_on_a_bad_axis")
    failure = _failure(entry, torch.nn.functional.softmax)
    assert "\nyour code raised IndexError: Dimension out of range" in failure.diagnosis
    assert failure.grader_raised == ""


def test_in_the_judge_only_what_the_kernel_reported_is_the_students():
    crossed = _exception_from({"mro": ["builtins:ValueError"], "message": "bad size"})
    forged = _exception_from({"mro": ["evil:Thing", "builtins:Exception"], "message": "x"})
    with answers_elsewhere():
        assert raised_by_answer(crossed) and raised_by_answer(forged)
        try:
            raise TypeError("cannot pickle 'socket' object")
        except TypeError as error:
            assert not raised_by_answer(error)
            told = explain(error)
        assert explain(crossed) == "your code raised ValueError: bad size"
    assert told.startswith("the check itself raised TypeError: cannot pickle 'socket' object")
    assert "your code raised" not in told


def test_a_grader_raised_check_is_recorded_and_flagged_for_review():
    entry, answers = _made_up()
    registry._REGISTRY.setdefault(("01_attention", "test_made_up"), []).append(entry)
    try:
        grade = registry.grade_cell(
            "01_attention", "test_made_up", {"answer": answers["returns_a_list"]}
        )
    finally:
        registry._REGISTRY[("01_attention", "test_made_up")].remove(entry)
    (result,) = grade.checks
    assert not result.passed and result.grader_raised.startswith("AttributeError")
    assert CheckResult.from_json(result.__dict__) == result  # it crosses from the judge
    notes = review_notes([GradedCell("test_made_up", grade, 2.0)])
    assert notes == [
        "review: check reads_the_shape of cell test_made_up raised AttributeError: 'list' object "
        "has no attribute 'shape' in the grader, not in the student's code; it counts as failed "
        "until a person decides"
    ]
    assert (
        review_notes(
            [
                GradedCell(
                    "test_made_up", registry.CellGrade((CheckResult("c", 1, False, "x"),)), 2.0
                )
            ]
        )
        == []
    )
