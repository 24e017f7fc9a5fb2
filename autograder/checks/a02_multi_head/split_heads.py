"""Exercise 1, `split_heads` (test_split_heads): (B, L, d_model) -> (B, H, L, d_k)."""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor

import attention_lab.reference.a02_multi_head as reference
from autograder.authoring.counterexample import small_integers, smallest_counterexample
from autograder.authoring.diagnosis import diagnose
from autograder.authoring.hidden_draws import hidden_generator, random_sizes
from autograder.authoring.in_place_writes import inputs_kept
from autograder.authoring.mistakes import Mistake, catalogue
from autograder.authoring.reference_bans import ban
from autograder.authoring.registry import CheckFailed, Namespace, StopChecks, check, fail
from autograder.authoring.requiring import require
from autograder.checks.a02_multi_head.shared import ASSIGNMENT, oracle_split

# The named mistakes of split_heads, by family (autograder/authoring/mistakes.py): each is
# diagnosed only where the answer's output matches that mistake's.
SPLIT = catalogue(
    ASSIGNMENT,
    "split_heads",
    {
        "head layout": {
            "no_transpose": "heads split without a transpose: reshaping (B, L, d_model) straight "
            "to (B, H, L, d_k) cuts across positions, so view(B, L, H, d_k) first, then "
            "transpose(1, 2)",
            "interleaved": "head h got the interleaved features h, h+H, h+2H, ...: view the last "
            "axis as (H, d_k), not (d_k, H), so each head owns a consecutive block of d_k features",
            "transpose_first": "transposed before viewing: x.transpose(1, 2) then reshape cuts the "
            "wrong axis; view(B, L, H, d_k) first, then transpose(1, 2)",
        },
        "head size": {
            "fixed_head_size": "the head size is a fixed number, not d_model // num_heads: "
            "your split_heads gives the statement's heads for one d_k alone",
        },
        "axis order": {
            "heads_after_positions": "returned (B, L, H, d_k): transpose(1, 2) so the head axis "
            "comes before the sequence axis",
        },
    },
)

ban(
    ASSIGNMENT,
    "split_heads",
    {
        "attention_lab's MultiHeadAttention.split_heads": reference.MultiHeadAttention.split_heads,
        "attention_lab's MultiHeadAttention": reference.MultiHeadAttention,
    },
)


def split_mistakes(x: Tensor, num_heads: int) -> dict[Mistake, Tensor]:
    b, length, d_model = x.shape
    d_k = d_model // num_heads
    return {
        SPLIT["no_transpose"]: x.reshape(b, num_heads, length, d_k),
        SPLIT["interleaved"]: x.reshape(b, length, d_k, num_heads).permute(0, 3, 1, 2),
        SPLIT["transpose_first"]: x.transpose(1, 2).reshape(b, num_heads, length, d_k),
        SPLIT["heads_after_positions"]: x.reshape(b, length, num_heads, d_k),
    }


@check(
    ASSIGNMENT,
    "test_split_heads",
    keeps=(
        "returns `(B, H, L, d_k)` with `d_k = d_model // num_heads`",
        "where `out[:, h]` holds the features `x[..., h*d_k:(h+1)*d_k]`",
    ),
)
def split_heads_matches_the_oracle(ns: Namespace) -> None:
    split_heads = require(ns, "split_heads")
    g = hidden_generator("a02 split")
    cases = [tuple(random_sizes(g, 4)) for _ in range(3)] + [(2, 3, 1, 5), (3, 4, 5, 1)]
    cases.append((1, 1, 3, 4))  # a batch of one sequence of length one
    for b, length, h, d_k in cases:
        x = torch.randn(b, length, h * d_k, generator=g)
        try:
            with inputs_kept("split_heads", x=x):  # the oracle is computed from x
                y = split_heads(x, h)
        except (CheckFailed, StopChecks):
            raise
        except Exception:
            name_a_fixed_head_size(split_heads)
            raise
        if not (isinstance(y, Tensor) and y.shape == (b, h, length, d_k)):
            name_a_fixed_head_size(split_heads)
        diagnose(
            y,
            oracle_split(x, h),
            split_mistakes(x, h) if h > 1 and d_k > 1 else {},
            f"split_heads(x, {h}) for x of shape {tuple(x.shape)} must give (B, H, L, d_k) = "
            f"{(b, h, length, d_k)} with head h holding features h*d_k:(h+1)*d_k",
            atol=0.0,
            counterexample=lambda: smaller_split_example(split_heads),
        )


def name_a_fixed_head_size(split_heads: Callable[[Tensor, int], Tensor]) -> None:
    """Fail naming fixed_head_size where the experiment shows it: on x (2, 3, H * d_k) for
    d_k = 1 to 8, H = 2 and 3, the answer gives the oracle's heads for exactly one d_k (for both
    H), at least 2, and raises or differs for every other; otherwise return. (At d_k = 1 every
    layout of the features is the same, so the interleaved split is right there alone.)"""
    g = torch.Generator().manual_seed(7)
    right = []
    for d_k in range(1, 9):
        fits = True
        for num_heads in (2, 3):
            x = torch.randn(2, 3, num_heads * d_k, generator=g)
            try:
                y = split_heads(x.clone(), num_heads)
            except Exception:  # noqa: BLE001 - raising here is what the experiment looks for
                fits = False
                continue
            expected = oracle_split(x, num_heads)
            fits = fits and isinstance(y, Tensor) and y.shape == expected.shape
            fits = fits and bool(torch.equal(y, expected))
        if fits:
            right.append(d_k)
    if len(right) == 1 and right[0] >= 2:
        fail(
            f"{SPLIT['fixed_head_size']}: on x of shape (2, 3, H * d_k) for d_k = 1 to 8 and "
            f"H = 2 and 3, it gives them for d_k = {right[0]} only, and raises or differs for "
            "every other d_k"
        )


def smaller_split_example(split_heads: Callable[[Tensor, int], Tensor]) -> str | None:
    """split_heads(x, H) against the oracle on public (B, L, H * d_k) integer inputs, smallest
    first, for H = 2 then 3: the call and a counterexample, or None."""
    for num_heads in (2, 3):
        found = split_example(split_heads, num_heads)
        if found:
            return f"split_heads(x, {num_heads}) on {found}"
    return None


def split_example(split_heads: Callable[[Tensor, int], Tensor], num_heads: int) -> str | None:
    """A counterexample to split_heads(x, num_heads), smallest (B, L, d_k) first, or None."""
    sizes = sorted(
        ((b, length, d_k) for b in (1, 2) for length in (1, 2, 3) for d_k in (1, 2, 3)),
        key=lambda size: (sum(size), size),
    )

    def inputs(g: torch.Generator, size: tuple[int, ...]) -> dict[str, Tensor]:
        b, length, d_k = size
        return {"x": small_integers(g, b, length, num_heads * d_k)}

    return smallest_counterexample(
        lambda x: split_heads(x, num_heads),
        lambda x: oracle_split(x, num_heads),
        inputs,
        sizes,
        atol=0.0,
    )


@check(
    ASSIGNMENT,
    "test_split_heads",
    keeps=("where `out[:, h]` holds the features `x[..., h*d_k:(h+1)*d_k]`",),
)
def split_heads_keeps_gradients_and_dtype(ns: Namespace) -> None:
    split_heads = require(ns, "split_heads")
    g = hidden_generator("a02 split grad")
    # Two head sizes, so that a head size written into the answer passes neither.
    b, length, h, d_k, other_d_k = random_sizes(g, 5)
    for size in (d_k, other_d_k):
        split_keeps_gradients_and_dtype(split_heads, g, b, length, h, size)


def split_keeps_gradients_and_dtype(
    split_heads: Callable[[Tensor, int], Tensor],
    g: torch.Generator,
    b: int,
    length: int,
    h: int,
    d_k: int,
) -> None:
    """split_heads of a float64 x (B, L, H * d_k) that requires grad: float64, with gradients,
    each input element once in the output."""
    x = torch.randn(b, length, h * d_k, generator=g, dtype=torch.float64, requires_grad=True)
    y = split_heads(x, h)
    if y.dtype != torch.float64:
        fail(
            f"split_heads turned a float64 input into {y.dtype}: the statement's split only "
            "rearranges the tensor"
        )
    if not y.requires_grad:
        fail(
            "split_heads of an input that requires grad gave an output that does not: the "
            "output is cut from autograd"
        )
    y.backward(oracle_split(torch.ones_like(x), h))
    if not torch.equal(x.grad, torch.ones_like(x)):
        counts = sorted({int(c) for c in x.grad.flatten().tolist()})
        fail(
            "backpropagating ones through split_heads gives the input gradients "
            f"{counts}, not all 1: some input element appears in the output other than "
            "exactly once, where the statement's split moves each one once"
        )
