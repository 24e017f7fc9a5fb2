"""Train mode judged stage by stage: a stage is said to be dropped only when values are zeroed."""

from __future__ import annotations

import pytest
import torch
from torch import Tensor, nn

from autograder.authoring.registry import CheckFailed
from autograder.authoring.stage_recorders import (
    ChangedInTrain,
    Recorder,
    TrainModeWords,
    change_in_words,
    compare_modes,
    judge_train_mode,
)

CLEAN = torch.linspace(-2.0, 3.0, 24, dtype=torch.float64).reshape(4, 6) + 0.01


def test_a_scaled_stage_is_changed_not_dropped():
    dropped, words = change_in_words(CLEAN, CLEAN * 1.5)
    assert not dropped
    assert words == "no value is zeroed: every value is multiplied by 1.500"


def test_a_stage_with_values_zeroed_and_the_rest_scaled_is_dropped():
    mask = (torch.arange(24).reshape(4, 6) % 3 != 0).double()
    dropped, words = change_in_words(CLEAN, CLEAN * mask * 1.5)
    assert dropped
    assert words == "33% of the values zeroed, the others multiplied by 1.500"


def test_a_stage_changed_otherwise_is_described_by_its_gap():
    dropped, words = change_in_words(CLEAN, CLEAN + 0.25)
    assert not dropped
    assert words.startswith("it differs by up to 0.25")


class ScalesInTrainMode(nn.Module):
    """Hands its input to a part, then multiplies the part's answer by 1.5 in train mode only."""

    def __init__(self, answer: Tensor):
        super().__init__()
        self.part = Recorder(answer)

    def forward(self, x: Tensor) -> Tensor:
        return self.part(x) * (1.5 if self.training else 1.0)


def test_a_model_that_only_scales_in_train_mode_is_not_said_to_apply_dropout():
    model = ScalesInTrainMode(CLEAN)
    x = torch.randn(4, 6, dtype=torch.float64)
    runs = compare_modes(
        model, {"the part": model.part}, lambda: [("the output", model(x))], torch.Generator()
    )
    assert runs.first_mode_finding() is None
    found = runs.first_train_change()
    assert isinstance(found, ChangedInTrain)
    assert (found.stage, found.verb) == ("the output", "changes")
    assert "multiplied by 1.500" in found.words


def test_a_change_no_mistake_names_is_told_as_seen_with_where_the_model_may_drop():
    model = ScalesInTrainMode(CLEAN)
    x = torch.randn(4, 6, dtype=torch.float64)
    words = TrainModeWords(
        whole="the model",
        detail="dropout=0.3",
        mode_switched="a part runs in another mode",
        random_in_eval="the model draws at random in eval mode",
        allowed="only the part drops",
        site=lambda stage: "in train mode the model drops its output",  # never: nothing dropped
    )
    with pytest.raises(CheckFailed) as failed:
        judge_train_mode(
            model,
            {"the part": model.part},
            lambda: [("the output", model(x))],
            torch.Generator(),
            words,
        )
    assert failed.value.diagnosis == (
        "in train mode the model changes the output (no value is zeroed: every value is "
        "multiplied by 1.500; dropout=0.3): only the part drops"
    )
