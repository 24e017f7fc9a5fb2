"""A labelled phrase file built like SST-2's training file: sentences and many of their phrases.

Each sentence gets a random binary parse; the file keeps some of its constituents (the phrases)
and, for most sentences, the sentence itself. A sentence left out stands for one SST-2 dropped
as neutral: its longest kept phrases then lie inside no other line. Words come from a small
vocabulary with a skewed frequency, so short phrases recur across sentences as they do in
reviews ("the film", "is n't"). No data is downloaded: every word is made up.
"""

from __future__ import annotations

import random

from attention_lab.data import SentimentExample

VOCABULARY = [f"w{i}" for i in range(2000)]
# Zipf-like weights: a few words are common, most rare, so phrases recur across sentences.
WEIGHTS = [1 / (rank + 1) for rank in range(len(VOCABULARY))]


def _constituents(start: int, stop: int, rng: random.Random) -> list[tuple[int, int]]:
    """The (start, stop) spans of a random binary parse of words[start:stop], itself included."""
    if stop - start == 1:
        return [(start, stop)]
    split = rng.randrange(start + 1, stop)
    return [(start, stop), *_constituents(start, split, rng), *_constituents(split, stop, rng)]


def sst2_like_phrases(
    n_phrases: int, seed: int = 0, keep: float = 0.3, sentence_kept: float = 0.9
) -> list[SentimentExample]:
    """``n_phrases`` distinct labelled phrases: sentences of 3 to 52 words and parts of them."""
    rng = random.Random(seed)
    phrases: dict[str, int] = {}
    while len(phrases) < n_phrases:
        words = rng.choices(VOCABULARY, WEIGHTS, k=min(52, 3 + int(rng.expovariate(1 / 16))))
        label = rng.randrange(2)
        for start, stop in _constituents(0, len(words), rng):
            whole = stop - start == len(words)
            if rng.random() < (sentence_kept if whole else keep):
                # a phrase mostly shares its sentence's label, as in SST-2
                flipped = not whole and rng.random() < 0.2
                phrases.setdefault(" ".join(words[start:stop]), label ^ flipped)
    return [SentimentExample(text, label, "sst2") for text, label in phrases.items()][:n_phrases]
