"""05's two held-out cells judge one set of predictions: a grading runs the trained model over
the held-out split once (autograder.authoring.registry.shared)."""

from __future__ import annotations

import math

import pytest
import torch
from torch import nn

from attention_lab.data import make_sentiment_corpus
from attention_lab.reference.a03_transformer_block import WordTokenizer
from autograder.checks.a05_sentiment.trained_model import heldout_split
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
