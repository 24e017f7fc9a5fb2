"""Run the hidden checks against one submission: pytest autograder/suite --submission NB.ipynb"""

from pathlib import Path

import pytest

from autograder.authoring.registry import CellGrade, checks_for
from autograder.suite.submission import Submission, grade_submission, load_submission

_GRADES = pytest.StashKey[dict[str, CellGrade]]()
_POINTS = pytest.StashKey[dict[str, float]]()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--submission", type=Path, help="the notebook to grade")
    parser.addoption("--assignment", help="assignment id (default: the notebook's file name)")


def _target(config: pytest.Config) -> tuple[Path, str]:
    path = config.getoption("--submission")
    if path is None:
        raise pytest.UsageError("pass --submission path/to/<assignment>.ipynb")
    if not path.is_file():
        raise pytest.UsageError(f"--submission: no such notebook: {path}")
    return path, config.getoption("--assignment") or path.stem


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "hidden_check" in metafunc.fixturenames:
        _, assignment = _target(metafunc.config)
        entries = checks_for(assignment)
        metafunc.parametrize(
            "hidden_check", entries, ids=[f"{e.grade_id}::{e.name}" for e in entries]
        )


@pytest.fixture(scope="session")
def submission(pytestconfig: pytest.Config) -> Submission:
    path, assignment = _target(pytestconfig)
    return load_submission(path, assignment)


@pytest.fixture(scope="session")
def grades(pytestconfig: pytest.Config, submission: Submission) -> dict[str, CellGrade]:
    """Every graded cell's result, graded once, as the grading command scores it."""
    found = grade_submission(submission)
    pytestconfig.stash[_GRADES] = found
    pytestconfig.stash[_POINTS] = submission.points
    return found


def pytest_terminal_summary(terminalreporter, exitstatus, config: pytest.Config) -> None:  # noqa: ANN001
    """Each graded cell's score: its checks' share of the cell's points (partial credit)."""
    found = config.stash.get(_GRADES, None)
    if not found:
        return
    points = config.stash[_POINTS]
    terminalreporter.section("scores (hidden checks only; the visible checks are not run here)")
    for grade_id, result in found.items():
        passed = sum(c.passed for c in result.checks)
        earned = result.points(points.get(grade_id, 0.0))
        terminalreporter.write_line(
            f"{grade_id}: {earned:g} of {points.get(grade_id, 0.0):g} points "
            f"({passed} of {len(result.checks)} checks passed)"
        )
