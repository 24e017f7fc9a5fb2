"""Train mode judged stage by stage: where a student's model changes values in train mode.

A student's model composes parts whose own dropout is known (an EncoderBlock, a
TransformerEncoder, a Block, a Linear head). What the student decides is what reaches each
part, and whether anything else drops values in train mode. A :class:`Recorder` takes a part's
place: it records the input the student's code hands it, and whether it was in train mode, and
answers with a fixed value that depends on nothing the student did. Every stage after it then
sees the same values in eval and in train mode, so one run in each mode, compared stage by
stage, shows the first place where train mode changes a value, whatever draws the random numbers
and in whatever order. A comparison with the reference under one seed would fail a correct
answer that draws its masks otherwise (``F.dropout``, ``torch.bernoulli``, another order).
:func:`compare_modes` runs the model in eval mode twice, then in train mode, and names what it
finds first: a part in the wrong mode, randomness in eval mode, or a stage train mode changes;
:func:`judge_train_mode` fails a check with what it finds, in the words of that check's model
(:class:`TrainModeWords`), for every model judged so (DepthStack, SentimentModel, CharLM).

Through the grading judge a recorder stays in the judge's process and the kernel calls it back
(autograder/judging/proxies.py), so install recorders after any dtype change of the model.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor, nn

from autograder.authoring.dropout_sites import elementwise_drop
from autograder.authoring.hidden_draws import draw_seed, under_seed
from autograder.authoring.mistakes import Mistake
from autograder.authoring.registry import fail


class Recorder(nn.Module):
    """Stands in for one part of a model: records each call's input and mode, answers ``answer``."""

    def __init__(self, answer: Any):
        super().__init__()
        self.answer = answer  # a tensor or a tuple of tensors and lists of tensors
        self.calls: list[tuple[Tensor, bool]] = []

    def forward(self, x: Tensor, *args: Any, **kwargs: Any) -> Any:
        self.calls.append((x.detach().clone() if isinstance(x, Tensor) else x, self.training))
        return clone(self.answer)  # a copy: the student's code may change it in place


def clone(value: Any) -> Any:
    """A copy of the tensors in ``value`` (a tensor, or tuples and lists of them)."""
    if isinstance(value, Tensor):
        return value.clone()
    return type(value)(clone(v) for v in value)


@dataclass(frozen=True)
class Run:
    """One forward pass in one mode: each stage's value, in order, and each recorder's modes."""

    values: list[tuple[str, Any]]  # (what the value is, the value), recorders' inputs first
    modes: dict[str, list[bool]]  # recorder name -> train mode at each of its calls


def run_in_mode(
    model: nn.Module,
    recorders: dict[str, Recorder],
    forward: Callable[[], Sequence[tuple[str, Tensor]]],
    train: bool,
    seed: int,
) -> Run:
    """``forward()`` (the model's outputs, named) with ``model`` in train or eval mode, under
    ``seed``; what each recorder was given comes first, in ``recorders``' order."""
    model.train(train)
    for recorder in recorders.values():
        recorder.calls.clear()
    with under_seed(seed), torch.no_grad():
        outputs = list(forward())
    values = []
    for name, recorder in recorders.items():
        for k, (given, _) in enumerate(recorder.calls):
            call = f" (call {k + 1})" if len(recorder.calls) > 1 else ""
            values.append((f"the input of {name}{call}", given))
    modes = {name: [mode for _, mode in r.calls] for name, r in recorders.items()}
    return Run(values + outputs, modes)


def differs(a: Any, b: Any) -> bool:
    """True unless ``a`` and ``b`` are tensors of one shape with equal values (1e-9)."""
    if not (isinstance(a, Tensor) and isinstance(b, Tensor) and a.shape == b.shape):
        return True
    return not torch.allclose(a.double(), b.double(), rtol=0.0, atol=1e-9)


def changed_stages(before: Run, after: Run) -> list[tuple[str, Any, Any]]:
    """(what, its value in ``before``, in ``after``) of every stage whose value changed, in
    order; fails when the two runs have other stages (other calls)."""
    names = [name for name, _ in before.values]
    if names != [name for name, _ in after.values]:
        counts = {name: len(modes) for name, modes in before.modes.items()}
        others = {name: len(modes) for name, modes in after.modes.items()}
        changed = next((n for n in counts if counts[n] != others[n]), None)
        if changed is None:  # every recorder called as often: the values returned differ
            later = [name for name, _ in after.values]
            fail(
                f"two calls on one input returned {len(names)} values ({names[-1]} the last) "
                f"and then {len(later)} ({later[-1]} the last): every call on the same input "
                "must return as many"
            )
        fail(
            f"{changed} is called {others[changed]} time(s) in train mode but {counts[changed]} "
            "in eval mode: train mode must change only what dropout drops, not what runs"
        )
    return [
        (name, old, new)
        for (name, old), (_, new) in zip(before.values, after.values, strict=True)
        if differs(old, new)
    ]


def wrong_modes(run: Run, train: bool) -> list[str]:
    """The recorders that some call reached in the other mode than the model's."""
    return [name for name, modes in run.modes.items() if any(m != train for m in modes)]


def change_in_words(old: Any, new: Any) -> tuple[bool, str]:
    """(whether ``new`` is ``old`` with values dropped, how it departs from ``old`` in words).

    Dropped means some values zeroed, the others all multiplied by one factor: a stage only
    scaled, with no value zeroed, is changed, not dropped.
    """
    if not (isinstance(old, Tensor) and isinstance(new, Tensor) and old.shape == new.shape):
        return False, "it is not even the same shape"
    drop = elementwise_drop(new, old)
    if drop is not None and drop.rate > 0:
        return True, drop.describe()
    if drop is not None and drop.factor is not None:
        return False, f"no value is zeroed: every value is multiplied by {drop.factor:.3f}"
    gap = (new.double() - old.double()).abs()
    where = tuple(int(i) for i in torch.unravel_index(gap.argmax(), gap.shape))
    return (
        False,
        f"it differs by up to {float(gap.max()):.3g} (at index {where}), not by dropped values",
    )


@dataclass(frozen=True)
class WrongMode:
    """A part that a call reached in the other mode than the model's."""

    part: str
    model_mode: str  # "train" or "eval"
    part_mode: str  # the other one


@dataclass(frozen=True)
class RandomInEval:
    """A stage whose value changed from one eval-mode call to the next: something random runs."""

    stage: str


@dataclass(frozen=True)
class ChangedInTrain:
    """The first stage whose value train mode changes, and how, in words."""

    stage: str
    dropped: bool  # whether the train-mode value is the eval-mode one with values dropped
    words: str

    @property
    def verb(self) -> str:
        """What the model does to the stage in train mode, as a message says it."""
        return "applies dropout to" if self.dropped else "changes"


@dataclass(frozen=True)
class ModeRuns:
    """The same forward pass with the model in eval mode, in eval mode again, then in train mode."""

    eval_run: Run
    eval_again: Run
    train_run: Run

    def first_mode_finding(self) -> WrongMode | RandomInEval | None:
        """A part reached in the other mode than the model's (runs in order), else the first
        stage that changed between the two eval-mode runs."""
        runs = ((self.eval_run, False), (self.eval_again, False), (self.train_run, True))
        for run, train in runs:
            for name in wrong_modes(run, train):
                model_mode, part_mode = ("train", "eval") if train else ("eval", "train")
                return WrongMode(name, model_mode, part_mode)
        changed = changed_stages(self.eval_run, self.eval_again)
        return RandomInEval(changed[0][0]) if changed else None

    def first_train_change(self, may_change: Collection[str] = ()) -> ChangedInTrain | None:
        """The first stage, other than ``may_change``, whose value train mode changes; fails when
        train mode runs other stages (:func:`changed_stages`)."""
        for name, old, new in changed_stages(self.eval_run, self.train_run):
            if name not in may_change:
                dropped, words = change_in_words(old, new)
                return ChangedInTrain(name, dropped, words)
        return None


def compare_modes(
    model: nn.Module,
    recorders: dict[str, Recorder],
    forward: Callable[[], Sequence[tuple[str, Tensor]]],
    generator: torch.Generator,
) -> ModeRuns:
    """``forward()`` with ``model`` in eval mode, in eval mode again and in train mode, each run
    under its own seed drawn from the hidden ``generator`` (:func:`run_in_mode`)."""
    eval_run, eval_again, train_run = (
        run_in_mode(model, recorders, forward, train, draw_seed(generator))
        for train in (False, False, True)
    )
    return ModeRuns(eval_run, eval_again, train_run)


@dataclass(frozen=True)
class TrainModeWords:
    """What :func:`judge_train_mode` says of one model, in that check's words."""

    whole: str  # the model, as its parts belong to it: "the stack", "the model"
    detail: str  # the settings drawn, said in parentheses: "dropout=0.3, num_layers=3"
    mode_switched: str | Mistake  # the advice when a part runs in the other mode than the model
    random_in_eval: str | Mistake  # the named mistake when eval-mode values follow the seed
    allowed: str  # where this model may drop values, said after a train-mode change no mistake
    # names
    site: Callable[[str], str | None]  # the named mistake of dropout applied to a stage, said
    # of train mode, or None where no mistake names it


def judge_train_mode(
    model: nn.Module,
    recorders: dict[str, Recorder],
    forward: Callable[[], Sequence[tuple[str, Tensor]]],
    generator: torch.Generator,
    words: TrainModeWords,
    *,
    may_change: Collection[str] = (),
    before_changes: Callable[[ModeRuns], None] | None = None,
) -> None:
    """Fail unless train mode changes nothing but the parts' own dropout: every part runs in the
    model's mode, nothing draws at random in eval mode, and no stage other than ``may_change``
    changes in train mode (:func:`compare_modes`).  ``before_changes`` judges the runs before a
    changed stage is told, where a model may change a stage itself (SentimentModel drops the
    encoder's input)."""
    runs = compare_modes(model, recorders, forward, generator)
    found = runs.first_mode_finding()
    if isinstance(found, WrongMode):
        fail(
            f"{words.mode_switched} ({found.part} runs in {found.part_mode} mode when "
            f"{words.whole} is in {found.model_mode} mode; {words.detail})"
        )
    if isinstance(found, RandomInEval):
        # Named where the eval-mode values follow the seed: two runs under one seed agree.
        seed = draw_seed(generator)
        again = [run_in_mode(model, recorders, forward, False, seed) for _ in range(2)]
        if not changed_stages(*again):
            fail(f"{words.random_in_eval} ({found.stage} changed; {words.detail})")
        # Not words.allowed: where this model may drop in train mode is no cause of a change
        # in eval mode that the seed does not explain, and no experiment here finds its cause.
        fail(
            f"in eval mode {found.stage} changes from one call to the next, even under one "
            f"random seed ({words.detail}): in eval mode it must depend on the input alone"
        )
    # Found first, told last: a train mode that runs other stages fails here, before the check's
    # own judgement of a stage that may change.
    changed = runs.first_train_change(may_change)
    if before_changes is not None:
        before_changes(runs)
    if changed is None:
        return
    site = words.site(changed.stage)
    if changed.dropped and site is not None:
        fail(f"{site} ({changed.stage}: {changed.words}; {words.detail})")
    fail(
        f"in train mode {words.whole} {changed.verb} {changed.stage} ({changed.words}; "
        f"{words.detail}): {words.allowed}"
    )
