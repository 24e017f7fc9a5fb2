"""Training tools: the device, seeds, loaders, warm-up, word dropout, length-bucketed batches,
evaluation and prediction, a held-out split by sentence and the choice of an epoch on it; CUDA
when present, the CPU otherwise.

The training step that notebook 05 asks students to write, and the loops built on it, are
reference answers: see `attention_lab.reference.a05_sentiment` and `a06_char_lm`.
"""

from __future__ import annotations

import copy
import math
import random
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar

import numpy as np
import torch
from torch import Tensor, nn
from torch.nn import functional as F
from torch.optim.lr_scheduler import LambdaLR
from torch.utils.data import DataLoader, TensorDataset

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


def linear_warmup(optimizer: torch.optim.Optimizer, warmup_steps: int) -> LambdaLR:
    """Scale the learning rate by step/warmup_steps for the first steps, then keep it.

    Adam's first updates rest on poor estimates of the gradient's variance; a short ramp keeps
    them small. Call its ``step()`` after every ``optimizer.step()``.
    """
    if not isinstance(warmup_steps, int) or isinstance(warmup_steps, bool) or warmup_steps < 1:
        raise ValueError(f"expected warmup_steps to be a positive int, got {warmup_steps!r}")
    return LambdaLR(optimizer, lambda step: min(1.0, (step + 1) / warmup_steps))


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


@torch.no_grad()
def predict(model: nn.Module, token_ids: Tensor, batch_size: int = 256) -> Tensor:
    """Predicted class ids (N,) for token_ids (N, L)."""
    device = next(model.parameters()).device
    model.eval()
    batches = [
        model(chunk.to(device)).argmax(dim=-1).cpu() for chunk in token_ids.split(batch_size)
    ]
    return torch.cat(batches)


class HasText(Protocol):
    """Anything with a ``text`` of whitespace-separated words, such as a ``SentimentExample``."""

    text: str


E = TypeVar("E", bound=HasText)
Words = tuple[str, ...]


def _spans(words: Words) -> Iterator[Words]:
    """Every contiguous run of one or more of ``words``, ``words`` itself included."""
    for start in range(len(words)):
        for stop in range(start + 1, len(words) + 1):
            yield words[start:stop]


def _sentences(phrases: Iterable[Words]) -> list[Words]:
    """The distinct phrases that lie inside no other phrase, in the order they first appear."""
    distinct = dict.fromkeys(phrases)
    inside_another: set[Words] = set()
    # Longest first: a phrase inside a shorter container is also inside that container's
    # container, so only the spans of sentences need listing, and only those that are phrases.
    for phrase in sorted(distinct, key=len, reverse=True):
        if phrase not in inside_another:
            inside_another.update(s for s in _spans(phrase) if s in distinct and s != phrase)
    return [phrase for phrase in distinct if phrase not in inside_another]


def held_out_sentences(
    examples: Sequence[E], fraction: float, seed: int
) -> tuple[list[E], list[E]]:
    """(train, held_out): ``fraction`` of the sentences (at least one) held out at random, seeded,
    and every phrase that lies inside one of them dropped from training; each in file order.

    A file of phrases such as SST-2's holds each sentence and many of its sub-phrases. Holding
    out phrases at random would leave many of them inside a sentence kept for training, so
    held-out accuracy would measure recall of trained words. A sentence here is a phrase inside
    no longer phrase of the file; "inside" means a contiguous run of its words.
    """
    if not 0 < fraction < 1:
        raise ValueError(f"expected a held-out fraction between 0 and 1, got {fraction}")
    words = [tuple(example.text.split()) for example in examples]
    sentences = _sentences(words)
    if len(sentences) < 2:
        raise ValueError(f"cannot hold out part of {len(sentences)} sentence(s): need 2 or more")
    count = max(1, round(fraction * len(sentences)))
    held = set(random.Random(seed).sample(sentences, count))
    inside_held = {span for sentence in held for span in _spans(sentence)}
    train = [e for e, w in zip(examples, words, strict=True) if w not in inside_held]
    return train, [e for e, w in zip(examples, words, strict=True) if w in held]


@dataclass(frozen=True)
class EpochChoice:
    """The epoch chosen on held-out data (1-based) and the held-out accuracy after each epoch."""

    epoch: int
    held_out_accuracy: list[float]


def train_choosing_epoch(
    model: nn.Module,
    train_one_epoch: Callable[[], None],
    held_out: Iterable[tuple[Tensor, Tensor]],
    epochs: int,
) -> EpochChoice:
    """Run ``train_one_epoch`` ``epochs`` times, score ``model`` on ``held_out`` after each, and
    leave it with the weights of the best epoch (the earliest of ties).

    Choose the epoch on data held out from training, never on the data you report: the best of
    several epochs on the test data is an optimistic estimate of that data's accuracy.
    """
    if epochs < 1:
        raise ValueError(f"expected at least one epoch, got {epochs}")
    accuracies, best_state = [], None
    for _ in range(epochs):
        train_one_epoch()
        accuracies.append(evaluate_classifier(model, held_out)[1])
        if accuracies[-1] > max(accuracies[:-1], default=-1.0):
            best_state = copy.deepcopy(model.state_dict())
    model.load_state_dict(best_state)
    return EpochChoice(accuracies.index(max(accuracies)) + 1, accuracies)
