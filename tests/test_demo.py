"""The README's second command: `python -m autograder demo` grades the sample class end to end."""

from __future__ import annotations

import csv
import html
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from autograder.examples import DEMO_CLASS
from autograder.pipeline.course.course import tool_env
from autograder.pipeline.feedback.feedback import PLACEHOLDER
from autograder.pipeline.records.grade_record import COLUMNS
from autograder.pipeline.records.report import SIMILARITY
from autograder.pipeline.records.similarity import REFERENCE
from autograder.pipeline.worker.verdicts import shown_verdict

pytestmark = pytest.mark.usefixtures("sandbox_required")


def _rows(table: str) -> dict[str, tuple[str, str]]:
    """student -> (total, verdict), read from the printed table."""
    rows = {}
    for line in table.splitlines():
        match = re.match(r"^(\S+)\s+(?:\S+\s+)*?([\d.]+/[\d.]+)\s+(.+?)\s*$", line)
        if match and match.group(1) != "student":
            rows[match.group(1)] = (match.group(2), match.group(3))
    return rows


# A phrase that the feedback of each student who loses points must show: the sample's mistake
# (the judge's diagnosis, or the visible check's message after it).
MISTAKES = {
    "alan": "scores are not scaled",  # forgot to scale the scores
    "edsger": "lets each position see the future",  # the causal mask keeps the future
    "linus": "not valid JSON",
    "mallory": "scores are not scaled",  # the same unscaled answer, under faked checks
    "trudy": "the kernel died",  # os._exit when given a mask
    "oscar": "attention_numpy",  # its answer cell ran past the time limit, so it never ended
}


def _diagnoses(course: Path, student: str) -> list[str]:
    """The CheckFailed messages the grader recorded in the student's graded cells, in order."""
    path = course / "grading" / "autograded" / student / "01_attention" / "01_attention.ipynb"
    return [
        output["evalue"]
        for cell in nbformat.read(path, 4).cells
        if cell.metadata.get("nbgrader", {}).get("grade") and cell.cell_type == "code"
        for output in cell.outputs
        if output.get("ename") == "CheckFailed"
    ]


def _verdicts(course: Path, student: str) -> list[str]:
    """Every graded test cell's trusted verdict as its graded copy shows it: an error, or the
    text of a cell that kept some of its points."""
    path = course / "grading" / "autograded" / student / "01_attention" / "01_attention.ipynb"
    return [
        shown_verdict(cell)
        for cell in nbformat.read(path, 4).cells
        if cell.metadata.get("nbgrader", {}).get("grade") and cell.cell_type == "code"
    ]


@pytest.mark.slow
@pytest.mark.sandbox
def test_demo_grades_the_sample_class_with_the_expected_verdicts(tmp_path: Path):
    course = tmp_path / "course"
    done = subprocess.run(
        [sys.executable, "-m", "autograder", "demo", "--keep", str(course)],
        cwd=tmp_path,
        env=tool_env(OMP_NUM_THREADS="1"),
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    # The first line names the sandbox; progress follows at once; nbgrader's noise is gone.
    first, second, third = done.stderr.splitlines()[:3]
    assert first.startswith("sandbox: bubblewrap "), first
    assert second.startswith("hidden seeds: the PUBLIC development secret (the demo)"), second
    assert third.startswith("demo course: building it in"), third
    assert "starting 2 workers" in done.stderr or "starting 1 worker" in done.stderr
    assert "SAWarning" not in done.stderr, done.stderr

    rows = _rows(done.stdout)
    assert set(rows) == {s.student for s in DEMO_CLASS}, done.stdout
    # The total is the gradebook's, out of every point; the autograded ones are the questions'.
    autograded = sum(
        float(p) for p in re.findall(r"^Q\d+ = \S+ \(([\d.]+) pt\)$", done.stdout, re.M)
    )
    for sample in DEMO_CLASS:
        total, verdict = rows[sample.student]
        got = float(total.split("/")[0])
        assert verdict == sample.expected, (sample.student, done.stdout)
        assert (got == autograded) == sample.full_marks, (sample.student, total, autograded)

    # Feedback for every student: every hidden check redacted, and exactly the failed cells'
    # diagnoses, which for a student with lost points name the sample's mistake.
    assert set(MISTAKES) == {s.student for s in DEMO_CLASS if not s.full_marks}
    with (course / "grading" / "01_attention_grades.csv").open() as handle:
        csv_rows = {row["student"]: row for row in csv.DictReader(handle)}
    feedback = course / "grading" / "feedback"
    pages = sorted(feedback.glob("*/01_attention/01_attention.html"))
    assert {p.parts[-3] for p in pages} == {s.student for s in DEMO_CLASS}
    for page in pages:
        student = page.parts[-3]
        text = html.unescape(re.sub(r"<[^>]+>", "", page.read_text()))
        row = csv_rows[student]
        graded_cells = [
            k
            for k in row
            if k not in ("student", "verdict", "score", "max_score", *COLUMNS, *SIMILARITY, "notes")
        ]
        failed_cells = [k for k in graded_cells if float(row[k]) == 0]
        shown = re.findall(r"CheckFailed: (.*)", text)
        assert graded_cells and text.count(PLACEHOLDER) == len(graded_cells), page  # all redacted
        assert 'run_hidden_checks("01_attention"' not in text, page
        assert "_g = torch.Generator().manual_seed(0)" in text, page  # public checks are shown
        # What was recorded, all of it: a diagnosis may add a line for the cell's visible check.
        recorded = _diagnoses(course, student)
        assert shown == [diagnosis.splitlines()[0] for diagnosis in recorded], page
        assert all(line in text for d in recorded for line in d.splitlines()), page
        assert len(shown) == len(failed_cells), (student, shown, row)
        if student in MISTAKES:  # in a cell that lost all its points, or part of them
            verdicts = _verdicts(course, student)
            assert any(MISTAKES[student] in v for v in verdicts), (student, verdicts)
            assert MISTAKES[student] in text, page
        else:
            assert "CheckFailed" not in text, (student, shown)

    # Similarity is for the instructor: the report sits beside the CSV in the grading folder,
    # and nothing of it reaches the feedback.  ada handed in the reference answers.
    assert (csv_rows["ada"]["similarity"], csv_rows["ada"]["most_similar_to"]) == ("1.0", REFERENCE)
    assert "Similar answers (for human review, never deducted)" in done.stdout
    report = (course / "grading" / "01_attention_similarity.html").read_text()
    assert "<td>ada</td>" in report and "fingerprints in common" in report
    for path in feedback.rglob("*"):
        assert "similar" not in path.name.lower(), path
        if path.is_file():
            text = path.read_text(errors="replace")
            assert "fingerprints in common" not in text and "Similar answers" not in text, path
