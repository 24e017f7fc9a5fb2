"""Errors raised by the student's code, read as a likely cause a student can act on.

A check that calls the student's code and sees it raise reports one sentence naming the likely
cause, then the original error on a second line.  The causes are matched on the error's message
only, because that is all that crosses from a sandboxed kernel to the judge.
"""

from __future__ import annotations

import re
from collections.abc import Callable

_TRANSPOSE = "for q @ kᵀ use k.transpose(-2, -1): k.T reverses every axis of a batched tensor"
# torch's error for .view() of a tensor whose strides it cannot merge (not contiguous)
VIEW_OF_NON_CONTIGUOUS = re.compile(
    r"view size is not compatible with input tensor's size and stride"
)

# (pattern of the message, the likely cause; a callable gets the match)
_CAUSES: list[tuple[re.Pattern[str], str | Callable[[re.Match[str]], str]]] = [
    (
        re.compile(
            r"Expected target size \[[\d, ]*\], got \[[\d, ]*\]"
            r"|Expected input batch_size \(\d+\) to match target batch_size \(\d+\)"
        ),
        "cross_entropy takes the classes on dim 1 and one target per row: flatten the logits "
        "to (B*L, V) and the targets to (B*L,) before calling it",
    ),
    (
        re.compile(r"batch1 must be a 3D tensor|batch2 must be a 3D tensor|Expected 3-dim"),
        "torch.bmm takes 3-D tensors only, and this input has more axes (a head axis?): use @ "
        "(torch.matmul), which broadcasts over the leading axes",
    ),
    (
        re.compile(
            r"cannot be multiplied|Expected size for first two dimensions of batch2"
            r"|mismatch in its core dimension|shapes \([\d, ]*\) and \([\d, ]*\) not aligned"
        ),
        f"the inner sizes of a matrix product differ: {_TRANSPOSE}; a Linear layer multiplies "
        "the last axis, which must be its in_features",
    ),
    (
        re.compile(
            r"The size of tensor a \((\d+)\) must match the size of tensor b \((\d+)\) "
            r"at non-singleton dimension (\d+)"
        ),
        lambda found: (
            f"two shapes do not broadcast (sizes {found[1]} and {found[2]} at dimension "
            f"{found[3]}): is an axis transposed ({_TRANSPOSE}), or does a mask lack the head "
            "axis (mask.unsqueeze(1)) or the (L_q, L_k) shape?"
        ),
    ),
    (
        re.compile(r"The expanded size of the tensor \(\d+\) must match the existing size"),
        "a tensor does not broadcast to the shape it is used with: a mask must broadcast to the "
        "scores' shape (B, H, L_q, L_k), so add its missing axes with unsqueeze",
    ),
    (
        VIEW_OF_NON_CONTIGUOUS,
        "a transposed tensor is no longer contiguous, so .view() cannot reshape it: use "
        ".reshape(...) or .contiguous().view(...)",
    ),
    (
        re.compile(r"shape '\[[-\d, ]*\]' is invalid for input of size \d+"),
        "a view or reshape asks for more or fewer elements than the tensor has: check the sizes "
        "you pass, e.g. (batch, length, num_heads, d_model // num_heads)",
    ),
    (
        re.compile(r"Dimension out of range \(expected to be in range of \[-?\d+, \d+\]"),
        "an axis index is out of range, so the tensor has fewer axes than your code expects: "
        "did squeeze() drop an axis of size 1 (a batch of one, a single head, a length of one)?",
    ),
]


def likely_cause(message: str) -> str | None:
    """The likely cause of an error with this message, in one sentence, or None if unknown."""
    for pattern, cause in _CAUSES:
        found = pattern.search(message)
        if found:
            return cause(found) if callable(cause) else cause
    return None


def explain(error: BaseException, raised_by: str = "your code", detail: str = "") -> str:
    """What a check reports when the student's code raised ``error``: the likely cause, if known,
    then the original error on a line of its own ("<raised_by> raised <type><detail>: ...")."""
    raised = f"{raised_by} raised {type(error).__name__}{detail}: {error}"
    cause = likely_cause(str(error))
    return raised if cause is None else f"{cause}\n{raised}"
