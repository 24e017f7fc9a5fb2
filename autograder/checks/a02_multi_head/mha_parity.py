"""Exercise 3, `MultiHeadAttention` (test_mha_parity): nn.MultiheadAttention with its weights."""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

import attention_lab.reference.a01_attention as reference
from attention_lab.torch_mha import load_into_torch_mha
from autograder.authoring.dependencies import depends_on
from autograder.authoring.diagnosis import diagnose
from autograder.authoring.hidden_draws import hidden_generator
from autograder.authoring.mistakes import Mistake
from autograder.authoring.registry import Namespace, check
from autograder.authoring.requiring import require
from autograder.checks.a02_multi_head.shared import (
    ASSIGNMENT,
    MHA,
    PROJECTIONS,
    build,
    call,
    degenerate_mha_sizes,
    mha_sizes,
    oracle_merge,
    oracle_split,
    random_mask,
    smaller_mha_example,
    two_mha_sizes,
)

# The module is built on the student's split_heads and merge_heads, as the notebook asks.
depends_on(
    ASSIGNMENT,
    ["test_mha_parity"],
    {"split_heads": ["test_split_heads"], "merge_heads": ["test_merge_heads"]},
)


def _attend(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None, scale: float, dim: int = -1):
    scores = (q @ k.transpose(-2, -1)) * scale
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    # As the course's contract says, a query whose keys are all hidden gets zero weights, not
    # NaN: a reversed mask hides every key of a row the mask shows whole, which a draw may hold
    # or not, and the diagnosis must not depend on that.
    weights = torch.softmax(scores, dim=dim).nan_to_num(0.0)
    return weights @ v, weights


def per_head_mask(mask: Tensor | None) -> Tensor | None:
    """Our convention's mask broadcastable to (B, H, L_q, L_k)."""
    if mask is None:
        return None
    mask = mask.bool()
    return mask.unsqueeze(1) if mask.dim() == 3 else mask


def parity_mistakes(
    mha: nn.Module, num_heads: int, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None
) -> tuple[dict[Mistake, Tensor], dict[Mistake, Tensor]]:
    """(weight mistakes, output mistakes) computed from mha's own parameters."""
    params = {name: getattr(mha, name) for name in PROJECTIONS}
    with torch.no_grad():
        w = {
            name: (lin.weight.to(query.dtype), lin.bias.to(query.dtype))
            for name, lin in params.items()
        }

        def lin(x: Tensor, name: str) -> Tensor:
            weight, bias = w[name]
            return x @ weight.T + bias

        d_model = query.shape[-1]
        d_k = d_model // num_heads
        b, l_q, l_k = query.shape[0], query.shape[1], key.shape[1]
        m = per_head_mask(mask)
        q, k, v = lin(query, "q_proj"), lin(key, "k_proj"), lin(value, "v_proj")
        qh, kh, vh = (oracle_split(t, num_heads) for t in (q, k, v))
        right = 1 / math.sqrt(d_k)
        heads, _ = _attend(qh, kh, vh, m, right)

        weight_mistakes = {
            MHA["scaled_by_d_model"]: _attend(qh, kh, vh, m, 1 / math.sqrt(d_model))[1],
            MHA["not_scaled"]: _attend(qh, kh, vh, m, 1.0)[1],
            MHA["divided_by_d_k"]: _attend(qh, kh, vh, m, 1 / d_k)[1],
            MHA["split_no_transpose"]: _attend(
                q.reshape(b, num_heads, l_q, d_k), k.reshape(b, num_heads, l_k, d_k), vh, m, right
            )[1],
            MHA["split_interleaved"]: _attend(
                q.reshape(b, l_q, d_k, num_heads).permute(0, 3, 1, 2),
                k.reshape(b, l_k, d_k, num_heads).permute(0, 3, 1, 2),
                vh,
                m,
                right,
            )[1],
            MHA["keys_with_q_proj"]: _attend(
                qh, oracle_split(lin(key, "q_proj"), num_heads), vh, m, right
            )[1],
            MHA["weights_averaged"]: _attend(qh, kh, vh, m, right)[1].mean(1),
        }
        if l_q > 1:  # one query: a softmax over the queries' axis gives ones, not a row's weights
            weight_mistakes[MHA["softmax_over_queries"]] = _attend(qh, kh, vh, m, right, dim=-2)[1]
        if mask is not None:
            weight_mistakes[MHA["mask_reversed"]] = _attend(qh, kh, vh, ~m, right)[1]

        def project_out(x: Tensor) -> Tensor:
            return lin(x, "out_proj")

        def values_from(source: Tensor, projection: str) -> Tensor:
            values = oracle_split(lin(source, projection), num_heads)
            return project_out(oracle_merge(_attend(qh, kh, values, m, right)[0]))

        output_mistakes = {
            MHA["no_out_proj"]: oracle_merge(heads),
            MHA["out_proj_bias_missing"]: oracle_merge(heads) @ w["out_proj"][0].T,
            MHA["merged_no_transpose"]: project_out(heads.reshape(b, l_q, d_model)),
            MHA["values_from_key"]: values_from(key, "v_proj"),
            MHA["values_with_k_proj"]: values_from(value, "k_proj"),
        }
    return weight_mistakes, output_mistakes


def to_torch(mha: nn.Module, num_heads: int) -> nn.MultiheadAttention:
    """nn.MultiheadAttention in eval mode, holding mha's four projections."""
    d_model = mha.q_proj.weight.shape[0]
    dtype = mha.q_proj.weight.dtype
    with torch.random.fork_rng(devices=[]):
        theirs = nn.MultiheadAttention(d_model, num_heads, batch_first=True, dtype=dtype)
    projections = [getattr(mha, name) for name in PROJECTIONS]
    return load_into_torch_mha(
        theirs, *(p.weight for p in projections), *(p.bias for p in projections)
    ).eval()


def torch_forward(theirs: nn.MultiheadAttention, query, key, value, mask=None):
    """nn.MultiheadAttention with our mask convention (True = may attend) and per-head weights."""
    attn_mask = None if mask is None else ~mask.bool()  # torch's bool attn_mask: True = blocked
    if attn_mask is not None and attn_mask.dim() == 3:  # torch wants (B * H, L_q, L_k)
        attn_mask = attn_mask.repeat_interleave(theirs.num_heads, dim=0)
    with torch.no_grad():
        return theirs(
            query, key, value, attn_mask=attn_mask, need_weights=True, average_attn_weights=False
        )


def compare_with_torch(
    cls: type, mha: nn.Module, num_heads: int, query, key, value, mask, sizes: str, atol: float
) -> None:
    theirs = to_torch(mha, num_heads)
    ref_out, ref_weights = torch_forward(theirs, query, key, value, mask)
    what = f"{sizes}, mask={None if mask is None else tuple(mask.shape)}"
    with torch.no_grad():
        out, weights = call(mha, query, key, value, mask=mask, what=what)
    weight_mistakes, output_mistakes = parity_mistakes(mha, num_heads, query, key, value, mask)
    mask_dims = None if mask is None else mask.dim()
    diagnose(
        weights,
        ref_weights,
        weight_mistakes,
        f"per-head weights differ from nn.MultiheadAttention given the same projections ({what})",
        atol=atol,
        counterexample=smaller_mha_example(cls, "weights", mask_dims=mask_dims),
    )
    diagnose(
        out,
        ref_out,
        output_mistakes,
        f"outputs differ from nn.MultiheadAttention given the same projections, although the "
        f"weights agree ({what})",
        atol=atol,
        counterexample=smaller_mha_example(cls, "output", mask_dims=mask_dims),
    )


@check(
    ASSIGNMENT,
    "test_mha_parity",
    keeps=(
        "that matches `nn.MultiheadAttention` to float precision",
        "project with `q_proj`, `k_proj`, `v_proj`; split with your `split_heads`; "
        "attend with `scaled_dot_product_attention`; merge with your `merge_heads`; "
        "apply `out_proj`",
        "`mask` (True = may attend) may be `(L_q, L_k)` (shared by all), `(B, L_q, "
        "L_k)` (one per sentence) or `(B, H, L_q, L_k)` (one per head)",
    ),
)
def mha_matches_torch_multihead_attention(ns: Namespace) -> None:
    cls = require(ns, "MultiHeadAttention", type)
    g = hidden_generator("a02 parity")
    trials = [*two_mha_sizes(g), mha_sizes(g), mha_sizes(g), *degenerate_mha_sizes(g)]
    for trial, (b, l_q, l_k, h, d_k) in enumerate(trials):
        d_model = h * d_k
        dtype = torch.float32 if trial == 3 else torch.float64
        mha = build(cls, d_model, h, g, dtype=dtype)
        query = torch.randn(b, l_q, d_model, generator=g, dtype=dtype)
        key, value = torch.randn(2, b, l_k, d_model, generator=g, dtype=dtype).unbind(0)
        sizes = f"d_model={d_model}, H={h}, B={b}, L_q={l_q}, L_k={l_k}, {str(dtype).replace('torch.', '')}"
        atol = 1e-5 if dtype == torch.float32 else 1e-9
        for mask in (None, random_mask(g, l_q, l_k), random_mask(g, b, l_q, l_k)):
            compare_with_torch(cls, mha, h, query, key, value, mask, sizes, atol)


@check(
    ASSIGNMENT,
    "test_mha_parity",
    keeps=(
        "that matches `nn.MultiheadAttention` to float precision",
        "so `mha(x)` is self-attention",
        "`(L_q, L_k)` (shared by all)",
    ),
)
def mha_self_attention_matches_torch(ns: Namespace) -> None:
    """Self-attention with a causal mask, as a decoder uses it: mha(x, mask=causal)."""
    cls = require(ns, "MultiHeadAttention", type)
    g = hidden_generator("a02 parity self")
    # Then L = 1 in a batch of one, with several heads and with one.
    first = mha_sizes(g)
    for b, length, _, h, d_k in (first, *degenerate_mha_sizes(g, unlike=first[-1])[::2]):
        causal_self_attention_matches_torch(cls, g, b, length, h, d_k)


def causal_self_attention_matches_torch(
    cls: type, g: torch.Generator, b: int, length: int, h: int, d_k: int
) -> None:
    """mha(x, mask=causal_mask(L)) against nn.MultiheadAttention with the same weights."""
    mha = build(cls, h * d_k, h, g, dtype=torch.float64)
    x = torch.randn(b, length, h * d_k, generator=g, dtype=torch.float64)
    mask = reference.causal_mask(length)
    ref_out, ref_weights = torch_forward(to_torch(mha, h), x, x, x, mask)
    with torch.no_grad():
        out, weights = call(mha, x, mask=mask, what="self-attention mha(x, mask=causal_mask(L))")
    weight_mistakes, output_mistakes = parity_mistakes(mha, h, x, x, x, mask)
    what = f"self-attention, d_model={h * d_k}, H={h}, B={b}, L={length}, causal mask"
    diagnose(
        weights,
        ref_weights,
        weight_mistakes,
        f"per-head weights differ from nn.MultiheadAttention ({what})",
        atol=1e-9,
        counterexample=smaller_mha_example(cls, "weights", self_attention=True),
    )
    diagnose(
        out,
        ref_out,
        output_mistakes,
        f"outputs differ from nn.MultiheadAttention ({what})",
        atol=1e-9,
        counterexample=smaller_mha_example(cls, "output", self_attention=True),
    )
