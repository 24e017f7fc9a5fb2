"""Hidden checks for the Attention Lab assignments. Instructors only: never release this folder.

Every graded test cell of a solution notebook ends with a hidden part of one line,

    run_hidden_checks("01_attention", "test_attention_rows_sum_to_one", globals())

which runs the checks registered for that cell against the student's definitions. The same
checks run in pytest against any submission (see ``autograder.suite.submission``).
"""

from autograder.authoring.registry import CheckFailed, check, checks_for, run_hidden_checks

__all__ = ["CheckFailed", "check", "checks_for", "run_hidden_checks"]
