"""Every exercise heading states its points, and the figure is the sum of the cells it covers.

A student reads the points where the work is, not only in the "What is graded" table, so each
graded part of a solution notebook opens with a line that states them:

- an exercise heading, ``### Exercise 2 · `attention` (8 points, four test cells)``: a markdown
  heading whose text starts with ``Exercise`` (after an optional section number);
- a heading for graded cells that belong to no exercise,
  ``### Graded: the trained model (2 points)``;
- a written question, ``### Question 1 (2 points, manually graded)`` or
  ``**Question (2 points).**``.

Each graded cell (nbgrader ``points``: autograded test cells and manually graded answers) belongs
to the last such line above it; section headings (``## 3. ...``) do not end an exercise, so a test
cell that sits in a later section still counts for it. The rules, checked by
``python -m autograder lint``:

- an exercise or "Graded:" heading states its points, as ``(N points)`` or ``(1 point)``;
- the points a line states are the sum of its cells' points, and a stated number of test cells
  (``, two test cells``) is their number;
- no graded cell comes before the first such line, and no such line covers no graded cell.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import nbformat

# "### Exercise 1a · `clean` (1 point)", "## 8. Graded: held-out data (6 points, two test cells)"
_EXERCISE = re.compile(r"^#{1,6}\s+(?:\d+\.\s+)?(?P<kind>Exercise\b|Graded:)(?P<rest>.*)$")
# "### Question 1 (2 points, manually graded)", "**Question (2 points).** Why ..."
_QUESTION = re.compile(r"^(?:#{1,6}\s+|\*\*)(?P<kind>Question)\b(?P<rest>[^\n]*)$")
_POINTS = re.compile(
    r"\((?P<points>\d+(?:\.\d+)?) points?(?:,\s*(?P<count>\w+) test cells?)?[^)]*\)"
)
_COUNTS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}


@dataclass
class Statement:
    """A line that opens a graded part, and the graded cells it covers."""

    cell: int
    line: str
    points: float | None
    count: int | None
    cells: list[tuple[str, float]] = field(default_factory=list)


def _statement(index: int, line: str) -> Statement | None:
    match = _EXERCISE.match(line) or _QUESTION.match(line)
    if match is None:
        return None
    stated = _POINTS.search(match["rest"])
    if stated is None:
        return Statement(index, line.strip(), None, None)
    count = stated["count"]
    return Statement(
        index,
        line.strip(),
        float(stated["points"]),
        None if count is None else _COUNTS.get(count.lower(), -1),
    )


def statements(notebook: nbformat.NotebookNode) -> tuple[list[Statement], list[str]]:
    """The notebook's graded parts in order, and the grade ids of graded cells above all of them."""
    found: list[Statement] = []
    orphans: list[str] = []
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type == "markdown":
            for line in cell.source.splitlines():
                statement = _statement(index, line)
                if statement is not None:
                    found.append(statement)
        grading = cell.metadata.get("nbgrader", {})
        if grading.get("grade") and grading.get("points") is not None:
            grade_id = grading.get("grade_id", f"cell {index}")
            if found:
                found[-1].cells.append((grade_id, float(grading["points"])))
            else:
                orphans.append(grade_id)
    return found, orphans


def _figure(points: float) -> str:
    return f"{points:g} point{'' if points == 1 else 's'}"


def heading_problems(assignment: str, notebook: nbformat.NotebookNode) -> list[str]:
    """What disagrees between the points the headings state and the graded cells under them."""
    found, orphans = statements(notebook)
    problems = [
        f"{assignment}: graded cell {grade_id!r} comes before any exercise heading or question, "
        "so no heading shows its points"
        for grade_id in orphans
    ]
    for statement in found:
        where = f"{assignment} cell {statement.cell} {statement.line!r}"
        total = sum(points for _, points in statement.cells)
        ids = [grade_id for grade_id, _ in statement.cells]
        if not statement.cells:
            problems.append(f"{where}: covers no graded cell (the next graded part starts first)")
        elif statement.points is None:
            problems.append(
                f"{where}: states no points; its graded cells {ids} hold {_figure(total)}, "
                f"so write '({_figure(total)})'"
            )
        elif statement.points != total:
            problems.append(
                f"{where}: states {_figure(statement.points)}, but its graded cells {ids} "
                f"hold {_figure(total)}"
            )
        if statement.cells and statement.count is not None and statement.count != len(ids):
            problems.append(
                f"{where}: states a number of test cells that is not {len(ids)}, "
                f"the number of its graded cells {ids}"
            )
    return problems
