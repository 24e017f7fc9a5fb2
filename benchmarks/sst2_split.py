"""Time ``held_out_sentences`` on a generated phrase file the size of SST-2's training file.

The file (``tests/sst2_like_corpus.py``) holds sentences and many of their phrases, as SST-2's
does; its words are made up and nothing is downloaded. Each round times the whole split (finding
the sentences, drawing 10% of them, dropping their phrases from training); the figure is the
median. The last line printed is a JSON object.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time

from attention_lab.training import held_out_sentences
from tests.sst2_like_corpus import sst2_like_phrases


def main() -> None:
    """Print the split's sizes and its median time over ``--rounds`` rounds."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--phrases", type=int, default=67_349, help="SST-2's train.tsv: 67,349")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    phrases = sst2_like_phrases(args.phrases, seed=0)
    seconds = []
    for _ in range(args.rounds):
        start = time.perf_counter()
        train, held_out = held_out_sentences(phrases, fraction=0.1, seed=0)
        seconds.append(time.perf_counter() - start)
    result = {
        "phrases": len(phrases),
        "mean_words": round(sum(len(p.text.split()) for p in phrases) / len(phrases), 1),
        "held_out_sentences": len(held_out),
        "train": len(train),
        "dropped": len(phrases) - len(train) - len(held_out),
        "median_seconds": round(statistics.median(seconds), 2),
        "seconds": [round(s, 2) for s in seconds],
        "machine": f"{platform.machine()}, {platform.python_version()}",
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
