"""Exercise 2, `sinusoidal_encoding` (test_sinusoidal_encoding): the interleaved sin/cos table."""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor

import attention_lab.reference.a03_transformer_block as reference
from autograder.authoring.closeness import is_close
from autograder.authoring.diagnosis import diagnose
from autograder.authoring.hidden_draws import hidden_generator, random_sizes
from autograder.authoring.mistakes import Mistake, catalogue
from autograder.authoring.reference_bans import ban
from autograder.authoring.registry import EDGE_CASES, Namespace, check, fail
from autograder.authoring.requiring import require
from autograder.checks.a03_transformer_block.shared import ASSIGNMENT

PE_BANNED = {
    "attention_lab's sinusoidal_table": reference.sinusoidal_table,
    "attention_lab's SinusoidalPositionalEncoding": reference.SinusoidalPositionalEncoding,
}


# The named mistakes of `sinusoidal_encoding`, by family (autograder/authoring/mistakes.py): each
# is diagnosed only where the table matches that variant of the formula (pe_variant).
PE = catalogue(
    ASSIGNMENT,
    "sinusoidal_encoding",
    {
        "layout": {
            "concatenated": "sines and cosines are concatenated (all sines in the first half, "
            "all cosines in the second): the notebook's layout is interleaved, sin in the even "
            "columns 0, 2, 4, ... and cos in the odd columns 1, 3, 5, ..., so position 0 is "
            "[0, 1, 0, 1, ...]",
            "swapped": "sin and cos are swapped: sines go in the EVEN columns (pe[:, 0::2]) and "
            "cosines in the ODD columns (pe[:, 1::2]), so position 0 is [0, 1, 0, 1, ...]",
            "cos_first_concatenated": "cosines come first and the halves are concatenated: the "
            "layout is interleaved, sin in the even columns and cos in the odd columns",
        },
        "frequencies": {
            "exponent_i": "the exponent must be 2i/d_model with 2i the even column index (i = "
            "0, 1, ..., d_model/2 - 1), not i/d_model",
            "exponent_per_column": "columns 2i and 2i+1 must share ONE angle: the cosine column "
            "uses the exponent 2i/d_model of its even partner, not (2i+1)/d_model",
            "base_1000": "the base of the frequencies is 10000: angle = pos / 10000^(2i/d_model)",
            "exponent_sign": "the angle is pos * 10000^(2i/d_model), the exponent's sign "
            "flipped: divide, pos / 10000^(2i/d_model), so that the frequencies fall from one "
            "pair of columns to the next",
        },
        "positions": {
            "start_at_1": "positions start at 0, not 1: use torch.arange(max_len), so row 0 is "
            "[0, 1, 0, 1, ...]",
        },
    },
)


def pe_variant(
    max_len: int,
    d_model: int,
    *,
    layout: str = "interleaved",
    exponent: str = "2i",
    base: float = 10000.0,
    first_position: int = 0,
) -> Tensor:
    """The (max_len, d_model) table in float64, with one detail changed per keyword."""
    position = torch.arange(first_position, first_position + max_len, dtype=torch.float64)[:, None]
    pair = torch.arange(d_model // 2, dtype=torch.float64)
    if exponent == "-2i":  # multiplied by 10000^(2i/d_model) instead of divided
        sin_angle = cos_angle = position * base ** (2 * pair / d_model)
    elif exponent == "2i":
        sin_angle = cos_angle = position * base ** (-2 * pair / d_model)
    elif exponent == "i":
        sin_angle = cos_angle = position * base ** (-pair / d_model)
    elif exponent == "column":  # each column its own exponent: 2i for sin, 2i + 1 for cos
        sin_angle = position * base ** (-2 * pair / d_model)
        cos_angle = position * base ** (-(2 * pair + 1) / d_model)
    table = torch.zeros(max_len, d_model, dtype=torch.float64)
    sin, cos = torch.sin(sin_angle), torch.cos(cos_angle)
    if layout == "interleaved":
        table[:, 0::2], table[:, 1::2] = sin, cos
    elif layout == "swapped":
        table[:, 0::2], table[:, 1::2] = cos, sin
    elif layout == "concatenated":
        table[:, : d_model // 2], table[:, d_model // 2 :] = sin, cos
    elif layout == "concatenated, cos first":
        table[:, : d_model // 2], table[:, d_model // 2 :] = cos, sin
    return table


def pe_mistakes(max_len: int, d_model: int) -> dict[Mistake, Tensor]:
    """What each misreading of the formula gives, in float64."""
    return {
        PE["concatenated"]: pe_variant(max_len, d_model, layout="concatenated"),
        PE["swapped"]: pe_variant(max_len, d_model, layout="swapped"),
        PE["cos_first_concatenated"]: pe_variant(
            max_len, d_model, layout="concatenated, cos first"
        ),
        PE["exponent_i"]: pe_variant(max_len, d_model, exponent="i"),
        PE["exponent_per_column"]: pe_variant(max_len, d_model, exponent="column"),
        PE["base_1000"]: pe_variant(max_len, d_model, base=1000.0),
        PE["start_at_1"]: pe_variant(max_len, d_model, first_position=1),
    }


ban(ASSIGNMENT, "sinusoidal_encoding", PE_BANNED)


def judge_table(
    sinusoidal_encoding: Callable[[int, int], object], cases: list[tuple[int, int]]
) -> None:
    """Fail unless ``sinusoidal_encoding(max_len, d_model)`` is the float32 table of the formula
    for each ``(max_len, d_model)`` of ``cases``."""
    for max_len, d_model in cases:
        table = sinusoidal_encoding(max_len, d_model)
        if not isinstance(table, Tensor) or table.shape != (max_len, d_model):
            shape = tuple(getattr(table, "shape", ())) or type(table).__name__
            fail(
                f"sinusoidal_encoding({max_len}, {d_model}) must be a (max_len, d_model) = "
                f"{(max_len, d_model)} tensor, got {shape}"
            )
        if table.dtype != torch.float32:
            fail(
                f"sinusoidal_encoding must return float32 (the module's default dtype), got {table.dtype}"
            )
        expected = pe_variant(max_len, d_model)
        if exponent_sign_flipped(table, expected):
            fail(f"{PE['exponent_sign']} (sinusoidal_encoding({max_len}, {d_model}))")
        diagnose(
            table,
            expected,
            pe_mistakes(max_len, d_model),
            f"sinusoidal_encoding({max_len}, {d_model}) differs from PE[pos, 2i] = sin(pos / 10000^(2i/d_model)), "
            "PE[pos, 2i+1] = cos(the same angle)",
            atol=2e-4,
        )


def exponent_sign_flipped(table: Tensor, expected: Tensor) -> bool:
    """True when ``table`` is wrong and is pos * 10000^(2i/d_model)'s table wherever that angle
    is at most 50, where float32 computes its sine to 1e-5 (the larger angles of that table
    float32 rounds by whole radians, however the answer writes them), at two or more entries
    that differ from the formula's."""
    max_len, d_model = expected.shape
    flipped = pe_variant(max_len, d_model, exponent="-2i")
    position = torch.arange(max_len, dtype=torch.float64)[:, None]
    pair = torch.arange(d_model // 2, dtype=torch.float64)
    angle = (position * 10000.0 ** (2 * pair / d_model)).repeat_interleave(2, dim=1)
    telling = (angle <= 50) & ((flipped - expected).abs() > 1e-2)
    if is_close(table, expected, atol=2e-4) or int(telling.sum()) < 2:
        return False
    return bool(((table.double() - flipped).abs()[angle <= 50] <= 2e-4).all())


@check(
    ASSIGNMENT,
    "test_sinusoidal_encoding",
    keeps=(
        "Return the `(max_len, d_model)` table above as a `float32` tensor",
        r"the layout is interleaved: even columns $0, 2, 4, \dots$ hold sines, odd "
        r"columns $1, 3, 5, \dots$ hold cosines",
        "columns $2i$ and $2i+1$ share one angle",
    ),
)
def sinusoidal_encoding_matches_the_formula(ns: Namespace) -> None:
    sinusoidal_encoding = require(ns, "sinusoidal_encoding")
    g = hidden_generator("a03 pe")
    cases = []
    for _ in range(6):
        half, max_len = random_sizes(g, 2, low=3, high=40)
        cases.append((max_len, 2 * half))
    cases += [
        (
            int(torch.randint(100, 257, (1,), generator=g)),
            2 * int(torch.randint(20, 81, (1,), generator=g)),
        )
    ]
    judge_table(sinusoidal_encoding, [*cases, (8, 512), (5, 6)])


@check(
    ASSIGNMENT,
    "test_sinusoidal_encoding",
    weight=EDGE_CASES,
    keeps=(
        "Return the `(max_len, d_model)` table above as a `float32` tensor, for "
        r"positions $0, \dots, \text{max\_len}-1$.",
        "`d_model` is even.",
    ),
)
def sinusoidal_encoding_of_degenerate_sizes(ns: Namespace) -> None:
    # One position, or one sin/cos pair of columns: the table's smallest shapes.
    judge_table(require(ns, "sinusoidal_encoding"), [(1, 2), (3, 2), (1, 10)])
