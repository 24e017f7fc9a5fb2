"""One test per hidden check; a failure shows the check's diagnosis, never its source."""

import pytest

from autograder.authoring.registry import CellGrade, Check


def test_hidden_check(hidden_check: Check, grades: dict[str, CellGrade]) -> None:
    cell = grades[hidden_check.grade_id]
    result = next(c for c in cell.checks if c.name == hidden_check.name)
    if not result.passed:
        pytest.fail(f"[{result.name}] {result.diagnosis}", pytrace=False)
