"""The package's models learn what the course claims they learn, on the package's own data."""

import math
import time

import pytest
import torch

from attention_lab.baseline import baseline_accuracy, fit_baseline
from attention_lab.data import load_char_corpus, make_sentiment_corpus
from attention_lab.encoder import CausalLM, SentimentClassifier
from attention_lab.tokenizer import CharTokenizer, WordTokenizer
from attention_lab.training import (
    evaluate_language_model,
    make_loader,
    predict,
    train_classifier,
    train_language_model,
)

MAX_LEN = 20


@pytest.fixture(scope="module")
def sentiment_run():
    """Train the reference classifier once; the tests below read its results."""
    splits = make_sentiment_corpus(seed=0)
    tokenizer = WordTokenizer().fit(splits.texts("train"))

    def encode(name):
        ids = tokenizer.encode_batch(splits.texts(name), MAX_LEN)
        return ids, torch.tensor(splits.labels(name))

    torch.manual_seed(0)
    model = SentimentClassifier(
        tokenizer.vocab_size,
        d_model=64,
        num_heads=4,
        num_layers=2,
        d_ff=128,
        max_len=MAX_LEN,
        pad_id=tokenizer.pad_id,
    )
    start = time.perf_counter()
    history = train_classifier(
        model,
        make_loader(*encode("train")),
        make_loader(*encode("val"), shuffle=False),
        epochs=3,
        lr=3e-3,
        progress=False,
    )
    seconds = time.perf_counter() - start
    test_ids, test_labels = encode("test")
    predictions = predict(model.cpu(), test_ids)
    baseline = fit_baseline(splits.texts("train"), splits.labels("train"))
    return splits, history, seconds, predictions, test_labels, baseline


@pytest.mark.slow
def test_classifier_beats_tfidf_baseline_on_test_split(sentiment_run):
    splits, history, seconds, predictions, labels, baseline = sentiment_run
    ours = (predictions == labels).float().mean().item()
    theirs = baseline_accuracy(baseline, splits.texts("test"), splits.labels("test"))
    print(
        f"\ntransformer {ours:.3f} vs TF-IDF {theirs:.3f} (margin {ours - theirs:+.3f}), "
        f"trained in {seconds:.1f} s"
    )
    assert ours > theirs + 0.05
    assert history["train_loss"][-1] < history["train_loss"][0]


@pytest.mark.slow
def test_classifier_wins_on_contrast_sentences(sentiment_run):
    splits, _, _, predictions, labels, baseline = sentiment_run
    contrast = [i for i, ex in enumerate(splits.test) if ex.kind == "contrast"]
    ours = (predictions[contrast] == labels[contrast]).float().mean().item()
    texts = [splits.test[i].text for i in contrast]
    theirs = baseline_accuracy(baseline, texts, [splits.test[i].label for i in contrast])
    print(f"\ncontrast: transformer {ours:.3f} vs TF-IDF {theirs:.3f}")
    assert ours > theirs + 0.2


@pytest.mark.slow
def test_char_lm_ends_well_below_uniform_loss():
    text = load_char_corpus()
    tokenizer = CharTokenizer(text)
    ids = torch.tensor(tokenizer.encode(text))
    split = int(0.9 * len(ids))
    torch.manual_seed(0)
    model = CausalLM(tokenizer.vocab_size, block_size=32, d_model=64, num_heads=4, num_layers=2)
    uniform = math.log(tokenizer.vocab_size)
    before = evaluate_language_model(model, ids[split:])
    train_language_model(model, ids[:split], steps=300, batch_size=32, progress=False)
    after = evaluate_language_model(model, ids[split:])
    print(f"\nchar LM validation loss {before:.2f} -> {after:.2f}, ln(V) = {uniform:.2f}")
    assert abs(before - uniform) < 0.5
    assert after < 0.65 * uniform


def test_make_loader_rejects_float_labels_and_length_mismatch():
    with pytest.raises(TypeError, match="integer class labels"):
        make_loader(torch.zeros(3, 4, dtype=torch.long), torch.zeros(3))
    with pytest.raises(ValueError, match="3 inputs but 2 labels"):
        make_loader(torch.zeros(3, 4, dtype=torch.long), torch.zeros(2, dtype=torch.long))
