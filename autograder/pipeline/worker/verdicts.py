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
import re
from collections.abc import Sequence

import nbformat

from autograder.authoring.registry import CellGrade
from autograder.cells import is_test_cell, lacks_hidden_line, no_hidden_line
from autograder.isolation import sandbox
from autograder.pipeline.engines.jobs_and_outcomes import VERDICTS, GradedCell

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

# A warning as Python prints it: "<file>:<line>: <Category>: <message>", the file a library's on
# the grading machine or the kernel's temporary cell file; the category and message are the news.
_WARNING_HEADER = re.compile(r"^\S[^\n]*?\.py:\d+: (?=\w*Warning: )")


def without_warning_paths(text: str) -> str:
    """stderr ``text`` with each warning's file and line left out, and the line of source code
    Python prints under it: "UserWarning: <message>" stays."""
    kept: list[str] = []
    after_header = False
    for line in text.splitlines(keepends=True):
        header = _WARNING_HEADER.match(line)
        if header:
            kept.append(line[header.end() :])
        elif not (after_header and line.startswith("  ")):
            kept.append(line)
        after_header = header is not None
    return "".join(kept)


def _outputs(raw: list, room: int = MAX_NOTEBOOK_OUTPUTS) -> list[nbformat.NotebookNode]:
    """Valid nbformat outputs only, of the first ``room``; anything else the sandbox reported is
    dropped (past ``room``, for a line that says so)."""
    kept = []
    for output in raw[: max(room, 0)]:
        if not isinstance(output, dict) or output.get("output_type") not in _OUTPUT_TYPES:
            continue
        node = nbformat.from_dict(output)
        try:
            nbformat.validate(node, ref="output", version=4)  # the schema of one output
        except Exception:  # noqa: BLE001 - an invalid output is simply not shown
            continue
        if node.output_type == "stream" and node.name == "stderr":
            node.text = without_warning_paths(node.text)
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


_ERROR_CHARS = 300  # of an error message from before any hidden input entered the kernel


def _stdout(text: str) -> nbformat.NotebookNode:
    """One line on stdout, as the graded copy shows the grader's own notes."""
    return nbformat.v4.new_output("stream", name="stdout", text=text + "\n")


def _first_checkpoint(records: list[dict]) -> float:
    """The execution count of the first graded test cell the grading run reached: from then on
    the kernel may hold hidden inputs, so its words are no longer shown."""
    counts = [
        r["execution_count"]
        for r in records
        if "visible" in r and isinstance(r.get("execution_count"), int)
    ]
    return min(counts, default=float("inf"))


def run_note(record: dict, first_checkpoint: float) -> str | None:
    """What the graded copy says under a non-test cell that failed in the grading run."""
    status = record.get("status")
    if status != "error":
        return None
    count = record.get("execution_count")
    if isinstance(count, int) and count < first_checkpoint:
        ename = " ".join(str(record.get("ename", "Error")).split())[:100]
        evalue = " ".join(str(record.get("evalue", "")).split())[:_ERROR_CHARS]
        return f"[grading run] this cell raised {ename}: {evalue}"
    return (
        "[grading run] this cell raised an error; its message is not shown, since the hidden "
        "checks had already called your code (run your notebook yourself to see it)"
    )


def _submitted_outputs(cell: nbformat.NotebookNode, room: int) -> tuple[list, int]:
    """The cell's outputs as submitted, valid ones only, within ``room``; and how many it held."""
    raw = cell.get("outputs") if isinstance(cell.get("outputs"), list) else []
    kept = _outputs(raw, room)
    for output in kept:
        if output.output_type == "execute_result":
            output.execution_count = cell.execution_count  # the grader's count, as the cell's
    return kept, len(raw)


def apply_verdicts(
    notebook: nbformat.NotebookNode,
    result: dict,
    grades: dict[str, CellGrade],
    notes: list[str],
    judge_failure: str | None = None,
) -> list[GradedCell]:
    """Put the grader's notes and trusted grades into the graded copy ``notebook``; return the
    test cells' results.  ``result`` is the grading run's report with each record at its cell's
    index in ``notebook``.  A code cell shows the outputs it was submitted with, never the
    grading run's: that run's kernel met the hidden inputs."""
    records = [c for c in result.get("cells", []) if isinstance(c, dict)]
    by_index = {c.get("index"): c for c in records}
    first_checkpoint = _first_checkpoint(records)
    cells = []
    shown_bytes = outputs_read = 0
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type != "code":
            continue
        record = by_index.get(index, {})
        status = record.get("status")
        count = record.get("execution_count")
        cell.execution_count = count if type(count) is int and count > 0 else None
        if status in ("timeout", "crashed"):
            notes.append(f"cell {index}: {_STATUS_MESSAGES[status]}")
        if not is_test_cell(cell):
            cell.outputs, submitted = _submitted_outputs(cell, MAX_NOTEBOOK_OUTPUTS - outputs_read)
            outputs_read += submitted
            if outputs_read > MAX_NOTEBOOK_OUTPUTS and _OUTPUTS_LEFT_OUT_NOTE not in notes:
                notes.append(_OUTPUTS_LEFT_OUT_NOTE)
            # The feedback renders every output: past the notebook's budget, outputs are dropped.
            shown_bytes += len(json.dumps(cell.outputs))
            if shown_bytes > MAX_NOTEBOOK_OUTPUT_BYTES and cell.outputs:
                cell.outputs = [_OUTPUT_DROPPED]
                if _OUTPUT_DROPPED_NOTE not in notes:
                    notes.append(_OUTPUT_DROPPED_NOTE)
            note = run_note(record, first_checkpoint)
            if note is not None:
                cell.outputs.append(_stdout(note))
            continue
        grade_id = cell.metadata["nbgrader"]["grade_id"]
        points = float(cell.metadata["nbgrader"].get("points", 0))
        grade = _grade(grades, cell, record, judge_failure)
        graded = GradedCell(grade_id, grade, points, in_kernel_passed=status == "ok")
        _rewrite_outputs(cell, graded.passed, graded.score, graded.message)
        cells.append(graded)
    return cells


def _grade(
    grades: dict[str, CellGrade],
    cell: nbformat.NotebookNode,
    record: dict,
    judge_failure: str | None,
) -> CellGrade:
    """The judge's grade of a test cell, or, when it never judged the cell, why (it earns 0):
    always in the grader's words, never the kernel's."""
    grade_id = cell.metadata["nbgrader"]["grade_id"]
    status = record.get("status")
    if grade_id in grades:
        return grades[grade_id]
    if status == "error" and judge_failure:
        why = f"[judge] {judge_failure}, so this cell could not be checked"
    elif lacks_hidden_line(cell):
        why = no_hidden_line(grade_id)
    elif status in ("ok", "error"):
        why = (
            "the hidden checks of this cell never reached the grader: the grading run could not "
            "hand them your answers (did an answer cell change how the notebook runs?)"
        )
    else:
        why = _STATUS_MESSAGES.get(status, _STATUS_MESSAGES[None])
    return CellGrade((), unjudged=why)


def _rewrite_outputs(cell: nbformat.NotebookNode, passed: bool, score: float, message: str) -> None:
    """Make the test cell's outputs say what the trusted verdict says (nbgrader scores outputs):
    full marks, partial credit (``score`` points) or nothing."""
    kept = []
    if passed or score > 0:
        if message:
            kept.append(_stdout(message))
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


def fail_every_test(notebook: nbformat.NotebookNode, message: str) -> list[GradedCell]:
    """Fail every test cell of ``notebook`` with ``message``, unjudged."""
    cells = []
    for cell in notebook.cells:
        if is_test_cell(cell):
            meta = cell.metadata["nbgrader"]
            graded = GradedCell(
                meta["grade_id"], CellGrade((), unjudged=message), float(meta.get("points", 0))
            )
            _rewrite_outputs(cell, False, 0.0, graded.message)
            cells.append(graded)
    return cells


_REFUSALS_SHOWN = 5  # a kernel may call thousands of times; the notes name the first few


def _word(passed: bool) -> str:
    return "pass" if passed else "fail"


def row_verdict(
    intake_verdict: str,
    run: sandbox.SandboxResult | None,
    result: dict,
    cells: list[GradedCell],
    notes: list[str],
    refusals: Sequence[str] = (),
) -> str:
    """The most serious thing that happened to the submission.

    refusals: the calls to the hidden checks that the judge refused (from the wrong cell, for
    another cell, or a second time), each saying which.
    """
    found = {intake_verdict}
    distinct = list(dict.fromkeys(refusals))
    if distinct:
        found.add("tamper suspected")
    notes += [f"not judged: {refusal}" for refusal in distinct[:_REFUSALS_SHOWN]]
    if len(refusals) > _REFUSALS_SHOWN:
        notes.append(f"not judged: {len(refusals) - _REFUSALS_SHOWN} more calls like these")
    for cell in cells:
        # A cell whose kernel says it passed while the judge failed it swallowed the verdict.  The
        # other way round is honest: a visible check may fail where the hidden ones pass.
        if cell.in_kernel_passed and not cell.passed and not cell.message.startswith("this cell"):
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
