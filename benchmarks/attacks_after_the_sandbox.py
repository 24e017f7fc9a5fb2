"""What issue 24's attacks after the sandbox cost two honest students: each graded alone, then in
one batch beside the attacks (autograder.examples.build_attack_course), two workers, feedback
included.

Prints one JSON line: the honest students' seconds in each batch, both batches' wall times, and
ratio = the honest pair's mean seconds beside the attacks / alone (the issue's grader made them
wait about 280 s).  Run it on an idle machine: other load moves the ratio (inside the test suite
it ranged from 0.6 to 1.72).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("OMP_NUM_THREADS", "1")

from autograder.authoring.hidden_seeds import DEVELOPMENT_SECRET  # noqa: E402
from autograder.examples import Sample, build_attack_course, build_course  # noqa: E402
from autograder.pipeline import batch  # noqa: E402
from autograder.pipeline.course import Course  # noqa: E402
from autograder.pipeline.feedback import generate_feedback  # noqa: E402
from autograder.pipeline.jobs_and_outcomes import Settings  # noqa: E402

ASSIGNMENT = "01_attention"
HONEST = ("ada", "alan")


def graded(root: Path) -> tuple[dict[str, float], float]:
    """Grade and feed back the course at ``root``: each student's seconds, and the wall time."""
    started = time.perf_counter()
    course = Course.load(root)
    outcomes = batch.grade(
        ASSIGNMENT,
        course,
        workers=2,
        settings=Settings(cell_timeout=60.0),
        secret=DEVELOPMENT_SECRET,
    )
    generate_feedback(course, ASSIGNMENT)
    return {o.student: o.seconds for o in outcomes}, time.perf_counter() - started


def main() -> None:
    argparse.ArgumentParser(description=__doc__).parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        alone_root, mixed_root = Path(scratch) / "alone", Path(scratch) / "mixed"
        build_course(alone_root, [Sample(s, "correct", "ok", True) for s in HONEST])
        build_attack_course(mixed_root, HONEST)
        alone, alone_wall = graded(alone_root)
        mixed, mixed_wall = graded(mixed_root)
    honest_alone = sum(alone[s] for s in HONEST) / len(HONEST)
    honest_mixed = sum(mixed[s] for s in HONEST) / len(HONEST)
    print(
        json.dumps(
            {
                "benchmark": "attacks_after_the_sandbox",
                "machine": f"{platform.machine()}, {os.cpu_count()} CPUs",
                "honest_seconds_alone": {s: round(alone[s], 1) for s in HONEST},
                "honest_seconds_beside_attacks": {s: round(mixed[s], 1) for s in HONEST},
                "batch_and_feedback_seconds": {
                    "alone": round(alone_wall, 1),
                    "beside_attacks": round(mixed_wall, 1),
                },
                "ratio": round(honest_mixed / honest_alone, 3),
            }
        )
    )


if __name__ == "__main__":
    main()
