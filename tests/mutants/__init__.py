"""The mutation corpus: known-wrong and known-correct answers, per assignment.

Each ``Mutant`` replaces answer cells of a solution notebook (by nbgrader grade_id) with
other code. A wrong mutant names the graded cells it must fail and a phrase the diagnosis
must contain; a correct alternative must pass everything.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Mutant:
    """Replacement answer cells and the grading outcome they must get."""

    name: str
    assignment: str
    cells: dict[str, str]
    must_fail: dict[str, str] = field(default_factory=dict)  # grade_id -> diagnosis phrase

    def __post_init__(self) -> None:
        cleaned = {grade_id: textwrap.dedent(code).strip() for grade_id, code in self.cells.items()}
        object.__setattr__(self, "cells", cleaned)

    @property
    def is_correct(self) -> bool:
        return not self.must_fail
