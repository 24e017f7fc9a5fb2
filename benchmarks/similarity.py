"""Similarity flags: the calibration's score distribution, and the time to compare a class.

The distribution comes from tests/similarity_corpus.py: every copy of the reference answers
(verbatim, renamed, reformatted, padded, after dead code, reordered) must score at or above the
threshold, every correct alternative of the mutation corpus below it, against the reference and
against each other.  The class is
synthetic: --size submissions of --assignment, each answer cell drawn at random from the
reference and the mutation corpus's versions of it (right and wrong), then its locals renamed or
not, or left as the stub; so many pairs are near-copies, which is the slow case for the report.

Prints one JSON object as its last line.
"""

from __future__ import annotations

import argparse
import importlib
import json
import pkgutil
import platform
import random
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import tests.mutants  # noqa: E402
from autograder.examples import solution_answers  # noqa: E402
from autograder.pipeline.records.similarity import THRESHOLD, compare_class, report_html  # noqa: E402
from tests.mutants import mutated_cells  # noqa: E402
from tests.similarity_corpus import calibration, release, renamed, submission  # noqa: E402


def versions(assignment: str) -> dict[str, list[str]]:
    """grade_id -> every version of that answer: the reference's and each mutant's."""
    found = {grade_id: [source] for grade_id, source in solution_answers(assignment).items()}
    for info in pkgutil.iter_modules(tests.mutants.__path__):
        module = importlib.import_module(f"tests.mutants.{info.name}")
        for mutant in (*module.WRONG, *module.CORRECT):
            if mutant.assignment == assignment:
                for grade_id, source in mutated_cells(mutant).items():
                    found[grade_id].append(source)
    return found


def synthetic_class(assignment: str, size: int, seed: int) -> dict[str, dict[str, str]]:
    """``size`` submissions (student -> grade_id -> source), drawn as the docstring says."""
    draw = random.Random(seed)
    pool = versions(assignment)
    students = {}
    for number in range(size):
        answers = {}
        for grade_id, sources in pool.items():
            kind = draw.random()
            if kind < 0.9:  # else the stub: this exercise was left undone
                source = draw.choice(sources)
                answers[grade_id] = renamed(source) if kind < 0.45 else source
        students[f"student-{number:03d}"] = submission(assignment, answers)
    return students


def _children_cpu() -> float:
    """CPU seconds of this process's ended children (each submission's fingerprinting)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--assignment", default="03_transformer_block", help="the class's")
    parser.add_argument("--size", type=int, default=200, help="submissions in the class")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    started = time.perf_counter()
    calibrated = calibration()
    copies = calibrated.copy_scores()
    alternatives = calibrated.alternative_scores()
    calibration_seconds = time.perf_counter() - started

    students = synthetic_class(args.assignment, args.size, args.seed)
    reference = solution_answers(args.assignment)
    started, cpu, children = time.perf_counter(), time.process_time(), _children_cpu()
    comparison = compare_class(students, reference, release(args.assignment))
    compare_seconds = time.perf_counter() - started
    compare_cpu_seconds = time.process_time() - cpu
    fingerprint_cpu_seconds = _children_cpu() - children
    started = time.perf_counter()
    page = report_html(comparison, args.assignment)
    report_seconds = time.perf_counter() - started

    highest = max(alternatives, key=alternatives.__getitem__)
    lowest = min(copies, key=copies.__getitem__)
    print(
        json.dumps(
            {
                "threshold": THRESHOLD,
                "min_flagged_copy_score": round(copies[lowest], 4),
                "min_flagged_copy": lowest,
                "copies": len(copies),
                "max_correct_alternative_score": round(alternatives[highest], 4),
                "max_correct_alternative": highest,
                "correct_alternatives_compared": len(alternatives),
                "correct_alternative_scores": sorted(round(s, 3) for s in alternatives.values()),
                "calibration_seconds": round(calibration_seconds, 2),
                "class_assignment": args.assignment,
                "class_size": args.size,
                "pairs_compared": comparison.pairs_compared,
                "pairs_flagged": len(comparison.flagged),
                "compare_seconds": round(compare_seconds, 2),
                "compare_cpu_seconds": round(compare_cpu_seconds, 2),
                "fingerprint_processes_cpu_seconds": round(fingerprint_cpu_seconds, 2),
                "report_seconds": round(report_seconds, 2),
                "report_bytes": len(page.encode()),
                "machine": f"{platform.machine()}, {platform.python_version()}",
            }
        )
    )


if __name__ == "__main__":
    main()
