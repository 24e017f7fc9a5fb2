"""Exercise 1, `masked_mean` (test_masked_mean): the mean over real tokens."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import torch
from torch import Tensor

from autograder.authoring.closeness import first_difference, is_close
from autograder.authoring.counterexample import small_integers, smallest_counterexample
from autograder.authoring.diagnosis import diagnose
from autograder.authoring.hidden_draws import hidden_generator, random_sizes
from autograder.authoring.in_place_writes import inputs_kept
from autograder.authoring.reference_bans import ban
from autograder.authoring.registry import Namespace, check, fail
from autograder.authoring.requiring import require
from autograder.checks.a05_sentiment.shared import (
    ASSIGNMENT,
    BANNED,
    MASKED_MEAN,
    draw_ids,
    first_n_mean,
    masked_mean_mistakes,
    oracle_masked_mean,
)

ban(ASSIGNMENT, "masked_mean", BANNED)

# The public counterexamples' pad id: not 0, so that a pad id fixed at 0 shows too.
PUBLIC_PAD_ID = 1
# (B, L, d_model), smallest first.
PUBLIC_SIZES = [(1, 1, 1), (1, 2, 1), (2, 2, 1), (1, 3, 1), (2, 3, 2), (3, 4, 2)]


def call_masked_mean(masked_mean: Callable[..., Any], hidden: Tensor, ids: Tensor, pad_id: int):
    """masked_mean(hidden, ids, pad_id); a failure where it wrote into hidden or the ids, which
    the oracle and the checks' other calls use."""
    with inputs_kept("masked_mean", hidden=hidden, token_ids=ids):
        return masked_mean(hidden, ids, pad_id)


def public_batch(generator: torch.Generator, size: tuple[int, ...]) -> dict[str, Tensor]:
    """hidden (B, L, d_model) of small integers and token_ids (B, L) in {0, 1, 2}: pads (id 1)
    anywhere in a row."""
    b, length, d_model = size
    return {
        "hidden": small_integers(generator, b, length, d_model),
        "token_ids": torch.randint(0, 3, (b, length), generator=generator),
    }


def masked_mean_counterexample(masked_mean: Callable[..., Any]) -> str | None:
    """The smallest public batch on which the answer differs from the mean over real tokens,
    with pad_id = PUBLIC_PAD_ID, described; None if there is none."""
    found = smallest_counterexample(
        lambda hidden, token_ids: masked_mean(hidden, token_ids, PUBLIC_PAD_ID),
        lambda hidden, token_ids: oracle_masked_mean(hidden, token_ids, PUBLIC_PAD_ID),
        public_batch,
        PUBLIC_SIZES,
    )
    return None if found is None else f"with pad_id = {PUBLIC_PAD_ID}, {found}"


@check(
    ASSIGNMENT,
    "test_masked_mean",
    keeps=(
        "returns `(B, d_model)`, the mean of `hidden` over the positions whose id is "
        "not `pad_id`, in `hidden`'s dtype",
        "`pad_id`: the id to ignore (not always 0!)",
    ),
)
def masked_mean_matches_the_oracle(ns: Namespace) -> None:
    masked_mean = require(ns, "masked_mean")
    g = hidden_generator("a05 masked mean")
    for trial in range(5):
        b, length, d_model, pad_id = random_sizes(g, 4, low=2, high=11)
        pad_id = 0 if trial == 0 else pad_id
        b = 1 if trial == 4 else b  # a batch of one sentence
        vocab = max(pad_id + 2, 12)
        ids = draw_ids(g, b, length, pad_id, vocab)
        hidden = torch.randn(b, length, d_model, generator=g, dtype=torch.float64)
        diagnose(
            call_masked_mean(masked_mean, hidden, ids, pad_id),
            oracle_masked_mean(hidden, ids, pad_id),
            masked_mean_mistakes(hidden, ids, pad_id),
            f"masked_mean(hidden {tuple(hidden.shape)}, pad_id={pad_id}) must give the (B, d_model) "
            "mean of hidden over the positions whose id is not pad_id",
            counterexample=partial(masked_mean_counterexample, masked_mean),
        )


@check(
    ASSIGNMENT,
    "test_masked_mean",
    keeps=(
        "a row made only of padding has no mean: return zeros for it, never `NaN`",
        "the finite values of `hidden` at padded positions, however large, must not "
        "change the result, and they must get zero gradient",
        "returns `(B, d_model)`, the mean of `hidden` over the positions whose id is "
        "not `pad_id`, in `hidden`'s dtype",
    ),
)
def masked_mean_handles_all_padding_rows_dtype_and_gradients(ns: Namespace) -> None:
    masked_mean = require(ns, "masked_mean")
    g = hidden_generator("a05 masked mean edge")
    # B >= 3: two rows with real tokens beside the padding row, so that dividing by the whole
    # batch's count of real tokens differs from each row's own count under every draw.
    b, length, d_model, pad_id = random_sizes(g, 4, low=3, high=9)
    ids = draw_ids(g, b, length, pad_id, 12)
    ids[1] = pad_id  # a row made only of padding
    hidden = torch.randn(b, length, d_model, generator=g, dtype=torch.float64, requires_grad=True)
    out = call_masked_mean(masked_mean, hidden, ids, pad_id)
    if not isinstance(out, Tensor) or out.shape != (b, d_model):
        fail(f"masked_mean must return a (B, d_model) = {(b, d_model)} tensor")
    if out.dtype != torch.float64:
        fail(f"masked_mean(hidden in torch.float64) returned {out.dtype}, not hidden's dtype")
    if not torch.isfinite(out).all():
        # The experiment: the answer is the plain sum / count, NaN in row 1 alone (issue 40's
        # blind answer i05-01); a right answer has no NaN, so never matches it.
        keep = (ids != pad_id).unsqueeze(-1).to(hidden.dtype)
        unguarded = (hidden.detach() * keep).sum(dim=1) / keep.sum(dim=1)
        if is_close(out, unguarded, equal_nan=True):
            fail(str(MASKED_MEAN["zero_count_unguarded"]))
        fail(
            f"on a batch whose row 1 is made only of padding, masked_mean gives values that are "
            f"not finite: row 1 is {out[1].tolist()}; the statement asks a zero vector for it"
        )
    if not (out[1] == 0).all():
        fail(
            f"a row made only of padding pools to {out[1].tolist()}; the statement asks a zero "
            "vector for it"
        )
    expected = oracle_masked_mean(hidden.detach(), ids, pad_id)
    if not is_close(out, expected):
        fail(
            "on a batch whose row 1 is made only of padding, masked_mean differs from the mean "
            f"over the real positions ({first_difference(out, expected)})"
        )
    if not out.requires_grad:
        fail("the result of masked_mean does not require grad although hidden does")
    out.backward(torch.randn(out.shape, generator=g, dtype=torch.float64))
    if not torch.isfinite(hidden.grad).all():
        fail("the gradient of masked_mean with respect to hidden is not finite everywhere")
    pads = hidden.grad[ids == pad_id]
    if not (pads == 0).all():
        fail(
            f"padded positions get a gradient (up to {pads.abs().max().item():.3g} in size), so "
            "the result depends on their values"
        )


@check(
    ASSIGNMENT,
    "test_masked_mean",
    keeps=(
        "the finite values of `hidden` at padded positions, however large, must not "
        "change the result, and they must get zero gradient",
    ),
)
def masked_mean_ignores_appended_padding(ns: Namespace) -> None:
    masked_mean = require(ns, "masked_mean")
    g = hidden_generator("a05 masked mean append")
    b, length, d_model, pad_id, extra = random_sizes(g, 5, low=2, high=10)
    ids = draw_ids(g, b, length, pad_id, 14)
    hidden = torch.randn(b, length, d_model, generator=g)
    longer = torch.cat([hidden, 1e3 * torch.randn(b, extra, d_model, generator=g)], dim=1)
    longer_ids = torch.cat([ids, torch.full((b, extra), pad_id)], dim=1)
    padded = call_masked_mean(masked_mean, longer, longer_ids, pad_id)
    alone = call_masked_mean(masked_mean, hidden, ids, pad_id)
    if not is_close(padded, alone):
        fail(
            f"appending {extra} <pad> positions (with values about 1000) to every row changed the "
            f"pooled vectors ({first_difference(padded, alone)})"
        )


def ids_padded_inside(g: torch.Generator, b: int, length: int, pad_id: int, vocab: int) -> Tensor:
    """(b, length) ids whose pads sit between real tokens: the first and last positions are real,
    row 0 has a pad at position 1, and about a third of the other positions are pads."""
    ids = torch.randint(0, vocab, (b, length), generator=g)
    ids[ids == pad_id] = (pad_id + 1) % vocab
    pads = torch.rand(b, length, generator=g) < 0.35
    pads[:, 0] = pads[:, -1] = False
    pads[0, 1] = True
    ids[pads] = pad_id
    return ids


@check(
    ASSIGNMENT,
    "test_masked_mean",
    keeps=(
        "returns `(B, d_model)`, the mean of `hidden` over the positions whose id is "
        "not `pad_id`, in `hidden`'s dtype",
    ),
)
def masked_mean_finds_pads_wherever_they_sit(ns: Namespace) -> None:
    """The statement defines the pads by their id: left padding and pads between real tokens."""
    masked_mean = require(ns, "masked_mean")
    g = hidden_generator("a05 masked mean pads anywhere")
    for where in ("at the start", "between real tokens"):
        b, length, d_model, pad_id = random_sizes(g, 4, low=3, high=11)
        vocab = max(pad_id + 2, 12)
        if where == "at the start":  # right padding mirrored: row 0 starts with pads
            ids = draw_ids(g, b, length, pad_id, vocab).flip(1)
        else:
            ids = ids_padded_inside(g, b, length, pad_id, vocab)
        hidden = torch.randn(b, length, d_model, generator=g, dtype=torch.float64)
        diagnose(
            call_masked_mean(masked_mean, hidden, ids, pad_id),
            oracle_masked_mean(hidden, ids, pad_id),
            {
                **masked_mean_mistakes(hidden, ids, pad_id),
                MASKED_MEAN["first_n_positions"]: first_n_mean(hidden, ids, pad_id),
            },
            f"masked_mean(hidden {tuple(hidden.shape)}, pad_id={pad_id}) with pads {where} of "
            "the rows must give the (B, d_model) mean of hidden over the positions whose id is "
            "not pad_id",
            counterexample=partial(masked_mean_counterexample, masked_mean),
        )


# Half precision rounds each value to 3 (float16) or 2 (bfloat16) significant digits; the sum
# of at most 10 values of size about 1 stays well within these of the exact mean.
HALF_TOLERANCES = {torch.float16: 1e-2, torch.bfloat16: 6e-2}


@check(
    ASSIGNMENT,
    "test_masked_mean",
    keeps=(
        "returns `(B, d_model)`, the mean of `hidden` over the positions whose id is "
        "not `pad_id`, in `hidden`'s dtype",
    ),
)
def masked_mean_keeps_half_precision(ns: Namespace) -> None:
    """The statement: the mean "in hidden's dtype", also for float16 and bfloat16."""
    masked_mean = require(ns, "masked_mean")
    g = hidden_generator("a05 masked mean half")
    for dtype, tolerance in HALF_TOLERANCES.items():
        b, length, d_model, pad_id = random_sizes(g, 4, low=2, high=11)
        ids = draw_ids(g, b, length, pad_id, max(pad_id + 2, 12))
        hidden = torch.randn(b, length, d_model, generator=g).to(dtype)
        out = call_masked_mean(masked_mean, hidden, ids, pad_id)
        if not isinstance(out, Tensor) or out.shape != (b, d_model):
            fail(
                f"masked_mean(hidden {tuple(hidden.shape)} in {dtype}) must return a (B, d_model) "
                f"= {(b, d_model)} tensor"
            )
        if out.dtype != dtype:
            seen = (
                f"masked_mean(hidden in {dtype}) returned {out.dtype}: the mean must come back "
                "in hidden's dtype"
            )
            # Named where the output is the float32 computation on the same input (a mean
            # computed in half precision differs from it by far more than 1e-6).
            in_float32 = oracle_masked_mean(hidden.float(), ids, pad_id)
            if out.dtype == torch.float32 and is_close(out, in_float32, atol=1e-6, rtol=1e-5):
                fail(f"{MASKED_MEAN['computed_in_float32']} ({seen})")
            fail(seen)
        # Its values in half precision against its own in float64: a mean wrong at every dtype
        # is the value checks' to charge, and this check tells only what half precision changes.
        own = call_masked_mean(masked_mean, hidden.double(), ids, pad_id)
        if isinstance(own, Tensor) and own.shape == (b, d_model):
            if not is_close(out, own, atol=tolerance, rtol=tolerance):
                fail(
                    f"masked_mean(hidden {tuple(hidden.shape)} in {dtype}, pad_id={pad_id}) "
                    f"differs from what it returns for the same values in float64 by more than "
                    f"{dtype} rounding ({tolerance:g})"
                )
        elif not is_close(
            out, oracle_masked_mean(hidden.double(), ids, pad_id), atol=tolerance, rtol=tolerance
        ):
            fail(
                f"masked_mean(hidden {tuple(hidden.shape)} in {dtype}, pad_id={pad_id}) differs "
                f"from the mean over the real positions by more than {dtype} rounding "
                f"({tolerance:g})"
            )
