"""The package's models learn what the course claims they learn, on the package's own data."""

import math
import time

import pytest
import torch

from attention_lab.baseline import baseline_accuracy, fit_baseline
from attention_lab.data import load_char_corpus, make_sentiment_corpus
from attention_lab.reference.a03_transformer_block import WordTokenizer
from attention_lab.reference.a05_sentiment import (
    SentimentClassifier,
    make_optimizer,
    train_classifier,
    train_step,
)
from attention_lab.reference.a06_char_lm import (
    CausalLM,
    evaluate_language_model,
    train_language_model,
)
from attention_lab.tokenizer import CharTokenizer
from attention_lab.training import (
    LengthBucketedBatches,
    evaluate_classifier,
    linear_warmup,
    make_loader,
    predict,
    seed_everything,
    word_dropout,
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


def _tiny_classifier(seed: int = 0, dropout: float = 0.0) -> torch.nn.Module:
    torch.manual_seed(seed)
    return torch.nn.Sequential(
        torch.nn.Embedding(12, 5),
        torch.nn.Dropout(dropout),
        torch.nn.Flatten(),
        torch.nn.Linear(4 * 5, 3),
    )


def _tiny_batch(seed: int = 1) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    return torch.randint(3, 12, (6, 4), generator=g), torch.randint(0, 3, (6,), generator=g)


@pytest.mark.slow  # half a second or more in the fast tier (tests/tiers.py)
def test_train_step_is_one_clipped_sgd_update_with_fresh_gradients():
    model, (inputs, labels) = _tiny_classifier(), _tiny_batch()
    manual = _tiny_classifier()
    optimizer = torch.optim.SGD(model.parameters(), lr=2.0)
    # A large unclipped step first: a left-over gradient would then change the second's direction.
    for max_grad_norm in (None, 0.01):
        loss = train_step(model, inputs, labels, optimizer, max_grad_norm=max_grad_norm)
        expected = torch.nn.functional.cross_entropy(manual(inputs), labels)
        grads = torch.autograd.grad(expected, list(manual.parameters()))
        norm = torch.cat([g.flatten() for g in grads]).norm()
        scale = 1.0 if max_grad_norm is None else max_grad_norm / (norm + 1e-6)
        assert scale < 0.5 or max_grad_norm is None  # the clipping acts
        with torch.no_grad():
            for p, g in zip(manual.parameters(), grads, strict=True):
                p -= 2.0 * g * scale
        assert loss == pytest.approx(expected.item())
        for ours, theirs in zip(model.parameters(), manual.parameters(), strict=True):
            torch.testing.assert_close(ours, theirs, rtol=1e-5, atol=1e-7)


@pytest.mark.slow  # half a second or more in the fast tier (tests/tiers.py)
def test_train_step_trains_in_train_mode_and_steps_the_scheduler():
    model, (inputs, labels) = _tiny_classifier(dropout=0.5).eval(), _tiny_batch()
    optimizer = make_optimizer(model, lr=0.1, weight_decay=0.0)
    scheduler = linear_warmup(optimizer, warmup_steps=4)
    assert optimizer.param_groups[0]["lr"] == pytest.approx(0.025)
    train_step(model, inputs, labels, optimizer, None, scheduler)
    assert model.training  # dropout on while training, whatever mode the model came in
    assert optimizer.param_groups[0]["lr"] == pytest.approx(0.05)
    for _ in range(4):
        train_step(model, inputs, labels, optimizer, None, scheduler)
    assert optimizer.param_groups[0]["lr"] == pytest.approx(0.1)  # the ramp ends at lr


def test_make_optimizer_is_adamw_over_every_parameter():
    model = _tiny_classifier()
    optimizer = make_optimizer(model, lr=0.01, weight_decay=0.2)
    assert type(optimizer) is torch.optim.AdamW
    (group,) = optimizer.param_groups
    assert (group["lr"], group["weight_decay"]) == (0.01, 0.2)
    assert [id(p) for p in group["params"]] == [id(p) for p in model.parameters()]


def test_word_dropout_replaces_only_word_ids_with_unk():
    ids = torch.tensor([[2, 5, 6, 7, 0, 0]] * 200)
    dropped = word_dropout(ids, 0.3, torch.Generator().manual_seed(0))
    changed = dropped != ids
    assert (dropped[changed] == 1).all()  # UNK
    assert not changed[:, [0, 4, 5]].any()  # CLS and PAD stay
    assert 0.25 < changed[:, 1:4].float().mean().item() < 0.35
    assert word_dropout(ids, 0.0) is ids


def test_length_buckets_trim_padding_and_cover_every_example_once():
    g = torch.Generator().manual_seed(0)
    lengths = torch.randint(1, 11, (50,), generator=g)
    ids = torch.zeros(50, 12, dtype=torch.long)
    for row, n in enumerate(lengths.tolist()):
        ids[row, :n] = torch.randint(3, 20, (n,), generator=g)
    labels = torch.arange(50)
    batches = LengthBucketedBatches(ids, labels, pad_id=0, batch_size=8, seed=0, pool_batches=2)
    seen = []
    for batch_ids, batch_labels in batches:
        assert batch_ids.shape[1] == lengths[batch_labels].max()  # cut to its longest sentence
        torch.testing.assert_close(batch_ids, ids[batch_labels, : batch_ids.shape[1]])
        seen += batch_labels.tolist()
    assert sorted(seen) == list(range(50)) and len(batches) == 7
    mean_width = sum(b.shape[1] * len(b) for b, _ in batches) / 50
    assert mean_width < 0.8 * 12  # far less padding than the full width
    assert [b.tolist() for _, b in batches] != [b.tolist() for _, b in batches]  # reshuffled


def test_train_classifier_restores_the_best_epoch_and_trains_unk():
    g = torch.Generator().manual_seed(0)
    ids = torch.randint(3, 12, (64, 4), generator=g)
    labels = (ids[:, 0] > 7).long()
    train = make_loader(ids, labels, batch_size=16)
    val = make_loader(ids[:16], 1 - labels[:16], batch_size=16)  # the opposite rule: gets worse
    model = _tiny_classifier()
    unk_before = model[0].weight[1].clone()
    history = train_classifier(
        model, train, val, epochs=4, lr=0.05, weight_decay=0.0, unk_rate=0.2, progress=False
    )
    best = history["best_epoch"][0]
    assert history["val_accuracy"][best - 1] == max(history["val_accuracy"])
    assert best < 4  # a later epoch was worse, so restoring mattered
    assert evaluate_classifier(model, val)[1] == max(history["val_accuracy"])
    assert not torch.equal(model[0].weight[1].cpu(), unk_before)  # UNK's embedding was trained
    model = _tiny_classifier()
    train_classifier(model, train, epochs=1, weight_decay=0.0, unk_rate=0.0, progress=False)
    assert torch.equal(model[0].weight[1].cpu(), unk_before)  # without word dropout it never is


def test_seed_everything_can_fix_the_thread_count():
    before = torch.get_num_threads()
    try:
        seed_everything(0, num_threads=1)
        assert torch.get_num_threads() == 1
        with pytest.raises(ValueError, match="positive int"):
            seed_everything(0, num_threads=0)
    finally:
        torch.set_num_threads(before)


def test_train_classifier_shows_progress_within_an_epoch(capsys):
    ids = torch.randint(3, 12, (32, 4), generator=torch.Generator().manual_seed(0))
    loader = make_loader(ids, torch.zeros(32, dtype=torch.long), batch_size=8)
    train_classifier(_tiny_classifier(), loader, epochs=2, progress=True)
    bars = capsys.readouterr().err
    assert "epoch 1:" in bars and "0/4 [" in bars  # a bar over the 4 batches of an epoch
    train_classifier(_tiny_classifier(), loader, epochs=1, progress=False)
    assert capsys.readouterr().err == ""
