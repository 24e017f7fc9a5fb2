"""Hidden checks for 03_transformer_block: tokenizer, positional encoding, LayerNorm, encoder block."""

from __future__ import annotations

import copy
import random
import re
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import torch
from torch import Tensor, nn
from torch.nn import functional as F

import attention_lab.encoder as reference
from attention_lab.attention import causal_mask, load_into_torch_mha
from attention_lab.data import SentimentSplits, make_sentiment_corpus
from attention_lab.tokenizer import SPECIAL_TOKENS, WordTokenizer
from autograder.authoring.helpers import (
    ban,
    copy_into,
    diagnose,
    fail,
    forbid_references,
    hidden_generator,
    is_close,
    observe_call,
    random_sizes,
    require,
)
from autograder.authoring.registry import Namespace, check, reference_data
from autograder.judging.kernel import function_name

ASSIGNMENT = "03_transformer_block"
PAD_ID, UNK_ID, CLS_ID = 0, 1, 2
TOKENIZER_BANNED = {"attention_lab's WordTokenizer": WordTokenizer}
PE_BANNED = {
    "attention_lab's sinusoidal_table": reference.sinusoidal_table,
    "attention_lab's SinusoidalPositionalEncoding": reference.SinusoidalPositionalEncoding,
}
LAYER_NORM_BANNED = {
    "nn.LayerNorm": nn.LayerNorm,
    "F.layer_norm": F.layer_norm,
    "torch.layer_norm": torch.layer_norm,
    "torch.native_layer_norm": torch.native_layer_norm,
    "attention_lab's LayerNorm": reference.LayerNorm,
}
BLOCK_BANNED = {
    "attention_lab's EncoderBlock": reference.EncoderBlock,
    "attention_lab's TransformerEncoder": reference.TransformerEncoder,
    "nn.TransformerEncoderLayer": nn.TransformerEncoderLayer,
    "nn.TransformerEncoder": nn.TransformerEncoder,
}


@reference_data(ASSIGNMENT)
def course_corpora() -> dict[str, SentimentSplits]:
    """Small hidden draws of the course's sentiment corpus, one per check that reads one."""
    corpora = {}
    for use in ("clean", "vocab", "encode"):
        generator = hidden_generator(f"a03 {use} corpus")
        seed = int(torch.randint(10_000, 2**31, (1,), generator=generator))
        corpora[use] = make_sentiment_corpus(seed=seed, n_train=300, n_val=60, n_test=1)
    return corpora


def python_random(generator: torch.Generator) -> random.Random:
    """A Python RNG seeded from a hidden torch generator (for strings and lists)."""
    return random.Random(int(torch.randint(2**62, (1,), generator=generator)))


def explain_mismatch(
    cases: Sequence[Any],
    got: Sequence[Any],
    expected: Sequence[Any],
    mistakes: dict[str, Callable[[Any], Any]],
    otherwise: Callable[[Any, Any, Any], str],
) -> None:
    """Pass if every case is right; else name the first mistake that explains every wrong case.

    mistakes: diagnosis -> a function computing what that misconception returns for a case.
    otherwise: (case, got, expected) -> the diagnosis when no known mistake fits.
    """
    wrong = [i for i, (a, e) in enumerate(zip(got, expected, strict=True)) if a != e]
    if not wrong:
        return
    for diagnosis, mistake in mistakes.items():
        try:
            if all(mistake(cases[i]) == got[i] for i in wrong):
                fail(diagnosis)
        except (ValueError, TypeError, IndexError, KeyError):
            continue
    first = min(wrong, key=lambda i: len(repr(cases[i])))
    fail(otherwise(cases[first], got[first], expected[first]))


# ---------------------------------------------------------------------------------------------
# clean


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
    cells=("test_clean",),
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


# ---------------------------------------------------------------------------------------------
# build_vocab


def own_clean(ns: Namespace, texts: list[str]) -> Callable[[str], list[str]]:
    """The student's clean where it works on every text (without raising), else attention_lab's."""
    clean = ns.get("clean")
    try:
        if callable(clean) and all(isinstance(clean(text), list) for text in texts):
            return lambda text: list(clean(text))
    except Exception:
        pass
    return WordTokenizer.clean


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


def vocab_mistakes(tokens: Callable[[str], list[str]]) -> dict[str, Callable[[tuple], list[str]]]:
    """What each misconception returns, counting the tokens that ``tokens`` gives."""

    def vocab_mistake(**change: Any) -> Callable[[tuple], list[str]]:
        change.setdefault("tokens", tokens)
        return lambda case: vocab_variant(*case, **change)

    return {
        "the special tokens are missing: the vocabulary starts with <pad>, <unk>, <cls> (ids 0, 1, 2)": vocab_mistake(
            specials=False
        ),
        "max_vocab_size counts the special tokens too: the whole list, specials included, has at most max_vocab_size entries": vocab_mistake(
            cut_counts_specials=False
        ),
        "min_freq keeps tokens seen at least min_freq times: use count >= min_freq, not >": vocab_mistake(
            strict=True
        ),
        "tokens with the same count must be sorted alphabetically (Counter.most_common keeps them in first-seen order): sort by (-count, token)": vocab_mistake(
            order="count, first seen"
        ),
        "tokens with the same count are in reverse alphabetical order: sort by key (-count, token) without reverse=True": vocab_mistake(
            order="count, reverse alphabetical"
        ),
        "tokens are sorted by rising count: the most frequent tokens come first": vocab_mistake(
            order="rising count"
        ),
        "tokens are sorted alphabetically only: sort by falling count first, alphabetically only among equal counts": vocab_mistake(
            order="alphabetical"
        ),
        "a token is counted once per text: count every occurrence (Counter.update(clean(text)))": vocab_mistake(
            per_text=True
        ),
        "the vocabulary is built from text.split(): count the tokens of clean(text), so case and punctuation are handled": vocab_mistake(
            tokens=str.split
        ),
    }


def random_corpora(generator: torch.Generator) -> list[tuple[list[str], int | None, int]]:
    """(texts, max_vocab_size, min_freq) cases with many ties, capitals and punctuation."""
    rng = python_random(generator)
    words = ["ant", "bee", "Cat", "dog", "eel", "fox", "gnu", "hen", "ibis", "jay", "koi", "Lynx",
             "mole", "newt", "owl", "puma", "quail", "rat", "seal", "toad", ",", ".", "!", "don't",
             "zebra!", "Bee", "(owl)"]  # fmt: skip
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


ban(
    ASSIGNMENT,
    "build_vocab",
    TOKENIZER_BANNED,
    cells=("test_build_vocab",),
    check_name="build_vocab_does_not_call_the_tokenizer",
)


@check(ASSIGNMENT, "test_build_vocab")
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
    expected = [
        WordTokenizer(max_vocab_size=max_size, min_freq=min_freq).fit(texts).id_to_token
        for texts, max_size, min_freq in cases
    ]
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


# ---------------------------------------------------------------------------------------------
# encode


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


def encode_mistakes(tokens: Callable[[str], list[str]]) -> dict[str, Callable[[tuple], list[int]]]:
    """What each misconception returns, encoding the tokens that ``tokens`` gives."""

    def encode_mistake(**change: Any) -> Callable[[tuple], list[int]]:
        change.setdefault("tokens", tokens)
        return lambda case: encode_variant(case, **change)

    return {
        "the sequence must start with CLS_ID = 2: ids = [CLS_ID] + [one id per token]": encode_mistake(
            cls=False
        ),
        "<cls> counts towards max_len: cut the whole list, <cls> included, to its first max_len ids": encode_mistake(
            cls_in_max_len=False
        ),
        "padding goes at the end: append PAD_ID up to max_len, do not prepend it": encode_mistake(
            pad_front=True
        ),
        "unknown tokens must become UNK_ID = 1, not PAD_ID = 0: use token_to_id.get(token, UNK_ID)": encode_mistake(
            unk=PAD_ID
        ),
        "unknown tokens are dropped: each one must become UNK_ID = 1 (token_to_id.get(token, UNK_ID))": encode_mistake(
            unk=None
        ),
        "long texts are not cut: keep only the first max_len ids": encode_mistake(cut="none"),
        "the last max_len ids are kept: keep the FIRST max_len ids (ids[:max_len])": encode_mistake(
            cut="last"
        ),
        "short texts are not padded: append PAD_ID = 0 up to exactly max_len ids": encode_mistake(
            pad=False
        ),
        "the text is split with text.split(): encode the tokens of clean(text)": encode_mistake(
            tokens=str.split
        ),
    }


def hidden_vocabulary(generator: torch.Generator) -> dict[str, int]:
    """A token_to_id whose word ids are not in any alphabetical or frequency order."""
    rng = python_random(generator)
    words = ["the", "a", "plot", "was", "dull", "superb", "acting", ",", ".", "!", "didn't", "it",
             "film", "great", "bad", "not"]  # fmt: skip
    known = rng.sample(words, 11)
    ids = rng.sample(range(3, 40), len(known))
    return {**{t: i for i, t in enumerate(SPECIAL_TOKENS)}, **dict(zip(known, ids, strict=True))}


ban(
    ASSIGNMENT,
    "encode",
    TOKENIZER_BANNED,
    cells=("test_encode",),
    check_name="encode_does_not_call_the_tokenizer",
)


@check(ASSIGNMENT, "test_encode")
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
                fail(
                    "encode changed token_to_id: look tokens up with token_to_id.get(token, UNK_ID) "
                    "instead of adding entries"
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


# ---------------------------------------------------------------------------------------------
# sinusoidal_encoding

PE_CONCATENATED = (
    "sines and cosines are concatenated (all sines in the first half, all cosines in the second): "
    "the notebook's layout is interleaved, sin in the even columns 0, 2, 4, ... and cos in the odd "
    "columns 1, 3, 5, ..., so position 0 is [0, 1, 0, 1, ...]"
)


def pe_variant(
    max_len: int,
    d_model: int,
    *,
    layout: str = "interleaved",
    exponent: str = "2i",
    base: float = 10000.0,
    first_position: int = 0,
) -> Tensor:
    """The (max_len, d_model) table in float64, with one detail changed per keyword."""
    position = torch.arange(first_position, first_position + max_len, dtype=torch.float64)[:, None]
    pair = torch.arange(d_model // 2, dtype=torch.float64)
    if exponent == "2i":
        sin_angle = cos_angle = position * base ** (-2 * pair / d_model)
    elif exponent == "i":
        sin_angle = cos_angle = position * base ** (-pair / d_model)
    elif exponent == "column":  # each column its own exponent: 2i for sin, 2i + 1 for cos
        sin_angle = position * base ** (-2 * pair / d_model)
        cos_angle = position * base ** (-(2 * pair + 1) / d_model)
    table = torch.zeros(max_len, d_model, dtype=torch.float64)
    sin, cos = torch.sin(sin_angle), torch.cos(cos_angle)
    if layout == "interleaved":
        table[:, 0::2], table[:, 1::2] = sin, cos
    elif layout == "swapped":
        table[:, 0::2], table[:, 1::2] = cos, sin
    elif layout == "concatenated":
        table[:, : d_model // 2], table[:, d_model // 2 :] = sin, cos
    elif layout == "concatenated, cos first":
        table[:, : d_model // 2], table[:, d_model // 2 :] = cos, sin
    return table


def pe_mistakes(max_len: int, d_model: int) -> dict[str, Tensor]:
    return {
        PE_CONCATENATED: pe_variant(max_len, d_model, layout="concatenated"),
        "sin and cos are swapped: sines go in the EVEN columns (pe[:, 0::2]) and cosines in the ODD columns (pe[:, 1::2]), so position 0 is [0, 1, 0, 1, ...]": pe_variant(
            max_len, d_model, layout="swapped"
        ),
        "cosines come first and the halves are concatenated: the layout is interleaved, sin in the even columns and cos in the odd columns": pe_variant(
            max_len, d_model, layout="concatenated, cos first"
        ),
        "the exponent must be 2i/d_model with 2i the even column index (i = 0, 1, ..., d_model/2 - 1), not i/d_model": pe_variant(
            max_len, d_model, exponent="i"
        ),
        "columns 2i and 2i+1 must share ONE angle: the cosine column uses the exponent 2i/d_model of its even partner, not (2i+1)/d_model": pe_variant(
            max_len, d_model, exponent="column"
        ),
        "the base of the frequencies is 10000: angle = pos / 10000^(2i/d_model)": pe_variant(
            max_len, d_model, base=1000.0
        ),
        "positions start at 0, not 1: use torch.arange(max_len), so row 0 is [0, 1, 0, 1, ...]": pe_variant(
            max_len, d_model, first_position=1
        ),
    }


ban(ASSIGNMENT, "sinusoidal_encoding", PE_BANNED, cells=("test_sinusoidal_encoding",))


@check(ASSIGNMENT, "test_sinusoidal_encoding")
def sinusoidal_encoding_matches_the_formula(ns: Namespace) -> None:
    sinusoidal_encoding = require(ns, "sinusoidal_encoding")
    g = hidden_generator("a03 pe")
    cases = []
    for _ in range(6):
        half, max_len = random_sizes(g, 2, low=3, high=40)
        cases.append((max_len, 2 * half))
    cases += [
        (
            int(torch.randint(100, 257, (1,), generator=g)),
            2 * int(torch.randint(20, 81, (1,), generator=g)),
        )
    ]
    cases += [(8, 512), (5, 6), (1, 2), (3, 2), (1, 10)]
    for max_len, d_model in cases:
        table = sinusoidal_encoding(max_len, d_model)
        if not isinstance(table, Tensor) or table.shape != (max_len, d_model):
            shape = tuple(getattr(table, "shape", ())) or type(table).__name__
            fail(
                f"sinusoidal_encoding({max_len}, {d_model}) must be a (max_len, d_model) = "
                f"{(max_len, d_model)} tensor, got {shape}"
            )
        if table.dtype != torch.float32:
            fail(
                f"sinusoidal_encoding must return float32 (the module's default dtype), got {table.dtype}"
            )
        diagnose(
            table,
            pe_variant(max_len, d_model),
            pe_mistakes(max_len, d_model),
            f"sinusoidal_encoding({max_len}, {d_model}) differs from PE[pos, 2i] = sin(pos / 10000^(2i/d_model)), "
            "PE[pos, 2i+1] = cos(the same angle)",
            atol=2e-4,
        )


# ---------------------------------------------------------------------------------------------
# LayerNorm


def layer_norm_variant(
    x: Tensor,
    weight: Tensor,
    bias: Tensor,
    eps: float,
    *,
    correction: int = 0,
    eps_at: str = "inside",
    dims: str = "last",
    affine: str = "scale then shift",
) -> Tensor:
    """LayerNorm in float64, with one detail changed per keyword."""
    dim = {"last": (-1,), "first": (0,), "all": tuple(range(x.dim()))}[dims]
    mean = x.mean(dim=dim, keepdim=True)
    var = x.var(dim=dim, keepdim=True, correction=correction)
    if eps_at == "inside":
        normed = (x - mean) / torch.sqrt(var + eps)
    elif eps_at == "outside":
        normed = (x - mean) / (torch.sqrt(var) + eps)
    elif eps_at == "missing":
        normed = (x - mean) / torch.sqrt(var)
    elif eps_at == "1e-5":
        normed = (x - mean) / torch.sqrt(var + 1e-5)
    elif eps_at == "outside, 1e-5":
        normed = (x - mean) / (torch.sqrt(var) + 1e-5)
    if affine == "scale then shift":
        return normed * weight + bias
    if affine == "none":
        return normed
    if affine == "swapped":
        return normed * bias + weight
    return (normed + bias) * weight  # "shift then scale"


def layer_norm_mistakes(x: Tensor, weight: Tensor, bias: Tensor, eps: float) -> dict[str, Tensor]:
    def variant(**change: Any) -> Tensor:
        return layer_norm_variant(x, weight, bias, eps, **change)

    mistakes = {
        "the variance is unbiased (divides by d - 1): LayerNorm uses the biased variance, divide by d (x.var(-1, unbiased=False) or the mean of squared deviations)": variant(
            correction=1
        ),
        "eps is added outside the square root (std + eps): it goes inside, sqrt(variance + eps)": variant(
            eps_at="outside"
        ),
        "x.std() is unbiased (divides by d - 1) and eps is added outside the root: use sqrt(biased variance + eps)": variant(
            correction=1, eps_at="outside"
        ),
        "a hard-coded 1e-5 is added outside the square root: use sqrt(variance + self.eps)": variant(
            eps_at="outside, 1e-5"
        ),
        "eps is missing: divide by sqrt(variance + eps)": variant(eps_at="missing"),
        "eps is hard-coded as 1e-5: use self.eps, the eps passed to __init__": variant(
            eps_at="1e-5"
        ),
        "gamma (self.weight) and beta (self.bias) are not applied: return x_hat * self.weight + self.bias": variant(
            affine="none"
        ),
        "gamma and beta are swapped: scale by self.weight, then shift by self.bias": variant(
            affine="swapped"
        ),
        "beta is added before scaling by gamma: return x_hat * self.weight + self.bias": variant(
            affine="shift then scale"
        ),
        "mean and variance are taken over the whole tensor: normalise each vector over its LAST dimension only (dim=-1, keepdim=True)": variant(
            dims="all"
        ),
    }
    if x.dim() > 1 and x.shape[0] > 1:
        mistakes[
            "normalised over the first dimension: take the mean and variance over the LAST dimension (dim=-1, keepdim=True)"
        ] = variant(dims="first")
    return mistakes


def build_layer_norm(
    cls: type, d: int, eps: float, generator: torch.Generator, dtype=torch.float64
):
    """(the student's LayerNorm, nn.LayerNorm) with the same random gamma and beta, in dtype."""
    with torch.random.fork_rng(devices=[]):
        mine = cls(d, eps=eps)
    if not isinstance(mine, nn.Module):
        fail("LayerNorm must be an nn.Module (class LayerNorm(nn.Module))")
    weight, bias = getattr(mine, "weight", None), getattr(mine, "bias", None)
    if not (isinstance(weight, nn.Parameter) and isinstance(bias, nn.Parameter)):
        fail("keep the given parameters self.weight (gamma) and self.bias (beta) as nn.Parameters")
    if weight.shape != (d,) or bias.shape != (d,):
        fail(f"self.weight and self.bias must have shape (d_model,) = ({d},)")
    if getattr(mine, "eps", None) != eps:
        fail("keep the given __init__: it stores the eps argument as self.eps")
    theirs = nn.LayerNorm(d, eps=eps)
    new_weight = torch.rand(d, generator=generator) * 3 - 1
    new_bias = torch.randn(d, generator=generator)
    copy_into(mine, "weight", new_weight)
    copy_into(mine, "bias", new_bias)
    with torch.no_grad():
        theirs.weight.copy_(new_weight)
        theirs.bias.copy_(new_bias)
    return mine.to(dtype), theirs.to(dtype)


def layer_norm_input(generator: torch.Generator, lead: tuple[int, ...], d: int) -> Tensor:
    """float64 rows with very different scales and offsets, some almost constant."""
    scale = 10.0 ** (torch.rand(*lead, 1, generator=generator, dtype=torch.float64) * 5 - 3)
    offset = torch.randn(*lead, 1, generator=generator, dtype=torch.float64) * 20
    return torch.randn(*lead, d, generator=generator, dtype=torch.float64) * scale + offset


@check(ASSIGNMENT, "test_layer_norm")
def layer_norm_does_not_call_the_reference(ns: Namespace) -> None:
    cls = require(ns, "LayerNorm", type)
    forbid_references(cls, LAYER_NORM_BANNED, "`LayerNorm`")
    g = hidden_generator("a03 layer norm calls")
    mine, _ = build_layer_norm(cls, 5, 1e-5, g)
    _, called = observe_call(
        "torch_functions", mine, torch.randn(2, 3, 5, generator=g, dtype=torch.float64)
    )
    for label in ("F.layer_norm", "torch.layer_norm", "torch.native_layer_norm"):
        if function_name(LAYER_NORM_BANNED[label]) in called:
            fail(
                f"`LayerNorm` calls {label} instead of implementing it: compute the mean and variance "
                "yourself (no credit for calling the reference)"
            )


@check(ASSIGNMENT, "test_layer_norm")
def layer_norm_matches_torch(ns: Namespace) -> None:
    cls = require(ns, "LayerNorm", type)
    g = hidden_generator("a03 layer norm")
    ds = [2, *random_sizes(g, 3, low=3, high=40)]
    for trial, (d, eps) in enumerate(zip(ds, (1e-5, 1e-3, 1e-6, 1e-3), strict=True)):
        lead = tuple(random_sizes(g, trial % 3 + 1, low=2, high=6))
        mine, theirs = build_layer_norm(cls, d, eps, g)
        x = layer_norm_input(g, lead, d)
        original = x.clone()
        with torch.no_grad():
            out = mine(x)
            expected = theirs(x)
        if not torch.equal(x, original):
            fail(
                "LayerNorm changed its input in place: compute a new tensor (x - mean, not x -= mean)"
            )
        if not isinstance(out, Tensor) or out.shape != x.shape:
            fail(
                f"LayerNorm must keep the shape {tuple(x.shape)}, got {tuple(getattr(out, 'shape', ()))}"
            )
        diagnose(
            out,
            expected,
            layer_norm_mistakes(x, theirs.weight.detach(), theirs.bias.detach(), eps),
            f"LayerNorm differs from nn.LayerNorm (input {tuple(x.shape)}, eps={eps}): "
            "(x - mean) / sqrt(biased variance + eps) * weight + bias, over the last dimension",
            atol=1e-7,
        )


@check(ASSIGNMENT, "test_layer_norm")
def layer_norm_gradients_match_torch(ns: Namespace) -> None:
    cls = require(ns, "LayerNorm", type)
    g = hidden_generator("a03 layer norm grad")
    lead_1, lead_2, d = random_sizes(g, 3, low=2, high=9)
    mine, theirs = build_layer_norm(cls, d, 1e-4, g)
    x = layer_norm_input(g, (lead_1, lead_2), d)
    x_mine, x_theirs = x.clone().requires_grad_(True), x.clone().requires_grad_(True)
    upstream = torch.randn(x.shape, generator=g, dtype=torch.float64)
    out = mine(x_mine)
    if not out.requires_grad:
        fail(
            "the output is cut from autograd: no .detach(), .item(), .numpy() or torch.tensor(...) inside forward"
        )
    (out * upstream).sum().backward()
    (theirs(x_theirs) * upstream).sum().backward()
    for name, a, b in (
        ("the input", x_mine.grad, x_theirs.grad),
        ("self.weight", mine.weight.grad, theirs.weight.grad),
        ("self.bias", mine.bias.grad, theirs.bias.grad),
    ):
        if a is None or not torch.allclose(a, b, atol=1e-7, rtol=1e-5):
            fail(
                f"the gradient with respect to {name} differs from nn.LayerNorm: do not detach the "
                "mean or the variance, and use self.weight and self.bias themselves"
            )


@check(ASSIGNMENT, "test_layer_norm")
def layer_norm_float32_and_constant_vectors(ns: Namespace) -> None:
    cls = require(ns, "LayerNorm", type)
    g = hidden_generator("a03 layer norm float32")
    b, length, d = random_sizes(g, 3, low=2, high=12)
    mine, theirs = build_layer_norm(cls, d, 1e-5, g, dtype=torch.float32)
    x = torch.randn(b, length, d, generator=g) * 3 + 2  # well conditioned for float32
    with torch.no_grad():
        out = mine(x)
        if out.dtype != torch.float32:
            fail(f"a float32 input must give a float32 output, got {out.dtype}")
        if not torch.allclose(out, theirs(x), atol=1e-4, rtol=1e-4):
            fail("LayerNorm differs from nn.LayerNorm on float32 inputs")
        constant = mine(torch.full((b, d), -7.5))
    if not torch.isfinite(constant).all():
        fail("a constant vector gives NaN or inf: add eps to the variance inside the square root")
    if not torch.allclose(constant, theirs.bias.detach().expand(b, d), atol=1e-5):
        fail("a constant vector must map to beta (self.bias): x - mean is zero there")


# ---------------------------------------------------------------------------------------------
# EncoderBlock


def reference_block(
    d_model: int, num_heads: int, d_ff: int, generator: torch.Generator, dropout: float = 0.0
) -> reference.EncoderBlock:
    """attention_lab's post-norm block with random weights and non-trivial LayerNorm parameters."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(int(torch.randint(2**31, (1,), generator=generator)))
        block = reference.EncoderBlock(d_model, num_heads, d_ff, dropout)
    with torch.no_grad():
        for norm in (block.norm1, block.norm2):
            norm.weight.copy_(torch.rand(d_model, generator=generator) + 0.5)
            norm.bias.copy_(torch.rand(d_model, generator=generator) - 0.5)
    return block


def build_block(cls: type, ref: nn.Module, d_model: int, num_heads: int, d_ff: int, dropout=0.0):
    """The student's block (global RNG untouched) with the reference's weights copied in."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        mine = cls(d_model, num_heads, d_ff, dropout)
    if not isinstance(mine, nn.Module):
        fail("EncoderBlock must be an nn.Module (class EncoderBlock(nn.Module))")
    for name in ("self_attn", "feed_forward", "norm1", "norm2"):
        if not isinstance(getattr(mine, name, None), nn.Module):
            fail(f"the block needs a submodule named `self.{name}` (see the table in the exercise)")
    try:
        mine.load_state_dict(ref.state_dict())
    except RuntimeError as error:
        first = str(error).strip().splitlines()[-1].strip()
        fail(
            "could not copy the reference block's weights into yours: build exactly self_attn, "
            f"feed_forward, norm1, norm2 from the table, with the given sizes ({first})"
        )
    return mine.to(ref.norm1.weight.dtype)


def call_block(
    block: nn.Module, x: Tensor, mask: Tensor | None, what: str
) -> tuple[Tensor, Tensor]:
    try:
        result = block(x, mask=mask)
    except NotImplementedError:
        raise
    except Exception as error:
        fail(f"your EncoderBlock raised {type(error).__name__} on {what}: {error}")
    if not (isinstance(result, tuple) and len(result) == 2):
        fail("forward must return a tuple (out, weights)")
    return result


def block_mistakes(ref: reference.EncoderBlock, x: Tensor, mask: Tensor | None):
    """(weight mistakes, output mistakes) computed from the reference block's own parts."""

    def attn(inputs: Tensor, m: Tensor | None = mask) -> Tensor:
        return ref.self_attn(inputs, mask=m)[0]

    n1, n2, ffn = ref.norm1, ref.norm2, ref.feed_forward
    a = attn(x)
    h = n1(x + a)
    pre_h = x + attn(n1(x))
    weights = {
        "LayerNorm is applied before the sublayer (pre-norm): this block is post-norm, h = norm1(x + attn(x)) and out = norm2(h + ffn(h))": ref.self_attn(
            n1(x), mask=mask
        )[1],
        "weights are averaged over the heads: return the per-head weights of self_attn, (B, num_heads, L, L)": ref.self_attn(
            x, mask=mask
        )[1].mean(1),
    }
    if mask is not None:
        weights[
            "the mask is not passed on: call self.self_attn(x, mask=mask), so hidden keys get zero weight"
        ] = ref.self_attn(x)[1]
    outputs = {
        "LayerNorm is applied before each sublayer (pre-norm): this block is post-norm, h = norm1(x + attn(x)) and out = norm2(h + ffn(h))": pre_h
        + ffn(n2(pre_h)),
        "no residual connections: add each sublayer's input back, h = norm1(x + attn(x)) and out = norm2(h + ffn(h))": n2(
            ffn(n1(a))
        ),
        "the attention sublayer has no residual connection: h = norm1(x + attn(x)), add the input x back before the norm": n2(
            n1(a) + ffn(n1(a))
        ),
        "the feed-forward sublayer has no residual connection: out = norm2(h + ffn(h)), add h back before the norm": n2(
            ffn(h)
        ),
        "the second residual adds the block's input x: out = norm2(h + ffn(h)) with h = norm1(x + attn(x))": n2(
            x + ffn(h)
        ),
        "the feed-forward network reads the raw attention output: it must read h = norm1(x + attn(x))": n2(
            h + ffn(a)
        ),
        "the feed-forward network reads the block's input x: it must read h = norm1(x + attn(x))": n2(
            h + ffn(x)
        ),
        "norm1 is used twice: the second residual sum goes through norm2": n1(h + ffn(h)),
        "norm1 and norm2 are swapped: norm1 follows the attention sublayer, norm2 the feed-forward": n1(
            n2(x + a) + ffn(n2(x + a))
        ),
        "the second LayerNorm is missing: out = norm2(h + ffn(h))": h + ffn(h),
        "the first LayerNorm is missing: h = norm1(x + attn(x))": n2(x + a + ffn(x + a)),
    }
    if mask is not None:
        free = n1(x + attn(x, None))
        outputs[
            "the mask is not passed on: call self.self_attn(x, mask=mask), so hidden keys get zero weight"
        ] = n2(free + ffn(free))
    return weights, outputs


def block_sizes(generator: torch.Generator) -> tuple[int, int, int, int, int]:
    """B, L, H, d_k, d_ff with H >= 2, all different, d_model = H * d_k unlike the others."""
    while True:
        b, length, h, d_k = random_sizes(generator, 4, low=2, high=7)
        d_ff = int(torch.randint(3, 30, (1,), generator=generator))
        if len({b, length, h, d_k, d_ff, h * d_k}) == 6:
            return b, length, h, d_k, d_ff


ban(
    ASSIGNMENT,
    "EncoderBlock",
    BLOCK_BANNED,
    cells=("test_encoder_block",),
    check_name="encoder_block_does_not_call_the_reference",
    kind=type,
)


@check(ASSIGNMENT, "test_encoder_block")
def encoder_block_matches_the_reference(ns: Namespace) -> None:
    cls = require(ns, "EncoderBlock", type)
    g = hidden_generator("a03 block")
    for _ in range(2):
        b, length, h, d_k, d_ff = block_sizes(g)
        d_model = h * d_k
        ref = reference_block(d_model, h, d_ff, g).double().eval()
        mine = build_block(cls, ref, d_model, h, d_ff).eval()
        x = torch.randn(b, length, d_model, generator=g, dtype=torch.float64) * 2
        padding = torch.ones(b, 1, length, dtype=torch.bool)
        padding[0, 0, length // 2 + 1 :] = False  # the first sentence ends in padding
        pairs = torch.rand(b, length, length, generator=g) > 0.5
        pairs[..., 0] = True
        sizes = f"d_model={d_model}, num_heads={h}, d_ff={d_ff}, B={b}, L={length}"
        for mask, what in (
            (None, "no mask"),
            (padding, "a (B, 1, L) padding mask"),
            (causal_mask(length), "an (L, L) causal mask"),
            (pairs, "a (B, L, L) mask"),
        ):
            with torch.no_grad():
                out, weights = call_block(mine, x, mask, f"{sizes}, {what}")
                expected_out, expected_weights = ref(x, mask)
                weight_mistakes, output_mistakes = block_mistakes(ref, x, mask)
            diagnose(
                weights,
                expected_weights,
                weight_mistakes,
                f"the attention weights differ from the reference block ({sizes}, {what}): "
                "return the weights of self.self_attn(x, mask=mask)",
                atol=1e-9,
            )
            diagnose(
                out,
                expected_out,
                output_mistakes,
                f"the output differs from the reference post-norm block ({sizes}, {what}): "
                "h = norm1(x + dropout1(attn(x))), out = norm2(h + dropout2(ffn(h)))",
                atol=1e-9,
            )


@check(ASSIGNMENT, "test_encoder_block")
def encoder_block_matches_torch_encoder_layer(ns: Namespace) -> None:
    """An independent oracle: nn.TransformerEncoderLayer (post-norm, ReLU) with the same weights."""
    cls = require(ns, "EncoderBlock", type)
    g = hidden_generator("a03 block torch")
    b, length, h, d_k, d_ff = block_sizes(g)
    d_model = h * d_k
    ref = reference_block(d_model, h, d_ff, g).double().eval()
    mine = build_block(cls, ref, d_model, h, d_ff).eval()
    with torch.random.fork_rng(devices=[]):
        layer = nn.TransformerEncoderLayer(
            d_model, h, d_ff, dropout=0.0, batch_first=True, dtype=torch.float64
        ).eval()
    attn = ref.self_attn
    projections = (attn.q_proj, attn.k_proj, attn.v_proj, attn.out_proj)
    load_into_torch_mha(
        layer.self_attn, *(p.weight for p in projections), *(p.bias for p in projections)
    )
    with torch.no_grad():
        layer.linear1.load_state_dict(ref.feed_forward.linear1.state_dict())
        layer.linear2.load_state_dict(ref.feed_forward.linear2.state_dict())
        layer.norm1.load_state_dict(ref.norm1.state_dict())
        layer.norm2.load_state_dict(ref.norm2.state_dict())
        x = torch.randn(b, length, d_model, generator=g, dtype=torch.float64)
        out, _ = call_block(mine, x, None, f"d_model={d_model}, num_heads={h}")
        expected = layer(x)
    if not is_close(out, expected, atol=1e-9):
        fail(
            "the output differs from nn.TransformerEncoderLayer (post-norm) with the same weights: "
            "h = norm1(x + attn(x)), out = norm2(h + ffn(h))"
        )


@check(ASSIGNMENT, "test_encoder_block")
def encoder_block_applies_dropout_where_the_formula_puts_it(ns: Namespace) -> None:
    cls = require(ns, "EncoderBlock", type)
    g = hidden_generator("a03 block dropout")
    b, length, h, d_k, d_ff = block_sizes(g)
    d_model, p = h * d_k, 0.3
    ref = reference_block(d_model, h, d_ff, g, dropout=p).double()
    mine = build_block(cls, ref, d_model, h, d_ff, dropout=p)
    x = torch.randn(b, length, d_model, generator=g, dtype=torch.float64)
    seed = int(torch.randint(2**31, (1,), generator=g))

    def run(block: nn.Module, train: bool, what: str) -> Tensor:
        block.train(train)
        with torch.random.fork_rng(devices=[]), torch.no_grad():
            torch.manual_seed(seed)
            return call_block(block, x, None, what)[0]

    mode = f"dropout={p}"
    if not torch.allclose(run(mine, False, f"{mode}, eval mode"), run(mine, False, mode)):
        fail(
            "in eval mode the block must be deterministic: use nn.Dropout modules, which follow train()/eval()"
        )
    no_residual_dropout = copy.deepcopy(ref)
    no_residual_dropout.dropout1 = no_residual_dropout.dropout2 = nn.Identity()
    no_inner_dropout = copy.deepcopy(ref)
    no_inner_dropout.self_attn.attn_dropout.p = 0.0
    no_inner_dropout.feed_forward.dropout.p = 0.0
    no_dropout = copy.deepcopy(no_inner_dropout)
    no_dropout.dropout1 = no_dropout.dropout2 = nn.Identity()
    diagnose(
        run(mine, True, f"{mode}, train mode"),
        run(ref, True, "train mode"),
        {
            "dropout is never applied: create nn.Dropout(dropout) modules, pass dropout to MultiHeadAttention and FeedForward, and use dropout1/dropout2 in forward": run(
                no_dropout, True, ""
            ),
            "dropout1 and dropout2 are not applied in training mode: h = norm1(x + dropout1(attn(x))), out = norm2(h + dropout2(ffn(h)))": run(
                no_residual_dropout, True, ""
            ),
            "dropout is not passed on to the sublayers: build MultiHeadAttention(d_model, num_heads, dropout) and FeedForward(d_model, d_ff, dropout)": run(
                no_inner_dropout, True, ""
            ),
        },
        "in train mode the output differs from the reference with the same random numbers: apply dropout1 to "
        "the attention output and dropout2 to the FFN output, each before its residual sum",
        atol=1e-9,
    )


@check(ASSIGNMENT, "test_encoder_block")
def encoder_block_gradients_reach_every_parameter(ns: Namespace) -> None:
    cls = require(ns, "EncoderBlock", type)
    g = hidden_generator("a03 block grad")
    b, length, h, d_k, d_ff = block_sizes(g)
    d_model = h * d_k
    ref = reference_block(d_model, h, d_ff, g).double()
    mine = build_block(cls, ref, d_model, h, d_ff)
    x = torch.randn(b, length, d_model, generator=g, dtype=torch.float64)
    out, _ = call_block(mine, x, None, "a gradient check")
    (out * torch.randn(out.shape, generator=g, dtype=torch.float64)).sum().backward()
    for name, parameter in mine.named_parameters():
        if parameter.grad is None or (
            name.endswith("weight") and not parameter.grad.abs().sum() > 0
        ):
            fail(
                f"`{name}` gets no gradient from the block's output: is every submodule used in forward?"
            )
