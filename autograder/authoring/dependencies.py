"""Which graded cells use another exercise's answer by design: one mistake, one penalty otherwise.

A graded test cell judges the answer cell it follows in the notebook. Where its exercise is built
on an earlier answer (a MultiHeadAttention that calls the student's split_heads, a trained model
built from the student's CharLM), its check module declares so with :func:`depends_on`, naming
the test cells that judge that earlier answer; a mistake in that answer may then cost this cell
too, and this cell's failures start by saying so (:func:`dependency_note`). Any other cell that
fails for it is a double penalty (tests/test_mutants.py checks every mutant of the corpus against
these declarations, and every answer a check requires against them).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from autograder.authoring.check_modules import import_checks

# (assignment, answer cell) -> the graded cells of other exercises that use that answer
_USED_BY: dict[tuple[str, str], set[str]] = {}
# (assignment, answer cell) -> the answer's own test cells, which judge it
_JUDGED_IN: dict[tuple[str, str], tuple[str, ...]] = {}
# (assignment, graded cell): cells whose answer may call those answers or not, as its author chose
_BY_CHOICE: set[tuple[str, str]] = set()


def depends_on(
    assignment: str,
    graded_cells: Sequence[str],
    answers: Mapping[str, Sequence[str]],
    *,
    by_design: bool = True,
) -> None:
    """Declare that the test cells ``graded_cells`` use the student's answer cells ``answers``
    (grade_id -> the test cells that judge that answer) by design, so a mistake in one of those
    may cost them points too; ``by_design=False`` where the statement leaves it to the student
    whether this cell's answer calls them (its note then says that it may)."""
    if isinstance(graded_cells, str):
        raise TypeError("graded_cells must be a sequence of grade_ids, not one string")
    if not by_design:
        _BY_CHOICE.update((assignment, cell) for cell in graded_cells)
    for answer, judged_in in answers.items():
        if isinstance(judged_in, str) or not judged_in:
            raise TypeError(f"{answer}: name the test cells that judge it, as a sequence")
        known = _JUDGED_IN.setdefault((assignment, answer), tuple(judged_in))
        if known != tuple(judged_in):
            raise ValueError(f"{assignment}/{answer} is judged in {known}, not {judged_in}")
        _USED_BY.setdefault((assignment, answer), set()).update(graded_cells)


def dependents(assignment: str, answer: str) -> frozenset[str]:
    """The test cells of other exercises that declared they use ``answer`` (checks imported)."""
    import_checks(assignment)
    return frozenset(_USED_BY.get((assignment, answer), ()))


def declared(assignment: str) -> dict[str, frozenset[str]]:
    """answer cell -> its declared dependent test cells, for every declaration of ``assignment``."""
    import_checks(assignment)
    return {a: frozenset(cells) for (name, a), cells in _USED_BY.items() if name == assignment}


def answers_used_by(assignment: str, grade_id: str) -> list[str]:
    """The answer cells that the test cell ``grade_id`` declared it uses, sorted."""
    return sorted(answer for answer, cells in declared(assignment).items() if grade_id in cells)


def judged_in(assignment: str, answer: str) -> tuple[str, ...]:
    """The test cells declared to judge ``answer`` (empty when no cell depends on it)."""
    import_checks(assignment)
    return _JUDGED_IN.get((assignment, answer), ())


def dependency_note(assignment: str, grade_id: str, full_marks: Callable[[str], bool]) -> str:
    """The first words of a failure in ``grade_id`` when an answer it uses is wrong, else "".

    full_marks: whether a test cell earns all its points (it runs that cell's checks).
    """
    wrong = []
    for (name, answer), cells in sorted(_USED_BY.items()):
        if name != assignment or grade_id not in cells:
            continue
        failing = [cell for cell in _JUDGED_IN[(name, answer)] if not full_marks(cell)]
        if failing:
            wrong.append(f"`{answer}` (which fails {', '.join(failing)})")
    if not wrong:
        return ""
    if (assignment, grade_id) in _BY_CHOICE:
        return (
            f"this cell's answer may call your answer cell {' and '.join(wrong)}: if it does, "
            "fix that first, then read this message again. "
        )
    return (
        f"this cell uses your answer cell {' and '.join(wrong)}: fix that first, then read "
        "this message again. "
    )
