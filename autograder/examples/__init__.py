"""A sample class for ``python -m autograder demo``: correct, mistaken, broken and hostile work.

Submissions are built from the released 01_attention notebook with the instructor's answers
filled in, then changed the way each sample student changed them.  The same builder makes the
bad-input corpus in tests/test_grading_corpus.py.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[2]
ASSIGNMENT = "01_attention"

_SOLUTION = re.compile(r"[ \t]*### (BEGIN|END) SOLUTION[ \t]*\n?")


@dataclass(frozen=True)
class Sample:
    """One sample student's submission and the verdict the grader should give it."""

    student: str
    kind: str  # "correct", "mistake", "broken" or "hostile"
    expected: str  # the row verdict
    full_marks: bool  # every autograded cell passes
    answers: Mapping[str, str] = field(default_factory=dict)  # grade_id -> replaced answer
    extra: str = ""  # a code cell of the student's own, run before every graded cell
    drop: Sequence[str] = ()  # grade_ids of cells the student deleted
    raw: bytes | None = None  # the submitted file's bytes, as is


# Answers with the mistakes students make most often.
UNSCALED = """def attention(q, k, v, mask=None, scale=True):
    scores = q @ k.transpose(-2, -1)  # forgot to divide by sqrt(d_k)
    if mask is not None:
        scores = scores.masked_fill(~mask.bool(), float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights
"""
UPPER_MASK = """def causal_mask(n):
    return torch.ones(n, n, dtype=torch.bool).triu()  # the future, not the past
"""
CRASH_ON_MASK = """def attention(q, k, v, mask=None, scale=True):
    if mask is not None:
        import os
        os._exit(1)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights
"""
# Hostile cells of the student's own.
FAKE_CHECKS = """import sys, types, numpy, torch
numpy.allclose = torch.allclose = lambda *args, **kwargs: True
sys.modules["autograder"] = types.SimpleNamespace(run_hidden_checks=lambda *args: None)
"""
STUBBORN_LOOP = """while True:
    try:
        pass
    except KeyboardInterrupt:
        pass
"""
SNOOP = """import glob, os
found = glob.glob("/work/**/solutions/**/*.ipynb", recursive=True)
found += glob.glob("../../solutions/*/*.ipynb") + glob.glob("/tmp/*/grading/gradebook.db")
print("found:", found)
"""

DEMO_CLASS: tuple[Sample, ...] = (
    Sample("ada", "correct", "ok", True),
    Sample("grace", "correct", "ok", True, extra='import sys\nprint("a warning", file=sys.stderr)'),
    Sample("alan", "mistake", "ok", False, answers={"attention": UNSCALED}),
    Sample("edsger", "mistake", "ok", False, answers={"causal_mask": UPPER_MASK}),
    Sample("linus", "broken", "invalid notebook", False, raw=b'{"cells": [ this is not JSON'),
    Sample("margaret", "broken", "restored", True, drop=("test_causal_mask",)),
    Sample(
        "mallory",
        "hostile",
        "tamper suspected",
        False,
        answers={"attention": UNSCALED},
        extra=FAKE_CHECKS,
    ),  # fmt: skip
    Sample("trudy", "hostile", "crashed", False, answers={"attention": CRASH_ON_MASK}),
    Sample("oscar", "hostile", "timeout", True, extra=STUBBORN_LOOP),
    Sample("eve", "hostile", "ok", True, extra=SNOOP),
)


def solution_answers(assignment: str = ASSIGNMENT) -> dict[str, str]:
    """grade_id -> the instructor's answer of every answer cell, markers removed."""
    notebook = nbformat.read(ROOT / "solutions" / assignment / f"{assignment}.ipynb", 4)
    answers = {}
    for cell in notebook.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("solution") and not meta.get("grade") and cell.cell_type == "code":
            answers[meta["grade_id"]] = _SOLUTION.sub("", cell.source)
    return answers


def build_submission(
    sample: Sample, release: nbformat.NotebookNode, answers: Mapping[str, str]
) -> bytes:
    """The file ``sample`` hands in, given the released notebook and the correct answers."""
    if sample.raw is not None:
        return sample.raw
    notebook = nbformat.from_dict(json.loads(nbformat.writes(release)))
    kept, setup_done = [], False
    for cell in notebook.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in sample.drop:
            continue
        if grade_id in answers:
            cell.source = sample.answers.get(grade_id, answers[grade_id])
        kept.append(cell)
        if cell.cell_type == "code" and not setup_done:  # the student's cell goes after setup
            setup_done = True
            if sample.extra:
                kept.append(nbformat.v4.new_code_cell(sample.extra))
    notebook.cells = kept
    return nbformat.writes(notebook).encode()


def write_class(course_root: Path, samples: Sequence[Sample], assignment: str = ASSIGNMENT) -> None:
    """Put every sample's submission where nbgrader collects them."""
    release = nbformat.read(course_root / "notebooks" / assignment / f"{assignment}.ipynb", 4)
    answers = solution_answers(assignment)
    for sample in samples:
        folder = course_root / "grading" / "submitted" / sample.student / assignment
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{assignment}.ipynb").write_bytes(build_submission(sample, release, answers))
        (folder / "timestamp.txt").write_text("2026-11-20 12:00:00.000000 UTC\n")


def build_course(root: Path, samples: Sequence[Sample], assignment: str = ASSIGNMENT) -> None:
    """A fresh nbgrader course at ``root``: the assignment generated, the samples submitted."""
    from autograder.pipeline.course import tool_env

    (root / "grading").mkdir(parents=True)
    # The course's own configuration: it places everything relative to its own folder.
    shutil.copy(ROOT / "nbgrader_config.py", root / "nbgrader_config.py")
    shutil.copytree(ROOT / "solutions" / assignment, root / "solutions" / assignment)
    subprocess.run(
        [sys.executable, "-m", "nbgrader", "generate_assignment", assignment, "--force",
         "--log-level", "ERROR"],
        cwd=root, env=tool_env(), check=True, stdout=subprocess.DEVNULL,
    )  # fmt: skip
    write_class(root, samples, assignment)


def build_demo_course(root: Path):  # noqa: ANN201 - returns (Course, assignment)
    """The demo's course, ready to grade."""
    from autograder.pipeline.course import Course

    build_course(root, DEMO_CLASS)
    return Course.load(root), ASSIGNMENT
