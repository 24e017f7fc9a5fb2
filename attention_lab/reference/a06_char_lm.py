"""Notebook 06's answers: next-token blocks, the tiny GPT with its sampling, and its training
loop."""

from __future__ import annotations

import torch
from torch import Tensor, nn
from torch.nn import functional as F
from tqdm.auto import tqdm

from attention_lab.data import check_lm_ids, sample_lm_batch
from attention_lab.embedding import LearnedPositionalEmbedding, check_token_ids
from attention_lab.reference.a01_attention import causal_mask
from attention_lab.reference.a04_depth import TransformerEncoder
from attention_lab.training import pick_device, seed_everything


def make_lm_blocks(ids: torch.Tensor, block_size: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Cut `ids` into non-overlapping (N, block_size) inputs and their next-token targets."""
    check_lm_ids(ids, block_size)
    n_blocks = (len(ids) - 1) // block_size  # the last target needs one id beyond its block
    x = ids[: n_blocks * block_size].reshape(n_blocks, block_size)
    y = ids[1 : n_blocks * block_size + 1].reshape(n_blocks, block_size)
    return x, y


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


def train_language_model(
    model: nn.Module,
    train_ids: Tensor,
    val_ids: Tensor | None = None,
    *,
    steps: int = 500,
    batch_size: int = 32,
    lr: float = 3e-3,
    eval_every: int = 100,
    seed: int = 0,
    device: torch.device | None = None,
    progress: bool = True,
) -> dict[str, list[float]]:
    """Train a next-token model on random blocks of a 1-D id tensor.

    ``model.block_size`` sets the block length; the model maps (B, L) ids to (B, L, V) logits.
    Returns "step", "train_loss" and, with val_ids, "val_loss" every ``eval_every`` steps.
    """
    seed_everything(seed)
    device = device or pick_device()
    model.to(device)
    generator = torch.Generator().manual_seed(seed)
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
    history: dict[str, list[float]] = {"step": [], "train_loss": []}
    if val_ids is not None:
        history["val_loss"] = []
    running, seen = 0.0, 0
    for step in tqdm(range(1, steps + 1), desc="steps", disable=not progress):
        model.train()
        x, y = sample_lm_batch(train_ids, model.block_size, batch_size, generator)
        x, y = x.to(device), y.to(device)
        logits = model(x)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        running, seen = running + loss.item(), seen + 1
        if step % eval_every == 0 or step == steps:
            history["step"].append(step)
            history["train_loss"].append(running / seen)
            running, seen = 0.0, 0
            if val_ids is not None:
                history["val_loss"].append(evaluate_language_model(model, val_ids, device=device))
    return history


@torch.no_grad()
def evaluate_language_model(
    model: nn.Module, ids: Tensor, batch_size: int = 64, device: torch.device | None = None
) -> float:
    """Mean next-token cross-entropy over all non-overlapping blocks of ``ids``."""
    device = device or next(model.parameters()).device
    model.eval()
    x, y = make_lm_blocks(ids, model.block_size)
    total, count = 0.0, 0
    for xb, yb in zip(x.split(batch_size), y.split(batch_size), strict=True):
        logits = model(xb.to(device))
        total += F.cross_entropy(
            logits.reshape(-1, logits.shape[-1]), yb.to(device).reshape(-1), reduction="sum"
        ).item()
        count += yb.numel()
    return total / count
