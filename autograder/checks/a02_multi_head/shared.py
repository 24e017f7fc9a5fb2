"""What several exercises of 02_multi_head share: head oracles, building and calling the module."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch import Tensor, nn

import attention_lab.reference.a02_multi_head as reference
from autograder.authoring.counterexample import small_integers, smallest_module_counterexample
from autograder.authoring.diagnosis import SQUEEZED, squeezed, squeezed_mistake
from autograder.authoring.hidden_draws import draw_seed, random_sizes, under_seed
from autograder.authoring.in_place_writes import inputs_kept, written_in_place_mistake
from autograder.authoring.kernel_objects import copy_into
from autograder.authoring.mistakes import catalogue
from autograder.authoring.registry import fail
from autograder.authoring.student_errors import explain

ASSIGNMENT = "02_multi_head"
squeezed_mistake(ASSIGNMENT)  # diagnose names it in every exercise
written_in_place_mistake(ASSIGNMENT)  # inputs_kept names it in every exercise
FORWARD_ARGUMENTS = ("query", "key", "value", "mask")  # MultiHeadAttention.forward's
PROJECTIONS = ("q_proj", "k_proj", "v_proj", "out_proj")

# The named mistakes of MultiHeadAttention, by family (autograder/authoring/mistakes.py): each
# is diagnosed only where the weights or outputs match those of a module making that mistake,
# computed from the student's own parameters (mha_parity.py).
MHA = catalogue(
    ASSIGNMENT,
    "MultiHeadAttention",
    {
        "scaling": {
            "scaled_by_d_model": "scores are scaled by √d_model instead of √d_k: each head "
            "divides by √(d_model / num_heads), the width of one head",
            "not_scaled": "scores are not scaled: divide each head's q kᵀ by √d_k",
            "divided_by_d_k": "each head's scores are divided by d_k instead of √d_k",
        },
        "heads": {
            "split_no_transpose": "weights differ as if the heads were split without a "
            "transpose: view(B, L, H, d_k) first, then transpose(1, 2)",
            "split_interleaved": "weights differ as if each head got interleaved features h, "
            "h+H, ...: split_heads must give head h the block h*d_k:(h+1)*d_k",
            "merged_no_transpose": "outputs differ as if the heads were merged without a "
            "transpose: transpose(1, 2) before flattening",
            "weights_averaged": "weights are averaged over the heads: return the per-head "
            "weights, shape (B, H, L_q, L_k)",
        },
        "projections": {
            "keys_with_q_proj": "the keys are projected with q_proj: use k_proj for the keys",
            "values_from_key": "the values are projected from `key` instead of `value`: use "
            "v_proj(value)",
            "values_with_k_proj": "the values are projected with k_proj: use v_proj for the values",
            "ignores_key": "with as many keys as queries, changing `key` leaves the output "
            "unchanged: the keys are not computed from `key` (k_proj(key))",
            "ignores_value": "with as many keys as queries, changing `value` leaves the output "
            "unchanged: the values are not computed from `value` (v_proj(value))",
            "no_out_proj": "the output projection is missing: apply out_proj to the merged heads",
        },
        "biases": {
            "no_bias": "a projection is an nn.Linear without a bias, where the statement's "
            "nn.Linear(d_model, d_model) has one",
            "out_proj_bias_missing": "the output is the merged heads times out_proj's weight, "
            "without out_proj's bias: it differs from nn.MultiheadAttention's output by that "
            "bias at every position",
        },
        "mask polarity": {
            "mask_reversed": "mask polarity reversed: in this course True means 'may attend' "
            "(torch's attn_mask uses the opposite)",
        },
        "mask shapes": {
            "mask_not_unsqueezed": "a (B, L_q, L_k) mask is used without a head axis: insert "
            "one with mask.unsqueeze(1), making it (B, 1, L_q, L_k) so it broadcasts over the "
            "heads",
            "mask_head_axis_in_front": "sentence b's (B, L_q, L_k) mask hid keys in head b of "
            "every sentence: the mask was broadcast as (1, B, L_q, L_k), its head axis in front; "
            "mask.unsqueeze(1) gives (B, 1, L_q, L_k), one mask per sentence for every head",
            "sentence_masks_tiled": "the sentence masks were repeated H times one after the "
            "other (as mask.repeat(H, 1, 1) or torch.cat([mask] * H) does) and the result viewed "
            "as (B, H, L_q, L_k), so head h of sentence b got the mask of sentence (b·H + h) mod "
            "B; mask.unsqueeze(1) gives every head of a sentence that sentence's mask",
            "sentence_masks_mishandled": "your module gets (B, L_q, L_k) masks wrong: the same "
            "calls pass once each such mask is given its head axis first (mask.unsqueeze(1), "
            "(B, 1, L_q, L_k)), which is how one sentence's mask applies to every head of it",
            "head_axis_added_to_4d": "a (B, H, L_q, L_k) mask is given a head axis too: the "
            "error shows it as (B, 1, H, L_q, L_k), and the same call with a (B, L_q, L_k) mask "
            "runs; only a 3-D mask needs the axis of size 1 in position 1",
        },
        "softmax axis": {
            "softmax_over_queries": "each head's weights are a softmax over the queries' axis "
            "(dim=-2): every column sums to 1, where each row, over the keys, must",
        },
        "keys and values": {
            "split_with_query_length": "the keys or values are reshaped with the query's length "
            "L_q: cross-attention fails when the keys' length L_k differs, although "
            "self-attention works; split the keys and values with their own length "
            "(key.shape[1]), not the query's",
            "value_defaults_to_query": "value must default to key, not to query: when only key "
            "is given, value = key if value is None else value",
        },
        "argument checks": {
            "assert_not_value_error": "MultiHeadAttention raises AssertionError for sizes that "
            "do not divide: raise ValueError(...) yourself, with both numbers (an assert is no "
            "argument check: python -O removes it)",
        },
    },
)


# The oracles are written without view/transpose on purpose, so they cannot share a mistake.


def oracle_split(x: Tensor, num_heads: int) -> Tensor:
    """(B, L, H * d_k) -> (B, H, L, d_k), head h = features h*d_k:(h+1)*d_k."""
    return torch.stack(x.chunk(num_heads, dim=-1), dim=1)


def oracle_merge(x: Tensor) -> Tensor:
    """(B, H, L, d_k) -> (B, L, H * d_k), head h at features h*d_k:(h+1)*d_k."""
    return torch.cat(x.unbind(1), dim=-1)


# Building and calling the student's module without touching the student's own objects


def build(
    cls: type,
    d_model: int,
    num_heads: int,
    generator: torch.Generator,
    dtype: torch.dtype = torch.float32,
) -> nn.Module:
    """A fresh instance (global RNG untouched), its parameters drawn from ``generator``."""
    with under_seed(draw_seed(generator)):
        mha = cls(d_model, num_heads)
    if not isinstance(mha, nn.Module):
        fail(
            f"MultiHeadAttention({d_model}, {num_heads}) is a {type(mha).__name__}, not an "
            "nn.Module, as the statement's class MultiHeadAttention(nn.Module) is"
        )
    for name in PROJECTIONS:
        layer = getattr(mha, name, None)
        if isinstance(layer, nn.Linear) and layer.bias is None:  # observed, so named
            fail(f"self.{name}: {MHA['no_bias']}")
        if not isinstance(layer, nn.Linear):
            fail(
                f"self.{name} is {type(layer).__name__}: the statement asks for "
                f"self.{name} = nn.Linear(d_model, d_model) with a bias, under that name"
            )
        if tuple(layer.weight.shape) != (d_model, d_model):
            fail(
                f"self.{name} has weight shape {tuple(layer.weight.shape)} for d_model={d_model}, "
                f"num_heads={num_heads}: the statement's nn.Linear(d_model, d_model) has "
                f"{(d_model, d_model)}"
            )
    # Non-zero biases and weights of std 0.5, so a missing or misplaced bias shows.
    for name in PROJECTIONS:
        layer = getattr(mha, name)
        copy_into(layer, "weight", torch.randn(layer.weight.shape, generator=generator) * 0.5)
        copy_into(layer, "bias", torch.randn(layer.bias.shape, generator=generator) * 0.5)
    return mha.to(dtype).eval()


def own_length_needed(mha: nn.Module, args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    """True if ``mha(query, key, ...)`` with L_q != L_k and no mask failed where self-attention
    works (a mask's shape could be the cause instead)."""
    if kwargs.get("mask") is not None:
        return False
    if len(args) < 2 or not all(isinstance(t, Tensor) and t.dim() == 3 for t in args[:2]):
        return False
    if args[0].shape[1] == args[1].shape[1]:
        return False
    try:
        mha(args[0])
    except Exception:
        return False
    return True


def split_with_query_length(error: Exception, query: Tensor, key: Tensor) -> bool:
    """Whether ``error`` is torch's for reshaping the (B, L_k, d_model) keys or values to
    (B, L_q, ...): the output of splitting them with the query's length."""
    (b, l_q, _), l_k, d_model = query.shape, key.shape[1], key.shape[2]
    text = str(error)
    return (
        f"shape '[{b}, {l_q}, " in text
        and f"is invalid for input of size {b * l_k * d_model}" in text
    )


def ignored_input(mha: nn.Module, query: Tensor) -> str | None:
    """The named mistake of an output that does not change with ``key``, or with ``value``,
    when L_k = L_q; None where it changes with both, or where such a call fails."""
    generator = torch.Generator().manual_seed(0)
    key, other_key, value, other_value = (
        torch.randn(query.shape, generator=generator, dtype=query.dtype) for _ in range(4)
    )
    try:
        with torch.no_grad():
            base = mha(query, key, value)[0]
            if torch.allclose(base, mha(query, other_key, value)[0]):
                return str(MHA["ignores_key"])
            if torch.allclose(base, mha(query, key, other_value)[0]):
                return str(MHA["ignores_value"])
    except Exception:
        return None
    return None


def works_with_head_axis(mha: nn.Module, args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    """Whether the same call with the mask given a head axis (B, 1, L_q, L_k) runs."""
    try:
        mha(*args, **{**kwargs, "mask": kwargs["mask"].unsqueeze(1)})
    except Exception:
        return False
    return True


def head_axis_added_to_4d(
    mha: nn.Module, args: tuple[Any, ...], kwargs: dict[str, Any], error: Exception
) -> bool:
    """Whether the answer, raising on a (B, H, L_q, L_k) mask, shows that mask with an axis of
    size 1 in position 1 in its error, and runs with the first head's (B, L_q, L_k) mask."""
    mask = kwargs["mask"]
    b, h, l_q, l_k = mask.shape
    shown = {f"({b}, 1, {h}, {l_q}, {l_k})", f"[{b}, 1, {h}, {l_q}, {l_k}]"}
    if not any(text in str(error) for text in shown):
        return False
    try:
        mha(*args, **{**kwargs, "mask": mask[:, 0]})
    except Exception:  # noqa: BLE001 - the 3-D mask fails too: no sign of this mistake
        return False
    return True


def call(mha: nn.Module, *args: Any, what: str, **kwargs: Any) -> tuple[Tensor, Tensor]:
    """mha(*args, **kwargs) as (output, weights), or a failure naming the call.

    A cause is named only where an experiment on this module confirms it: the error of a reshape
    with the query's length, an output blind to ``key`` or ``value``, a call that works once the
    mask has a head axis. A call that writes into a tensor it is given fails, naming it: the
    checks use them again, for the reference or another call."""
    named = {**dict(zip(FORWARD_ARGUMENTS, args, strict=False)), **kwargs}
    with inputs_kept("MultiHeadAttention", **named):
        try:
            result = mha(*args, **kwargs)
        except NotImplementedError:
            raise
        except Exception as error:
            if own_length_needed(mha, args, kwargs):
                raised = f"your MultiHeadAttention raised {type(error).__name__} on {what}: {error}"
                if split_with_query_length(error, *args[:2]):
                    fail(f"{MHA['split_with_query_length']}\n{raised}")
                seen = "cross-attention fails when the keys' length L_k differs from the queries' "
                seen += "length L_q, although self-attention works"
                cause = ignored_input(mha, args[0])
                fail(f"{seen}; {cause}\n{raised}" if cause else f"{seen}\n{raised}")
            mask = kwargs.get("mask")
            hint = ""
            if (
                isinstance(mask, Tensor)
                and mask.dim() == 3
                and works_with_head_axis(mha, args, kwargs)
            ):
                hint = (
                    f" ({MHA['mask_not_unsqueezed']}: the same call works with mask.unsqueeze(1))"
                )
            if (
                isinstance(mask, Tensor)
                and mask.dim() == 4
                and head_axis_added_to_4d(mha, args, kwargs, error)
            ):
                hint = f" ({MHA['head_axis_added_to_4d']})"
            fail(explain(error, "your MultiHeadAttention", f" on {what}{hint}"))
    if not (isinstance(result, tuple) and len(result) == 2):
        fail(
            f"forward returned a {type(result).__name__} on {what}: the statement asks for a "
            "tuple (output, weights)"
        )
    out, weights = result
    if not isinstance(out, Tensor) or not isinstance(weights, Tensor):
        fail(
            f"forward returned ({type(out).__name__}, {type(weights).__name__}) on {what}: the "
            "statement asks for two tensors, (output, weights)"
        )
    return out, weights


def random_mask(generator: torch.Generator, *shape: int) -> Tensor:
    """A random bool mask where every query row keeps at least one (random) key visible."""
    mask = torch.rand(shape, generator=generator) > 0.5
    keep = torch.randint(shape[-1], shape[:-1], generator=generator)
    return mask.scatter(-1, keep.unsqueeze(-1), True)


def mha_sizes(
    generator: torch.Generator, unlike: int | None = None
) -> tuple[int, int, int, int, int]:
    """B, L_q, L_k, H, d_k all different (H >= 2, so d_model != d_k), d_model unlike any other size,
    and d_k other than ``unlike``: a check that draws twice, the second unlike the first, tries two
    head sizes under every secret, so a head size written into the answer never passes it."""
    while True:
        b, l_q, l_k, h, d_k = random_sizes(generator, 5, low=2, high=7)
        if h * d_k not in (b, l_q, l_k) and d_k != unlike:
            return b, l_q, l_k, h, d_k


def two_mha_sizes(generator: torch.Generator) -> list[tuple[int, int, int, int, int]]:
    """Two draws of :func:`mha_sizes`, with different head sizes d_k."""
    first = mha_sizes(generator)
    return [first, mha_sizes(generator, unlike=first[-1])]


def degenerate_mha_sizes(
    generator: torch.Generator, unlike: int | None = None
) -> list[tuple[int, int, int, int, int]]:
    """(B, L_q, L_k, H, d_k) with the axes of size one the contract allows: a batch of one with a
    single query and several keys, a single key and one head, and all of them at once; d_k other
    than ``unlike``."""
    b, l_q, l_k, h, d_k = mha_sizes(generator, unlike)
    return [(1, 1, l_k, h, d_k), (b, l_q, 1, 1, d_k), (1, 1, 1, 1, d_k)]


def expect_shapes(out: Tensor, weights: Tensor, out_shape: tuple, weights_shape: tuple) -> None:
    """Fail naming a squeeze() when an axis of size one is missing from the output or weights."""
    for name, value, shape in (("output", out, out_shape), ("weights", weights, weights_shape)):
        if squeezed(value, shape):
            fail(f"{SQUEEZED} (the {name} must be {shape}, got {tuple(value.shape)})")


# The public (B, L_q, L_k, H, d_k) a counterexample is looked for at, smallest first.
EXAMPLE_SIZES = sorted(
    (
        (b, l_q, l_k, h, d_k)
        for b in (1, 2)
        for l_q in (1, 2, 3)
        for l_k in (1, 2, 3)
        for h in (1, 2)
        for d_k in (1, 2)
    ),
    key=lambda size: (sum(size), size),
)


def smaller_mha_example(
    cls: type, what: str, *, mask_dims: int | None = None, self_attention: bool = False
) -> Callable[[], str | None]:
    """A counterexample finder for ``what`` ("output" or "weights") of the student's module
    against attention_lab's, both given the same small integer weights, on public inputs of
    EXAMPLE_SIZES: mha(query, key, value, mask=...), or mha(query, mask=causal) for
    ``self_attention``; with a random mask of ``mask_dims`` axes when given."""

    def inputs(g: torch.Generator, size: tuple[int, ...]) -> dict[str, Tensor]:
        b, l_q, l_k, h, d_k = size
        args = {"query": small_integers(g, b, l_q, h * d_k)}
        if self_attention:
            args["mask"] = torch.ones(l_q, l_q, dtype=torch.bool).tril()
            return args
        args["key"], args["value"] = small_integers(g, 2, b, l_k, h * d_k).unbind(0)
        if mask_dims is not None:
            shape = {2: (l_q, l_k), 3: (b, l_q, l_k), 4: (b, h, l_q, l_k)}[mask_dims]
            args["mask"] = random_mask(g, *shape)
        return args

    def module(of: type) -> Callable[[tuple[int, ...]], nn.Module]:
        return lambda size: of(size[3] * size[4], size[3])

    sizes = [size for size in EXAMPLE_SIZES if not self_attention or size[1] == size[2]]
    index = {"output": 0, "weights": 1}[what]
    return lambda: smallest_module_counterexample(
        module(cls),
        module(reference.MultiHeadAttention),
        inputs,
        sizes,
        output=lambda result: result[index] if isinstance(result, tuple) else result,
        keywords=True,
    )
