"""Exercise 1, `make_blocks` (test_make_blocks): non-overlapping blocks, targets shifted by one."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch import Tensor

import attention_lab.reference.a06_char_lm as reference
from attention_lab.data import sample_lm_batch
from autograder.authoring.counterexample import smallest_counterexample
from autograder.authoring.diagnosis import SQUEEZED, diagnose, squeezed
from autograder.authoring.hidden_draws import hidden_generator, random_sizes
from autograder.authoring.mistakes import catalogue
from autograder.authoring.reference_bans import ban
from autograder.authoring.registry import Namespace, check, fail
from autograder.authoring.requiring import require
from autograder.authoring.student_errors import explain
from autograder.checks.a06_char_lm.shared import ASSIGNMENT, oracle_blocks

# The named mistakes of make_blocks, by family (autograder/authoring/mistakes.py): each is
# diagnosed only where the blocks equal that mistake's blocks of the same ids.
BLOCKS = catalogue(
    ASSIGNMENT,
    "make_blocks",
    {
        "alignment": {
            "not_shifted": "targets are not shifted by one: y equals x, so the model would learn "
            "to copy its input; y[i] must be the same slice moved one position ahead, "
            "ids[i*block_size + 1 : (i+1)*block_size + 1]",
            "shifted_by_two": "targets are shifted by two positions instead of one",
            "rolled_within_blocks": "each block of targets is its own block of inputs rolled "
            "left by one (x.roll(-1, dims=1)): the last target of a block wraps round to the "
            "block's first id, where it must be the id that follows the block, "
            "ids[(i+1)*block_size]",
            "inputs_late": "the input blocks start one position late: x[i] = "
            "ids[i*block_size : (i+1)*block_size]",
            "swapped": "x and y are swapped: x is the block of inputs, y the same block one step "
            "ahead",
        },
        "block shape": {
            "sizes_swapped": "the reshape's two sizes are swapped: x and y hold the right ids in "
            "the right order, but as (block_size, n_blocks); reshape to (n_blocks, block_size)",
        },
        "block count": {
            "one_block_too_many": "n_blocks counts len(ids) // block_size blocks: where len(ids) "
            "is a multiple of block_size, the last block's last target would be ids[len(ids)], "
            "one past the end; n_blocks = (len(ids) - 1) // block_size leaves one id for the "
            "last target",
        },
    },
)


def one_block_too_many(make_blocks: Callable[..., Any], length: int, block_size: int) -> str | None:
    """BLOCKS' one_block_too_many, with what confirmed it, for an answer that raised or gave
    len(ids) // block_size blocks on ids of ``length``: where that count is one more than the
    right one (``length`` a multiple of ``block_size``), and the answer gives the right blocks
    on every longer length of the same right count, where the two counts agree; None otherwise."""
    if block_size < 2 or length % block_size:
        return None
    agreeing = range(length + 1, length + block_size)  # len // block_size == (len - 1) // ...
    for n in agreeing:
        ids = 1000 * torch.arange(n) + 7  # distinct: any misalignment shows
        if not gives_blocks(make_blocks, ids, block_size, *oracle_blocks(ids, block_size)):
            return None
    lengths = f"{agreeing[0]}" if len(agreeing) == 1 else f"{agreeing[0]} to {agreeing[-1]}"
    return (
        f"{BLOCKS['one_block_too_many']} (on ids of length {lengths}, "
        f"where both counts are {length // block_size}, make_blocks gives the right blocks)"
    )


# Public (length, block_size) cases of distinct ids on which a rolled answer is confirmed.
ROLLED_CASES = ((7, 2), (10, 3), (13, 4), (9, 4))


def rolled_within_blocks(make_blocks: Callable[..., Any]) -> bool:
    """True when ``make_blocks`` gives the right x and, for y, x rolled left by one within each
    block, on every case of ROLLED_CASES: BLOCKS' rolled_within_blocks, seen on several inputs."""
    for length, block_size in ROLLED_CASES:
        ids = 1000 * torch.arange(length) + 7  # distinct: the wrapped last target shows
        expected_x, _ = oracle_blocks(ids, block_size)
        if not gives_blocks(make_blocks, ids, block_size, expected_x, expected_x.roll(-1, 1)):
            return False
    return True


def gives_blocks(
    make_blocks: Callable[..., Any], ids: Tensor, block_size: int, x: Tensor, y: Tensor
) -> bool:
    """Whether ``make_blocks(ids, block_size)`` returns exactly the tensors ``x`` and ``y``
    (raising there is another fault: False)."""
    try:
        got = make_blocks(ids, block_size)
        pairs = tuple(zip(got, (x, y), strict=True))
    except Exception:  # noqa: BLE001 - the answer's own error, or a result that is not a pair
        return False
    return all(
        isinstance(out, Tensor) and out.shape == want.shape and torch.equal(out, want)
        for out, want in pairs
    )


def in_other_shape(got: Tensor, expected: Tensor) -> bool:
    """True when ``got`` holds ``expected``'s values in the same order, in another shape."""
    return got.shape != expected.shape and torch.equal(got.flatten(), expected.flatten())


def call_make_blocks(make_blocks: Callable[..., Any], ids: Tensor, block_size: int):
    try:
        result = make_blocks(ids, block_size)
    except NotImplementedError:
        raise
    except Exception as error:
        raised = explain(
            error, "make_blocks", f" on ids of length {len(ids)}, block_size={block_size}"
        )
        cause = one_block_too_many(make_blocks, len(ids), block_size)
        fail(f"{cause}\n{raised}" if cause else raised)
    if not (isinstance(result, tuple) and len(result) == 2):
        fail("make_blocks must return a tuple (x, y)")
    return result


# The public lengths of ids a counterexample is looked for at, for each block size in turn.
EXAMPLE_LENGTHS = [(length,) for length in range(2, 9)]
EXAMPLE_BLOCKS = (1, 2, 3)


def smaller_blocks_example(make_blocks: Callable[..., Any], part: int) -> Callable[[], str | None]:
    """A counterexample finder for the x (part 0) or y (part 1) of ``make_blocks``: public ids,
    all distinct, of the smallest lengths first, with each block size of EXAMPLE_BLOCKS."""

    def inputs(g: torch.Generator, size: tuple[int, ...]) -> dict[str, Tensor]:
        return {"ids": torch.randperm(size[0], generator=g)}

    def find() -> str | None:
        for block in EXAMPLE_BLOCKS:
            found = smallest_counterexample(
                lambda ids, block=block: make_blocks(ids, block)[part],
                lambda ids, block=block: oracle_blocks(ids, block)[part],
                inputs,
                [size for size in EXAMPLE_LENGTHS if size[0] > block],
                atol=0.0,
            )
            if found:
                return f"with block_size={block}, {found}"
        return None

    return find


ban(
    ASSIGNMENT,
    "make_blocks",
    {
        "attention_lab's make_lm_blocks": reference.make_lm_blocks,
        "attention_lab's sample_lm_batch": sample_lm_batch,
    },
)


@check(
    ASSIGNMENT,
    "test_make_blocks",
    keeps=(
        "`n_blocks = (len(ids) - 1) // block_size` (the last target needs one id beyond "
        "its block; drop the rest)",
        "`x[i] = ids[i*block_size : (i+1)*block_size]`, and `y[i]` the same slice moved "
        "one position ahead",
    ),
)
def make_blocks_shifts_targets_by_one(ns: Namespace) -> None:
    make_blocks = require(ns, "make_blocks")
    g = hidden_generator("a06 blocks")
    cases = []
    for _ in range(3):
        block_size, n_blocks, rest = random_sizes(g, 3, low=2, high=9)
        cases.append((n_blocks * block_size + rest % block_size + 1, block_size))
    cases += [(4 * 6, 6), (4 * 6 + 1, 6), (13, 1)]  # a multiple of block_size, one more, size 1
    cases += [(7 + 1, 7), (2, 1)]  # exactly one block: of several ids, and of one
    for length, block_size in cases:
        ids = torch.randint(0, 60, (length,), generator=g)
        ids = ids + 1000 * torch.arange(length)  # every id distinct: any misalignment shows
        x, y = call_make_blocks(make_blocks, ids, block_size)
        expected_x, expected_y = oracle_blocks(ids, block_size)
        what = f"make_blocks(ids of length {length}, block_size={block_size})"
        if not isinstance(x, Tensor) or not isinstance(y, Tensor):
            fail("make_blocks must return two tensors (x, y)")
        if squeezed(x, expected_x.shape) or squeezed(y, expected_y.shape):
            fail(
                f"{SQUEEZED}: {what} must give x and y of shape {tuple(expected_x.shape)}, got "
                f"{tuple(x.shape)} and {tuple(y.shape)}"
            )
        if x.shape != expected_x.shape or y.shape != expected_y.shape:
            cause = None
            if len(x) == length // block_size:
                cause = one_block_too_many(make_blocks, length, block_size)
            if cause:
                fail(f"{cause}: {what} gave x {tuple(x.shape)} and y {tuple(y.shape)}")
            got = f"{what} must give {tuple(expected_x.shape)} blocks, got x {tuple(x.shape)} and y {tuple(y.shape)}"
            if in_other_shape(x, expected_x) and in_other_shape(y, expected_y):
                if tuple(x.shape) == tuple(expected_x.shape)[::-1]:
                    fail(f"{BLOCKS['sizes_swapped']}: {got}")
                fail(f"{got}: they hold the right ids in the right order, in another shape")
            fail(f"{got}: n_blocks = (len(ids) - 1) // block_size non-overlapping blocks")
        if torch.equal(x, expected_y) and torch.equal(y, expected_x):
            fail(BLOCKS["swapped"])
        diagnose(
            x,
            expected_x,
            {BLOCKS["inputs_late"]: expected_y},
            f"{what}: x[i] must be ids[i*block_size : (i+1)*block_size]",
            atol=0.0,
            counterexample=smaller_blocks_example(make_blocks, 0),
        )
        y_mistakes = {BLOCKS["not_shifted"]: expected_x}
        end = len(expected_x) * block_size
        if len(ids) >= end + 2:
            y_mistakes[BLOCKS["shifted_by_two"]] = ids[2 : end + 2].reshape(expected_y.shape)
        wrong = not torch.equal(y, expected_y)
        if wrong and block_size > 1 and rolled_within_blocks(make_blocks):
            y_mistakes[BLOCKS["rolled_within_blocks"]] = expected_x.roll(-1, dims=1)
        diagnose(
            y,
            expected_y,
            y_mistakes,
            f"{what}: y must be x shifted one step ahead, y[i, t] = ids[i*block_size + t + 1]",
            atol=0.0,
            counterexample=smaller_blocks_example(make_blocks, 1),
        )


@check(
    ASSIGNMENT, "test_make_blocks", keeps=("both `(n_blocks, block_size)`, same dtype as `ids`",)
)
def make_blocks_keeps_the_dtype(ns: Namespace) -> None:
    make_blocks = require(ns, "make_blocks")
    ids = torch.arange(3, 40, dtype=torch.int32)
    x, y = call_make_blocks(make_blocks, ids, 5)
    if x.dtype != torch.int32 or y.dtype != torch.int32:
        fail(
            f"make_blocks changed the dtype of int32 ids to {x.dtype}/{y.dtype}: slice and reshape"
        )
    if not (torch.equal(x, oracle_blocks(ids, 5)[0]) and torch.equal(y, oracle_blocks(ids, 5)[1])):
        wide = call_make_blocks(make_blocks, ids.long(), 5)
        if all(torch.equal(a, b) for a, b in zip(wide, oracle_blocks(ids.long(), 5), strict=True)):
            fail(
                "make_blocks(arange(3, 40), block_size=5) is right on int64 ids and wrong on int32"
            )
        fail(
            "make_blocks(arange(3, 40), block_size=5) is wrong on int64 ids as on int32, so not "
            "because of the dtype (the shapes and values to expect: make_blocks_shifts_targets_by_one)"
        )
