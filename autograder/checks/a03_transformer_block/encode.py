"""Exercise 1c, `encode` (test_encode): <cls>, one id per token, cut and padded to max_len."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from attention_lab.reference.a03_transformer_block import WordTokenizer
from attention_lab.tokenizer import SPECIAL_TOKENS
from autograder.authoring.hidden_draws import hidden_generator
from autograder.authoring.mistakes import Mistake, catalogue
from autograder.authoring.reference_bans import ban
from autograder.authoring.registry import Namespace, check, fail
from autograder.authoring.requiring import require
from autograder.checks.a03_transformer_block.shared import (
    ASSIGNMENT,
    TOKENIZER_BANNED,
    course_corpora,
    explain_mismatch,
    own_clean,
    python_random,
)

PAD_ID, UNK_ID, CLS_ID = 0, 1, 2


def encode_variant(
    case: tuple[str, dict[str, int], int | None],
    *,
    cls: bool = True,
    cls_in_max_len: bool = True,
    pad_front: bool = False,
    unk: int | None = UNK_ID,
    cut: str = "first",
    pad: bool = True,
    tokens: Callable[[str], list[str]] = WordTokenizer.clean,
) -> list[int]:
    """What encode returns, with one detail changed per keyword."""
    text, token_to_id, max_len = case
    words = [token_to_id.get(t, unk) for t in tokens(text)]
    words = [i for i in words if i is not None]
    ids = ([CLS_ID] if cls else []) + words
    if max_len is None:
        return ids
    if cut == "first":
        ids = ids[:max_len] if cls_in_max_len else ([CLS_ID] + words)[: max_len + 1]
    elif cut == "last":
        ids = ids[-max_len:]
    if pad:
        padding = [PAD_ID] * (max_len - len(ids))
        ids = padding + ids if pad_front else ids + padding
    return ids


# The named mistakes of `encode`, by family (autograder/authoring/mistakes.py): each is diagnosed
# only where the answer gives that variant's ids in every case (encode_mistakes).
ENCODE = catalogue(
    ASSIGNMENT,
    "encode",
    {
        "<cls>": {
            "no_cls": "the sequence must start with CLS_ID = 2: ids = [CLS_ID] + [one id per "
            "token]",
            "cls_not_counted": "<cls> counts towards max_len: cut the whole list, <cls> "
            "included, to its first max_len ids",
        },
        "padding": {
            "pad_in_front": "padding goes at the end: append PAD_ID up to max_len, do not "
            "prepend it",
            "not_padded": "short texts are not padded: append PAD_ID = 0 up to exactly max_len ids",
        },
        "unknown tokens": {
            "unknown_as_pad": "unknown tokens must become UNK_ID = 1, not PAD_ID = 0: use "
            "token_to_id.get(token, UNK_ID)",
            "unknown_dropped": "unknown tokens are dropped: each one must become UNK_ID = 1 "
            "(token_to_id.get(token, UNK_ID))",
        },
        "cutting": {
            "not_cut": "long texts are not cut: keep only the first max_len ids",
            "keeps_last": "the last max_len ids are kept: keep the FIRST max_len ids "
            "(ids[:max_len])",
        },
        "tokens": {
            "whitespace_split": "the text is split with text.split(): encode the tokens of "
            "clean(text)",
            "lowercased_whitespace_split": "the text is split with text.lower().split(), so "
            "punctuation stays glued to the words: encode the tokens of clean(text)",
        },
    },
)


def encode_mistakes(
    tokens: Callable[[str], list[str]],
) -> dict[Mistake, Callable[[tuple], list[int]]]:
    """What each misconception returns, encoding the tokens that ``tokens`` gives."""

    def encode_mistake(**change: Any) -> Callable[[tuple], list[int]]:
        change.setdefault("tokens", tokens)
        return lambda case: encode_variant(case, **change)

    return {
        ENCODE["no_cls"]: encode_mistake(cls=False),
        ENCODE["cls_not_counted"]: encode_mistake(cls_in_max_len=False),
        ENCODE["pad_in_front"]: encode_mistake(pad_front=True),
        ENCODE["not_padded"]: encode_mistake(pad=False),
        ENCODE["unknown_as_pad"]: encode_mistake(unk=PAD_ID),
        ENCODE["unknown_dropped"]: encode_mistake(unk=None),
        ENCODE["not_cut"]: encode_mistake(cut="none"),
        ENCODE["keeps_last"]: encode_mistake(cut="last"),
        ENCODE["whitespace_split"]: encode_mistake(tokens=str.split),
        ENCODE["lowercased_whitespace_split"]: encode_mistake(tokens=lambda t: t.lower().split()),
    }


def hidden_vocabulary(generator: torch.Generator) -> dict[str, int]:
    """A token_to_id whose word ids are not in any alphabetical or frequency order."""
    rng = python_random(generator)
    words = [
        "the",
        "a",
        "plot",
        "was",
        "dull",
        "superb",
        "acting",
        ",",
        ".",
        "!",
        "didn't",
        "it",
        "film",
        "great",
        "bad",
        "not",
    ]
    known = rng.sample(words, 11)
    ids = rng.sample(range(3, 40), len(known))
    return {**{t: i for i, t in enumerate(SPECIAL_TOKENS)}, **dict(zip(known, ids, strict=True))}


ban(
    ASSIGNMENT,
    "encode",
    TOKENIZER_BANNED,
    check_name="encode_does_not_call_the_tokenizer",
)


@check(
    ASSIGNMENT,
    "test_encode",
    keeps=(
        "start with the id of `<cls>` (`CLS_ID` = 2)",
        "using `UNK_ID` = 1 for tokens missing from `token_to_id`",
        "if `max_len` is given, cut the list to its first `max_len` ids (`<cls>` "
        "counts), then pad it with `PAD_ID` = 0 up to exactly `max_len` ids",
        "`encode` only reads `token_to_id`: it must not add to it or change it.",
    ),
)
def encode_matches_the_specification(ns: Namespace) -> None:
    encode = require(ns, "encode")
    g = hidden_generator("a03 encode")
    token_to_id = hidden_vocabulary(g)
    rng = python_random(g)
    words = [*token_to_id, "zebra", "PLOT", "Was", "unseen", "?", "<pad>"]
    texts = ["", "zebra!", "The PLOT, the plot.", "it didn't!"] + [
        " ".join(rng.choices(words[3:], k=rng.randint(1, 14))) for _ in range(25)
    ]
    texts += course_corpora()["encode"].texts("val")[:15]
    cases, got = [], []
    for i, text in enumerate(texts):
        for max_len in (None, 1, 2, 3 + i % 7, 12, 30):
            before = dict(token_to_id)
            ids = encode(text, token_to_id, max_len=max_len)
            if token_to_id != before:
                added = sorted(set(token_to_id) - set(before))
                fail(
                    f"encode(text, token_to_id, max_len={max_len}) changed token_to_id "
                    f"(entries added: {added}); the statement's encode only reads it"
                )
            if not isinstance(ids, list):
                fail(f"encode must return a list of ints, got {type(ids).__name__}")
            cases.append((text, token_to_id, max_len))
            got.append(ids)
    expected = [encode_variant(case) for case in cases]
    tokens = WordTokenizer.clean
    if got != expected:
        # A wrong `clean` costs test_clean only: encode may use the tokens of the student's clean.
        tokens = own_clean(ns, texts)
        if got == [encode_variant(case, tokens=tokens) for case in cases]:
            return
    # The same specification, implemented by attention_lab (on a vocabulary it built itself).
    tokenizer = WordTokenizer().fit(texts[3:])
    for text in texts[:6]:
        for max_len in (None, 1, 5):
            if encode_variant((text, tokenizer.token_to_id, max_len)) != tokenizer.encode(
                text, max_len=max_len
            ):
                raise AssertionError("the encode oracle disagrees with WordTokenizer.encode")
    explain_mismatch(
        cases,
        got,
        expected,
        encode_mistakes(tokens),
        lambda case, a, e: (
            f"encode({case[0]!r}, max_len={case[2]}) gave {a}, expected {e}: "
            "[CLS_ID] + token_to_id.get(token, UNK_ID) for each token, cut to max_len, then padded with PAD_ID"
        ),
    )


# Half weight: the defaults are a detail beside computing the right ids.
@check(
    ASSIGNMENT,
    "test_encode",
    weight=0.5,
    keeps=(
        "Implement `encode(text, token_to_id, max_len=None)`",
        "With `max_len=None` nothing is cut or padded.",
    ),
)
def encode_without_max_len_neither_cuts_nor_pads(ns: Namespace) -> None:
    # The visible checks call encode(text, token_to_id) with the default max_len; every other
    # hidden call passes max_len, and the visible checks decide no score, so this twin keeps the
    # default graded: it compares the answer with itself, so a wrong clean costs nothing here.
    encode = require(ns, "encode")
    g = hidden_generator("a03 encode defaults")
    token_to_id = hidden_vocabulary(g)
    rng = python_random(g)
    words = [*list(token_to_id)[3:], "zebra"]
    text = " ".join(rng.choices(words, k=rng.randint(20, 40)))  # longer than a small default
    default = encode(text, token_to_id)
    explicit = encode(text, token_to_id, max_len=None)
    if default != explicit:
        fail(
            f"encode(text, token_to_id) without max_len gave {default!r}, but encode(text, "
            f"token_to_id, max_len=None) gave {explicit!r} for text={text!r}: called "
            "without max_len, encode must behave as with max_len=None (no cutting, no padding)"
        )
