"""Which hidden checks belong to which graded cell, how a failure is reported, and what a cell
scores.

Partial credit (one home for the rule: the grading command's judge, the in-process suite and plain
nbgrader all call :func:`grade_cell` and :class:`CellGrade`):

- Every check of a cell runs, each on its own, and reports its own verdict.  Two exceptions, each
  reported as following from an earlier check rather than judged: the checks after a failing
  *gate* (see :func:`check`) or reference ban (``reference_bans.ban``), and the checks left when the
  kernel stopped answering or judging time ran out.
- A cell earns the sum of the weights of its passing checks over the sum of all its weights; a
  failing gate or reference ban makes it earn nothing.  The cell's points are that share of its
  nbgrader points, rounded *down* to a hundredth of a point, so a cell with any failing check
  never shows full marks and the per-cell scores add up to what the gradebook stores.
- The visible (public) checks never change a score: what the student's kernel reports about
  them could be forged.  Every visible check has a hidden twin instead, a hidden check that finds
  the same mistakes on inputs the student has not seen (the mutation corpus shows it: the suite
  scores each known mistake without running any visible check, and it loses points).  A visible
  failure is only shown beside the verdict.
"""

from __future__ import annotations

import contextlib
import functools
import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import asdict, dataclass
from fractions import Fraction
from typing import Any, TypeVar

from autograder.authoring import student_errors
from autograder.authoring.check_modules import check_modules, import_checks
from autograder.authoring.dependencies import dependency_note
from autograder.authoring.hidden_seeds import secret_fingerprint

Namespace = Mapping[str, Any]
CheckFunction = Callable[[Namespace], None]
T = TypeVar("T")

# The label of a failure raised by a shared helper; run_check replaces it with the check's name.
HELPER_LABEL = "hidden check"


class CheckFailed(AssertionError):
    """A hidden check failed; the message names the likely misconception."""

    def __init__(self, check_name: str, diagnosis: str):
        super().__init__(f"[{check_name}] {diagnosis}")
        self.check_name = check_name
        self.diagnosis = diagnosis


def fail(diagnosis: object) -> None:
    """Fail the running check with a one-sentence diagnosis, a str or a named mistake (run_check
    adds the check's name)."""
    raise CheckFailed(HELPER_LABEL, str(diagnosis))


@dataclass(frozen=True)
class Check:
    """One named hidden check attached to a graded cell, with its share of the cell's points."""

    assignment: str
    grade_id: str
    name: str
    function: CheckFunction
    weight: float = 1.0  # 0 for a gate
    gate: bool = False


_REGISTRY: dict[tuple[str, str], list[Check]] = {}

# The weight of a check that judges a cell's edge cases (degenerate sizes, gradients, an optional
# argument) or a lesser clause of its statement beside its main case, worth 1: one edge case then
# costs a third of the cell, never all of it, and the main case stays the larger share.
EDGE_CASES = 0.5


def check(
    assignment: str,
    grade_id: str,
    name: str | None = None,
    *,
    weight: float = 1.0,
    gate: bool = False,
) -> Callable[[CheckFunction], CheckFunction]:
    """Register ``function`` as a hidden check of the graded cell ``grade_id``, named ``name``
    (by default the function's own name).

    weight: its share of the cell's points against the cell's other checks (a positive number).
    gate: a precondition worth no points (give no weight): when it fails, the cell earns nothing
    and its later checks are not run, each reported as following from it.  For checks whose
    failure makes the others meaningless: a reference called instead of implemented (the
    others would pay for the reference's answers) or an answer that is random in eval mode.
    """
    if gate and weight != 1.0:
        raise ValueError(f"{grade_id}: a gate is worth no points, so it takes no weight")
    if not gate and not (isinstance(weight, int | float) and math.isfinite(weight) and weight > 0):
        raise ValueError(f"{grade_id}: a check's weight must be a positive number, got {weight!r}")

    def register(function: CheckFunction) -> CheckFunction:
        entry = Check(
            assignment,
            grade_id,
            name or function.__name__,
            function,
            0.0 if gate else float(weight),
            gate,
        )
        _REGISTRY.setdefault((assignment, grade_id), []).append(entry)
        return function

    return register


_REFERENCE_DATA: dict[str, list[Callable[[], Any]]] = {}


def reference_data(assignment: str) -> Callable[[Callable[[], T]], Callable[[], T]]:
    """Register a builder of hidden reference data that no submission changes: it runs once per
    process and course secret (the data may draw hidden inputs), and :func:`prepare` runs it
    before a grading worker takes its first submission.  Student code must only ever get copies
    of what it builds."""

    def register(builder: Callable[[], T]) -> Callable[[], T]:
        @functools.lru_cache(maxsize=2)  # two secrets: a test that compares them
        def built_under(fingerprint: str) -> T:
            return builder()

        def cached() -> T:
            return built_under(secret_fingerprint())

        _REFERENCE_DATA.setdefault(assignment, []).append(cached)
        return cached

    return register


# Within one_submission(): key -> a value that several cells of one submission's grading judge.
_shared: dict[tuple[str, ...], Any] | None = None


@contextlib.contextmanager
def one_submission() -> Iterator[None]:
    """Grade one submission, once, under one course secret: the checks run inside share what
    :func:`shared` computes.  The judge grades one submission per process and enters it for its
    whole life; in-process grading enters it for each grading of a namespace."""
    global _shared
    previous, _shared = _shared, {}
    try:
        yield
    finally:
        _shared = previous


def forget_shared() -> None:
    """The kernel restarted: what was computed from its old objects no longer holds."""
    if _shared is not None:
        _shared.clear()


def shared(key: tuple[str, ...], compute: Callable[[], T]) -> T:
    """``compute()``, computed once for the cells of one submission that judge the same thing (a
    trained model's predictions on a held-out split), within :func:`one_submission`; outside it,
    computed at every call.  A failure is not kept: the next cell computes again.  The value is
    the grader's own (the student's code can only have given its parts), and every cell that
    shares it sees the same one, so the student's code cannot answer two cells differently."""
    if _shared is None:
        return compute()
    key = (secret_fingerprint(), *key)
    if key not in _shared:
        _shared[key] = compute()
    return _shared[key]


def prepare(assignment: str) -> None:
    """Import the checks of ``assignment`` and build its reference data; unknown ones are let be."""
    if assignment in check_modules():
        checks_for(assignment)
        for build in _REFERENCE_DATA.get(assignment, []):
            build()


def checks_for(assignment: str, grade_id: str | None = None) -> list[Check]:
    """The checks of one graded cell, or of every graded cell of the assignment."""
    import_checks(assignment)
    if grade_id is not None:
        found = _REGISTRY.get((assignment, grade_id))
        if not found:
            raise ValueError(f"no hidden checks registered for {assignment}/{grade_id}")
        return list(found)
    return [c for (a, _), entries in _REGISTRY.items() if a == assignment for c in entries]


_running: list[Check] = []  # the check being run, innermost last


def running_check() -> Check | None:
    """The check that :func:`run_check` is running now, if any."""
    return _running[-1] if _running else None


def run_check(entry: Check, namespace: Namespace) -> None:
    """Run one check; any failure becomes a CheckFailed that names the check (a reference ban
    keeps its own name)."""
    _running.append(entry)
    try:
        entry.function(namespace)
    except CheckFailed as failure:  # raised by a shared helper: label it with this check
        name = entry.name if failure.check_name == HELPER_LABEL else failure.check_name
        raise CheckFailed(name, failure.diagnosis) from None
    except NotImplementedError:
        raise CheckFailed(entry.name, "not implemented yet (the stub still raises)") from None
    except StopChecks:
        raise
    except Exception as error:  # the student's code crashed inside the check
        raise CheckFailed(entry.name, student_errors.explain(error)) from None
    finally:
        _running.pop()


@dataclass(frozen=True)
class CheckResult:
    """One check's verdict on one submission; ``diagnosis`` is empty when it passed."""

    name: str
    weight: float
    passed: bool
    diagnosis: str = ""
    gate: bool = False

    @classmethod
    def from_json(cls, report: dict) -> CheckResult:
        """Read ``asdict`` of a result back; KeyError, TypeError or ValueError if malformed."""
        return cls(
            str(report["name"]),
            float(report["weight"]),
            bool(report["passed"]),
            str(report["diagnosis"]),
            bool(report["gate"]),
        )


class StopChecks(Exception):
    """Raised through :func:`grade_cell` when no later check of the cell can run: the kernel is
    gone or judging time is spent.  Its message says why, as the student reads it."""


def _share(value: float) -> Fraction:
    """A weight or a point count as an exact fraction (0.1 is a tenth, not its binary neighbour)."""
    return Fraction(str(value))


@dataclass(frozen=True)
class CellGrade:
    """One graded cell's grade: its hidden checks' results, from which every record derives.

    visible_failure: the error that stopped the cell's visible check, shown, never scored.
    unjudged: why no check ran (the cell was never judged, or its judge stopped): it earns 0.
    """

    checks: tuple[CheckResult, ...]
    visible_failure: str = ""
    unjudged: str = ""

    @property
    def fraction(self) -> Fraction:
        """The share of the cell's points earned, from 0 to 1 (see the module's docstring)."""
        if not self.checks or any(c.gate and not c.passed for c in self.checks):
            return Fraction(0)
        weights = [_share(c.weight) for c in self.checks if not c.gate]
        if not weights:
            raise ValueError("a graded cell needs a check worth points besides its gates")
        earned = sum((_share(c.weight) for c in self.checks if c.passed and not c.gate), Fraction())
        return earned / sum(weights)

    @property
    def full_marks(self) -> bool:
        """True when every hidden check passed."""
        return self.fraction == 1

    def points(self, max_points: float) -> float:
        """The cell's score out of ``max_points``: all of them for full marks, else its share
        rounded down to 0.01 point."""
        if self.full_marks:
            return float(max_points)
        return math.floor(self.fraction * _share(max_points) * 100) / 100

    @property
    def first_failure(self) -> str:
        """``[check] diagnosis`` of the first failing check ("" when none failed)."""
        failed = next((c for c in self.checks if not c.passed), None)
        return f"[{failed.name}] {failed.diagnosis}" if failed else ""

    def describe(self) -> str:
        """What the student reads: the first failure's diagnosis, then the visible check's
        error, then every check, passed or failed, by name and diagnosis (never its source)."""
        if not self.checks:
            return self.unjudged or "this cell was not judged"
        lead = self.first_failure
        if self.visible_failure:
            lead = (
                f"{lead}{VISIBLE_CHECK_FAILED}{self.visible_failure}"
                if lead
                else "the hidden checks of this cell pass, but its visible check failed "
                f"(which does not change the score): {self.visible_failure}"
            )
        passed = sum(c.passed for c in self.checks)
        lines = [lead] if lead else []
        lines.append(f"hidden checks: {passed} of {len(self.checks)} passed")
        said: dict[str, str] = {}  # diagnosis -> the check that already said it
        for result in self.checks:
            label = f"{result.name}{_weight_note(result)}"
            if result.passed:
                lines.append(f"  passed  {label}")
                continue
            if result.diagnosis in said:
                why = f"as {said[result.diagnosis]}"
            elif not said:  # the first failure: its diagnosis leads the message
                why = "see the first line"
            else:
                why = result.diagnosis.replace("\n", "\n          ")
            said.setdefault(result.diagnosis, result.name)
            lines.append(f"  FAILED  {label}: {why}")
        return "\n".join(lines)

    def to_json(self) -> dict:
        """The grade as plain JSON (the judge process reports it over a pipe)."""
        return {
            "checks": [asdict(c) for c in self.checks],
            "visible_failure": self.visible_failure,
            "unjudged": self.unjudged,
        }

    @classmethod
    def from_json(cls, report: dict) -> CellGrade:
        """Read :meth:`to_json` back; KeyError, TypeError or ValueError if it is malformed."""
        checks = tuple(CheckResult.from_json(c) for c in report["checks"])
        return cls(checks, str(report["visible_failure"]), str(report["unjudged"]))


# Between the first failing check's diagnosis and the error that stopped a cell before its
# hidden checks.
VISIBLE_CHECK_FAILED = "\nthe visible check in this cell failed too: "


def _weight_note(result: CheckResult) -> str:
    if result.gate:
        return " (a precondition, no points of its own)"
    return "" if result.weight == 1 else f" (weight {result.weight:g})"


def grade_cell(
    assignment: str,
    grade_id: str,
    namespace: Namespace,
    visible_failure: str = "",
    on_check: Callable[[CheckResult], None] | None = None,
) -> CellGrade:
    """Run every hidden check of a graded cell against the names in ``namespace``.

    A failing gate or reference ban (see :func:`.reference_bans.ban`: a precondition
    of every check that uses the answer) or a :class:`StopChecks` ends the run: the checks left
    are reported failed, as following from it.  ``on_check`` hears each check's result as soon as
    it is known (the judge reports them, so a judge that dies later keeps them).
    """
    results: list[CheckResult] = []

    def finished(result: CheckResult) -> None:
        results.append(result)
        if on_check is not None:
            on_check(result)

    entries = checks_for(assignment, grade_id)
    note: list[str] = []  # computed at the first failure: is an answer this cell uses wrong?

    def noted(diagnosis: str) -> str:
        if not note:
            note.append(_dependency_note(assignment, grade_id, namespace))
        return note[0] + diagnosis

    for position, entry in enumerate(entries):
        later = entries[position + 1 :]
        try:
            run_check(entry, namespace)
        except StopChecks as stop:
            finished(CheckResult(entry.name, entry.weight, False, str(stop), entry.gate))
            why = f"not run: the checks stopped at {entry.name}"
        except CheckFailed as failure:
            name = failure.check_name
            if name != entry.name:  # a reference ban, named as declared: it voids the cell
                finished(CheckResult(name, 0.0, False, failure.diagnosis, gate=True))
                later = entries[position:]
            else:
                diagnosis = noted(failure.diagnosis)
                finished(CheckResult(name, entry.weight, False, diagnosis, entry.gate))
                if not entry.gate:
                    continue
            why = f"not run: {name} failed first"
        else:
            finished(CheckResult(entry.name, entry.weight, True, "", entry.gate))
            continue
        results += [CheckResult(e.name, e.weight, False, why, e.gate) for e in later]
        break
    return CellGrade(tuple(results), visible_failure)


_consulted: set[tuple[str, str]] = set()  # cells being graded for a dependency note


def _dependency_note(assignment: str, grade_id: str, namespace: Namespace) -> str:
    """The note that an answer ``grade_id`` uses is wrong, from that answer's own cells' checks."""

    def full_marks(cell: str) -> bool:
        if (assignment, cell) in _consulted:  # never judge a cell inside its own note
            return True
        _consulted.add((assignment, cell))
        try:
            return grade_cell(assignment, cell, namespace).full_marks
        finally:
            _consulted.discard((assignment, cell))

    _consulted.add((assignment, grade_id))
    try:
        return dependency_note(assignment, grade_id, full_marks)
    finally:
        _consulted.discard((assignment, grade_id))


def run_hidden_checks(assignment: str, grade_id: str, namespace: Namespace) -> None:
    """Run every hidden check of a graded cell against the names in ``namespace`` (as plain
    ``nbgrader autograde`` does, in the student's kernel: all or nothing there).

    Raises CheckFailed unless every check passes: the first failure's name and diagnosis, then
    every check's verdict; feedback (autograder/pipeline/feedback/feedback.py) shows that message
    and never a check's source.
    """
    grade = grade_cell(assignment, grade_id, namespace)
    if not grade.full_marks:
        failed = next(c for c in grade.checks if not c.passed)
        listing = grade.describe().removeprefix(grade.first_failure)
        raise CheckFailed(failed.name, failed.diagnosis + listing)
