"""A class answer under a ban is watched where it runs, with the instances it makes: one that
reaches a banned torch function by a name built at run time earns nothing for the cells that use
it, through the grader's judge (issue 39)."""

from __future__ import annotations

import os
import tempfile
import threading
from pathlib import Path

import pytest

from autograder.examples import solution_answers
from autograder.isolation.runner import _CellChannel
from autograder.judging import kernel
from autograder.judging.judge import Judge
from autograder.judging.limits import JudgeLimits
from autograder.suite.submission import DEMO_TAG, load_submission

ASSIGNMENT, CELL = "02_multi_head", "test_mha_shapes"
ROOT = Path(__file__).resolve().parents[1]
CALL = "heads, weights = scaled_dot_product_attention(q, k, v, mask)"
# The exercise's own computation, after a call of torch's multi-head attention by a name no
# source scan can read: the module reaches a banned function wherever its call runs.
BUILT = (
    'fused = getattr(torch.nn, "Multihead" + "Attention")(self.d_model, self.num_heads)\n'
    "        fused(query, key, value)\n"
    f"        {CALL}"
)


def judged(answer: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """test_mha_shapes judged by a real judge process against the solution's namespace with
    ``answer`` as the MultiHeadAttention cell; the cell's grade, described."""
    path = ROOT / "solutions" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    namespace = load_submission(path, skip_tags=(DEMO_TAG,)).namespace
    exec(answer, namespace)  # noqa: S102 - the answer cell, as the kernel runs it
    folder = Path(tempfile.mkdtemp())
    folder.chmod(0o755)
    socket_path = folder / "judge.sock"
    monkeypatch.setenv(kernel.JUDGE_SOCKET_ENV, str(socket_path))
    judge = Judge(ASSIGNMENT, socket_path, [answer], JudgeLimits(call_seconds=60))

    def run_cell() -> None:
        try:
            kernel.checkpoint(ASSIGNMENT, CELL, namespace)
        except BaseException:  # noqa: BLE001, S110 - the kernel's cell would show it
            pass

    with judge:
        _CellChannel(os.dup(judge.cell_channel.fileno())).open(3, CELL)
        cell = threading.Thread(target=run_cell)
        cell.start()
        cell.join(120)
    return judge.grades[CELL].describe()


@pytest.mark.slow  # a judge process: seconds
def test_a_class_reaching_a_banned_kernel_by_a_built_name_earns_nothing(monkeypatch):
    answer = solution_answers(ASSIGNMENT)["multi_head_attention"]
    assert CALL in answer
    told = judged(answer.replace(CALL, BUILT), monkeypatch)
    assert "ran F.multi_head_attention_forward when the grader called it" in told, told


@pytest.mark.slow
def test_the_watched_solution_keeps_its_points(monkeypatch):
    told = judged(solution_answers(ASSIGNMENT)["multi_head_attention"], monkeypatch)
    assert "FAILED" not in told, told
