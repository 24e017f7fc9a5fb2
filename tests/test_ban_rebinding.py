"""Reference bans follow re-binding, and every answer that a check requires declares one.

The judge reads a ban from the notebook's text (autograder/judging/source_bans.py).  For every
declared ban, submissions are built from the solution notebook by appending one cell that re-binds
the answer's name to the ban's reference: an import under the answer's name after its ``def``
(stub-then-alias), ``globals()[...] =``, a tuple assignment, and more forms in the fast test.  The
scan must flag each, while the solution and every correct alternative of the mutation corpus stay
unflagged.  The slow test grades the cells that use the answer in-process, with the bans judged
from the text as the judge does: the tricks earn nothing there, the solution full marks.
"""

from __future__ import annotations

import ast
import importlib
import inspect
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import nbformat
import pytest

from autograder.authoring import reference_bans
from autograder.authoring.check_modules import check_modules
from autograder.authoring.reference_bans import ReferenceBan, bans_of, bans_using
from autograder.authoring.registry import CheckFailed, checks_for, grade_cell
from autograder.cells import is_test_cell
from autograder.examples import solution_answers
from autograder.judging import proxies, source_bans
from autograder.suite.submission import DEMO_TAG, load_submission
from tests.mutants import mutated_cells
from tests.test_reference_bans import reference_expression
from tests.tiers import by_assignment

ROOT = Path(__file__).resolve().parents[1]

# Answers that a check requires but that declare no ban, each because nothing can be banned.
EXEMPT = {
    # The mutation corpus accepts Categorical(probs=w).entropy() as a correct alternative
    # (tests/mutants/m04_depth.py), and attention_lab computes no entropy.
    ("04_depth", "attention_entropy"),
    # Neither torch nor attention_lab computes a total variation distance.
    ("04_depth", "total_variation"),
    # Neither torch nor attention_lab has a streaming (online) softmax update.
    ("07_attention_at_scale", "online_softmax_update"),
    # The exercises whose design is the student's (issue 42): graded by properties, and neither
    # torch nor attention_lab has an answer to any of them.
    ("01_attention", "sees_the_future"),
    ("02_multi_head", "heads_switched_off"),
    ("03_transformer_block", "padded_block"),
    ("04_depth", "attention_focus"),
    ("05_sentiment", "token_importance"),
    ("06_char_lm", "penalise_repeats"),
    ("07_attention_at_scale", "partial_attention"),
    ("07_attention_at_scale", "merge_partials"),
    ("07_attention_at_scale", "finish_attention"),
}


def submitted_sources(assignment: str, cells: Mapping[str, str] | None = None) -> list[str]:
    """The code the judge scans for the solution notebook, answer cells replaced by ``cells``."""
    notebook = nbformat.read(ROOT / "solutions" / assignment / f"{assignment}.ipynb", 4)
    sources = []
    for cell in notebook.cells:
        if cell.cell_type == "code" and not is_test_cell(cell):
            grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
            sources.append((cells or {}).get(grade_id, cell.source))
    return sources


def answers(assignment: str) -> set[str]:
    """The names that the solution's answer cells define at top level."""
    names = set()
    for source in solution_answers(assignment).values():
        for node in ast.parse(source).body:
            if isinstance(node, ast.FunctionDef | ast.ClassDef):
                names.add(node.name)
            elif isinstance(node, ast.Assign):
                names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return names


def _functions(module: Any) -> Iterator[ast.FunctionDef]:
    for node in ast.walk(ast.parse(inspect.getsource(module))):
        if isinstance(node, ast.FunctionDef):
            yield node


def required(assignment: str) -> dict[str, set[str]]:
    """grade_id -> the names its checks look up: a string passed along with the namespace, in
    the check or in a function of its module that it calls, at any depth."""
    found: dict[str, set[str]] = {}
    for entry in checks_for(assignment):
        module = importlib.import_module(entry.function.__module__)
        functions = {f.name: f for f in _functions(module)}
        pending, seen, names = [entry.function.__name__], set(), set()
        while pending:
            function = functions.get(pending.pop())
            if function is None or function.name in seen:
                continue
            seen.add(function.name)
            for call in (n for n in ast.walk(function) if isinstance(n, ast.Call)):
                if isinstance(call.func, ast.Name):
                    pending.append(call.func.id)
                if any(isinstance(a, ast.Name) and a.id in ("ns", "namespace") for a in call.args):
                    names |= {
                        a.value
                        for a in call.args
                        if isinstance(a, ast.Constant) and isinstance(a.value, str)
                    }
        found.setdefault(entry.grade_id, set()).update(names)
    return found


@pytest.mark.slow  # half a second or more: out of the fast tier (tests/tiers.py)
@pytest.mark.parametrize("assignment", list(check_modules()))
def test_every_answer_a_check_requires_declares_a_ban(assignment: str):
    answered = answers(assignment)
    used = {name for names in required(assignment).values() for name in names} & answered
    assert used, f"no check of {assignment} requires an answer: the inventory finds nothing"
    missing = sorted(n for n in used if not bans_using(assignment, n))
    unexempted = [n for n in missing if (assignment, n) not in EXEMPT]
    assert not unexempted, f"{assignment}: no ban declared for {unexempted}"
    stale = sorted(n for a, n in EXEMPT if a == assignment and (n not in used or bans_using(a, n)))
    assert not stale, f"{assignment}: exempt, but not a banless answer a check requires: {stale}"


def tricks(name: str, target: Any) -> dict[str, str]:
    """A cell that re-binds ``name`` to ``target`` after the answer's own definition, per form."""
    module, expression = reference_expression(target)
    head, _, rest = expression.removeprefix(module + ".").partition(".")
    stub_then_alias = f"from {module} import {head} as {name}\n"
    if rest:  # a method: import its class, then bind the method to the answer's name
        stub_then_alias = f"from {module} import {head} as _owner\n{name} = _owner.{rest}\n"
    using = f"import {module}\n"
    return {
        "stub then alias": stub_then_alias,
        "globals()": f'{using}globals()["{name}"] = {expression}\n',
        "tuple": f"{using}{name}, _unused = {expression}, None\n",
        "conditional": f"{using}{name} = {expression} if True else None\n",
        "intermediate name": f"{using}_reference = {expression}\n{name} = _reference\n",
        "walrus": f"{using}({name} := {expression})\n",
        "for": f"{using}for {name} in [{expression}]:\n    pass\n",
        "setattr on the module": (
            f"import sys\n{using}setattr(sys.modules[__name__], {name!r}, {expression})\n"
        ),
        "global in a helper": (
            f"{using}def _rebind():\n    global {name}\n    {name} = {expression}\n_rebind()\n"
        ),
        "del then rebind": f"{using}del {name}\n{name} = {expression}\n",
    }


GRADED_TRICKS = ("stub then alias", "globals()", "tuple")


def every_ban() -> list[tuple[str, ReferenceBan]]:
    """(assignment, ban) for every declared ban, its checks imported."""
    found = []
    for assignment in check_modules():
        checks_for(assignment)
        found += [(assignment, b) for b in bans_of(assignment)]
    return found


@pytest.mark.parametrize(
    ("assignment", "reference_ban"), every_ban(), ids=lambda v: getattr(v, "name", v)
)
def test_the_source_scan_sees_every_rebinding_of_a_banned_answer(
    assignment: str, reference_ban: ReferenceBan
):
    sources = submitted_sources(assignment)
    name = reference_ban.name
    assert source_bans.banned_use(sources, name, reference_ban.banned) is None
    found = {
        (trick, repr(target)): source_bans.banned_use([*sources, cell], name, reference_ban.banned)
        for target in reference_ban.banned.values()
        for trick, cell in tricks(name, target).items()
    }
    missed = [f"{trick} to {target}" for (trick, target), seen in found.items() if seen is None]
    assert not missed, f"not flagged: {missed}"
    where = f"your code cell {len(sources) + 1}"  # the appended cell
    untrue = [s.seen for s in found.values() if f"`{name}`" not in s.seen or where not in s.seen]
    assert not untrue, f"the message does not say what was seen: {untrue}"


@pytest.mark.parametrize("assignment", list(check_modules()))
def test_no_correct_alternative_is_flagged(assignment: str):
    checks_for(assignment)
    module = importlib.import_module(f"tests.mutants.m{assignment}")
    flagged = []
    for mutant in module.CORRECT:
        sources = submitted_sources(assignment, mutated_cells(mutant))
        for reference_ban in bans_of(assignment):
            found = source_bans.banned_use(sources, reference_ban.name, reference_ban.banned)
            if found is not None:
                flagged.append(f"{mutant.name}: {found.seen}")
    assert not flagged, "\n".join(flagged)


class AsJudged(Mapping[str, Any]):
    """A namespace that records the name each object was looked up by, as the judge's does."""

    def __init__(self, namespace: Mapping[str, Any]):
        self.namespace = namespace
        self.origins: dict[int, str] = {}

    def __getitem__(self, name: str) -> Any:
        value = self.namespace[name]
        self.origins.setdefault(id(value), name)
        return value

    def __iter__(self) -> Iterator[str]:
        return iter(self.namespace)

    def __len__(self) -> int:
        return len(self.namespace)


def graded_as_judged(
    assignment: str, grade_id: str, namespace: Mapping[str, Any], sources: list[str]
) -> Any:
    """The cell's grade with every ban judged from ``sources``, as the judge judges it."""
    seen = AsJudged(namespace)
    with (
        pytest.MonkeyPatch.context() as patch,
        source_bans.using_sources(sources),
    ):
        patch.setattr(reference_bans, "forbid_references", reference_bans._forbid_in_source)
        patch.setattr(proxies, "origin_of", lambda value: seen.origins.get(id(value)))
        return grade_cell(assignment, grade_id, seen)


def _uses(assignment: str) -> dict[str, list[ReferenceBan]]:
    """name a check requires -> the bans that requiring it brings."""
    names = {n for names in required(assignment).values() for n in names}
    return {n: bans_using(assignment, n) for n in names if bans_using(assignment, n)}


@pytest.mark.slow
@pytest.mark.parametrize("assignment", by_assignment(check_modules()))
def test_a_rebound_answer_earns_nothing_where_it_is_used(assignment: str):
    checks_for(assignment)
    path = ROOT / "solutions" / assignment / f"{assignment}.ipynb"
    namespace = load_submission(path, skip_tags=(DEMO_TAG,)).namespace
    sources = submitted_sources(assignment)
    cells = required(assignment)
    ban_checks = {b.check_name for b in bans_of(assignment)}
    honest: dict[str, Any] = {}  # grade_id -> the solution's grade, judged the same way
    problems = []
    for reference_ban in bans_of(assignment):
        used = {n for n, bans in _uses(assignment).items() if reference_ban in bans}
        using = sorted(g for g, names in cells.items() if names & used)
        assert using, f"no cell of {assignment} uses {reference_ban.name}"
        target = next(iter(reference_ban.banned.values()))
        for grade_id in using:
            if grade_id not in honest:
                honest[grade_id] = graded_as_judged(assignment, grade_id, namespace, sources)
                if not honest[grade_id].full_marks:
                    problems.append(f"{grade_id}, the solution: {honest[grade_id].describe()}")
            for trick in GRADED_TRICKS:
                cell = tricks(reference_ban.name, target)[trick]
                grade = graded_as_judged(assignment, grade_id, namespace, [*sources, cell])
                # A helper re-bound breaks the ban of every answer that uses it, too.
                failed_bans = [r for r in grade.checks if r.name in ban_checks and not r.passed]
                if grade.fraction != 0 or not failed_bans:
                    problems.append(
                        f"{reference_ban.name}, {trick}, {grade_id}: {grade.describe()}"
                    )
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize(
    ("assignment", "reference_ban"), every_ban(), ids=lambda v: getattr(v, "name", v)
)
def test_the_run_time_gate_sees_an_answer_rebound_to_the_reference(
    assignment: str, reference_ban: ReferenceBan
):
    name, missed = reference_ban.name, []
    for target in reference_ban.banned.values():
        for trick in GRADED_TRICKS:
            namespace: dict[str, Any] = {"__name__": "submission"}
            exec(compile(tricks(name, target)[trick], f"<{trick}>", "exec"), namespace)
            try:
                reference_bans.forbid_references(namespace[name], reference_ban.banned, f"`{name}`")
            except CheckFailed:
                continue
            missed.append(f"{trick} to {target!r}")
    assert not missed, f"{assignment}, {name}: not failed by the run-time gate: {missed}"
