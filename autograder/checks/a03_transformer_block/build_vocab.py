"""Exercise 1b, `build_vocab` (test_build_vocab): specials, then tokens by falling count."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

import torch

from attention_lab.reference.a03_transformer_block import WordTokenizer
from attention_lab.tokenizer import SPECIAL_TOKENS
from autograder.authoring.hidden_draws import hidden_generator
from autograder.authoring.mistakes import Mistake, catalogue
from autograder.authoring.reference_bans import ban
from autograder.authoring.registry import EDGE_CASES, Namespace, check, fail
from autograder.authoring.requiring import require
from autograder.checks.a03_transformer_block.shared import (
    ASSIGNMENT,
    TOKENIZER_BANNED,
    course_corpora,
    explain_mismatch,
    own_clean,
    python_random,
)


def vocab_variant(
    texts: list[str],
    max_size: int | None,
    min_freq: int,
    *,
    tokens: Callable[[str], list[str]] = WordTokenizer.clean,
    order: str = "count, alphabetical",
    per_text: bool = False,
    specials: bool = True,
    cut_counts_specials: bool = True,
    strict: bool = False,
) -> list[str]:
    """The vocabulary build_vocab returns, with one detail changed per keyword."""
    counts: Counter[str] = Counter()
    for text in texts:
        counts.update(set(tokens(text)) if per_text else tokens(text))
    items = list(counts.items())
    if order == "count, alphabetical":
        items.sort(key=lambda item: (-item[1], item[0]))
    elif order == "count, first seen":
        items = counts.most_common()
    elif order == "count, reverse alphabetical":
        items.sort(key=lambda item: (item[1], item[0]), reverse=True)
    elif order == "rising count":
        items.sort(key=lambda item: (item[1], item[0]))
    elif order == "alphabetical":
        items.sort(key=lambda item: item[0])
    words = [w for w, c in items if (c > min_freq if strict else c >= min_freq)]
    head = list(SPECIAL_TOKENS) if specials else []
    if max_size is None:
        return head + words
    if cut_counts_specials:
        return (head + words)[:max_size]
    return head + words[:max_size]


# The named mistakes of `build_vocab`, by family (autograder/authoring/mistakes.py): each is
# diagnosed only where the answer gives that variant's vocabulary in every case (vocab_mistakes).
VOCAB = catalogue(
    ASSIGNMENT,
    "build_vocab",
    {
        "specials": {
            "no_specials": "the special tokens are missing: the vocabulary starts with <pad>, "
            "<unk>, <cls> (ids 0, 1, 2)",
            "size_excludes_specials": "max_vocab_size counts the special tokens too: the whole "
            "list, specials included, has at most max_vocab_size entries",
            "negative_slice_end": "the tokens after the special tokens are cut to "
            "words[:max_vocab_size - 3], whose end is negative for a max_vocab_size below 3: "
            "such a slice drops only the last words, so the list keeps all 3 special tokens "
            "and more, where the whole list has at most max_vocab_size entries",
        },
        "threshold": {
            "strict_min_freq": "min_freq keeps tokens seen at least min_freq times: use count "
            ">= min_freq, not >",
        },
        "order": {
            "ties_first_seen": "tokens with the same count must be sorted alphabetically "
            "(Counter.most_common keeps them in first-seen order): sort by (-count, token)",
            "ties_reversed": "tokens with the same count are in reverse alphabetical order: "
            "sort by key (-count, token) without reverse=True",
            "rising_count": "tokens are sorted by rising count: the most frequent tokens come "
            "first",
            "alphabetical_only": "tokens are sorted alphabetically only: sort by falling count "
            "first, alphabetically only among equal counts",
        },
        "counting": {
            "once_per_text": "a token is counted once per text: count every occurrence "
            "(Counter.update(clean(text)))",
            "whitespace_split": "the vocabulary is built from text.split(): count the tokens of "
            "clean(text), so case and punctuation are handled",
        },
    },
)


def vocab_mistakes(
    tokens: Callable[[str], list[str]],
) -> dict[Mistake, Callable[[tuple], list[str]]]:
    """What each misconception returns, counting the tokens that ``tokens`` gives."""

    def vocab_mistake(**change: Any) -> Callable[[tuple], list[str]]:
        change.setdefault("tokens", tokens)
        return lambda case: vocab_variant(*case, **change)

    return {
        VOCAB["no_specials"]: vocab_mistake(specials=False),
        VOCAB["size_excludes_specials"]: vocab_mistake(cut_counts_specials=False),
        VOCAB["strict_min_freq"]: vocab_mistake(strict=True),
        VOCAB["ties_first_seen"]: vocab_mistake(order="count, first seen"),
        VOCAB["ties_reversed"]: vocab_mistake(order="count, reverse alphabetical"),
        VOCAB["rising_count"]: vocab_mistake(order="rising count"),
        VOCAB["alphabetical_only"]: vocab_mistake(order="alphabetical"),
        VOCAB["once_per_text"]: vocab_mistake(per_text=True),
        VOCAB["whitespace_split"]: vocab_mistake(tokens=str.split),
    }


def random_corpora(generator: torch.Generator) -> list[tuple[list[str], int | None, int]]:
    """(texts, max_vocab_size, min_freq) cases with many ties, capitals and punctuation."""
    rng = python_random(generator)
    words = [
        "ant",
        "bee",
        "Cat",
        "dog",
        "eel",
        "fox",
        "gnu",
        "hen",
        "ibis",
        "jay",
        "koi",
        "Lynx",
        "mole",
        "newt",
        "owl",
        "puma",
        "quail",
        "rat",
        "seal",
        "toad",
        ",",
        ".",
        "!",
        "don't",
        "zebra!",
        "Bee",
        "(owl)",
    ]
    cases = []
    for trial in range(24):
        pool = rng.sample(words, rng.randint(4, len(words)))
        corpus = [
            " ".join(rng.choices(pool, weights=range(1, len(pool) + 1), k=rng.randint(1, 10)))
            for _ in range(rng.randint(1, 14))
        ]
        max_size, min_freq = [(None, 1), (None, 2), (10, 1), (7, 3), (3, 1), (4, 2), (60, 1)][
            trial % 7
        ]
        cases.append((corpus, max_size, min_freq))
    return cases


def expected_vocab(texts: list[str], max_size: int | None, min_freq: int) -> list[str]:
    """The reference tokenizer's vocabulary; below room for the special tokens, which the
    reference refuses, the statement's cut of the whole list: the first max_size specials."""
    if max_size is not None and max_size < len(SPECIAL_TOKENS):
        return list(SPECIAL_TOKENS)[:max_size]
    return WordTokenizer(max_vocab_size=max_size, min_freq=min_freq).fit(texts).id_to_token


ban(
    ASSIGNMENT,
    "build_vocab",
    TOKENIZER_BANNED,
    check_name="build_vocab_does_not_call_the_tokenizer",
)


@check(
    ASSIGNMENT,
    "test_build_vocab",
    keeps=(
        "the special tokens come first, in the order of `SPECIAL_TOKENS`",
        "sorted by falling count; tokens with the same count are sorted alphabetically "
        "(plain string order)",
        "tokens seen fewer than `min_freq` times are left out",
        "if `max_vocab_size` is given, the whole list, special tokens included, has at "
        "most `max_vocab_size` entries",
    ),
)
def build_vocab_matches_the_word_tokenizer(ns: Namespace) -> None:
    build_vocab = require(ns, "build_vocab")
    cases = random_corpora(hidden_generator("a03 vocab"))
    cases.append((["b a", "a b", "c"], None, 1))  # a tie in first-seen order b, a
    corpus = course_corpora()["vocab"]
    cases += [(corpus.texts("train"), 50, 1), (corpus.texts("train"), None, 3)]
    got = []
    for texts, max_size, min_freq in cases:
        vocab = build_vocab(list(texts), max_vocab_size=max_size, min_freq=min_freq)
        if not isinstance(vocab, (list, tuple)):
            fail(
                f"build_vocab must return a list of tokens (id_to_token), got {type(vocab).__name__}"
            )
        got.append(list(vocab))
    expected = [expected_vocab(*case) for case in cases]
    if got == expected:
        return
    # A wrong `clean` costs test_clean only: build_vocab may count the tokens of the student's clean.
    tokens = own_clean(ns, [text for texts, _, _ in cases for text in texts])
    if got == [vocab_variant(*case, tokens=tokens) for case in cases]:
        return
    explain_mismatch(
        cases,
        got,
        expected,
        vocab_mistakes(tokens),
        lambda case, a, e: (
            f"build_vocab(..., max_vocab_size={case[1]}, min_freq={case[2]}) gave {a}, expected {e}: "
            "specials first, then the tokens of clean(text) by falling count, ties alphabetical"
        ),
    )


@check(
    ASSIGNMENT,
    "test_build_vocab",
    weight=EDGE_CASES,
    keeps=(
        "if `max_vocab_size` is given, the whole list, special tokens included, has at "
        "most `max_vocab_size` entries",
    ),
)
def build_vocab_cuts_into_the_special_tokens(ns: Namespace) -> None:
    # At or below the number of special tokens the cut reaches into them: the whole list has at
    # most max_vocab_size entries, so 2 leaves ['<pad>', '<unk>'] and 1 leaves ['<pad>'].
    build_vocab = require(ns, "build_vocab")
    corpora = random_corpora(hidden_generator("a03 vocab specials cut"))
    cases = [(corpora[0][0], 2, 1), (corpora[1][0], 1, 2)]
    got = [
        build_vocab(list(texts), max_vocab_size=size, min_freq=freq) for texts, size, freq in cases
    ]
    for (texts, max_size, min_freq), vocab in zip(cases, got, strict=True):
        expected = expected_vocab(texts, max_size, min_freq)
        if not isinstance(vocab, (list, tuple)) or list(vocab) != expected:
            seen = (
                f"build_vocab(..., max_vocab_size={max_size}, min_freq={min_freq}) gave "
                f"{vocab!r}, expected {expected}: the whole list, special tokens included, has "
                "at most max_vocab_size entries"
            )
            tokens = own_clean(ns, [text for texts, _, _ in cases for text in texts])
            # Named where it keeps some word: an end of 0 would keep none, as max(0, ...) does.
            if all(
                isinstance(answer, (list, tuple))
                and list(answer) == negative_slice_end(*case, tokens)
                for case, answer in zip(cases, got, strict=True)
            ) and any(len(answer) > len(SPECIAL_TOKENS) for answer in got):
                kept = len(vocab) - len(SPECIAL_TOKENS)
                fail(
                    f"{VOCAB['negative_slice_end']}: for max_vocab_size={max_size} your list "
                    f"keeps {kept} words after the special tokens, as words[:{max_size} - 3] = "
                    f"words[:{max_size - len(SPECIAL_TOKENS)}] does, on every case of this "
                    f"check\n{seen}"
                )
            fail(seen)


def negative_slice_end(
    texts: list[str], max_size: int, min_freq: int, tokens: Callable[[str], list[str]]
) -> list[str]:
    """The vocabulary of an answer that cuts the words behind the special tokens to
    words[:max_size - 3]: the statement's for a max_size of 3 or more, longer below 3."""
    words = vocab_variant(texts, None, min_freq, tokens=tokens)[len(SPECIAL_TOKENS) :]
    return list(SPECIAL_TOKENS) + words[: max_size - len(SPECIAL_TOKENS)]


# Half weight: the defaults are a detail beside computing the right vocabulary.
@check(
    ASSIGNMENT,
    "test_build_vocab",
    weight=0.5,
    keeps=("Implement `build_vocab(texts, max_vocab_size=None, min_freq=1)`",),
)
def build_vocab_defaults_keep_every_token(ns: Namespace) -> None:
    # The visible checks call build_vocab(texts) with the signature's defaults; every other hidden
    # call passes both arguments, and the visible checks decide no score, so this twin keeps the
    # defaults graded: it compares the answer with itself, so a wrong clean costs nothing here.
    build_vocab = require(ns, "build_vocab")
    texts = random_corpora(hidden_generator("a03 vocab defaults"))[0][0]
    texts.append("quokka wombat numbat")  # tokens seen once, which any min_freq > 1 drops
    default = build_vocab(list(texts))
    explicit = build_vocab(list(texts), max_vocab_size=None, min_freq=1)
    if default != explicit:
        fail(
            f"build_vocab(texts) without max_vocab_size and min_freq gave {default!r}, but "
            f"build_vocab(texts, max_vocab_size=None, min_freq=1) gave {explicit!r}: called "
            "without them, build_vocab must behave as with max_vocab_size=None and min_freq=1"
        )
