"""One test per hidden check; a failure shows the check's diagnosis, never its source."""

import pytest

from autograder.authoring.registry import Check, CheckFailed, run_check
from autograder.suite.submission import Submission


def test_hidden_check(hidden_check: Check, submission: Submission) -> None:
    try:
        run_check(hidden_check, submission.namespace)
    except CheckFailed as failure:
        pytest.fail(str(failure), pytrace=False)
