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

One mistake, one charge (see autograder/authoring/repairs.py): where a repair of a named mistake
makes failing checks of a cell pass, that mistake is confirmed as their cause, and the cell's
message lists them as failing for the same cause.  Within :func:`one_submission`, a cell that
earns full marks with one mistake repaired, a mistake already charged in an earlier cell, is not
charged again: it earns all its points, and its message says so and where the mistake was
charged (unless the course charges again, ``charge_again``).  The cell that lost points for it
first is charged as ever.
"""

from __future__ import annotations

import contextlib
import functools
import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import asdict, dataclass, replace
from fractions import Fraction
from typing import TYPE_CHECKING, Any, TypeVar

from autograder.authoring import student_errors
from autograder.authoring.check_modules import check_modules, import_checks
from autograder.authoring.dependencies import dependency_note
from autograder.authoring.hidden_seeds import secret_fingerprint

if TYPE_CHECKING:
    from autograder.authoring.repairs import Repair

Namespace = Mapping[str, Any]
CheckFunction = Callable[[Namespace], None]
T = TypeVar("T")

# The label of a failure raised by a shared helper; run_check replaces it with the check's name.
HELPER_LABEL = "hidden check"


class CheckFailed(AssertionError):
    """A hidden check failed; the message names the likely misconception."""

    def __init__(self, check_name: str, diagnosis: str, grader_raised: str = ""):
        super().__init__(f"[{check_name}] {diagnosis}")
        self.check_name = check_name
        self.diagnosis = diagnosis
        self.grader_raised = grader_raised  # the error the check itself raised, if it did


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
    keeps: tuple[str, ...] = ()  # the statement's clauses it exercises (clause_table.py)


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
    keeps: tuple[str, ...] = (),
) -> Callable[[CheckFunction], CheckFunction]:
    """Register ``function`` as a hidden check of the graded cell ``grade_id``, named ``name``
    (by default the function's own name).

    weight: its share of the cell's points against the cell's other checks (a positive number).
    gate: a precondition worth no points (give no weight): when it fails, the cell earns nothing
    and its later checks are not run, each reported as following from it.  For checks whose
    failure makes the others meaningless: a reference called instead of implemented (the
    others would pay for the reference's answers) or an answer that is random in eval mode.
    keeps: the clauses of the exercise's statement that the check's inputs exercise, each
    quoted from the solution notebook as students read it; the lint asks every check for one
    and finds each quote there (autograder/authoring/clause_table.py).
    """
    if isinstance(keeps, str) or not all(isinstance(quote, str) for quote in keeps):
        # A bare string would be read as a tuple of one-letter quotes.
        raise ValueError(f"{grade_id}: keeps takes a tuple of quotes, got {keeps!r}")
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
            tuple(keeps),
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


@dataclass
class _Charges:
    """Which cell of the submission was charged for each confirmed mistake, and the course's
    choice for a later cell that fails only because of one."""

    charge_again: bool
    charged_in: dict[str, str]  # mistake key -> the grade id of the cell that lost points for it


_charges: _Charges | None = None


@contextlib.contextmanager
def one_submission(charge_again: bool = False) -> Iterator[None]:
    """Grade one submission, once, under one course secret: the checks run inside share what
    :func:`shared` computes, and a mistake costs points in the first cell it fails
    (``charge_again``: in every cell it fails, as the course may choose).  The judge grades one
    submission per process and enters it for its whole life; in-process grading enters it for
    each grading of a namespace."""
    global _shared, _charges
    previous = _shared, _charges
    _shared, _charges = {}, _Charges(charge_again, {})
    try:
        yield
    finally:
        _shared, _charges = previous


def charges_again() -> bool | None:
    """Within :func:`one_submission`, whether the course charges a mistake in every cell it
    fails; None outside it (or inside an :func:`experiment`), where nothing is charged once."""
    return None if _charges is None else _charges.charge_again


@contextlib.contextmanager
def experiment() -> Iterator[None]:
    """Grade again as an experiment on the submission: nothing the real grading computed for it
    is reused (a model trained with the student's own parts), and no charge is recorded."""
    global _shared, _charges
    previous = _shared, _charges
    _shared, _charges = {}, None
    try:
        yield
    finally:
        _shared, _charges = previous


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


# The check being run, innermost last, with the names of the student's answers it took.
_running: list[tuple[Check, set[str]]] = []


def running_check() -> Check | None:
    """The check that :func:`run_check` is running now, if any."""
    return _running[-1][0] if _running else None


def took(name: str) -> None:
    """The running check took the student's ``name`` (``requiring.require`` says so)."""
    if _running:
        _running[-1][1].add(name)


def run_check(entry: Check, namespace: Namespace, taken: set[str] | None = None) -> None:
    """Run one check; any failure becomes a CheckFailed that names the check (a reference ban
    keeps its own name).  ``taken`` gets the names of the answers it took."""
    _running.append((entry, set() if taken is None else taken))
    student_errors.forget_grader_raised()
    try:
        entry.function(namespace)
    except CheckFailed as failure:  # raised by a shared helper: label it with this check
        name = entry.name if failure.check_name == HELPER_LABEL else failure.check_name
        raise CheckFailed(name, failure.diagnosis, student_errors.grader_raised()) from None
    except NotImplementedError as error:
        if student_errors.raised_by_answer(error):
            raise CheckFailed(entry.name, "not implemented yet (the stub still raises)") from None
        diagnosis = student_errors.explain(error)
        raise CheckFailed(entry.name, diagnosis, student_errors.grader_raised()) from None
    except StopChecks:
        raise
    except Exception as error:  # the student's code crashed inside the check, or the check did
        diagnosis = student_errors.explain(error)
        raise CheckFailed(entry.name, diagnosis, student_errors.grader_raised()) from None
    finally:
        _running.pop()


@dataclass(frozen=True)
class CheckResult:
    """One check's verdict on one submission; ``diagnosis`` is empty when it passed.

    cause: for a failing check that passes with one named mistake repaired, that mistake's
    message (the cause confirmed on this answer), else "".  repair: the key of the repair that
    confirmed it (autograder/authoring/repairs.py; students are not shown it), else "".

    grader_raised: the error the check's own code raised while judging (not the student's code:
    autograder/authoring/student_errors.py), which the grade record flags for review, else "".
    """

    name: str
    weight: float
    passed: bool
    diagnosis: str = ""
    gate: bool = False
    cause: str = ""
    repair: str = ""
    grader_raised: str = ""

    @classmethod
    def from_json(cls, report: dict) -> CheckResult:
        """Read ``asdict`` of a result back; KeyError, TypeError or ValueError if malformed."""
        return cls(
            str(report["name"]),
            float(report["weight"]),
            bool(report["passed"]),
            str(report["diagnosis"]),
            bool(report["gate"]),
            str(report["cause"]),
            str(report["repair"]),
            str(report["grader_raised"]),
        )


class StopChecks(Exception):
    """Raised through :func:`grade_cell` when no later check of the cell can run: the kernel is
    gone or judging time is spent.  Its message says why, as the student reads it."""


def _share(value: float) -> Fraction:
    """A weight or a point count as an exact fraction (0.1 is a tenth, not its binary neighbour)."""
    return Fraction(str(value))


@dataclass(frozen=True)
class Repeat:
    """A cell that fails only because of a mistake charged in an earlier cell: it earns full
    marks with that mistake repaired (autograder/authoring/repairs.py)."""

    cause: str  # the mistake in a few words: "the softmax axis in `attention`"
    charged_in: str  # the grade id of the cell that lost points for it first
    waived: bool  # True: not charged again (the default); False: the course charges again
    # how the cell was graded again: "" for a repair of the mistake, else what replaced what
    # ("the course's `split_heads` in place of yours": autograder/authoring/used_answers.py)
    graded_with: str = ""

    def describe(self) -> str:
        """The line that says which happened."""
        if self.waived:
            how = f"with {self.graded_with}" if self.graded_with else "with that one mistake undone"
            return (
                f"not charged again: fails only because of {self.cause}, charged in "
                f"{self.charged_in} ({how}, every check of this cell passes)"
            )
        return (
            f"charged again: fails only because of {self.cause}, charged in {self.charged_in} "
            "too (this course charges a mistake in every cell it fails)"
        )


@dataclass(frozen=True)
class CellGrade:
    """One graded cell's grade: its hidden checks' results, from which every record derives.

    visible_failure: the error that stopped the cell's visible check, shown, never scored.
    unjudged: why no check ran (the cell was never judged, or its judge stopped): it earns 0.
    repeat: where the cell fails only because of a mistake charged in an earlier cell, which
    cell, and whether this one is charged again (see the module's docstring).
    """

    checks: tuple[CheckResult, ...]
    visible_failure: str = ""
    unjudged: str = ""
    repeat: Repeat | None = None

    @property
    def fraction(self) -> Fraction:
        """The share of the cell's points earned, from 0 to 1 (see the module's docstring)."""
        if self.repeat is not None and self.repeat.waived:
            return Fraction(1)
        if not self.checks or any(c.gate and not c.passed for c in self.checks):
            return Fraction(0)
        weights = [_share(c.weight) for c in self.checks if not c.gate]
        if not weights:
            raise ValueError("a graded cell needs a check worth points besides its gates")
        earned = sum((_share(c.weight) for c in self.checks if c.passed and not c.gate), Fraction())
        return earned / sum(weights)

    @property
    def full_marks(self) -> bool:
        """True when the cell earns all its points: every hidden check passed, or it fails only
        because of a mistake charged in another cell, and is not charged again."""
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

    @property
    def first_told(self) -> str:
        """The first failure and, where a repair confirmed a cause its message does not name,
        that cause on a line of its own: what the student reads first of this cell's checks."""
        first = next((c for c in self.checks if not c.passed), None)
        if first is not None and first.cause and first.cause not in first.diagnosis:
            return f"{self.first_failure}\n{CONFIRMED_CAUSE}{first.cause}"
        return self.first_failure

    def describe(self) -> str:
        """What the student reads: whether a repeated mistake is charged again, the first
        failure's diagnosis, then the visible check's error, then every check, passed or failed,
        by name and diagnosis (never its source).  A failing check whose confirmed cause
        (:attr:`CheckResult.cause`) was shown already is listed as failing for the same cause."""
        if not self.checks:
            return self.unjudged or "this cell was not judged"
        lead = self.first_told
        if self.repeat is not None:
            lead = f"{self.repeat.describe()}\n{lead}"
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
        causes: dict[str, str] = {}  # confirmed cause -> the check whose message showed it
        for result in self.checks:
            label = f"{result.name}{_weight_note(result)}"
            if result.passed:
                lines.append(f"  passed  {label}")
                continue
            if result.diagnosis in said:
                why = f"as {said[result.diagnosis]}"
            elif result.cause in causes:
                why = f"also fails, same cause as {causes[result.cause]}"
            elif not said:  # the first failure: its diagnosis leads the message
                why = "see the first line"
            else:
                why = result.diagnosis.replace("\n", "\n          ")
                if result.cause and result.cause not in result.diagnosis:
                    why += f"\n          {CONFIRMED_CAUSE}{result.cause}"
            said.setdefault(result.diagnosis, result.name)
            if result.cause:
                causes.setdefault(result.cause, result.name)
            lines.append(
                f"  FAILED  while checking {_in_words(result.name)}{_weight_note(result)}: {why}"
            )
        return "\n".join(lines)

    def to_json(self) -> dict:
        """The grade as plain JSON (the judge process reports it over a pipe)."""
        return {
            "checks": [asdict(c) for c in self.checks],
            "visible_failure": self.visible_failure,
            "unjudged": self.unjudged,
            "repeat": asdict(self.repeat) if self.repeat is not None else None,
        }

    @classmethod
    def from_json(cls, report: dict) -> CellGrade:
        """Read :meth:`to_json` back; KeyError, TypeError or ValueError if it is malformed."""
        checks = tuple(CheckResult.from_json(c) for c in report["checks"])
        repeat = report["repeat"]
        if repeat is not None:
            repeat = Repeat(
                str(repeat["cause"]),
                str(repeat["charged_in"]),
                repeat["waived"] is True,
                str(repeat.get("graded_with", "")),
            )
        return cls(checks, str(report["visible_failure"]), str(report["unjudged"]), repeat)


# Between the first failing check's diagnosis and the error that stopped a cell before its
# hidden checks.
VISIBLE_CHECK_FAILED = "\nthe visible check in this cell failed too: "
# Before a mistake that a repair confirmed, where the check's own message does not name it.
CONFIRMED_CAUSE = "confirmed on your answer (with that one mistake undone, this check passes): "


def _in_words(name: str) -> str:
    """A check's name as what it checked ("ablation is defined at the edges"): beside FAILED,
    the bare name reads as a claim about the answer, where the message may be about another
    promise (issue 40's k02-04, an in-place write told under ablation_is_defined_at_the_edges)."""
    return name.replace("_", " ")


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
    taken: dict[str, set[str]] = {entry.name: set() for entry in entries}  # what each took
    note: list[str] = []  # computed at the first failure: is an answer this cell uses wrong?

    def noted(diagnosis: str) -> str:
        if not note:
            note.append(_dependency_note(assignment, grade_id, namespace))
        return note[0] + diagnosis

    for position, entry in enumerate(entries):
        later = entries[position + 1 :]
        try:
            run_check(entry, namespace, taken[entry.name])
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
                finished(
                    CheckResult(
                        name,
                        entry.weight,
                        False,
                        diagnosis,
                        entry.gate,
                        grader_raised=failure.grader_raised,
                    )
                )
                if not entry.gate:
                    continue
            why = f"not run: {name} failed first"
        else:
            finished(CheckResult(entry.name, entry.weight, True, "", entry.gate))
            continue
        results += [CheckResult(e.name, e.weight, False, why, e.gate) for e in later]
        break
    else:  # every check ran, and none voided the cell: a repair may explain its failures
        if not _consulted and any(not r.passed for r in results):
            return _charged(assignment, grade_id, namespace, taken, results, visible_failure)
    return CellGrade(tuple(results), visible_failure)


def _charged(
    assignment: str,
    grade_id: str,
    namespace: Namespace,
    taken: dict[str, set[str]],
    results: list[CheckResult],
    visible_failure: str,
) -> CellGrade:
    """The cell's grade, each failing check run again on each repair of an answer it took
    (autograder/authoring/repairs.py): a check that then passes has that mistake as its cause.
    A cell that passes every check with one mistake repaired, a mistake charged in an earlier
    cell of the submission, is a :class:`Repeat` of it; otherwise this cell is charged for the
    mistakes that explain its checks."""
    from autograder.authoring.repairs import repairs_of

    causes: dict[str, Repair] = {}  # check name -> the repair its failure is confirmed by
    try:
        for repair in repairs_of(assignment):
            repaired = repair.applied_to(namespace)
            for entry, result in zip(checks_for(assignment, grade_id), results, strict=True):
                if result.passed or entry.name in causes or repair.name not in taken[entry.name]:
                    continue
                try:
                    run_check(entry, repaired)
                except CheckFailed:
                    continue
                causes[entry.name] = repair
    except StopChecks:  # no time or no kernel left for the experiment: nothing is confirmed
        return CellGrade(tuple(results), visible_failure)
    explained = tuple(
        replace(r, cause=causes[r.name].mistake.message, repair=causes[r.name].key)
        if r.name in causes
        else r
        for r in results
    )
    # the mistake each failing check is explained by (None: no repair explains it); a mistake
    # with several repairs is one mistake
    failing = {r.name: causes.get(r.name) for r in results if not r.passed}
    keys = {None if repair is None else repair.mistake.key for repair in failing.values()}
    only = next(iter(failing.values())) if len(keys) == 1 else None
    repeat = None
    if _charges is not None:
        first = _charges.charged_in.get(only.mistake.key) if only is not None else None
        if only is not None and first is not None and first != grade_id:
            repeat = Repeat(only.cause, first, waived=not _charges.charge_again)
        else:
            for key in keys - {None}:
                _charges.charged_in.setdefault(key, grade_id)
    return CellGrade(explained, visible_failure, repeat=repeat)


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
