"""One mistake, one charge across answer cells: a cell that fails only because an answer cell it
uses is wrong.

A test cell that declares it uses another exercise's answer (``dependencies.depends_on``: 02's
MultiHeadAttention calls the student's ``split_heads``) can fail for that answer's mistake alone,
a mistake its own cells were charged for already.  Once every graded cell of the submission has
been judged, each such cell is graded again with the course's answers to the wrong answer cells
defined in the student's namespace in place of the student's, and nothing else changed.  Where
every check then passes, the cell fails only because of those answers: it is a
:class:`~autograder.authoring.registry.Repeat` of their mistake, not charged again (unless the
course charges again).  Where any check fails, or the experiment cannot run, the cell keeps its
grade: nothing is waived on a guess.  Nor where an answer it uses failed a gate (a reference
called instead of implemented costs every cell that uses it) or was never judged.

Why last: the course's answers run in the student's process.  Any answer cell that ran after them
could keep them and hand them in as its own, so the experiment waits until no answer cell of the
submission is left to run.  What its runs compute is never shown: only whether every check passed.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping, MutableMapping, Sequence
from dataclasses import replace
from typing import Any

from autograder.authoring import registry
from autograder.authoring.dependencies import answers_used_by, judged_in
from autograder.judging.kernel import restore

# answer cells -> a context in which the course's answers to them are defined in the namespace
# the checks judge, in place of the student's
Substitute = Callable[[Sequence[str]], contextlib.AbstractContextManager[None]]


def charged_elsewhere(
    assignment: str,
    grades: Mapping[str, registry.CellGrade],
    namespace: registry.Namespace,
    substitute: Substitute,
) -> dict[str, registry.CellGrade]:
    """``grades`` (every graded cell of one submission, judged), with each cell that fails only
    because of wrong answer cells it uses graded as a repeat of their mistake (see the module's
    docstring).  Outside ``registry.one_submission`` nothing changes."""
    again = registry.charges_again()
    graded = dict(grades)
    if again is None:
        return graded
    for grade_id, grade in grades.items():
        if grade.full_marks or grade.repeat is not None or not grade.checks:
            continue
        wrong = {
            answer: failing
            for answer in answers_used_by(assignment, grade_id)
            if (failing := [c for c in judged_in(assignment, answer) if _lost_points(grades, c)])
        }
        if not wrong or not all(_charged(grades[c]) for cells in wrong.values() for c in cells):
            continue
        try:
            with registry.experiment(), substitute(list(wrong)):
                tried = registry.grade_cell(assignment, grade_id, namespace)
        except Exception:  # noqa: BLE001 - no experiment, no waiver: the cell keeps its grade
            continue
        if not tried.checks or not all(check.passed for check in tried.checks):
            continue
        names = " and ".join(f"`{answer}`" for answer in wrong)
        cells = ", ".join(dict.fromkeys(c for failing in wrong.values() for c in failing))
        graded[grade_id] = replace(
            grade,
            repeat=registry.Repeat(
                f"the answer cell{'s' if len(wrong) > 1 else ''} {names} it uses",
                cells,
                waived=not again,
                graded_with=f"the course's {names} in place of yours",
            ),
        )
    return graded


def _lost_points(grades: Mapping[str, registry.CellGrade], cell: str) -> bool:
    return cell in grades and not grades[cell].full_marks


def _charged(grade: registry.CellGrade) -> bool:
    """Whether a cell lost points for a mistake in the answer it judges: its checks ran, and no
    gate failed.  A failing gate is a reference called instead of implemented (its ban costs
    every cell that uses the answer, by design) or randomness in eval mode: never waived."""
    return (
        bool(grade.checks)
        and not grade.unjudged
        and not any(check.gate and not check.passed for check in grade.checks)
    )


@contextlib.contextmanager
def defined_here(
    namespace: MutableMapping[str, Any], course_answers: Mapping[str, str], answers: Sequence[str]
) -> Iterator[None]:
    """The course's answers to ``answers`` defined in ``namespace`` (a dict of the student's
    globals, in this process), every name they bind restored afterwards."""
    before = dict(namespace)
    try:
        for answer in answers:
            code = compile(course_answers[answer], f"<the course's answer {answer}>", "exec")
            exec(code, namespace)  # noqa: S102 - the course's own answer, never the student's
        yield
    finally:
        restore(namespace, before)
