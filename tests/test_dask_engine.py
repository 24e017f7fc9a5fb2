"""Grading on a Dask cluster gives the process pool's grades, survives a killed worker, refuses a
scheduler it cannot reach or should not trust (writing nothing) and a worker that cannot build a
sandbox; two graders at once lose no row.

Every cluster here is a LocalCluster on 127.0.0.1 with single-threaded worker processes.
"""

from __future__ import annotations

import asyncio
import csv
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path

import pytest
from distributed import Client, LocalCluster

from autograder.authoring.hidden_seeds import DEVELOPMENT_SECRET
from autograder.examples import DEMO_CLASS, build_course
from autograder.isolation import sandbox
from autograder.pipeline.cli import main
from autograder.pipeline.course.course import Course, GradingError, instructor_side, tool_env
from autograder.pipeline.engines.batch import grade
from autograder.pipeline.engines.dask_engine import GradingSetup
from autograder.pipeline.engines.jobs_and_outcomes import DaskCluster, Settings
from tests.processes import descends_from_this_process, parent_of

pytestmark = pytest.mark.slow

ASSIGNMENT = "01_attention"
# The demo class's first student of each verdict, with full marks and without: every kind of row
# the engines must agree on, at 7 gradings per engine rather than the class's 10.
EACH_KIND = tuple({(s.expected, s.full_marks): s for s in reversed(DEMO_CLASS)}.values())
QUICK = ["--cell-timeout", "20", "--time-limit", "300", "--no-feedback"]  # as the demo grades
# The grading command, which then fails if the local pool imported Dask in the grader's process.
POOL_WITHOUT_DASK = """
import sys
from autograder.pipeline.cli import main
status = main(sys.argv[1:])
imported = sorted(m for m in sys.modules if m.split(".")[0] in ("dask", "distributed"))
if imported:
    print(f"the local pool imported {imported[:3]}", file=sys.stderr)
sys.exit(3 if imported else status)
"""


@pytest.fixture(scope="module")
def demo_course(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo class's students of each kind, generated once; each test grades a copy."""
    root = tmp_path_factory.mktemp("demo") / "course"
    build_course(root, EACH_KIND)
    return root


def _copy(course: Path, to: Path) -> Path:
    return Path(shutil.copytree(course, to, symlinks=True))


def _command(*argv: str, cwd: Path, script: str | None = None) -> subprocess.Popen[str]:
    start = [sys.executable, "-c", script] if script else [sys.executable, "-m", "autograder"]
    return subprocess.Popen(
        [*start, *argv],
        cwd=cwd,
        env=tool_env(OMP_NUM_THREADS="1"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _finished(process: subprocess.Popen[str], seconds: float = 600) -> tuple[int, str]:
    out, err = process.communicate(timeout=seconds)
    return process.returncode, out + err


def _grades(course: Path) -> dict[str, dict[str, str]]:
    """student -> the CSV row, without the notes (their wording may name a worker)."""
    with (course / "grading" / f"{ASSIGNMENT}_grades.csv").open(newline="") as handle:
        return {
            row["student"]: {k: v for k, v in row.items() if k != "notes"}
            for row in csv.DictReader(handle)
        }


def _files(root: Path) -> dict[str, tuple[int, int]]:
    """Every file under ``root``: its size and modification time."""
    return {
        str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns)
        for p in root.rglob("*")
        if p.is_file()
    }


@pytest.mark.sandbox
@pytest.mark.usefixtures("sandbox_required")
def test_dask_grades_each_kind_of_submission_as_two_concurrent_pool_graders_do(
    demo_course: Path, tmp_path: Path
):
    pooled, distributed = (
        _copy(demo_course, tmp_path / "pool"),
        _copy(demo_course, tmp_path / "dask"),
    )
    students = sorted(s.student for s in EACH_KIND)
    halves = [students[0::2], students[1::2]]
    # Two graders of the local pool on one course at once, one per half of the class: both
    # finish within seconds of each other, and each merges its rows into the one CSV.
    graders = []
    for half in halves:
        chosen = [arg for student in half for arg in ("--student", student)]
        argv = ["grade", ASSIGNMENT, *QUICK, "--workers", "1", *chosen]
        graders.append(_command(*argv, cwd=pooled, script=POOL_WITHOUT_DASK))
    for grader in graders:
        status, output = _finished(grader)
        assert status == 0, output
    pool_grades = _grades(pooled)
    assert sorted(pool_grades) == students, "a grader's rows were lost"

    status, output = _finished(
        _command("grade", ASSIGNMENT, *QUICK, "--cluster", "local:2", cwd=distributed)
    )
    assert status == 0, output
    assert "starting a Dask LocalCluster of 2 workers on 127.0.0.1" in output, output
    dask_grades = _grades(distributed)
    for sample in EACH_KIND:
        assert dask_grades[sample.student]["verdict"] == sample.expected, output
    assert dask_grades == pool_grades  # verdict, total and every question's score
    graded = distributed / "grading" / "autograded"
    assert sorted(p.name for p in graded.iterdir()) == students  # recorded in the gradebook


def _a_sandbox(seen: set[Path]) -> tuple[int, str] | None:
    """(worker PID, its submission's text) of a sandbox a worker of this test started since the
    last call, if any."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = [a.decode() for a in (entry / "cmdline").read_bytes().split(b"\0")]
            if "--die-with-parent" not in argv or str(sandbox.SANDBOX_WORKDIR) not in argv:
                continue
            workdir = Path(argv[argv.index(str(sandbox.SANDBOX_WORKDIR)) - 1])
            worker = parent_of(int(entry.name))
            if workdir in seen or not descends_from_this_process(worker):
                continue
            submission = (workdir / "submission.ipynb").read_text()
        except (OSError, ValueError, LookupError, UnicodeDecodeError):
            continue
        seen.add(workdir)
        return worker, submission
    return None


def _kill_workers(done: threading.Event, kills: dict[str, int], limits: dict[str, int]) -> None:
    """Kill the worker grading ada once and the one grading alan every time (twice)."""
    seen: set[Path] = set()
    while not done.is_set():
        found = _a_sandbox(seen)
        if found is not None:
            worker, submission = found
            student = "alan" if "forgot to divide by sqrt(d_k)" in submission else "ada"
            if kills[student] < limits[student]:
                os.kill(worker, signal.SIGKILL)
                kills[student] += 1
        time.sleep(0.05)


@pytest.mark.sandbox
@pytest.mark.usefixtures("sandbox_required")
def test_a_killed_dask_worker_is_replaced_and_its_submission_retried_once(
    demo_course: Path, tmp_path: Path
):
    course = Course.load(_copy(demo_course, tmp_path / "course"))  # ada correct, alan unscaled
    done, kills, limits = threading.Event(), {"ada": 0, "alan": 0}, {"ada": 1, "alan": 2}
    killer = threading.Thread(target=_kill_workers, args=(done, kills, limits), daemon=True)
    killer.start()
    try:
        outcomes = grade(
            ASSIGNMENT,
            course,
            students=["ada", "alan"],
            settings=Settings(cell_timeout=60),
            cluster=DaskCluster(local_workers=2),
        )
    finally:
        done.set()
        killer.join()
    assert kills == limits, f"the workers killed were not those planned: {kills}"
    ada, alan = sorted(outcomes, key=lambda o: o.student)
    # ada's worker died once: graded again on another worker, her grade is whole.
    assert ada.verdict == "ok" and all(c.passed for c in ada.cells), (ada.verdict, ada.notes)
    # alan's died twice: a grader error row says so, and the batch went on.
    assert alan.verdict == "grader error", (alan.verdict, alan.notes)
    assert "killed its Dask worker twice" in alan.notes[0], alan.notes


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.mark.parametrize(
    ("where", "says"),
    [
        (["--scheduler", "tcp://192.0.2.7:8786"], "refusing the Dask scheduler tcp://192.0.2.7"),
        (["--scheduler-file", "{scheduler_file}"], "refusing the Dask scheduler tcp://192.0.2.7"),
        (["--scheduler", "tcp://127.0.0.1:{port}", "--connect-timeout", "2"], "cannot reach"),
    ],
    ids=["off-loopback", "off-loopback-in-file", "unreachable"],
)
def test_a_refused_or_unreachable_scheduler_stops_before_anything_is_written(
    demo_course: Path, tmp_path: Path, where: list[str], says: str, capsys: pytest.CaptureFixture
):
    scheduler_file = tmp_path / "scheduler.json"
    scheduler_file.write_text(json.dumps({"address": "tcp://192.0.2.7:8786"}))
    course = _copy(demo_course, tmp_path / "course")
    before = _files(course)
    argv = [a.format(scheduler_file=scheduler_file, port=_free_port()) for a in where]
    status = main(["grade", ASSIGNMENT, "--course", str(course), *argv])
    output = capsys.readouterr().err
    assert status == 2, output
    last = output.strip().splitlines()[-1]
    assert last.startswith("error: ") and says in last, output
    assert "Traceback" not in output, output
    assert _files(course) == before  # no grade, no CSV, no autograded notebook


def _without_sandbox() -> None:
    """On a worker: as if bubblewrap could not build a sandbox there."""
    from autograder.isolation import sandbox as worker_sandbox

    worker_sandbox.sandbox_available = lambda: (False, "no user namespaces on this node (test)")


def test_a_worker_that_cannot_build_a_sandbox_says_so_before_any_grading():
    with (
        LocalCluster(
            n_workers=1, threads_per_worker=1, host="127.0.0.1", dashboard_address=None
        ) as cluster,
        Client(cluster) as client,
    ):
        client.run(_without_sandbox)
        with pytest.raises(
            GradingError,
            match=r"Dask worker tcp://127\.0\.0\.1:\d+ on .* cannot "
            r"grade: no user namespaces on this node \(test\)",
        ):
            client.register_plugin(GradingSetup(ASSIGNMENT, {}, {}, True, DEVELOPMENT_SECRET))


def _threads_where_jobs_fork_judges(setup: str) -> tuple[int, int]:
    """On a worker: (the OS threads of the process a job's judge is forked from, the worker's)."""
    from autograder.pipeline.engines import dask_engine

    grader = dask_engine._PREPARED[setup].graders.submit(os.listdir, "/proc/self/task")
    return len(grader.result(timeout=120)), len(os.listdir("/proc/self/task"))


def test_a_dask_job_forks_its_judge_from_a_process_with_one_thread(demo_course: Path):
    """A Dask worker runs its event loop and each job in threads; a judge forked beside them could
    inherit a lock another thread held (Python 3.12 and later warn of it)."""
    release, sources = instructor_side(Course.load(demo_course), ASSIGNMENT)
    setup = GradingSetup(ASSIGNMENT, release, sources, False, DEVELOPMENT_SECRET)
    with (
        LocalCluster(
            n_workers=1, threads_per_worker=1, host="127.0.0.1", dashboard_address=None
        ) as cluster,
        Client(cluster) as client,
    ):
        client.register_plugin(setup, name=setup.name)
        forking, worker = client.submit(_threads_where_jobs_fork_judges, setup.name).result()
    assert worker > 1, f"the Dask worker was expected to run threads: {worker}"
    assert forking == 1, f"threads where a job forks its judge: {forking}"


class _SpawningSetup(GradingSetup):
    """A set-up whose thread spawns a process, as the real one spawns its grading processes, and
    keeps what SIGINT's handler was in that process at birth."""

    born_with: list[object] = []

    def _prepare(self, worker: object) -> None:
        with ProcessPoolExecutor(1, mp_context=get_context("spawn")) as spawned:
            self.born_with.append(spawned.submit(signal.getsignal, signal.SIGINT).result(60))


def test_what_a_dask_set_up_spawns_ignores_ctrl_c_from_birth():
    """A Dask worker runs a set-up in a thread (its event loop must keep answering meanwhile), and
    the grading processes that thread spawns are fresh interpreters: each must be born ignoring
    Ctrl-C, or one that the signal reaches in its start-up dies of a KeyboardInterrupt there (two
    clean CI runs printed one: test_a_stopped_batch_leaves_no_process_behind[dask-ctrl-c])."""
    before = signal.getsignal(signal.SIGINT)
    asyncio.run(_SpawningSetup(ASSIGNMENT, {}, {}, False, DEVELOPMENT_SECRET).setup(None))
    assert _SpawningSetup.born_with == [signal.SIG_IGN]
    assert signal.getsignal(signal.SIGINT) is before  # the worker's own handler, back
