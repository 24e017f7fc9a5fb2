"""The judged notebook: the release's cells, the submitted answers in their places, nothing else."""

from __future__ import annotations

from pathlib import Path

import nbformat

from autograder.examples import solution_answers
from autograder.pipeline.intake import intake
from autograder.pipeline.worker import judged_notebook
from tests.test_grading_corpus import SETUP, _handed_in

ROOT = Path(__file__).resolve().parents[1]
RELEASE = nbformat.read(ROOT / "notebooks" / "01_attention" / "01_attention.ipynb", 4)
SOURCE = nbformat.read(ROOT / "solutions" / "01_attention" / "01_attention.ipynb", 4)
# The instructor's test and locked cells, as the gradebook holds them.
FIXED = {
    cell.metadata.nbgrader.grade_id: cell.source
    for cell in SOURCE.cells
    if cell.metadata.get("nbgrader", {}).get("grade_id")
    and not cell.metadata.nbgrader.get("solution")
}


def _taken(submitted: bytes) -> nbformat.NotebookNode:
    taken = intake.take_in(submitted, RELEASE, FIXED)
    assert taken.notebook is not None, taken.problems
    return taken.notebook


def test_only_the_releases_cells_and_the_answers_run_with_test_cells_split():
    answers = solution_answers()
    edited = {"attention": answers["attention"]}
    submitted = nbformat.reads(
        _handed_in(edited, {"attention": "attention = None  # a cell of my own"}), 4
    )
    for cell in submitted.cells:  # an edit to a plain cell of the release is not what runs
        if cell.cell_type == "code" and "lifespan_years = " in cell.source:
            cell.source = "lifespan_years = 'mine'"
    program = judged_notebook.build(_taken(nbformat.writes(submitted).encode()), RELEASE)
    sources = [c.source for c in program.notebook.cells]
    release_code = [c for c in RELEASE.cells if c.cell_type == "code"]
    assert len(sources) == len(release_code)
    assert "attention = None  # a cell of my own" not in sources
    assert answers["attention"] in sources
    assert (
        any("lifespan_years = {" in s for s in sources) and "lifespan_years = 'mine'" not in sources
    )
    tests = [c for c in program.notebook.cells if c.metadata.get("nbgrader", {}).get("grade")]
    assert tests and all("run_hidden_checks" not in c.source for c in tests)
    assert all(
        c.metadata["autograder"]["checkpoint"] == ["01_attention", c.metadata.nbgrader.grade_id]
        for c in tests
    )
    # Each cell that ran has its place in the graded copy; the student's own cell has none.
    assert len(set(program.in_copy.values())) == len(sources)


def test_an_answer_that_uses_a_helper_of_a_cell_the_student_added_is_told_so():
    helper = "def scale_of(q):\n    return q.shape[-1] ** 0.5\n"
    answer = solution_answers()["attention"].replace("math.sqrt(q.shape[-1])", "scale_of(q)")
    assert "scale_of(q)" in answer
    taken = _taken(_handed_in({"attention": answer}, {SETUP: helper}))
    program = judged_notebook.build(taken, RELEASE)
    found = judged_notebook.left_behind(taken, program)
    assert list(found.values()) == [["scale_of"]]
    (index,) = found
    assert taken.cells[index].metadata.nbgrader.grade_id == "attention"
    # An argument or a local of the same name is no such use.
    own = answer.replace("def attention(", "def scale_of(q):\n    return 2.0\n\n\ndef attention(")
    taken = _taken(_handed_in({"attention": own}, {SETUP: helper}))
    assert judged_notebook.left_behind(taken, judged_notebook.build(taken, RELEASE)) == {}
