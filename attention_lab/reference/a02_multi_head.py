"""Notebook 02's answer: multi-head attention (split into heads, attend, merge, project)."""

from __future__ import annotations

from torch import Tensor, nn

from attention_lab.reference.a01_attention import scaled_dot_product_attention


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
