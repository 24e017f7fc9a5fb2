"""Notebook 01's answers: scaled dot-product attention and its masks.

Mask convention, used everywhere in this package: a mask entry that is True
(or 1) means "this query may attend to this key"; False (or 0) hides the key.
This is the same convention as the boolean ``attn_mask`` of
``torch.nn.functional.scaled_dot_product_attention``.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch import Tensor


def causal_mask(n: int, device: torch.device | str | None = None) -> Tensor:
    """(n, n) bool mask where query i may attend to keys 0..i, itself included."""
    if not isinstance(n, int) or n < 1:
        raise ValueError(f"expected a positive integer sequence length, got {n!r}")
    return torch.ones(n, n, dtype=torch.bool, device=device).tril()


def padding_mask(token_ids: Tensor, pad_id: int) -> Tensor:
    """(B, 1, L_k) bool mask that hides padding keys; broadcasts over queries.

    token_ids: (B, L_k) integer ids. Queries at padded positions are not
    masked: their outputs are simply ignored downstream (e.g. by pooling).
    """
    if token_ids.dim() != 2 or token_ids.is_floating_point():
        raise ValueError(
            f"expected integer token ids of shape (B, L), got {token_ids.dtype} "
            f"of shape {tuple(token_ids.shape)}"
        )
    return (token_ids != pad_id).unsqueeze(-2)


def as_bool_mask(mask: Tensor) -> Tensor:
    """Return ``mask`` as bool, accepting bool or 0/1 integer or float masks."""
    if mask.dtype == torch.bool:
        return mask
    if not ((mask == 0) | (mask == 1)).all():
        raise ValueError(
            "expected a mask of True/False or 1/0 (1 = may attend); "
            f"got {mask.dtype} values other than 0 and 1"
        )
    return mask != 0


def _broadcasts_to(shape: torch.Size, target: torch.Size) -> bool:
    """Whether ``shape`` broadcasts to exactly ``target``.

    Not torch.broadcast_shapes: its first call imports sympy, 0.3 s in every fresh process.
    """
    if len(shape) > len(target):
        return False
    trailing = target[len(target) - len(shape) :]
    return all(size in (1, wanted) for size, wanted in zip(shape, trailing, strict=True))


def _check_qkv(q: Tensor, k: Tensor, v: Tensor) -> None:
    for name, t in (("q", q), ("k", k), ("v", v)):
        if t.dim() < 2:
            raise ValueError(f"expected {name} of shape (..., L, d), got {tuple(t.shape)}")
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(
            f"q and k must share d_k: q is {tuple(q.shape)} (..., L_q, d_k), "
            f"k is {tuple(k.shape)} (..., L_k, d_k)"
        )
    if k.shape[-2] != v.shape[-2]:
        raise ValueError(
            f"k and v must have the same number of keys L_k: k is {tuple(k.shape)}, "
            f"v is {tuple(v.shape)}"
        )


def scaled_dot_product_attention(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    mask: Tensor | None = None,
    *,
    scale: bool | float = True,
    dropout: Callable[[Tensor], Tensor] | None = None,
) -> tuple[Tensor, Tensor]:
    """softmax(q kᵀ / √d_k) v, returning (output, weights).

    q: (..., L_q, d_k), k: (..., L_k, d_k), v: (..., L_k, d_v); leading dims broadcast.
    mask: broadcastable to (..., L_q, L_k); True/1 = may attend.
    scale: True divides scores by √d_k, False leaves them unscaled, a float multiplies by it.
    dropout: applied to the weights, e.g. an ``nn.Dropout`` (so it follows train/eval mode).
    Returns output (..., L_q, d_v) and weights (..., L_q, L_k). A query whose keys
    are all masked gets zero weights and a zero output, never NaN.
    """
    _check_qkv(q, k, v)
    # Scaling q before the product touches L_q·d_k numbers instead of L_q·L_k.
    if scale is True:
        q = q * (1.0 / math.sqrt(q.shape[-1]))
    elif scale is not False:
        q = q * scale
    scores = q @ k.transpose(-2, -1)  # (..., L_q, L_k)

    has_visible_key = None
    if mask is not None:
        mask = as_bool_mask(mask)
        if not _broadcasts_to(mask.shape, scores.shape):
            raise ValueError(
                f"expected mask broadcastable to {tuple(scores.shape)} (..., L_q, L_k), "
                f"got {tuple(mask.shape)}"
            )
        # -inf, not a large negative number, so hidden keys get exactly zero weight.
        scores = scores.masked_fill(~mask, float("-inf"))
        # A row of only -inf would give NaN; give it finite scores now, zero weights below.
        # The check runs on the (small, unbroadcast) mask, so unaffected calls pay little.
        has_visible_key = mask.any(dim=-1, keepdim=True)
        if has_visible_key.all():
            has_visible_key = None
        else:
            scores = scores.masked_fill(~has_visible_key, 0.0)

    # torch.softmax subtracts the row maximum first, so adding a constant changes nothing.
    weights = torch.softmax(scores, dim=-1)
    if has_visible_key is not None:
        weights = weights.masked_fill(~has_visible_key, 0.0)
    if dropout is not None:
        weights = dropout(weights)
    return weights @ v, weights
