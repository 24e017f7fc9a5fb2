"""The grading command on a class of good, broken and hostile submissions, in one batch.

Every submission must get its expected verdict, the good ones full marks, and no student's grade
may depend on another's.  Limits are set low so the hostile ones end quickly; each hostile
program also bounds itself (at most 8 GB, at most 300 processes) in case a limit failed.

The probes (eve, h08, h09, h10) look for the gradebook, the solutions, the hidden checks and the
grader's network where they really are, and delete their own answers if they reach one: their
full marks here say the sandbox held.  tests/test_probes.py grades them without the sandbox, where
they must lose their points.
"""

from __future__ import annotations

import csv
import json
import secrets
import shutil
import socket
import sqlite3
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path

import nbformat
import pytest

from autograder.examples import (
    DEMO_CLASS,
    UNSCALED,
    Beacon,
    Outside,
    Sample,
    build_course,
    connect_probe,
    probe_said,
    read_probe,
    solution_answers,
    write_probe,
)
from autograder.suite.submission import DEMO_TAG, Submission, grade_submission, load_submission
from tests.judge_parity import cell_points

pytestmark = pytest.mark.usefixtures("sandbox_required")

MEMORY_BOMB = """def bomb():
    chunks = []
    for _ in range(64):  # 64 x 128 MB = 8 GB at most
        chunks.append(bytearray(128 * 2**20))
bomb()
"""
FORK_BURST = """import os, time
children = []
for _ in range(300):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        time.sleep(5)
        os._exit(0)
    children.append(pid)
for pid in children:
    os.waitpid(pid, 0)
"""
HUGE_OUTPUT = "print('x' * (100 * 2**20))"
HUGE_FILE = """with open("big.bin", "wb") as f:
    for _ in range(1024):  # 1 GB at most
        f.write(b"\\0" * 2**20)
"""
SEGFAULT = "import ctypes\nctypes.string_at(0)"
EXIT = "import os\nos._exit(3)"
SYS_EXIT = "import sys\nsys.exit(0)"


def write_gradebook(outside: Outside) -> str:
    """h08: open the course's gradebook for writing."""
    return write_probe(outside, [outside.gradebook])


def read_solutions(outside: Outside) -> str:
    """h09: read the instructor's notebook (both copies) and the hidden checks' source."""
    return read_probe(outside, [*outside.solutions, *outside.hidden_checks])


def open_socket(outside: Outside) -> str:
    """h10: reach a server on the grader's side (BeaconServer) over TCP."""
    return connect_probe(outside)


EQ_PATCH = """import torch
torch.Tensor.__eq__ = lambda self, other: torch.ones((), dtype=torch.bool)
torch.equal = lambda *a, **k: True
"""
EXCEPTION_HOOK = """from IPython import get_ipython
def swallow(shell, etype, evalue, tb, tb_offset=None):
    return None
get_ipython().set_custom_exc((BaseException,), swallow)
"""
CATCH_INTERRUPT = """import time
while True:
    try:
        time.sleep(0.1)
    except KeyboardInterrupt:
        pass
"""


class BeaconServer:
    """Serves a Beacon on this machine's loopback from a thread: sends the token to every
    connection and counts them."""

    def __init__(self) -> None:
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(0.2)
        host, port = self._listener.getsockname()[:2]
        self.beacon = Beacon(host, port, secrets.token_hex(16))
        self.connections = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                connection, _ = self._listener.accept()
            except TimeoutError:
                continue
            with connection:
                self.connections += 1
                connection.sendall(self.beacon.token.encode())

    def __enter__(self) -> BeaconServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self._listener.close()


def probe_reports(course: Path, students: tuple[str, ...]) -> dict[str, str]:
    """student -> what the probe's cell said it reached (examples.probe_said), read from the
    grader's note in the autograded notebook."""
    reports = {}
    for student in students:
        path = course / "grading" / "autograded" / student / "01_attention" / "01_attention.ipynb"
        for cell in nbformat.read(path, 4).cells:
            for output in cell.get("outputs", []):
                text = output.get("text", "") if output.get("name") == "stdout" else ""
                if "probe reached: " in text:
                    reports[student] = "probe reached: " + text.split("probe reached: ")[1].strip()
    return reports


ROOT = Path(__file__).resolve().parents[1]
RELEASE = ROOT / "notebooks" / "01_attention" / "01_attention.ipynb"
SETUP = "cell-01_attention-001"
# Every answer of 01, correct, as one cell's text (the instructor's).
SOLUTIONS = "\n\n".join(solution_answers().values())


def _handed_in(answers: Mapping[str, str], scratch: Mapping[str, str]) -> bytes:
    """The release with ``answers`` in place (the stubs elsewhere) and, after the cell of each
    grade id in ``scratch``, a cell of the student's own with that text."""
    notebook = nbformat.read(RELEASE, 4)
    cells = []
    for cell in notebook.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in answers:
            cell.source = answers[grade_id]
        cells.append(cell)
        if grade_id in scratch:
            cells.append(nbformat.v4.new_code_cell(scratch[grade_id]))
    notebook.cells = cells
    return nbformat.writes(notebook).encode()


# Issue 39's attacks on what is judged.  Correct answers, made inside a function (no exec, no
# globals(): the static bans follow no write through IPython's user_ns).
ANSWERS_MADE = f"""def _answers():
    import math

    import numpy as np
    import torch
    from torch import Tensor

{textwrap.indent(SOLUTIONS, "    ")}
    return dict(attention_numpy=attention_numpy, attention=attention, causal_mask=causal_mask)
"""
# A hook, registered in a cell of the student's own, binds them into the kernel before every
# cell, while every answer cell holds its stub.
HOOK_ON_STUBS = f"""{ANSWERS_MADE}

def _bind(*_):
    get_ipython().user_ns.update(_answers())


get_ipython().events.register("pre_run_cell", _bind)
"""
# Stubs again, and the answers written into the kernel's namespace after the attention cell.
USER_NS_ON_STUBS = f"{ANSWERS_MADE}\nget_ipython().user_ns.update(_answers())\n"
# Kernel-made text: the judge's follow-up silenced, so that a test cell's verdict would be the
# kernel's own error (2,000 characters that a function could fill with hidden inputs), and every
# later prompt numbered by the kernel.
LEAK = "LEAK" * 500
RAISES = f"def attention(q, k, v, mask=None, scale=True):\n    raise RuntimeError({LEAK!r})\n"
KERNEL_TEXT = """import autograder
autograder.judge_failed_cell = lambda *args: None


def _count(*_):
    get_ipython().execution_count = 10**60


get_ipython().events.register("post_run_cell", _count)
"""


# torch's own attention kernel, reached by a name built at run time, which no reading of the text
# can follow: where the judge calls the answer, the torch functions it runs are observed.
BUILT_NAME = solution_answers()["attention"].replace(
    "    if mask is None:\n"
    "        weights = torch.softmax(scores, dim=-1)\n"
    "        return weights @ v, weights\n",
    "    if mask is None:\n"
    '        op = getattr(torch.ops.aten, "_scaled_dot_product" + "_attention_math")\n'
    "        return op(q, k, v, scale=None if scale else 1.0)\n",
)


# k.T reverses every axis of a batched k: the error is raised inside the student's own line.
K_TRANSPOSED = solution_answers()["attention"].replace("k.transpose(-2, -1)", "k.T", 1)


def _renamed(release_bytes: bytes) -> bytes:
    return release_bytes.replace(b'"test_causal_mask"', b'"test_causal_mask_v2"', 1)


# From the demo class (tests/test_demo.py grades all of it): the students the tests below compare
# with (ada, alan), the only tamper case (mallory) and its probe (eve).
KEPT_FROM_THE_DEMO = ("ada", "alan", "mallory", "eve")
CORPUS: tuple[Sample, ...] = (
    *(s for s in DEMO_CLASS if s.student in KEPT_FROM_THE_DEMO),
    # The runner restarts the kernel after a MemoryError, so the breach costs only its own cell.
    # Each extra runs at the end of the first answer cell: one that kills or stops its kernel
    # costs that cell's answer, which the fresh kernel does not replay.
    Sample("h01-memory-bomb", "hostile", "memory limit", False, extra=MEMORY_BOMB),
    Sample("h02-fork-burst", "hostile", "ok", True, extra=FORK_BURST),
    Sample("h03-huge-output", "hostile", "ok", True, extra=HUGE_OUTPUT),  # printed to nowhere
    Sample("h04-huge-file", "hostile", "ok", True, extra=HUGE_FILE),
    Sample("h05-segfault", "hostile", "crashed", False, extra=SEGFAULT),
    Sample("h06-os-exit", "hostile", "crashed", False, extra=EXIT),
    Sample("h07-sys-exit", "hostile", "ok", True, extra=SYS_EXIT),
    Sample("h08-gradebook", "hostile", "ok", True, extra=write_gradebook),
    Sample("h09-solutions", "hostile", "ok", True, extra=read_solutions),
    Sample("h10-socket", "hostile", "ok", True, extra=open_socket),
    # Patches that fool nothing: the kernel reports the same failures the judge finds.
    Sample("h11-eq-patch", "hostile", "ok", False, extra=EQ_PATCH, answers={"attention": UNSCALED}),
    Sample(
        "h12-exception-hook",
        "hostile",
        "ok",
        False,
        extra=EXCEPTION_HOOK,
        answers={"attention": UNSCALED},
    ),
    Sample("h13-keyboard-interrupt", "hostile", "timeout", False, extra=CATCH_INTERRUPT),
    Sample("h14-hook-on-stubs", "hostile", "ok", False, raw=_handed_in({}, {SETUP: HOOK_ON_STUBS})),
    Sample(
        "h15-user-ns-on-stubs",
        "hostile",
        "ok",
        False,
        raw=_handed_in({}, {"attention": USER_NS_ON_STUBS}),
    ),
    Sample("h17-built-name", "hostile", "ok", False, answers={"attention": BUILT_NAME}),
    Sample(
        "h16-kernel-text",
        "hostile",
        "ok",
        False,
        raw=_handed_in({**solution_answers(), "attention": RAISES}, {SETUP: KERNEL_TEXT}),
    ),
    Sample("b01-empty", "broken", "invalid notebook", False, raw=b""),
    Sample("b02-duplicated", "broken", "restored", True),  # built below: a test cell twice
    Sample("b03-renamed", "broken", "restored", True),  # built below: a grade_id renamed
    Sample("b04-deleted-answer", "broken", "restored", False, drop=("causal_mask",)),
    Sample("b05-k-transposed", "broken", "ok", False, answers={"attention": K_TRANSPOSED}),
)


# The students whose cell is a probe of the sandbox.
PROBES = tuple(s.student for s in CORPUS if callable(s.extra))


def _tamper_files(course: Path) -> None:
    """Submissions that need the built file itself changed."""
    folder = course / "grading" / "submitted"
    path = folder / "b02-duplicated" / "01_attention" / "01_attention.ipynb"
    notebook = nbformat.read(path, 4)
    test = next(c for c in notebook.cells if c.metadata.get("nbgrader", {}).get("grade"))
    notebook.cells.append(nbformat.from_dict(dict(test)))
    nbformat.write(notebook, path)
    path = folder / "b03-renamed" / "01_attention" / "01_attention.ipynb"
    path.write_bytes(_renamed(path.read_bytes()))


def _grade(course: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    command = [
        sys.executable,
        "-m",
        "autograder",
        "grade",
        "01_attention",
        "--course",
        str(course),
        "--workers",
        "2",
        "--cell-timeout",
        "10",
        "--time-limit",
        "240",
        "--memory-gb",
        "2",
        "--max-processes",
        "48",
        "--no-feedback",
        *extra,
    ]
    return subprocess.run(command, capture_output=True, text=True, timeout=1200)


@pytest.fixture(scope="module")
def beacon() -> Iterator[BeaconServer]:
    with BeaconServer() as server:
        yield server


@pytest.fixture(scope="module")
def graded(
    tmp_path_factory: pytest.TempPathFactory, beacon: BeaconServer
) -> tuple[Path, dict[str, dict], str]:
    course = tmp_path_factory.mktemp("corpus") / "course"
    build_course(course, CORPUS, beacon=beacon.beacon)
    _tamper_files(course)
    done = _grade(course)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert (course / "grading" / "gradebook.db").read_bytes().startswith(b"SQLite format 3")
    rows = _rows(course)
    return course, rows, done.stdout


def _graded_notebook(course: Path, student: str) -> nbformat.NotebookNode:
    folder = course / "grading" / "autograded" / student / "01_attention"
    return nbformat.read(folder / "01_attention.ipynb", 4)


def _rows(course: Path) -> dict[str, dict]:
    with (course / "grading" / "01_attention_grades.csv").open() as handle:
        return {row["student"]: row for row in csv.DictReader(handle)}


def test_the_corpus_is_large_enough():
    """At least 20 hostile or broken submissions are graded here or by the demo's test."""
    graded = {s.student: s for s in (*CORPUS, *DEMO_CLASS)}
    hostile_or_broken = [s for s in graded.values() if s.kind in ("hostile", "broken")]
    assert len(hostile_or_broken) >= 20


@pytest.mark.slow
@pytest.mark.sandbox
@pytest.mark.parametrize("sample", CORPUS, ids=lambda s: s.student)
def test_verdict_and_score(graded, sample: Sample):
    """Each submission's verdict, and whether it kept full marks."""
    _, rows, _ = graded
    row = rows[sample.student]
    assert row["verdict"] == sample.expected, row
    if sample.full_marks:
        assert float(row["score"]) == float(row["max_score"]), row
    else:
        assert float(row["score"]) < float(row["max_score"]), row


@pytest.mark.slow
@pytest.mark.sandbox
def test_what_is_judged_is_the_answer_cells_text_never_what_a_kernel_was_made_to_hold(graded):
    course, rows, _ = graded
    # Stubs earn nothing, whatever a cell of the student's own bound in their place.
    for student in ("h14-hook-on-stubs", "h15-user-ns-on-stubs"):
        assert float(rows[student]["score"]) == 0, rows[student]
    # Nothing the kernel wrote reaches the graded copy: no error of its own as a verdict (a
    # check may quote 300 characters of it), no execution count of its own.
    path = (
        course
        / "grading"
        / "autograded"
        / "h16-kernel-text"
        / "01_attention"
        / "01_attention.ipynb"
    )
    notebook = nbformat.read(path, 4)
    shown = json.dumps([c.get("outputs", []) for c in notebook.cells])
    assert "LEAK" in shown and LEAK[:400] not in shown
    counts = [c.execution_count for c in notebook.cells if c.cell_type == "code"]
    assert max(c for c in counts if c is not None) <= len(notebook.cells), counts
    # numpy attention (2), causal_mask (1) and sees_the_future (2) use no `attention`; the
    # causal weights (2) fail only because of its `attention`, charged in that answer's own
    # cells, so they are not charged again (authoring/used_answers.py)
    assert float(rows["h16-kernel-text"]["score"]) == 7.0, rows["h16-kernel-text"]
    assert float(rows["h16-kernel-text"]["test_attention_rows_sum_to_one"]) == 0
    # A banned kernel reached by a built name earns nothing where the answer ran it.
    built = rows["h17-built-name"]
    assert float(built["test_attention_rows_sum_to_one"]) == 0, built
    graded_copy = course / "grading" / "autograded" / "h17-built-name" / "01_attention"
    shown = nbformat.writes(nbformat.read(graded_copy / "01_attention.ipynb", 4))
    assert "ran torch.ops.aten._scaled_dot_product_attention_math" in shown


@pytest.mark.slow
@pytest.mark.sandbox
def test_an_error_in_an_answer_is_shown_at_its_line(graded):
    """The kernel names the cell and line an error passed through; the graded copy shows that
    line from the submitted answer."""
    course, _, _ = graded
    number = next(n for n, line in enumerate(K_TRANSPOSED.splitlines(), 1) if "k.T" in line)
    path = course / "grading" / "autograded" / "b05-k-transposed" / "01_attention"
    shown = nbformat.writes(nbformat.read(path / "01_attention.ipynb", 4))
    assert f"in your answer cell `attention`, line {number}: scores = q @ k.T" in shown


@pytest.mark.slow
@pytest.mark.sandbox
def test_the_probes_ran_and_reached_nothing(graded, beacon: BeaconServer):
    course, _, _ = graded
    assert set(PROBES) == {"eve", "h08-gradebook", "h09-solutions", "h10-socket"}
    assert probe_reports(course, PROBES) == {student: probe_said([]) for student in PROBES}
    assert beacon.connections == 0


@pytest.mark.slow
@pytest.mark.sandbox
def test_the_honest_pair_beside_the_attacks_gets_exactly_its_scores_alone(graded):
    """ada and alan, graded in this batch beside every attack, score what their answers score
    in-process, alone: each cell's points from the hidden checks of the same definitions."""
    course, rows, _ = graded
    path = ROOT / "solutions" / "01_attention" / "01_attention.ipynb"
    solution = load_submission(path, skip_tags=(DEMO_TAG,)).namespace
    points = cell_points(_graded_notebook(course, "ada"))
    for student, answers in (("ada", {}), ("alan", {"attention": UNSCALED})):
        namespace = dict(solution)
        for source in answers.values():
            exec(source, namespace)
        alone = grade_submission(Submission("01_attention", namespace))
        expected = {g: grade.points(points[g]) for g, grade in alone.items()}
        assert {g: float(rows[student][g]) for g in expected} == expected, student


@pytest.mark.slow
@pytest.mark.sandbox
def test_patches_do_not_raise_a_score(graded):
    _, rows, _ = graded
    unpatched = rows["alan"]["score"]  # the same wrong answer, no tricks
    for student in ("mallory", "h11-eq-patch", "h12-exception-hook"):
        assert float(rows[student]["score"]) <= float(unpatched), rows[student]


@pytest.mark.slow
@pytest.mark.sandbox
def test_the_gradebook_holds_every_student(graded):
    course, rows, table = graded
    with sqlite3.connect(course / "grading" / "gradebook.db") as db:
        students = {r[0] for r in db.execute("select student_id from submitted_assignment")}
        flagged = {
            r[0]
            for r in db.execute(
                "select a.student_id from submitted_notebook n "
                "join submitted_assignment a on n.assignment_id = a.id where n.flagged"
            )
        }
    assert students == set(rows)
    assert flagged == {s.student for s in CORPUS if s.expected == "tamper suspected"}
    for sample in CORPUS:
        assert sample.student in table


@pytest.mark.slow
@pytest.mark.sandbox
def test_regrading_one_student_changes_nothing(graded):
    course, rows, _ = graded
    done = _grade(course, "--student", "alan", "--student", "h06-os-exit")
    assert done.returncode == 0, done.stderr[-3000:]
    assert "\n2 submissions graded in" in done.stdout  # only those two were graded again
    again = _rows(course)
    assert again.keys() == rows.keys()  # and the class's CSV still holds everyone
    for student, row in rows.items():
        assert again[student]["score"] == row["score"], student
        assert again[student]["verdict"] == row["verdict"], student


@pytest.mark.slow
@pytest.mark.sandbox
def test_failed_feedback_still_shows_the_table_and_keeps_the_grades(graded, tmp_path: Path):
    course = tmp_path / "course"
    shutil.copytree(graded[0], course)
    with (course / "nbgrader_config.py").open("a") as config:
        config.write('c.GenerateFeedback.preprocessors = ["no_such_module.Redact"]\n')
    command = [
        sys.executable,
        "-m",
        "autograder",
        "grade",
        "01_attention",
        "--student",
        "ada",
        "--course",
        str(course),
        "--cell-timeout",
        "30",
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert done.returncode == 1, done.stderr[-3000:]
    assert "error: nbgrader generate_feedback 01_attention --student ada failed" in done.stderr
    assert "15/21" in done.stdout and "Traceback" not in done.stderr.split("error:")[-1]
    assert _rows(course)["ada"]["score"] == graded[1]["ada"]["score"]
