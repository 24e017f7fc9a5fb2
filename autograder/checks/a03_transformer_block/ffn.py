"""Exercise 4, `PositionwiseFeedForward` (test_feed_forward): against attention_lab's FeedForward."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch import Tensor, nn
from torch.nn import functional as F

import attention_lab.reference.a03_transformer_block as reference
from autograder.authoring.closeness import first_difference, is_close
from autograder.authoring.counterexample import small_integers, smallest_module_counterexample
from autograder.authoring.diagnosis import diagnose
from autograder.authoring.dropout_sites import (
    MATCH_ATOL,
    RATE_TOLERANCE,
    VISIBLE,
    drop_rate,
    explained,
)
from autograder.authoring.hidden_draws import draw_seed, hidden_generator, random_sizes, under_seed
from autograder.authoring.in_place_writes import inputs_kept
from autograder.authoring.mistakes import Mistake, catalogue
from autograder.authoring.reference_bans import ban
from autograder.authoring.registry import Namespace, check, fail
from autograder.authoring.requiring import require
from autograder.authoring.student_errors import explain
from autograder.checks.a03_transformer_block.shared import ASSIGNMENT

FFN_BANNED = {"attention_lab's FeedForward": reference.FeedForward}

ban(ASSIGNMENT, "PositionwiseFeedForward", FFN_BANNED)


def build_ffn(
    cls: type, d_model: int, d_ff: int, generator: torch.Generator, dropout: float = 0.0
) -> tuple[nn.Module, reference.FeedForward]:
    """(the student's network, the reference) with the same random weights, float64, eval mode."""
    with under_seed(int(torch.randint(2**31, (1,), generator=generator))):
        theirs = reference.FeedForward(d_model, d_ff, dropout)
        try:
            mine = cls(d_model, d_ff, dropout)
        except NotImplementedError:
            raise
        except Exception as error:
            fail(explain(error, "PositionwiseFeedForward(d_model, d_ff, dropout)"))
    if not isinstance(mine, nn.Module):
        fail(
            f"PositionwiseFeedForward(...) is a {type(mine).__name__}, not an nn.Module, as the "
            "statement's class is"
        )
    for name, shape in (("linear1", (d_ff, d_model)), ("linear2", (d_model, d_ff))):
        layer = getattr(mine, name, None)
        if (
            isinstance(layer, nn.Linear)
            and d_model != d_ff  # a square layer's sizes cannot be told apart
            and tuple(layer.weight.shape) == shape[::-1]
        ):
            fail(f"{FFN[f'{name}_sizes_swapped']} (d_model={d_model}, d_ff={d_ff})")
        if not isinstance(layer, nn.Linear) or tuple(layer.weight.shape) != shape:
            found = (
                f"an nn.Linear with weight {tuple(layer.weight.shape)}"
                if isinstance(layer, nn.Linear)
                else type(layer).__name__
            )
            fail(
                f"self.{name} is {found} for d_model={d_model}, d_ff={d_ff}: the statement's "
                "linear1 = nn.Linear(d_model, d_ff), linear2 = nn.Linear(d_ff, d_model) have "
                f"weight {shape}"
            )
        if layer.bias is None:
            fail(f"self.{name} has no bias; the statement's FFN(x) = max(0, x W1 + b1) W2 + b2")
    try:
        mine.load_state_dict(theirs.state_dict())
    except RuntimeError as error:
        first = str(error).strip().splitlines()[-1].strip()
        fail(
            "the reference's parameters, linear1 and linear2 alone, do not load into your "
            f"network ({first})"
        )
    return mine.double().eval(), theirs.double().eval()


# The named mistakes of PositionwiseFeedForward, by family (autograder/authoring/mistakes.py):
# each is diagnosed only where the output matches that mistake's, computed with the reference's
# weights, or, for dropout, where dropout masks at that site explain the train-mode output.
FFN = catalogue(
    ASSIGNMENT,
    "PositionwiseFeedForward",
    {
        "activation": {
            "no_relu": "no ReLU between the two layers: FFN(x) = linear2(relu(linear1(x))); "
            "without it the two layers are one linear map",
            "relu_after_output": "a ReLU after the second layer too: only the hidden layer goes "
            "through the ReLU, the output may be negative",
            "gelu": "GELU instead of ReLU: the paper's (and this exercise's) FFN uses max(0, ·)",
            "relu_on_input": "the ReLU is applied to the input, before the first layer: relu "
            "goes between linear1 and linear2",
        },
        "layer sizes": {
            "linear1_sizes_swapped": "linear1 is built as nn.Linear(d_ff, d_model): it maps "
            "d_model features to d_ff, linear1 = nn.Linear(d_model, d_ff)",
            "linear2_sizes_swapped": "linear2 is built as nn.Linear(d_model, d_ff): it maps "
            "d_ff features back to d_model, linear2 = nn.Linear(d_ff, d_model)",
        },
        "residual": {
            "adds_input": "the input is added back (a residual) inside the network: the block "
            "adds the residual, the FFN returns linear2(relu(linear1(x))) alone",
        },
        "dropout placement": {
            "dropout_not_applied": "dropout is never applied in training mode: apply "
            "self.dropout to the hidden layer, linear2(dropout(relu(linear1(x))))",
            "dropout_on_output": "dropout is applied to the output: in train mode whole output "
            "values are zeroed; dropout belongs on the hidden layer, "
            "linear2(dropout(relu(linear1(x))))",
            "dropout_on_input": "dropout is applied to the input x: in train mode the hidden "
            "layer is relu(linear1(x)) of an x with entries zeroed; dropout belongs on the "
            "hidden layer, linear2(dropout(relu(linear1(x))))",
        },
        "dropout mode": {
            # What was observed only (as the block's): a dropout that eval() does not reach has
            # several causes (F.dropout without training=, an nn.Dropout built in forward).
            "dropout_in_eval": "in eval mode dropout still zeroes hidden units: the output is "
            "linear2 of relu(linear1(x)) with some hidden units zeroed and the others scaled "
            "alike, where eval mode drops nothing",
        },
        "dropout rate and scale": {
            "dropout_unscaled": "the kept hidden units are not scaled by 1/(1-p): dropout "
            "divides what it keeps by (1 - p), as nn.Dropout(dropout) does, so the expected "
            "output stays the same",
            "keep_probability": "dropout is built with the keep probability 1 - p: "
            "nn.Dropout(p) takes the probability of ZEROING a unit, so build "
            "nn.Dropout(dropout) with the constructor's dropout",
        },
    },
)


def ffn_mistakes(theirs: reference.FeedForward, x: Tensor) -> dict[Mistake, Tensor]:
    """Outputs of the usual misreadings of FFN(x) = linear2(relu(linear1(x)))."""
    first, second = theirs.linear1, theirs.linear2
    return {
        FFN["no_relu"]: second(first(x)),
        FFN["relu_after_output"]: F.relu(second(F.relu(first(x)))),
        FFN["gelu"]: second(F.gelu(first(x))),
        FFN["relu_on_input"]: second(first(F.relu(x))),
        FFN["adds_input"]: x + second(F.relu(first(x))),
    }


def call_ffn(ffn: nn.Module, x: Tensor) -> Tensor:
    """ffn(x); a failure where it raised, or wrote into x (which the reference uses)."""
    with inputs_kept("PositionwiseFeedForward", x=x):
        try:
            out = ffn(x)
        except NotImplementedError:
            raise
        except Exception as error:
            fail(
                explain(
                    error, "your PositionwiseFeedForward", f" on an input of shape {tuple(x.shape)}"
                )
            )
    return out


def compare_with_reference(
    cls: type, d_model: int, d_ff: int, shape: tuple[int, ...], g: torch.Generator, otherwise: str
) -> None:
    """The student's FFN and the reference with the same weights agree on a float64 input of
    ``shape``; a known misreading is named, ``otherwise`` said for any other difference."""
    mine, theirs = build_ffn(cls, d_model, d_ff, g)
    x = torch.randn(*shape, generator=g, dtype=torch.float64)
    with torch.no_grad():
        diagnose(
            call_ffn(mine, x),
            theirs(x),
            ffn_mistakes(theirs, x),
            otherwise,
            atol=1e-9,
            counterexample=lambda: smaller_ffn_example(cls),
        )


# The public (N, d_model, d_ff) a counterexample is looked for at, smallest first.
EXAMPLE_SIZES = sorted(
    ((n, d_model, d_ff) for n in (1, 2) for d_model in (1, 2, 3) for d_ff in (1, 2, 3)),
    key=lambda size: (sum(size), size),
)


def smaller_ffn_example(cls: type) -> str | None:
    """The student's network against attention_lab's FeedForward, both given the same small
    integer weights, on public (N, d_model) integer inputs: a counterexample, or None."""

    def inputs(g: torch.Generator, size: tuple[int, ...]) -> dict[str, Tensor]:
        return {"x": small_integers(g, size[0], size[1])}

    def module(of: type) -> Callable[[tuple[int, ...]], nn.Module]:
        return lambda size: of(size[1], size[2], 0.0)

    return smallest_module_counterexample(
        module(cls), module(reference.FeedForward), inputs, EXAMPLE_SIZES
    )


@check(
    ASSIGNMENT,
    "test_feed_forward",
    keeps=(
        "`forward(x)` takes `x` of shape `(..., d_model)` and returns "
        "`linear2(dropout(relu(linear1(x))))`, of the same shape",
        "create `self.linear1` = `nn.Linear(d_model, d_ff)`",
    ),
)
def feed_forward_matches_the_reference(ns: Namespace) -> None:
    cls = require(ns, "PositionwiseFeedForward", type)
    g = hidden_generator("a03 feed forward")
    for lead_dims in (1, 2, 3):
        d_model, d_ff, *lead = random_sizes(g, 2 + lead_dims, low=2, high=17)
        shape = (*lead, d_model)
        compare_with_reference(
            cls,
            d_model,
            d_ff,
            shape,
            g,
            f"the output differs from linear2(relu(linear1(x))) on an input of shape {shape}",
        )


@check(
    ASSIGNMENT,
    "test_feed_forward",
    keeps=(
        "`forward(x)` takes `x` of shape `(..., d_model)` and returns "
        "`linear2(dropout(relu(linear1(x))))`, of the same shape",
    ),
)
def feed_forward_handles_degenerate_sizes(ns: Namespace) -> None:
    cls = require(ns, "PositionwiseFeedForward", type)
    g = hidden_generator("a03 feed forward degenerate")
    for d_model, d_ff, lead in ((1, 3, (2, 4)), (5, 1, (1, 1)), (1, 1, (3,)), (4, 6, (1, 7))):
        shape = (*lead, d_model)
        compare_with_reference(
            cls,
            d_model,
            d_ff,
            shape,
            g,
            f"the output differs from linear2(relu(linear1(x))) for d_model={d_model}, "
            f"d_ff={d_ff} on an input of shape {shape}",
        )


def hidden_layer_of(theirs: reference.FeedForward, out: Tensor) -> Tensor | None:
    """The hidden vectors (N, d_ff) that linear2 maps to ``out`` (N, d_model), or None when
    ``out`` is no output of linear2 (linear2 is injective: d_ff < d_model)."""
    second = theirs.linear2
    hidden = torch.linalg.lstsq(second.weight, (out - second.bias).T).solution.T
    return hidden if is_close(second(hidden), out, atol=MATCH_ATOL) else None


def two_valued_scale(ratios: Tensor) -> float | None:
    """The one non-zero value s of ``ratios`` if each is 0 or s (a unit dropped or kept)."""
    kept = ratios[ratios.abs() > MATCH_ATOL]
    if not kept.numel():
        return 0.0
    scale = float(kept[0])
    return scale if torch.allclose(kept, torch.full_like(kept, scale), rtol=1e-6) else None


def hidden_units_dropped(theirs: reference.FeedForward, x: Tensor, out: Tensor) -> bool:
    """Whether ``out`` (x's shape) is linear2 of relu(linear1(x)) with some hidden units zeroed
    and the others all scaled by one factor (linear2 injective: d_ff < d_model)."""
    d_model = x.shape[-1]
    with torch.no_grad():
        hidden = F.relu(theirs.linear1(x.reshape(-1, d_model)))
        seen = hidden_layer_of(theirs, out.reshape(-1, d_model))
    if seen is None:
        return False
    observable = hidden > VISIBLE
    zeroed = observable & (seen.abs() <= MATCH_ATOL)
    return bool(zeroed.any()) and (
        two_valued_scale(torch.where(observable, seen / hidden, 0.0)) is not None
    )


def without_dropout(cls: type, mine: nn.Module, x: Tensor) -> Any:
    """The student's network built with dropout=0 and ``mine``'s weights, on ``x``, in eval mode
    (None where it cannot be built, its weights do not load, or it fails)."""
    d_model, d_ff = mine.linear1.in_features, mine.linear1.out_features
    try:
        plain = cls(d_model, d_ff, 0.0).double().eval()
        plain.load_state_dict(mine.state_dict())
        return call_ffn(plain, x)
    except Exception:  # CheckFailed too: a call_ffn failure
        return None


@check(
    ASSIGNMENT,
    "test_feed_forward",
    keeps=(
        "dropout on the hidden layer, no ReLU on the output",
        "`self.dropout` = `nn.Dropout(dropout)`",
    ),
)
def feed_forward_uses_its_dropout(ns: Namespace) -> None:
    """In eval mode dropout does nothing; in train mode it zeroes hidden units at rate p and
    scales the others by 1/(1-p), judged from the output alone (any random order passes)."""
    cls = require(ns, "PositionwiseFeedForward", type)
    g = hidden_generator("a03 feed forward dropout")
    d_ff = int(torch.randint(3, 6, (1,), generator=g))
    d_model = int(torch.randint(d_ff + 2, 10, (1,), generator=g))  # linear2 is injective
    p = round(0.25 + 0.35 * float(torch.rand((), generator=g)), 3)
    mine, theirs = build_ffn(cls, d_model, d_ff, g, dropout=p)
    x = torch.randn(6, 40, d_model, generator=g, dtype=torch.float64)
    with torch.no_grad():
        expected = theirs(x)
        evaluated = call_ffn(mine, x)
        if not (isinstance(evaluated, Tensor) and evaluated.shape == x.shape):
            fail(f"in eval mode the output must keep the input's shape {tuple(x.shape)}")
        if not is_close(evaluated, expected, atol=1e-9):
            if hidden_units_dropped(theirs, x, evaluated):
                fail(f"{FFN['dropout_in_eval']} (dropout={p})")
            plain = without_dropout(cls, mine, x)
            difference = first_difference(evaluated, expected, 1e-9)
            if plain is None:
                fail(
                    f"in eval mode (dropout={p}) the output differs from "
                    f"linear2(relu(linear1(x))) ({difference})"
                )
            if not is_close(plain, expected, atol=1e-9):
                fail(
                    f"in eval mode (dropout={p}) the output differs from "
                    f"linear2(relu(linear1(x))) ({difference}), as it does with dropout=0: this "
                    "check fails for that same cause"
                )
            fail(
                f"in eval mode (dropout={p}) the output differs from linear2(relu(linear1(x))), "
                f"which it gives with dropout=0 ({difference})"
            )
        mine.train()
        with under_seed(draw_seed(g)):
            trained = call_ffn(mine, x)
    if not (isinstance(trained, Tensor) and trained.shape == x.shape):
        fail(f"in train mode the output must keep the input's shape {tuple(x.shape)}")
    rows, reference_rows = trained.reshape(-1, d_model), expected.reshape(-1, d_model)
    if is_close(rows, reference_rows, atol=1e-9):
        fail(FFN["dropout_not_applied"])
    with torch.no_grad():
        flat = x.reshape(-1, d_model)
        hidden = F.relu(theirs.linear1(flat))
        seen = hidden_layer_of(theirs, rows)
    if seen is None:
        zeroed = rows.abs() <= MATCH_ATOL
        ratios = torch.where(zeroed, 0.0, rows / reference_rows)
        if zeroed.any() and two_valued_scale(ratios) is not None:
            fail(FFN["dropout_on_output"])
        fail(
            f"in train mode (dropout={p}) the output is not linear2 of any hidden layer, "
            "where the statement's linear2(dropout(relu(linear1(x)))) is"
        )
    observable = hidden > VISIBLE  # a unit the ReLU zeroed shows no drop
    scale = two_valued_scale(torch.where(observable, seen / hidden, 0.0))
    if scale is None:

        def input_site(masks: Tensor) -> Tensor:
            with torch.no_grad():  # (N, K, d_ff): the hidden layer of x with entries dropped
                return F.relu(theirs.linear1(flat[:, None] * masks / (1 - p)))

        if explained(seen, input_site, d_model) is not None:
            fail(FFN["dropout_on_input"])
        fail(
            f"in train mode (dropout={p}) the hidden layer linear2 reads is not "
            "relu(linear1(x)) with some units zeroed and the others scaled by one factor, as "
            "the statement's dropout(relu(linear1(x))) is"
        )
    rate = drop_rate((seen.abs() > MATCH_ATOL).to(x.dtype), observable)
    if abs(scale - 1 / (1 - p)) > 1e-6 * abs(scale):
        fail(misscaled_dropout(scale, rate, p))
    if abs(rate - p) > RATE_TOLERANCE:
        fail(
            f"in train mode {rate:.0%} of the hidden units are zeroed for dropout={p}, not about "
            f"{p:.0%}"
        )


def misscaled_dropout(scale: float, rate: float, p: float) -> str:
    """What is wrong with hidden units zeroed at ``rate`` and the kept ones scaled by ``scale``,
    not 1/(1-p): a named mistake where that is its output, else what was seen."""
    seen = f"dropout={p}: {rate:.0%} of the hidden units zeroed, the others scaled by {scale:.3f}"
    if abs(scale - 1) <= 1e-6 and abs(rate - p) <= RATE_TOLERANCE:
        return f"{FFN['dropout_unscaled']} ({seen})"
    implied = 1 - 1 / scale if scale > 1 else None  # the p whose 1/(1-p) this scale is
    if implied is not None and abs(rate - implied) <= RATE_TOLERANCE:
        if abs(implied - (1 - p)) <= 1e-3:
            return f"{FFN['keep_probability']} ({seen}, which is 1/(1 - {implied:.3f}))"
        return (
            f"in train mode the hidden layer is dropped as by dropout={implied:.3f} ({rate:.0%} "
            f"of the units zeroed, the others scaled by 1/(1-{implied:.3f})), not by "
            f"dropout={p}"
        )
    return (
        f"the kept hidden units are scaled by {scale:.3f}, not by 1/(1-p) = {1 / (1 - p):.3f} "
        f"for dropout={p} ({rate:.0%} of them zeroed)"
    )
