"""The test suite runs autograder as grading runs it, and imports nbformat without jsonschema's
IRI grammar (pyproject.toml loads autograder.suite.before_plugins before the other plugins)."""

from __future__ import annotations

import importlib
import sys

import pytest
from _pytest.assertion.rewrite import AssertionRewritingHook

# A module pytest has rewritten was loaded by its hook, with asserts that explain themselves
# differently from the ones grading runs.
AUTOGRADER_MODULES = [
    "autograder",
    "autograder.authoring.registry",
    "autograder.authoring.diagnosis",
    "autograder.checks.a01_attention",
    "autograder.pipeline.engines.batch",
]


@pytest.mark.parametrize("name", AUTOGRADER_MODULES)
def test_pytest_rewrites_the_asserts_of_no_autograder_module(name: str):
    module = importlib.import_module(name)
    assert not isinstance(module.__loader__, AssertionRewritingHook), name


def test_nbformat_came_after_autograder_so_the_iri_grammar_was_skipped():
    import nbformat  # noqa: F401  (nbval imported it already, as a plugin)

    assert sys.modules.get("rfc3987_syntax", "absent") is None
