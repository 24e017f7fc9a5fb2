"""In-process grading runs a notebook's cells in one namespace; a run can stop before a cell and
be carried on from there later (tests/test_mutants.py does, in a fork), as if run at once."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from autograder.suite.submission import load_submission


def _notebook(folder: Path, sources: list[str]) -> Path:
    path = folder / "nb.ipynb"
    cells = [nbformat.v4.new_code_cell(source) for source in sources]
    nbformat.write(nbformat.v4.new_notebook(cells=cells), path)
    return path


def test_a_run_carried_on_from_where_it_stopped_is_the_run_in_one_go(tmp_path: Path):
    path = _notebook(
        tmp_path,
        [
            "import random\nrandom.seed(1)\nx = random.random()",
            "raise ValueError('broken')",
            "y = x * 2",
            "z = y + random.random()",
        ],
    )
    whole = load_submission(path)
    first = load_submission(path, stop=2)
    assert first.next_cell == 2 and "y" not in first.namespace
    assert first.cell_errors == {1: "ValueError: broken"}
    rest = load_submission(path, after=first)
    assert rest.next_cell is None and rest.namespace is first.namespace
    assert [rest.namespace[k] for k in "xyz"] == [whole.namespace[k] for k in "xyz"]
    assert rest.cell_errors == whole.cell_errors


def test_only_a_run_that_stopped_early_can_be_carried_on(tmp_path: Path):
    path = _notebook(tmp_path, ["x = 1"])
    with pytest.raises(ValueError, match="stopped early"):
        load_submission(path, after=load_submission(path))
