"""One mistake, one charge (issue 40, point 4): a repair confirms which failing checks one named
mistake explains, and a cell that fails only because of a mistake charged in an earlier cell is
not charged again, unless the course chooses to (autograder/authoring/registry.py, repairs.py).

The mistake is 01's softmax over the queries' axis in `attention`, the mutant of the corpus
(tests/mutants/m01_attention.py), graded as tests/test_mutants.py grades it, and through
`python -m autograder grade`; made-up cells hold the rule to its word in a fraction of a second.
"""

from __future__ import annotations

import csv
import html
import json
from pathlib import Path

import nbformat
import pytest
import torch
from nbgrader.api import Gradebook

from autograder.authoring import registry
from autograder.authoring.registry import (
    CONFIRMED_CAUSE,
    CellGrade,
    Repeat,
    checks_for,
    grade_cell,
)
from autograder.authoring.repairs import Repair, repairs_of
from autograder.authoring.repairs import repairs as declare_repair
from autograder.authoring.requiring import require
from autograder.checks.a01_attention import ATTENTION
from autograder.examples import Sample, build_course
from autograder.pipeline.cli import main
from autograder.suite.submission import DEMO_TAG, Submission, grade_submission, load_submission
from tests.judge_parity import cell_points
from tests.mutants import Mutant, Replace, mutated_cells
from tests.mutants.m01_attention import SCALING, WRONG
from tests.test_mutants import build

ASSIGNMENT = "01_attention"
SOFTMAX_OVER_QUERIES = next(m for m in WRONG if m.name == "softmax over queries")
CHARGED = "test_attention_rows_sum_to_one"  # the first cell the mistake fails
# The later cells it fails, and nothing else fails them.
REPEATS = ("test_attention_scaling", "test_attention_parity", "test_causal_weights")
CAUSE = "the softmax axis in `attention`"
SOFTMAX_AXIS = "attention.softmax_over_queries"  # the key of the mistake that CAUSE names
# The same mistake beside another (no scaling), which the repair leaves in place.
ALSO_UNSCALED = Mutant(
    "softmax over queries, unscaled",
    ASSIGNMENT,
    {"attention": (*SOFTMAX_OVER_QUERIES.patches["attention"], Replace(SCALING, ""))},
    {"test_attention_scaling": "not scaled"},
)


def graded_answer(mutant: Mutant, folder: Path) -> Submission:
    """The solution notebook with ``mutant``'s answers, run as tests/test_mutants.py runs it."""
    return load_submission(build(mutant, folder), skip_tags=(DEMO_TAG,))


@pytest.fixture(scope="module")
def softmax_over_queries(tmp_path_factory: pytest.TempPathFactory) -> Submission:
    return graded_answer(SOFTMAX_OVER_QUERIES, tmp_path_factory.mktemp("softmax"))


def lost(grades: dict[str, CellGrade]) -> set[str]:
    return {grade_id for grade_id, grade in grades.items() if grade.fraction < 1}


@pytest.mark.slow
def test_one_softmax_axis_mistake_in_attention_is_charged_once(softmax_over_queries):
    grades = grade_submission(softmax_over_queries)
    assert lost(grades) == {CHARGED}
    assert grades[CHARGED].repeat is None
    for grade_id in REPEATS:
        grade = grades[grade_id]
        assert grade.repeat == Repeat(CAUSE, CHARGED, waived=True), grade_id
        assert grade.full_marks and grade.points(2) == 2
        assert not all(c.passed for c in grade.checks)  # waived, not passed: its checks say so
        assert grade.describe().startswith(
            f"not charged again: fails only because of {CAUSE}, charged in {CHARGED}"
        )


@pytest.mark.slow
def test_a_course_that_charges_again_charges_every_cell_the_mistake_fails(softmax_over_queries):
    grades = grade_submission(softmax_over_queries, charge_again=True)
    assert lost(grades) == {CHARGED, *REPEATS}
    for grade_id in REPEATS:
        assert grades[grade_id].repeat == Repeat(CAUSE, CHARGED, waived=False)
        assert (
            grades[grade_id]
            .describe()
            .startswith(f"charged again: fails only because of {CAUSE}, charged in {CHARGED} too")
        )


@pytest.mark.slow
def test_the_checks_one_confirmed_cause_explains_are_listed_as_failing_for_it(
    softmax_over_queries,
):
    grade = grade_submission(softmax_over_queries)["test_attention_scaling"]
    first, second = grade.checks
    assert not first.passed and not second.passed
    assert first.cause == second.cause != ""  # both pass with the softmax axis repaired
    message = grade.describe()
    assert (
        "  FAILED  while checking scale false leaves the scores unscaled (weight 0.5): also "
        "fails, same cause "
        "as scaled_by_sqrt_d_k"
    ) in message
    assert second.diagnosis.splitlines()[0] not in message  # its own text is not repeated


@pytest.mark.slow
def test_a_cell_with_another_mistake_beside_the_charged_one_is_charged(tmp_path: Path):
    grades = grade_submission(graded_answer(ALSO_UNSCALED, tmp_path))
    # The repaired answer is still unscaled: those cells fail with it too, so they are charged.
    for grade_id in ("test_attention_scaling", "test_attention_parity"):
        assert grades[grade_id].fraction < 1 and grades[grade_id].repeat is None, grade_id
    # Its checks that the axis alone explains still say so.
    unscaled_false = grades["test_attention_scaling"].checks[1]
    assert unscaled_false.cause and "also fails, same cause" not in unscaled_false.diagnosis


# ------------------------------------------------------------------------------------------
# The rule on made-up cells, with 01's repair of the softmax axis


def softmax_over_queries_attention(q, k, v, mask=None, scale=True):  # noqa: ANN001, ANN201
    """The mistake itself: softmax over dim=-2."""
    scores = q @ k.transpose(-2, -1) / (q.shape[-1] ** 0.5 if scale else 1.0)
    weights = torch.softmax(scores, dim=-2)
    return weights @ v, weights


def weights_over_keys(ns) -> None:  # noqa: ANN001
    q, k, v = torch.randn(3, 2), torch.randn(4, 2), torch.randn(4, 5)
    _, weights = require(ns, "attention")(q, k, v)
    if not torch.allclose(weights.sum(-1), torch.ones(3)):
        registry.fail("each row of the weights must sum to 1 over the keys")


def weights_match_the_reference(ns) -> None:  # noqa: ANN001
    q, k, v = torch.randn(2, 3), torch.randn(5, 3), torch.randn(5, 1)
    _, weights = require(ns, "attention")(q, k, v)
    if not torch.allclose(weights, torch.softmax(q @ k.T / 3**0.5, dim=-1)):
        registry.fail("the weights differ from softmax(q kᵀ / √d_k)")


def never_passes(ns) -> None:  # noqa: ANN001
    require(ns, "attention")
    registry.fail("this check fails whatever the answer")


@pytest.fixture
def cells(monkeypatch: pytest.MonkeyPatch):
    """Two made-up cells of 01 that take `attention`: ``first`` and ``second``."""
    checks_for(ASSIGNMENT)  # imported now, so that it registers nothing in the fresh registry
    monkeypatch.setattr(registry, "_REGISTRY", {})
    for grade_id in ("first", "second"):
        registry.check(ASSIGNMENT, grade_id, name=f"{grade_id}_rows")(weights_over_keys)
        registry.check(ASSIGNMENT, grade_id, name=f"{grade_id}_values", weight=0.5)(
            weights_match_the_reference
        )
    return {"attention": softmax_over_queries_attention}


def softmax_axis_repairs() -> dict[str, Repair]:
    """01's repairs of the softmax axis, by the name of their function."""
    found = [r for r in repairs_of(ASSIGNMENT) if r.mistake.key == SOFTMAX_AXIS]
    return {r.undo.__name__: r for r in found}


def test_01_declares_the_repairs_of_the_softmax_axis():
    repairs = softmax_axis_repairs()
    assert set(repairs) == {"softmax_over_the_keys", "one_sequence_at_a_time"}
    for repair in repairs.values():
        assert repair.name == "attention"
        assert repair.cause == CAUSE
    # One cause, two repairs told apart: which one confirmed a cause is recorded with it
    # (CheckResult.repair), and judge parity compares that with the grading command's.
    assert repairs["one_sequence_at_a_time"].key == f"{SOFTMAX_AXIS} (one_sequence_at_a_time)"

    def softmax_over_the_keys(attention):  # noqa: ANN001, ANN202
        return attention

    with pytest.raises(ValueError, match=r"two repairs are .*\(softmax_over_the_keys\)"):
        declare_repair(ASSIGNMENT, ATTENTION["softmax_over_queries"], "attention")(
            softmax_over_the_keys
        )
    assert softmax_axis_repairs() == repairs


def softmax_over_dim_1_attention(q, k, v, mask=None, scale=True):  # noqa: ANN001, ANN201
    """Issue 40's blind g01-07: softmax over dim=1, the queries of 3-D scores, the heads of 4-D."""
    weights = torch.softmax(q @ k.transpose(-2, -1) / (q.shape[-1] ** 0.5 if scale else 1.0), dim=1)
    return weights @ v, weights


@pytest.mark.slow  # half a second or more in the fast tier (tests/tiers.py)
def test_one_sequence_at_a_time_moves_a_softmax_over_dim_1_to_the_keys_and_nothing_else():
    undo = softmax_axis_repairs()["one_sequence_at_a_time"].undo

    def correct(q, k, v, mask=None, scale=True):  # noqa: ANN001, ANN202
        return _correct(q, k, v)

    # Without the sign of a softmax over axis 1 (over the queries in 4-D too), left as it is.
    assert undo(correct) is correct
    assert undo(softmax_over_queries_attention) is softmax_over_queries_attention
    repaired = undo(softmax_over_dim_1_attention)
    q, k, v = torch.randn(2, 3, 5, 6), torch.randn(2, 3, 7, 6), torch.randn(1, 3, 7, 2)
    for got, expected in zip(repaired(q, k, v), _correct(q, k, v), strict=True):
        torch.testing.assert_close(got, expected)


def test_the_scaling_and_mask_repairs_make_a_correct_answer_wrong():
    # So they confirm no cause on an answer that does not make their mistake.
    def correct(q, k, v, mask=None, scale=True):  # noqa: ANN001, ANN202
        scores = q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5
        if mask is not None:
            scores = scores.masked_fill(~mask.bool(), float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        return weights @ v, weights

    repairs = {r.mistake.key: r for r in repairs_of(ASSIGNMENT)}
    q, k, v = torch.randn(3, 4), torch.randn(6, 4), torch.randn(6, 2)
    mask = torch.rand(3, 6) < 0.5
    mask[:, 0] = True
    unscaled = repairs["attention.scaled_by_sqrt_l_k"].undo(correct)
    assert not torch.allclose(unscaled(q, k, v)[1], correct(q, k, v)[1])
    assert torch.equal(unscaled(q, k, v, scale=False)[1], correct(q, k, v, scale=False)[1])
    reversed_mask = repairs["attention.mask_reversed"].undo(correct)
    assert not torch.allclose(reversed_mask(q, k, v, mask)[1], correct(q, k, v, mask)[1])
    assert torch.equal(reversed_mask(q, k, v)[1], correct(q, k, v)[1])
    # The 0/1 masks alone reversed: a bool mask, or none, reaches the answer as it is.
    numeric_mask = repairs["attention.numeric_mask_reversed"].undo(correct)
    mask[:, 1] = False  # every row of the reversed mask sees key 1
    ones = mask.int()
    assert not torch.allclose(numeric_mask(q, k, v, ones)[1], correct(q, k, v, ones)[1])
    assert torch.equal(numeric_mask(q, k, v, mask)[1], correct(q, k, v, mask)[1])
    assert torch.equal(numeric_mask(q, k, v)[1], correct(q, k, v)[1])


def test_a_repeated_mistake_is_waived_once_charged_and_its_grade_crosses_the_pipe(cells):
    with registry.one_submission():
        first = grade_cell(ASSIGNMENT, "first", cells)
        second = grade_cell(ASSIGNMENT, "second", cells)
    assert first.fraction == 0 and first.repeat is None
    assert second.repeat == Repeat(CAUSE, "first", waived=True)
    assert second.full_marks and second.points(1.5) == 1.5
    assert {c.repair for c in second.checks} == {f"{SOFTMAX_AXIS} (softmax_over_the_keys)"}
    assert CellGrade.from_json(json.loads(json.dumps(second.to_json()))) == second
    lines = second.describe().splitlines()
    assert lines[0].startswith(f"not charged again: fails only because of {CAUSE}, charged in ")
    assert lines[1] == "[second_rows] each row of the weights must sum to 1 over the keys"
    # Its check's text names no cause; the repair confirmed one, and the message names it.
    assert lines[2] == CONFIRMED_CAUSE + str(ATTENTION["softmax_over_queries"])
    assert lines[-1] == (
        "  FAILED  while checking second values (weight 0.5): also fails, same cause as second_rows"
    )


def test_charging_again_or_grading_one_cell_alone_waives_nothing(cells):
    with registry.one_submission(charge_again=True):
        grade_cell(ASSIGNMENT, "first", cells)
        again = grade_cell(ASSIGNMENT, "second", cells)
    assert again.fraction == 0 and again.repeat == Repeat(CAUSE, "first", waived=False)
    assert again.describe().startswith("charged again: ")
    alone = grade_cell(ASSIGNMENT, "second", cells)  # no submission: nothing charged before
    assert alone.fraction == 0 and alone.repeat is None


def test_a_check_the_repair_does_not_fix_keeps_the_cell_charged(cells):
    registry.check(ASSIGNMENT, "second", name="second_other")(never_passes)
    with registry.one_submission():
        grade_cell(ASSIGNMENT, "first", cells)
        second = grade_cell(ASSIGNMENT, "second", cells)
    assert second.repeat is None and second.fraction == 0
    causes = [c.cause != "" for c in second.checks]
    assert causes == [True, True, False]
    listing = second.describe().splitlines()
    assert "  FAILED  while checking second other: this check fails whatever the answer" in listing


def test_the_repair_leaves_an_answer_without_the_mistakes_sign_as_it_is_so_it_confirms_nothing(
    cells,
):
    # A failing check of such an answer fails again with the repair: nothing is confirmed, even
    # where the exchanged call would pass it for another reason (issue 40's blind f01-06).
    repair = softmax_axis_repairs()["softmax_over_the_keys"]

    def correct(q, k, v, mask=None, scale=True):  # noqa: ANN001, ANN202
        return _correct(q, k, v)

    assert repair.undo(correct) is correct
    assert repair.undo(softmax_over_queries_attention) is not softmax_over_queries_attention
    registry.run_check(checks_for(ASSIGNMENT, "first")[0], repair.applied_to(cells))


def _correct(q, k, v):  # noqa: ANN001, ANN202
    weights = torch.softmax(q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5, dim=-1)
    return weights @ v, weights


# ------------------------------------------------------------------------------------------
# End to end: every record of the grading command shows the one grade


def graded_by_the_command(
    folder: Path, assignment: str, answers: dict[str, str], charge_again: bool
) -> tuple[Path, dict[str, float], dict[str, float]]:
    """A course of one student, sam, with ``answers``, graded by the grading command (the course
    charging again where asked): the course's root, each graded cell's points, and sam's score of
    each in the gradebook, which the CSV shows too."""
    sample = Sample("sam", "mistake", "ok", False, answers=answers)
    root = folder / "course"
    build_course(root, [sample], assignment)
    if charge_again:
        with (root / "nbgrader_config.py").open("a") as config:
            config.write("\nc.MistakeCharges.charge_again = True\n")
    assert main(["grade", assignment, "--course", str(root), "--workers", "1"]) == 0
    release = Path(__file__).resolve().parents[1] / "notebooks" / assignment / f"{assignment}.ipynb"
    points = cell_points(nbformat.read(release, 4))
    with Gradebook(f"sqlite:///{root / 'grading' / 'gradebook.db'}", "attention_lab") as gb:
        notebook = gb.find_submission_notebook(assignment, assignment, "sam")
        scores = {g.cell.name: g.auto_score for g in notebook.grades if g.cell.name in points}
    with (root / "grading" / f"{assignment}_grades.csv").open(newline="") as handle:
        (row,) = csv.DictReader(handle)
    assert {g: float(row[g]) for g in points} == scores
    assert float(row["score"]) == sum(scores.values())
    return root, points, scores


@pytest.mark.slow
@pytest.mark.sandbox
@pytest.mark.parametrize("charge_again", [False, True], ids=["once", "again"])
def test_every_record_shows_the_one_grade_and_the_feedback_says_which(
    tmp_path: Path, sandbox_required: None, charge_again: bool
):
    root, points, scores = graded_by_the_command(
        tmp_path, ASSIGNMENT, mutated_cells(SOFTMAX_OVER_QUERIES), charge_again
    )
    lost_points = {g for g, s in scores.items() if s < points[g]}
    # the causal weights cell keeps its one-position check's share when charged
    assert lost_points == ({CHARGED, *REPEATS} if charge_again else {CHARGED})
    results = root / "grading" / "gradescope" / "sam" / ASSIGNMENT / "results.json"
    tests = {t["name"]: t for t in json.loads(results.read_text())["tests"]}
    assert {g: tests[g]["score"] for g in points} == scores
    page = html.unescape(
        (root / "grading" / "feedback" / "sam" / ASSIGNMENT / f"{ASSIGNMENT}.html").read_text()
    )
    said = "charged again" if charge_again else "not charged again"
    for grade_id in REPEATS:
        assert f"{said}: fails only because of {CAUSE}, charged in {CHARGED}" in page
        assert f"{said}: fails only because of {CAUSE}" in tests[grade_id]["output"]


def test_02s_mask_repair_leaves_a_correct_module_as_it_is_and_repairs_one_without_the_axis():
    """02's repair of a (B, L_q, L_k) mask: the checks' view of the module gives each 3-D mask its
    head axis on the way in, and stays that view through .to(), .eval() and a deep copy."""
    import copy

    from torch import nn

    import attention_lab.reference.a02_multi_head as reference
    from autograder.checks.a02_multi_head.multi_head_attention import (
        with_a_head_axis_on_every_sentence_mask as repaired,
    )

    class NoHeadAxis(reference.MultiHeadAttention):
        def forward(self, query, key=None, value=None, mask=None):
            if mask is not None and mask.dim() == 3:
                mask = mask.unsqueeze(0)  # broadcast with its head axis in front: wrong
            return super().forward(query, key, value, mask)

    torch.manual_seed(0)
    query, memory = torch.randn(3, 4, 8), torch.randn(3, 5, 8)
    mask = torch.rand(3, 4, 5) > 0.3
    mask[..., 0] = True
    for cls in (reference.MultiHeadAttention, NoHeadAxis):
        torch.manual_seed(1)
        theirs = cls(8, 2).eval()
        torch.manual_seed(1)
        view = repaired(cls)(8, 2).double().eval().to(torch.float32)
        assert isinstance(view, nn.Module) and type(view) is not cls
        assert isinstance(copy.deepcopy(view), nn.Module)
        right = reference.MultiHeadAttention.forward(theirs, query, memory, memory, mask)
        for out in (
            view(query, memory, memory, mask),
            view.forward(query, memory, memory, mask=mask),
        ):
            assert torch.allclose(out[0], right[0]) and torch.equal(out[1], right[1])
    with pytest.raises(ValueError, match="broadcastable"):  # the answer alone, where B != H
        NoHeadAxis(8, 2)(query, memory, memory, mask)
