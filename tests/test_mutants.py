"""The hidden checks catch every known-wrong answer and accept every known-correct one.

Each mutant is a solution notebook with some answer cells patched; it is graded in-process by the
same checks that nbgrader's hidden-test cells call.  It is graded twice, under the public
development secret and under another course's secret (autograder/authoring/hidden_seeds.py): the
hidden inputs differ, the grades must not.  The notebook runs once for both (training is most of
the cost), so the second grading adds about a fifth to the corpus's CPU time.
"""

from __future__ import annotations

import ast
import contextlib
import importlib
import io
import os
import pickle
import pkgutil
import random
import sys
import tempfile
import traceback
import warnings
from collections.abc import Callable, Iterator, Mapping
from functools import cache
from pathlib import Path
from typing import TypeVar

import nbformat
import numpy as np
import pytest
import torch

import tests.mutants
from autograder.authoring.dependencies import declared, dependents, judged_in
from autograder.authoring.hidden_seeds import secret_in_use
from autograder.authoring.mistakes import mistakes_of, named_in
from autograder.authoring.registry import (
    CellGrade,
    Check,
    CheckResult,
    checks_for,
    run_check,
    running_check,
)
from autograder.authoring.repairs import repairs_of
from autograder.authoring.requiring import REQUIRED
from autograder.examples import solution_answers
from autograder.judging.containment import death
from autograder.pipeline.feedback.feedback import redact_source
from autograder.suite.submission import DEMO_TAG, Submission, grade_submission, load_submission
from tests.judge_parity import assert_judge_agrees, picked
from tests.mutants import Body, Mutant, Replace, apply_patch, mutated_cells
from tests.test_reference_bans import BANNED_PHRASE

T = TypeVar("T")
ROOT = Path(__file__).resolve().parents[1]
CORPUS: list[Mutant] = [
    mutant
    for info in pkgutil.iter_modules(tests.mutants.__path__)
    for module in [importlib.import_module(f"tests.mutants.{info.name}")]
    for mutant in (*module.WRONG, *module.CORRECT)
]
ASSIGNMENTS = sorted({m.assignment for m in CORPUS})
AGREED_WRONG, AGREED_CORRECT = 917, 155  # docs/figures.md: the corpus may grow, never shrink
_GRADED: dict[str, dict[str, CellGrade]] = {}  # mutant id -> its grades, once per run
# Another course's secret, and mutant id (or "<assignment>: the solution") -> the grades under it
OTHER_SECRET = b"tests/test_mutants.py: another course's secret"
_GRADED_UNDER_OTHER: dict[str, dict[str, CellGrade]] = {}
_VISIBLE: dict[str, dict[str, str]] = {}  # mutant id -> test cell -> its visible asserts' error
# mutant id -> the modules its forked grading imported (a notebook that trains its model)
_IMPORTED_IN_FORK: dict[str, list[str]] = {}


def mutant_id(mutant: Mutant) -> str:
    """The mutant's test id: assignment and name."""
    return f"{mutant.assignment}: {mutant.name}"


def build(mutant: Mutant, folder: Path) -> Path:
    """Write the solution notebook with the mutant's patched answer cells swapped in."""
    cells = mutated_cells(mutant)
    source = ROOT / "solutions" / mutant.assignment / f"{mutant.assignment}.ipynb"
    nb = nbformat.read(source, as_version=4)
    replaced = set()
    for cell in nb.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in cells:
            cell.source = cells[grade_id]
            replaced.add(grade_id)
    assert replaced == set(cells), f"no such answer cells: {set(cells) - replaced}"
    path = folder / f"{mutant.assignment}.ipynb"
    nbformat.write(nb, path)
    return path


def grade(path: Path) -> dict[str, CellGrade]:
    """grade_id -> result of every graded cell of the notebook at ``path``; the solutions'
    demonstration cells are skipped (the solution's full marks below prove nothing needs them)."""
    return grade_submission(load_submission(path, skip_tags=(DEMO_TAG,)))


def graded(mutant: Mutant) -> dict[str, CellGrade]:
    """The mutant's grades (its hidden checks), computed by whichever test asks first; the errors
    of its test cells' visible asserts are kept beside them (:func:`run_visible_checks`).

    A mutant is run in a fork of this process taken after the solution's cells before its first
    changed one (:func:`solution_up_to`): the same state as running them again, without their
    cost (06's mutants of `sample`, which comes after the training, do not train the model again;
    01's do not draw its plots again)."""
    key = mutant_id(mutant)
    if key not in _GRADED:
        with tempfile.TemporaryDirectory() as folder:
            path = build(mutant, Path(folder))
            # Grading the solution here first leaves in this process what a grading imports
            # on first use (torch._dynamo with sympy, at the first optimizer; scikit-learn)
            # and the checks' reference data under both secrets, which no fork could keep:
            # 3 s of CPU per 05 mutant.  The class needs that grading anyway.
            solution_graded(mutant.assignment)
            # A cell that fails looks up the assignment's repairs (registry._charged), which
            # the solution's grading, failing nothing, never imports.
            repairs_of(mutant.assignment)
            before, generators = solution_up_to(mutant.assignment, first_changed_cell(mutant))

            def carried_on() -> tuple[tuple[dict, dict, dict], list[str]]:
                set_generator_states(generators)  # as the solution's cells left them
                loaded = set(sys.modules)
                submission = load_submission(path, skip_tags=(DEMO_TAG,), after=before)
                results = graded_with_visible(submission, folder)
                return results, sorted(set(sys.modules) - loaded)

            (results, _IMPORTED_IN_FORK[key]), required = in_a_fork(carried_on)
            REQUIRED.update(required)
            _GRADED[key], _GRADED_UNDER_OTHER[key], _VISIBLE[key] = results
    return _GRADED[key]


def graded_with_visible(submission: Submission, folder: str) -> tuple[dict, dict, dict]:
    """The submission's grades under the development secret and under OTHER_SECRET, and its
    visible asserts' errors."""
    grades = grade_submission(submission)
    with secret_in_use(OTHER_SECRET):
        other = grade_submission(submission)
    return grades, other, run_visible_checks(submission.assignment, submission.namespace, folder)


def first_changed_cell(mutant: Mutant) -> int:
    """The index in the notebook of the first answer cell the mutant patches."""
    return min(cell_indices(mutant.assignment)[grade_id] for grade_id in mutant.patches)


@cache
def cell_indices(assignment: str) -> dict[str, int]:
    """grade_id -> the index of that cell in the solution notebook."""
    notebook = nbformat.read(ROOT / "solutions" / assignment / f"{assignment}.ipynb", 4)
    return {
        cell.metadata["nbgrader"]["grade_id"]: index
        for index, cell in enumerate(notebook.cells)
        if "grade_id" in cell.metadata.get("nbgrader", {})
    }


@cache
def solution_up_to(assignment: str, stop: int) -> tuple[Submission, tuple]:
    """The solution run up to cell ``stop`` (its namespace is only ever carried on in a fork),
    and the global random generators' states it left."""
    path = ROOT / "solutions" / assignment / f"{assignment}.ipynb"
    return load_submission(path, skip_tags=(DEMO_TAG,), stop=stop), generator_states()


def generator_states() -> tuple:
    """The states of Python's, NumPy's and torch's global random generators."""
    cuda = torch.cuda.get_rng_state_all() if torch.cuda.is_available() else None
    return random.getstate(), np.random.get_state(), torch.get_rng_state(), cuda


def set_generator_states(states: tuple) -> None:
    """Put back what :func:`generator_states` returned."""
    python, numpy, cpu, cuda = states
    random.setstate(python)
    np.random.set_state(numpy)
    torch.set_rng_state(cpu)
    if cuda is not None:
        torch.cuda.set_rng_state_all(cuda)


def in_a_fork(work: Callable[[], T]) -> tuple[T, set[tuple[str, str, str]]]:
    """``work()`` computed in a child process forked from this one, and what its checks
    required (autograder.authoring.requiring.REQUIRED) that this process had not seen."""
    read, write = os.pipe()
    with warnings.catch_warnings():
        # The child runs only this function, then os._exit: it takes no lock of pytest's or
        # xdist's threads, which Python 3.12 warns about when forking next to them.
        warnings.filterwarnings("ignore", "This process .* is multi-threaded", DeprecationWarning)
        child = os.fork()
    if child == 0:
        status = 1
        try:  # whatever happens, the child leaves here: it must not go on running the tests
            os.close(read)
            try:
                before = set(REQUIRED)
                payload = pickle.dumps(("done", (work(), REQUIRED - before)))
                status = 0
            except BaseException:  # noqa: BLE001 - the parent raises it, with the traceback
                payload = pickle.dumps(("failed", traceback.format_exc()))
            with os.fdopen(write, "wb") as pipe:
                pipe.write(payload)
        finally:
            os._exit(status)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        payload = pipe.read()
    _, wait_status = os.waitpid(child, 0)
    if not payload:
        raise AssertionError(f"the forked grading gave no result: {death(wait_status)}")
    outcome, value = pickle.loads(payload)
    if outcome != "done":
        raise AssertionError(f"grading in the forked process failed:\n{value}")
    return value


def verdicts(results: dict[str, CellGrade]) -> dict[str, tuple[float, list[tuple[str, bool]]]]:
    """grade_id -> the cell's share of its points and each check's verdict (not the diagnoses,
    which name the hidden sizes)."""
    return {
        g: (float(r.fraction), [(c.name, c.passed) for c in r.checks]) for g, r in results.items()
    }


@cache
def visible_part(assignment: str, grade_id: str) -> str:
    """The test cell's source without its hidden region, as students see it."""
    notebook = nbformat.read(ROOT / "solutions" / assignment / f"{assignment}.ipynb", 4)
    for cell in notebook.cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id") == grade_id:
            return redact_source(cell.source)[0]
    raise AssertionError(f"{assignment} has no cell {grade_id}")


def run_visible_checks(assignment: str, namespace: dict, folder: str) -> dict[str, str]:
    """test cell -> the error its visible asserts raise in ``namespace`` (run after the hidden
    checks, in notebook order, output and files kept out of sight), for every cell that raises."""
    errors = {}
    start = os.getcwd()
    os.chdir(folder)
    try:
        for grade_id in (cell for cells in own_cells(assignment).values() for cell in cells):
            sink = io.StringIO()
            try:
                code = compile(visible_part(assignment, grade_id), f"<{grade_id}>", "exec")
                with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
                    exec(code, namespace)
            except Exception as error:
                errors[grade_id] = f"visible check: {type(error).__name__}: {error}"
    finally:
        os.chdir(start)
    return errors


def mismatches(mutant: Mutant, results: dict[str, CellGrade]) -> list[str]:
    """How the grades depart from what the mutant must get; empty when they do not.  A cell
    "fails" when it loses points (partial credit counts as a loss), or when it is waived as
    failing only because of a wrong answer cell it uses, and the first failing check's
    diagnosis, or the cause a repair confirmed for it, must name the mistake; one of them at
    least must lose points."""
    lost = {gid: r.first_told for gid, r in results.items() if r.fraction < 1}
    if mutant.is_correct:
        return [f"a correct alternative lost points: {lost}"] if lost else []
    # A cell that fails only because of a wrong answer cell it uses is not charged again
    # (autograder/authoring/used_answers.py): it fails, and its message must still name the
    # mistake, but the points are lost in the answer's own cells.
    repeated = {
        gid: r.first_told
        for gid, r in results.items()
        if r.repeat is not None and r.repeat.waived and r.repeat.graded_with
    }
    problems = []
    for grade_id, phrase in mutant.must_fail.items():
        told = lost.get(grade_id, repeated.get(grade_id))
        if told is None:
            problems.append(f"{grade_id} kept full marks, but should have lost points ({lost})")
        elif phrase not in told:
            problems.append(f"wrong diagnosis for {grade_id}: {told}")
    if not set(lost) & set(mutant.must_fail):
        problems.append(f"no cell of {list(mutant.must_fail)} lost points: {lost}")
    if mutant.charged_once:
        problems += [
            f"{grade_id} lost points again for the mistake charged in {list(mutant.must_fail)}: "
            f"{lost[grade_id]}"
            for grade_id in sorted(set(lost) - set(mutant.must_fail))
        ]
    visible = _VISIBLE.get(mutant_id(mutant), {})
    return problems + double_penalties(mutant, {**visible, **lost})


@cache
def own_cells(assignment: str) -> dict[str, tuple[str, ...]]:
    """answer cell -> the graded test cells that follow it in the solution notebook (its exercise's
    cells: a test cell judges the answer cell above it)."""
    answers = set(solution_answers(assignment))
    notebook = nbformat.read(ROOT / "solutions" / assignment / f"{assignment}.ipynb", 4)
    cells: dict[str, list[str]] = {}
    current = None
    for cell in notebook.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("grade_id") in answers:
            current = meta["grade_id"]
            cells[current] = []
        elif meta.get("grade") and not meta.get("solution") and current is not None:
            cells[current].append(meta["grade_id"])
    return {answer: tuple(tests) for answer, tests in cells.items()}


def double_penalties(mutant: Mutant, lost: Mapping[str, str]) -> list[str]:
    """The cells that lost points (grade_id -> diagnosis, from the hidden or the visible checks)
    although they neither judge an answer the mutant changes nor declare
    (autograder.authoring.dependencies.depends_on) that they use one.

    A reference ban is left out: it costs exactly the cells that call its answer, by design
    (tests/test_reference_bans.py), such as a build_vocab calling a clean that calls the reference.
    """
    lost = {cell for cell, diagnosis in lost.items() if BANNED_PHRASE not in diagnosis}
    allowed = set()
    for answer in mutant.patches:
        allowed |= {*own_cells(mutant.assignment)[answer], *dependents(mutant.assignment, answer)}
    changed = ", ".join(f'"{answer}"' for answer in mutant.patches)
    judges = ", ".join(
        f'"{answer}": {list(own_cells(mutant.assignment)[answer])}' for answer in mutant.patches
    )
    problems = []
    for grade_id in sorted(set(lost) - allowed):
        module = checks_for(mutant.assignment, grade_id)[0].function.__module__
        problems.append(
            f"double penalty: {grade_id} lost points, but the mutant changes only {changed}. "
            f"If {grade_id} uses that answer by design, declare it next to its checks, in "
            f'{module}: depends_on(ASSIGNMENT, ["{grade_id}"], {{{judges}}}) (from '
            "autograder.authoring.dependencies); otherwise make its visible and hidden checks "
            "judge its own exercise (the reference where it needs another answer)"
        )
    return problems


def declared_mistakes(mutant: Mutant) -> set[str]:
    """The named mistakes ``mutant`` makes: its ``makes``, and those its phrases name."""
    catalogue = mistakes_of(mutant.assignment)
    keys = set(mutant.makes)
    for phrase in mutant.must_fail.values():
        keys |= {key for key, mistake in catalogue.items() if phrase in mistake.message}
    return keys


def told_mistakes(mutant: Mutant, results: dict[str, CellGrade]) -> dict[str, set[str]]:
    """grade_id -> the named mistakes that the messages of the cell's failing checks name, and
    those a repair confirmed as their cause (registry.CheckResult.cause: the message shows it)."""
    told = {}
    for grade_id, result in results.items():
        found = set()
        for check in result.checks:
            if not check.passed:
                found |= named_in(mutant.assignment, f"{check.diagnosis}\n{check.cause}")
        if found:
            told[grade_id] = found
    return told


def told_a_ban(results: dict[str, CellGrade]) -> bool:
    """Whether a failing check says that the answer calls the reference: seen in its code, not
    guessed from its output, so that message names the mistake exactly."""
    return any(
        BANNED_PHRASE in check.diagnosis
        for result in results.values()
        for check in result.checks
        if not check.passed
    )


def false_claims(mutant: Mutant, results: dict[str, CellGrade]) -> list[str]:
    """A message naming a mistake that ``mutant`` does not make (it declares what it makes), or
    a cause it is known not to make (its ``not_told``)."""
    declared_keys = declared_mistakes(mutant)
    claims = [
        f"{grade_id} names {sorted(keys - declared_keys)}, which {mutant.name!r} does not "
        f"declare (it makes {sorted(declared_keys)}): {results[grade_id].describe()}"
        for grade_id, keys in told_mistakes(mutant, results).items()
        if keys - declared_keys
    ]
    for grade_id, result in results.items():
        for check in result.checks:
            for phrase in mutant.not_told:
                if not check.passed and phrase in check.diagnosis:
                    claims.append(
                        f"{grade_id}: {check.name} names {phrase!r}, a cause "
                        f"{mutant.name!r} does not have: {check.diagnosis}"
                    )
    return claims


def defined_in(assignment: str) -> dict[str, str]:
    """name -> the answer cell whose top-level def, class or assignment binds it."""
    names = {}
    for grade_id, source in solution_answers(assignment).items():
        for node in ast.parse(source).body:
            if isinstance(node, ast.FunctionDef | ast.ClassDef):
                names[node.name] = grade_id
            elif isinstance(node, ast.Assign):
                names.update({t.id: grade_id for t in node.targets if isinstance(t, ast.Name)})
    return names


# (assignment, answer): answers whose code the checks of other cells run to compute their
# expected values (the student's clean for build_vocab and encode, own_clean in
# autograder/checks/a03_transformer_block/shared.py), so that a mistake there costs nothing
# there: a use, but no dependency to declare.
FOLLOWED_BY_THE_ORACLE = {("03_transformer_block", "clean")}


def undeclared_uses(assignment: str, required: set[tuple[str, str, str]]) -> list[str]:
    """The (cell, name) uses of another exercise's answer that no depends_on declares."""
    owner = defined_in(assignment)
    problems = []
    for name_of, grade_id, name in sorted(required):
        answer = owner.get(name)
        if name_of != assignment or answer is None or grade_id in own_cells(assignment)[answer]:
            continue
        if (assignment, answer) in FOLLOWED_BY_THE_ORACLE:
            continue
        if grade_id not in dependents(assignment, answer):
            problems.append(
                f"{grade_id} requires `{name}`, the answer of cell {answer}, but does not declare "
                f"it: depends_on(ASSIGNMENT, [{grade_id!r}], {{{answer!r}: "
                f"{list(own_cells(assignment)[answer])}}})"
            )
    return problems


# (assignment, graded cell, name): every top-level name of the notebook whose code ran while a
# check of that cell was running (answers_called), in this process.
CALLED: set[tuple[str, str, str]] = set()


@contextlib.contextmanager
def answers_called(notebook: str) -> Iterator[None]:
    """Record in CALLED the names whose code, compiled from the notebook file ``notebook``
    (autograder/suite/submission.py names its cells "<name cell N>"), runs inside each check:
    a student's class that calls another answer (EncoderBlock building the student's
    PositionwiseFeedForward) shows here, though the check requires only the class."""
    prefix = f"<{notebook} cell "

    def profile(frame, event: str, _arg) -> None:
        if event == "call" and frame.f_code.co_filename.startswith(prefix):
            entry = running_check()
            if entry is not None:
                name = frame.f_code.co_qualname.split(".")[0]
                CALLED.add((entry.assignment, entry.grade_id, name))

    previous = sys.getprofile()
    sys.setprofile(profile)
    try:
        yield
    finally:
        sys.setprofile(previous)


def test_an_answer_called_by_another_answer_is_seen():
    source = (
        "def inner():\n    return 1\n\nclass Outer:\n    def run(self):\n        return inner()\n"
    )
    namespace: dict = {}
    exec(compile(source, "<nb.ipynb cell 3>", "exec"), namespace)
    entry = Check("01_attention", "test_x", "c", lambda ns: ns["Outer"]().run())
    before = set(CALLED)
    with answers_called("nb.ipynb"):
        run_check(entry, namespace)
    assert CALLED - before == {
        ("01_attention", "test_x", "Outer"),
        ("01_attention", "test_x", "inner"),
    }
    CALLED.difference_update(CALLED - before)


def test_an_undeclared_use_of_another_answer_is_found():
    used = {("01_attention", "test_causal_weights", "causal_mask")}
    assert undeclared_uses("01_attention", used) == []  # its own answer
    used = {("01_attention", "test_attention_scaling", "causal_mask")}
    (problem,) = undeclared_uses("01_attention", used)
    assert problem.startswith("test_attention_scaling requires `causal_mask`")


def test_a_named_mistake_the_mutant_does_not_declare_is_a_false_claim():
    wrong = Mutant(
        "multiplied", "01_attention", {"attention": Replace("x", "y")}, {"test_x": "multiplied"}
    )
    said = str(mistakes_of("01_attention")["attention.not_scaled"])
    results = {"test_x": CellGrade((CheckResult("c", 1.0, False, said),))}
    (claim,) = false_claims(wrong, results)
    assert "attention.not_scaled" in claim
    assert (
        false_claims(Mutant(**{**vars(wrong), "makes": ("attention.not_scaled",)}), results) == []
    )


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_every_family_of_mistakes_has_a_mutant(assignment: str):
    catalogue = mistakes_of(assignment)
    wrong = [m for m in CORPUS if m.assignment == assignment and not m.is_correct]
    declared_keys = set().union(*(declared_mistakes(m) for m in wrong))
    for mutant in wrong:
        assert set(mutant.makes) <= set(catalogue), f"{mutant.name}: no such mistake"
    families = {(key.split(".")[0], m.family) for key, m in catalogue.items()}
    covered = {(key.split(".")[0], catalogue[key].family) for key in declared_keys}
    assert families <= covered, f"families without a mutant: {sorted(families - covered)}"
    messages = [m.message for m in catalogue.values()]
    for message in messages:
        inside = [other for other in messages if other != message and message in other]
        assert not inside, f"{message!r} is part of {inside}: it could not be read back"


@pytest.mark.parametrize("mutant", CORPUS, ids=mutant_id)
def test_every_patch_applies_and_parses(mutant: Mutant):
    for grade_id, source in mutated_cells(mutant).items():
        ast.parse(source, filename=f"{mutant_id(mutant)} [{grade_id}]")


def test_a_patch_that_no_longer_matches_fails_loudly():
    source = "def f(x):\n    y = x + 1\n    return y\n"
    assert apply_patch(source, Replace("x + 1", "x - 1"), "cell") == source.replace("+", "-")
    with pytest.raises(AssertionError, match=r"(?s)here: this text occurs 0 times.*x \* 2"):
        apply_patch(source, Replace("x * 2", "x"), "here")
    with pytest.raises(AssertionError, match="occurs 2 times"):
        apply_patch(source, Replace("y", "z"), "here")
    with pytest.raises(AssertionError, match="one `def g`"):
        apply_patch(source, Body("g", "return 0"), "here")
    assert apply_patch(source, Body("f", "return 0"), "cell") == "def f(x):\n    return 0\n"


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_declared_dependencies_name_real_cells(assignment: str):
    own = own_cells(assignment)
    graded = {cell for cells in own.values() for cell in cells}
    assert graded and all(own.values()), f"{assignment}: an answer cell without test cells: {own}"
    for answer, cells in declared(assignment).items():
        assert answer in own, f"{assignment}: depends_on names {answer!r}, not an answer cell"
        assert judged_in(assignment, answer) == own[answer], (
            f"{assignment}: depends_on says {answer!r} is judged in "
            f"{judged_in(assignment, answer)}, the notebook in {own[answer]}"
        )
        assert cells <= graded - set(own[answer]), (
            f"{assignment}: {answer!r} is used by {sorted(cells)}, which must be test cells of "
            f"other exercises (its own are {own[answer]})"
        )


def test_a_cell_failing_for_another_exercise_is_a_double_penalty():
    wrong_merge = Mutant(
        "merge", "02_multi_head", {"merge_heads": Replace("x", "y")}, {"test_merge_heads": "m"}
    )
    lost = {"test_merge_heads": "wrong", "test_mha_parity": "wrong"}
    assert double_penalties(wrong_merge, lost) == []
    banned = {"test_split_heads": "`split_heads` calls it (no credit for calling the reference)"}
    assert double_penalties(wrong_merge, banned) == []
    (problem,) = double_penalties(wrong_merge, {"test_split_heads": "wrong"})
    assert problem.startswith("double penalty: test_split_heads lost points")
    assert (
        'depends_on(ASSIGNMENT, ["test_split_heads"], {"merge_heads": [\'test_merge_heads\']})'
        in problem
    )
    assert "autograder.checks.a02_multi_head.split_heads" in problem


@pytest.mark.parametrize(
    "info", list(pkgutil.iter_modules(tests.mutants.__path__)), ids=lambda i: i.name
)
def test_each_list_of_a_corpus_module_holds_its_kind(info):
    """A wrong mutant in CORRECT would be merged into judge_parity's correct submission."""
    module = importlib.import_module(f"tests.mutants.{info.name}")
    assert [m.name for m in module.WRONG if m.is_correct] == []
    assert [m.name for m in module.CORRECT if not m.is_correct] == []


def test_the_corpus_keeps_its_agreed_size():
    wrong = [m for m in CORPUS if not m.is_correct]
    assert len(wrong) >= AGREED_WRONG, len(wrong)
    assert len(CORPUS) - len(wrong) >= AGREED_CORRECT, len(CORPUS) - len(wrong)
    solutions = {p.stem for p in ROOT.glob("solutions/*/*.ipynb") if p.stem == p.parent.name}
    assert {m.assignment for m in wrong} == set(ASSIGNMENTS) == solutions


@pytest.mark.slow
@pytest.mark.parametrize(
    ("answer", "cell"),
    [
        ("r03-04:", "test_encoder_block"),
        ("model: the positions' dropout by F.dropout", "test_sentiment_model"),
        ("charlm: F.dropout on the embeddings, left on in eval mode", "test_charlm"),
    ],
)
def test_a_dropout_active_in_eval_mode_costs_its_checks_not_its_cell(answer: str, cell: str):
    """Eval-mode determinism with the model's dropout is worth points, not a gate: the cell's other
    checks run with dropout 0 or in train mode, where a dropout that ignores the mode changes
    nothing, so they keep their clauses' credit (blind answer r03-04 once lost all 3 points to
    it; 05's padding cell was charged for it again)."""
    grades = graded(next(m for m in CORPUS if m.name.startswith(answer)))[cell]
    failed = [check for check in grades.checks if not check.passed]
    assert failed and not any(check.gate for check in failed)
    assert failed[0].name.endswith("_is_deterministic_in_eval_mode")
    assert 0 < grades.fraction < 1


@cache  # every mutant's grading asks for it first (graded): without the cache, each graded the
# solution again, and 05's and 06's trained their model again (the complete tier went from 19 to
# 35 minutes)
def solution_graded(assignment: str) -> tuple[dict[str, CellGrade], dict[str, str]]:
    """The solution's grades and the errors of its visible asserts (none, if it is right)."""
    path = ROOT / "solutions" / assignment / f"{assignment}.ipynb"
    submission = load_submission(path, skip_tags=(DEMO_TAG,))
    with answers_called(path.name):
        grades = grade_submission(submission)
    with secret_in_use(OTHER_SECRET):
        _GRADED_UNDER_OTHER[f"{assignment}: the solution"] = grade_submission(submission)
    with tempfile.TemporaryDirectory() as folder:  # so a mutant's visible failure is its own
        return grades, run_visible_checks(assignment, submission.namespace, folder)


@pytest.mark.slow
def test_the_solution_is_graded_once_for_all_its_mutants():
    """graded() starts every mutant from the solution's grading; it must be the same one."""
    assert solution_graded("01_attention") is solution_graded("01_attention")


@pytest.mark.slow
def test_grading_is_deterministic(tmp_path: Path):
    wrong = next(m for m in CORPUS if not m.is_correct)
    path = build(wrong, tmp_path)
    assert grade(path) == grade(path)


class _CorpusPart:
    """The graded tests of one part of an assignment's mutants (all of them, where the
    assignment is not split: PARTS).  Its mutants' tests share a worker under `pytest -n N
    --dist loadscope` (each mutant is graded in-process once), while the parts spread over the
    workers."""

    assignment: str
    part: int = 0

    def test_mutant_is_graded_as_expected(self, mutant: Mutant):
        problems = mismatches(mutant, graded(mutant))
        assert not problems, "\n".join(problems)

    def test_no_mutant_is_told_of_a_mistake_it_does_not_make(self, mutant: Mutant):
        """Every named mistake in the messages it gets is one it makes (mistakes.py)."""
        claims = false_claims(mutant, graded(mutant))
        assert not claims, "\n".join(claims)

    def test_the_fork_imports_nothing(self, mutant: Mutant):
        """What a fork imports is lost with it, so it would be imported again for every mutant:
        the solution's grading in this process leaves everything a mutant's grading needs."""
        graded(mutant)
        imported = _IMPORTED_IN_FORK[mutant_id(mutant)]
        assert not imported, f"the forked grading imported {len(imported)} modules: {imported[:20]}"

    def test_the_grade_does_not_depend_on_the_secret(self, mutant: Mutant):
        """Other hidden inputs, the same verdict from every check: no threshold is a gamble."""
        under_development_secret = verdicts(graded(mutant))
        assert verdicts(_GRADED_UNDER_OTHER[mutant_id(mutant)]) == under_development_secret

    def test_corpus_figures(self):
        """Print caught/total and accepted/total of the part's mutants; both must be 100%."""
        mutants = corpus_part(self.assignment, self.part)
        wrong = [m for m in mutants if not m.is_correct]
        correct = [m for m in mutants if m.is_correct]
        caught = sum(not mismatches(m, graded(m)) for m in wrong)
        accepted = sum(not mismatches(m, graded(m)) for m in correct)
        named = sum(bool(told_mistakes(m, graded(m))) for m in wrong)
        banned = sum(not told_mistakes(m, graded(m)) and told_a_ban(graded(m)) for m in wrong)
        part = f" (part {self.part + 1} of {PARTS.get(self.assignment, 1)})"
        print(
            f"\n{self.assignment}{part}: wrong implementations caught: {caught}/{len(wrong)}; "
            f"correct alternatives accepted: {accepted}/{len(correct)}; wrong ones shown a "
            f"named mistake: {named}/{len(wrong)}, and {banned} more told that they call the "
            "reference"
        )
        assert wrong and caught == len(wrong) and accepted == len(correct)


class _AssignmentCorpus(_CorpusPart):
    """The first part of an assignment's mutants, and the tests of the assignment as a whole:
    its solution, its repairs, and its mutants graded through the grading command (those
    `picked`, which are all in this part, so that their in-process grades are this worker's)."""

    def test_every_use_of_another_answer_is_declared(self):
        """What the checks require, and the answers whose code runs inside them (an answer
        calling another), seen while grading the solution, against depends_on."""
        solution_graded(self.assignment)
        used = {entry for entry in REQUIRED | CALLED if entry[0] == self.assignment}
        assert used, "no check required anything: were the checks run in this process?"
        problems = undeclared_uses(self.assignment, used)
        assert not problems, "\n".join(problems)

    def test_the_solution_gets_full_marks_and_the_stub_gets_none(self):
        """In the class, so that its worker grades the solution once for all of the class's tests
        (a trained notebook's took 16 to 24 s of a worker again, at module level)."""
        solution, visible_errors = solution_graded(self.assignment)
        assert solution and all(r.full_marks for r in solution.values()), solution
        assert visible_errors == {}
        stub = grade(ROOT / "notebooks" / self.assignment / f"{self.assignment}.ipynb")
        assert stub.keys() == solution.keys()
        earned = {g: float(r.fraction) for g, r in stub.items() if r.fraction != 0 or r.full_marks}
        assert not earned, f"the stub earned points: {earned}"

    def test_the_solution_s_grade_does_not_depend_on_the_secret(self):
        solution, _ = solution_graded(self.assignment)
        other = _GRADED_UNDER_OTHER[f"{self.assignment}: the solution"]
        assert verdicts(other) == verdicts(solution)
        assert all(r.fraction == 1 for r in other.values())

    def test_every_repair_confirms_a_cause_through_the_grading_command(self):
        """Each repair of the assignment (autograder/authoring/repairs.py) is the one that
        confirms the cause of a failing check of some mutant that judge parity grades through
        the command, which must give that check the same cause and repair: no repair is
        declared on the strength of in-process grading alone."""
        exercised = {
            check.repair
            for mutant in picked(self.assignment)
            if not mutant.is_correct
            for grade in graded(mutant).values()
            for check in grade.checks
        }
        unexercised = {r.key for r in repairs_of(self.assignment)} - exercised
        assert not unexercised, (
            f"no mutant graded through the grading command has a cause confirmed by "
            f"{sorted(unexercised)}: mark one whose grading it confirms in_notebook=True"
        )

    @pytest.mark.sandbox
    @pytest.mark.usefixtures("sandbox_required")
    def test_the_judge_agrees_through_the_grading_command(self, tmp_path: Path):
        """Runs after the class's other tests: its in-process grades are theirs (judge_parity)."""
        solution, _ = solution_graded(self.assignment)
        assert_judge_agrees(self.assignment, tmp_path, graded, solution)


# Assignments whose mutants are split over several classes, so over several workers: most of
# 05's and 06's mutants train the notebook's model again (5 to 6 s of CPU each), and one worker
# grading all of either was the complete tier's longest task (docs/figures.md, "The test suite").
# conftest.py hands their classes out first.
PARTS = {"05_sentiment": 2, "06_char_lm": 2}


@cache
def corpus_parts(assignment: str) -> tuple[tuple[Mutant, ...], ...]:
    """The mutants of ``assignment``, split into its PARTS: the first holds every one that
    `picked` grades through the command (counted twice: a grading through the command costs
    about what an in-process one does), and each other goes to the part with fewest so far."""
    mutants = [m for m in CORPUS if m.assignment == assignment]
    through_the_command = {id(m) for m in picked(assignment)}
    parts: list[list[Mutant]] = [[] for _ in range(PARTS.get(assignment, 1))]
    load = [0] * len(parts)
    for mutant in sorted(mutants, key=lambda m: id(m) not in through_the_command):  # stable
        index = 0 if id(mutant) in through_the_command else load.index(min(load))
        parts[index].append(mutant)
        load[index] += 2 if id(mutant) in through_the_command else 1
    return tuple(tuple(part) for part in parts)


def corpus_part(assignment: str, part: int) -> list[Mutant]:
    """The mutants that the class of ``assignment`` numbered ``part`` grades."""
    return list(corpus_parts(assignment)[part])


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Each class takes its part of its assignment's mutants."""
    if metafunc.cls is not None and "mutant" in metafunc.fixturenames:
        mutants = corpus_part(metafunc.cls.assignment, metafunc.cls.part)
        metafunc.parametrize("mutant", mutants, ids=mutant_id)


# Every assignment's corpus runs in the complete tier only (tests/tiers.py): those of 01 to 04 and
# 07 were 44% of the tier before pushing (03's alone four minutes of a worker).  After changing
# an assignment's checks, run its class: `pytest tests/test_mutants.py -k 03_transformer_block`.
for _assignment in ASSIGNMENTS:
    _name = "TestMutantsOf" + _assignment.title().replace("_", "")
    for _part in range(PARTS.get(_assignment, 1)):
        _base = _AssignmentCorpus if _part == 0 else _CorpusPart
        _suffix = f"Part{_part + 1}" if _part else ""
        _attributes = {"assignment": _assignment, "part": _part, "trains": _assignment in PARTS}
        _class = type(_name + _suffix, (_base,), _attributes)
        globals()[_name + _suffix] = pytest.mark.sandbox(pytest.mark.slow(_class))
