"""Graded cells for tests of the records: built, as the grader builds them, from a cell's grade."""

from __future__ import annotations

from fractions import Fraction

from autograder.authoring.registry import CellGrade, CheckResult
from autograder.pipeline.engines.jobs_and_outcomes import GradedCell


def graded_cell(
    grade_id: str, max_points: float, score: float, diagnosis: str = "wrong", name: str = "check"
) -> GradedCell:
    """A cell that earned ``score`` of ``max_points``: a passing check weighted by ``score``
    (named ``name``), a failing one (``diagnosis``) by the rest."""
    earned, missed = Fraction(str(score)), Fraction(str(max_points)) - Fraction(str(score))
    checks = [CheckResult(name, float(earned), True)] if earned else []
    if missed or not checks:
        checks.append(CheckResult(f"{name} (missed)", float(missed or 1), False, diagnosis))
    grade = CellGrade(tuple(checks))
    return GradedCell(grade_id, grade, max_points, in_kernel_passed=grade.full_marks)
