"""Taking the student's definitions in a check: ``require``, which enforces the bans that a name
brings (:mod:`.reference_bans`) and records what each cell used."""

from __future__ import annotations

import inspect
from typing import Any

from autograder.authoring.reference_bans import enforce_bans
from autograder.authoring.registry import Namespace, fail, running_check, took


def require(namespace: Namespace, name: str, kind: type | None = None) -> Any:
    """The submission's definition of ``name``, or a clear failure if it is missing.

    Inside a check, a reference ban declared for ``name`` (:func:`.reference_bans.ban`) is
    enforced first, so every cell whose checks use an exercise's answer carries that exercise's
    ban.
    """
    if name not in namespace:
        fail(f"`{name}` is not defined: did you rename or delete it, or skip running its cell?")
    value = namespace[name]
    took(name)
    if kind is not None and not (
        isinstance(value, kind) or (kind is type and inspect.isclass(value))
    ):
        fail(f"`{name}` should be a {kind.__name__}, got {type(value).__name__}")
    enforce_bans(namespace, name)
    entry = running_check()
    if entry is not None:
        REQUIRED.add((entry.assignment, entry.grade_id, name))
    return value


# (assignment, graded cell, name): every name a check of that cell has required, in this
# process (tests/test_mutants.py holds them to the cells' declared dependencies)
REQUIRED: set[tuple[str, str, str]] = set()
