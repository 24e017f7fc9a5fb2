"""Our projection weights into torch's ``nn.MultiheadAttention``, to compare the two."""

from __future__ import annotations

import torch
from torch import Tensor, nn


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
