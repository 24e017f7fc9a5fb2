"""`grade` right after `release`: an assignment that was released but never generated in this
course's gradebook is registered from its source notebook, as `nbgrader generate_assignment`
would, and the released notebook is left as it is."""

from __future__ import annotations

import shutil
from pathlib import Path

import nbformat
import pytest

from autograder.pipeline.course.course import Course, GradingError, instructor_side

ROOT = Path(__file__).resolve().parents[1]
ASSIGNMENT = "01_attention"


def _course(tmp_path: Path) -> Course:
    """A course as a fresh clone has it: sources, released notebooks, no gradebook entry."""
    shutil.copy(ROOT / "nbgrader_config.py", tmp_path)
    for folder in ("solutions", "notebooks"):
        shutil.copytree(ROOT / folder / ASSIGNMENT, tmp_path / folder / ASSIGNMENT)
    return Course.load(tmp_path)


@pytest.mark.slow  # seconds: kept out of the fast tier
def test_grading_registers_a_released_assignment_missing_from_the_gradebook(
    tmp_path: Path, capsys: pytest.CaptureFixture
):
    course = _course(tmp_path)
    released = tmp_path / "notebooks" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    before = released.read_bytes()
    release, sources = instructor_side(course, ASSIGNMENT)
    assert "registered it from" in capsys.readouterr().err
    # The gradebook keeps the hidden tests, which the released copy lacks: it came from the source.
    assert any('run_hidden_checks("01_attention"' in text for text in sources.values())
    assert released.read_bytes() == before
    assert release == nbformat.read(released, as_version=4)
    assert instructor_side(course, ASSIGNMENT)[1] == sources  # once is enough


@pytest.mark.slow  # seconds: kept out of the fast tier
def test_a_stale_release_is_refused_with_the_one_command_to_run(tmp_path: Path):
    course = _course(tmp_path)
    released = tmp_path / "notebooks" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    notebook = nbformat.read(released, as_version=4)
    notebook.cells[0].source += "\nAn older wording."
    nbformat.write(notebook, released)
    command = "run `nbgrader generate_assignment 01_attention --force`"
    with pytest.raises(GradingError, match=command):
        instructor_side(course, ASSIGNMENT)
