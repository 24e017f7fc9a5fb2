"""Exercise 5, `lm_loss` (test_lm_loss): the mean cross-entropy over all B * L positions."""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch import Tensor
from torch.nn import functional as F

import attention_lab.reference.a06_char_lm as encoder_reference
from autograder.authoring.diagnosis import diagnose
from autograder.authoring.hidden_draws import hidden_generator, random_sizes
from autograder.authoring.mistakes import catalogue
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
        "alignment": {
            "targets_misaligned": "the targets are paired with the wrong positions: flatten "
            "logits (B, L, V) to (B*L, V) and targets (B, L) to (B*L,) in the same order",
        },
    },
)

# F.cross_entropy is the tool the exercise asks for; the package's language-model loss is not.
ban(ASSIGNMENT, "lm_loss", {"attention_lab's CausalLM.loss": encoder_reference.CausalLM.loss})


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
            nll = -torch.log_softmax(logits, -1).gather(-1, targets.unsqueeze(-1)).squeeze(-1)
            mistakes = {
                LOSS["summed"]: nll.sum(),
                LOSS["summed_per_sequence"]: nll.sum(1).mean(),
                LOSS["bits"]: nll.mean() / math.log(2),
                LOSS["targets_misaligned"]: F.cross_entropy(
                    logits.reshape(-1, vocab), targets.T.reshape(-1)
                ),
            }
        diagnose(
            loss.detach(),
            nll.mean(),
            mistakes,
            f"lm_loss for (B, L, V) = {(b, length, vocab)} must be the mean over all B*L positions "
            "of -log softmax(logits)[target]",
        )
        loss.backward()
        if logits.grad is None or not torch.isfinite(logits.grad).all():
            fail("lm_loss must be differentiable in the logits: do not detach or use .item()")


@check(ASSIGNMENT, "test_lm_loss")
def lm_loss_is_the_mean_over_all_positions(ns: Namespace) -> None:
    lm_loss = require(ns, "lm_loss")
    g = hidden_generator("a06 loss")
    judge_loss(lm_loss, g, [random_sizes(g, 3, low=2, high=9) for _ in range(3)])


@check(ASSIGNMENT, "test_lm_loss", weight=EDGE_CASES)
def lm_loss_of_one_sequence_or_one_position(ns: Namespace) -> None:
    # The degenerate sizes: one sequence, one position, both.
    lm_loss = require(ns, "lm_loss")
    g = hidden_generator("a06 loss sizes of one")
    b, length, vocab = random_sizes(g, 3, low=2, high=9)
    judge_loss(lm_loss, g, [(1, length, vocab), (b, 1, vocab), (1, 1, vocab)])
