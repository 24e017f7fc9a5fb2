"""The ``autograder/__init__.py`` that the sandbox sees: hidden checks only reach the judge.

autograder/isolation/staging.py copies this file into the sandbox as the package's __init__.
The grading run never calls this: the plain kernel hands the judge its namespace itself after
each graded test cell (autograder/isolation/plain_kernel.py), and the test cells it runs hold no
hidden line.  A call from a cell is still passed on, with the cells' namespace, so that the judge
refuses it and the grader learns of it.
"""


def run_hidden_checks(assignment, grade_id, namespace=None):  # noqa: ANN001, ANN201, ARG001
    """Hand the hidden checks of ``grade_id`` to the judge, outside this process."""
    import sys

    # Imported here, not above: the runner shares this package and needs no torch.
    from autograder.judging.kernel import checkpoint

    checkpoint(assignment, grade_id, sys.modules["__main__"].__dict__)
