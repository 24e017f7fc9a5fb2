"""The note that starts a failing cell's message when an answer it uses is wrong says "uses"
only where the statement makes the cell use it; where the student chooses, it says "may call"
(02's heads_switched_off, which blind answer j02-02 built on its own wrong split_heads)."""

from __future__ import annotations

from autograder.authoring.dependencies import dependency_note, depends_on

ASSIGNMENT = "99_dependency_note_test"  # no such assignment: the declarations stay apart


def test_a_cell_built_on_an_answer_by_design_says_it_uses_it():
    depends_on(ASSIGNMENT, ["test_built"], {"part": ["test_part"]})
    note = dependency_note(ASSIGNMENT, "test_built", lambda cell: cell != "test_part")
    assert note.startswith("this cell uses your answer cell `part` (which fails test_part)")


def test_a_cell_whose_answer_may_call_it_says_that_it_may():
    depends_on(ASSIGNMENT, ["test_chosen"], {"part": ["test_part"]}, by_design=False)
    note = dependency_note(ASSIGNMENT, "test_chosen", lambda cell: cell != "test_part")
    assert note.startswith(
        "this cell's answer may call your answer cell `part` (which fails test_part): if it does"
    )
    assert dependency_note(ASSIGNMENT, "test_chosen", lambda cell: True) == ""
