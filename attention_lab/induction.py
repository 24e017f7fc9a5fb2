"""Induction-copy sequences: a task that one attention layer cannot solve and two layers can.

A sequence is a *prefix* of distinct random tokens, then *queries*: distinct tokens copied from
the prefix (never from its last position). At every query the model must find the query's
earlier occurrence and predict the token that followed it there. In a prefix
``7 3 9 2 5`` the query ``9`` asks for ``2``.

The answer sits at the position right after the match, and nothing at that position says so in a
model's first layer: its key is built from its own token and position alone. So a first layer
must move "the token before me" into every position (a previous-token head) before a second
layer can match the query against it (an induction head). Notebook 04 trains this.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor


def distinct_draws(count: int, population: int, size: int, generator: torch.Generator) -> Tensor:
    """(count, size): per row, ``size`` distinct values of range(population) in random order."""
    # The first entries of a random permutation.
    return torch.rand(count, population, generator=generator).argsort(-1)[:, :size]


@dataclass(frozen=True)
class InductionBatch:
    """A batch of induction-copy sequences; ``...`` is the batch shape asked for.

    tokens: (..., prefix_len + num_queries) token ids, the prefix then the queries.
    targets: (..., num_queries) the token that followed each query in the prefix.
    sources: (..., num_queries) each query's earlier occurrence, a prefix position.
    """

    tokens: Tensor
    targets: Tensor
    sources: Tensor

    @property
    def answer_positions(self) -> Tensor:
        """(..., num_queries): where each query's answer sits in the prefix (source + 1)."""
        return self.sources + 1


@dataclass(frozen=True)
class InductionTask:
    """Sizes of the induction-copy task; ``sample`` draws seeded batches of it."""

    vocab_size: int = 16
    prefix_len: int = 8
    num_queries: int = 4

    def __post_init__(self) -> None:
        if self.prefix_len < 2:
            raise ValueError(
                f"expected prefix_len >= 2 (a match and its successor), got {self.prefix_len}"
            )
        if self.vocab_size < self.prefix_len:
            raise ValueError(
                f"expected vocab_size >= prefix_len so the prefix's tokens can be distinct, "
                f"got vocab_size={self.vocab_size}, prefix_len={self.prefix_len}"
            )
        if not 1 <= self.num_queries <= self.prefix_len - 1:
            raise ValueError(
                f"expected 1 <= num_queries <= prefix_len - 1 = {self.prefix_len - 1} (distinct "
                f"queries, each with a successor in the prefix), got {self.num_queries}"
            )

    @property
    def seq_len(self) -> int:
        """Tokens per sequence: the prefix, then the queries."""
        return self.prefix_len + self.num_queries

    def sample(
        self, generator: torch.Generator, batch_shape: tuple[int, ...] = ()
    ) -> InductionBatch:
        """A batch of ``batch_shape`` sequences drawn with ``generator`` (on the CPU)."""
        if not all(isinstance(size, int) and size >= 1 for size in batch_shape):
            raise ValueError(f"expected a batch shape of positive ints, got {batch_shape!r}")
        count = 1
        for size in batch_shape:
            count *= size
        prefix = distinct_draws(count, self.vocab_size, self.prefix_len, generator)
        # Sources among positions 0 .. prefix_len - 2, so every query has a successor.
        sources = distinct_draws(count, self.prefix_len - 1, self.num_queries, generator)
        queries = prefix.gather(1, sources)
        targets = prefix.gather(1, sources + 1)
        tokens = torch.cat([prefix, queries], dim=1)
        return InductionBatch(
            tokens=tokens.reshape(*batch_shape, self.seq_len),
            targets=targets.reshape(*batch_shape, self.num_queries),
            sources=sources.reshape(*batch_shape, self.num_queries),
        )

    def guessing_accuracy(self) -> float:
        """Expected accuracy of a uniform guess among the prefix tokens that could be the answer.

        The answer is a prefix token after the first position and is never the query itself: a
        query copied from position 0 leaves prefix_len - 1 candidates, any other prefix_len - 2.
        A model that knows this but cannot tell which candidate follows the query scores this.
        """
        n = self.prefix_len
        if n == 2:
            return 1.0  # the only source is position 0, so the answer is always position 1
        from_first = 1 / (n - 1)  # probability that a query was copied from position 0
        return from_first / (n - 1) + (1 - from_first) / (n - 2)
