"""The folder the sandbox imports from: attention_lab as a student of the assignment has it, and
the sandbox's side of autograder.

Of attention_lab, a student of assignment N has the tools and the reference answers of the
assignments before N (``reference/aNN_<assignment>.py``, see :func:`copy_package`); the release
and the sandbox both take it from here. Of autograder, the sandbox gets only the runner, its
plain kernel, the kernel's side of judging and the private APIs that uses (private_apis.py); its
``autograder/__init__.py`` is :mod:`autograder.isolation.autograder_in_sandbox`, whose
``run_hidden_checks`` hands the checks to the judge.  No hidden check is ever on disk inside the
sandbox.
"""

from __future__ import annotations

import importlib.util
import re
import shutil
from pathlib import Path

AUTOGRADER = Path(__file__).resolve().parents[1]
# Found without importing it: importing attention_lab would import torch into the grader's parent.
ATTENTION_LAB = Path(importlib.util.find_spec("attention_lab").origin).resolve().parent
ASSIGNMENT = re.compile(r"(\d\d)_\w+")
# attention_lab/reference/a03_transformer_block.py answers assignment 03_transformer_block.
REFERENCE_MODULE = re.compile(r"a(\d\d)_\w+\.py")


def _number(assignment: str) -> int:
    """03 for ``03_transformer_block``."""
    match = ASSIGNMENT.fullmatch(assignment)
    if match is None:
        raise ValueError(
            f"expected an assignment name such as 03_transformer_block, got {assignment!r}"
        )
    return int(match.group(1))


def _answers(name: str) -> int:
    """The number of the assignment whose answers the reference module ``name`` holds."""
    match = REFERENCE_MODULE.fullmatch(name)
    if match is None:
        raise ValueError(
            f"attention_lab/reference/{name}: expected only modules named aNN_<assignment>.py, "
            "each holding the reference answers of assignment NN"
        )
    return int(match.group(1))


def copy_package(assignment: str, destination: Path, source: Path = ATTENTION_LAB) -> Path:
    """Copy attention_lab as a student of ``assignment`` has it to ``destination``: the tools and
    the reference modules of the assignments before it, none of this assignment or a later one."""
    number = _number(assignment)
    references = source / "reference"

    def left_out(folder: str, names: list[str]) -> set[str]:
        caches = {name for name in names if name == "__pycache__"}
        if Path(folder) != references:
            return caches
        modules = set(names) - caches - {"__init__.py"}
        return caches | {name for name in modules if _answers(name) >= number}

    shutil.copytree(source, destination, ignore=left_out)
    return destination


def secret_paths() -> list[Path]:
    """What the sandbox must not show: the autograder package (the hidden checks), and the
    checkout it was installed from (solutions/), when it is one.  The sandbox mounts only an
    allow-list, so these matter where they lie inside it (a non-editable install puts autograder
    in site-packages); the judge also gets them read-only."""
    checkout = AUTOGRADER.parent
    found = [AUTOGRADER]
    if (checkout / "pyproject.toml").is_file() and (checkout / "solutions").is_dir():
        found.append(checkout)
    return found


def build_staging(folder: Path, assignment: str) -> Path:
    """Fill ``folder`` with what the sandbox grading ``assignment`` may import, readable by the
    sandbox's user: attention_lab exactly as a student of ``assignment`` was given it."""
    package = folder / "autograder"
    source = AUTOGRADER
    for part in ("isolation", "judging"):
        (package / part).mkdir(parents=True)
        shutil.copy(source / part / "__init__.py", package / part / "__init__.py")
    shutil.copy(source / "isolation" / "autograder_in_sandbox.py", package / "__init__.py")
    for name in (
        "isolation/runner.py",
        "isolation/plain_kernel.py",
        "isolation/cell_files.py",
        "judging/protocol.py",
        "judging/kernel.py",
        "private_apis.py",
    ):
        shutil.copy(source / name, package / name)
    copy_package(assignment, folder / "attention_lab")
    for path in [folder, *folder.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    return folder
