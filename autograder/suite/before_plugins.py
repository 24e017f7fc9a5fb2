"""Loaded by the test suite before pytest's other plugins (``-p autograder.suite.before_plugins``
in pyproject.toml): importing the autograder package first makes nbval's nbformat skip
jsonschema's IRI grammar in every pytest process (autograder/__init__.py says why).

Only this module is named as a plugin: pytest rewrites the asserts of a plugin and of every
module below it, and the rest of autograder must run in tests as it runs when grading.
"""
