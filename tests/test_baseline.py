"""Tests for the TF-IDF + logistic regression baseline, and for what it shows about the corpus."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from attention_lab.baseline import baseline_accuracy, fit_baseline, make_tfidf_baseline
from attention_lab.data import SentimentSplits, make_sentiment_corpus

if TYPE_CHECKING:  # scikit-learn takes a second to import: only the tests that fit it pay
    from sklearn.pipeline import Pipeline


@pytest.fixture(scope="module")
def corpus() -> SentimentSplits:
    return make_sentiment_corpus(seed=0)


@pytest.fixture(scope="module")
def fitted(corpus: SentimentSplits) -> Pipeline:
    return fit_baseline(corpus.texts("train"), corpus.labels("train"))


@pytest.mark.slow  # fits the baseline (seconds): out of the fast tier (tests/tiers.py)
def test_baseline_beats_chance_overall_but_leaves_room_above_it(
    fitted: Pipeline, corpus: SentimentSplits
) -> None:
    # Measured 0.81-0.82 over seeds 0-2.
    assert 0.75 < baseline_accuracy(fitted, corpus.texts("test"), corpus.labels("test")) < 0.88


@pytest.mark.slow  # fits the baseline (seconds): out of the fast tier (tests/tiers.py)
@pytest.mark.parametrize("kind", ["plain", "intensified", "negated"])
def test_baseline_solves_single_clauses_even_with_unseen_pairs(
    fitted: Pipeline, corpus: SentimentSplits, kind: str
) -> None:
    examples = [example for example in corpus.test if example.kind == kind]
    assert baseline_accuracy(fitted, [e.text for e in examples], [e.label for e in examples]) > 0.95


@pytest.mark.slow  # fits the baseline (seconds): out of the fast tier (tests/tiers.py)
def test_baseline_is_near_chance_on_contrasts(fitted: Pipeline, corpus: SentimentSplits) -> None:
    # Measured 0.54-0.56 over seeds 0-2: bag-of-n-grams cannot tell which clause follows "but",
    # so it is right only on the ~15% of contrasts whose clauses agree.
    contrasts = [example for example in corpus.test if example.kind == "contrast"]
    assert (
        baseline_accuracy(fitted, [e.text for e in contrasts], [e.label for e in contrasts]) < 0.65
    )


@pytest.mark.slow  # half a second or more in the fast tier (tests/tiers.py)
def test_pipeline_is_tfidf_then_logistic_regression() -> None:
    pipeline = make_tfidf_baseline(ngram_range=(1, 3), C=0.5)
    assert list(pipeline.named_steps) == ["tfidf", "logreg"]
    assert pipeline.named_steps["tfidf"].ngram_range == (1, 3)
    assert pipeline.named_steps["logreg"].C == 0.5


@pytest.mark.slow  # half a second or more in the fast tier (tests/tiers.py)
def test_fit_is_deterministic_and_accuracy_is_the_fraction_correct() -> None:
    texts = ["good film", "great film", "bad film", "awful film"]
    labels = [1, 1, 0, 0]
    first, second = fit_baseline(texts, labels, C=100.0), fit_baseline(texts, labels, C=100.0)
    queries = ["good", "awful", "great great", "film"]
    assert first.predict_proba(queries).tolist() == second.predict_proba(queries).tolist()
    assert baseline_accuracy(first, texts, labels) == 1.0
    assert baseline_accuracy(first, texts, [1, 0, 0, 0]) == 0.75


@pytest.mark.parametrize(
    ("texts", "labels", "error", "message"),
    [
        ([], [], ValueError, "at least one text, got none"),
        (["good", "bad"], [1], ValueError, "got 1 labels for 2 texts"),
        ("good film", [1], TypeError, "single str"),
        (["good", 3], [1, 0], TypeError, "got int at index 1"),
        (["good", "great"], [1, 1], ValueError, "at least two distinct labels"),
    ],
)
def test_fit_baseline_rejects_bad_input(
    texts: object, labels: object, error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        fit_baseline(texts, labels)


@pytest.mark.slow  # fits the baseline (seconds): out of the fast tier (tests/tiers.py)
def test_baseline_accuracy_rejects_bad_input(fitted: Pipeline) -> None:
    with pytest.raises(ValueError, match="at least one text"):
        baseline_accuracy(fitted, [], [])
    with pytest.raises(ValueError, match="got 3 labels for 2 texts"):
        baseline_accuracy(fitted, ["a", "b"], [0, 1, 1])


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"ngram_range": (2, 1)}, r"expected ngram_range .* got \(2, 1\)"),
        ({"ngram_range": [1, 2]}, r"got \[1, 2\]"),
        ({"C": 0}, "expected C to be a positive number, got 0"),
    ],
)
def test_make_tfidf_baseline_rejects_bad_settings(
    arguments: dict[str, object], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        make_tfidf_baseline(**arguments)
