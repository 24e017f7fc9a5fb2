"""Roster, Canvas zip intake and Gradescope results, each on its own (no grading)."""

from __future__ import annotations

import csv
import io
import json
import shutil
import stat
import zipfile
from pathlib import Path

import jsonschema
import pytest

from autograder.pipeline.course.course import Course, GradingError
from autograder.pipeline.engines.jobs_and_outcomes import Outcome
from autograder.pipeline.gradescope.gradescope import SCHEMA, results_of
from autograder.pipeline.intake.intake import MAX_BYTES
from autograder.pipeline.intake.roster import RosterError, read_roster
from autograder.pipeline.intake.zip_intake import unpack_canvas_zip
from autograder.pipeline.records.grade_record import Totals
from tests.graded_cells import graded_cell

ROOT = Path(__file__).resolve().parents[1]
ASSIGNMENT = "01_attention"
ROSTER = "student,canvas_id,sis_login_id,name\nada,101,ada@uni,Ada L\nalan,102,,Alan T\n"


def _roster(tmp_path: Path, text: str = ROSTER) -> Path:
    path = tmp_path / "roster.csv"
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("", "header is missing"),
        ("name,email\nAda,a@x\n", "expected a CSV whose header names student"),
        ("student,canvas_id,shoe_size\nada,1,9\n", "unknown columns ['shoe_size']"),
        ("student,canvas_id\nada,1\nada,2\n", "student 'ada' occurs 2 times"),
        ("student,canvas_id\nada,7\nalan,7\n", "canvas_id '7' occurs 2 times"),
        ("student,canvas_id\nada,A17\n", "canvas_id 'A17' is not a number"),
        ("student,canvas_id\nada,\uff11\uff17\n", "is not a number"),  # full-width digits
        ("student,canvas_id,sis_login_id\nada,,\n", "has no canvas_id or sis_login_id"),
        ("student,canvas_id\n../ada,1\n", "cannot be a folder name"),
        ("student,canvas_id\nada,1,extra\n", "line 2 has 3 cells, the header 2"),
        ("student,canvas_id\n", "lists no student"),
    ],
)
def test_a_bad_roster_says_what_is_wrong(tmp_path: Path, text: str, says: str):
    with pytest.raises(RosterError, match=r"roster .*") as caught:
        read_roster(_roster(tmp_path, text))
    assert says in str(caught.value)


def test_a_roster_reads_canvas_ids_and_logins_and_refuses_links(tmp_path: Path):
    members = read_roster(_roster(tmp_path, "\ufeff" + ROSTER)).members  # Excel's byte-order mark
    assert [(m.student, m.canvas_id, m.sis_login_id) for m in members] == [
        ("ada", "101", "ada@uni"),
        ("alan", "102", ""),
    ]
    (tmp_path / "link.csv").symlink_to(tmp_path / "roster.csv")
    with pytest.raises(RosterError, match="symbolic link"):
        read_roster(tmp_path / "link.csv")


@pytest.fixture
def course(tmp_path: Path) -> Course:
    root = tmp_path / "course"
    root.mkdir()
    shutil.copy(ROOT / "nbgrader_config.py", root)
    return Course.load(root)


def _zip(path: Path, entries: dict[str, bytes], links: tuple[str, ...] = ()) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, content in entries.items():
            archive.writestr(name, content)
        for name in links:
            info = zipfile.ZipInfo(name)
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            archive.writestr(info, "/etc/passwd")
    return path


def _submitted(course: Course) -> dict[str, bytes]:
    folder = course.root / "grading" / "submitted"
    return {p.parts[-3]: p.read_bytes() for p in folder.glob(f"*/{ASSIGNMENT}/*.ipynb")}


def test_a_canvas_download_is_collected_through_the_roster(course: Course, tmp_path: Path):
    download = _zip(
        tmp_path / "submissions.zip",
        {
            "lovelaceada_late_101_9001_01_attention-1.ipynb": b"ada's",
            "turingalan_102_9002_01_attention.ipynb": b"alan's",
            "turingalan_102_9002_notes.pdf": b"%PDF",
        },
    )
    collected = unpack_canvas_zip(course, ASSIGNMENT, download, _roster(tmp_path))
    assert collected.students == ["ada", "alan"] and collected.late == ["ada"]
    assert collected.ignored == ["turingalan_102_9002_notes.pdf"]
    assert _submitted(course) == {"ada": b"ada's", "alan": b"alan's"}
    # The same download again changes nothing; a different one never overwrites a submission.
    assert unpack_canvas_zip(course, ASSIGNMENT, download, _roster(tmp_path)).students
    changed = _zip(tmp_path / "again.zip", {"turingalan_102_9003_01_attention.ipynb": b"new"})
    with pytest.raises(GradingError, match="already holds a different submission of alan"):
        unpack_canvas_zip(course, ASSIGNMENT, changed, _roster(tmp_path))
    assert _submitted(course)["alan"] == b"alan's"


@pytest.mark.parametrize(
    ("entries", "links", "says"),
    [
        ({"README.txt": b"x"}, (), "'README.txt' is not named <name>_<canvas id>"),
        ({"sub/lovelaceada_101_1_a.ipynb": b"x"}, (), "is not named"),
        ({"../lovelaceada_101_1_a.ipynb": b"x"}, (), "climbs out of the zip"),
        ({}, ("lovelaceada_101_1_01_attention.ipynb",), "a link"),
    ],
)
def test_a_download_canvas_cannot_have_made_is_refused_whole(
    course: Course, tmp_path: Path, entries: dict, links: tuple, says: str
):
    good = {"turingalan_102_9002_01_attention.ipynb": b"alan's"}
    download = _zip(tmp_path / "submissions.zip", {**good, **entries}, links)
    with pytest.raises(GradingError, match="nothing was unpacked") as caught:
        unpack_canvas_zip(course, ASSIGNMENT, download, _roster(tmp_path))
    assert says in str(caught.value)
    assert _submitted(course) == {}  # not even the good entry


def test_an_entry_that_names_no_one_or_two_students_is_refused_alone(
    course: Course, tmp_path: Path, capsys
):
    """Canvas scrubs a sortable name of _<digits>_ and then of non-word characters, so a name
    can still read x_1001_77_ (from x_1001._77._); full-width digits are word characters."""
    roster = ROSTER + "grace,1001,,Grace H\nzoe,104,,Zo\u00eb\nkim,105,,Kim\n"
    entries = {
        "x_1001_77__102_9002_01_attention.ipynb": b"forged as grace's",  # alan's, or grace's?
        "hopperg_1001_9003_01_attention.ipynb": b"grace's",
        "\uff58_\uff11\uff10\uff11_\uff12_104_9004_01_attention.ipynb": b"zoe's",  # full width
        "hopper_103_1_01_attention.ipynb": b"a stranger's",
        "kimk_105_9005_a.ipynb": b"1",
        "kimk_105_9006_b.ipynb": b"2",
        "lovelaceada_late_101_9001_01_attention.ipynb": b"ada's",
    }
    download = _zip(tmp_path / "submissions.zip", entries)
    collected = unpack_canvas_zip(course, ASSIGNMENT, download, _roster(tmp_path, roster))
    assert collected.students == ["ada", "grace", "zoe"] and collected.late == ["ada"]
    assert _submitted(course) == {"ada": b"ada's", "grace": b"grace's", "zoe": b"zoe's"}
    refused = " | ".join(collected.refused)
    assert "reads as a submission of alan or of grace" in refused, refused
    assert "Canvas user 1, 103 is not in the roster" in refused, refused
    assert "kim handed in 2 notebooks" in refused, refused
    assert len(collected.refused) == 3


def test_an_empty_download_a_non_zip_or_a_bad_roster_is_an_error(course: Course, tmp_path: Path):
    only_pdf = _zip(tmp_path / "pdf.zip", {"turingalan_102_1_notes.pdf": b"%PDF"})
    with pytest.raises(GradingError, match="no notebook in it"):
        unpack_canvas_zip(course, ASSIGNMENT, only_pdf, _roster(tmp_path))
    (tmp_path / "fake.zip").write_bytes(b"not a zip")
    with pytest.raises(GradingError, match="is not a zip file"):
        unpack_canvas_zip(course, ASSIGNMENT, tmp_path / "fake.zip", _roster(tmp_path))
    good = _zip(tmp_path / "ok.zip", {"turingalan_102_1_01_attention.ipynb": b"x"})
    with pytest.raises(GradingError, match="expected a CSV whose header"):
        unpack_canvas_zip(course, ASSIGNMENT, good, _roster(tmp_path, "who\nada\n"))


@pytest.mark.slow  # half a second or more in the fast tier (tests/tiers.py)
def test_an_oversized_entry_is_read_only_past_the_cap(course: Course, tmp_path: Path):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("lovelaceada_101_1_01_attention.ipynb", b"0" * (MAX_BYTES + 4096))
    (tmp_path / "big.zip").write_bytes(buffer.getvalue())
    unpack_canvas_zip(course, ASSIGNMENT, tmp_path / "big.zip", _roster(tmp_path))
    assert len(_submitted(course)["ada"]) == MAX_BYTES + 1  # intake then refuses it as too large


def test_gradescope_results_follow_the_documented_schema():
    schema = json.loads(SCHEMA.read_text())
    cells = [
        graded_cell("test_rows_sum_to_one", 2.0, 2.0),
        graded_cell("test_scaling", 3.0, 0.0, "is the score divided by sqrt(d_k)?", "scaled"),
        graded_cell("test_parity", 3.0, 1.5, "differs", "shapes"),
    ]
    outcome = Outcome("ada", "ok", [], {}, cells, 1.0)
    points = {"test_rows_sum_to_one": 2.0, "test_scaling": 3.0, "test_parity": 3.0}
    results = results_of(outcome, points)
    jsonschema.validate(results, schema)
    assert [(t["name"], t["score"], t["max_score"], t["status"]) for t in results["tests"]] == [
        ("test_rows_sum_to_one", 2.0, 2.0, "passed"),
        ("test_scaling", 0.0, 3.0, "failed"),
        ("test_parity", 1.5, 3.0, "failed"),  # partial credit: not full marks
    ]
    assert [t["output"] for t in results["tests"][1:]] == [cells[1].message, cells[2].message]
    # Recorded: the top-level score is the gradebook's total, after the late penalty.
    recorded = results_of(outcome, points, Totals(3.5, 1.0, 2.25, 2.25))
    jsonschema.validate(recorded, schema)
    assert recorded["score"] == 2.25 and recorded["extra_data"]["late_penalty"] == 2.25
    assert "late penalty 2.25 = 2.25" in recorded["output"]
    # The schema can fail: an undocumented status, a test without a score.
    for broken in ({"tests": [{"score": 1, "status": "ok"}]}, {"tests": [{"name": "q"}]}):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(broken, schema)


def _canvas_export(tmp_path: Path, roster: str, students: list[str]) -> Path:
    """CanvasExportPlugin in this process over a gradebook where ``students`` handed in."""
    from types import SimpleNamespace

    from nbgrader.api import Gradebook
    from traitlets.config import Configurable

    from autograder.pipeline.records.exports import CanvasExportPlugin
    from autograder.private_apis import stamp_gradebooks_in_process

    stamp_gradebooks_in_process()  # a new gradebook, as the grader's commands make one
    parent = Configurable()
    parent.coursedir = SimpleNamespace(
        autograded_directory="autograded",
        format_path=lambda *parts: str(tmp_path / "grading" / "autograded" / "x"),
    )
    dest = tmp_path / "canvas.csv"
    plugin = CanvasExportPlugin(parent=parent, roster=str(_roster(tmp_path, roster)), to=str(dest))
    with Gradebook(f"sqlite:///{tmp_path / 'gradebook.db'}") as gb:
        gb.update_or_create_assignment(ASSIGNMENT)
        for student in students:
            gb.update_or_create_student(student)
            gb.update_or_create_submission(ASSIGNMENT, student)
        plugin.export(gb)
    return dest


def _canvas_rows(path: Path) -> list[list[str]]:
    with path.open(newline="") as handle:
        return list(csv.reader(handle))[2:]


@pytest.mark.slow  # half a second or more in the fast tier (tests/tiers.py)
def test_every_roster_field_reaches_the_canvas_csv_guarded(tmp_path: Path):
    roster = (
        "student,canvas_id,sis_login_id,name,section\n"
        'ada,101,"=HYPERLINK(""http://x"",""y"")",@Ada,+S1\n'
    )
    dest = _canvas_export(tmp_path, roster, ["ada"])
    row = _canvas_rows(dest)[0]
    assert row[:5] == ["'@Ada", "101", "", '\'=HYPERLINK("http://x","y")', "'+S1"], row


def test_the_canvas_export_serves_everyone_but_an_odd_name(tmp_path: Path):
    composed = "zo\u00eb"
    decomposed = "zoe\u0308"
    roster = f"student,canvas_id\nada,101\n{composed},102\nkim,103\n"
    # jo handed in under a decomposed-Unicode name, the roster composes it: still her row.
    first = tmp_path / "composed"
    first.mkdir()
    dest = _canvas_export(first, roster.replace("kim", "j\u00f6"), ["ada", "jo\u0308"])
    assert [row[5] for row in _canvas_rows(dest)] == ["0.0", "", "0.0"]
    (tmp_path / "twins").mkdir()
    with pytest.raises(SystemExit) as caught:
        _canvas_export(tmp_path / "twins", roster, ["ada", composed, decomposed, "ghost"])
    said = str(caught.value)
    assert "lacks students who have grades: ghost" in said, said
    assert "'zoe\\u0308' and 'zo\\xeb', which are one name written two ways" in said, said
    rows = _canvas_rows(tmp_path / "twins" / "canvas.csv")  # and everyone else is there
    assert [(row[1], row[5]) for row in rows] == [("101", "0.0"), ("102", ""), ("103", "")]
