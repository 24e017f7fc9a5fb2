"""Grade on a Dask cluster: a LocalCluster on this machine, or a scheduler that many machines join.

Nothing assumes a file system shared with the grader's machine.  Each worker sets itself up once
(:class:`GradingSetup`, a worker plugin): it checks that it can build a sandbox, imports the
checks and builds their hidden reference data, stages what the sandbox may import in its own
scratch folder, and finds on its own disk what the sandbox must hide.  The release notebook, the
gradebook's sources, the course's answers and the course secret travel once per worker, inside
the plugin (so a remote scheduler's link must be TLS); each job carries its submission's bytes.
The outcomes come back here, where the batch records them.

A worker that dies is replaced by Dask; what happens to its submission is the local pool's policy
(pipeline/engines/worker_deaths.py: run once more if it was grading it, a ``grader error`` row after
a second death; run again, a few times, if it had not started).  The scheduler must leave that to
the grader (``distributed.scheduler.allowed-failures: 0``, as on ``--cluster local:N``); with a
higher value Dask itself reruns a job that many times first.

Anyone who can reach a scheduler can run code on its workers: an address off the loopback range
is refused unless the connection uses TLS, or the caller says ``allow_insecure``.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import ipaddress
import json
import logging
import multiprocessing
import os
import shutil
import signal
import socket
import tempfile
import threading
import uuid
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, replace
from multiprocessing.connection import Connection
from pathlib import Path
from urllib.parse import urlsplit

import dask
import nbformat
from distributed import Client, Future, LocalCluster, WorkerPlugin, as_completed, get_worker
from distributed.scheduler import KilledWorker
from distributed.security import Security
from distributed.utils import get_mp_context

from autograder.isolation import sandbox
from autograder.isolation.staging import build_staging, secret_paths
from autograder.pipeline.course.course import Course, GradingError
from autograder.pipeline.engines.jobs_and_outcomes import (
    DaskCluster,
    Job,
    Outcome,
    Settings,
    grader_error,
)
from autograder.pipeline.engines.preloaded_workers import (
    ctrl_c_ignored,
    end_processes,
    end_with,
    one_blas_thread,
    preloaded_forkserver,
)
from autograder.pipeline.engines.worker_deaths import WorkerDeaths
from autograder.pipeline.intake.intake import MAX_BYTES, take_in
from autograder.pipeline.worker.one_submission import grade_one, unreadable, warm_up
from autograder.private_apis import children_allowed, pool_processes
from autograder.untrusted import UntrustedFile, read_regular_file

# A LocalCluster's scheduler leaves a job whose worker died to the grader (KilledWorker at once),
# which runs it once more if it had started, like the local pool; a worker holds one job at a time
# when the scheduler can queue them.  Its workers fork from a server that imported Dask, torch and
# the checks once, as the pool's do, rather than each importing them in a fresh interpreter.  The
# rest quiets what the grader never looks at (a dashboard's profiles, event-loop and system
# monitors, work stealing): an idle LocalCluster of 2 workers used 2.2 core-seconds per 30 s with
# Dask's defaults, 0.4 with these, on a machine whose cores also grade.
LOCAL_CLUSTER_CONFIG = {
    "distributed.scheduler.allowed-failures": 0,
    "distributed.scheduler.worker-saturation": 1.0,
    "distributed.worker.multiprocessing-method": "forkserver",
    "distributed.worker.profile.enabled": False,
    "distributed.admin.tick.interval": "1s",
    "distributed.admin.system-monitor.interval": "5s",
    "distributed.scheduler.work-stealing": False,
}
STARTED = "attention-lab-started"  # the event a worker logs as it starts grading a job


@dataclass(frozen=True)
class _Prepared:
    """What a worker's set-up built, on the worker's own machine."""

    release: dict
    sources: dict[str, str]
    secret: bytes
    staging: str
    hide: tuple[str, ...]
    # Where the jobs run: a Dask worker runs its event loop and each job in threads, and a fork
    # from a threaded process (the judge's) may inherit a lock another thread held.  These
    # processes are spawned (no thread but their own) and fork the judges instead.
    graders: ProcessPoolExecutor
    lifeline: tuple[Connection, Connection]  # closes when the worker ends: the graders end too


# On a worker: plugin name -> what its set-up built, or why the set-up failed.
_PREPARED: dict[str, _Prepared | str] = {}


class GradingSetup(WorkerPlugin):
    """Makes a Dask worker ready to grade one assignment, on the worker itself."""

    idempotent = True  # a second grader of the same release reuses the set-up

    def __init__(
        self,
        assignment: str,
        release: dict,
        sources: dict[str, str],
        sandboxed: bool,
        secret: bytes,
        answers: dict[str, str] | None = None,
    ):
        self.assignment, self.release, self.sources = assignment, release, sources
        self.answers = dict(answers or {})  # the course's answers (authoring/used_answers.py)
        self.sandboxed, self.secret = sandboxed, secret
        digest = hashlib.sha256(  # a name that differs with the secret and does not reveal it
            json.dumps(
                [assignment, release, sources, self.answers, sandboxed, secret.hex()],
                sort_keys=True,
            ).encode()
        )
        self.name = f"attention-lab-{assignment}-{digest.hexdigest()[:16]}"

    async def setup(self, worker: object) -> None:
        # In a thread: importing torch and building the reference data takes seconds, and the
        # worker's event loop must keep answering the scheduler meanwhile.  Ctrl-C is ignored
        # here, on the worker's main thread, for the processes that thread spawns.
        with ctrl_c_ignored():
            await asyncio.to_thread(self._prepare, worker)

    def teardown(self, worker: object) -> None:
        prepared = _PREPARED.pop(self.name, None)
        if isinstance(prepared, _Prepared):
            _end_graders(prepared)
            shutil.rmtree(Path(prepared.staging).parent, ignore_errors=True)

    def _prepare(self, worker: object) -> None:
        where = f"Dask worker {getattr(worker, 'address', '?')} on {socket.gethostname()}"
        try:
            if self.sandboxed:
                available, why = sandbox.sandbox_available()
                if not available:
                    raise GradingError(why)
            scratch = getattr(worker, "local_directory", None) or tempfile.gettempdir()
            folder = Path(tempfile.mkdtemp(prefix="attention-lab-staging-", dir=scratch))
            folder.chmod(0o755)
            staging = build_staging(folder / "site", self.assignment)
            hide = tuple(sorted(str(p) for p in secret_paths()))
            graders, lifeline = self._start_graders(getattr(worker, "state", None))
        except Exception as error:
            _PREPARED[self.name] = f"{where} cannot grade: {error}"
            raise GradingError(_PREPARED[self.name]) from None
        _PREPARED[self.name] = _Prepared(
            self.release, self.sources, self.secret, str(staging), hide, graders, lifeline
        )

    def _start_graders(
        self, state: object
    ) -> tuple[ProcessPoolExecutor, tuple[Connection, Connection]]:
        """As many spawned, warmed-up grading processes as the worker runs jobs at once."""
        context = multiprocessing.get_context("spawn")
        reader, writer = context.Pipe(duplex=False)
        processes = max(1, getattr(state, "nthreads", 1))
        graders = ProcessPoolExecutor(
            processes,
            mp_context=context,
            initializer=_start_grader,
            initargs=(
                reader,
                self.assignment,
                self.release,
                self.sources,
                self.secret,
                self.answers,
            ),
        )
        try:
            # They start at this first call: OpenBLAS (numpy's) reads the variable as each loads.
            # A submit spawns a process while none is idle: one each, all of them here.
            with one_blas_thread(), children_allowed():
                warmed_up = [graders.submit(_set_up_failure) for _ in range(processes)]
            failed = next(filter(None, (future.result() for future in warmed_up)), None)
        except BaseException:
            _end_graders_of(graders, (reader, writer))
            raise
        if failed:
            _end_graders_of(graders, (reader, writer))
            raise GradingError(failed)
        return graders, (reader, writer)


_SET_UP_FAILURE: list[str] = []  # in a grading process: why its warm-up failed, if it did


def _start_grader(
    grader: Connection,
    assignment: str,
    release: dict,
    sources: dict[str, str],
    secret: bytes,
    answers: dict[str, str],
) -> None:
    """A grading process's set-up: it ignores Ctrl-C, ends with its Dask worker, and warms up."""
    ignore_ctrl_c()
    end_with(grader)
    try:
        warm_up(assignment, release, sources, secret, answers)
    except Exception as error:  # noqa: BLE001 - the worker's set-up reports it
        _SET_UP_FAILURE.append(f"{type(error).__name__}: {_first_line(error)}")


def ignore_ctrl_c() -> None:
    """In a grading process, first: Ctrl-C ignored (the command ends its workers itself) by a
    Python handler, not SIG_IGN, which the sandboxed kernel would inherit through exec."""
    signal.signal(signal.SIGINT, lambda signum, frame: None)


def _set_up_failure() -> str | None:
    """In a grading process: why its warm-up failed, or None."""
    return _SET_UP_FAILURE[0] if _SET_UP_FAILURE else None


def _end_graders(prepared: _Prepared) -> None:
    _end_graders_of(prepared.graders, prepared.lifeline)


def _end_graders_of(graders: ProcessPoolExecutor, lifeline: tuple[Connection, Connection]) -> None:
    """End a set-up's grading processes, with whatever they were grading."""
    processes = pool_processes(graders)
    graders.shutdown(wait=False, cancel_futures=True)
    end_processes(processes)
    for end in lifeline:
        end.close()


def grade_remotely(job: Job, setup: str) -> Outcome:
    """On a worker: grade ``job`` with what the set-up named ``setup`` built there."""
    worker = get_worker()
    worker.log_event(STARTED, {"key": worker.get_current_task()})  # a death now counts
    prepared = _PREPARED.get(setup)
    if not isinstance(prepared, _Prepared):
        raise GradingError(prepared or f"this Dask worker was not set up ({setup})")
    # The course is hidden too where this machine has it (a shared or the same file system).
    hide = sorted({*prepared.hide, *(path for path in job.hide if os.path.exists(path))})
    job = replace(job, staging=prepared.staging, hide=tuple(hide))
    try:
        return prepared.graders.submit(grade_one, job).result()
    except BrokenProcessPool:
        # The process grading this job died (killed, out of memory): this worker dies with it, so
        # that the grader counts the death as a worker's (pipeline/engines/worker_deaths.py) and
        # Dask starts a fresh worker, with fresh grading processes.
        os._exit(1)


def graded(
    cluster: DaskCluster,
    instructor: tuple[str, dict, dict[str, str], dict[str, str], bytes],
    course: Course,
    submitted: Sequence[tuple[str, Path]],
    settings: Settings,
    stage: Callable[[str], None],
    on_start: Callable[[], None],
) -> Iterator[Outcome]:
    """Grade ``submitted`` on ``cluster``; the outcomes as they finish.

    instructor: the assignment, its release notebook, the gradebook's sources, the course's
    answers, the course secret.
    Raises GradingError before any outcome when the cluster is refused, unreachable or cannot
    grade.
    """
    assignment, release, sources, answers, secret = instructor
    with _client(cluster, assignment, stage) as client:
        setup = GradingSetup(assignment, release, sources, settings.use_sandbox, secret, answers)
        workers = client.scheduler_info()["workers"]
        _say_workers(workers, stage)
        try:
            client.register_plugin(setup, name=setup.name)
        except Exception as error:  # noqa: BLE001 - a worker's own message, on one line
            raise GradingError(_first_line(error)) from None
        on_start()
        yield from _graded_on(
            client,
            setup.name,
            _jobs(assignment, course, release, sources, submitted, settings),
            len(workers),
        )


def _graded_on(
    client: Client, setup: str, jobs: Iterator[Job | Outcome], workers: int
) -> Iterator[Outcome]:
    """Submit ``jobs`` a window at a time; a job whose worker died is run again or given up as
    pipeline/engines/worker_deaths.py decides."""
    in_flight: dict[Future, Job] = {}
    deaths = WorkerDeaths("Dask worker")
    finished = as_completed(loop=client.loop)
    window = max(64, 4 * workers)  # submissions the scheduler holds at once

    def submit(job: Job) -> None:
        key = f"grade-{job.assignment}-{uuid.uuid4().hex}"  # never another grader's or try's
        future = client.submit(grade_remotely, job, setup, key=key, pure=False)
        in_flight[future] = job
        finished.add(future)

    def submit_more() -> Iterator[Outcome]:
        while len(in_flight) < window:
            job = next(jobs, None)
            if job is None:
                return
            if isinstance(job, Outcome):  # intake refused the file before it could travel
                yield job
            else:
                submit(job)

    yield from submit_more()
    for future in finished:
        job = in_flight.pop(future)
        try:
            outcome = future.result()
        except KilledWorker:
            why = deaths.died(job.student, _started(client, future.key))
            if not why:
                submit(job)
                continue
            outcome = grader_error(job.student, why)
        except Exception as error:  # noqa: BLE001 - this submission's failure, not the batch's
            why = f"{type(error).__name__}: {_first_line(error)}"
            outcome = grader_error(job.student, f"grading failed on the Dask cluster: {why}")
        finally:
            future.release()
        yield outcome
        yield from submit_more()


def _started(client: Client, key: str) -> bool:
    """Whether the try ``key`` had started grading (its worker said so) before its worker died."""
    return any(event.get("key") == key for _, event in client.get_events(STARTED))


def _jobs(
    assignment: str,
    course: Course,
    release: dict,
    sources: dict[str, str],
    submitted: Sequence[tuple[str, Path]],
    settings: Settings,
) -> Iterator[Job | Outcome]:
    """A job per submission, carrying its bytes; the outcome itself for a file that cannot be
    read as a regular file here (intake's message, as the local pool would give it)."""
    hide = (str(course.root),)
    for student, path in submitted:
        try:
            data = read_regular_file(path, MAX_BYTES)
        except UntrustedFile:
            notebook = nbformat.from_dict(release)
            yield unreadable(student, take_in(path, notebook, sources).problems, notebook, sources)
            continue
        yield Job(student, assignment, data, "", hide, settings)


def _say_workers(workers: dict, stage: Callable[[str], None]) -> None:
    """A stage line on the workers connected now; a warning for a worker with several threads."""
    if not workers:
        stage("no Dask worker is connected yet: the submissions wait for the first to join")
        return
    stage(
        f"setting up {len(workers)} Dask worker{'s' * (len(workers) > 1)}: each checks its "
        "sandbox, imports the checks and builds the hidden reference data, on its own machine"
    )
    crowded = sorted(a for a, w in workers.items() if w.get("nthreads", 1) > 1)
    if crowded:
        stage(
            f"warning: {len(crowded)} worker(s) run several threads ({crowded[0]}, ...): start "
            "them with --nthreads 1, so that each grades one submission at a time"
        )


@contextlib.contextmanager
def _client(
    cluster: DaskCluster, assignment: str, stage: Callable[[str], None]
) -> Iterator[Client]:
    """A client of ``cluster``, closed (with the LocalCluster it started, and its workers'
    forkserver) when done."""
    if cluster.local_workers:
        stage(f"starting a Dask LocalCluster of {cluster.local_workers} workers on 127.0.0.1")
        with dask.config.set(LOCAL_CLUSTER_CONFIG):
            get_mp_context()  # Dask sets its own preload list on its first call: ours replaces it
            asyncio_log = logging.getLogger("asyncio")
            with (
                contextlib.ExitStack() as restore,
                preloaded_forkserver(assignment, also=["distributed"]),
                contextlib.ExitStack() as started,
            ):
                restore.callback(asyncio_log.setLevel, asyncio_log.level)  # after the closing
                with _interrupt_deferred():  # a half-built cluster would go on starting workers
                    local = LocalCluster(
                        n_workers=cluster.local_workers,
                        threads_per_worker=1,
                        processes=True,
                        host="127.0.0.1",
                        dashboard_address=None,
                        memory_limit=0,  # the sandbox and the judge limit what graded code holds
                        # The command reports every failure itself; Dask's own errors would only
                        # add tracebacks, as when Ctrl-C closes the cluster during a set-up.
                        silence_logs=logging.CRITICAL,
                    )
                    started.enter_context(local)
                    client = started.enter_context(Client(local, set_as_default=False))
                try:
                    yield client
                except BaseException:
                    # Closed mid-set-up or mid-job (Ctrl-C), the scheduler leaves the failures of
                    # its messages to closed workers unread, and asyncio logs each with its
                    # traceback: the command says what happened itself.
                    asyncio_log.setLevel(logging.CRITICAL)
                    raise
        return
    address = scheduler_address(cluster)
    security = _security(cluster, address)
    stage(f"connecting to the Dask scheduler at {address}")
    try:
        client = Client(
            address, security=security, timeout=cluster.connect_seconds, set_as_default=False
        )
    except (OSError, TimeoutError, ValueError) as error:
        raise GradingError(
            f"cannot reach the Dask scheduler at {address} within {cluster.connect_seconds:g} s: "
            f"{_first_line(error)}"
        ) from None
    with client:
        yield client


@contextlib.contextmanager
def _interrupt_deferred() -> Iterator[None]:
    """Hold Ctrl-C back until the block ends (in the main thread; elsewhere none arrives)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    received: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: received.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if received:
        raise KeyboardInterrupt


def scheduler_address(cluster: DaskCluster) -> str:
    """The scheduler's address, from ``--scheduler`` or the scheduler file, checked: on the
    loopback range, or with TLS, or explicitly allowed to be neither."""
    address = cluster.scheduler
    if cluster.scheduler_file:
        path = Path(cluster.scheduler_file)
        try:
            address = json.loads(path.read_text())["address"]
        except FileNotFoundError:
            raise GradingError(
                f"no Dask scheduler file {path}: start the scheduler with "
                f"`dask scheduler --scheduler-file {path}` first"
            ) from None
        except (OSError, ValueError, KeyError, TypeError):
            raise GradingError(
                f'{path} is not a Dask scheduler file (expected JSON with an "address")'
            ) from None
    parts = urlsplit(str(address))
    try:
        port = parts.port
    except ValueError:
        port = None
    if parts.scheme not in ("tcp", "tls") or not parts.hostname or port is None:
        raise GradingError(
            f"expected a scheduler address tcp://HOST:PORT or tls://HOST:PORT, got {address!r}"
        )
    if parts.scheme == "tcp" and not cluster.allow_insecure and not _on_loopback(parts.hostname):
        raise GradingError(
            f"refusing the Dask scheduler {address}: it is not on this machine's loopback and "
            "tcp:// is neither encrypted nor authenticated (anyone who can reach a scheduler can "
            "run code on its workers); use tls:// with --tls-ca-file, --tls-cert and --tls-key, "
            "or pass --allow-insecure-scheduler on a network only you can reach"
        )
    return str(address)


def _on_loopback(host: str) -> bool:
    """Whether every address ``host`` names is a loopback address of this machine."""
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        pass
    try:
        found = {info[4][0] for info in socket.getaddrinfo(host, None)}
    except OSError as error:
        raise GradingError(f"cannot resolve the Dask scheduler's host {host!r}: {error}") from None
    return all(ipaddress.ip_address(a.split("%")[0]).is_loopback for a in found)


def _security(cluster: DaskCluster, address: str) -> Security | None:
    """The TLS files for a tls:// address: from the command line, else Dask's configuration."""
    given = (cluster.tls_ca_file, cluster.tls_cert, cluster.tls_key)
    if not address.startswith("tls://"):
        if any(given):
            raise GradingError(
                f"TLS files were given but the scheduler address {address} is tcp://"
            )
        return None
    if any(given):
        security = Security(
            tls_ca_file=cluster.tls_ca_file or None,
            tls_client_cert=cluster.tls_cert or None,
            tls_client_key=cluster.tls_key or None,
            require_encryption=True,
        )
    else:
        security = Security(require_encryption=True)  # distributed.comm.tls.* of Dask's config
    files = {
        "--tls-ca-file": security.tls_ca_file,
        "--tls-cert": security.tls_client_cert,
    }
    missing = [flag for flag, value in files.items() if not value]
    if missing:
        raise GradingError(
            f"a tls:// scheduler needs {' and '.join(missing)} (or Dask's distributed.comm.tls "
            "configuration)"
        )
    for value in (security.tls_ca_file, security.tls_client_cert, security.tls_client_key):
        if value and not Path(value).is_file():
            raise GradingError(f"no TLS file {value}")
    return security


def _first_line(error: BaseException) -> str:
    lines = str(error).strip().splitlines()
    return lines[0] if lines else type(error).__name__
