"""A test cell's visible checks judge its own exercise: a mistake elsewhere costs it nothing.

Hidden checks already use the reference (or the student's version only when it is right) where
they need another exercise's function; this holds the visible asserts of the cells that used to
lean on the student's other answers to the same rule.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from autograder.suite.submission import DEMO_TAG, load_submission
from tests.test_mutants import CORPUS, build, visible_part

# (assignment, test cell, an answer cell of another exercise that the test cell must not judge)
INDEPENDENT = [
    ("02_multi_head", "test_merge_heads", "split_heads"),
    ("03_transformer_block", "test_build_vocab", "clean"),
]


@pytest.mark.slow
@pytest.mark.parametrize(("assignment", "grade_id", "other"), INDEPENDENT)
def test_a_wrong_answer_elsewhere_passes_the_visible_checks(
    assignment: str, grade_id: str, other: str, tmp_path: Path
):
    visible = visible_part(assignment, grade_id)
    wrong = [
        m
        for m in CORPUS
        if m.assignment == assignment and not m.is_correct and set(m.patches) == {other}
    ]
    assert wrong, f"no mutant of {other} alone"
    for mutant in wrong:
        path = build(mutant, tmp_path)
        namespace = load_submission(path, skip_tags=(DEMO_TAG,)).namespace
        exec(compile(visible, f"<{grade_id}>", "exec"), namespace)  # raises if it penalises
