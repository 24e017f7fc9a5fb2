"""Notebook 04's answer: a stack of encoder blocks."""

from __future__ import annotations

from torch import Tensor, nn

from attention_lab.reference.a03_transformer_block import EncoderBlock, LayerNorm


class TransformerEncoder(nn.Module):
    """A stack of ``num_layers`` independent EncoderBlocks."""

    def __init__(
        self,
        num_layers: int,
        d_model: int,
        num_heads: int,
        d_ff: int,
        dropout: float = 0.0,
        norm_first: bool = False,
    ):
        super().__init__()
        if num_layers < 1:
            raise ValueError(f"expected num_layers >= 1, got {num_layers}")
        self.layers = nn.ModuleList(
            EncoderBlock(d_model, num_heads, d_ff, dropout, norm_first) for _ in range(num_layers)
        )
        # Pre-norm leaves the residual stream unnormalised, so it needs one last norm.
        self.final_norm = LayerNorm(d_model) if norm_first else nn.Identity()

    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, list[Tensor]]:
        """x: (B, L, d_model) -> (B, L, d_model), plus one (B, H, L, L) map per layer."""
        all_weights = []
        for layer in self.layers:
            x, weights = layer(x, mask)
            all_weights.append(weights)
        return self.final_norm(x), all_weights
