"""Datasets for the course: a generated sentiment corpus, an SST-2 reader and character LM data.

The sentiment corpus is built from short movie-review clauses such as
"the plot was really dull at times". A clause names one aspect (always a single
word) and one adjective; an intensifier keeps its polarity, a negator ("not",
"never") flips it, and an optional tail ("overall", "at times", ...) leaves it
unchanged. A contrast sentence "<clause> but <clause>" takes the label
of the clause after "but", which a bag of n-grams cannot locate: it sees the
same words whichever clause comes first.
"""

from __future__ import annotations

import os
import random
from dataclasses import dataclass
from importlib import resources
from itertools import islice, product
from typing import NamedTuple

import torch

ASPECTS: tuple[str, ...] = (
    "acting",
    "plot",
    "music",
    "dialogue",
    "pacing",
    "cinematography",
    "soundtrack",
    "ending",
    "characters",
    "script",
    "story",
    "direction",
    "editing",
    "visuals",
    "humor",
    "performances",
)
PLURAL_ASPECTS: frozenset[str] = frozenset({"characters", "visuals", "performances"})
POSITIVE_ADJECTIVES: tuple[str, ...] = (
    "good",
    "great",
    "excellent",
    "wonderful",
    "brilliant",
    "superb",
    "charming",
    "delightful",
    "gripping",
    "moving",
    "clever",
    "beautiful",
    "stunning",
    "fantastic",
    "memorable",
    "engaging",
)
NEGATIVE_ADJECTIVES: tuple[str, ...] = (
    "bad",
    "terrible",
    "awful",
    "dull",
    "boring",
    "weak",
    "clumsy",
    "bland",
    "tedious",
    "forgettable",
    "messy",
    "poor",
    "lifeless",
    "predictable",
    "annoying",
    "flat",
)
INTENSIFIERS: tuple[str, ...] = (
    "very",
    "really",
    "incredibly",
    "truly",
    "extremely",
    "remarkably",
    "genuinely",
    "thoroughly",
)
NEGATORS: tuple[str, ...] = ("not", "never")
TAILS: tuple[str, ...] = ("overall", "at times", "throughout", "for me", "to me", "in places")
KINDS: tuple[str, ...] = ("plain", "intensified", "negated", "contrast")

KIND_SHARES: dict[str, float] = {"plain": 0.2, "intensified": 0.2, "negated": 0.2, "contrast": 0.4}
OPPOSITE_CONTRAST_SHARE = 0.85  # contrasts whose two clauses disagree in polarity
HELD_OUT_ASPECTS_PER_ADJECTIVE = 3  # aspects each adjective meets only in val/test
_MODIFIERS: dict[str, tuple[str | None, ...]] = {
    "plain": (None,),
    "intensified": INTENSIFIERS,
    "negated": NEGATORS,
}
_SST2_HEADER = "sentence\tlabel"


@dataclass(frozen=True)
class SentimentExample:
    """One labelled sentence: label 1 is positive, 0 negative; kind says how it was built."""

    text: str
    label: int
    kind: str


@dataclass(frozen=True)
class SentimentSplits:
    """Train, validation and test examples, plus helpers for the texts or labels of one split."""

    train: list[SentimentExample]
    val: list[SentimentExample]
    test: list[SentimentExample]

    def split(self, name: str) -> list[SentimentExample]:
        """The examples of split `name` ("train", "val" or "test")."""
        if name not in ("train", "val", "test"):
            raise ValueError(f"expected split 'train', 'val' or 'test', got {name!r}")
        return getattr(self, name)

    def texts(self, name: str) -> list[str]:
        """The sentences of split `name`."""
        return [example.text for example in self.split(name)]

    def labels(self, name: str) -> list[int]:
        """The labels of split `name`."""
        return [example.label for example in self.split(name)]


class _Clause(NamedTuple):
    """One clause: the <aspect> was/were [modifier] <adjective> [tail]."""

    aspect: str
    adjective: str
    modifier: str | None
    tail: str | None

    @property
    def label(self) -> int:
        """1 when the clause praises its aspect, 0 when it criticises it."""
        return int((self.adjective in POSITIVE_ADJECTIVES) != (self.modifier in NEGATORS))

    @property
    def text(self) -> str:
        """The clause as lowercase words."""
        verb = "were" if self.aspect in PLURAL_ASPECTS else "was"
        words = ("the", self.aspect, verb, self.modifier, self.adjective, self.tail)
        return " ".join(word for word in words if word is not None)


def _check_positive_int(name: str, value: object) -> None:
    """Reject anything but a positive int for argument `name`."""
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ValueError(f"expected {name} to be a positive int, got {value!r}")


def _kind_counts(n: int) -> dict[str, int]:
    """Split `n` examples across KINDS by KIND_SHARES, rounding so the counts sum to `n`."""
    exact = {kind: n * KIND_SHARES[kind] for kind in KINDS}
    counts = {kind: int(share) for kind, share in exact.items()}
    by_remainder = sorted(KINDS, key=lambda kind: exact[kind] - counts[kind], reverse=True)
    for kind in by_remainder[: n - sum(counts.values())]:
        counts[kind] += 1
    return counts


def _held_out_pairs(rng: random.Random) -> frozenset[tuple[str, str]]:
    """Pick, per adjective, a few aspects it is paired with only outside the training split."""
    return frozenset(
        (aspect, adjective)
        for adjective in POSITIVE_ADJECTIVES + NEGATIVE_ADJECTIVES
        for aspect in rng.sample(ASPECTS, HELD_OUT_ASPECTS_PER_ADJECTIVE)
    )


class _SingleClauses:
    """Every distinct one-clause sentence of `kind` over the given aspect-adjective pairs, in
    product order, built only when read: a split reads a few thousand of the pool's 10^5."""

    def __init__(self, kind: str, pairs: list[tuple[str, str]]) -> None:
        self.pairs, self.modifiers, self.tails = pairs, _MODIFIERS[kind], (None, *TAILS)
        self.per_pair = len(self.modifiers) * len(self.tails)

    def __len__(self) -> int:
        return len(self.pairs) * self.per_pair

    def pair(self, index: int) -> tuple[str, str]:
        """The aspect-adjective pair of clause `index`."""
        return self.pairs[index // self.per_pair]

    def clause(self, index: int) -> _Clause:
        """Clause `index` of the product order."""
        pair, rest = divmod(index, self.per_pair)
        modifier, tail = divmod(rest, len(self.tails))
        return _Clause(*self.pairs[pair], self.modifiers[modifier], self.tails[tail])


def _contrast_capacity(pairs: list[tuple[str, str]]) -> int:
    """Number of distinct contrast sentences (two clauses on different aspects) over `pairs`."""
    clauses_per_pair = sum(len(modifiers) for modifiers in _MODIFIERS.values()) * len(TAILS)
    per_aspect = [clauses_per_pair * sum(aspect == a for a, _ in pairs) for aspect in ASPECTS]
    return sum(per_aspect) ** 2 - sum(count**2 for count in per_aspect)


def _random_clause(
    rng: random.Random,
    label: int,
    pairs_by_positivity: dict[bool, list[tuple[str, str]]],
    avoid_aspect: str,
) -> _Clause:
    """A contrast clause with the given label, a tail, and an aspect other than `avoid_aspect`."""
    modifier = rng.choice(_MODIFIERS[rng.choice(("plain", "intensified", "negated"))])
    candidates = pairs_by_positivity[(label == 1) != (modifier in NEGATORS)]
    aspect, adjective = rng.choice(candidates)
    while aspect == avoid_aspect:
        aspect, adjective = rng.choice(candidates)
    # Both clauses always end in a tail, so the word just before "but" is never the adjective
    # and the bigram "<adjective> but" cannot reveal which clause comes first.
    return _Clause(aspect, adjective, modifier, rng.choice(TAILS))


def _draw_contrasts(
    rng: random.Random, count: int, pairs: list[tuple[str, str]], used: set[str]
) -> list[SentimentExample]:
    """`count` new contrast sentences over `pairs`, skipping and then recording texts in `used`."""
    pairs_by_positivity = {
        positive: [pair for pair in pairs if (pair[1] in POSITIVE_ADJECTIVES) == positive]
        for positive in (True, False)
    }
    examples = []
    while len(examples) < count:
        label = rng.randrange(2)
        first_label = 1 - label if rng.random() < OPPOSITE_CONTRAST_SHARE else label
        second = _random_clause(rng, label, pairs_by_positivity, avoid_aspect="")
        first = _random_clause(rng, first_label, pairs_by_positivity, avoid_aspect=second.aspect)
        text = f"{first.text} but {second.text}"
        if text not in used:
            used.add(text)
            examples.append(SentimentExample(text, label, "contrast"))
    return examples


def make_sentiment_corpus(
    seed: int = 0, n_train: int = 4000, n_val: int = 500, n_test: int = 1000
) -> SentimentSplits:
    """Disjoint train/val/test splits; val/test also use aspect-adjective pairs unseen in train."""
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise TypeError(f"expected seed to be an int, got {type(seed).__name__}")
    for name, value in (("n_train", n_train), ("n_val", n_val), ("n_test", n_test)):
        _check_positive_int(name, value)
    rng = random.Random(seed)
    held_out = _held_out_pairs(rng)
    all_pairs = list(product(ASPECTS, POSITIVE_ADJECTIVES + NEGATIVE_ADJECTIVES))
    train_pairs = [pair for pair in all_pairs if pair not in held_out]
    counts = {
        "train": _kind_counts(n_train),
        "val": _kind_counts(n_val),
        "test": _kind_counts(n_test),
    }
    splits: dict[str, list[SentimentExample]] = {"train": [], "val": [], "test": []}

    for kind in ("plain", "intensified", "negated"):
        clauses = _SingleClauses(kind, all_pairs)
        # Shuffling the indices draws what shuffling the clauses would, without building them.
        pool = list(range(len(clauses)))
        rng.shuffle(pool)
        n_test_kind, n_eval = counts["test"][kind], counts["test"][kind] + counts["val"][kind]
        # Val and test draw from every pair first; train takes what is left among its own pairs.
        leftover = (i for i in pool[n_eval:] if clauses.pair(i) not in held_out)
        train = list(islice(leftover, counts["train"][kind]))
        if n_eval > len(pool) or len(train) < counts["train"][kind]:
            usable = len(train) + sum(1 for _ in leftover)
            raise ValueError(
                f"the requested sizes need {n_eval} {kind!r} sentences for val/test and "
                f"{counts['train'][kind]} for train, but only {len(pool)} distinct ones exist "
                f"({usable} usable for train after val/test); lower n_train, n_val or n_test"
            )
        chosen = {
            "test": [clauses.clause(i) for i in pool[:n_test_kind]],
            "val": [clauses.clause(i) for i in pool[n_test_kind:n_eval]],
            "train": [clauses.clause(i) for i in train],
        }
        for name, clauses in chosen.items():
            splits[name] += [
                SentimentExample(clause.text, clause.label, kind) for clause in clauses
            ]

    n_contrasts = sum(split_counts["contrast"] for split_counts in counts.values())
    capacity = _contrast_capacity(train_pairs)
    if n_contrasts > capacity:
        raise ValueError(
            f"the requested sizes need {n_contrasts} distinct contrast sentences, more than the "
            f"{capacity} that can be built; lower n_train, n_val or n_test"
        )
    used: set[str] = set()
    splits["test"] += _draw_contrasts(rng, counts["test"]["contrast"], all_pairs, used)
    splits["val"] += _draw_contrasts(rng, counts["val"]["contrast"], all_pairs, used)
    splits["train"] += _draw_contrasts(rng, counts["train"]["contrast"], train_pairs, used)

    for examples in splits.values():
        rng.shuffle(examples)  # interleave the kinds
    return SentimentSplits(**splits)


def load_sst2_tsv(path: str | os.PathLike[str]) -> list[SentimentExample]:
    """Read an SST-2 style TSV file: a "sentence<TAB>label" header, then one example per line."""
    if not os.path.isfile(path):
        raise FileNotFoundError(f"no SST-2 file at {os.fspath(path)!r}")
    file_name = os.path.basename(path)
    with open(path, encoding="utf-8") as file:
        lines = file.read().splitlines()
    if not lines:
        raise ValueError(f"{file_name} is empty: expected the header {_SST2_HEADER!r} and examples")
    if lines[0] != _SST2_HEADER:
        raise ValueError(
            f"expected the header {_SST2_HEADER!r} on line 1 of {file_name}, got {lines[0]!r}"
        )
    examples = []
    for line_number, line in enumerate(lines[1:], start=2):
        tabs = line.count("\t")
        if tabs != 1:
            raise ValueError(
                f"expected exactly one tab on line {line_number} of {file_name}, "
                f"got {tabs}: {line!r}"
            )
        sentence, label = line.split("\t")
        if label.strip() not in ("0", "1"):
            raise ValueError(
                f"expected label 0 or 1 on line {line_number} of {file_name}, got {label!r}"
            )
        examples.append(SentimentExample(sentence, int(label), "sst2"))
    if not examples:
        raise ValueError(f"{file_name} holds a header but no examples")
    return examples


def load_char_corpus(name: str = "fables") -> str:
    """The text of `attention_lab/corpora/<name>.txt`, shipped with the package."""
    corpora = resources.files("attention_lab").joinpath("corpora")
    available = sorted(
        entry.name.removesuffix(".txt")
        for entry in corpora.iterdir()
        if entry.name.endswith(".txt")
    )
    if name not in available:
        raise ValueError(f"unknown corpus {name!r}; available corpora: {', '.join(available)}")
    return corpora.joinpath(f"{name}.txt").read_text(encoding="utf-8")


def check_lm_ids(ids: torch.Tensor, block_size: int) -> None:
    """Require a 1-D integer tensor with at least one (block, next-token) window."""
    if not isinstance(ids, torch.Tensor):
        raise TypeError(f"expected ids to be a torch.Tensor, got {type(ids).__name__}")
    if (
        ids.dim() != 1
        or ids.dtype.is_floating_point
        or ids.dtype.is_complex
        or ids.dtype == torch.bool
    ):
        raise TypeError(
            "expected a 1-D integer tensor of ids, "
            f"got shape {tuple(ids.shape)} and dtype {ids.dtype}"
        )
    _check_positive_int("block_size", block_size)
    if len(ids) < block_size + 1:
        raise ValueError(
            f"need at least block_size + 1 = {block_size + 1} ids to form one input/target pair, "
            f"got {len(ids)}"
        )


def sample_lm_batch(
    ids: torch.Tensor, block_size: int, batch_size: int, generator: torch.Generator | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """`batch_size` windows at random starts: inputs (B, block_size), targets shifted by one."""
    check_lm_ids(ids, block_size)
    _check_positive_int("batch_size", batch_size)
    starts = torch.randint(len(ids) - block_size, (batch_size,), generator=generator)
    positions = starts.unsqueeze(1) + torch.arange(block_size)  # (B, block_size)
    return ids[positions], ids[positions + 1]
