"""From the runner's report and the judge's verdicts to graded cells and a verdict for the row.

The trusted verdicts are written into the notebook's test cells, so nbgrader's own SaveAutoGrades
records them in the gradebook, and feedback and export work as usual.  nbgrader's
``determine_grade`` reads a test cell's outputs in order: an error scores 0, an execute_result
holding a number scores that number, and anything else full marks.  So a cell that earns nothing
ends with an error, one with partial credit with an execute_result of its points, and the
kernel's own errors and execute_results are never kept where they could decide the grade.
"""

from __future__ import annotations

import json
from typing import Any

import nbformat

from autograder.cells import is_test_cell
from autograder.isolation import sandbox
from autograder.pipeline.records import VERDICTS, CellResult

MAX_NOTEBOOK_OUTPUT_BYTES = 16 * 2**20
_OUTPUT_DROPPED_NOTE = (
    f"[output truncated: the notebook's outputs passed {MAX_NOTEBOOK_OUTPUT_BYTES // 2**20} MiB "
    "in all, so later outputs are not kept]"
)
_OUTPUT_DROPPED = nbformat.v4.new_output("stream", name="stdout", text=_OUTPUT_DROPPED_NOTE)
# Each output is checked against nbformat's schema: past this many in a notebook, the rest are
# left out unread, so a flood of tiny outputs costs the grader a bounded time.
MAX_NOTEBOOK_OUTPUTS = 2_000
_OUTPUTS_LEFT_OUT_NOTE = (
    f"[outputs left out: the notebook's code cells made more than {MAX_NOTEBOOK_OUTPUTS} "
    "outputs in all, so later outputs are not kept]"
)


# The most of the runner's report that is kept (each cell's outputs are capped at 1 MiB).
MAX_REPORT_BYTES = 64 * 2**20


def parse_report(data: bytes, truncated: bool = False) -> dict:
    """The runner's report (JSON lines, see isolation/runner.py) as one result dict.

    Read defensively although it came over the grader's own pipe: a line that is not one of the
    runner's messages ends the report there, and a last line cut short (a killed runner) is
    dropped.  ``truncated`` says that the pipe carried more than was kept.
    """
    result: dict = {"cells": [], "restarts": 0, "finished": False}
    if not data:
        result["error"] = "the runner sent no report"
        return result
    *lines, _cut_short = data.split(b"\n")
    for number, line in enumerate(lines, 1):
        if result["finished"] or not _take_message(line, result):
            result["error"] = f"the runner's report is malformed at line {number}, and ends there"
            return result
    if truncated:
        result["error"] = (
            f"the runner's report passed {MAX_REPORT_BYTES // 2**20} MiB, so the cells after "
            "the last one it told were not graded"
        )
    return result


def _take_message(line: bytes, result: dict) -> bool:
    """Add one line of the report to ``result``; False when it is no message of the runner's."""
    try:
        message = json.loads(line)
    except (ValueError, RecursionError):
        return False
    if not isinstance(message, dict):
        return False
    if isinstance(message.get("cell"), dict):
        result["cells"].append(message["cell"])
    elif isinstance(message.get("restarts"), int):
        result["restarts"] = message["restarts"]
    elif message.get("finished") is True:
        result["finished"] = True
        if "error" in message:
            result["error"] = str(message["error"])
    else:
        return False
    return True


_OUTPUT_TYPES = {"stream", "display_data", "execute_result", "error"}


def _outputs(raw: Any, room: int = MAX_NOTEBOOK_OUTPUTS) -> list[nbformat.NotebookNode]:
    """Valid nbformat outputs only, of the first ``room``; anything else the sandbox reported is
    dropped (past ``room``, for a line that says so)."""
    raw = raw if isinstance(raw, list) else []
    kept = []
    for output in raw[: max(room, 0)]:
        if not isinstance(output, dict) or output.get("output_type") not in _OUTPUT_TYPES:
            continue
        node = nbformat.from_dict(output)
        try:
            nbformat.validate(node, ref="output", version=4)  # the schema of one output
        except Exception:  # noqa: BLE001 - an invalid output is simply not shown
            continue
        kept.append(node)
    if len(raw) > room:
        kept.append(nbformat.v4.new_output("stream", name="stdout", text=_OUTPUTS_LEFT_OUT_NOTE))
    return kept


_STATUS_MESSAGES = {
    "timeout": "this cell ran past the time limit per cell, so it was stopped",
    "crashed": "the kernel died while this cell ran (os._exit, a crash or the memory limit)",
    "skipped": "this cell never ran: too many crashes or timeouts earlier",
    None: "this cell never ran: the notebook was stopped before it (a limit of the sandbox)",
}


def apply_verdicts(
    notebook: nbformat.NotebookNode,
    result: dict,
    verdicts: dict,
    notes: list[str],
    judge_failure: str | None = None,
) -> list[CellResult]:
    """Put outputs and trusted verdicts into ``notebook``; return the test cells' results."""
    by_index = {c.get("index"): c for c in result.get("cells", []) if isinstance(c, dict)}
    cells = []
    shown_bytes = outputs_read = 0
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type != "code":
            continue
        record = by_index.get(index, {})
        status = record.get("status")
        raw_outputs = record.get("outputs")
        cell.outputs = _outputs(raw_outputs, MAX_NOTEBOOK_OUTPUTS - outputs_read)
        outputs_read += len(raw_outputs) if isinstance(raw_outputs, list) else 0
        if outputs_read > MAX_NOTEBOOK_OUTPUTS and _OUTPUTS_LEFT_OUT_NOTE not in notes:
            notes.append(_OUTPUTS_LEFT_OUT_NOTE)
        # The feedback renders every output: past the notebook's budget, outputs are dropped.
        shown_bytes += len(json.dumps(cell.outputs))
        if shown_bytes > MAX_NOTEBOOK_OUTPUT_BYTES and cell.outputs:
            cell.outputs = [_OUTPUT_DROPPED]
            if _OUTPUT_DROPPED_NOTE not in notes:
                notes.append(_OUTPUT_DROPPED_NOTE)
        count = record.get("execution_count")
        cell.execution_count = count if isinstance(count, int) and count > 0 else None
        if status in ("timeout", "crashed"):
            notes.append(f"cell {index}: {_STATUS_MESSAGES[status]}")
        if not is_test_cell(cell):
            continue
        grade_id = cell.metadata["nbgrader"]["grade_id"]
        points = float(cell.metadata["nbgrader"].get("points", 0))
        in_kernel = status == "ok"
        verdict = verdicts.get(grade_id)
        score, checks = 0.0, ()
        if verdict is not None:
            passed, message = verdict.passed, verdict.diagnosis
            score, checks = verdict.points(points), verdict.checks
        elif status == "error" and judge_failure:
            passed, message = False, f"[judge] {judge_failure}, so this cell could not be checked"
        elif status == "error":
            passed = False
            message = f"{record.get('ename', 'Error')}: {record.get('evalue', '')}"
        elif status == "ok":
            passed, message = False, "the hidden checks of this cell never reached the grader"
        else:
            passed, message = False, _STATUS_MESSAGES.get(status, _STATUS_MESSAGES[None])
        if passed:
            score = points
        _rewrite_outputs(cell, passed, score, message)
        cells.append(CellResult(grade_id, passed, message, in_kernel, score, checks))
    return cells


def _rewrite_outputs(cell: nbformat.NotebookNode, passed: bool, score: float, message: str) -> None:
    """Make the test cell's outputs say what the trusted verdict says (nbgrader scores outputs):
    the kernel's outputs that nbgrader would read as a grade are kept as plain displays, then the
    verdict: full marks, partial credit (``score`` points) or nothing."""
    kept = []
    for output in cell.outputs:
        if output.output_type == "error":
            continue
        if output.output_type == "stream" and output.name == "stderr":
            output.name = "stdout"  # nbgrader zeroes a cell with stderr; warnings must not cost
        if output.output_type == "execute_result":  # from the kernel: shown, never a grade
            output = nbformat.v4.new_output(
                "display_data", data=output.get("data", {}), metadata=output.get("metadata", {})
            )
        kept.append(output)
    if passed or score > 0:
        if message:
            kept.append(nbformat.v4.new_output("stream", name="stdout", text=message + "\n"))
        if not passed:
            kept.append(
                nbformat.v4.new_output(
                    "execute_result",
                    data={"text/plain": str(score)},
                    execution_count=cell.execution_count,
                )
            )
    else:
        kept.append(
            nbformat.v4.new_output(
                "error", ename="CheckFailed", evalue=message, traceback=[f"CheckFailed: {message}"]
            )
        )
    cell.outputs = kept


def shown_verdict(cell: nbformat.NotebookNode) -> str:
    """The trusted verdict's message as a graded test cell shows it: its error, or the text of
    its last output stream when it earned points."""
    errors = [o.evalue for o in cell.outputs if o.output_type == "error"]
    if errors:
        return "\n".join(errors)
    streams = [o.text for o in cell.outputs if o.output_type == "stream"]
    return streams[-1].removesuffix("\n") if streams else ""


def fail_every_test(notebook: nbformat.NotebookNode, message: str) -> list[CellResult]:
    cells = []
    for cell in notebook.cells:
        if is_test_cell(cell):
            _rewrite_outputs(cell, False, 0.0, message)
            grade_id = cell.metadata["nbgrader"]["grade_id"]
            cells.append(CellResult(grade_id, False, message, False, 0.0))
    return cells


def _word(passed: bool) -> str:
    return "pass" if passed else "fail"


def row_verdict(
    intake_verdict: str,
    run: sandbox.SandboxResult | None,
    result: dict,
    cells: list[CellResult],
    notes: list[str],
) -> str:
    """The most serious thing that happened to the submission."""
    found = {intake_verdict}
    for cell in cells:
        if cell.passed != cell.in_kernel_passed and not cell.message.startswith("this cell"):
            found.add("tamper suspected")
            notes.append(
                f"{cell.grade_id}: the kernel reported {_word(cell.in_kernel_passed)} but the "
                f"trusted judge says {_word(cell.passed)}"
            )
    statuses = [c.get("status") for c in result.get("cells", []) if isinstance(c, dict)]
    for record in result.get("cells", []):
        if isinstance(record, dict) and record.get("ename") == "MemoryError":
            found.add("memory limit")
        if isinstance(record, dict) and "[output truncated" in json.dumps(record.get("outputs")):
            found.add("output limit")
    found.update(s for s in ("timeout", "crashed") if s in statuses)
    if _OUTPUT_DROPPED_NOTE in notes:
        found.add("output limit")
    if run is not None and run.verdict != "ok":
        found.add(run.verdict)
        notes.append(f"the sandbox stopped the notebook: {run.verdict}")
    if result.get("error"):
        notes.append(str(result["error"])[:300])
    return next(v for v in VERDICTS if v in found) if found & set(VERDICTS) else "crashed"
