"""05's two held-out cells judge one set of predictions: a grading runs the trained model over
the held-out split once (autograder.authoring.registry.shared); first they ask whether the
training cell ran to the end."""

from __future__ import annotations

import math

import pytest
import torch
from torch import nn

from attention_lab.data import make_sentiment_corpus
from attention_lab.reference.a03_transformer_block import WordTokenizer
from autograder.checks.a05_sentiment.trained_model import (
    heldout_split,
    unfinished_training,
    word_order_observation,
)
from autograder.suite.submission import Submission, grade_submission


class CountingModel(nn.Module):
    """Two logits from the first token's id, counting the batches of the held-out split it is
    given (the untrained diagnosis also runs it on four sentences: not counted)."""

    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(1, 2)
        self.heldout_batches = 0

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        self.heldout_batches += len(ids) > 4
        return self.linear(ids[:, :1].float())


@pytest.mark.slow
def test_a_grading_runs_the_model_over_the_held_out_split_once():
    corpus = make_sentiment_corpus(seed=0)
    model = CountingModel()
    namespace = {
        "model": model,
        "tokenizer": WordTokenizer().fit(corpus.texts("train")),
        "MAX_LEN": 16,
    }
    batches = math.ceil(len(heldout_split()[0]) / 256)  # trained_predictions's chunks
    grades = grade_submission(Submission("05_sentiment", namespace))
    assert model.heldout_batches == batches
    # Both cells judged those predictions (an untrained model fails both), and a second
    # grading computes its own.
    for cell in ("test_heldout_accuracy", "test_heldout_contrast"):
        assert "looks untrained" in grades[cell].first_failure, grades[cell].describe()
    grade_submission(Submission("05_sentiment", namespace))
    assert model.heldout_batches == 2 * batches


def history(epochs: int, val_loss: float = 0.4) -> dict[str, list[float]]:
    """What the training cell records after ``epochs`` epochs."""
    return {
        "train_loss": [0.5] * epochs,
        "val_loss": [val_loss] * epochs,
        "val_accuracy": [0.9] * epochs,
    }


def test_a_training_cell_that_stopped_is_told_by_its_record():
    stopped = unfinished_training({"history": history(1), "EPOCHS": 4})
    assert stopped is not None
    assert "did not run to the end: `history` records 1 of its EPOCHS = 4 epochs" in stopped
    diverged = unfinished_training({"history": history(4, val_loss=math.nan), "EPOCHS": 4})
    assert diverged is not None and "history['val_loss'] is nan at epoch 1" in diverged


def test_a_finished_or_unreadable_record_tells_nothing():
    assert unfinished_training({"history": history(4), "EPOCHS": 4}) is None
    assert unfinished_training({"EPOCHS": 4}) is None  # no record: nothing to tell from
    assert unfinished_training({"history": {"loss": []}, "EPOCHS": 4}) is None


class BagOfWords(nn.Module):
    """Two logits from the sum of the token vectors: blind to word order by construction."""

    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(128, 2)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.embed(ids).sum(dim=1)


class FirstWord(BagOfWords):
    """Two logits from the first word (after <cls>): reversing the words changes them."""

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.embed(ids[:, 1])


@pytest.mark.slow
def test_a_trained_model_blind_to_word_order_is_shown_the_experiment():
    tokenizer = WordTokenizer().fit(make_sentiment_corpus(seed=0).texts("train"))
    blind = word_order_observation({"model": BagOfWords(), "tokenizer": tokenizer})
    assert "leaves every logit of your trained model unchanged" in blind
    assert word_order_observation({"model": FirstWord(), "tokenizer": tokenizer}) == ""
