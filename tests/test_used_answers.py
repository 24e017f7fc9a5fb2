"""One mistake, one charge across answer cells (issue 40, point 4): a cell that fails only because
an answer cell it uses is wrong, a mistake charged in that answer's own cells, is graded again with
the course's answer in its place, and waived where every check then passes
(autograder/authoring/used_answers.py).

Made-up cells of 02 hold the rule to its word in a fraction of a second; 02's split_heads without
a transpose (blind k02-01), graded in-process and through the grading command, holds the
assignment's own cells to it.
"""

from __future__ import annotations

import html
import json
from pathlib import Path

import pytest

from autograder.authoring import dependencies, registry
from autograder.authoring.registry import CellGrade, Repeat, checks_for, grade_cell
from autograder.authoring.requiring import require
from autograder.authoring.used_answers import charged_elsewhere, defined_here
from autograder.suite.submission import DEMO_TAG, grade_submission, load_submission
from tests.mutants import mutated_cells
from tests.mutants.blind.a02_multi_head import WRONG as BLIND_02
from tests.test_mutants import build
from tests.test_one_charge import graded_by_the_command

ASSIGNMENT = "02_multi_head"
COURSE = {"up": "def up(x):\n    return x + 1\n\n\nHELPER = 'the course'\n"}
CAUSE = "the answer cell `up` it uses"
GRADED_WITH = "the course's `up` in place of yours"


def up_is_right(ns) -> None:  # noqa: ANN001
    if require(ns, "up")(1) != 2:
        registry.fail("up(1) must be 2")


def down_is_right(ns) -> None:  # noqa: ANN001
    if require(ns, "down")(1) != 4:
        registry.fail("down(1) must be 4")


def down_edge(ns) -> None:  # noqa: ANN001
    if require(ns, "down")(0) != 2:
        registry.fail("down(0) must be 2")


@pytest.fixture
def cells(monkeypatch: pytest.MonkeyPatch):
    """Made-up cells of 02: ``test_up`` judges the answer ``up``; ``test_down`` judges ``down``,
    declared to use ``up``."""
    checks_for(ASSIGNMENT)  # imported now, so that it registers nothing in the fresh registry
    monkeypatch.setattr(registry, "_REGISTRY", {})
    monkeypatch.setattr(dependencies, "_USED_BY", {})
    monkeypatch.setattr(dependencies, "_JUDGED_IN", {})
    registry.check(ASSIGNMENT, "test_up", name="up_is_right")(up_is_right)
    registry.check(ASSIGNMENT, "test_down", name="down_is_right")(down_is_right)
    registry.check(ASSIGNMENT, "test_down", name="down_edge", weight=0.5)(down_edge)
    dependencies.depends_on(ASSIGNMENT, ["test_down"], {"up": ["test_up"]})


def namespace(up: str, down: str) -> dict:
    """A student's globals, from the source of their two answers."""
    ns: dict = {"__name__": "submission"}
    exec(up + "\n" + down, ns)  # noqa: S102 - made-up answers
    return ns


WRONG_UP = "def up(x):\n    return x + 2\n"
RIGHT_UP = "def up(x):\n    return x + 1\n"
RIGHT_DOWN = "def down(x):\n    return up(x) * 2\n"
WRONG_DOWN = "def down(x):\n    return up(x) * 3\n"


def graded(ns: dict, charge_again: bool = False) -> dict[str, CellGrade]:
    """Both cells graded as one submission, then the waivers, as the suite grades them."""
    with registry.one_submission(charge_again):
        grades = {cell: grade_cell(ASSIGNMENT, cell, ns) for cell in ("test_up", "test_down")}
        return charged_elsewhere(
            ASSIGNMENT, grades, ns, lambda wrong: defined_here(ns, COURSE, wrong)
        )


def test_a_cell_that_fails_only_because_of_a_wrong_answer_it_uses_is_not_charged_again(cells):
    ns = namespace(WRONG_UP, RIGHT_DOWN)
    student_up = ns["up"]
    grades = graded(ns)
    assert grades["test_up"].fraction == 0 and grades["test_up"].repeat is None
    down = grades["test_down"]
    assert down.repeat == Repeat(CAUSE, "test_up", waived=True, graded_with=GRADED_WITH)
    assert down.full_marks and down.points(2.0) == 2.0
    assert not any(c.passed for c in down.checks)  # its checks' verdicts are kept as they were
    assert down.describe().splitlines()[0] == (
        f"not charged again: fails only because of {CAUSE}, charged in test_up (with "
        f"{GRADED_WITH}, every check of this cell passes)"
    )
    assert CellGrade.from_json(json.loads(json.dumps(down.to_json()))) == down
    # The student's own names are back, and the course's answer left nothing behind.
    assert ns["up"] is student_up and "HELPER" not in ns


def test_the_course_may_charge_it_again(cells):
    down = graded(namespace(WRONG_UP, RIGHT_DOWN), charge_again=True)["test_down"]
    assert down.repeat == Repeat(CAUSE, "test_up", waived=False, graded_with=GRADED_WITH)
    assert down.fraction == 0 and down.describe().startswith("charged again: ")


def test_a_cell_wrong_in_its_own_right_is_charged(cells):
    grades = graded(namespace(WRONG_UP, WRONG_DOWN))
    assert grades["test_down"].repeat is None and grades["test_down"].fraction == 0


def test_a_right_answer_it_uses_waives_nothing(cells):
    # down is wrong and up is right: nothing to repeat, and no experiment is run.
    grades = graded(namespace(RIGHT_UP, WRONG_DOWN))
    assert grades["test_up"].full_marks
    assert grades["test_down"].repeat is None and grades["test_down"].fraction == 0


def test_an_answer_that_failed_a_gate_waives_nothing(cells):
    # A reference called instead of implemented costs every cell that uses the answer: its ban
    # is a gate of the answer's own cells (reference_bans.py), and so is randomness in eval mode.
    def up_is_its_own(ns) -> None:  # noqa: ANN001
        registry.fail("`up` calls the reference")

    registry.check(ASSIGNMENT, "test_up", name="up_is_its_own", gate=True)(up_is_its_own)
    grades = graded(namespace(WRONG_UP, RIGHT_DOWN))
    assert any(c.gate and not c.passed for c in grades["test_up"].checks)
    assert grades["test_down"].repeat is None and grades["test_down"].fraction == 0


def test_nothing_is_waived_outside_one_submission_or_without_the_course_answer(cells):
    ns = namespace(WRONG_UP, RIGHT_DOWN)
    grades = {cell: grade_cell(ASSIGNMENT, cell, ns) for cell in ("test_up", "test_down")}
    assert (
        charged_elsewhere(ASSIGNMENT, grades, ns, lambda wrong: defined_here(ns, COURSE, wrong))
        == grades
    )
    with registry.one_submission():
        again = charged_elsewhere(ASSIGNMENT, grades, ns, lambda wrong: defined_here(ns, {}, wrong))
    assert again == grades  # no course answer to define: no experiment, no waiver


def test_what_the_real_grading_computed_is_not_reused_by_the_experiment(cells):
    # A cell judged on something computed once per submission (a model trained with the
    # student's own parts) is judged again on what the course's answer gives.
    def trained(ns) -> None:  # noqa: ANN001
        value = registry.shared(("trained",), lambda: require(ns, "down")(1))
        if value != 4:
            registry.fail(f"trained to {value}, expected 4")

    registry.check(ASSIGNMENT, "test_trained")(trained)
    dependencies.depends_on(ASSIGNMENT, ["test_trained"], {"up": ["test_up"]})
    ns = namespace(WRONG_UP, RIGHT_DOWN)
    with registry.one_submission():
        grades = {
            c: grade_cell(ASSIGNMENT, c, ns) for c in ("test_up", "test_down", "test_trained")
        }
        assert grades["test_trained"].fraction == 0
        waived = charged_elsewhere(
            ASSIGNMENT, grades, ns, lambda wrong: defined_here(ns, COURSE, wrong)
        )
    assert waived["test_trained"].full_marks and waived["test_trained"].repeat is not None


def test_defined_here_restores_every_name_the_course_answer_binds():
    ns = {"up": "mine", "kept": 1}
    with defined_here(ns, COURSE, ["up"]):
        assert ns["up"](1) == 2 and ns["HELPER"] == "the course" and ns["kept"] == 1
    assert ns == {"up": "mine", "kept": 1}
    with pytest.raises(ZeroDivisionError), defined_here(ns, {"up": "up = 1 / 0"}, ["up"]):
        pass
    assert ns == {"up": "mine", "kept": 1}


# ------------------------------------------------------------------------------------------
# 02's split_heads without a transpose: in-process and through the grading command, one grade


SPLIT_HEADS = next(m for m in BLIND_02 if m.name.startswith("k02-01"))
CHARGED = "test_split_heads"
REPEATS = ("test_mha_mask", "test_mha_parity")  # they call split_heads; nothing else is wrong
SPLIT_CAUSE = "the answer cell `split_heads` it uses"


@pytest.mark.slow
def test_a_wrong_split_heads_costs_its_own_cell_only_in_process(tmp_path: Path):
    grades = grade_submission(load_submission(build(SPLIT_HEADS, tmp_path), skip_tags=(DEMO_TAG,)))
    assert {g for g, grade in grades.items() if not grade.full_marks} == {CHARGED}
    for grade_id in REPEATS:
        repeat = grades[grade_id].repeat
        assert repeat is not None and (repeat.cause, repeat.charged_in) == (SPLIT_CAUSE, CHARGED)
        assert not all(c.passed for c in grades[grade_id].checks)


@pytest.mark.slow
@pytest.mark.sandbox
@pytest.mark.parametrize("charge_again", [False, True], ids=["once", "again"])
def test_every_record_of_the_grading_command_shows_the_one_charge(
    tmp_path: Path, sandbox_required: None, charge_again: bool
):
    root, points, scores = graded_by_the_command(
        tmp_path, ASSIGNMENT, mutated_cells(SPLIT_HEADS), charge_again
    )
    lost_points = {g for g, s in scores.items() if s < points[g]}
    assert lost_points == ({CHARGED, *REPEATS} if charge_again else {CHARGED})
    page = html.unescape(
        (root / "grading" / "feedback" / "sam" / ASSIGNMENT / f"{ASSIGNMENT}.html").read_text()
    )
    said = "charged again" if charge_again else "not charged again"
    assert page.count(f"{said}: fails only because of {SPLIT_CAUSE}, charged in {CHARGED}") == 2
