"""python -m autograder: grade a class (``grade``), a bundled sample class (``demo``), build
what students receive (``release``) and the autograder zip Gradescope runs (``gradescope``),
grant an extension, before grading too (``extend``), make and rotate the course secret that hidden
inputs derive from (``secret``), add an exercise or an assignment (``new``), or check what authors
wrote (``lint``)."""

from __future__ import annotations

import argparse
import contextlib
import functools
import importlib
import shutil
import sys
import tempfile
import time
from collections.abc import Collection, Sequence
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from autograder.authoring.hidden_seeds import DEVELOPMENT_SECRET, secret_fingerprint
from autograder.isolation.runner import WALL_FACTOR
from autograder.isolation.sandbox import GiB, Limits, describe_bwrap
from autograder.judging.limits import JudgeLimits
from autograder.pipeline.course import release as release_mod
from autograder.pipeline.course.course import (
    Course,
    GradingError,
    check_pending_extensions,
    due_date_notice,
    find_submissions,
    instructor_side,
)
from autograder.pipeline.course.course_secret import course_secret, create_secret, secret_path
from autograder.pipeline.engines import batch
from autograder.pipeline.engines.jobs_and_outcomes import DaskCluster, Settings
from autograder.pipeline.engines.preloaded_workers import preloaded_forkserver
from autograder.pipeline.intake.zip_intake import collect_from_zip
from autograder.pipeline.records import report, similarity
from autograder.pipeline.records.grade_record import read_record
from autograder.pipeline.records.safe_text import shown

if TYPE_CHECKING:
    from autograder.examples import Sample


def _settings(args: argparse.Namespace) -> Settings:
    limits = Limits(
        memory_bytes=int(args.memory_gb * GiB),
        cpu_seconds=int(args.time_limit),
        wall_seconds=float(args.time_limit),
        max_processes=args.max_processes,
    )
    judge = JudgeLimits(
        # The runner ends a cell by then, however long it waited for a CPU.
        call_seconds=WALL_FACTOR * args.cell_timeout + 30,
        total_seconds=args.judge_seconds,
        memory_bytes=int(args.judge_memory_gb * GiB),
    )
    return Settings(
        cell_timeout=args.cell_timeout,
        limits=limits,
        use_sandbox=not args.unsafe_no_sandbox,
        judge=judge,
    )


def _add_limits(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--workers", type=int, default=0, help="parallel workers of the local pool (default: cores)"
    )
    parser.add_argument(
        "--cell-timeout",
        type=float,
        default=120.0,
        help="seconds per cell, not counting time spent waiting for a busy CPU",
    )
    parser.add_argument(
        "--time-limit", type=float, default=900.0, help="seconds per submission, CPU and wall"
    )
    parser.add_argument("--memory-gb", type=float, default=4.0, help="memory per process (GiB)")
    parser.add_argument("--max-processes", type=int, default=64, help="processes per submission")
    parser.add_argument(
        "--judge-seconds", type=float, default=300.0, help="judging time per submission, in all"
    )
    parser.add_argument(
        "--judge-memory-gb", type=float, default=2.0, help="memory of a submission's judge (GiB)"
    )
    parser.add_argument(
        "--unsafe-no-sandbox",
        action="store_true",
        help="run student code without bubblewrap, with your permissions (trusted code only)",
    )


def _local_workers(text: str) -> int:
    """``local:N`` -> N, for --cluster."""
    kind, _, count = text.partition(":")
    if kind != "local" or not count.isdigit() or int(count) < 1:
        raise argparse.ArgumentTypeError(f"expected local:N with N >= 1 workers, got {text!r}")
    return int(count)


def _add_engine(parser: argparse.ArgumentParser) -> None:
    engine = parser.add_argument_group(
        "grading on a Dask cluster (default: a process pool on this machine)"
    )
    where = engine.add_mutually_exclusive_group()
    where.add_argument(
        "--cluster",
        type=_local_workers,
        metavar="local:N",
        help="start a Dask LocalCluster of N single-threaded workers on 127.0.0.1",
    )
    where.add_argument("--scheduler", metavar="ADDRESS", help="tcp://HOST:PORT or tls://HOST:PORT")
    where.add_argument(
        "--scheduler-file", metavar="FILE", help="the file `dask scheduler --scheduler-file` wrote"
    )
    engine.add_argument("--tls-ca-file", default="", help="CA certificate of a tls:// scheduler")
    engine.add_argument("--tls-cert", default="", help="this client's TLS certificate")
    engine.add_argument("--tls-key", default="", help="this client's TLS key")
    engine.add_argument(
        "--allow-insecure-scheduler",
        action="store_true",
        help="connect to a tcp:// scheduler off the loopback range (anyone who can reach a "
        "scheduler can run code on its workers: only on a network you alone can reach)",
    )
    engine.add_argument(
        "--connect-timeout", type=float, default=30.0, help="seconds to reach the scheduler"
    )


def _cluster(args: argparse.Namespace) -> DaskCluster | None:
    """The Dask cluster the command names, or None for the local process pool."""
    if not (args.cluster or args.scheduler or args.scheduler_file):
        return None
    return DaskCluster(
        scheduler=args.scheduler or "",
        scheduler_file=args.scheduler_file or "",
        local_workers=args.cluster or 0,
        tls_ca_file=args.tls_ca_file,
        tls_cert=args.tls_cert,
        tls_key=args.tls_key,
        allow_insecure=args.allow_insecure_scheduler,
        connect_seconds=args.connect_timeout,
    )


class _DefaultsShown(argparse.ArgumentDefaultsHelpFormatter):
    """--help gives every option's default: its value, "off" for a flag, or the words of a help
    that already says it ("(default: cores)")."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if "(default" in text or not action.option_strings or action.default is argparse.SUPPRESS:
            return text
        if action.nargs == 0 and action.const is True:  # store_true
            return f"{text} (default: off)"
        if action.default in (None, "", []):
            return f"{text} (default: none)"
        return super()._get_help_string(action)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m autograder", description=__doc__, formatter_class=_DefaultsShown
    )
    commands = parser.add_subparsers(dest="command", required=True)
    add = functools.partial(commands.add_parser, formatter_class=_DefaultsShown)
    grade = add("grade", help="grade every collected submission of ASSIGNMENT")
    grade.add_argument("assignment")
    grade.add_argument("--student", action="append", default=[], help="only these (repeatable)")
    grade.add_argument("--course", type=Path, default=Path.cwd(), help="course folder (default: .)")
    grade.add_argument("--db", help="gradebook URL (default: the course's; postgresql://... too)")
    grade.add_argument("--no-feedback", action="store_true", help="skip the feedback HTML")
    grade.add_argument("--from-zip", type=Path, help="first collect a Canvas submissions zip")
    grade.add_argument("--roster", type=Path, help="roster CSV (default: grading/roster.csv)")
    seeds = grade.add_mutually_exclusive_group()
    seeds.add_argument(
        "--course-secret",
        type=Path,
        metavar="FILE",
        help="the course secret (default: $ATTENTION_LAB_SECRET_FILE, else `secret show-path`)",
    )
    seeds.add_argument(
        "--development-secret",
        action="store_true",
        help="draw hidden inputs from the public development secret: trials only, never a class",
    )
    _add_limits(grade)
    _add_engine(grade)
    demo = add("demo", help="grade the bundled sample class end to end")
    demo.add_argument(
        "--keep",
        type=Path,
        metavar="FOLDER",
        help="build the demo course in FOLDER and keep it (default: a temporary folder, deleted "
        "when the demo ends)",
    )
    _add_limits(demo)
    _add_engine(demo)
    demo.set_defaults(cell_timeout=20.0, time_limit=300.0)  # the sample notebook is quick
    release = add("release", help="build the student bundle of one assignment (no grader inside)")
    release.add_argument(
        "assignment",
        nargs="?",
        help="the assignment released now: the bundle holds it, the earlier ones, and the "
        "reference answers of the earlier ones only (required)",
    )
    release.add_argument(
        "--out",
        type=Path,
        help=f"bundle folder (default: {release_mod.DEFAULT}/attention-lab-ASSIGNMENT)",
    )
    _add_gradescope(add)
    feedback = add(
        "feedback",
        help="write again the feedback pages of ASSIGNMENT whose grades changed since (hand "
        "grades, comments, extensions), and only those",
    )
    feedback.add_argument("assignment")
    feedback.add_argument(
        "--course", type=Path, default=Path.cwd(), help="course folder (default: .)"
    )
    feedback.add_argument("--db", help="gradebook URL (default: the course's)")
    extend = add("extend", help="grant STUDENT an extension on ASSIGNMENT (before grading too)")
    extend.add_argument("assignment")
    extend.add_argument("student")
    for unit in ("days", "hours", "minutes"):
        extend.add_argument(f"--{unit}", type=float, default=0.0, help=f"{unit} of extension")
    extend.add_argument(
        "--course", type=Path, default=Path.cwd(), help="course folder (default: .)"
    )
    extend.add_argument("--db", help="gradebook URL (default: the course's)")
    secret = commands.add_parser(
        "secret", help="make (init), replace at a new term (rotate) or locate the course secret"
    )
    secret.add_argument("action", choices=("init", "rotate", "show-path"))
    secret.add_argument("--course", type=Path, default=Path.cwd(), help="course folder (default .)")
    secret.add_argument(
        "--course-secret",
        type=Path,
        metavar="FILE",
        help="this file instead of the default (default: $ATTENTION_LAB_SECRET_FILE, else the "
        "path `secret show-path` prints)",
    )
    _add_authoring(commands, add)
    return parser


def _add_gradescope(add: functools.partial) -> None:
    """The ``gradescope`` command: the autograder zip of one assignment."""
    gradescope = add(
        "gradescope", help="write the autograder.zip that Gradescope runs for ASSIGNMENT"
    )
    gradescope.add_argument("assignment")
    gradescope.add_argument(
        "--out", type=Path, help="the zip (default: dist/gradescope-ASSIGNMENT.zip)"
    )
    gradescope.add_argument(
        "--course",
        type=Path,
        default=Path.cwd(),
        help="the course folder whose secret goes into the zip (default: .)",
    )
    seeds = gradescope.add_mutually_exclusive_group()
    seeds.add_argument(
        "--course-secret",
        type=Path,
        metavar="FILE",
        help="the course secret copied into the zip (default: $ATTENTION_LAB_SECRET_FILE, else "
        "`secret show-path`)",
    )
    seeds.add_argument(
        "--secret-from-env",
        action="store_true",
        help="put no secret in the zip: run_autograder reads it from $ATTENTION_LAB_SECRET",
    )
    seeds.add_argument(
        "--development-secret",
        action="store_true",
        help="draw hidden inputs from the public development secret: trials only, never a class",
    )


def _add_authoring(commands: argparse._SubParsersAction, add: functools.partial) -> None:
    """The authors' commands: ``new exercise``, ``new assignment`` and ``lint``."""
    new = add("new", help="add an exercise or an assignment to the course, every piece named")
    kinds = new.add_subparsers(dest="kind", required=True)
    add_kind = functools.partial(kinds.add_parser, formatter_class=_DefaultsShown)
    exercise = add_kind(
        "exercise",
        help="answer cell, graded test cell with its hidden line, table row, check, mutant",
    )
    exercise.add_argument("assignment", help="an assignment of solutions/, such as 01_attention")
    exercise.add_argument("name", help="the exercise: the function students write, such as row_max")
    exercise.add_argument("--points", type=float, default=2.0, help="points of its test cell")
    assignment = add_kind(
        "assignment", help="solution notebook, checks package and mutants module of NN_name"
    )
    assignment.add_argument("assignment", help="NN_name, such as 08_rotary_positions")
    for parser in (exercise, assignment):
        _add_course_checkout(parser)
        parser.add_argument(
            "--no-generate",
            action="store_true",
            help="leave notebooks/ alone (by default nbgrader regenerates the student copy)",
        )
    lint = add("lint", help="check that graded cells, hidden checks and tables agree (seconds)")
    _add_course_checkout(lint)
    lint.add_argument(
        "--write-tables",
        action="store_true",
        help="first rewrite each notebook's \"What is graded\" table from its cells' points, "
        "and docs/authoring.md's clause table from the checks' keeps=",
    )


def _add_course_checkout(parser: argparse.ArgumentParser) -> None:
    """The authors' commands' ``--course``: the course checkout they change or check."""
    parser.add_argument(
        "--course", type=Path, default=Path.cwd(), help="the course checkout (default: .)"
    )


def run_new(args: argparse.Namespace) -> int:
    """Scaffold an exercise or an assignment; 2 when the input is wrong."""
    from autograder.authoring import scaffold

    try:
        if args.kind == "exercise":
            written = scaffold.new_exercise(
                args.course, args.assignment, args.name, args.points, not args.no_generate
            )
        else:
            written = scaffold.new_assignment(args.course, args.assignment, not args.no_generate)
    except scaffold.ScaffoldError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    root = args.course.resolve()
    print("written:\n" + "\n".join(f"  {path.relative_to(root)}" for path in written))
    if args.kind == "assignment":
        print(f"next: python -m autograder new exercise {args.assignment} NAME")
    else:
        print(
            "next: replace every TODO (the solution, the public checks, the hidden check, the "
            "mutant), then `python -m autograder lint` and the mutation corpus "
            f"(python -m pytest tests/test_mutants.py -k {args.assignment})"
        )
    return 0


def run_lint(args: argparse.Namespace) -> int:
    """The authoring lint of the course; 1 when it finds problems."""
    from autograder.authoring.check_modules import CHECKS_FOLDER
    from autograder.authoring.lint import lint_course, write_tables

    root = args.course.resolve()
    imported = CHECKS_FOLDER.parents[1]
    if imported != root:
        print(
            f"error: this Python's autograder is {imported}, so its hidden checks are not those "
            f"of {root}: run the lint with {root}'s own environment (or PYTHONPATH={root})",
            file=sys.stderr,
        )
        return 2
    if args.write_tables:
        for path in write_tables(root):
            table = "clause" if path.suffix == ".md" else '"What is graded"'
            print(f"rewrote the {table} table of {path.relative_to(root)}")
    problems = lint_course(root)
    for problem in problems:
        print(problem)
    print(f"{len(problems)} problems" if problems else "the course lints clean")
    return 1 if problems else 0


def run_extend(args: argparse.Namespace) -> int:
    """Grant the extension (see autograder/pipeline/course/extensions.py); 2 when it cannot be."""
    from nbgrader.api import Gradebook

    from autograder.pipeline.course.extensions import ExtensionError, adopt_legacy_file, grant
    from autograder.pipeline.intake.student_ids import EXPECTED as STUDENT_ID
    from autograder.pipeline.intake.student_ids import canonical, student_id_problem
    from autograder.pipeline.records.grade_record import grading_folder

    span = timedelta(days=args.days, hours=args.hours, minutes=args.minutes)
    student = canonical(args.student)
    problem = student_id_problem(student)
    if problem:
        print(
            f"error: expected a student id ({STUDENT_ID}), got {shown(args.student)!r}: {problem}",
            file=sys.stderr,
        )
        return 2
    try:
        course = Course.load(args.course, args.db)
        with Gradebook(course.coursedir.db_url, course.coursedir.course_id) as gb:
            adopt_legacy_file(gb, grading_folder(course.coursedir))
            student, on_submission = grant(gb, args.assignment, student, span)
    except (GradingError, ExtensionError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    where = (
        f"in the gradebook {course.db_shown}"
        if on_submission
        else f"in the gradebook {course.db_shown}, until {student}'s first grading"
    )
    print(f"extension of {span} on {args.assignment} for {student}: kept {where}")
    return 0


def run_feedback(args: argparse.Namespace) -> int:
    """Write again the pages whose grades changed; 2 when a page could not be written."""
    from autograder.pipeline.feedback.feedback import refresh_feedback

    try:
        course = Course.load(args.course, args.db)
        changed, unchanged = refresh_feedback(course, args.assignment)
    except GradingError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    names = ", ".join(shown(s) for s in changed)
    print(
        f"feedback of {args.assignment}: {len(changed)} page{'s' * (len(changed) != 1)} written "
        f"again{': ' + names if names else ''}; {len(unchanged)} unchanged, left as they were"
    )
    return 0


def run_secret(args: argparse.Namespace) -> int:
    """Make, rotate or locate the course secret; 2 when it cannot be done."""
    root = args.course.resolve()
    path = secret_path(root, args.course_secret)
    if args.action == "show-path":
        print(path)
        if not path.exists():
            print(f"no course secret there yet: `secret init --course {root}`", file=sys.stderr)
        return 0
    try:
        create_secret(path, root, rotate=args.action == "rotate")
        fingerprint = secret_fingerprint(course_secret(root, args.course_secret))
    except GradingError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    done = "rotated (nothing of the old one is kept)" if args.action == "rotate" else "made"
    print(
        f"course secret {done}: {path} (mode 0600, fingerprint {fingerprint}). The "
        "grading command reads it; hidden inputs now differ from those of every other secret, "
        "and no grade depends on it. Rotate it at each new term."
    )
    return 0


def hidden_seeds_notice(args: argparse.Namespace, course: Course | None) -> tuple[bytes, str]:
    """The secret this grading draws hidden inputs from, and the line that says which."""
    if course is None or args.development_secret:
        why = "the demo" if course is None else "--development-secret"
        return DEVELOPMENT_SECRET, (
            f"hidden seeds: the PUBLIC development secret ({why}): anyone with this repository "
            "can compute every hidden input; grade a class with its course secret (`python -m "
            "autograder secret init`)"
        )
    secret = course_secret(course.root, args.course_secret)
    where = secret_path(course.root, args.course_secret)
    return secret, f"hidden seeds: course secret {where} (fingerprint {secret_fingerprint(secret)})"


def run_grade(
    assignment: str,
    course: Course,
    args: argparse.Namespace,
    secret: bytes,
    students: Sequence[str] = (),
    feedback: bool = True,
    canvas_late: Collection[str] = frozenset(),
) -> int:
    """Grade, record, export and report; the exit status the command should end with.

    canvas_late: the students whose submission a Canvas download marks late (the only evidence
    of time it holds), shown in their rows."""
    settings = _settings(args)
    release, _ = instructor_side(course, assignment)
    max_points = report.max_points_of(release)
    submitted = find_submissions(course, assignment, students)
    started = time.monotonic()
    progress = report.Progress(len(submitted))
    progress.stage(f"{len(submitted)} submissions of {assignment}, gradebook {course.db_shown}")
    if notice := due_date_notice(course, assignment):
        progress.stage(notice)
    check_pending_extensions(course)

    def workers_starting() -> None:
        # This process's work for after the grading, done while the workers' server imports
        # torch and the checks on another core: fingerprint the release, import nbconvert.
        progress.start()
        similarity.prepare(release)
        if feedback:
            importlib.import_module("autograder.pipeline.feedback.feedback")

    outcomes = batch.grade(
        assignment,
        course,
        students=students,
        workers=args.workers,
        settings=settings,
        progress=progress,
        stage=progress.stage,
        on_start=workers_starting,
        cluster=_cluster(args),
        secret=secret,
    )
    for outcome in outcomes:
        if outcome.student in canvas_late:
            outcome.notes.append(
                "Canvas marks this submission late; its download holds no times, so no late "
                "penalty was applied here (Canvas's late policy applies)"
            )
    csv_path = course.path(course.coursedir.autograded_directory, ".", ".").parent / (
        f"{assignment}_grades.csv"
    )
    record = read_record(course.coursedir.db_url, course.coursedir.course_id, assignment)
    progress.stage("comparing the answers with the reference and with each other")
    similar = similarity.check_class(course, assignment, outcomes, release)
    report.write_csv(
        outcomes, csv_path, max_points, merge=bool(students), record=record, similarity=similar.best
    )
    problems = []
    if feedback:
        from autograder.pipeline.feedback.feedback import generate_feedback

        graded = [o.student for o in outcomes if o.notebook is not None]
        try:
            generate_feedback(course, assignment, graded if students else ())
        except GradingError as error:  # the grades are in; say so after the table
            problems.append(str(error))
    print(report.format_table(outcomes, max_points, record))
    print(similar.summary)
    elapsed = time.monotonic() - started
    written = f", feedback under {course.coursedir.feedback_directory}/"
    print(
        f"\n{len(outcomes)} submissions graded in {elapsed:.1f} s; grades in "
        f"{course.db_shown}, CSV {csv_path}" + ("" if not feedback or problems else written)
    )
    failed = [o.student for o in outcomes if o.verdict == "grader error"]
    if failed:
        problems.append(f"grading itself failed for: {', '.join(failed)}")
    for problem in problems:
        print(f"error: {problem}", file=sys.stderr)
    return 1 if problems else 0


def demo_cast(samples: Sequence[Sample]) -> str:
    """What each sample student of the demo shows, a line each, and why similarity flags them."""
    width = max(len(sample.student) for sample in samples) + 1
    return "\n".join(
        [
            "\nThe sample class, one line per student:",
            *(f"  {f'{s.student}:'.ljust(width)} {s.about}" for s in samples),
            "Why similarity flags several at or near 1.000: every sample hands in the reference",
            "answers except those it changes. In a real class such a score asks for a human "
            "review, never a deduction.",
        ]
    )


def demo_epilogue(root: Path, assignment: str, kept: bool) -> str:
    """The demo's last words: what it kept and where, or that nothing was kept and how to."""
    grading = root / "grading"
    if not kept:
        return (
            f"\ndemo course deleted: {root} was a temporary folder, so the gradebook, CSV and "
            "feedback named above are gone. To keep them and open the feedback pages, run:\n"
            "  python -m autograder demo --keep demo-course"
        )
    return (
        f"\ndemo course kept in {root}:\n"
        f"  {grading / 'feedback'}/STUDENT/{assignment}/{assignment}.html  feedback\n"
        f"  {grading / f'{assignment}_grades.csv'}  the grades\n"
        f"  {grading / 'gradebook.db'}  the nbgrader gradebook (formgrader, export)\n"
        f"  {grading / f'{assignment}_similarity.html'}  similar answers, for the instructor\n"
        f"Delete the folder when done: rm -r {root}"
    )


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "release":
        return release_mod.main(args.assignment, args.out)
    if args.command == "gradescope":
        from autograder.pipeline.gradescope import gradescope_zip

        return gradescope_zip.main(args)
    if args.command == "extend":
        return run_extend(args)
    if args.command == "feedback":
        return run_feedback(args)
    if args.command == "secret":
        return run_secret(args)
    if args.command == "new":
        return run_new(args)
    if args.command == "lint":
        return run_lint(args)
    print(
        "sandbox: none (--unsafe-no-sandbox)" if args.unsafe_no_sandbox else describe_bwrap(),
        file=sys.stderr,
        flush=True,
    )
    with contextlib.ExitStack() as workers_server:
        if args.command == "grade" and _cluster(args) is None:
            # The workers' server imports torch and the checks (over a second of CPU) on another
            # core while this process loads the course; the batch takes it over, and it stops
            # with the command on every path.
            workers_server.enter_context(preloaded_forkserver(args.assignment))
        return _grade_or_demo(args)


def _grade_or_demo(args: argparse.Namespace) -> int:
    """The grade and demo commands; 2 on a grading error, 130 on Ctrl-C."""
    try:
        if args.command == "grade":
            course = Course.load(args.course, args.db)
            secret, notice = hidden_seeds_notice(args, course)
            print(notice, file=sys.stderr, flush=True)
            if args.from_zip:
                zipped = collect_from_zip(course, args.assignment, args.from_zip, args.roster)
                args.student += zipped.students
                canvas_late = set(zipped.late)
            return run_grade(
                args.assignment,
                course,
                args,
                secret,
                args.student,
                feedback=not args.no_feedback,
                canvas_late=canvas_late if args.from_zip else frozenset(),
            )
        from autograder.examples import DEMO_CLASS, build_demo_course

        secret, notice = hidden_seeds_notice(args, None)
        print(notice, file=sys.stderr, flush=True)
        with tempfile.TemporaryDirectory(prefix="attention-lab-demo-") as scratch:
            root = args.keep or Path(scratch) / "course"
            if args.keep and root.exists():
                shutil.rmtree(root)
            print(f"demo course: building it in {root}", file=sys.stderr, flush=True)
            course, assignment = build_demo_course(root)
            status = run_grade(assignment, course, args, secret)
            print(demo_cast(DEMO_CLASS))
            print(demo_epilogue(root, assignment, kept=bool(args.keep)))
            return status
    except GradingError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # its workers are already ended (batch.py); no traceback
        print(
            "\ninterrupted: the grades recorded so far stay in the gradebook; the CSV and the "
            "feedback were not written. Run the same command again to grade the class.",
            file=sys.stderr,
        )
        return 130
