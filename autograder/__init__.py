"""Hidden checks for the Attention Lab assignments. Instructors only: never release this folder.

Every graded test cell of a solution notebook ends with a hidden part of one line,

    run_hidden_checks("01_attention", "test_attention_rows_sum_to_one", globals())

which runs the checks registered for that cell against the student's definitions. The same
checks run in pytest against any submission (see ``autograder.suite.submission``).
"""

import sys

# nbformat imports jsonschema, which builds an IRI grammar (rfc3987_syntax) for ~0.8 s of CPU at
# import; notebook schemas check no IRI format.  Skipped in every process that imports this
# package before nbformat: the grading command, the workers' forkserver, whose preload is on the
# critical path of every batch, and the test suite's processes (autograder/suite/before_plugins.py).
# isolation/runner.py does the same inside the sandbox.
sys.modules.setdefault("rfc3987_syntax", None)  # type: ignore[arg-type]

from autograder.authoring.registry import (  # noqa: E402
    CheckFailed,
    check,
    checks_for,
    run_hidden_checks,
)

__all__ = ["CheckFailed", "check", "checks_for", "run_hidden_checks"]
