"""Notebook 05's answers: the sentiment classifier, its optimizer and training step, and the
training loop built on them.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable

import torch
from torch import Tensor, nn
from torch.nn import functional as F
from torch.optim import AdamW
from torch.optim.lr_scheduler import LRScheduler
from tqdm.auto import tqdm

from attention_lab.embedding import TokenEmbedding
from attention_lab.reference.a01_attention import padding_mask
from attention_lab.reference.a03_transformer_block import SinusoidalPositionalEncoding
from attention_lab.reference.a04_depth import TransformerEncoder
from attention_lab.training import (
    evaluate_classifier,
    linear_warmup,
    pick_device,
    seed_everything,
    word_dropout,
)


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


def make_optimizer(model: nn.Module, lr: float = 3e-3, weight_decay: float = 0.01) -> AdamW:
    """AdamW over every parameter of ``model``: Adam, with weight decay kept out of the moments."""
    return AdamW(model.parameters(), lr=lr, weight_decay=weight_decay)


def train_step(
    model: nn.Module,
    inputs: Tensor,
    labels: Tensor,
    optimizer: torch.optim.Optimizer,
    max_grad_norm: float | None = 1.0,
    scheduler: LRScheduler | None = None,
) -> float:
    """One update on inputs (B, L) and labels (B,); returns the batch's loss before the update.

    Train mode (dropout on), fresh gradients, the gradient's global norm clipped to
    ``max_grad_norm`` (None: no clipping) before the step, then the scheduler's step.
    """
    model.train()
    loss = F.cross_entropy(model(inputs), labels)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    if max_grad_norm is not None:
        nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
    optimizer.step()
    if scheduler is not None:
        scheduler.step()
    return loss.item()


def train_classifier(
    model: nn.Module,
    train_loader: Iterable[tuple[Tensor, Tensor]],
    val_loader: Iterable[tuple[Tensor, Tensor]] | None = None,
    *,
    epochs: int = 5,
    lr: float = 3e-3,
    weight_decay: float = 0.01,
    max_grad_norm: float | None = 1.0,
    warmup_steps: int = 0,
    unk_rate: float = 0.02,
    restore_best: bool = True,
    seed: int = 0,
    device: torch.device | None = None,
    progress: bool = True,
) -> dict[str, list[float]]:
    """Train with `train_step` over ``epochs``; returns the per-epoch train loss (and val metrics).

    ``unk_rate``: word dropout (`word_dropout`) on WordTokenizer ids, so UNK gets trained.
    With ``val_loader`` and ``restore_best``, the model ends with the weights of the epoch of
    best validation accuracy (ties: lower loss), recorded as history["best_epoch"] = [epoch].
    """
    seed_everything(seed)
    device = device or pick_device()
    model.to(device)
    optimizer = make_optimizer(model, lr=lr, weight_decay=weight_decay)
    scheduler = linear_warmup(optimizer, warmup_steps) if warmup_steps else None
    generator = torch.Generator().manual_seed(seed)
    history: dict[str, list[float]] = {"train_loss": []}
    if val_loader is not None:
        history.update(val_loss=[], val_accuracy=[])
    best: tuple[float, float] | None = None
    best_state: dict[str, Tensor] | None = None
    for epoch in tqdm(range(1, epochs + 1), desc="epochs", disable=not progress):
        total_loss, count = 0.0, 0
        batches = tqdm(train_loader, desc=f"epoch {epoch}", leave=False, disable=not progress)
        for inputs, labels in batches:
            inputs = word_dropout(inputs, unk_rate, generator).to(device)
            labels = labels.to(device)
            total_loss += train_step(
                model, inputs, labels, optimizer, max_grad_norm, scheduler
            ) * len(labels)
            count += len(labels)
        if count == 0:
            raise ValueError("cannot train on an empty loader")
        history["train_loss"].append(total_loss / count)  # the mean over the epoch, dropout on
        if val_loader is None:
            continue
        val_loss, val_accuracy = evaluate_classifier(model, val_loader, device)
        history["val_loss"].append(val_loss)
        history["val_accuracy"].append(val_accuracy)
        if restore_best and (best is None or (val_accuracy, -val_loss) > best):
            best = (val_accuracy, -val_loss)
            best_state = copy.deepcopy(model.state_dict())
            history["best_epoch"] = [epoch]
    if best_state is not None:
        model.load_state_dict(best_state)
    return history
