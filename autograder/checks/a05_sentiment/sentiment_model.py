"""Exercise 2, `SentimentModel` (test_sentiment_model; its gate guards test_padding_invariance)."""

from __future__ import annotations

from functools import partial

import torch
from torch import nn

from attention_lab.embedding import TokenEmbedding
from attention_lab.reference.a03_transformer_block import SinusoidalPositionalEncoding
from autograder.authoring.closeness import first_difference, is_close
from autograder.authoring.dependencies import depends_on
from autograder.authoring.diagnosis import diagnose
from autograder.authoring.hidden_draws import (
    draw_seed,
    eval_randomness,
    hidden_generator,
    random_sizes,
)
from autograder.authoring.reference_bans import ban
from autograder.authoring.registry import Namespace, check, fail
from autograder.authoring.requiring import require
from autograder.checks.a05_sentiment.shared import (
    ASSIGNMENT,
    BANNED,
    MODEL,
    PADDING_MASK_REVERSED,
    build_model,
    classifier_head,
    draw_ids,
    draw_unpadded_ids,
    matches_encoder,
    model_config,
    pooling_outcomes,
    run_model,
)

ban(
    ASSIGNMENT,
    "SentimentModel",
    BANNED,
    check_name="sentiment_model_does_not_use_the_reference",
    instances=("model",),  # the trained model of the held-out cells is a SentimentModel
)
# SentimentModel pools with the student's masked_mean, as the notebook asks; `model` is one.
depends_on(
    ASSIGNMENT,
    [
        "test_sentiment_model",
        "test_padding_invariance",
        "test_heldout_accuracy",
        "test_heldout_contrast",
    ],
    {"masked_mean": ["test_masked_mean"]},
)


EVAL_MODE = (
    "Evaluation switches the model to eval mode (dropout off, so that predictions are deterministic)",
)


def judge_eval_mode(cls: type, g: torch.Generator, dropout: float) -> None:
    """Fail unless a model built with ``dropout`` gives, in eval mode, the same logits under two
    random seeds; named where the logits follow the seed."""
    config = {**model_config(g), "dropout": dropout}
    model = build_model(cls, config, seed=draw_seed(g))
    ids = draw_ids(g, 3, 9, config["pad_id"], config["vocab_size"])
    randomness, _ = eval_randomness(partial(run_model, model, ids), draw_seed(g))
    if randomness == "seeded":
        fail(f"{MODEL['random_in_eval']} (dropout={dropout})")
    if randomness:
        fail(
            "in eval mode the model gives different logits at every call, even under the same "
            f"random seed (dropout={dropout}): in eval mode the logits must depend on the ids alone"
        )


# A gate, and first: the other checks build the model with dropout 0, and a model that draws at
# random even then would have their verdicts be chance (a rate written into the code).
@check(ASSIGNMENT, "test_sentiment_model", gate=True, keeps=EVAL_MODE)
@check(ASSIGNMENT, "test_padding_invariance", gate=True, keeps=EVAL_MODE)
def sentiment_model_is_deterministic_without_dropout(ns: Namespace) -> None:
    """Built with dropout 0, the model gives the same logits in eval mode whatever the seed."""
    judge_eval_mode(require(ns, "SentimentModel", type), hidden_generator("a05 model eval"), 0.0)


# Worth points, not a gate: with the model's own dropout left on in eval mode, the checks that
# build it with dropout 0 still judge it, and the padding cell is not charged for it again.
@check(ASSIGNMENT, "test_sentiment_model", keeps=EVAL_MODE)
def sentiment_model_is_deterministic_in_eval_mode(ns: Namespace) -> None:
    """Built with dropout, the model gives the same logits in eval mode whatever the seed."""
    judge_eval_mode(
        require(ns, "SentimentModel", type), hidden_generator("a05 model eval dropout"), 0.3
    )


@check(
    ASSIGNMENT,
    "test_sentiment_model",
    keeps=(
        "`forward(token_ids)` returns the logits `(B, num_classes)`; with "
        "`return_attention=True` it returns `(logits, weights)`, the encoder's list of "
        "per-layer weights",
        "store `self.pad_id`",
    ),
)
def sentiment_model_returns_logits_and_weights(ns: Namespace) -> None:
    """Logits (B, C), the same with return_attention=True, and one (B, H, L, L) map per layer
    whose rows sum to 1, on sentences without padding (which is test_padding_invariance's)."""
    cls = require(ns, "SentimentModel", type)
    g = hidden_generator("a05 model shapes")
    for _ in range(2):
        config = model_config(g)
        model = build_model(cls, config, seed=draw_seed(g))
        if getattr(model, "pad_id", None) != config["pad_id"]:
            fail(
                f"built with pad_id={config['pad_id']}, the model's self.pad_id is "
                f"{getattr(model, 'pad_id', 'missing')}: the statement keeps it as self.pad_id"
            )
        b, length = random_sizes(g, 2, low=3, high=11)
        ids = draw_unpadded_ids(g, b, length, config["pad_id"], config["vocab_size"])
        logits = run_model(model, ids)
        logits2, weights = run_model(model, ids, return_attention=True)
        c, h, n = config["num_classes"], config["num_heads"], config["num_layers"]
        if logits.shape != (b, c):
            if (fixed := fixed_class_count(cls, config, ids, g)) is not None:
                fail(fixed)
            fail(
                f"logits must be (B, num_classes) = {(b, c)}, got {tuple(logits.shape)} (ids of "
                f"shape {(b, length)}, d_model={config['d_model']})"
            )
        if not is_close(logits2, logits):
            fail("forward with return_attention=True must return the same logits as without it")
        if len(weights) != n:
            fail(
                f"expected the encoder's list of {n} weight tensors (one per layer), got {len(weights)}"
            )
        for w in weights:
            if w.shape != (b, h, length, length):
                fail(
                    f"each layer's weights must be (B, num_heads, L, L) = {(b, h, length, length)}, "
                    f"got {tuple(w.shape)}"
                )
        for w in weights:
            if not is_close(w.sum(-1), torch.ones(b, h, length)):
                # No key is a <pad> here, so a reversed mask hides every key.
                if matches_encoder(model, weights, ids, (ids == config["pad_id"]).unsqueeze(-2)):
                    fail(
                        f"{PADDING_MASK_REVERSED} (on sentences without <pad>, it hides every key)"
                    )
                fail("each query's attention weights must sum to 1 over the keys")


def fixed_class_count(
    cls: type, config: dict[str, int], ids: torch.Tensor, g: torch.Generator
) -> str | None:
    """MODEL's classes_hard_coded with what confirms it, or None: built with num_classes = C,
    C + 1 and C + 2, the model gives (B, K) logits each time, one K that is none of them (a
    model whose head follows num_classes never does)."""
    counts = [config["num_classes"] + extra for extra in range(3)]
    widths = set()
    for count in counts:
        try:
            model = build_model(cls, {**config, "num_classes": count}, seed=draw_seed(g))
            logits = run_model(model, ids)
        except NotImplementedError:
            raise
        except Exception:  # another failure than the count: nothing confirmed
            return None
        if logits.dim() != 2 or logits.shape[0] != len(ids):
            return None
        widths.add(int(logits.shape[1]))
    if len(widths) != 1 or widths & set(counts):
        return None
    return (
        f"{MODEL['classes_hard_coded']} (built with num_classes = "
        f"{', '.join(map(str, counts))}, it returns {widths.pop()} logits per sentence each time)"
    )


@check(
    ASSIGNMENT,
    "test_sentiment_model",
    keeps=(
        "`self.embed = TokenEmbedding(vocab_size, d_model, padding_idx=pad_id)`",
        "`self.position = SinusoidalPositionalEncoding(d_model, max_len, dropout)`",
        "pooling with your `masked_mean`, then a `nn.Linear(d_model, num_classes)`",
        "An alternative that is also correct: CLS pooling",
    ),
)
def sentiment_model_matches_its_parts(ns: Namespace) -> None:
    """logits = Linear(pool(encoder(position(embed(ids))))), pooling mean or <cls>, on sentences
    without padding."""
    cls = require(ns, "SentimentModel", type)
    g = hidden_generator("a05 model parts")
    config = model_config(g)
    model = build_model(cls, config, seed=draw_seed(g))
    for name in ("embed", "position", "encoder"):
        if not isinstance(getattr(model, name, None), nn.Module):
            fail(f"the model has no submodule `self.{name}`, which the statement names")
    if not isinstance(model.embed, TokenEmbedding):
        fail(
            "self.embed must be attention_lab's TokenEmbedding(vocab_size, d_model, padding_idx=pad_id): "
            "it scales the vectors to about unit size, on a par with the positions"
        )
    if not isinstance(model.position, SinusoidalPositionalEncoding):
        fail("self.position must be SinusoidalPositionalEncoding(d_model, max_len, dropout)")
    with torch.no_grad():
        scale = model.embed(torch.arange(config["vocab_size"])).std().item()
    if not 0.5 < scale < 2.0:
        fail(
            f"the token vectors of self.embed have standard deviation {scale:.2f}, not about 1 "
            "as TokenEmbedding's are"
        )
    b, length = random_sizes(g, 2, low=4, high=12)
    # Sentences without padding: a mistake in how padding is handled is charged once, by
    # test_padding_invariance, not again here through the pooling and the mask.
    ids = draw_unpadded_ids(g, b, length, config["pad_id"], config["vocab_size"])
    logits = run_model(model, ids)
    head = classifier_head(model, config["d_model"], config["num_classes"])
    if head is None:
        return  # an unusual head; the other checks still test the behaviour
    expected, mistakes = pooling_outcomes(model, head, ids, config["pad_id"])
    if mistakes is None:
        return
    diagnose(
        logits,
        expected,
        mistakes,
        "the logits are not Linear(masked_mean(encoder(position(embed(ids)), padding_mask))) "
        "(nor the <cls> output's), the diagram of Exercise 2",
    )


@check(
    ASSIGNMENT,
    "test_sentiment_model",
    keeps=(
        "`self.position = SinusoidalPositionalEncoding(d_model, max_len, dropout)`",
        "`forward(token_ids)` returns the logits `(B, num_classes)`",
    ),
)
def sentiment_model_sees_word_order_and_batches_independently(ns: Namespace) -> None:
    cls = require(ns, "SentimentModel", type)
    g = hidden_generator("a05 model order")
    config = model_config(g)
    model = build_model(cls, config, seed=draw_seed(g))
    pad_id, vocab = config["pad_id"], config["vocab_size"]
    b, length = random_sizes(g, 2, low=4, high=10)
    ids = draw_ids(g, b, length, pad_id, vocab)
    others = [i for i in range(vocab) if i != pad_id]
    ids[-1] = torch.tensor(others)[torch.randperm(len(others), generator=g)[:length]]
    logits = run_model(model, ids)
    for row in range(b):
        alone = run_model(model, ids[row : row + 1])
        if not is_close(alone, logits[row : row + 1]):
            fail(
                f"in eval mode, sentence {row} of a batch of {b} gets other logits alone than "
                f"inside the batch ({first_difference(alone, logits[row : row + 1])})"
            )
    swapped = ids[-1:].clone()
    swapped[0, [1, length - 2]] = ids[-1, [length - 2, 1]]
    if is_close(run_model(model, swapped), logits[-1:], atol=1e-6):
        fail(
            f"swapping the tokens at positions 1 and {length - 2} of a sentence of {length} leaves its "
            "logits unchanged: they do not depend on word order"
        )
