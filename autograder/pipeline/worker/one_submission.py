"""Grade one submission, in a worker process: intake, sandboxed run with the judge, verdicts.

Intake (pipeline/intake/intake.py) restores the cells that nbgrader owns: that is the graded copy.
The judged notebook, the release's cells with the submitted answers in place (pipeline/worker/
judged_notebook.py), then runs inside the sandbox (isolation/) under the crash-tolerant runner in
a plain Python process; after each graded test cell a judge in this process runs the hidden checks
against that process's objects (judging/).  Last, the trusted verdicts are written into the graded
copy's test cells (pipeline/worker/verdicts.py).
"""

from __future__ import annotations

import contextlib
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import nbformat

from autograder.authoring.hidden_seeds import use_secret
from autograder.authoring.registry import prepare
from autograder.isolation import sandbox
from autograder.pipeline.engines.jobs_and_outcomes import GradedCell, Job, Outcome
from autograder.pipeline.intake import intake
from autograder.pipeline.worker import judged_notebook
from autograder.pipeline.worker.verdicts import (
    MAX_REPORT_BYTES,
    apply_verdicts,
    fail_every_test,
    parse_report,
    row_verdict,
)
from autograder.untrusted import read_pipe

if TYPE_CHECKING:
    from autograder.judging.judge import Judge

NOTEBOOK_IN_SANDBOX = sandbox.SANDBOX_WORKDIR / "submission.ipynb"


def grade_one(job: Job) -> Outcome:
    """Grade one submission, with what warm_up gave this worker; never raises for anything the
    submission does."""
    marker = Path(job.marker) if job.marker else None
    if marker is not None:
        marker.touch()  # if this worker dies now, the batch knows this job had started
    try:
        release, sources = _INSTRUCTOR["release"], _INSTRUCTOR["sources"]
        return _grade(job, nbformat.from_dict(release), sources)
    finally:
        if marker is not None:
            marker.unlink(missing_ok=True)


def unreadable(
    student: str, problems: list[str], release: nbformat.NotebookNode, sources: dict[str, str]
) -> Outcome:
    """The outcome of a submission intake refused: the release's cells, every test failed."""
    notebook = intake.take_in(nbformat.writes(release).encode(), release, sources).notebook
    reason = "; ".join(problems) or "the notebook could not be read"
    cells = fail_every_test(notebook, f"your notebook could not be graded: {reason}")
    return Outcome(student, "invalid notebook", problems, notebook, cells, 0.0)


def _grade(job: Job, release: nbformat.NotebookNode, sources: dict[str, str]) -> Outcome:
    started = time.monotonic()
    taken = intake.take_in(job.submitted, release, sources)
    if taken.notebook is None:
        outcome = unreadable(job.student, taken.problems, release, sources)
        outcome.seconds = _since(started)
        return outcome
    with tempfile.TemporaryDirectory(prefix="grade-") as scratch:
        scratch_path = Path(scratch)
        workdir, judge_dir = scratch_path / "work", scratch_path / "judge"
        workdir.mkdir()
        judge_dir.mkdir()
        scratch_path.chmod(0o711)
        judge_dir.chmod(0o755)
        program = judged_notebook.build(taken.notebook, release)
        nbformat.write(program.notebook, workdir / NOTEBOOK_IN_SANDBOX.name)
        sources = judged_notebook.ban_sources(taken.notebook, program)
        answers = judged_notebook.answer_cells(program)
        run, result, judged = execute(job, workdir, judge_dir, sources, answers)
    notes = list(taken.problems)
    if judged.failure:
        notes.append(judged.failure)
    in_copy = judged_notebook.in_copy(result, program)
    cells = apply_verdicts(taken.notebook, in_copy, judged.grades, notes, judged.failure)
    for index, names in judged_notebook.left_behind(taken.notebook, program).items():
        note = judged_notebook.left_behind_note(names)
        taken.notebook.cells[index].outputs.append(
            nbformat.v4.new_output("stream", name="stdout", text=note + "\n")
        )
        grade_id = taken.notebook.cells[index].metadata["nbgrader"]["grade_id"]
        notes.append(f"answer cell {grade_id}: {note.removeprefix('[grading run] ')}")
    notes += review_notes(cells)
    verdict = row_verdict(taken.verdict, run, result, cells, notes, judged.refusals)
    worker_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    peak_mib = max(worker_kib, judged.peak_kib) / 1024
    return Outcome(job.student, verdict, notes, taken.notebook, cells, _since(started), peak_mib)


def review_notes(cells: list[GradedCell]) -> list[str]:
    """A note per check that raised in the grader, not in the student's code: it counts as
    failed, and the row asks a person to decide (autograder/authoring/student_errors.py)."""
    return [
        f"review: check {check.name} of cell {cell.grade_id} raised {check.grader_raised} in the "
        "grader, not in the student's code; it counts as failed until a person decides"
        for cell in cells
        for check in cell.checks
        if check.grader_raised
    ]


def _since(started: float) -> float:
    return round(time.monotonic() - started, 2)


def execute(
    job: Job,
    workdir: Path,
    judge_dir: Path,
    sources: list[str],
    answers: dict[int, tuple[str, str]],
) -> tuple[sandbox.SandboxResult | None, dict, Judge]:
    """Run the notebook (in the sandbox unless told otherwise) while the judge serves it; the
    sandbox's result, the runner's report (see verdicts.parse_report), and the judge once it has
    ended: its cells' grades, the calls it refused, why it stopped early (if it did) and its
    process's peak memory."""
    from autograder.judging.judge import Judge
    from autograder.judging.kernel import JUDGE_SOCKET_ENV

    settings = job.settings
    socket_path = judge_dir / "judge.sock"
    inside = NOTEBOOK_IN_SANDBOX if settings.use_sandbox else workdir / NOTEBOOK_IN_SANDBOX.name
    argv = [
        sys.executable,
        "-m",
        "autograder.isolation.runner",
        str(inside),
        "--cell-timeout",
        str(settings.cell_timeout),
        "--max-restarts",
        str(settings.max_restarts),
    ]
    env = sandbox.default_env()
    env.update(
        PYTHONPATH=job.staging,
        MPLBACKEND="Agg",  # no figure of the grading run is shown: its outputs are not kept
        MPLCONFIGDIR="/tmp/.matplotlib",
        OMP_NUM_THREADS="1",
    )
    env[JUDGE_SOCKET_ENV] = str(socket_path)
    judge = Judge(
        job.assignment,
        socket_path,
        sources,
        settings.judge,
        read_only=[Path(p) for p in job.hide],
        answers=answers,
        charge_again=settings.charge_again,
        course_answers=_INSTRUCTOR.get("answers", {}),
    )
    with judge:
        if settings.use_sandbox:
            run = sandbox.run_sandboxed(
                [*argv, "--report-fd", str(sandbox.REPORT_FD), "--judge-fd", str(sandbox.JUDGE_FD)],
                workdir=workdir,
                limits=settings.limits,
                env=env,
                readonly_binds=[Path(job.staging), judge_dir],
                hide=[Path(p) for p in job.hide],
                report_bytes=MAX_REPORT_BYTES,
                pass_fds=[judge.cell_channel.fileno()],
            )
            report, truncated = run.report, run.report_truncated
        else:
            run = None
            channel = judge.cell_channel.fileno()
            argv += ["--judge-fd", str(channel)]
            report, truncated = _run_unsandboxed(
                argv, workdir, env, settings.limits.wall_seconds, channel
            )
    return run, parse_report(report, truncated), judge


def _run_unsandboxed(
    argv: list[str], workdir: Path, env: dict[str, str], wall_seconds: float, channel: int
) -> tuple[bytes, bool]:
    """Run the runner as this user (--unsafe-no-sandbox); its report and whether it was cut."""
    env["HOME"] = env["TMPDIR"] = str(workdir)
    env["MPLCONFIGDIR"] = str(workdir / Path(env["MPLCONFIGDIR"]).name)
    report_read, report_write = os.pipe()
    try:
        process = subprocess.Popen(
            [*argv, "--report-fd", str(report_write)],
            cwd=workdir,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            pass_fds=(report_write, channel),
            start_new_session=True,
        )
    finally:
        os.close(report_write)
    try:
        report, truncated = read_pipe(report_read, MAX_REPORT_BYTES, wall_seconds)
    finally:
        os.close(report_read)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)  # past the wall limit, or a kernel left over
        process.wait()
    return report, truncated


# The released notebook, the gradebook's sources and the course's answers (the judge defines
# them in place of a wrong answer another cell uses: authoring/used_answers.py), given once per
# worker by warm_up.
_INSTRUCTOR: dict[str, Any] = {}


def warm_up(
    assignment: str,
    release: dict,
    sources: dict[str, str],
    secret: bytes,
    answers: dict[str, str] | None = None,
) -> None:
    """Before a worker's first submission: one thread for torch, BLAS and OpenMP (the workers
    share the cores), the instructor's notebook, sources and answers, the course secret that
    hidden inputs derive from (the judges, forked from this worker, inherit it), and the hidden
    reference data built once, not once per submission."""
    one_thread()
    _INSTRUCTOR.update(release=release, sources=sources, answers=dict(answers or {}))
    use_secret(secret)
    prepare(assignment)


def one_thread() -> None:
    """One thread for torch, BLAS and OpenMP in this worker: the workers share the cores."""
    import torch
    from threadpoolctl import threadpool_limits

    torch.set_num_threads(1)
    threadpool_limits(1)
