"""Seeded training and evaluation loops; CUDA when present, the CPU otherwise."""

from __future__ import annotations

import random
from collections.abc import Iterable

import numpy as np
import torch
from torch import Tensor, nn
from torch.nn import functional as F
from torch.utils.data import DataLoader, TensorDataset
from tqdm.auto import tqdm

from attention_lab.data import make_lm_blocks, sample_lm_batch


def pick_device() -> torch.device:
    """CUDA if a GPU is visible, else the CPU."""
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def seed_everything(seed: int) -> None:
    """Seed Python, NumPy and torch so a run repeats exactly on the same machine."""
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def make_loader(
    token_ids: Tensor, labels: Tensor, batch_size: int = 64, shuffle: bool = True, seed: int = 0
) -> DataLoader:
    """A DataLoader of (token_ids (B, L), labels (B,)) whose shuffling order is seeded."""
    if len(token_ids) != len(labels):
        raise ValueError(f"got {len(token_ids)} inputs but {len(labels)} labels")
    if labels.is_floating_point():
        raise TypeError(f"expected integer class labels, got {labels.dtype}")
    generator = torch.Generator().manual_seed(seed)
    return DataLoader(
        TensorDataset(token_ids, labels),
        batch_size=batch_size,
        shuffle=shuffle,
        generator=generator,
    )


@torch.no_grad()
def evaluate_classifier(
    model: nn.Module, loader: Iterable[tuple[Tensor, Tensor]], device: torch.device | None = None
) -> tuple[float, float]:
    """Mean cross-entropy and accuracy of ``model`` over ``loader``."""
    device = device or next(model.parameters()).device
    model.eval()
    total_loss, correct, count = 0.0, 0, 0
    for inputs, labels in loader:
        inputs, labels = inputs.to(device), labels.to(device)
        logits = model(inputs)
        total_loss += F.cross_entropy(logits, labels, reduction="sum").item()
        correct += (logits.argmax(dim=-1) == labels).sum().item()
        count += len(labels)
    if count == 0:
        raise ValueError("cannot evaluate on an empty loader")
    return total_loss / count, correct / count


def train_classifier(
    model: nn.Module,
    train_loader: DataLoader,
    val_loader: DataLoader | None = None,
    *,
    epochs: int = 5,
    lr: float = 3e-3,
    weight_decay: float = 0.01,
    seed: int = 0,
    device: torch.device | None = None,
    progress: bool = True,
) -> dict[str, list[float]]:
    """Train with AdamW and cross-entropy; returns per-epoch losses and accuracies."""
    seed_everything(seed)
    device = device or pick_device()
    model.to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=weight_decay)
    history: dict[str, list[float]] = {"train_loss": [], "train_accuracy": []}
    if val_loader is not None:
        history.update(val_loss=[], val_accuracy=[])
    for _ in tqdm(range(epochs), desc="epochs", disable=not progress):
        model.train()
        total_loss, correct, count = 0.0, 0, 0
        for inputs, labels in train_loader:
            inputs, labels = inputs.to(device), labels.to(device)
            logits = model(inputs)
            loss = F.cross_entropy(logits, labels)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            total_loss += loss.item() * len(labels)
            correct += (logits.argmax(dim=-1) == labels).sum().item()
            count += len(labels)
        history["train_loss"].append(total_loss / count)
        history["train_accuracy"].append(correct / count)
        if val_loader is not None:
            val_loss, val_accuracy = evaluate_classifier(model, val_loader, device)
            history["val_loss"].append(val_loss)
            history["val_accuracy"].append(val_accuracy)
    return history


@torch.no_grad()
def predict(model: nn.Module, token_ids: Tensor, batch_size: int = 256) -> Tensor:
    """Predicted class ids (N,) for token_ids (N, L)."""
    device = next(model.parameters()).device
    model.eval()
    batches = [
        model(chunk.to(device)).argmax(dim=-1).cpu() for chunk in token_ids.split(batch_size)
    ]
    return torch.cat(batches)


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
