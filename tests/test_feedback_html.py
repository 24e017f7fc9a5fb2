"""Feedback HTML shows what a student wrote and handed in as data: no script of theirs runs in a
reader's browser, and their figures stay.  The feedback shows the outputs a notebook was submitted
with (the grading run keeps none), so the hostile outputs are written into the file."""

from __future__ import annotations

import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_output

from autograder.examples import Sample, build_course
from autograder.pipeline.course.course import tool_env
from autograder.pipeline.feedback.feedback import FIT_FIGURES_CSS

pytestmark = [pytest.mark.slow, pytest.mark.sandbox]

ASSIGNMENT = "01_attention"
MARK = "pwned4711"
# A 1x1 PNG, as a figure's output: a figure the feedback must keep.
PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5E"
    "rkJggg=="
)
HOSTILE_MARKDOWN = (
    f'<script>window.{MARK} = 1</script> <img src="x" onerror="window.{MARK} = 2">'
    f'<a href="javascript:window.{MARK}=3">sqrt(d_k)</a>'
)
# What a cell of IPython.display calls would have shown, handed in as its outputs.
HOSTILE_OUTPUTS = [
    new_output(
        "display_data",
        data={
            "text/html": f'<img src="x" onerror="window.{MARK} = 4">'
            f"<script>window.{MARK} = 5</script>"
        },
    ),
    new_output("display_data", data={"application/javascript": f"window.{MARK} = 6"}),
    new_output("display_data", data={"image/png": PNG, "text/plain": "<Figure>"}),
]


class _Active(HTMLParser):
    """Collects script bodies, event-handler attributes and javascript: links."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []
        self.images = 0
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._in_script = tag == "script"
        for name, value in attrs:
            if name.startswith("on") or (value or "").strip().lower().startswith("javascript:"):
                self.found.append(f"<{tag} {name}={value!r}>")
        if tag == "img" and any(v and v.startswith("data:image/png") for _, v in attrs):
            self.images += 1

    def handle_endtag(self, tag: str) -> None:
        self._in_script = False

    def handle_data(self, data: str) -> None:
        if self._in_script and MARK in data:
            self.found.append(f"<script>{data.strip()[:80]}")


def test_feedback_holds_no_active_script_of_the_student_and_keeps_figures(tmp_path: Path):
    build_course(tmp_path, [Sample("mallory", "hostile", "ok", True)])
    path = tmp_path / "grading" / "submitted" / "mallory" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    notebook = nbformat.read(path, as_version=4)
    answer = next(
        c for c in notebook.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "why_sqrt_dk"
    )
    answer.source = HOSTILE_MARKDOWN
    notebook.cells.insert(2, new_code_cell("display(figures)", outputs=HOSTILE_OUTPUTS))
    nbformat.write(notebook, path)
    done = subprocess.run(
        [sys.executable, "-m", "autograder", "grade", ASSIGNMENT, "--course", str(tmp_path)],
        env=tool_env(OMP_NUM_THREADS="1"),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    html = (
        tmp_path / "grading" / "feedback" / "mallory" / ASSIGNMENT / f"{ASSIGNMENT}.html"
    ).read_text()
    assert MARK in html  # the student's content is there, as text
    parser = _Active()
    parser.feed(html)
    assert parser.found == [], parser.found
    assert parser.images >= 1, "the student's PNG figure was dropped"
    assert FIT_FIGURES_CSS in html  # a figure wider than the page is scaled down to fit
