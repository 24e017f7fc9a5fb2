"""The "What is graded" table at the top of each solution notebook, read from its graded cells.

The table lists every graded cell, the autograded ones first, then those graded by hand, each
group in the notebook's order, with its grade id, its points and how it is graded, under a line
that gives the total::

    **What is graded** (19 points in all):

    | Part | grade id | Points | How |
    |---|---|---|---|
    | NumPy attention | `test_attention_numpy` | 2 | auto |

The "Part" column is the author's words; everything else follows from the cells' nbgrader
metadata.  :func:`table_problems` says where a notebook's table disagrees with its cells (the
authoring lint calls it), and :func:`rewrite_table` writes the table anew from the cells, keeping
the words of every row whose grade id it still lists.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

import nbformat

from autograder.cells import is_test_cell

HEADING = re.compile(r"\*\*What is graded\*\* \(([\d.]+) points? in all\):")
HEADING_TEXT = "**What is graded** (0 points in all):"
HEADER_ROWS = "| Part | grade id | Points | How |\n|---|---|---|---|"
_ROW = re.compile(
    r"\|(?P<part>.*)\|\s*`(?P<grade_id>[^`]+)`\s*\|(?P<points>[^|]*)\|(?P<how>[^|]*)\|"
)


@dataclass(frozen=True)
class Row:
    """One graded cell as the table lists it."""

    part: str
    grade_id: str
    points: str
    how: str  # "auto" or "manual"


def number(value: float) -> str:
    """2.0 -> "2", 1.5 -> "1.5": points as the table writes them."""
    return f"{value:g}"


def graded_rows(notebook: nbformat.NotebookNode) -> list[Row]:
    """Every graded cell of ``notebook`` as a row with no words yet: the autograded ones, then
    those graded by hand, each in the notebook's order."""
    rows = []
    for cell in notebook.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("grade") or meta.get("task"):
            how = "auto" if is_test_cell(cell) else "manual"
            rows.append(Row("", meta["grade_id"], number(float(meta.get("points", 0))), how))
    return sorted(rows, key=lambda row: row.how != "auto")


@dataclass(frozen=True)
class _Table:
    """Where a notebook's table sits: its cell, the span of heading and rows, what they say."""

    cell: int
    start: int
    end: int
    total: str
    lines: list[str]


def _find(notebook: nbformat.NotebookNode) -> _Table | None:
    """The first "What is graded" table of ``notebook``, if any."""
    for index, cell in enumerate(notebook.cells):
        heading = HEADING.search(cell.source) if cell.cell_type == "markdown" else None
        if heading is None:
            continue
        end, lines = heading.end(), []
        position = end
        for line in cell.source[end:].split("\n"):
            if line.startswith("|"):
                lines.append(line)
                end = position + len(line)
            elif lines or line.strip():
                break
            position += len(line) + 1
        return _Table(index, heading.start(), end, heading[1], lines)
    return None


def listed_rows(lines: list[str]) -> list[Row]:
    """The rows of a table's lines (header and rule left out)."""
    rows = []
    for line in lines[2:]:
        found = _ROW.fullmatch(line.strip())
        if found is None:
            raise ValueError(
                f"cannot read the row {line!r}: expected | Part | `grade id` | Points | How |"
            )
        rows.append(
            Row(
                found["part"].strip(),
                found["grade_id"],
                found["points"].strip(),
                found["how"].strip(),
            )
        )
    return rows


def parts_of(notebook: nbformat.NotebookNode) -> dict[str, str]:
    """grade id -> the author's words for it (the "Part" column) in ``notebook``'s table, as
    markdown; empty without a table.  ValueError: a row the table cannot be read from."""
    table = _find(notebook)
    return {} if table is None else {r.grade_id: r.part for r in listed_rows(table.lines)}


def table_problems(assignment: str, notebook: nbformat.NotebookNode) -> list[str]:
    """Where the "What is graded" table of ``notebook`` disagrees with its graded cells."""
    expected = graded_rows(notebook)
    fix = "`python -m autograder lint --write-tables` rewrites it from the cells"
    table = _find(notebook)
    if table is None and not expected:
        return []
    if table is None:
        return [f'{assignment}: no "What is graded" table; add {HEADING_TEXT!r}, then {fix}']
    try:
        listed = listed_rows(table.lines)
    except ValueError as error:
        return [f'{assignment}: the "What is graded" table: {error}']
    problems = []
    if table.lines[:2] != HEADER_ROWS.splitlines():
        problems.append(f"{assignment}: the table's first two lines must read {HEADER_ROWS!r}")
    facts = [(r.grade_id, r.points, r.how) for r in listed]
    wanted = [(r.grade_id, r.points, r.how) for r in expected]
    for row, (fact, want) in enumerate(itertools.zip_longest(facts, wanted), start=1):
        if fact != want:
            problems.append(
                f'{assignment}: row {row} of the "What is graded" table reads (grade id, points, '
                f"how) {fact}, but the graded cells make it {want}; {fix}"
            )
            break
    total = number(sum(float(r.points) for r in expected))
    if table.total != total:
        problems.append(
            f"{assignment}: the table's heading says {table.total} points in all, the graded "
            f"cells hold {total}; {fix}"
        )
    return problems


def rewrite_table(notebook: nbformat.NotebookNode, parts: dict[str, str] | None = None) -> bool:
    """Write the table anew from the graded cells; True if it changed.  A row keeps its words
    when the table already lists its grade id, else takes them from ``parts`` (grade id ->
    words), else shows its grade id."""
    table = _find(notebook)
    if table is None:
        raise ValueError(f'no "What is graded" table to rewrite: add the line {HEADING_TEXT!r}')
    words = parts_of(notebook) | (parts or {})
    rows = graded_rows(notebook)
    total = sum(float(r.points) for r in rows)
    lines = [
        f"**What is graded** ({number(total)} {'point' if total == 1 else 'points'} in all):",
        "",
        HEADER_ROWS,
        *(
            f"| {words.get(r.grade_id) or f'`{r.grade_id}`'} | `{r.grade_id}` | {r.points} "
            f"| {r.how} |"
            for r in rows
        ),
    ]
    cell = notebook.cells[table.cell]
    source = cell.source[: table.start] + "\n".join(lines) + cell.source[table.end :]
    changed = source != cell.source
    cell.source = source
    return changed
