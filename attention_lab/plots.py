"""Matplotlib helpers for the course notebooks.

Every function draws on ``ax`` when given (otherwise on a new figure) and
returns the Axes, or the Figure for multi-panel plots; none calls
``plt.show()``. Array inputs may be torch tensors (any device, with or
without grad) or anything ``numpy.asarray`` accepts.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
import torch
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.image import AxesImage
from matplotlib.ticker import MaxNLocator, NullLocator
from numpy.typing import ArrayLike

Array = torch.Tensor | ArrayLike

# Slack for softmax rounding when checking that weights lie in [0, 1].
_WEIGHT_TOL = 1e-4


def _to_numpy(x: Array, ndims: tuple[int, ...], what: str) -> np.ndarray:
    """Float array whose leading size-1 (batch) dims are dropped until its ndim is allowed."""
    if isinstance(x, torch.Tensor):
        x = x.detach().cpu().float().numpy()
    a = np.asarray(x, dtype=float)
    while a.ndim > max(ndims) and a.shape[0] == 1:
        a = a[0]
    if a.ndim not in ndims:
        raise ValueError(f"expected {what}, got shape {a.shape}")
    return a


def _check_weights(w: np.ndarray) -> None:
    """Catch raw scores passed where post-softmax weights are expected."""
    if w.size and (np.nanmin(w) < -_WEIGHT_TOL or np.nanmax(w) > 1 + _WEIGHT_TOL):
        raise ValueError(
            "expected attention weights in [0, 1] (after softmax), "
            f"got values in [{np.nanmin(w):.3g}, {np.nanmax(w):.3g}]"
        )


def _check_labels(labels: Sequence[str] | None, n: int, what: str) -> None:
    """Require one label per row/column when labels are given."""
    if labels is not None and len(labels) != n:
        raise ValueError(f"expected {n} {what} to match the weights, got {len(labels)}")


def _new_ax(ax: Axes | None) -> Axes:
    """The given Axes, or one on a fresh figure whose layout keeps rotated labels inside."""
    return plt.subplots(layout="constrained")[1] if ax is None else ax


def _heatmap(
    ax: Axes,
    data: np.ndarray,
    x_labels: Sequence[str] | None,
    y_labels: Sequence[str] | None,
    **imshow_kwargs: object,
) -> AxesImage:
    """Draw ``data`` (rows, cols) with one tick per labelled row/column."""
    im = ax.imshow(data, aspect="auto", interpolation="nearest", **imshow_kwargs)
    if x_labels is not None:
        # Single characters read fine upright; words need rotating to avoid overlap.
        rotate = max((len(str(t)) for t in x_labels), default=0) > 1
        ax.set_xticks(range(len(x_labels)))
        ax.set_xticklabels(
            [str(t) for t in x_labels],
            rotation=45 if rotate else 0,
            ha="right" if rotate else "center",
            rotation_mode="anchor",
        )
    if y_labels is not None:
        ax.set_yticks(range(len(y_labels)))
        ax.set_yticklabels([str(t) for t in y_labels])
    return im


def plot_attention(
    weights: Array,
    query_tokens: Sequence[str] | None = None,
    key_tokens: Sequence[str] | None = None,
    *,
    ax: Axes | None = None,
    title: str = "Attention weights",
) -> Axes:
    """Heatmap of weights (L_q, L_k); key_tokens defaults to query_tokens (self-attention)."""
    w = _to_numpy(weights, (2,), "attention weights of shape (L_q, L_k)")
    _check_weights(w)
    key_tokens = query_tokens if key_tokens is None else key_tokens
    _check_labels(query_tokens, w.shape[0], "query_tokens (rows)")
    _check_labels(key_tokens, w.shape[1], "key_tokens (columns)")
    ax = _new_ax(ax)
    im = _heatmap(ax, w, key_tokens, query_tokens, cmap="viridis", vmin=0.0, vmax=1.0)
    ax.figure.colorbar(im, ax=ax, label="weight")
    ax.set(xlabel="key (attended to)", ylabel="query (attending)", title=title)
    return ax


def plot_heads(
    weights: Array,
    tokens: Sequence[str] | None = None,
    *,
    title: str = "Attention weights per head",
    max_cols: int = 4,
) -> Figure:
    """One heatmap per head of weights (H, L_q, L_k) or (1, H, L_q, L_k), with a shared colorbar."""
    w = _to_numpy(weights, (3,), "per-head attention weights of shape (H, L_q, L_k)")
    _check_weights(w)
    num_heads, len_q, len_k = w.shape
    _check_labels(tokens, len_q, "tokens (queries)")
    _check_labels(tokens, len_k, "tokens (keys)")
    cols = min(num_heads, max_cols)
    rows = math.ceil(num_heads / cols)
    fig, axes = plt.subplots(
        rows, cols, figsize=(3.2 * cols, 3.0 * rows), squeeze=False, layout="constrained"
    )
    panels = list(axes.flat[:num_heads])
    for spare in axes.flat[num_heads:]:
        spare.remove()  # keep exactly one Axes per head
    for h, ax in enumerate(panels):
        im = _heatmap(ax, w[h], tokens, tokens, cmap="viridis", vmin=0.0, vmax=1.0)
        ax.set(xlabel="key", ylabel="query", title=f"head {h}")
    fig.colorbar(im, ax=panels, label="weight")
    fig.suptitle(title)
    return fig


def plot_positional_encoding(
    pe: Array, *, ax: Axes | None = None, title: str = "Positional encoding"
) -> Axes:
    """Heatmap of pe (max_len, d_model) or (1, max_len, d_model), colours centred on 0."""
    p = _to_numpy(pe, (2,), "positional encodings of shape (max_len, d_model)")
    ax = _new_ax(ax)
    limit = float(np.nanmax(np.abs(p))) if p.size else 1.0
    im = _heatmap(ax, p, None, None, cmap="RdBu_r", vmin=-limit, vmax=limit)
    ax.figure.colorbar(im, ax=ax, label="value")
    ax.set(xlabel="embedding dimension", ylabel="position", title=title)
    return ax


def plot_attention_by_depth(
    weights_per_layer: Sequence[Array],
    token_index: int,
    tokens: Sequence[str] | None = None,
    *,
    ax: Axes | None = None,
    title: str | None = None,
) -> Axes:
    """Heatmap (num_layers, L) of row ``token_index`` of each layer's attention map.

    Each layer's weights may be (L, L), (H, L, L) or (1, H, L, L); heads are
    averaged so every layer contributes one distribution over the L keys.
    """
    if len(weights_per_layer) == 0:
        raise ValueError("expected at least one layer of attention weights, got none")
    maps = []
    for i, layer in enumerate(weights_per_layer):
        w = _to_numpy(layer, (2, 3), f"layer {i} weights of shape (L, L) or (H, L, L)")
        if w.ndim == 3:
            w = w.mean(axis=0)  # one distribution per layer: average over heads
        if w.shape[0] != w.shape[1] or (maps and w.shape != maps[0].shape):
            raise ValueError(
                f"expected every layer to be (L, L) with the same L, got {w.shape} at layer {i}"
            )
        maps.append(w)
    length = maps[0].shape[0]
    if not -length <= token_index < length:
        raise ValueError(f"expected token_index in [-{length}, {length}), got {token_index}")
    _check_labels(tokens, length, "tokens")
    rows = np.stack([m[token_index] for m in maps])
    _check_weights(rows)
    ax = _new_ax(ax)
    layers = [str(i) for i in range(len(maps))]
    im = _heatmap(ax, rows, tokens, layers, cmap="viridis", vmin=0.0, vmax=1.0)
    ax.figure.colorbar(im, ax=ax, label="weight")
    if title is None:
        query = repr(tokens[token_index]) if tokens is not None else f"#{token_index % length}"
        title = f"Attention of query {query} by layer"
    ax.set(xlabel="key (attended to)", ylabel="layer", title=title)
    return ax


def _plot_series(
    ax: Axes | None, x: Sequence[float], series: Mapping[str, Sequence[float]]
) -> Axes:
    """One marked line per named series, all sharing the x values; NaN leaves a gap."""
    if not series:
        raise ValueError("expected at least one named series, got none")
    for name, ys in series.items():
        if len(ys) != len(x):
            raise ValueError(f"expected {len(x)} values for series {name!r}, got {len(ys)}")
    ax = _new_ax(ax)  # only after validation, so bad input leaves no stray figure
    for name, ys in series.items():
        ax.plot(x, ys, marker="o", label=name)
    ax.legend()
    return ax


def _log2_x(ax: Axes, x: Sequence[float]) -> None:
    """Log2 x axis ticked at the measured values, written plainly (256, not 2^8)."""
    ax.set_xscale("log", base=2)
    ax.set_xticks(list(x), [f"{v:g}" for v in x])
    ax.xaxis.set_minor_locator(NullLocator())


def plot_training_curves(
    history: Mapping[str, Sequence[float]],
    *,
    title: str = "Training curves",
    x_label: str = "epoch",
) -> Figure:
    """One panel for keys ending in "loss", one for those ending in "accuracy"; others ignored."""
    groups = {
        metric: {k: v for k, v in history.items() if k.endswith(metric)}
        for metric in ("loss", "accuracy")
    }
    groups = {metric: curves for metric, curves in groups.items() if curves}
    if not groups:
        raise ValueError(f"expected keys ending in 'loss' or 'accuracy', got {sorted(history)}")
    fig, axes = plt.subplots(
        1, len(groups), figsize=(5.0 * len(groups), 3.5), squeeze=False, layout="constrained"
    )
    for ax, (metric, curves) in zip(axes.flat, groups.items(), strict=True):
        for name, values in curves.items():
            # Curves may differ in length (e.g. validation run less often), so each gets its own x.
            ax.plot(range(1, len(values) + 1), values, label=name)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set(xlabel=x_label, ylabel=metric, title=metric)
        ax.legend()
    fig.suptitle(title)
    return fig


def plot_scaling(
    lengths: Sequence[int],
    series: Mapping[str, Sequence[float]],
    *,
    y_label: str,
    ax: Axes | None = None,
    title: str = "Cost against sequence length",
    log: bool = True,
) -> Axes:
    """Cost (e.g. time, peak memory) per method against sequence length; log-log by default."""
    ax = _plot_series(ax, lengths, series)
    if log:
        # Base 2 on x because sequence lengths are usually powers of two.
        _log2_x(ax, lengths)
        ax.set_yscale("log")
    ax.set(xlabel="sequence length L", ylabel=y_label, title=title)
    return ax


def plot_metric_vs_dk(
    d_ks: Sequence[int],
    series: Mapping[str, Sequence[float]],
    *,
    y_label: str,
    ax: Axes | None = None,
    title: str = "Softmax saturation against d_k",
) -> Axes:
    """A metric (e.g. max weight, entropy) against d_k per variant, on a log2 x axis."""
    ax = _plot_series(ax, d_ks, series)
    _log2_x(ax, d_ks)
    ax.set(xlabel="key dimension d_k", ylabel=y_label, title=title)
    return ax


def plot_accuracy_by_depth(
    accuracy: Mapping[int, Sequence[float]],
    *,
    chance: float | None = None,
    chance_label: str = "chance",
    ax: Axes | None = None,
    title: str = "Accuracy against depth",
) -> Axes:
    """One dot per seed and the mean ± std at each depth; ``accuracy``: depth -> per-seed values.

    ``chance``, when given, is drawn as a dotted line labelled ``chance_label``.
    """
    if not accuracy:
        raise ValueError("expected accuracies for at least one depth, got none")
    for depth, values in accuracy.items():
        if len(values) == 0:
            raise ValueError(f"expected at least one seed's accuracy for depth {depth}, got none")
    ax = _new_ax(ax)  # only after validation, so bad input leaves no stray figure
    depths = sorted(accuracy)
    slots = range(len(depths))  # evenly spaced, whatever the depths are
    for slot, depth in zip(slots, depths, strict=True):
        values = np.asarray(accuracy[depth], dtype=float)
        # Spread the seeds sideways so equal values stay visible.
        ax.scatter(slot + np.linspace(-0.12, 0.12, len(values)), values, s=18, alpha=0.6)
        spread = values.std(ddof=1) if len(values) > 1 else 0.0  # the sample std, as torch's
        ax.errorbar(slot, values.mean(), yerr=spread, fmt="_k", ms=22, capsize=6)
    if chance is not None:
        ax.axhline(chance, color="grey", ls=":", label=f"{chance_label} ({chance:.3f})")
        ax.legend(loc="lower right")
    ax.set_xticks(list(slots), [str(d) for d in depths])
    ax.set(xlabel="layers", ylabel="accuracy", ylim=(0, 1.05), title=title)
    return ax
