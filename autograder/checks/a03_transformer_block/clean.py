"""Exercise 1a, `clean` (test_clean): lowercase, then split into words and punctuation marks."""

from __future__ import annotations

import re
from collections.abc import Callable

from attention_lab.reference.a03_transformer_block import WordTokenizer
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
# The named mistakes of `clean`, by family (autograder/authoring/mistakes.py): each is diagnosed
# only where the answer gives that variant's tokens on every text (CLEAN_MISTAKES).
CLEAN = catalogue(
    ASSIGNMENT,
    "clean",
    {
        "case": {
            "not_lowercased": "the text is not lowercased: call text.lower() before splitting",
            "casefold": "use str.lower(), not str.casefold(): casefold also rewrites letters "
            "(ß becomes ss)",
        },
        "apostrophes": {
            "typographic_apostrophe": "the typographic apostrophe \u2019 (U+2019) is not "
            "replaced by ': do text.replace('\\u2019', \"'\") before splitting",
            "inner_apostrophe_splits": "inner apostrophes split a word: didn't and o'clock must "
            "stay one token each (\\w+(?:'\\w+)*, not \\w+)",
            "one_inner_apostrophe": "a word may contain several inner apostrophes (rock'n'roll "
            "is one token): repeat the group, (?:'\\w+)*, not (?:'\\w+)?",
            "edge_apostrophes": "an apostrophe that is not between two word characters is "
            "kept in a word: only an apostrophe between two word characters belongs to the word "
            "(dogs' gives dogs, ' and 'tis gives ', tis)",
            "one_apostrophe_kept_at_the_end": "a word holds at most one apostrophe and keeps it "
            "at its end too (dogs' stays dogs', and rock'n'roll gives rock'n, ', roll): an "
            "apostrophe belongs to a word only between two word characters, and a word continues "
            "through every such one (\\w+(?:'\\w+)*)",
            "apostrophe_runs_kept": "a run of apostrophes between two word characters is kept in "
            "the word (don''t stays one token): a word continues through single apostrophes "
            "only, so don''t gives don, ', ', t",
        },
        "punctuation": {
            "whitespace_split": "split on whitespace only: every punctuation mark must be a "
            "token of its own (use re.findall with \\w+(?:'\\w+)*|[^\\w\\s])",
            "punctuation_runs": "runs of punctuation are kept together: each punctuation mark "
            "is a token of its own ([^\\w\\s], not [^\\w\\s]+)",
            "punctuation_dropped": "punctuation marks are dropped: each one is a token of its "
            "own, so match words OR one punctuation mark, \\w+(?:'\\w+)*|[^\\w\\s]",
        },
        "letters": {
            "ascii_only": "non-ASCII letters such as é or ß are word characters too: use \\w, "
            "not [a-z0-9]",
        },
    },
)
CLEAN_MISTAKES: dict[Mistake, Callable[[str], list] | tuple[Callable[[str], list], ...]] = {
    CLEAN["not_lowercased"]: regex_clean(f"{WORD}|{MARK}", lower=False),
    CLEAN["casefold"]: lambda text: re.findall(
        f"{WORD}|{MARK}", text.casefold().replace("\u2019", "'")
    ),
    CLEAN["typographic_apostrophe"]: regex_clean(f"{WORD}|{MARK}", apostrophe=False),
    CLEAN["inner_apostrophe_splits"]: regex_clean(rf"\w+|{MARK}"),
    CLEAN["one_inner_apostrophe"]: regex_clean(rf"\w+(?:'\w+)?|{MARK}"),
    # apostrophes taken into words at both edges, at the end only, or at the start only; or
    # the statement's word with apostrophes allowed before it, after it, or both
    CLEAN["edge_apostrophes"]: tuple(
        regex_clean(f"{word}|{MARK}")
        for word in (
            r"[\w']+",
            r"\w[\w']*",
            r"[\w']*\w",
            rf"'?{WORD}",
            rf"{WORD}'?",
            rf"'?{WORD}'?",
            rf"'*{WORD}",
            rf"{WORD}'*",
            rf"'*{WORD}'*",
        )
    ),
    # one apostrophe at most, after the word's first characters, at its end as well
    CLEAN["one_apostrophe_kept_at_the_end"]: tuple(
        regex_clean(f"{word}|{MARK}") for word in (r"\w+'?\w*", r"\w+(?:'\w*)?")
    ),
    CLEAN["apostrophe_runs_kept"]: regex_clean(rf"\w+(?:'+\w+)*|{MARK}"),
    CLEAN["whitespace_split"]: lambda text: text.lower().replace("\u2019", "'").split(),
    CLEAN["punctuation_runs"]: regex_clean(rf"{WORD}|[^\w\s]+"),
    CLEAN["punctuation_dropped"]: regex_clean(WORD),
    # a word class of ASCII characters, with or without the underscore and digits
    CLEAN["ascii_only"]: tuple(
        regex_clean(rf"[{chars}]+(?:'[{chars}]+)*|[^{chars}\s]")
        for chars in ("a-z0-9_", "a-z0-9", "a-z_", "a-z")
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
    "a-b_c 'quoted' \"double\" (paren)",
]
# Texts with no word in them: nothing at all, only spaces, only punctuation.  Each mistake that
# shows on such texts shows on one of these, whatever the hidden draws add (apostrophes alone are
# one token each; the typographic one becomes ').
DEGENERATE_PROBES = ["", " ", "\t\n", "...", " ?! ", "''", "\u2019"]


ban(
    ASSIGNMENT,
    "clean",
    TOKENIZER_BANNED,
    check_name="clean_does_not_call_the_tokenizer",
)


def judge_clean(clean: Callable[[str], object], texts: list[str]) -> None:
    """Fail unless ``clean`` gives the word tokenizer's tokens on each of ``texts``."""
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


@check(
    ASSIGNMENT,
    "test_clean",
    keeps=(
        "lowercase the text",
        "replace the typographic apostrophe `’` (U+2019) by the plain `'`",
        "return, from left to right, every token, where a token is either a word or a "
        "single punctuation mark",
        r"a word is a run of word characters (`\w`: letters, digits, underscore), which "
        "may continue through inner apostrophes",
        "a punctuation mark is any single character that is neither a word character "
        "nor whitespace",
    ),
)
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
    # Texts without a word character are the other check's edge case.
    judge_clean(clean, [text for text in texts if re.search(r"\w", text)])


@check(
    ASSIGNMENT,
    "test_clean",
    weight=EDGE_CASES,
    keeps=(
        "a punctuation mark is any single character that is neither a word character "
        "nor whitespace",
        "Whitespace only separates tokens and never appears in the output.",
    ),
)
def clean_of_a_text_without_words(ns: Namespace) -> None:
    # An empty text has no tokens (not [""]), and whitespace alone none either.
    clean = require(ns, "clean")
    rng = python_random(hidden_generator("a03 clean without words"))
    alphabet = list("'\u2019.,!?;-()\"") + [" "] * 4 + ["\t", "\n"]
    texts = DEGENERATE_PROBES + [
        "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 12))) for _ in range(20)
    ]
    judge_clean(clean, texts)
