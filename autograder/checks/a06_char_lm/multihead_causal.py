"""Exercise 3, `MultiHeadCausalAttention` (test_multihead_causal): heads side by side, then proj."""

from __future__ import annotations

import torch
from torch import Tensor, nn
from torch.nn import functional as F

from attention_lab.torch_mha import load_into_torch_mha
from autograder.authoring.closeness import is_close
from autograder.authoring.dependencies import depends_on
from autograder.authoring.diagnosis import diagnose
from autograder.authoring.hidden_draws import draw_seed, hidden_generator, random_sizes
from autograder.authoring.mistakes import catalogue
from autograder.authoring.operation_mistakes import concatenated_along, raising_alike
from autograder.authoring.reference_bans import ban
from autograder.authoring.registry import EDGE_CASES, Namespace, check, fail
from autograder.authoring.requiring import require
from autograder.checks.a06_char_lm.shared import (
    ASSIGNMENT,
    BANNED_ATTENTION,
    build,
    call_module,
    check_projections,
    future_leak,
    head_outcomes,
)


def to_torch_mha(mha: nn.Module, d_model: int, num_heads: int) -> nn.MultiheadAttention:
    """nn.MultiheadAttention (eval) with mha's weights: heads' rows stacked in order, W_O = proj."""
    with torch.random.fork_rng(devices=[]):
        theirs = nn.MultiheadAttention(d_model, num_heads, batch_first=True, dtype=torch.float64)
    w_q, w_k, w_v = (
        torch.cat([getattr(h, name).weight for h in mha.heads])
        for name in ("query", "key", "value")
    )
    return load_into_torch_mha(theirs, w_q, w_k, w_v, mha.proj.weight, b_o=mha.proj.bias).eval()


# The named mistakes of MultiHeadCausalAttention, by family (autograder/authoring/mistakes.py):
# heads_mixed where every head alone is causal and the module is not (seen), the others where
# the output matches the heads' own outputs combined that way.
MULTIHEAD = catalogue(
    ASSIGNMENT,
    "MultiHeadCausalAttention",
    {
        "combining the heads": {
            "heads_mixed": "each head alone is causal, yet future characters change earlier "
            "outputs, so combining the heads mixes positions: concatenate them along the feature "
            "axis, torch.cat(..., dim=-1), to (B, L, num_heads * head_size), and run every head "
            "of self.heads on x",
            "heads_reversed": "the heads are concatenated in reverse order: head 0 comes first",
            "heads_interleaved": "the heads' outputs are interleaved, not concatenated (head "
            "after head): feature j of head h sits at j * num_heads + h (as "
            "torch.stack(..., dim=-1).flatten(-2) places it), where torch.cat(..., dim=-1) puts "
            "it at h * head_size + j",
            "first_head_repeated": "every head's output is the first head's: run each head of "
            "self.heads on x",
            "concatenated_across": "the heads are concatenated along another axis than the "
            "last, the features: joined along the batch or the positions, num_heads outputs of "
            "(B, L, head_size) keep head_size features, and self.proj, which takes d_model = "
            "num_heads * head_size, raises; joined along dim=-1 they are (B, L, d_model)",
        },
        "output projection": {
            "no_proj": "self.proj is not applied: concatenate the heads, then apply self.proj",
        },
    },
)

ban(
    ASSIGNMENT,
    "MultiHeadCausalAttention",
    BANNED_ATTENTION,
    check_name="multihead_does_not_call_a_reference_layer",
)


# self.heads holds the student's CausalSelfAttentionHead, as the notebook asks.
depends_on(ASSIGNMENT, ["test_multihead_causal"], {"causal_head": ["test_causal_head"]})


def judge_multihead(
    cls: type, head_cls: type, g: torch.Generator, trials: list[tuple[int, ...]]
) -> None:
    """Fail unless ``cls`` of ``head_cls`` heads matches causal nn.MultiheadAttention with its
    weights, for each ``(B, num_heads, head_size, L, block_size - L)`` of ``trials``."""
    for b, num_heads, head_size, length, extra in trials:
        d_model, block_size = num_heads * head_size, length + extra
        mha = build(
            cls, d_model, num_heads, block_size, seed=draw_seed(g), what="MultiHeadCausalAttention"
        )
        heads = getattr(mha, "heads", None)
        if not isinstance(heads, nn.ModuleList) or len(heads) != num_heads:
            fail(f"self.heads must be an nn.ModuleList of num_heads = {num_heads} heads")
        if not all(isinstance(h, head_cls) for h in heads):
            fail("self.heads must hold instances of your CausalSelfAttentionHead")
        if len({id(h) for h in heads}) != num_heads:
            fail(
                f"self.heads holds the same head object more than once ({len({id(h) for h in heads})} "
                f"distinct of {num_heads}): the statement asks for num_heads heads"
            )
        for h in heads:
            check_projections(h, d_model, head_size)
        proj = getattr(mha, "proj", None)
        if not isinstance(proj, nn.Linear) or proj.bias is None or proj.in_features != d_model:
            fail("self.proj must be nn.Linear(d_model, d_model) with a bias")
        x = torch.randn(b, length, d_model, generator=g)
        out = call_module(
            mha,
            x,
            "your MultiHeadCausalAttention",
            block_size,
            answer="MultiHeadCausalAttention",
            confirm=lambda error, mha=mha, x=x: concatenation_raises(mha, x, error),
        )
        for h in heads:  # each head alone first: a head that leaks is its own exercise
            if not is_close(
                call_module(
                    h, x, "a head in self.heads", block_size, answer="CausalSelfAttentionHead"
                ),
                head_outcomes(h, x)[0],
            ):
                fail(
                    "a head in self.heads gives wrong outputs on its own: its class, "
                    "CausalSelfAttentionHead, is judged by test_causal_head"
                )
        if future_leak(mha, x, g):
            fail(MULTIHEAD["heads_mixed"])
        x64 = x.double()
        blocked = ~torch.ones(length, length, dtype=torch.bool).tril()
        with torch.no_grad():
            expected, _ = to_torch_mha(mha, d_model, num_heads)(
                x64, x64, x64, attn_mask=blocked, need_weights=False
            )
            per_head = [head_outcomes(h, x)[0] for h in heads]
            w, bias = proj.weight.double(), proj.bias.double()
            mistakes = {
                MULTIHEAD["no_proj"]: torch.cat(per_head, -1),
                MULTIHEAD["heads_reversed"]: torch.cat(per_head[::-1], -1) @ w.T + bias,
                MULTIHEAD["heads_interleaved"]: torch.stack(per_head, -1).flatten(-2) @ w.T + bias,
                MULTIHEAD["first_head_repeated"]: torch.cat([per_head[0]] * num_heads, -1) @ w.T
                + bias,
            }
        diagnose(
            out,
            expected,
            mistakes,
            f"differs from causal multi-head attention ({num_heads} heads of size {head_size}, "
            f"L {length}): nn.MultiheadAttention given your heads' weights (head 0 first) and "
            "self.proj",
        )


def projected_concatenation(heads: list[Tensor], weight: Tensor, bias: Tensor) -> Tensor:
    """self.proj of the heads' outputs (B, L, head_size) each, joined along the features."""
    return F.linear(torch.cat(heads, dim=-1), weight, bias)


def concatenation_raises(mha: nn.Module, x: Tensor, error: Exception) -> str | None:
    """MULTIHEAD's concatenated_across, with the axes it was seen along, where the module's own
    heads and proj raise ``error`` itself once the heads' outputs are joined along another axis
    than the features (autograder/authoring/operation_mistakes.py); None otherwise."""
    try:
        with torch.no_grad():
            heads = [head(x) for head in mha.heads]
    except Exception:  # noqa: BLE001 - a head that raises is another fault, judged on its own
        return None
    arguments = {"heads": heads, "weight": mha.proj.weight, "bias": mha.proj.bias}
    # every axis but the last, each slip named as the student would write it: "dim=1"
    slips = [concatenated_along(axis, f"dim={axis}") for axis in range(x.dim() - 1)]
    found = raising_alike(projected_concatenation, arguments, slips, error)
    if not found:
        return None
    seen = " or ".join(found)
    return (
        f"{MULTIHEAD['concatenated_across']} (your heads' outputs joined with torch.cat(..., "
        f"{seen}) and given to your self.proj raise this same error)"
    )


@check(
    ASSIGNMENT,
    "test_multihead_causal",
    keeps=(
        "`self.heads`, an `nn.ModuleList` of `num_heads` instances of your "
        "`CausalSelfAttentionHead(d_model, d_model // num_heads, block_size)`, and "
        "`self.proj = nn.Linear(d_model, d_model)`",
        "concatenate their outputs along the last dimension (head 0 first) into `(B, L, "
        "d_model)`, and apply `proj`",
    ),
)
def multihead_matches_torch_multihead_attention(ns: Namespace) -> None:
    cls = require(ns, "MultiHeadCausalAttention", type)
    head_cls = require(ns, "CausalSelfAttentionHead", type)
    g = hidden_generator("a06 multi-head")
    judge_multihead(cls, head_cls, g, [random_sizes(g, 5, low=2, high=7) for _ in range(3)])


@check(
    ASSIGNMENT,
    "test_multihead_causal",
    weight=EDGE_CASES,
    keeps=(
        "`self.heads`, an `nn.ModuleList` of `num_heads` instances of your "
        "`CausalSelfAttentionHead(d_model, d_model // num_heads, block_size)`, and "
        "`self.proj = nn.Linear(d_model, d_model)`",
        "concatenate their outputs along the last dimension (head 0 first) into `(B, L, "
        "d_model)`, and apply `proj`",
    ),
)
def multihead_matches_at_sizes_of_one(ns: Namespace) -> None:
    # The degenerate sizes: a batch of one sequence of one character, and a single head.
    cls = require(ns, "MultiHeadCausalAttention", type)
    head_cls = require(ns, "CausalSelfAttentionHead", type)
    g = hidden_generator("a06 multi-head sizes of one")
    b, num_heads, head_size, length, extra = random_sizes(g, 5, low=2, high=7)
    trials = [(1, num_heads, head_size, 1, extra), (b, 1, head_size, length, extra)]
    judge_multihead(cls, head_cls, g, trials)
