"""The ``autograder/__init__.py`` that the sandbox sees: hidden checks only reach the judge.

autograder/isolation/staging.py copies this file into the sandbox as the package's __init__.
Whatever namespace a cell passes, the judge is served the notebook's own: the names the student's
cells defined.  Whether a call is judged at all is the judge's decision, not this module's.
"""


def _notebook_namespace():  # noqa: ANN202
    """The kernel's user namespace (the notebook's globals)."""
    from IPython import get_ipython

    shell = get_ipython()
    if shell is None:
        raise RuntimeError("the hidden checks run only in the notebook's kernel")
    return shell.user_ns


def run_hidden_checks(assignment, grade_id, namespace=None):  # noqa: ANN001, ANN201, ARG001
    """Hand the hidden checks of ``grade_id`` to the judge, outside this process."""
    # Imported here, not above: the runner shares this package and needs no torch.
    from autograder.judging.kernel import checkpoint

    checkpoint(assignment, grade_id, _notebook_namespace())


def judge_failed_cell(assignment, grade_id):  # noqa: ANN001, ANN201
    """After a graded cell failed before its hidden-check line, the runner calls this when the
    judge asks for it: the judge grades the cell's hidden checks all the same.  Silent: the cell
    already failed."""
    from autograder.judging.kernel import checkpoint

    try:
        checkpoint(assignment, grade_id, _notebook_namespace())
    except Exception:  # noqa: BLE001, S110 - the judge's grade is what counts, not this
        pass
