"""Intake rebuilds a submission in the release's shape, or refuses it with a reason.

Submissions are made from a copy of the released 01_attention notebook, damaged the way a
student (or a student trying their luck) might. No kernel runs: intake only rewrites JSON.
"""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path
from typing import Any

import nbformat
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from nbformat import NotebookNode
from nbformat.v4 import new_code_cell, new_markdown_cell

from autograder.pipeline.intake.intake import (
    MAX_BYTES,
    MAX_CELL_CHARS,
    MAX_CELLS,
    MAX_SOURCE_CHARS,
    Intake,
    take_in,
)

ROOT = Path(__file__).resolve().parents[1]
RELEASE = nbformat.read(ROOT / "notebooks/01_attention/01_attention.ipynb", as_version=4)
SOLUTION = nbformat.read(ROOT / "solutions/01_attention/01_attention.ipynb", as_version=4)
HIDDEN = "### BEGIN HIDDEN TESTS"


def nbgrader(cell: dict[str, Any]) -> dict[str, Any]:
    """A cell's nbgrader metadata, empty for an ordinary cell."""
    return cell.get("metadata", {}).get("nbgrader", {})


def is_test(cell: dict[str, Any]) -> bool:
    """An autograded test cell: graded, not an answer."""
    return bool(nbgrader(cell).get("grade")) and not nbgrader(cell).get("solution")


def is_fixed(cell: dict[str, Any]) -> bool:
    """A test or locked cell: the instructor's source is the one that runs."""
    meta = nbgrader(cell)
    return not meta.get("solution") and bool(meta.get("grade") or meta.get("locked"))


# What the instructor's gradebook holds: test and locked cells, hidden tests included.
SOURCES = {nbgrader(cell)["grade_id"]: cell.source for cell in SOLUTION.cells if is_fixed(cell)}
TEST_IDS = [nbgrader(cell)["grade_id"] for cell in RELEASE.cells if is_test(cell)]


def student() -> NotebookNode:
    """A fresh copy of the released notebook, as a student downloads it."""
    return copy.deepcopy(RELEASE)


def take(notebook: Any, sources: dict[str, str] = SOURCES) -> Intake:
    """Run intake on a notebook-like object, written out as a student's file would be."""
    return take_in(json.dumps(notebook).encode(), RELEASE, sources)


def position(notebook: Any, grade_id: str) -> int:
    """The index of the cell with this grade_id."""
    return next(
        i for i, cell in enumerate(notebook["cells"]) if nbgrader(cell).get("grade_id") == grade_id
    )


def cell_of(notebook: Any, grade_id: str) -> dict[str, Any]:
    """The cell with this grade_id."""
    return notebook["cells"][position(notebook, grade_id)]


def ids(notebook: Any) -> list[str]:
    """The cell ids, in order."""
    return [cell["id"] for cell in notebook["cells"]]


def assert_clean(result: Intake) -> None:
    """A valid notebook: unique ids, no execution counts, each test cell once with the instructor
    source."""
    notebook = result.notebook
    assert notebook is not None
    nbformat.validate(copy.deepcopy(notebook))
    assert len(set(ids(notebook))) == len(notebook.cells)
    for cell in notebook.cells:
        assert cell.get("execution_count") is None
    grade_ids = [nbgrader(cell).get("grade_id") for cell in notebook.cells if is_test(cell)]
    assert grade_ids == TEST_IDS
    for grade_id in TEST_IDS:
        assert cell_of(notebook, grade_id).source == SOURCES[grade_id]
    assert notebook.metadata == RELEASE.metadata


def test_unchanged_release_is_ok_and_runs_the_instructor_test_cells():
    result = take(student())
    assert (result.verdict, result.problems) == ("ok", [])
    assert_clean(result)
    assert ids(result.notebook) == ids(RELEASE)
    for grade_id, source in SOURCES.items():
        assert cell_of(result.notebook, grade_id).source == source
    assert all(HIDDEN in cell_of(result.notebook, grade_id).source for grade_id in TEST_IDS)
    assert cell_of(result.notebook, "attention").source == cell_of(RELEASE, "attention").source


@pytest.mark.parametrize("as_str", [False, True])
def test_a_path_is_read(tmp_path, as_str):
    path = tmp_path / "01_attention.ipynb"
    nbformat.write(student(), path)
    result = take_in(str(path) if as_str else path, RELEASE, SOURCES)
    assert result.verdict == "ok"


def with_cell(index: int, **fields: Any) -> dict[str, Any]:
    """The release as JSON, with some fields of one cell replaced."""
    notebook = json.loads(json.dumps(RELEASE))
    notebook["cells"][index].update(fields)
    return notebook


BAD_FILES = {
    "invalid JSON": (b'{"cells": [', "not valid JSON"),
    "empty file": (b"", "empty"),
    "blank file": (b"  \n", "empty"),
    "not UTF-8": (b'{"a": "\xff"}', "not UTF-8"),
    "JSON list": (b"[1, 2]", "not a Jupyter notebook"),
    "JSON object": (b'{"cells": []}', "not a Jupyter notebook"),
    # writes() converts in place, so it gets a copy.
    "nbformat 3": (nbformat.writes(student(), version=3).encode(), "version 3"),
    "nbformat 5": (json.dumps({"nbformat": 5, "cells": []}).encode(), "version 5"),
    "no cells": (json.dumps({"nbformat": 4, "metadata": {}}).encode(), "no cells"),
    "deep nesting": (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
    "cell not a dict": (json.dumps(with_cell(0) | {"cells": [3]}).encode(), "cell 1 "),
    "source a number": (json.dumps(with_cell(2, source=7)).encode(), "cell 3 has a source"),
    "source list of numbers": (json.dumps(with_cell(2, source=[1])).encode(), "cell 3 has"),
    "unknown type": (json.dumps(with_cell(4, cell_type="widget")).encode(), "'widget'"),
    "metadata a list": (json.dumps(with_cell(5, metadata=[])).encode(), "cell 6 has metadata"),
}


@pytest.mark.parametrize("name", BAD_FILES)
def test_a_file_that_is_not_a_notebook_is_refused_with_a_reason(name):
    data, reason = BAD_FILES[name]
    result = take_in(data, RELEASE, SOURCES)
    assert (result.notebook, result.verdict) == (None, "invalid notebook")
    assert len(result.problems) == 1 and reason in result.problems[0]


def test_a_missing_file_is_refused(tmp_path):
    result = take_in(tmp_path / "nothing.ipynb", RELEASE, SOURCES)
    assert result.verdict == "invalid notebook" and "could not be read" in result.problems[0]


def test_a_file_over_the_size_limit_is_refused_before_parsing(tmp_path):
    data = json.dumps(student()).encode()
    path = tmp_path / "big.ipynb"
    path.write_bytes(data)
    for submitted in (data, path):
        result = take_in(submitted, RELEASE, SOURCES, max_bytes=len(data) - 1)
        assert result.verdict == "invalid notebook" and "limit" in result.problems[0]
    assert take_in(data, RELEASE, SOURCES, max_bytes=len(data)).verdict == "ok"
    result = take_in(b" " * (MAX_BYTES + 1), RELEASE, SOURCES)
    assert result.problems == ["the submitted file is larger than the limit of 50 MB"]


def test_deleted_test_cell_is_restored_at_its_release_position():
    notebook = student()
    del notebook.cells[position(notebook, "test_attention_parity")]
    result = take(notebook)
    assert result.verdict == "restored"
    assert result.problems == ["restored deleted cell test_attention_parity"]
    assert_clean(result)
    assert ids(result.notebook) == ids(RELEASE)


def test_deleted_test_cell_goes_back_after_the_students_scratch_cells_for_its_answer():
    notebook = student()
    answer = position(notebook, "attention_numpy")
    del notebook.cells[answer + 1]  # test_attention_numpy
    notebook.cells.insert(answer + 1, nbformat.v4.new_code_cell("attention_numpy(Q, K, V)"))
    result = take(notebook)
    assert result.problems == ["restored deleted cell test_attention_numpy"]
    cells = result.notebook.cells
    restored = position(result.notebook, "test_attention_numpy")
    assert restored == answer + 2 and cells[answer + 1].source == "attention_numpy(Q, K, V)"
    assert cells[restored + 1].id == RELEASE.cells[answer + 2].id  # the next section's markdown


def test_deleted_locked_first_cell_is_restored_after_the_title():
    notebook = student()
    del notebook.cells[1]
    result = take(notebook)
    assert result.problems == ["restored deleted cell cell-01_attention-001"]
    assert ids(result.notebook) == ids(RELEASE)
    assert result.notebook.cells[1].source == SOURCES["cell-01_attention-001"]


def test_deleted_answer_cell_is_restored_with_the_stub():
    notebook = student()
    del notebook.cells[position(notebook, "attention")]
    result = take(notebook)
    assert result.verdict == "restored"
    assert len(result.problems) == 1 and "restored deleted cell attention" in result.problems[0]
    assert_clean(result)
    assert ids(result.notebook) == ids(RELEASE)
    restored = cell_of(result.notebook, "attention")
    assert restored.source == cell_of(RELEASE, "attention").source
    assert "raise NotImplementedError()" in restored.source
    assert restored.metadata == cell_of(RELEASE, "attention").metadata


def test_renamed_grade_cell_becomes_ordinary_and_the_original_is_restored():
    notebook = student()
    renamed = cell_of(notebook, "test_causal_mask")
    renamed.metadata.nbgrader.grade_id = "test_causal_mask_mine"
    renamed.source = "pass  # my own test"
    result = take(notebook)
    assert_clean(result)
    assert len(result.problems) == 2
    assert "test_causal_mask_mine" in result.problems[0] and "ordinary" in result.problems[0]
    assert result.problems[1] == "restored deleted cell test_causal_mask"
    restored = position(result.notebook, "test_causal_mask")
    kept = result.notebook.cells[restored - 1]
    assert kept.source == "pass  # my own test" and "nbgrader" not in kept.metadata
    assert kept.id != renamed.id == result.notebook.cells[restored].id


@pytest.mark.parametrize("same_id", [False, True])
def test_duplicated_grade_cell_keeps_the_first_and_demotes_the_copy(same_id):
    notebook = student()
    original = position(notebook, "test_attention_parity")
    pasted = copy.deepcopy(notebook.cells[original])
    pasted.source = "assert True  # a lighter copy"
    pasted.id = pasted.id if same_id else "pasted-copy"
    notebook.cells.insert(original + 1, pasted)
    result = take(notebook)
    assert_clean(result)
    assert (
        len(result.problems) == 1
        and "test_attention_parity appears more than once" in (result.problems[0])
    )
    copy_cell = result.notebook.cells[original + 1]
    assert copy_cell.source == "assert True  # a lighter copy"
    assert "nbgrader" not in copy_cell.metadata
    assert copy_cell.id not in ids(RELEASE)


def test_duplicated_answer_cell_grades_the_first_copy():
    notebook = student()
    original = position(notebook, "causal_mask")
    notebook.cells[original].source = "def causal_mask(n):\n    return 'first'"
    pasted = copy.deepcopy(notebook.cells[original])
    pasted.source = "def causal_mask(n):\n    return 'second'"
    pasted.id = "pasted-answer"
    notebook.cells.insert(original + 1, pasted)
    result = take(notebook)
    assert result.verdict == "restored"
    assert cell_of(result.notebook, "causal_mask").source.endswith("'first'")
    assert "nbgrader" not in result.notebook.cells[original + 1].metadata


def test_duplicated_cell_id_gets_a_fresh_id_and_keeps_its_content():
    notebook = student()
    scratch = nbformat.v4.new_code_cell("print(lifespan_years)")
    scratch.id = notebook.cells[3].id
    notebook.cells.insert(4, scratch)
    result = take(notebook)
    assert_clean(result)
    assert result.problems == [
        f"cell id {scratch.id} appears more than once; later copies were given new ids"
    ]
    cells = result.notebook.cells
    assert cells[3].id == RELEASE.cells[3].id and cells[3].source == RELEASE.cells[3].source
    assert cells[4].source == "print(lifespan_years)" and cells[4].id != scratch.id


def test_answer_cell_turned_to_markdown_is_code_again_with_the_students_text():
    notebook = student()
    index = position(notebook, "attention")
    answer = "def attention(q, k, v, mask=None, scale=True):\n    return q, k"
    notebook.cells[index] = nbformat.v4.new_markdown_cell(
        answer, id=notebook.cells[index].id, metadata=notebook.cells[index].metadata
    )
    result = take(notebook)
    assert_clean(result)
    assert result.problems == [
        "cell attention was changed from a code cell to a markdown cell; it is a code cell again"
    ]
    restored = result.notebook.cells[index]
    assert (restored.cell_type, restored.source) == ("code", answer)


def test_markdown_answer_keeps_the_students_text_and_valid_attachments():
    notebook = student()
    answer = cell_of(notebook, "why_sqrt_dk")
    answer.source = "Because the variance grows with d_k. ![plot](attachment:plot.png)"
    answer.attachments = {"plot.png": {"image/png": "iVBORw0KGgo="}}
    result = take(notebook)
    assert result.verdict == "ok"
    kept = cell_of(result.notebook, "why_sqrt_dk")
    assert kept.source == answer.source and kept.attachments == answer.attachments


def test_an_attachment_referenced_thousands_of_times_is_left_out_of_the_page():
    """100 kB referenced 3,000 times would inline 300 MB into the feedback page."""
    notebook = student()
    answer = cell_of(notebook, "why_sqrt_dk")
    answer.source = "Because the variance grows. " + "![p](attachment:p.png)" * 3000
    answer.attachments = {"p.png": {"image/png": "A" * 100_000}}
    scratch = new_markdown_cell(
        "![q](attachment:q.png) once", attachments={"q.png": {"image/png": "iVBORw0KGgo="}}
    )
    notebook.cells.append(scratch)
    result = take(notebook)
    assert result.verdict == "restored"
    assert any("would take 300.1 MB on the feedback page" in p for p in result.problems), (
        result.problems
    )
    assert "attachments" not in cell_of(result.notebook, "why_sqrt_dk")
    assert cell_of(result.notebook, "why_sqrt_dk").source == answer.source  # the text is kept
    assert result.notebook.cells[-1].attachments == scratch.attachments  # within the budget


def test_edited_locked_and_test_cells_are_restored():
    notebook = student()
    cell_of(notebook, "cell-01_attention-001").source += "\nimport os"
    cell_of(notebook, "test_attention_parity").source = "assert True"
    result = take(notebook)
    assert_clean(result)
    assert result.problems == [
        "cell cell-01_attention-001 was edited; the original was restored",
        "cell test_attention_parity was edited; the original was restored",
    ]
    setup = cell_of(result.notebook, "cell-01_attention-001")
    assert setup.source == SOURCES["cell-01_attention-001"]


def test_changed_grading_settings_are_reset_from_the_release():
    notebook = student()
    cell_of(notebook, "test_attention_numpy").metadata.nbgrader.points = 100
    turned = cell_of(notebook, "test_causal_weights")
    turned.metadata.nbgrader.solution = True
    turned.source = "def attention(*args):\n    return 'anything'"
    # nbclient skips cells tagged skip-execution: a skipped test cell raises nothing and passes.
    cell_of(notebook, "test_causal_mask").metadata["tags"] = ["skip-execution"]
    result = take(notebook)
    assert_clean(result)
    assert "(points)" in result.problems[0] and "test_attention_numpy" in result.problems[0]
    assert "(solution)" in result.problems[2] and "test_causal_weights" in result.problems[2]
    for grade_id in ("test_attention_numpy", "test_causal_weights", "test_causal_mask"):
        assert cell_of(result.notebook, grade_id).metadata == cell_of(RELEASE, grade_id).metadata


@pytest.mark.parametrize("to_the_end", [False, True])
def test_moved_graded_cell_goes_back_in_release_order(to_the_end):
    notebook = student()
    test_cell = notebook.cells.pop(position(notebook, "test_attention_numpy"))
    where = len(notebook.cells) if to_the_end else position(notebook, "attention_numpy")
    notebook.cells.insert(where, test_cell)
    result = take(notebook)
    assert_clean(result)
    assert ids(result.notebook) == ids(RELEASE)
    assert len(result.problems) == 1 and "was moved" in result.problems[0]


def test_scratch_cells_stay_in_place_with_the_outputs_they_were_submitted_with():
    notebook = student()
    answer = position(notebook, "attention")
    scratch = [
        (answer + 1, nbformat.v4.new_code_cell("attention(q, k, v)", execution_count=3)),
        (0, nbformat.v4.new_markdown_cell("My notes", metadata={"tags": ["mine"]})),
        (len(notebook.cells) + 1, nbformat.v4.new_raw_cell("the end")),
    ]
    scratch[0][1].outputs = [nbformat.v4.new_output("stream", text="tensor(...)")]
    notebook.cells[answer].outputs = [nbformat.v4.new_output("stream", text="stale")]
    for index, cell in scratch:
        notebook.cells.insert(index, cell)
    result = take(notebook)
    assert (result.verdict, result.problems) == ("ok", [])
    assert_clean(result)
    assert ids(result.notebook) == ids(notebook)
    assert [cell.source for cell in result.notebook.cells] == [
        SOURCES.get(nbgrader(cell).get("grade_id"), cell.source) for cell in notebook.cells
    ]
    assert result.notebook.cells[0].metadata == {"tags": ["mine"]}
    # The graded copy shows what was submitted (pipeline/worker/verdicts.py checks it): the grading
    # run keeps no output of its own.
    kept = {cell.source: cell.get("outputs") for cell in result.notebook.cells}
    assert kept["attention(q, k, v)"][0]["text"] == "tensor(...)"
    assert kept[cell_of(result.notebook, "attention").source][0]["text"] == "stale"


def hostile_submission() -> NotebookNode:
    """Every trick at once: copies, renames, type changes and deletions of graded cells."""
    notebook = student()
    pasted = copy.deepcopy(cell_of(notebook, "test_attention_scaling"))
    pasted.id = "pasted"
    notebook.cells.append(pasted)
    cell_of(notebook, "test_causal_mask").metadata.nbgrader.grade_id = "renamed"
    cell_of(notebook, "test_attention_parity").cell_type = "markdown"
    cell_of(notebook, "test_causal_weights").metadata.nbgrader.solution = True
    for grade_id in ("test_attention_numpy", "attention", "why_neg_inf", "causal_mask"):
        del notebook.cells[position(notebook, grade_id)]
    return notebook


def test_hidden_tests_appear_only_in_the_release_test_cells():
    release_before = copy.deepcopy(RELEASE)
    result = take(hostile_submission())
    assert RELEASE == release_before  # intake copies from the release, never into it
    assert_clean(result)
    hidden = [cell for cell in result.notebook.cells if HIDDEN in cell.source]
    assert [nbgrader(cell)["grade_id"] for cell in hidden] == TEST_IDS
    assert all(is_test(cell) and cell.cell_type == "code" for cell in hidden)


def solution_lines() -> set[str]:
    """Lines of the solution notebook's answers that the release does not show."""
    released = "\n".join(cell.source for cell in RELEASE.cells)
    lines = {
        line.strip()
        for cell in SOLUTION.cells
        if nbgrader(cell).get("solution")
        for line in cell.source.splitlines()
    }
    return {line for line in lines if len(line) > 12 and line not in released}


def test_no_solution_source_is_ever_copied_into_the_result():
    every_graded_source = {
        nbgrader(cell)["grade_id"]: cell.source for cell in SOLUTION.cells if nbgrader(cell)
    }
    secrets = solution_lines()
    assert len(secrets) > 20
    for notebook in (student(), hostile_submission()):
        result = take(notebook, sources=every_graded_source)
        text = "\n".join(cell.source for cell in result.notebook.cells)
        assert "BEGIN SOLUTION" not in text
        assert not [line for line in secrets if line in text]


def test_a_missing_instructor_source_is_an_error_of_the_grader_not_the_student():
    sources = dict(SOURCES)
    del sources["test_causal_mask"]
    with pytest.raises(ValueError, match="test_causal_mask"):
        take(student(), sources)


def damaged(target: str, index: int, value: Any) -> dict[str, Any]:
    """The release as JSON with one value replaced, at the notebook, cell or nbgrader level."""
    notebook = json.loads(json.dumps(RELEASE))
    cell = notebook["cells"][index]
    level, _, name = target.partition(":")
    if level == "notebook":
        notebook[name] = value
    elif level == "cell" and name:
        cell[name] = value
    elif level == "cell":
        notebook["cells"][index] = value
    else:
        cell["metadata"].setdefault("nbgrader", {})[name] = value
    return notebook


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=6),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=6), children, max_size=3)
    ),
    max_leaves=6,
)
TARGETS = [
    "notebook:nbformat",
    "notebook:cells",
    "notebook:metadata",
    "cell",
    "cell:cell_type",
    "cell:source",
    "cell:id",
    "cell:metadata",
    "cell:attachments",
    "cell:outputs",
    "nbgrader:grade_id",
    "nbgrader:points",
    "nbgrader:solution",
    "nbgrader:grade",
]


@pytest.mark.slow  # seconds: kept out of the fast tier, which must fit 30 s
@settings(max_examples=150, deadline=None)
@given(
    target=st.sampled_from(TARGETS),
    index=st.integers(0, len(RELEASE.cells) - 1),
    value=JSON_VALUES | st.sampled_from(["test_causal_mask", "attention", "01_attention-003"]),
)
def test_any_damage_gives_a_verdict_and_never_an_exception(target, index, value):
    result = take(damaged(target, index, value))
    if result.notebook is None:
        assert result.verdict == "invalid notebook" and len(result.problems) == 1
    else:
        assert result.verdict == ("restored" if result.problems else "ok")
        assert_clean(result)


# ---------------------------------------------------------------------------------------------
# Files and sizes the grader must not trust


def test_a_symlinked_submission_is_refused_not_followed(tmp_path: Path):
    # A link to the solution would score full marks if it were followed.
    target = ROOT / "solutions/01_attention/01_attention.ipynb"
    link = tmp_path / "01_attention.ipynb"
    link.symlink_to(target)
    taken = take_in(link, RELEASE, SOURCES)
    assert taken.notebook is None and taken.verdict == "invalid notebook"
    assert "symbolic link" in taken.problems[0]


def test_a_fifo_submission_is_refused_without_blocking(tmp_path: Path):
    fifo = tmp_path / "01_attention.ipynb"
    os.mkfifo(fifo)
    taken = take_in(fifo, RELEASE, SOURCES)  # a blocking open would hang here
    assert taken.notebook is None and "not a regular file" in taken.problems[0], taken.problems


@pytest.mark.slow  # half a second or more: out of the fast tier (tests/tiers.py)
@pytest.mark.parametrize(
    ("change", "phrase"),
    [
        (lambda nb: nb.cells.extend(new_markdown_cell("") for _ in range(MAX_CELLS)), "cells"),
        (lambda nb: nb.cells.append(new_code_cell("x = 1\n" * MAX_CELL_CHARS)), "characters"),
        (
            lambda nb: nb.cells.extend(
                new_code_cell("#" * (MAX_CELL_CHARS - 1))
                for _ in range(MAX_SOURCE_CHARS // MAX_CELL_CHARS + 1)
            ),
            "characters of cell text",
        ),
    ],
    ids=["too many cells", "one huge cell", "too much text in all"],
)
def test_a_notebook_past_the_size_caps_gets_a_verdict_saying_which(change, phrase):
    notebook = student()
    change(notebook)
    taken = take_in(nbformat.writes(notebook).encode(), RELEASE, SOURCES)
    assert taken.notebook is None and taken.verdict == "invalid notebook"
    assert phrase in taken.problems[0], taken.problems
