"""Exercise 5, `lm_loss` (test_lm_loss): the mean cross-entropy over all B * L positions."""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch import Tensor
from torch.nn import functional as F

import attention_lab.reference.a06_char_lm as encoder_reference
from autograder.authoring.closeness import is_close
from autograder.authoring.counterexample import small_integers, smallest_counterexample
from autograder.authoring.diagnosis import diagnose
from autograder.authoring.hidden_draws import hidden_generator, random_sizes
from autograder.authoring.mistakes import catalogue
from autograder.authoring.operation_mistakes import (
    mistaken_outputs,
    softmax_before_cross_entropy,
    softmax_over,
)
from autograder.authoring.reference_bans import ban
from autograder.authoring.registry import EDGE_CASES, Namespace, check, fail
from autograder.authoring.requiring import require
from autograder.checks.a06_char_lm.shared import ASSIGNMENT

# The named mistakes of lm_loss, by family (autograder/authoring/mistakes.py): each is
# diagnosed only where the loss equals that mistake's on the same logits and targets.
LOSS = catalogue(
    ASSIGNMENT,
    "lm_loss",
    {
        "reduction": {
            "summed": "the loss is summed over the positions: take the mean over all B*L positions",
            "summed_per_sequence": "the loss sums over each sequence and averages over the "
            "batch: take the mean over all B*L positions",
        },
        "units": {
            "bits": "the loss is in bits (log base 2): cross-entropy uses the natural log",
        },
        "softmax axis": {
            "log_softmax_over_positions": "the log-softmax runs over the positions (dim 1 of "
            "the (B, L, V) logits), not over the vocabulary (the last dim)",
            "log_softmax_over_sequences": "the log-softmax runs over the sequences (dim 0 of "
            "the (B, L, V) logits), not over the vocabulary (the last dim)",
        },
        "log-probabilities": {
            "log_of_softmax": "the loss takes the log of the softmax's probabilities: a target "
            "far below the largest logit of its row gets probability 0 in floating point, and "
            "log(0) = -inf; take log_softmax of the logits (or F.cross_entropy), which never "
            "forms that probability",
            "unshifted_log_sum_exp": "the log of the softmax's normaliser is "
            "log(sum(exp(logits))) without the row's largest logit taken out first: exp of a "
            "logit near 100 or more overflows float32 to inf; subtract each row's maximum "
            "before exp and add it back after the log (torch.logsumexp, log_softmax and "
            "F.cross_entropy do so)",
            "no_log_softmax": "the loss is minus the mean of the target logits, not of their "
            "log-probabilities: take log_softmax of the logits first (nll_loss expects "
            "log-probabilities; cross_entropy does both)",
        },
        "loss input": {
            "softmax_before_cross_entropy": "the logits pass through a softmax before "
            "F.cross_entropy, which applies log-softmax itself: the loss is the cross-entropy of "
            "probabilities between 0 and 1, a softmax taken twice; F.cross_entropy takes the "
            "logits",
        },
        "alignment": {
            "targets_misaligned": "the targets are paired with the wrong positions: flatten "
            "logits (B, L, V) to (B*L, V) and targets (B, L) to (B*L,) in the same order",
        },
    },
)

# F.cross_entropy is the tool the exercise asks for; the package's language-model loss is not.
ban(ASSIGNMENT, "lm_loss", {"attention_lab's CausalLM.loss": encoder_reference.CausalLM.loss})


def position_losses(logits: Tensor, targets: Tensor) -> Tensor:
    """(B, L): -log softmax(logits)[target] at every position; logits (B, L, V), targets (B, L)."""
    return -torch.log_softmax(logits, dim=-1).gather(-1, targets.unsqueeze(-1)).squeeze(-1)


def mean_loss(logits: Tensor, targets: Tensor) -> Tensor:
    """The mean of position_losses: lm_loss's value."""
    return position_losses(logits, targets).mean()


def rows_cross_entropy(logits: Tensor, targets: Tensor) -> Tensor:
    """lm_loss's value as F.cross_entropy over the B*L rows: what a slip of that call changes."""
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))


def smaller_loss_example(lm_loss: Callable[[Tensor, Tensor], object]) -> Callable[[], str | None]:
    """A counterexample finder for ``lm_loss``: public logits of small integers and targets, of
    the smallest (B, L, V) first."""
    sizes = sorted(
        ((b, length, vocab) for b in (1, 2) for length in (1, 2, 3) for vocab in (2, 3, 4)),
        key=sum,
    )

    def inputs(g: torch.Generator, size: tuple[int, ...]) -> dict[str, Tensor]:
        b, length, vocab = size
        targets = torch.randint(0, vocab, (b, length), generator=g)
        return {"logits": small_integers(g, b, length, vocab), "targets": targets}

    return lambda: smallest_counterexample(lm_loss, mean_loss, inputs, sizes)


def judge_loss(
    lm_loss: Callable[[Tensor, Tensor], object],
    g: torch.Generator,
    trials: list[tuple[int, int, int]],
) -> None:
    """Fail unless ``lm_loss`` is the differentiable mean cross-entropy over all positions, for
    each ``(B, L, V)`` of ``trials``."""
    for b, length, vocab in trials:
        logits = torch.randn(b, length, vocab, generator=g, dtype=torch.float64, requires_grad=True)
        targets = torch.randint(0, vocab, (b, length), generator=g)
        loss = lm_loss(logits, targets)
        if not isinstance(loss, Tensor) or loss.dim() != 0:
            fail(
                f"lm_loss must return a scalar tensor, got shape {tuple(getattr(loss, 'shape', ()))}"
            )
        with torch.no_grad():
            nll = position_losses(logits, targets)
            mistakes = {
                LOSS["summed"]: nll.sum(),
                LOSS["summed_per_sequence"]: nll.sum(1).mean(),
                LOSS["bits"]: nll.mean() / math.log(2),
                LOSS["no_log_softmax"]: -logits.gather(-1, targets.unsqueeze(-1)).mean(),
                LOSS["targets_misaligned"]: F.cross_entropy(
                    logits.reshape(-1, vocab), targets.T.reshape(-1)
                ),
                **mistaken_outputs(
                    LOSS,
                    mean_loss,
                    {"logits": logits, "targets": targets},
                    [
                        softmax_over(-2, "log_softmax_over_positions"),
                        softmax_over(-3, "log_softmax_over_sequences"),
                    ],
                ),
                **mistaken_outputs(
                    LOSS,
                    rows_cross_entropy,
                    {"logits": logits, "targets": targets},
                    [softmax_before_cross_entropy()],
                ),
            }
        diagnose(
            loss.detach(),
            nll.mean(),
            mistakes,
            f"lm_loss for (B, L, V) = {(b, length, vocab)} must be the mean over all B*L positions "
            "of -log softmax(logits)[target]",
            counterexample=smaller_loss_example(lm_loss),
        )
        if not loss.requires_grad:
            fail(
                "the loss lm_loss returns does not require grad: backward() cannot reach the "
                "logits (the statement asks for a loss to train with)"
            )
        loss.backward()
        if logits.grad is None or not torch.isfinite(logits.grad).all():
            fail("after backward(), the gradient of the logits is missing or not finite")


@check(
    ASSIGNMENT,
    "test_lm_loss",
    keeps=(
        "`lm_loss(logits, targets)`: `logits` `(B, L, V)`, `targets` `(B, L)` integer "
        "ids; return the scalar mean cross-entropy",
        r"the loss is the mean cross-entropy over all $B \cdot L$ positions",
    ),
)
def lm_loss_is_the_mean_over_all_positions(ns: Namespace) -> None:
    lm_loss = require(ns, "lm_loss")
    g = hidden_generator("a06 loss")
    judge_loss(lm_loss, g, [random_sizes(g, 3, low=2, high=9) for _ in range(3)])


@check(
    ASSIGNMENT,
    "test_lm_loss",
    weight=EDGE_CASES,
    keeps=(
        "`lm_loss(logits, targets)`: `logits` `(B, L, V)`, `targets` `(B, L)` integer "
        "ids; return the scalar mean cross-entropy",
    ),
)
def lm_loss_of_one_sequence_or_one_position(ns: Namespace) -> None:
    # The degenerate sizes: one sequence, one position, both.
    lm_loss = require(ns, "lm_loss")
    g = hidden_generator("a06 loss sizes of one")
    b, length, vocab = random_sizes(g, 3, low=2, high=9)
    judge_loss(lm_loss, g, [(1, length, vocab), (b, 1, vocab), (1, 1, vocab)])


@check(
    ASSIGNMENT,
    "test_lm_loss",
    weight=EDGE_CASES,
    keeps=(
        "The loss stays finite and exact for every finite logit, also where a target's logit "
        "lies 100 or more below the largest of its row (a confident wrong guess) or one logit "
        "lies 100 or more above the others.",
    ),
)
def lm_loss_is_exact_for_far_apart_logits(ns: Namespace) -> None:
    lm_loss = require(ns, "lm_loss")
    g = hidden_generator("a06 loss far apart")
    b, length, vocab = random_sizes(g, 3, low=2, high=7)
    targets = torch.randint(0, vocab, (b, length), generator=g)
    gap = 100 + 100 * torch.rand(b, length, 1, generator=g)
    # Two batches of float32 logits: every target 100 to 200 below the rest of its row, and one
    # other logit of each row 100 to 200 above the rest. An unshifted log-sum-exp overflows on
    # the second only; the log of the softmax's probability is log(0) on both. Each is named
    # only where the answer gives what it gives on both batches.
    below = torch.randn(b, length, vocab, generator=g)
    below.scatter_add_(-1, targets.unsqueeze(-1), -gap)
    above = torch.randn(b, length, vocab, generator=g)
    above.scatter_add_(-1, ((targets + 1) % vocab).unsqueeze(-1), gap)
    cases = {
        "whose targets lie 100 to 200 below the rest of their row": below,
        "where one logit other than the target lies 100 to 200 above the rest of its row": above,
    }
    wrong, two_steps_everywhere, unshifted_everywhere = [], True, True
    for what, logits in cases.items():
        loss = lm_loss(logits, targets)
        if not isinstance(loss, Tensor) or loss.dim() != 0:
            fail(
                f"lm_loss must return a scalar tensor, got shape {tuple(getattr(loss, 'shape', ()))}"
            )
        expected = mean_loss(logits.double(), targets)
        with torch.no_grad():
            probability = torch.softmax(logits, -1).gather(-1, targets.unsqueeze(-1))
            two_steps = -torch.log(probability).mean()
            unshifted = (
                torch.log(torch.exp(logits).sum(-1))
                - logits.gather(-1, targets.unsqueeze(-1))[..., 0]
            ).mean()
        two_steps_everywhere &= is_close(loss.detach(), two_steps, equal_nan=True)
        unshifted_everywhere &= is_close(loss.detach(), unshifted, equal_nan=True)
        if not is_close(loss.detach(), expected):
            wrong.append(f"{what}: got {loss.item():.6g}, expected {expected.item():.6g}")
    if wrong and two_steps_everywhere:
        fail(f"{LOSS['log_of_softmax']} (float32 logits {wrong[0]})")
    if wrong and unshifted_everywhere:
        fail(f"{LOSS['unshifted_log_sum_exp']} (float32 logits {wrong[0]})")
    if wrong:
        fail(
            f"lm_loss must be the exact mean cross-entropy for float32 logits (B, L, V) = "
            f"{(b, length, vocab)} {wrong[0]}"
        )
