"""A course as an instructor on Canvas runs it: a Canvas download graded through the roster with a
due date, one grade record that agrees with nbgrader export (after grading by hand too), a
Canvas gradebook CSV, and a Gradescope results.json per submission."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
import zipfile
from datetime import datetime
from pathlib import Path

import jsonschema
import nbformat
import pytest
from nbgrader.api import Gradebook

from autograder.examples import UNSCALED, Sample, build_course
from autograder.pipeline.cli import main
from autograder.pipeline.course.course import tool_env
from autograder.pipeline.gradescope.gradescope import SCHEMA
from tests.test_notebooks import marked_region

pytestmark = [pytest.mark.slow, pytest.mark.sandbox, pytest.mark.usefixtures("sandbox_required")]

ROOT = Path(__file__).resolve().parents[1]
ASSIGNMENT = "01_attention"
ROSTER = "student,canvas_id,sis_login_id,name\nada,101,,Ada\nalan,102,,Alan\ngrace,103,gh,Grace\n"


def _rows(path: Path) -> dict[str, dict[str, str]]:
    with path.open(newline="") as handle:
        return {row.get("student") or row.get("student_id"): row for row in csv.DictReader(handle)}


def _export(root: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "nbgrader", "export", *args],
        cwd=root,
        env=tool_env(),
        capture_output=True,
        text=True,
    )


def _agree(grades: dict, exported: dict) -> None:
    """The grading CSV's points are nbgrader export's, student by student."""
    for student, row in grades.items():
        out = exported[student]
        assert float(row["total"]) == pytest.approx(float(out["score"])), student
        assert float(row["total_max"]) == pytest.approx(float(out["max_score"])), student
        assert float(row["late_penalty"]) == pytest.approx(
            float(out["late_submission_penalty"] or 0)
        ), student
        raw = float(row["score"]) + float(row["manual"])
        assert raw == pytest.approx(float(out["raw_score"])), student


def test_a_canvas_class_from_download_to_gradebook_csv(tmp_path: Path, capsys):
    root = tmp_path / "course"
    samples = [
        Sample("ada", "correct", "ok", True),
        Sample("alan", "mistake", "ok", False, answers={"attention": UNSCALED}),
        Sample("grace", "correct", "ok", True),
    ]
    build_course(root, samples)  # every timestamp.txt says 2026-11-20 12:00 UTC
    with (root / "nbgrader_config.py").open("a") as config:
        config.write(
            '\nc.AssignLatePenalties.plugin_class = "autograder.pipeline.course.deadlines.'
            'FractionPerDayLate"\nc.FractionPerDayLate.fraction_per_day = 0.1\n'
        )
    db = f"sqlite:///{root / 'grading' / 'gradebook.db'}"
    with Gradebook(db, "attention_lab") as gb:
        gb.update_or_create_assignment(ASSIGNMENT, duedate=datetime(2026, 11, 20, 11, 0))

    # ada and alan hand in on Canvas (ada late, says Canvas); grace's copy is already collected.
    submitted = root / "grading" / "submitted"
    download = tmp_path / "submissions.zip"
    with zipfile.ZipFile(download, "w") as archive:
        for student, entry in (("ada", "lovelaceada_late_101_1"), ("alan", "turingalan_102_2")):
            notebook = submitted / student / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
            archive.writestr(f"{entry}_{ASSIGNMENT}.ipynb", notebook.read_bytes())
            (notebook.parent / "timestamp.txt").unlink()
            notebook.unlink()
    (root / "grading" / "roster.csv").write_text(ROSTER)

    argv = ["grade", ASSIGNMENT, "--course", str(root), "--from-zip", str(download)]
    assert main([*argv, "--student", "grace", "--workers", "2", "--no-feedback"]) == 0
    err = capsys.readouterr().err
    assert "2 notebooks collected" in err and "Canvas marks late: ada" in err, err

    grades_path = root / "grading" / f"{ASSIGNMENT}_grades.csv"
    grades = _rows(grades_path)
    assert set(grades) == {"ada", "alan", "grace"}
    assert float(grades["ada"]["score"]) == float(grades["ada"]["max_score"])
    assert float(grades["alan"]["score"]) < float(grades["alan"]["max_score"])
    # grace: 1 h late, so 10 % of her score; ada and alan: no timestamp, so no penalty.
    assert float(grades["grace"]["late_penalty"]) == pytest.approx(
        0.1 * float(grades["grace"]["score"])
    )
    assert "after the due date" in grades["grace"]["notes"]
    for student in ("ada", "alan"):
        assert float(grades[student]["late_penalty"]) == 0
        assert "lateness unknown, no late penalty applied" in grades[student]["notes"]
    assert "Canvas marks this submission late" in grades["ada"]["notes"]  # its only evidence
    assert "Canvas marks" not in grades["alan"]["notes"]

    # nbgrader export writes under grading/, and agrees; so it does after grading by hand.
    assert _export(root).returncode == 0
    assert not (root / "grades.csv").exists()
    _agree(grades, _rows(root / "grading" / "grades.csv"))
    with Gradebook(db, "attention_lab") as gb:
        notebook = gb.find_submission_notebook(ASSIGNMENT, ASSIGNMENT, "alan")
        written = next(g for g in notebook.grades if g.cell.cell_type == "markdown")
        written.manual_score = 1.5
        gb.db.commit()
    assert _export(root).returncode == 0
    graded_by_hand = _rows(grades_path)
    assert float(graded_by_hand["alan"]["manual"]) == 1.5
    assert graded_by_hand["alan"]["notes"] == grades["alan"]["notes"]  # the rest is kept
    _agree(graded_by_hand, _rows(root / "grading" / "grades.csv"))

    # Canvas: a column of totals, a row per roster student; a roster missing one is refused.
    canvas = root / "grading" / "canvas_grades.csv"
    exporter = ["--exporter", "autograder.pipeline.records.exports.CanvasExportPlugin"]
    result = _export(root, *exporter)
    assert result.returncode == 0, result.stderr[-2000:]
    with canvas.open(newline="") as handle:
        table = list(csv.reader(handle))
    assert table[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", ASSIGNMENT]
    by_id = {row[1]: row for row in table[2:]}
    assert by_id["103"][3] == "gh"
    for canvas_id, student in (("101", "ada"), ("102", "alan"), ("103", "grace")):
        assert float(by_id[canvas_id][5]) == float(graded_by_hand[student]["total"])
    (root / "grading" / "roster.csv").write_text(ROSTER.rsplit("grace", 1)[0])
    refused = _export(root, *exporter, "--to", str(tmp_path / "partial.csv"))
    assert refused.returncode != 0 and "lacks students who have grades: grace" in refused.stderr
    assert "Traceback" not in refused.stderr

    # Gradescope: one results.json per submission, valid, per graded cell, no hidden source.
    schema = json.loads(SCHEMA.read_text())
    solution = nbformat.read(ROOT / "solutions" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", 4)
    hidden = {
        line
        for cell in solution.cells
        for line in marked_region(cell.source, "BEGIN HIDDEN TESTS", "END HIDDEN TESTS")
    }
    for student, row in grades.items():
        path = root / "grading" / "gradescope" / student / ASSIGNMENT / "results.json"
        results = json.loads(path.read_text())
        jsonschema.validate(results, schema)
        assert {t["name"]: t["score"] for t in results["tests"]} == {
            name: float(row[name]) for name in {t["name"] for t in results["tests"]}
        }
        assert sum(t["max_score"] for t in results["tests"]) == float(row["max_score"])
        assert not any(line in path.read_text() for line in hidden), student
    failed = [t for t in json.loads(path.read_text())["tests"] if t["status"] == "failed"]
    assert not failed  # grace, the last one, is correct
    alan = root / "grading" / "gradescope" / "alan" / ASSIGNMENT / "results.json"
    tests = json.loads(alan.read_text())["tests"]
    outputs = [t["output"] for t in tests if t["score"] < t["max_score"]]
    assert outputs and all(outputs), outputs  # each cell that lost points says why
    assert any("scores are not scaled" in o for o in outputs), outputs  # alan's mistake
