"""A kernel that attacks the judge costs only its own cells: the judge refuses, stays small, ends.

Every attack here is a student's notebook.  Its code runs in the sandboxed kernel, where it can
replace what the kernel's side of judging (``autograder.judging.kernel`` and ``.protocol``) sends,
and it attacks only when the judge calls it: the notebook's own public checks see an honest
``attention``, so each cell reaches its hidden checks and the judge gets the malicious reply.
What a kernel prints while the checks run is never shown (it could hold their inputs), so the
witness that an attack fired is each attacked cell's grade: the honest function it wraps passes,
and the judge's refusal names what it refused.

One batch grades them all beside an honest correct and an honest wrong submission, which must get
exactly what they get when graded alone.  Every attacked cell must fail with a message that says
why (the judge's refusal, its time budget), no grading process may grow past ``PEAK_MIB`` (an
accepted claiming frame alone would take the judge past it), and the batch must end within
``BATCH_SECONDS``.
"""

from __future__ import annotations

import json
import textwrap
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from autograder.examples import UNSCALED, Sample, build_course, solution_answers
from autograder.isolation import sandbox
from autograder.judging.limits import JudgeLimits
from autograder.pipeline.course.course import Course
from autograder.pipeline.engines.batch import grade
from autograder.pipeline.engines.jobs_and_outcomes import Outcome, Settings
from autograder.pipeline.intake import intake

pytestmark = [pytest.mark.slow, pytest.mark.sandbox]

ASSIGNMENT = "01_attention"
GiB = 1 << 30
SETTINGS = Settings(
    cell_timeout=20,
    max_restarts=3,
    judge=JudgeLimits(call_seconds=15, total_seconds=40, memory_bytes=1 * GiB),
    limits=sandbox.Limits(memory_bytes=2 * GiB, cpu_seconds=200, wall_seconds=300),
)
# The attack batch took ~100 s with 2 workers on a shared 2-core machine, the sleeper ~60 s of
# it.  Far below what a judge waiting on the sleeper would take: its 1000 s, or the sandbox's
# 300 s wall limit.
BATCH_SECONDS = 400
SLEEPER_SECONDS = 200
# What any grading worker or judge process may hold (ru_maxrss).  Honest grading measured
# 200-240 MiB; a reader that believed the claiming frame would allocate 2.5 GB.
PEAK_MIB = 600

NUMPY_CELL = "test_attention_numpy"
MASK_CELL = "test_causal_mask"
ATTENTION_CELLS = (
    "test_attention_rows_sum_to_one",
    "test_attention_scaling",
    "test_attention_fully_masked_row",
    "test_attention_parity",
    "test_causal_weights",
)
# the first words of a cell waived because an answer cell it uses is wrong (used_answers.py)
WAIVED_FOR_AN_ANSWER_IT_USES = "not charged again: fails only because of the answer cell"

# -------------------------------------------------------------------------------------------
# The attacks, as the student's cells.  COMMON opens every attack's own cell (placed after the
# setup cell): the kernel-side modules, and a test for "the judge is calling me".

COMMON = """
import sys

import autograder.judging.kernel as judge_client
import autograder.judging.protocol as wire


def called_by_judge():
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_globals.get("__name__") == judge_client.__name__:
            return True  # the kernel's checkpoint is serving a hidden check
        frame = frame.f_back
    return False
"""

# 1. A class that is torch.Tensor by name, so isinstance would accept its stand-in in the judge.
FORGED_TENSOR = """
class Forged:
    pass


Forged.__module__ = "torch._tensor"
Forged.__name__ = Forged.__qualname__ = "Tensor"
"""
FORGED_RETURN = """print("ATTACK SENT: objects named torch._tensor.Tensor")
return Forged(), Forged()
"""

# 2. An object offering NumPy a raw pointer: a billion float64 at address 16.  The judge must
# never ask for it (np.asarray of a proxy would otherwise read unmapped memory).
RAW_POINTER = """
class Pointer:
    @property
    def __array_interface__(self):
        raise AttributeError("POINTER HANDED OUT")
        return {"data": (16, False), "shape": (10**9,), "typestr": "<f8", "version": 3}
"""
POINTER_RETURN = """print("ATTACK SENT: objects with an __array_interface__ at address 16")
return Pointer(), Pointer()
"""

# 3. Raw frames whose tensor header claims far more than the frame holds: 2.5e9 uint8 elements
# (past the element cap), then 2**26 float64 (512 MiB) over 8 bytes of data.  A reader that
# trusted the header would allocate what it claims.
CLAIMING_SEND = """
import json
import struct

armed = []
honest_send = judge_client.send_message
CLAIMS = [("U8", [50_000, 50_000]), ("F64", [2**13, 2**13])]


def claiming_payload(message):
    dtype, shape = CLAIMS[0] if len(CLAIMS) == 2 else CLAIMS[-1]
    if len(CLAIMS) == 2:
        CLAIMS.pop(0)
    size = 1 if dtype == "U8" else 8
    header = json.dumps({"0": {"dtype": dtype, "shape": shape, "data_offsets": [0, size]}})
    blob = struct.pack("<Q", len(header)) + header.encode() + bytes(size)
    tree = json.dumps(message).encode()
    return struct.pack("!QQ", len(tree), len(blob)) + tree + blob, shape


def claiming_send(sock, message, tensors):
    if not armed:
        return honest_send(sock, message, tensors)
    armed.clear()
    payload, shape = claiming_payload(message)
    print(f"ATTACK SENT: {len(payload)} bytes claiming a tensor of shape {shape}")
    sock.sendall(payload)


judge_client.send_message = claiming_send
"""
CLAIMING_RETURN = """armed.append(True)  # the reply to this call is the forged frame
"""

# 5. A NumPy scalar of a 2 GB void dtype: decoding it, np.dtype("V2000000000").type(2_000_000_000)
# would allocate 2 GB in the judge (with "v": 0 it would be one byte).
VOID_SCALAR = """
honest_encode = wire.encode


class Void:
    pass


VOID = Void()


def forging_encode(value, *args, **kwargs):
    if value is VOID:
        print("ATTACK SENT: a NumPy scalar of dtype V2000000000")
        return {"$": "npscalar", "dtype": "V2000000000", "v": 2_000_000_000}
    return honest_encode(value, *args, **kwargs)


wire.encode = judge_client.encode = forging_encode
"""
VOID_RETURN = """return out, VOID
"""

# 6. Small replies whose JSON tree builds 500,000 empty lists (1.5 MB), then nests 100,000 deep
# (which would exhaust a recursive reader's stack).
MANY_LISTS = """
import json
import struct

armed = []
sent = []
honest_send = judge_client.send_message
LISTS = 500_000


def many_lists_send(sock, message, tensors):
    if not armed:
        return honest_send(sock, message, tensors)
    armed.clear()
    if not sent:
        value = '{"$": "list", "v": [' + ",".join(["[]"] * LISTS) + "]}"
    else:
        value = "[" * 100_000 + "]" * 100_000
    sent.append(True)
    tree = ('{"ok": true, "value": ' + value + "}").encode()
    print(f"ATTACK SENT: {len(tree)} bytes of JSON that build {LISTS} lists or nest deeply")
    sock.sendall(struct.pack("!QQ", len(tree), 0) + tree)


judge_client.send_message = many_lists_send
"""
MANY_LISTS_RETURN = CLAIMING_RETURN

# 7. Correct for the notebook, asleep for the judge.
SLEEPER = """
import time
"""
SLEEPER_RETURN = """print("ATTACK SENT: sleeping for the judge")
time.sleep(1000)
"""


def _wrapped(name: str, params: str, attack: str) -> str:
    """The instructor's ``name``, wrapped: the same results, but ``attack`` when the judge calls.

    The attack sees the honest results as ``out`` and ``weights``.
    """
    arguments = ", ".join(p.partition("=")[0].strip() for p in params.split(","))
    return f"""{solution_answers()[name]}

honest_{name} = {name}


def {name}({params}):
    out, weights = honest_{name}({arguments})
    if called_by_judge():
{textwrap.indent(attack, " " * 8)}
    return out, weights
"""


def _attention(attack: str) -> str:
    return _wrapped("attention", "q, k, v, mask=None, scale=True", attack)


def _attention_numpy(attack: str) -> str:
    return _wrapped("attention_numpy", "Q, K, V", attack)


@dataclass(frozen=True)
class Attack:
    """A hostile student, and what grading must show for it."""

    sample: Sample
    attacked: tuple[str, ...]  # the graded cells its attack reaches: each must fail
    reasons: dict[str, str]  # grade_id -> what that cell's message must say
    untouched: tuple[str, ...] = ()  # graded cells that must still pass


def _refused_in_every_attacked_cell(
    reason: str, cells: tuple[str, ...] = ATTENTION_CELLS
) -> dict[str, str]:
    return {cell: reason for cell in cells}


TOO_MANY_CELLS = intake.MAX_CELLS + 1


def _attacks() -> list[Attack]:
    def hostile(student: str, extra: str, **answers: str) -> Sample:
        return Sample(student, "hostile", "ok", False, answers=answers, extra=COMMON + extra)

    claimer_reasons = _refused_in_every_attacked_cell("that the message does not hold")
    claimer_reasons[ATTENTION_CELLS[0]] = "2500000000 elements exceeds"
    return [
        Attack(
            hostile("forger", FORGED_TENSOR, attention=_attention(FORGED_RETURN)),
            ATTENTION_CELLS,
            _refused_in_every_attacked_cell("poses as a tensor or NumPy array"),
            (NUMPY_CELL, MASK_CELL),
        ),
        Attack(
            hostile(
                "pointer",
                RAW_POINTER,
                attention=_attention(POINTER_RETURN),
                attention_numpy=_attention_numpy(POINTER_RETURN),
            ),
            (NUMPY_CELL, *ATTENTION_CELLS),
            {},
            (MASK_CELL,),
        ),
        Attack(
            hostile("claimer", CLAIMING_SEND, attention=_attention(CLAIMING_RETURN)),
            ATTENTION_CELLS,
            claimer_reasons,
            (NUMPY_CELL, MASK_CELL),
        ),
        Attack(
            hostile("voider", VOID_SCALAR, attention=_attention(VOID_RETURN)),
            ATTENTION_CELLS,
            _refused_in_every_attacked_cell("dtype 'V2000000000' cannot cross"),
            (NUMPY_CELL, MASK_CELL),
        ),
        Attack(
            hostile("lister", MANY_LISTS, attention=_attention(MANY_LISTS_RETURN)),
            ATTENTION_CELLS,
            _refused_in_every_attacked_cell("too large or nested too deeply"),
            (NUMPY_CELL, MASK_CELL),
        ),
        Attack(
            Sample(
                "sleeper",
                "hostile",
                "timeout",
                False,
                answers={"attention": _attention(SLEEPER_RETURN)},
                extra=COMMON + SLEEPER,
            ),
            ATTENTION_CELLS,
            {ATTENTION_CELLS[0]: "timed out"},  # the judge's per-call bound, not the cell's
            (NUMPY_CELL,),
        ),
        Attack(
            Sample(
                "bigcell",
                "hostile",
                "invalid notebook",
                False,
                extra="# " + "x" * (2 * intake.MAX_CELL_CHARS - 2),
            ),
            (NUMPY_CELL, MASK_CELL, *ATTENTION_CELLS),
            _refused_in_every_attacked_cell(
                f"a cell may hold at most {intake.MAX_CELL_CHARS}",
                (NUMPY_CELL, MASK_CELL, *ATTENTION_CELLS),
            ),
        ),
        Attack(
            Sample("manycells", "hostile", "invalid notebook", False),  # cells added after
            (NUMPY_CELL, MASK_CELL, *ATTENTION_CELLS),
            _refused_in_every_attacked_cell(
                f"at most {intake.MAX_CELLS} can be graded",
                (NUMPY_CELL, MASK_CELL, *ATTENTION_CELLS),
            ),
        ),
    ]


HONEST = [
    Sample("ada", "correct", "ok", True),
    Sample("alan", "mistake", "ok", False, answers={"attention": UNSCALED}),
]


def _add_cells(course_root: Path, student: str, count: int) -> None:
    """Give ``student``'s submission ``count`` more (empty) code cells."""
    path = course_root / "grading" / "submitted" / student / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    notebook = json.loads(path.read_text())
    empty = {"cell_type": "code", "metadata": {}, "source": "", "outputs": []}
    notebook["cells"] += [{**empty, "execution_count": None} for _ in range(count)]
    path.write_text(json.dumps(notebook))


def _grade(course_root: Path, samples: list[Sample]) -> tuple[dict[str, Outcome], float]:
    build_course(course_root, samples)
    if any(sample.student == "manycells" for sample in samples):
        _add_cells(course_root, "manycells", TOO_MANY_CELLS)
    started = time.monotonic()
    outcomes = grade(ASSIGNMENT, Course.load(course_root), workers=2, settings=SETTINGS)
    seconds = time.monotonic() - started
    by_student = {outcome.student: outcome for outcome in outcomes}
    assert sorted(by_student) == sorted(sample.student for sample in samples)
    return by_student, seconds


def _cells(outcome: Outcome) -> dict[str, tuple[bool, str]]:
    return {cell.grade_id: (cell.passed, cell.message) for cell in outcome.cells}


def _summary(outcomes: dict[str, Outcome]) -> str:
    lines = []
    for student, outcome in sorted(outcomes.items()):
        lines.append(
            f"{student}: {outcome.verdict}, {outcome.grader_peak_mib:.0f} MiB, "
            f"{outcome.seconds:.0f} s, notes {outcome.notes}"
        )
        for cell in outcome.cells:
            lines.append(f"    {cell.grade_id}: {cell.passed}  {cell.message[:300]!r}")
    return "\n".join(lines)


def test_attacks_on_the_judge_cost_only_their_own_cells(tmp_path: Path):
    available, why = sandbox.sandbox_available()
    if not available:
        pytest.fail(f"the grading sandbox is unavailable: {why}", pytrace=False)
    attacks = _attacks()

    alone, alone_seconds = _grade(tmp_path / "alone", HONEST)
    print(f"honest alone in {alone_seconds:.0f} s\n{_summary(alone)}")  # shown with -s
    outcomes, seconds = _grade(tmp_path / "class", HONEST + [a.sample for a in attacks])
    summary = _summary(outcomes)
    print(f"batch of {len(outcomes)} in {seconds:.0f} s\n{summary}")

    assert seconds < BATCH_SECONDS, summary
    for student, outcome in outcomes.items():
        assert outcome.verdict != "grader error", summary
        assert outcome.cells, summary  # every graded cell has a result
        assert outcome.grader_peak_mib < PEAK_MIB, (student, outcome.grader_peak_mib, summary)

    # The honest ones are graded beside the attacks exactly as they are alone.
    for sample in HONEST:
        beside, by_itself = outcomes[sample.student], alone[sample.student]
        assert beside.verdict == by_itself.verdict == sample.expected, summary
        passes = [(c.grade_id, c.passed) for c in beside.cells]
        assert passes == [(c.grade_id, c.passed) for c in by_itself.cells], summary
        assert all(passed for _, passed in passes) == sample.full_marks, summary

    for attack in attacks:
        outcome = outcomes[attack.sample.student]
        cells = _cells(outcome)
        context = f"{attack.sample.student}\n{summary}"
        assert outcome.verdict == attack.sample.expected, context
        assert not any("judge for this notebook stopped" in note for note in outcome.notes), context
        for grade_id in attack.attacked:
            passed, message = cells[grade_id]
            # The attack never earns the points. A cell that fails only because of an attacked
            # answer it uses, charged in that answer's own cells, is not charged again, as for
            # any wrong answer (authoring/used_answers.py), and says so.
            waived = message.startswith(WAIVED_FOR_AN_ANSWER_IT_USES)
            assert not passed or waived, (grade_id, context)
            assert "judge for this notebook stopped" not in message, (grade_id, context)
        for grade_id, reason in attack.reasons.items():
            assert reason in cells[grade_id][1], (grade_id, context)
        for grade_id in attack.untouched:
            assert cells[grade_id][0], (grade_id, context)

    # The judge never asked the pointer attack's objects for their __array_interface__ (asking
    # raises, and the check would quote the error).
    assert not any("POINTER HANDED OUT" in c.message for c in outcomes["pointer"].cells)
    # The sleeper hit both time bounds of the judge: one call, then its notebook's total; its
    # cells' timeouts ended the sleeps, not the sandbox's wall limit.
    sleeper = outcomes["sleeper"]
    assert any("used up their time" in message for _, message in _cells(sleeper).values()), summary
    assert not any("sandbox stopped the notebook" in note for note in sleeper.notes), summary
    assert sleeper.seconds < SLEEPER_SECONDS, summary
