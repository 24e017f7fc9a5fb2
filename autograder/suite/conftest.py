"""Run the hidden checks against one submission: pytest autograder/suite --submission NB.ipynb"""

from pathlib import Path

import pytest

from autograder.authoring.registry import checks_for
from autograder.suite.submission import Submission, load_submission


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
