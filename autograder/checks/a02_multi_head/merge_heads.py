"""Exercise 2, `merge_heads` (test_merge_heads): (B, H, L, d_k) -> (B, L, d_model)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch import Tensor

import attention_lab.reference.a02_multi_head as reference
from autograder.authoring.closeness import first_difference
from autograder.authoring.counterexample import small_integers, smallest_counterexample
from autograder.authoring.diagnosis import diagnose
from autograder.authoring.hidden_draws import hidden_generator, random_sizes
from autograder.authoring.in_place_writes import inputs_kept
from autograder.authoring.mistakes import Mistake, catalogue
from autograder.authoring.reference_bans import ban
from autograder.authoring.registry import Namespace, check, fail
from autograder.authoring.requiring import require
from autograder.authoring.student_errors import VIEW_OF_NON_CONTIGUOUS
from autograder.checks.a02_multi_head.shared import ASSIGNMENT, oracle_merge, oracle_split

# The named mistakes of merge_heads, by family (autograder/authoring/mistakes.py): each is
# diagnosed only where the answer's output matches that mistake's.
MERGE = catalogue(
    ASSIGNMENT,
    "merge_heads",
    {
        "head layout": {
            "no_transpose": "heads merged without a transpose: reshaping (B, H, L, d_k) straight "
            "to (B, L, H*d_k) mixes positions of different heads, so transpose(1, 2) first, then "
            "flatten the last two axes",
            "interleaved": "the heads' features are interleaved (head h at h, h+H, ...): "
            "transpose(1, 2) to (B, L, H, d_k) before flattening, not permute to (B, L, d_k, H)",
        },
        "reduction": {
            "summed": "the heads are summed instead of concatenated: merge_heads must keep every "
            "head's d_k features side by side",
            "averaged": "the heads are averaged instead of concatenated: merge_heads must keep "
            "every head's d_k features side by side",
        },
        "contiguity": {
            "view_on_non_contiguous": "merge_heads fails on a non-contiguous tensor (transpose "
            "makes one): .view cannot flatten it, so use .reshape(...) or .contiguous().view(...)",
        },
        "axis order": {
            "not_flattened": "returned (B, L, H, d_k): flatten the last two axes into H * d_k",
        },
    },
)

ban(
    ASSIGNMENT,
    "merge_heads",
    {
        "attention_lab's MultiHeadAttention.merge_heads": reference.MultiHeadAttention.merge_heads,
        "attention_lab's MultiHeadAttention": reference.MultiHeadAttention,
    },
)


def merge_mistakes(x: Tensor) -> dict[Mistake, Tensor]:
    b, h, length, d_k = x.shape
    return {
        MERGE["no_transpose"]: x.reshape(b, length, h * d_k),
        MERGE["interleaved"]: x.permute(0, 2, 3, 1).reshape(b, length, h * d_k),
        MERGE["summed"]: x.sum(1),
        MERGE["averaged"]: x.mean(1),
        MERGE["not_flattened"]: x.transpose(1, 2),
    }


def call_merge(merge_heads: Callable[[Tensor], Any], x: Tensor) -> Any:
    """merge_heads(x); torch's error for a .view of a non-contiguous tensor is named, and a
    write into x (whose storage the checks' other layouts of it may share)."""
    with inputs_kept("merge_heads", x=x):
        try:
            return merge_heads(x)
        except RuntimeError as error:
            if VIEW_OF_NON_CONTIGUOUS.search(str(error)):
                fail(MERGE["view_on_non_contiguous"])
            raise


@check(
    ASSIGNMENT,
    "test_merge_heads",
    keeps=(
        "`(B, H, L, d_k)` → `(B, L, H * d_k)`, with head $h$'s features placed at "
        "`h*d_k:(h+1)*d_k`",
    ),
)
def merge_heads_matches_the_oracle(ns: Namespace) -> None:
    merge_heads = require(ns, "merge_heads")
    g = hidden_generator("a02 merge")
    cases = [tuple(random_sizes(g, 4)) for _ in range(3)] + [(2, 1, 3, 5), (3, 4, 5, 1)]
    cases.append((1, 3, 1, 4))  # a batch of one sequence of length one
    for b, h, length, d_k in cases:
        heads = torch.randn(b, h, length, d_k, generator=g)
        expected = oracle_merge(heads)
        mistakes = merge_mistakes(heads) if h > 1 and length > 1 else {}
        for layout, x in (
            ("a contiguous", heads),
            ("a non-contiguous", heads.transpose(1, 2).contiguous().transpose(1, 2)),
            ("a non-contiguous", heads.transpose(-2, -1).contiguous().transpose(-2, -1)),
        ):
            diagnose(
                call_merge(merge_heads, x),
                expected,
                mistakes,
                f"merge_heads on {layout} (B, H, L, d_k) = {(b, h, length, d_k)} input must give "
                f"(B, L, H*d_k) = {(b, length, h * d_k)} with head h at features h*d_k:(h+1)*d_k",
                atol=0.0,
                counterexample=lambda: smaller_merge_example(merge_heads),
            )


def smaller_merge_example(merge_heads: Callable[[Tensor], Any]) -> str | None:
    """merge_heads(x) against the oracle on public (B, H, L, d_k) integer inputs, smallest
    first: a counterexample, or None."""
    sizes = sorted(
        (
            (b, h, length, d_k)
            for b in (1, 2)
            for h in (2, 3)
            for length in (1, 2)
            for d_k in (1, 2)
        ),
        key=lambda size: (sum(size), size),
    )

    def inputs(g: torch.Generator, size: tuple[int, ...]) -> dict[str, Tensor]:
        return {"x": small_integers(g, *size)}

    return smallest_counterexample(merge_heads, oracle_merge, inputs, sizes, atol=0.0)


@check(ASSIGNMENT, "test_merge_heads", keeps=("`merge_heads(x)` undoes `split_heads`",))
def merge_heads_undoes_the_split(ns: Namespace) -> None:
    merge_heads = require(ns, "merge_heads")
    g = hidden_generator("a02 merge roundtrip")
    b, length, h, d_k = random_sizes(g, 4)
    x = torch.randn(b, length, h * d_k, generator=g, dtype=torch.float64, requires_grad=True)
    # Contiguous, as the grading command's kernel receives every tensor: laid out as a split's
    # view, it would let a .view of the transpose pass here in-process and fail there.
    y = call_merge(merge_heads, oracle_split(x, h))
    if not isinstance(y, Tensor) or not torch.equal(y, x):
        seen = (
            first_difference(y, x, 0.0)
            if isinstance(y, Tensor) and y.shape == x.shape
            else (
                f"got {tuple(getattr(y, 'shape', ())) or type(y).__name__} for x of shape {tuple(x.shape)}"
            )
        )
        fail(
            f"merge_heads(split(x, H)) differs from x ({seen}): the statement's merge undoes the split"
        )
    if y.dtype != torch.float64:
        fail(
            f"merge_heads turned a float64 input into {y.dtype}: the statement's merge only rearranges"
        )
    if not y.requires_grad:
        fail(
            "merge_heads of an input that requires grad gave an output that does not: the "
            "output is cut from autograd"
        )
