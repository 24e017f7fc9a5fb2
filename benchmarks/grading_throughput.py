"""Grade one sample class twice, with plain sequential `nbgrader autograde` and with ours.

Prints one JSON line: both wall times, ratio = ours / nbgrader, and seconds per submission.
The class is the demo's correct and mistaken submissions (hostile ones would only measure
timeouts), copied to --size students.  Ours runs with the sandbox and the trusted judge.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from autograder.examples import build_course, honest_class  # noqa: E402
from autograder.pipeline.course.course import tool_env  # noqa: E402


def timed(command: list[str], cwd: Path) -> float:
    env = tool_env(OMP_NUM_THREADS="1")
    started = time.perf_counter()
    subprocess.run(command, cwd=cwd, env=env, check=False, capture_output=True)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size", type=int, default=8, help="students in the class")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        theirs, ours = Path(scratch) / "nbgrader", Path(scratch) / "ours"
        build_course(theirs, honest_class(args.size))
        shutil.copytree(theirs, ours)
        nbgrader_seconds = timed(
            [sys.executable, "-m", "nbgrader", "autograde", "01_attention", "--log-level", "ERROR"],
            theirs,
        )
        ours_seconds = timed(
            [
                sys.executable,
                "-m",
                "autograder",
                "grade",
                "01_attention",
                "--no-feedback",
                "--development-secret",  # a throwaway course: its hidden inputs are no secret
                "--workers",
                str(args.workers),
            ],
            ours,
        )
    print(
        json.dumps(
            {
                "benchmark": "grading_throughput",
                "submissions": args.size,
                "workers": args.workers,
                "cpus": os.cpu_count(),
                "nbgrader_seconds": round(nbgrader_seconds, 1),
                "ours_seconds": round(ours_seconds, 1),
                "nbgrader_seconds_per_submission": round(nbgrader_seconds / args.size, 2),
                "ours_seconds_per_submission": round(ours_seconds / args.size, 2),
                "ratio": round(ours_seconds / nbgrader_seconds, 3),
            }
        )
    )


if __name__ == "__main__":
    main()
