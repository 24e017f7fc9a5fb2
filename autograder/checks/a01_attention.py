"""Hidden checks for 01_attention: NumPy and PyTorch attention, masks, causality."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import torch
from torch import Tensor, nn
from torch.nn import functional as F

import attention_lab.reference.a01_attention as reference
from attention_lab.reference.a02_multi_head import MultiHeadAttention
from autograder.authoring.closeness import is_close
from autograder.authoring.counterexample import small_integers, smallest_counterexample
from autograder.authoring.dependencies import depends_on
from autograder.authoring.diagnosis import (
    SQUEEZED,
    borne_out,
    diagnose,
    squeezed,
    squeezed_mistake,
)
from autograder.authoring.hidden_draws import (
    draw_seed,
    hidden_generator,
    random_sizes,
    under_seed,
)
from autograder.authoring.in_place_writes import inputs_kept, on_copies, written_in_place_mistake
from autograder.authoring.mistakes import Mistake, catalogue
from autograder.authoring.operation_mistakes import (
    any_over,
    causal_mask_slips,
    finite_fill,
    keepdim_dropped,
    mask_slips,
    max_over_everything,
    mistaken_outputs,
    raising_alike,
    scale_slips,
    softmax_over,
)
from autograder.authoring.reference_bans import (
    TORCH_CAUSAL_MASK,
    TORCH_MULTI_HEAD,
    TORCH_SCALED_DOT_PRODUCT,
    ban,
)
from autograder.authoring.registry import (
    EDGE_CASES,
    CheckFailed,
    Namespace,
    StopChecks,
    check,
    fail,
)
from autograder.authoring.repairs import repairs
from autograder.authoring.requiring import require
from autograder.authoring.student_errors import explain

ASSIGNMENT = "01_attention"
squeezed_mistake(ASSIGNMENT)  # diagnose names it in every exercise
WRITTEN_IN_PLACE = written_in_place_mistake(ASSIGNMENT)  # call_attention names it
# The clause behind that charge: every check that calls `attention` through call_attention keeps it.
KEEPS_ITS_ARGUMENTS = "`attention` writes nothing into `q`, `k`, `v` or `mask`: the caller's tensors keep their values"
BANNED = {
    **TORCH_SCALED_DOT_PRODUCT,
    **TORCH_MULTI_HEAD,
    "attention_lab's scaled_dot_product_attention": reference.scaled_dot_product_attention,
    "attention_lab's MultiHeadAttention": MultiHeadAttention,
}


# The named mistakes of each exercise, by family (autograder/authoring/mistakes.py): each is
# diagnosed only where the answer's output matches the output of that mistake.
ATTENTION = catalogue(
    ASSIGNMENT,
    "attention",
    {
        "softmax axis": {
            "softmax_over_queries": "rows sum to 1 over queries, not keys: is the softmax over "
            "the wrong dimension (use dim=-1)?",
        },
        "scaling": {
            "not_scaled": "scores are not scaled: divide q kᵀ by √d_k",
            "divided_by_d_k": "scores are divided by d_k instead of √d_k",
            "multiplied_by_sqrt_d_k": "scores are multiplied by √d_k instead of divided by it",
            "scaled_by_sqrt_l_k": "scaled by √L_k (the number of keys) instead of √d_k "
            "(q.shape[-1])",
            "scaled_by_sqrt_d_v": "scaled by √d_v (v.shape[-1], the values' size) instead of "
            "√d_k (q.shape[-1])",
            "scaled_by_sqrt_axis_1": "scaled by the square root of q.shape[1] instead of √d_k "
            "(q.shape[-1]): q.shape[1] is d_k for 2-D q, but L_q for q of shape (B, L_q, d_k)",
            "scaled_whatever_scale_with_a_mask": "with a mask, scale=False still divides the "
            "scores by √d_k: your weights with a mask and scale=False are the scaled ones; the "
            "masked path must read `scale` too",
        },
        "mask": {
            "mask_reversed": "mask polarity reversed: True/1 means 'may attend', so hide keys "
            "where the mask is False",
            "numeric_mask_reversed": "a 0/1 mask that is not bool is read the other way "
            "round (1 = hidden): with bool masks your weights are right, and with a 0/1 mask "
            "they are those of its opposite; the statement's 0/1 masks read as its bool ones, "
            "True/1 = may attend",
            "finite_fill": "masked keys filled with a finite number (like -100 or -1e9) instead "
            "of -inf, so they still get weight",
            "mask_not_bool": "the mask is used as given: your attention raised with a 0/1 "
            "integer mask, and runs with the same mask as bool; convert it first (mask.bool())",
            "mask_added": "the mask is added to the scores: your weights are the softmax of "
            "the scores plus a constant times the mask, so the keys where the mask is 0 (False) "
            "keep weight and a row that sees no key still sums to 1 (the statement hides those "
            "keys: weight exactly 0, and a row that sees no key gets all-zero weights)",
            "masked_after_softmax": "the mask is applied after the softmax: your weights are "
            "the softmax over every key with the hidden keys zeroed and each row renormalised, "
            "so where hidden keys score hundreds above the visible ones the visible weights "
            "underflow to 0 before the renormalisation (the statement hides keys with -inf "
            "before the softmax)",
        },
        "fully masked rows": {
            "fully_masked_nan": "a fully masked row gives NaN: the softmax of a row of -inf "
            "scores is 0/0; give such rows finite scores before the softmax and zero weights "
            "after it",
            "nan_gradients_of_the_row": "the NaN or inf gradients come from the row that sees "
            "no key alone (they are finite once it sees one key), while your output is finite: "
            "something that row computes on the way is NaN or inf, and replacing it afterwards "
            "(nan_to_num, masked_fill, torch.where) hides it from the output, not from the "
            "backward pass; give the row finite scores before the softmax instead",
            "visible_rows_over_queries": "the rows that see a key are found over the queries' "
            "axis (mask.any(dim=-2)), not over the keys' (dim -1): a key that no query of the "
            "mask sees gets score 0 in every row, and its weight, zeroed after the softmax, "
            "leaves the other weights of the row summing to less than 1",
            "keepdim_dropped": "the flags of the rows that see a key are a reduction over the "
            "keys without keepdim=True (mask.any(dim=-1)), of shape (..., L_q): without their "
            "trailing axis they broadcast against the scores' last axis, the keys', not their "
            "rows, which raises where L_q and L_k differ and treats columns as rows where they "
            "agree; mask.any(dim=-1, keepdim=True) is (..., L_q, 1)",
        },
        "stability": {
            "overflow": "the weights are NaN or inf for large scores, so exp overflowed: "
            "subtract each row's max from the scores before exponentiating (or use torch.softmax)",
            "far_below_zero": "the weights are NaN or inf where every score of a row is far below "
            "0, and finite for the same inputs without that shift, which softmax ignores: "
            "subtract each row's max from the scores before exponentiating (or use torch.softmax)",
        },
    },
)
OVERFLOW = ATTENTION["overflow"]
NUMPY = catalogue(
    ASSIGNMENT,
    "attention_numpy",
    {
        "return order": {
            "returns_swapped": "attention_numpy returns (weights, output): return (output, "
            "weights), in that order",
        },
        "stability": {
            "naive_exp": "np.exp overflows on large scores: subtract each row's max before "
            "exponentiating",
            "max_over_everything": "one maximum of the whole score matrix is subtracted "
            "(scores.max() with no axis), so a row far below it underflows to 0/0: subtract "
            "each row's own max, scores.max(axis=-1, keepdims=True)",
        },
    },
)
CAUSAL_MASK = catalogue(
    ASSIGNMENT,
    "causal_mask",
    {
        "mask polarity": {
            "reversed": "causal mask polarity reversed: True means 'may attend', so the past "
            "(j <= i) is True and the future False",
        },
        "off by one": {
            "hides_diagonal": "your causal mask hides the diagonal (j < i instead of j <= i), so "
            "position 0 attends to nothing",
            "shows_next": "your causal mask also shows the next position (j <= i + 1): keep j <= i",
        },
        "orientation": {
            "transposed": "your mask lets each position see the future (upper triangle): keep "
            "j <= i",
        },
        "return type": {
            "not_a_tensor": "causal_mask returns the right values, but not as a torch tensor "
            "(torch.as_tensor of its result is the mask asked for)",
        },
        "size": {
            "fixed_table": "causal_mask cuts its mask from a table of a fixed size M: below M "
            "it returns the right mask, and past M the table's own (M, M) mask, whatever n is; "
            "build the (n, n) mask for the n it is given",
        },
    },
)


SOFTMAX_OVER_QUERIES = softmax_over(-2, "softmax_over_queries")
VISIBLE_BY_QUERY = any_over(-2, "visible_rows_over_queries")
KEEPDIM_DROPPED = keepdim_dropped()


def reference_weights(q: Tensor, k: Tensor, mask: Tensor | None = None, scale=True) -> Tensor:
    """The reference's weights (..., L_q, L_k): softmax(q kᵀ · scale), hidden keys at zero."""
    return reference.scaled_dot_product_attention(q, k, k, mask, scale=scale)[1]


def weight_mistakes(
    q: Tensor, k: Tensor, mask: Tensor | None = None, d_v: int | None = None, axis_1: bool = False
) -> dict[Mistake, Tensor]:
    """The reference's weights with each slip of ATTENTION (operation_mistakes.py), by mistake;
    scaled by √d_v too where the values' size ``d_v`` is given, and by √q.shape[1] where
    ``axis_1``.

    As the contract says, a row whose keys are all hidden gets zero weights, not NaN: a reversed
    mask hides every key of a row where the mask is all True, and whether the hidden draw holds
    such a row must not change the diagnosis."""
    slips = [
        SOFTMAX_OVER_QUERIES,
        *scale_slips(
            q.shape[-1],
            {
                "l_k": k.shape[-2],
                **({"d_v": d_v} if d_v else {}),
                **({"axis_1": q.shape[1]} if axis_1 else {}),
            },
        ),
    ]
    if mask is not None:
        slips += [*mask_slips(), finite_fill()]
    return mistaken_outputs(ATTENTION, reference_weights, {"q": q, "k": k, "mask": mask}, slips)


def shift_rows(q: Tensor, k: Tensor, shift: Tensor) -> None:
    """Make the last feature add ``shift`` (..., L_q) to every scaled score of each query, in place:
    the keys' last feature becomes 1, the queries' shift · √d_k."""
    k[..., -1] = 1.0
    q[..., -1] = shift * math.sqrt(q.shape[-1])


def finite_without_the_shift(attention, q: Tensor, k: Tensor, v: Tensor, mask=None) -> bool:
    """Whether the answer's weights are finite for the same inputs with the rows' shift taken out
    (shift_rows's feature of q set to 0): then the shift alone made them NaN or inf, which a
    softmax, blind to a shift shared by a row's scores, never does."""
    unshifted = q.clone()
    unshifted[..., -1] = 0.0
    try:
        _, weights = call_attention(attention, unshifted, k, v, mask)
    except (NotImplementedError, StopChecks):
        raise
    except Exception:  # noqa: BLE001 - a failure here confirms nothing
        return False
    return isinstance(weights, Tensor) and bool(torch.isfinite(weights).all())


def judge_finite(
    attention, weights: object, q: Tensor, k: Tensor, v: Tensor, mask, cause: str, scores: str
) -> None:
    """Fail where ``weights`` hold NaN or inf: with ``cause`` where the answer's weights are finite
    for the same inputs without the rows' shift (:func:`finite_without_the_shift`), else with
    what is seen and no cause (none is confirmed)."""
    if not isinstance(weights, Tensor) or torch.isfinite(weights).all():
        return
    if finite_without_the_shift(attention, q, k, v, mask):
        fail(cause)
    first = tuple(torch.nonzero(~torch.isfinite(weights))[0].tolist())
    fail(
        f"the weights are NaN or inf for {scores} (first at index {first}), and for the same "
        "inputs without that shift too: every weight must be a finite number in [0, 1]"
    )


def g_normal(g: torch.Generator, *size: int) -> np.ndarray:
    """A float64 NumPy array of standard normal draws from ``g``."""
    return torch.randn(*size, generator=g, dtype=torch.float64).numpy()


def arrays(*tensors: Tensor) -> tuple[np.ndarray, ...]:
    """Copies of ``tensors`` as NumPy arrays: what the answer writes into them stays there, and
    the tensors keep the values the reference is computed from (``t.numpy()`` shares them)."""
    return tuple(t.numpy().copy() for t in tensors)


def stable_weights(q: Tensor, k: Tensor) -> Tensor:
    """softmax(q kᵀ / √d_k) (L_q, L_k) as the statement computes it: each row less its max."""
    scores = q @ k.T / math.sqrt(q.shape[-1])
    exps = torch.exp(scores - scores.amax(-1, keepdim=True))
    return exps / exps.sum(-1, keepdim=True)


def reference_attention(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None):
    return reference.scaled_dot_product_attention(q, k, v, mask)


# The public (L_q, L_k, d_k) a counterexample is looked for at, smallest first.
EXAMPLE_SIZES = [
    (l_q, l_k, d_k)
    for total in range(3, 9)
    for l_q in (1, 2, 3)
    for l_k in (1, 2, 3)
    for d_k in (1, 2, 3, 4)
    if l_q + l_k + d_k == total
]


def smaller_example(
    answer: Callable[[Tensor, Tensor, Tensor], Tensor],
    expected: Callable[[Tensor, Tensor, Tensor], Tensor],
) -> Callable[[], str | None]:
    """A counterexample finder: the first public (q, k, v) of EXAMPLE_SIZES on which
    ``answer(q, k, v)`` differs from ``expected(q, k, v)``."""

    def inputs(g: torch.Generator, size: tuple[int, ...]) -> dict[str, Tensor]:
        l_q, l_k, d_k = size
        q, k = small_integers(g, l_q, d_k), small_integers(g, l_k, d_k)
        return {"q": q, "k": k, "v": small_integers(g, l_k, 2)}

    return lambda: smallest_counterexample(answer, expected, inputs, EXAMPLE_SIZES)


def smaller_weights_example(attention, scale: bool = True) -> Callable[[], str | None]:
    """A counterexample finder for the weights of ``attention`` (with ``scale``)."""
    return smaller_example(
        lambda q, k, v: call_attention(attention, q, k, v, scale=scale)[1],
        lambda q, k, v: reference_weights(q, k, scale=scale),
    )


def numpy_example(attention_numpy, part: int) -> Callable[[], str | None]:
    """A counterexample finder for ``attention_numpy``'s output (part 0) or weights (part 1)."""

    def answer(q: Tensor, k: Tensor, v: Tensor) -> Tensor:
        result = attention_numpy(*arrays(q, k, v))
        return torch.as_tensor(np.asarray(result[part]))

    return smaller_example(answer, lambda q, k, v: reference_attention(q, k, v)[part])


def call_attention(attention, *args, **kwargs) -> tuple[Tensor, Tensor]:
    """``attention(*args, **kwargs)``; a failure where it changed a tensor it was given (which
    the checks use again, for the reference or another call) or returned no pair."""
    named = {**dict(zip(("q", "k", "v", "mask"), args, strict=False)), **kwargs}
    with inputs_kept("attention", **named):
        result = attention(*args, **kwargs)
    if not (isinstance(result, tuple) and len(result) == 2):
        fail("attention must return a tuple (output, weights)")
    return result


def raised_as_without_keepdim(
    q: Tensor, k: Tensor, v: Tensor, mask: Tensor, error: Exception
) -> bool:
    """Whether the reference, with its mask.any(dim=-1, keepdim=True) run without keepdim, raises
    ``error`` itself on these inputs (torch's broadcast errors quote the sizes)."""
    arguments = {"q": q, "k": k, "v": v, "mask": mask}
    return bool(
        raising_alike(reference.scaled_dot_product_attention, arguments, [KEEPDIM_DROPPED], error)
    )


def call_masked(attention, q: Tensor, k: Tensor, v: Tensor, mask: Tensor) -> tuple[Tensor, Tensor]:
    """``call_attention`` with ``mask``; where a mask that is not bool makes the answer raise,
    the same call with the mask as bool is the experiment: if that runs, the dtype is the cause."""
    try:
        return call_attention(attention, q, k, v, mask)
    except (CheckFailed, StopChecks, NotImplementedError):
        raise
    except Exception as error:  # noqa: BLE001 - re-raised unless the experiment explains it
        # The reference with its reductions run without keepdim raising this very error (torch's
        # broadcast errors quote the sizes) confirms a reduction that dropped its trailing axis.
        if raised_as_without_keepdim(q, k, v, mask, error):
            fail(
                f"{ATTENTION['keepdim_dropped']} (the reference, with its mask.any(dim=-1, "
                "keepdim=True) run without keepdim, raises the very error yours raised with a "
                f"mask {tuple(mask.shape)} and scores {(*q.shape[:-1], k.shape[-2])})\n"
                + explain(error, "attention")
            )
        if mask.dtype == torch.bool:
            raise
        try:
            call_attention(attention, q, k, v, mask.bool())
        except Exception:  # noqa: BLE001 - the dtype alone does not explain the error
            raise error from None
        fail(
            f"{ATTENTION['mask_not_bool']}\n"
            f"{explain(error, 'attention', f' with a mask of dtype {mask.dtype}')}"
        )


# The NumPy answer could hand its arrays to torch: the same references are banned.
ban(ASSIGNMENT, "attention_numpy", BANNED)


@check(
    ASSIGNMENT,
    "test_attention_numpy",
    keeps=(
        "Implement `attention_numpy(Q, K, V)` for 2-D NumPy arrays, returning (output, weights)",
        "`weights` is `(L_q, L_k)` with rows summing to 1; `output` is `(L_q, d_v)`",
        r"scale the scores by $1/\sqrt{d_k}$, where $d_k$ is the last dimension of `Q`",
    ),
)
def numpy_attention_matches_reference(ns: Namespace) -> None:
    attention_numpy = require(ns, "attention_numpy")
    g = hidden_generator("a01 numpy")
    draws = []
    for _ in range(3):
        l_q, l_k, d_k, d_v = random_sizes(g, 4)
        q, k, v = (
            torch.randn(n, d, generator=g, dtype=torch.float64)
            for n, d in ((l_q, d_k), (l_k, d_k), (l_k, d_v))
        )
        out, weights = attention_numpy(*arrays(q, k, v))
        expected_out, expected_w = reference_attention(q, k, v)
        out, weights = torch.as_tensor(np.asarray(out)), torch.as_tensor(np.asarray(weights))
        if is_close(out, expected_w) and is_close(weights, expected_out):
            fail(NUMPY["returns_swapped"])
        draws.append((out, expected_out, weights, expected_w, weight_mistakes(q, k, d_v=d_v)))
    # A mistake is named only where every draw the weights are wrong on bears it out.
    named = borne_out(
        [(weights, expected_w, mistakes) for _, _, weights, expected_w, mistakes in draws]
    )
    for out, expected_out, weights, expected_w, mistakes in draws:
        diagnose(
            weights,
            expected_w,
            {mistake: value for mistake, value in mistakes.items() if mistake in named},
            "weights differ from softmax(Q Kᵀ / √d_k)",
            counterexample=numpy_example(attention_numpy, 1),
        )
        diagnose(
            out,
            expected_out,
            {},
            "the output must be weights @ V",
            counterexample=numpy_example(attention_numpy, 0),
        )


@check(
    ASSIGNMENT,
    "test_attention_numpy",
    keeps=(
        "Implement `attention_numpy(Q, K, V)` for 2-D NumPy arrays, returning (output, weights)",
        "Use NumPy only, no torch.",
    ),
)
def numpy_attention_returns_numpy_arrays(ns: Namespace) -> None:
    # The visible check's promise ("a tuple (output, weights) of NumPy arrays"), kept by a hidden
    # twin: the visible checks decide no score.
    attention_numpy = require(ns, "attention_numpy")
    g = hidden_generator("a01 numpy types")
    l_q, l_k, d_k, d_v = random_sizes(g, 4)
    q, k, v = (np.asarray(g_normal(g, n, d)) for n, d in ((l_q, d_k), (l_k, d_k), (l_k, d_v)))
    result = attention_numpy(q, k, v)
    if not (isinstance(result, tuple) and len(result) == 2):
        fail(f"attention_numpy must return a tuple (output, weights), got {type(result).__name__}")
    kinds = [type(part).__name__ for part in result]
    if not all(isinstance(part, np.ndarray) for part in result):
        fail(
            f"attention_numpy returned ({', '.join(kinds)}): given NumPy arrays it must return "
            "NumPy arrays, not tensors or lists"
        )


@check(
    ASSIGNMENT,
    "test_attention_numpy",
    keeps=(
        "make the softmax numerically stable by subtracting each row's maximum before "
        "`np.exp` (the graded checks use scores in the thousands)",
    ),
)
def numpy_attention_is_stable_for_large_scores(ns: Namespace) -> None:
    attention_numpy = require(ns, "attention_numpy")
    g = hidden_generator("a01 numpy stable")
    q, k, v = (torch.randn(n, 6, generator=g, dtype=torch.float64) for n in (3, 4, 4))
    q, k = 300 * q, 300 * k
    with np.errstate(over="ignore", invalid="ignore"):
        out, weights = attention_numpy(*arrays(q, k, v))
        if np.isfinite(out).all() and np.isfinite(weights).all():
            return
        exps = np.exp((q @ k.T).numpy() / math.sqrt(6))  # inf where a score overflows
        naive = torch.as_tensor(exps / exps.sum(-1, keepdims=True))  # NaN where inf / inf
    weights = torch.as_tensor(np.asarray(weights, dtype=np.float64))
    if is_close(weights, naive, equal_nan=True):
        fail(NUMPY["naive_exp"])
    one_max = max_over_everything().output(stable_weights, {"q": q, "k": k})
    if is_close(weights, one_max, equal_nan=True):
        fail(NUMPY["max_over_everything"])
    bad = ~torch.isfinite(weights)
    fail(
        f"attention_numpy gives NaN or inf for large scores (q and k times 300): {int(bad.sum())} "
        f"of {bad.numel()} weights"
    )


ban(ASSIGNMENT, "attention", BANNED)


def judge_rows(attention, g: torch.Generator, cases: list[tuple]) -> None:
    """Fail unless ``attention``'s weights have the right shape and sum to 1 over the keys, and its
    output is weights @ v, for each ``(lead, L_q, L_k, d_k, d_v)`` of ``cases``."""
    for lead, l_q, l_k, d_k, d_v in cases:
        q = torch.randn(*lead, l_q, d_k, generator=g)
        k = torch.randn(*lead, l_k, d_k, generator=g)
        v = torch.randn(*lead, l_k, d_v, generator=g)
        out, weights = call_attention(attention, q, k, v)
        if squeezed(weights, (*lead, l_q, l_k)):
            fail(
                f"{SQUEEZED} (weights: expected shape {(*lead, l_q, l_k)}, got {tuple(weights.shape)})"
            )
        if not isinstance(weights, Tensor) or weights.shape != (*lead, l_q, l_k):
            shape = tuple(getattr(weights, "shape", ()))
            fail(f"weights must have shape (..., L_q, L_k) = {(*lead, l_q, l_k)}, got {shape}")
        if not is_close(weights.sum(-1), torch.ones(*lead, l_q)):
            sums = weights.sum(-1)
            diagnose(
                weights,
                reference_weights(q, k),
                mistaken_outputs(
                    ATTENTION, reference_weights, {"q": q, "k": k}, [SOFTMAX_OVER_QUERIES]
                ),
                f"each row of the weights must sum to 1 over the keys; the row sums range from "
                f"{sums.min().item():.4g} to {sums.max().item():.4g}",
                counterexample=smaller_weights_example(attention),
            )
        if not is_close(out, weights @ v):
            diagnose(out, weights @ v, {}, "the output must be weights @ v")


@check(
    ASSIGNMENT,
    "test_attention_rows_sum_to_one",
    keeps=(
        "`weights` `(..., L_q, L_k)`: softmax over the keys (last dim)",
        "`output` `(..., L_q, d_v)` = `weights @ v`",
        "where `...` is any number of batch dimensions (none, `(B,)`, `(B, H)`, ...)",
        "nothing ties $L_q$ to $L_k$",
        KEEPS_ITS_ARGUMENTS,
    ),
)
def rows_sum_to_one_over_keys(ns: Namespace) -> None:
    attention = require(ns, "attention")
    g = hidden_generator("a01 rows")
    judge_rows(attention, g, [(lead, *random_sizes(g, 4)) for lead in [(), (3,), (2, 1, 4)]])


@check(
    ASSIGNMENT,
    "test_attention_rows_sum_to_one",
    weight=EDGE_CASES,
    keeps=(
        "`weights` `(..., L_q, L_k)`: softmax over the keys (last dim)",
        "where `...` is any number of batch dimensions (none, `(B,)`, `(B, H)`, ...)",
        KEEPS_ITS_ARGUMENTS,
    ),
)
def rows_sum_to_one_at_degenerate_sizes(ns: Namespace) -> None:
    # Degenerate sizes the contract allows: a batch of one, one query, one key.
    attention = require(ns, "attention")
    judge_rows(
        attention,
        hidden_generator("a01 rows degenerate"),
        [((1,), 1, 5, 3, 2), ((1, 1), 4, 1, 2, 3)],
    )


def scaling_inputs(g: torch.Generator) -> list[tuple[Tensor, Tensor, Tensor]]:
    """Three (q, k, v) of batch 2 and sizes from 2 to 23, drawn from ``g``."""
    inputs = []
    for _ in range(3):
        l_q, l_k, d_k, d_v = random_sizes(g, 4, low=2, high=24)
        q, k = torch.randn(2, l_q, d_k, generator=g), torch.randn(2, l_k, d_k, generator=g)
        inputs.append((q, k, torch.randn(2, l_k, d_v, generator=g)))
    return inputs


@check(
    ASSIGNMENT,
    "test_attention_scaling",
    keeps=(
        r"divided by $\sqrt{d_k}$ with $d_k$ = `q.shape[-1]` when `scale` is True",
        KEEPS_ITS_ARGUMENTS,
    ),
)
def scaled_by_sqrt_d_k(ns: Namespace) -> None:
    attention = require(ns, "attention")
    for q, k, v in scaling_inputs(hidden_generator("a01 scale")):
        _, weights = call_attention(attention, q, k, v)
        diagnose(
            weights,
            reference_attention(q, k, v)[1],
            weight_mistakes(q, k, d_v=v.shape[-1], axis_1=True),
            "weights differ from softmax(q kᵀ / √d_k)",
            counterexample=smaller_weights_example(attention),
        )


@check(
    ASSIGNMENT,
    "test_attention_scaling",
    weight=EDGE_CASES,
    keeps=(
        "and not scaled at all when `scale` is False",
        KEEPS_ITS_ARGUMENTS,
    ),
)
def scale_false_leaves_the_scores_unscaled(ns: Namespace) -> None:
    attention = require(ns, "attention")
    for q, k, v in scaling_inputs(hidden_generator("a01 unscaled")):
        _, unscaled = call_attention(attention, q, k, v, scale=False)
        diagnose(
            unscaled,
            torch.softmax(q @ k.transpose(-2, -1), -1),
            {},
            "with scale=False the scores must be left unscaled",
            counterexample=smaller_weights_example(attention, scale=False),
        )


def fully_masked_inputs(g: torch.Generator) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """q, k, v (2, 3 heads, L, d) that need gradients, and a mask (2, 1, L_q, L_k): in the first
    batch element query 1 sees no key and no query sees the last key; in the second, query 0
    sees every key; every other query sees key 0."""
    l_q, l_k, d_k, d_v = random_sizes(g, 4)
    q = torch.randn(2, 3, l_q, d_k, generator=g, requires_grad=True)
    k = torch.randn(2, 3, l_k, d_k, generator=g, requires_grad=True)
    v = torch.randn(2, 3, l_k, d_v, generator=g, requires_grad=True)
    mask = torch.rand(2, 1, l_q, l_k, generator=g) > 0.5
    mask[..., 0] = True
    # Fixed, not left to the draw, where a softmax over the queries sees them: over a key no
    # query sees, it is 0/0 unless a fully masked row was given finite scores. Beside query 1,
    # that key shows whether such rows are handled, whatever the softmax axis; alone, in the
    # second element, it would show only the axis again, charged in the rows cell (issue 40's
    # f01-04 lost points here too under the 11 of 32 secrets whose draw held one there).
    mask[0, 0, :, -1] = False
    mask[1, 0, 0] = True
    mask[0, 0, 1] = False  # a query that sees nothing
    return q, k, v, mask


def padding_mask(g: torch.Generator, l_k: int) -> Tensor:
    """A key-padding mask (2, 1, 1, L_k), one row for all the queries and heads of a sentence:
    sentence 0 is all pads, sentence 1 has 1 to L_k - 1 real keys, then pads."""
    mask = torch.zeros(2, 1, 1, l_k, dtype=torch.bool)
    mask[1, ..., : int(torch.randint(1, l_k, (), generator=g))] = True
    return mask


def added_mask_factor(weights: Tensor, scores: Tensor, mask: Tensor) -> float | None:
    """The constant c for which ``weights`` (..., L_q, L_k) are softmax(scores + c · mask) on
    every row, where they are that for some c ≠ 0 (the mask added to the scores), else None.

    log(weights) − scores is c · mask plus a constant per row, so c is read off the rows that
    hold both a 0 and a 1 of the mask, then the whole of ``weights`` is compared with that
    softmax: an answer that hides keys (weight 0, no logarithm) or is any other function of
    the scores gets None."""
    if weights.shape != scores.shape or not (weights > 0).all() or not weights.isfinite().all():
        return None
    values = mask.to(scores.dtype).expand_as(weights)
    logs = weights.double().log() - scores.double()
    ones, zeros = values == 1, values == 0
    if not (ones | zeros).all():
        return None
    both = ones.any(-1) & zeros.any(-1)
    if not both.any():
        return None

    def mean_where(chosen: Tensor) -> Tensor:
        return (logs * chosen).sum(-1) / chosen.sum(-1).clamp(min=1)

    factor = (mean_where(ones) - mean_where(zeros))[both].mean().item()
    if not math.isfinite(factor) or abs(factor) < 1e-3:
        return None
    added = torch.softmax(scores + factor * values, dim=-1)
    return factor if is_close(weights, added) else None


def mask_added_mistake(weights, q: Tensor, k: Tensor, mask: Tensor | None) -> dict:
    """{mask_added: softmax(q kᵀ / √d_k + c · mask)} where the answer's ``weights`` are that
    for some c ≠ 0 (added_mask_factor), else nothing: the constant is read off the answer."""
    if mask is None or not isinstance(weights, Tensor):
        return {}
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    factor = added_mask_factor(weights.detach(), scores, mask)
    if factor is None:
        return {}
    return {ATTENTION["mask_added"]: torch.softmax(scores + factor * mask.to(scores.dtype), -1)}


def judge_masked_rows(
    attention, q: Tensor, k: Tensor, v: Tensor, mask: Tensor
) -> tuple[Tensor, Tensor, Tensor] | None:
    """Fail unless ``attention`` with ``mask`` is finite, gives the rows that see no key zero
    weights and a zero output, and hidden keys zero weight; the weights, the reference's and
    the sums of the rows that see a key, where one of those does not sum to 1, else None."""
    with torch.no_grad():  # the softmax of the masked scores: NaN in the rows that see nothing
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        naive = torch.softmax(scores.masked_fill(~mask.bool(), float("-inf")), dim=-1)
    out, weights = call_masked(attention, q, k, v, mask)
    if not torch.isfinite(out).all() or not torch.isfinite(weights).all():
        if is_close(weights, naive, equal_nan=True):
            fail(ATTENTION["fully_masked_nan"])
        fail(
            "with a fully masked row the output or the weights hold NaN or inf: such a row "
            "must get all-zero weights, and every other row its softmax over visible keys"
        )
    shown = mask.bool().expand_as(weights)
    sees = shown.any(-1)
    hides = (weights[~sees] == 0).all() and (weights.masked_select(~shown) == 0).all()
    factor = None if hides else added_mask_factor(weights.detach(), scores, mask)
    if factor is not None:
        fail(
            f"{ATTENTION['mask_added']}\nwith this {mask.dtype} mask your weights equal "
            f"softmax(q kᵀ / √d_k + {factor:.3g} · mask) to within rounding"
        )
    if not (weights[~sees] == 0).all():
        fail("a fully masked row must get all-zero weights (it may attend to nothing)")
    # The public check's promise: the statement's zero output for such a row.
    if not (out[~sees] == 0).all():
        fail("a fully masked row must get a zero output (its weights are all zero)")
    hidden = weights.masked_select(~shown)
    if not (hidden == 0).all():
        fail(
            "hidden keys must get exactly zero weight; the largest weight on a hidden key "
            f"here is {hidden.abs().max().item():.3g}"
        )
    sums = weights.detach().sum(-1)[sees]
    if is_close(sums, torch.ones_like(sums)):
        return None
    return weights.detach(), reference_weights(q.detach(), k.detach(), mask), sums


@check(
    ASSIGNMENT,
    "test_attention_fully_masked_row",
    keeps=(
        "a fully masked row gives zero weights and a finite (zero) output",
        'Hidden keys must get weight exactly 0: set their scores to `float("-inf")` '
        "before the softmax",
        "`mask`: None, or a bool / 0-1 tensor broadcastable to `(..., L_q, L_k)`, "
        "True/1 = may attend",
        KEEPS_ITS_ARGUMENTS,
    ),
)
def fully_masked_row_is_finite(ns: Namespace) -> None:
    attention = require(ns, "attention")
    g = hidden_generator("a01 full mask")
    q, k, v, mask = fully_masked_inputs(g)
    # Weights normalised over another axis are the softmax-axis mistake, which the rows cell
    # charges (one mistake, one charge): rows that miss 1 are not charged again here.
    axis_g = hidden_generator("a01 full mask axis")
    other_axis = _normalised_over(attention, -2, ((2,),), axis_g) or _normalised_over(
        attention, 1, ((2,), (2, 4)), axis_g
    )
    # Beside a row that sees nothing, the other rows must still sum to 1, which an answer that
    # asks the wrong axis which rows see a key breaks: the first sentence's last key is one no
    # query sees. So does a padding mask, which broadcasts over the queries (the statement's
    # masks broadcast); it hides a key from every query of a sentence with no row that sees
    # nothing, 0/0 for a softmax over the queries, so it is left out for that mistake.
    masks = [mask, mask.int()]
    padding = padding_mask(g, k.shape[-2])
    if not other_axis:
        masks += [padding, padding.int()]
    wrong = []
    for m in masks:
        found = judge_masked_rows(attention, q, k, v, m)
        if found is not None:
            arguments = {"q": q.detach(), "k": k.detach(), "mask": m}
            slips = mistaken_outputs(ATTENTION, reference_weights, arguments, [VISIBLE_BY_QUERY])
            wrong.append((*found, slips))
    if wrong and not other_axis:
        # Named only where every mask the rows miss 1 on bears the mistake out.
        named = borne_out([(weights, expected, slips) for weights, expected, _, slips in wrong])
        weights, expected, sums, slips = wrong[0]
        diagnose(
            weights,
            expected,
            {mistake: value for mistake, value in slips.items() if mistake in named},
            "every row that sees a key must sum to 1 over the keys (its softmax over the visible "
            f"keys); here such rows sum to {sums.min().item():.4g} to {sums.max().item():.4g}",
        )


@check(
    ASSIGNMENT,
    "test_attention_fully_masked_row",
    weight=EDGE_CASES,
    keeps=(
        "a fully masked row gives zero weights and a finite (zero) output, with finite gradients",
        KEEPS_ITS_ARGUMENTS,
    ),
)
def fully_masked_row_has_finite_gradients(ns: Namespace) -> None:
    # Apart from the values: NaN weights zeroed after the softmax still give NaN gradients.
    attention = require(ns, "attention")
    q, k, v, mask = fully_masked_inputs(hidden_generator("a01 full mask gradients"))

    def not_finite(m: Tensor) -> tuple[bool, list[str]]:
        """Whether the output is finite, and the inputs whose gradient holds NaN or inf after
        the output's sum is differentiated."""
        for t in (q, k, v):
            t.grad = None
        out, _ = call_masked(attention, q, k, v, m)
        out.sum().backward()
        grads = [
            n for n, t in zip("qkv", (q, k, v), strict=True) if not torch.isfinite(t.grad).all()
        ]
        return bool(torch.isfinite(out).all()), grads

    for m in (mask, mask.int()):
        finite_output, bad = not_finite(m)
        if bad:
            seen = (
                f"the gradients of {', '.join(bad)} hold NaN or inf with a fully masked row "
                "(the statement asks for finite gradients there, as for the row's all-zero "
                "weights)"
            )
            shown = m.clone()
            shown[0, 0, 1, 0] = True  # the row that saw nothing sees key 0, as the others do
            # a NaN output is the forward's own fault, told by fully_masked_row_is_finite
            if finite_output and not not_finite(shown)[1]:
                fail(f"{ATTENTION['nan_gradients_of_the_row']}\n{seen}")
            fail(seen)


@check(
    ASSIGNMENT,
    "test_attention_parity",
    keeps=(
        "no `F.scaled_dot_product_attention`: it is what the hidden tests compare against",
        "`mask`: None, or a bool / 0-1 tensor broadcastable to `(..., L_q, L_k)`, "
        "True/1 = may attend",
        'Hidden keys must get weight exactly 0: set their scores to `float("-inf")` '
        "before the softmax",
        "nothing stops them from reaching the hundreds in either direction",
        KEEPS_ITS_ARGUMENTS,
    ),
)
def matches_torch_sdpa(ns: Namespace) -> None:
    attention = require(ns, "attention")
    g = hidden_generator("a01 parity")
    for trial in range(6):
        # Leading axes of 2 to 5: a leading axis of one is the rows cell's degenerate case,
        # never a chance of this draw (a squeeze() would fail here only on some draws).
        lead = tuple(random_sizes(g, trial % 3, low=2, high=5)) if trial % 3 else ()
        l_q, l_k, d_k, d_v = random_sizes(g, 4)
        q = torch.randn(*lead, l_q, d_k, generator=g, dtype=torch.float64)
        k = torch.randn(*lead, l_k, d_k, generator=g, dtype=torch.float64)
        v = torch.randn(*lead, l_k, d_v, generator=g, dtype=torch.float64)
        mask = torch.rand(*lead, l_q, l_k, generator=g) > 0.4
        mask[..., 0] = True
        mask[..., 0, -1] = False  # the first query hides a key, and sees one
        mask[..., -1, :] = True  # the last sees every key (L_q >= 2): a reversed mask, none
        # Every query's scores shifted by -150 to -400 (softmax ignores a row's shift): a key
        # filled with -100 instead of -inf takes the weight, and exp never overflows, even
        # without the max subtracted (a float64 exp overflows above 709).
        shift_rows(q, k, -150 - 250 * torch.rand(*lead, l_q, generator=g, dtype=q.dtype))
        for m in (None, mask):
            out, weights = call_attention(attention, q, k, v, m)
            judge_finite(
                attention,
                weights,
                q,
                k,
                v,
                m,
                f"{ATTENTION['far_below_zero']} (each row shifted by -150 to -400)",
                "scores shifted by -150 to -400",
            )
            diagnose(
                weights,
                reference_attention(q, k, v, m)[1],
                {**weight_mistakes(q, k, m), **mask_added_mistake(weights, q, k, m)},
                "weights differ from torch's scaled_dot_product_attention",
                atol=1e-6,
                counterexample=smaller_weights_example(attention) if m is None else None,
            )
            diagnose(
                out,
                F.scaled_dot_product_attention(q, k, v, attn_mask=m),
                {},
                "output differs from torch's scaled_dot_product_attention",
                atol=1e-6,
            )
    judge_dominant_hidden_keys(attention, g)
    judge_scores_below_a_finite_fill(attention, g)


def softmax_then_mask(q: Tensor, k: Tensor, mask: Tensor, smallest_sum: float | None) -> Tensor:
    """The weights of masked_after_softmax: softmax(q kᵀ / √d_k) over every key, the hidden keys
    zeroed, each row divided by its sum (clamped at ``smallest_sum``, or not: 0/0 is NaN)."""
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
    weights = weights * mask.bool()
    sums = weights.sum(-1, keepdim=True)
    return weights / (sums if smallest_sum is None else sums.clamp_min(smallest_sum))


def judge_dominant_hidden_keys(attention, g: torch.Generator) -> None:
    """Fail unless ``attention`` gives float32 rows whose hidden keys score 150 to 400 above
    their visible keys (Section 5's "hundreds in either direction") the softmax over the visible
    keys; names masked_after_softmax where the answer's weights are that mistake's."""
    l_q, l_k, d_k, d_v = random_sizes(g, 4)
    q = torch.randn(2, l_q, d_k, generator=g)
    k = torch.randn(2, l_k, d_k, generator=g)
    v = torch.randn(2, l_k, d_v, generator=g)
    # In each sentence 1 to L_k - 1 keys are lifted: the last feature adds 150 to 400 to their
    # scores for the first query and about half of the others, which hide exactly those keys.
    # The other queries (the last one always) see every key or a random part of them, with
    # nothing added: so every key is seen by some query (a key no query sees is the fully
    # masked column of fully_masked_row_is_finite, which a softmax over the queries makes NaN).
    lifted_keys = torch.zeros(2, l_k, dtype=torch.bool)
    for sentence in range(2):
        count = int(torch.randint(1, l_k, (), generator=g))
        lifted_keys[sentence, torch.randperm(l_k, generator=g)[:count]] = True
    lifted = torch.rand(2, l_q, generator=g) < 0.5
    lifted[:, 0], lifted[:, -1] = True, False
    mask = torch.rand(2, l_q, l_k, generator=g) > 0.4
    mask[:, :, 0] = True
    mask[:, -1] = True
    mask = torch.where(lifted[..., None], ~lifted_keys[:, None, :], mask)
    lift = torch.where(lifted, 150 + 250 * torch.rand(2, l_q, generator=g), 0.0)
    k[..., -1] = lifted_keys.float()
    q[..., -1] = lift * math.sqrt(d_k)
    _, weights = call_attention(attention, q, k, v, mask)
    expected = reference_attention(q, k, v, mask)[1]
    if not is_close(weights, expected) and any(
        is_close(weights, softmax_then_mask(q, k, mask, smallest), equal_nan=True)
        for smallest in (None, 1e-30)
    ):
        fail(ATTENTION["masked_after_softmax"])
    diagnose(
        weights,
        expected,
        {},
        "weights differ from torch's scaled_dot_product_attention in float32 rows whose hidden "
        "keys score 150 to 400 above their visible keys",
    )


# The finite numbers a student writes for minus infinity when hiding keys.
FINITE_FILLS = (-100.0, -1e3, -1e4, -1e9)


def judge_scores_below_a_finite_fill(attention, g: torch.Generator) -> None:
    """Fail unless ``attention`` gives float64 rows whose scores all lie 20,000 to 50,000 below
    zero (legal scores, in float32's range too) the softmax over their visible keys: a hidden key
    filled with a finite number above them (-1e4) takes the weight that -inf leaves at 0. Names
    finite_fill only where the answer's weights are the reference's with one of the fills of
    FINITE_FILLS or the dtype's smallest number in place of -inf."""
    l_q, l_k, d_k, d_v = random_sizes(g, 4)
    l_q, l_k = max(l_q, 2), max(l_k, 2)
    q, k, v = (
        torch.randn(2, n, d, generator=g, dtype=torch.float64)
        for n, d in ((l_q, d_k), (l_k, d_k), (l_k, d_v))
    )
    mask = torch.rand(2, l_q, l_k, generator=g) > 0.4
    rows = torch.arange(l_q)
    mask[:, rows, rows % l_k] = False  # every query hides a key
    mask[:, rows, (rows + 1) % l_k] = True  # and sees one
    # and every key is seen by some query: a key that no query sees is a softmax over the queries'
    # own 0/0, which the repair of that axis (softmax_over_the_keys) cannot undo
    for j in range(l_k):  # query 0 hides key 0, query 1 key 1: one of them may see key j
        mask[~mask[:, :, j].any(dim=1), 0 if j else 1, j] = True
    shift_rows(q, k, -20_000 - 30_000 * torch.rand(2, l_q, generator=g, dtype=q.dtype))
    out, weights = call_attention(attention, q, k, v, mask)
    arguments = {"q": q, "k": k, "mask": mask}
    mistakes = weight_mistakes(q, k, mask)
    filled = [
        mistaken_outputs(ATTENTION, reference_weights, arguments, [finite_fill(fill)])
        for fill in (*FINITE_FILLS, torch.finfo(q.dtype).min)
    ]
    # The fill's output that the answer's weights are, if any (the one of -1e4 otherwise).
    finite = ATTENTION["finite_fill"]
    mistakes[finite] = next(
        (slip[finite] for slip in filled if is_close(weights, slip[finite], equal_nan=True)),
        filled[FINITE_FILLS.index(-1e4)][finite],
    )
    diagnose(
        weights,
        reference_attention(q, k, v, mask)[1],
        mistakes,
        "weights differ from torch's scaled_dot_product_attention in rows whose scores all lie "
        "20,000 to 50,000 below zero",
        atol=1e-6,
    )
    diagnose(
        out,
        F.scaled_dot_product_attention(q, k, v, attn_mask=mask),
        {},
        "output differs from torch's scaled_dot_product_attention in rows whose scores all lie "
        "20,000 to 50,000 below zero",
        atol=1e-6,
    )


@check(
    ASSIGNMENT,
    "test_attention_parity",
    weight=EDGE_CASES,
    keeps=(
        "and not scaled at all when `scale` is False",
        "`mask`: None, or a bool / 0-1 tensor broadcastable to `(..., L_q, L_k)`, "
        "True/1 = may attend",
        KEEPS_ITS_ARGUMENTS,
    ),
)
def matches_torch_sdpa_unscaled_with_a_mask(ns: Namespace) -> None:
    """scale=False with a mask: torch's scaled_dot_product_attention with scale=1 (blind answer
    u01-02 read `scale` only where there was no mask). In the parity cell, where masks are
    judged: a mask mistake fails this cell already, and is charged once."""
    attention = require(ns, "attention")
    g = hidden_generator("a01 parity unscaled")
    for q, k, v in scaling_inputs(g):
        mask = torch.rand(q.shape[-2], k.shape[-2], generator=g) < 0.7
        mask[:, 0] = True  # every query sees a key
        _, free = call_attention(attention, q, k, v, scale=False)
        if not is_close(free, reference_weights(q, k, scale=False)):
            return  # scale=False wrong without a mask too: the scaling cell charges it
        _, weights = call_attention(attention, q, k, v, mask, scale=False)
        diagnose(
            weights,
            reference_weights(q, k, mask, scale=False),
            {ATTENTION["scaled_whatever_scale_with_a_mask"]: reference_weights(q, k, mask)},
            f"with a mask {tuple(mask.shape)} and scale=False the weights differ from torch's "
            "scaled_dot_product_attention with scale=1",
        )


@check(
    ASSIGNMENT,
    "test_attention_parity",
    keeps=(
        "scores have no bound (they may reach the hundreds, either way): the weights stay finite "
        "and right there",
        "Your `attention` inherits this stability from `torch.softmax`",
        KEEPS_ITS_ARGUMENTS,
    ),
)
def scores_in_the_hundreds_give_the_softmax(ns: Namespace) -> None:
    # Named for what it compares, not for overflow: a wrong scale fails it with finite weights.
    attention = require(ns, "attention")
    g = hidden_generator("a01 large scores")
    l_q, l_k, d_k, d_v = random_sizes(g, 4)
    q, k, v = (
        torch.randn(2, n, d, generator=g, dtype=torch.float64)
        for n, d in ((l_q, d_k), (l_k, d_k), (l_k, d_v))
    )
    # Every query's scores shifted by 800 to 1200: exp overflows (above 709 in float64) in
    # every row, whatever the draw, and a stable softmax does not care (it ignores the shift).
    shift_rows(q, k, 800 + 400 * torch.rand(2, l_q, generator=g, dtype=torch.float64))
    _, weights = call_attention(attention, q, k, v)
    judge_finite(attention, weights, q, k, v, None, OVERFLOW, "scores in the hundreds")
    diagnose(
        weights,
        reference_attention(q, k, v)[1],
        {},
        "weights differ from softmax(q kᵀ / √d_k) for scores in the hundreds",
        counterexample=smaller_weights_example(attention),
    )


ban(
    ASSIGNMENT,
    "causal_mask",
    {"attention_lab's causal_mask": reference.causal_mask, **TORCH_CAUSAL_MASK},
)


def as_float(mask: Tensor) -> Tensor:
    """A bool mask as float64 0/1, as diagnose compares values."""
    return mask.to(torch.float64)


def cut_from_a_table(causal_mask, n: int, size: int) -> bool:
    """Whether ``causal_mask`` gives a (size, size) mask for n + 5 as for n, and the right mask
    for size - 1: a table of ``size`` positions, cut to n where it can be."""
    longer, shorter = causal_mask(n + 5), causal_mask(size - 1)
    i = torch.arange(size - 1)
    return (
        isinstance(longer, Tensor)
        and longer.shape == (size, size)
        and isinstance(shorter, Tensor)
        and shorter.shape == (size - 1, size - 1)
        and torch.equal(shorter.bool(), i[None, :] <= i[:, None])
    )


def judge_causal_mask(causal_mask, sizes: tuple[int, ...]) -> None:
    """Fail unless ``causal_mask(n)`` is the bool (n, n) mask j <= i for each n of ``sizes``."""
    for n in sizes:
        mask = causal_mask(n)
        if not isinstance(mask, Tensor) or mask.shape != (n, n):
            seen = f"causal_mask({n}) must be an ({n}, {n}) tensor"
            if isinstance(mask, Tensor):
                seen += f"; it returned one of shape {tuple(mask.shape)}"
                # The same (M, M) again for a larger n, and the right mask below M: a table cut
                # to n, never grown.
                size = mask.shape[0] if mask.dim() == 2 and mask.shape[0] == mask.shape[1] else n
                if 2 <= size < n and cut_from_a_table(causal_mask, n, size):
                    fail(
                        f"{CAUSAL_MASK['fixed_table']} ({seen}, causal_mask({n + 5}) the same, "
                        f"and causal_mask({size - 1}) the right mask)"
                    )
            fail(seen)
        i = torch.arange(n)
        expected = i[None, :] <= i[:, None]
        # torch.equal compares values across dtypes: a float 0/1 mask equals the bool one.
        if mask.dtype == torch.bool and torch.equal(mask, expected):
            continue
        if torch.equal(mask.bool(), expected):
            fail(f"causal_mask must return a bool tensor, got {mask.dtype}")
        # At n = 1 some of these coincide (a reversed mask and one without the diagonal are both
        # [[False]]): diagnose names a mistake only where one alone matches.
        diagnose(
            mask.bool().to(torch.float64),
            expected.to(torch.float64),
            mistaken_outputs(CAUSAL_MASK, as_float, {"mask": expected}, causal_mask_slips()),
            f"causal_mask({n}) must be True exactly where key j <= query i",
        )


@check(
    ASSIGNMENT,
    "test_causal_mask",
    keeps=("returning an `(n, n)` bool tensor", r"i.e. where $j \le i$ (the diagonal is included)"),
)
def causal_mask_includes_the_diagonal(ns: Namespace) -> None:
    # 2 first: there every mistake judge_causal_mask names has its own mask.
    judge_causal_mask(require(ns, "causal_mask"), (2, 7, 33))


@check(
    ASSIGNMENT,
    "test_causal_mask",
    weight=EDGE_CASES,
    keeps=("returning an `(n, n)` bool tensor", r"i.e. where $j \le i$ (the diagonal is included)"),
)
def causal_mask_of_one_position(ns: Namespace) -> None:
    # The degenerate sequence of one token: it sees itself.
    judge_causal_mask(require(ns, "causal_mask"), (1,))


@check(
    ASSIGNMENT,
    "test_causal_mask",
    weight=EDGE_CASES,
    keeps=("returning an `(n, n)` bool tensor", r"i.e. where $j \le i$ (the diagonal is included)"),
)
def causal_mask_of_a_long_sequence(ns: Namespace) -> None:
    # Any n: a mask cut from a table built for some longest sequence fails past it (blind
    # answers u01-04 and v01-04, tables of 256 and 64).
    n = int(torch.randint(1100, 1400, (), generator=hidden_generator("a01 long causal mask")))
    judge_causal_mask(require(ns, "causal_mask"), (n,))


# The causal weights cell judges causal_mask (it follows that answer) through the student's
# attention, by design.
depends_on(
    ASSIGNMENT,
    ["test_causal_weights"],
    {
        "attention": [
            "test_attention_rows_sum_to_one",
            "test_attention_scaling",
            "test_attention_fully_masked_row",
            "test_attention_parity",
        ]
    },
)


def judge_causal_weights(
    attention, causal_mask, g: torch.Generator, sizes: tuple[int, ...]
) -> None:
    """Fail unless ``attention`` with ``causal_mask(n)`` ignores the future and matches torch's
    is_causal=True, for each sequence length n of ``sizes``."""
    for n in sizes:
        i = torch.arange(n)
        mask = causal_mask(n)
        if not isinstance(mask, Tensor):
            fail(
                f"this cell applies your causal_mask, and causal_mask({n}) returned a "
                f"{type(mask).__module__}.{type(mask).__qualname__}, not a torch tensor "
                "(test_causal_mask judges that answer)"
            )
        if not torch.equal(mask, i[None, :] <= i[:, None]):
            fail(
                f"this cell applies your causal_mask, and causal_mask({n}) is not True exactly "
                "where key j <= query i (test_causal_mask judges that answer)"
            )
        q, k, v = (torch.randn(2, 3, n, 4, generator=g, dtype=torch.float64) for _ in range(3))
        out, weights = call_attention(attention, q, k, v, causal_mask(n))
        if not (weights.triu(1) == 0).all():
            fail(
                "causal weights must be exactly zero above the diagonal (no attention to the future)"
            )
        changed_k, changed_v = k.clone(), v.clone()
        changed_k[..., -1, :] += 5.0
        changed_v[..., -1, :] -= 5.0
        changed_out, _ = call_attention(attention, q, changed_k, changed_v, causal_mask(n))
        if not is_close(changed_out[..., :-1, :], out[..., :-1, :]):
            fail("changing the last token changed earlier outputs: the future leaks into the past")
        diagnose(
            out,
            F.scaled_dot_product_attention(q, k, v, is_causal=True),
            {},
            "causal output differs from torch's is_causal=True",
        )


@check(
    ASSIGNMENT,
    "test_causal_weights",
    keeps=(
        "causal: query $i$ sees keys $0..i$, itself included, never the future",
        KEEPS_ITS_ARGUMENTS,
    ),
)
def causal_weights_ignore_the_future(ns: Namespace) -> None:
    attention, causal_mask = require(ns, "attention"), require(ns, "causal_mask")
    judge_causal_weights(attention, causal_mask, hidden_generator("a01 causal"), (3, 9))


@check(
    ASSIGNMENT,
    "test_causal_weights",
    weight=EDGE_CASES,
    keeps=(
        "causal: query $i$ sees keys $0..i$, itself included, never the future",
        "With the causal mask the first token has only itself to look at (weight 1)",
        KEEPS_ITS_ARGUMENTS,
    ),
)
def causal_weights_of_one_position(ns: Namespace) -> None:
    # The degenerate sequence of one token, which can only attend to itself.
    attention, causal_mask = require(ns, "attention"), require(ns, "causal_mask")
    judge_causal_weights(attention, causal_mask, hidden_generator("a01 causal one"), (1,))


# The answer given copies of its tensors: a check that then passes failed for the write alone.
repairs(ASSIGNMENT, WRITTEN_IN_PLACE, "attention")(on_copies)


@repairs(ASSIGNMENT, CAUSAL_MASK["not_a_tensor"], "causal_mask")
def as_a_tensor(causal_mask):
    """``causal_mask`` with its result passed through torch.as_tensor (a tensor stays as it is):
    where the cells that judge it then pass, the type alone failed them."""
    return lambda n: torch.as_tensor(causal_mask(n))


# Sizes at which the masks of the four mistakes below differ from each other and from the right
# one (at n = 1 several of them coincide: a one-position mask cannot tell them apart).
_TELLING_SIZES = (2, 3, 5)


def _mask_put_right(causal_mask, mistaken: Callable[[int], Tensor]):
    """``causal_mask`` replaced by the right mask if its masks are exactly ``mistaken(n)`` (bool
    tensors) at every size of _TELLING_SIZES, and left as it is otherwise: an answer without that
    mistake is unchanged, so the repair confirms nothing on it."""

    def makes_it(n: int) -> bool:
        got = causal_mask(n)
        return (
            isinstance(got, Tensor)
            and got.dtype == torch.bool
            and got.shape == (n, n)
            and torch.equal(got, mistaken(n))
        )

    try:
        if not all(makes_it(n) for n in _TELLING_SIZES):
            return causal_mask
    except StopChecks:  # no kernel or no time left: no experiment at all
        raise
    except Exception:  # an answer that raises there shows no sign of this mistake
        return causal_mask
    return lambda n: torch.ones(n, n, dtype=torch.bool).tril()


# One mistake, one charge: a causal mask off by one, reversed or transposed fails its own cell and
# the causal weights cell, which applies it; charged in the first, waived in the second.
@repairs(ASSIGNMENT, CAUSAL_MASK["hides_diagonal"], "causal_mask")
def diagonal_shown(causal_mask):
    """The mask with the diagonal it hides shown again (j <= i, not j < i)."""
    return _mask_put_right(causal_mask, lambda n: torch.ones(n, n, dtype=torch.bool).tril(-1))


@repairs(ASSIGNMENT, CAUSAL_MASK["shows_next"], "causal_mask")
def next_position_hidden(causal_mask):
    """The mask with the next position it shows hidden again (j <= i, not j <= i + 1)."""
    return _mask_put_right(causal_mask, lambda n: torch.ones(n, n, dtype=torch.bool).tril(1))


@repairs(ASSIGNMENT, CAUSAL_MASK["reversed"], "causal_mask")
def polarity_put_back(causal_mask):
    """The mask with True and False exchanged back (True = may attend)."""
    return _mask_put_right(causal_mask, lambda n: ~torch.ones(n, n, dtype=torch.bool).tril())


@repairs(ASSIGNMENT, CAUSAL_MASK["transposed"], "causal_mask")
def transposed_back(causal_mask):
    """The mask transposed back (the past visible, not the future)."""
    return _mask_put_right(causal_mask, lambda n: torch.ones(n, n, dtype=torch.bool).triu())


def _normalised_over(
    attention, axis: int, leads: tuple[tuple[int, ...], ...], g: torch.Generator | None = None
) -> bool:
    """Whether the answer's weights, on small inputs with 3 queries and 5 keys and each of
    ``leads`` before them, sum to 1 over ``axis`` and not over the keys: a softmax-axis mistake's
    own sign (axis -2: the queries; axis 1: the queries of (B, L_q, d_k) inputs and the heads of
    (B, H, L_q, d_k) ones).  ``g`` draws them: a public seed for a repair, a hidden generator in a
    check, so that no input a check hands the answer repeats from one course secret to the next."""
    g = torch.Generator().manual_seed(0) if g is None else g
    try:
        for lead in leads:
            q, k, v = (
                torch.randn(*lead, n, 4, generator=g, dtype=torch.float64) for n in (3, 5, 5)
            )
            weights = call_attention(attention, q, k, v)[1]  # (*lead, 3, 5)
            summed = [*lead, 3, 5]
            del summed[axis]
            over_axis = is_close(weights.sum(axis), torch.ones(summed, dtype=torch.float64))
            if not over_axis or is_close(weights.sum(-1), torch.ones(*lead, 3).double()):
                return False
        return True
    except StopChecks:  # no kernel or no time left: the experiment cannot run at all
        raise
    except Exception:  # an answer that cannot run on them shows no sign of this mistake
        return False


@repairs(ASSIGNMENT, ATTENTION["softmax_over_queries"], "attention")
def softmax_over_the_keys(attention):
    """``attention`` with its softmax moved from the queries' axis to the keys': the student's
    own function, called with the queries and keys exchanged (and the mask transposed), so that
    a softmax over dim=-2 runs over the keys; its weights are transposed back, and its output
    takes the same change of weights.  On a correct answer this gives wrong weights; so does it on
    an answer with another mistake, which it may still happen to pass (a fully masked row's zeros,
    say), so an answer whose weights are not a softmax over the queries is left as it is."""
    if not _normalised_over(attention, -2, ((2,),)):
        return attention

    def repaired(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None, **options):
        out, weights = call_attention(attention, q, k, v, mask, **options)
        flipped = None if mask is None else mask.transpose(-2, -1)  # (..., L_k, L_q)
        # q stands in for the values: the exchanged call's output is never used.
        _, exchanged = call_attention(attention, k, q, q, flipped, **options)  # (..., L_k, L_q)
        moved = exchanged.transpose(-2, -1)  # (..., L_q, L_k)
        return out + (moved - weights) @ v, moved

    return repaired


@repairs(ASSIGNMENT, ATTENTION["softmax_over_queries"], "attention")
def one_sequence_at_a_time(attention):
    """``attention`` with its softmax over dim=1 moved to the keys: the student's own function,
    called on one (L, d) sequence at a time (and its (L_q, L_k) mask), where dim=1 is the keys'
    axis; the results are stacked back.  An answer whose weights are not a softmax over axis 1
    is left as it is (a batch-only mistake, k.T say, would pass one sequence at a time)."""
    if not _normalised_over(attention, 1, ((2,), (2, 4))):
        return attention

    def repaired(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None, **options):
        masks = () if mask is None else (mask,)
        lead = np.broadcast_shapes(*(t.shape[:-2] for t in (q, k, v, *masks)))  # no sympy
        q, k, v, *masks = (
            t.expand(*lead, *t.shape[-2:]).reshape(-1, *t.shape[-2:]) for t in (q, k, v, *masks)
        )
        pairs = [
            call_attention(attention, q[i], k[i], v[i], *(m[i] for m in masks), **options)
            for i in range(q.shape[0])
        ]
        out, weights = (torch.stack(part) for part in zip(*pairs, strict=True))
        return out.reshape(*lead, *out.shape[-2:]), weights.reshape(*lead, *weights.shape[-2:])

    return repaired


def _raises_as_without_keepdim(attention) -> bool:
    """Whether the answer, given 3 queries, 5 keys and a mask with a row that sees no key, raises
    the very error that the reference raises with its mask.any(dim=-1, keepdim=True) run without
    keepdim: that mistake's own sign, on public inputs (torch's broadcast errors quote the sizes)."""
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(2, n, 4, generator=g, dtype=torch.float64) for n in (3, 5, 5))
    mask = torch.rand(2, 3, 5, generator=g) < 0.6
    mask[0, 1] = False
    try:
        call_attention(attention, q, k, v, mask)
    except StopChecks:  # no kernel or no time left: the experiment cannot run at all
        raise
    except CheckFailed:  # it changed its inputs or returned no pair: another mistake's sign
        return False
    except Exception as error:  # noqa: BLE001 - compared with the reference's, never re-raised
        return raised_as_without_keepdim(q, k, v, mask, error)
    return False


@repairs(ASSIGNMENT, ATTENTION["keepdim_dropped"], "attention")
def one_query_at_a_time(attention):
    """``attention`` called on one query of one sequence at a time, with that query's row of the
    mask, where the flags of the rows that see a key broadcast alike with or without their
    trailing axis; the results are stacked back.  An answer that does not raise as the reference
    does with its keepdim dropped is left as it is."""
    if not _raises_as_without_keepdim(attention):
        return attention

    def repaired(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None, **options):
        if mask is None:
            return call_attention(attention, q, k, v, **options)
        lead = np.broadcast_shapes(*(t.shape[:-2] for t in (q, k, v, mask)))  # no sympy
        mask = mask.expand(*lead, q.shape[-2], k.shape[-2])
        q, k, v, mask = (
            t.expand(*lead, *t.shape[-2:]).reshape(-1, *t.shape[-2:]) for t in (q, k, v, mask)
        )
        rows = [
            [
                call_attention(
                    attention, q[i, j : j + 1], k[i], v[i], mask[i, j : j + 1], **options
                )
                for j in range(q.shape[1])
            ]
            for i in range(q.shape[0])
        ]
        out, weights = (
            torch.stack([torch.cat([pair[part] for pair in row]) for row in rows])
            for part in (0, 1)
        )
        return out.reshape(*lead, *out.shape[-2:]), weights.reshape(*lead, *weights.shape[-2:])

    return repaired


@repairs(ASSIGNMENT, ATTENTION["scaled_by_sqrt_l_k"], "attention")
def queries_rescaled_for_sqrt_l_k(attention):
    """``attention`` given queries multiplied by √(L_k / d_k) when it scales: an answer that
    divides q kᵀ by √L_k then divides by √d_k, and one that does not is wrong on them."""

    def repaired(q: Tensor, k: Tensor, v: Tensor, *args, scale: bool = True, **options):
        if scale:
            q = q * math.sqrt(k.shape[-2] / q.shape[-1])
        return call_attention(attention, q, k, v, *args, scale=scale, **options)

    return repaired


@repairs(ASSIGNMENT, ATTENTION["scaled_by_sqrt_axis_1"], "attention")
def queries_rescaled_for_sqrt_axis_1(attention):
    """``attention`` given queries multiplied by √(q.shape[1] / d_k) when it scales: an answer
    that divides q kᵀ by √q.shape[1] then divides by √d_k; one that does not is wrong on them,
    except where q.shape[1] is d_k (2-D queries), where they are the queries it was given."""

    def repaired(q: Tensor, k: Tensor, v: Tensor, *args, scale: bool = True, **options):
        if scale:
            q = q * math.sqrt(q.shape[1] / q.shape[-1])
        return call_attention(attention, q, k, v, *args, scale=scale, **options)

    return repaired


@repairs(ASSIGNMENT, ATTENTION["scaled_by_sqrt_d_v"], "attention")
def queries_rescaled_for_sqrt_d_v(attention):
    """``attention`` given queries multiplied by √(d_v / d_k) when it scales: an answer that
    divides q kᵀ by √d_v then divides by √d_k; one that does not is wrong on them, except where
    d_v is d_k, where they are the queries it was given."""

    def repaired(q: Tensor, k: Tensor, v: Tensor, *args, scale: bool = True, **options):
        if scale:
            q = q * math.sqrt(v.shape[-1] / q.shape[-1])
        return call_attention(attention, q, k, v, *args, scale=scale, **options)

    return repaired


@repairs(ASSIGNMENT, ATTENTION["mask_reversed"], "attention")
def mask_read_right(attention):
    """``attention`` given the opposite of each mask it is called with, in the mask's own dtype
    (1 where it was 0): an answer that hides the keys where the mask is True then hides those
    it must."""

    def repaired(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None, **options):
        flipped = None if mask is None else torch.logical_not(mask).to(mask.dtype)
        return call_attention(attention, q, k, v, flipped, **options)

    return repaired


@repairs(ASSIGNMENT, ATTENTION["numeric_mask_reversed"], "attention")
def numeric_mask_read_right(attention):
    """``attention`` given the opposite of each 0/1 mask that is not bool, in the mask's own
    dtype (1 where it was 0), and each bool mask as it is: an answer that reads only its 0/1
    masks the other way round then hides the keys it must. An answer called with bool masks
    alone runs as it is, so a check that gives it none confirms nothing."""

    def repaired(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None, **options):
        if mask is not None and mask.dtype != torch.bool:
            mask = torch.logical_not(mask).to(mask.dtype)
        return call_attention(attention, q, k, v, mask, **options)

    return repaired


# Exercise 4, `sees_the_future` (test_sees_the_future): a causality test, by design.
#
# Which positions change, how often, by how much, and the tolerance are the student's design, so
# nothing here compares with one reference answer: the answer is handed attention functions whose
# kind is known, causal or seeing the future, and must tell them apart.  The statement defines a
# leak on standard-normal inputs: a causal one moves earlier output rows by float rounding only
# (under 1e-5), a leaky one by more than 1e-3 (the 2% mix moves them by 1e-3 to 5e-2, the 0.3%
# mix by more than 1e-3 on most draws and rarely by more than 1e-2).  Under the
# grading command the judge can lend the student's kernel only modules, so each attention is an
# nn.Module whose forward is the function, and it gives values only (no gradient), as there.


def _causal(length: int, device: torch.device) -> Tensor:
    """(L, L) bool, True where key j <= query i."""
    i = torch.arange(length, device=device)
    return i[None, :] <= i[:, None]


def _scores(q: Tensor, k: Tensor) -> Tensor:
    return q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])


def _masked(scores: Tensor, mask: Tensor) -> Tensor:
    return torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)


def _with_mask(shown: Callable[[Tensor], Tensor]) -> Callable[..., tuple[Tensor, Tensor]]:
    """Softmax attention whose query i sees the keys ``shown(causal mask)`` marks."""

    def attend(q: Tensor, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        weights = _masked(_scores(q, k), shown(_causal(q.shape[-2], q.device)))
        return weights @ v, weights

    return attend


def _float64(q: Tensor, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
    out, weights = _with_mask(lambda m: m)(q.double(), k.double(), v.double())
    return out.to(v.dtype), weights.to(q.dtype)


def _finfo_min(q: Tensor, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
    mask = _causal(q.shape[-2], q.device)
    scores = _scores(q, k)
    weights = scores.masked_fill(~mask, torch.finfo(scores.dtype).min).softmax(-1) * mask
    return weights @ v, weights


def _one_query_at_a_time(q: Tensor, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
    length = q.shape[-2]
    outs, rows = [], []
    for i in range(length):
        w = torch.softmax(_scores(q[..., i : i + 1, :], k[..., : i + 1, :]), dim=-1)
        outs.append(w @ v[..., : i + 1, :])
        rows.append(F.pad(w, (0, length - i - 1)))
    return torch.cat(outs, dim=-2), torch.cat(rows, dim=-2)


def _mean_centred(q: Tensor, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
    scores = _scores(q, k)
    scores = scores - scores.mean(-1, keepdim=True)  # every key's score: rounding of the future
    weights = _masked(scores, _causal(q.shape[-2], q.device))
    return weights @ v, weights


def _additive(q: Tensor, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
    mask = _causal(q.shape[-2], q.device)
    scores = _scores(q, k) + torch.zeros_like(mask, dtype=q.dtype).masked_fill(~mask, -1e9)
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights


def _unscaled(q: Tensor, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
    weights = _masked(q @ k.transpose(-2, -1), _causal(q.shape[-2], q.device))
    return weights @ v, weights


def _running_average(q: Tensor, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
    mask = _causal(q.shape[-2], q.device).to(v.dtype)
    weights = (mask / mask.sum(-1, keepdim=True)).expand(*q.shape[:-1], q.shape[-2])
    return weights @ v, weights


def _nudged(size: float) -> Callable[..., tuple[Tensor, Tensor]]:
    """Causal attention whose output row i moves by at most ``size`` with the values after i,
    however large they are: a move the statement counts as rounding when under 1e-5."""

    def attend(q: Tensor, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        out, weights = _with_mask(lambda m: m)(q, k, v)
        later = v.flip(-2).cumsum(-2).flip(-2) - v  # row i: the sum of the values after i
        return out + size * torch.tanh(later), weights

    return attend


def _mixed_by(share: float) -> Callable[..., tuple[Tensor, Tensor]]:
    """Causal attention with ``share`` of the unmasked weights mixed in: a leak of that size."""

    def attend(q: Tensor, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        scores = _scores(q, k)
        causal = _masked(scores, _causal(q.shape[-2], q.device))
        weights = (1 - share) * causal + share * torch.softmax(scores, dim=-1)
        return weights @ v, weights

    return attend


def _output_unmasked(q: Tensor, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
    scores = _scores(q, k)
    return torch.softmax(scores, dim=-1) @ v, _masked(scores, _causal(q.shape[-2], q.device))


def _last_key_to_first_query(mask: Tensor) -> Tensor:
    shown = mask.clone()
    shown[0, -1] = True
    return shown


def _next_to_last_key_to_first_query(mask: Tensor) -> Tensor:
    # The last key stays hidden: an answer that redraws only the last position misses it.
    shown = mask.clone()
    if len(shown) > 1:  # one position has no next-to-last key
        shown[0, -2] = True
    return shown


def _last_key_to_next_to_last_query(mask: Tensor) -> Tensor:
    # Late in the sequence: an answer that cuts once in the middle compares no row there.
    shown = mask.clone()
    if len(shown) > 1:  # one position has no earlier query
        shown[-2, -1] = True
    return shown


_LATE_QUERY = "causal attention whose mask also shows the last key to the next-to-last query"
_NEXT_TO_LAST = (
    "causal attention whose mask also shows the next-to-last key (and not the last) to the "
    "first query"
)
_ROUNDING = (
    "causal attention whose scores are centred on their row's mean over every key, later ones "
    "included (so later positions move earlier rows by float rounding only)"
)
_OUTPUT_ONLY = (
    "attention that returns causal weights but computes its output from the unmasked ones"
)
REFERENCE = "causal attention with -inf on the hidden scores"
FULL = "attention without a mask (every query sees every key)"
# (what the attention is, the function): causal ones, then those that see the future
CAUSAL_ATTENTION = {
    REFERENCE: _with_mask(lambda m: m),
    "causal attention in float64, its results cast to the inputs' dtype": _float64,
    "causal attention with torch.finfo(dtype).min on the hidden scores, their weights "
    "zeroed after the softmax": _finfo_min,
    "causal attention run one query at a time over keys 0..i": _one_query_at_a_time,
}
OTHER_CAUSAL_ATTENTION = {
    _ROUNDING: _mean_centred,
    "causal attention with -1e9 added to the hidden scores": _additive,
    "causal attention with unscaled scores (no 1/√d_k)": _unscaled,
    "the running mean of the values 0..i (uniform weights over the past)": _running_average,
}
LEAKY_ATTENTION = {
    FULL: _with_mask(lambda m: torch.ones_like(m)),
    "attention whose mask also shows key i + 1 to query i": _with_mask(
        lambda m: torch.ones_like(m).tril(1)
    ),
}
SUBTLE_LEAKS = {
    "causal attention whose mask also shows the last key to the first query": _with_mask(
        _last_key_to_first_query
    ),
    _NEXT_TO_LAST: _with_mask(_next_to_last_key_to_first_query),
    _LATE_QUERY: _with_mask(_last_key_to_next_to_last_query),
    "causal attention mixed with 2% of the unmasked weights": _mixed_by(0.02),
    _OUTPUT_ONLY: _output_unmasked,
    # 0.3% of the weight leaks: for some cut, earlier rows move by more than 1e-3 on most
    # standard-normal draws, even at L = 2 and d = 1, yet rarely by more than 1e-2.
    "causal attention mixed with 0.3% of the unmasked weights": _mixed_by(0.003),
}


def _weights_unmasked(q: Tensor, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
    # causal output, but the weights it returns are the unmasked ones: only the weights leak
    scores = _scores(q, k)
    return _masked(scores, _causal(q.shape[-2], q.device)) @ v, torch.softmax(scores, dim=-1)


# What an answer's test does wrong, each named only where experiments on the answer (its verdicts
# on attention built to tell the causes apart) show it (see :func:`what_the_test_misses`).
SEES_THE_FUTURE = catalogue(
    ASSIGNMENT,
    "sees_the_future",
    {
        "what it changes": {
            "leaves_earlier_positions": "your test sees the first query reading the last key, "
            "and misses it reading the next-to-last key: what it changes leaves that position "
            "alone. Change every position after a cut, for every cut",
            "leaves_later_rows": "your test sees the last key leak into the first query, and "
            "misses the same key leaking into the next-to-last query: what it compares leaves "
            "that later row out. Change every position after a cut, for every cut up to the "
            "next-to-last, and compare every output row up to the cut",
        },
        "what it compares": {
            "reads_the_weights": "your test judges the weights attend returns, not its output: "
            "it calls attention leaky whose output is causal but whose returned weights are not, "
            "and causal whose returned weights are causal but whose output sees the future. "
            "Compare the outputs",
        },
        "tolerance": {
            "rounding_is_a_leak": "your test calls rounding a leak: it calls causal attention "
            "leaky whose earlier output rows move by at most 1e-6 whatever the later inputs are "
            "(under the statement's 1e-5 of rounding). Compare with a tolerance above rounding "
            "(torch.allclose with atol=1e-5, say), not exactly",
            "small_leaks_pass": "your test lets small leaks through: it catches a larger share "
            "of the unmasked weights mixed in, and misses a smaller one. Rounding moves earlier "
            "rows by under 1e-5 and the statement calls any move over 1e-3 a leak: a tolerance "
            "between the two tells them apart",
        },
    },
)
_MIXES = {
    "causal attention mixed with 2% of the unmasked weights": 0.02,
    "causal attention mixed with 0.3% of the unmasked weights": 0.003,
}


def caught_row_move(function: Callable[..., tuple[Tensor, Tensor]], g: torch.Generator) -> str:
    """ "output row R by S": :func:`largest_move` of ``function``, as :func:`largest_leak` ends."""
    size, _, row = largest_move(function, g)
    return f"output row {row} by {size:.2g}"


def what_the_test_misses(sees_the_future, what: str, g: torch.Generator) -> str | None:
    """Where the answer got ``what`` wrong, the cause its verdicts on more attention confirm:
    the same leak from another key, the leak moved from the output to the weights, no move at
    all, larger leaks; None where none is confirmed."""
    if what == _NEXT_TO_LAST:
        if verdict(sees_the_future, _with_mask(_last_key_to_first_query), "the last key", g):
            return str(SEES_THE_FUTURE["leaves_earlier_positions"])
    elif what == _LATE_QUERY:
        if verdict(sees_the_future, _with_mask(_last_key_to_first_query), "the first query", g):
            return str(SEES_THE_FUTURE["leaves_later_rows"])
    elif what == _OUTPUT_ONLY:
        if verdict(sees_the_future, _weights_unmasked, "leaky weights, causal output", g):
            return str(SEES_THE_FUTURE["reads_the_weights"])
    elif what == _ROUNDING:
        if verdict(sees_the_future, _nudged(1e-6), "moves of 1e-6", g):
            return str(SEES_THE_FUTURE["rounding_is_a_leak"])
    elif what in _MIXES:
        missed = _MIXES[what]
        for share in (0.02, 0.1, 0.3):
            if share > missed and verdict(sees_the_future, _mixed_by(share), f"{share:.0%}", g):
                return (
                    f"{SEES_THE_FUTURE['small_leaks_pass']} (it misses {missed:.1%} mixed in and "
                    f"catches {share:.0%}: {largest_leak(_mixed_by(missed), g)}, against "
                    f"{caught_row_move(_mixed_by(share), g)} for {share:.0%})"
                )
    return None


class Attend(nn.Module):
    """One attention function as a module (what the judge may lend a kernel); values only."""

    def __init__(self, function: Callable[..., tuple[Tensor, Tensor]]):
        super().__init__()
        self._function = function

    def forward(self, q: Tensor, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        with torch.no_grad():
            return self._function(q, k, v)


LEAK_PROBE = (6, 4)  # (L, d) of the standard-normal inputs on which a leak is measured


def largest_move(
    function: Callable[..., tuple[Tensor, Tensor]], g: torch.Generator
) -> tuple[float, int, int]:
    """The largest move of an output row i of ``function`` on a standard-normal input when every
    position after a cut changes, over every cut: (size, cut, row)."""
    length, d = LEAK_PROBE
    q, k, v = (torch.randn(2, length, d, generator=g) for _ in range(3))
    before, _ = function(q, k, v)
    moved = []
    for cut in range(length - 1):
        changed = [t.clone() for t in (q, k, v)]
        for t in changed:
            t[:, cut + 1 :] = torch.randn(2, length - cut - 1, d, generator=g)
        after, _ = function(*changed)
        rows = (after - before)[:, : cut + 1].abs().amax(dim=(0, 2))  # (cut + 1,)
        moved.append((float(rows.max()), cut, int(rows.argmax())))
    return max(moved)


def largest_leak(function: Callable[..., tuple[Tensor, Tensor]], g: torch.Generator) -> str:
    """What a leaky ``function`` shows on a standard-normal input (:func:`largest_move`), in
    words."""
    size, cut, row = largest_move(function, g)
    length, d = LEAK_PROBE
    return (
        f"on standard-normal q, k, v (L={length}, d={d}), new values at the positions after "
        f"{cut} moved its output row {row} by {size:.2g}"
    )


def verdict(sees_the_future, function, what: str, g: torch.Generator) -> bool:
    """The answer's verdict on one attention, lent as a module: True or False, or a failure."""
    try:
        with under_seed(draw_seed(g)):
            answer = sees_the_future(Attend(function))
    except NotImplementedError:
        raise
    except Exception as error:
        fail(explain(error, "your sees_the_future", f" on {what}"))
    if isinstance(answer, Tensor) and answer.dtype == torch.bool and answer.numel() == 1:
        answer = bool(answer.item())
    elif isinstance(answer, np.bool_):
        answer = bool(answer)
    if not isinstance(answer, bool):
        fail(
            f"sees_the_future returned {type(answer).__name__} for {what}; the statement asks "
            "for True or False"
        )
    return answer


def judge_verdicts(sees_the_future, causal: dict, leaky: dict, g: torch.Generator) -> None:
    """Fail unless the answer says False for each of ``causal`` and True for each of ``leaky``."""
    for what, function in causal.items():
        if verdict(sees_the_future, function, what, g):
            seen = (
                f"sees_the_future returned True for {what}, which is causal: by the statement, "
                "later positions move its earlier output rows by float rounding at most "
                "(under 1e-5)"
            )
            found = what_the_test_misses(sees_the_future, what, g)
            fail(f"{found}\n{seen}" if found else seen)
    for what, function in leaky.items():
        if not verdict(sees_the_future, function, what, g):
            seen = (
                f"sees_the_future returned False for {what}, which sees the future: "
                f"{largest_leak(function, g)}"
            )
            found = what_the_test_misses(sees_the_future, what, g)
            fail(f"{found}\n{seen}" if found else seen)


@check(
    ASSIGNMENT,
    "test_sees_the_future",
    keeps=(
        "it tells causal from leaky",
        "it returns `True` if `attend` sees the future, `False` if it is causal",
        "every call returns `True` or `False`, without raising",
    ),
)
def sees_the_future_tells_causal_from_leaky(ns: Namespace) -> None:
    """False for causal attention written four ways, True for no mask and for a mask one off."""
    judge_verdicts(
        require(ns, "sees_the_future"),
        CAUSAL_ATTENTION,
        LEAKY_ATTENTION,
        hidden_generator("a01 sees the future"),
    )


@check(ASSIGNMENT, "test_sees_the_future", weight=EDGE_CASES, keeps=("rounding is no leak",))
def sees_the_future_passes_other_causal_attention(ns: Namespace) -> None:
    """False for causal attention with rounding-level moves, other constants and weights; the
    unmasked attention still True, so that an answer that flags nothing earns nothing here."""
    judge_verdicts(
        require(ns, "sees_the_future"),
        OTHER_CAUSAL_ATTENTION,
        {FULL: LEAKY_ATTENTION[FULL]},
        hidden_generator("a01 sees the future, other causal"),
    )


@check(ASSIGNMENT, "test_sees_the_future", weight=EDGE_CASES, keeps=("small leaks are leaks",))
def sees_the_future_catches_subtle_leaks(ns: Namespace) -> None:
    """True for three leaking pairs, a 2% and a 0.3% leak, and a leak in the output only; the
    reference still False, so that an answer that flags everything earns nothing here."""
    judge_verdicts(
        require(ns, "sees_the_future"),
        {REFERENCE: CAUSAL_ATTENTION[REFERENCE]},
        SUBTLE_LEAKS,
        hidden_generator("a01 sees the future, subtle leaks"),
    )
