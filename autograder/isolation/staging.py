"""The folder the sandbox imports from: attention_lab and the sandbox's side of autograder.

Of autograder, the sandbox gets only the runner and the kernel's side of judging; its
``autograder/__init__.py`` is :mod:`autograder.isolation.inside`, whose ``run_hidden_checks``
hands the checks to the judge.  No hidden check is ever on disk inside the sandbox.
"""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

AUTOGRADER = Path(__file__).resolve().parents[1]
# Found without importing it: importing attention_lab would import torch into the grader's parent.
ATTENTION_LAB = Path(importlib.util.find_spec("attention_lab").origin).resolve().parent


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


def build_staging(folder: Path) -> Path:
    """Fill ``folder`` with what the sandbox may import, readable by the sandbox's user."""
    package = folder / "autograder"
    source = AUTOGRADER
    for part in ("isolation", "judging"):
        (package / part).mkdir(parents=True)
        shutil.copy(source / part / "__init__.py", package / part / "__init__.py")
    shutil.copy(source / "isolation" / "inside.py", package / "__init__.py")
    for name in ("isolation/runner.py", "judging/protocol.py", "judging/kernel.py"):
        shutil.copy(source / name, package / name)
    shutil.copytree(
        ATTENTION_LAB,
        folder / "attention_lab",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    for path in [folder, *folder.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    return folder
