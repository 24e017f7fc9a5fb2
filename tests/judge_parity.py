"""Every assignment gets the same verdicts from the trusted judge as from in-process grading.

The mutation corpus (tests/test_mutants.py) grades its notebooks in-process, hidden checks only;
its per-assignment class then calls :func:`assert_judge_agrees` on the same worker, which reuses
those in-process grades.  Per assignment, the solution, the first and last known-wrong mutants,
those marked ``in_notebook`` (blind ones too) and every correct alternative (:func:`merged`) are
handed in to a fresh nbgrader course and graded by the grading command's own path: the whole
notebook runs in the sandbox, public checks included, and every hidden check runs in the judge,
against proxies of the kernel's objects.  Every check gets the same verdict in both, and the
same cause confirmed by the same repair (so every repair that a picked mutant's grading uses
works on the kernel's objects; tests/test_mutants.py asks that every repair be so used), so every
cell the same partial score (or, where its visible check failed, what the rule for that gives:
autograder/authoring/registry.py), which is what nbgrader reads from the graded notebook.  What a
wrong mutant's student is shown in the graded notebook starts with the judge's expected
diagnosis, even where the cell's visible checks failed first.  The course's release and its
submissions leave out the solutions' demonstration cells (tagged ``demo``), as the in-process
corpus does: no answer or check depends on them, and they are most of 04's and 07's running
time.
"""

from __future__ import annotations

import glob
import hashlib
import importlib
from collections.abc import Callable, Sequence
from pathlib import Path

import nbformat
from nbgrader.utils import determine_grade

import tests.mutants.blind
from autograder.authoring.registry import VISIBLE_CHECK_FAILED, CellGrade
from autograder.cells import is_test_cell
from autograder.examples import Sample, build_course
from autograder.pipeline.course.course import Course
from autograder.pipeline.engines.batch import grade
from autograder.pipeline.engines.jobs_and_outcomes import Outcome
from autograder.pipeline.worker.verdicts import shown_verdict
from autograder.suite.submission import DEMO_TAG
from tests.mutants import Mutant, mutated_cells


def picked(assignment: str) -> list[Mutant]:
    """The mutants of ``assignment`` graded through the grading command: the first and last
    wrong ones, those marked ``in_notebook`` (the blind corpus's too) and every correct
    alternative (merged)."""
    module = importlib.import_module(f"tests.mutants.m{assignment}")
    marked = [m for m in module.WRONG[1:-1] if m.in_notebook]
    blind = [m for m in tests.mutants.blind.WRONG if m.assignment == assignment and m.in_notebook]
    return [module.WRONG[0], *marked, *blind, module.WRONG[-1], *merged(module.CORRECT)]


def merged(correct: Sequence[Mutant]) -> list[Mutant]:
    """The correct alternatives, those that change different answer cells merged into one: each
    still keeps full marks only if every cell does, and a submission costs seconds of CPU."""
    groups: list[list[Mutant]] = []
    for mutant in correct:
        free = (g for g in groups if not set(mutant.patches) & {c for m in g for c in m.patches})
        group = next(free, None)
        if group is None:
            groups.append([mutant])
        else:
            group.append(mutant)
    return [
        Mutant(
            " + ".join(m.name for m in group),
            group[0].assignment,
            {cell: patch for m in group for cell, patch in m.patches.items()},
        )
        if len(group) > 1
        else group[0]
        for group in groups
    ]


def _student(mutant: Mutant) -> str:
    """A student name for the mutant: its name's start, made unique by a digest of the whole."""
    start = "".join(c if c.isalnum() else "-" for c in mutant.name.lower())[:32].strip("-")
    return f"{start}-{hashlib.sha256(mutant.name.encode()).hexdigest()[:8]}"


def _leave_out_demonstrations(course: Course, assignment: str) -> None:
    """Delete the demonstration cells from every submission of ``assignment`` in ``course`` and
    from its released copy: the judged notebook is the release's cells with the submitted answers
    in place (pipeline/worker/judged_notebook.py), so a cell left in the release still runs."""
    submitted = course.path(course.coursedir.submitted_directory, "*", assignment)
    submissions = [Path(p) for p in sorted(glob.glob(str(submitted / f"{assignment}.ipynb")))]
    assert submissions, "no submission was written"
    release = course.path(course.coursedir.release_directory, ".", assignment) / (
        f"{assignment}.ipynb"
    )
    assert release.exists(), f"no released notebook {release}"
    for path in [release, *submissions]:
        notebook = nbformat.read(path, 4)
        notebook.cells = [c for c in notebook.cells if DEMO_TAG not in c.metadata.get("tags", ())]
        nbformat.write(notebook, path)


def assert_judge_agrees(
    assignment: str,
    folder: Path,
    graded: Callable[[Mutant], dict[str, CellGrade]],
    solution_in_process: dict[str, CellGrade],
) -> None:
    """Grade the solution and :func:`picked` mutants of ``assignment`` through the grading
    command in a course under ``folder``; every outcome must agree with in-process grading
    (``graded`` for a mutant, ``solution_in_process`` for the solution)."""
    chosen = picked(assignment)
    mutants = {_student(m): m for m in chosen}
    assert len(mutants) == len(chosen), "two mutants map to one student name"
    samples = [Sample("solution", "correct", "ok", True)] + [
        # mutated_cells patches the same answer cells that solution_answers gives students
        Sample(student, "mistake", "ok", m.is_correct, answers=mutated_cells(m))
        for student, m in mutants.items()
    ]
    build_course(folder, samples, assignment)
    course = Course.load(folder)
    _leave_out_demonstrations(course, assignment)
    outcomes: dict[str, Outcome] = {o.student: o for o in grade(assignment, course, workers=2)}

    solution = outcomes.pop("solution")
    assert solution.verdict == "ok", solution.notes
    assert solution.cells and all(c.passed for c in solution.cells), solution.cells
    assert_same_scores("solution", solution, solution_in_process)
    for student, outcome in outcomes.items():
        mutant = mutants[student]
        assert outcome.verdict == "ok", (mutant.name, outcome.notes)
        assert_same_scores(mutant.name, outcome, graded(mutant))
        lost = {c.grade_id: c.message for c in outcome.cells if not c.passed}
        if mutant.is_correct:
            assert not lost, f"{mutant.name}: a correct alternative lost points: {lost}"
        # Every mistake of the corpus is the student's code's doing: none is told as an error
        # the check itself raised, or flagged for a review as one (student_errors.py).
        reviews = [note for note in outcome.notes if note.startswith("review: check")]
        assert not reviews, f"{mutant.name}: {reviews}"
        for phrase in mutant.not_told:  # in a failing check's diagnosis, as in-process
            told = [
                check.diagnosis
                for cell in outcome.cells
                for check in cell.checks
                if not check.passed and phrase in check.diagnosis
            ]
            assert not told, f"{mutant.name} was told {phrase!r}: {told}"
        shown = shown_verdicts(outcome.notebook)
        # failing only because of a wrong answer cell it uses: not charged again, still told
        waived = {
            c.grade_id: c.message
            for c in outcome.cells
            if c.passed and c.grade.repeat is not None and c.grade.repeat.graded_with
        }
        for grade_id, phrase in mutant.must_fail.items():
            if grade_id in waived:
                assert phrase in waived[grade_id], f"{mutant.name}: {waived[grade_id]}"
                continue
            assert grade_id in lost, f"{mutant.name}: {grade_id} kept full marks ({lost})"
            assert shown[grade_id] == lost[grade_id], f"{mutant.name}: {shown[grade_id]}"
            # The judge's diagnosis comes first (it starts with the check's name in brackets),
            # before any visible check's message.
            judged = shown[grade_id].split(VISIBLE_CHECK_FAILED)[0]
            assert judged.startswith("[") and phrase in judged, f"{mutant.name}: {shown[grade_id]}"


def assert_same_scores(name: str, outcome: Outcome, in_process: dict[str, CellGrade]) -> None:
    """Each check's verdict, the cause a repair confirmed for it and which repair did, and each
    cell's score agree between the graded notebook (what nbgrader reads from it) and in-process
    grading, which runs no visible check: whatever the kernel says of its visible checks changes
    no score."""
    points, saved = cell_points(outcome.notebook), recorded(outcome.notebook)
    assert {c.grade_id for c in outcome.cells} == set(in_process), name
    for cell in outcome.cells:
        expected = in_process[cell.grade_id]
        # A repair that works on this process's objects, not on the kernel's, would confirm a
        # cause here and not there (autograder/authoring/repairs.py).
        verdicts = [(c.name, c.passed, c.cause, c.repair) for c in cell.checks]
        here = [(c.name, c.passed, c.cause, c.repair) for c in expected.checks]
        assert verdicts == here, (name, cell.message, {"command": verdicts, "in-process": here})
        # A mistake charged in an earlier cell is waived (or charged again) alike in both.
        assert cell.grade.repeat == expected.repeat, (name, cell.message)
        score = expected.points(points[cell.grade_id])
        assert cell.score == score == saved[cell.grade_id], (name, cell)


def cell_points(notebook: nbformat.NotebookNode) -> dict[str, float]:
    """grade_id -> the points of every graded test cell."""
    return {
        cell.metadata["nbgrader"]["grade_id"]: float(cell.metadata["nbgrader"]["points"])
        for cell in notebook.cells
        if is_test_cell(cell)
    }


def recorded(notebook: nbformat.NotebookNode) -> dict[str, float]:
    """grade_id -> the score nbgrader's SaveAutoGrades records from the graded notebook."""
    return {
        cell.metadata["nbgrader"]["grade_id"]: determine_grade(cell)[0]
        for cell in nbformat.from_dict(notebook).cells
        if is_test_cell(cell)
    }


def shown_verdicts(notebook: nbformat.NotebookNode) -> dict[str, str]:
    """grade_id -> the verdict a graded test cell shows in the graded notebook."""
    return {
        cell.metadata["nbgrader"]["grade_id"]: shown_verdict(cell)
        for cell in nbformat.from_dict(notebook).cells
        if is_test_cell(cell)
    }
