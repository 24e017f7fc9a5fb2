"""Grading at scale: what the Dask engine costs, what each assignment costs, and a projection.

Prints one JSON object as its last line:
- ``engines``: one class of --size submissions of 01 (correct and mistaken), graded by the local
  pool (``--workers N``) and by a Dask LocalCluster of as many workers (``--cluster local:N``),
  --repeat pairs of runs one after the other; wall times of the whole command, ratio = Dask /
  pool of each pair, and their median.
- ``assignments``: for each assignment, the core-seconds (CPU time of every process of the
  grading command: grader, workers, judges, sandboxes) of grading its solution notebook with one
  worker, less those of a run whose one submission intake refuses at once (the start-up:
  imports and hidden reference data), and that start-up.
- ``memory_mib``: while grading 04 and 05, the peak resident memory of the worker process, and
  the peak proportional memory (PSS) of the worker with its judge and sandbox: what to ask per
  worker.
- ``projection``: NOT measured, computed from ``assignments``: wall time to grade 1,000
  submissions of each assignment on 1, 4 and 16 nodes of 32 cores, one single-threaded worker
  per core, assuming every worker gets its core and the scheduler costs nothing.

CPU time is sampled from /proc every 0.1 s, so a process that lives less than that is missed.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from autograder.examples import Sample, build_course, honest_class  # noqa: E402
from autograder.pipeline.course.course import tool_env  # noqa: E402

ASSIGNMENTS = [p.name for p in sorted((ROOT / "solutions").iterdir()) if p.is_dir()]
HEAVIEST = ("04_depth", "05_sentiment")
TICK = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")


class TreeSampler(threading.Thread):
    """Samples every process below ``root``: CPU seconds, and the memory of grading workers."""

    def __init__(self, root: int, interval: float = 0.1):
        super().__init__(daemon=True)
        self.root, self.interval = root, interval
        self.cpu: dict[tuple[int, int], float] = {}  # (pid, start time) -> CPU seconds seen
        self.worker_rss = 0  # bytes: the largest grading worker process
        self.worker_tree_pss = 0  # bytes: the largest worker with its judge and sandbox
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.wait(self.interval):
            self.sample()

    def sample(self) -> None:
        table = {}
        for entry in os.scandir("/proc"):
            if entry.name.isdigit():
                stat = _stat(int(entry.name))
                if stat is not None:
                    table[int(entry.name)] = stat
        children: dict[int, list[int]] = {}
        for pid, (_, parent, *_) in table.items():
            children.setdefault(parent, []).append(pid)
        below = [p for p in _subtree(self.root, children) if p in table]  # some just ended
        for pid in below:
            name, _, cpu, started, rss = table[pid]
            self.cpu[(pid, started)] = max(self.cpu.get((pid, started), 0.0), cpu)
        # A grading worker is the parent of a running sandbox (bwrap).
        workers = {table[p][1] for p in below if table[p][0] == "bwrap"}
        for worker in workers:
            self.worker_rss = max(self.worker_rss, table[worker][4])
            if worker not in table:
                continue
            pss = sum(_pss(p) for p in _subtree(worker, children))
            self.worker_tree_pss = max(self.worker_tree_pss, pss)

    def cpu_seconds(self) -> float:
        return sum(self.cpu.values())


def _stat(pid: int) -> tuple[str, int, float, int, int] | None:
    """(name, parent, CPU seconds, start time, resident bytes) of ``pid``, if it still exists."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
        rss_pages = int(Path(f"/proc/{pid}/statm").read_text().split()[1])
    except (OSError, IndexError, ValueError):
        return None
    name = text[text.index("(") + 1 : text.rindex(")")]
    fields = text[text.rindex(")") + 2 :].split()
    cpu = (int(fields[11]) + int(fields[12])) / TICK  # utime + stime, without waited children
    return name, int(fields[1]), cpu, int(fields[19]), rss_pages * PAGE


def _pss(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _subtree(root: int, children: dict[int, list[int]]) -> list[int]:
    found, stack = [], [root]
    while stack:
        pid = stack.pop()
        found.append(pid)
        stack.extend(children.get(pid, ()))
    return found


def graded(course: Path, assignment: str, *options: str) -> tuple[float, TreeSampler]:
    """Run the grading command on ``course``; its wall seconds and what was sampled."""
    command = [sys.executable, "-m", "autograder", "grade", assignment, "--no-feedback", *options]
    command.append("--development-secret")  # a throwaway course: its hidden inputs are no secret
    started = time.perf_counter()
    process = subprocess.Popen(
        command,
        cwd=course,
        env=tool_env(OMP_NUM_THREADS="1"),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    sampler = TreeSampler(process.pid)
    sampler.start()
    output, _ = process.communicate()
    sampler.done.set()
    sampler.join()
    wall = time.perf_counter() - started
    if process.returncode != 0:
        sys.stderr.write(output.decode(errors="replace")[-3000:])
        raise SystemExit(f"grading {assignment} in {course} failed ({process.returncode})")
    return wall, sampler


def compare_engines(scratch: Path, size: int, workers: int, repeat: int) -> dict:
    """``repeat`` pairs of runs, pool then Dask, each on a fresh copy of one class: on a shared
    machine the load changes from minute to minute, so each ratio compares neighbours."""
    template = scratch / "class"
    build_course(template, honest_class(size))
    pairs = []
    for turn in range(repeat):
        pooled, dasked = scratch / f"pool-{turn}", scratch / f"dask-{turn}"
        shutil.copytree(template, pooled)
        shutil.copytree(template, dasked)
        pool_wall, pool = graded(pooled, "01_attention", "--workers", str(workers))
        dask_wall, dask = graded(dasked, "01_attention", "--cluster", f"local:{workers}")
        pairs.append(
            {
                "pool_seconds": round(pool_wall, 1),
                "dask_seconds": round(dask_wall, 1),
                "ratio": round(dask_wall / pool_wall, 3),
                "pool_core_seconds": round(pool.cpu_seconds(), 1),
                "dask_core_seconds": round(dask.cpu_seconds(), 1),
                "load_average_after": round(os.getloadavg()[0], 2),
            }
        )
        print(json.dumps({"engines_pair": pairs[-1]}), flush=True)
    return {
        "submissions": size,
        "workers": workers,
        "pairs": pairs,
        "median_ratio": statistics.median(p["ratio"] for p in pairs),
    }


def assignment_cost(scratch: Path, assignment: str) -> dict:
    """Core-seconds of grading the solution of ``assignment``, less the start-up's, and the
    start-up's (one worker each time)."""
    course = scratch / assignment
    samples = [
        Sample("solution", "correct", "ok", True),
        Sample("refused", "broken", "invalid notebook", False, raw=b"not a notebook"),
    ]
    build_course(course, samples, assignment)
    _, start = graded(course, assignment, "--workers", "1", "--student", "refused")
    wall, solution = graded(course, assignment, "--workers", "1", "--student", "solution")
    cost = {
        "start_up_core_seconds": round(start.cpu_seconds(), 1),
        "core_seconds_per_submission": round(solution.cpu_seconds() - start.cpu_seconds(), 1),
        "solution_wall_seconds": round(wall, 1),
    }
    if assignment in HEAVIEST:
        cost["worker_peak_rss_mib"] = round(solution.worker_rss / 2**20)
        cost["worker_with_judge_and_sandbox_peak_pss_mib"] = round(solution.worker_tree_pss / 2**20)
    return cost


def projection(costs: dict[str, dict], submissions: int = 1000) -> dict:
    """Wall seconds for ``submissions`` per assignment on 1, 4 and 16 nodes of 32 cores."""
    projected = {}
    for nodes in (1, 4, 16):
        workers = nodes * 32
        waves = math.ceil(submissions / workers)
        per_assignment = {
            name: round(c["start_up_core_seconds"] + waves * c["core_seconds_per_submission"])
            for name, c in costs.items()
        }
        projected[f"{nodes}_nodes"] = {
            "seconds_per_assignment": per_assignment,
            "all_assignments_minutes": round(sum(per_assignment.values()) / 60, 1),
        }
    return projected


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size", type=int, default=8, help="submissions of the engine comparison")
    parser.add_argument("--workers", type=int, default=2, help="workers of both engines")
    parser.add_argument("--repeat", type=int, default=1, help="pairs of engine runs")
    parser.add_argument("--assignments", nargs="*", default=ASSIGNMENTS)
    parser.add_argument("--no-engines", action="store_true", help="skip the engine comparison")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        scratch = Path(folder)
        engines = (
            None
            if args.no_engines
            else compare_engines(scratch, args.size, args.workers, args.repeat)
        )
        print(json.dumps({"engines": engines}), flush=True)
        costs = {}
        for assignment in args.assignments:
            costs[assignment] = assignment_cost(scratch, assignment)
            print(json.dumps({assignment: costs[assignment]}), flush=True)
    memory = {
        name: {k: v for k, v in cost.items() if k.endswith("_mib")}
        for name, cost in costs.items()
        if name in HEAVIEST
    }
    print(
        json.dumps(
            {
                "benchmark": "grading_scale",
                "cpus": os.cpu_count(),
                "load_average_at_end": [round(x, 2) for x in os.getloadavg()],
                "engines": engines,
                "assignments": costs,
                "memory_mib": memory,
                "projection_not_measured": {
                    "assumes": "1,000 submissions per assignment, one single-threaded worker "
                    "per core, start-up once per worker, every worker on its own core",
                    **projection(costs),
                },
            }
        )
    )


if __name__ == "__main__":
    main()
