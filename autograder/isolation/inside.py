"""The ``autograder/__init__.py`` that the sandbox sees: hidden checks only reach the judge.

autograder/isolation/staging.py copies this file into the sandbox as the package's __init__.
"""

_reached = set()  # graded cells whose hidden-check line ran


def run_hidden_checks(assignment, grade_id, namespace):  # noqa: ANN001, ANN201 - as the real one
    """Hand the hidden checks of ``grade_id`` to the judge, outside this process."""
    # Imported here, not above: the runner shares this package and needs no torch.
    from autograder.judging.kernel import checkpoint

    _reached.add(grade_id)
    checkpoint(assignment, grade_id, namespace)


def judge_failed_cell(assignment, grade_id, namespace, public_failure):  # noqa: ANN001, ANN201
    """After a graded cell failed before its hidden-check line (the runner calls this), let the
    judge run the cell's checks anyway: its verdict fails the cell and puts the judge's diagnosis
    before ``public_failure``, the error that stopped the cell.  Silent: the cell already failed."""
    from autograder.judging.kernel import checkpoint

    if grade_id in _reached:
        return
    _reached.add(grade_id)
    try:
        checkpoint(assignment, grade_id, namespace, public_failure=str(public_failure))
    except Exception:  # noqa: BLE001, S110 - the judge's verdict is what counts, not this
        pass
