"""Exercise 6, `padded_block` (test_padded_block): a padded batch through a block, by design.

The statement leaves the design to the student (which mask, what the pad positions hold, what a
sentence of pads gives), so nothing here compares with one reference answer. Each check tests a
property every good design keeps, on attention_lab's block with hidden weights: the output at a
real position is the block's output on that sentence with its pads removed, and every value and
gradient is finite. A failure says what was observed on which sentence and position; where the
real positions move with the pads, it reruns the answer with only the pads' vectors redrawn and
says whether they moved with them. Three mask mistakes are named by experiment (repairs.py): the
checks pass on the answer whose block is handed its mask with the pads moved onto the keys' axis,
as (B, 1, 1, L), or with its polarity reversed.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import torch
from torch import Tensor, nn

from autograder.authoring.closeness import is_close
from autograder.authoring.hidden_draws import hidden_generator
from autograder.authoring.mistakes import catalogue
from autograder.authoring.registry import EDGE_CASES, Namespace, check, fail
from autograder.authoring.repairs import repairs
from autograder.authoring.requiring import require
from autograder.authoring.student_errors import explain
from autograder.checks.a03_transformer_block.encoder_block import block_sizes, reference_block
from autograder.checks.a03_transformer_block.shared import ASSIGNMENT

# float64 throughout: a design that keeps the pads out computes the real positions exactly as
# the block does alone, so only rounding separates them.
ATOL = 1e-9
PADDED = catalogue(
    ASSIGNMENT,
    "padded_block",
    {
        "mask axes": {
            "pads_as_queries": "the mask hides the pads as queries, (B, 1, L, 1), not as keys: "
            "the real tokens still attend to the pads (a mask that is the same for every key "
            "of a query, expanded to (B, 1, L, L) or not); put the pads on the last (key) axis, "
            "(B, 1, 1, L)",
            "mask_as_given": "the (B, L) mask is handed to the block as it is, where the block "
            "reads its last two axes as (L_q, L_k): give it the shape (B, 1, 1, L), which "
            "broadcasts over the heads and the queries",
        },
        "which positions": {
            "mask_from_lengths": "the key mask is built from each sentence's number of real "
            "tokens (position < that number), which hides the last positions of the row "
            "whatever is_pad says: with pads first or between the tokens it hides real tokens "
            "and shows pads",
            "first_positions": "each sentence's real tokens are taken to be its first n "
            "positions (n its number of real tokens), as with pads at the end: your output is "
            "right with the pads at the end, and with them elsewhere it is the block's output "
            "on the first n positions of the row, pads included and later real tokens left out",
        },
        "mask polarity": {
            "mask_reversed": "mask polarity reversed: the mask is True at the pads, where the "
            "block reads True as 'may attend' (torch's attn_mask uses the opposite): hand it "
            "~is_pad, True at the real tokens",
        },
    },
)


class MaskChanged(nn.Module):
    """``block`` called with ``change(mask)`` for each mask it is given; otherwise the block.  A
    module, so that the grading command lends it to the kernel's padded_block as it lends the
    block itself: a repair must work there as in-process (autograder/authoring/repairs.py)."""

    def __init__(self, block: nn.Module, change: Callable[[Tensor], Tensor]):
        super().__init__()
        self.block, self.change = block, change

    def forward(self, x: Tensor, mask: Tensor | None = None, *args: Any, **kwargs: Any) -> Any:
        return self.block(x, None if mask is None else self.change(mask), *args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        try:
            return super().__getattr__(name)  # the block, registered as a submodule
        except AttributeError:
            return getattr(self.block, name)


def _mask_changed(change: Callable[[Tensor], Tensor]) -> Callable[[Callable], Callable]:
    """The repair that hands the answer's block ``change`` of each mask the answer builds."""
    return lambda padded_block: (
        lambda block, x, is_pad: padded_block(MaskChanged(block, change), x, is_pad)
    )


def _keys_for_queries(mask: Tensor) -> Tensor:
    """A 4-D mask that is the same for every key of a query ((B, 1, L, 1), or that expanded to
    (B, 1, L, L): j03-15), transposed: the same positions hidden as keys. Any other mask is left
    as it is, so the repair fits no other answer: a key mask with a key hidden differs along the
    keys, and one that hides no key or every key is its own transpose."""
    if mask.dim() == 4 and bool((mask == mask[..., :1]).all()):
        return mask.transpose(-2, -1)
    return mask


# (B, 1, L, 1) -> (B, 1, 1, L), (B, 1, L, L) constant along the keys -> its transpose.
repairs(ASSIGNMENT, PADDED["pads_as_queries"], "padded_block")(_mask_changed(_keys_for_queries))
# (B, L) -> (B, 1, 1, L)
repairs(ASSIGNMENT, PADDED["mask_as_given"], "padded_block")(
    _mask_changed(lambda m: m[:, None, None, :] if m.dim() == 2 else m)
)
# True at the pads -> True at the real tokens (a 1/0 mask as well: the block reads 0 as hidden)
repairs(ASSIGNMENT, PADDED["mask_reversed"], "padded_block")(
    _mask_changed(lambda m: m.logical_not())
)


def run_answer(
    padded_block: Callable, block: nn.Module, x: Tensor, is_pad: Tensor, what: str
) -> Tensor:
    """The answer's output on copies of x and is_pad, its shape and dtype checked."""
    try:
        out = padded_block(block, x.clone(), is_pad.clone())
    except NotImplementedError:
        raise
    except Exception as error:
        fail(
            runs_in_float32(padded_block, block, x, is_pad)
            + explain(error, "your padded_block", f" on {what}")
        )
    if not (isinstance(out, Tensor) and out.shape == x.shape and out.dtype == x.dtype):
        got = f"{type(out).__name__} {tuple(getattr(out, 'shape', ()))} {getattr(out, 'dtype', '')}"
        fail(
            f"expected a {x.dtype} tensor of shape {tuple(x.shape)}, the shape of x, on {what}; "
            f"got {got}"
        )
    return out


def runs_in_float32(padded_block: Callable, block: nn.Module, x: Tensor, is_pad: Tensor) -> str:
    """Where the answer raised on a float64 ``x``, the experiment on the same batch and block in
    float32: a first line saying that it runs there, if it does (j03-16's float32 buffer), else
    nothing."""
    if x.dtype != torch.float64:
        return ""
    try:
        with torch.no_grad():
            padded_block(copy.deepcopy(block).float(), x.detach().float(), is_pad.clone())
    except Exception:  # noqa: BLE001 - it raises in float32 too: the dtype explains nothing
        return ""
    return (
        "your padded_block raises on this float64 batch, and runs on the same batch and block "
        "in float32 (the statement asks for an output of x's dtype, float64 here)\n"
    )


def masks_handed_to_the_block(
    padded_block: Callable, block: nn.Module, x: Tensor, is_pad: Tensor
) -> list[Tensor]:
    """The masks the answer hands ``block`` on (x, is_pad), as bool tensors (none if it raises)."""
    seen: list[Tensor] = []

    def record(mask: Tensor) -> Tensor:
        seen.append(torch.as_tensor(mask).detach().clone().bool())
        return mask

    try:
        with torch.no_grad():
            padded_block(MaskChanged(block, record), x.clone(), is_pad.clone())
    except Exception:  # noqa: BLE001 - an answer that cannot run shows no mask
        return []
    return seen


def mask_from_lengths(padded_block: Callable, block: nn.Module, x: Tensor, is_pad: Tensor) -> bool:
    """True when every mask the answer hands the block shows exactly the first n_b keys of
    sentence b, n_b its number of real tokens, where is_pad has pads elsewhere than at the end:
    the experiment behind mask_from_lengths (a mask from is_pad shows other keys)."""
    length = is_pad.shape[1]
    real = (~is_pad).sum(1)
    first_keys = torch.arange(length)[None, :] < real[:, None]  # (B, L)
    if torch.equal(first_keys, ~is_pad):
        return False
    masks = masks_handed_to_the_block(padded_block, block, x, is_pad)
    wanted = first_keys[:, None, None, :].expand(len(is_pad), 1, length, length)
    try:
        return bool(masks) and all(
            torch.equal(torch.broadcast_to(mask, wanted.shape), wanted) for mask in masks
        )
    except RuntimeError:  # a mask that does not broadcast to (B, 1, L, L)
        return False


def takes_the_first_positions(
    padded_block: Callable, block: nn.Module, x: Tensor, is_pad: Tensor, out: Tensor
) -> bool:
    """The experiment behind first_positions, where is_pad has pads elsewhere than at the end:
    True when, for every sentence b with n_b real tokens, the answer's output ``out`` at its
    first n_b positions is the block's output on those positions alone, and the answer is right
    on the same sentences with their real tokens moved, in order, before their pads."""
    length = is_pad.shape[1]
    real = (~is_pad).sum(1)
    first = torch.arange(length)[None, :] < real[:, None]  # (B, L): the first n_b positions
    if torch.equal(first, ~is_pad):
        return False
    with torch.no_grad():
        for b, n in enumerate(real.tolist()):
            if n and not is_close(out[b, :n], block(x[b : b + 1, :n])[0][0], atol=ATOL):
                return False
        # The same sentences padded at the end: each row's real tokens first, in their order.
        order = torch.argsort(is_pad.int(), dim=1, stable=True)
        packed = torch.gather(x, 1, order[..., None].expand_as(x))
        try:
            right = padded_block(block, packed.clone(), ~first)
        except Exception:  # noqa: BLE001 - an answer that raises here shows nothing
            return False
    return (
        isinstance(right, Tensor)
        and right.shape == x.shape
        and all(
            is_close(right[b, :n], want, atol=ATOL)
            for b, (n, want) in enumerate(
                zip(real.tolist(), alone(block, packed, ~first), strict=True)
            )
        )
    )


def alone(block: nn.Module, x: Tensor, is_pad: Tensor) -> list[Tensor]:
    """Per sentence, the block's output (n_real, d_model) on its real tokens alone."""
    with torch.no_grad():
        return [block(x[b, ~is_pad[b]][None])[0][0] for b in range(len(x))]


def describe(is_pad: Tensor, sentence: int) -> str:
    """Sentence ``sentence``'s padding, in words: which positions of how many are pads."""
    pads = is_pad[sentence].nonzero().flatten().tolist()
    return (
        f"sentence {sentence} of {len(is_pad)}, {is_pad.shape[1]} positions, pads at {pads}"
        if pads
        else f"sentence {sentence} of {len(is_pad)}, {is_pad.shape[1]} positions, no pads"
    )


def judge_blindness(
    padded_block: Callable,
    block: nn.Module,
    x: Tensor,
    is_pad: Tensor,
    what: str,
    generator: torch.Generator,
) -> None:
    """Fail unless at every real position the answer gives the block's output on the sentence
    without its pads (the pad positions are the answer's to fill)."""
    with torch.no_grad():
        out = run_answer(padded_block, block, x, is_pad, what)
    bad = (~torch.isfinite(out)).any(-1) & ~is_pad
    if bad.any():
        where = [tuple(p) for p in bad.nonzero().tolist()[:4]]
        fail(f"the output holds non-finite values at real (sentence, position) {where} on {what}")
    expected = alone(block, x, is_pad)
    for b, want in enumerate(expected):
        got = out[b, ~is_pad[b]]
        if is_close(got, want, atol=ATOL):
            continue
        real = (~is_pad[b]).nonzero().flatten()
        gap = (got - want).abs().amax(-1)
        first = int(real[int((gap > ATOL).nonzero()[0])])
        if mask_from_lengths(padded_block, block, x, is_pad):
            fail(f"{PADDED['mask_from_lengths']} ({describe(is_pad, b)}, on {what})")
        if takes_the_first_positions(padded_block, block, x, is_pad, out):
            fail(f"{PADDED['first_positions']} ({describe(is_pad, b)}, on {what})")
        # The experiment: redraw only the pads' vectors and see whether the real positions move.
        redrawn = x.clone()
        redrawn[is_pad] = 5 * torch.randn(
            int(is_pad.sum()), x.shape[-1], generator=generator, dtype=x.dtype
        )
        with torch.no_grad():
            moved = run_answer(padded_block, block, redrawn, is_pad, what)[b, ~is_pad[b]]
        shift = float((moved - got).abs().max())
        observed = (
            f"with only the pads' vectors redrawn, the output at its real positions changed "
            f"by up to {shift:.3g}"
            if shift > ATOL
            else "redrawing only the pads' vectors left the output at its real positions unchanged"
        )
        fail(
            f"{describe(is_pad, b)}, on {what}: at real position {first} the output differs by "
            f"{float(gap.max()):.3g} from the block's output on the sentence with its pads "
            f"removed; {observed}"
        )


def report_non_finite(values: Tensor, is_pad: Tensor, name: str, what: str) -> None:
    """Fail, naming the first (sentence, position) pairs, where ``values`` (B, L, d) is not
    finite."""
    bad = (~torch.isfinite(values)).any(-1)
    if bad.any():
        where = [tuple(p) for p in bad.nonzero().tolist()[:4]]
        pads = [tuple(p) for p in is_pad.nonzero().tolist()[:6]]
        fail(
            f"{name} holds non-finite values at (sentence, position) {where} on {what}; pads at "
            f"(sentence, position) {pads}"
        )


def padded_batch(
    generator: torch.Generator, placement: str
) -> tuple[nn.Module, Tensor, Tensor, str]:
    """(a hidden reference block in eval mode, x (B, L, d_model), is_pad (B, L), its sizes in
    words): sentence 0 has no pads, every other sentence at least one real token and one pad,
    placed at the end, at the start, or anywhere."""
    b, length, h, d_k, d_ff = block_sizes(generator)
    d_model = h * d_k
    block = reference_block(d_model, h, d_ff, generator).double().eval()
    # Pads of a larger scale than the tokens: a pad that leaks in moves the output visibly.
    x = torch.randn(b, length, d_model, generator=generator, dtype=torch.float64)
    is_pad = torch.zeros(b, length, dtype=torch.bool)
    for sentence in range(1, b):
        n_real = int(torch.randint(1, length, (1,), generator=generator))
        if placement == "end":
            is_pad[sentence, n_real:] = True
        elif placement == "pads first":
            is_pad[sentence, : length - n_real] = True
        else:
            order = torch.randperm(length, generator=generator)
            is_pad[sentence, order[n_real:]] = True
    x[is_pad] *= 3
    sizes = f"d_model={d_model}, num_heads={h}, d_ff={d_ff}, B={b}, L={length}"
    return block, x, is_pad, sizes


@check(
    ASSIGNMENT,
    "test_padded_block",
    keeps=(
        "shape: the output has the shape and dtype of `x`",
        "blind to padding: at every real position, the output equals what the block "
        "gives that sentence alone with its pads removed",
    ),
)
def padded_block_is_blind_to_pads_at_the_end(ns: Namespace) -> None:
    """Pads at the end, as encode puts them: real positions as if the pads were not there."""
    padded_block = require(ns, "padded_block")
    g = hidden_generator("a03 padded block end")
    for _ in range(2):
        block, x, is_pad, sizes = padded_batch(g, "end")
        judge_blindness(padded_block, block, x, is_pad, f"{sizes}, pads at the end", g)


@check(
    ASSIGNMENT,
    "test_padded_block",
    weight=EDGE_CASES,
    keeps=(
        "Pads may sit anywhere in a row, not only at the end: a tokenizer that pads on "
        "the left puts them first",
    ),
)
def padded_block_is_blind_to_pads_anywhere(ns: Namespace) -> None:
    """Pads first (left padding), then pads between the tokens."""
    padded_block = require(ns, "padded_block")
    g = hidden_generator("a03 padded block anywhere")
    for placement in ("pads first", "pads anywhere"):
        block, x, is_pad, sizes = padded_batch(g, placement)
        judge_blindness(padded_block, block, x, is_pad, f"{sizes}, {placement}", g)


@check(
    ASSIGNMENT,
    "test_padded_block",
    weight=EDGE_CASES,
    keeps=(
        "finite: every output value is finite, at the pad positions too and for a "
        "sentence with no real token, and so are the gradients of the output with "
        "respect to `x`",
    ),
)
def padded_block_stays_finite_for_sentences_of_pads(ns: Namespace) -> None:
    """A sentence of pads only, beside one of a single real token; then one sentence, one pad.
    Every output value, at the pads too, and every gradient with respect to x is finite."""
    padded_block = require(ns, "padded_block")
    g = hidden_generator("a03 padded block empty")
    block, x, is_pad, sizes = padded_batch(g, "end")
    is_pad[-1] = True  # the last sentence is padding only
    is_pad[0, 1:] = True  # the first has one real token
    batches = [(block, x, is_pad, f"{sizes}, sentence {len(x) - 1} all pads")]
    batches.append((block, x[:1, :1], torch.ones(1, 1, dtype=torch.bool), "B=1, L=1, one pad"))
    for block, x, is_pad, what in batches:
        leaf = x.clone().requires_grad_()
        out = run_answer(padded_block, block, leaf, is_pad, what)
        report_non_finite(out.detach(), is_pad, "the output", what)
        if not out.requires_grad:
            continue  # an output that does not depend on x (all pads, say) has no gradient to judge
        (out * torch.randn(out.shape, generator=g, dtype=out.dtype)).sum().backward()
        if leaf.grad is not None:
            report_non_finite(
                leaf.grad, is_pad, "the gradient of the output with respect to x", what
            )
