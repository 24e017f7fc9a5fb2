"""Tests for the word- and character-level tokenizers."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from attention_lab.reference.a03_transformer_block import WordTokenizer
from attention_lab.tokenizer import CLS, PAD, UNK, CharTokenizer

CORPUS = [
    "The plot was dull, but the acting was great!",
    "I didn't like the plot.",
    "The acting   was GREAT; the music was great too.",
]
CORPUS_WORDS = sorted({word for text in CORPUS for word in WordTokenizer.clean(text)})


@pytest.fixture
def tokenizer() -> WordTokenizer:
    return WordTokenizer().fit(CORPUS)


def test_special_tokens_have_fixed_ids(tokenizer: WordTokenizer) -> None:
    assert tokenizer.id_to_token[:3] == [PAD, UNK, CLS]
    assert (tokenizer.pad_id, tokenizer.unk_id, tokenizer.cls_id) == (0, 1, 2)


def test_clean_lowercases_splits_punctuation_and_keeps_inner_apostrophes() -> None:
    assert WordTokenizer.clean("  I DIDN'T like it,\tthe END!  ") == [
        "i",
        "didn't",
        "like",
        "it",
        ",",
        "the",
        "end",
        "!",
    ]
    assert WordTokenizer.clean("didn’t 'quoted'") == ["didn't", "'", "quoted", "'"]


def test_vocabulary_is_ordered_by_frequency_then_alphabetically(tokenizer: WordTokenizer) -> None:
    words = tokenizer.id_to_token[3:]
    # the x5, was x4, great x3, then ".", "acting" and "plot" (x2 each) in alphabetical order.
    assert words[:6] == ["the", "was", "great", ".", "acting", "plot"]
    assert sorted(words) == CORPUS_WORDS
    assert tokenizer.vocab_size == 3 + len(CORPUS_WORDS)
    assert all(
        tokenizer.token_to_id[token] == index for index, token in enumerate(tokenizer.id_to_token)
    )


def test_max_vocab_size_and_min_freq_limit_the_vocabulary() -> None:
    assert WordTokenizer(max_vocab_size=5).fit(CORPUS).id_to_token == [PAD, UNK, CLS, "the", "was"]
    assert WordTokenizer(min_freq=2).fit(CORPUS).id_to_token[3:] == [
        "the",
        "was",
        "great",
        ".",
        "acting",
        "plot",
    ]


def test_encode_puts_cls_first_and_maps_unknown_words_to_unk(tokenizer: WordTokenizer) -> None:
    ids = tokenizer.encode("the zebra was great")
    assert ids == [
        tokenizer.cls_id,
        tokenizer.token_to_id["the"],
        tokenizer.unk_id,
        tokenizer.token_to_id["was"],
        tokenizer.token_to_id["great"],
    ]
    assert tokenizer.encode("the zebra", add_cls=False) == [
        tokenizer.token_to_id["the"],
        tokenizer.unk_id,
    ]


def test_encode_truncates_and_pads_to_max_len(tokenizer: WordTokenizer) -> None:
    long_ids = tokenizer.encode("the plot was dull but the acting was great", max_len=4)
    assert long_ids == tokenizer.encode("the plot was dull but the acting was great")[:4]
    short_ids = tokenizer.encode("the plot", max_len=6)
    assert (
        short_ids
        == [tokenizer.cls_id, tokenizer.token_to_id["the"], tokenizer.token_to_id["plot"]] + [0] * 3
    )
    assert tokenizer.encode("the plot", max_len=6, pad=False) == short_ids[:3]


def test_encode_batch_returns_a_padded_long_tensor(tokenizer: WordTokenizer) -> None:
    batch = tokenizer.encode_batch(
        ["the plot", "the acting was great but the plot was dull"], max_len=5, on_truncate="ignore"
    )
    assert batch.dtype == torch.long and batch.shape == (2, 5)
    assert batch[0].tolist() == tokenizer.encode("the plot", max_len=5)
    assert (batch[:, 0] == tokenizer.cls_id).all()
    assert tokenizer.encode_batch([], max_len=5).shape == (0, 5)


def test_decode_skips_pad_and_cls_but_shows_unk(tokenizer: WordTokenizer) -> None:
    ids = tokenizer.encode("the zebra was great", max_len=8)
    assert tokenizer.decode(ids) == f"the {UNK} was great"
    assert tokenizer.decode(torch.tensor(ids)) == f"the {UNK} was great"
    assert tokenizer.decode(np.array(ids)) == f"the {UNK} was great"
    assert (
        tokenizer.decode(ids, skip_special=False) == f"{CLS} the {UNK} was great {PAD} {PAD} {PAD}"
    )


@given(st.lists(st.sampled_from(CORPUS_WORDS), max_size=30))
def test_decode_inverts_encode_for_in_vocabulary_words(words: list[str]) -> None:
    tokenizer = WordTokenizer().fit(CORPUS)
    text = " ".join(words)
    assert tokenizer.decode(tokenizer.encode(text)) == text
    assert tokenizer.decode(tokenizer.encode(text, max_len=40)) == text


def test_save_and_load_round_trip_exactly(tokenizer: WordTokenizer, tmp_path) -> None:
    tokenizer.max_vocab_size, tokenizer.min_freq = 50, 1
    path = tmp_path / "tokenizer.json"
    tokenizer.save(path)
    loaded = WordTokenizer.load(path)
    assert loaded.id_to_token == tokenizer.id_to_token
    assert loaded.token_to_id == tokenizer.token_to_id
    assert (loaded.max_vocab_size, loaded.min_freq) == (50, 1)
    assert loaded.encode("the zebra, i didn't", max_len=9) == tokenizer.encode(
        "the zebra, i didn't", max_len=9
    )


def test_load_rejects_a_file_that_is_not_a_saved_tokenizer(tmp_path) -> None:
    path = tmp_path / "other.json"
    path.write_text(json.dumps({"hello": "world"}))
    with pytest.raises(ValueError, match="written by WordTokenizer.save"):
        WordTokenizer.load(path)
    path.write_text(
        json.dumps({"format": "attention_lab.WordTokenizer", "id_to_token": ["a", "b"]})
    )
    with pytest.raises(ValueError, match="starting with"):
        WordTokenizer.load(path)


def test_unfitted_tokenizer_raises() -> None:
    tokenizer = WordTokenizer()
    with pytest.raises(RuntimeError, match="not fitted"):
        tokenizer.encode("the plot")
    with pytest.raises(RuntimeError, match="not fitted"):
        _ = tokenizer.vocab_size
    with pytest.raises(RuntimeError, match="not fitted"):
        tokenizer.decode([0])
    with pytest.raises(RuntimeError, match="not fitted"):
        tokenizer.encode_batch([], max_len=4)


def test_fit_rejects_empty_corpora_and_non_strings() -> None:
    with pytest.raises(ValueError, match="empty corpus"):
        WordTokenizer().fit([])
    with pytest.raises(ValueError, match="empty corpus"):
        WordTokenizer().fit(["", "  "])
    with pytest.raises(TypeError, match="got int at index 1"):
        WordTokenizer().fit(["fine", 3])
    with pytest.raises(TypeError, match="single str"):
        WordTokenizer().fit("the plot was dull")


def test_bad_settings_and_arguments_raise() -> None:
    with pytest.raises(ValueError, match="max_vocab_size"):
        WordTokenizer(max_vocab_size=2)
    with pytest.raises(ValueError, match="min_freq"):
        WordTokenizer(min_freq=0)
    tokenizer = WordTokenizer().fit(CORPUS)
    with pytest.raises(ValueError, match="max_len"):
        tokenizer.encode("the plot", max_len=0)
    with pytest.raises(ValueError, match="max_len"):
        tokenizer.encode_batch(["the plot"], max_len=None)
    with pytest.raises(TypeError, match="got int"):
        tokenizer.encode(42)


def test_decode_rejects_unknown_ids() -> None:
    tokenizer = WordTokenizer().fit(CORPUS)
    with pytest.raises(
        ValueError, match=f"id {tokenizer.vocab_size} at position 1 is out of range"
    ):
        tokenizer.decode([3, tokenizer.vocab_size])
    with pytest.raises(ValueError, match="id -1"):
        tokenizer.decode([-1])
    with pytest.raises(TypeError, match="integer ids"):
        tokenizer.decode([1.5])
    with pytest.raises(TypeError, match="1-D integer tensor"):
        tokenizer.decode(torch.zeros(2, 2, dtype=torch.long))


def test_char_tokenizer_vocabulary_is_the_sorted_characters() -> None:
    tokenizer = CharTokenizer("hello world")
    assert tokenizer.itos == [" ", "d", "e", "h", "l", "o", "r", "w"]
    assert tokenizer.vocab_size == 8
    assert tokenizer.stoi["h"] == 3


@given(st.text(alphabet="abc xyz\n.", max_size=50))
def test_char_tokenizer_round_trip(text: str) -> None:
    tokenizer = CharTokenizer("abc xyz\n.")
    assert tokenizer.decode(tokenizer.encode(text)) == text
    assert tokenizer.decode(torch.tensor(tokenizer.encode(text), dtype=torch.long)) == text


def test_char_tokenizer_errors_name_the_problem() -> None:
    with pytest.raises(ValueError, match="empty text"):
        CharTokenizer("")
    tokenizer = CharTokenizer("abc")
    with pytest.raises(ValueError, match="'Z', 'q'"):
        tokenizer.encode("aqZq")
    with pytest.raises(
        ValueError, match="id 3 at position 0 is out of range for a vocabulary of 3"
    ):
        tokenizer.decode([3])


def test_truncation_cuts_the_chosen_end_and_keeps_cls(tokenizer: WordTokenizer) -> None:
    text = "the plot was dull but the acting was great"
    full = tokenizer.encode(text)
    assert tokenizer.encode(text, max_len=4) == full[:4]
    assert tokenizer.encode(text, max_len=4, truncate="start") == [tokenizer.cls_id, *full[-3:]]
    assert tokenizer.longest([text, "the plot"]) == len(full)
    with pytest.raises(ValueError, match="'end' or 'start'"):
        tokenizer.encode(text, max_len=4, truncate="middle")


def test_encode_batch_counts_the_texts_it_cuts(tokenizer: WordTokenizer) -> None:
    texts = ["the plot was dull but the acting was great", "the plot", "was the acting great"]
    with pytest.warns(UserWarning, match=r"2 of 3 texts are longer than max_len=4"):
        batch = tokenizer.encode_batch(texts, 4, truncate="start")
    assert batch[0].tolist() == tokenizer.encode(texts[0], max_len=4, truncate="start")
    with pytest.raises(ValueError, match="2 of 3 texts"):
        tokenizer.encode_batch(texts, 4, on_truncate="error")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no text is cut: nothing to say
        tokenizer.encode_batch(texts, tokenizer.longest(texts))
        tokenizer.encode_batch(texts, 4, on_truncate="ignore")
