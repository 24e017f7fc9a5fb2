"""The judge decides what is judged: only the graded test cell that the runner says is running,
once.  Every other call to the hidden checks is refused and reported (a ``tamper suspected`` row).

These drive a real judge process through the runner's end of its cell channel, with the kernel's
side (autograder/judging/kernel.py) called in this process: no sandbox, no notebook.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch

from autograder.examples import solution_answers
from autograder.isolation.runner import _CellChannel
from autograder.judging import kernel
from autograder.judging.judge import VISIBLE_FAILED, Judge
from autograder.judging.limits import JudgeLimits

ASSIGNMENT, CELL, OTHER = "01_attention", "test_attention_scaling", "test_attention_rows_sum_to_one"


def _namespace(answer_of: str = "attention") -> dict:
    namespace: dict = {"math": math, "torch": torch, "Tensor": torch.Tensor}
    exec(solution_answers(ASSIGNMENT)[answer_of], namespace)
    return namespace


@pytest.fixture
def judge(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Judge, _CellChannel]]:
    """A judge process serving tmp_path/judge.sock, and the runner's end of its cell channel."""
    tmp_path.chmod(0o755)
    socket_path = tmp_path / "judge.sock"
    monkeypatch.setenv(kernel.JUDGE_SOCKET_ENV, str(socket_path))
    sources = [solution_answers(ASSIGNMENT)["attention"]]
    judge = Judge(ASSIGNMENT, socket_path, sources, JudgeLimits(call_seconds=60))
    with judge:
        yield judge, _CellChannel(os.dup(judge.cell_channel.fileno()))


def _call(grade_id: str, namespace: dict) -> str:
    """What the kernel's cell shows after its hidden-check line: "passed" or the error."""
    try:
        kernel.checkpoint(ASSIGNMENT, grade_id, namespace)
    except AssertionError as error:
        return str(error)
    return "passed"


def test_the_running_test_cell_is_judged_once(judge):
    judge, channel = judge
    channel.open(5, CELL)
    assert _call(CELL, _namespace()) == "passed"
    second = _call(CELL, _namespace())
    channel.close(5)
    assert second.startswith("refused: cell 5 called the hidden checks of")
    judge.__exit__(None, None, None)
    assert judge.grades[CELL].full_marks
    assert judge.refusals == [f"cell 5 called the hidden checks of `{CELL}` a second time"]


def test_calls_from_anywhere_else_are_refused_and_judged_nothing(judge):
    judge, channel = judge
    reference = _namespace()  # what a scratch cell would pass: correct objects, not the student's
    said = [_call(CELL, reference)]  # before any cell runs
    channel.open(2, None)  # an answer cell
    said.append(_call(CELL, reference))
    channel.close(2)
    channel.open(7, OTHER)  # another graded cell
    said.append(_call(CELL, reference))
    channel.close(7)
    said.append(_call(OTHER, reference))  # between cells
    judge.__exit__(None, None, None)
    assert all(s.startswith("refused: ") for s in said), said
    assert judge.grades == {}
    assert judge.refusals == [
        f"a call to the hidden checks of `{CELL}` came while no cell was running",
        f"cell 2, which is no graded test cell, called the hidden checks of `{CELL}`",
        f"cell 7, graded as `{OTHER}`, called the hidden checks of `{CELL}`",
        f"a call to the hidden checks of `{OTHER}` came while no cell was running",
    ]


def test_a_replay_after_a_restart_gets_the_first_grade_and_is_not_judged_again(judge):
    judge, channel = judge
    channel.open(5, CELL)
    assert _call(CELL, _namespace()) == "passed"
    channel.close(5)
    channel.open(5, CELL, replay=True)
    broken = {"attention": lambda *a, **k: torch.zeros(1)}
    assert _call(CELL, broken) == "passed"  # the first grade, not a new judgement
    channel.close(5)
    judge.__exit__(None, None, None)
    assert judge.grades[CELL].full_marks and judge.refusals == []


def test_a_failed_visible_check_is_shown_in_the_graders_words_never_the_kernels(judge):
    judge, channel = judge
    channel.open(6, OTHER)
    kernel.checkpoint(ASSIGNMENT, OTHER, _namespace(), visible_passed=False)
    channel.close(6)
    judge.__exit__(None, None, None)
    grade = judge.grades[OTHER]
    assert grade.full_marks and grade.visible_failure == VISIBLE_FAILED
    assert "visible check failed" in grade.describe() and judge.refusals == []
