"""One student, one id: every way an id comes in reads a decomposed-Unicode name as the composed
one (NFC), and an id that prints like another's is refused for the newer one while the class
goes on."""

from __future__ import annotations

import csv
import json
import shutil
import zipfile
from datetime import datetime, timedelta
from pathlib import Path

import nbformat
import pytest
from nbgrader.api import Gradebook

from autograder.pipeline.cli import main
from autograder.pipeline.course.course import Course, find_submissions, record
from autograder.pipeline.course.extensions import pending
from autograder.pipeline.engines.batch import without_twins
from autograder.pipeline.engines.jobs_and_outcomes import Outcome
from autograder.pipeline.intake.roster import read_roster
from autograder.pipeline.intake.student_ids import (
    _reading,
    canonical,
    look_alike,
    spelled_as_recorded,
    twin_of,
)
from autograder.pipeline.intake.zip_intake import unpack_canvas_zip
from autograder.pipeline.records.exports import CanvasExportPlugin
from tests.course_setup import ASSIGNMENT, course_with_penalties, export_with, hand_in, released

COMPOSED = "zo\u00eb"
DECOMPOSED = "zoe\u0308"  # zoe + combining diaeresis: prints as zoë


def test_the_id_rule_in_one_place():
    assert canonical(DECOMPOSED) == COMPOSED != DECOMPOSED
    assert look_alike("kim\uff11") == look_alike("kim1")  # full-width 1
    assert twin_of("kim1", ["kim\uff11", "kim1", "ada"]) == "kim\uff11"
    assert twin_of("kim1", ["kim1", "ada"]) is None
    # Cyrillic and Greek letters drawn like Latin ones: "аlice" (Cyrillic а), "ΑDA" (Greek Α)
    assert twin_of("alice", ["\u0430lice", "ada"]) == "\u0430lice"
    assert twin_of("ADA", ["\u0391DA"]) == "\u0391DA"
    assert twin_of("c\u043ep", ["cop"]) == "cop"  # Cyrillic о
    # Armenian, Cherokee and Latin-extended letters drawn like Latin ones
    assert twin_of("joshua", ["j\u0585sh\u057da"]) == "j\u0585sh\u057da"  # Armenian օ, ս
    assert twin_of("MAGDA", ["\u13b7\u13aa\u13c0\u13a0\u13aa"]) is not None  # Cherokee
    assert twin_of("gil", ["\u0261\u0131l"]) == "\u0261\u0131l"  # script g, dotless i
    # A Greek or Cyrillic name that does not print like a Latin one stays a name of its own.
    assert twin_of("Nikos", ["\u039d\u03b9\u03ba\u03bf\u03c2", "\u0434\u0430\u0448\u0430"]) is None
    assert twin_of("Anna", ["\u0531\u0576\u0576\u0561"]) is None  # Armenian Աննա
    assert spelled_as_recorded(DECOMPOSED, []) == COMPOSED
    assert spelled_as_recorded(COMPOSED, [DECOMPOSED]) == DECOMPOSED  # a legacy grade stays hers


def test_names_are_compared_by_unicodes_confusables_without_invisible_characters():
    # The two names of issue 39's attack round, each graded beside "honest-correct" before.
    assert twin_of("honest\u2010correct", ["honest-correct"]) == "honest-correct"  # HYPHEN
    assert twin_of("honest-correct\u034f", ["honest-correct"]) == "honest-correct"  # CGJ
    # Default-ignorable characters print as nothing, wherever they stand.
    for invisible in ("\u200b", "\u00ad", "\u2060", "\ufe0f", "\u180b", "\u3164", "\U000e0101"):
        assert look_alike(f"ad{invisible}a") == look_alike("ada"), ascii(invisible)
    # Pairs from Unicode's confusables data (UTS #39), with NFKC's full-width letters.
    assert twin_of("ada", ["\uff41\uff44\uff41", "\u0430d\u0430"]) == "\u0430d\u0430"
    assert twin_of("o'brien", ["o\u2019brien"]) == "o\u2019brien"  # RIGHT SINGLE QUOTATION MARK
    assert twin_of("ada-lee", ["ada\u2013lee", "ada\u2212lee"]) == "ada\u2013lee"  # en dash, minus
    assert twin_of("kamal", ["karnal"]) == "karnal"  # "rn" reads as "m"
    # A letter and a digit the data reads as one ("l", "1", "I"; "O", "0") make one name too,
    # though rosters hold real pairs like them: the newer is refused, to be renamed.
    assert twin_of("bob1", ["bobl", "bobI"]) == "bobI"
    assert twin_of("j0e", ["jOe"]) == "jOe"
    # Names that print differently stay apart.
    assert twin_of("anna", ["anne", "ana", "Anna", "ann\u0430\u0301"]) is None
    assert twin_of("ada-lee", ["ada_lee", "ada.lee", "adalee"]) is None


def test_the_confusables_data_is_read_from_its_package_as_prototypes():
    drop, reads_as = _reading()
    assert drop("ad\u034fa\u200b") == "ada"
    assert reads_as["\u2010"] == "-" and reads_as["\u0430"] == "a" and reads_as["m"] == "rn"
    assert reads_as["1"] == reads_as["I"] == "l"
    assert "a" not in reads_as and len(reads_as) > 6000
    # A prototype reads as itself, so each character is read once, as UTS #39 reads it.
    assert all(reads_as.get(c, c) == c for to in reads_as.values() for c in to)


def test_a_roster_reads_ids_composed_and_leaves_out_a_later_look_alike(tmp_path: Path):
    path = tmp_path / "roster.csv"
    path.write_text(
        f"student,canvas_id\n{DECOMPOSED},101\nkim\uff11,102\nkim1,103\n{COMPOSED},104\nada,105\n"
    )
    roster = read_roster(path)
    assert [(m.student, m.canvas_id) for m in roster.members] == [
        (COMPOSED, "101"),
        ("kim\uff11", "102"),
        ("ada", "105"),
    ]
    assert len(roster.refused) == 2
    assert "student 'kim1' prints like 'kim\\uff11', an earlier line" in roster.refused[0]
    assert "student 'zo\\xeb' prints like 'zoe\\u0308'" in roster.refused[1]


def test_a_canvas_download_collects_a_decomposed_roster_id_composed(tmp_path: Path):
    root = tmp_path / "course"
    root.mkdir()
    shutil.copy(Path(__file__).resolve().parents[1] / "nbgrader_config.py", root)
    roster = tmp_path / "roster.csv"
    roster.write_text(f"student,canvas_id\n{DECOMPOSED},101\nada,102\nzo\u00eb,103\n")
    download = tmp_path / "submissions.zip"
    with zipfile.ZipFile(download, "w") as archive:
        archive.writestr(f"zoe_101_1_{ASSIGNMENT}.ipynb", b"zoe's")
        archive.writestr(f"ada_102_2_{ASSIGNMENT}.ipynb", b"ada's")
        archive.writestr(f"zoe_103_3_{ASSIGNMENT}.ipynb", b"the twin's")
    collected = unpack_canvas_zip(Course.load(root), ASSIGNMENT, download, roster)
    assert collected.students == ["ada", COMPOSED]
    assert any("prints like" in why for why in collected.refused), collected.refused
    assert any(
        why.startswith("'zoe_103_3_01_attention.ipynb': Canvas user 103")
        for why in collected.refused
    )
    folders = {p.name for p in (root / "grading" / "submitted").iterdir()}
    assert folders == {"ada", COMPOSED}
    notebook = root / "grading" / "submitted" / COMPOSED / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    assert notebook.read_bytes() == b"zoe's"


@pytest.fixture(scope="module")
def course(tmp_path_factory: pytest.TempPathFactory) -> Course:
    return course_with_penalties(tmp_path_factory.mktemp("ids"))


def _outcome(course: Course, student: str) -> Outcome:
    return Outcome(student, "ok", [], dict(nbformat.read(released(course), 4)), [], 0.0)


@pytest.mark.slow  # its course is generated by nbgrader: seconds
def test_every_entry_point_takes_a_decomposed_id_as_the_composed_one(
    course: Course, capsys, tmp_path: Path
):
    root = str(course.root)
    # extend, typed decomposed before her first grade: pending under the composed id.
    assert main(["extend", ASSIGNMENT, DECOMPOSED, "--days", "2", "--course", root]) == 0
    assert f"for {COMPOSED}: kept in the gradebook" in capsys.readouterr().out
    with Gradebook(course.coursedir.db_url, course.coursedir.course_id) as gb:
        assert pending(gb) == {(ASSIGNMENT, COMPOSED): 2 * 24 * 60.0}

    # Her folder is written decomposed, 25 h late (within the extension).
    folder = hand_in(course, DECOMPOSED, "2026-11-21 13:00:00 UTC")
    for typed in (COMPOSED, DECOMPOSED):  # grade --student, typed either way
        assert find_submissions(course, ASSIGNMENT, [typed]) == [
            (DECOMPOSED, folder / f"{ASSIGNMENT}.ipynb")
        ]
    found = find_submissions(course, ASSIGNMENT, [])
    [(kept, _)], refused = without_twins(found, recorded=set())
    assert kept == COMPOSED and refused == []
    record(course, ASSIGNMENT, _outcome(course, kept), folder)

    with Gradebook(course.coursedir.db_url, course.coursedir.course_id) as gb:
        assert [s.id for s in gb.students] == [COMPOSED]
        submission = gb.find_submission(ASSIGNMENT, COMPOSED)
        assert submission.extension == timedelta(days=2)  # the pending one, moved
        assert submission.timestamp == datetime(2026, 11, 21, 13, 0)  # read from her folder
        assert submission.late_submission_penalty == 0
        assert pending(gb) == {}
    results = course.root / "grading" / "gradescope" / COMPOSED / ASSIGNMENT / "results.json"
    assert json.loads(results.read_text())["score"] > 0

    # The Canvas export finds her from a roster that writes her id decomposed.
    roster = tmp_path / "roster.csv"
    roster.write_text(f"student,canvas_id\n{DECOMPOSED},101\n")
    dest = tmp_path / "canvas.csv"
    export_with(course, CanvasExportPlugin, roster=str(roster), to=str(dest))
    with dest.open(newline="") as handle:
        (row,) = list(csv.reader(handle))[2:]
    assert row[1] == "101" and float(row[5]) == json.loads(results.read_text())["score"]

    # extend with an id that prints like hers (full-width letters) is refused, saying why.
    wide = "\uff5a\uff4f\u00eb"
    assert main(["extend", ASSIGNMENT, wide, "--days", "1", "--course", root]) == 2
    assert "prints like 'zo\\xeb'" in capsys.readouterr().err


@pytest.mark.slow  # its course is generated by nbgrader: seconds
def test_a_look_alike_folder_of_a_graded_student_is_refused_and_the_class_goes_on(
    course: Course,
):
    hand_in(course, "kim1", "2026-11-20 11:00:00 UTC")
    record(course, ASSIGNMENT, _outcome(course, "kim1"))
    hand_in(course, "kim\uff11", "2026-11-20 11:00:00 UTC")
    hand_in(course, "lee", "2026-11-20 11:00:00 UTC")
    with Gradebook(course.coursedir.db_url, course.coursedir.course_id) as gb:
        recorded = {s.student.id for s in gb.find_assignment(ASSIGNMENT).submissions}
    found = [f for f in find_submissions(course, ASSIGNMENT, []) if f[0] != DECOMPOSED]
    kept, refused = without_twins(found, recorded)
    assert [s for s, _ in kept] == ["kim1", "lee"]
    assert [(o.student, o.verdict) for o in refused] == [("kim\\uff11", "invalid name")]
    assert "prints like 'kim1'" in refused[0].notes[0]
