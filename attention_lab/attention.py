"""Scaled dot-product attention, masks, and multi-head attention (ours, and weights into torch's).

Mask convention, used everywhere in this package: a mask entry that is True
(or 1) means "this query may attend to this key"; False (or 0) hides the key.
This is the same convention as the boolean ``attn_mask`` of
``torch.nn.functional.scaled_dot_product_attention``.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch import Tensor, nn


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
        try:
            shape = torch.broadcast_shapes(mask.shape, scores.shape)
        except RuntimeError:
            shape = None
        if shape != scores.shape:
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


class MultiHeadAttention(nn.Module):
    """Multi-head attention: project, split into heads, attend, merge, project back."""

    def __init__(self, d_model: int, num_heads: int, dropout: float = 0.0, bias: bool = True):
        super().__init__()
        if num_heads < 1 or d_model % num_heads != 0:
            raise ValueError(
                f"d_model must be divisible by num_heads, got d_model={d_model}, "
                f"num_heads={num_heads}"
            )
        self.d_model = d_model
        self.num_heads = num_heads
        self.d_k = d_model // num_heads
        self.q_proj = nn.Linear(d_model, d_model, bias=bias)
        self.k_proj = nn.Linear(d_model, d_model, bias=bias)
        self.v_proj = nn.Linear(d_model, d_model, bias=bias)
        self.out_proj = nn.Linear(d_model, d_model, bias=bias)
        self.attn_dropout = nn.Dropout(dropout)

    def split_heads(self, x: Tensor) -> Tensor:
        """(B, L, d_model) -> (B, H, L, d_k)."""
        batch, length, _ = x.shape
        return x.view(batch, length, self.num_heads, self.d_k).transpose(1, 2)

    def merge_heads(self, x: Tensor) -> Tensor:
        """(B, H, L, d_k) -> (B, L, d_model)."""
        batch, _, length, _ = x.shape
        return x.transpose(1, 2).reshape(batch, length, self.d_model)

    def forward(
        self,
        query: Tensor,
        key: Tensor | None = None,
        value: Tensor | None = None,
        mask: Tensor | None = None,
    ) -> tuple[Tensor, Tensor]:
        """Attend from query (B, L_q, d_model) to key/value (B, L_k, d_model).

        key and value default to query (self-attention). mask: (L_q, L_k),
        (B, L_q, L_k) or (B, H, L_q, L_k), broadcastable; True = may attend.
        Returns output (B, L_q, d_model) and per-head weights (B, H, L_q, L_k).
        """
        key = query if key is None else key
        value = key if value is None else value
        for name, t in (("query", query), ("key", key), ("value", value)):
            if t.dim() != 3 or t.shape[-1] != self.d_model:
                raise ValueError(
                    f"expected {name} of shape (B, L, d_model={self.d_model}), got {tuple(t.shape)}"
                )
        if mask is not None and mask.dim() == 3:
            mask = mask.unsqueeze(1)  # (B, 1, L_q, L_k): the same mask for every head
        q = self.split_heads(self.q_proj(query))  # (B, H, L_q, d_k)
        k = self.split_heads(self.k_proj(key))  # (B, H, L_k, d_k)
        v = self.split_heads(self.v_proj(value))  # (B, H, L_k, d_k)
        heads, weights = scaled_dot_product_attention(q, k, v, mask, dropout=self.attn_dropout)
        return self.out_proj(self.merge_heads(heads)), weights


def load_into_torch_mha(
    target: nn.MultiheadAttention,
    w_q: Tensor,
    w_k: Tensor,
    w_v: Tensor,
    w_o: Tensor,
    b_q: Tensor | None = None,
    b_k: Tensor | None = None,
    b_v: Tensor | None = None,
    b_o: Tensor | None = None,
) -> nn.MultiheadAttention:
    """Copy the projections W_Q, W_K, W_V, W_O and their biases into ``target``; returns it.

    w_q, w_k, w_v, w_o: (d_model, d_model) each, in nn.Linear's (out_features, in_features)
    layout, so ``q = x @ w_q.T + b_q``. b_q, b_k, b_v, b_o: (d_model,) each; a missing bias is
    loaded as zeros. torch keeps W_Q, W_K, W_V stacked in ``in_proj_weight`` (3 * d_model, d_model),
    rows in that order, their biases in ``in_proj_bias`` (3 * d_model,), and W_O in ``out_proj``.
    """
    d_model = target.embed_dim
    if target.in_proj_weight is None:  # built with kdim or vdim != embed_dim
        raise ValueError(
            "expected an nn.MultiheadAttention whose keys and values have width embed_dim "
            "(no kdim or vdim), so that W_Q, W_K, W_V are stacked in in_proj_weight"
        )
    weights = {"w_q": w_q, "w_k": w_k, "w_v": w_v, "w_o": w_o}
    for label, weight in weights.items():
        if tuple(weight.shape) != (d_model, d_model):
            raise ValueError(
                f"expected {label} of shape (d_model, d_model) = {(d_model, d_model)} for an "
                f"nn.MultiheadAttention with embed_dim={d_model}, got {tuple(weight.shape)}"
            )
    biases = {"b_q": b_q, "b_k": b_k, "b_v": b_v, "b_o": b_o}
    given = [label for label, bias in biases.items() if bias is not None]
    if target.in_proj_bias is None and given:
        raise ValueError(f"target was built with bias=False, but {', '.join(given)} given")
    for label in given:
        if tuple(biases[label].shape) != (d_model,):
            raise ValueError(
                f"expected {label} of shape (d_model,) = ({d_model},), "
                f"got {tuple(biases[label].shape)}"
            )
    with torch.no_grad():
        target.in_proj_weight.copy_(torch.cat([w_q, w_k, w_v]))
        target.out_proj.weight.copy_(w_o)
        if target.in_proj_bias is not None:
            slots = (*target.in_proj_bias.chunk(3), target.out_proj.bias)
            for slot, bias in zip(slots, biases.values(), strict=True):
                if bias is None:
                    slot.zero_()
                else:
                    slot.copy_(bias)
    return target
