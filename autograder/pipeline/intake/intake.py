"""Intake: check a submitted notebook and rebuild it in the shape of the released one.

Runs in the trusted grader process, before a submission is executed in the sandbox. The
rebuilt notebook keeps the student's answers and scratch cells, and takes every test and
locked cell (hidden tests included) from the instructor, with the release's nbgrader
metadata and in the release's order, so that no edit to the file can skip, weaken,
re-weight or delete what grades it. A file that is not a notebook at all is refused with a
reason rather than an exception. nbgrader's OverwriteCells and DeduplicateIds do part of
this against the gradebook; this is the same idea as a pure function over notebooks.
"""

from __future__ import annotations

import collections
import copy
import dataclasses
import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import nbformat
from nbformat import NotebookNode

from autograder.untrusted import TooLarge, UntrustedFile, read_regular_file

MAX_BYTES = 50_000_000
# What the grader reads, scans and renders stays bounded whatever the file holds: a course's
# notebook has under a hundred cells of a few kB each.
MAX_CELLS = 2_000
MAX_CELL_CHARS = 100_000
MAX_SOURCE_CHARS = 1_000_000
# The feedback page inlines an attachment at every reference to it: what the attachments cost
# there (each one's size times its references in its cell) is bounded like the rest.
MAX_RENDERED_ATTACHMENT_BYTES = 20_000_000
ATTACHMENT_REFERENCE = re.compile(r"attachment:([^\s)\"'<>]+)")
CELL_TYPES = ("code", "markdown", "raw")
# nbformat 4.5's rule for cell ids.
CELL_ID = re.compile(r"[a-zA-Z0-9_-]{1,64}")
# The submitted outputs kept, in all: one more than the graded copy shows
# (pipeline/worker/verdicts.py, MAX_NOTEBOOK_OUTPUTS), so that it can say that some were left out;
# each is checked once here.
MAX_OUTPUTS = 2_001
# The nbgrader settings that decide whether and for how much a cell is graded.
SETTINGS = ("grade", "solution", "locked", "task", "points")


@dataclass
class Intake:
    """What to execute (None when nothing can be graded), the verdict, and what was found."""

    notebook: NotebookNode | None
    verdict: str
    problems: list[str]


class _Invalid(Exception):
    """The submission is not a notebook that can be graded; the message says why."""


@dataclass(frozen=True)
class _Expected:
    """A graded cell of the release, where it sits, and whether its source is the instructor's."""

    index: int
    cell: NotebookNode
    fixed: bool  # a test or locked cell, as opposed to an answer cell


@dataclass
class _Submitted:
    """One submitted cell, checked, with the parts the intake may keep."""

    number: int  # 1-based position in the submitted file, for messages
    cell_type: str
    source: str
    metadata: dict[str, Any]  # schema-valid and without nbgrader's part, else empty
    nbgrader: Any
    cell_id: str | None  # None when missing or not a valid nbformat id
    attachments: dict[str, Any] | None
    grade_id: str | None = None  # set once the cell holds a release cell's graded role
    fresh_id: bool = False  # a later copy of an id or a grade_id: it gets a new id
    # A code cell's outputs as submitted, unchecked: the graded copy shows them, validated and
    # bounded (pipeline/worker/verdicts.py), since the grading run keeps none of its own.
    outputs: list[Any] = dataclasses.field(default_factory=list)


@dataclass
class _Slot:
    """A cell of the result, the id it asks for, and its position in the release if known."""

    node: NotebookNode
    wanted_id: str | None
    release_index: int | None
    graded: bool


def take_in(
    submitted: bytes | str | os.PathLike[str],
    release: NotebookNode,
    instructor_sources: Mapping[str, str],
    *,
    max_bytes: int = MAX_BYTES,
) -> Intake:
    """Check a submission (a path, or the file's bytes) and rebuild it in the release's shape.

    Never raises on a bad submission. Raises ValueError when instructor_sources lacks a test
    or locked cell of the release: grading without its hidden tests would be wrong.
    """
    expected = _expected_cells(release, instructor_sources)
    try:
        cells = _parse(_read(submitted, max_bytes))
    except _Invalid as reason:
        return Intake(None, "invalid notebook", [str(reason)])
    problems: list[str] = []
    _bound_attachments(cells, problems)
    _assign_roles(cells, expected, problems)
    notebook = _rebuild(cells, release, expected, instructor_sources, problems)
    problems = list(dict.fromkeys(problems))
    return Intake(notebook, "restored" if problems else "ok", problems)


def role(nbgrader: Mapping[str, Any]) -> str | None:
    """A release cell's role: "answer" (solution), "fixed" (test or locked) or None."""
    if nbgrader.get("solution"):
        return "answer"
    if nbgrader.get("grade") or nbgrader.get("locked") or nbgrader.get("task"):
        return "fixed"
    return None


def _expected_cells(
    release: NotebookNode, instructor_sources: Mapping[str, str]
) -> dict[str, _Expected]:
    """The release's graded cells by grade_id, in release order."""
    expected = {}
    for index, cell in enumerate(release.cells):
        nbgrader = cell.metadata.get("nbgrader", {})
        cell_role = role(nbgrader)
        if cell_role is not None:
            expected[nbgrader["grade_id"]] = _Expected(index, cell, cell_role == "fixed")
    missing = [
        key for key, cell in expected.items() if cell.fixed and key not in instructor_sources
    ]
    if missing:
        raise ValueError(f"instructor_sources lacks the test or locked cells {missing}")
    return expected


def _read(submitted: bytes | str | os.PathLike[str], max_bytes: int) -> bytes:
    """The submitted file's bytes; refuses a file that cannot be read, is empty or too large."""
    too_large = f"the submitted file is larger than the limit of {max_bytes / 1e6:g} MB"
    if isinstance(submitted, bytes):
        data = submitted
    else:
        try:
            data = read_regular_file(submitted, max_bytes)
        except TooLarge:
            raise _Invalid(too_large) from None
        except UntrustedFile as error:
            raise _Invalid(f"the submission was refused: {error}") from None
    if len(data) > max_bytes:
        raise _Invalid(too_large)
    if not data.strip():
        raise _Invalid("the submitted file is empty")
    return data


def _parse(data: bytes) -> list[_Submitted]:
    """The cells of a version 4 notebook, each checked for the structure nbformat requires."""
    try:
        notebook = json.loads(data)
    except UnicodeDecodeError:
        raise _Invalid("the submitted file is not UTF-8 text") from None
    except ValueError as error:
        raise _Invalid(f"the submitted file is not valid JSON ({error})") from None
    except RecursionError:
        raise _Invalid("the submitted file is nested too deeply to be a notebook") from None
    if not isinstance(notebook, dict) or "nbformat" not in notebook:
        raise _Invalid("the submitted file is JSON but not a Jupyter notebook")
    version = notebook["nbformat"]
    if type(version) is not int or version != 4:
        raise _Invalid(
            f"the submitted notebook has format version {_shown(version)}, but only version 4 "
            "can be graded; save it again with a current Jupyter"
        )
    cells = notebook.get("cells")
    if not isinstance(cells, list):
        raise _Invalid("the submitted file is JSON but not a Jupyter notebook (it has no cells)")
    if len(cells) > MAX_CELLS:
        raise _Invalid(
            f"the submitted notebook has {len(cells)} cells; at most {MAX_CELLS} can be graded"
        )
    parsed = [_submitted_cell(number, cell) for number, cell in enumerate(cells, 1)]
    room = MAX_OUTPUTS
    for cell in parsed:  # a cell's outputs are kept whole and valid, or not at all
        cell.outputs = cell.outputs[: max(room, 0)]
        room -= len(cell.outputs)
        if cell.outputs and not _schema_valid("code", outputs=cell.outputs):
            cell.outputs = []
    total = 0
    for cell in parsed:
        size = len(cell.source or "")
        total += size
        if size > MAX_CELL_CHARS:
            raise _Invalid(
                f"cell {cell.number} holds {size} characters; a cell may hold at most "
                f"{MAX_CELL_CHARS}"
            )
    if total > MAX_SOURCE_CHARS:
        raise _Invalid(
            f"the submitted notebook holds {total} characters of cell text; at most "
            f"{MAX_SOURCE_CHARS} can be graded"
        )
    return parsed


def _shown(value: Any) -> str:
    """A short repr of a submitted value, for a message."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _text(source: Any) -> str | None:
    """A cell source as one string (nbformat allows a list of lines), or None if it is not text."""
    if isinstance(source, str):
        return source
    if isinstance(source, list) and all(isinstance(line, str) for line in source):
        return "".join(source)
    return None


def _submitted_cell(number: int, raw: Any) -> _Submitted:
    """Check one submitted cell's structure and take the parts that may be kept."""
    if not isinstance(raw, dict):
        raise _Invalid(f"cell {number} of the submitted notebook is not a cell")
    cell_type = raw.get("cell_type")
    if cell_type not in CELL_TYPES:
        raise _Invalid(f"cell {number} has the unknown cell type {_shown(cell_type)}")
    source = _text(raw.get("source"))
    if source is None:
        raise _Invalid(f"cell {number} has a source that is not text")
    metadata = raw.get("metadata", {})
    if not isinstance(metadata, dict):
        raise _Invalid(f"cell {number} has metadata that is not a JSON object")
    rest = {key: value for key, value in metadata.items() if key != "nbgrader"}
    cell_id, attachments = raw.get("id"), raw.get("attachments")
    outputs = raw.get("outputs")
    return _Submitted(
        number=number,
        cell_type=cell_type,
        source=source,
        metadata=rest if _schema_valid(cell_type, metadata=rest) else {},
        nbgrader=metadata.get("nbgrader"),
        cell_id=cell_id if isinstance(cell_id, str) and CELL_ID.fullmatch(cell_id) else None,
        # Malformed metadata or attachments would make the whole rebuilt notebook invalid.
        attachments=attachments if _valid_attachments(attachments) else None,
        outputs=outputs if cell_type == "code" and isinstance(outputs, list) else [],
    )


def _bound_attachments(cells: list[_Submitted], problems: list[str]) -> None:
    """Drop the attachments of the cells past :data:`MAX_RENDERED_ATTACHMENT_BYTES`, counted as
    the feedback page renders them: each attachment's size times its references in its cell."""
    spent = 0
    for cell in cells:
        if not cell.attachments:
            continue
        references = collections.Counter(ATTACHMENT_REFERENCE.findall(cell.source))
        cost = sum(
            len(json.dumps(value)) * max(1, references.get(name, 0))
            for name, value in cell.attachments.items()
        )
        spent += cost
        if spent > MAX_RENDERED_ATTACHMENT_BYTES:
            problems.append(
                f"the attachments of cell {cell.number} would take {cost / 1e6:.1f} MB on the "
                f"feedback page (each is inlined at every reference to it), past the "
                f"notebook's {MAX_RENDERED_ATTACHMENT_BYTES / 1e6:g} MB; they were left out"
            )
            spent -= cost
            cell.attachments = None


def _valid_attachments(attachments: Any) -> bool:
    """Whether submitted attachments are present and shaped as nbformat requires."""
    return attachments is not None and _schema_valid("markdown", attachments=attachments)


def _schema_valid(cell_type: str, **fields: Any) -> bool:
    """Whether a cell of this type with these submitted fields passes the nbformat 4 schema."""
    code = {"outputs": [], "execution_count": None} if cell_type == "code" else {}
    cell = {"id": "check", "cell_type": cell_type, "metadata": {}, "source": "", **code, **fields}
    try:
        nbformat.validate(nbformat.from_dict(cell), ref=f"{cell_type}_cell", version=4)
    except (nbformat.ValidationError, RecursionError):
        return False
    return True


def _assign_roles(
    cells: list[_Submitted], expected: Mapping[str, _Expected], problems: list[str]
) -> None:
    """Give each graded role to the first cell that claims it, and new ids to repeated ids."""
    claimed: set[str] = set()
    seen_ids: set[str] = set()
    for cell in cells:
        _claim_role(cell, expected, claimed, problems)
        if cell.cell_id is None:
            continue
        if cell.cell_id in seen_ids and not cell.fresh_id:
            problems.append(
                f"cell id {cell.cell_id} appears more than once; later copies were given new ids"
            )
        cell.fresh_id = cell.fresh_id or cell.cell_id in seen_ids
        seen_ids.add(cell.cell_id)


def _claim_role(
    cell: _Submitted, expected: Mapping[str, _Expected], claimed: set[str], problems: list[str]
) -> None:
    """Give the cell the graded role its grade_id names, unless that role is unknown or taken."""
    if not cell.nbgrader:
        return
    grade_id = cell.nbgrader.get("grade_id") if isinstance(cell.nbgrader, dict) else None
    if not isinstance(grade_id, str):
        problems.append(
            f"cell {cell.number} has damaged nbgrader metadata; it is kept as an ordinary cell"
        )
    elif grade_id not in expected:
        problems.append(
            f"cell {_shown(grade_id)} is not a cell of this assignment (was a graded cell "
            "renamed?); it is kept as an ordinary cell that earns no points"
        )
    elif grade_id in claimed:
        problems.append(
            f"cell {grade_id} appears more than once; only the first copy is graded and the "
            "others are kept as ordinary cells"
        )
        cell.fresh_id = True
    else:
        claimed.add(grade_id)
        cell.grade_id = grade_id


def _rebuild(
    cells: list[_Submitted],
    release: NotebookNode,
    expected: Mapping[str, _Expected],
    instructor_sources: Mapping[str, str],
    problems: list[str],
) -> NotebookNode:
    """Lay out the graded cells in release order, each followed by the student's cells after it.

    Deleted and moved graded cells go back to their release position; the student's other
    cells stay after the graded cell they followed.
    """
    claimed = {cell.grade_id: cell for cell in cells if cell.grade_id}
    moved = _moved(list(claimed), expected)
    problems.extend(f"cell {key} was moved; it was put back in its original place" for key in moved)
    lead, groups = _groups([cell for cell in cells if cell.grade_id not in moved])
    release_ids = {cell["id"]: index for index, cell in enumerate(release.cells) if "id" in cell}
    slots = [_plain_slot(cell, release_ids) for cell in lead]
    tail = 0  # cells put back go among slots[tail:], the cells after the last graded one
    for grade_id, release_cell in expected.items():
        student = claimed.get(grade_id)
        node = _graded_cell(release_cell, student, instructor_sources, problems)
        slot = _Slot(node, release_cell.cell.get("id"), release_cell.index, graded=True)
        if grade_id in groups:
            slots.append(slot)
            tail = len(slots)
            slots.extend(_plain_slot(cell, release_ids) for cell in groups[grade_id][1:])
        else:
            tail = _restore_position(slots, tail, release_cell.index)
            slots.insert(tail, slot)
            tail += 1
    _assign_ids(slots)
    notebook = nbformat.v4.new_notebook(metadata=copy.deepcopy(release.metadata))
    notebook.cells = [slot.node for slot in slots]
    return notebook


def _groups(cells: list[_Submitted]) -> tuple[list[_Submitted], dict[str, list[_Submitted]]]:
    """The cells before the first graded one, and each graded cell with the cells after it."""
    lead: list[_Submitted] = []
    groups: dict[str, list[_Submitted]] = {}
    current = lead
    for cell in cells:
        if cell.grade_id is None:
            current.append(cell)
        else:
            current = groups[cell.grade_id] = [cell]
    return lead, groups


def _moved(order: list[str], expected: Mapping[str, _Expected]) -> list[str]:
    """The graded cells out of release order: those outside a longest run in release order."""
    in_order = _longest_increasing([expected[grade_id].index for grade_id in order])
    return [grade_id for position, grade_id in enumerate(order) if position not in in_order]


def _longest_increasing(values: list[int]) -> set[int]:
    """The positions of one longest strictly increasing subsequence of values."""
    length = [1] * len(values)
    previous = [-1] * len(values)
    for i, value in enumerate(values):
        for j in range(i):
            if values[j] < value and length[j] + 1 > length[i]:
                length[i], previous[i] = length[j] + 1, j
    end = max(range(len(values)), key=length.__getitem__, default=-1)
    positions = set()
    while end != -1:
        positions.add(end)
        end = previous[end]
    return positions


def _restore_position(slots: list[_Slot], start: int, release_index: int) -> int:
    """Where a cell put back goes: before the first cell from later in the release."""
    for position in range(start, len(slots)):
        hint = slots[position].release_index
        if hint is not None and hint > release_index:
            return position
    return len(slots)


def _plain_slot(cell: _Submitted, release_ids: Mapping[str, int]) -> _Slot:
    """An ordinary cell with the student's content and outputs, without nbgrader metadata."""
    node = _new_cell(cell.cell_type, cell.source, cell.metadata, cell.attachments, cell.outputs)
    wanted_id = None if cell.fresh_id else cell.cell_id
    hint = release_ids.get(cell.cell_id) if cell.cell_id else None
    return _Slot(node, wanted_id, hint, graded=False)


def _graded_cell(
    release_cell: _Expected,
    student: _Submitted | None,
    instructor_sources: Mapping[str, str],
    problems: list[str],
) -> NotebookNode:
    """The release's cell and metadata, with the instructor's source or the student's answer."""
    cell = release_cell.cell
    grade_id = cell.metadata.nbgrader.grade_id
    if student is None:
        problems.append(_deleted_message(grade_id, release_cell.fixed))
    else:
        _report_changes(release_cell, student, problems)
    if release_cell.fixed:
        source, attachments = instructor_sources[grade_id], cell.get("attachments")
    elif student is None:
        source, attachments = cell.source, cell.get("attachments")
    else:
        source, attachments = student.source, student.attachments
    metadata = copy.deepcopy(cell.metadata)
    outputs = student.outputs if student is not None and student.cell_type == "code" else []
    return _new_cell(cell.cell_type, source, metadata, copy.deepcopy(attachments), outputs)


def _deleted_message(grade_id: str, fixed: bool) -> str:
    """The sentence for a graded cell missing from the submission."""
    if fixed:
        return f"restored deleted cell {grade_id}"
    return f"restored deleted cell {grade_id} as its blank template, so its answer earns no credit"


def _report_changes(release_cell: _Expected, student: _Submitted, problems: list[str]) -> None:
    """Report what the student changed in a graded cell that the rebuild puts back."""
    cell = release_cell.cell
    grade_id = cell.metadata.nbgrader.grade_id
    if student.cell_type != cell.cell_type:
        problems.append(
            f"cell {grade_id} was changed from a {cell.cell_type} cell to a {student.cell_type} "
            f"cell; it is a {cell.cell_type} cell again"
        )
    if release_cell.fixed and student.source != cell.source:
        problems.append(f"cell {grade_id} was edited; the original was restored")
    changed = [
        name
        for name in SETTINGS
        if _setting(student.nbgrader, name) != _setting(cell.metadata.nbgrader, name)
    ]
    if changed:
        problems.append(
            f"the grading settings of cell {grade_id} were changed ({', '.join(changed)}); "
            "the originals were restored"
        )


def _setting(nbgrader: Mapping[str, Any], name: str) -> Any:
    """One nbgrader setting, with flags missing in older metadata read as False."""
    value = nbgrader.get(name)
    return value if name == "points" else bool(value)


def _new_cell(
    cell_type: str,
    source: str,
    metadata: dict[str, Any],
    attachments: dict[str, Any] | None,
    outputs: list[Any] = (),  # type: ignore[assignment]
) -> NotebookNode:
    """A cell without execution count, with the ``outputs`` submitted in it (a code cell's);
    its id is assigned once the layout is done."""
    cell: dict[str, Any] = {
        "id": "pending",
        "cell_type": cell_type,
        "metadata": metadata,
        "source": source,
    }
    if cell_type == "code":
        cell.update(outputs=list(outputs), execution_count=None)
    elif attachments is not None:
        cell["attachments"] = attachments
    return nbformat.from_dict(cell)


def _assign_ids(slots: list[_Slot]) -> None:
    """Graded cells take the release's ids; other cells keep theirs when still free."""
    taken = {slot.wanted_id for slot in slots if slot.graded and slot.wanted_id}
    counter = 0
    for slot in slots:
        cell_id = slot.wanted_id
        if cell_id is None or (not slot.graded and cell_id in taken):
            cell_id = f"intake-{counter}"
            while cell_id in taken:
                counter += 1
                cell_id = f"intake-{counter}"
        taken.add(cell_id)
        slot.node.id = cell_id
