"""Exercise 1a, `clean` (test_clean): lowercase, then split into words and punctuation marks."""

from __future__ import annotations

import re
from collections.abc import Callable

from attention_lab.reference.a03_transformer_block import WordTokenizer
from autograder.authoring.hidden_draws import hidden_generator
from autograder.authoring.reference_bans import ban
from autograder.authoring.registry import Namespace, check, fail
from autograder.authoring.requiring import require
from autograder.checks.a03_transformer_block.shared import (
    ASSIGNMENT,
    TOKENIZER_BANNED,
    course_corpora,
    explain_mismatch,
    python_random,
)


def regex_clean(
    pattern: str, *, lower: bool = True, apostrophe: bool = True
) -> Callable[[str], list]:
    def clean(text: str) -> list[str]:
        if lower:
            text = text.lower()
        if apostrophe:
            text = text.replace("\u2019", "'")
        return re.findall(pattern, text)

    return clean


WORD, MARK = r"\w+(?:'\w+)*", r"[^\w\s]"
CLEAN_MISTAKES: dict[str, Callable[[str], list]] = {
    "the text is not lowercased: call text.lower() before splitting": regex_clean(
        f"{WORD}|{MARK}", lower=False
    ),
    "the typographic apostrophe \u2019 (U+2019) is not replaced by ': do text.replace('\\u2019', \"'\") before splitting": regex_clean(
        f"{WORD}|{MARK}", apostrophe=False
    ),
    "split on whitespace only: every punctuation mark must be a token of its own (use re.findall with \\w+(?:'\\w+)*|[^\\w\\s])": lambda text: (
        text.lower().replace("\u2019", "'").split()
    ),
    "inner apostrophes split a word: didn't and o'clock must stay one token each (\\w+(?:'\\w+)*, not \\w+)": regex_clean(
        rf"\w+|{MARK}"
    ),
    "a word may contain several inner apostrophes (rock'n'roll is one token): repeat the group, (?:'\\w+)*, not (?:'\\w+)?": regex_clean(
        rf"\w+(?:'\w+)?|{MARK}"
    ),
    "runs of punctuation are kept together: each punctuation mark is a token of its own ([^\\w\\s], not [^\\w\\s]+)": regex_clean(
        rf"{WORD}|[^\w\s]+"
    ),
    "apostrophes at the start or end of a word are kept in it: only an apostrophe between two word characters belongs to the word ('tis gives ', tis)": regex_clean(
        rf"[\w']+|{MARK}"
    ),
    "non-ASCII letters such as é or ß are word characters too: use \\w, not [a-z0-9]": regex_clean(
        r"[a-z0-9_]+(?:'[a-z0-9_]+)*|[^a-z0-9_\s]"
    ),
    "use str.lower(), not str.casefold(): casefold also rewrites letters (ß becomes ss)": lambda text: (
        re.findall(f"{WORD}|{MARK}", text.casefold().replace("\u2019", "'"))
    ),
}

CLEAN_PROBES = [
    "The cat sat.",
    "Didn't it rain?!",
    "It\u2019s 2 o'clock",
    "'tis the dogs' bone",
    "rock'n'roll!!",
    "C3PO & R2-D2...",
    "don''t",
    "\u00c9COLE d\u2019\u00e9t\u00e9, Stra\u00dfe",
    "  tabs\tand\nnew lines  ",
    "",
    "...",
    "a-b_c 'quoted' \"double\" (paren)",
]


ban(
    ASSIGNMENT,
    "clean",
    TOKENIZER_BANNED,
    check_name="clean_does_not_call_the_tokenizer",
)


@check(ASSIGNMENT, "test_clean")
def clean_matches_the_word_tokenizer(ns: Namespace) -> None:
    clean = require(ns, "clean")
    rng = python_random(hidden_generator("a03 clean"))
    alphabet = (
        list("abcdeXYZ019\u00e9\u00df_") * 3 + list("'\u2019 .,!?;-()\"") + [" "] * 8 + ["\t", "\n"]
    )
    texts = CLEAN_PROBES + [
        "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40))) for _ in range(200)
    ]
    texts += course_corpora()["clean"].texts("val")
    got = []
    for text in texts:
        tokens = clean(text)
        if not isinstance(tokens, list):
            fail(f"clean must return a list of strings, got {type(tokens).__name__}")
        got.append(tokens)
    explain_mismatch(
        texts,
        got,
        [WordTokenizer.clean(text) for text in texts],
        CLEAN_MISTAKES,
        lambda text, a, e: (
            f"clean({text!r}) gave {a}, expected {e}: a token is a word \\w+(?:'\\w+)* or one punctuation mark [^\\w\\s], after lowercasing"
        ),
    )
