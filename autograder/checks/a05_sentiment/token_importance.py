"""Exercise 4, `token_importance` (test_token_importance): one score per token from the attention
weights, a score of the student's design.

No check compares the scores with one reference: each tests a property the statement lists, on
hidden weights made as `SentimentModel` makes them (the padded keys at 0 in every row, the padded
queries' rows spread over the real keys, every weight 0 in a sentence of padding only). Where a
property fails, the message shows the smallest public input on which it fails too (a few tokens,
every weight 1, 1/2 or 1/4), never a hidden one; where no public input shows it, the sizes of the
hidden input alone.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import torch
from torch import Tensor

from autograder.authoring.hidden_draws import hidden_generator, random_sizes
from autograder.authoring.in_place_writes import inputs_kept
from autograder.authoring.registry import EDGE_CASES, CheckFailed, Namespace, check, fail
from autograder.authoring.requiring import require
from autograder.authoring.student_errors import explain
from autograder.checks.a05_sentiment.shared import ASSIGNMENT

# Rows of attention weights sum to 1 to rounding; a score's real positions must as well.
SUM_TOLERANCE = {torch.float32: 1e-4, torch.float64: 1e-9}
# Scores of one sentence computed with and without other sentences or appended pads may differ by
# the rounding of sums taken in another order, never by more.
SAME_ATOL, SAME_RTOL = 1e-5, 1e-4


@dataclass(frozen=True)
class Case:
    """One input of token_importance: weights (one (B, H, L, L) tensor per layer), token_ids
    (B, L), pad_id."""

    weights: tuple[Tensor, ...]
    token_ids: Tensor
    pad_id: int
    public: bool = False  # every weight 1, 1/2, 1/4 or 0: the rows derived from it are too

    @property
    def sizes(self) -> str:
        b, length = self.token_ids.shape
        layers, heads = len(self.weights), self.weights[0].shape[1]
        return (
            f"B = {b}, L = {length}, {layers} layer{'s' * (layers > 1)} of {heads} "
            f"head{'s' * (heads > 1)}, {self.weights[0].dtype}, pad_id = {self.pad_id}"
        )

    @property
    def real(self) -> Tensor:
        return self.token_ids != self.pad_id


# Weights as SentimentModel returns them --------------------------------------------------------


def rows_over_real_keys(
    draw: Callable[[tuple[int, ...]], Tensor], real: Tensor, heads: int
) -> Tensor:
    """(B, H, L, L) rows: each a distribution over the real keys of its sentence, from the
    non-negative values ``draw(shape)``; every row of a sentence of padding only is 0."""
    b, length = real.shape
    values = draw((b, heads, length, length)) * real[:, None, None, :]
    total = values.sum(-1, keepdim=True)
    return torch.where(total > 0, values / total.clamp_min(1e-300), torch.zeros_like(values))


def hidden_rows(g: torch.Generator, real: Tensor, heads: int, dtype: torch.dtype) -> Tensor:
    """Softmax rows of scores at a random spread (some nearly one-hot) over the real keys."""
    spread = float(torch.empty(()).uniform_(0.5, 6.0, generator=g))

    def draw(shape: tuple[int, ...]) -> Tensor:
        scores = spread * torch.randn(shape, generator=g, dtype=torch.float64)
        return (scores - scores.amax(-1, keepdim=True)).exp()

    return rows_over_real_keys(draw, real, heads).to(dtype)


def public_rows(g: torch.Generator, real: Tensor, heads: int, dtype: torch.dtype) -> Tensor:
    """Rows uniform over 1, 2 or 4 of the real keys: every weight 1, 1/2, 1/4 or 0, exact."""

    def draw(shape: tuple[int, ...]) -> Tensor:
        noise = torch.rand(shape, generator=g)
        count = torch.tensor([1, 2, 4])[torch.randint(0, 3, shape[:-1], generator=g)]
        masked = noise.masked_fill(~real[:, None, None, :], -1.0)
        # the `count` real keys of largest noise (fewer where fewer are real)
        rank = masked.argsort(-1, descending=True).argsort(-1)
        return ((rank < count[..., None]) & (masked >= 0)).to(torch.float64)

    return rows_over_real_keys(draw, real, heads).to(dtype)


Rows = Callable[[torch.Generator, Tensor, int, torch.dtype], Tensor]


def make_case(
    g: torch.Generator,
    token_ids: Tensor,
    pad_id: int,
    layers: int,
    heads: int,
    dtype: torch.dtype,
    rows: Rows = hidden_rows,
) -> Case:
    real = token_ids != pad_id
    weights = tuple(rows(g, real, heads, dtype) for _ in range(layers))
    return Case(weights, token_ids, pad_id, public=rows is public_rows)


def draw_token_ids(
    g: torch.Generator, b: int, length: int, pad_id: int, vocab: int, pad_share: float = 0.3
) -> Tensor:
    """(b, length) ids with pads anywhere, every sentence holding at least one real token."""
    ids = torch.randint(0, vocab, (b, length), generator=g)
    ids[ids == pad_id] = (pad_id + 1) % vocab
    pads = torch.rand(b, length, generator=g) < pad_share
    keep = torch.randint(0, length, (b,), generator=g)
    pads[torch.arange(b), keep] = False
    ids[pads] = pad_id
    return ids


# Running the answer ----------------------------------------------------------------------------


def run_answer(answer: Any, case: Case, strict: bool = False) -> Tensor:
    """The answer's (B, L) scores for ``case``, on copies of its tensors; a failure, with the
    input's sizes, where they are no tensor of that shape. ``strict`` (the first property's
    check) also fails where the answer wrote into the weights or ids it was given, or returned
    scores in another dtype than the weights': the other checks judge their own property."""
    weights = [w.clone() for w in case.weights]
    token_ids = case.token_ids.clone()
    kept = {f"weights[{i}]": w for i, w in enumerate(weights)} if strict else {}
    try:
        with inputs_kept(
            "token_importance", **kept, **({"token_ids": token_ids} if strict else {})
        ):
            scores = answer(weights, token_ids, case.pad_id)
    except NotImplementedError:
        raise
    except CheckFailed:  # an input written in place
        raise
    except Exception as error:
        fail(explain(error, "your token_importance", f" on an input of {case.sizes}"))
    expected = tuple(case.token_ids.shape)
    if not (isinstance(scores, Tensor) and tuple(scores.shape) == expected):
        got = f"{type(scores).__name__} {tuple(getattr(scores, 'shape', ()))}"
        fail(
            f"token_importance must return one score per token, (B, L) = {expected}, on an "
            f"input of {case.sizes}; got {got}"
        )
    dtype = case.weights[0].dtype
    if strict and scores.dtype != dtype:
        fail(
            f"token_importance returned {scores.dtype} for weights in {dtype}, on an input of "
            f"{case.sizes}: the statement asks for the scores in the weights' dtype"
        )
    return scores.detach()


def show(values: Tensor) -> str:
    """A tensor's values, rounded, as nested lists."""
    rounded = (values.detach().to(torch.float64) * 1e4).round() / 1e4
    return str(rounded.tolist()).replace(".0,", ",").replace(".0]", "]")


def show_case(case: Case) -> str:
    layers = "; ".join(f"weights[{i}] = {show(w)}" for i, w in enumerate(case.weights))
    return f"token_ids = {case.token_ids.tolist()}, pad_id = {case.pad_id}, {layers} ({case.sizes})"


# The properties ---------------------------------------------------------------------------------
# Each takes the answer, an input and a generator (for an input derived from it) and returns what
# it observed where the property fails, None where it holds.

Property = Callable[[Any, Case, torch.Generator], "str | None"]


def is_a_distribution_over_the_real_tokens(
    answer: Any, case: Case, g: torch.Generator
) -> str | None:
    scores = run_answer(answer, case, strict=True).to(torch.float64)
    real = case.real
    given = f"on the input {show_case(case)}, token_importance returns {show(scores)}"
    if not torch.isfinite(scores).all():
        return f"{given}: values that are not finite"
    if (scores < 0).any():
        return f"{given}: negative scores"
    if (scores[~real] != 0).any():
        b, t = (int(i) for i in ((scores != 0) & ~real).nonzero()[0])
        return f"{given}: the padded position {t} of sentence {b} scores {scores[b, t].item():.4g}, not 0"
    totals = scores.sum(-1)
    has_real = real.any(-1)
    tolerance = SUM_TOLERANCE[case.weights[0].dtype]
    off = has_real & ((totals - 1).abs() > tolerance)
    if off.any():
        b = int(off.nonzero()[0])
        return f"{given}: the scores of sentence {b}'s real tokens sum to {totals[b].item():.6g}, not 1"
    return None


def padding_changes_nothing(answer: Any, case: Case, g: torch.Generator) -> str | None:
    """Two variants: pads appended to every sentence (their query rows read the real keys), and
    the padded queries' rows drawn again. Neither may move a real token's score."""
    rows = public_rows if case.public else hidden_rows
    scores = run_answer(answer, case).to(torch.float64)
    b, length = case.token_ids.shape
    extra = 1 if length < 3 else 2
    ids = torch.cat([case.token_ids, torch.full((b, extra), case.pad_id)], dim=1)
    real = ids != case.pad_id
    longer = []
    for w in case.weights:
        fresh = rows(g, real, w.shape[1], w.dtype)  # the appended queries' rows
        fresh[..., :length, :length] = w
        longer.append(fresh)
    appended = replace(case, weights=tuple(longer), token_ids=ids)
    got = run_answer(answer, appended).to(torch.float64)
    if not torch.allclose(got[:, :length], scores, atol=SAME_ATOL, rtol=SAME_RTOL):
        return (
            f"on the input {show_case(case)}, token_importance returns {show(scores)}; with "
            f"{extra} pad{'s' * (extra > 1)} appended to every sentence (the appended queries' rows "
            f"spread over the real keys, as the model's are), {show_case(appended)}, it returns "
            f"{show(got)}"
        )
    real = case.real
    if (~real).any():
        redrawn = []
        for w in case.weights:
            fresh = rows(g, real, w.shape[1], w.dtype)
            pad_queries = (~real)[:, None, :, None]
            redrawn.append(torch.where(pad_queries, fresh, w))
        other = replace(case, weights=tuple(redrawn))
        got = run_answer(answer, other).to(torch.float64)
        if not torch.allclose(got, scores, atol=SAME_ATOL, rtol=SAME_RTOL):
            return (
                f"on the input {show_case(case)}, token_importance returns {show(scores)}; with "
                f"other rows for the padded queries (the real queries' rows kept), "
                f"{show_case(other)}, it returns {show(got)}"
            )
    return None


def padded_queries_read(answer: Any, case: Case) -> str | None:
    """Where the answer's real tokens' scores move when only the padded queries' rows change
    (on ``case``, or, where it has no pads, on it with pads appended): the experiment that shows
    the score reads those rows, which the statement says may hold anything."""
    g = torch.Generator().manual_seed(13)
    where = ""
    if not (~case.real).any():
        b, length = case.token_ids.shape
        ids = torch.cat([case.token_ids, torch.full((b, 2), case.pad_id)], dim=1)
        longer = []
        for w in case.weights:
            fresh = hidden_rows(g, ids != case.pad_id, w.shape[1], w.dtype)
            fresh[..., :length, :length] = w
            longer.append(fresh)
        case = replace(case, weights=tuple(longer), token_ids=ids)
        where = " with 2 pads appended to every sentence"
    real = case.real
    redrawn = tuple(
        torch.where((~real)[:, None, :, None], hidden_rows(g, real, w.shape[1], w.dtype), w)
        for w in case.weights
    )
    try:
        scores = run_answer(answer, case).to(torch.float64)
        other = run_answer(answer, replace(case, weights=redrawn)).to(torch.float64)
    except CheckFailed:
        return None
    if torch.allclose(other[real], scores[real], atol=SAME_ATOL, rtol=SAME_RTOL):
        return None
    gap = (other[real] - scores[real]).abs().max().item()
    return (
        "your score reads the padded queries' rows: changing only what they hold changes the "
        f"real tokens' scores (on a {'public' if case.public else 'hidden'} input of "
        f"{case.sizes}{where}, other rows for the "
        f"padded queries alone, the real queries' rows kept, move a real token's score by "
        f"{gap:.3g})"
    )


def sentences_are_apart(answer: Any, case: Case, g: torch.Generator) -> str | None:
    """Each sentence alone, as a batch of one, scores as it does in the batch."""
    scores = run_answer(answer, case).to(torch.float64)
    for b in range(case.token_ids.shape[0]):
        alone = replace(
            case,
            weights=tuple(w[b : b + 1] for w in case.weights),
            token_ids=case.token_ids[b : b + 1],
        )
        got = run_answer(answer, alone).to(torch.float64)
        if not torch.allclose(got[0], scores[b], atol=SAME_ATOL, rtol=SAME_RTOL):
            return (
                f"on the input {show_case(case)}, sentence {b} scores {show(scores[b])} in the "
                f"batch and {show(got[0])} alone, as a batch of one"
            )
    return None


def padding_only_scores_zeros(answer: Any, case: Case, g: torch.Generator) -> str | None:
    """The case's first sentence made of padding only (every weight of it 0, as the model's)."""
    ids = case.token_ids.clone()
    ids[0] = case.pad_id
    weights = tuple(torch.cat([torch.zeros_like(w[:1]), w[1:]]) for w in case.weights)
    emptied = replace(case, weights=weights, token_ids=ids)
    scores = run_answer(answer, emptied).to(torch.float64)
    if not (torch.isfinite(scores[0]).all() and (scores[0] == 0).all()):
        return (
            f"on the input {show_case(emptied)}, whose sentence 0 is made only of padding (every "
            f"weight of it 0), token_importance returns {show(scores[0])} for that sentence"
        )
    return None


def the_key_everyone_reads_scores_highest(
    answer: Any, case: Case, g: torch.Generator
) -> str | None:
    """Every query of every head of every layer puts all its weight on one real key per sentence."""
    b, length = case.token_ids.shape
    real = case.real
    chosen = torch.stack(
        [row.nonzero()[torch.randint(0, int(row.sum()), (), generator=g)][0] for row in real]
    )
    one_hot = torch.nn.functional.one_hot(chosen, length).to(case.weights[0].dtype)  # (B, L)
    weights = tuple(
        one_hot[:, None, None, :].expand(b, w.shape[1], length, length).clone()
        for w in case.weights
    )
    focused = replace(case, weights=weights)
    scores = run_answer(answer, focused).to(torch.float64)
    for s in range(b):
        j = int(chosen[s])
        others = real[s].clone()
        others[j] = False
        if others.any() and not (scores[s, j] > scores[s][others].max()):
            return (
                f"on the input {show_case(focused)}, where every query of every head of every "
                f"layer puts all its weight on key {j} of sentence {s}, token {j} scores "
                f"{scores[s, j].item():.4g} and another real token of that sentence "
                f"{scores[s][others].max().item():.4g}"
            )
    return None


def scores_are_row_sums(answer: Any, case: Case) -> str | None:
    """Where the answer, given maps whose rows (one per query) sum to other values than 1,
    scores each real token by its own row's sum, normalised over the sentence: the cause of a
    score that ignores where attention goes, since every row of an attention map sums to 1."""
    g = torch.Generator().manual_seed(11)
    real = case.real
    sums = torch.empty(real.shape, dtype=torch.float64).uniform_(0.5, 2.0, generator=g)
    weights = tuple(
        hidden_rows(g, real, w.shape[1], torch.float64) * sums[:, None, :, None]
        for w in case.weights
    )
    scores = run_answer(answer, replace(case, weights=weights)).to(torch.float64)
    given = sums * real
    totals = given.sum(-1, keepdim=True)
    expected = torch.where(totals > 0, given / totals.clamp_min(1e-300), torch.zeros_like(given))
    if not torch.allclose(scores, expected, rtol=1e-6, atol=1e-9):
        return None
    return (
        "your score of a token is the sum of its own row, the weights it gives as a query over "
        "the keys (the last axis), normalised over the sentence: on maps whose rows sum to other "
        "values than 1 your scores are those sums; every row of an attention map sums to 1, so "
        "that score is the same for every real token whatever the attention does (the attention "
        "a token receives as a key is summed over the queries' axis, dim=-2)"
    )


# The smallest public input that shows a failing property --------------------------------------

PUBLIC_PAD_ID = 1
# (B, L, H, layers), smallest first
PUBLIC_SIZES = [
    (1, 1, 1, 1),
    (1, 2, 1, 1),
    (2, 2, 1, 1),
    (1, 3, 1, 1),
    (1, 2, 2, 1),
    (2, 3, 1, 1),
    (1, 3, 2, 1),
    (1, 3, 1, 2),
    (2, 3, 2, 1),
    (2, 3, 2, 2),
    (2, 4, 2, 2),
    (3, 4, 2, 3),
]


def public_cases() -> list[Case]:
    g = torch.Generator().manual_seed(5)
    cases = []
    for b, length, heads, layers in PUBLIC_SIZES:
        for _ in range(3):
            ids = draw_token_ids(g, b, length, PUBLIC_PAD_ID, 4, pad_share=0.4)
            cases.append(
                make_case(g, ids, PUBLIC_PAD_ID, layers, heads, torch.float64, public_rows)
            )
    return cases


def judged(
    answer: Any,
    prop: Property,
    case: Case,
    g: torch.Generator,
    statement: str,
    confirm: Callable[[Any, Case], str | None] | None = None,
) -> None:
    """Fail with ``statement`` where ``prop`` fails on the hidden ``case``: with the cause
    ``confirm`` finds by an experiment on the answer, if it does; else on the smallest public
    input that shows it too, if one does, else on the hidden input's sizes alone."""
    seen = prop(answer, case, g)
    if seen is None:
        return
    publics = public_cases()
    if confirm is not None:
        # The cause is the answer's, whichever input shows it: where this case cannot (a sentence
        # of one real token reads one key whatever its padded queries hold), the public ones may.
        for where in (case, *publics):
            if (cause := confirm(answer, where)) is not None:
                fail(f"{statement}: {cause}")
    for public in publics:
        shown = prop(answer, public, torch.Generator().manual_seed(7))
        if shown is not None:
            fail(f"{statement}: {shown}")
    fail(f"{statement}: on a hidden input of {case.sizes}, it does not hold")


# The hidden inputs ------------------------------------------------------------------------------


def hidden_cases(label: str) -> list[Case]:
    """Inputs of every kind the statement allows: pads anywhere by id, a pad id other than 0 (and
    0), float32 and float64, one or several layers and heads, a batch of one, a single token."""
    g = hidden_generator(label)
    cases = []
    for b, length, heads, layers, dtype in [
        (*random_sizes(g, 4, low=2, high=7), torch.float64),
        (*random_sizes(g, 4, low=2, high=7), torch.float32),
        (1, random_sizes(g, 1, low=3, high=9)[0], 1, 1, torch.float32),
        (random_sizes(g, 1, low=2, high=5)[0], 1, 3, 2, torch.float64),
    ]:
        pad_id = int(torch.randint(0, 6, (), generator=g)) if len(cases) else 0
        ids = draw_token_ids(g, b, length, pad_id, 9)
        cases.append(make_case(g, ids, pad_id, layers, heads, dtype))
    return cases


STATEMENT = {
    "distribution": "the statement asks for scores that are finite and non-negative, exactly 0 at "
    "the padded positions, and sum to 1 over each sentence's real tokens",
    "padding": "the statement asks that padding changes nothing: neither pads appended to a "
    "sentence nor what the padded queries' rows hold may change a real token's score",
    "edges": "the statement asks for zeros for a sentence made only of padding, and for "
    "sentences scored apart (each as it would be alone)",
    "focus": "the statement asks that when every query of every head of every layer puts all "
    "its weight on one real key, that token scores strictly the highest of its sentence",
}


@check(
    ASSIGNMENT,
    "test_token_importance",
    keeps=(
        "returns `(B, L)`, one score per token, in the weights' dtype. It does not change "
        "`weights` or `token_ids` in place.",
        "every score is finite and non-negative, and exactly 0 at the padded positions",
        "the scores of a sentence's real tokens sum to 1",
    ),
)
def token_importance_is_a_distribution_over_the_real_tokens(ns: Namespace) -> None:
    answer = require(ns, "token_importance")
    g = hidden_generator("a05 token importance derived")
    for case in hidden_cases("a05 token importance distribution"):
        judged(answer, is_a_distribution_over_the_real_tokens, case, g, STATEMENT["distribution"])


@check(
    ASSIGNMENT,
    "test_token_importance",
    keeps=(
        "padding changes nothing: appending pads to a sentence leaves its real tokens' scores "
        "as they were, whatever the padded queries' rows hold",
    ),
)
def token_importance_ignores_padding(ns: Namespace) -> None:
    answer = require(ns, "token_importance")
    g = hidden_generator("a05 token importance padding derived")
    for case in hidden_cases("a05 token importance padding"):
        judged(answer, padding_changes_nothing, case, g, STATEMENT["padding"], padded_queries_read)


@check(
    ASSIGNMENT,
    "test_token_importance",
    weight=EDGE_CASES,
    keeps=(
        "a sentence made only of padding (every weight of it is 0) gets zeros, never `NaN`",
        "sentences are scored apart: a sentence's scores do not depend on the other sentences "
        "of the batch",
    ),
)
def token_importance_handles_padding_only_and_keeps_sentences_apart(ns: Namespace) -> None:
    answer = require(ns, "token_importance")
    g = hidden_generator("a05 token importance edges derived")
    for case in hidden_cases("a05 token importance edges"):
        judged(answer, padding_only_scores_zeros, case, g, STATEMENT["edges"])
        judged(answer, sentences_are_apart, case, g, STATEMENT["edges"])


@check(
    ASSIGNMENT,
    "test_token_importance",
    weight=EDGE_CASES,
    keeps=(
        "when every query of every head of every layer puts all its weight on one real key, "
        "that token scores strictly the highest of its sentence",
    ),
)
def token_importance_finds_the_key_everyone_reads(ns: Namespace) -> None:
    answer = require(ns, "token_importance")
    g = hidden_generator("a05 token importance focus derived")
    for case in hidden_cases("a05 token importance focus"):
        judged(
            answer,
            the_key_everyone_reads_scores_highest,
            case,
            g,
            STATEMENT["focus"],
            confirm=scores_are_row_sums,
        )
