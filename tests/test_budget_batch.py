"""One sandboxed batch with every after-the-sandbox attack of issue 24 beside an honest pair:
100,000 empty display outputs, one 100 kB attachment referenced 3,000 times, and a lone
surrogate in an error message.  Each row gets a verdict, everyone gets feedback, the batch ends
within a bound, and no process of the grading grows past a stated bound.  The honest students'
time beside the attacks and alone is measured and printed, not asserted: inside the test suite
other workers load the cores differently during the two runs (one CI run measured 1.72 times,
an earlier one 0.6), so the wall-time ratio of issue 24 needs an idle machine."""

from __future__ import annotations

import base64
import json
import multiprocessing
import resource
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import nbformat
import pytest

from autograder.authoring.hidden_seeds import DEVELOPMENT_SECRET
from autograder.examples import (
    Sample,
    build_course,
    build_submission,
    solution_answers,
    write_class,
)
from autograder.pipeline import batch
from autograder.pipeline.course import Course
from autograder.pipeline.feedback import generate_feedback
from autograder.pipeline.jobs_and_outcomes import Settings

pytestmark = [pytest.mark.slow, pytest.mark.sandbox, pytest.mark.usefixtures("sandbox_required")]

ASSIGNMENT = "01_attention"
HONEST = ("ada", "alan")
# Named to sort first: the pool takes them before the honest pair.
DISPLAYS = "aa-displays"
ATTACHMENTS = "aa-attachments"
SURROGATE = "aa-surrogate"
# The largest process of the whole grading (grader, workers, judges, sandboxed kernels, the
# feedback process) must stay under this: the issue saw 2.4 GB in the class's feedback process.
PEAK_BOUND_MIB = 2048


def _attachment_bomb(release: nbformat.NotebookNode) -> bytes:
    """The honest answers, plus a markdown cell that inlines one 100 kB image 3,000 times."""
    notebook = nbformat.reads(
        build_submission(Sample("x", "x", "ok", True), release, solution_answers()).decode(), 4
    )
    image = base64.b64encode(b"\x89PNG" + bytes(100_000 - 4)).decode()
    cell = nbformat.v4.new_markdown_cell("![](attachment:a.png)\n" * 3_000)
    cell.attachments = {"a.png": {"image/png": image}}
    notebook.cells.insert(1, cell)
    return nbformat.writes(notebook).encode()


def _class(root: Path) -> None:
    samples = [Sample(s, "correct", "ok", True) for s in HONEST]
    samples += [
        Sample(
            DISPLAYS,
            "hostile",
            "",
            False,
            extra="from IPython.display import publish_display_data\n"
            "for _ in range(100_000):\n    publish_display_data({})",
        ),
        Sample(SURROGATE, "hostile", "", False, extra="raise ValueError('bad \\udcff byte')"),
    ]
    build_course(root, samples)
    release = nbformat.read(root / "notebooks" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", 4)
    write_class(root, [Sample(ATTACHMENTS, "hostile", "", False, raw=_attachment_bomb(release))])


def _grade_and_feed_back(root: Path) -> dict:
    """Grade the class at ``root`` (two workers) and make its feedback, in a fresh process: its
    outcomes, the seconds it took, and the largest process of it (in MiB)."""
    started = time.monotonic()
    course = Course.load(root)
    settings = Settings(cell_timeout=60.0)
    outcomes = batch.grade(
        ASSIGNMENT, course, workers=2, settings=settings, secret=DEVELOPMENT_SECRET
    )
    generate_feedback(course, ASSIGNMENT)
    largest = max(
        resource.getrusage(who).ru_maxrss
        for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
    )
    return {
        "outcomes": {o.student: (o.verdict, o.seconds, o.grader_peak_mib) for o in outcomes},
        "seconds": time.monotonic() - started,
        "largest_mib": largest / 1024,
    }


def _in_fresh_process(root: Path) -> dict:
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        return pool.submit(_grade_and_feed_back, root).result()


def test_the_attacks_cost_the_honest_pair_nothing(tmp_path: Path):
    alone_root, mixed_root = tmp_path / "alone", tmp_path / "mixed"
    build_course(alone_root, [Sample(s, "correct", "ok", True) for s in HONEST])
    _class(mixed_root)
    alone = _in_fresh_process(alone_root)
    mixed = _in_fresh_process(mixed_root)
    verdicts = {s: v for s, (v, _, _) in mixed["outcomes"].items()}
    seconds = {s: t for s, (_, t, _) in mixed["outcomes"].items()}
    alone_seconds = {s: t for s, (_, t, _) in alone["outcomes"].items()}
    report = {
        "alone_s": {s: round(t, 1) for s, t in alone_seconds.items()},
        "mixed_s": {s: round(t, 1) for s, t in seconds.items()},
        "verdicts": verdicts,
        "grader_peak_mib": {s: round(p) for s, (_, _, p) in mixed["outcomes"].items()},
        "largest_process_mib": round(mixed["largest_mib"]),
        "batch_and_feedback_s": {
            "alone": round(alone["seconds"], 1),
            "mixed": round(mixed["seconds"], 1),
        },
    }
    print(json.dumps(report))  # what was measured, for the report (-s shows it)
    assert set(verdicts) == {*HONEST, DISPLAYS, ATTACHMENTS, SURROGATE}, report
    assert all(v and v != "grader error" for v in verdicts.values()), report
    for student in HONEST:
        assert verdicts[student] == alone["outcomes"][student][0] == "ok", report
    assert mixed["largest_mib"] < PEAK_BOUND_MIB, report
    assert mixed["seconds"] < 480, report  # bounded: the 280 s wait of the issue, and more
    for student in verdicts:
        page = mixed_root / "grading" / "feedback" / student / ASSIGNMENT / f"{ASSIGNMENT}.html"
        assert page.stat().st_size > 0, student
    bomb = mixed_root / "grading" / "feedback" / ATTACHMENTS / ASSIGNMENT / f"{ASSIGNMENT}.html"
    assert bomb.stat().st_size < 50_000_000
