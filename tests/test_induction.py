"""Tests for the induction-copy task of notebook 04."""

from __future__ import annotations

import pytest
import torch

from attention_lab.induction import InductionTask


def test_every_query_copies_a_prefix_token_and_targets_its_successor():
    task = InductionTask(vocab_size=12, prefix_len=7, num_queries=3)
    batch = task.sample(torch.Generator().manual_seed(0), (50, 4))
    assert batch.tokens.shape == (50, 4, 10)
    assert batch.targets.shape == batch.sources.shape == (50, 4, 3)
    for tokens, targets, sources in zip(
        batch.tokens.reshape(-1, 10).tolist(),
        batch.targets.reshape(-1, 3).tolist(),
        batch.sources.reshape(-1, 3).tolist(),
        strict=True,
    ):
        prefix, queries = tokens[:7], tokens[7:]
        assert len(set(prefix)) == 7 and len(set(queries)) == 3
        assert all(0 <= token < 12 for token in tokens)
        for query, target, source in zip(queries, targets, sources, strict=True):
            assert 0 <= source <= 5  # never the last prefix position: it has no successor
            assert prefix.index(query) == source
            assert prefix[source + 1] == target
    assert torch.equal(batch.answer_positions, batch.sources + 1)


def test_the_same_seed_gives_the_same_batch_and_another_seed_another():
    task = InductionTask()
    first = task.sample(torch.Generator().manual_seed(3), (8,))
    again = task.sample(torch.Generator().manual_seed(3), (8,))
    other = task.sample(torch.Generator().manual_seed(4), (8,))
    assert torch.equal(first.tokens, again.tokens) and torch.equal(first.targets, again.targets)
    assert not torch.equal(first.tokens, other.tokens)


def test_sources_and_tokens_are_spread_over_their_range():
    task = InductionTask(vocab_size=10, prefix_len=6, num_queries=2)
    batch = task.sample(torch.Generator().manual_seed(1), (4000,))
    source_counts = torch.bincount(batch.sources.flatten(), minlength=5).float()
    assert source_counts.numel() == 5  # positions 0..4 only
    assert source_counts.min() / source_counts.max() > 0.85
    token_counts = torch.bincount(batch.tokens[:, :6].flatten(), minlength=10).float()
    assert token_counts.min() / token_counts.max() > 0.85


def test_a_single_sequence_has_no_batch_axes():
    batch = InductionTask(prefix_len=2, num_queries=1).sample(torch.Generator().manual_seed(0))
    assert batch.tokens.shape == (3,) and batch.targets.shape == batch.sources.shape == (1,)
    assert int(batch.sources) == 0 and int(batch.targets) == int(batch.tokens[1])


@pytest.mark.parametrize(("prefix_len", "num_queries"), [(2, 1), (4, 2), (8, 4), (9, 8)])
def test_guessing_accuracy_is_what_a_uniform_guess_among_the_candidates_scores(
    prefix_len: int, num_queries: int
):
    task = InductionTask(vocab_size=prefix_len + 3, prefix_len=prefix_len, num_queries=num_queries)
    generator = torch.Generator().manual_seed(0)
    batch = task.sample(generator, (20000,))
    prefix = batch.tokens[:, :prefix_len]
    queries = batch.tokens[:, prefix_len:]
    # Candidates: the prefix after its first token, minus the query; guess one of them uniformly.
    candidates = prefix[:, None, 1:].expand(-1, num_queries, -1)
    allowed = (candidates != queries[..., None]).float()
    pick = torch.multinomial(allowed.reshape(-1, prefix_len - 1), 1, generator=generator)
    guesses = candidates.reshape(-1, prefix_len - 1).gather(1, pick).reshape(-1, num_queries)
    measured = (guesses == batch.targets).float().mean().item()
    assert measured == pytest.approx(task.guessing_accuracy(), abs=0.01)


@pytest.mark.parametrize(
    ("sizes", "message"),
    [
        (dict(prefix_len=1), "prefix_len >= 2"),
        (dict(vocab_size=5, prefix_len=8), "vocab_size >= prefix_len"),
        (dict(num_queries=0), "1 <= num_queries <= prefix_len - 1 = 7"),
        (dict(prefix_len=4, num_queries=4), "num_queries <= prefix_len - 1 = 3"),
    ],
)
def test_impossible_sizes_are_refused_with_what_was_expected(sizes: dict, message: str):
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        InductionTask(**sizes)


def test_a_bad_batch_shape_is_refused():
    with pytest.raises(ValueError, match="batch shape of positive ints"):
        InductionTask().sample(torch.Generator(), (0, 3))


def test_accuracy_by_depth_plots_every_seed_and_the_mean_of_each_depth():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from attention_lab.plots import plot_accuracy_by_depth

    accuracy = {4: [0.9, 1.0], 1: [0.1, 0.2, 0.15], 2: [1.0, 0.98, 0.99]}
    ax = plot_accuracy_by_depth(accuracy, chance=0.163, chance_label="guessing")
    try:
        assert [t.get_text() for t in ax.get_xticklabels()] == ["1", "2", "4"]
        seeds = [
            collection.get_offsets()[:, 1].tolist() for collection in ax.collections[::2]
        ]  # dots, bars
        assert seeds == [[0.1, 0.2, 0.15], [1.0, 0.98, 0.99], [0.9, 1.0]]
        means = [bar.lines[0].get_ydata()[0] for bar in ax.containers]  # one errorbar per depth
        assert means == pytest.approx([0.15, 0.99, 0.95])
        assert "guessing (0.163)" in [t.get_text() for t in ax.get_legend().get_texts()]
        with pytest.raises(ValueError, match="at least one seed's accuracy for depth 2"):
            plot_accuracy_by_depth({1: [0.5], 2: []})
    finally:
        plt.close("all")
