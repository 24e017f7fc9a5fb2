"""Exercise 3, `train_step` and `make_optimizer` (test_train_step, test_make_optimizer)."""

from __future__ import annotations

import math
import warnings
from typing import Any, NamedTuple

import torch
from torch import Tensor, nn
from torch.nn import functional as F

import attention_lab.reference.a05_sentiment as reference
from autograder.authoring.closeness import is_close
from autograder.authoring.counterexample import PUBLIC_SEED, small_integers
from autograder.authoring.diagnosis import diagnose
from autograder.authoring.hidden_draws import hidden_generator, random_sizes, under_seed
from autograder.authoring.mistakes import Mistake, catalogue
from autograder.authoring.operation_mistakes import softmax_before_cross_entropy
from autograder.authoring.reference_bans import ban
from autograder.authoring.registry import (
    EDGE_CASES,
    CheckFailed,
    Namespace,
    StopChecks,
    check,
    fail,
)
from autograder.authoring.requiring import require
from autograder.authoring.student_errors import explain
from autograder.checks.a05_sentiment.shared import (
    ASSIGNMENT,
)

TRAIN_STEP = catalogue(
    ASSIGNMENT,
    "train_step",
    {
        "order": {
            "no_zero_grad": "the gradients add up from one step to the next: call "
            "optimizer.zero_grad() before loss.backward() in every step",
            "zero_grad_after_backward": "optimizer.zero_grad() runs after loss.backward(), so "
            "every update uses zero gradients and the weights never move: clear the gradients "
            "before backward",
            "zero_grad_after_step": "the gradients the parameters already held when train_step "
            "began were added to the first update, and the later updates are right: "
            "optimizer.zero_grad() runs at the end of the step instead of before "
            "loss.backward(); clear the gradients before backward, whatever the previous call "
            "left",
        },
        "clipping kind": {
            "not_clipped": "the gradient is not clipped before the update: call "
            "nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm) between loss.backward() "
            "and optimizer.step() (clipping after step() changes nothing)",
            "clipped_by_value": "each gradient entry is clipped to [-max_grad_norm, "
            "max_grad_norm] (clip_grad_value_): clip the global norm of all the gradients "
            "together with nn.utils.clip_grad_norm_",
            "clipped_infinity_norm": "the gradient is rescaled so that its largest entry, not "
            "its Euclidean (L2) norm, is at most max_grad_norm (norm_type=inf): the step clips "
            "the L2 norm of all the gradients together, clip_grad_norm_'s default norm_type=2",
        },
        "threshold source": {
            "threshold_hard_coded": "the gradient is clipped to a norm of 1.0 whatever "
            "max_grad_norm is: pass the argument, clip_grad_norm_(model.parameters(), "
            "max_grad_norm)",
        },
        "mode": {
            "eval_mode": "the model trains with dropout off: call model.train() at the start of "
            "train_step, because evaluating (or a check) may have left it in eval mode",
            "train_after_forward": "model.train() comes after the forward pass, so a step "
            "begun in eval mode computes its loss and gradients with dropout off (the steps after "
            "it are right): call model.train() before the forward pass",
        },
        "scheduler": {
            "scheduler_first": "scheduler.step() runs before optimizer.step(), so the first "
            "update already uses the second step's learning rate: step the scheduler after the "
            "optimizer",
            "scheduler_ignored": "the scheduler is never stepped, so the learning rate stays "
            "where warm-up starts it: call scheduler.step() after optimizer.step() when a "
            "scheduler is given",
        },
        "loss input": {
            "softmax_before_cross_entropy": "the logits pass through a softmax before "
            "F.cross_entropy, which applies log-softmax itself: the loss is the cross-entropy of "
            "probabilities between 0 and 1, a softmax taken twice, whose gradients are small, so "
            "the model learns slowly; F.cross_entropy takes the logits",
        },
        "returned loss": {
            "loss_after_update": "train_step returns the loss of a second forward pass, run "
            "after the update, in train mode: return loss.item() of the loss the update was "
            "computed from (the second pass also draws dropout masks, so every later step "
            "drops other values than the reference's)",
            "loss_in_eval_mode": "the loss returned comes from another forward pass, in eval "
            "mode (without dropout), before the update, not from the one the step "
            "back-propagated: return loss.item() of the loss the update was computed from",
            "loss_after_update_in_eval_mode": "the loss returned comes from another forward "
            "pass, in eval mode (without dropout), after the update, not from the one the step "
            "back-propagated: return loss.item() of the loss the update was computed from",
        },
    },
)
MAKE_OPTIMIZER = catalogue(
    ASSIGNMENT,
    "make_optimizer",
    {
        "optimizer class": {
            "adam": "this is Adam, not AdamW: Adam adds the weight decay to the gradient, where "
            "the adaptive scaling weakens it; AdamW decays the weights directly. Use "
            "torch.optim.AdamW",
        },
        "settings": {
            "weight_decay_not_passed": "the weight_decay asked for never reaches AdamW: every "
            "parameter group holds AdamW's default weight_decay whatever value make_optimizer "
            "is given; pass weight_decay=weight_decay to torch.optim.AdamW",
        },
    },
)
NO_ZERO_GRAD = TRAIN_STEP["no_zero_grad"]
ZERO_GRAD_AFTER_BACKWARD = TRAIN_STEP["zero_grad_after_backward"]
ZERO_GRAD_AFTER_STEP = TRAIN_STEP["zero_grad_after_step"]
NOT_CLIPPED = TRAIN_STEP["not_clipped"]
CLIPPED_BY_VALUE = TRAIN_STEP["clipped_by_value"]
CLIPPED_INFINITY_NORM = TRAIN_STEP["clipped_infinity_norm"]
THRESHOLD_HARD_CODED = TRAIN_STEP["threshold_hard_coded"]
EVAL_MODE = TRAIN_STEP["eval_mode"]
# Apart from STEP_MISTAKES, which are simulated: this one is confirmed by an experiment on the
# answer (seed_set_inside), whatever seed it sets.
SETS_THE_SEED = catalogue(
    ASSIGNMENT,
    "train_step",
    {
        "random state": {
            "sets_the_seed": "train_step sets torch's random state itself (as torch.manual_seed "
            "does): called from two different random states, it leaves the same one behind, so "
            "its dropout draws never follow the caller's random state; leave seeding to the "
            "caller",
        }
    },
)["sets_the_seed"]
TRAIN_AFTER_FORWARD = TRAIN_STEP["train_after_forward"]
SCHEDULER_FIRST = TRAIN_STEP["scheduler_first"]
SCHEDULER_IGNORED = TRAIN_STEP["scheduler_ignored"]
LOSS_AFTER_UPDATE = TRAIN_STEP["loss_after_update"]
LOSS_IN_EVAL_MODE = TRAIN_STEP["loss_in_eval_mode"]
LOSS_AFTER_UPDATE_IN_EVAL_MODE = TRAIN_STEP["loss_after_update_in_eval_mode"]
SOFTMAX_BEFORE_LOSS = TRAIN_STEP["softmax_before_cross_entropy"]
STEP_MISTAKES = tuple(TRAIN_STEP.values())
SOFTMAX_BEFORE_CROSS_ENTROPY = softmax_before_cross_entropy()
STEP_BANNED = {
    "attention_lab's train_step": reference.train_step,
    "attention_lab's make_optimizer": reference.make_optimizer,
}


def step_model(torch_nn: Any, vocab: int, length: int, d_model: int, classes: int) -> Any:
    """A tiny classifier with dropout, built from ``torch_nn`` (torch.nn, here or in the kernel)."""
    return torch_nn.Sequential(
        torch_nn.Embedding(vocab, d_model),
        torch_nn.Dropout(0.3),
        torch_nn.Flatten(),
        torch_nn.Linear(length * d_model, classes),
    )


def parameters_by_name(model: Any) -> dict[str, Tensor]:
    """name -> a float64 copy of each parameter of ``model`` (also one in the kernel)."""
    return {name: v.detach().double().clone() for name, v in model.state_dict().items()}


def flat_parameters(model: Any) -> Tensor:
    """Every parameter of ``model`` (also one in the kernel) as one float64 vector."""
    return torch.cat([v.detach().double().flatten() for v in model.state_dict().values()])


def step_loss(logits: Tensor, labels: Tensor, mistake: Mistake | None) -> Tensor:
    """The reference's loss of a batch, F.cross_entropy of the logits, or with ``mistake``'s
    operation done its way (a softmax before the cross-entropy, operation_mistakes.py)."""
    if mistake == SOFTMAX_BEFORE_LOSS:
        return SOFTMAX_BEFORE_CROSS_ENTROPY.output(
            F.cross_entropy, {"input": logits, "target": labels}
        )
    return F.cross_entropy(logits, labels)


def simulated_steps(
    model: nn.Module,
    batches: list[tuple[Tensor, Tensor]],
    lr: float,
    max_grad_norm: float,
    warmup: bool,
    mistake: Mistake | None = None,
    record: list[dict[str, Tensor]] | None = None,
) -> list[float]:
    """The reference step, or one with a known ``mistake``, on ``batches``; the losses it saw.
    ``record``, if given, gets the model's parameters after each step."""
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    scheduler = (
        torch.optim.lr_scheduler.LinearLR(optimizer, 0.25, total_iters=3) if warmup else None
    )
    losses = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch warns about a scheduler stepped first
        for step, (inputs, labels) in enumerate(batches):
            # the answer's model enters the first step in eval mode (answer_steps)
            model.train(step > 0 if mistake == TRAIN_AFTER_FORWARD else mistake != EVAL_MODE)
            loss = step_loss(model(inputs), labels, mistake)
            if mistake not in (NO_ZERO_GRAD, ZERO_GRAD_AFTER_BACKWARD, ZERO_GRAD_AFTER_STEP):
                optimizer.zero_grad()
            loss.backward()
            if mistake == ZERO_GRAD_AFTER_BACKWARD:
                optimizer.zero_grad()
            if mistake == CLIPPED_BY_VALUE:
                nn.utils.clip_grad_value_(model.parameters(), max_grad_norm)
            elif mistake == CLIPPED_INFINITY_NORM:
                nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm, norm_type=math.inf)
            elif mistake == THRESHOLD_HARD_CODED:
                nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            elif mistake != NOT_CLIPPED:
                nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
            if scheduler is not None and mistake == SCHEDULER_FIRST:
                scheduler.step()
            optimizer.step()
            if mistake == ZERO_GRAD_AFTER_STEP:
                optimizer.zero_grad()
            if scheduler is not None and mistake not in (SCHEDULER_FIRST, SCHEDULER_IGNORED):
                scheduler.step()
            if mistake == LOSS_AFTER_UPDATE:
                with torch.no_grad():
                    loss = F.cross_entropy(model(inputs), labels)
            losses.append(loss.item())
            if record is not None:
                record.append(parameters_by_name(model))
    return losses


def require_own(ns: Namespace, name: str) -> Any:
    """The submission's ``name``, failing if it is the package's reference itself."""
    value = require(ns, name)
    if value is getattr(reference, name):
        fail(
            f"`{name}` is attention_lab's own {name}, imported: write it yourself (no credit for "
            "calling the reference)"
        )
    return value


def call_train_step(train_step: Any, *args: Any) -> Any:
    """The student's train_step(*args), its error explained."""
    try:
        return train_step(*args)
    except NotImplementedError:
        raise
    except Exception as error:
        fail(explain(error, "your train_step"))


ban(ASSIGNMENT, "train_step", STEP_BANNED)
ban(ASSIGNMENT, "make_optimizer", STEP_BANNED)


class StepTrial(NamedTuple):
    """One hidden setting for train_step: sizes, starting weights, batches and optimizer settings."""

    sizes: tuple[int, int, int, int]  # vocab, length, d_model, classes
    start: dict[str, Tensor]
    batches: list[tuple[Tensor, Tensor]]
    lr: float
    max_grad_norm: float
    warmup: bool
    seed: int


def draw_step_trial(g: torch.Generator, warmup: bool) -> StepTrial:
    """Random sizes, weights and batches; clipping acts on every step unless ``warmup``."""
    vocab, length, d_model, classes, batch = random_sizes(g, 5, low=3, high=12)
    reference = step_model(nn, vocab, length, d_model, classes)
    start = {
        name: torch.randn(value.shape, generator=g)
        for name, value in reference.state_dict().items()
    }
    batches = [
        (
            torch.randint(0, vocab, (batch, length), generator=g),
            torch.randint(0, classes, (batch,), generator=g),
        )
        for _ in range(3)
    ]
    lr, max_grad_norm = (0.3, 1e4) if warmup else (0.5, 0.05)
    seed = int(torch.randint(0, 2**31, (1,), generator=g))
    return StepTrial(
        (vocab, length, d_model, classes), start, batches, lr, max_grad_norm, warmup, seed
    )


def leave_gradients(model: Any, inputs: Tensor, weights: Tensor) -> None:
    """Fill the ``.grad`` of every parameter of ``model`` (also one in the kernel), in eval mode,
    with the gradient of sum(weights * model(inputs)): what an earlier backward leaves."""
    model.eval()
    (model(inputs) * weights).sum().backward()


def simulate(
    trial: StepTrial,
    mistake: Mistake | None = None,
    stale: tuple[Tensor, Tensor] | None = None,
    record: list[dict[str, Tensor]] | None = None,
) -> tuple[Tensor, list[float]]:
    """The parameters and losses after the trial's steps, made by the reference or a mistake;
    ``stale``: (inputs, weights) whose gradient the parameters hold before the first step;
    ``record`` gets the parameters after each step."""
    model = step_model(nn, *trial.sizes)
    model.load_state_dict(trial.start)
    if stale is not None:
        leave_gradients(model, *stale)
    with under_seed(trial.seed):
        losses = simulated_steps(
            model, trial.batches, trial.lr, trial.max_grad_norm, trial.warmup, mistake, record
        )
    return flat_parameters(model), losses


def answer_steps(
    ns: Namespace,
    trial: StepTrial,
    stale: tuple[Tensor, Tensor] | None = None,
    record: list[dict[str, Tensor]] | None = None,
) -> tuple[Any, list[Any]]:
    """The answer's train_step run on the trial's batches, on a model and an SGD optimizer
    (and a warm-up scheduler where the trial has one) built from the kernel's torch, starting
    in eval mode: (that model, what each call returned); ``stale`` and ``record`` as in
    :func:`simulate`."""
    train_step = require_own(ns, "train_step")
    kernel_torch, kernel_nn = require(ns, "torch"), require(ns, "nn")
    mine = step_model(kernel_nn, *trial.sizes)
    mine.load_state_dict(trial.start)
    mine.eval()  # train_step must switch it to train mode itself
    if stale is not None:
        leave_gradients(mine, *stale)
    optimizer = kernel_torch.optim.SGD(mine.parameters(), lr=trial.lr)
    scheduler = (
        kernel_torch.optim.lr_scheduler.LinearLR(optimizer, 0.25, total_iters=3)
        if trial.warmup
        else None
    )
    returned = []
    with under_seed(trial.seed):
        for inputs, labels in trial.batches:
            returned.append(
                call_train_step(
                    train_step, mine, inputs, labels, optimizer, trial.max_grad_norm, scheduler
                )
            )
            if record is not None:
                record.append(parameters_by_name(mine))
    return mine, returned


# ---------------------------------------------------------------------------------------------
# What one step does on a small public model: shown where no known mistake explains an update.

PUBLIC_SIZES = (4, 2, 2, 2)  # vocab, length, d_model, classes: 18 parameters in all
PUBLIC_MODEL = "Embedding(4, 2), Dropout(0.3), Flatten(), Linear(4, 2)"
PARTS = {
    "0.weight": "the embedding's weight",
    "3.weight": "the linear layer's weight",
    "3.bias": "the linear layer's bias",
}


def public_trial() -> tuple[StepTrial, tuple[Tensor, Tensor]]:
    """A step trial anyone may rerun: small integer starting weights and three batches of 3
    from the public seed, SGD(lr=1.0), max_grad_norm=0.5 (the reference's three gradients
    have norms 2.5, 2.1 and 3.6: clipping acts at every step) and a warm-up scheduler; and
    gradients an earlier backward may leave."""
    g = torch.Generator().manual_seed(PUBLIC_SEED)
    vocab, length, _, classes = PUBLIC_SIZES
    with under_seed(PUBLIC_SEED):
        shapes = {name: v.shape for name, v in step_model(nn, *PUBLIC_SIZES).state_dict().items()}
    start = {name: small_integers(g, *shape).float() for name, shape in shapes.items()}
    batches = [
        (
            torch.randint(0, vocab, (3, length), generator=g),
            torch.randint(0, classes, (3,), generator=g),
        )
        for _ in range(3)
    ]
    stale = (torch.randint(0, vocab, (3, length), generator=g), small_integers(g, 3, classes))
    return StepTrial(PUBLIC_SIZES, start, batches, 1.0, 0.5, True, PUBLIC_SEED), stale


def public_step_observation(ns: Namespace, with_stale_gradients: bool = False) -> str | None:
    """What differs, after the first step that differs, between the answer's steps and the
    reference's on the public trial (which parameters and by how much, and the loss it
    returned), or None where all three steps agree (or the answer raises on them)."""
    trial, stale_inputs = public_trial()
    stale = stale_inputs if with_stale_gradients else None
    expected: list[dict[str, Tensor]] = []
    _, expected_losses = simulate(trial, stale=stale, record=expected)
    got: list[dict[str, Tensor]] = []
    try:
        _, returned = answer_steps(ns, trial, stale, got)
    except CheckFailed:
        return None  # its error on the hidden inputs is told already
    for step, (mine, theirs) in enumerate(zip(got, expected, strict=True), start=1):
        seen = [
            part_difference(name, mine.get(name), want)
            for name, want in theirs.items()
            if not is_close(mine.get(name), want, atol=1e-6)
        ]
        loss = returned[step - 1]
        if isinstance(loss, float) and not math.isclose(
            loss, expected_losses[step - 1], rel_tol=1e-4, abs_tol=1e-6
        ):
            seen.append(
                f"it returned the loss {loss:.4g}, the reference's (before the update) "
                f"{expected_losses[step - 1]:.4g}"
            )
        if seen:
            entry = "" if stale is None else ", whose parameters hold gradients on entry"
            agree = "the steps before it agree with the reference's; " if step > 1 else ""
            return (
                f"on a small public model{entry} ({PUBLIC_MODEL}, starting weights small "
                f"integers from the public seed {PUBLIC_SEED}, batches of 3 sentences of 2 "
                f"tokens, SGD(lr={trial.lr}), max_grad_norm={trial.max_grad_norm}, a linear "
                f"warm-up from a quarter of lr over 3 steps), {agree}after step {step}: "
                + "; ".join(seen)
            )
    return None


def seed_set_inside(ns: Namespace) -> bool:
    """Whether the answer's train_step, called on the public trial's first batch from two
    different random states, leaves torch's random state the same behind it: a step that draws
    its dropout masks from the state it is given leaves two different ones (as does a step that
    draws nothing), so only a step that sets the state itself leaves one."""
    trial, _ = public_trial()
    train_step = require_own(ns, "train_step")
    kernel_torch, kernel_nn = require(ns, "torch"), require(ns, "nn")
    inputs, labels = trial.batches[0]
    left = []
    for seed in (PUBLIC_SEED, PUBLIC_SEED + 1):
        with under_seed(seed):
            model = step_model(kernel_nn, *trial.sizes)
            model.load_state_dict(trial.start)
            optimizer = kernel_torch.optim.SGD(model.parameters(), lr=trial.lr)
            try:
                train_step(model, inputs, labels, optimizer, trial.max_grad_norm, None)
            except StopChecks:
                raise
            except Exception:  # noqa: BLE001 - the experiment shows nothing where the step raises
                return False
            left.append(torch.get_rng_state())  # a kernel's state comes back with each call
    return torch.equal(left[0], left[1])


def step_counterexample(ns: Namespace, with_stale_gradients: bool = False) -> str | None:
    """The public trial's observation (:func:`public_step_observation`), after the cause that
    an experiment confirms, where one does."""
    seen = public_step_observation(ns, with_stale_gradients)
    if seen is not None and seed_set_inside(ns):
        return f"{SETS_THE_SEED}\n{seen}"
    return seen


def part_difference(name: str, got: Tensor | None, want: Tensor) -> str:
    """'the linear layer's bias (3.bias) is [..], the reference's [..] (2 of 2 values differ,
    by up to 0.016)'."""
    part = f"{PARTS.get(name, name)} ({name})"
    if got is None or got.shape != want.shape:
        return f"{part} is missing or of another shape"
    gap = (got - want).abs()
    differ = int((gap > 1e-6).sum())
    return (
        f"{part} is {rounded(got)}, the reference's {rounded(want)} ({differ} of "
        f"{want.numel()} values differ, by up to {gap.max().item():.3g})"
    )


def rounded(values: Tensor) -> list[Any]:
    """``values`` as nested lists rounded to 4 decimals."""
    return torch.round(values.detach().double(), decimals=4).tolist()


@check(
    ASSIGNMENT,
    "test_train_step",
    keeps=(
        "`train_step(model, inputs, labels, optimizer, max_grad_norm, scheduler=None)` "
        "does steps 1 to 8 on one batch and returns the loss of its own forward pass (step 2, "
        "in train mode, before the update) as a float",
        "It must come between the backward pass and the update",
        "The schedule, when one is given, moves on by one step after the update.",
    ),
)
def train_step_matches_the_reference_update(ns: Namespace) -> None:
    """Parameters after 3 steps equal the reference's: SGD makes every mistake visible."""
    g = hidden_generator("a05 train step")
    for warmup in (False, True):
        trial = draw_step_trial(g, warmup)
        expected, expected_losses = simulate(trial)
        mine, losses = answer_steps(ns, trial)
        setting = f"3 steps of SGD(lr={trial.lr}) with max_grad_norm={trial.max_grad_norm}" + (
            " and a warm-up scheduler" if warmup else ""
        )
        diagnose(
            flat_parameters(mine),
            expected,
            # Without gradients on entry, zero_grad after step() gives the reference's update.
            {
                mistake: simulate(trial, mistake)[0]
                for mistake in STEP_MISTAKES
                if mistake != ZERO_GRAD_AFTER_STEP
            },
            f"after {setting}, the parameters differ from the reference update's",
            atol=1e-6,
            counterexample=lambda: step_counterexample(ns),
        )
        if not all(isinstance(loss, float) for loss in losses):
            fail(
                "train_step must return the batch's loss as a Python float (loss.item()), got "
                f"{type(losses[0]).__name__}"
            )
        if not is_close(torch.tensor(losses), torch.tensor(expected_losses)):
            seen = (
                f"train_step returned the losses {[round(x, 4) for x in losses]}, expected "
                f"{[round(x, 4) for x in expected_losses]}, the cross-entropy of each batch "
                "before its update, as the statement asks"
            )
            if found := eval_mode_loss_returned(trial, losses, expected_losses):
                fail(f"{found}; {seen}")
            fail(seen)


def eval_mode_losses(trial: StepTrial) -> dict[Mistake, list[float]]:
    """The cross-entropy of each batch in eval mode (dropout off) with the reference's
    parameters before its update and after it: what a second forward pass in eval mode gives."""
    record: list[dict[str, Tensor]] = []
    simulate(trial, record=record)
    model = step_model(nn, *trial.sizes)
    model.eval()
    states = {
        LOSS_IN_EVAL_MODE: [trial.start, *record[:-1]],
        LOSS_AFTER_UPDATE_IN_EVAL_MODE: record,
    }
    losses: dict[Mistake, list[float]] = {}
    for mistake, parameters in states.items():
        losses[mistake] = []
        for state, (inputs, labels) in zip(parameters, trial.batches, strict=True):
            model.load_state_dict({name: value.float() for name, value in state.items()})
            with torch.no_grad():
                losses[mistake].append(F.cross_entropy(model(inputs), labels).item())
    return losses


def eval_mode_loss_returned(
    trial: StepTrial, losses: list[float], expected_losses: list[float]
) -> str | None:
    """The mistake of the returned loss, with the losses that confirm it, where the answer's
    update is the reference's and the losses it returned are those of one second forward pass in
    eval mode (before or after the update) and not the train-mode ones; otherwise None."""
    returned = torch.tensor(losses)
    matched = [
        (mistake, values)
        for mistake, values in eval_mode_losses(trial).items()
        if is_close(returned, torch.tensor(values))
        and not is_close(torch.tensor(values), torch.tensor(expected_losses))
    ]
    if len(matched) != 1:
        return None
    mistake, values = matched[0]
    return (
        f"{mistake} (the cross-entropy of each batch in eval mode is "
        f"{[round(x, 4) for x in values]}, what yours returned)"
    )


@check(
    ASSIGNMENT,
    "test_train_step",
    keeps=(
        "Clear the old gradients: PyTorch adds every new gradient to `.grad`. Without "
        "clearing them, each step would follow the sum of all the gradients so far.",
    ),
)
def train_step_ignores_gradients_left_before_it(ns: Namespace) -> None:
    """The statement: zero_grad before backward, so gradients left by an earlier backward (an
    evaluation, a check) do not enter the update; no other call starts with gradients present."""
    g = hidden_generator("a05 train step stale gradients")
    trial = draw_step_trial(g, warmup=False)
    vocab, length, _, classes = trial.sizes
    batch = trial.batches[0][0].shape[0]
    stale = (
        torch.randint(0, vocab, (batch, length), generator=g),
        torch.randn(batch, classes, generator=g),
    )
    expected, _ = simulate(trial, stale=stale)
    mine, _ = answer_steps(ns, trial, stale)
    steps = f"after 3 steps of SGD(lr={trial.lr}) with max_grad_norm={trial.max_grad_norm}"
    seen = (
        f"{steps}, begun on a model whose parameters already held gradients, the parameters "
        "differ from the reference update, which starts each step from fresh gradients"
    )
    if not is_close(flat_parameters(mine), expected, atol=1e-6):
        # The same steps begun without gradients tell whether the old ones are what differs.
        fresh, _ = answer_steps(ns, trial)
        if is_close(flat_parameters(fresh), simulate(trial)[0], atol=1e-6):
            seen += (
                "; begun without them, your update equals the reference's: the gradients left "
                "before the call enter your update"
            )
        else:
            seen = (
                f"{steps}, the parameters differ from the reference update whether the model "
                "held gradients before the first step or not, so not because of those gradients "
                "(see train_step_matches_the_reference_update)"
            )
    diagnose(
        flat_parameters(mine),
        expected,
        {mistake: simulate(trial, mistake, stale)[0] for mistake in STEP_MISTAKES},
        seen,
        atol=1e-6,
        counterexample=lambda: step_counterexample(ns, with_stale_gradients=True),
    )


@check(
    ASSIGNMENT, "test_train_step", keeps=("the same update as the reference, and a falling loss",)
)
def train_step_drives_the_loss_down(ns: Namespace) -> None:
    """The loss it reaches: a learnable task, AdamW from the kernel's torch, 60 steps."""
    train_step = require_own(ns, "train_step")
    kernel_torch, kernel_nn = require(ns, "torch"), require(ns, "nn")
    g = hidden_generator("a05 train step loss")
    vocab, length, d_model = 10, 5, 8
    inputs = torch.randint(0, vocab, (48, length), generator=g)
    labels = (inputs[:, 2] >= vocab // 2).long()  # the class is told by one position
    with under_seed(int(torch.randint(0, 2**31, (1,), generator=g))):
        model = step_model(kernel_nn, vocab, length, d_model, 2)
        optimizer = kernel_torch.optim.AdamW(model.parameters(), lr=0.02)
        losses = [
            call_train_step(train_step, model, inputs, labels, optimizer, 1.0, None)
            for _ in range(60)
        ]
    final = min(losses[-5:])
    if not final < 0.25 * losses[0]:
        seen = (
            f"with your train_step the loss of a small model on an easy task went from "
            f"{losses[0]:.3f} to {final:.3f} in 60 AdamW steps (expected below "
            f"{0.25 * losses[0]:.3f})"
        )
        found = step_counterexample(ns)
        fail(f"{seen}\n{found}" if found else seen)


def built_optimizer(ns: Namespace, label: str) -> tuple[Any, nn.Module, float, float]:
    """The student's make_optimizer called on a small model with lr and weight_decay drawn from
    the hidden generator ``label``: (optimizer, model, lr, weight_decay)."""
    make_optimizer = require_own(ns, "make_optimizer")
    kernel_nn = require(ns, "nn")
    g = hidden_generator(label)
    vocab, length, d_model, classes = random_sizes(g, 4, low=3, high=11)
    lr = round(float(torch.empty(()).uniform_(1e-4, 1e-2, generator=g)), 6)
    weight_decay = round(float(torch.empty(()).uniform_(0.02, 0.3, generator=g)), 4)
    model = step_model(kernel_nn, vocab, length, d_model, classes)
    try:
        optimizer = make_optimizer(model, lr, weight_decay)
    except NotImplementedError:
        raise
    except Exception as error:
        fail(explain(error, "your make_optimizer"))
    return optimizer, model, lr, weight_decay


@check(
    ASSIGNMENT,
    "test_make_optimizer",
    keeps=(
        "`make_optimizer(model, lr, weight_decay)` returns `torch.optim.AdamW` over all "
        "of `model.parameters()`",
    ),
)
def make_optimizer_is_adamw_with_lr_and_weight_decay(ns: Namespace) -> None:
    optimizer, _, lr, weight_decay = built_optimizer(ns, "a05 make optimizer")
    if not isinstance(optimizer, torch.optim.AdamW):
        if isinstance(optimizer, torch.optim.Adam):  # and not an AdamW: its class says it
            fail(MAKE_OPTIMIZER["adam"])
        fail(f"make_optimizer must return a torch.optim.AdamW, got {type(optimizer).__name__}")
    for setting, wanted in (("lr", lr), ("weight_decay", weight_decay)):
        if any(group[setting] != wanted for group in optimizer.param_groups):
            if setting == "weight_decay" and (default := default_decay_kept(ns, optimizer, lr)):
                fail(default)
            fail(
                f"make_optimizer(model, lr={lr}, weight_decay={weight_decay}) returned an AdamW "
                f"whose {setting} is not {wanted} for every parameter: "
                + "; ".join(describe_group(group, setting) for group in optimizer.param_groups)
            )


def default_decay_kept(ns: Namespace, optimizer: Any, lr: float) -> str | None:
    """MAKE_OPTIMIZER's weight_decay_not_passed with what confirms it, or None: every group of
    ``optimizer`` and of a second AdamW the answer builds for another weight_decay holds AdamW's
    default, which neither value asked for is."""
    default = torch.optim.AdamW([torch.zeros(1)]).defaults["weight_decay"]
    make_optimizer = require_own(ns, "make_optimizer")
    kernel_nn = require(ns, "nn")
    asked = (0.25, 0.125)  # neither is AdamW's default (0.01)
    seen = [optimizer.param_groups]
    try:
        for value in asked:
            model = step_model(kernel_nn, 5, 4, 6, 3)
            seen.append(make_optimizer(model, lr, value).param_groups)
    except NotImplementedError:
        raise
    except Exception:  # the answer fails otherwise: nothing confirmed
        return None
    if default in asked or not all(
        group["weight_decay"] == default for groups in seen for group in groups
    ):
        return None
    return (
        f"{MAKE_OPTIMIZER['weight_decay_not_passed']} (asked for weight_decay "
        f"{' and '.join(map(str, asked))} as well, each parameter group holds {default})"
    )


def describe_group(group: dict[str, Any], setting: str) -> str:
    """'2 tensors of shapes (9, 4), (3, 16): weight_decay 0.0': one parameter group, as seen."""
    shapes = ", ".join(str(tuple(p.shape)) for p in group["params"])
    count = len(group["params"])
    return f"{count} tensor{'s' * (count != 1)} of shape{'s' * (count != 1)} {shapes}: {setting} {group[setting]}"


@check(
    ASSIGNMENT,
    "test_make_optimizer",
    weight=EDGE_CASES,
    keeps=(
        "`make_optimizer(model, lr, weight_decay)` returns `torch.optim.AdamW` over all "
        "of `model.parameters()`",
    ),
)
def make_optimizer_covers_every_parameter(ns: Namespace) -> None:
    # Its own clause: an AdamW over part of the model (or an Adam over all of it) loses only its
    # share here.
    optimizer, model, _, _ = built_optimizer(ns, "a05 make optimizer parameters")
    groups = getattr(optimizer, "param_groups", None)
    if not isinstance(groups, list):
        fail(f"make_optimizer must return a torch optimizer, got {type(optimizer).__name__}")
    given = [p for group in groups for p in group["params"]]
    wanted = list(model.state_dict().values())
    if sorted(p.numel() for p in given) != sorted(p.numel() for p in wanted):
        fail(
            f"the optimizer updates {len(given)} parameter tensors (shapes "
            f"{[tuple(p.shape) for p in given]}), the model has {len(wanted)} (shapes "
            f"{[tuple(p.shape) for p in wanted]}): the statement asks for AdamW over all of "
            "model.parameters()"
        )
