"""Copying is visible to the instructor: copies of the reference answers are flagged, the mutation
corpus's correct alternatives are not, and nothing about similarity can fail a batch or reach a
student (autograder/pipeline/similarity.py)."""

from __future__ import annotations

import csv
import shutil
from functools import cache
from pathlib import Path

import nbformat

from autograder.examples import ROOT, solution_answers
from autograder.pipeline import similarity
from autograder.pipeline.course import Course
from autograder.pipeline.jobs_and_outcomes import Outcome
from autograder.pipeline.report import spreadsheet_safe, write_csv
from autograder.pipeline.similarity import REFERENCE, THRESHOLD, check_class, compare_class
from tests.mutants import mutated_cells
from tests.similarity_corpus import (
    ALTERNATIVES,
    ASSIGNMENTS,
    ONE_EDIT_COPIES,
    Calibration,
    calibration,
    release,
    submission,
)

ASSIGNMENT = "01_attention"
MARGIN = 0.05  # the threshold stays this far from the highest alternative and the lowest copy


@cache
def calibrated() -> Calibration:
    """The calibration's comparisons, made once per test run."""
    return calibration()


def test_copies_of_the_reference_are_flagged():
    scores = calibrated().copy_scores()
    assert len(scores) == 3 * len(ASSIGNMENTS)
    low = {key: score for key, score in scores.items() if score < THRESHOLD + MARGIN}
    assert not low, f"copies of the reference that score too low: {low}"
    for key, comparison in calibrated().copies.items():
        assert [(p.second, p.score >= THRESHOLD) for p in comparison.flagged] == [
            (REFERENCE, True)
        ], key


def test_no_correct_alternative_is_flagged_against_the_reference_or_another():
    for assignment, comparison in calibrated().alternatives.items():
        flagged = [(p.first, p.second, round(p.score, 3)) for p in comparison.flagged]
        assert flagged == [], f"{assignment}: correct alternatives flagged: {flagged}"
    scores = calibrated().alternative_scores()
    high = {key: score for key, score in scores.items() if score > THRESHOLD - MARGIN}
    assert not high, f"correct alternatives within {MARGIN} of the threshold: {high}"


def test_a_correct_alternative_that_edits_one_token_of_the_reference_is_flagged():
    """Left out of the alternatives above: it is the reference's text, and copying it shows."""
    assert ONE_EDIT_COPIES, "the corpus has no one-edit alternative to check"
    for mutant in ONE_EDIT_COPIES:
        reference = solution_answers(mutant.assignment)
        answers = submission(mutant.assignment, mutated_cells(mutant))
        comparison = compare_class({mutant.name: answers}, reference, release(mutant.assignment))
        assert [pair.second for pair in comparison.flagged] == [REFERENCE], mutant.name


def test_the_released_stub_is_boilerplate_and_counts_for_nothing():
    stub = submission(ASSIGNMENT, {})
    comparison = compare_class(
        {"ada": stub, "bob": stub}, solution_answers(ASSIGNMENT), release(ASSIGNMENT)
    )
    assert comparison.cells["ada"] == {} and comparison.best == {} and comparison.flagged == []


def test_one_answer_that_breaks_fingerprinting_is_left_out_with_the_reason(monkeypatch):
    real = similarity._fingerprint

    def fragile(code: str, boilerplate=None):
        if "BREAKS THE FINGERPRINTER" in code:
            raise ValueError("a tokenizer bug")
        return real(code, boilerplate)

    monkeypatch.setattr(similarity, "_fingerprint", fragile)
    answers = solution_answers(ASSIGNMENT)
    odd = dict(answers, attention=answers["attention"] + "\n'BREAKS THE FINGERPRINTER'")
    comparison = compare_class(
        {"odd": submission(ASSIGNMENT, odd), "ada": submission(ASSIGNMENT, answers)},
        answers,
        release(ASSIGNMENT),
    )
    assert comparison.problems == {"odd": "ValueError: a tokenizer bug"}
    assert comparison.best["ada"].second == REFERENCE and comparison.best["ada"].score == 1.0


HOSTILE = {
    "<script>alert(1)</script>": "a name that is markup",
    'o\'neil" onmouseover="alert(2)': "quotes that end an attribute",
    "jos\u00e9 \u540d\u524d \U0001f600": "odd but valid UTF-8",
    "eve\x1b[31m\x07": "control characters",
}


def _course(tmp_path: Path) -> Course:
    """A course folder with the assignment's reference (source) notebook and nothing graded."""
    shutil.copy(ROOT / "nbgrader_config.py", tmp_path / "nbgrader_config.py")
    source = tmp_path / "solutions" / ASSIGNMENT
    source.mkdir(parents=True)
    shutil.copy(ROOT / "solutions" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", source)
    return Course.load(tmp_path)


def _outcome(student: str, answers: dict[str, str]) -> Outcome:
    """A graded submission: the released notebook with ``answers`` written into it."""
    notebook = nbformat.from_dict(release(ASSIGNMENT))
    for cell in notebook.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        cell.source = answers.get(grade_id, cell.source)
    return Outcome(student, "ok", [], dict(notebook), [], 1.0)


def test_hostile_names_and_code_are_escaped_in_the_instructors_report(tmp_path: Path):
    answers = solution_answers(ASSIGNMENT)
    tagged = dict(answers, attention=answers["attention"] + "\n'</pre><script>alert(3)</script>'")
    outcomes = [_outcome(name, tagged) for name in HOSTILE]
    course = _course(tmp_path)
    checked = check_class(course, ASSIGNMENT, outcomes, release(ASSIGNMENT))
    report = tmp_path / "grading" / f"{ASSIGNMENT}_similarity.html"
    page = report.read_text(encoding="utf-8")
    assert "<script" not in page and 'onmouseover="' not in page and "\x1b" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "jos\u00e9 \u540d\u524d \U0001f600" in page and "eve\\x1b[31m\\x07" in page
    assert "default-src 'none'" in page  # no script, no fetch, even if markup slipped through
    assert report.stat().st_mode & 0o077 == 0  # the instructor's alone
    assert set(checked.best) == set(HOSTILE) and all(s == 1.0 for s, _ in checked.best.values())
    assert not [c for c in checked.summary if not c.isprintable() and c != "\n"]

    csv_path = tmp_path / "grades.csv"
    write_csv(outcomes, csv_path, {}, similarity=checked.best)
    with csv_path.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    names = {
        spreadsheet_safe(name) for name in HOSTILE
    }  # each other's: the reference lacks the tag
    assert all(r["similarity"] == "1.0" and r["most_similar_to"] in names for r in rows), rows
    assert all(r["most_similar_to"] != r["student"] for r in rows), rows


def test_a_failure_of_the_whole_check_is_a_line_not_an_exception(tmp_path: Path, monkeypatch):
    def broken(*args, **kwargs):
        raise MemoryError("out of memory")

    monkeypatch.setattr(similarity, "compare_class", broken)
    outcome = _outcome("ada", solution_answers(ASSIGNMENT))
    checked = check_class(_course(tmp_path), ASSIGNMENT, [outcome], release(ASSIGNMENT))
    assert checked.best == {}
    assert checked.summary == "similarity: not checked: MemoryError: out of memory"
    assert outcome.verdict == "ok" and outcome.notes == []


def test_regrading_a_few_compares_them_with_the_rest_of_the_class(tmp_path: Path):
    course = _course(tmp_path)
    (loop,) = [m for m in ALTERNATIVES if m.name == "explicit loop over queries"]
    own = dict(solution_answers(ASSIGNMENT), **mutated_cells(loop))
    for student in ("ada", "bob"):  # graded before: their graded copies are on disk
        folder = tmp_path / "grading" / "autograded" / student / ASSIGNMENT
        folder.mkdir(parents=True)
        notebook = _outcome(student, own if student == "ada" else {}).notebook
        nbformat.write(nbformat.from_dict(notebook), folder / f"{ASSIGNMENT}.ipynb")
    checked = check_class(course, ASSIGNMENT, [_outcome("cy", own)], release(ASSIGNMENT))
    assert checked.best == {"ada": (1.0, "cy"), "cy": (1.0, "ada")}  # bob wrote nothing
