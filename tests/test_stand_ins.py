"""A model the judge lends the student's code behaves as it would in one process: a deep copy of
it is the student's own model (02's heads_switched_off statement allows any design, and copying
the layer to edit the copy is one)."""

from __future__ import annotations

import contextlib
import copy
import os
import tempfile
import threading
from pathlib import Path

import pytest
import torch

from autograder.authoring.registry import CellGrade
from autograder.isolation.runner import _CellChannel
from autograder.judging import kernel
from autograder.judging.judge import Judge
from autograder.judging.limits import JudgeLimits

# Off heads' columns of out_proj zeroed in a deep copy of the layer: every property holds.
COPYING_ANSWER = '''
def heads_switched_off(mha, x, keep):
    """mha's self-attention on x (B, L, d_model), with only the heads keep (H,) marks."""
    copied = copy.deepcopy(mha)
    with torch.no_grad():
        copied.out_proj.weight.mul_(keep.repeat_interleave(mha.d_k).to(x.dtype))
    return copied(x)[0]
'''


# The same edit made to the layer it was given: in one process the check sees the layer changed.
WRITING_ANSWER = '''
def heads_switched_off(mha, x, keep):
    """mha's self-attention on x (B, L, d_model), with only the heads keep (H,) marks."""
    with torch.no_grad():
        mha.out_proj.weight.mul_(keep.repeat_interleave(mha.d_k).to(x.dtype))
    return mha(x)[0]
'''


def judged(answer: str, monkeypatch: pytest.MonkeyPatch) -> CellGrade:
    """test_heads_switched_off's grade for ``answer``, its kernel in a thread of this process and
    its judge in a process of its own, as the grading command runs them."""
    namespace: dict = {"copy": copy, "torch": torch}
    exec(answer, namespace)
    folder = Path(tempfile.mkdtemp())
    folder.chmod(0o755)
    socket_path = folder / "judge.sock"
    monkeypatch.setenv(kernel.JUDGE_SOCKET_ENV, str(socket_path))
    cell = "test_heads_switched_off"
    judge = Judge("02_multi_head", socket_path, [answer], JudgeLimits(call_seconds=60))

    def run_cell() -> None:
        with contextlib.suppress(AssertionError):  # the kernel's side of a failed cell
            kernel.checkpoint("02_multi_head", cell, namespace)

    with judge:
        _CellChannel(os.dup(judge.cell_channel.fileno())).open(3, cell)
        thread = threading.Thread(target=run_cell)
        thread.start()
        thread.join(120)
    return judge.grades[cell]


@pytest.mark.slow  # seconds: a judge process
def test_a_deep_copy_of_the_graders_model_is_the_students_own_to_change(monkeypatch):
    grade = judged(COPYING_ANSWER, monkeypatch)
    assert grade.fraction == 1, grade.describe()


@pytest.mark.slow  # seconds: a judge process
def test_writing_into_the_graders_own_model_is_refused_and_said(monkeypatch):
    grade = judged(WRITING_ANSWER, monkeypatch)
    assert grade.fraction < 1, grade.describe()
    told = grade.describe()
    assert "wrote into 'weight' of the model it was given, in place" in told
    # The answer raises nothing in its notebook: the refusal is told as grading's, not as an
    # error of its own (blind answers aa02-05 and ab02-05 were told it "raised AttributeError").
    assert "was stopped" in told and "raised AttributeError" not in told, told
