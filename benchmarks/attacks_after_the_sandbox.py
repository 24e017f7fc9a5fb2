"""What issue 24's attacks after the sandbox cost two honest students: graded in one batch beside
the attacks (autograder.examples.build_attack_course), then in a batch of their own, two workers,
feedback included (autograder.examples.honest_pair_beside_attacks).

Prints one JSON line: the honest students' seconds in each batch, both batches' wall times, and
ratio = the honest pair's mean seconds beside the attacks / alone (the issue's grader made them
wait about 280 s; tests/test_budget_batch.py asserts at most 1.5).  Run it on an idle machine:
other load moves the ratio (inside the parallel test suite it ranged from 0.6 to 1.72).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("OMP_NUM_THREADS", "1")

from autograder.examples import HONEST_PAIR, honest_pair_beside_attacks, slowdown  # noqa: E402


def main() -> None:
    argparse.ArgumentParser(description=__doc__).parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        beside, alone = honest_pair_beside_attacks(Path(scratch))
    print(
        json.dumps(
            {
                "benchmark": "attacks_after_the_sandbox",
                "machine": f"{platform.machine()}, {os.cpu_count()} CPUs",
                "honest_seconds_alone": {s: round(alone.seconds[s], 1) for s in HONEST_PAIR},
                "honest_seconds_beside_attacks": {
                    s: round(beside.seconds[s], 1) for s in HONEST_PAIR
                },
                "batch_and_feedback_seconds": {
                    "alone": round(alone.wall_seconds, 1),
                    "beside_attacks": round(beside.wall_seconds, 1),
                },
                "ratio": round(slowdown(beside, alone), 3),
            }
        )
    )


if __name__ == "__main__":
    main()
