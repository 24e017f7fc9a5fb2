"""A call that writes into the tensors it is given is told so, naming them, and nothing else is
(autograder/authoring/in_place_writes.py)."""

from __future__ import annotations

import pytest
import torch

from autograder.authoring.in_place_writes import WRITTEN_IN_PLACE, inputs_kept, on_copies
from autograder.authoring.registry import CheckFailed
from autograder.authoring.repairs import repairs_of


def told(write, **arguments) -> str:
    """What ``inputs_kept`` says of a call that runs ``write()`` on ``arguments``."""
    with pytest.raises(CheckFailed) as failure, inputs_kept("answer", **arguments):
        write()
    return failure.value.diagnosis


def test_a_write_is_told_with_the_arguments_it_changed_and_where():
    q, k = torch.tensor([1.0, 2.0, 4.0]), torch.tensor([1.0, 1.0])
    said = told(lambda: q[1:].div_(2), q=q, k=k, mask=None, scale=True)
    assert said.startswith(f"`answer` {WRITTEN_IN_PLACE}: its argument `q` changed during the call")
    assert "first at index (1,); 2 of 3 values changed" in said
    assert " 4" not in said and "held" not in said  # no value of a possibly hidden input
    said = told(lambda: (q.zero_(), k.add_(1)), q=q, k=k)
    assert "its arguments `q` and `k` changed during the call (`q`: first at index (0,)" in said
    x = torch.zeros(2, 3)
    assert "it was (2, 3) torch.float32 before the call and (3, 2)" in told(x.t_, x=x)


def test_reading_the_inputs_or_writing_the_same_values_is_no_write():
    nan = torch.tensor([float("nan"), -float("inf"), 1.0])
    ids = torch.tensor([3, 1])
    with inputs_kept("answer", scores=nan, ids=ids, chunk_size=4):
        nan.mul_(1.0)  # NaN stays NaN, -inf stays -inf
        ids.add_(0)
        _ = nan.sum() + ids.sum()


def test_an_error_in_the_call_is_not_hidden_by_the_comparison():
    x = torch.ones(2)
    with pytest.raises(ValueError, match="the answer's own"), inputs_kept("answer", x=x):
        x.add_(1)
        raise ValueError("the answer's own")


def test_the_repair_hands_copies_of_tensors_without_gradients():
    def scale_in_place(q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
        return q.div_(2) @ k

    q = torch.tensor([2.0, 4.0])
    k = torch.tensor([1.0, 3.0], requires_grad=True)
    out = on_copies(scale_in_place)(q, k=k)
    out.backward()
    assert out.item() == 7.0 and q.tolist() == [2.0, 4.0]
    assert k.grad.tolist() == [1.0, 2.0]  # k, not copied, gets its gradient


def test_the_repair_leaves_a_write_into_a_tensor_needing_gradients_as_the_kernel_does():
    # The grading command's kernel receives such a tensor as a leaf: a copy cannot repair the
    # write there, so it does not here (judge parity compares the causes of 01's q.div_).
    q = torch.tensor([2.0, 4.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        on_copies(torch.Tensor.div_)(q, 2)


def test_01_repairs_a_write_into_attention_s_inputs():
    (repair,) = [
        r for r in repairs_of("01_attention") if r.mistake.key == "inputs.written_in_place"
    ]
    assert repair.name == "attention" and repair.undo is on_copies
    assert repair.cause == "the in-place writes in `attention`"
