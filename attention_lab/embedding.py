"""Token and learned position embeddings: the tools every model of the course starts with."""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn


def check_token_ids(token_ids: Tensor, vocab_size: int) -> None:
    """Raise a clear error unless token_ids are integers in [0, vocab_size)."""
    if token_ids.is_floating_point() or token_ids.dtype == torch.bool:
        raise TypeError(f"expected integer token ids, got {token_ids.dtype}")
    if token_ids.numel() and (token_ids.min() < 0 or token_ids.max() >= vocab_size):
        raise ValueError(
            f"expected token ids in [0, {vocab_size}), got ids from "
            f"{int(token_ids.min())} to {int(token_ids.max())}"
        )


class TokenEmbedding(nn.Module):
    """Token ids (B, L) -> vectors (B, L, d_model), scaled by √d_model as in the paper."""

    def __init__(self, vocab_size: int, d_model: int, padding_idx: int | None = None):
        super().__init__()
        self.vocab_size = vocab_size
        self.d_model = d_model
        self.embedding = nn.Embedding(vocab_size, d_model, padding_idx=padding_idx)
        # Start at std 1/√d_model so that, after the √d_model scale, tokens and positions
        # have comparable size; nn.Embedding's N(0, 1) would drown the positional signal.
        with torch.no_grad():
            nn.init.normal_(self.embedding.weight, std=d_model**-0.5)
            if padding_idx is not None:
                self.embedding.weight[padding_idx].zero_()

    def forward(self, token_ids: Tensor) -> Tensor:
        check_token_ids(token_ids, self.vocab_size)
        # The scale keeps embeddings on a par with the positional encoding added next.
        return self.embedding(token_ids) * math.sqrt(self.d_model)


class LearnedPositionalEmbedding(nn.Module):
    """Adds a trained vector per position to (B, L, d_model) inputs."""

    def __init__(self, max_len: int, d_model: int):
        super().__init__()
        self.max_len = max_len
        self.embedding = nn.Embedding(max_len, d_model)

    def forward(self, x: Tensor) -> Tensor:
        if x.dim() != 3 or x.shape[1] > self.max_len:
            raise ValueError(
                f"expected input of shape (B, L <= {self.max_len}, d_model), got {tuple(x.shape)}"
            )
        positions = torch.arange(x.shape[1], device=x.device)
        return x + self.embedding(positions)
