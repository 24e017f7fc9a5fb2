"""Which graded cells use another exercise's answer by design: one mistake, one penalty otherwise.

A graded test cell judges the answer cell it follows in the notebook. Where its exercise is built
on an earlier answer (a MultiHeadAttention that calls the student's split_heads, a trained model
built from the student's CharLM), its check module declares so with :func:`depends_on`; a mistake
in that earlier answer may then cost this cell too. Any other cell that fails for it is a double
penalty (tests/test_mutants.py checks every mutant of the corpus against these declarations).
"""

from __future__ import annotations

from collections.abc import Sequence

from autograder.authoring.registry import checks_for

# (assignment, answer cell) -> the graded cells of other exercises that use that answer
_USED_BY: dict[tuple[str, str], set[str]] = {}


def depends_on(assignment: str, graded_cells: Sequence[str], *answers: str) -> None:
    """Declare that the test cells ``graded_cells`` use the student's answer cells ``answers``
    (their grade_ids) by design, so a mistake in one of those may cost them points too."""
    if isinstance(graded_cells, str):
        raise TypeError("graded_cells must be a sequence of grade_ids, not one string")
    for answer in answers:
        _USED_BY.setdefault((assignment, answer), set()).update(graded_cells)


def dependents(assignment: str, answer: str) -> frozenset[str]:
    """The test cells of other exercises that declared they use ``answer`` (checks imported)."""
    checks_for(assignment)
    return frozenset(_USED_BY.get((assignment, answer), ()))


def declared(assignment: str) -> dict[str, frozenset[str]]:
    """answer cell -> its declared dependent test cells, for every declaration of ``assignment``."""
    checks_for(assignment)
    return {a: frozenset(cells) for (name, a), cells in _USED_BY.items() if name == assignment}
