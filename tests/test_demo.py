"""The README's second command: `python -m autograder demo` grades the sample class end to end."""

from __future__ import annotations

import html
import re
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.examples import DEMO_CLASS
from autograder.isolation import sandbox
from autograder.pipeline.course import tool_env

pytestmark = pytest.mark.skipif(
    not sandbox.sandbox_available()[0], reason="bubblewrap is required (.ci/run installs it)"
)


def _rows(table: str) -> dict[str, tuple[str, str]]:
    """student -> (total, verdict), read from the printed table."""
    rows = {}
    for line in table.splitlines():
        match = re.match(r"^(\S+)\s+(?:\S+\s+)*?(\d+/\d+)\s+(.+?)\s*$", line)
        if match and match.group(1) != "student":
            rows[match.group(1)] = (match.group(2), match.group(3))
    return rows


def test_demo_grades_the_sample_class_with_the_expected_verdicts(tmp_path: Path):
    course = tmp_path / "course"
    done = subprocess.run(
        [sys.executable, "-m", "autograder", "demo", "--keep", str(course)],
        cwd=tmp_path, env=tool_env(OMP_NUM_THREADS="1"), capture_output=True, text=True,
        timeout=900,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr

    rows = _rows(done.stdout)
    assert set(rows) == {s.student for s in DEMO_CLASS}, done.stdout
    for sample in DEMO_CLASS:
        total, verdict = rows[sample.student]
        got, best = total.split("/")
        assert verdict == sample.expected, (sample.student, done.stdout)
        assert (got == best) == sample.full_marks, (sample.student, total)

    # Feedback for every student, with no hidden check in it.
    feedback = course / "grading" / "feedback"
    pages = sorted(feedback.glob("*/01_attention/01_attention.html"))
    assert {p.parts[-3] for p in pages} == {s.student for s in DEMO_CLASS}
    for page in pages:
        text = html.unescape(re.sub(r"<[^>]+>", "", page.read_text()))
        assert "CheckFailed" in text or sample_passes(page.parts[-3]), page
        assert "_g = torch.Generator().manual_seed(0)" in text, page  # public checks are shown
        assert 'run_hidden_checks("01_attention"' not in text, page


def sample_passes(student: str) -> bool:
    return next(s for s in DEMO_CLASS if s.student == student).full_marks
