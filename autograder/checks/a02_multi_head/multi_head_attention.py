"""Exercise 3, `MultiHeadAttention` (test_mha_shapes, test_mha_mask): sizes, projections, masks."""

from __future__ import annotations

import copy
import math
from collections.abc import Callable
from typing import Any

import torch
from torch import Tensor, nn

import attention_lab.reference.a02_multi_head as reference
from autograder.authoring.closeness import first_difference, is_close
from autograder.authoring.dependencies import depends_on
from autograder.authoring.diagnosis import SQUEEZED, squeezed
from autograder.authoring.hidden_draws import hidden_generator, random_sizes
from autograder.authoring.in_place_writes import inputs_kept
from autograder.authoring.kernel_objects import same_object, sharing
from autograder.authoring.reference_bans import TORCH_MULTI_HEAD, ban
from autograder.authoring.registry import Namespace, StopChecks, check, fail
from autograder.authoring.repairs import repairs
from autograder.authoring.requiring import require
from autograder.checks.a02_multi_head.shared import (
    ASSIGNMENT,
    MHA,
    PROJECTIONS,
    build,
    call,
    degenerate_mha_sizes,
    expect_shapes,
    mha_sizes,
    random_mask,
    two_mha_sizes,
)

# attention_lab's scaled_dot_product_attention is allowed (the notebook imports it for this purpose).
BANNED = {**TORCH_MULTI_HEAD, "attention_lab's MultiHeadAttention": reference.MultiHeadAttention}

ban(ASSIGNMENT, "MultiHeadAttention", BANNED, check_name="mha_does_not_call_the_reference")
# The module is built on the student's split_heads and merge_heads, as the notebook asks.
depends_on(
    ASSIGNMENT,
    ["test_mha_shapes", "test_mha_mask"],
    {"split_heads": ["test_split_heads"], "merge_heads": ["test_merge_heads"]},
)


# One mistake, one charge (autograder/authoring/repairs.py): a mistake of the module is charged
# in the first cell it fails, and these repairs tell whether a later cell fails for that alone
# (a projection built without its bias; a (B, L_q, L_k) mask that does not reach the heads).


@repairs(ASSIGNMENT, MHA["no_bias"], "MultiHeadAttention")
def with_a_bias_in_every_projection(cls: type) -> type:
    """``cls`` whose instances get a bias in each projection the student built without one (an
    nn.Linear whose bias is None), drawn as nn.Linear draws its own; every other attribute, and
    the forward, is the student's.  Works on a kernel's class too (the bias crosses as data)."""

    class WithBiases:
        def __new__(_, *args: Any, **kwargs: Any) -> nn.Module:
            module = cls(*args, **kwargs)
            for name in PROJECTIONS:
                layer = getattr(module, name, None)
                if isinstance(layer, nn.Linear) and layer.bias is None:
                    bound = 1 / math.sqrt(layer.in_features)  # nn.Linear's own bias draw
                    bias = torch.empty(layer.out_features, dtype=layer.weight.dtype)
                    layer.bias = nn.Parameter(bias.uniform_(-bound, bound))
            return module

    WithBiases.__name__ = WithBiases.__qualname__ = getattr(cls, "__name__", "MultiHeadAttention")
    return WithBiases


@repairs(ASSIGNMENT, MHA["sentence_masks_mishandled"], "MultiHeadAttention")
def with_a_head_axis_on_every_sentence_mask(cls: type) -> type:
    """``cls`` whose instances are called with each (B, L_q, L_k) mask already given its head
    axis, as mask.unsqueeze(1): the student's parameters and forward run as written, on masks
    of the other shapes only.  Works on a kernel's class too (only the call's arguments change)."""

    class WithHeadAxes:
        def __new__(_, *args: Any, **kwargs: Any) -> nn.Module:
            return _SentenceMasksWithHeadAxes(cls(*args, **kwargs))

    WithHeadAxes.__name__ = WithHeadAxes.__qualname__ = getattr(
        cls, "__name__", "MultiHeadAttention"
    )
    return WithHeadAxes


def _given_head_axes(call: Callable[..., Any]) -> Callable[..., Any]:
    """``call`` (a module or its forward) with a 3-D ``mask``, forward's fourth argument, given
    its head axis first."""

    def axis(mask: Any) -> Any:
        return mask.unsqueeze(1) if isinstance(mask, Tensor) and mask.dim() == 3 else mask

    def called(*args: Any, **kwargs: Any) -> Any:
        if len(args) > 3:
            args = (*args[:3], axis(args[3]), *args[4:])
        if "mask" in kwargs:
            kwargs = {**kwargs, "mask": axis(kwargs["mask"])}
        return call(*args, **kwargs)

    return called


# nn.Module's methods that return the module itself: the view is returned in its place
_RETURN_THE_MODULE = {"to", "eval", "train", "double", "float", "half", "cpu", "requires_grad_"}


class _SentenceMasksWithHeadAxes:
    """A student's module as the checks see it, each 3-D mask given its head axis on the way
    in; everything else is the module's own."""

    __slots__ = ("_module",)

    def __init__(self, module: nn.Module):
        object.__setattr__(self, "_module", module)

    @property
    def __class__(self) -> type:  # type: ignore[override]  # isinstance(x, nn.Module) holds
        return self._module.__class__

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return _given_head_axes(self._module)(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._module, name)
        if name == "forward":
            return _given_head_axes(value)
        if name in _RETURN_THE_MODULE:

            def returning_the_view(*args: Any, **kwargs: Any) -> Any:
                result = value(*args, **kwargs)
                return self if same_object(result, self._module) else result

            return returning_the_view
        return value

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._module, name, value)

    def __deepcopy__(self, memo: dict) -> _SentenceMasksWithHeadAxes:
        return _SentenceMasksWithHeadAxes(copy.deepcopy(self._module, memo))

    def __repr__(self) -> str:
        return repr(self._module)


NO_HEAD_AXIS = (
    "the weights have no head axis, shape {shape}: the statement asks for the per-head weights, "
    "shape (B, H, L_q, L_k)"
)

# ---------------------------------------------------------------------------------------------
# MultiHeadAttention: shapes, attributes, errors


@check(
    ASSIGNMENT,
    "test_mha_shapes",
    keeps=(
        "store `self.d_model`, `self.num_heads` and `self.d_k = d_model // num_heads`",
        "create four `nn.Linear(d_model, d_model)` layers (with bias)",
        "`key` defaults to `query` and `value` to `key`, so `mha(x)` is self-attention "
        "and `mha(x, memory)` is cross-attention",
        "`output` is `(B, L_q, d_model)`; `weights` are the per-head weights `(B, H, L_q, L_k)`",
    ),
)
def mha_attributes_and_shapes(ns: Namespace) -> None:
    cls = require(ns, "MultiHeadAttention", type)
    g = hidden_generator("a02 shapes")
    trials = [*two_mha_sizes(g), mha_sizes(g)]
    b, l_q, l_k, h, d_k = trials[2]
    trials[2] = (b, l_q, l_k, 1, h * d_k)  # a single head is allowed
    for b, l_q, l_k, h, d_k in trials + degenerate_mha_sizes(g):
        d_model = h * d_k
        mha = build(cls, d_model, h, g)
        found = tuple(getattr(mha, name, None) for name in ("d_model", "num_heads", "d_k"))
        if found != (d_model, h, d_k):
            fail(
                f"MultiHeadAttention({d_model}, {h}) stores (d_model, num_heads, d_k) = {found}; "
                f"the statement asks for {(d_model, h, d_k)}, d_k = d_model // num_heads"
            )
        count = sum(p.numel() for p in mha.parameters())
        if count != 4 * (d_model * d_model + d_model):
            seen = (
                f"the module holds {count} parameters for d_model={d_model}; the statement's four "
                f"projections q_proj, k_proj, v_proj, out_proj hold {4 * (d_model * d_model + d_model)}"
            )
            shared = sharing(mha, ("q_proj", "k_proj", "v_proj", "out_proj"))
            if shared:
                fail(
                    f"{', '.join(shared)} hold one weight tensor (one object), so they are trained "
                    f"as one: the statement's four projections are four nn.Linear layers, each with "
                    f"its own weights ({seen})"
                )
            fail(seen)
        query = torch.randn(b, l_q, d_model, generator=g)
        memory = torch.randn(b, l_k, d_model, generator=g)
        sizes = f"d_model={d_model}, H={h}, B={b}, L_q={l_q}, L_k={l_k}"
        with torch.no_grad():
            out, weights = call(mha, query, what=f"self-attention mha(x) ({sizes})")
            expect_shapes(out, weights, (b, l_q, d_model), (b, h, l_q, l_q))
            if out.shape != (b, l_q, d_model) or weights.shape != (b, h, l_q, l_q):
                if h > 1 and weights.shape == (b, l_q, l_q):
                    fail(NO_HEAD_AXIS.format(shape=(b, l_q, l_q)))
                fail(
                    f"self-attention must return output (B, L, d_model) = {(b, l_q, d_model)} and per-head "
                    f"weights (B, H, L, L) = {(b, h, l_q, l_q)}, got {tuple(out.shape)} and {tuple(weights.shape)}"
                )
            out_kv, weights_kv = call(
                mha, query, memory, memory, what=f"cross-attention mha(x, m, m) ({sizes})"
            )
            expect_shapes(out_kv, weights_kv, (b, l_q, d_model), (b, h, l_q, l_k))
            if out_kv.shape != (b, l_q, d_model) or weights_kv.shape != (b, h, l_q, l_k):
                if weights_kv.shape == (b, l_q, l_k):
                    fail(NO_HEAD_AXIS.format(shape=(b, l_q, l_k)))
                fail(
                    f"cross-attention must return output (B, L_q, d_model) = {(b, l_q, d_model)} and weights "
                    f"(B, H, L_q, L_k) = {(b, h, l_q, l_k)}, got {tuple(out_kv.shape)} and {tuple(weights_kv.shape)}"
                )
            if not torch.allclose(weights_kv.sum(-1), torch.ones(b, h, l_q), atol=1e-5):
                fail(rows_not_normalised(weights_kv))
            with inputs_kept("MultiHeadAttention", query=query, key=memory):
                try:
                    out_k, _ = mha(query, memory)
                except Exception as error:
                    if value_defaults_to_query(mha, query, g):
                        fail(f"{MHA['value_defaults_to_query']} (mha(x, memory) raised {error})")
                    fail(
                        f"mha(x, memory) raised {type(error).__name__} although mha(x, memory, "
                        f"memory) works; the statement: when only key is given, value defaults "
                        f"to key ({error})"
                    )
            if not torch.allclose(out_k, out_kv, atol=1e-6):
                if value_defaults_to_query(mha, query, g):
                    fail(MHA["value_defaults_to_query"])
                fail(
                    "mha(x, memory) differs from mha(x, memory, memory) "
                    f"({first_difference(out_k, out_kv, 1e-6)}); the statement: value defaults "
                    "to key"
                )
            same, _ = call(mha, query, query, query, what=f"mha(x, x, x) ({sizes})")
            if not torch.allclose(same, out, atol=1e-6):
                fail(
                    f"mha(x) differs from mha(x, x, x) ({first_difference(out, same, 1e-6)}); "
                    "the statement: key defaults to query and value to key"
                )


def rows_not_normalised(weights: Tensor) -> str:
    """What the sums of weights (B, H, L_q, L_k) that do not sum to 1 over the keys show."""
    sums = weights.sum(-1)
    seen = (
        "every head's weight rows must sum to 1 over the keys (the last axis); their sums "
        f"range from {sums.min().item():.4g} to {sums.max().item():.4g}"
    )
    if torch.allclose(weights.sum(-2), torch.ones_like(weights.sum(-2)), atol=1e-5):
        seen += ", while every column, over the queries, sums to 1"
    return seen


def value_defaults_to_query(mha: nn.Module, query: Tensor, g: torch.Generator) -> bool:
    """Whether mha(query, key) is mha(query, key, query), not mha(query, key, key), for keys
    of the query's length (where a value of the wrong length cannot raise)."""
    key = torch.randn(query.shape, generator=g)
    try:
        given_key, value_query, value_key = (mha(query, key, *v)[0] for v in ((), (query,), (key,)))
    except Exception:
        return False
    return is_close(given_key, value_query, atol=1e-6) and not is_close(
        given_key, value_key, atol=1e-6
    )


@check(
    ASSIGNMENT,
    "test_mha_shapes",
    keeps=(
        "project with `q_proj`, `k_proj`, `v_proj`; split with your `split_heads`; "
        "attend with `scaled_dot_product_attention`; merge with your `merge_heads`; "
        "apply `out_proj`",
    ),
)
def mha_uses_every_projection(ns: Namespace) -> None:
    cls = require(ns, "MultiHeadAttention", type)
    g = hidden_generator("a02 gradients")
    for b, l_q, l_k, h, d_k in two_mha_sizes(g):
        projections_reached(cls, g, b, l_q, l_k, h, d_k)


def projections_reached(
    cls: type, g: torch.Generator, b: int, l_q: int, l_k: int, h: int, d_k: int
) -> None:
    """The output's gradient in cross-attention reaches every projection's weight."""
    mha = build(cls, h * d_k, h, g)
    query = torch.randn(b, l_q, h * d_k, generator=g)
    key, value = torch.randn(2, b, l_k, h * d_k, generator=g).unbind(0)
    out, _ = call(mha, query, key, value, what="cross-attention")
    out.square().sum().backward()
    for name in PROJECTIONS:
        grad = getattr(mha, name).weight.grad
        if grad is None or not grad.abs().sum() > 0:
            fail(
                f"`{name}` is never used in forward: the output's gradient reaches no weight of "
                f"self.{name}"
            )
    mha.zero_grad(set_to_none=True)


# Half weight: rejecting bad arguments is a detail beside computing the right answer.
@check(
    ASSIGNMENT,
    "test_mha_shapes",
    weight=0.5,
    keeps=(
        "if `d_model` is not divisible by `num_heads`, raise a `ValueError` whose "
        "message says so and shows both numbers",
    ),
)
def mha_rejects_indivisible_sizes(ns: Namespace) -> None:
    cls = require(ns, "MultiHeadAttention", type)
    for d_model, h in ((10, 4), (7, 2), (12, 5), (9, 6)):
        try:
            with torch.random.fork_rng(devices=[]):
                cls(d_model, h)
        except ValueError as error:
            if str(d_model) not in str(error) or str(h) not in str(error):
                fail(
                    f"the ValueError for MultiHeadAttention({d_model}, {h}) reads {str(error)!r}: "
                    f"the statement asks for both numbers in it, d_model={d_model} and "
                    f"num_heads={h}"
                )
        except NotImplementedError:
            raise
        except AssertionError:
            fail(
                f"{MHA['assert_not_value_error']} (MultiHeadAttention({d_model}, {h}) raised "
                "AssertionError, not ValueError)"
            )
        except Exception as error:
            fail(
                f"MultiHeadAttention({d_model}, {h}) raised {type(error).__name__} ({error}); "
                "the statement asks for a ValueError when d_model % num_heads != 0"
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
    if squeezed(weights, (b, h, l_q, l_k)):
        fail(f"{SQUEEZED} (the weights must be {(b, h, l_q, l_k)}, got {tuple(weights.shape)})")
    if h > 1 and weights.shape == (b, l_q, l_k):
        fail(NO_HEAD_AXIS.format(shape=(b, l_q, l_k)))
    if weights.shape != (b, h, l_q, l_k):
        fail(
            f"cross-attention weights must be (B, H, L_q, L_k) = {(b, h, l_q, l_k)}, got {tuple(weights.shape)}"
        )


def renormalised(free: Tensor, shown: Tensor) -> Tensor:
    """free (B, H, L_q, L_k) restricted to the ``shown`` keys and renormalised; a query that
    sees no key gets zero weights, as the course's contract says."""
    kept = free * shown
    return (kept / kept.sum(-1, keepdim=True)).nan_to_num(0.0)


def check_masked_weights(weights: Tensor, free: Tensor, keep: Tensor, what: str) -> None:
    """weights under a mask = the unmasked weights renormalised over the visible keys."""
    keep = keep.expand(free.shape)
    if weights.shape != free.shape:
        fail(
            f"with {what} the weights must still be (B, H, L_q, L_k) = {tuple(free.shape)}, got {tuple(weights.shape)}"
        )
    expected, reversed_mask = (renormalised(free, shown) for shown in (keep, ~keep))
    hidden_weight = weights.masked_select(~keep)
    if (hidden_weight != 0).any():
        if torch.allclose(weights.nan_to_num(0.0), reversed_mask, atol=1e-5):
            fail(f"{MHA['mask_reversed']} (with {what})")
        fail(
            f"with {what}, hidden keys must get exactly zero weight in every head; they got up "
            f"to {hidden_weight.abs().max().item():.3g}"
        )
    if not torch.allclose(weights, expected, atol=1e-5):
        fail(
            f"with {what}, the visible keys' weights must be the unmasked weights renormalised "
            f"over the visible keys; they are not ({first_difference(weights, expected, 1e-5)})"
        )


@check(
    ASSIGNMENT,
    "test_mha_mask",
    keeps=(
        "`mask` (True = may attend) may be `(L_q, L_k)` (shared by all), `(B, L_q, "
        "L_k)` (one per sentence) or `(B, H, L_q, L_k)` (one per head)",
    ),
)
def mha_applies_every_mask_shape(ns: Namespace) -> None:
    cls = require(ns, "MultiHeadAttention", type)
    g = hidden_generator("a02 masks")
    first = mha_sizes(g)
    for sizes in (first, *degenerate_mha_sizes(g, unlike=first[-1])[:2]):
        masks_apply_to_every_head(cls, g, *sizes)


def masks_apply_to_every_head(
    cls: type, g: torch.Generator, b: int, l_q: int, l_k: int, h: int, d_k: int
) -> None:
    """Every mask shape of the contract hides its keys in every head (the weights renormalised)."""
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
        with inputs_kept("MultiHeadAttention", query=query, key=key, value=value, mask=m3):
            try:
                _, weights = mha(query, key, value, mask=m3)
            except NotImplementedError:
                raise
            except Exception as error:
                raised = f"{what3} raised {type(error).__name__}: {error}"
                try:  # the same mask with its head axis, as unsqueeze(1) gives it
                    _, given_head_axis = mha(query, key, value, mask=m3.unsqueeze(1))
                    right = is_close(given_head_axis, renormalised(free, m3.unsqueeze(1)))
                except Exception:
                    right = False
                if right:
                    fail(f"{MHA['mask_not_unsqueezed']} ({raised})")
                fail(f"{raised}: a (B, L_q, L_k) mask applies to every head of its sentence")
        right = renormalised(free, m3.unsqueeze(1))
        if weights.shape == free.shape and not is_close(weights, right):
            if is_close(weights, renormalised(free, tiled(m3, h))):
                fail(f"{MHA['sentence_masks_tiled']} (with {what3} and H = {h} heads)")
        check_masked_weights(weights, free, m3.unsqueeze(1), what3)


def tiled(mask: Tensor, h: int) -> Tensor:
    """A (B, L_q, L_k) mask repeated ``h`` times one after the other and viewed as (B, H, L_q,
    L_k): head h of sentence b holds sentence (b·H + h) mod B's mask."""
    b = mask.shape[0]
    return mask[(torch.arange(b)[:, None] * h + torch.arange(h)) % b]


@check(
    ASSIGNMENT,
    "test_mha_mask",
    keeps=(
        "`(B, L_q, L_k)` (one per sentence)",
        "Give a 3-D mask an axis of size 1 in position 1, so that it reads `(B, 1, L_q, "
        "L_k)` and every head of a sentence shares that sentence's mask",
    ),
)
def mha_applies_a_sentence_mask_to_every_head(ns: Namespace) -> None:
    """B == H: a 3-D mask without unsqueeze(1) broadcasts silently, sentence masks landing on heads."""
    cls = require(ns, "MultiHeadAttention", type)
    g = hidden_generator("a02 mask B == H")
    # A second head size, so that a head size written into the answer passes neither.
    h, l_q, l_k, d_k, other_d_k = random_sizes(g, 5, low=2, high=6)
    for size in (d_k, other_d_k):
        sentence_mask_reaches_every_head(cls, g, h, l_q, l_k, size)


def sentence_mask_reaches_every_head(
    cls: type, g: torch.Generator, h: int, l_q: int, l_k: int, d_k: int
) -> None:
    """With B == H, a (B, L_q, L_k) mask hides each sentence's keys in every head of it."""
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
        # Seen at B == H; which layout did it is told apart with another number of sentences.
        fail(
            sentence_mask_layout(cls, g, h, l_q, l_k, d_k)
            or f"with as many sentences as heads (B = H = {h}), sentence b's (B, L_q, L_k) mask "
            "hid keys in head b of every sentence, not in every head of sentence b"
        )
    check_masked_weights(weights, free, m3.unsqueeze(1), "a (B, L_q, L_k) mask")


def sentence_mask_layout(
    cls: type, g: torch.Generator, h: int, l_q: int, l_k: int, d_k: int
) -> str | None:
    """Where a (B, L_q, L_k) mask landed on heads at B == H, the layout that put it there, if an
    experiment with B = H + 1 sentences confirms one: broadcast with its head axis in front (the
    call raises, and runs once the mask has its head axis), or repeated H times and viewed as
    (B, H, L_q, L_k) (head h of sentence b holds sentence (b·H + h) mod B's mask)."""
    b = h + 1
    mha = build(cls, h * d_k, h, g)
    query = torch.randn(b, l_q, h * d_k, generator=g)
    key, value = torch.randn(2, b, l_k, h * d_k, generator=g).unbind(0)
    m3 = random_mask(g, b, l_q, l_k)
    sizes = f"B = {b} sentences and H = {h} heads"
    with torch.no_grad():
        try:
            _, free = mha(query, key, value)
            try:
                _, weights = mha(query, key, value, mask=m3.clone())
            except (StopChecks, NotImplementedError):
                raise
            except Exception:  # noqa: BLE001 - the experiment: does the head axis make it run?
                _, with_axis = mha(query, key, value, mask=m3.unsqueeze(1).clone())
                if is_close(with_axis, renormalised(free, m3.unsqueeze(1))):
                    return (
                        f"{MHA['mask_head_axis_in_front']} (with {sizes} the call raises, and "
                        "runs with mask.unsqueeze(1))"
                    )
                return None
        except (StopChecks, NotImplementedError):
            raise
        except Exception:  # noqa: BLE001 - an answer that cannot run here confirms nothing
            return None
    if weights.shape == free.shape and is_close(weights, renormalised(free, tiled(m3, h))):
        return f"{MHA['sentence_masks_tiled']} (seen with {sizes})"
    return None


@check(
    ASSIGNMENT,
    "test_mha_mask",
    keeps=("`mask` (True = may attend)", "`(B, L_q, L_k)` (one per sentence)"),
)
def hidden_keys_do_not_leak(ns: Namespace) -> None:
    cls = require(ns, "MultiHeadAttention", type)
    g = hidden_generator("a02 padding")
    for b, l_q, l_k, h, d_k in two_mha_sizes(g):
        padding_keys_change_nothing(cls, g, b, l_q, l_k, h, d_k)


def padding_keys_change_nothing(
    cls: type, g: torch.Generator, b: int, l_q: int, l_k: int, h: int, d_k: int
) -> None:
    """Keys and values that a padding mask hides, changed, leave the output as it was."""
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
    if not (torch.isfinite(out).all() and torch.isfinite(changed).all()):
        fail(
            "with a (B, L_q, L_k) padding mask under which every query sees at least one key, "
            "the output holds NaN or inf"
        )
    if not torch.allclose(out, changed, atol=1e-5):
        moved = (out - changed).abs().amax(dim=(1, 2))
        fail(
            "changing the keys and values at hidden (padding) positions changed the output, by up "
            f"to {moved.max().item():.3g}, in sentences {moved.gt(1e-5).nonzero().flatten().tolist()} "
            f"(only sentence {b - 1} has padding): hidden keys must not influence any head"
        )
