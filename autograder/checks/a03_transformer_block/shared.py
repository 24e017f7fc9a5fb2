"""What the tokenizer exercises of 03 share: hidden corpora, diagnosing wrong lists."""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import torch

from attention_lab.data import SentimentSplits, make_sentiment_corpus
from attention_lab.reference.a03_transformer_block import WordTokenizer
from autograder.authoring.diagnosis import squeezed_mistake
from autograder.authoring.hidden_draws import hidden_generator
from autograder.authoring.in_place_writes import written_in_place_mistake
from autograder.authoring.mistakes import Mistake
from autograder.authoring.registry import Namespace, fail, reference_data

ASSIGNMENT = "03_transformer_block"
squeezed_mistake(ASSIGNMENT)  # diagnose names it in every exercise
written_in_place_mistake(ASSIGNMENT)  # inputs_kept names it in every exercise
TOKENIZER_BANNED = {"attention_lab's WordTokenizer": WordTokenizer}


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
    mistakes: Mapping[Mistake, Callable[[Any], Any] | tuple[Callable[[Any], Any], ...]],
    otherwise: Callable[[Any, Any, Any], str],
) -> None:
    """Pass if every case is right; else name the mistake whose output is the answer's.

    mistakes: mistake -> a function computing what that misconception returns for a case, or a
    tuple of such functions, the ways to write it. As
    :func:`~autograder.authoring.diagnosis.diagnose` does for tensors, a mistake is named only
    when one of its ways gives what the answer gave on every case, and no other mistake does.
    otherwise: (case, got, expected) -> the diagnosis when no known mistake fits.
    """
    wrong = [i for i, (a, e) in enumerate(zip(got, expected, strict=True)) if a != e]
    if not wrong:
        return
    # The wrong cases first: most mistakes are ruled out there, cheaply.
    order = wrong + sorted(set(range(len(cases))) - set(wrong))
    matched = []
    for mistake, ways in mistakes.items():
        for output_of in ways if isinstance(ways, tuple) else (ways,):
            try:
                if all(output_of(cases[i]) == got[i] for i in order):
                    matched.append(mistake)
                    break
            except (ValueError, TypeError, IndexError, KeyError):
                continue
    if len(matched) == 1:
        fail(str(matched[0]))
    first = min(wrong, key=lambda i: len(repr(cases[i])))
    fail(otherwise(cases[first], got[first], expected[first]))


def own_clean(ns: Namespace, texts: list[str]) -> Callable[[str], list[str]]:
    """The student's clean where it works on every text (without raising), else attention_lab's."""
    clean = ns.get("clean")
    try:
        if callable(clean) and all(isinstance(clean(text), list) for text in texts):
            return lambda text: list(clean(text))
    except Exception:
        pass
    return WordTokenizer.clean
