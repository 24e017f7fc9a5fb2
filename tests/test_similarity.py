"""Copying is visible to the instructor: copies of the reference answers are flagged, the mutation
corpus's correct alternatives are not, and nothing about similarity can fail a batch or reach a
student (autograder/pipeline/records/similarity.py)."""

from __future__ import annotations

import csv
import shutil
import time
from functools import cache
from pathlib import Path

import nbformat
import pytest

from autograder.examples import ROOT, solution_answers
from autograder.pipeline.course.course import Course
from autograder.pipeline.engines.jobs_and_outcomes import Outcome
from autograder.pipeline.records import similarity
from autograder.pipeline.records.report import write_csv
from autograder.pipeline.records.safe_text import spreadsheet_safe
from autograder.pipeline.records.similarity import REFERENCE, THRESHOLD, check_class, compare_class
from tests.mutants import mutated_cells
from tests.similarity_corpus import (
    ALTERNATIVES,
    ASSIGNMENTS,
    COPIES,
    ONE_EDIT_COPIES,
    Calibration,
    calibration,
    copies,
    release,
    submission,
)

ASSIGNMENT = "01_attention"
MARGIN = 0.05  # the threshold stays this far from the highest alternative and the lowest copy


@cache
def calibrated() -> Calibration:
    """The calibration's comparisons, made once per test run."""
    return calibration()


@pytest.mark.slow  # the calibration grades every copy and alternative: seconds
@pytest.mark.sandbox  # 25 s of a worker (tests/tiers.py)
def test_copies_of_the_reference_are_flagged():
    scores = calibrated().copy_scores()
    assert len(scores) == len(COPIES) * len(ASSIGNMENTS)
    low = {key: score for key, score in scores.items() if score < THRESHOLD + MARGIN}
    assert not low, f"copies of the reference that score too low: {low}"
    for key, comparison in calibrated().copies.items():
        assert [(p.second, p.score >= THRESHOLD) for p in comparison.flagged] == [
            (REFERENCE, True)
        ], key


@pytest.mark.slow  # the calibration grades every copy and alternative: seconds
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


@pytest.mark.slow  # half a second or more in the fast tier (tests/tiers.py)
def test_padded_and_dead_code_copies_score_as_the_copy_they_hide():
    """The attack round's copies: ``pass`` after every line scored 0.041, the copy after 20,000
    characters of dead code 0.0 (only the first 20,000 characters of a cell were compared)."""
    reference = solution_answers(ASSIGNMENT)
    hidden = {k: v for k, v in copies(ASSIGNMENT).items() if k in ("padded", "dead code")}
    comparison = compare_class(hidden, reference, release(ASSIGNMENT))
    assert {s: (p.second, p.score) for s, p in comparison.best.items()} == {
        "padded": (REFERENCE, 1.0),
        "dead code": (REFERENCE, 1.0),
    }


def test_one_answer_that_breaks_fingerprinting_is_left_out_with_the_reason(monkeypatch):
    real = similarity.fingerprint_submission

    def fragile(answers, known):
        if any("BREAKS THE FINGERPRINTER" in source for source in answers.values()):
            raise ValueError("a tokenizer bug")
        return real(answers, known)

    monkeypatch.setattr(similarity, "fingerprint_submission", fragile)
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
    # Printed, so that it is code that runs (a bare string is left out as doing nothing).
    tagged = dict(
        answers, attention=answers["attention"] + "\nprint('</pre><script>alert(3)</script>')"
    )
    outcomes = [_outcome(name, tagged) for name in HOSTILE]
    course = _course(tmp_path)
    checked = check_class(course, ASSIGNMENT, outcomes, release(ASSIGNMENT))
    report = tmp_path / "grading" / f"{ASSIGNMENT}_similarity.html"
    page = report.read_text(encoding="utf-8")
    assert "<script" not in page and 'onmouseover="' not in page and "\x1b" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "&lt;/pre&gt;&lt;script&gt;alert(3)&lt;/script&gt;" in page
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


def _grade_twice(tmp_path: Path, outcomes: list[Outcome]) -> tuple[float, ...]:
    """Check the class twice (the second as a regrade would); the seconds each took."""
    course = _course(tmp_path)
    taken = []
    for _ in range(2):
        started = time.perf_counter()
        check_class(course, ASSIGNMENT, outcomes, release(ASSIGNMENT))
        taken.append(time.perf_counter() - started)
    return tuple(taken)


def _counted(monkeypatch, log: Path) -> None:
    """Count each submission fingerprinted (in its own process) as a line of ``log``."""
    real = similarity.fingerprint_submission

    def counting(answers, known):
        with log.open("a") as handle:
            handle.write("computed\n")
        return real(answers, known)

    monkeypatch.setattr(similarity, "fingerprint_submission", counting)


@pytest.mark.slow  # half a second or more in the fast tier (tests/tiers.py)
def test_long_cells_of_shell_escapes_take_bounded_time_and_are_read_once(
    tmp_path: Path, monkeypatch
):
    """The attack round's answers: three students, each with three answer cells of 99 kB of
    ``!ls`` lines, kept the grading process in IPython's input transformer for 764 s."""
    log = tmp_path / "computed.log"
    _counted(monkeypatch, log)
    escapes = "\n".join(["!ls"] * 33_000)
    assert len(escapes) > 99_000
    shell = {grade_id: escapes for grade_id in solution_answers(ASSIGNMENT)}
    outcomes = [_outcome(name, shell) for name in ("eve", "mallory", "trent")]
    outcomes.append(_outcome("ada", solution_answers(ASSIGNMENT)))
    first, second = _grade_twice(tmp_path, outcomes)
    assert first < 10, f"the class took {first:.1f} s"
    # Once for each different set of answers: ada's are the reference's, and the three alike.
    assert log.read_text().count("computed") == 2
    assert second < first and all(o.notes == [] for o in outcomes)
    kept = list((tmp_path / "grading" / f"{ASSIGNMENT}_similarity_cache").iterdir())
    assert len(kept) == 2 and all(p.stat().st_mode & 0o077 == 0 for p in kept)


def test_a_regrade_fingerprints_only_the_answers_that_changed(tmp_path: Path, monkeypatch):
    log = tmp_path / "computed.log"
    _counted(monkeypatch, log)
    answers = solution_answers(ASSIGNMENT)
    course = _course(tmp_path)
    ada, bob = _outcome("ada", answers), _outcome("bob", {})
    first = check_class(course, ASSIGNMENT, [ada, bob], release(ASSIGNMENT))
    assert log.read_text().count("computed") == 2  # ada's (the reference's) and bob's stub
    changed = dict(answers, attention=answers["attention"] + "\nprint(weights.sum())")
    again = check_class(course, ASSIGNMENT, [_outcome("ada", changed), bob], release(ASSIGNMENT))
    assert log.read_text().count("computed") == 3  # ada's new answers only
    assert first.best["ada"] == (1.0, REFERENCE) and again.best["ada"][1] == REFERENCE


@pytest.mark.slow  # seconds: kept out of the fast tier, which must fit 30 s
def test_a_submission_that_runs_away_loses_only_its_own_similarity(tmp_path: Path, monkeypatch):
    real = similarity.fingerprint_submission

    def pathological(answers, known):
        if any("HANGS" in source for source in answers.values()):
            while True:
                pass
        if any("EATS MEMORY" in source for source in answers.values()):
            return bytearray(2 * similarity.MEMORY_BYTES)
        return real(answers, known)

    monkeypatch.setattr(similarity, "fingerprint_submission", pathological)
    monkeypatch.setattr(similarity, "SECONDS_PER_SUBMISSION", 1.0)
    answers = solution_answers(ASSIGNMENT)
    outcomes = [
        _outcome("hangs", dict(answers, attention=answers["attention"] + "\n'HANGS'")),
        _outcome("eats", dict(answers, attention=answers["attention"] + "\n'EATS MEMORY'")),
        _outcome("ada", answers),
    ]
    started = time.perf_counter()
    checked = check_class(_course(tmp_path), ASSIGNMENT, outcomes, release(ASSIGNMENT))
    assert time.perf_counter() - started < 8
    assert checked.best == {"ada": (1.0, REFERENCE)}
    assert outcomes[0].notes == ["similarity: not computed: stopped after 1 s"]
    assert outcomes[1].notes == ["similarity: not computed: MemoryError: "]
    assert outcomes[2].notes == [] and all(o.verdict == "ok" for o in outcomes)
