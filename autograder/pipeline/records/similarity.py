"""Copying made visible to the instructor: every submission's answers, compared with the reference
answers and with every classmate's by winnowing fingerprints, flagged for human review at or above
a calibrated threshold.  A flag never changes a grade: nothing here is read by the grading.

What is compared, and why this unit:
- Only answer cells (nbgrader's solution cells: what a student writes), exercise by exercise: a
  cell is compared with the same exercise's cell, never with another exercise's.
- Each cell is reduced to the code that can run and is used, its names written canonically, and
  fingerprinted by tree-based winnowing (autograder/pipeline/records/fingerprints.py): ``pass``
  after every line, unreachable or unused code around a copy, renamed variables, reordered
  definitions and another layout leave a copy's fingerprints as they were.  The whole cell counts
  (the intake keeps at most 100,000 characters of one).
- The released notebook's code (signatures, docstrings, given code) is boilerplate: every k-gram
  of it is removed from every cell before anything is counted, so a stub left as it is has none.
- A pair's score is Jaccard's, summed over the cells both wrote: fingerprints in common over
  fingerprints in either.  Each exercise so weighs as much as the code written for it, and one
  short exercise that everyone solves alike cannot flag a pair.  A cell with fewer than
  ``MIN_FINGERPRINTS`` fingerprints of its own (a one-line answer) is left out: such answers are
  alike because they are short, not because they were copied.
- Not whole notebooks: those would also match one exercise's code against another's and count
  the exercises only one side wrote, so a student who copied the one answer they wrote would
  hide behind the stubs.  tests/test_similarity.py calibrates THRESHOLD on the corpus of
  tests/similarity_corpus.py by the same unit.

Each submission is fingerprinted in a process of its own, forked from this one and bounded in
time and address space (the judge's confinement, autograder/judging/containment.py), so an answer
that is slow or large to read costs only its own row ("not computed"); and its fingerprints are
kept in the grading folder under a hash of its answers, so grading the class again reads them
back instead of computing them again.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import hashlib
import html
import itertools
import json
import os
import selectors
import signal
import tempfile
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import nbformat

from autograder.cells import answer_cells
from autograder.judging.containment import confine, death
from autograder.judging.limits import JudgeLimits
from autograder.pipeline.engines.jobs_and_outcomes import Outcome
from autograder.pipeline.records import fingerprints
from autograder.pipeline.records.safe_text import shown
from autograder.untrusted import read_regular_file

if TYPE_CHECKING:
    from autograder.pipeline.course.course import Course

THRESHOLD = 0.85  # calibrated on tests/similarity_corpus.py: see docs/figures.md
MIN_FINGERPRINTS = 8  # fewer in a cell: too short to tell copying from a common answer
# The name the reference answers are compared and shown under: no student folder can hold a "/".
REFERENCE = "/reference"
REPORT_PAIRS = 200  # the report shows at most this many flagged pairs, highest first
MAX_NOTEBOOK_BYTES = 64 * 2**20  # an autograded notebook read back from disk (outputs included)
# One submission's fingerprinting: its process's wall time and address space (beyond what this
# process had mapped when it forked), and what it may send back.
SECONDS_PER_SUBMISSION = 10.0
MEMORY_BYTES = 2**30
MAX_RESULT_BYTES = 64 * 2**20


@dataclass(frozen=True)
class Context:
    """What the released notebook gives every submission's fingerprinting: the k-grams of its
    code (boilerplate), the names it needs an answer to define or that its other cells read (never
    dropped as unused), and a digest of both and of the method (part of every kept entry's key)."""

    boilerplate: frozenset[int]
    keep: frozenset[str]
    digest: str


def context(release: nbformat.NotebookNode) -> Context:
    """The release's :class:`Context` (made once per process for each release)."""
    code = tuple(
        (cell.metadata.get("nbgrader", {}).get("solution", False) is True, cell.source)
        for cell in release.cells
        if cell.cell_type == "code"
    )
    exercises = tuple(answer_cells(release).values())
    return _context(code, exercises)


@functools.lru_cache(maxsize=8)
def _context(code: tuple[tuple[bool, str], ...], exercises: tuple[str, ...]) -> Context:
    keep: set[str] = set()
    for source in exercises:
        keep |= fingerprints.names_bound(source)
    for solution, source in code:
        if not solution:
            keep |= fingerprints.names_read(source)
    # Every k-gram of the released code, each cell read as an answer is (nothing dropped as
    # unused: its cells use each other's names).
    everything = frozenset(n for _, source in code for n in fingerprints.names_bound(source))
    reduced = fingerprints.reduce_answers(
        {str(n): source for n, (_, source) in enumerate(code)}, keep | everything
    )
    boilerplate = frozenset(
        h for cell in reduced.values() for h in fingerprints.kgram_hashes(cell.tokens)
    )
    method = [fingerprints.VERSION, fingerprints.K, fingerprints.WINDOW, MIN_FINGERPRINTS]
    digest = hashlib.sha256(
        json.dumps([method, sorted(boilerplate), sorted(keep)]).encode()
    ).hexdigest()
    return Context(boilerplate, frozenset(keep), digest)


def prepare(release: dict) -> None:
    """Read the released notebook's boilerplate now, while the workers start; :func:`check_class`
    then reuses it.  Never raises: check_class says what fails."""
    with contextlib.suppress(Exception):
        context(nbformat.from_dict(release))


@dataclass(frozen=True)
class Cell:
    """One answer cell as compared: the code shown (reachable code, printed again) and its
    fingerprints of its own (boilerplate removed), each with the lines (0-based) it covers."""

    code: str
    lines: Mapping[int, tuple[int, ...]] = field(compare=False)
    hashes: frozenset[int] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "hashes", frozenset(self.lines))


def fingerprint_submission(answers: Mapping[str, str], known: Context) -> dict[str, Any]:
    """grade_id -> {"code", "fingerprints": [[hash, [lines]], ...]} of every answer with at least
    ``MIN_FINGERPRINTS`` of its own: what a kept entry holds (JSON)."""
    cells = {}
    for grade_id, cell in fingerprints.reduce_answers(answers, known.keep).items():
        own = {
            h: lines
            for h, lines in fingerprints.winnowed(cell.tokens).items()
            if h not in known.boilerplate
        }
        if len(own) >= MIN_FINGERPRINTS:
            cells[grade_id] = {
                "code": cell.code,
                "fingerprints": [[h, [n - 1 for n in lines]] for h, lines in sorted(own.items())],
            }
    return cells


def _cells(entry: Mapping[str, Any]) -> dict[str, Cell]:
    """The cells of a kept or computed entry; raises on anything malformed."""
    cells = {}
    for grade_id, cell in entry.items():
        code, found = cell["code"], cell["fingerprints"]
        if not isinstance(grade_id, str) or not isinstance(code, str):
            raise TypeError("not a cell")
        cells[grade_id] = Cell(code, {int(h): tuple(int(n) for n in lines) for h, lines in found})
    return cells


def _key(known: Context, answers: Mapping[str, str]) -> str:
    """The name a submission's entry is kept under: its answers' text and the context."""
    text = json.dumps([known.digest, SECONDS_PER_SUBMISSION, MEMORY_BYTES, sorted(answers.items())])
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _read_kept(cache: Path, key: str) -> dict[str, Cell] | str | None:
    """A kept entry: the cells, why it could not be computed, or None if there is none."""
    try:
        entry = json.loads(read_regular_file(cache / f"{key}.json", MAX_RESULT_BYTES))
        return str(entry["failed"]) if "failed" in entry else _cells(entry["cells"])
    except Exception:  # noqa: BLE001 - missing or damaged: computed again
        return None


def _keep(cache: Path, key: str, result: Mapping[str, Any] | str) -> None:
    """Keep an entry (best effort: a failure to write costs only a later recomputation)."""
    entry = {"failed": result} if isinstance(result, str) else {"cells": result}
    with contextlib.suppress(OSError, ValueError):
        _write(cache / f"{key}.json", json.dumps(entry))


@dataclass
class _Run:
    """One submission's fingerprinting process, as this process watches it."""

    name: str
    pid: int
    fd: int
    deadline: float
    received: list[bytes] = field(default_factory=list)
    size: int = 0


def run_bounded(
    jobs: Mapping[str, Mapping[str, str]], known: Context
) -> dict[str, dict[str, Any] | str]:
    """name -> each submission's :func:`fingerprint_submission`, computed in a process of its own
    (at most one a core at a time) bounded in time and memory, or why it was not computed.

    The processes are forked: nothing is imported in them, and they only read trees, hash and
    write to their pipe.  A lock that another thread of this process held at the fork stays held
    in the child; none of those is taken there, and a child that hung anyway is stopped at its
    deadline, at the cost of its own row (as for the judge, autograder/judging/judge.py)."""
    limits = JudgeLimits(total_seconds=SECONDS_PER_SUBMISSION, memory_bytes=MEMORY_BYTES)
    waiting = list(jobs.items())
    running: dict[int, _Run] = {}
    results: dict[str, dict[str, Any] | str] = {}
    parallel = max(1, len(os.sched_getaffinity(0)))
    selector = selectors.DefaultSelector()

    def end(run: _Run, why: str | None) -> None:
        selector.unregister(run.fd)
        os.close(run.fd)
        del running[run.fd]
        if why is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(run.pid, signal.SIGKILL)
        _, status = os.waitpid(run.pid, 0)
        if why is None and status != 0:
            why = f"its process ended: {death(status)}"
        if why is None:
            try:
                sent = json.loads(b"".join(run.received))
                results[run.name] = sent["cells"] if "cells" in sent else str(sent["error"])
            except (ValueError, KeyError, TypeError) as error:
                results[run.name] = f"its process sent no fingerprints ({error})"
        else:
            results[run.name] = why

    try:
        while waiting or running:
            while waiting and len(running) < parallel:
                name, answers = waiting.pop(0)
                read_end, write_end = os.pipe()
                try:
                    pid = os.fork()
                except OSError as error:
                    os.close(read_end)
                    os.close(write_end)
                    results[name] = f"its process could not start ({error})"
                    continue
                if pid == 0:  # the child: never returns
                    _fingerprint_in_child(read_end, write_end, answers, known, limits)
                os.close(write_end)
                deadline = time.monotonic() + SECONDS_PER_SUBMISSION
                running[read_end] = _Run(name, pid, read_end, deadline)
                selector.register(read_end, selectors.EVENT_READ)
            if not running:
                continue
            wait = min(run.deadline for run in running.values()) - time.monotonic()
            for key, _ in selector.select(max(wait, 0)):
                run = running[key.fd]
                chunk = os.read(run.fd, 2**20)
                run.received.append(chunk)
                run.size += len(chunk)
                if not chunk:
                    end(run, None)
                elif run.size > MAX_RESULT_BYTES:
                    end(run, f"it sent more than {MAX_RESULT_BYTES // 2**20} MiB")
            now = time.monotonic()
            for run in [r for r in running.values() if r.deadline <= now]:
                end(run, f"stopped after {SECONDS_PER_SUBMISSION:g} s")
    finally:
        for run in list(running.values()):
            end(run, "stopped")
        selector.close()
    return results


def _fingerprint_in_child(
    read_end: int, write_end: int, answers: Mapping[str, str], known: Context, limits: JudgeLimits
) -> None:
    """In the forked process: confine it, fingerprint, send the result as JSON, exit."""
    status = 1
    with contextlib.suppress(BaseException):
        # No cyclic collection: it would walk (and copy) every object of the parent's heap, and
        # this short process makes no cycles worth collecting; its memory is bounded anyway.
        gc.disable()
        os.close(read_end)
        confine(limits, ())
        try:
            sent: dict[str, Any] = {"cells": fingerprint_submission(answers, known)}
        except Exception as error:  # noqa: BLE001 - said to the parent, which names the student
            sent = {"error": f"{type(error).__name__}: {error}"}
        with os.fdopen(write_end, "wb") as pipe:
            pipe.write(json.dumps(sent).encode("utf-8", "surrogatepass"))
        status = 0
    os._exit(status)


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
    best: dict[str, Pair] = field(default_factory=dict)  # student -> their highest-scoring pair
    flagged: list[Pair] = field(default_factory=list)  # score >= threshold, highest first
    problems: dict[str, str] = field(default_factory=dict)  # student -> why left out
    pairs_compared: int = 0
    computed: int = 0  # submissions fingerprinted now (the others' fingerprints were kept)


def compare_class(
    submissions: Mapping[str, Mapping[str, str]],
    reference: Mapping[str, str],
    release: nbformat.NotebookNode,
    threshold: float = THRESHOLD,
    cache: Path | None = None,
) -> Comparison:
    """Compare every submission (student -> grade_id -> source) with the reference answers and
    with every other; a submission whose fingerprints could not be computed is left out with the
    reason.  With ``cache`` (a folder), each submission's fingerprints are read from there when
    its answers are unchanged, kept there otherwise, and entries no longer used are removed."""
    known = context(release)
    exercises = answer_cells(release).keys()
    comparison = Comparison(threshold, {})
    named = [(REFERENCE, reference), *sorted(submissions.items())]
    keys = {
        name: _key(known, {g: s for g, s in answers.items() if g in exercises})
        for name, answers in named
    }
    found: dict[str, dict[str, Cell] | str] = {}  # key -> the cells, or why there are none
    jobs = {}  # each different set of answers is fingerprinted once
    for name, answers in named:
        key = keys[name]
        if key in found or key in jobs:
            continue
        kept = _read_kept(cache, key) if cache is not None else None
        if kept is not None:
            found[key] = kept
        else:
            jobs[key] = {g: s for g, s in answers.items() if g in exercises}
    comparison.computed = len(jobs)
    for key, result in run_bounded(jobs, known).items():
        if cache is not None:
            _keep(cache, key, result)
        try:
            found[key] = result if isinstance(result, str) else _cells(result)
        except (KeyError, TypeError, ValueError) as error:
            found[key] = f"its fingerprints were malformed ({error})"
    if cache is not None:
        _forget_others(cache, set(keys.values()))
    for name, _ in named:
        result = found[keys[name]]
        if isinstance(result, str):
            comparison.problems[name] = result
        else:
            comparison.cells[name] = result
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


def _forget_others(cache: Path, used: set[str]) -> None:
    """Remove the kept entries of answers no submission of the class holds any longer."""
    with contextlib.suppress(OSError):
        for path in cache.glob("*.json"):
            if path.stem not in used and len(path.stem) == 64:
                path.unlink(missing_ok=True)


def partner(pair: Pair, student: str) -> str:
    """The other side of ``pair``: a classmate, or ``REFERENCE``."""
    return pair.second if pair.first == student else pair.first


def matched_lines(first: Cell, second: Cell) -> tuple[set[int], set[int]]:
    """The lines (0-based) of each cell's code that its fingerprints in common cover."""
    shared = first.hashes & second.hashes
    return (
        {n for h in shared for n in first.lines[h]},
        {n for h in shared for n in second.lines[h]},
    )


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
        "released stub left out. Code is shown as compared: what can run and is used, printed "
        "again by Python's parser (layout, comments, dead and unused code gone); highlighted "
        "lines hold matching code.</p>",
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
            first_lines, second_lines = matched_lines(first, second)
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
    from autograder.pipeline.records.grade_record import grading_folder

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
    cache = grading_folder(course.coursedir) / f"{assignment}_similarity_cache"
    with contextlib.suppress(OSError):
        cache.mkdir(mode=0o700, exist_ok=True)
    comparison = compare_class(
        submissions, reference, release, cache=cache if cache.is_dir() else None
    )
    problems.update(comparison.problems)
    by_student = {o.student: o for o in outcomes}
    for student, why in problems.items():
        note = f"similarity: not computed: {why}"
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
