"""Hidden checks for 07_attention_at_scale: the online softmax, chunked (flash-style) attention,
and merging partial results over disjoint sets of keys (split-K), whose design is the student's."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from functools import partial
from typing import Any

import torch
from torch import Tensor
from torch.nn import functional as F

import attention_lab.reference.a01_attention as reference
from autograder.authoring.closeness import first_difference, is_close, not_finite
from autograder.authoring.counterexample import small_integers, smallest_counterexample
from autograder.authoring.diagnosis import borne_out, diagnose
from autograder.authoring.hidden_draws import hidden_generator, random_sizes
from autograder.authoring.in_place_writes import inputs_kept, written_in_place_mistake
from autograder.authoring.kernel_objects import ObservedElsewhere, observe_call
from autograder.authoring.mistakes import Mistake, catalogue
from autograder.authoring.operation_mistakes import (
    causal_mask_slips,
    mask_dropped,
    max_over_everything,
    mistaken_outputs,
    plain_softmax_rows,
    raising_alike,
    scale_factors_apart,
    scale_slips,
    trailing_axis_dropped,
)
from autograder.authoring.reference_bans import TORCH_MULTI_HEAD, TORCH_SCALED_DOT_PRODUCT, ban
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
from autograder.judging.kernel import FACTORY_NAMES

ASSIGNMENT = "07_attention_at_scale"
written_in_place_mistake(ASSIGNMENT)  # inputs_kept names it in every exercise
# The student's own online_softmax_update is allowed inside chunked_attention.
BANNED = {
    **TORCH_SCALED_DOT_PRODUCT,
    **TORCH_MULTI_HEAD,
    "attention_lab's scaled_dot_product_attention": reference.scaled_dot_product_attention,
}
EXACT = 1e-10  # float64: the chunked result must equal the reference to rounding error

# The named mistakes of each exercise, by family (autograder/authoring/mistakes.py): each is
# diagnosed only where the answer's output matches that mistake's output (for the memory
# family, where the peak memory grows as that mistake's does).
UPDATE = catalogue(
    ASSIGNMENT,
    "online_softmax_update",
    {
        "rescaling": {
            "sum_not_rescaled": "the old running sum is not rescaled: multiply it by "
            "exp(old_max - new_max) before adding the new block's terms",
            "inverted_factor": "the rescaling factor is inverted: it is exp(old_max - new_max) "
            "<= 1, not exp(new_max - old_max)",
            "block_terms_own_max": "each block's terms are measured against the block's own max, "
            "exp(s - block max), and never moved to the new running max: take exp(scores - "
            "new_max) for the block, as the old sum is moved by exp(old_max - new_max)",
        },
        "running max": {
            "block_max": "the running max is replaced by the block's max: it must be "
            "max(running_max, block max)",
            "old_max": "new_max is never used: compute max(running_max, block max) and measure "
            "every term (old and new) relative to it",
            "max_over_everything": "the running max is one maximum over the whole batch "
            "(scores.max() with no dim): each row (every leading index) keeps its own, so take "
            "the block max over the last axis only, scores.amax(dim=-1)",
        },
        "trailing axis": {
            "trailing_axis_dropped": "the new maximum, of shape (...), is subtracted from the "
            "scores (..., C) without a trailing axis: broadcasting lines its axes up with the "
            "scores' last ones, not with their rows, which raises where those sizes differ and "
            "mixes rows where they agree; subtract new_max.unsqueeze(-1), of shape (..., 1)",
        },
        "stability": {
            "overflow": "exp overflows for large scores: subtract the running max before "
            "exponentiating (exp(scores - new_max)), never exp(scores)",
        },
    },
)
CHUNKED = catalogue(
    ASSIGNMENT,
    "chunked_attention",
    {
        "rescaling": {
            "acc_not_rescaled": "the accumulator is not rescaled when the running max grows: "
            "multiply it by the same factor exp(old_max - new_max) as the running sum",
            "sum_not_rescaled": "the running sum is not rescaled when the running max grows (the "
            "accumulator is): multiply both by exp(old_max - new_max)",
        },
        "running max": {
            "max_not_updated": "the running max is never updated (only the last block counts): "
            "set running_max = new_max at the end of each block",
            "block_max_only": "each block's own max replaces the running max (the new max is "
            "the block's, not max(running_max, block max)), so a block whose keys are all hidden "
            "(max -inf) gives exp(-inf - (-inf)) = NaN",
        },
        "normalisation": {
            "not_normalised": "the output is not normalised: divide the accumulator by the "
            "running sum after the last block",
        },
        "chunking boundaries": {
            "last_block_dropped": "the last, shorter key block is dropped: loop `for start in "
            "range(0, L_k, chunk_size)` and slice k[..., start:start + chunk_size, :], which is "
            "shorter at the end",
        },
        "scaling": {
            "not_scaled": "scores are not scaled by 1/√d_k: multiply q by 1/sqrt(q.shape[-1]) "
            "first",
            "divided_by_d_k": "scores are scaled by 1/d_k instead of 1/√d_k",
            "multiplied_by_sqrt_d_k": "scores are multiplied by √d_k instead of divided by it",
            "scaled_by_sqrt_d_v": "scores are scaled by 1/√d_v (v.shape[-1]) instead of 1/√d_k "
            "(q.shape[-1])",
        },
        "causal mask": {
            "no_mask": "causal=True masks nothing: hide keys whose position is greater "
            "than the query's",
            "no_block_offset": "the causal mask ignores the block's offset: inside the block "
            "starting at `start`, column c is key start + c, so compare torch.arange(start, "
            "start + C) with the query positions",
            "hides_diagonal": "the causal mask hides the diagonal: query i may attend to key i "
            "(hide key > query only)",
            "transposed": "the causal mask is reversed: it hides the past and shows the future; "
            "hide key positions greater than the query position",
            "always_causal": "causal=False must not mask anything: apply the mask only when "
            "causal=True",
            "max_before_mask": "the block's maximum includes keys the causal mask hides: it is "
            "taken before they are hidden, so a hidden (future) key that scores far above the "
            "visible ones sets the running max, every visible exp(s - max) underflows to 0, and "
            "the row is 0/0 = NaN; the statement's output depends on the visible keys alone, so "
            "the maximum is taken over the masked scores",
        },
        "stability": {
            "overflow": "the output overflows for large scores (exp of an unshifted score): "
            "subtract the running max before exponentiating, exp(scores - new_max)",
            "max_starts_at_zero": "rows whose scores are all very negative give NaN (0/0): the "
            "running max starts at 0 instead of -inf, so exp(score - 0) underflows to 0 for every "
            "key; start it at -inf (q.new_full(..., -math.inf)), as the statement says",
        },
        "dtype": {
            # Two ways to it, each named only where it shows: a float32 tensor meeting the half
            # q, k, v in an error, or an output in float32 (blind x07-05 cast q, k and v up on
            # purpose, and was once told of a tensor made without dtype=, which it had not).
            "computed_in_float32": "chunked_attention computes in float32 for half-precision "
            "input: a float32 tensor meets the half-precision q, k and v (the error names both "
            "dtypes); make every tensor it uses in q's dtype (dtype=q.dtype; one made without "
            "dtype= is float32, torch's default)",
            "returned_in_float32": "chunked_attention computes in float32 for half-precision "
            "input and returns the float32 result: its output equals the attention computed in "
            "float32 on the same input; return q's dtype (keep every tensor it uses in q's dtype, "
            "or cast the output back with .to(q.dtype))",
            "computed_in_float64": "chunked_attention computes in float64 and returns the "
            "output without casting back to q's dtype: its output equals the attention computed "
            "in float64 on the same input",
        },
        "memory": {
            "full_matrix": "chunked_attention builds a full (L, L) matrix: memory grows "
            "quadratically; compute the scores one (L_q, C) block of keys at a time",
            "causal_full_mask": "with causal=True, and only then, memory grows quadratically: "
            "the causal branch builds something of size (L, L), like a mask over all L keys; an "
            "(L_q, C) mask per block, from torch.arange, is enough",
        },
        "device": {
            "made_on_the_default_device": "a tensor made without device= sits on torch's "
            "default device, the CPU, whatever the device of q: with q on a GPU the call mixes "
            "devices and raises; pass device=q.device when you make it",
        },
    },
)
MERGE = catalogue(
    ASSIGNMENT,
    "merge_partials",
    {
        "rescaling": {
            "no_common_max": "the parts are added without a common maximum: each part's sums "
            "stay relative to its own max; multiply each by exp(m_part - max(m_a, m_b)) before "
            "adding them",
            "one_part_max": "merge_partials measures one argument's part against the other "
            "argument's reference (its maximum, or what the partial result keeps), the same "
            "argument whichever part's scores are larger, rather than against the larger of the "
            "two: where the part measured lies far above the reference, the exp of the "
            "difference overflows (exp(710) is inf in float64)",
        },
        "weights": {
            "count_weighted": "the parts' outputs are averaged weighted by their numbers of keys: "
            "a part's weight in the merge is its softmax mass, Σ exp(s) over its keys (each "
            "part's measured against a common max), not how many keys it has",
        },
        "scaling": {
            "not_scaled": "partial_attention does not scale the scores by 1/√d_k: divide q·kᵀ "
            "by sqrt(q.shape[-1])",
            "divided_by_d_k": "partial_attention scales the scores by 1/d_k instead of 1/√d_k",
            "multiplied_by_sqrt_d_k": "partial_attention multiplies the scores by √d_k instead "
            "of dividing them by it",
            "scaled_by_sqrt_d_v": "partial_attention scales the scores by 1/√d_v (v.shape[-1]) "
            "rather than 1/√d_k (q.shape[-1])",
        },
        "running max": {
            "max_shared_across_queries": "one maximum is shared by the queries of a part: a "
            "query whose scores all lie far below it gets exp(s - m) = 0 for every key, and "
            "0/0 = NaN; keep one maximum per query, over its keys only (amax(dim=-1, "
            "keepdim=True))",
        },
        "dtype": {
            "computed_in_float64": "the partial results are computed in float64 and "
            "finish_attention returns the output without casting back to q's dtype: it equals "
            "the attention computed in float64 on the same input",
        },
        "stability": {
            "overflow": "the partial result overflows for large scores (exp of an unshifted "
            "score is inf in float64 from about 710): keep each part's sums relative to its own "
            "row max m, Σ exp(s - m), with m in the partial result",
        },
    },
)


# ---------------------------------------------------------------------------------------------
# Oracles and the outputs of known mistakes


def fold_online(
    update: Callable[..., Any], scores: Tensor, cuts: list[int]
) -> tuple[Tensor, Tensor]:
    """Fold ``scores`` (..., N) into (max, sum) with ``update``, in blocks split at ``cuts``; a
    failure where an update writes into the running values or the scores it is given."""
    run_max = torch.full(scores.shape[:-1], -math.inf, dtype=scores.dtype)
    run_sum = torch.zeros(scores.shape[:-1], dtype=scores.dtype)
    edges = [0, *cuts, scores.shape[-1]]
    for a, b in zip(edges[:-1], edges[1:], strict=True):
        block = scores[..., a:b]
        with inputs_kept(
            "online_softmax_update", running_max=run_max, running_sum=run_sum, scores=block
        ):
            try:
                result = update(run_max, run_sum, block)
            except (CheckFailed, NotImplementedError):
                raise
            except Exception as error:
                arguments = {"m": run_max, "s": run_sum, "x": block}
                if not raising_alike(_update, arguments, [trailing_axis_dropped()], error):
                    raise
                fail(
                    f"{UPDATE['trailing_axis_dropped']} (the statement's update, with that one "
                    f"subtraction so written, raises the very error yours raised on running "
                    f"values {tuple(run_max.shape)} and scores {tuple(block.shape)})\n"
                    + explain(error, "your online_softmax_update")
                )
        if not (isinstance(result, tuple) and len(result) == 2):
            fail("online_softmax_update must return a tuple (new_max, new_sum)")
        run_max, run_sum = result
    return run_max, run_sum


def _update_no_rescale(m: Tensor, s: Tensor, x: Tensor) -> tuple[Tensor, Tensor]:
    new = torch.maximum(m, x.amax(-1))
    return new, s + torch.exp(x - new.unsqueeze(-1)).sum(-1)


def _update_inverted_factor(m: Tensor, s: Tensor, x: Tensor) -> tuple[Tensor, Tensor]:
    new = torch.maximum(m, x.amax(-1))
    factor = torch.exp(torch.nan_to_num(new - m, posinf=0.0))  # first block: old sum is 0
    return new, s * factor + torch.exp(x - new.unsqueeze(-1)).sum(-1)


def _update_block_terms_own_max(m: Tensor, s: Tensor, x: Tensor) -> tuple[Tensor, Tensor]:
    top = x.amax(-1)
    new = torch.maximum(m, top)
    return new, s * torch.exp(m - new) + torch.exp(x - top.unsqueeze(-1)).sum(-1)


def _update_block_max(m: Tensor, s: Tensor, x: Tensor) -> tuple[Tensor, Tensor]:
    new = x.amax(-1)
    return new, s * torch.exp(torch.clamp(m - new, max=0.0)) + torch.exp(x - new.unsqueeze(-1)).sum(
        -1
    )


def _update_old_max(m: Tensor, s: Tensor, x: Tensor) -> tuple[Tensor, Tensor]:
    base = torch.where(torch.isinf(m), x.amax(-1), m)  # exponentiate against the OLD max
    return base, s + torch.exp(x - base.unsqueeze(-1)).sum(-1)


def _update_unshifted(m: Tensor, s: Tensor, x: Tensor) -> tuple[Tensor, Tensor]:
    new = torch.maximum(m, x.amax(-1))
    return new, (s * torch.exp(m) + torch.exp(x).sum(-1)) / torch.exp(new)


def _update(m: Tensor, s: Tensor, x: Tensor) -> tuple[Tensor, Tensor]:
    """The statement's update: each row's running max, and its sum measured against it."""
    new = torch.maximum(m, x.amax(-1))
    return new, s * torch.exp(m - new) + torch.exp(x - new.unsqueeze(-1)).sum(-1)


def _update_max_over_everything(m: Tensor, s: Tensor, x: Tensor) -> tuple[Tensor, Tensor]:
    # With no leading dims the whole batch is one row: the slip changes nothing (None).
    return max_over_everything().output(_update, {"m": m, "s": s, "x": x}) or _update(m, s, x)


def _update_trailing_axis_dropped(m: Tensor, s: Tensor, x: Tensor) -> tuple[Tensor, Tensor]:
    return trailing_axis_dropped().output(_update, {"m": m, "s": s, "x": x})


def trailing_axis_seen(run_sum: Any, scores: Tensor, cuts: list[int]) -> str:
    """UPDATE's trailing_axis_dropped and what confirms it, where the answer's running sum, of
    a shape other than the leading dims, is the statement's update's with the new max subtracted
    without its trailing axis, on the same scores and blocks; '' otherwise."""
    try:
        _, slipped = fold_online(_update_trailing_axis_dropped, scores, cuts)
    except RuntimeError:  # these sizes do not broadcast that way
        return ""
    if not is_close(run_sum, slipped, atol=1e-9):
        return ""
    return (
        f"{UPDATE['trailing_axis_dropped']} (the statement's update, with that one subtraction "
        f"so written, gives your running sum, of shape {tuple(slipped.shape)}, on these scores)\n"
    )


# The running max these mistakes return differs from the true one too.
MAX_MISTAKES = (UPDATE["block_max"], UPDATE["old_max"], UPDATE["max_over_everything"])
SUM_MISTAKES = {
    UPDATE["sum_not_rescaled"]: _update_no_rescale,
    UPDATE["inverted_factor"]: _update_inverted_factor,
    UPDATE["block_terms_own_max"]: _update_block_terms_own_max,
    UPDATE["block_max"]: _update_block_max,
    UPDATE["old_max"]: _update_old_max,
    UPDATE["max_over_everything"]: _update_max_over_everything,
}


def sum_mistakes(
    run_max: Tensor,
    scores: Tensor,
    cuts: list[int],
    mistakes: dict[Mistake, Callable] = SUM_MISTAKES,
) -> dict[Mistake, Tensor]:
    """The running sums the ``mistakes`` fold ``scores`` to, of those whose running max is the
    answer's ``run_max`` too: an answer whose max is right (or wrong otherwise) makes no mistake of
    the running max, whatever its sum shares with one (issue 40: a sum measured against each
    block's own max equals the block_max mistake's when the max never falls)."""
    folded = {d: fold_online(f, scores, cuts) for d, f in mistakes.items()}
    return {
        d: new_sum
        for d, (new_max, new_sum) in folded.items()
        if isinstance(run_max, Tensor) and is_close(run_max, new_max, atol=0, rtol=1e-6)
    }


def simulate_chunked(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    chunk: int,
    hide: Callable[[Tensor, Tensor], Tensor] | None = None,
    *,
    rescale_acc: bool = True,
    rescale_sum: bool = True,
    drop_last: bool = False,
    update_max: bool = True,
    keep_old_max: bool = True,
    divide: bool = True,
    shift: bool = True,
    start_max: float = -math.inf,
    max_before_hide: bool = False,
    dtype: torch.dtype = torch.float64,
) -> Tensor:
    """Chunked attention in ``dtype``, with one of the known mistakes of its loop switched on.

    hide(query_pos (L_q, 1), key_pos (C,)) -> True where a key is hidden (causal variants).
    shift=False: exp of the raw scores, no running max (the overflow mistake).
    start_max: where the running max starts (0: the mistake of a max that starts at 0).
    keep_old_max=False: the new max is the block's own, not max(running max, block max).
    max_before_hide: the block's max is taken before ``hide`` fills the hidden scores with -inf.
    """
    q, k, v = q.to(dtype), k.to(dtype), v.to(dtype)
    q = q / math.sqrt(q.shape[-1])
    m = torch.full((*q.shape[:-1], 1), start_max, dtype=dtype)
    s = torch.zeros((*q.shape[:-1], 1), dtype=dtype)
    acc = torch.zeros((*q.shape[:-1], v.shape[-1]), dtype=dtype)
    len_k = k.shape[-2]
    stop = len_k - len_k % chunk if drop_last else len_k
    query_pos = torch.arange(q.shape[-2]).unsqueeze(-1)
    for start in range(0, stop, chunk):
        kb, vb = k[..., start : start + chunk, :], v[..., start : start + chunk, :]
        scores = q @ kb.transpose(-2, -1)
        new = scores.amax(-1, keepdim=True)
        if hide is not None:
            key_pos = torch.arange(start, start + kb.shape[-2])
            scores = scores.masked_fill(hide(query_pos, key_pos), -math.inf)
        new = new if max_before_hide else scores.amax(-1, keepdim=True)
        new = torch.maximum(m, new) if keep_old_max else new
        factor = torch.exp(m - new) if shift else torch.ones_like(m)
        p = torch.exp(scores - new) if shift else torch.exp(scores)
        s = (s * factor if rescale_sum else s) + p.sum(-1, keepdim=True)
        acc = (acc * factor if rescale_acc else acc) + p @ vb
        if update_max:
            m = new
    return acc / s if divide else acc


def attention_output(
    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None, scale: bool | float = True
) -> Tensor:
    """The reference attention's output (..., L_q, d_v) in float64: what chunked_attention
    computes, whatever its blocks; NaN in a row that sees no key, as the loop's 0/0 gives."""
    out, _ = reference.scaled_dot_product_attention(
        q.double(), k.double(), v.double(), mask, scale=scale
    )
    return plain_softmax_rows(out, mask)


def operation_mistakes(
    q: Tensor, k: Tensor, v: Tensor, causal: bool = False
) -> dict[Mistake, Tensor]:
    """What the mistakes of single operations (operation_mistakes.py) return on these inputs:
    the scale factor, and with ``causal`` the causal mask; keyed by the mistake."""
    slips = scale_slips(q.shape[-1], {"d_v": v.shape[-1]})
    mask = reference.causal_mask(q.shape[-2]) if causal else None
    if causal:
        slips += [mask_dropped(), *causal_mask_slips()]
        slips = [slip for slip in slips if slip.name in CHUNKED]
    return mistaken_outputs(
        CHUNKED, attention_output, {"q": q, "k": k, "v": v, "mask": mask}, slips
    )


def queries_rescaled(factor: Callable[[int, int], float]) -> Callable[[Any], Any]:
    """A repair (repairs.py) of a scale slip in chunked_attention: the answer given q multiplied
    by ``factor(d_k, d_v)``, so that its wrong factor times this one is 1/√d_k; a right answer,
    or one with another factor, is wrong on them. One charge: the exact and causal cells both
    grade chunked_attention, and a scale slip failing both is charged in the first alone."""

    def undo(chunked: Callable[..., Any]) -> Callable[..., Any]:
        def repaired(q: Tensor, k: Tensor, v: Tensor, *args: Any, **kwargs: Any) -> Any:
            return chunked(q * factor(q.shape[-1], v.shape[-1]), k, v, *args, **kwargs)

        return repaired

    return undo


for _name, _factor in {
    "not_scaled": lambda d_k, d_v: d_k**-0.5,
    "divided_by_d_k": lambda d_k, d_v: d_k**0.5,
    "multiplied_by_sqrt_d_k": lambda d_k, d_v: 1 / d_k,
    "scaled_by_sqrt_d_v": lambda d_k, d_v: (d_v / d_k) ** 0.5,
}.items():
    repairs(ASSIGNMENT, CHUNKED[_name], "chunked_attention")(queries_rescaled(_factor))


def _drops_the_last_block(chunked: Callable[..., Any]) -> bool:
    """Whether ``chunked`` drops the last, shorter key block: on 7 keys in blocks of 3, its output
    is the attention over the first 6 keys, and not over all 7."""
    g = torch.Generator().manual_seed(7)
    q, k, v = (torch.randn(1, n, 4, generator=g, dtype=torch.float64) for n in (3, 7, 7))
    try:
        out = chunked(q, k, v, 3)
    except StopChecks:
        raise
    except Exception:  # noqa: BLE001 - an answer that raises here is not this mistake
        return False
    return (
        isinstance(out, Tensor)
        and out.shape == (1, 3, 4)
        and is_close(out, simulate_chunked(q, k, v, 3, drop_last=True))
        and not is_close(out, attention_output(q, k, v))
    )


@repairs(ASSIGNMENT, CHUNKED["last_block_dropped"], "chunked_attention")
def chunk_sizes_that_divide_the_keys(chunked: Callable[..., Any]) -> Callable[..., Any]:
    """``chunked_attention`` called with the largest chunk size that divides L_k and is at most
    the one it was given, where that one leaves a last, shorter block: an answer that drops that
    block has none left to drop, and a right answer's output does not depend on the chunk size.
    An answer not seen dropping it (_drops_the_last_block) is left as it is."""
    if not _drops_the_last_block(chunked):
        return chunked

    def repaired(q: Tensor, k: Tensor, v: Tensor, *args: Any, **kwargs: Any) -> Any:
        chunk = kwargs.get("chunk_size", args[0] if args else None)
        l_k = k.shape[-2]
        if type(chunk) is int and 0 < chunk and l_k % chunk:
            divisor = max(d for d in range(1, chunk + 1) if l_k % d == 0)
            if "chunk_size" in kwargs:
                kwargs = {**kwargs, "chunk_size": divisor}
            else:
                args = (divisor, *args[1:])
        return chunked(q, k, v, *args, **kwargs)

    return repaired


def chunked_mistakes(q: Tensor, k: Tensor, v: Tensor, chunk: int) -> dict[Mistake, Tensor]:
    """What the non-causal mistakes return on these inputs, keyed by the mistake."""
    mistakes = {
        **operation_mistakes(q, k, v),
        CHUNKED["acc_not_rescaled"]: simulate_chunked(q, k, v, chunk, rescale_acc=False),
        CHUNKED["sum_not_rescaled"]: simulate_chunked(q, k, v, chunk, rescale_sum=False),
        CHUNKED["max_not_updated"]: simulate_chunked(q, k, v, chunk, update_max=False),
        CHUNKED["not_normalised"]: simulate_chunked(q, k, v, chunk, divide=False),
    }
    if k.shape[-2] % chunk:  # with chunk_size > L_k, dropping it leaves no block at all (NaN)
        mistakes[CHUNKED["last_block_dropped"]] = simulate_chunked(q, k, v, chunk, drop_last=True)
    return mistakes


def causal_mistakes(q: Tensor, k: Tensor, v: Tensor, chunk: int) -> dict[Mistake, Tensor]:
    """What the causal mistakes return on these inputs, keyed by the mistake."""

    def hide_future(i: Tensor, j: Tensor) -> Tensor:
        return j > i

    mistakes = {
        **operation_mistakes(q, k, v, causal=True),
        CHUNKED["no_block_offset"]: simulate_chunked(q, k, v, chunk, lambda i, j: (j - j[0]) > i),
        CHUNKED["acc_not_rescaled"]: simulate_chunked(
            q, k, v, chunk, hide_future, rescale_acc=False
        ),
        CHUNKED["sum_not_rescaled"]: simulate_chunked(
            q, k, v, chunk, hide_future, rescale_sum=False
        ),
        CHUNKED["max_not_updated"]: simulate_chunked(q, k, v, chunk, hide_future, update_max=False),
        CHUNKED["not_normalised"]: simulate_chunked(q, k, v, chunk, hide_future, divide=False),
    }
    # The block's max for the running max is exact where no block of a row is all hidden, so it
    # is told by its NaN alone (nonfinite_match), never as a finite output.
    block_max_only = simulate_chunked(q, k, v, chunk, hide_future, keep_old_max=False)
    if not torch.isfinite(block_max_only).all():
        mistakes[CHUNKED["block_max_only"]] = block_max_only
    return mistakes


def nonfinite_match(
    out: Tensor, mistakes: dict[Mistake, Tensor], *, values: bool = False
) -> Mistake | None:
    """The one mistake whose output has NaN and inf exactly where ``out`` has them, if any; with
    ``values``, also its finite values where ``out`` has its own (several mistakes give NaN in the
    same rows: issue 40's blind answer i07-12, whose block max replaces the running max, has the
    NaN rows of a running max never updated, and the exact values elsewhere)."""
    out = out.detach()
    shared = {
        mistake
        for mistake, value in mistakes.items()
        if value.shape == out.shape
        and torch.equal(out.isnan(), value.isnan())
        and torch.equal(out.isinf(), value.isinf())
        and (not values or is_close(out, value, equal_nan=True))
    }
    return shared.pop() if len(shared) == 1 else None


# The public (L_q, L_k, d_k) a counterexample is looked for at, smallest first, for each chunk
# size of EXAMPLE_CHUNKS in turn.
EXAMPLE_SIZES = sorted(
    ((l_q, l_k, d_k) for l_q in (1, 2, 3) for l_k in range(1, 6) for d_k in (1, 2, 3)),
    key=sum,
)
EXAMPLE_CHUNKS = (1, 2, 3)


def smaller_chunked_example(
    chunked: Callable[..., Any], causal: bool = False
) -> Callable[[], str | None]:
    """A counterexample finder for ``chunked`` (with ``causal``, where L_q = L_k), on public
    inputs of EXAMPLE_SIZES, with the chunk sizes of EXAMPLE_CHUNKS in turn."""
    sizes = [size for size in EXAMPLE_SIZES if not causal or size[0] == size[1]]

    def inputs(g: torch.Generator, size: tuple[int, ...]) -> dict[str, Tensor]:
        l_q, l_k, d_k = size
        q, k = small_integers(g, l_q, d_k), small_integers(g, l_k, d_k)
        return {"q": q, "k": k, "v": small_integers(g, l_k, 2)}

    def expected(q: Tensor, k: Tensor, v: Tensor) -> Tensor:
        return reference_out(q, k, v, causal=causal)

    def find() -> str | None:
        for chunk in EXAMPLE_CHUNKS:
            found = smallest_counterexample(
                lambda q, k, v, chunk=chunk: chunked(q, k, v, chunk, causal=causal),
                expected,
                inputs,
                sizes,
            )
            if found:
                return f"with chunk_size={chunk}, {found}"
        return None

    return find


def diagnose_chunked(
    out: Tensor,
    expected: Tensor,
    mistakes: dict[Mistake, Tensor],
    otherwise: str,
    counterexample: Callable[[], str | None] | None = None,
) -> None:
    """diagnose, but a NaN/inf output names the one mistake whose NaN/inf pattern it shares."""
    if out.shape == expected.shape and not torch.isfinite(out.detach()).all():
        named = nonfinite_match(out, mistakes, values=True)
        if named is not None:
            fail(str(named))
        found = counterexample() if counterexample is not None else None
        seen = f"{otherwise}: {not_finite(out)}"
        fail(f"{seen}\n{found}" if found else seen)
    diagnose(
        out,
        expected,
        {d: m for d, m in mistakes.items() if torch.isfinite(m).all()},
        otherwise,
        atol=1e-9,
        counterexample=counterexample,
    )


def reference_out(q: Tensor, k: Tensor, v: Tensor, causal: bool = False) -> Tensor:
    mask = reference.causal_mask(q.shape[-2]) if causal else None
    return reference.scaled_dot_product_attention(q, k, v, mask)[0]


def computed_in_float64(out: Tensor, q: Tensor, k: Tensor, v: Tensor) -> bool:
    """Whether ``out``, for q of a narrower dtype than float64, is float64 and equals the
    reference computed in float64 on q, k and v converted to it, to float64 rounding (a
    computation in q's dtype, converted afterwards, differs from it by that dtype's rounding,
    1e-7 and more)."""
    if out.dtype != torch.float64 or q.dtype == torch.float64:
        return False
    wide = reference_out(q.double(), k.double(), v.double())
    return out.shape == wide.shape and is_close(out, wide, atol=1e-10, rtol=1e-9)


def call_chunked(chunked: Callable[..., Any], *args: Any, **kwargs: Any) -> Tensor:
    """``chunked(*args, **kwargs)``; a failure where it changed q, k or v (which the checks use
    again, for the reference or another call) or returned no tensor."""
    named = {**dict(zip(("q", "k", "v", "chunk_size"), args, strict=False)), **kwargs}
    with inputs_kept("chunked_attention", **named):
        out = chunked(*args, **kwargs)
    if not isinstance(out, Tensor):
        fail(f"chunked_attention must return a tensor, got {type(out).__name__}")
    return out


def require_exact(out: Tensor, expected: Tensor, what: str) -> None:
    """After diagnose (which allows rtol 1e-4), insist on float64 rounding error."""
    error = (out.detach().double() - expected).abs().max().item()
    if not error < EXACT:
        fail(
            f"{what}: close but not exact in float64 (max difference {error:.1e}, allowed "
            f"{EXACT:.0e}): float64 inputs must give the reference to rounding error"
        )


def random_case(g: torch.Generator, *, causal: bool) -> tuple[list[int], int, int, int, int, int]:
    """Leading dims, L_q, L_k, d_k, d_v and a chunk size that usually leaves a short last block."""
    lead = [
        int(d)
        for d in torch.randint(1, 4, (int(torch.randint(0, 3, (1,), generator=g)),), generator=g)
    ]
    l_q = int(torch.randint(2, 60, (1,), generator=g))
    l_k = l_q if causal else int(torch.randint(2, 60, (1,), generator=g))
    d_k, d_v = (int(x) for x in torch.randperm(15, generator=g)[:2] + 2)  # distinct
    chunk = int(torch.randint(1, l_k + 6, (1,), generator=g))
    return lead, l_q, l_k, d_k, d_v, chunk


# ---------------------------------------------------------------------------------------------
# Exercise 1: online_softmax_update


# The public lengths of a row of scores a counterexample of the online update is looked for
# at, folded in blocks of each size of FOLD_BLOCKS in turn.
FOLD_SIZES = [(n,) for n in range(1, 6)]
FOLD_BLOCKS = (1, 2, 3)


def smaller_fold_example(update: Callable[..., Any], part: int) -> Callable[[], str | None]:
    """A counterexample finder for the running max (part 0) or sum (part 1) that ``update``
    folds over one public row of scores, in blocks of each size of FOLD_BLOCKS in turn."""

    def inputs(g: torch.Generator, size: tuple[int, ...]) -> dict[str, Tensor]:
        return {"scores": small_integers(g, 1, *size)}

    def expected(scores: Tensor) -> Tensor:
        top = scores.amax(-1)
        return top if part == 0 else torch.exp(scores.logsumexp(-1) - top)

    def find() -> str | None:
        for block in FOLD_BLOCKS:

            def answer(scores: Tensor, block: int = block) -> Tensor:
                cuts = list(range(block, scores.shape[-1], block))
                return fold_online(update, scores, cuts)[part]

            found = smallest_counterexample(answer, expected, inputs, FOLD_SIZES)
            if found:
                return f"folded in blocks of {block} scores, {found}"
        return None

    return find


@check(
    ASSIGNMENT,
    "test_online_softmax_update",
    keeps=(
        r"Return `(new_max, new_sum)`, both of shape $(\dots)$, with the formulas above.",
        r"m_\text{new} = \max(m_\text{old}, \max_{j \in \text{block}} s_j)",
        r"\ell_\text{new} = \ell_\text{old} \cdot e^{m_\text{old} - m_\text{new}} + "
        r"\sum_{j \in \text{block}} e^{s_j - m_\text{new}}",
        r"A fresh row starts at $m = -\infty$, $\ell = 0$.",
    ),
)
def online_softmax_folds_any_block_split(ns: Namespace) -> None:
    update = require(ns, "online_softmax_update")
    g = hidden_generator("a07 online fold")
    for _ in range(4):
        # No dim of size 1 here: online_softmax_folds_a_single_row has one on every draw, so
        # that an answer wrong there alone gets one verdict under every secret.
        dims = [
            int(d)
            for d in torch.randint(
                2, 5, (int(torch.randint(1, 4, (1,), generator=g)),), generator=g
            )
        ]
        n = int(torch.randint(4, 40, (1,), generator=g))
        scores = 5 * torch.randn(*dims, n, generator=g, dtype=torch.float64)
        # Let the maximum rise block after block at least once, so rescaling matters.
        scores = scores + torch.linspace(0, 6, n, dtype=torch.float64)
        random_cuts = sorted({int(c) for c in torch.randint(1, n, (3,), generator=g)})
        for cuts in (random_cuts, list(range(1, n)), []):  # random blocks, blocks of 1, one block
            run_max, run_sum = fold_online(update, scores, cuts)
            if not isinstance(run_max, Tensor) or run_max.shape != scores.shape[:-1]:
                fail(
                    f"new_max must have shape {tuple(scores.shape[:-1])} (the leading dims), got "
                    f"{tuple(getattr(run_max, 'shape', ()))}"
                )
            diagnose(
                run_max,
                scores.amax(-1),
                {d: fold_online(SUM_MISTAKES[d], scores, cuts)[0] for d in MAX_MISTAKES},
                "the running max must be the maximum of every score seen so far",
                atol=0,
                counterexample=smaller_fold_example(update, 0),
            )
            expected_sum = torch.exp(scores.logsumexp(-1) - scores.amax(-1))
            if isinstance(run_sum, Tensor) and run_sum.shape != expected_sum.shape:
                seen = trailing_axis_seen(run_sum, scores, cuts)
                if seen:
                    fail(
                        f"{seen}new_sum must have shape {tuple(expected_sum.shape)} (the leading "
                        f"dims), got {tuple(run_sum.shape)}"
                    )
            mistakes = sum_mistakes(run_max, scores, cuts)
            diagnose(
                run_sum,
                expected_sum,
                mistakes,
                "the running sum must equal Σ exp(s - max) over every score seen so far",
                atol=1e-12,
                counterexample=smaller_fold_example(update, 1),
            )
            error = (run_sum.double() - expected_sum).abs().max().item()
            if error > 1e-12 * float(expected_sum.abs().max()):
                fail(f"the running sum is not exact in float64 (max difference {error:.1e})")


@check(
    ASSIGNMENT,
    "test_online_softmax_update",
    keeps=(
        r"w_j = \frac{e^{s_j - m}}{\ell}, \qquad m = \max_j s_j, \qquad \ell = \sum_j "
        "e^{s_j - m}",
        r"The factor $e^{m_\text{old} - m_\text{new}} \le 1$ is the rescaling",
    ),
)
def online_softmax_recovers_the_softmax(ns: Namespace) -> None:
    update = require(ns, "online_softmax_update")
    g = hidden_generator("a07 online weights")
    scores = 4 * torch.randn(5, 3, 17, generator=g, dtype=torch.float64)
    run_max, run_sum = fold_online(update, scores, [3, 4, 11])
    weights = torch.exp(scores - run_max.unsqueeze(-1)) / run_sum.unsqueeze(-1)
    diagnose(
        weights,
        torch.softmax(scores, -1),
        {},
        "exp(s - max) / sum does not give the softmax: sum and max must describe the same scores",
        atol=1e-12,
    )
    # Decreasing maxima: the factor must be exactly 1 when the max does not change.
    falling = torch.tensor([[9.0, 1.0, 0.0, -3.0]], dtype=torch.float64)
    run_max, run_sum = fold_online(update, falling, [1, 3])
    expected = torch.tensor([1 + math.exp(-8) + math.exp(-9) + math.exp(-12)], dtype=torch.float64)
    diagnose(
        run_sum,
        expected,
        sum_mistakes(run_max, falling, [1, 3]),
        "when a block's max is below the running max, the factor must be exp(0) = 1 and the new "
        "terms are exp(s - running_max)",
        atol=1e-12,
    )


@check(
    ASSIGNMENT,
    "test_online_softmax_update",
    keeps=(
        "Do not exponentiate a raw score: always subtract the (new) maximum first, so "
        "that scores of 1000 work as well as scores of 1.",
        "Return new tensors; do not modify the inputs in place.",
    ),
)
def online_softmax_is_stable_and_pure(ns: Namespace) -> None:
    update = require(ns, "online_softmax_update")
    g = hidden_generator("a07 online stable")
    scores = 500 + 50 * torch.randn(6, 30, generator=g)
    cuts = [4, 11, 29]
    run_max, run_sum = fold_online(update, scores, cuts)  # pure: a write into an input fails
    mistakes = sum_mistakes(run_max, scores, cuts)
    if isinstance(run_sum, Tensor) and not torch.isfinite(run_sum.detach()).all():
        mistakes.update(
            sum_mistakes(run_max, scores, cuts, {UPDATE["overflow"]: _update_unshifted})
        )
        named = nonfinite_match(run_sum, mistakes)
        symptom = not_finite(run_sum, "the running sum")
        fail(str(named or f"float32 scores near 500: {symptom}"))
    s64 = scores.double()  # the oracle in float64
    expected = torch.exp(s64.logsumexp(-1) - s64.amax(-1))
    seen = "the running sum is wrong for float32 scores near 500"
    if not is_close(run_sum, expected, atol=1e-4):
        # The sum does not change when every score moves by the same amount: an answer right
        # for the same scores near 0 goes wrong with their size alone.
        _, near_zero = fold_online(update, scores - 500, cuts)
        if is_close(near_zero, expected, atol=1e-4):
            seen += ", and right for the same scores lowered by 500: only large scores go wrong"
    diagnose(run_sum, expected, mistakes, seen, atol=1e-4)
    if run_sum.dtype != torch.float32:
        fail(f"float32 inputs must give a float32 running sum, got {run_sum.dtype}")


@check(
    ASSIGNMENT,
    "test_online_softmax_update",
    keeps=(
        r"`running_max` has shape $(\dots)$ and `running_sum` shape $(\dots)$: one "
        "running max and one running sum per row.",
        r"The leading dims $(\dots)$ may be any number of axes, including none: a single row, "
        "as in the worked example.",
    ),
)
def online_softmax_folds_a_single_row(ns: Namespace) -> None:
    # The visible worked example folds one row, a 0-dim running max and sum with scores of shape
    # (C,); the other hidden checks always have leading dims, and the visible checks decide no
    # score, so this twin keeps that promise graded.
    update = require(ns, "online_softmax_update")
    g = hidden_generator("a07 online single row")
    # Three blocks of scores in [-3, 0], the middle one holding the maximum, above 4: the max
    # rises once and then stays, on every draw, so a verdict never depends on the draw.
    sizes = random_sizes(g, 3, low=1, high=7)
    blocks = [-3 * torch.rand(size, generator=g, dtype=torch.float64) for size in sizes]
    top = int(torch.randint(sizes[1], (1,), generator=g))
    blocks[1][top] = 4 + 4 * torch.rand((), generator=g, dtype=torch.float64)
    scores = torch.cat(blocks)
    cuts = [sizes[0], sizes[0] + sizes[1]]
    judge_fold(
        update,
        scores,
        cuts,
        "with no leading dims (running_max and running_sum of shape (), scores (C,))",
        "the running max must be the maximum of every score seen so far",
        "the running sum must equal Σ exp(s - max) over every score seen so far",
    )
    # A leading dim of size 1 is a dim like any other (issue 40's blind answer i07-13 squeezed
    # the block max with no dim, and rows (R, 1) came back (R, R)): R sequences of one row each,
    # each row the scores above moved by its own offset.
    rows = int(torch.randint(2, 5, (1,), generator=g))
    offsets = torch.arange(rows, dtype=torch.float64).view(rows, 1, 1)
    batch = scores + offsets  # (R, 1, C)
    judge_fold(
        update,
        batch,
        cuts,
        f"with leading dims ({rows}, 1) (scores of shape {tuple(batch.shape)})",
        "the running max differs from each row's largest score",
        "the running sum differs from each row's Σ exp(s - max)",
        named=True,
    )


def judge_fold(
    update: Callable[..., Any],
    scores: Tensor,
    cuts: list[int],
    what: str,
    max_wrong: str,
    sum_wrong: str,
    named: bool = False,
) -> None:
    """Fail unless folding ``scores`` (..., C) cut at ``cuts`` gives the running max and sum of
    shape (...) exactly; ``what`` says which inputs, ``max_wrong`` and ``sum_wrong`` what is
    wrong where no mistake is named (the max and sum mistakes are named only where ``named``)."""
    try:
        run_max, run_sum = fold_online(update, scores, cuts)
    except (CheckFailed, NotImplementedError):
        raise
    except Exception as error:  # noqa: BLE001 - the message says which call raised what
        fail(explain(error, "online_softmax_update", f" {what}"))
    shape = tuple(scores.shape[:-1])
    for name, value in (("new_max", run_max), ("new_sum", run_sum)):
        if not isinstance(value, Tensor) or value.shape != shape:
            found = tuple(getattr(value, "shape", ())) or type(value).__name__
            seen = trailing_axis_seen(value, scores, cuts) if name == "new_sum" and named else ""
            fail(f"{seen}{what}, {name} must have shape {shape}, got {found}")
    diagnose(
        run_max,
        scores.amax(-1),
        {d: fold_online(SUM_MISTAKES[d], scores, cuts)[0] for d in MAX_MISTAKES} if named else {},
        f"{what}, {max_wrong}",
        atol=0,
    )
    diagnose(
        run_sum,
        torch.exp(scores.logsumexp(-1) - scores.amax(-1)),
        sum_mistakes(run_max, scores, cuts) if named else {},
        f"{what}, {sum_wrong}",
        atol=1e-12,
    )


# ---------------------------------------------------------------------------------------------
# Exercise 2: chunked_attention, exactness


ban(ASSIGNMENT, "chunked_attention", BANNED)


# The statement's clauses that several checks keep (clause_table.py)
MATCHES_SDPA = (
    "It must equal `scaled_dot_product_attention(q, k, v)[0]` (scale "
    r"$1/\sqrt{d_k}$) to rounding error, for every `chunk_size` $\ge 1$"
)
DTYPE_OF_Q = (
    "with the same leading dims (any number of them, including none); return the "
    r"output $(\dots, L_q, d_v)$ in the dtype of `q`"
)
NO_FUSED_ATTENTION = (
    "do not call `F.scaled_dot_product_attention` or the reference inside it: they "
    "are what it is checked against"
)
CAUSAL = "`causal=True`: query $i$ attends to keys $0..i$ only; this needs $L_q = L_k$."
ON_THE_DEVICE_OF_Q = (
    "Make every tensor you create inside it (positions, masks, running statistics) with "
    "`device=q.device`"
)


# A gate: a fused kernel reached at run time would pass the other checks, which must then
# earn nothing. Decorators register bottom-up: the cells are graded in the notebook's order,
# exact, causal, memory, so that a mistake is charged in the first cell it fails there.
@check(
    ASSIGNMENT,
    "test_chunked_attention_memory",
    gate=True,
    keeps=(NO_FUSED_ATTENTION,),
)
@check(
    ASSIGNMENT,
    "test_chunked_attention_causal",
    gate=True,
    keeps=(NO_FUSED_ATTENTION,),
)
@check(
    ASSIGNMENT,
    "test_chunked_attention_exact",
    gate=True,
    keeps=(NO_FUSED_ATTENTION,),
)
def chunked_runs_no_fused_attention(ns: Namespace) -> None:
    chunked = require(ns, "chunked_attention")
    # At run time too: no fused attention kernel may run, however it is reached.
    g = hidden_generator("a07 no fused")
    q, k, v = (torch.randn(2, 3, 33, 8, generator=g) for _ in range(3))
    names: set[str] = set()
    for causal in (False, True):
        names.update(observe_call("aten_ops", chunked, q, k, v, 8, causal=causal)[1])
    fused = sorted(name for name in names if "scaled_dot_product" in name)
    if fused:
        fail(
            f"`chunked_attention` runs PyTorch's fused attention ({fused[0]}), the reference "
            "it implements: no credit for calling it"
        )


@check(
    ASSIGNMENT,
    "test_chunked_attention_exact",
    keeps=(
        MATCHES_SDPA,
        DTYPE_OF_Q,
    ),
)
def chunked_matches_the_reference(ns: Namespace) -> None:
    chunked = require(ns, "chunked_attention")
    g = hidden_generator("a07 chunked exact")
    # The fixed cases first: their sizes tell every scale factor apart (d_k = 8, d_v = 6), so
    # the first case an answer fails names its scale mistake whatever the draws.
    cases = [([2, 3], 37, 29, 8, 6, 4)]  # L_k = 29 = 7·4 + 1: a last block of one key
    cases.append(([1], 1, 9, 4, 3, 4))  # a batch of one, a single query
    cases += [random_case(g, causal=False) for _ in range(6)]
    for lead, l_q, l_k, d_k, d_v, chunk in cases:
        q = torch.randn(*lead, l_q, d_k, generator=g, dtype=torch.float64)
        k = torch.randn(*lead, l_k, d_k, generator=g, dtype=torch.float64)
        v = torch.randn(*lead, l_k, d_v, generator=g, dtype=torch.float64)
        expected = reference_out(q, k, v)
        out = call_chunked(chunked, q, k, v, chunk)
        if out.shape != expected.shape:
            fail(
                f"expected an output of shape (..., L_q, d_v) = {tuple(expected.shape)}, got "
                f"{tuple(out.shape)} (L_q={l_q}, L_k={l_k}, d_k={d_k}, d_v={d_v})"
            )
        if out.dtype != q.dtype:
            fail(f"the output must have q's dtype (float64 here), got {out.dtype}")
        diagnose_chunked(
            out,
            expected,
            chunked_mistakes(q, k, v, chunk),
            f"chunk_size={chunk}, L_k={l_k}: the output differs from the reference attention",
            smaller_chunked_example(chunked),
        )
        require_exact(out, expected, f"chunk_size={chunk}")
        # A second, independent oracle in float32.
        out32 = call_chunked(chunked, q.float(), k.float(), v.float(), chunk)
        if out32.dtype != torch.float32:
            seen = f"float32 inputs must give a float32 output, got {out32.dtype}"
            if computed_in_float64(out32, q.float(), k.float(), v.float()):
                fail(f"{CHUNKED['computed_in_float64']} ({seen})")
            fail(seen)
        diagnose(
            out32,
            F.scaled_dot_product_attention(q, k, v),
            {},
            f"float32, chunk_size={chunk}: the output differs from F.scaled_dot_product_attention",
            atol=2e-5,
        )


# A float32 operand meeting a half-precision one, as torch's dtype errors spell them ("expected
# scalar type Float but found BFloat16", "float != c10::Half"); "BFloat16" holds no word "Float".
FLOAT32_IN_ERROR = re.compile(r"\b(Float|float|float32)\b")
HALF_IN_ERROR = {
    torch.bfloat16: re.compile(r"\b(BFloat16|bfloat16)\b"),
    torch.float16: re.compile(r"\b(Half|half|float16)\b"),
}


@check(
    ASSIGNMENT,
    "test_chunked_attention_exact",
    weight=EDGE_CASES,
    keeps=(DTYPE_OF_Q,),
)
def chunked_keeps_a_half_precision_dtype(ns: Namespace) -> None:
    """The statement: the output in the dtype of q, bfloat16 and float16 included (issue 40's
    fresh corpus: accumulators made in the default dtype pass float32 and float64 and raise
    here)."""
    chunked = require(ns, "chunked_attention")
    g = hidden_generator("a07 chunked half")
    for dtype in (torch.bfloat16, torch.float16):
        q, k, v = (torch.randn(2, 9, 8, generator=g, dtype=torch.float64) for _ in range(3))
        try:
            out = call_chunked(chunked, q.to(dtype), k.to(dtype), v.to(dtype), 4)
        except CheckFailed:
            raise
        except Exception as error:  # noqa: BLE001 - the student's error, with its input
            given = f" on {dtype} q, k and v of shape (2, 9, 8), chunk_size=4"
            seen = explain(error, "chunked_attention", given)
            # Named where the error itself shows a float32 operand meeting this dtype.
            if FLOAT32_IN_ERROR.search(str(error)) and HALF_IN_ERROR[dtype].search(str(error)):
                fail(f"{CHUNKED['computed_in_float32']}\n{seen}")
            fail(seen)
        if out.dtype != dtype:
            seen = f"{dtype} inputs gave a {out.dtype} output; the statement asks for q's dtype"
            # Named where the output is the float32 computation on the same input (one
            # computed in half precision differs from it by far more than 1e-5).
            in_float32 = reference_out(*(x.to(dtype).float() for x in (q, k, v)))
            if out.dtype == torch.float32 and is_close(out, in_float32, atol=1e-5, rtol=1e-4):
                fail(f"{CHUNKED['returned_in_float32']} ({seen})")
            if computed_in_float64(out, *(x.to(dtype) for x in (q, k, v))):
                fail(f"{CHUNKED['computed_in_float64']} ({seen})")
            fail(seen)
        diagnose(
            out.double(),
            reference_out(q, k, v),
            {},
            f"{dtype}, chunk_size=4: the output differs from the reference attention",
            atol=5e-2,
        )


@check(
    ASSIGNMENT,
    "test_chunked_attention_exact",
    keeps=(
        "also when $L_k$ is not a multiple of `chunk_size` (the last block is shorter), "
        r"when `chunk_size` is 1, and when it is $\ge L_k$ (one block)",
        DTYPE_OF_Q,
    ),
)
def chunked_handles_every_block_layout(ns: Namespace) -> None:
    chunked = require(ns, "chunked_attention")
    g = hidden_generator("a07 chunked layouts")
    l_q, l_k, d_k, d_v = 13, 23, 5, 7
    q = torch.randn(3, l_q, d_k, generator=g, dtype=torch.float64)
    k = torch.randn(3, l_k, d_k, generator=g, dtype=torch.float64)
    v = torch.randn(3, l_k, d_v, generator=g, dtype=torch.float64)
    expected = reference_out(q, k, v)
    for chunk in (1, 2, 6, 22, 23, 24, 1000):
        out = call_chunked(chunked, q, k, v, chunk)
        what = {1: "chunk_size=1 (one key per block)", 23: "chunk_size == L_k (one block)"}.get(
            chunk, f"chunk_size={chunk}" + (" > L_k (one short block)" if chunk > l_k else "")
        )
        diagnose_chunked(
            out,
            expected,
            chunked_mistakes(q, k, v, chunk),
            f"{what}: the output differs from the reference attention",
            smaller_chunked_example(chunked),
        )
        require_exact(out, expected, what)
    # The largest score arriving last (every block rescales) and first (the factor stays 1).
    for flip in (False, True):
        keys = torch.linspace(-3, 3, l_k, dtype=torch.float64).unsqueeze(-1).repeat(1, d_k)
        keys = keys.flip(0) if flip else keys
        queries = torch.randn(l_q, d_k, generator=g, dtype=torch.float64).abs()
        values = torch.randn(l_k, d_v, generator=g, dtype=torch.float64)
        diagnose_chunked(
            call_chunked(chunked, queries, keys, values, 4),
            reference_out(queries, keys, values),
            chunked_mistakes(queries, keys, values, 4),
            "no leading dims, q (L_q, d_k): the output differs from the reference attention",
        )


@check(
    ASSIGNMENT,
    "test_chunked_attention_exact",
    keeps=(
        "Subtracting the maximum $m$ changes nothing mathematically but keeps every "
        r"exponent $\le 0$, so nothing overflows.",
        MATCHES_SDPA,
    ),
)
def chunked_is_stable_for_large_scores(ns: Namespace) -> None:
    chunked = require(ns, "chunked_attention")
    g = hidden_generator("a07 chunked stable")
    q = 30 * torch.randn(2, 40, 16, generator=g)
    k = 30 * torch.randn(2, 50, 16, generator=g)
    v = torch.randn(2, 50, 3, generator=g)
    out = call_chunked(chunked, q, k, v, 9)
    if out.shape == q.shape[:-1] + v.shape[-1:] and not torch.isfinite(out.detach()).all():
        overflow = simulate_chunked(q, k, v, 9, shift=False, dtype=torch.float32)
        named = nonfinite_match(out, {CHUNKED["overflow"]: overflow})
        if named is not None:
            # The experiment: in one block no running max is ever moved, so there only an
            # unshifted exp overflows (issue 40's blind answer i07-12, whose rescaling factor
            # overflows, has the NaN rows of the overflow in nine-key blocks, and none in one).
            whole = k.shape[-2]
            overflow = simulate_chunked(q, k, v, whole, shift=False, dtype=torch.float32)
            one_block = call_chunked(chunked, q, k, v, whole)
            named = nonfinite_match(one_block, {CHUNKED["overflow"]: overflow})
        fail(str(named or f"float32 with scores in the hundreds: {not_finite(out)}"))
    diagnose(
        out,
        reference_out(q.double(), k.double(), v.double()),
        {},
        "float32 with scores in the hundreds: the output differs from the reference",
        atol=1e-4,
    )


# Half weight: rejecting bad arguments is a detail beside computing the right answer.
def shifted_scores(
    g: torch.Generator, rows: int, l_k: int, d_k: int, shift: float
) -> tuple[Tensor, Tensor]:
    """q (rows, d_k), k (l_k, d_k) in float64 whose scaled scores are those of random q and k
    over the first d_k - 1 coordinates, moved by -shift on rows 1, 4, 7, ... and by +shift on
    rows 2, 5, 8, ... (softmax ignores a shift shared by a row; rows 0, 3, ... keep theirs).

    The last coordinate carries the shift: every key holds -c there, c = sqrt(shift √d_k), and
    q holds c, -c or 0, so that q·k/√d_k moves by -shift, +shift or nothing."""
    q = torch.randn(rows, d_k, generator=g, dtype=torch.float64)
    k = torch.randn(l_k, d_k, generator=g, dtype=torch.float64)
    carrier = math.sqrt(shift * math.sqrt(d_k))
    q[0::3, -1] = 0.0
    q[1::3, -1] = carrier
    q[2::3, -1] = -carrier
    k[:, -1] = -carrier
    return q, k


@check(
    ASSIGNMENT,
    "test_chunked_attention_exact",
    keeps=(
        r"a running maximum $m$ of the scores seen so far (start: $-\infty$)",
        MATCHES_SDPA,
    ),
)
def chunked_is_stable_for_very_negative_scores(ns: Namespace) -> None:
    """The statement starts the running max at -inf: rows whose every score is far below 0 (here
    about -10^4, where exp underflows even in float64) must still give the softmax's average.
    Rows near +10^4 beside them tell a max that starts at 0 from no max subtraction at all."""
    chunked = require(ns, "chunked_attention")
    g = hidden_generator("a07 chunked very negative")
    l_q, l_k, d_k, d_v = random_sizes(g, 4, low=4, high=20)
    chunk = int(torch.randint(2, l_k, (1,), generator=g))
    q, k = shifted_scores(g, l_q, l_k, d_k, 1e4)
    v = torch.randn(l_k, d_v, generator=g, dtype=torch.float64)
    out = call_chunked(chunked, q, k, v, chunk)
    what = (
        f"float64, L_q={l_q}, L_k={l_k}, chunk_size={chunk}, the scores of rows 1, 4, 7, ... "
        "near -10^4 and of rows 2, 5, 8, ... near +10^4"
    )
    diagnose_chunked(
        out,
        reference_out(q, k, v),
        {
            CHUNKED["max_starts_at_zero"]: simulate_chunked(q, k, v, chunk, start_max=0.0),
            CHUNKED["overflow"]: simulate_chunked(q, k, v, chunk, shift=False),
        },
        f"{what}: the output differs from the reference attention",
    )


@check(
    ASSIGNMENT,
    "test_chunked_attention_exact",
    weight=0.5,
    keeps=(
        "Raise `ValueError` if `chunk_size` is not a positive `int` (neither a `bool` such as "
        "`True` nor a float such as `2.0` counts as one here)",
    ),
)
def chunked_rejects_bad_chunk_sizes(ns: Namespace) -> None:
    chunked = require(ns, "chunked_attention")
    q = k = v = torch.zeros(2, 5, 3)
    # Every bad size is tried, and a cause an experiment confirms is told first: an answer that
    # lets 2.0 reach range() also takes True as 1 (blind answer u07-02 was told only the first).
    named, seen = [], []
    for bad in (0, -2, 2.0, True, None):
        try:
            chunked(q, k, v, bad)
        except ValueError:
            continue
        except NotImplementedError:
            raise
        except Exception as error:  # noqa: BLE001 - any other error is the wrong kind
            seen.append(f"chunk_size={bad!r} must raise ValueError, got {type(error).__name__}")
            continue
        if (taken := taken_as_an_int(chunked, bad)) is not None:
            named.append(taken)
            continue
        seen.append(
            f"chunk_size={bad!r} must raise ValueError (the statement asks for a positive int, "
            "not a bool or a float); the call returned normally"
        )
    if named or seen:
        fail("\n".join(named + seen))


# Why a bool or a whole float passes a test for an int, where the answer confirms it took one.
NOT_AN_INT = {
    bool: "bool is a subclass of int in Python, so isinstance(True, int) is True: rule out bool "
    "before testing for int",
    float: "a whole float is not an int, though it compares equal to one (2.0 == 2): test the "
    "type, isinstance(chunk_size, int)",
}


def taken_as_an_int(chunked: Callable[..., Any], bad: Any) -> str | None:
    """For a bool or a whole float that ``chunked`` accepted: where its output on random inputs
    equals its output for int(bad), the message that it took the value as that int, else None."""
    if type(bad) not in NOT_AN_INT:
        return None
    g = hidden_generator("a07 chunk size taken")
    q, k, v = (torch.randn(2, 5, 3, generator=g, dtype=torch.float64) for _ in range(3))
    try:
        given, as_int = chunked(q, k, v, bad), chunked(q, k, v, int(bad))
    except Exception:  # noqa: BLE001 - no experiment, no cause named
        return None
    if not (isinstance(given, Tensor) and isinstance(as_int, Tensor)) or not torch.equal(
        given, as_int
    ):
        return None
    return (
        f"chunk_size={bad!r} must raise ValueError; your function took it as the int {int(bad)} "
        f"(its output equals the one for chunk_size={int(bad)}): {NOT_AN_INT[type(bad)]}"
    )


# ---------------------------------------------------------------------------------------------
# Exercise 2: chunked_attention, causal


@check(
    ASSIGNMENT,
    "test_chunked_attention_causal",
    keeps=(
        CAUSAL,
        MATCHES_SDPA,
    ),
)
def causal_matches_the_reference(ns: Namespace) -> None:
    chunked = require(ns, "chunked_attention")
    g = hidden_generator("a07 causal exact")
    # The fixed cases first, as in chunked_matches_the_reference.
    cases = [([2], 23, 23, 8, 6, 5)]  # blocks 0-4, 5-9, ..., 20-22
    cases.append(([1], 1, 1, 3, 2, 1))  # a batch of one sequence of length one
    cases += [random_case(g, causal=True) for _ in range(6)]
    for lead, l_q, l_k, d_k, d_v, chunk in cases:
        q = torch.randn(*lead, l_q, d_k, generator=g, dtype=torch.float64)
        k = torch.randn(*lead, l_k, d_k, generator=g, dtype=torch.float64)
        v = torch.randn(*lead, l_k, d_v, generator=g, dtype=torch.float64)
        expected = reference_out(q, k, v, causal=True)
        out = call_chunked(chunked, q, k, v, chunk, causal=True)
        if out.shape != expected.shape:
            fail(f"causal: expected shape {tuple(expected.shape)}, got {tuple(out.shape)}")
        diagnose_chunked(
            out,
            expected,
            causal_mistakes(q, k, v, chunk),
            f"causal, chunk_size={chunk}, L={l_q}: the output differs from the reference with "
            "causal_mask(L)",
            smaller_chunked_example(chunked, causal=True),
        )
        require_exact(out, expected, f"causal, chunk_size={chunk}")
        out32 = call_chunked(chunked, q.float(), k.float(), v.float(), chunk, causal=True)
        diagnose(
            out32,
            F.scaled_dot_product_attention(q, k, v, is_causal=True),
            {},
            f"causal float32, chunk_size={chunk}: differs from F.scaled_dot_product_attention(is_causal=True)",
            atol=2e-5,
        )
    # Non-causal must stay non-causal.
    q, k, v = (torch.randn(9, 4, generator=g, dtype=torch.float64) for _ in range(3))
    if torch.allclose(call_chunked(chunked, q, k, v, 3), reference_out(q, k, v, causal=True)):
        fail(str(CHUNKED["always_causal"]))


@check(
    ASSIGNMENT,
    "test_chunked_attention_causal",
    keeps=(
        CAUSAL,
        "because key 0 is visible to every query",
    ),
)
def causal_ignores_the_future(ns: Namespace) -> None:
    chunked = require(ns, "chunked_attention")
    g = hidden_generator("a07 causal future")
    # L = 1: the single key is visible.
    q, k, v = (torch.randn(1, n, generator=g, dtype=torch.float64) for n in (3, 3, 2))
    diagnose(
        call_chunked(chunked, q, k, v, 3, causal=True),
        v,
        {},
        "with a single position, the query sees its own key: the output must be v",
        atol=1e-12,
    )
    q, k, v = (torch.randn(2, 17, 4, generator=g, dtype=torch.float64) for _ in range(3))
    out = call_chunked(chunked, q, k, v, 6, causal=True)
    if not torch.isfinite(out.detach()).all():
        fail(f"causal, chunk_size=6, L=17: {not_finite(out)}")
    for position in (16, 9):
        k2, v2 = k.clone(), v.clone()
        k2[:, position:], v2[:, position:] = 100.0, -100.0
        changed = call_chunked(chunked, q, k2, v2, 6, causal=True)
        if not torch.allclose(changed[:, :position], out[:, :position], atol=1e-12, rtol=0):
            moved = (changed[:, :position] - out[:, :position]).abs().max().item()
            fail(
                f"causal, chunk_size=6, L=17: changing the keys and values from position "
                f"{position} on changed the outputs of earlier positions (by up to {moved:.3g}): "
                "the future leaks into the past"
            )


def future_scoring_high(
    g: torch.Generator, lead: list[int], length: int, gap: float, dtype: torch.dtype
) -> tuple[Tensor, Tensor, Tensor]:
    """q, k, v of ``length`` positions whose scores are random where the causal mask shows a key
    and ``gap`` above that where it hides one: q's first ``length`` features are the identity
    times √d_k, and key j's are ``gap`` for the queries before it, so q_i·k_j/√d_k gets ``gap``
    exactly where j > i; the other features are random."""
    extra = int(torch.randint(2, 6, (1,), generator=g))
    d_k, d_v = length + extra, int(torch.randint(2, 6, (1,), generator=g))
    scale = math.sqrt(d_k)
    q = torch.cat(
        [
            (torch.eye(length, dtype=torch.float64) * scale).expand(*lead, length, length),
            torch.randn(*lead, length, extra, generator=g, dtype=torch.float64),
        ],
        dim=-1,
    )
    future = torch.ones(length, length, dtype=torch.bool).triu(1)  # [i, j]: j > i
    k = torch.cat(
        [
            (future.T.double() * gap).expand(*lead, length, length),
            torch.randn(*lead, length, extra, generator=g, dtype=torch.float64),
        ],
        dim=-1,
    )
    v = torch.randn(*lead, length, d_v, generator=g, dtype=torch.float64)
    return q.to(dtype), k.to(dtype), v.to(dtype)


# Half weight: an input whose hidden keys score far above the visible ones is an edge case of
# the causal cell (issue 40's blind answer q07-04 took each block's max before the mask).
@check(
    ASSIGNMENT,
    "test_chunked_attention_causal",
    weight=EDGE_CASES,
    keeps=(
        CAUSAL,
        MATCHES_SDPA,
    ),
)
def causal_future_scoring_high(ns: Namespace) -> None:
    chunked = require(ns, "chunked_attention")
    g = hidden_generator("a07 causal future scoring high")

    def hide_future(i: Tensor, j: Tensor) -> Tensor:
        return j > i

    # Gaps past exp's underflow: exp(-1000) is 0 in float64, exp(-200) in float32.
    for dtype, gap, atol in ((torch.float64, 1000.0, 1e-9), (torch.float32, 200.0, 2e-5)):
        length = int(torch.randint(7, 13, (1,), generator=g))
        lead = [int(torch.randint(1, 4, (1,), generator=g))]
        chunk = int(torch.randint(2, 5, (1,), generator=g))
        q, k, v = future_scoring_high(g, lead, length, gap, dtype)
        expected = reference_out(q.double(), k.double(), v.double(), causal=True)
        out = call_chunked(chunked, q, k, v, chunk, causal=True)
        at = f"causal, {str(dtype).removeprefix('torch.')}, chunk_size={chunk}, L={length}"
        if out.shape != expected.shape:
            fail(f"{at}: expected shape {tuple(expected.shape)}, got {tuple(out.shape)}")
        if is_close(out.detach().double(), expected, atol=atol):
            continue
        # The experiment: the same inputs with the hidden keys scoring like the visible ones
        # give the reference, and these give the chunked loop whose block max is taken before
        # the mask, at this chunk size (NaN for NaN).
        mistakes: dict[Mistake, Tensor] = {}
        low_k = k.clone()
        low_k[..., :length] = 0  # no gap: every score random
        low_out = call_chunked(chunked, q, low_k, v, chunk, causal=True)
        low_expected = reference_out(q.double(), low_k.double(), v.double(), causal=True)
        if low_out.shape == low_expected.shape and is_close(
            low_out.detach().double(), low_expected, atol=atol
        ):
            mistakes[CHUNKED["max_before_mask"]] = simulate_chunked(
                q, k, v, chunk, hide_future, max_before_hide=True, dtype=dtype
            ).double()
        diagnose_chunked(
            out.detach().double(),
            expected,
            mistakes,
            f"{at}, the keys hidden from each query scoring {gap:g} above the ones it sees: the "
            "output differs from the reference with causal_mask(L), which depends on the "
            "visible keys alone",
        )


# Half weight: rejecting bad arguments is a detail beside computing the right answer.
@check(
    ASSIGNMENT,
    "test_chunked_attention_causal",
    weight=0.5,
    keeps=(r"or if `causal=True` and $L_q \ne L_k$",),
)
def causal_needs_equal_lengths(ns: Namespace) -> None:
    chunked = require(ns, "chunked_attention")
    # more queries than keys, then fewer (blind n07-05 raised for the first only)
    for l_q, l_k in ((7, 5), (5, 7)):
        q = torch.zeros(2, l_q, 4)
        k = v = torch.zeros(2, l_k, 4)
        at = f"L_q = {l_q}, L_k = {l_k}"
        try:
            chunked(q, k, v, 3, causal=True)
        except ValueError:
            continue
        except Exception as error:  # noqa: BLE001 - any other error is the wrong kind
            fail(
                f"causal=True with L_q != L_k must raise ValueError ({at}), got "
                f"{type(error).__name__}"
            )
        fail(
            f"causal=True with L_q != L_k must raise ValueError (a causal mask needs L_q == L_k); "
            f"with {at} the call returned normally"
        )


# How a kernel's default_device observation may read: anything else tells nothing, so that no
# text of the kernel's reaches the feedback.
DEVICE_SEEN = {
    "meets": "a tensor made by `torch.{}` meets q, k or v",
    "returned": "it returns a tensor made by `torch.{}`",
}


def mixed_devices(chunked: Callable[..., Any], causal: bool) -> str:
    """What shows that a tensor the answer makes without device= meets q, k or v, or is returned,
    else "": the call is followed in the process that runs it (kernel.py's default_device
    observation), as grading has no GPU on which that mix would raise."""
    g = hidden_generator(f"a07 device {causal}")
    q, k, v = (torch.randn(2, 9, 4, generator=g) for _ in range(3))
    try:
        seen = observe_call("default_device", chunked, q, k, v, 4, causal=causal)[1]
    except (NotImplementedError, StopChecks, ObservedElsewhere):
        # A repair's wrapper of a kernel's answer is observed nowhere: nothing is known of it,
        # so it must not pass (and confirm a cause) here.
        raise
    except Exception:  # noqa: BLE001 - an error here is the other checks' to tell
        return ""
    if not (
        isinstance(seen, list)
        and len(seen) == 2
        and all(isinstance(word, str) for word in seen)
        and seen[0] in DEVICE_SEEN
        and seen[1] in FACTORY_NAMES
    ):
        return ""
    return DEVICE_SEEN[seen[0]].format(seen[1])


def judge_device(chunked: Callable[..., Any], causal: bool) -> None:
    mixed = mixed_devices(chunked, causal)
    # The causal cell is charged only for what its branch adds: a mix seen without causal too
    # is the exact cell's.
    if mixed and not (causal and mixed_devices(chunked, causal=False)):
        fail(
            f"{CHUNKED['made_on_the_default_device']} (seen with causal={causal}, q of shape "
            f"(2, 9, 4), chunk_size=4: {mixed})"
        )


# Half weight, each cell for its own branch: where a tensor is made is a detail beside computing
# the right answer, and it matters only on a GPU.
@check(ASSIGNMENT, "test_chunked_attention_exact", weight=0.5, keeps=(ON_THE_DEVICE_OF_Q,))
def chunked_makes_its_tensors_where_q_is(ns: Namespace) -> None:
    judge_device(require(ns, "chunked_attention"), causal=False)


@check(ASSIGNMENT, "test_chunked_attention_causal", weight=0.5, keeps=(ON_THE_DEVICE_OF_Q, CAUSAL))
def causal_makes_its_tensors_where_q_is(ns: Namespace) -> None:
    judge_device(require(ns, "chunked_attention"), causal=True)


# ---------------------------------------------------------------------------------------------
# Exercise 2: chunked_attention, memory

MEMORY_LENGTHS = (2048, 4096)
MEMORY_CHUNK = 32
MEMORY_LIMIT_MIB = 4096 * 4096 * 4 / 2**20 / 8  # an eighth of one (L, L) float32 matrix: 8 MiB


def peak_mib(chunked: Callable[..., Any], length: int, causal: bool) -> float:
    """Peak MiB allocated by one CPU call at ``length`` (one thread, restored afterwards)."""
    g = hidden_generator(f"a07 memory {length}")
    q, k, v = (torch.randn(1, length, 16, generator=g) for _ in range(3))
    _, peak = observe_call("peak_bytes", chunked, q, k, v, MEMORY_CHUNK, causal=causal)
    return peak / 2**20


def peaks(chunked: Callable[..., Any], causal: bool) -> tuple[float, float, float]:
    """Peak MiB at the two MEMORY_LENGTHS, and their ratio (4 for quadratic growth)."""
    small, large = (peak_mib(chunked, n, causal) for n in MEMORY_LENGTHS)
    return small, large, large / max(small, 1e-9)


def check_memory(chunked: Callable[..., Any], causal: bool) -> None:
    small, large, growth = peaks(chunked, causal)
    if growth > 3 or large >= MEMORY_LIMIT_MIB:
        at = (
            f"peak {small:.1f} MiB at L = {MEMORY_LENGTHS[0]}, {large:.1f} MiB at L = "
            f"{MEMORY_LENGTHS[1]} (x{growth:.1f}), chunk_size = {MEMORY_CHUNK}"
        )
        # Quadratic with causal=True only: the (L, L) object is in the causal branch.
        if causal and growth > 3 and peaks(chunked, causal=False)[2] <= 3:
            fail(f"{CHUNKED['causal_full_mask']} ({at})")
        if growth > 3:
            fail(f"{CHUNKED['full_matrix']} ({at})")
        fail(
            f"peak memory is above {MEMORY_LIMIT_MIB:.0f} MiB, an eighth of one (L, L) float32 "
            f"matrix at L = {MEMORY_LENGTHS[1]} ({at})"
        )


@check(
    ASSIGNMENT,
    "test_chunked_attention_memory",
    keeps=(
        "Loop over blocks of keys only; never build an $(L_q, L_k)$ tensor (scores, "
        "weights or mask).",
        "your function must stay below an eighth of that (8 MiB), with and without `causal`",
    ),
)
def memory_grows_linearly(ns: Namespace) -> None:
    check_memory(require(ns, "chunked_attention"), causal=False)


@check(
    ASSIGNMENT,
    "test_chunked_attention_memory",
    keeps=(
        "Loop over blocks of keys only; never build an $(L_q, L_k)$ tensor (scores, "
        "weights or mask).",
        "your function must stay below an eighth of that (8 MiB), with and without `causal`",
        "a full `causal_mask(L)` (16 MiB of bools) or any $(L, L)$ score matrix does not",
    ),
)
def causal_memory_grows_linearly(ns: Namespace) -> None:
    check_memory(require(ns, "chunked_attention"), causal=True)


# ---------------------------------------------------------------------------------------------
# Exercise 3: merging partial results (split-K), by design
#
# What a partial result holds is the student's design, so nothing here looks inside one but to
# count its numbers: the checks hand each partial result back to the student's merge_partials
# and finish_attention, and judge the output against the reference attention over all the keys.


class SplitAttention:
    """The student's three functions, each call's error told with the input it was given."""

    def __init__(self, partial_fn: Callable, merge_fn: Callable, finish_fn: Callable) -> None:
        self.partial_fn, self.merge_fn, self.finish_fn = partial_fn, merge_fn, finish_fn

    @staticmethod
    def _call(fn: Callable[..., Any], name: str, args: tuple, what: str) -> Any:
        try:
            return fn(*args)
        except (NotImplementedError, CheckFailed):
            raise
        except Exception as error:  # noqa: BLE001 - the student's error, with its input
            fail(explain(error, f"your {name}", f" on {what}"))

    def partial(self, q: Tensor, k: Tensor, v: Tensor, what: str) -> Any:
        with inputs_kept("partial_attention", q=q, k=k, v=v):  # the reference uses them again
            return self._call(self.partial_fn, "partial_attention", (q, k, v), what)

    def merge(self, a: Any, b: Any, what: str) -> Any:
        return self._call(self.merge_fn, "merge_partials", (a, b), what)

    def finish(self, p: Any, expected: Tensor, what: str) -> Tensor:
        """finish_attention(p): a tensor of the expected output's shape (detached)."""
        out = self._call(self.finish_fn, "finish_attention", (p,), what)
        if not (isinstance(out, Tensor) and out.shape == expected.shape):
            got = f"{type(out).__name__} {tuple(getattr(out, 'shape', ()))}"
            fail(
                f"expected finish_attention to return a tensor of shape (..., L_q, d_v) = "
                f"{tuple(expected.shape)} on {what}; got {got}"
            )
        return out.detach()

    def parts(self, q: Tensor, k: Tensor, v: Tensor, cuts: list[Tensor], what: str) -> list[Any]:
        """The partial results of the key sets ``cuts`` (index tensors into the keys), fresh."""
        return [
            self.partial(q, k[..., idx, :], v[..., idx, :], f"{what}, part {i}")
            for i, idx in enumerate(cuts)
        ]

    def fold(self, partials: list[Any], order: Any, what: str) -> Any:
        """Merge ``partials`` as the nested pairs of indices ``order`` say: ((0, 1), 2) ..."""
        if isinstance(order, int):
            return partials[order]
        left, right = order
        return self.merge(self.fold(partials, left, what), self.fold(partials, right, what), what)


def split_attention(ns: Namespace) -> SplitAttention:
    """The answers of the merge_partials cell."""
    return SplitAttention(
        require(ns, "partial_attention"),
        require(ns, "merge_partials"),
        require(ns, "finish_attention"),
    )


def left_fold(count: int) -> Any:
    """((0, 1), 2), ...: the order of a loop over the parts."""
    order: Any = 0
    for i in range(1, count):
        order = (order, i)
    return order


def key_split(g: torch.Generator, l_k: int, parts: int) -> list[Tensor]:
    """The keys 0..l_k-1 shuffled and cut into ``parts`` non-empty sets of random sizes."""
    order = torch.randperm(l_k, generator=g)
    cuts = sorted(int(c) + 1 for c in torch.randperm(l_k - 1, generator=g)[: parts - 1])
    return list(torch.tensor_split(order, cuts))


def split_case(g: torch.Generator, low_keys: int = 4) -> tuple[Tensor, Tensor, Tensor, str]:
    """float64 q, k, v of random leading dims and distinct sizes, and the sizes in words."""
    lead = [
        int(d)
        for d in torch.randint(1, 4, (int(torch.randint(0, 3, (1,), generator=g)),), generator=g)
    ]
    l_q, d_k, d_v = random_sizes(g, 3, low=1, high=9)
    while not scale_factors_apart(d_k, {"d_v": d_v}):  # d_k = 1, or d_v = d_k², ties two slips
        l_q, d_k, d_v = random_sizes(g, 3, low=1, high=9)
    l_k = int(torch.randint(low_keys, 30, (1,), generator=g))
    q = torch.randn(*lead, l_q, d_k, generator=g, dtype=torch.float64)
    k = torch.randn(*lead, l_k, d_k, generator=g, dtype=torch.float64)
    v = torch.randn(*lead, l_k, d_v, generator=g, dtype=torch.float64)
    return q, k, v, f"leading dims {tuple(lead)}, L_q={l_q}, L_k={l_k}, d_k={d_k}, d_v={d_v}"


def keys(count: int) -> str:
    return f"{count} key" if count == 1 else f"{count} keys"


def sizes_of(cuts: list[Tensor]) -> str:
    return "parts of " + ", ".join(str(len(c)) for c in cuts) + " keys"


def unrescaled_merge(q: Tensor, k: Tensor, v: Tensor, cuts: list[Tensor]) -> Tensor:
    """The output of parts (m, Σ exp(s - m), Σ exp(s - m) v) over the keys ``cuts``, each against
    its own row max m, merged by adding their sums as they are (MERGE["no_common_max"])."""
    sums, accumulators = 0.0, 0.0
    for idx in cuts:
        scores = q @ k[..., idx, :].transpose(-2, -1) / math.sqrt(q.shape[-1])
        weights = torch.exp(scores - scores.amax(-1, keepdim=True))
        sums = sums + weights.sum(-1, keepdim=True)
        accumulators = accumulators + weights @ v[..., idx, :]
    return accumulators / sums


def count_weighted_merge(q: Tensor, k: Tensor, v: Tensor, cuts: list[Tensor]) -> Tensor:
    """The parts' attention outputs over the keys ``cuts``, averaged weighted by how many keys
    each part has (MERGE["count_weighted"])."""
    total = sum(len(idx) for idx in cuts)
    return sum(len(idx) * reference_out(q, k[..., idx, :], v[..., idx, :]) for idx in cuts) / total


def merge_mistakes(q: Tensor, k: Tensor, v: Tensor, cuts: list[Tensor]) -> dict[Mistake, Tensor]:
    """What the known mistakes of a split attention finish to on these parts, keyed by the
    mistake: the scale factor's slips (operation_mistakes.py) and two merges."""
    slips = scale_slips(q.shape[-1], {"d_v": v.shape[-1]})
    return {
        **mistaken_outputs(MERGE, attention_output, {"q": q, "k": k, "v": v}, slips),
        MERGE["no_common_max"]: unrescaled_merge(q, k, v, cuts),
        MERGE["count_weighted"]: count_weighted_merge(q, k, v, cuts),
    }


# The public (L_q, L_k, d_k) a counterexample of a split attention is looked for at, smallest
# first: L_k >= 2, so that the keys make two parts.
SPLIT_SIZES = sorted(
    ((l_q, l_k, d_k) for l_q in (1, 2) for l_k in range(2, 6) for d_k in (1, 2)), key=sum
)


def smaller_split_example(split: SplitAttention) -> str | None:
    """A small public input on which the student's split attention, over two parts (the first
    key, and the others) merged, differs from the attention over all the keys; None if none."""

    def inputs(g: torch.Generator, size: tuple[int, ...]) -> dict[str, Tensor]:
        l_q, l_k, d_k = size
        return {
            "q": small_integers(g, l_q, d_k),
            "k": small_integers(g, l_k, d_k),
            "v": small_integers(g, l_k, 1),
        }

    def answer(q: Tensor, k: Tensor, v: Tensor) -> Any:
        parts = [split.partial_fn(q, k[:1], v[:1]), split.partial_fn(q, k[1:], v[1:])]
        return split.finish_fn(split.merge_fn(*parts))

    found = smallest_counterexample(answer, reference_out, inputs, SPLIT_SIZES)
    return f"with the parts k[:1] and k[1:] (and v's alike) merged, {found}" if found else None


def judge_split_cases(
    cases: list[tuple[Tensor, Tensor, dict[Mistake, Tensor], str]],
    counterexample: Callable[[], str | None],
) -> None:
    """Fail unless each case's output (output, expected, {mistake: its output}, what) is the
    attention over all the keys; name a mistake only where the output is that mistake's on every
    case it gets wrong, two at least: on one draw two mistakes may give the same numbers."""
    wrong = [case for case in cases if not is_close(case[0], case[1], atol=EXACT, rtol=0)]
    if not wrong:
        return
    out, expected, _, what = wrong[0]
    if not torch.isfinite(out).all():
        fail(f"{what}: {not_finite(out)}")
    named = borne_out([case[:3] for case in wrong], atol=EXACT)
    if len(wrong) > 1 and len(named) == 1:
        fail(f"{what}: {named.pop()}")
    judge_merged(out, expected, what, counterexample=counterexample)


def judge_merged(
    out: Tensor,
    expected: Tensor,
    what: str,
    atol: float = EXACT,
    unrescaled: Tensor | None = None,
    counterexample: Callable[[], str | None] | None = None,
) -> None:
    """Fail unless ``out`` is the attention over all the keys, ``expected``, to ``atol``; name
    the merge without a common maximum where ``out`` is that merge's output, ``unrescaled``."""
    if not torch.isfinite(out).all():
        fail(f"{what}: {not_finite(out)}")
    gap = (out.double() - expected.double()).abs().max().item()
    if not gap <= atol and unrescaled is not None and is_close(out, unrescaled, atol=atol):
        fail(f"{what}: {MERGE['no_common_max']}")
    if not gap <= atol:
        seen = (
            f"{what}: the output differs from the attention over all the keys by up to "
            f"{gap:.3g} (allowed {atol:.0e}); {first_difference(out, expected, atol=atol)}"
        )
        found = counterexample() if counterexample is not None else None
        fail(f"{seen}\n{found}" if found else seen)


@check(
    ASSIGNMENT,
    "test_merge_partials",
    keeps=(
        "exact: however the keys are split into parts (any sizes, any keys in any "
        "part), finishing the merged partial results gives the attention over all the "
        "keys to rounding (within $10^{-10}$ in float64)",
        "with a single part, `finish_attention(partial_attention(q, k, v))` already does",
        "`merge_partials(a, b)`: two partial results of the same queries over disjoint "
        "sets of keys; it returns the partial result over both sets",
    ),
)
def merged_partials_are_attention_over_all_the_keys(ns: Namespace) -> None:
    """One part, two parts and three to five parts merged in a loop, keys split at random:
    finish_attention gives the attention over all the keys to float64 rounding."""
    split = split_attention(ns)
    g = hidden_generator("a07 split exact")
    cases = []
    for count in (1, 2, 2, 3, 5):
        q, k, v, sizes = split_case(g, low_keys=count)
        cuts = key_split(g, k.shape[-2], count)
        what = f"float64, {sizes}, {sizes_of(cuts)} at random positions, merged in a loop"
        expected = reference_out(q, k, v)
        merged = split.fold(split.parts(q, k, v, cuts, what), left_fold(count), what)
        out = split.finish(merged, expected, what)
        cases.append((out, expected, merge_mistakes(q, k, v, cuts), what))
    judge_split_cases(cases, partial(smaller_split_example, split))


@check(
    ASSIGNMENT,
    "test_merge_partials",
    weight=EDGE_CASES,
    keeps=("order does not matter: four parts merged in any order and grouping",),
)
def merging_order_does_not_matter(ns: Namespace) -> None:
    """Four parts merged in five orders and groupings give the same output to rounding."""
    split = split_attention(ns)
    g = hidden_generator("a07 split order")
    q, k, v, sizes = split_case(g, low_keys=8)
    cuts = key_split(g, k.shape[-2], 4)
    what = f"float64, {sizes}, {sizes_of(cuts)}"
    orders = {
        "(((p0, p1), p2), p3)": left_fold(4),
        "(p0, (p1, (p2, p3)))": (0, (1, (2, 3))),
        "((p0, p1), (p2, p3))": ((0, 1), (2, 3)),
        "(((p3, p2), p1), p0)": (((3, 2), 1), 0),
        "((p2, p0), (p3, p1))": ((2, 0), (3, 1)),
    }
    expected = reference_out(q, k, v)
    outputs = {}
    for name, order in orders.items():
        merged = split.fold(split.parts(q, k, v, cuts, what), order, f"{what}, merged as {name}")
        outputs[name] = split.finish(merged, expected, f"{what}, merged as {name}")
    (first, out), *others = outputs.items()
    for name, other in others:
        gap = (other.double() - out.double()).abs().nan_to_num(math.inf).max().item()
        if not gap <= EXACT:
            fail(
                f"{what}: merged as {first} and as {name}, the outputs differ by up to "
                f"{gap:.3g} (allowed {EXACT:.0e})"
            )


def tensors_held(name: str, value: Any) -> dict[str, Tensor]:
    """The tensors a partial result (a tuple, list or dict, nested or not) holds, each named by
    where it sits in it: ``a[0]``, ``a['m']``."""
    if isinstance(value, Tensor):
        return {name: value}
    if type(value) in (tuple, list):
        items: Any = enumerate(value)
    elif type(value) is dict:
        items = value.items()
    else:
        return {}
    held = {}
    for key, item in items:
        held.update(tensors_held(f"{name}[{key!r}]", item))
    return held


@check(
    ASSIGNMENT,
    "test_merge_partials",
    weight=EDGE_CASES,
    keeps=(
        "and leaves the partial results it is given unchanged: a partial result may be merged "
        "again",
    ),
)
def merging_leaves_the_parts_unchanged(ns: Namespace) -> None:
    """merge_partials(a, b) changes no tensor of a or b (issue 40's blind answers p07-04 and
    r07-05 merged into their first argument in place)."""
    split = split_attention(ns)
    g = hidden_generator("a07 split kept")
    q, k, v, sizes = split_case(g, low_keys=6)
    cuts = key_split(g, k.shape[-2], 3)
    what = f"float64, {sizes}, {sizes_of(cuts)}"
    parts = split.parts(q, k, v, cuts, what)
    merged = parts[0]
    for i, part in enumerate(parts[1:], start=1):
        with inputs_kept("merge_partials", **tensors_held("a", merged), **tensors_held("b", part)):
            merged = split.merge(merged, part, f"{what}, merging part {i}")


def shifted_parts(
    g: torch.Generator, l_q: int, sizes: tuple[int, int], d_k: int, shift: float
) -> tuple[Tensor, Tensor, Tensor]:
    """q (l_q, d_k), and keys (sizes[0] + sizes[1], d_k) in float64 whose second part's scaled
    scores are moved by -shift (and whose first part's are untouched), through a last coordinate
    that q holds at c and the second part's keys at -c, c = sqrt(shift √d_k)."""
    q = torch.randn(l_q, d_k, generator=g, dtype=torch.float64)
    k = torch.randn(sum(sizes), d_k, generator=g, dtype=torch.float64)
    carrier = math.sqrt(shift * math.sqrt(d_k))
    q[:, -1] = carrier
    k[:, -1] = 0.0
    k[sizes[0] :, -1] = -carrier
    return q, k, torch.randn(sum(sizes), 3, generator=g, dtype=torch.float64)


@check(
    ASSIGNMENT,
    "test_merge_partials",
    weight=EDGE_CASES,
    keeps=(
        r"stable: scores near $\pm 10^4$, where `exp` overflows even in float64, give "
        "the exact, finite output, also when every key of one part scores about $10^4$ "
        "below the keys of the other part",
    ),
)
def merging_is_stable_for_huge_scores(ns: Namespace) -> None:
    """Scores near ±10^4 (exp overflows even in float64), alone and split; and a part whose
    every key scores about 10^4 below the other part's, merged first and last."""
    split = split_attention(ns)
    example = partial(smaller_split_example, split)
    g = hidden_generator("a07 split stable")
    l_q, l_k, d_k = random_sizes(g, 3, low=4, high=14)
    q, k = shifted_scores(g, l_q, l_k, d_k, 1e4)
    v = torch.randn(l_k, 5, generator=g, dtype=torch.float64)
    expected = reference_out(q, k, v)
    rows = (
        f"float64, L_q={l_q}, L_k={l_k}, d_k={d_k}, the scores of rows 1, 4, 7, ... near -10^4 "
        "and of rows 2, 5, 8, ... near +10^4"
    )
    one_part = split.partial(q, k, v, f"{rows}, one part")
    out = split.finish(one_part, expected, rows)
    if not torch.isfinite(out).all():
        overflow = overflow_seen(split, one_part, q, k, v, rows)
        if overflow:
            fail(f"{rows}, one part of all the keys: {overflow}")
        shared = shared_max_seen(split, out, q, k, v, expected, rows)
        if shared:
            fail(f"{rows}, one part of all the keys: {shared}")
    judge_merged(
        out, expected, f"{rows}, one part of all the keys", atol=1e-8, counterexample=example
    )
    cuts = key_split(g, l_k, 3)
    what = f"{rows}, {sizes_of(cuts)}, merged in a loop"
    merged = split.fold(split.parts(q, k, v, cuts, what), left_fold(3), what)
    out = split.finish(merged, expected, what)
    judge_merged(
        out,
        expected,
        what,
        atol=1e-8,
        unrescaled=unrescaled_merge(q, k, v, cuts),
        counterexample=example,
    )
    sizes = (
        int(torch.randint(1, 6, (1,), generator=g)),
        int(torch.randint(1, 6, (1,), generator=g)),
    )
    q, k, v = shifted_parts(g, l_q, sizes, d_k, 1e4)
    expected = reference_out(q, k, v)
    high, low = torch.arange(sizes[0]), torch.arange(sizes[0], sum(sizes))
    for name, cuts, order in (("first", [low, high], (0, 1)), ("last", [high, low], (0, 1))):
        what = (
            f"float64, L_q={l_q}, d_k={d_k}, a part of {keys(sizes[0])} and a part of "
            f"{keys(sizes[1])} whose scores are all about 10^4 lower, that part merged {name}"
        )
        merged = split.fold(split.parts(q, k, v, cuts, what), order, what)
        out = split.finish(merged, expected, what)
        if not is_close(out, expected, atol=1e-8, rtol=0):
            one_max = one_part_max_seen(split, q, k, v, cuts, what)
            if one_max:
                fail(f"{what}: {one_max}")
        judge_merged(
            out,
            expected,
            what,
            atol=1e-8,
            unrescaled=unrescaled_merge(q, k, v, cuts),
            counterexample=example,
        )


def nonfinite_in(value: Any) -> tuple[int, int]:
    """How many of the numbers a partial result holds (tensors and numbers, in tuples, lists
    and dicts) are NaN or inf, and how many it holds."""
    if isinstance(value, Tensor):
        return int((~torch.isfinite(value.detach())).sum()), value.numel()
    if isinstance(value, int | float):
        return int(not math.isfinite(value)), 1
    if isinstance(value, dict):
        value = list(value.values())
    if not isinstance(value, tuple | list):
        return 0, 0
    counts = [nonfinite_in(item) for item in value]
    return sum(bad for bad, _ in counts), sum(held for _, held in counts)


def overflow_seen(
    split: SplitAttention, part: Any, q: Tensor, k: Tensor, v: Tensor, rows: str
) -> str | None:
    """MERGE["overflow"], with what shows it, where the partial result ``part`` of q, k, v (scores
    near ±10^4) already holds NaN or inf and the same inputs with q divided by 1000 (scores near
    ±10) give the attention exactly, alone and in three parts merged; else None."""
    bad, held = nonfinite_in(part)
    if not bad:
        return None
    small = q / 1000
    expected = reference_out(small, k, v)
    what = f"{rows}, q divided by 1000"
    alone = split.finish(split.partial(small, k, v, what), expected, what)
    cuts = key_split(torch.Generator().manual_seed(0), k.shape[-2], 3)
    merged = split.fold(split.parts(small, k, v, cuts, what), left_fold(3), what)
    for out in (alone, split.finish(merged, expected, what)):
        if not is_close(out, expected, atol=1e-10, rtol=0):
            return None
    return (
        f"{MERGE['overflow']} (your partial_attention's result holds NaN or inf at {bad} of its "
        f"{held} numbers here, and the same inputs with q divided by 1000, scores near ±10, "
        "give the attention exactly)"
    )


def one_part_max_seen(
    split: SplitAttention, q: Tensor, k: Tensor, v: Tensor, cuts: list[Tensor], what: str
) -> str | None:
    """MERGE["one_part_max"], with what shows it, where merge_partials(a, b) of the two parts
    ``cuts`` (one part's scores about 10^4 below the other's) finishes wrong (NaN, inf or another
    value), each part's partial result being finite, while the same parts merged as merge_partials(b, a), and both
    ways with q divided by 1000 (scores about 10 apart), give the attention exactly: the merge is
    right except where the argument it measures the other against holds the lower maximum. A
    right merge is exact in both orders, so this never names it; else None."""
    expected = reference_out(q, k, v)
    small = q / 1000
    small_expected = reference_out(small, k, v)
    try:
        parts = split.parts(q, k, v, cuts, what)
        if any(nonfinite_in(part)[0] for part in parts):
            return None  # a partial result that overflows on its own is MERGE["overflow"]'s
        first = split.finish(split.merge(*parts, what), expected, what)
        if is_close(first, expected, atol=1e-8, rtol=0):
            return None
        swapped = f"{what}, merged in the other order"
        low, high = split.parts(q, k, v, cuts, swapped)
        out = split.finish(split.merge(high, low, swapped), expected, swapped)
        if not is_close(out, expected, atol=1e-8, rtol=0):
            return None
        for order in ((0, 1), (1, 0)):
            scaled = f"{what}, q divided by 1000, merged as {order}"
            merged = split.fold(split.parts(small, k, v, cuts, scaled), order, scaled)
            if not is_close(
                split.finish(merged, small_expected, scaled), small_expected, atol=1e-10, rtol=0
            ):
                return None
    except CheckFailed:
        return None
    first_higher = bool((part_max(q, k, cuts[0]) > part_max(q, k, cuts[1])).all())
    above, below = ("first", "second") if first_higher else ("second", "first")
    seen = "NaN or inf" if not torch.isfinite(first).all() else "a wrong output"
    return (
        f"{MERGE['one_part_max']} (merge_partials(a, b) with the {above} argument's scores "
        f"about 10^4 above the {below}'s gives {seen}; the same parts merged the other way, "
        "and both ways with q divided by 1000, scores about 10 apart, give the attention exactly)"
    )


def part_max(q: Tensor, k: Tensor, idx: Tensor) -> Tensor:
    """Each query's largest scaled score over the keys ``idx``."""
    return (q @ k[..., idx, :].transpose(-2, -1) / math.sqrt(q.shape[-1])).amax(-1)


def shared_max_seen(
    split: SplitAttention, out: Tensor, q: Tensor, k: Tensor, v: Tensor, expected: Tensor, rows: str
) -> str | None:
    """MERGE["max_shared_across_queries"], with what shows it, where the output ``out`` of q
    (L_q, d_k) over k, v in one part holds NaN or inf in exactly the rows whose largest score
    lies more than 745 below the largest of any row (exp underflows to 0 in float64 there), and
    every query alone, in a part of its own, gives the attention exactly; else None."""
    bad = (~torch.isfinite(out)).any(-1)
    own_max = (q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])).amax(-1)
    far_below = own_max < own_max.max() - 745
    if not bad.any() or not torch.equal(bad, far_below):
        return None
    try:
        for i in range(len(q)):
            what = f"{rows}, query {i} alone"
            alone = split.finish(split.partial(q[i : i + 1], k, v, what), expected[i : i + 1], what)
            if not is_close(alone, expected[i : i + 1], atol=1e-8):
                return None
    except CheckFailed:
        return None
    rows_seen = bad.nonzero().flatten().tolist()
    return (
        f"{MERGE['max_shared_across_queries']} (the rows {rows_seen}, whose scores all lie "
        "more than 745 below another row's largest, hold NaN or inf; each query alone gives "
        "the attention exactly)"
    )


def numbers_in(value: Any) -> int | None:
    """How many numbers a tuple, list or dict of tensors and numbers holds; None for anything
    else (a named tuple or an object of the student's own class is not plain data)."""
    if isinstance(value, Tensor):
        return value.numel()
    if type(value) in (int, float, bool):
        return 1
    if type(value) in (tuple, list):
        counts = [numbers_in(item) for item in value]
    elif type(value) is dict:
        counts = [numbers_in(item) for item in value.values()]
    else:
        return None
    return None if None in counts else sum(counts)


@check(
    ASSIGNMENT,
    "test_merge_partials",
    weight=EDGE_CASES,
    keeps=(
        "small and defined everywhere: a partial result holds as many numbers for one "
        "key as for 300",
        "a part of one key, no leading dims, and float32 as well as float64 inputs (the "
        "output in `q`'s dtype) work",
    ),
)
def partial_results_are_small_and_defined_everywhere(ns: Namespace) -> None:
    """A part of one key; no leading dims; float32 and float64 keep q's dtype; a partial result
    holds as many numbers for 1 key as for many, and merging does not grow it."""
    split = split_attention(ns)
    example = partial(smaller_split_example, split)
    g = hidden_generator("a07 split edges")
    q, k, v, sizes = split_case(g, low_keys=6)
    one_key = f"float64, {sizes}, a part of one key"
    expected = reference_out(q, k[..., :1, :], v[..., :1, :])
    out = split.finish(split.partial(q, k[..., :1, :], v[..., :1, :], one_key), expected, one_key)
    judge_merged(out, expected, one_key, counterexample=example)
    l_k = k.shape[-2]
    what = f"float64, {sizes}, {l_k} parts of one key each, merged in a loop"
    cuts = [torch.tensor([j]) for j in range(l_k)]
    expected = reference_out(q, k, v)
    merged = split.fold(split.parts(q, k, v, cuts, what), left_fold(l_k), what)
    # Not named here: over parts of one key, other wrong merges give its output too (the mean).
    judge_merged(split.finish(merged, expected, what), expected, what, counterexample=example)

    l_q, l_k, d_k, d_v = random_sizes(g, 4, low=2, high=12)
    q, k, v = (
        torch.randn(n, d, generator=g, dtype=torch.float64)
        for n, d in ((l_q, d_k), (l_k, d_k), (l_k, d_v))
    )
    cuts = key_split(g, l_k, 2)
    expected = reference_out(q, k, v)
    for dtype in (torch.float64, torch.float32):
        what = f"{dtype}, no leading dims, L_q={l_q}, L_k={l_k}, d_k={d_k}, d_v={d_v}, {sizes_of(cuts)}"
        typed = [t.to(dtype) for t in (q, k, v)]
        merged = split.fold(split.parts(*typed, cuts, what), (0, 1), what)
        out = split.finish(merged, expected, what)
        if out.dtype != dtype:
            seen = f"{what}: the output's dtype is {out.dtype}; the statement asks for q's dtype"
            if computed_in_float64(out, *typed):
                fail(f"{MERGE['computed_in_float64']} ({seen})")
            fail(seen)
        judge_merged(
            out,
            expected,
            what,
            atol=EXACT if dtype == torch.float64 else 2e-5,
            counterexample=example,
        )

    few, many = 1, 300
    q = torch.randn(3, 4, d_k, generator=g, dtype=torch.float64)
    k = torch.randn(3, many, d_k, generator=g, dtype=torch.float64)
    v = torch.randn(3, many, d_v, generator=g, dtype=torch.float64)
    held = {}
    for n in (few, many):
        what = f"float64, q (3, 4, {d_k}), a part of {n} keys"
        result = split.partial(q, k[:, :n], v[:, :n], what)
        held[n] = numbers_in(result)
        if held[n] is None:
            fail(
                f"{what}: partial_attention returned a {result.__class__.__name__}; the statement "
                "asks for a plain tuple, list or dict of tensors"
            )
    if held[many] != held[few]:
        fail(
            f"q (3, 4, {d_k}), d_v={d_v}: a partial result holds {held[few]} numbers for a part "
            f"of {few} key and {held[many]} for a part of {many} keys"
        )
    what = f"float64, q (3, 4, {d_k}), two parts of {many // 2} keys"
    halves = [torch.arange(many // 2), torch.arange(many // 2, many)]
    merged = split.fold(split.parts(q, k, v, halves, what), (0, 1), what)
    if numbers_in(merged) != held[few]:
        fail(
            f"{what}: merge_partials returned a {merged.__class__.__name__} of "
            f"{numbers_in(merged)} numbers from two partial results of {held[few]} numbers each"
        )
