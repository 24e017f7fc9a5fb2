"""The mutation corpus: known-wrong and known-correct answers, per assignment.

Each ``Mutant`` patches answer cells of a solution notebook (by nbgrader grade_id), so that the
difference from the solution is the mistake (or the alternative) itself. A wrong mutant names the
graded cells it must fail and a phrase the diagnosis must contain; a correct alternative must pass
everything. A patch whose text no longer matches the solution fails loudly, never silently.
"""

from __future__ import annotations

import ast
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from types import MappingProxyType

from autograder.examples import solution_answers


@dataclass(frozen=True)
class Replace:
    """Replace the one occurrence of ``old`` in the solution cell with ``new``."""

    old: str
    new: str


@dataclass(frozen=True)
class Body:
    """A new body for function ``function``; its signature and docstring stay the solution's."""

    function: str
    new: str


@dataclass(frozen=True)
class Rewrite:
    """The whole cell written anew: for a mutant that shares only the cell's purpose."""

    source: str


Edit = Replace | Body
Patch = Edit | Sequence[Edit] | Rewrite


@dataclass(frozen=True)
class Mutant:
    """Patched answer cells and the grading outcome they must get."""

    name: str
    assignment: str
    patches: Mapping[str, Patch]  # grade_id -> how the mutant changes the solution's cell
    must_fail: dict[str, str] = field(default_factory=dict)  # grade_id -> diagnosis phrase
    # Also graded by the grading command (tests/judge_parity.py), the diagnosis asserted on
    # the graded notebook: for mistakes whose visible checks fail before the hidden ones.
    in_notebook: bool = False
    # The named mistakes it makes (autograder/authoring/mistakes.py keys, "<exercise>.<name>")
    # beyond those its diagnosis phrases name: it may be told of these, and of no other.
    makes: tuple[str, ...] = ()
    # Causes that a message once named for this answer although it does not make them (issue
    # 40's fresh corpus): no failing check's message may contain any of these phrases.
    not_told: tuple[str, ...] = ()
    # One mistake, charged once (autograder/authoring/repairs.py): it loses points in its
    # ``must_fail`` cells alone, every later cell it fails being waived as the same mistake.
    charged_once: bool = False

    @property
    def is_correct(self) -> bool:
        """A correct alternative: nothing may fail."""
        return not self.must_fail

    @property
    def cells(self) -> dict[str, str]:
        """grade_id -> the mutant's source of every answer cell it changes."""
        return mutated_cells(self)


@cache
def _solution(assignment: str) -> Mapping[str, str]:
    """grade_id -> the solution's answer cell source, markers removed (read once per run)."""
    return MappingProxyType(solution_answers(assignment))


def _replace(source: str, edit: Replace, where: str) -> str:
    """``source`` with the single occurrence of ``edit.old`` replaced."""
    count = source.count(edit.old)
    assert count == 1, (
        f"{where}: this text occurs {count} times in the solution cell, not once:\n{edit.old}"
    )
    return source.replace(edit.old, edit.new)


def _rewrite_body(source: str, edit: Body, where: str) -> str:
    """``source`` with the statements of function ``edit.function`` (after its docstring) replaced."""
    found = [
        node
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == edit.function
    ]
    assert len(found) == 1, f"{where}: expected one `def {edit.function}`, found {len(found)}"
    node = found[0]
    body = node.body
    has_docstring = ast.get_docstring(node, clean=False) is not None
    first = body[0].end_lineno + 1 if has_docstring else body[0].lineno  # 1-based
    assert first <= body[-1].end_lineno, f"{where}: `{edit.function}` has only a docstring"
    lines = source.splitlines(keepends=True)
    indent = " " * body[-1].col_offset
    new = textwrap.indent(textwrap.dedent(edit.new).strip("\n") + "\n", indent)
    return "".join(lines[: first - 1]) + new + "".join(lines[body[-1].end_lineno :])


def apply_patch(source: str, patch: Patch, where: str) -> str:
    """The cell ``source`` with ``patch`` applied; ``where`` names the cell in error messages."""
    if isinstance(patch, Rewrite):
        return textwrap.dedent(patch.source).strip()
    for edit in (patch,) if isinstance(patch, Edit) else patch:
        if isinstance(edit, Replace):
            source = _replace(source, edit, where)
        else:
            source = _rewrite_body(source, edit, where)
    return source


def mutated_cells(mutant: Mutant) -> dict[str, str]:
    """grade_id -> the source of every answer cell ``mutant`` changes, patched from the solution."""
    solution = _solution(mutant.assignment)
    cells = {}
    for grade_id, patch in mutant.patches.items():
        where = f"mutant {mutant.name!r} ({mutant.assignment}), cell {grade_id!r}"
        assert grade_id in solution, f"{where}: the solution has no such answer cell"
        cells[grade_id] = apply_patch(solution[grade_id], patch, where)
        assert cells[grade_id].strip() != solution[grade_id].strip(), (
            f"{where}: patch changes nothing"
        )
    return cells
