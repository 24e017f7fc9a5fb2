"""Where the checks of each assignment live, and importing them, which registers them.

Its own module, below both the registry (:func:`~autograder.authoring.registry.checks_for`) and
the dependency declarations (autograder/authoring/dependencies.py): each imports an assignment's
checks before reading what they registered or declared, and neither needs the other for that.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

CHECKS_FOLDER = Path(__file__).resolve().parents[1] / "checks"
# autograder/checks/a03_transformer_block.py, or the package a03_transformer_block/, registers
# the checks of assignment 03_transformer_block.
CHECK_MODULE_NAME = re.compile(r"a(\d\d_[a-z][a-z0-9_]*)")


def check_modules(folder: Path = CHECKS_FOLDER) -> dict[str, str]:
    """assignment -> the module under autograder.checks that registers its checks, found by
    name: a module ``aNN_<name>.py`` or a package ``aNN_<name>/`` serves ``NN_<name>``."""
    found = {}
    for path in folder.iterdir():
        name = path.name.removesuffix(".py") if path.is_file() else path.name
        is_module = path.suffix == ".py" or (path / "__init__.py").is_file()
        match = CHECK_MODULE_NAME.fullmatch(name)
        if match and is_module:
            found[match[1]] = name
    return dict(sorted(found.items()))


def import_checks(assignment: str) -> None:
    """Import the module that registers the checks of ``assignment`` (once: Python keeps it)."""
    modules = check_modules()
    if assignment not in modules:
        raise ValueError(
            f"unknown assignment {assignment!r}: no autograder/checks/a{assignment}.py or "
            f"package a{assignment}/; the assignments with checks are {sorted(modules)}"
        )
    importlib.import_module(f"autograder.checks.{modules[assignment]}")
