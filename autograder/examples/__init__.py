"""A sample class for ``python -m autograder demo``: correct, mistaken, broken and hostile work.

Submissions are built from the released 01_attention notebook with the instructor's answers
filled in, then changed the way each sample student changed them.  The same builder makes the
bad-input corpus in tests/test_grading_corpus.py.

Some hostile samples are probes of the sandbox: each looks for one thing graded code must never
reach (the solutions, the hidden checks, the gradebook, the grader's network), at the place where
it really is on this machine (:class:`Outside`, found when the course is built).  A probe that
reaches it deletes the student's own answers after every later cell, so a leak costs points:
with the sandbox a probe keeps full marks, without it (``--unsafe-no-sandbox``) it loses them.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import json
import multiprocessing
import resource
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from autograder.cells import answer_cells

ROOT = Path(__file__).resolve().parents[2]
ASSIGNMENT = "01_attention"


@dataclass(frozen=True)
class Beacon:
    """A TCP server on the grader's side of the sandbox that sends ``token`` to each connection.

    The sandbox has a network namespace of its own, so inside it ``host:port`` is another
    machine's loopback, where nothing answers with the token: code that reads the token has
    reached the grader's network.  The test that grades a network probe runs the server.
    """

    host: str
    port: int
    token: str


@dataclass(frozen=True)
class Outside:
    """What graded code must never reach, as absolute paths on the grader's machine.

    Found for one course when its submissions are written (:func:`find_outside`), so that a probe
    (a sample whose ``extra`` is a function of this) looks where the files really are.
    """

    solutions: tuple[Path, ...]  # the instructor's notebook: the checkout's copy, the course's
    hidden_checks: tuple[Path, ...]  # the source files of the checks the judge imports
    gradebook: Path | None  # the course's gradebook file (None: a database server holds it)
    beacon: Beacon | None = None  # a server of the caller's, for probes of the network


# A student cell, or a function of the course's Outside that writes one (a probe).
Extra = str | Callable[[Outside], str]


@dataclass(frozen=True)
class Sample:
    """One sample student's submission and the verdict the grader should give it."""

    student: str
    kind: str  # "correct", "mistake", "broken" or "hostile"
    expected: str  # the row verdict
    full_marks: bool  # every autograded cell passes
    answers: Mapping[str, str] = field(default_factory=dict)  # grade_id -> replaced answer
    # Code of the student's own, at the end of the first answer cell: a cell the student adds
    # never runs when graded (pipeline/worker/judged_notebook.py).
    extra: Extra = ""
    drop: Sequence[str] = ()  # grade_ids of cells the student deleted
    raw: bytes | None = None  # the submitted file's bytes, as is
    about: str = ""  # what the sample shows, in one line (the demo prints it)


# Answers with the mistakes students make most often.
UNSCALED = """def attention(q, k, v, mask=None, scale=True):
    scores = q @ k.transpose(-2, -1)  # forgot to divide by sqrt(d_k)
    if mask is not None:
        scores = scores.masked_fill(~mask.bool(), float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights
"""
UPPER_MASK = """def causal_mask(n):
    return torch.ones(n, n, dtype=torch.bool).triu()  # the future, not the past
"""
CRASH_ON_MASK = """def attention(q, k, v, mask=None, scale=True):
    if mask is not None:
        import os
        os._exit(1)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights
"""
# Hostile cells of the student's own.
FAKE_CHECKS = """import sys, types, numpy, torch
try:  # the hidden checks of a cell, called from an answer cell: refused, and noted
    from autograder import run_hidden_checks
    run_hidden_checks('01_attention', 'test_attention_parity', globals())
except Exception:
    pass
numpy.allclose = torch.allclose = lambda *args, **kwargs: True
sys.modules["autograder"] = types.SimpleNamespace(run_hidden_checks=lambda *args: None)
"""
# A cell that never ends and shrugs off the runner's interrupt.  It sleeps rather than spins:
# the timeout is the same, without a core burnt for the whole cell timeout (a spinning one is
# tests/test_runner.py's).
STUBBORN_LOOP = """import time
while True:
    try:
        time.sleep(0.05)
    except KeyboardInterrupt:
        pass
"""

# Probes of the sandbox, each appended to the first answer cell (cells a student adds never run
# when graded).  Each sets `reached` to what it could get at and ends its cell with an error that
# says how much and which (the graded copy shows such an error, from before any hidden check);
# on a leak it first breaks the functions every answer of 01 uses, so every graded cell fails.
_PROBE_END = """
import hashlib as _hashlib
import json as _json

if reached:
    import numpy as _np
    import torch as _torch

    def _broken(*args, **kwargs):
        raise RuntimeError("the probe reached what it must not")

    _np.exp = _np.swapaxes = _torch.softmax = _torch.ones = _torch.randn = _broken
_digest = _hashlib.sha256(_json.dumps(sorted(reached)).encode()).hexdigest()[:16]
raise RuntimeError(f"probe reached: {len(reached)} {_digest}")
"""


def probe_said(reached: Sequence[str]) -> str:
    """What a probe that reached ``reached`` says at the end of its cell."""
    digest = hashlib.sha256(json.dumps(sorted(reached)).encode()).hexdigest()[:16]
    return f"probe reached: {len(reached)} {digest}"


_READ = """import os

reached = []
for path in TARGETS:
    try:
        with open(path, "rb") as handle:
            if handle.read(1):  # the sandbox shows a hidden file as an empty one
                reached.append(path)
    except OSError:
        pass
for folder, names in FOLDERS.items():
    try:
        shown = sorted(set(os.listdir(folder)) & set(names))
    except OSError:
        shown = []
    reached += [os.path.join(folder, name) for name in shown]
"""
_WRITE = """reached = []
for path in TARGETS:
    try:
        with open(path, "r+b"):  # open for writing, write nothing: the grades stay intact
            reached.append(path)
    except OSError:
        pass
"""
_CONNECT = """import socket

reached = []
try:
    with socket.create_connection((HOST, PORT), timeout=5) as connection:
        greeting = b""
        while len(greeting) < len(TOKEN) and (chunk := connection.recv(len(TOKEN))):
            greeting += chunk
    if greeting == TOKEN:  # the grader's own server, not a port of the sandbox's loopback
        reached.append(f"{HOST}:{PORT}")
except OSError:
    pass
"""


def _probe(outside: Outside, body: str, **constants: object) -> str:
    """A probe's cell: its constants (from the real machine), its search, the sabotage."""
    head = "".join(f"{name} = {value!r}\n" for name, value in constants.items())
    return f"{head}\n{body}{_PROBE_END}"


def _targets(paths: Sequence[Path | None]) -> list[str]:
    return [str(path) for path in paths if path is not None]


def read_probe(
    outside: Outside,
    paths: Sequence[Path | None],
    folders: Mapping[Path, Sequence[str]] | None = None,
) -> str:
    """A cell that reads each of ``paths`` and lists each of ``folders``; it breaks its answers
    if one of the paths has content or one of a folder's given names shows in its listing."""
    shown_names = {str(folder): sorted(names) for folder, names in (folders or {}).items()}
    return _probe(outside, _READ, TARGETS=_targets(paths), FOLDERS=shown_names)


def write_probe(outside: Outside, paths: Sequence[Path | None]) -> str:
    """A cell that opens each of ``paths`` for writing and breaks its answers if one opens."""
    return _probe(outside, _WRITE, TARGETS=_targets(paths))


def connect_probe(outside: Outside) -> str:
    """A cell that connects to the caller's :class:`Beacon` and breaks its answers if it
    reads the token."""
    if outside.beacon is None:
        raise ValueError("a network probe needs a Beacon: build_course(..., beacon=...)")
    beacon = outside.beacon
    return _probe(
        outside, _CONNECT, HOST=beacon.host, PORT=beacon.port, TOKEN=beacon.token.encode()
    )


def snoop(outside: Outside) -> str:
    """eve's cell: read the solutions, the hidden checks and the gradebook where they are."""
    return read_probe(outside, [*outside.solutions, *outside.hidden_checks, outside.gradebook])


DEMO_CLASS: tuple[Sample, ...] = (
    Sample("ada", "correct", "ok", True, about="hands in the reference answers: full marks"),
    Sample(
        "grace",
        "correct",
        "ok",
        True,
        extra='import sys\nprint("a warning", file=sys.stderr)',
        about="correct, and prints a warning to stderr, which costs nothing",
    ),
    Sample(
        "alan",
        "mistake",
        "ok",
        False,
        answers={"attention": UNSCALED},
        about="forgot to scale the scores by sqrt(d_k)",
    ),
    Sample(
        "edsger",
        "mistake",
        "ok",
        False,
        answers={"causal_mask": UPPER_MASK},
        about="a causal mask that lets each position see the future, not the past",
    ),
    Sample(
        "linus",
        "broken",
        "invalid notebook",
        False,
        raw=b'{"cells": [ this is not JSON',
        about="hands in a file that is not JSON: every question 0, and a page saying why",
    ),
    Sample(
        "margaret",
        "broken",
        "restored",
        True,
        drop=("test_causal_mask",),
        about="deleted a graded test cell: restored from the release, then graded",
    ),
    Sample(
        "mallory",
        "hostile",
        "tamper suspected",
        False,
        answers={"attention": UNSCALED},
        extra=FAKE_CHECKS,
        about="alan's mistake; calls the hidden checks from an answer cell, patches allclose: "
        "refused",
    ),
    Sample(
        "trudy",
        "hostile",
        "crashed",
        False,
        answers={"attention": CRASH_ON_MASK},
        about="kills its kernel (os._exit) when given a mask: restarted, the rest is graded",
    ),
    Sample(
        "oscar",
        "hostile",
        "timeout",
        False,
        extra=STUBBORN_LOOP,
        about="an answer cell that never ends and shrugs off interrupts: it times out alone",
    ),
    Sample(
        "eve",
        "hostile",
        "ok",
        True,
        extra=snoop,
        about="reads for the solutions, hidden checks and gradebook: the sandbox hides them",
    ),
)


def honest_class(size: int) -> list[Sample]:
    """``size`` students for measurements, cycling through the demo's correct and mistaken
    samples (named ada-00, grace-01, ...)."""
    pool = [s for s in DEMO_CLASS if s.kind in ("correct", "mistake")]
    return [
        Sample(
            f"{pool[i % len(pool)].student}-{i:02d}", "x", "ok", False, pool[i % len(pool)].answers
        )
        for i in range(size)
    ]


def solution_answers(assignment: str = ASSIGNMENT) -> dict[str, str]:
    """grade_id -> the instructor's answer of every answer cell, markers removed."""
    return answer_cells(nbformat.read(ROOT / "solutions" / assignment / f"{assignment}.ipynb", 4))


def find_outside(
    course_root: Path, assignment: str = ASSIGNMENT, beacon: Beacon | None = None
) -> Outside:
    """Where the secrets of the course at ``course_root`` really are (it must be generated)."""
    from sqlalchemy.engine import make_url

    from autograder.authoring.check_modules import check_modules
    from autograder.isolation.staging import AUTOGRADER
    from autograder.pipeline.course.course import Course

    course = Course.load(course_root)
    notebook = f"{assignment}.ipynb"
    source = course.path(course.coursedir.source_directory, ".", assignment)
    solutions = (ROOT / "solutions" / assignment / notebook, source / notebook)
    checks = AUTOGRADER / "checks" / check_modules()[assignment]
    if checks.with_suffix(".py").is_file():
        hidden_checks = (checks.with_suffix(".py"),)
    else:  # a package: its files with code in them
        hidden_checks = tuple(p for p in sorted(checks.rglob("*.py")) if p.stat().st_size)
    if not hidden_checks:
        raise FileNotFoundError(f"no hidden checks of {assignment} under {checks}")
    url = make_url(course.coursedir.db_url)
    gradebook = Path(url.database) if url.get_backend_name() == "sqlite" else None
    for path in (*solutions, *hidden_checks, gradebook):
        if path is not None and not path.is_file():  # a probe aimed at nothing could never fail
            raise FileNotFoundError(f"{path} is not a file: a probe must aim at a real one")
    return Outside(
        solutions=tuple(p.resolve() for p in solutions),
        hidden_checks=tuple(p.resolve() for p in hidden_checks),
        gradebook=None if gradebook is None else gradebook.resolve(),
        beacon=beacon,
    )


def build_submission(
    sample: Sample,
    release: nbformat.NotebookNode,
    answers: Mapping[str, str],
    outside: Outside | None = None,
) -> bytes:
    """The file ``sample`` hands in, given the released notebook and the correct answers (and,
    for a probe, what it probes)."""
    if sample.raw is not None:
        return sample.raw
    extra = sample.extra
    if callable(extra):
        if outside is None:
            raise ValueError(f"{sample.student}'s cell is a probe: it needs the course's Outside")
        extra = extra(outside)
    notebook = nbformat.from_dict(json.loads(nbformat.writes(release)))
    kept = []
    for cell in notebook.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in sample.drop:
            continue
        if grade_id in answers:
            cell.source = sample.answers.get(grade_id, answers[grade_id])
            if extra:  # the first answer cell only
                cell.source, extra = f"{cell.source}\n\n{extra}", ""
        kept.append(cell)
    notebook.cells = kept
    return nbformat.writes(notebook).encode()


def write_class(
    course_root: Path,
    samples: Sequence[Sample],
    assignment: str = ASSIGNMENT,
    beacon: Beacon | None = None,
) -> None:
    """Put every sample's submission where nbgrader collects them."""
    release = nbformat.read(course_root / "notebooks" / assignment / f"{assignment}.ipynb", 4)
    answers = solution_answers(assignment)
    outside = None
    if any(callable(sample.extra) for sample in samples):
        outside = find_outside(course_root, assignment, beacon)
    for sample in samples:
        folder = course_root / "grading" / "submitted" / sample.student / assignment
        folder.mkdir(parents=True, exist_ok=True)
        submission = build_submission(sample, release, answers, outside)
        (folder / f"{assignment}.ipynb").write_bytes(submission)
        (folder / "timestamp.txt").write_text("2026-11-20 12:00:00.000000 UTC\n")


def build_course(
    root: Path,
    samples: Sequence[Sample],
    assignment: str = ASSIGNMENT,
    beacon: Beacon | None = None,
) -> None:
    """A fresh nbgrader course at ``root``: the assignment generated, the samples submitted
    (``beacon``: the server that network probes among them try to reach)."""
    if (root / "grading").exists():
        raise FileExistsError(f"{root} already holds a course")
    for name, data in _generated(assignment).items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(data)
    write_class(root, samples, assignment, beacon)


# Issue 24's attacks on the work after the sandbox, each a student of its own (named to sort first,
# so that the pool takes them before the honest students of the class).
DISPLAYS, ATTACHMENTS, SURROGATE = "aa-displays", "aa-attachments", "aa-surrogate"


def _attachment_bomb(release: nbformat.NotebookNode) -> bytes:
    """The honest answers, plus a markdown cell that inlines one 100 kB image 3,000 times."""
    honest = Sample("x", "x", "ok", True)
    notebook = nbformat.reads(build_submission(honest, release, solution_answers()).decode(), 4)
    image = base64.b64encode(b"\x89PNG" + bytes(100_000 - 4)).decode()
    cell = nbformat.v4.new_markdown_cell("![](attachment:a.png)\n" * 3_000)
    cell.attachments = {"a.png": {"image/png": image}}
    notebook.cells.insert(1, cell)
    return nbformat.writes(notebook).encode()


def build_attack_course(root: Path, honest: Sequence[str]) -> None:
    """A course of 01_attention at ``root``: the ``honest`` students' correct work beside the
    three attacks after the sandbox (100,000 empty display outputs, one 100 kB attachment
    referenced 3,000 times, a lone surrogate in an error message)."""
    samples = [Sample(student, "correct", "ok", True) for student in honest]
    samples += [
        Sample(
            DISPLAYS,
            "hostile",
            "",
            False,
            extra="from IPython.display import publish_display_data\n"
            "for _ in range(100_000):\n    publish_display_data({})",
        ),
        Sample(SURROGATE, "hostile", "", False, extra="raise ValueError('bad \\udcff byte')"),
    ]
    build_course(root, samples)
    release = nbformat.read(root / "notebooks" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", 4)
    write_class(root, [Sample(ATTACHMENTS, "hostile", "", False, raw=_attachment_bomb(release))])


HONEST_PAIR = ("ada", "alan")


@dataclass(frozen=True)
class GradedBatch:
    """What grading a class of 01_attention (two workers, feedback included) gave and cost."""

    verdicts: dict[str, str]
    seconds: dict[str, float]  # each student's own grading, from start to verdict
    wall_seconds: float  # the whole batch and its feedback
    largest_mib: float  # the largest process of it: the grading process or any it started


def grade_with_feedback(root: Path) -> GradedBatch:
    """Grade the class at ``root`` with two workers and make its feedback, in this process."""
    from autograder.authoring.hidden_seeds import DEVELOPMENT_SECRET
    from autograder.pipeline.course.course import Course
    from autograder.pipeline.engines import batch
    from autograder.pipeline.engines.jobs_and_outcomes import Settings
    from autograder.pipeline.feedback.feedback import generate_feedback

    started = time.perf_counter()
    course = Course.load(root)
    outcomes = batch.grade(
        ASSIGNMENT,
        course,
        workers=2,
        settings=Settings(cell_timeout=60.0),
        secret=DEVELOPMENT_SECRET,
    )
    generate_feedback(course, ASSIGNMENT)
    wall = time.perf_counter() - started
    largest_kib = max(
        resource.getrusage(who).ru_maxrss
        for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
    )
    return GradedBatch(
        verdicts={o.student: o.verdict for o in outcomes},
        seconds={o.student: o.seconds for o in outcomes},
        wall_seconds=wall,
        largest_mib=largest_kib / 1024,
    )


def honest_pair_beside_attacks(scratch: Path) -> tuple[GradedBatch, GradedBatch]:
    """(beside, alone): the honest pair graded in one batch with the attacks after the sandbox,
    then in a batch of their own, each batch in a fresh process under ``scratch``.

    The pair alone goes second, with the caches the first batch warmed: that can only make
    them faster alone, so a ratio of beside to alone is not flattered by the order."""
    beside_root, alone_root = scratch / "beside_attacks", scratch / "alone"
    build_attack_course(beside_root, HONEST_PAIR)
    build_course(alone_root, [Sample(s, "correct", "ok", True) for s in HONEST_PAIR])
    runs = []
    for root in (beside_root, alone_root):  # one at a time: the pair alone must be alone
        spawn = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(1, mp_context=spawn) as fresh:
            runs.append(fresh.submit(grade_with_feedback, root).result())
    return runs[0], runs[1]


def slowdown(beside: GradedBatch, alone: GradedBatch) -> float:
    """The honest pair's mean grading time beside the attacks over their mean time alone."""
    return sum(beside.seconds[s] for s in HONEST_PAIR) / sum(alone.seconds[s] for s in HONEST_PAIR)


@functools.cache
def _generated(assignment: str) -> dict[str, bytes]:
    """Every file of a course with ``assignment`` generated and nothing submitted, by path, made
    once per process: ``nbgrader generate_assignment`` costs seconds of CPU, writing its result
    again almost none (held in memory, so no process leaves a folder behind)."""
    from autograder.pipeline.course.course import NBGRADER, tool_env

    with tempfile.TemporaryDirectory(prefix="attention-lab-course-") as folder:
        root = Path(folder)
        (root / "grading").mkdir()
        # The course's own configuration: it places everything relative to its own folder.
        shutil.copy(ROOT / "nbgrader_config.py", root / "nbgrader_config.py")
        shutil.copytree(ROOT / "solutions" / assignment, root / "solutions" / assignment)
        subprocess.run(
            [
                *NBGRADER,
                "generate_assignment",
                assignment,
                "--force",
                "--log-level",
                "ERROR",
            ],
            cwd=root,
            env=tool_env(),
            check=True,
            stdout=subprocess.DEVNULL,
        )
        return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def course_files(assignment: str = ASSIGNMENT) -> dict[str, bytes]:
    """Every file of a course with ``assignment`` generated from this checkout's ``solutions/``
    and nothing submitted, by path (its gradebook ``grading/gradebook.db`` included)."""
    return dict(_generated(assignment))


def build_demo_course(root: Path):  # noqa: ANN201 - returns (Course, assignment)
    """The demo's course, ready to grade."""
    from autograder.pipeline.course.course import Course

    build_course(root, DEMO_CLASS)
    return Course.load(root), ASSIGNMENT
