"""What several exercises of 06 share: shifted blocks, building modules, causal heads."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch import Tensor, nn

import attention_lab.reference.a01_attention as attention
import attention_lab.reference.a02_multi_head as attention_reference
import attention_lab.reference.a06_char_lm as encoder_reference
from autograder.authoring.closeness import is_close, not_finite
from autograder.authoring.diagnosis import squeezed_mistake
from autograder.authoring.hidden_draws import under_seed
from autograder.authoring.in_place_writes import inputs_kept, written_in_place_mistake
from autograder.authoring.mistakes import Mistake, catalogue
from autograder.authoring.operation_mistakes import (
    causal_mask_slips,
    mask_dropped,
    mistaken_outputs,
    plain_softmax_rows,
    scale_slips,
    softmax_over,
)
from autograder.authoring.reference_bans import TORCH_MULTI_HEAD
from autograder.authoring.registry import fail
from autograder.authoring.student_errors import explain

ASSIGNMENT = "06_char_lm"
squeezed_mistake(ASSIGNMENT)  # diagnose names it in every exercise
written_in_place_mistake(ASSIGNMENT)  # inputs_kept names it in every exercise
BANNED_ATTENTION = {
    **TORCH_MULTI_HEAD,
    "attention_lab's MultiHeadAttention": attention_reference.MultiHeadAttention,
    "attention_lab's CausalLM": encoder_reference.CausalLM,
}
LEAKS = (
    "future characters change earlier outputs: changing the input after position t changed the "
    "output at or before t"
)
# What was seen, not where: the leak may be in the head, in how the heads are combined or in the
# model around them (a wrong head is named first, by the dependency note of the cell).
MODEL_LEAKS = (
    "future characters change earlier logits: the model sees the future, so it can copy the "
    "character it is to predict"
)


# The named mistakes of CausalSelfAttentionHead, by family (autograder/authoring/mistakes.py):
# each is diagnosed only where the head's output matches that of its own weights with that
# mistake (head_outcomes).
HEAD = catalogue(
    ASSIGNMENT,
    "CausalSelfAttentionHead",
    {
        "mask polarity": {
            "no_mask": "no causal mask: every position attends to the future too; hide the keys "
            "j > t with -inf using the top-left L x L corner of the mask buffer",
            "transposed": "the causal mask is transposed: position t attends to t and the "
            "positions AFTER it; keep the lower triangle (keys j <= t), as causal_mask gives it",
            "reversed": "the causal mask is reversed: position t attends only to the positions "
            "after it, and the last position, which has none, gets NaN; masked_fill hides the "
            "scores where its mask is True, and causal_mask is True where a key may be seen, "
            "so the keys to hide are ~mask",
        },
        "off by one": {
            "hides_diagonal": "the mask hides the diagonal too, so position 0 sees nothing "
            "(NaN): a position may attend to itself (causal_mask keeps j <= t)",
        },
        "scaling": {
            "not_scaled": "scores are not scaled: divide q kᵀ by √head_size",
            "divided_by_d_k": "scores are divided by head_size instead of √head_size",
            "multiplied_by_sqrt_d_k": "scores are multiplied by √head_size instead of divided by "
            "it",
            "scaled_by_sqrt_d_model": "scores are scaled by √d_model instead of √head_size (the "
            "width of q and k)",
        },
        "softmax axis": {
            "softmax_over_queries": "the softmax runs over the queries (dim=-2): each row must "
            "be a distribution over the keys (dim=-1)",
        },
    },
)


def oracle_blocks(ids: Tensor, block_size: int) -> tuple[Tensor, Tensor]:
    """Non-overlapping blocks and their targets, written as a loop (independent of the reference)."""
    n_blocks = (len(ids) - 1) // block_size
    x = [ids[i * block_size : (i + 1) * block_size] for i in range(n_blocks)]
    y = [ids[i * block_size + 1 : (i + 1) * block_size + 1] for i in range(n_blocks)]
    return torch.stack(x), torch.stack(y)


def build(cls: type, *args: Any, seed: int, what: str, **kwargs: Any) -> nn.Module:
    """A fresh module in eval mode, built without touching the global RNG."""
    with under_seed(seed):
        module = cls(*args, **kwargs)
    if not isinstance(module, nn.Module):
        fail(f"{what} must be an nn.Module")
    return module.eval()


def check_projections(head: nn.Module, d_model: int, head_size: int) -> None:
    for name in ("query", "key", "value"):
        layer = getattr(head, name, None)
        if not isinstance(layer, nn.Linear):
            fail(f"the head needs self.{name} = nn.Linear(d_model, head_size, bias=False)")
        if layer.bias is not None:
            fail(f"self.{name} must have no bias: nn.Linear(d_model, head_size, bias=False)")
        if tuple(layer.weight.shape) != (head_size, d_model):
            fail(
                f"self.{name} must map d_model = {d_model} to head_size = {head_size}, got weight "
                f"shape {tuple(layer.weight.shape)}"
            )


def head_attention(
    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None, scale: bool | float = True
) -> Tensor:
    """The reference attention's output (B, L, head_size), NaN in a row that sees no key (as a
    plain softmax gives it: 0/0)."""
    out, _ = attention.scaled_dot_product_attention(q, k, v, mask, scale=scale)
    return plain_softmax_rows(out, mask)


def head_outcomes(head: nn.Module, x: Tensor) -> tuple[Tensor, dict[Mistake, Tensor]]:
    """The right causal-head output for x and the outputs of known mistakes (float64), each the
    reference attention on the head's own q, k, v with one operation slipped
    (autograder/authoring/operation_mistakes.py)."""
    x = x.double()
    with torch.no_grad():
        q, k, v = (x @ getattr(head, n).weight.double().T for n in ("query", "key", "value"))
        past = torch.ones(x.shape[1], x.shape[1], dtype=torch.bool).tril()
        arguments = {"q": q, "k": k, "v": v, "mask": past}
        slips = [
            softmax_over(-2, "softmax_over_queries"),
            *scale_slips(q.shape[-1], {"d_model": x.shape[-1]}),
            mask_dropped(),
            *(slip for slip in causal_mask_slips() if slip.name in HEAD),
        ]
        if x.shape[1] == 1:  # one position: hiding the diagonal, or the past, hides all
            slips = [slip for slip in slips if slip.name not in {"hides_diagonal", "reversed"}]
        return head_attention(**arguments), mistaken_outputs(HEAD, head_attention, arguments, slips)


def call_module(
    module: nn.Module,
    x: Tensor,
    what: str,
    block_size: int | None = None,
    *,
    answer: str,
    finite: bool = True,
    confirm: Callable[[Exception], str | None] | None = None,
) -> Tensor:
    """``module(x)``, failing with what went wrong, a write into x (which the checks use again)
    among it; a NaN or inf in the output fails too unless ``finite`` is False (the caller then
    tells which mistake gives that output). Where the call raises, ``confirm(error)`` is the
    mistake an experiment found that raises that very error, said before the error itself, or
    None. ``answer``: the class, as the statement names it."""
    with inputs_kept(answer, x=x):
        try:
            out = module(x)
        except NotImplementedError:
            raise
        except Exception as error:
            shorter = ""
            if block_size is not None and x.shape[1] < block_size:
                shorter = f" (L = {x.shape[1]} < block_size = {block_size})"
            raised = explain(error, what, f" on an input of shape {tuple(x.shape)}{shorter}")
            cause = confirm(error) if confirm is not None else None
            fail(f"{cause}\n{raised}" if cause else raised)
    if not isinstance(out, Tensor):
        fail(f"{what} must return a tensor, got {type(out).__name__}")
    if finite and not torch.isfinite(out).all():
        fail(not_finite(out, f"{what}'s output"))
    return out


def future_leak(module: nn.Module, x: Tensor, g: torch.Generator, atol: float = 1e-5) -> bool:
    """True if changing positions after t changes the output at some position <= t."""
    with torch.no_grad():
        out = module(x)
        for t in range(x.shape[1] - 1):
            changed = x.clone()
            changed[:, t + 1 :] = torch.randn(changed[:, t + 1 :].shape, generator=g, dtype=x.dtype)
            if not is_close(module(changed)[:, : t + 1], out[:, : t + 1], atol=atol):
                return True
    return False
