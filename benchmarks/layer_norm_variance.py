"""Time the reference LayerNorm's variance two ways, in one run: ``Tensor.var`` (what
attention_lab/reference/a03_transformer_block.py used until 2026-11-27) against the mean of
squared deviations (what it uses now, as 03's solution does), forward alone and forward with
backward, on one CPU thread, at the sizes 05 and 06 train.

Prints one JSON line: microseconds per call for each form and size, and the ratio new / old
(below 1: the new form is faster), with the largest difference between the two outputs.
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from collections.abc import Callable
from datetime import date

import torch
from torch import Tensor

# (B, L, d_model): a 05 training batch (64 sentences), a 06 batch of 32 blocks of 128 characters.
SIZES = {"05_batch": (64, 20, 64), "06_batch": (32, 128, 128)}
EPS = 1e-5


def with_var(x: Tensor, weight: Tensor, bias: Tensor) -> Tensor:
    """The former reference: Tensor.var with unbiased=False."""
    mean = x.mean(dim=-1, keepdim=True)
    variance = x.var(dim=-1, keepdim=True, unbiased=False)
    return (x - mean) / torch.sqrt(variance + EPS) * weight + bias


def with_mean_of_squares(x: Tensor, weight: Tensor, bias: Tensor) -> Tensor:
    """The reference now: the mean of squared deviations."""
    centred = x - x.mean(dim=-1, keepdim=True)
    variance = (centred * centred).mean(dim=-1, keepdim=True)
    return centred / torch.sqrt(variance + EPS) * weight + bias


def microseconds(
    layer_norm: Callable[[Tensor, Tensor, Tensor], Tensor],
    x: Tensor,
    weight: Tensor,
    bias: Tensor,
    backward: bool,
    repeats: int,
) -> float:
    """Mean wall time of one call (forward, or forward and backward) in microseconds, after one
    warm-up call."""

    def step() -> None:
        if backward:
            layer_norm(x.clone().requires_grad_(), weight, bias).sum().backward()
        else:
            with torch.no_grad():
                layer_norm(x, weight, bias)

    step()
    started = time.perf_counter()
    for _ in range(repeats):
        step()
    return (time.perf_counter() - started) / repeats * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=200, help="calls timed per measurement")
    args = parser.parse_args()
    if args.repeats < 1:
        parser.error(f"expected --repeats of at least 1, got {args.repeats}")
    torch.set_num_threads(1)
    generator = torch.Generator().manual_seed(0)
    results = {}
    for name, shape in SIZES.items():
        x = torch.randn(*shape, generator=generator)
        weight = torch.rand(shape[-1], generator=generator, requires_grad=True)
        bias = torch.rand(shape[-1], generator=generator, requires_grad=True)
        row = {}
        for form, layer_norm in (("old", with_var), ("new", with_mean_of_squares)):
            for part, backward in (("forward", False), ("forward_backward", True)):
                took = microseconds(layer_norm, x, weight, bias, backward, args.repeats)
                row[f"{form}_{part}_us"] = round(took, 1)
        with torch.no_grad():
            gap = (with_var(x, weight, bias) - with_mean_of_squares(x, weight, bias)).abs().max()
        row["ratio_forward"] = round(row["new_forward_us"] / row["old_forward_us"], 3)
        row["ratio_forward_backward"] = round(
            row["new_forward_backward_us"] / row["old_forward_backward_us"], 3
        )
        row["largest_difference"] = float(gap)
        results[name] = row
    print(
        json.dumps(
            {
                "benchmark": "layer_norm_variance",
                "date": date.today().isoformat(),
                "machine": platform.machine(),
                "torch": torch.__version__,
                "threads": 1,
                "repeats": args.repeats,
                "sizes": {name: list(shape) for name, shape in SIZES.items()},
                "results": results,
            }
        )
    )


if __name__ == "__main__":
    main()
