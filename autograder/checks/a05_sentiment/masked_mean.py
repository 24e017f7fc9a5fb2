"""Exercise 1, `masked_mean` (test_masked_mean): the mean over real tokens."""

from __future__ import annotations

import torch
from torch import Tensor

from autograder.authoring.closeness import is_close
from autograder.authoring.diagnosis import diagnose
from autograder.authoring.hidden_draws import hidden_generator, random_sizes
from autograder.authoring.reference_bans import ban
from autograder.authoring.registry import Namespace, check, fail
from autograder.authoring.requiring import require
from autograder.checks.a05_sentiment.shared import (
    ASSIGNMENT,
    BANNED,
    draw_ids,
    masked_mean_mistakes,
    oracle_masked_mean,
)

ban(ASSIGNMENT, "masked_mean", BANNED)


@check(ASSIGNMENT, "test_masked_mean")
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
            masked_mean(hidden, ids, pad_id),
            oracle_masked_mean(hidden, ids, pad_id),
            masked_mean_mistakes(hidden, ids, pad_id),
            f"masked_mean(hidden {tuple(hidden.shape)}, pad_id={pad_id}) must give the (B, d_model) "
            "mean of hidden over the positions whose id is not pad_id",
        )


@check(ASSIGNMENT, "test_masked_mean")
def masked_mean_handles_all_padding_rows_dtype_and_gradients(ns: Namespace) -> None:
    masked_mean = require(ns, "masked_mean")
    g = hidden_generator("a05 masked mean edge")
    # B >= 3: two rows with real tokens beside the padding row, so that dividing by the whole
    # batch's count of real tokens differs from each row's own count under every draw.
    b, length, d_model, pad_id = random_sizes(g, 4, low=3, high=9)
    ids = draw_ids(g, b, length, pad_id, 12)
    ids[1] = pad_id  # a row made only of padding
    hidden = torch.randn(b, length, d_model, generator=g, dtype=torch.float64, requires_grad=True)
    out = masked_mean(hidden, ids, pad_id)
    if not isinstance(out, Tensor) or out.shape != (b, d_model):
        fail(f"masked_mean must return a (B, d_model) = {(b, d_model)} tensor")
    if out.dtype != torch.float64:
        fail(
            f"masked_mean turned float64 into {out.dtype}: convert the mask with .to(hidden.dtype)"
        )
    if not torch.isfinite(out).all():
        fail(
            "a row made only of padding gives NaN (0/0): clamp the count of real tokens to at "
            "least 1 so that such a row pools to zeros"
        )
    if not (out[1] == 0).all():
        fail("a row made only of padding must pool to a zero vector")
    if not is_close(out, oracle_masked_mean(hidden.detach(), ids, pad_id)):
        fail("masked_mean is wrong when the batch holds a row made only of padding")
    if not out.requires_grad:
        fail("masked_mean cut the autograd graph: do not detach or build the result from numbers")
    out.backward(torch.randn(out.shape, generator=g, dtype=torch.float64))
    if not torch.isfinite(hidden.grad).all():
        fail("the gradient of masked_mean is not finite: avoid dividing by a zero count")
    if not (hidden.grad[ids == pad_id] == 0).all():
        fail(
            "padded positions get a non-zero gradient, so they still influence the mean: multiply "
            "by the 0/1 mask before summing"
        )


@check(ASSIGNMENT, "test_masked_mean")
def masked_mean_ignores_appended_padding(ns: Namespace) -> None:
    masked_mean = require(ns, "masked_mean")
    g = hidden_generator("a05 masked mean append")
    b, length, d_model, pad_id, extra = random_sizes(g, 5, low=2, high=10)
    ids = draw_ids(g, b, length, pad_id, 14)
    hidden = torch.randn(b, length, d_model, generator=g)
    longer = torch.cat([hidden, 1e3 * torch.randn(b, extra, d_model, generator=g)], dim=1)
    longer_ids = torch.cat([ids, torch.full((b, extra), pad_id)], dim=1)
    if not is_close(masked_mean(longer, longer_ids, pad_id), masked_mean(hidden, ids, pad_id)):
        fail(
            "appending <pad> positions (with large values) changed the pooled vectors: "
            "padded positions must count for nothing, neither in the sum nor in the count"
        )
