"""Transformer building blocks: embeddings, LayerNorm, encoder blocks, and two small models."""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn
from torch.nn import functional as F

from attention_lab.attention import MultiHeadAttention, causal_mask, padding_mask


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


def sinusoidal_table(max_len: int, d_model: int) -> Tensor:
    """(max_len, d_model) table with the paper's interleaved convention.

    PE[pos, 2i] = sin(pos / 10000^(2i/d_model)) and PE[pos, 2i+1] = cos(same angle),
    so even columns hold sines, odd columns cosines, and position 0 is [0, 1, 0, 1, ...].
    """
    position = torch.arange(max_len, dtype=torch.float32).unsqueeze(1)  # (max_len, 1)
    even_dims = torch.arange(0, d_model, 2, dtype=torch.float32)  # the 2i values
    angle = position / (10000.0 ** (even_dims / d_model))  # (max_len, ceil(d_model/2))
    table = torch.zeros(max_len, d_model)
    table[:, 0::2] = torch.sin(angle)
    table[:, 1::2] = torch.cos(angle[:, : d_model // 2])
    return table


class SinusoidalPositionalEncoding(nn.Module):
    """Adds the fixed sinusoidal table (see ``sinusoidal_table``) to (B, L, d_model) inputs."""

    def __init__(self, d_model: int, max_len: int = 512, dropout: float = 0.0):
        super().__init__()
        self.register_buffer("pe", sinusoidal_table(max_len, d_model), persistent=False)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: Tensor) -> Tensor:
        max_len, d_model = self.pe.shape
        if x.dim() != 3 or x.shape[-1] != d_model or x.shape[1] > max_len:
            raise ValueError(
                f"expected input of shape (B, L <= {max_len}, d_model={d_model}), "
                f"got {tuple(x.shape)}"
            )
        return self.dropout(x + self.pe[: x.shape[1]])


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


class LayerNorm(nn.Module):
    """Normalise the last dim to zero mean, unit variance, then scale and shift."""

    def __init__(self, d_model: int, eps: float = 1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d_model))  # gamma
        self.bias = nn.Parameter(torch.zeros(d_model))  # beta

    def forward(self, x: Tensor) -> Tensor:
        mean = x.mean(dim=-1, keepdim=True)
        # Biased variance (divide by d_model) with eps inside the root, as nn.LayerNorm does.
        variance = x.var(dim=-1, keepdim=True, unbiased=False)
        return (x - mean) / torch.sqrt(variance + self.eps) * self.weight + self.bias


class FeedForward(nn.Module):
    """Position-wise network: Linear(d_model, d_ff) -> ReLU -> dropout -> Linear(d_ff, d_model)."""

    def __init__(self, d_model: int, d_ff: int, dropout: float = 0.0):
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.dropout = nn.Dropout(dropout)
        self.linear2 = nn.Linear(d_ff, d_model)

    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(self.dropout(F.relu(self.linear1(x))))


class EncoderBlock(nn.Module):
    """Self-attention and feed-forward sublayers, each wrapped in a residual and a LayerNorm.

    Post-norm (the paper, default): x = norm(x + sublayer(x)).
    Pre-norm (``norm_first=True``, as in GPT-2): x = x + sublayer(norm(x)).
    """

    def __init__(
        self,
        d_model: int,
        num_heads: int,
        d_ff: int,
        dropout: float = 0.0,
        norm_first: bool = False,
    ):
        super().__init__()
        self.norm_first = norm_first
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout)
        self.feed_forward = FeedForward(d_model, d_ff, dropout)
        self.norm1 = LayerNorm(d_model)
        self.norm2 = LayerNorm(d_model)
        self.dropout1 = nn.Dropout(dropout)
        self.dropout2 = nn.Dropout(dropout)

    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        """x: (B, L, d_model) -> (B, L, d_model), plus weights (B, H, L, L)."""
        if self.norm_first:
            attended, weights = self.self_attn(self.norm1(x), mask=mask)
            x = x + self.dropout1(attended)
            x = x + self.dropout2(self.feed_forward(self.norm2(x)))
        else:
            attended, weights = self.self_attn(x, mask=mask)
            x = self.norm1(x + self.dropout1(attended))
            x = self.norm2(x + self.dropout2(self.feed_forward(x)))
        return x, weights


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


class SentimentClassifier(nn.Module):
    """Token ids (B, L) -> class logits (B, num_classes) with an encoder and a pooling step.

    pooling="cls" reads the first position (the tokenizer puts <cls> there);
    pooling="mean" averages the non-padding positions only.
    """

    def __init__(
        self,
        vocab_size: int,
        d_model: int = 64,
        num_heads: int = 4,
        num_layers: int = 2,
        d_ff: int = 128,
        num_classes: int = 2,
        max_len: int = 64,
        pad_id: int = 0,
        pooling: str = "mean",
        dropout: float = 0.1,
    ):
        super().__init__()
        if pooling not in ("cls", "mean"):
            raise ValueError(f"expected pooling 'cls' or 'mean', got {pooling!r}")
        self.pad_id = pad_id
        self.pooling = pooling
        self.embed = TokenEmbedding(vocab_size, d_model, padding_idx=pad_id)
        self.position = SinusoidalPositionalEncoding(d_model, max_len, dropout)
        self.encoder = TransformerEncoder(num_layers, d_model, num_heads, d_ff, dropout)
        self.head = nn.Linear(d_model, num_classes)

    def pool(self, hidden: Tensor, token_ids: Tensor) -> Tensor:
        """(B, L, d_model) -> (B, d_model), ignoring padding positions for mean pooling."""
        if self.pooling == "cls":
            return hidden[:, 0]
        keep = (token_ids != self.pad_id).unsqueeze(-1).to(hidden.dtype)  # (B, L, 1)
        return (hidden * keep).sum(dim=1) / keep.sum(dim=1).clamp(min=1.0)

    def forward(
        self, token_ids: Tensor, return_attention: bool = False
    ) -> Tensor | tuple[Tensor, list[Tensor]]:
        """token_ids: (B, L) -> logits (B, num_classes) [, per-layer weights (B, H, L, L)]."""
        if token_ids.dim() != 2:
            raise ValueError(f"expected token ids of shape (B, L), got {tuple(token_ids.shape)}")
        hidden = self.position(self.embed(token_ids))
        hidden, weights = self.encoder(hidden, padding_mask(token_ids, self.pad_id))
        logits = self.head(self.pool(hidden, token_ids))
        return (logits, weights) if return_attention else logits


class CausalLM(nn.Module):
    """A tiny GPT: token + learned position embeddings, pre-norm causal blocks, a vocab head."""

    def __init__(
        self,
        vocab_size: int,
        block_size: int,
        d_model: int = 64,
        num_heads: int = 4,
        num_layers: int = 2,
        d_ff: int | None = None,
        dropout: float = 0.0,
    ):
        super().__init__()
        self.vocab_size = vocab_size
        self.block_size = block_size
        self.token_embedding = nn.Embedding(vocab_size, d_model)
        self.position = LearnedPositionalEmbedding(block_size, d_model)
        self.blocks = TransformerEncoder(
            num_layers, d_model, num_heads, d_ff or 4 * d_model, dropout, norm_first=True
        )
        self.lm_head = nn.Linear(d_model, vocab_size)
        self.register_buffer("mask", causal_mask(block_size), persistent=False)

    def forward(self, idx: Tensor) -> Tensor:
        """idx: (B, L <= block_size) token ids -> next-token logits (B, L, vocab_size)."""
        if idx.dim() != 2 or idx.shape[1] > self.block_size:
            raise ValueError(
                f"expected token ids of shape (B, L <= {self.block_size}), got {tuple(idx.shape)}"
            )
        check_token_ids(idx, self.vocab_size)
        length = idx.shape[1]
        hidden = self.position(self.token_embedding(idx))
        hidden, _ = self.blocks(hidden, self.mask[:length, :length])
        return self.lm_head(hidden)

    def loss(self, idx: Tensor, targets: Tensor) -> Tensor:
        """Mean cross-entropy of predicting targets (B, L) from idx (B, L)."""
        logits = self(idx)
        return F.cross_entropy(logits.reshape(-1, self.vocab_size), targets.reshape(-1))

    @torch.no_grad()
    def generate(
        self,
        idx: Tensor,
        max_new_tokens: int,
        temperature: float = 1.0,
        top_k: int | None = None,
        generator: torch.Generator | None = None,
    ) -> Tensor:
        """Extend idx (B, L) by sampling max_new_tokens tokens; returns (B, L + max_new_tokens).

        temperature < 1 sharpens the distribution; top_k keeps only the k likeliest tokens.
        """
        if temperature <= 0:
            raise ValueError(f"expected temperature > 0, got {temperature}")
        if top_k is not None and not 1 <= top_k <= self.vocab_size:
            raise ValueError(f"expected top_k in [1, {self.vocab_size}], got {top_k}")
        for _ in range(max_new_tokens):
            logits = self(idx[:, -self.block_size :])[:, -1] / temperature  # (B, V)
            if top_k is not None:
                kth_best = torch.topk(logits, top_k).values[:, -1:]
                logits = logits.masked_fill(logits < kth_best, float("-inf"))
            probs = torch.softmax(logits, dim=-1)
            next_token = torch.multinomial(probs, 1, generator=generator)  # (B, 1)
            idx = torch.cat([idx, next_token], dim=1)
        return idx
