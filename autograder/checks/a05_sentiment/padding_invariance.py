"""Exercise 2, `SentimentModel` (test_padding_invariance): padding never changes the logits."""

from __future__ import annotations

import torch

from autograder.authoring.closeness import first_difference, is_close
from autograder.authoring.hidden_draws import draw_seed, hidden_generator, random_sizes
from autograder.authoring.registry import EDGE_CASES, Namespace, check, fail
from autograder.authoring.requiring import require
from autograder.checks.a05_sentiment.shared import (
    ASSIGNMENT,
    attention_mask_diagnosis,
    build_model,
    classifier_head,
    draw_ids,
    model_config,
    pooling_outcomes,
    run_model,
)


def batch_rows(logits: torch.Tensor, size: int, what: str) -> torch.Tensor:
    """``logits``, failing unless they are (B, num_classes) with B = ``size``."""
    if logits.dim() != 2 or logits.shape[0] != size:
        fail(
            f"a batch of {what} gets logits of shape {tuple(logits.shape)}, where "
            f"(B, num_classes) has B = {size}"
        )
    return logits


def judge_padding(cls: type, g: torch.Generator, fixed_pad_id: int | None) -> None:
    """Fail unless a model built from ``cls`` (with ``fixed_pad_id``, else model_config's, never 0) gives
    each sentence the same logits padded with <pad> to any width as alone."""
    config = model_config(g)
    if fixed_pad_id is not None:
        config["pad_id"] = fixed_pad_id
    model = build_model(cls, config, seed=draw_seed(g))
    pad_id, vocab = config["pad_id"], config["vocab_size"]
    lengths = random_sizes(g, 4, low=1, high=12)
    rows = []
    for n in lengths:
        row = torch.randint(0, vocab, (n,), generator=g)
        row[row == pad_id] = (pad_id + 1) % vocab
        row[0] = 0 if pad_id != 0 else row[0]  # a real id 0: hard-coding pad_id = 0 shows
        rows.append(row)
    # Logits need their batch axis to be compared row by row (their width is another cell's).
    alone = [
        batch_rows(run_model(model, row[None]), 1, f"one sentence of {len(row)} tokens")
        for row in rows
    ]
    for extra in (0, 3, 17):
        width = max(lengths) + extra
        batch = torch.full((len(rows), width), pad_id)
        for i, row in enumerate(rows):
            batch[i, : len(row)] = row
        logits = batch_rows(run_model(model, batch), len(rows), f"{len(rows)} sentences")
        for i, row in enumerate(rows):
            if is_close(logits[i : i + 1], alone[i], atol=1e-5):
                continue
            _, weights = run_model(model, batch, return_attention=True)
            diagnosis = attention_mask_diagnosis(model, weights, batch, pad_id)
            head = classifier_head(model, config["d_model"], config["num_classes"])
            if diagnosis is None and head is not None:
                _, mistakes = pooling_outcomes(model, head, batch, pad_id, logits)
                matches = {
                    str(m) for m, value in (mistakes or {}).items() if is_close(logits, value)
                }
                diagnosis = matches.pop() if len(matches) == 1 else None
            fail(
                diagnosis
                or f"a sentence of {len(row)} tokens padded to {width} (pad_id={pad_id}) gets "
                f"other logits than unpadded ({first_difference(logits[i], alone[i][0])}), "
                "although every layer's attention gives the <pad> keys zero weight"
            )


@check(
    ASSIGNMENT,
    "test_padding_invariance",
    keeps=("appending padding changes nothing", "show that it makes a classifier blind to padding"),
)
def padding_never_changes_the_logits(ns: Namespace) -> None:
    cls = require(ns, "SentimentModel", type)
    judge_padding(cls, hidden_generator("a05 padding invariance"), fixed_pad_id=0)


@check(
    ASSIGNMENT,
    "test_padding_invariance",
    weight=EDGE_CASES,
    keeps=(
        "appending padding changes nothing",
        "`self.encoder = TransformerEncoder(num_layers, d_model, num_heads, d_ff, "
        "dropout)`, called with the mask `padding_mask(token_ids, self.pad_id)`",
    ),
)
def padding_with_another_pad_id_never_changes_the_logits(ns: Namespace) -> None:
    # The model's own pad_id, not 0 (and id 0 a real token): a hard-coded 0 shows only here.
    cls = require(ns, "SentimentModel", type)
    judge_padding(cls, hidden_generator("a05 padding invariance other pad id"), fixed_pad_id=None)


@check(
    ASSIGNMENT,
    "test_padding_invariance",
    keeps=(
        "`self.encoder = TransformerEncoder(num_layers, d_model, num_heads, d_ff, "
        "dropout)`, called with the mask `padding_mask(token_ids, self.pad_id)`",
        "A real token must not attend to `<pad>` keys.",
    ),
)
def padding_gets_no_attention(ns: Namespace) -> None:
    """Every layer's weights on the <pad> keys are 0, with the model's own pad id (not 0)."""
    cls = require(ns, "SentimentModel", type)
    g = hidden_generator("a05 padding attention")
    config = model_config(g)
    model = build_model(cls, config, seed=draw_seed(g))
    b, length = random_sizes(g, 2, low=3, high=11)
    ids = draw_ids(g, b, length, config["pad_id"], config["vocab_size"])
    _, weights = run_model(model, ids, return_attention=True)
    diagnosis = attention_mask_diagnosis(model, weights, ids, config["pad_id"])
    if diagnosis is not None:
        fail(diagnosis)
