"""Which hidden checks belong to which graded cell, and how a failure is reported."""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from autograder.authoring import student_errors

Namespace = Mapping[str, Any]
CheckFunction = Callable[[Namespace], None]
T = TypeVar("T")

# assignment id -> the module under autograder.checks that registers its checks
CHECK_MODULES = {
    "01_attention": "a01_attention",
    "02_multi_head": "a02_multi_head",
    "03_transformer_block": "a03_transformer_block",
    "04_depth": "a04_depth",
    "05_sentiment": "a05_sentiment",
    "06_char_lm": "a06_char_lm",
    "07_attention_at_scale": "a07_attention_at_scale",
}


# The label of a failure raised by a shared helper; run_check replaces it with the check's name.
HELPER_LABEL = "hidden check"


class CheckFailed(AssertionError):
    """A hidden check failed; the message names the likely misconception."""

    def __init__(self, check_name: str, diagnosis: str):
        super().__init__(f"[{check_name}] {diagnosis}")
        self.check_name = check_name
        self.diagnosis = diagnosis


@dataclass(frozen=True)
class Check:
    """One named hidden check attached to a graded cell."""

    assignment: str
    grade_id: str
    name: str
    function: CheckFunction


_REGISTRY: dict[tuple[str, str], list[Check]] = {}


def check(
    assignment: str, grade_id: str, name: str | None = None
) -> Callable[[CheckFunction], CheckFunction]:
    """Register ``function`` as a hidden check of the graded cell ``grade_id``, named ``name``
    (by default the function's own name)."""

    def register(function: CheckFunction) -> CheckFunction:
        entry = Check(assignment, grade_id, name or function.__name__, function)
        _REGISTRY.setdefault((assignment, grade_id), []).append(entry)
        return function

    return register


_REFERENCE_DATA: dict[str, list[Callable[[], Any]]] = {}


def reference_data(assignment: str) -> Callable[[Callable[[], T]], Callable[[], T]]:
    """Register a builder of hidden reference data that no submission changes: it runs once per
    process, and :func:`prepare` runs it before a grading worker takes its first submission.
    Student code must only ever get copies of what it builds."""

    def register(builder: Callable[[], T]) -> Callable[[], T]:
        cached = functools.cache(builder)
        _REFERENCE_DATA.setdefault(assignment, []).append(cached)
        return cached

    return register


def prepare(assignment: str) -> None:
    """Import the checks of ``assignment`` and build its reference data; unknown ones are let be."""
    if assignment in CHECK_MODULES:
        checks_for(assignment)
        for build in _REFERENCE_DATA.get(assignment, []):
            build()


def checks_for(assignment: str, grade_id: str | None = None) -> list[Check]:
    """The checks of one graded cell, or of every graded cell of the assignment."""
    if assignment not in CHECK_MODULES:
        raise ValueError(
            f"unknown assignment {assignment!r}; expected one of {sorted(CHECK_MODULES)}"
        )
    importlib.import_module(f"autograder.checks.{CHECK_MODULES[assignment]}")
    if grade_id is not None:
        found = _REGISTRY.get((assignment, grade_id))
        if not found:
            raise ValueError(f"no hidden checks registered for {assignment}/{grade_id}")
        return list(found)
    return [c for (a, _), entries in _REGISTRY.items() if a == assignment for c in entries]


_running: list[Check] = []  # the check being run, innermost last


def running_check() -> Check | None:
    """The check that :func:`run_check` is running now, if any."""
    return _running[-1] if _running else None


def run_check(entry: Check, namespace: Namespace) -> None:
    """Run one check; any failure becomes a CheckFailed that names the check (a reference ban
    keeps its own name)."""
    _running.append(entry)
    try:
        entry.function(namespace)
    except CheckFailed as failure:  # raised by a shared helper: label it with this check
        name = entry.name if failure.check_name == HELPER_LABEL else failure.check_name
        raise CheckFailed(name, failure.diagnosis) from None
    except NotImplementedError:
        raise CheckFailed(entry.name, "not implemented yet (the stub still raises)") from None
    except Exception as error:  # the student's code crashed inside the check
        raise CheckFailed(entry.name, student_errors.explain(error)) from None
    finally:
        _running.pop()


def run_hidden_checks(assignment: str, grade_id: str, namespace: Namespace) -> None:
    """Run every hidden check of a graded cell against the names in ``namespace``.

    Raises CheckFailed for the first failing check, with its name and diagnosis; feedback
    (autograder/pipeline/feedback.py) shows that line and never the check's source.
    """
    for entry in checks_for(assignment, grade_id):
        run_check(entry, namespace)
