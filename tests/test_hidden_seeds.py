"""Hidden inputs derive from the course secret: another secret, other inputs, the same grades."""

from __future__ import annotations

import math
from pathlib import Path

import nbformat
import numpy as np
import pytest
import torch

from autograder.authoring.hidden_draws import hidden_generator, under_seed, under_seeds
from autograder.authoring.hidden_seeds import (
    DEVELOPMENT_SECRET,
    hidden_seed,
    secret_fingerprint,
    secret_in_use,
    use_secret,
)
from autograder.authoring.registry import CellGrade, Repeat, grade_cell
from autograder.suite.submission import DEMO_TAG, grade_submission, load_submission
from tests.mutants import Mutant, mutated_cells
from tests.mutants.blind.a01_attention import CORRECT as BLIND_CORRECT_01
from tests.mutants.blind.a01_attention import WRONG as BLIND_01
from tests.mutants.m01_attention import CORRECT as CORRECT_01
from tests.mutants.m01_attention import WRONG as WRONG_01
from tests.mutants.m04_depth import WRONG as WRONG_04
from tests.test_mutants import build

ROOT = Path(__file__).resolve().parents[1]
THIS_TERM, NEXT_TERM = b"this term's course secret, 32 b", b"next term's course secret, 32 by"
SECRETS = 32  # the secrets one answer is graded under, in the tests of f04-12 and f01-04
# Issue 40's f01-04: the softmax over the queries (dim=-2), its masking right.
SOFTMAX_OVER_QUERIES = next(m for m in BLIND_01 if m.name.startswith("f01-04"))
# The same axis without a fix for fully masked rows: a second mistake, which that cell charges.
WITHOUT_THE_FIX = next(m for m in WRONG_01 if m.name.endswith("fully masked rows left to it"))
# Issue 40's h01-10: the rows that see a key found over the queries' axis.
ROWS_OVER_QUERIES = next(m for m in BLIND_01 if m.name.startswith("h01-10"))

# A submission that keeps every tensor the judge hands its `attention`, to print or reuse later.
RECORDER = """\
_recorded = []
_own_attention = attention

def attention(*args, **kwargs):
    _recorded.append([a.detach().clone() for a in (*args, *kwargs.values()) if torch.is_tensor(a)])
    return _own_attention(*args, **kwargs)
"""


def draws(label: str) -> torch.Tensor:
    """What a check drawing from ``hidden_generator(label)`` gets first."""
    return torch.randn(8, generator=hidden_generator(label))


def test_each_secret_draws_its_own_hidden_inputs():
    with secret_in_use(THIS_TERM):
        first, again = draws("a01 rows"), draws("a01 rows")
        other_label = draws("a01 scale")
    with secret_in_use(NEXT_TERM):
        next_term = draws("a01 rows")
    assert torch.equal(first, again)  # one secret: reproducible
    assert not torch.equal(first, other_label)
    assert not torch.equal(first, next_term)


def test_a_check_s_seed_neither_follows_nor_moves_the_global_rng():
    torch.manual_seed(123)
    before = torch.random.get_rng_state()
    with under_seed(7):
        inside = torch.rand(3)
    assert torch.equal(torch.random.get_rng_state(), before)  # the student's state, untouched
    assert torch.equal(inside, torch.rand(3, generator=torch.Generator().manual_seed(7)))
    draws = under_seeds(lambda: torch.rand(2), [7, 8, 7])
    assert torch.equal(draws[0], draws[2]) and not torch.equal(draws[0], draws[1])
    assert torch.equal(draws[0], inside[:2])
    assert torch.equal(torch.random.get_rng_state(), before)


def test_the_development_secret_is_in_use_unless_told_otherwise():
    with secret_in_use(THIS_TERM):
        fingerprint = secret_fingerprint()
    assert fingerprint != secret_fingerprint()
    with secret_in_use(DEVELOPMENT_SECRET):
        assert torch.equal(draws("a01 rows"), draws("a01 rows"))
        assert secret_fingerprint() != fingerprint
    assert hidden_seed("a01 rows") == hidden_seed("a01 rows") < 2**64


def test_total_variation_as_the_maximum_fails_under_every_secret():
    """Over 2 or 3 keys max |p - q| equals 1/2 * sum |p - q|: issue 40's fresh answer f04-12 kept
    full marks under every secret whose draw had at most 3 keys (about one in four)."""
    mutant = next(m for m in WRONG_04 if m.name == "total variation as the largest |p - q|")
    ((cell, phrase),) = mutant.must_fail.items()
    namespace: dict = {"torch": torch}
    exec(mutated_cells(mutant)["attention_metrics"], namespace)
    kept = []
    for secret in secrets():
        with secret_in_use(secret):
            grade = grade_cell("04_depth", cell, namespace)
        if grade.full_marks or phrase not in grade.first_failure:
            kept.append((secret, grade.describe()))
    assert not kept, f"{len(kept)} of {SECRETS} secrets: {kept[:3]}"


def secrets() -> list[bytes]:
    """SECRETS course secrets, each its own."""
    return [b"tests/test_hidden_seeds.py: secret %02d" % number for number in range(SECRETS)]


def fully_masked_row_grades(mutant: Mutant) -> list[CellGrade]:
    """The grade of 01's fully masked row cell for ``mutant`` under each of SECRETS secrets."""
    # What 01's read-only setup cell gives every answer cell (u01-06 uses F).
    namespace: dict = {
        "torch": torch,
        "math": math,
        "Tensor": torch.Tensor,
        "F": torch.nn.functional,
        "np": np,
    }
    exec(mutated_cells(mutant)["attention"], namespace)
    grades = []
    for secret in secrets():
        with secret_in_use(secret):
            grades.append(grade_cell("01_attention", "test_attention_fully_masked_row", namespace))
    return grades


@pytest.mark.slow  # half a second or more in the fast tier (tests/tiers.py)
def test_a_softmax_over_the_queries_is_judged_in_the_fully_masked_row_cell_by_its_fix_alone():
    """f01-04 (its fix right) lost points there under 11 of 32 secrets, whose draw hid a key from
    every query where each query sees a key: its softmax is 0/0 over that key, a share of the
    axis mistake charged in the rows cell. Without the fix it lost them under 21 of 32."""
    kept = [g.describe() for g in fully_masked_row_grades(SOFTMAX_OVER_QUERIES) if not g.full_marks]
    assert not kept, f"{len(kept)} of {SECRETS} secrets: {kept[:3]}"
    phrase = WITHOUT_THE_FIX.must_fail["test_attention_fully_masked_row"]
    grades = fully_masked_row_grades(WITHOUT_THE_FIX)
    missed = [g.describe() for g in grades if g.full_marks or phrase not in g.first_failure]
    assert not missed, f"{len(missed)} of {SECRETS} secrets: {missed[:3]}"


@pytest.mark.slow  # half a second or more in the fast tier (tests/tiers.py)
def test_rows_found_over_the_queries_fail_the_fully_masked_row_cell_under_every_secret():
    """Issue 40's h01-10 finds the rows that see a key with mask.any(dim=-2): a key no query sees
    gets weight that is zeroed after the softmax. It kept full marks while no hidden input asked
    a row that sees a key to sum to 1; every correct answer of the corpus still keeps them."""
    phrase = ROWS_OVER_QUERIES.must_fail["test_attention_fully_masked_row"]
    grades = fully_masked_row_grades(ROWS_OVER_QUERIES)
    missed = [g.describe() for g in grades if g.full_marks or phrase not in g.first_failure]
    assert not missed, f"{len(missed)} of {SECRETS} secrets: {missed[:3]}"
    for mutant in [*CORRECT_01, *BLIND_CORRECT_01]:
        if "attention" in mutant.patches:
            kept = [g.describe() for g in fully_masked_row_grades(mutant) if not g.full_marks]
            assert not kept, f"{mutant.name}: {len(kept)} of {SECRETS} secrets: {kept[:3]}"


@pytest.mark.slow  # half a second or more: out of the fast tier (tests/tiers.py)
def test_one_softmax_axis_mistake_is_charged_once_under_every_secret(tmp_path: Path):
    submission = load_submission(build(SOFTMAX_OVER_QUERIES, tmp_path), skip_tags=(DEMO_TAG,))
    ((charged, phrase),) = SOFTMAX_OVER_QUERIES.must_fail.items()
    cause = "the softmax axis in `attention`"
    repeats = ("test_attention_scaling", "test_attention_parity", "test_causal_weights")
    departures = []
    for secret in secrets():
        with secret_in_use(secret):
            grades = grade_submission(submission)
        lost = {grade_id for grade_id, grade in grades.items() if not grade.full_marks}
        waived = {grade_id: grades[grade_id].repeat for grade_id in repeats}
        if (
            lost != {charged}
            or phrase not in grades[charged].first_failure
            or set(waived.values()) != {Repeat(cause, charged, waived=True)}
        ):
            departures.append((secret, sorted(lost), waived))
    assert not departures, f"{len(departures)} of {SECRETS} secrets: {departures[:3]}"


def test_a_secret_too_short_to_be_one_is_refused():
    with pytest.raises(ValueError, match="expected a course secret of at least 16 bytes, got 3"):
        use_secret(b"abc")


@pytest.mark.slow  # half a second or more: out of the fast tier (tests/tiers.py)
def test_reference_data_is_built_once_per_secret():
    from autograder.checks.a03_transformer_block.shared import course_corpora

    with secret_in_use(THIS_TERM):
        this_term = course_corpora()
        assert course_corpora() is this_term
    with secret_in_use(NEXT_TERM):
        next_term = course_corpora()
    assert next_term is not this_term
    texts = [[ex.text for ex in corpora["vocab"].train] for corpora in (this_term, next_term)]
    assert texts[0] != texts[1]


def same(first: list[list[torch.Tensor]], second: list[list[torch.Tensor]]) -> bool:
    """Whether two recordings hold the same calls with the same tensors."""
    flat = [[(t.shape, t.flatten().tolist()) for t in call] for call in first]
    return flat == [[(t.shape, t.flatten().tolist()) for t in call] for call in second]


def drawn(calls: list[list[torch.Tensor]]) -> set[tuple[float, ...]]:
    """The random floating-point tensors among recorded inputs, each as its values."""
    return {
        tuple(t.flatten().tolist())
        for call in calls
        for t in call
        if t.is_floating_point() and t.unique().numel() > 2
    }


def recording_submission(folder: Path) -> Path:
    """01's solution with a cell after `attention` that records every input it is called with."""
    notebook = nbformat.read(ROOT / "solutions/01_attention/01_attention.ipynb", 4)
    index = next(
        i
        for i, cell in enumerate(notebook.cells)
        if cell.metadata.get("nbgrader", {}).get("grade_id") == "attention"
    )
    notebook.cells.insert(index + 1, nbformat.v4.new_code_cell(RECORDER))
    path = folder / "01_attention.ipynb"
    nbformat.write(notebook, path)
    return path


@pytest.mark.slow  # half a second or more: out of the fast tier (tests/tiers.py)
def test_inputs_recorded_one_term_differ_the_next_and_the_grades_do_not(tmp_path: Path):
    submission = load_submission(recording_submission(tmp_path), skip_tags=(DEMO_TAG,))
    recorded = submission.namespace["_recorded"]
    grades, inputs = {}, {}
    for term, secret in (("this", THIS_TERM), ("next", NEXT_TERM), ("this again", THIS_TERM)):
        recorded.clear()
        with secret_in_use(secret):
            grades[term] = grade_submission(submission)
        inputs[term] = list(recorded)
    assert inputs["this"], "the judge never called the student's attention"
    assert all(r.full_marks for r in grades["this"].values()), grades["this"]

    assert same(inputs["this"], inputs["this again"])  # the difference is the secret's
    assert not same(inputs["this"], inputs["next"])
    # No random tensor recorded this term is handed in again next term.
    assert not drawn(inputs["this"]) & drawn(inputs["next"])
    verdicts = {
        term: {g: (r.fraction, [(c.name, c.passed) for c in r.checks]) for g, r in found.items()}
        for term, found in grades.items()
    }
    assert verdicts["this"] == verdicts["next"] == verdicts["this again"]
