"""The kernel back-propagates the judge's gradients exactly as torch.autograd.backward would, and
without the sympy import that torch's own call makes on its first use in every graded kernel."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
import torch

from autograder.judging.kernel import _Server


def _graph(seed: int) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
    """Leaf inputs and two outputs of an attention-like computation that share them."""
    g = torch.Generator().manual_seed(seed)
    q, k, v = (torch.randn(2, 5, 4, generator=g, requires_grad=True) for _ in range(3))
    weights = torch.softmax(q @ k.transpose(-2, -1) / 2.0, dim=-1)
    return [q, k, v], [weights @ v, weights]


def _served_backward(grads: list[torch.Tensor]) -> list[torch.Tensor]:
    inputs, outputs = _graph(0)
    server = _Server(None, {})  # type: ignore[arg-type]  # backward never touches the socket
    server.calls[1] = (inputs, outputs)
    server.backward({"call": 1, "grads": list(range(len(grads)))}, grads)
    return [t.grad for t in inputs]


def test_the_gradients_are_those_of_torch_autograd_backward_bit_for_bit():
    g = torch.Generator().manual_seed(1)
    for dtype in (torch.float32, torch.float64):  # float64 gradients are cast, as torch does
        grads = [torch.randn(2, 5, 4, generator=g, dtype=dtype), torch.randn(2, 5, 5, generator=g)]
        inputs, outputs = _graph(0)
        torch.autograd.backward(outputs, grads)
        for ours, torchs in zip(_served_backward(grads), (t.grad for t in inputs), strict=True):
            assert torch.equal(ours, torchs)


def test_a_gradient_of_another_shape_is_refused_not_broadcast():
    with pytest.raises(ValueError, match=r"a gradient of shape \(1,\) for an output of shape"):
        _served_backward([torch.ones(1), torch.ones(2, 5, 5)])


@pytest.mark.slow  # a fresh interpreter: torch's import is the point
def test_backward_in_a_fresh_kernel_process_imports_no_sympy():
    program = textwrap.dedent(
        """
        import sys
        from tests.test_kernel_backward import _served_backward
        import torch
        _served_backward([torch.ones(2, 5, 4), torch.ones(2, 5, 5)])
        assert "sympy" not in sys.modules, "the kernel's backward imported sympy"
        """
    )
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
