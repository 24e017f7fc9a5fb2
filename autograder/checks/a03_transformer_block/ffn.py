"""Exercise 4, `PositionwiseFeedForward` (test_feed_forward): against attention_lab's FeedForward."""

from __future__ import annotations

import torch
from torch import Tensor, nn
from torch.nn import functional as F

import attention_lab.reference.a03_transformer_block as reference
from autograder.authoring.helpers import (
    ban,
    diagnose,
    draw_seed,
    fail,
    hidden_generator,
    random_sizes,
    require,
)
from autograder.authoring.registry import Namespace, check
from autograder.authoring.student_errors import explain
from autograder.checks.a03_transformer_block.shared import ASSIGNMENT

FFN_BANNED = {"attention_lab's FeedForward": reference.FeedForward}

ban(ASSIGNMENT, "PositionwiseFeedForward", FFN_BANNED)


def build_ffn(
    cls: type, d_model: int, d_ff: int, generator: torch.Generator, dropout: float = 0.0
) -> tuple[nn.Module, reference.FeedForward]:
    """(the student's network, the reference) with the same random weights, float64, eval mode."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(int(torch.randint(2**31, (1,), generator=generator)))
        theirs = reference.FeedForward(d_model, d_ff, dropout)
        try:
            mine = cls(d_model, d_ff, dropout)
        except NotImplementedError:
            raise
        except Exception as error:
            fail(explain(error, "PositionwiseFeedForward(d_model, d_ff, dropout)"))
    if not isinstance(mine, nn.Module):
        fail("PositionwiseFeedForward must be an nn.Module (class ...(nn.Module))")
    for name, shape in (("linear1", (d_ff, d_model)), ("linear2", (d_model, d_ff))):
        layer = getattr(mine, name, None)
        if not isinstance(layer, nn.Linear) or tuple(layer.weight.shape) != shape:
            fail(
                f"self.{name} must be an nn.Linear whose weight is {shape} for d_model={d_model}, "
                f"d_ff={d_ff}: linear1 = nn.Linear(d_model, d_ff), linear2 = nn.Linear(d_ff, d_model)"
            )
        if layer.bias is None:
            fail(f"self.{name} needs its bias: FFN(x) = max(0, x W1 + b1) W2 + b2")
    try:
        mine.load_state_dict(theirs.state_dict())
    except RuntimeError as error:
        first = str(error).strip().splitlines()[-1].strip()
        fail(f"build exactly linear1, dropout and linear2, with no other parameters ({first})")
    return mine.double().eval(), theirs.double().eval()


def ffn_mistakes(theirs: reference.FeedForward, x: Tensor) -> dict[str, Tensor]:
    """Outputs of the usual misreadings of FFN(x) = linear2(relu(linear1(x)))."""
    first, second = theirs.linear1, theirs.linear2
    return {
        "no ReLU between the two layers: FFN(x) = linear2(relu(linear1(x))); without it the two layers are one linear map": second(
            first(x)
        ),
        "a ReLU after the second layer too: only the hidden layer goes through the ReLU, the output may be negative": F.relu(
            second(F.relu(first(x)))
        ),
        "GELU instead of ReLU: the paper's (and this exercise's) FFN uses max(0, ·)": second(
            F.gelu(first(x))
        ),
        "the ReLU is applied to the input, before the first layer: relu goes between linear1 and linear2": second(
            first(F.relu(x))
        ),
        "the input is added back (a residual) inside the network: the block adds the residual, the FFN returns linear2(relu(linear1(x))) alone": x
        + second(F.relu(first(x))),
    }


def call_ffn(ffn: nn.Module, x: Tensor) -> Tensor:
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
        diagnose(call_ffn(mine, x), theirs(x), ffn_mistakes(theirs, x), otherwise, atol=1e-9)


@check(ASSIGNMENT, "test_feed_forward")
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


@check(ASSIGNMENT, "test_feed_forward")
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
            f"wrong for d_model={d_model}, d_ff={d_ff} on an input of shape {shape}: "
            "every position goes through linear2(relu(linear1(x))) alone, whatever the sizes",
        )


@check(ASSIGNMENT, "test_feed_forward")
def feed_forward_uses_its_dropout(ns: Namespace) -> None:
    cls = require(ns, "PositionwiseFeedForward", type)
    g = hidden_generator("a03 feed forward dropout")
    d_model, d_ff, length = random_sizes(g, 3, low=4, high=20)
    mine, theirs = build_ffn(cls, d_model, d_ff, g, dropout=0.5)
    x = torch.randn(3, length, d_model, generator=g, dtype=torch.float64)
    with torch.no_grad():
        if not torch.allclose(call_ffn(mine, x), theirs(x), atol=1e-9):
            fail("in eval mode dropout must do nothing: use an nn.Dropout module, not F.dropout")
        mine.train()
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(draw_seed(g))
            trained = call_ffn(mine, x)
        if torch.allclose(trained, theirs(x), atol=1e-9):
            fail(
                "dropout is never applied in training mode: apply self.dropout to the hidden layer"
            )
