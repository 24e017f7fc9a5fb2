"""Hidden checks for 02_multi_head: split/merge heads, the MultiHeadAttention module, masks, parity."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch
from torch import Tensor, nn
from torch.nn import functional as F

import attention_lab.attention as reference
from attention_lab.attention import load_into_torch_mha
from autograder.authoring.helpers import (
    ban,
    copy_into,
    diagnose,
    fail,
    hidden_generator,
    random_sizes,
    require,
)
from autograder.authoring.registry import Namespace, check

ASSIGNMENT = "02_multi_head"
PROJECTIONS = ("q_proj", "k_proj", "v_proj", "out_proj")
# attention_lab's scaled_dot_product_attention is allowed (the notebook imports it for this purpose).
BANNED = {
    "nn.MultiheadAttention": nn.MultiheadAttention,
    "F.multi_head_attention_forward": F.multi_head_attention_forward,
    "attention_lab's MultiHeadAttention": reference.MultiHeadAttention,
}


# ---------------------------------------------------------------------------------------------
# Oracles and the outputs of known mistakes (written without view/transpose on purpose)


def oracle_split(x: Tensor, num_heads: int) -> Tensor:
    """(B, L, H * d_k) -> (B, H, L, d_k), head h = features h*d_k:(h+1)*d_k."""
    return torch.stack(x.chunk(num_heads, dim=-1), dim=1)


def oracle_merge(x: Tensor) -> Tensor:
    """(B, H, L, d_k) -> (B, L, H * d_k), head h at features h*d_k:(h+1)*d_k."""
    return torch.cat(x.unbind(1), dim=-1)


SPLIT_NO_TRANSPOSE = (
    "heads split without a transpose: reshaping (B, L, d_model) straight to (B, H, L, d_k) cuts "
    "across positions, so view(B, L, H, d_k) first, then transpose(1, 2)"
)
SPLIT_INTERLEAVED = (
    "head h got the interleaved features h, h+H, h+2H, ...: view the last axis as (H, d_k), "
    "not (d_k, H), so each head owns a consecutive block of d_k features"
)
SPLIT_TRANSPOSE_FIRST = (
    "transposed before viewing: x.transpose(1, 2) then reshape cuts the wrong axis; "
    "view(B, L, H, d_k) first, then transpose(1, 2)"
)
MERGE_NO_TRANSPOSE = (
    "heads merged without a transpose: reshaping (B, H, L, d_k) straight to (B, L, H*d_k) mixes "
    "positions of different heads, so transpose(1, 2) first, then flatten the last two axes"
)
MERGE_INTERLEAVED = (
    "the heads' features are interleaved (head h at h, h+H, ...): transpose(1, 2) to (B, L, H, d_k) "
    "before flattening, not permute to (B, L, d_k, H)"
)


def split_mistakes(x: Tensor, num_heads: int) -> dict[str, Tensor]:
    b, length, d_model = x.shape
    d_k = d_model // num_heads
    return {
        SPLIT_NO_TRANSPOSE: x.reshape(b, num_heads, length, d_k),
        SPLIT_INTERLEAVED: x.reshape(b, length, d_k, num_heads).permute(0, 3, 1, 2),
        SPLIT_TRANSPOSE_FIRST: x.transpose(1, 2).reshape(b, num_heads, length, d_k),
        "returned (B, L, H, d_k): transpose(1, 2) so the head axis comes before the sequence axis": x.reshape(
            b, length, num_heads, d_k
        ),
    }


def merge_mistakes(x: Tensor) -> dict[str, Tensor]:
    b, h, length, d_k = x.shape
    return {
        MERGE_NO_TRANSPOSE: x.reshape(b, length, h * d_k),
        MERGE_INTERLEAVED: x.permute(0, 2, 3, 1).reshape(b, length, h * d_k),
        "the heads are summed instead of concatenated: merge_heads must keep every head's d_k features side by side": x.sum(
            1
        ),
        "the heads are averaged instead of concatenated: merge_heads must keep every head's d_k features side by side": x.mean(
            1
        ),
        "returned (B, L, H, d_k): flatten the last two axes into H * d_k": x.transpose(1, 2),
    }


def _attend(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None, scale: float, dim: int = -1):
    scores = (q @ k.transpose(-2, -1)) * scale
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=dim)
    return weights @ v, weights


def per_head_mask(mask: Tensor | None) -> Tensor | None:
    """Our convention's mask broadcastable to (B, H, L_q, L_k)."""
    if mask is None:
        return None
    mask = mask.bool()
    return mask.unsqueeze(1) if mask.dim() == 3 else mask


def parity_mistakes(
    mha: nn.Module, num_heads: int, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None
) -> tuple[dict[str, Tensor], dict[str, Tensor]]:
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
            "scores are scaled by √d_model instead of √d_k: each head divides by √(d_model / num_heads), the width of one head": _attend(
                qh, kh, vh, m, 1 / math.sqrt(d_model)
            )[1],
            "scores are not scaled: divide each head's q kᵀ by √d_k": _attend(qh, kh, vh, m, 1.0)[
                1
            ],
            "scores are divided by d_k instead of √d_k": _attend(qh, kh, vh, m, 1 / d_k)[1],
            "weights differ as if the heads were split without a transpose: view(B, L, H, d_k) first, then transpose(1, 2)": _attend(
                q.reshape(b, num_heads, l_q, d_k), k.reshape(b, num_heads, l_k, d_k), vh, m, right
            )[1],
            "weights differ as if each head got interleaved features h, h+H, ...: split_heads must give head h the block h*d_k:(h+1)*d_k": _attend(
                q.reshape(b, l_q, d_k, num_heads).permute(0, 3, 1, 2),
                k.reshape(b, l_k, d_k, num_heads).permute(0, 3, 1, 2),
                vh,
                m,
                right,
            )[1],
            "the keys are projected with q_proj: use k_proj for the keys": _attend(
                qh, oracle_split(lin(key, "q_proj"), num_heads), vh, m, right
            )[1],
            "weights are averaged over the heads: return the per-head weights, shape (B, H, L_q, L_k)": _attend(
                qh, kh, vh, m, right
            )[1].mean(1),
        }
        if mask is not None:
            weight_mistakes[
                "mask polarity reversed: in this course True means 'may attend' (torch's attn_mask uses the opposite)"
            ] = _attend(qh, kh, vh, ~m, right)[1]

        def project_out(x: Tensor) -> Tensor:
            return lin(x, "out_proj")

        output_mistakes = {
            "the output projection is missing: apply out_proj to the merged heads": oracle_merge(
                heads
            ),
            "outputs differ as if the heads were merged without a transpose: transpose(1, 2) before flattening": project_out(
                heads.reshape(b, l_q, d_model)
            ),
            "the values are projected from `key` instead of `value`: use v_proj(value)": project_out(
                oracle_merge(
                    _attend(qh, kh, oracle_split(lin(key, "v_proj"), num_heads), m, right)[0]
                )
            ),
            "the values are projected with k_proj: use v_proj for the values": project_out(
                oracle_merge(
                    _attend(qh, kh, oracle_split(lin(value, "k_proj"), num_heads), m, right)[0]
                )
            ),
        }
    return weight_mistakes, output_mistakes


# ---------------------------------------------------------------------------------------------
# Building and calling the student's module without touching the student's own objects


def build(
    cls: type,
    d_model: int,
    num_heads: int,
    generator: torch.Generator | None = None,
    dtype: torch.dtype = torch.float32,
) -> nn.Module:
    """A fresh instance (global RNG untouched); with a generator, parameters redrawn from it."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        mha = cls(d_model, num_heads)
    if not isinstance(mha, nn.Module):
        fail("MultiHeadAttention must be an nn.Module (class MultiHeadAttention(nn.Module))")
    for name in PROJECTIONS:
        layer = getattr(mha, name, None)
        if not isinstance(layer, nn.Linear) or layer.bias is None:
            fail(
                f"self.{name} must be an nn.Linear(d_model, d_model) with a bias, named exactly `{name}`"
            )
        if tuple(layer.weight.shape) != (d_model, d_model):
            fail(
                f"self.{name} must map d_model to d_model, got weight shape {tuple(layer.weight.shape)} "
                f"for d_model={d_model}, num_heads={num_heads}"
            )
    if generator is not None:
        # Non-zero biases and weights of std 0.5, so a missing or misplaced bias shows.
        for name in PROJECTIONS:
            layer = getattr(mha, name)
            copy_into(layer, "weight", torch.randn(layer.weight.shape, generator=generator) * 0.5)
            copy_into(layer, "bias", torch.randn(layer.bias.shape, generator=generator) * 0.5)
    return mha.to(dtype).eval()


def call(mha: nn.Module, *args: Any, what: str, **kwargs: Any) -> tuple[Tensor, Tensor]:
    """mha(*args, **kwargs) as (output, weights), or a failure naming the call."""
    try:
        result = mha(*args, **kwargs)
    except NotImplementedError:
        raise
    except Exception as error:
        mask = kwargs.get("mask")
        hint = ""
        if isinstance(mask, Tensor) and mask.dim() == 3:
            hint = " (a (B, L_q, L_k) mask needs a head axis: mask.unsqueeze(1))"
        fail(f"your MultiHeadAttention raised {type(error).__name__} on {what}{hint}: {error}")
    if not (isinstance(result, tuple) and len(result) == 2):
        fail("forward must return a tuple (output, weights)")
    out, weights = result
    if not isinstance(out, Tensor) or not isinstance(weights, Tensor):
        fail("forward must return two tensors: (output, weights)")
    return out, weights


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


def random_mask(generator: torch.Generator, *shape: int) -> Tensor:
    """A random bool mask where every query row keeps at least one (random) key visible."""
    mask = torch.rand(shape, generator=generator) > 0.5
    keep = torch.randint(shape[-1], shape[:-1], generator=generator)
    return mask.scatter(-1, keep.unsqueeze(-1), True)


def mha_sizes(generator: torch.Generator) -> tuple[int, int, int, int, int]:
    """B, L_q, L_k, H, d_k all different (H >= 2, so d_model != d_k), d_model unlike any other size."""
    while True:
        b, l_q, l_k, h, d_k = random_sizes(generator, 5, low=2, high=7)
        if h * d_k not in (b, l_q, l_k):
            return b, l_q, l_k, h, d_k


# ---------------------------------------------------------------------------------------------
# split_heads


@check(ASSIGNMENT, "test_split_heads")
def split_heads_matches_the_oracle(ns: Namespace) -> None:
    split_heads = require(ns, "split_heads")
    g = hidden_generator("a02 split")
    cases = [tuple(random_sizes(g, 4)) for _ in range(3)] + [(2, 3, 1, 5), (3, 4, 5, 1)]
    for b, length, h, d_k in cases:
        x = torch.randn(b, length, h * d_k, generator=g)
        y = split_heads(x, h)
        diagnose(
            y,
            oracle_split(x, h),
            split_mistakes(x, h) if h > 1 and d_k > 1 else {},
            f"split_heads(x, {h}) for x of shape {tuple(x.shape)} must give (B, H, L, d_k) = "
            f"{(b, h, length, d_k)} with head h holding features h*d_k:(h+1)*d_k",
            atol=0.0,
        )


@check(ASSIGNMENT, "test_split_heads")
def split_heads_keeps_gradients_and_dtype(ns: Namespace) -> None:
    split_heads = require(ns, "split_heads")
    g = hidden_generator("a02 split grad")
    b, length, h, d_k = random_sizes(g, 4)
    x = torch.randn(b, length, h * d_k, generator=g, dtype=torch.float64, requires_grad=True)
    y = split_heads(x, h)
    if y.dtype != torch.float64:
        fail(f"split_heads changed the dtype from float64 to {y.dtype}: only rearrange the tensor")
    if not y.requires_grad:
        fail(
            "split_heads cut the tensor from autograd: do not detach, use .numpy() or build a new tensor"
        )
    y.backward(oracle_split(torch.ones_like(x), h))
    if not torch.equal(x.grad, torch.ones_like(x)):
        fail(
            "split_heads must move every feature exactly once (each input element appears once in the output)"
        )


# ---------------------------------------------------------------------------------------------
# merge_heads


def call_merge(merge_heads: Callable[[Tensor], Any], x: Tensor) -> Any:
    try:
        return merge_heads(x)
    except RuntimeError as error:
        if "view" in str(error):
            fail(
                "merge_heads fails on a non-contiguous tensor (transpose makes one): .view cannot "
                "flatten it, so use .reshape(...) or .contiguous().view(...)"
            )
        raise


@check(ASSIGNMENT, "test_merge_heads")
def merge_heads_matches_the_oracle(ns: Namespace) -> None:
    merge_heads = require(ns, "merge_heads")
    g = hidden_generator("a02 merge")
    cases = [tuple(random_sizes(g, 4)) for _ in range(3)] + [(2, 1, 3, 5), (3, 4, 5, 1)]
    for b, h, length, d_k in cases:
        heads = torch.randn(b, h, length, d_k, generator=g)
        expected = oracle_merge(heads)
        mistakes = merge_mistakes(heads) if h > 1 and length > 1 else {}
        for layout, x in (
            ("a contiguous", heads),
            ("a non-contiguous", heads.transpose(1, 2).contiguous().transpose(1, 2)),
            ("a non-contiguous", heads.transpose(-2, -1).contiguous().transpose(-2, -1)),
        ):
            diagnose(
                call_merge(merge_heads, x),
                expected,
                mistakes,
                f"merge_heads on {layout} (B, H, L, d_k) = {(b, h, length, d_k)} input must give "
                f"(B, L, H*d_k) = {(b, length, h * d_k)} with head h at features h*d_k:(h+1)*d_k",
                atol=0.0,
            )


@check(ASSIGNMENT, "test_merge_heads")
def merge_heads_undoes_the_split(ns: Namespace) -> None:
    merge_heads = require(ns, "merge_heads")
    g = hidden_generator("a02 merge roundtrip")
    b, length, h, d_k = random_sizes(g, 4)
    x = torch.randn(b, length, h * d_k, generator=g, dtype=torch.float64, requires_grad=True)
    y = call_merge(merge_heads, oracle_split(x, h).transpose(1, 2).contiguous().transpose(1, 2))
    if not isinstance(y, Tensor) or not torch.equal(y, x):
        fail("merge_heads must undo a correct split: merge_heads(split(x, H)) == x")
    if y.dtype != torch.float64 or not y.requires_grad:
        fail("merge_heads must keep the dtype and the autograd graph: only rearrange the tensor")


# ---------------------------------------------------------------------------------------------
# MultiHeadAttention: the reference is not allowed in any of its cells


ban(
    ASSIGNMENT,
    "MultiHeadAttention",
    BANNED,
    cells=("test_mha_parity", "test_mha_mask", "test_mha_shapes"),
    check_name="mha_does_not_call_the_reference",
    kind=type,
)


# ---------------------------------------------------------------------------------------------
# MultiHeadAttention: shapes, attributes, errors


@check(ASSIGNMENT, "test_mha_shapes")
def mha_attributes_and_shapes(ns: Namespace) -> None:
    cls = require(ns, "MultiHeadAttention", type)
    g = hidden_generator("a02 shapes")
    for trial in range(3):
        b, l_q, l_k, h, d_k = mha_sizes(g)
        d_model = h * d_k
        if trial == 2:
            h, d_k = 1, d_model  # a single head is allowed
        mha = build(cls, d_model, h)
        found = tuple(getattr(mha, name, None) for name in ("d_model", "num_heads", "d_k"))
        if found != (d_model, h, d_k):
            fail(
                f"MultiHeadAttention({d_model}, {h}) must store d_model={d_model}, num_heads={h}, "
                f"d_k = d_model // num_heads = {d_k}; found {found}"
            )
        count = sum(p.numel() for p in mha.parameters())
        if count != 4 * (d_model * d_model + d_model):
            fail(
                "the module must hold exactly the four projections q_proj, k_proj, v_proj, out_proj "
                f"({4 * (d_model * d_model + d_model)} parameters for d_model={d_model}), found {count}"
            )
        query = torch.randn(b, l_q, d_model, generator=g)
        memory = torch.randn(b, l_k, d_model, generator=g)
        sizes = f"d_model={d_model}, H={h}, B={b}, L_q={l_q}, L_k={l_k}"
        with torch.no_grad():
            out, weights = call(mha, query, what=f"self-attention mha(x) ({sizes})")
            if out.shape != (b, l_q, d_model) or weights.shape != (b, h, l_q, l_q):
                if h > 1 and weights.shape == (b, l_q, l_q):
                    fail(
                        "weights are averaged over the heads: return the per-head weights, shape (B, H, L_q, L_k)"
                    )
                fail(
                    f"self-attention must return output (B, L, d_model) = {(b, l_q, d_model)} and per-head "
                    f"weights (B, H, L, L) = {(b, h, l_q, l_q)}, got {tuple(out.shape)} and {tuple(weights.shape)}"
                )
            out_kv, weights_kv = call(
                mha, query, memory, memory, what=f"cross-attention mha(x, m, m) ({sizes})"
            )
            if out_kv.shape != (b, l_q, d_model) or weights_kv.shape != (b, h, l_q, l_k):
                if weights_kv.shape == (b, l_q, l_k):
                    fail(
                        "weights are averaged over the heads: return the per-head weights, shape (B, H, L_q, L_k)"
                    )
                fail(
                    f"cross-attention must return output (B, L_q, d_model) = {(b, l_q, d_model)} and weights "
                    f"(B, H, L_q, L_k) = {(b, h, l_q, l_k)}, got {tuple(out_kv.shape)} and {tuple(weights_kv.shape)}"
                )
            if not torch.allclose(weights_kv.sum(-1), torch.ones(b, h, l_q), atol=1e-5):
                fail(
                    "every head's weight rows must sum to 1 over the keys (softmax over the last axis)"
                )
            try:
                out_k, _ = mha(query, memory)
            except Exception as error:
                fail(
                    f"mha(x, memory) raised {type(error).__name__} although mha(x, memory, memory) works: "
                    "when only key is given, value must default to key, not to query"
                )
            if not torch.allclose(out_k, out_kv, atol=1e-6):
                fail(
                    "mha(x, memory) must equal mha(x, memory, memory): value defaults to key, not to query"
                )
            same, _ = call(mha, query, query, query, what=f"mha(x, x, x) ({sizes})")
            if not torch.allclose(same, out, atol=1e-6):
                fail("mha(x) must equal mha(x, x, x): key defaults to query and value to key")


@check(ASSIGNMENT, "test_mha_shapes")
def mha_uses_every_projection(ns: Namespace) -> None:
    cls = require(ns, "MultiHeadAttention", type)
    g = hidden_generator("a02 gradients")
    b, l_q, l_k, h, d_k = mha_sizes(g)
    mha = build(cls, h * d_k, h, g)
    query = torch.randn(b, l_q, h * d_k, generator=g)
    key, value = torch.randn(2, b, l_k, h * d_k, generator=g).unbind(0)
    out, _ = call(mha, query, key, value, what="cross-attention")
    out.square().sum().backward()
    hints = {
        "q_proj": "project the queries with q_proj",
        "k_proj": "project the keys with k_proj",
        "v_proj": "project the values with v_proj",
        "out_proj": "the output projection is missing, apply out_proj to the merged heads",
    }
    for name in PROJECTIONS:
        grad = getattr(mha, name).weight.grad
        if grad is None or not grad.abs().sum() > 0:
            fail(f"`{name}` is never used in forward: {hints[name]}")
    mha.zero_grad(set_to_none=True)


@check(ASSIGNMENT, "test_mha_shapes")
def mha_rejects_indivisible_sizes(ns: Namespace) -> None:
    cls = require(ns, "MultiHeadAttention", type)
    for d_model, h in ((10, 4), (7, 2), (12, 5), (9, 6)):
        try:
            with torch.random.fork_rng(devices=[]):
                cls(d_model, h)
        except ValueError as error:
            if str(d_model) not in str(error) or str(h) not in str(error):
                fail(
                    f"the ValueError for MultiHeadAttention({d_model}, {h}) should show both numbers, "
                    f"d_model={d_model} and num_heads={h}; got: {error}"
                )
        except NotImplementedError:
            raise
        except Exception as error:
            fail(
                f"MultiHeadAttention({d_model}, {h}) raised {type(error).__name__}, not ValueError: "
                "raise ValueError(...) yourself when d_model % num_heads != 0 (no assert)"
            )
        else:
            fail(
                f"MultiHeadAttention({d_model}, {h}) must raise ValueError: {d_model} is not divisible by {h}"
            )
    for d_model, h in ((12, 12), (6, 1), (15, 3)):
        try:
            with torch.random.fork_rng(devices=[]):
                cls(d_model, h)
        except NotImplementedError:
            raise
        except Exception as error:
            fail(
                f"MultiHeadAttention({d_model}, {h}) is valid but raised {type(error).__name__}: {error}"
            )


# ---------------------------------------------------------------------------------------------
# MultiHeadAttention: masks (property-based, so they do not depend on the scaling)


def expect_per_head_weights(weights: Tensor, b: int, h: int, l_q: int, l_k: int) -> None:
    if weights.shape == (b, l_q, l_k):
        fail(
            "weights are averaged over the heads: return the per-head weights, shape (B, H, L_q, L_k)"
        )
    if weights.shape != (b, h, l_q, l_k):
        fail(
            f"cross-attention weights must be (B, H, L_q, L_k) = {(b, h, l_q, l_k)}, got {tuple(weights.shape)}"
        )


def check_masked_weights(weights: Tensor, free: Tensor, keep: Tensor, what: str) -> None:
    """weights under a mask = the unmasked weights renormalised over the visible keys."""
    keep = keep.expand(free.shape)
    if weights.shape != free.shape:
        fail(
            f"with {what} the weights must still be (B, H, L_q, L_k) = {tuple(free.shape)}, got {tuple(weights.shape)}"
        )
    hidden_weight = weights.masked_select(~keep)
    if (hidden_weight != 0).any():
        if (weights.masked_select(keep) == 0).all():
            fail(
                f"mask polarity reversed with {what}: in this course True/1 means 'may attend', so hide "
                "the keys where the mask is False (torch's attn_mask uses the opposite)"
            )
        fail(f"with {what}, hidden keys must get exactly zero weight in every head")
    expected = free * keep
    expected = expected / expected.sum(-1, keepdim=True)
    if not torch.allclose(weights, expected, atol=1e-5):
        fail(
            f"with {what}, the visible keys' weights must be the unmasked softmax renormalised over "
            "the visible keys: fill hidden scores with -inf before the softmax"
        )


@check(ASSIGNMENT, "test_mha_mask")
def mha_applies_every_mask_shape(ns: Namespace) -> None:
    cls = require(ns, "MultiHeadAttention", type)
    g = hidden_generator("a02 masks")
    b, l_q, l_k, h, d_k = mha_sizes(g)
    mha = build(cls, h * d_k, h, g)
    query = torch.randn(b, l_q, h * d_k, generator=g)
    key, value = torch.randn(2, b, l_k, h * d_k, generator=g).unbind(0)
    with torch.no_grad():
        _, free = call(mha, query, key, value, what="cross-attention without a mask")
        expect_per_head_weights(free, b, h, l_q, l_k)
        m2 = random_mask(g, l_q, l_k)
        m3 = random_mask(g, b, l_q, l_k)
        m4 = random_mask(g, b, h, l_q, l_k)
        for mask, what, keep in (
            (m2, f"an (L_q, L_k) = {(l_q, l_k)} mask", m2),
            (m2.int(), "a 0/1 integer (L_q, L_k) mask", m2),
            (m4, f"a (B, H, L_q, L_k) = {(b, h, l_q, l_k)} mask", m4),
        ):
            _, weights = call(mha, query, key, value, mask=mask, what=what)
            check_masked_weights(weights, free, keep, what)
        what3 = f"a (B, L_q, L_k) = {(b, l_q, l_k)} mask"
        try:
            _, weights = mha(query, key, value, mask=m3)
        except NotImplementedError:
            raise
        except Exception as error:
            fail(
                f"{what3} raised {type(error).__name__}: insert a head axis with mask.unsqueeze(1), "
                "making it (B, 1, L_q, L_k) so it broadcasts over the heads"
            )
        check_masked_weights(weights, free, m3.unsqueeze(1), what3)


@check(ASSIGNMENT, "test_mha_mask")
def mha_applies_a_sentence_mask_to_every_head(ns: Namespace) -> None:
    """B == H: a 3-D mask without unsqueeze(1) broadcasts silently, sentence masks landing on heads."""
    cls = require(ns, "MultiHeadAttention", type)
    g = hidden_generator("a02 mask B == H")
    h, l_q, l_k, d_k = random_sizes(g, 4, low=2, high=6)
    b = h
    mha = build(cls, h * d_k, h, g)
    query = torch.randn(b, l_q, h * d_k, generator=g)
    key, value = torch.randn(2, b, l_k, h * d_k, generator=g).unbind(0)
    m3 = random_mask(g, b, l_q, l_k)
    with torch.no_grad():
        _, free = call(mha, query, key, value, what="cross-attention without a mask")
        expect_per_head_weights(free, b, h, l_q, l_k)
        _, weights = call(mha, query, key, value, mask=m3, what="a (B, L_q, L_k) mask")
    if (
        weights.shape == free.shape
        and (weights.masked_select(~m3.unsqueeze(0).expand_as(free)) == 0).all()
        and not (weights.masked_select(~m3.unsqueeze(1).expand_as(free)) == 0).all()
    ):
        fail(
            "sentence b's (B, L_q, L_k) mask was applied to head b of every sentence: insert the head "
            "axis with mask.unsqueeze(1), not in front"
        )
    check_masked_weights(weights, free, m3.unsqueeze(1), "a (B, L_q, L_k) mask")


@check(ASSIGNMENT, "test_mha_mask")
def hidden_keys_do_not_leak(ns: Namespace) -> None:
    cls = require(ns, "MultiHeadAttention", type)
    g = hidden_generator("a02 padding")
    b, l_q, l_k, h, d_k = mha_sizes(g)
    mha = build(cls, h * d_k, h, g)
    query = torch.randn(b, l_q, h * d_k, generator=g)
    key, value = torch.randn(2, b, l_k, h * d_k, generator=g).unbind(0)
    padding = torch.ones(b, l_q, l_k, dtype=torch.bool)
    padding[-1, :, 1:] = False  # the last sentence has one real key, the rest is padding
    changed_key, changed_value = key.clone(), value.clone()
    changed_key[-1, 1:] += 3.0
    changed_value[-1, 1:] -= 3.0
    with torch.no_grad():
        out, _ = call(mha, query, key, value, mask=padding, what="a (B, L_q, L_k) padding mask")
        changed, _ = call(
            mha,
            query,
            changed_key,
            changed_value,
            mask=padding,
            what="a (B, L_q, L_k) padding mask",
        )
    if not torch.allclose(out, changed, atol=1e-5):
        fail(
            "changing padding keys and values changed the output: hidden keys must not influence any head (check the mask, and that split_heads keeps positions apart)"
        )


# ---------------------------------------------------------------------------------------------
# MultiHeadAttention: parity with nn.MultiheadAttention (weights copied in)


def compare_with_torch(
    mha: nn.Module, num_heads: int, query, key, value, mask, sizes: str, atol: float
) -> None:
    theirs = to_torch(mha, num_heads)
    ref_out, ref_weights = torch_forward(theirs, query, key, value, mask)
    what = f"{sizes}, mask={None if mask is None else tuple(mask.shape)}"
    with torch.no_grad():
        out, weights = call(mha, query, key, value, mask=mask, what=what)
    weight_mistakes, output_mistakes = parity_mistakes(mha, num_heads, query, key, value, mask)
    diagnose(
        weights,
        ref_weights,
        weight_mistakes,
        f"per-head weights differ from nn.MultiheadAttention ({what}): check the projections, split_heads and the scale",
        atol=atol,
    )
    diagnose(
        out,
        ref_out,
        output_mistakes,
        f"outputs differ from nn.MultiheadAttention although the weights agree ({what}): check v_proj, merge_heads and out_proj",
        atol=atol,
    )


@check(ASSIGNMENT, "test_mha_parity")
def mha_matches_torch_multihead_attention(ns: Namespace) -> None:
    cls = require(ns, "MultiHeadAttention", type)
    g = hidden_generator("a02 parity")
    for trial in range(4):
        b, l_q, l_k, h, d_k = mha_sizes(g)
        d_model = h * d_k
        dtype = torch.float32 if trial == 3 else torch.float64
        mha = build(cls, d_model, h, g, dtype=dtype)
        query = torch.randn(b, l_q, d_model, generator=g, dtype=dtype)
        key, value = torch.randn(2, b, l_k, d_model, generator=g, dtype=dtype).unbind(0)
        sizes = f"d_model={d_model}, H={h}, B={b}, L_q={l_q}, L_k={l_k}, {str(dtype).replace('torch.', '')}"
        atol = 1e-5 if dtype == torch.float32 else 1e-9
        for mask in (None, random_mask(g, l_q, l_k), random_mask(g, b, l_q, l_k)):
            compare_with_torch(mha, h, query, key, value, mask, sizes, atol)


@check(ASSIGNMENT, "test_mha_parity")
def mha_self_attention_matches_torch(ns: Namespace) -> None:
    """Self-attention with a causal mask, as a decoder uses it: mha(x, mask=causal)."""
    cls = require(ns, "MultiHeadAttention", type)
    g = hidden_generator("a02 parity self")
    b, length, _, h, d_k = mha_sizes(g)
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
    )
    diagnose(
        out,
        ref_out,
        output_mistakes,
        f"outputs differ from nn.MultiheadAttention ({what})",
        atol=1e-9,
    )
