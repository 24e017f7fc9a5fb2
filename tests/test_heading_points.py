"""Every exercise heading of every solution notebook states its points, and the figure is the sum
of the graded cells it covers (autograder/authoring/heading_points.py); each way a heading can be
wrong is caught, planted in a copy of a real notebook."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from autograder.authoring.heading_points import heading_problems, statements
from autograder.authoring.lint import solution_notebooks

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = solution_notebooks(ROOT)


def _read(assignment: str) -> nbformat.NotebookNode:
    return nbformat.read(ROOT / "solutions" / assignment / f"{assignment}.ipynb", as_version=4)


def _cell_with(notebook: nbformat.NotebookNode, text: str):
    (cell,) = [cell for cell in notebook.cells if text in cell.source]
    return cell


def test_there_are_seven_solution_notebooks():
    assert len(NOTEBOOKS) == 7


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: path.stem)
def test_every_heading_states_the_points_of_its_cells(path: Path):
    notebook = nbformat.read(path, as_version=4)
    assert heading_problems(path.stem, notebook) == []
    found, orphans = statements(notebook)
    assert orphans == []
    graded = [
        cell.metadata.nbgrader
        for cell in notebook.cells
        if cell.metadata.get("nbgrader", {}).get("grade")
    ]
    covered = [grade_id for statement in found for grade_id, _ in statement.cells]
    assert covered == [meta.grade_id for meta in graded]  # each graded cell counted once
    assert all(statement.points is not None for statement in found)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: path.stem)
def test_every_notebook_has_exercise_headings(path: Path):
    found, _ = statements(nbformat.read(path, as_version=4))
    assert any(statement.line.startswith("### Exercise ") for statement in found)


def test_a_heading_without_points_is_caught():
    notebook = _read("03_transformer_block")
    cell = _cell_with(notebook, "### Exercise 1b · `build_vocab` (2 points)")
    cell.source = cell.source.replace(" (2 points)", "")
    (problem,) = heading_problems("03_transformer_block", notebook)
    assert "'### Exercise 1b · `build_vocab`': states no points" in problem
    assert "['test_build_vocab'] hold 2 points, so write '(2 points)'" in problem


def test_a_heading_that_misses_a_later_test_cell_is_caught():
    """01's causal_mask exercise has a second test cell further down (the old heading said 1)."""
    notebook = _read("01_attention")
    cell = _cell_with(notebook, "### Exercise 3 · `causal_mask` (3 points, two test cells)")
    cell.source = cell.source.replace("(3 points, two test cells)", "(1 point)")
    (problem,) = heading_problems("01_attention", notebook)
    assert (
        "states 1 point, but its graded cells ['test_causal_mask', 'test_causal_weights']"
        in problem
    )
    assert problem.endswith("hold 3 points")


def test_changed_cell_points_are_caught():
    notebook = _read("07_attention_at_scale")
    (cell,) = [
        cell
        for cell in notebook.cells
        if cell.metadata.get("nbgrader", {}).get("grade_id") == "test_chunked_attention_memory"
    ]
    cell.metadata.nbgrader.points = 3
    (problem,) = heading_problems("07_attention_at_scale", notebook)
    assert "states 7 points, but its graded cells" in problem and "hold 8 points" in problem


def test_a_wrong_number_of_test_cells_is_caught():
    notebook = _read("02_multi_head")
    cell = _cell_with(notebook, "(6 points, three test cells)")
    cell.source = cell.source.replace("three test cells", "two test cells")
    (problem,) = heading_problems("02_multi_head", notebook)
    assert "states a number of test cells that is not 3" in problem


def test_a_question_with_the_wrong_points_is_caught():
    notebook = _read("03_transformer_block")
    cell = _cell_with(notebook, "**Question (1 point).**")
    cell.source = cell.source.replace("**Question (1 point).**", "**Question (2 points).**")
    (problem,) = heading_problems("03_transformer_block", notebook)
    assert "states 2 points, but its graded cells ['add_or_concatenate'] hold 1 point" in problem


def test_graded_cells_without_a_heading_of_their_own_are_caught():
    """Without its 'Graded:' heading, 05's held-out cells would count for the exercise above."""
    notebook = _read("05_sentiment")
    cell = _cell_with(notebook, "## 8. Graded:")
    cell.source = cell.source.replace("## 8. Graded: ", "## 8. ")
    (points,) = heading_problems("05_sentiment", notebook)
    assert "'### Exercise 4 · `token_importance`: which words did the model read?" in points
    assert points.endswith(
        "states 2 points, but its graded cells ['test_token_importance', "
        "'test_heldout_accuracy', 'test_heldout_contrast'] hold 8 points"
    )


def test_a_graded_cell_above_every_heading_is_caught():
    notebook = _read("06_char_lm")
    for cell in notebook.cells:
        if cell.cell_type == "markdown":
            cell.source = cell.source.replace("### Exercise 1 · ", "### ")
    problems = heading_problems("06_char_lm", notebook)
    assert problems[0] == (
        "06_char_lm: graded cell 'test_make_blocks' comes before any exercise heading or "
        "question, so no heading shows its points"
    )
