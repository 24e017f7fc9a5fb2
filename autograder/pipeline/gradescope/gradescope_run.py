"""The Python side of the Gradescope zip's ``run_autograder``: grade the one submission.

``python -m autograder.pipeline.gradescope.gradescope_run ROOT`` (ROOT is ``/autograder`` on
Gradescope) finds the notebook in ``ROOT/submission`` (the only ``.ipynb`` there, or the one named
``ASSIGNMENT.ipynb``), puts it in a scratch copy of the zip's ``course/`` as the submission of
one student, grades it with the sandboxed batch grader
(:func:`autograder.pipeline.engines.batch.grade`, with the grading command's default limits) and
copies the ``results.json`` that recording the grade writes
(:mod:`autograder.pipeline.gradescope.gradescope`) to ``ROOT/results/results.json``.

Whatever fails (no notebook, no course secret, no sandbox, a crash of the grader) still ends in a
valid results.json: score 0 and a message that says what went wrong, written in one step, so
that no grade is lost in silence.  The exit status is 0 once a results.json is written.

Gradescope applies its own late policy, so nothing here does: the zip's gradebook gives the
assignment no due date and the submission no time, so no late penalty is recorded.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import time
import traceback
from pathlib import Path

from autograder.pipeline.gradescope.gradescope_zip import (
    CONFIG,
    DEVELOPMENT,
    SECRET_ENV,
    SECRET_FILE,
    SECRET_FROM_ENV,
    SECRET_IN_ZIP,
)

# The student id of the one submission in the scratch course.
STUDENT = "submission"
LATENESS = "Lateness: Gradescope's late policy applies; no late penalty is taken here."


class NotGraded(Exception):
    """A reason this submission cannot be graded, in words for the student."""


def find_notebook(folder: Path, assignment: str) -> Path:
    """The submitted notebook: the only ``.ipynb`` file under ``folder`` (checkpoints and links
    left out), or the one named ``ASSIGNMENT.ipynb`` among several."""
    found = sorted(
        path
        for path in folder.rglob("*.ipynb")
        if ".ipynb_checkpoints" not in path.parts and path.is_file() and not path.is_symlink()
    )
    if len(found) == 1:
        return found[0]
    named = [path for path in found if path.name == f"{assignment}.ipynb"]
    if len(named) == 1:
        return named[0]
    if not found:
        raise NotGraded(f"your submission holds no notebook: upload {assignment}.ipynb")
    names = ", ".join(str(path.relative_to(folder)) for path in found)
    raise NotGraded(
        f"your submission holds {len(found)} notebooks ({names}), and not one of them is named "
        f"{assignment}.ipynb: upload that one notebook"
    )


def course_secret_of(source: Path, mode: str) -> bytes:
    """The secret hidden inputs derive from, where the zip's gradescope.json says."""
    from autograder.authoring.hidden_seeds import DEVELOPMENT_SECRET
    from autograder.pipeline.course.course_secret import parse_secret

    if mode == SECRET_IN_ZIP:
        return parse_secret((source / SECRET_FILE).read_text(), f"{SECRET_FILE} of the zip")
    if mode == SECRET_FROM_ENV:
        text = os.environ.pop(SECRET_ENV, "")  # no process started from here inherits it
        if not text:
            raise NotGraded(
                f"the autograder reads its course secret from ${SECRET_ENV}, which is not set "
                "(course staff: see docs/teaching.md, Grading on Gradescope)"
            )
        return parse_secret(text, f"${SECRET_ENV}")
    if mode == DEVELOPMENT:
        return DEVELOPMENT_SECRET
    raise NotGraded(f"{CONFIG} names no known source of the course secret: {mode!r}")


def grade(root: Path) -> dict:
    """Grade the submission in ``root/submission``; its results.json object."""
    from autograder.pipeline import cli
    from autograder.pipeline.course.course import Course
    from autograder.pipeline.engines import batch
    from autograder.pipeline.records.grade_record import grading_folder

    source = root / "source"
    config = json.loads((source / CONFIG).read_text())
    assignment = config["assignment"]
    notebook = find_notebook(root / "submission", assignment)
    secret = course_secret_of(source, config["secret"])
    settings = cli._settings(cli._parser().parse_args(["grade", assignment]))
    with tempfile.TemporaryDirectory(prefix="attention-lab-gradescope-") as scratch:
        course_root = Path(scratch) / "course"
        shutil.copytree(source / "course", course_root)
        folder = course_root / "grading" / "submitted" / STUDENT / assignment
        folder.mkdir(parents=True)
        shutil.copyfile(notebook, folder / f"{assignment}.ipynb")  # no timestamp: no lateness
        course = Course.load(course_root)
        grader = Path(batch.__file__).parents[2]
        print(f"grading {notebook} as {assignment} with {grader}", file=sys.stderr, flush=True)
        (outcome,) = batch.grade(
            assignment,
            course,
            students=[STUDENT],
            workers=1,
            settings=settings,
            stage=lambda text: print(text, file=sys.stderr, flush=True),
            secret=secret,
        )
        print(f"verdict: {outcome.verdict}; {outcome.notes}", file=sys.stderr, flush=True)
        written = grading_folder(course.coursedir) / "gradescope" / STUDENT / assignment
        try:
            results = json.loads((written / "results.json").read_text())
        except FileNotFoundError:  # not recorded: a failure of the grader, not of the student
            why = "; ".join(outcome.notes) or outcome.verdict
            raise RuntimeError(f"the grade was not recorded ({outcome.verdict}): {why}") from None
    penalty = results.get("extra_data", {}).get("late_penalty", 0)
    if penalty:
        raise RuntimeError(f"a late penalty of {penalty:g} was recorded, which Gradescope's owns")
    results["output"] = f"{results.get('output', '')}\n{LATENESS}".lstrip("\n")
    return results


def not_graded(why: str) -> dict:
    """The results.json of a submission that could not be graded: score 0, and why."""
    return {
        "score": 0.0,
        "output": (
            f"This submission was not graded: {why}. Its score of 0 is a placeholder, not a "
            "grade: fix what is said and submit again, or tell the course staff."
        ),
        "stdout_visibility": "hidden",
        "tests": [],
    }


def write_results(path: Path, results: dict) -> None:
    """Write ``results`` to ``path`` in one step: never a half-written file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.partial")
    partial.write_text(json.dumps(results, indent=1) + "\n")
    partial.replace(path)


def main(argv: list[str] | None = None) -> int:
    """Grade ``ROOT/submission`` into ``ROOT/results/results.json``; 0 once it is written."""
    args = sys.argv[1:] if argv is None else argv
    root = Path(args[0] if args else "/autograder")
    started = time.monotonic()
    try:
        results = grade(root)
    except NotGraded as problem:
        results = not_graded(str(problem))
    except BaseException as error:  # noqa: BLE001 - said in results.json, with a 0 in place
        traceback.print_exc()
        results = not_graded(
            f"the autograder failed ({type(error).__name__}: {error}); this is not your "
            "notebook's fault"
        )
    results["execution_time"] = round(time.monotonic() - started, 1)
    write_results(root / "results" / "results.json", results)
    return 0


if __name__ == "__main__":
    status = main()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)  # as python -m autograder: the workers are ended, skip freeing every module
