"""Copying made visible to the instructor: every submission's answers, compared with the reference
answers and with every classmate's by winnowing fingerprints (MOSS's method), flagged for human
review at or above a calibrated threshold.  A flag never changes a grade: nothing here is read by
the grading.

What is compared, and why this unit:
- Only answer cells (nbgrader's solution cells: what a student writes), exercise by exercise: a
  cell is compared with the same exercise's cell, never with another exercise's.
- The released stub (signatures, docstrings, given code) is boilerplate: its fingerprints are
  removed from every cell before anything is counted, so a stub left as it is has none.
- Each cell is compared in canonical form: parsed and printed again by Python's ``ast`` (layout,
  parentheses, quotes and comments gone), then tokenized by copydetect, which writes every
  identifier as the same letter.  A reformatted copy, or one with renamed variables, has exactly
  the fingerprints of the original.
- A pair's score is Jaccard's, summed over the cells both wrote: fingerprints in common over
  fingerprints in either.  Each exercise so weighs as much as the code written for it, and one
  short exercise that everyone solves alike cannot flag a pair.  A cell with fewer than
  ``MIN_FINGERPRINTS`` fingerprints of its own (a one-line answer) is left out: such answers are
  alike because they are short, not because they were copied.
- Not whole notebooks: those would also match one exercise's code against another's and count
  the exercises only one side wrote, so a student who copied the one answer they wrote would
  hide behind the stubs.  tests/test_similarity.py calibrates THRESHOLD on the mutation corpus
  (tests/mutants) by the same unit: each correct alternative holds only the cells it writes
  itself, the others left as the released stub, because where a mutant does not patch the
  solution its text is the reference, not the alternative's work (compared whole, an
  alternative that changes one line of one cell is a copy of the reference).

copydetect (pinned) does the tokenizing, fingerprinting and boilerplate removal, and finds the
matching code for the report; its own HTML report is not used (it needs files on disk, renders file
names unescaped and draws with matplotlib).  Its winnowing window is 1, its default (guarantee
threshold = noise threshold): copydetect hashes with Python's salted ``hash()``, so a wider window
would keep different fingerprints in every process and a score could change between two gradings
of the same class.  With every k-gram kept, the scores are the same in every run.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import html
import io
import itertools
import os
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import nbformat

from autograder.cells import answer_cells, to_python
from autograder.pipeline.jobs_and_outcomes import Outcome
from autograder.pipeline.report import shown
from autograder.untrusted import read_regular_file

if TYPE_CHECKING:
    import numpy as np
    from copydetect import CodeFingerprint

    from autograder.pipeline.course import Course

THRESHOLD = 0.85  # calibrated on the mutation corpus: see the README and tests/test_similarity.py
NOISE_THRESHOLD = 25  # k: the shortest match counted, in characters of tokenized code (default)
MIN_FINGERPRINTS = 20  # fewer in a cell: too short to tell copying from a common answer
# The name the reference answers are compared and shown under: no student folder can hold a "/".
REFERENCE = "/reference"
REPORT_PAIRS = 200  # the report shows at most this many flagged pairs, highest first
MAX_CELL_CHARS = 20_000  # compared of a cell's canonical code (the longest reference: 1,554)
MAX_NOTEBOOK_BYTES = 64 * 2**20  # an autograded notebook read back from disk (outputs included)


def canonical(source: str) -> str:
    """The cell as Python's own printer writes it, or as written when it is not Python."""
    try:
        try:
            tree = ast.parse(source)
        except SyntaxError:  # IPython's syntax, perhaps (magics, shell escapes)
            tree = ast.parse(to_python(source))
        return ast.unparse(tree)
    except Exception:  # noqa: BLE001 - a student's text: what does not parse is compared as is
        return source


def _fingerprint(code: str, boilerplate: np.ndarray | None = None) -> CodeFingerprint:
    """copydetect's fingerprints of ``code`` (every k-gram: window 1), ``boilerplate`` removed."""
    from copydetect import CodeFingerprint

    return CodeFingerprint(
        "answer.py", NOISE_THRESHOLD, 1, boilerplate, fp=io.StringIO(code), language="python"
    )


def prepare(release: dict) -> None:
    """Fingerprint the released notebook now (importing copydetect), while the workers start;
    :func:`check_class` then reuses it.  Never raises: check_class says what fails."""
    with contextlib.suppress(Exception):
        _boilerplate(_stub(nbformat.from_dict(release)))


def _stub(release: nbformat.NotebookNode) -> str:
    """The released notebook's code, canonical: what every student is given."""
    return "\n".join(canonical(c.source) for c in release.cells if c.cell_type == "code")


@functools.lru_cache(maxsize=8)
def _boilerplate(code: str) -> np.ndarray:
    """The fingerprints of the released notebook's code (what every student gets), sorted; made
    once per process."""
    import numpy as np

    return np.unique(np.array(sorted(_fingerprint(code).hashes), dtype=np.int64))


@dataclass(frozen=True)
class Cell:
    """One answer cell as compared: its canonical code (at most ``MAX_CELL_CHARS``) and the
    fingerprints of its own (boilerplate removed)."""

    code: str
    hashes: frozenset[int]


def fingerprint_answers(answers: Mapping[str, str], boilerplate: np.ndarray) -> dict[str, Cell]:
    """grade_id -> the cell, for every answer with at least ``MIN_FINGERPRINTS`` of its own."""
    cells = {}
    for grade_id, source in answers.items():
        code = canonical(source)[:MAX_CELL_CHARS]
        hashes = _fingerprint(code, boilerplate).hashes
        if len(hashes) >= MIN_FINGERPRINTS:
            cells[grade_id] = Cell(code, frozenset(int(h) for h in hashes))
    return cells


@dataclass(frozen=True)
class CellMatch:
    """One exercise both sides wrote: fingerprints in common, and in either."""

    grade_id: str
    shared: int
    either: int


@dataclass(frozen=True)
class Pair:
    """Two submissions (or one and the reference) and the exercises both wrote."""

    first: str
    second: str
    cells: tuple[CellMatch, ...]
    score: float = field(init=False)  # in common over in either, summed over the cells

    def __post_init__(self) -> None:
        shared = sum(c.shared for c in self.cells)
        object.__setattr__(self, "score", shared / sum(c.either for c in self.cells))


def match(first: Mapping[str, Cell], second: Mapping[str, Cell]) -> tuple[CellMatch, ...]:
    """The exercises both wrote, each with its fingerprints in common and in either."""
    matches = []
    for grade_id, cell in first.items():
        other = second.get(grade_id)
        if other is not None:
            shared = len(cell.hashes & other.hashes)
            matches.append(
                CellMatch(grade_id, shared, len(cell.hashes) + len(other.hashes) - shared)
            )
    return tuple(matches)


@dataclass
class Comparison:
    """A class compared: each student's highest pair, the pairs flagged, and what was left out."""

    threshold: float
    cells: dict[str, dict[str, Cell]]  # name (REFERENCE too) -> grade_id -> cell
    stub: str  # the released notebook's code, canonical: the boilerplate
    best: dict[str, Pair] = field(default_factory=dict)  # student -> their highest-scoring pair
    flagged: list[Pair] = field(default_factory=list)  # score >= threshold, highest first
    problems: dict[str, str] = field(default_factory=dict)  # student -> why left out
    pairs_compared: int = 0


def compare_class(
    submissions: Mapping[str, Mapping[str, str]],
    reference: Mapping[str, str],
    release: nbformat.NotebookNode,
    threshold: float = THRESHOLD,
) -> Comparison:
    """Compare every submission (student -> grade_id -> source) with the reference answers and
    with every other; a submission that cannot be fingerprinted is left out with the reason."""
    stub = _stub(release)
    boilerplate = _boilerplate(stub)
    exercises = answer_cells(release).keys()
    comparison = Comparison(threshold, {}, stub)
    for name, answers in [(REFERENCE, reference), *sorted(submissions.items())]:
        try:
            own = {g: s for g, s in answers.items() if g in exercises}
            comparison.cells[name] = fingerprint_answers(own, boilerplate)
        except Exception as error:  # noqa: BLE001 - one odd submission must not stop the others
            comparison.problems[name] = f"{type(error).__name__}: {error}"
    names = [n for n in comparison.cells if n != REFERENCE]
    # The reference first: on a tie, a student's highest pair names the reference.
    pairs = [(n, REFERENCE) for n in names if REFERENCE in comparison.cells]
    pairs += itertools.combinations(names, 2)
    for first, second in pairs:
        matches = match(comparison.cells[first], comparison.cells[second])
        if not matches:
            continue
        comparison.pairs_compared += 1
        pair = Pair(first, second, matches)
        for student in (first, second):
            best = comparison.best.get(student)
            if student != REFERENCE and (best is None or pair.score > best.score):
                comparison.best[student] = pair
        if pair.score >= threshold:
            comparison.flagged.append(pair)
    comparison.flagged.sort(key=lambda p: (-p.score, p.first, p.second))
    return comparison


def partner(pair: Pair, student: str) -> str:
    """The other side of ``pair``: a classmate, or ``REFERENCE``."""
    return pair.second if pair.first == student else pair.first


def matched_lines(first: str, second: str, stub: str) -> tuple[set[int], set[int]]:
    """The lines (0-based) of each code that hold code matching the other's (copydetect's
    matching slices), the lines of the released stub ``stub`` excepted."""
    from copydetect import compare_files

    _, _, (first_spans, second_spans) = compare_files(_printed(first, stub), _printed(second, stub))
    stub_lines = {line.strip() for line in stub.splitlines()}
    return _lines_of(first, first_spans, stub_lines), _lines_of(second, second_spans, stub_lines)


@functools.lru_cache(maxsize=1024)
def _printed(code: str, stub: str) -> CodeFingerprint:
    """copydetect's fingerprint of ``code``, the stub's removed (a flagged student's cell is in
    each of their pairs: made once).

    With boilerplate removed, copydetect 0.5.0 keeps only the last place of a fingerprint that a
    cell repeats (``np.intersect1d(..., assume_unique=True)`` on hashes with repeats), so the
    report may leave an earlier repeat unmarked; the set of fingerprints, which scores, is exact.
    """
    return _fingerprint(code, _boilerplate(stub))


def _lines_of(code: str, spans: Any, stub_lines: set[str]) -> set[int]:
    """The lines that the character spans (copydetect's 2xN starts and ends) touch, but for
    the lines of the stub."""
    rows = code.split("\n")
    lines: set[int] = set()
    for start, end in zip(*spans, strict=True) if len(spans) else ():
        start, end = max(0, int(start)), min(len(code), int(end))
        if end > start:
            first = code.count("\n", 0, start)
            lines.update(range(first, first + code.count("\n", start, end - 1) + 1))
    return {n for n in lines if rows[n].strip() not in stub_lines}


_STYLE = """
body { font-family: sans-serif; margin: 2em; }
table.code { border-collapse: collapse; width: 100%; table-layout: fixed; }
table.code td { vertical-align: top; border: 1px solid #ccc; padding: 0; }
pre { margin: 0; padding: 0.5em; overflow-x: auto; font-size: 0.85em; }
.match { background: #ffe08a; display: block; }
th { text-align: left; }
td.num { text-align: right; }
"""


def _esc(text: str) -> str:
    """Hostile text for HTML: control characters shown escaped, then markup escaped."""
    return html.escape(shown(text), quote=True)


def _code(code: str, lines: set[int]) -> str:
    """``code`` for a <pre>, its matching lines marked."""
    return "".join(
        f'<span class="match">{_esc(row) or " "}</span>' if number in lines else _esc(row) + "\n"
        for number, row in enumerate(code.split("\n"))
    )


def report_html(comparison: Comparison, assignment: str) -> str:
    """The instructor's report: the flagged pairs, highest first, each exercise side by side."""
    shown_pairs = comparison.flagged[:REPORT_PAIRS]
    parts = [
        "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>",
        "<meta http-equiv='Content-Security-Policy' "
        "content=\"default-src 'none'; style-src 'unsafe-inline'\">",
        f"<title>Similar answers: {_esc(assignment)}</title><style>{_STYLE}</style></head><body>",
        f"<h1>Similar answers: {_esc(assignment)}</h1>",
        "<p><b>For instructors only.</b> A flag asks for a human review; it never changes a "
        f"grade. Pairs scoring at least {comparison.threshold:.2f} are shown: the share of "
        "winnowing fingerprints the two hold in common over the exercises both wrote, the "
        "released stub left out. Code is shown as compared: printed again by Python's parser "
        "(layout and comments gone); highlighted lines hold matching code.</p>",
        f"<p>{len(comparison.flagged)} pairs flagged of {comparison.pairs_compared} compared"
        + (
            f"; the first {REPORT_PAIRS} are shown"
            if len(comparison.flagged) > REPORT_PAIRS
            else ""
        )
        + ".</p>",
    ]
    if comparison.problems:
        parts.append("<p>Left out:</p><ul>")
        parts += [f"<li>{_esc(n)}: {_esc(why)}</li>" for n, why in comparison.problems.items()]
        parts.append("</ul>")
    parts.append("<table><tr><th>score</th><th>first</th><th>second</th></tr>")
    for number, pair in enumerate(shown_pairs, 1):
        parts.append(
            f"<tr><td class='num'><a href='#pair-{number}'>{pair.score:.3f}</a></td>"
            f"<td>{_esc(pair.first)}</td><td>{_esc(pair.second)}</td></tr>"
        )
    parts.append("</table>")
    for number, pair in enumerate(shown_pairs, 1):
        parts.append(
            f"<h2 id='pair-{number}'>{_esc(pair.first)} and {_esc(pair.second)}: "
            f"{pair.score:.3f}</h2>"
        )
        for cell in sorted(pair.cells, key=lambda c: (-c.shared / c.either, c.grade_id)):
            first = comparison.cells[pair.first][cell.grade_id]
            second = comparison.cells[pair.second][cell.grade_id]
            first_lines, second_lines = matched_lines(first.code, second.code, comparison.stub)
            parts.append(
                f"<h3>{_esc(cell.grade_id)}: {cell.shared / cell.either:.3f} "
                f"({cell.shared} of {cell.either} fingerprints in common)</h3>"
                f"<table class='code'><tr><th>{_esc(pair.first)}</th>"
                f"<th>{_esc(pair.second)}</th></tr><tr>"
                f"<td><pre>{_code(first.code, first_lines)}</pre></td>"
                f"<td><pre>{_code(second.code, second_lines)}</pre></td></tr></table>"
            )
    parts.append("</body></html>\n")
    return "\n".join(parts)


@dataclass
class ClassCheck:
    """What the grading command shows of a class's similarity: the CSV's columns and a summary."""

    best: dict[str, tuple[float, str]]  # student -> highest score and with whom
    summary: str  # printed after the table


def check_class(
    course: Course, assignment: str, outcomes: Sequence[Outcome], release: dict
) -> ClassCheck:
    """Compare the class (these outcomes, and every other graded submission of ``assignment``)
    and write the report into the grading folder; never raises: a failure is a note or a line."""
    try:
        return _check_class(course, assignment, outcomes, nbformat.from_dict(release))
    except Exception as error:  # noqa: BLE001 - similarity must never stop grading or lose a grade
        return ClassCheck({}, f"similarity: not checked: {type(error).__name__}: {error}")


def _check_class(
    course: Course, assignment: str, outcomes: Sequence[Outcome], release: nbformat.NotebookNode
) -> ClassCheck:
    """:func:`check_class`, raising what it fails on."""
    from autograder.pipeline.grade_record import grading_folder

    lines = []
    submissions, problems = _recorded(course, assignment, {o.student for o in outcomes})
    for outcome in outcomes:
        if outcome.notebook is not None:
            submissions[outcome.student] = answer_cells(nbformat.from_dict(outcome.notebook))
    source = course.path(course.coursedir.source_directory, ".", assignment) / f"{assignment}.ipynb"
    reference = {}
    if source.is_file():
        reference = answer_cells(nbformat.read(source, as_version=4))
    else:
        lines.append(f"  no reference answers ({source} is missing): classmates compared only")
    comparison = compare_class(submissions, reference, release)
    problems.update(comparison.problems)
    by_student = {o.student: o for o in outcomes}
    for student, why in problems.items():
        note = f"similarity: answers not compared ({why})"
        if student in by_student:
            by_student[student].notes.append(note)
        else:
            lines.append(f"  {shown(student)}: {shown(note)}")
    path = grading_folder(course.coursedir) / f"{assignment}_similarity.html"
    try:
        _write(path, report_html(comparison, assignment))
        where = f"side by side in {path}"
    except OSError as error:
        where = f"the report could not be written: {error}"
    best = {s: (p.score, partner(p, s)) for s, p in comparison.best.items()}
    return ClassCheck(best, summary(comparison, where, lines))


def _recorded(
    course: Course, assignment: str, skip: Iterable[str]
) -> tuple[dict[str, dict[str, str]], dict[str, str]]:
    """The answers of the class's other graded submissions, read back from the autograded
    folder, and why any could not be read."""
    root = course.path(course.coursedir.autograded_directory, ".", ".")
    answers, problems = {}, {}
    skipped = set(skip)
    for folder in sorted(root.glob("*")) if root.is_dir() else []:
        path = folder / assignment / f"{assignment}.ipynb"
        if folder.name in skipped or not os.path.lexists(path):
            continue
        try:
            text = read_regular_file(path, MAX_NOTEBOOK_BYTES).decode("utf-8")
            answers[folder.name] = answer_cells(nbformat.reads(text, as_version=4))
        except Exception as error:  # noqa: BLE001 - an unreadable copy is left out, said so
            problems[folder.name] = f"its graded copy could not be read: {error}"
    return answers, problems


def _write(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` in one rename (graders finishing together each write a
    whole file), readable by its owner only."""
    fd, partial = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:  # mkstemp: mode 0600
            handle.write(text)
        os.replace(partial, path)
    except BaseException:
        os.unlink(partial)
        raise


def summary(comparison: Comparison, where: str, lines: Sequence[str] = ()) -> str:
    """The lines printed after the table: each flagged student's highest score, and with whom."""
    flagged = {s: p for s, p in sorted(comparison.best.items()) if p.score >= comparison.threshold}
    head = (
        f"\nSimilar answers (for human review, never deducted): {len(flagged)} of "
        f"{len(comparison.cells) - (REFERENCE in comparison.cells)} submissions at or above "
        f"{comparison.threshold:.2f} (pairs flagged: {len(comparison.flagged)}); {where}"
    )
    rows = [["student", "similarity", "most similar to"]]
    rows += [[shown(s), f"{p.score:.3f}", shown(partner(p, s))] for s, p in flagged.items()]
    widths = [max(len(r[i]) for r in rows) for i in range(3)]
    table = ["  " + "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in rows]
    return "\n".join([head, *(table if flagged else []), *lines])
