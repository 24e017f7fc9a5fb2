"""Tests for the generated sentiment corpus, the SST-2 reader and the language-modelling data."""

from __future__ import annotations

from collections import Counter

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from attention_lab.data import (
    ASPECTS,
    INTENSIFIERS,
    KINDS,
    NEGATIVE_ADJECTIVES,
    NEGATORS,
    POSITIVE_ADJECTIVES,
    SentimentExample,
    SentimentSplits,
    load_char_corpus,
    load_sst2_tsv,
    make_sentiment_corpus,
    sample_lm_batch,
)
from attention_lab.reference.a06_char_lm import make_lm_blocks

ADJECTIVES = set(POSITIVE_ADJECTIVES) | set(NEGATIVE_ADJECTIVES)


def parse_clause(clause: str) -> tuple[str, str, bool]:
    """(aspect, adjective, negated) of one clause, read from the public word lists only."""
    words = clause.split()
    aspects = [word for word in words if word in ASPECTS]
    adjectives = [word for word in words if word in ADJECTIVES]
    assert len(aspects) == 1 and len(adjectives) == 1, clause
    return aspects[0], adjectives[0], any(word in NEGATORS for word in words)


def clause_label(clause: str) -> int:
    """1 when the clause is positive: a positive adjective, or a negated negative one."""
    _, adjective, negated = parse_clause(clause)
    return int((adjective in POSITIVE_ADJECTIVES) != negated)


def expected_label(text: str) -> int:
    """The label a correct generator must give: that of the clause after "but", if any."""
    return clause_label(text.split(" but ")[-1])


def pairs_in(examples: list[SentimentExample]) -> set[tuple[str, str]]:
    """Every (aspect, adjective) pair mentioned in `examples`."""
    return {
        parse_clause(clause)[:2] for example in examples for clause in example.text.split(" but ")
    }


@pytest.fixture(scope="module")
def corpus() -> SentimentSplits:
    return make_sentiment_corpus(seed=0)


def all_examples(corpus: SentimentSplits) -> list[SentimentExample]:
    return corpus.train + corpus.val + corpus.test


def test_word_lists_are_rich() -> None:
    assert len(ASPECTS) >= 12 and len(POSITIVE_ADJECTIVES) >= 12 and len(NEGATIVE_ADJECTIVES) >= 12
    assert len(INTENSIFIERS) >= 3 and not set(POSITIVE_ADJECTIVES) & set(NEGATIVE_ADJECTIVES)


@pytest.mark.slow  # half a second or more in the fast tier (tests/tiers.py)
def test_same_seed_gives_the_same_corpus_and_another_seed_a_different_one(
    corpus: SentimentSplits,
) -> None:
    assert make_sentiment_corpus(seed=0) == corpus
    assert make_sentiment_corpus(seed=1).train != corpus.train


def test_split_sizes_kind_shares_and_label_balance(corpus: SentimentSplits) -> None:
    assert (len(corpus.train), len(corpus.val), len(corpus.test)) == (4000, 500, 1000)
    for split in (corpus.train, corpus.val, corpus.test):
        kinds = Counter(example.kind for example in split)
        assert set(kinds) == set(KINDS)
        assert kinds["contrast"] == 0.4 * len(split)
        assert 0.45 < sum(example.label for example in split) / len(split) < 0.55


def test_splits_share_no_sentence_and_hold_no_duplicates(corpus: SentimentSplits) -> None:
    train, val, test = (set(corpus.texts(name)) for name in ("train", "val", "test"))
    assert len(train) == 4000 and len(val) == 500 and len(test) == 1000
    assert not train & val and not train & test and not val & test


def test_sentences_are_short_lowercase_and_shaped_like_their_kind(corpus: SentimentSplits) -> None:
    for example in all_examples(corpus):
        words = example.text.split()
        assert len(words) <= 16 and example.text == example.text.lower()
        assert words.count("but") == (example.kind == "contrast")
        if example.kind != "contrast":
            assert any(word in INTENSIFIERS for word in words) == (example.kind == "intensified")
            assert any(word in NEGATORS for word in words) == (example.kind == "negated")


def test_label_checker_agrees_with_hand_labelled_sentences() -> None:
    assert expected_label("the plot was not good") == 0
    assert expected_label("the music was not bad") == 1
    assert expected_label("the acting was great but the plot was dull") == 0
    assert expected_label("the plot was dull but the acting was really great") == 1
    assert expected_label("the plot was never dull but the acting was not great") == 0


def test_every_label_follows_negation_and_the_clause_after_but(corpus: SentimentSplits) -> None:
    for example in all_examples(corpus):
        assert example.label == expected_label(example.text), example


def test_negated_single_clauses_flip_the_adjective(corpus: SentimentSplits) -> None:
    negated = [example for example in all_examples(corpus) if example.kind == "negated"]
    for example in negated:
        _, adjective, _ = parse_clause(example.text)
        assert example.label == (0 if adjective in POSITIVE_ADJECTIVES else 1), example
    assert {example.label for example in negated} == {0, 1}


def test_contrasts_mostly_oppose_their_clauses_and_include_negations(
    corpus: SentimentSplits,
) -> None:
    clause_pairs = [
        example.text.split(" but ") for example in corpus.train if example.kind == "contrast"
    ]
    opposite = sum(clause_label(first) != clause_label(second) for first, second in clause_pairs)
    assert 0.75 < opposite / len(clause_pairs) < 0.95
    for position in (0, 1):
        negated = sum(parse_clause(pair[position])[2] for pair in clause_pairs)
        assert negated / len(clause_pairs) > 0.2


def test_the_word_before_but_never_gives_away_the_first_adjective(corpus: SentimentSplits) -> None:
    for example in all_examples(corpus):
        if example.kind == "contrast":
            words = example.text.split()
            assert words[words.index("but") - 1] not in ADJECTIVES, example


def test_test_split_holds_aspect_adjective_pairs_unseen_in_training(
    corpus: SentimentSplits,
) -> None:
    train_pairs = pairs_in(corpus.train)
    unseen = [example for example in corpus.test if pairs_in([example]) - train_pairs]
    assert len(unseen) > 0.1 * len(corpus.test)
    assert {example.kind for example in unseen} == set(KINDS)
    # Unseen pairs are new combinations of known words, not new words.
    assert {aspect for aspect, _ in train_pairs} == set(ASPECTS)
    assert {adjective for _, adjective in train_pairs} == ADJECTIVES


def test_splits_helpers_return_texts_and_labels(corpus: SentimentSplits) -> None:
    assert corpus.texts("val") == [example.text for example in corpus.val]
    assert corpus.labels("test") == [example.label for example in corpus.test]
    with pytest.raises(ValueError, match="expected split 'train', 'val' or 'test', got 'dev'"):
        corpus.texts("dev")


def test_small_corpora_work() -> None:
    tiny = make_sentiment_corpus(seed=3, n_train=7, n_val=1, n_test=2)
    assert (len(tiny.train), len(tiny.val), len(tiny.test)) == (7, 1, 2)


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"n_train": 0}, "expected n_train to be a positive int, got 0"),
        ({"n_val": -5}, "expected n_val to be a positive int, got -5"),
        ({"n_test": 2.5}, "expected n_test to be a positive int, got 2.5"),
        ({"n_train": 100_000}, "only .* distinct ones exist"),
    ],
)
def test_bad_corpus_arguments_raise(arguments: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        make_sentiment_corpus(**arguments)


def test_seed_must_be_an_int() -> None:
    with pytest.raises(TypeError, match="expected seed to be an int, got str"):
        make_sentiment_corpus(seed="0")


def write_tsv(tmp_path, content: str):
    path = tmp_path / "train.tsv"
    path.write_text(content, encoding="utf-8")
    return path


def test_load_sst2_reads_sentences_and_labels(tmp_path) -> None:
    path = write_tsv(tmp_path, "sentence\tlabel\na gorgeous , witty film \t1\nit 's a mess\t0\n")
    assert load_sst2_tsv(path) == [
        SentimentExample("a gorgeous , witty film ", 1, "sst2"),
        SentimentExample("it 's a mess", 0, "sst2"),
    ]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("", "train.tsv is empty"),
        ("sentence\tlabel\n", "header but no examples"),
        (
            "text\tlabel\nfine\t1\n",
            "expected the header 'sentence\\\\tlabel' on line 1 of train.tsv, got 'text\\\\tlabel'",
        ),
        (
            "sentence\tlabel\nfine\t1\nno tab here\n",
            "expected exactly one tab on line 3 of train.tsv, got 0",
        ),
        ("sentence\tlabel\nfine\t1\t0\n", "expected exactly one tab on line 2 of train.tsv, got 2"),
        (
            "sentence\tlabel\nfine\t1\nbad\tpositive\n",
            "expected label 0 or 1 on line 3 of train.tsv, got 'positive'",
        ),
        ("sentence\tlabel\nfine\t2\n", "expected label 0 or 1 on line 2 of train.tsv, got '2'"),
    ],
)
def test_load_sst2_rejects_malformed_files(tmp_path, content: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        load_sst2_tsv(write_tsv(tmp_path, content))


def test_load_sst2_reports_a_missing_file(tmp_path) -> None:
    with pytest.raises(FileNotFoundError, match="no SST-2 file at .*missing.tsv"):
        load_sst2_tsv(tmp_path / "missing.tsv")


def test_load_char_corpus_reads_the_shipped_fables() -> None:
    text = load_char_corpus()
    assert isinstance(text, str) and len(text) > 1000
    assert text == load_char_corpus("fables")


def test_load_char_corpus_lists_available_names_for_an_unknown_one() -> None:
    with pytest.raises(ValueError, match="unknown corpus 'sonnets'; available corpora: .*fables"):
        load_char_corpus("sonnets")


@given(length=st.integers(2, 60), block_size=st.integers(1, 12))
def test_lm_blocks_are_consecutive_and_targets_shifted_by_one(length: int, block_size: int) -> None:
    ids = torch.randint(0, 50, (length,), generator=torch.Generator().manual_seed(length))
    if length < block_size + 1:
        with pytest.raises(ValueError, match="need at least block_size"):
            make_lm_blocks(ids, block_size)
        return
    x, y = make_lm_blocks(ids, block_size)
    assert x.shape == y.shape == ((length - 1) // block_size, block_size)
    for i in range(x.shape[0]):
        for t in range(block_size):
            assert x[i, t] == ids[i * block_size + t]
            assert y[i, t] == ids[i * block_size + t + 1]


@pytest.mark.parametrize(
    ("ids", "block_size", "error", "message"),
    [
        (
            torch.zeros(2, 10, dtype=torch.long),
            4,
            TypeError,
            r"1-D integer tensor of ids, got shape \(2, 10\)",
        ),
        (torch.zeros(10), 4, TypeError, "dtype torch.float32"),
        ([1, 2, 3, 4, 5], 2, TypeError, "expected ids to be a torch.Tensor, got list"),
        (torch.arange(4), 4, ValueError, "need at least block_size \\+ 1 = 5 ids .* got 4"),
        (torch.arange(10), 0, ValueError, "expected block_size to be a positive int, got 0"),
    ],
)
def test_lm_data_rejects_bad_input(
    ids: object, block_size: int, error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        make_lm_blocks(ids, block_size)
    with pytest.raises(error, match=message):
        sample_lm_batch(ids, block_size, batch_size=2)


def test_sample_lm_batch_draws_shifted_windows_inside_the_sequence() -> None:
    ids = torch.arange(100, 130)  # a token's value tells its position
    x, y = sample_lm_batch(
        ids, block_size=8, batch_size=500, generator=torch.Generator().manual_seed(0)
    )
    assert x.shape == y.shape == (500, 8)
    assert torch.equal(y, x + 1)
    assert torch.equal(
        x - x[:, :1], torch.arange(8).expand(500, 8)
    )  # each row is one contiguous window
    assert x.min() >= 100 and y.max() <= 129
    assert {x[:, 0].min().item(), x[:, 0].max().item()} == {
        100,
        121,
    }  # every start, first to last, is reachable


def test_sample_lm_batch_is_reproducible_with_a_seeded_generator() -> None:
    ids = torch.arange(1000)
    first = sample_lm_batch(ids, 16, 4, generator=torch.Generator().manual_seed(7))
    second = sample_lm_batch(ids, 16, 4, generator=torch.Generator().manual_seed(7))
    assert all(torch.equal(a, b) for a, b in zip(first, second, strict=True))
    with pytest.raises(ValueError, match="expected batch_size to be a positive int, got 0"):
        sample_lm_batch(ids, 16, 0)
