"""From the runner's report to graded cells: what the feedback will render stays bounded."""

import json
import os

import nbformat
from nbformat.v4 import new_code_cell, new_notebook

from autograder.pipeline.verdicts import (
    MAX_NOTEBOOK_OUTPUT_BYTES,
    apply_verdicts,
    read_result,
    row_verdict,
)


def test_outputs_past_the_notebook_budget_are_dropped_with_a_note():
    cells = [new_code_cell(f"print({i})") for i in range(40)]
    notebook = new_notebook(cells=cells)
    chunk = "x" * (MAX_NOTEBOOK_OUTPUT_BYTES // 10)  # every cell prints a tenth of the budget
    stream = {"output_type": "stream", "name": "stdout", "text": chunk}
    result = {
        "cells": [
            {"index": i, "status": "ok", "execution_count": i + 1, "outputs": [stream]}
            for i in range(len(cells))
        ]
    }
    notes: list[str] = []
    apply_verdicts(notebook, result, {}, notes)
    kept = sum(len(json.dumps(cell.outputs)) for cell in notebook.cells)
    assert kept <= MAX_NOTEBOOK_OUTPUT_BYTES + len(json.dumps([stream]))
    assert notebook.cells[0].outputs[0].text == chunk  # the first outputs are kept whole
    assert "output truncated" in notebook.cells[-1].outputs[0].text
    assert len(notes) == 1 and "output truncated" in notes[0]
    assert row_verdict("ok", None, result, [], notes) == "output limit"
    nbformat.validate(notebook)


def test_a_report_that_is_a_fifo_or_a_link_to_dev_zero_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    link = tmp_path / "zero.json"
    link.symlink_to("/dev/zero")
    for path in (fifo, link):
        report = read_result(path)  # a blocking open or an unbounded read would hang here
        assert report["cells"] == [] and "no readable report" in report["error"]


def test_a_report_with_escape_sequences_reaches_the_notes_escaped_by_the_table():
    from autograder.pipeline.records import Outcome
    from autograder.pipeline.report import format_table

    notes: list[str] = []
    row_verdict("ok", None, {"cells": [], "error": "forged\x1b[2J\nalice  13/13  ok"}, [], notes)
    table = format_table([Outcome("bob", "crashed", notes, None, [], 0.0)], {"q": 1.0})
    assert "\x1b" not in table and "\nalice  13/13" not in table
