"""The grading command on a Dask scheduler it did not start: real `dask scheduler` and
`dask worker` processes on 127.0.0.1, reached by address, by scheduler file, and over TLS with
certificates made for the test (a client certificate of another CA is refused)."""

from __future__ import annotations

import contextlib
import csv
import json
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from autograder.examples import DEMO_CLASS, build_course
from autograder.pipeline.course.course import tool_env

pytestmark = [pytest.mark.slow, pytest.mark.sandbox, pytest.mark.usefixtures("sandbox_required")]

ASSIGNMENT = "01_attention"
CLASS = [s for s in DEMO_CLASS if s.student in ("ada", "alan")]  # correct, and a mistake
QUICK = ["--cell-timeout", "20", "--time-limit", "300", "--no-feedback"]


@pytest.fixture(scope="module")
def two_students(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A course of ada (correct) and alan (unscaled attention), generated once."""
    root = tmp_path_factory.mktemp("remote") / "course"
    build_course(root, CLASS)
    return root


def _dask(*argv: str, log: Path) -> subprocess.Popen[bytes]:
    with log.open("wb") as output:
        return subprocess.Popen(
            [sys.executable, "-m", "dask", *argv],
            env=tool_env(OMP_NUM_THREADS="1"),
            stdout=output,
            stderr=subprocess.STDOUT,
        )


@contextlib.contextmanager
def _scheduler_and_worker(folder: Path, tls: list[str], seconds: float = 120) -> Iterator[Path]:
    """A scheduler on 127.0.0.1 (tls:// when ``tls`` gives its files) and one single-threaded
    worker, as an sbatch script starts them; the scheduler file they share."""
    scheduler_file = folder / "scheduler.json"
    protocol = ["--protocol", "tls"] if tls else []
    processes = [
        _dask(
            "scheduler",
            *("--host", "127.0.0.1", "--port", "0", "--no-dashboard", *protocol, *tls),
            *("--scheduler-file", str(scheduler_file)),
            log=folder / "scheduler.log",
        )
    ]
    try:
        deadline = time.monotonic() + seconds
        while not scheduler_file.exists():
            if processes[0].poll() is not None or time.monotonic() > deadline:
                pytest.fail(
                    f"the scheduler did not start:\n{(folder / 'scheduler.log').read_text()}"
                )
            time.sleep(0.2)
        processes.append(
            _dask(
                "worker",
                *("--scheduler-file", str(scheduler_file), "--nthreads", "1", "--no-nanny"),
                *("--memory-limit", "0", "--no-dashboard", *tls),
                *("--local-directory", str(folder / "worker")),
                log=folder / "worker.log",
            )
        )
        yield scheduler_file
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def _grade(course: Path, student: str, *where: str) -> tuple[int, str]:
    """Grade ``student`` of ``course`` with the command, on the Dask scheduler ``where`` names."""
    argv = ["grade", ASSIGNMENT, *QUICK, "--student", student, *where]
    done = subprocess.run(
        [sys.executable, "-m", "autograder", *argv],
        cwd=course,
        env=tool_env(OMP_NUM_THREADS="1"),
        capture_output=True,
        text=True,
        timeout=600,
    )
    return done.returncode, done.stdout + done.stderr


def _row(course: Path, student: str) -> dict[str, str]:
    with (course / "grading" / f"{ASSIGNMENT}_grades.csv").open(newline="") as handle:
        return next(row for row in csv.DictReader(handle) if row["student"] == student)


def _graded_as_expected(course: Path, student: str, output: str) -> None:
    """The student's row: the verdict the demo class expects, full marks only if correct."""
    sample = next(s for s in CLASS if s.student == student)
    row = _row(course, student)
    assert row["verdict"] == sample.expected, (row, output)
    full = float(row["score"]) == float(row["max_score"])
    assert full == sample.full_marks, (row, output)


def test_grading_on_a_scheduler_by_address_and_by_scheduler_file(
    two_students: Path, tmp_path: Path
):
    course = Path(shutil.copytree(two_students, tmp_path / "course", symlinks=True))
    with _scheduler_and_worker(tmp_path, tls=[]) as scheduler_file:
        address = json.loads(scheduler_file.read_text())["address"]
        assert address.startswith("tcp://127.0.0.1:"), address
        status, output = _grade(course, "ada", "--scheduler", address)
        assert status == 0, output
        assert f"connecting to the Dask scheduler at {address}" in output, output
        status, output = _grade(course, "alan", "--scheduler-file", str(scheduler_file))
        assert status == 0, output
        assert f"connecting to the Dask scheduler at {address}" in output, output
    _graded_as_expected(course, "ada", output)
    _graded_as_expected(course, "alan", output)


def _openssl(*argv: str, cwd: Path) -> None:
    done = subprocess.run(["openssl", *argv], cwd=cwd, capture_output=True, text=True)
    assert done.returncode == 0, f"openssl {' '.join(argv)}: {done.stderr}"


def _certificate(folder: Path, name: str, ca: str) -> list[str]:
    """A key and a certificate for 127.0.0.1 (server and client use) signed by ``ca``; the
    --tls-* flags that give them with that CA."""
    _openssl(
        *("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"),
        *("-keyout", f"{name}-key.pem", "-out", f"{name}.csr", "-subj", f"/CN={name}"),
        cwd=folder,
    )
    (folder / f"{name}.ext").write_text(
        "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth,clientAuth\n"
    )
    _openssl(
        *("x509", "-req", "-in", f"{name}.csr", "-CA", f"{ca}.pem", "-CAkey", f"{ca}-key.pem"),
        *("-CAcreateserial", "-days", "1", "-extfile", f"{name}.ext", "-out", f"{name}.pem"),
        cwd=folder,
    )
    files = {
        "--tls-ca-file": f"{ca}.pem",
        "--tls-cert": f"{name}.pem",
        "--tls-key": f"{name}-key.pem",
    }
    return [part for flag, file in files.items() for part in (flag, str(folder / file))]


def _authority(folder: Path, name: str) -> None:
    """A certificate authority of the test's own: ``name``.pem and ``name``-key.pem."""
    _openssl(
        *("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1"),
        *("-nodes", "-days", "1", "-subj", f"/CN={name}"),
        *("-keyout", f"{name}-key.pem", "-out", f"{name}.pem"),
        cwd=folder,
    )


def test_grading_on_a_tls_scheduler_with_certificates_of_its_ca(two_students: Path, tmp_path: Path):
    if shutil.which("openssl") is None:
        pytest.fail("this test makes its TLS certificates with openssl: install it (apt openssl)")
    course = Path(shutil.copytree(two_students, tmp_path / "course", symlinks=True))
    tls = tmp_path / "tls"
    tls.mkdir()
    _authority(tls, "ca")
    _authority(tls, "other-ca")
    node, grader = _certificate(tls, "node", "ca"), _certificate(tls, "grader", "ca")
    stranger = _certificate(tls, "stranger", "other-ca")
    stranger[1] = node[1]  # trusts the scheduler, but its own certificate is of another CA
    with _scheduler_and_worker(tmp_path, tls=node) as scheduler_file:
        address = json.loads(scheduler_file.read_text())["address"]
        assert address.startswith("tls://127.0.0.1:"), address
        where = ["--scheduler", address, "--connect-timeout", "10"]
        status, output = _grade(course, "alan", *where, *stranger)
        assert status == 2, output
        assert f"cannot reach the Dask scheduler at {address}" in output, output
        assert not (course / "grading" / f"{ASSIGNMENT}_grades.csv").exists(), output
        status, output = _grade(course, "alan", *where, *grader)
        assert status == 0, output
    _graded_as_expected(course, "alan", output)
