"""Grade a whole class: intake, sandboxed execution, trusted judging, one nbgrader gradebook.

Each submission goes through four steps.  Intake (autograder/intake.py) restores the cells that
nbgrader owns.  The notebook then runs inside the sandbox (autograder/sandbox.py) under the
crash-tolerant runner (autograder/runner.py); its hidden-check cells stop at a checkpoint and a
judge in this process runs the checks against the kernel's objects (autograder/judge.py).  Last,
the trusted verdicts are written into the notebook's test cells, so nbgrader's own SaveAutoGrades
records them in the gradebook, and feedback and export work as usual.  Workers grade submissions
in parallel; only the main process writes the gradebook.
"""

from __future__ import annotations

import csv
import json
import multiprocessing
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# As in autograder/runner.py: jsonschema's IRI grammar costs ~0.8 s per process and no notebook
# schema uses it.  This holds for the whole process that imports this module: no IRI formats.
sys.modules.setdefault("rfc3987_syntax", None)  # type: ignore[arg-type]

import nbformat  # noqa: E402

from autograder import intake, sandbox  # noqa: E402
from autograder.registry import CHECK_MODULES, prepare  # noqa: E402
from autograder.submission import is_test_cell  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK_IN_SANDBOX = sandbox.SANDBOX_WORKDIR / "submission.ipynb"
RESULT_NAME = "result.json"
_MAX_RESULT_BYTES = 64 * 2**20

# Row verdicts, most serious first: a row shows the first that applies.
VERDICTS = (
    "invalid notebook",
    "tamper suspected",
    "memory limit",
    "timeout",
    "crashed",
    "output limit",
    "file limit",
    "cpu limit",
    "restored",
    "ok",
)


@dataclass(frozen=True)
class Settings:
    """How every submission of one batch is run."""

    cell_timeout: float = 120.0
    max_restarts: int = 3
    limits: sandbox.Limits = field(default_factory=lambda: sandbox.Limits(wall_seconds=900.0))
    use_sandbox: bool = True


@dataclass
class CellResult:
    """One graded test cell: the trusted verdict and what the kernel itself reported."""

    grade_id: str
    passed: bool
    message: str
    in_kernel_passed: bool


@dataclass
class Outcome:
    """What grading one submission produced."""

    student: str
    verdict: str
    notes: list[str]
    notebook: dict | None  # the autograded notebook, as JSON
    cells: list[CellResult]
    seconds: float


@dataclass(frozen=True)
class Job:
    """Everything a worker needs to grade one submission (picklable)."""

    student: str
    assignment: str
    submitted: str
    release: dict
    instructor_sources: dict[str, str]
    staging: str
    hide: tuple[str, ...]
    settings: Settings


# ---------------------------------------------------------------------------------------------
# One submission (runs in a worker process)


def grade_one(job: Job) -> Outcome:
    """Grade one submission; never raises for anything the submission does."""
    started = time.monotonic()
    release = nbformat.from_dict(job.release)
    taken = intake.take_in(Path(job.submitted), release, job.instructor_sources)
    if taken.notebook is None:
        notebook = intake.take_in(
            nbformat.writes(release).encode(), release, job.instructor_sources
        ).notebook
        reason = "; ".join(taken.problems) or "the notebook could not be read"
        cells = _fail_every_test(notebook, f"your notebook could not be graded: {reason}")
        return Outcome(
            job.student, "invalid notebook", taken.problems, notebook, cells, _since(started)
        )
    with tempfile.TemporaryDirectory(prefix="grade-") as scratch:
        scratch_path = Path(scratch)
        workdir, judge_dir = scratch_path / "work", scratch_path / "judge"
        workdir.mkdir()
        judge_dir.mkdir()
        scratch_path.chmod(0o711)
        judge_dir.chmod(0o755)
        nbformat.write(taken.notebook, workdir / NOTEBOOK_IN_SANDBOX.name)
        run, verdicts = _execute(job, workdir, judge_dir, _answer_sources(taken.notebook))
        result = _read_result(workdir / RESULT_NAME)
    notes = list(taken.problems)
    cells = _apply(taken.notebook, result, verdicts, notes)
    verdict = _row_verdict(taken.verdict, run, result, cells, notes)
    return Outcome(job.student, verdict, notes, taken.notebook, cells, _since(started))


def _since(started: float) -> float:
    return round(time.monotonic() - started, 2)


def _answer_sources(notebook: nbformat.NotebookNode) -> list[str]:
    """The code the student controls, in order: what reference bans are judged on."""
    return [c.source for c in notebook.cells if c.cell_type == "code" and not is_test_cell(c)]


def _execute(
    job: Job, workdir: Path, judge_dir: Path, sources: list[str]
) -> tuple[sandbox.SandboxResult | None, dict]:
    """Run the notebook (in the sandbox unless told otherwise) while the judge serves it."""
    from autograder.judge import Judge
    from autograder.remote import JUDGE_SOCKET_ENV

    settings = job.settings
    socket_path = judge_dir / "judge.sock"
    inside = NOTEBOOK_IN_SANDBOX if settings.use_sandbox else workdir / NOTEBOOK_IN_SANDBOX.name
    argv = [
        sys.executable, "-m", "autograder.runner", str(inside), str(inside.parent / RESULT_NAME),
        "--cell-timeout", str(settings.cell_timeout),
        "--max-restarts", str(settings.max_restarts),
    ]  # fmt: skip
    env = sandbox.default_env()
    env.update(
        PYTHONPATH=job.staging,
        MPLBACKEND="Agg",
        MPLCONFIGDIR="/tmp/.matplotlib",
        IPYTHONDIR="/tmp/.ipython",
        JUPYTER_CONFIG_DIR="/tmp/.jupyter",
        JUPYTER_DATA_DIR="/tmp/.jupyter-data",
        JUPYTER_RUNTIME_DIR="/tmp/.jupyter-runtime",
        OMP_NUM_THREADS="1",
        PYDEVD_DISABLE_FILE_VALIDATION="1",
    )
    env[JUDGE_SOCKET_ENV] = str(socket_path)
    with Judge(job.assignment, socket_path, sources, timeout=settings.cell_timeout + 30) as judge:
        if settings.use_sandbox:
            binds = [Path(job.staging), judge_dir, *_interpreter_paths()]
            run = sandbox.run_sandboxed(
                argv,
                workdir=workdir,
                limits=settings.limits,
                env=env,
                readonly_binds=binds,
                hide=[Path(p) for p in job.hide],
            )
        else:
            env["HOME"] = env["TMPDIR"] = str(workdir)
            for key in ("MPLCONFIGDIR", "IPYTHONDIR", "JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR"):
                env[key] = str(workdir / Path(env[key]).name)
            env["JUPYTER_RUNTIME_DIR"] = str(workdir / ".jupyter-runtime")
            subprocess.run(
                argv, cwd=workdir, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                timeout=settings.limits.wall_seconds, check=False,
            )  # fmt: skip
            run = None
    return run, dict(judge.verdicts)


def _interpreter_paths() -> list[Path]:
    """The Python installation and virtual environment, which may lie under hidden folders."""
    paths = {Path(sys.prefix), Path(sys.base_prefix)}
    return sorted(p for p in paths if p.exists() and str(p) not in ("/", "/usr"))


def _read_result(path: Path) -> dict:
    """The runner's report, read defensively: the sandbox could have written anything there."""
    try:
        if path.stat().st_size > _MAX_RESULT_BYTES:
            return {"cells": [], "error": "the runner's report is too large"}
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return {"cells": [], "error": "the runner left no readable report"}
    if not isinstance(data, dict) or not isinstance(data.get("cells"), list):
        return {"cells": [], "error": "the runner's report is malformed"}
    return data


_OUTPUT_TYPES = {"stream", "display_data", "execute_result", "error"}


def _outputs(raw: Any) -> list[nbformat.NotebookNode]:
    """Valid nbformat outputs only; anything else the sandbox reported is dropped."""
    kept = []
    for output in raw if isinstance(raw, list) else []:
        if not isinstance(output, dict) or output.get("output_type") not in _OUTPUT_TYPES:
            continue
        node = nbformat.from_dict(output)
        try:
            nbformat.validate(nbformat.v4.new_notebook(cells=[
                nbformat.v4.new_code_cell(outputs=[node])
            ]))  # fmt: skip
        except Exception:  # noqa: BLE001 - an invalid output is simply not shown
            continue
        kept.append(node)
    return kept


_STATUS_MESSAGES = {
    "timeout": "this cell ran past the time limit per cell, so it was stopped",
    "crashed": "the kernel died while this cell ran (os._exit, a crash or the memory limit)",
    "skipped": "this cell never ran: too many crashes or timeouts earlier",
    None: "this cell never ran: the notebook was stopped before it (a limit of the sandbox)",
}


def _apply(
    notebook: nbformat.NotebookNode, result: dict, verdicts: dict, notes: list[str]
) -> list[CellResult]:
    """Put outputs and trusted verdicts into ``notebook``; return the test cells' results."""
    by_index = {c.get("index"): c for c in result.get("cells", []) if isinstance(c, dict)}
    cells = []
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type != "code":
            continue
        record = by_index.get(index, {})
        status = record.get("status")
        cell.outputs = _outputs(record.get("outputs"))
        count = record.get("execution_count")
        cell.execution_count = count if isinstance(count, int) and count > 0 else None
        if status in ("timeout", "crashed"):
            notes.append(f"cell {index}: {_STATUS_MESSAGES[status]}")
        if not is_test_cell(cell):
            continue
        grade_id = cell.metadata["nbgrader"]["grade_id"]
        in_kernel = status == "ok"
        verdict = verdicts.get(grade_id)
        if verdict is not None:
            passed, message = verdict.passed, verdict.diagnosis
        elif status == "error":
            passed = False
            message = f"{record.get('ename', 'Error')}: {record.get('evalue', '')}"
        elif status == "ok":
            passed, message = False, "the hidden checks of this cell never reached the grader"
        else:
            passed, message = False, _STATUS_MESSAGES.get(status, _STATUS_MESSAGES[None])
        _rewrite_outputs(cell, passed, message)
        cells.append(CellResult(grade_id, passed, message, in_kernel))
    return cells


def _rewrite_outputs(cell: nbformat.NotebookNode, passed: bool, message: str) -> None:
    """Make the test cell's outputs say what the trusted verdict says (nbgrader scores outputs)."""
    kept = []
    for output in cell.outputs:
        if output.output_type == "error":
            continue
        if output.output_type == "stream" and output.name == "stderr":
            output.name = "stdout"  # nbgrader zeroes a cell with stderr; warnings must not cost
        kept.append(output)
    if not passed:
        kept.append(
            nbformat.v4.new_output(
                "error", ename="CheckFailed", evalue=message, traceback=[f"CheckFailed: {message}"]
            )
        )
    cell.outputs = kept


def _fail_every_test(notebook: nbformat.NotebookNode, message: str) -> list[CellResult]:
    cells = []
    for cell in notebook.cells:
        if is_test_cell(cell):
            _rewrite_outputs(cell, False, message)
            cells.append(CellResult(cell.metadata["nbgrader"]["grade_id"], False, message, False))
    return cells


def _word(passed: bool) -> str:
    return "pass" if passed else "fail"


def _row_verdict(
    intake_verdict: str,
    run: sandbox.SandboxResult | None,
    result: dict,
    cells: list[CellResult],
    notes: list[str],
) -> str:
    """The most serious thing that happened to the submission."""
    found = {intake_verdict}
    for cell in cells:
        if cell.passed != cell.in_kernel_passed and not cell.message.startswith("this cell"):
            found.add("tamper suspected")
            notes.append(
                f"{cell.grade_id}: the kernel reported {_word(cell.in_kernel_passed)} but the "
                f"trusted judge says {_word(cell.passed)}"
            )
    statuses = [c.get("status") for c in result.get("cells", []) if isinstance(c, dict)]
    for record in result.get("cells", []):
        if isinstance(record, dict) and record.get("ename") == "MemoryError":
            found.add("memory limit")
        if isinstance(record, dict) and "[output truncated" in json.dumps(record.get("outputs")):
            found.add("output limit")
    found.update(s for s in ("timeout", "crashed") if s in statuses)
    if run is not None and run.verdict != "ok":
        found.add(run.verdict)
        notes.append(f"the sandbox stopped the notebook: {run.verdict}")
    if result.get("error"):
        notes.append(str(result["error"])[:300])
    return next(v for v in VERDICTS if v in found) if found & set(VERDICTS) else "crashed"


# ---------------------------------------------------------------------------------------------
# The batch (main process)


@dataclass
class Course:
    """Where an nbgrader course keeps its files, read from its nbgrader_config.py."""

    root: Path
    coursedir: Any

    @classmethod
    def load(cls, root: Path, db_url: str | None = None) -> Course:
        from nbgrader.coursedir import CourseDirectory
        from traitlets.config.loader import PyFileConfigLoader

        root = root.resolve()
        if not (root / "nbgrader_config.py").exists():
            raise GradingError(f"{root} has no nbgrader_config.py: run from the course folder")
        config = PyFileConfigLoader("nbgrader_config.py", path=str(root)).load_config()
        if db_url:
            config.CourseDirectory.db_url = db_url
        return cls(root, CourseDirectory(config=config))

    @property
    def db_shown(self) -> str:
        """The gradebook URL with any password masked, for messages."""
        from sqlalchemy.engine import make_url
        from sqlalchemy.exc import ArgumentError

        try:
            url = make_url(self.coursedir.db_url)
        except (ArgumentError, ValueError):
            return "(an unreadable gradebook URL)"
        if "password" in url.query:  # libpq also takes it as ?password=...
            url = url.update_query_dict({"password": "***"})
        return url.render_as_string(hide_password=True)

    def path(self, directory: str, student: str, assignment: str) -> Path:
        return Path(self.coursedir.format_path(directory, student, assignment))


class GradingError(RuntimeError):
    """The batch itself cannot go on (not a problem of one submission)."""


def _instructor_side(course: Course, assignment: str) -> tuple[dict, dict[str, str]]:
    """The released notebook and the gradebook's sources of every test and locked cell."""
    from nbgrader.api import Gradebook, MissingEntry
    from sqlalchemy.exc import SQLAlchemyError

    release_path = course.path(course.coursedir.release_directory, ".", assignment)
    notebook_file = release_path / f"{assignment}.ipynb"
    if not notebook_file.exists():
        raise GradingError(
            f"no released notebook {notebook_file}: run nbgrader generate_assignment {assignment}"
        )
    release = nbformat.read(notebook_file, as_version=4)
    url = course.db_shown
    try:
        with Gradebook(course.coursedir.db_url, course.coursedir.course_id) as gb:
            notebook = gb.find_notebook(assignment, assignment)
            sources = {cell.name: cell.source for cell in notebook.source_cells}
    except MissingEntry:
        raise GradingError(
            f"{assignment} is not in the gradebook {url}: run nbgrader generate_assignment "
            f"{assignment} (with --db, if the gradebook is not the course's own)"
        ) from None
    except (ImportError, SQLAlchemyError, ValueError) as error:
        raise GradingError(f"cannot open the gradebook {url}: {_without(error, course)}") from None
    return dict(release), sources


def _without(error: Exception, course: Course) -> str:
    """The error's message, with the gradebook URL (which may hold a password) masked."""
    return str(error).replace(course.coursedir.db_url, course.db_shown)


def _staging(folder: Path) -> Path:
    """What the sandbox may import: attention_lab, and of autograder only the runner and remote."""
    package = folder / "autograder"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(
        '"""Inside the sandbox: hidden checks only reach the judge."""\n\n\n'
        "def run_hidden_checks(assignment, grade_id, namespace):\n"
        "    # Imported here, not above: the runner shares this package and needs no torch.\n"
        "    from autograder.remote import checkpoint\n\n"
        "    checkpoint(assignment, grade_id, namespace)\n"
    )
    for name in ("remote.py", "runner.py"):
        shutil.copy(ROOT / "autograder" / name, package / name)
    shutil.copytree(
        ROOT / "attention_lab", folder / "attention_lab",
        ignore=shutil.ignore_patterns("__pycache__"),
    )  # fmt: skip
    for path in [folder, *folder.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    return folder


def grade(
    assignment: str,
    course: Course,
    *,
    students: Sequence[str] = (),
    workers: int = 0,
    settings: Settings = Settings(),
    progress: Callable[[Outcome], None] | None = None,
) -> list[Outcome]:
    """Grade every submission of ``assignment`` (or only ``students``) and record the grades."""
    if settings.use_sandbox:
        available, why = sandbox.sandbox_available()
        if not available:
            raise GradingError(why)
    release, sources = _instructor_side(course, assignment)
    submitted = _submissions(course, assignment, students)
    hide = tuple(sorted({str(ROOT), str(course.root)}))
    outcomes: list[Outcome] = []
    with tempfile.TemporaryDirectory(prefix="attention-lab-staging-") as folder:
        Path(folder).chmod(0o755)
        staging = _staging(Path(folder) / "site")
        jobs = [
            Job(
                student,
                assignment,
                str(path),
                release,
                sources,
                str(staging),
                hide,
                settings,
            )  # fmt: skip
            for student, path in submitted
        ]
        count = max(1, min(workers or os.cpu_count() or 1, len(jobs) or 1))
        # Workers fork from a server that imported torch, the judge and the checks once.
        context = multiprocessing.get_context("forkserver")
        preload = ["autograder.grade", "autograder.judge"]
        if assignment in CHECK_MODULES:
            preload.append(f"autograder.checks.{CHECK_MODULES[assignment]}")
        context.set_forkserver_preload(preload)
        with ProcessPoolExecutor(
            count, mp_context=context, initializer=_warm_up, initargs=(assignment,)
        ) as pool:
            futures = {pool.submit(grade_one, job): job for job in jobs}
            for future in as_completed(futures):
                job = futures[future]
                try:
                    outcome = future.result()
                except Exception as error:  # noqa: BLE001 - reported, and the batch fails
                    outcome = Outcome(job.student, "grader error", [repr(error)], None, [], 0.0)
                if outcome.notebook is not None:
                    _record(course, assignment, outcome)
                outcomes.append(outcome)
                if progress is not None:
                    progress(outcome)
    outcomes.sort(key=lambda o: o.student)
    return outcomes


def _warm_up(assignment: str) -> None:
    """Before a worker's first submission: one thread for torch, BLAS and OpenMP (the workers
    share the cores), and the hidden reference data built once, not once per submission."""
    import torch
    from threadpoolctl import threadpool_limits

    torch.set_num_threads(1)
    threadpool_limits(1)
    prepare(assignment)


def _submissions(
    course: Course, assignment: str, students: Sequence[str]
) -> list[tuple[str, Path]]:
    submitted_root = course.path(course.coursedir.submitted_directory, ".", ".")
    found = []
    for folder in sorted(submitted_root.glob("*")):
        if not (folder / assignment).is_dir() or (students and folder.name not in students):
            continue
        found.append((folder.name, folder / assignment / f"{assignment}.ipynb"))
    missing = set(students) - {s for s, _ in found}
    if missing:
        raise GradingError(f"no submission of {assignment} for: {', '.join(sorted(missing))}")
    return found


def _record(course: Course, assignment: str, outcome: Outcome) -> None:
    """Write the autograded notebook and its grades, as nbgrader autograde would."""
    from nbgrader.api import Gradebook
    from nbgrader.preprocessors import SaveAutoGrades

    student = outcome.student
    source = course.path(course.coursedir.submitted_directory, student, assignment)
    destination = course.path(course.coursedir.autograded_directory, student, assignment)
    destination.mkdir(parents=True, exist_ok=True)
    notebook = nbformat.from_dict(outcome.notebook)
    timestamp = course.coursedir.get_existing_timestamp(str(source))
    with Gradebook(course.coursedir.db_url, course.coursedir.course_id) as gb:
        gb.update_or_create_student(student)
        if timestamp:
            gb.update_or_create_submission(assignment, student, timestamp=timestamp)
        else:
            gb.update_or_create_submission(assignment, student)
    resources = {
        "nbgrader": {
            "notebook": assignment,
            "assignment": assignment,
            "student": student,
            "db_url": course.coursedir.db_url,
        }
    }
    SaveAutoGrades().preprocess(notebook, resources)
    with Gradebook(course.coursedir.db_url, course.coursedir.course_id) as gb:
        submitted = gb.find_submission_notebook(assignment, assignment, student)
        submitted.flagged = outcome.verdict == "tamper suspected"
        gb.db.commit()
    nbformat.write(notebook, destination / f"{assignment}.ipynb")
    if (source / "timestamp.txt").exists():
        shutil.copy(source / "timestamp.txt", destination / "timestamp.txt")


def write_csv(
    outcomes: Sequence[Outcome], path: Path, max_points: dict[str, float], *, merge: bool = False
) -> None:
    """One row per student: verdict, total, each graded cell's score, and the notes.

    With ``merge``, the rows of students not in ``outcomes`` are kept from the existing file
    (when it has the same columns), so grading a few students again keeps the class's file whole.
    """
    header = ["student", "verdict", "score", "max_score", *max_points, "notes"]
    rows = {}
    if merge and path.exists():
        with path.open(newline="") as handle:
            reader = csv.reader(handle)
            if next(reader, None) == header:
                rows = {row[0]: row for row in reader if row}
    for outcome in outcomes:
        scores = scores_of(outcome, max_points)
        rows[outcome.student] = [
            outcome.student, outcome.verdict, sum(scores.values()), sum(max_points.values()),
            *(scores.get(g, 0) for g in max_points), " | ".join(outcome.notes),
        ]  # fmt: skip
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows[student] for student in sorted(rows))


def scores_of(outcome: Outcome, max_points: dict[str, float]) -> dict[str, float]:
    """Points per graded cell, from the trusted verdicts."""
    return {c.grade_id: max_points.get(c.grade_id, 0) if c.passed else 0 for c in outcome.cells}


def max_points_of(release: dict) -> dict[str, float]:
    """grade_id -> points of every autograded test cell, in notebook order."""
    points = {}
    for cell in nbformat.from_dict(release).cells:
        if is_test_cell(cell):
            meta = cell.metadata["nbgrader"]
            points[meta["grade_id"]] = float(meta.get("points", 0))
    return points


def tool_env(**extra: str) -> dict[str, str]:
    """This process's environment for nbgrader and grading subprocesses: this interpreter's
    scripts first on PATH, and the repository (autograder, attention_lab) importable."""
    env = dict(os.environ, **extra)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return env


def generate_feedback(course: Course, assignment: str, students: Sequence[str] = ()) -> None:
    """nbgrader generate_feedback for every student, or only ``students``; hidden checks redacted
    by the course's config (autograder/feedback.py)."""
    command = [
        sys.executable, "-m", "nbgrader", "generate_feedback", assignment, "--force",
        f"--CourseDirectory.db_url={course.coursedir.db_url}",  # --db may differ from the config
    ]  # fmt: skip
    for extra in [["--student", s] for s in students] or [[]]:
        done = subprocess.run(
            [*command, *extra, "--log-level", "ERROR"],
            cwd=course.root, env=tool_env(), check=False, stdout=subprocess.DEVNULL,
        )  # fmt: skip
        if done.returncode != 0:
            raise GradingError(
                f"nbgrader generate_feedback {assignment} {' '.join(extra)} failed (exit "
                f"{done.returncode}); the grades are recorded, rerun it to get the feedback"
            )
