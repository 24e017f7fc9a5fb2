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


@pytest.mark.slow  # half a second or more in the fast tier (tests/tiers.py)
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


# --- plot_singular_values, plot_next_token_distributions, plot_running_softmax -


def test_singular_values_log_scale_and_zero_floor():
    series = {"input": torch.tensor([3.0, 0.0, 0.0]), "output": np.array([2.0, 1.0, 1e-3])}
    ax = plots.plot_singular_values(series)
    assert_labelled(ax)
    assert ax.get_yscale() == "log"
    np.testing.assert_allclose(ax.lines[0].get_ydata(), [3.0, 1e-16, 1e-16])  # zeros stay drawable
    np.testing.assert_allclose(ax.lines[1].get_xdata(), [1, 2, 3])
    with pytest.raises(ValueError, match="at least one named series"):
        plots.plot_singular_values({})
    with pytest.raises(ValueError, match="1-D"):
        plots.plot_singular_values({"matrix": torch.ones(2, 2)})


def test_next_token_distributions_share_the_first_settings_order():
    probabilities = {"T = 1": torch.tensor([0.1, 0.6, 0.3]), "top-k = 1": torch.tensor([0, 1.0, 0])}
    fig = plots.plot_next_token_distributions(probabilities, ["a", " ", "\n"], top=2)
    left, right = fig.axes
    assert tick_texts(left.get_xticklabels()) == ["␣", "\\n"]  # likeliest first, spaces visible
    np.testing.assert_allclose([bar.get_height() for bar in left.patches], [0.6, 0.3])
    np.testing.assert_allclose([bar.get_height() for bar in right.patches], [1.0, 0.0])
    assert "10%" in left.get_title() and "0%" in right.get_title()  # mass outside the bars
    with pytest.raises(ValueError, match="expected 3 tokens"):
        plots.plot_next_token_distributions(probabilities, ["a", "b"])


def test_running_softmax_draws_each_row():
    maxima = torch.tensor([[1.0, 0.0], [3.0, 0.5]])
    sums = torch.tensor([[1.0, 1.0], [1.2, 1.5]])
    fig = plots.plot_running_softmax(maxima, sums, rows=["a", "b"])
    ax_max, ax_sum = fig.axes
    for ax in fig.axes:
        assert_labelled(ax)
    np.testing.assert_allclose(ax_sum.lines[1].get_ydata(), [1.0, 1.5])
    assert [t.get_text() for t in ax_max.get_legend().get_texts()] == ["a", "b"]
    with pytest.raises(ValueError, match="one shape"):
        plots.plot_running_softmax(maxima, sums[:1])


# --- data-flow diagrams --------------------------------------------------------


def cell_count(ax: Axes) -> int:
    """Unit squares drawn: one per number of every tensor in the diagram."""
    return sum(1 for p in ax.patches if (p.get_width(), p.get_height()) == (1, 1))


def texts(ax: Axes) -> str:
    return " | ".join(t.get_text() for t in ax.texts)


def test_attention_dataflow_draws_every_tensor_at_its_shape():
    l_q, l_k, d_k, d_v = 2, 5, 3, 4
    ax = plots.plot_attention_dataflow(l_q, l_k, d_k, d_v)
    # Q, Kᵀ, S, A, V, output
    assert cell_count(ax) == l_q * d_k + d_k * l_k + 2 * l_q * l_k + l_k * d_v + l_q * d_v
    for shape in (
        "Q  (2, 3)",
        "Kᵀ  (3, 5)",
        "(2, 5) = (L_q, L_k)",
        "V  (5, 4)",
        "(2, 4) = (L_q, d_v)",
    ):
        assert shape in texts(ax)
    with pytest.raises(ValueError, match="positive sizes"):
        plots.plot_attention_dataflow(0, 2, 2, 2)


def test_heads_dataflow_colours_each_heads_features():
    ax = plots.plot_heads_dataflow(length=2, d_model=6, num_heads=3)
    first_row = sorted(
        (p for p in ax.patches if (p.get_width(), p.get_height()) == (1, 1) and p.get_y() == 0),
        key=lambda p: p.get_x(),
    )[:6]  # the projected input's first row
    colours = [tuple(p.get_facecolor()) for p in first_row]
    assert colours[0] == colours[1] != colours[2] == colours[3] != colours[4] == colours[5]
    assert "(·, 3, 2, 2)" in texts(ax)
    with pytest.raises(ValueError, match="divisible"):
        plots.plot_heads_dataflow(d_model=7, num_heads=3)


def test_norm_placement_puts_layernorm_on_each_side_of_the_sum():
    fig = plots.plot_norm_placement()
    post, pre = fig.axes
    order = {
        name: [
            t.get_text()
            for t in sorted(ax.texts, key=lambda t: t.get_position()[1])
            if t.get_text() in ("LayerNorm", "multi-head attention", "+")
        ]
        for name, ax in (("post", post), ("pre", pre))
    }
    assert order["post"][:3] == ["multi-head attention", "+", "LayerNorm"]
    assert order["pre"][:3] == ["LayerNorm", "multi-head attention", "+"]


def test_key_tiling_hides_exactly_the_future():
    length, chunk = 7, 3
    ax = plots.plot_key_tiling(length, chunk)
    white = [
        p
        for p in ax.patches
        if (p.get_width(), p.get_height()) == (1, 1)
        and tuple(p.get_facecolor()) == (1.0, 1.0, 1.0, 1.0)
    ]
    assert len(white) == length * (length - 1) // 2
    assert texts(ax).count("block ") == 3  # ceil(7 / 3) blocks, the last one short
    full = plots.plot_key_tiling(length, chunk, causal=False)
    assert not [p for p in full.patches if tuple(p.get_facecolor()) == (1.0, 1.0, 1.0, 1.0)]


def test_depth_stack_dataflow_gives_every_layer_the_mask_and_a_map():
    ax = plots.plot_depth_stack_dataflow(num_layers=4)
    assert [t for t in texts(ax).split(" | ") if t.startswith("layer ")] == [
        f"layer {i}\nEncoderBlock" for i in (1, 2, 3, 4)
    ]
    assert [f"maps[{i}]\n(B, H, L, L)" in texts(ax) for i in range(5)] == [True] * 4 + [False]
    arrows = [t for t in ax.texts if t.get_text() == "" and hasattr(t, "xy")]
    # per layer: the stream in, the mask down, its map out; then the stream out of the last layer
    assert len(arrows) == 3 * 4 + 1
    assert "list of 4 attention map(s)" in texts(ax)
    with pytest.raises(ValueError, match="at least one layer"):
        plots.plot_depth_stack_dataflow(0)


def test_classifier_dataflow_runs_top_to_bottom_with_the_given_sizes():
    ax = plots.plot_classifier_dataflow(length=7, d_model=12, num_heads=3, num_layers=5)
    steps = [t.get_text() for t in sorted(ax.texts, key=lambda t: t.get_position()[1])]
    order = [
        next(i for i, text in enumerate(steps) if text.startswith(start))
        for start in (
            "token_ids",
            "TokenEmbedding",
            "+ sinusoidal",
            "TransformerEncoder",
            "masked_mean",
            "Linear",
            "logits",
        )
    ]
    assert order == sorted(order)
    for shape in (
        "(B, L) = (B, 7)",
        "(B, 7, 12)",
        "(B, d_model) = (B, 12)",
        "(B, 3, 7, 7)",
        "5 layers, 3 heads",
        "(B, num_classes) = (B, 2)",
    ):
        assert shape in texts(ax)
    with pytest.raises(ValueError, match="divisible"):
        plots.plot_classifier_dataflow(d_model=10, num_heads=4)
