"""Exercise 2, `SentimentModel` in train mode (test_sentiment_model): where it drops."""

from __future__ import annotations

import torch
from torch import Tensor, nn

from autograder.authoring.closeness import is_close
from autograder.authoring.dropout_sites import dropout_mismatch, elementwise_drop, mismatch_kind
from autograder.authoring.hidden_draws import draw_seed, hidden_generator
from autograder.authoring.registry import Namespace, check, fail
from autograder.authoring.requiring import require
from autograder.authoring.stage_recorders import (
    ModeRuns,
    Recorder,
    TrainModeWords,
    change_in_words,
    judge_train_mode,
)
from autograder.checks.a05_sentiment.shared import (
    ASSIGNMENT,
    MODEL,
    build_model,
    classifier_head,
    draw_ids,
    model_config,
    run_model,
)

# Where this model drops values in train mode, as the diagram of Exercise 2 puts it.
DROPOUT_SITES = (
    "this model drops values only after the positions are added (self.position, built with the "
    "model's dropout, does it) and inside self.encoder"
)
ENCODER_INPUT = "the input of self.encoder"
MODE_SWITCHED = (
    "a part of the model ran in another mode than the model, in the same call: the statement "
    "leaves every part's mode to the model's train()/eval()"
)


def name_of(model: nn.Module, part: nn.Module) -> str | None:
    """The dotted attribute name of submodule ``part`` in ``model``."""
    return next((name for name, m in model.named_modules() if m is part and name), None)


def front_end_diagnosis(
    old: Tensor, new: Tensor, embedded: Tensor, positioned: Tensor | None, p: float
) -> str | None:
    """Why ``new``, the encoder's train-mode input, is not ``old`` (its eval-mode input,
    embeddings plus positions) dropped with probability p, or None when it is; a mistake of
    MODEL is named where the masks recovered from ``new`` are that mistake's and ``old`` is
    ``positioned``, the model's own position(embed(ids)) in eval mode (None if it has none)."""
    what = f"in train mode (dropout={p}) the encoder's input"
    # Without the positions (or with other ones) in eval mode, a finding below is not the
    # mistake of the dropout alone: it is told as seen, with what eval mode gives.
    diagram = positioned is not None and is_close(old, positioned)
    eval_mode = "" if diagram else ", whose eval-mode value is not position(embed(ids)) either,"
    if not differs_anywhere(old, new):
        if diagram:
            return f"{MODEL['front_not_dropped']} (dropout={p})"
        return (
            f"{what}{eval_mode} is not dropped at all: it must be self.position(self.embed("
            "token_ids)), with self.position = SinusoidalPositionalEncoding(d_model, max_len, "
            "dropout) dropping after adding the positions"
        )
    drop = elementwise_drop(new, old)
    if drop is not None:
        why = dropout_mismatch(drop, p)
        if why is None:
            return None
        # Each kind is the output of that mistake: the recovered masks and factor are its own
        # (with no value zeroed it is no dropout at all, whatever its factor).
        kind = mismatch_kind(drop, p) if drop.rate > 0 and diagram else None
        named = FRONT_MISTAKES.get(kind or "")
        if named is not None:
            return f"{MODEL[named]} ({why})"
        return f"{what}{eval_mode} is not dropped as dropout={p} drops: {why}"
    before_positions = elementwise_drop(new - (old - embedded), embedded)
    if diagram and before_positions is not None and dropout_mismatch(before_positions, p) is None:
        return f"{MODEL['front_dropped_before_positions']} (dropout={p})"
    return (
        f"{what}{eval_mode} is not its eval-mode value with values dropped: "
        f"{change_in_words(old, new)[1]}"
    )


# dropout_sites.mismatch_kind -> the MODEL mistake whose output that kind of drop is.
FRONT_MISTAKES = {
    "twice": "front_dropped_twice",
    "unscaled": "front_unscaled",
    "other_rate": "front_other_rate",
    "keep_probability": "front_keep_probability",
}


def own_positions(model: nn.Module, embedded: Tensor) -> Tensor | None:
    """The model's own self.position applied to ``embedded`` (eval mode), None where it has no
    such part or the part fails on it (other names: the parts check says which it needs)."""
    position = getattr(model, "position", None)
    if not isinstance(position, nn.Module):
        return None
    try:
        with torch.no_grad():
            return position(embedded)
    except NotImplementedError:
        raise
    except Exception:
        return None


def differs_anywhere(old: Tensor, new: Tensor) -> bool:
    return not torch.allclose(old, new, rtol=0.0, atol=1e-9)


@check(
    ASSIGNMENT,
    "test_sentiment_model",
    keeps=(
        "`self.position = SinusoidalPositionalEncoding(d_model, max_len, dropout)`",
        "`self.encoder = TransformerEncoder(num_layers, d_model, num_heads, d_ff, "
        "dropout)`, called with the mask `padding_mask(token_ids, self.pad_id)`",
    ),
)
def sentiment_model_drops_where_the_diagram_says(ns: Namespace) -> None:
    """In train mode the encoder gets position(embed(ids)) dropped at rate p, runs in train mode
    with dropout p, and nothing after it drops: judged stage by stage, with recorders in the
    encoder's and the classifier's place, so any random order passes."""
    cls = require(ns, "SentimentModel", type)
    g = hidden_generator("a05 model train mode")
    p = round(0.2 + 0.2 * float(torch.rand((), generator=g)), 3)
    config = {**model_config(g), "dropout": p}
    model = build_model(cls, config, seed=draw_seed(g)).double()
    encoder = getattr(model, "encoder", None)
    if not isinstance(encoder, nn.Module):
        fail("the model has no submodule `self.encoder`, which the statement names")
    rates = sorted({float(m.p) for m in encoder.modules() if isinstance(m, nn.Dropout)})
    if rates != [p]:
        seen = f"self.encoder drops with dropout={', '.join(map(str, rates)) or 'nothing'}"
        if rates == [0.0]:  # built with dropout 0, and p > 0: the model's never reached it
            fail(f"{MODEL['encoder_without_dropout']} ({seen}, not the model's dropout={p})")
        fail(f"{seen}, not the model's dropout={p}")
    b, length, d_model = 6, 10, config["d_model"]
    ids = draw_ids(g, b, length, config["pad_id"], config["vocab_size"])
    # Once whole, before any part is replaced by a recorder: an error here is the model's own,
    # and what it holds can be looked at (a recorder is the grader's object, not the kernel's).
    run_model(model, ids)
    with torch.no_grad():
        embedded = model.embed(ids)  # eval mode: what the positions are added to
        positioned = own_positions(model, embedded)
    head = classifier_head(model, d_model, config["num_classes"])
    head_name = None if head is None else name_of(model, head)
    parts = ["encoder"] + ([head_name] if head_name else [])  # an unusual head is not recorded
    answers = {
        "self.encoder": (
            torch.randn(b, length, d_model, generator=g, dtype=torch.float64),
            [
                torch.rand(b, config["num_heads"], length, length, generator=g).double().softmax(-1)
                for _ in range(config["num_layers"])
            ],
        ),
    }
    recorders = {
        f"self.{path}": Recorder(
            answers.get(f"self.{path}", torch.randn(b, config["num_classes"], generator=g).double())
        )
        for path in parts
    }
    for path, recorder in zip(parts, recorders.values(), strict=True):
        owner, _, attribute = path.rpartition(".")
        setattr(model.get_submodule(owner) if owner else model, attribute, recorder)

    def forward() -> list[tuple[str, Tensor]]:
        return [("the logits", run_model(model, ids))]

    def before_changes(runs: ModeRuns) -> None:
        calls = len(runs.eval_run.modes["self.encoder"])
        if calls != 1:
            fail(f"forward calls self.encoder {calls} times, not once as in the diagram")
        # Train mode may change the encoder's input (the positions' dropout): judged here.
        old, new = runs.eval_run.values[0][1], runs.train_run.values[0][1]
        diagnosis = front_end_diagnosis(old, new, embedded, positioned, p)
        if diagnosis is not None:
            fail(diagnosis)

    # Named where train mode drops values of the classifier's input or of the logits: a stage a
    # dropout there gives exactly, its other values unchanged.
    sites = {
        f"the input of self.{head_name}": "dropout_on_pooled",
        "the logits": "dropout_on_logits",
    }
    words = TrainModeWords(
        whole="the model",
        detail=f"dropout={p}",
        mode_switched=MODE_SWITCHED,
        random_in_eval=MODEL["random_in_eval"],
        allowed=DROPOUT_SITES,
        site=lambda stage: f"{MODEL[sites[stage]]}: {DROPOUT_SITES}" if stage in sites else None,
    )
    judge_train_mode(
        model,
        recorders,
        forward,
        g,
        words,
        may_change=(ENCODER_INPUT,),
        before_changes=before_changes,
    )
