"""The trained `model` (test_trained_loss): causal, and well below a uniform guess."""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn
from torch.nn import functional as F

from attention_lab.data import load_char_corpus
from attention_lab.tokenizer import CharTokenizer
from autograder.authoring.closeness import is_close
from autograder.authoring.dependencies import depends_on
from autograder.authoring.hidden_draws import hidden_generator
from autograder.authoring.registry import Namespace, check, fail
from autograder.authoring.requiring import require
from autograder.checks.a06_char_lm.shared import ASSIGNMENT, MODEL_LEAKS, oracle_blocks

# The trained model's held-out loss must be below 0.6 ln V (notebook, section 8).
TRAINED_FRACTION = 0.6


def held_out_ids() -> tuple[Tensor, int]:
    """The last 10% of the corpus, re-read and re-encoded here, and its vocabulary size."""
    text = load_char_corpus("fables")
    tokenizer = CharTokenizer(text)
    ids = torch.tensor(tokenizer.encode(text), dtype=torch.long)
    return ids[int(0.9 * len(ids)) :], tokenizer.vocab_size


def trained_model(ns: Namespace) -> tuple[nn.Module, torch.device, int]:
    model = require(ns, "model", nn.Module)
    block_size = getattr(model, "block_size", None)
    if not isinstance(block_size, int):
        fail(
            f"the trained `model`'s block_size is {block_size!r}, not an integer (CharLM keeps it as self.block_size)"
        )
    try:
        device = next(model.parameters()).device
    except StopIteration:
        fail("your trained `model` has no parameters (model.parameters() is empty)")
    return model, device, block_size


# The trained `model` is the student's CharLM, trained by the notebook's loop on the student's
# lm_loss (this cell's own exercise): students of 06 have no reference loop.
depends_on(
    ASSIGNMENT,
    ["test_trained_loss"],
    {
        "causal_head": ["test_causal_head"],
        "multihead_causal": ["test_multihead_causal"],
        "charlm": ["test_charlm", "test_charlm_causality"],
    },
)


# A gate: a model that sees the next character beats the uniform guess without learning.
@check(ASSIGNMENT, "test_trained_loss", gate=True)
def trained_model_is_causal(ns: Namespace) -> None:
    model, device, block_size = trained_model(ns)
    held_out, vocab = held_out_ids()
    g = hidden_generator("a06 trained causality")
    starts = torch.randint(0, len(held_out) - block_size, (4,), generator=g)
    idx = torch.stack([held_out[s : s + block_size] for s in starts.tolist()])
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            logits = model(idx.to(device)).cpu()
            for t in sorted({0, block_size // 3, block_size // 2, block_size - 2}):
                changed = idx.clone()
                changed[:, t + 1 :] = torch.randint(
                    0, vocab, changed[:, t + 1 :].shape, generator=g
                )
                moved = model(changed.to(device)).cpu()
                if not is_close(moved[:, : t + 1], logits[:, : t + 1], atol=1e-4):
                    fail(
                        f"{MODEL_LEAKS}; a low loss bought by peeking at the next character does "
                        "not count"
                    )
    finally:
        model.train(was_training)


@check(ASSIGNMENT, "test_trained_loss")
def trained_model_beats_the_uniform_guess(ns: Namespace) -> None:
    model, device, block_size = trained_model(ns)
    held_out, vocab = held_out_ids()
    x, y = oracle_blocks(held_out, block_size)
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            total = 0.0
            for xb, yb in zip(x.split(64), y.split(64), strict=True):
                logits = model(xb.to(device)).float().cpu()
                if logits.shape != (*xb.shape, vocab):
                    fail(
                        f"the trained model must give (B, L, V) = {(*xb.shape, vocab)} logits, got "
                        f"{tuple(logits.shape)} (V is the corpus's vocabulary size)"
                    )
                total += F.cross_entropy(
                    logits.reshape(-1, vocab), yb.reshape(-1), reduction="sum"
                ).item()
    finally:
        model.train(was_training)
    loss, uniform = total / y.numel(), math.log(vocab)
    if loss >= 0.9 * uniform:
        fail(
            f"the trained model's held-out loss, {loss:.2f} nats, is close to ln V = "
            f"{uniform:.2f}, the loss of a uniform guess"
        )
    if loss >= TRAINED_FRACTION * uniform:
        fail(
            f"held-out loss {loss:.3f} nats is not below {TRAINED_FRACTION} ln V = "
            f"{TRAINED_FRACTION * uniform:.3f} (a uniform guess: {uniform:.3f})"
        )
