"""From the runner's report to graded cells: what the feedback will render stays bounded."""

import json

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from autograder.pipeline.worker.verdicts import (
    MAX_NOTEBOOK_OUTPUT_BYTES,
    apply_verdicts,
    parse_report,
    row_verdict,
)


@pytest.mark.slow  # half a second or more in the fast tier (tests/tiers.py)
def test_outputs_past_the_notebook_budget_are_dropped_with_a_note():
    chunk = "x" * (MAX_NOTEBOOK_OUTPUT_BYTES // 10)  # every cell holds a tenth of the budget
    stream = {"output_type": "stream", "name": "stdout", "text": chunk}
    cells = [new_code_cell(f"print({i})", outputs=[stream]) for i in range(40)]
    notebook = new_notebook(cells=cells)
    result = {
        "cells": [{"index": i, "status": "ok", "execution_count": i + 1} for i in range(len(cells))]
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


def test_a_report_keeps_the_cells_told_before_garbage_or_a_cut():
    cell = {"index": 0, "status": "ok", "outputs": [], "execution_count": 1}
    told = json.dumps({"cell": cell}).encode() + b"\n"
    whole = parse_report(told + b'{"restarts": 1}\n{"finished": true}\n')
    assert whole == {"cells": [cell], "restarts": 1, "finished": True}
    cut = parse_report(told + b'{"cell": {"index": 1, "sta')  # a runner killed mid-line
    assert cut == {"cells": [cell], "restarts": 0, "finished": False}
    for garbage in (b"\x00\xff\n", b"[1, 2]\n", b'{"finished": false}\n', b"[" * 10**5 + b"\n"):
        report = parse_report(told + garbage + told)
        assert report["cells"] == [cell] and "malformed at line 2" in report["error"]
    after_the_end = parse_report(told + b'{"finished": true}\n' + told)
    assert after_the_end["cells"] == [cell] and "malformed at line 3" in after_the_end["error"]
    assert parse_report(b"")["error"] == "the runner sent no report"
    flooded = parse_report(told, truncated=True)
    assert flooded["cells"] == [cell] and "were not graded" in flooded["error"]


def test_a_report_with_escape_sequences_reaches_the_notes_escaped_by_the_table():
    from autograder.pipeline.engines.jobs_and_outcomes import Outcome
    from autograder.pipeline.records.report import format_table

    notes: list[str] = []
    row_verdict("ok", None, {"cells": [], "error": "forged\x1b[2J\nalice  13/13  ok"}, [], notes)
    table = format_table([Outcome("bob", "crashed", notes, None, [], 0.0)], {"q": 1.0})
    assert "\x1b" not in table and "\nalice  13/13" not in table


@pytest.mark.slow  # seconds: kept out of the fast tier, which must fit 30 s
def test_a_flood_of_empty_outputs_is_read_in_bounded_time_and_said():
    import time

    from autograder.pipeline.worker.verdicts import MAX_NOTEBOOK_OUTPUTS

    empty = {"output_type": "display_data", "data": {}, "metadata": {}}
    stream = {"output_type": "stream", "name": "stdout", "text": "1\n"}
    flood = new_code_cell("flood()")
    flood["outputs"] = [empty] * 100_000  # as submitted: unchecked until the verdicts
    notebook = new_notebook(cells=[flood, new_code_cell("print(1)", outputs=[stream])])
    result = {
        "cells": [
            {"index": 0, "status": "ok", "execution_count": 1},
            {"index": 1, "status": "ok", "execution_count": 2},
        ]
    }
    notes: list[str] = []
    started = time.monotonic()
    apply_verdicts(notebook, result, {}, notes)
    assert time.monotonic() - started < 10  # measured: about 1 s; 100,000 one by one took 130 s
    assert len(notebook.cells[0].outputs) == MAX_NOTEBOOK_OUTPUTS + 1  # and a line saying so
    assert "outputs left out" in notebook.cells[0].outputs[-1].text
    assert "outputs left out" in notebook.cells[1].outputs[-1].text  # the budget is spent
    assert any("more than 2000 outputs" in note for note in notes), notes
    nbformat.validate(notebook)


def test_a_library_warning_reaches_the_graded_copy_without_machine_paths(tmp_path):
    """A real PyTorch UserWarning, raised from a kernel's temporary cell file and submitted in a
    cell's outputs: the graded copy (and so the feedback) keeps its category and message, not the
    file, its line or the source."""
    import importlib.util
    import warnings

    cell_file = tmp_path / "ipykernel_4242" / "1931287046.py"
    cell_file.parent.mkdir()
    cell_file.write_text("import torch\n\n\ndef run():\n    return torch.tensor(torch.ones(2))\n")
    spec = importlib.util.spec_from_file_location("kernel_cell", cell_file)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        module.run()
    # What the kernel prints: Python's default showwarning writes formatwarning's text.
    raised = caught[0]
    printed = warnings.formatwarning(
        raised.message, raised.category, raised.filename, raised.lineno
    )
    stderr = printed + "after the warning\n"
    assert str(cell_file) in stderr and "UserWarning: " in stderr  # what the kernel printed
    stream = {"output_type": "stream", "name": "stderr", "text": stderr}
    notebook = new_notebook(cells=[new_code_cell("run()", outputs=[stream])])
    result = {"cells": [{"index": 0, "status": "ok", "execution_count": 1}]}
    apply_verdicts(notebook, result, {}, [])
    shown = notebook.cells[0].outputs[0].text
    assert str(tmp_path) not in shown and "torch.tensor(torch.ones(2))" not in shown, shown
    assert shown.startswith("UserWarning: To copy construct from a tensor"), shown
    assert shown.endswith("after the warning\n")
