"""The trained `model` (test_trained_loss): once the training cell is seen to have run to the
end, causal, and well below a uniform guess."""

from __future__ import annotations

import math
from collections.abc import Callable
from numbers import Real
from typing import Any

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
from autograder.authoring.student_errors import explain
from autograder.checks.a06_char_lm.shared import ASSIGNMENT, MODEL_LEAKS, oracle_blocks

# The trained model's held-out loss must be below 0.6 ln V (notebook, section 8).
TRAINED_FRACTION = 0.6


def held_out_ids() -> tuple[Tensor, int]:
    """The last 10% of the corpus, re-read and re-encoded here, and its vocabulary size."""
    text = load_char_corpus("fables")
    tokenizer = CharTokenizer(text)
    ids = torch.tensor(tokenizer.encode(text), dtype=torch.long)
    return ids[int(0.9 * len(ids)) :], tokenizer.vocab_size


def are_distributions(outputs: Tensor) -> bool:
    """Whether every row of ``outputs`` (..., V) is a probability distribution: values in
    [0, 1] that sum to 1."""
    in_range = bool(((outputs >= 0) & (outputs <= 1)).all())
    return in_range and bool(torch.allclose(outputs.sum(-1), torch.ones(()), atol=1e-4))


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


# What the notebook's training cell names: STEPS, then `model`, then `history`, which
# train(model, STEPS) returns once its last step is done.
RECORDED = ("train_loss", "val_loss")


def unfinished_training(ns: Namespace) -> str | None:
    """What shows that the training cell stopped before its end, or None where it ran to the end
    or left no record in the notebook's form to tell from."""
    if "STEPS" not in ns or not isinstance(ns["STEPS"], int):
        return None
    steps = ns["STEPS"]
    if "history" not in ns:
        return (
            f"the training cell did not run to the end: it defines STEPS = {steps} but no "
            "`history`, which train(model, STEPS) returns after its last step, so the model "
            "judged here is whatever the cell left when it stopped (the cell's output shows "
            "what stopped it)"
        )
    history = ns["history"]
    if not (
        isinstance(history, dict)
        and all(isinstance(history.get(key), list) for key in ("step", *RECORDED))
    ):
        return None
    if not history["step"] or history["step"][-1] != steps:
        last = history["step"][-1] if history["step"] else 0
        return (
            f"the training cell did not run to the end: `history` records step {last} last, "
            f"of its STEPS = {steps}, so the model judged here is whatever the cell left"
        )
    for key in RECORDED:
        for step, value in zip(history["step"], history[key], strict=False):
            if isinstance(value, Real) and not math.isfinite(value):
                return (
                    f"the training cell ran its {steps} steps, but history[{key!r}] is {value} "
                    f"at step {step}: this cell judges a model whose losses stayed finite"
                )
    return None


def training_step_error(ns: Namespace, lm_loss: Callable[[Tensor, Tensor], Any]) -> str | None:
    """What a training step's loss raises when run here on the judged model, on 4 blocks of
    the held-out text (the model's forward, then ``lm_loss``), or None where neither raises."""
    if "model" not in ns:
        return None
    model, device, block_size = trained_model(ns)
    held_out, _ = held_out_ids()
    x, y = oracle_blocks(held_out[: 4 * block_size + 1], block_size)
    with torch.no_grad():
        try:
            logits = model(x.to(device))
        except NotImplementedError:
            raise
        except Exception as error:  # noqa: BLE001 - what it raised is the observation
            return explain(error, "your model", f" on ids of shape {tuple(x.shape)}")
        try:
            lm_loss(logits, y.to(device))
        except NotImplementedError:
            raise
        except Exception as error:  # noqa: BLE001 - what it raised is the observation
            shape = tuple(getattr(logits, "shape", ()))
            return explain(
                error,
                "lm_loss",
                f" on logits of shape {shape} and targets of shape {tuple(y.shape)}",
            )
    return None


# A gate, and first: a model whose training stopped scores what it scores for that reason,
# whatever its code; only the cause seen here, in a training step run on it, is named with it.
# The model learnt with the student's lm_loss, this cell's exercise: an lm_loss that calls the
# reference voids this cell too (require brings its ban).
@check(
    ASSIGNMENT,
    "test_trained_loss",
    gate=True,
    keeps=("`test_trained_loss` grades your trained `model` (the one the training cell produces)",),
)
def training_ran_to_the_end(ns: Namespace) -> None:
    lm_loss = require(ns, "lm_loss")
    stopped = unfinished_training(ns)
    if stopped is None:
        return
    raised = training_step_error(ns, lm_loss)
    if raised:
        fail(f"{stopped}. Run here on 4 blocks of held-out text, a training step raises:\n{raised}")
    fail(stopped)


# A gate: a model that sees the next character beats the uniform guess without learning.
@check(
    ASSIGNMENT,
    "test_trained_loss",
    gate=True,
    keeps=(
        "It also repeats the future-perturbation check on the trained model: a low loss "
        "bought by peeking at the future does not count.",
    ),
)
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


@check(ASSIGNMENT, "test_trained_loss", keeps=(r"requires a mean loss below $0.6 \ln V$",))
def trained_model_beats_the_uniform_guess(ns: Namespace) -> None:
    model, device, block_size = trained_model(ns)
    held_out, vocab = held_out_ids()
    x, y = oracle_blocks(held_out, block_size)
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            total, distributions = 0.0, True
            for xb, yb in zip(x.split(64), y.split(64), strict=True):
                logits = model(xb.to(device)).float().cpu()
                if logits.shape != (*xb.shape, vocab):
                    fail(
                        f"the trained model must give (B, L, V) = {(*xb.shape, vocab)} logits, got "
                        f"{tuple(logits.shape)} (V is the corpus's vocabulary size)"
                    )
                distributions = distributions and are_distributions(logits)
                total += F.cross_entropy(
                    logits.reshape(-1, vocab), yb.reshape(-1), reduction="sum"
                ).item()
    finally:
        model.train(was_training)
    loss, uniform = total / y.numel(), math.log(vocab)
    if loss >= TRAINED_FRACTION * uniform and distributions:
        # cross_entropy(z)[y] = logsumexp(z) - z_y >= ln V - 1 for every z in [0, 1]^V
        fail(
            f"the trained model's outputs are probabilities: every one is in [0, 1] and they "
            f"sum to 1 over the V = {vocab} ids at every held-out position. cross_entropy reads "
            f"them as logits, and on logits in [0, 1] it is at least ln V - 1 = "
            f"{uniform - 1:.2f} nats (held-out loss {loss:.2f} nats; the cell asks for less "
            f"than {TRAINED_FRACTION} ln V = {TRAINED_FRACTION * uniform:.2f})"
        )
    if loss > uniform:
        fail(
            f"the trained model's held-out loss, {loss:.2f} nats, is above ln V = "
            f"{uniform:.2f}, the loss of a uniform guess: the model predicts the held-out text worse than that "
            "guess"
        )
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
