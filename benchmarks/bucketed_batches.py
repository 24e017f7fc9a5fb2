"""Time one training epoch on full-width batches against length-bucketed, trimmed ones.

Sentences have a long-tailed length distribution like real review phrases (most short, a few
near the width), padded to one width. Both loaders feed the same reference classifier from the
same weights, interleaved over a few rounds; ``speedup`` is the median of the per-round ratios.
No data is downloaded: the ids are random, since the cost does not depend on which words they
are. The last line printed is a JSON object.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time

import torch

from attention_lab.reference.a05_sentiment import SentimentClassifier, make_optimizer, train_step
from attention_lab.training import LengthBucketedBatches, make_loader

PAD_ID, VOCAB = 0, 5000


def padded_corpus(n: int, width: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(n, width) ids with lengths from a geometric-like tail (mean about width / 5), and labels."""
    g = torch.Generator().manual_seed(seed)
    lengths = (torch.empty(n).exponential_(generator=g) * width / 5).long().clamp(2, width)
    ids = torch.randint(3, VOCAB, (n, width), generator=g)
    ids[torch.arange(width) >= lengths[:, None]] = PAD_ID
    return ids, torch.randint(0, 2, (n,), generator=g)


def epoch_seconds(model: torch.nn.Module, batches, state: dict) -> float:
    """Seconds for one epoch of train_step over ``batches``, starting from ``state``."""
    model.load_state_dict(state)
    optimizer = make_optimizer(model)
    start = time.perf_counter()
    for inputs, labels in batches:
        train_step(model, inputs, labels, optimizer)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sentences", type=int, default=4000)
    parser.add_argument("--width", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    ids, labels = padded_corpus(args.sentences, args.width, seed=0)
    torch.manual_seed(0)
    model = SentimentClassifier(VOCAB, max_len=args.width, pad_id=PAD_ID)
    state = {k: v.clone() for k, v in model.state_dict().items()}
    full = make_loader(ids, labels, batch_size=64, seed=0)
    bucketed = LengthBucketedBatches(ids, labels, PAD_ID, batch_size=64, seed=0)
    padding_share = (ids == PAD_ID).float().mean().item()
    trimmed = sum(batch.numel() for batch, _ in bucketed)
    real = int((ids != PAD_ID).sum())
    ratios, full_times, bucketed_times = [], [], []
    for _ in range(args.rounds):
        full_times.append(epoch_seconds(model, full, state))
        bucketed_times.append(epoch_seconds(model, bucketed, state))
        ratios.append(full_times[-1] / bucketed_times[-1])
    print(
        json.dumps(
            {
                "benchmark": "bucketed_batches",
                "machine": platform.machine(),
                "threads": torch.get_num_threads(),
                "sentences": args.sentences,
                "width": args.width,
                "padding_share_full_width": round(padding_share, 3),
                "padding_share_bucketed": round(1 - real / trimmed, 3),
                "epoch_s_full_width": round(statistics.median(full_times), 2),
                "epoch_s_bucketed": round(statistics.median(bucketed_times), 2),
                "speedup": round(statistics.median(ratios), 2),
            }
        )
    )


if __name__ == "__main__":
    main()
