"""Exercise 7, `penalise_repeats` (test_penalise_repeats): a repetition penalty, by design.

The rule is the student's (a presence penalty, a count penalty, a sign-aware division, ...), so
nothing here compares with one reference. Each check tests a property the statement lists on
p = softmax(logits) and p' = softmax(answer): the seen ids' total probability never rises, the
odds among the unseen ids stay, strength 0 changes nothing and more strength never helps the seen
ids, rows stay apart. A failure shows the row, its seen ids and the probabilities it observed,
and names the one rule seen to break them: every seen logit divided by one factor, whatever its sign;
an answer that raises is shown its error, and told that what it builds is as wide as the
context's largest id where it runs once that id is V - 1 and raises again otherwise.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor

from autograder.authoring.closeness import is_close
from autograder.authoring.hidden_draws import hidden_generator, random_sizes
from autograder.authoring.in_place_writes import inputs_kept
from autograder.authoring.mistakes import catalogue
from autograder.authoring.registry import EDGE_CASES, Namespace, check, fail
from autograder.authoring.requiring import require
from autograder.authoring.student_errors import explain
from autograder.checks.a06_char_lm.shared import ASSIGNMENT

ATOL = 1e-9  # float64 throughout

# The named mistakes of `penalise_repeats` (autograder/authoring/mistakes.py): each named only
# where the answer's logits are seen to follow that rule.
PENALTY = catalogue(
    ASSIGNMENT,
    "penalise_repeats",
    {
        "sign": {
            "negative_logits_divided": "every seen id's logit is divided by the same factor "
            "above 1, whatever its sign: a negative logit divided by it rises towards 0, so a "
            "seen id with a negative logit becomes MORE likely; a division lowers only positive "
            "logits (multiply the negative ones by the factor instead)",
        },
        "one-hot width": {
            "width_follows_context": "what penalise_repeats builds from the context is as wide "
            "as the context's largest id plus one, not the vocabulary size V = "
            "logits.shape[-1] (F.one_hot without num_classes, or bincount without minlength, "
            "does so): it raises on a context whose largest id is below V - 1 and runs on one "
            "that holds V - 1",
        },
        "rows": {
            "seen_ids_pooled_over_the_batch": "the ids seen are pooled over the batch: every row "
            "is penalised for the ids of every row's context, where each row must penalise the "
            "ids of its own context",
        },
        "nothing unseen": {
            "every_id_seen_non_finite": "the output is non-finite exactly in the rows whose "
            "context holds every id of the vocabulary, where no id is left unseen (their count "
            "and their total probability are 0), and finite in the rows that miss even one id",
        },
    },
)


def non_finite_where_every_id_is_seen(penalise: Callable, logits: Tensor, strength: float) -> bool:
    """Whether, on four rows of ``logits``' first row, two of whose contexts hold every id and
    two every id but one, the answer returns non-finite values in exactly the first two."""
    vocab_size = logits.shape[-1]
    every = torch.arange(vocab_size)
    but_one = every.clone()
    but_one[-1] = 0  # every id but V - 1, 0 twice
    context = torch.stack([every, but_one, every.flip(0), but_one.flip(0)])
    try:
        out = penalise(logits[:1].repeat(4, 1).clone(), context, strength)
    except NotImplementedError:
        raise
    except Exception:  # noqa: BLE001 - an answer that raises here confirms nothing
        return False
    if not (isinstance(out, Tensor) and out.shape == (4, vocab_size)):
        return False
    return torch.isfinite(out).all(-1).tolist() == [False, True, False, True]


def width_follows_context(
    penalise: Callable, logits: Tensor, context: Tensor, strength: float
) -> str | None:
    """PENALTY's width_follows_context with what confirms it, or None: the answer, which raised
    on ``context`` (some row of which has its largest id below V - 1), runs once id V - 1 is
    appended to every row's context, and raises again with each row's own largest id appended
    instead (the same ids seen, one more position)."""
    vocab_size = logits.shape[-1]
    largest = context.max(dim=1).values  # (B,)
    if bool((largest >= vocab_size - 1).all()):
        return None

    def runs_with(column: Tensor) -> bool:
        try:
            out = penalise(logits.clone(), torch.cat([context, column[:, None]], dim=1), strength)
        except NotImplementedError:
            raise
        except Exception:  # noqa: BLE001 - whether it raises is the observation
            return False
        return isinstance(out, Tensor) and out.shape == logits.shape

    if not runs_with(torch.full_like(largest, vocab_size - 1)) or runs_with(largest):
        return None
    return (
        f"{PENALTY['width_follows_context']} (here V = {vocab_size} and the largest id of each "
        f"row's context is {largest.tolist()}: with id {vocab_size - 1} appended to every row's "
        "context it runs, with each row's largest id appended it raises again)"
    )


def pooled_over_the_batch(
    penalise: Callable | None, logits: Tensor, context: Tensor, strength: float
) -> str | None:
    """PENALTY's seen_ids_pooled_over_the_batch with what confirms it, or None: each row of the
    answer's output for the batch is what the answer gives that row alone with the ids of the
    whole batch's context as its context, and some row alone with its own context gives other
    probabilities than in the batch."""
    if penalise is None or len(logits) < 2:
        return None
    pooled = context.flatten()[None]  # (1, B * L): every row's ids
    try:
        together = torch.softmax(penalise(logits.clone(), context.clone(), strength), -1)
        rows = [
            (
                torch.softmax(penalise(logits[r : r + 1].clone(), pooled.clone(), strength), -1),
                torch.softmax(
                    penalise(logits[r : r + 1].clone(), context[r : r + 1].clone(), strength), -1
                ),
            )
            for r in range(len(logits))
        ]
    except NotImplementedError:
        raise
    except Exception:  # noqa: BLE001 - an answer that raises here confirms nothing
        return None
    if not isinstance(together, Tensor) or together.shape != logits.shape:
        return None
    if not all(
        isinstance(p, Tensor) and p.shape == (1, logits.shape[-1]) for row in rows for p in row
    ):
        return None
    if not all(
        is_close(with_all[0], together[r], atol=ATOL) for r, (with_all, _) in enumerate(rows)
    ):
        return None
    apart = [r for r, (_, own) in enumerate(rows) if not is_close(own[0], together[r], atol=ATOL)]
    if not apart:
        return None
    return (
        f"{PENALTY['seen_ids_pooled_over_the_batch']} (here each row alone, given as its context "
        f"every id of the batch's contexts, gives the probabilities it gets in the batch; row "
        f"{apart[0]} alone with its own context gives others)\n"
    )


def run_penalty(
    penalise: Callable, logits: Tensor, context: Tensor, strength: float, what: str
) -> Tensor:
    """The answer's logits for (logits, context, strength): finite, (B, V), logits' dtype; a
    failure where it wrote into the logits or the context it was given."""
    given, seen = logits.clone(), context.clone()
    with inputs_kept("penalise_repeats", logits=given, context=seen):
        try:
            out = penalise(given, seen, strength)
        except NotImplementedError:
            raise
        except Exception as error:
            told = explain(error, "your penalise_repeats", f" on {what}")
            named = width_follows_context(penalise, logits, context, strength)
            fail(f"{named}\n{told}" if named else told)
    if not (isinstance(out, Tensor) and out.shape == logits.shape and out.dtype == logits.dtype):
        got = f"{type(out).__name__} {tuple(getattr(out, 'shape', ()))} {getattr(out, 'dtype', '')}"
        fail(
            f"expected a {logits.dtype} tensor of shape {tuple(logits.shape)}, that of the "
            f"logits, on {what}; got {got}"
        )
    if not torch.isfinite(out).all():
        row = int((~torch.isfinite(out)).any(-1).nonzero()[0])
        seen = f"row {row} of the output holds non-finite values on {what}: {rounded(out[row])}"
        if vocab_size_above_one(logits) and non_finite_where_every_id_is_seen(
            penalise, logits, strength
        ):
            fail(
                f"{PENALTY['every_id_seen_non_finite']} (V = {logits.shape[-1]}, strength "
                f"{strength:.3g}: seen on four rows, two of whose contexts hold every id)\n{seen}"
            )
        fail(seen)
    return out.detach()


def vocab_size_above_one(logits: Tensor) -> bool:
    """Whether a context can miss an id while holding others: V of two or more."""
    return logits.dim() == 2 and logits.shape[-1] >= 2


def rounded(values: Tensor) -> list[float]:
    """The first values of a row, rounded for a message."""
    return [round(float(v), 4) for v in values.flatten()[:10]]


def seen_ids(context: Tensor, vocab_size: int) -> Tensor:
    """(B, V) bool: True where the id appears in that row's context."""
    return torch.zeros(len(context), vocab_size, dtype=torch.bool).scatter_(1, context, True)


def seen_mass(logits: Tensor, seen: Tensor) -> Tensor:
    """(B,) total probability of each row's seen ids under softmax(logits)."""
    return (torch.softmax(logits, dim=-1) * seen).sum(-1)


def penalty_batch(generator: torch.Generator) -> tuple[Tensor, Tensor, str]:
    """(logits (B, V), context (B, L), sizes in words): mixed-sign logits; row 0's context is
    drawn among its lowest logits (all negative), row 1's among its highest, the others at
    random with repeats."""
    b, vocab_size, length = random_sizes(generator, 3, low=3, high=12)
    vocab_size += 6
    logits = 2 * torch.randn(b, vocab_size, generator=generator, dtype=torch.float64)
    context = torch.randint(vocab_size, (b, length), generator=generator)
    order = logits.argsort(dim=-1)
    low = min(3, vocab_size // 3)
    logits[0, order[0, :low]] = -(torch.rand(low, generator=generator, dtype=torch.float64) + 0.5)
    picks = torch.randint(low, (length,), generator=generator)
    context[0] = order[0, picks]  # row 0 has seen only ids whose logits are negative
    context[1] = order[1, -1 - picks]  # row 1 only its likeliest ids
    return logits, context, f"B={b}, V={vocab_size}, L={length}"


def common_divisor(logits: Tensor, out: Tensor, seen: Tensor) -> float | None:
    """The factor above 1 by which the answer divided every seen logit, each unseen one kept as
    it was, where its output ``out`` (B, V) is exactly that; None otherwise."""
    if not torch.equal(out[~seen], logits[~seen]):
        return None
    kept = logits[seen].abs() > 1e-6  # a logit of 0 tells no factor
    if not kept.any():
        return None
    ratios = logits[seen][kept] / out[seen][kept]
    factor = float(ratios.mean())
    if factor <= 1 or not is_close(ratios, torch.full_like(ratios, factor), atol=1e-7):
        return None
    return factor


def judge_shift(
    logits: Tensor,
    out: Tensor,
    context: Tensor,
    strength: float,
    what: str,
    penalise: Callable | None = None,
) -> None:
    """Fail unless the seen ids' total probability did not rise and the unseen ids' odds held;
    with ``penalise``, naming the pooled seen ids where an experiment on it confirms them."""
    seen = seen_ids(context, logits.shape[-1])
    before, after = seen_mass(logits, seen), seen_mass(out, seen)
    risen = after > before + ATOL
    if risen.any():
        row = int(risen.nonzero()[0])
        factor = common_divisor(logits, out, seen)
        named = (
            ""
            if factor is None
            else f"{PENALTY['negative_logits_divided']} (here every seen logit is divided by "
            f"{factor:.4g})\n"
        )
        if not named:
            named = pooled_over_the_batch(penalise, logits, context, strength) or ""
        fail(
            f"{named}row {row} ({what}, strength {strength:.3g}): the seen ids "
            f"{seen[row].nonzero().flatten().tolist()}, with logits {rounded(logits[row][seen[row]])}, "
            f"held {float(before[row]):.4g} of the probability before and {float(after[row]):.4g} after"
        )
    for row in range(len(logits)):
        unseen = ~seen[row]
        if unseen.sum() < 2:
            continue
        shift = (torch.log_softmax(out[row], -1) - torch.log_softmax(logits[row], -1))[unseen]
        if not is_close(shift, shift.mean().expand_as(shift), atol=1e-7):
            ids = unseen.nonzero().flatten()
            first, last = int(shift.argmin()), int(shift.argmax())
            named = pooled_over_the_batch(penalise, logits, context, strength) or ""
            fail(
                f"{named}row {row} ({what}, strength {strength:.3g}): the ids {int(ids[first])} and "
                f"{int(ids[last])}, absent from its context, had odds "
                f"{float(torch.exp(logits[row, ids[first]] - logits[row, ids[last]])):.4g} "
                f"before and {float(torch.exp(out[row, ids[first]] - out[row, ids[last]])):.4g} after"
            )


@check(
    ASSIGNMENT,
    "test_penalise_repeats",
    keeps=(
        "it penalises the seen ids:",
        "it leaves the others' odds alone:",
        "it returns new logits `(B, V)`, of the dtype of `logits`, for the softmax that "
        "draws the next id. It does not change `logits` in place.",
    ),
)
def penalty_moves_probability_from_seen_ids_to_the_others(ns: Namespace) -> None:
    """Seen ids lose (or keep) total probability, whatever their logits' signs; unseen odds hold."""
    penalise = require(ns, "penalise_repeats")
    g = hidden_generator("a06 penalty shift")
    for _ in range(3):
        logits, context, sizes = penalty_batch(g)
        strength = round(0.3 + 2.5 * float(torch.rand((), generator=g)), 3)
        out = run_penalty(penalise, logits, context, strength, sizes)
        judge_shift(logits, out, context, strength, sizes, penalise)


@check(
    ASSIGNMENT,
    "test_penalise_repeats",
    weight=EDGE_CASES,
    keeps=("it is off at 0 and grows with the strength:",),
)
def penalty_is_off_at_zero_and_grows_with_strength(ns: Namespace) -> None:
    """Strength 0 keeps the distribution; larger strengths never give the seen ids more."""
    penalise = require(ns, "penalise_repeats")
    g = hidden_generator("a06 penalty strength")
    logits, context, sizes = penalty_batch(g)
    off = run_penalty(penalise, logits, context, 0.0, sizes)
    if not is_close(torch.softmax(off, -1), torch.softmax(logits, -1), atol=ATOL):
        row = int(
            (~(torch.softmax(off, -1) - torch.softmax(logits, -1)).abs().le(ATOL))
            .any(-1)
            .nonzero()[0]
        )
        fail(
            f"at strength 0 ({sizes}) row {row}'s probabilities changed from "
            f"{rounded(torch.softmax(logits[row], -1))} to {rounded(torch.softmax(off[row], -1))}"
        )
    seen = seen_ids(context, logits.shape[-1])
    strengths = [0.0, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0]
    masses = torch.stack(
        [seen_mass(run_penalty(penalise, logits, context, s, sizes), seen) for s in strengths]
    )  # (S, B)
    rises = masses[1:] > masses[:-1] + ATOL
    if rises.any():
        step, row = (int(i) for i in rises.nonzero()[0])
        fail(
            f"row {row} ({sizes}): the seen ids {seen[row].nonzero().flatten().tolist()} held "
            f"{float(masses[step, row]):.4g} of the probability at strength {strengths[step]} and "
            f"{float(masses[step + 1, row]):.4g} at strength {strengths[step + 1]}"
        )


@check(
    ASSIGNMENT,
    "test_penalise_repeats",
    weight=EDGE_CASES,
    keeps=(
        "rows are apart: a row's output depends on its own logits and context only; "
        "every returned value is finite, also for a row whose context holds every id.",
        r"`context` `(B, L)` with $L \ge 1$",
    ),
)
def penalty_keeps_rows_apart(ns: Namespace) -> None:
    """Each row alone gives what it gives in the batch; a context of one id, a context of every
    id and a batch of one row keep the properties."""
    penalise = require(ns, "penalise_repeats")
    g = hidden_generator("a06 penalty rows")
    logits, context, sizes = penalty_batch(g)
    strength = 1.5
    together = run_penalty(penalise, logits, context, strength, sizes)
    for row in range(len(logits)):
        alone = run_penalty(
            penalise, logits[row : row + 1], context[row : row + 1], strength, f"row {row} alone"
        )
        if not is_close(torch.softmax(alone[0], -1), torch.softmax(together[row], -1), atol=ATOL):
            named = pooled_over_the_batch(penalise, logits, context, strength) or ""
            fail(
                f"{named}row {row} ({sizes}) gives the probabilities {rounded(torch.softmax(together[row], -1))} "
                f"in the batch and {rounded(torch.softmax(alone[0], -1))} alone"
            )
    vocab_size = logits.shape[-1]
    every_id = torch.randperm(vocab_size, generator=g)[None].repeat(2, 1)
    cases = [
        (logits[:1], context[:1, :1], f"B=1, V={vocab_size}, a context of one id"),
        (logits[:2], every_id, f"B=2, V={vocab_size}, a context of every id"),
    ]
    for case_logits, case_context, what in cases:
        out = run_penalty(penalise, case_logits, case_context, strength, what)
        judge_shift(case_logits, out, case_context, strength, what, penalise)
    # Finite logits far apart within a row (issue 40's blind answer j06-14 renormalised
    # probabilities, of which such rows round some to 0 or 1): the output stays finite.
    for dtype, spread in ((torch.float32, 100.0), (torch.float64, 800.0)):
        far_logits, far_context = far_apart_rows(g, dtype, spread)
        what = (
            f"{dtype} logits {rounded_rows(far_logits)} (a spread of {spread:g} or more within "
            f"each row), contexts {far_context.tolist()}"
        )
        run_penalty(penalise, far_logits, far_context, strength, what)


def far_apart_rows(g: torch.Generator, dtype: torch.dtype, spread: float) -> tuple[Tensor, Tensor]:
    """(logits (2, V), context (2, L)) in ``dtype``: row 0 has an unseen id ``spread`` to twice
    that below its other logits, row 1 a seen id as far above its others."""
    vocab_size = int(torch.randint(4, 8, (1,), generator=g))
    logits = (2 * torch.randn(2, vocab_size, generator=g, dtype=torch.float64)).round() + 0.0
    gaps = (spread * (1 + torch.rand(2, generator=g, dtype=torch.float64))).round()
    low, high = torch.randperm(vocab_size, generator=g)[:2].tolist()
    logits[0, low] = logits[0].min() - gaps[0]
    logits[1, high] = logits[1].max() + gaps[1]
    others = [i for i in range(vocab_size) if i != low]
    context = torch.tensor(
        [[others[0], others[-1]], [high, high]], dtype=torch.long
    )  # row 0 never saw its far-below id; row 1 saw its far-above one
    return logits.to(dtype), context


def rounded_rows(values: Tensor) -> list[list[float]]:
    """Every row of (B, V) values, rounded for a message."""
    return [rounded(row) for row in values]
