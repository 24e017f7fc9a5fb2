"""Tests for the plotting helpers: types, labels, plotted data, and input errors."""

from __future__ import annotations

import os
import tempfile

import matplotlib

# Headless backend and a writable config dir must be set before pyplot is imported.
matplotlib.use("Agg")
os.environ.setdefault("MPLCONFIGDIR", tempfile.mkdtemp(prefix="mplconfig-"))

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402
from matplotlib.axes import Axes  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from attention_lab import plots  # noqa: E402

TOKENS = ["the", "fox", "slept", "well"]


@pytest.fixture(autouse=True)
def close_figures():
    """Keep figures from piling up across tests."""
    yield
    plt.close("all")


def softmax_weights(*shape: int, seed: int = 0) -> torch.Tensor:
    """Random rows that sum to one, like real attention weights."""
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed)).softmax(-1)


def tick_texts(labels: list) -> list[str]:
    return [t.get_text() for t in labels]


def assert_labelled(ax: Axes) -> None:
    assert ax.get_xlabel() and ax.get_ylabel() and ax.get_title()


# --- plot_attention ---------------------------------------------------------


def test_attention_labels_and_data():
    w = softmax_weights(4, 4)
    ax = plots.plot_attention(w, TOKENS)
    assert isinstance(ax, Axes)
    assert_labelled(ax)
    assert tick_texts(ax.get_xticklabels()) == TOKENS
    assert tick_texts(ax.get_yticklabels()) == TOKENS
    np.testing.assert_allclose(ax.images[0].get_array(), w.numpy())
    assert ax.images[0].get_clim() == (0.0, 1.0)
    assert len(ax.figure.axes) == 2  # heatmap + colorbar


def test_attention_cross_attention_and_given_ax():
    w = softmax_weights(2, 3)
    _, ax = plt.subplots()
    out = plots.plot_attention(w, ["a", "b"], ["x", "y", "z"], ax=ax, title="cross")
    assert out is ax
    assert ax.get_title() == "cross"
    assert tick_texts(ax.get_xticklabels()) == ["x", "y", "z"]
    assert tick_texts(ax.get_yticklabels()) == ["a", "b"]


def test_attention_accepts_grad_tensor_and_batch_of_one():
    w = softmax_weights(1, 3, 3).requires_grad_()
    ax = plots.plot_attention(w)
    np.testing.assert_allclose(ax.images[0].get_array(), w.detach()[0].numpy())


@pytest.mark.parametrize("shape", [(4,), (2, 4, 4)])
def test_attention_rejects_wrong_rank(shape):
    with pytest.raises(ValueError, match=r"\(L_q, L_k\).*got shape"):
        plots.plot_attention(softmax_weights(*shape))


def test_attention_rejects_wrong_token_count():
    with pytest.raises(ValueError, match="expected 4 key_tokens.*got 3"):
        plots.plot_attention(softmax_weights(4, 4), TOKENS, TOKENS[:3])


def test_attention_rejects_raw_scores():
    with pytest.raises(ValueError, match=r"in \[0, 1\]"):
        plots.plot_attention(torch.randn(4, 4) * 5)


# --- plot_heads -------------------------------------------------------------


def test_heads_one_panel_per_head():
    w = softmax_weights(1, 6, 4, 4)
    fig = plots.plot_heads(w, TOKENS)
    assert isinstance(fig, Figure)
    panels = [ax for ax in fig.axes if ax.images]
    assert [ax.get_title() for ax in panels] == [f"head {h}" for h in range(6)]
    assert len(fig.axes) == 7  # six heads + one shared colorbar, no spare panels
    for h, ax in enumerate(panels):
        assert_labelled(ax)
        assert tick_texts(ax.get_xticklabels()) == TOKENS
        np.testing.assert_allclose(ax.images[0].get_array(), w[0, h].numpy())
    assert fig.get_suptitle()


def test_heads_rejects_2d_and_bad_tokens():
    with pytest.raises(ValueError, match=r"\(H, L_q, L_k\)"):
        plots.plot_heads(softmax_weights(4, 4))
    with pytest.raises(ValueError, match="expected 4 tokens"):
        plots.plot_heads(softmax_weights(2, 4, 4), TOKENS[:2])


# --- plot_positional_encoding -----------------------------------------------


def test_positional_encoding():
    pe = np.sin(np.arange(20)[:, None] / (1 + np.arange(8)[None, :]))
    ax = plots.plot_positional_encoding(pe)
    assert isinstance(ax, Axes)
    assert ax.get_xlabel() == "embedding dimension"
    assert ax.get_ylabel() == "position"
    assert ax.get_title()
    np.testing.assert_allclose(ax.images[0].get_array(), pe)


def test_positional_encoding_rejects_1d():
    with pytest.raises(ValueError, match=r"\(max_len, d_model\)"):
        plots.plot_positional_encoding(np.zeros(8))


# --- plot_attention_by_depth ------------------------------------------------


def test_by_depth_rows_come_from_each_layer():
    layers = [softmax_weights(4, 4, seed=0), softmax_weights(4, 4, seed=1)]
    ax = plots.plot_attention_by_depth(layers, 2, TOKENS)
    assert isinstance(ax, Axes)
    assert_labelled(ax)
    assert ax.get_ylabel() == "layer"
    assert "slept" in ax.get_title()
    assert tick_texts(ax.get_xticklabels()) == TOKENS
    assert tick_texts(ax.get_yticklabels()) == ["0", "1"]
    expected = np.stack([layers[0][2].numpy(), layers[1][2].numpy()])
    np.testing.assert_allclose(ax.images[0].get_array(), expected, rtol=1e-6)


def test_by_depth_averages_heads_and_drops_batch():
    layers = [softmax_weights(1, 3, 4, 4, seed=s) for s in range(3)]
    ax = plots.plot_attention_by_depth(layers, -1)
    expected = np.stack([w[0].mean(0)[-1].numpy() for w in layers])
    np.testing.assert_allclose(ax.images[0].get_array(), expected, rtol=1e-6)


def test_by_depth_errors():
    with pytest.raises(ValueError, match="at least one layer"):
        plots.plot_attention_by_depth([], 0)
    with pytest.raises(ValueError, match="same L.*layer 1"):
        plots.plot_attention_by_depth([softmax_weights(4, 4), softmax_weights(3, 3)], 0)
    with pytest.raises(ValueError, match="token_index"):
        plots.plot_attention_by_depth([softmax_weights(4, 4)], 4)
    with pytest.raises(ValueError, match="expected 4 tokens"):
        plots.plot_attention_by_depth([softmax_weights(4, 4)], 0, TOKENS[:3])


# --- plot_training_curves ---------------------------------------------------


def test_training_curves_groups_loss_and_accuracy():
    history = {
        "train_loss": [2.0, 1.5, 1.2],
        "val_loss": [2.1, 1.8],
        "train_accuracy": [0.3, 0.5, 0.6],
        "lr": [1e-3, 1e-3, 1e-3],
    }
    fig = plots.plot_training_curves(history, x_label="step")
    assert isinstance(fig, Figure)
    loss_ax, acc_ax = fig.axes
    for ax in fig.axes:
        assert_labelled(ax)
        assert ax.get_xlabel() == "step"
    assert [line.get_label() for line in loss_ax.lines] == ["train_loss", "val_loss"]
    np.testing.assert_allclose(loss_ax.lines[1].get_ydata(), history["val_loss"])
    assert [line.get_label() for line in acc_ax.lines] == ["train_accuracy"]


def test_training_curves_needs_loss_or_accuracy():
    with pytest.raises(ValueError, match="ending in 'loss' or 'accuracy'"):
        plots.plot_training_curves({"lr": [0.1]})


# --- plot_scaling and plot_metric_vs_dk -------------------------------------


def test_scaling_log_log_with_legend():
    lengths = [128, 256, 512]
    series = {"naive": [1.0, 4.0, 16.0], "sdpa": [1.0, 2.0, float("nan")]}
    ax = plots.plot_scaling(lengths, series, y_label="time (ms)")
    assert isinstance(ax, Axes)
    assert_labelled(ax)
    assert ax.get_xlabel() == "sequence length L"
    assert (ax.get_xscale(), ax.get_yscale()) == ("log", "log")
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["naive", "sdpa"]
    np.testing.assert_allclose(ax.lines[0].get_ydata(), series["naive"])
    assert tick_texts(ax.get_xticklabels()) == ["128", "256", "512"]


def test_scaling_linear_and_length_mismatch():
    ax = plots.plot_scaling([1, 2], {"a": [1.0, 2.0]}, y_label="memory (MB)", log=False)
    assert (ax.get_xscale(), ax.get_yscale()) == ("linear", "linear")
    with pytest.raises(ValueError, match="expected 2 values for series 'b', got 3"):
        plots.plot_scaling([1, 2], {"b": [1.0, 2.0, 3.0]}, y_label="x")
    with pytest.raises(ValueError, match="at least one named series"):
        plots.plot_scaling([1, 2], {}, y_label="x")


def test_metric_vs_dk():
    d_ks = [4, 16, 64]
    series = {"unscaled": [0.5, 0.8, 0.99], "scaled": [0.4, 0.4, 0.4]}
    ax = plots.plot_metric_vs_dk(d_ks, series, y_label="max weight")
    assert isinstance(ax, Axes)
    assert_labelled(ax)
    assert ax.get_xscale() == "log"
    assert ax.get_ylabel() == "max weight"
    np.testing.assert_allclose(ax.lines[1].get_xdata(), d_ks)
    with pytest.raises(ValueError, match="series 'scaled'"):
        plots.plot_metric_vs_dk(d_ks, {"scaled": [0.4]}, y_label="max weight")
