"""Names that print alike are one identity: the newer twin is refused, the class goes on."""

from __future__ import annotations

import os
import time
import unicodedata
from pathlib import Path

import pytest

from autograder.pipeline.engines.batch import without_twins

ASSIGNMENT = "01_attention"


def _hand_in(root: Path, student: str) -> tuple[str, Path]:
    folder = root / student / ASSIGNMENT
    folder.mkdir(parents=True)
    (folder / f"{ASSIGNMENT}.ipynb").write_text("{}")
    return student, folder / f"{ASSIGNMENT}.ipynb"


def test_the_newer_of_two_names_that_print_alike_is_refused(tmp_path: Path):
    composed = unicodedata.normalize("NFC", "zo\u00eb")
    decomposed = unicodedata.normalize("NFD", composed)  # zoe + combining diaeresis
    assert composed != decomposed
    first = _hand_in(tmp_path, composed)
    time.sleep(0.05)  # the inode change times differ
    second = _hand_in(tmp_path, decomposed)
    wide = _hand_in(tmp_path, "kim\uff11")  # full-width 1 beside kim1
    plain = _hand_in(tmp_path, "kim1")
    others = [_hand_in(tmp_path, name) for name in ("ada", "alan")]
    submitted = sorted([first, second, wide, plain, *others])

    kept, refused = without_twins(submitted, recorded=set())
    assert [s for s, _ in kept] == ["ada", "alan", "kim\uff11", composed]
    # A refused twin's row shows its name escaped: it never prints like the student kept.
    assert {o.student for o in refused} == {"zoe\\u0308", "kim1"}
    assert all(o.verdict == "invalid name" and o.notebook is None for o in refused)
    note = next(o.notes[0] for o in refused if o.student == "zoe\\u0308")
    assert "'zoe\\u0308' prints like 'zo\\xeb'" in note, note

    # A legacy id the gradebook holds (recorded before ids were normalised) keeps its spelling
    # and its grades, whichever folder is older.
    kept, refused = without_twins(submitted, recorded={decomposed, "kim1"})
    assert {s for s, _ in kept} == {"ada", "alan", decomposed, "kim1"}
    assert {o.student for o in refused} == {"zo\\xeb", "kim\\uff11"}
    assert os.path.exists(second[1])  # nothing is moved or deleted


def test_a_decomposed_folder_is_graded_under_the_composed_id(tmp_path: Path):
    decomposed = "zoe\u0308"
    older = _hand_in(tmp_path, decomposed)
    time.sleep(0.05)
    newer = _hand_in(tmp_path, "zo\u00eb")  # the same name, composed, handed in later
    kept, refused = without_twins([older, newer, _hand_in(tmp_path, "ada")], recorded=set())
    # The older folder is graded, under the one spelling every record holds (NFC); the newer
    # is refused under an escaped name, so the two rows never share an id.
    assert kept == [
        ("ada", tmp_path / "ada" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"),
        ("zo\u00eb", older[1]),
    ]
    assert [o.student for o in refused] == ["zo\\xeb"]


def test_a_dash_or_an_invisible_character_makes_no_new_student(tmp_path: Path):
    # Issue 39's attack round: each of these was graded as a student beside honest-correct.
    honest = _hand_in(tmp_path, "honest-correct")
    time.sleep(0.05)
    hyphen = _hand_in(tmp_path, "honest\u2010correct")  # U+2010 HYPHEN
    joiner = _hand_in(tmp_path, "honest-correct\u034f")  # COMBINING GRAPHEME JOINER
    kept, refused = without_twins(sorted([honest, hyphen, joiner]), recorded=set())
    assert kept == [honest]
    assert sorted((o.student, o.verdict) for o in refused) == [
        ("honest-correct\\u034f", "invalid name"),
        ("honest\\u2010correct", "invalid name"),
    ]
    assert all("prints like 'honest-correct'" in o.notes[0] for o in refused)


def test_a_letter_and_a_digit_that_print_alike_ask_for_a_new_name(tmp_path: Path):
    # Two real students, bobl and bob1, print alike in many fonts: the newer is not graded
    # until the instructor renames its folder.
    first = _hand_in(tmp_path, "bobl")
    time.sleep(0.05)
    second = _hand_in(tmp_path, "bob1")
    kept, refused = without_twins([second, first], recorded=set())
    assert kept == [first]
    [outcome] = refused
    assert (outcome.student, outcome.verdict) == ("bob1", "invalid name")
    assert "prints like 'bobl'" in outcome.notes[0] and "rename" in outcome.notes[0]


@pytest.mark.slow  # seconds: kept out of the fast tier
def test_a_name_typed_composed_finds_the_folder_written_decomposed(tmp_path: Path):
    from autograder.examples import build_course
    from autograder.pipeline.course.course import Course, find_submissions

    build_course(tmp_path, [])
    decomposed = "zoe\u0308"
    _hand_in(tmp_path / "grading" / "submitted", decomposed)
    found = find_submissions(Course.load(tmp_path), ASSIGNMENT, ["zo\u00eb"])
    assert [student for student, _ in found] == [decomposed]
