"""Matplotlib helpers for the course notebooks.

Every function draws on ``ax`` when given (otherwise on a new figure) and
returns the Axes, or the Figure for multi-panel plots; none calls
``plt.show()``. Array inputs may be torch tensors (any device, with or
without grad) or anything ``numpy.asarray`` accepts.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence

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
    side = max(3.0, 0.17 * max(len_q, len_k) + 1.0)  # about 1/6 inch per labelled row or column
    fig, axes = plt.subplots(
        rows, cols, figsize=(side * cols + 0.8, side * rows), squeeze=False, layout="constrained"
    )
    if tokens is not None:
        tokens = ["␣" if str(t) == " " else str(t) for t in tokens]  # a space would be invisible
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


def plot_singular_values(
    series: Mapping[str, Array],
    *,
    ax: Axes | None = None,
    title: str = "Singular values",
    floor: float = 1e-16,
) -> Axes:
    """Singular values (largest first) per named matrix, log y axis; zeros drawn at ``floor``."""
    if not series:
        raise ValueError("expected at least one named series of singular values, got none")
    values = {
        name: _to_numpy(s, (1,), f"singular values of {name!r} (1-D)") for name, s in series.items()
    }
    ax = _new_ax(ax)
    for name, s in values.items():
        ax.plot(np.arange(1, len(s) + 1), np.maximum(s, floor), marker="o", label=name)
    ax.set_yscale("log")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set(xlabel="index (largest first)", ylabel="singular value (log)", title=title)
    ax.legend()
    return ax


def plot_next_token_distributions(
    probabilities: Mapping[str, Array],
    tokens: Sequence[str],
    *,
    top: int = 12,
    title: str = "Distribution of the next token",
) -> Figure:
    """A bar panel per setting's probabilities (V,), over the ``top`` likeliest of the first."""
    if not probabilities:
        raise ValueError("expected at least one named distribution, got none")
    dists = {
        n: _to_numpy(p, (1,), f"probabilities of {n!r}, shape (V,)")
        for n, p in probabilities.items()
    }
    for name, p in dists.items():
        _check_labels(tokens, len(p), f"tokens for {name!r}")
    first = next(iter(dists.values()))
    order = np.argsort(-first, kind="stable")[: min(top, len(first))]
    labels = [repr(str(tokens[i]))[1:-1] or "''" for i in order]  # '\n' stays visible
    labels = [
        "␣" if str(tokens[i]) == " " else label for i, label in zip(order, labels, strict=True)
    ]
    fig, axes = plt.subplots(
        1,
        len(dists),
        figsize=(2.9 * len(dists), 3.2),
        sharey=True,
        squeeze=False,
        layout="constrained",
    )
    for ax, (name, p) in zip(axes.flat, dists.items(), strict=True):
        ax.bar(range(len(order)), p[order], color="tab:blue")
        rest = max(0.0, 1.0 - float(p[order].sum()))
        ax.set_xticks(range(len(order)), labels, fontsize=9)
        ax.set(title=f"{name}\n(other tokens: {rest:.0%})", xlabel="next token")
        ax.title.set_fontsize(10)
    axes.flat[0].set_ylabel("probability")
    fig.suptitle(title)
    return fig


def plot_running_softmax(
    running_max: Array, running_sum: Array, *, rows: Sequence[str] | None = None
) -> Figure:
    """Running max and running sum (num_blocks, R) of R rows after each block of keys."""
    m = _to_numpy(running_max, (2,), "running maxima of shape (num_blocks, rows)")
    s = _to_numpy(running_sum, (2,), "running sums of shape (num_blocks, rows)")
    if m.shape != s.shape:
        raise ValueError(f"expected maxima and sums of one shape, got {m.shape} and {s.shape}")
    _check_labels(rows, m.shape[1], "row names")
    names = rows if rows is not None else [f"row {r}" for r in range(m.shape[1])]
    fig, (ax_max, ax_sum) = plt.subplots(1, 2, figsize=(10, 3.4), layout="constrained")
    blocks = np.arange(1, m.shape[0] + 1)
    for r, name in enumerate(names):
        ax_max.step(blocks, m[:, r], where="post", marker="o", label=name)
        ax_sum.plot(blocks, s[:, r], marker="o", label=name)
    ax_max.set(xlabel="blocks of keys seen", ylabel="running max m", title="m only grows")
    ax_sum.set(
        xlabel="blocks of keys seen",
        ylabel="running sum ℓ = Σ exp(s - m)",
        title="ℓ drops when m grows (rescaled by exp(m_old - m_new))",
    )
    for ax in (ax_max, ax_sum):
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.legend(fontsize=8)
    return fig


# --- data-flow diagrams: every tensor is drawn as a grid of its (rows, columns) ---------------


def _grid(
    ax: Axes,
    left: float,
    top: float,
    rows: int,
    cols: int,
    color: object | Callable[[int, int], object],
    label: str,
    *,
    label_below: bool = True,
) -> None:
    """Draw a rows x cols grid of unit cells, one colour or ``color(row, col)`` per cell."""
    for r in range(rows):
        for c in range(cols):
            cell = color(r, c) if callable(color) else color
            ax.add_patch(plt.Rectangle((left + c, top + r), 1, 1, fc=cell, ec="white", lw=1.0))
    ax.add_patch(plt.Rectangle((left, top), cols, rows, fc="none", ec="0.25", lw=1.2))
    y = top + rows + 0.35 if label_below else top - 0.35
    ax.text(
        left + cols / 2, y, label, ha="center", va="top" if label_below else "bottom", fontsize=9
    )


def _arrow(ax: Axes, start: tuple[float, float], end: tuple[float, float], text: str = "") -> None:
    """An arrow from start to end with ``text`` above its middle."""
    ax.annotate("", end, start, arrowprops={"arrowstyle": "-|>", "color": "0.3", "lw": 1.3})
    if text:
        middle = ((start[0] + end[0]) / 2, min(start[1], end[1]) - 0.3)
        ax.text(*middle, text, ha="center", va="bottom", fontsize=8.5, color="0.15")


def _finish_diagram(ax: Axes, title: str, pad: float = 6.0) -> None:
    """Equal unit cells, y pointing down like matrix rows, no axes."""
    ax.set_aspect("equal")
    ax.autoscale_view()
    ax.invert_yaxis()
    ax.axis("off")
    ax.set_title(title, pad=pad)


def plot_attention_dataflow(
    l_q: int = 4, l_k: int = 6, d_k: int = 3, d_v: int = 2, *, ax: Axes | None = None
) -> Axes:
    """Scaled dot-product attention as two matrix products, every tensor drawn at its shape."""
    if min(l_q, l_k, d_k, d_v) < 1:
        raise ValueError(f"expected positive sizes, got {(l_q, l_k, d_k, d_v)}")
    if ax is None:
        ax = plt.subplots(figsize=(11, 4.6), layout="constrained")[1]
    gap = 1.2
    weights = np.random.default_rng(0).dirichlet(np.ones(l_k), size=l_q)

    def shades(r: int, c: int) -> object:
        return plt.cm.viridis(weights[r, c])

    _grid(ax, 0, 0, l_q, d_k, "tab:blue", f"Q  ({l_q}, {d_k})\n(L_q, d_k)")
    x_s = d_k + gap
    _grid(
        ax,
        x_s,
        -d_k - gap,
        d_k,
        l_k,
        "tab:orange",
        f"Kᵀ  ({d_k}, {l_k}) = (d_k, L_k)",
        label_below=False,
    )
    _grid(ax, x_s, 0, l_q, l_k, "0.75", f"scores S = Q Kᵀ / √d_k\n({l_q}, {l_k}) = (L_q, L_k)")
    x_a = x_s + l_k + 6.0
    _arrow(
        ax, (x_s + l_k + 0.3, l_q / 2), (x_a - 0.3, l_q / 2), "mask: hidden → −∞\nsoftmax per row"
    )
    _grid(ax, x_a, 0, l_q, l_k, shades, f"weights A\n({l_q}, {l_k}): rows sum to 1")
    x_o = x_a + l_k + gap
    _grid(
        ax,
        x_o,
        -l_k - gap,
        l_k,
        d_v,
        "tab:green",
        f"V  ({l_k}, {d_v})\n(L_k, d_v)",
        label_below=False,
    )
    _grid(ax, x_o, 0, l_q, d_v, "tab:olive", f"output A V\n({l_q}, {d_v}) = (L_q, d_v)")
    ax.text(
        x_s + l_k / 2,
        -d_k - gap - 1.6,
        "every query row meets every key column",
        ha="center",
        fontsize=8.5,
        color="0.3",
    )
    _finish_diagram(
        ax, "Attention: softmax(Q Kᵀ / √d_k) V; batch dims (…) come in front of every shape", pad=34
    )
    return ax


def plot_heads_dataflow(
    length: int = 4, d_model: int = 6, num_heads: int = 3, *, ax: Axes | None = None
) -> Axes:
    """split_heads and merge_heads: which features of (L, d_model) each of the H heads owns."""
    if num_heads < 1 or d_model % num_heads:
        raise ValueError(f"expected d_model divisible by num_heads, got {d_model} and {num_heads}")
    d_k = d_model // num_heads
    if ax is None:
        ax = plt.subplots(figsize=(12, 4.8), layout="constrained")[1]
    palette = [plt.cm.tab10(h) for h in range(num_heads)]

    def by_head(_: int, c: int) -> object:
        return palette[c // d_k]

    step = length + 1.2
    tops = [h * step - (num_heads - 1) * step / 2 for h in range(num_heads)]
    middle = length / 2
    gap = 6.5
    full = f"(B, L, d_model) = (·, {length}, {d_model})"
    _grid(ax, 0, 0, length, d_model, by_head, f"Q = X W_Q\n{full}")
    x_split = d_model + gap
    _arrow(
        ax, (d_model + 0.3, middle), (x_split - 0.3, middle), "split_heads:\nview, transpose(1, 2)"
    )
    x_att = x_split + d_k + gap
    _arrow(
        ax, (x_split + d_k + 0.3, middle), (x_att - 0.3, middle), "attention in\nevery head at once"
    )
    for h, top in enumerate(tops):
        _grid(ax, x_split, top, length, d_k, palette[h], f"head {h}")
        _grid(ax, x_att, top, length, d_k, palette[h], f"head {h} output")
    below = tops[-1] + length + 1.3
    ax.text(
        x_split + d_k / 2,
        below,
        f"(B, H, L, d_k)\n= (·, {num_heads}, {length}, {d_k})",
        ha="center",
        va="top",
        fontsize=9,
    )
    ax.text(
        x_att + d_k / 2,
        below,
        "(B, H, L, d_k); weights\n(B, H, L, L) per head",
        ha="center",
        va="top",
        fontsize=9,
    )
    x_merge = x_att + d_k + gap
    _arrow(
        ax, (x_att + d_k + 0.3, middle), (x_merge - 0.3, middle), "merge_heads:\ntranspose, reshape"
    )
    _grid(
        ax,
        x_merge,
        0,
        length,
        d_model,
        by_head,
        f"heads side by side\n(B, L, H·d_k) = (·, {length}, {d_model})",
    )
    x_out = x_merge + d_model + gap
    _arrow(
        ax,
        (x_merge + d_model + 0.3, middle),
        (x_out - 0.3, middle),
        "out_proj W_O:\nmixes the heads",
    )
    _grid(ax, x_out, 0, length, d_model, "0.55", f"output\n{full}")
    _finish_diagram(
        ax, f"Multi-head attention, H = {num_heads}: head h owns features h·d_k … (h+1)·d_k − 1"
    )
    return ax


def _block(ax: Axes, x: float, y: float, text: str, color: str, width: float = 3.4) -> None:
    """A rounded box centred at (x, y)."""
    ax.text(
        x,
        y,
        text,
        ha="center",
        va="center",
        fontsize=9,
        bbox={"boxstyle": "round,pad=0.4", "fc": color, "ec": "0.3", "lw": 1.0},
        wrap=True,
    )


def plot_norm_placement() -> Figure:
    """Post-norm and pre-norm encoder blocks side by side, read bottom to top."""
    fig, axes = plt.subplots(1, 2, figsize=(10, 6.4), layout="constrained")
    fills = {"norm": "#f4c7c3", "attention": "#c6dbef", "ffn": "#c7e9c0"}
    # (text, kind, a residual branch leaves the stream after this step)
    layouts = {
        "post-norm (the paper)": [
            ("x", "end", True),
            ("multi-head attention", "attention", False),
            ("+", "sum", False),
            ("LayerNorm", "norm", True),
            ("feed-forward\n(B, L, d_ff) inside", "ffn", False),
            ("+", "sum", False),
            ("LayerNorm", "norm", False),
            ("out", "end", False),
        ],
        "pre-norm (GPT-2 onwards)": [
            ("x", "end", True),
            ("LayerNorm", "norm", False),
            ("multi-head attention", "attention", False),
            ("+", "sum", True),
            ("LayerNorm", "norm", False),
            ("feed-forward\n(B, L, d_ff) inside", "ffn", False),
            ("+", "sum", False),
            ("out\n(one final LayerNorm after the whole stack)", "end", False),
        ],
    }
    for ax, (name, steps) in zip(axes, layouts.items(), strict=True):
        fork = 0.0
        for y, (text, kind, forks) in enumerate(steps):
            if y:
                ax.annotate(
                    "", (0, y - 0.3), (0, y - 0.7), arrowprops={"arrowstyle": "-|>", "color": "0.3"}
                )
            if kind == "sum":
                ax.text(
                    0,
                    y,
                    "+",
                    ha="center",
                    va="center",
                    fontsize=13,
                    bbox={"boxstyle": "circle,pad=0.1", "fc": "white", "ec": "0.3"},
                )
                ax.plot([-0.3, -2.0, -2.0], [fork, fork, y], color="tab:purple", lw=1.8)
                ax.annotate(
                    "",
                    (-0.3, y),
                    (-2.0, y),
                    arrowprops={"arrowstyle": "-|>", "color": "tab:purple", "lw": 1.8},
                )
            elif kind == "end":
                ax.text(0, y, text, ha="center", va="center", fontsize=10, weight="bold")
            else:
                _block(ax, 0, y, text, fills[kind])
            if forks:
                fork = y
        ax.text(
            -2.15,
            0.9,
            "residual\n(skip)",
            color="tab:purple",
            fontsize=8.5,
            ha="right",
            va="center",
        )
        ax.text(
            1.9,
            3.5,
            "every arrow\ncarries a\n(B, L, d_model)\ntensor",
            fontsize=8.5,
            color="0.3",
            va="center",
        )
        ax.set_xlim(-3.4, 3.4)
        ax.set_ylim(-0.6, len(steps) - 0.2)
        ax.axis("off")
        ax.set_title(name)
    fig.suptitle(
        "Where LayerNorm sits: on the residual path (post-norm) or inside each branch (pre-norm)"
    )
    return fig


def plot_key_tiling(
    length: int = 12, chunk: int = 4, *, causal: bool = True, ax: Axes | None = None
) -> Axes:
    """The (L, L) score matrix that chunked attention never builds: one (L, C) block per step."""
    if length < 1 or chunk < 1:
        raise ValueError(f"expected positive length and chunk, got {length} and {chunk}")
    ax = ax if ax is not None else plt.subplots(figsize=(8.5, 5.2), layout="constrained")[1]
    num_blocks = math.ceil(length / chunk)
    palette = [plt.cm.Pastel1(b % 9) for b in range(num_blocks)]

    def colors(query: int, key: int) -> object:
        return "white" if causal and key > query else palette[key // chunk]

    _grid(ax, 0, 0, length, length, colors, "")
    for b in range(num_blocks):
        left, width = b * chunk, min(chunk, length - b * chunk)
        ax.add_patch(plt.Rectangle((left, 0), width, length, fc="none", ec="0.1", lw=2.0))
        ax.text(
            left + width / 2,
            -0.3,
            f"block {b}\nK_{b}, V_{b}",
            ha="center",
            va="bottom",
            fontsize=8.5,
        )
    ax.text(
        length + 0.6,
        length / 2,
        f"per query row, kept across blocks:\n  running max m  (L, 1)\n  running sum ℓ  (L, 1)\n"
        f"  accumulator a  (L, d_v)\n\none step holds only\nK_b, V_b: (C, d)\n"
        f"S_b = Q K_bᵀ: (L, C) = ({length}, {chunk})",
        va="center",
        fontsize=9,
    )
    ax.text(
        length / 2,
        length + 0.4,
        "key position, 0 at the left (white: hidden by the causal mask, −∞)"
        if causal
        else "key position, 0 at the left",
        ha="center",
        va="top",
        fontsize=9,
    )
    ax.text(
        -0.5,
        length / 2,
        "query position, 0 at the top",
        rotation=90,
        ha="right",
        va="center",
        fontsize=9,
    )
    ax.set_xlim(-1.5, length + 9)
    _finish_diagram(
        ax, f"Chunked attention walks over blocks of C = {chunk} keys (L = {length})", pad=34
    )
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


def plot_depth_stack_dataflow(num_layers: int = 3, *, ax: Axes | None = None) -> Axes:
    """DepthStack: x (B, L, d_model) through num_layers layers, each giving a (B, H, L, L) map."""
    if num_layers < 1:
        raise ValueError(f"expected at least one layer, got {num_layers}")
    if ax is None:
        ax = plt.subplots(figsize=(2.3 * num_layers + 5.0, 4.4), layout="constrained")[1]
    step, half = 2.8, 0.85  # distance between layers, half a layer box's width
    stream = "(B, L, d_model)"
    ax.text(0, 0, f"x\n{stream}", ha="center", va="center", fontsize=10, weight="bold")
    centres = [step * (i + 1) for i in range(num_layers)]
    for i, x in enumerate(centres):
        _block(ax, x, 0, f"layer {i + 1}\nEncoderBlock", "#c6dbef", width=2 * half)
        _arrow(ax, (x - step + half, 0), (x - half, 0), stream if i else "")
        ax.annotate("", (x, -0.45), (x, -1.25), arrowprops={"arrowstyle": "-|>", "color": "0.45"})
        ax.annotate("", (x, 1.45), (x, 0.45), arrowprops={"arrowstyle": "-|>", "color": "tab:red"})
        ax.text(
            x, 1.6, f"maps[{i}]\n(B, H, L, L)", ha="center", va="top", fontsize=9, color="tab:red"
        )
    end = centres[-1] + step
    _arrow(ax, (centres[-1] + half, 0), (end - 1.0, 0))
    ax.text(end, 0, f"output\n{stream}", ha="center", va="center", fontsize=10, weight="bold")
    ax.plot([centres[0], centres[-1]], [-1.25, -1.25], color="0.45", lw=1.2)
    ax.text(
        (centres[0] + centres[-1]) / 2,
        -1.4,
        "the same mask to every layer: layer(x, mask); None means no mask",
        ha="center",
        va="bottom",
        fontsize=9,
        color="0.3",
    )
    ax.text(
        (centres[0] + centres[-1]) / 2,
        2.55,
        f"forward returns (output, maps): maps is a list of {num_layers} attention map(s), "
        "one per layer",
        ha="center",
        va="top",
        fontsize=9.5,
    )
    ax.set_xlim(-1.2, end + 1.2)
    ax.set_ylim(-2.1, 3.0)
    layers = f"{num_layers} independent layer{'s' if num_layers > 1 else ''}"
    _finish_diagram(ax, f"DepthStack with {layers}: each layer reads the previous one's output")
    return ax


def plot_classifier_dataflow(
    length: int = 16,
    d_model: int = 64,
    num_heads: int = 4,
    num_layers: int = 2,
    num_classes: int = 2,
    *,
    ax: Axes | None = None,
) -> Axes:
    """Sentiment classifier, top to bottom: ids, embeddings + positions, encoder, pool, logits."""
    if min(length, d_model, num_heads, num_layers, num_classes) < 1 or d_model % num_heads:
        raise ValueError(
            "expected positive sizes and d_model divisible by num_heads, got "
            f"length={length}, d_model={d_model}, num_heads={num_heads}, "
            f"num_layers={num_layers}, num_classes={num_classes}"
        )
    if ax is None:
        ax = plt.subplots(figsize=(9.5, 7.6), layout="constrained")[1]
    stream = f"(B, L, d_model) = (B, {length}, {d_model})"
    steps = [
        ("token_ids", f"(B, L) = (B, {length})"),
        ("TokenEmbedding: lookup × √d_model", None),
        ("token vectors", stream),
        (f"+ sinusoidal positions ({length}, {d_model})", None),
        ("encoder input", stream),
        (f"TransformerEncoder: {num_layers} layers, {num_heads} heads", None),
        ("hidden", stream),
        ("masked_mean over the real tokens", None),
        ("sentence vector", f"(B, d_model) = (B, {d_model})"),
        (f"Linear(d_model, {num_classes})", None),
        ("logits", f"(B, num_classes) = (B, {num_classes})"),
    ]
    for y, (name, shape) in enumerate(steps):
        if y:
            ax.annotate(
                "", (0, y - 0.3), (0, y - 0.7), arrowprops={"arrowstyle": "-|>", "color": "0.3"}
            )
        if shape is None:
            _block(ax, 0, y, name, "#c6dbef" if "Encoder" in name else "#e5e5e5")
        else:
            ax.text(0, y, f"{name}  {shape}", ha="center", va="center", fontsize=10, weight="bold")
    encoder, pooling = 5, 7
    ax.text(
        2.9,
        encoder,
        f"also returns {num_layers} attention maps,\n"
        f"each (B, H, L, L) = (B, {num_heads}, {length}, {length})",
        ha="left",
        va="center",
        fontsize=9,
        color="tab:red",
    )
    # The padding path: the ids decide which keys attention may see and which positions are pooled.
    side = -4.6
    ax.plot([-1.8, side, side], [0, 0, pooling], color="tab:purple", lw=1.6, ls="--")
    for y, box_edge, text in (
        (encoder, -1.95, "padding_mask(token_ids, pad_id)\n(B, 1, L): hides <pad> keys"),
        (pooling, -1.75, "token_ids ≠ pad_id\n(B, L, 1): keeps real tokens"),
    ):
        ax.annotate(
            "",
            (box_edge, y),
            (side, y),
            arrowprops={"arrowstyle": "-|>", "color": "tab:purple", "lw": 1.6},
        )
        ax.text(
            side + 0.15, y - 0.2, text, ha="left", va="bottom", fontsize=8.5, color="tab:purple"
        )
    ax.set_xlim(side - 0.4, 6.6)
    ax.set_ylim(-0.6, len(steps) - 0.4)
    _finish_diagram(
        ax, "Sentiment classifier: B sentences of L token ids in, B × num_classes logits out"
    )
    return ax
