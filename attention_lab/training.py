"""Seeded training and evaluation loops; CUDA when present, the CPU otherwise.

`train_step` is the one reference of a training step (AdamW, clipping, optional warm-up) that
notebook 05 asks students to write; `train_classifier` and `train_language_model` loop over it.
"""

from __future__ import annotations

import copy
import math
import random
from collections.abc import Iterable, Iterator

import numpy as np
import torch
from torch import Tensor, nn
from torch.nn import functional as F
from torch.optim import AdamW
from torch.optim.lr_scheduler import LambdaLR, LRScheduler
from torch.utils.data import DataLoader, TensorDataset
from tqdm.auto import tqdm

from attention_lab.data import make_lm_blocks, sample_lm_batch
from attention_lab.tokenizer import SPECIAL_TOKENS, UNK


def pick_device() -> torch.device:
    """CUDA if a GPU is visible, else the CPU."""
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def seed_everything(seed: int, num_threads: int | None = None) -> None:
    """Seed Python, NumPy and torch; a run then repeats exactly on the same machine and threads.

    Float sums are split across CPU threads, so results differ in the last bits, and after many
    steps visibly, when the thread count changes; pass ``num_threads`` to fix it as well.
    """
    if num_threads is not None:
        if not isinstance(num_threads, int) or isinstance(num_threads, bool) or num_threads < 1:
            raise ValueError(f"expected num_threads to be a positive int, got {num_threads!r}")
        torch.set_num_threads(num_threads)
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


def make_optimizer(model: nn.Module, lr: float = 3e-3, weight_decay: float = 0.01) -> AdamW:
    """AdamW over every parameter of ``model``: Adam, with weight decay kept out of the moments."""
    return AdamW(model.parameters(), lr=lr, weight_decay=weight_decay)


def linear_warmup(optimizer: torch.optim.Optimizer, warmup_steps: int) -> LambdaLR:
    """Scale the learning rate by step/warmup_steps for the first steps, then keep it.

    Adam's first updates rest on poor estimates of the gradient's variance; a short ramp keeps
    them small. Call its ``step()`` after every ``optimizer.step()``.
    """
    if not isinstance(warmup_steps, int) or isinstance(warmup_steps, bool) or warmup_steps < 1:
        raise ValueError(f"expected warmup_steps to be a positive int, got {warmup_steps!r}")
    return LambdaLR(optimizer, lambda step: min(1.0, (step + 1) / warmup_steps))


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


def word_dropout(
    token_ids: Tensor, rate: float, generator: torch.Generator | None = None
) -> Tensor:
    """token_ids (B, L) with each word id replaced by UNK with probability ``rate``.

    A vocabulary fitted on the training texts holds every training word, so without this the
    model never sees UNK in training, yet real test sentences are full of unseen words.
    Special ids (PAD, UNK, CLS) are never replaced.
    """
    if not 0.0 <= rate < 1.0:
        raise ValueError(f"expected rate in [0, 1), got {rate!r}")
    if rate == 0.0:
        return token_ids
    draws = torch.rand(token_ids.shape, generator=generator).to(token_ids.device)
    replace = (draws < rate) & (token_ids >= len(SPECIAL_TOKENS))
    return token_ids.masked_fill(replace, SPECIAL_TOKENS.index(UNK))


class LengthBucketedBatches:
    """Batches of sentences of similar length, each cut to its longest real sentence.

    Sentences are padded at the end to one width; sorting them by length within shuffled pools
    of ``pool_batches`` batches puts similar lengths together, so a batch of short sentences
    carries little padding. Every epoch draws a new seeded order. Yields (token_ids (B, L_b),
    labels (B,)) with L_b <= L; models that ignore padding give the same logits.
    """

    def __init__(
        self,
        token_ids: Tensor,
        labels: Tensor,
        pad_id: int,
        batch_size: int = 64,
        seed: int = 0,
        pool_batches: int = 50,
    ) -> None:
        if token_ids.dim() != 2 or len(token_ids) != len(labels):
            raise ValueError(
                f"expected token_ids (N, L) and labels (N,), got {tuple(token_ids.shape)} "
                f"and {tuple(labels.shape)}"
            )
        self.token_ids, self.labels, self.batch_size = token_ids, labels, batch_size
        self.lengths = (token_ids != pad_id).sum(dim=1)  # (N,): padding sits at the end
        self.pool_size = batch_size * pool_batches
        self.generator = torch.Generator().manual_seed(seed)

    def __len__(self) -> int:
        return math.ceil(len(self.labels) / self.batch_size)

    def __iter__(self) -> Iterator[tuple[Tensor, Tensor]]:
        order = torch.randperm(len(self.labels), generator=self.generator)
        batches = []
        for pool in order.split(self.pool_size):
            by_length = pool[torch.argsort(self.lengths[pool], stable=True)]
            batches += list(by_length.split(self.batch_size))
        for index in torch.randperm(len(batches), generator=self.generator).tolist():
            rows = batches[index]
            width = max(int(self.lengths[rows].max()), 1)
            yield self.token_ids[rows, :width], self.labels[rows]


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
