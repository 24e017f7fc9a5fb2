"""Time attention_lab's attention against torch's SDPA (math backend), forward and backward.

Both run in the same process on the same inputs, interleaved; ``ratio_vs_sdpa`` is the
median of the per-pair ratios, so it is fair even on a noisy machine. The last line
printed is a JSON object.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time

import torch
from torch.nn import functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

from attention_lab.reference.a01_attention import causal_mask, scaled_dot_product_attention


def ours(q, k, v, mask):
    return scaled_dot_product_attention(q, k, v, mask)[0]


def torch_math(q, k, v, mask):
    with sdpa_kernel(SDPBackend.MATH):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)


def time_forward_backward(fn, q, k, v, mask) -> float:
    """Seconds for one forward and backward pass."""
    for t in (q, k, v):
        t.grad = None
    start = time.perf_counter()
    fn(q, k, v, mask).sum().backward()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--heads", type=int, default=8)
    parser.add_argument("--length", type=int, default=512)
    parser.add_argument("--d-k", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--causal", action="store_true", help="also pass a causal mask")
    args = parser.parse_args()

    torch.manual_seed(0)
    shape = (args.batch, args.heads, args.length, args.d_k)
    q, k, v = (torch.randn(shape, requires_grad=True) for _ in range(3))
    mask = causal_mask(args.length) if args.causal else None

    times: dict[str, list[float]] = {"ours": [], "sdpa_math": []}
    for fn in (ours, torch_math):  # warm-up
        time_forward_backward(fn, q, k, v, mask)
    for _ in range(args.repeats):
        times["ours"].append(time_forward_backward(ours, q, k, v, mask))
        times["sdpa_math"].append(time_forward_backward(torch_math, q, k, v, mask))

    ours_s, sdpa_s = statistics.median(times["ours"]), statistics.median(times["sdpa_math"])
    # Each pair runs back to back, so the median of pair ratios shrugs off drifting load.
    pair_ratios = [a / b for a, b in zip(times["ours"], times["sdpa_math"], strict=True)]
    print(
        json.dumps(
            {
                "benchmark": "attention_speed",
                "shape_B_H_L_dk": list(shape),
                "causal_mask": args.causal,
                "device": "cpu",
                "threads": torch.get_num_threads(),
                "machine": platform.processor() or platform.machine(),
                "repeats": args.repeats,
                "ours_median_s": round(ours_s, 4),
                "sdpa_math_median_s": round(sdpa_s, 4),
                "ratio_vs_sdpa": round(statistics.median(pair_ratios), 3),
            }
        )
    )


if __name__ == "__main__":
    main()
