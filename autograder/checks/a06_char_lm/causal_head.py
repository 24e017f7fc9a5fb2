"""Exercise 2, `CausalSelfAttentionHead` (test_causal_head): one masked head."""

from __future__ import annotations

import torch

from autograder.authoring.closeness import is_close, not_finite
from autograder.authoring.diagnosis import diagnose
from autograder.authoring.hidden_draws import draw_seed, hidden_generator, random_sizes
from autograder.authoring.operation_mistakes import scale_factors_apart
from autograder.authoring.reference_bans import ban
from autograder.authoring.registry import Namespace, check, fail
from autograder.authoring.requiring import require
from autograder.checks.a06_char_lm.shared import (
    ASSIGNMENT,
    BANNED_ATTENTION,
    LEAKS,
    build,
    call_module,
    check_projections,
    future_leak,
    head_outcomes,
)

ban(
    ASSIGNMENT,
    "CausalSelfAttentionHead",
    BANNED_ATTENTION,
    check_name="causal_head_does_not_call_a_reference_layer",
)


def head_trials(g: torch.Generator, count: int = 4) -> list[list[int]]:
    """The (B, d_model, head_size, L, block_size - L) of each trial of the head's main check:
    distinct sizes in [2, 9] whose d_model and head_size tell every scale factor apart
    (scale_factors_apart: never d_model = 9 with head_size = 3, where dividing by √d_model is
    dividing by head_size)."""
    trials = []
    while len(trials) < count:
        sizes = random_sizes(g, 5, low=2, high=9)
        if scale_factors_apart(sizes[2], {"d_model": sizes[1]}):
            trials.append(sizes)
    return trials


@check(
    ASSIGNMENT,
    "test_causal_head",
    keeps=(
        "three projections without bias, named `query`, `key`, `value`",
        "`forward(x)`: `x` is `(B, L, d_model)` with any `L <= block_size`; return `(B, "
        "L, head_size)`",
        r"$\mathrm{softmax}\big(QK^\top/\sqrt{d_k} \text{ with future keys set to } "
        r"-\infty\big)\,V$, where $d_k$ = `head_size`",
        "the mask is the top-left `L x L` corner of the buffer",
    ),
)
def causal_head_matches_masked_attention(ns: Namespace) -> None:
    cls = require(ns, "CausalSelfAttentionHead", type)
    g = hidden_generator("a06 head")
    for trial, (b, d_model, head_size, length, extra) in enumerate(head_trials(g)):
        if trial == 3:
            b, length = 1, 1  # one sequence of one character
        block_size = length + (extra if trial else 0)  # L == block_size once, then L < block_size
        head = build(
            cls, d_model, head_size, block_size, seed=draw_seed(g), what="CausalSelfAttentionHead"
        )
        check_projections(head, d_model, head_size)
        x = torch.randn(b, length, d_model, generator=g)
        out = call_module(
            head, x, "your head", block_size, answer="CausalSelfAttentionHead", finite=False
        )
        expected, mistakes = head_outcomes(head, x)
        if not torch.isfinite(out).all():
            # Named where the NaN sit where one mistake's do (a row that sees no key) and every
            # other value is its value; any other NaN is shown as it is.
            matched = {
                mistake
                for mistake, value in mistakes.items()
                if not torch.isfinite(value).all() and is_close(out, value, equal_nan=True)
            }
            if len(matched) == 1:
                fail(matched.pop())
            fail(not_finite(out, "your head's output"))
        diagnose(
            out,
            expected,
            mistakes,
            f"the head's output differs from softmax(q kᵀ / √head_size, future keys at -inf) v "
            f"(d_model {d_model}, head_size {head_size}, L {length}, block_size {block_size})",
        )


@check(
    ASSIGNMENT,
    "test_causal_head",
    keeps=(
        r"position $t$ may only attend to positions $0 \dots t$",
        "three projections without bias, named `query`, `key`, `value`",
        "a buffer moves with `.to(device)` but is not trained",
    ),
)
def causal_head_ignores_the_future(ns: Namespace) -> None:
    cls = require(ns, "CausalSelfAttentionHead", type)
    g = hidden_generator("a06 head future")
    d_model, head_size, length = random_sizes(g, 3, low=3, high=10)
    head = build(
        cls, d_model, head_size, length + 3, seed=draw_seed(g), what="CausalSelfAttentionHead"
    )
    x = torch.randn(2, length, d_model, generator=g)
    call_module(head, x, "your head", length + 3, answer="CausalSelfAttentionHead")
    if future_leak(head, x, g):
        fail(LEAKS)
    parameters = sum(p.numel() for p in head.parameters())
    if parameters != 3 * d_model * head_size:
        fail(
            f"the head has {parameters} parameters; the statement's query, key and value, "
            f"without bias, hold 3 x d_model x head_size = {3 * d_model * head_size}, and its "
            "mask is a buffer, not a parameter"
        )


@check(
    ASSIGNMENT,
    "test_causal_head",
    weight=0.5,
    keeps=('stored with `self.register_buffer("mask", ..., persistent=False)`',),
)
def causal_head_keeps_its_mask_in_a_buffer_out_of_the_state_dict(ns: Namespace) -> None:
    """The statement: register_buffer("mask", ..., persistent=False), so that the mask moves with
    the module and a checkpoint holds the weights only. A plain attribute or a persistent buffer
    gives the same outputs: only named_buffers() and state_dict() tell."""
    cls = require(ns, "CausalSelfAttentionHead", type)
    g = hidden_generator("a06 head state dict")
    d_model, head_size, block_size = random_sizes(g, 3, low=2, high=9)
    head = build(
        cls, d_model, head_size, block_size, seed=draw_seed(g), what="CausalSelfAttentionHead"
    )
    if "mask" not in dict(head.named_buffers()):
        # A plain attribute holds it, or nothing does: which one is seen, not guessed.
        kept = getattr(head, "mask", None)
        held = (
            f"`self.mask` is a plain {type(kept).__name__} attribute, which .to(device) and "
            ".double() leave behind"
            if isinstance(kept, torch.Tensor)
            else "the head has no buffer named `mask`"
        )
        fail(
            f"{held}: named_buffers() lists {sorted(dict(head.named_buffers()))}; the statement "
            'stores the mask with self.register_buffer("mask", ..., persistent=False)'
        )
    parameters = {name for name, _ in head.named_parameters()}
    saved = [name for name in head.state_dict() if name not in parameters]
    if saved:
        fail(
            f"the buffer `{saved[0]}` is saved in state_dict(); the statement's mask is "
            "registered with persistent=False, so that it moves with .to(device) but a "
            "checkpoint holds only the weights"
        )
