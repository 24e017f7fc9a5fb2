"""The sandbox shows an allow-list of the host, and the runner's report cannot be forged from it.

Only the interpreter, its packages, the shared libraries, the staging folder and scratch are
mounted: a copy of the hidden checks and the seed salt anywhere else on the host is out of reach,
and so are the checkout, $HOME and /etc/shadow.  The planted copy lies in /var/tmp, which the old
sandbox (the host root minus the checkout and the course) showed; /tmp would prove nothing, as
the sandbox has a /tmp of its own.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Iterator
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from autograder.examples import Sample, build_course, probe_said, read_probe
from autograder.isolation import sandbox
from autograder.isolation.staging import AUTOGRADER, build_staging
from autograder.pipeline.worker.verdicts import parse_report
from tests.test_grading_corpus import _rows, probe_reports

pytestmark = [pytest.mark.sandbox, pytest.mark.usefixtures("sandbox_required")]

REPO = Path(__file__).resolve().parents[1]
# A hidden check module and the module holding the seed salt: what a backup would hold.
SECRETS = ("checks/a01_attention.py", "authoring/hidden_draws.py")


@pytest.fixture
def planted() -> Iterator[Path]:
    """A world-readable copy of SECRETS in /var/tmp, outside the checkout and the course."""
    folder = Path(tempfile.mkdtemp(prefix="attention-lab-planted-", dir="/var/tmp"))
    try:
        for name in SECRETS:
            copy = folder / "autograder" / name
            copy.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(AUTOGRADER / name, copy)
        for path in [folder, *folder.rglob("*")]:
            path.chmod(0o755 if path.is_dir() else 0o644)
        yield folder
    finally:
        shutil.rmtree(folder)


def _unneeded_names(folder: Path) -> list[str]:
    """Entries of ``folder`` that lead to nothing the sandbox mounts (a venv inside the checkout,
    the interpreter under $HOME still show as the way to them)."""
    needed = {
        path.relative_to(folder).parts[0]
        for path in sandbox.sandbox_system_paths()
        if folder in path.parents
    }
    return sorted(set(os.listdir(folder)) - needed)


@pytest.mark.slow
def test_a_planted_copy_of_the_secrets_is_out_of_reach_and_honest_work_keeps_full_marks(
    tmp_path: Path, planted: Path
):
    files = [
        *(planted / "autograder" / name for name in SECRETS),
        *(AUTOGRADER / name for name in SECRETS),
        REPO / "solutions" / "01_attention" / "01_attention.ipynb",
        REPO / "pyproject.toml",
        Path("/etc/shadow"),
    ]
    folders = {folder: _unneeded_names(folder) for folder in (REPO, Path.home(), planted)}
    assert all(path.is_file() for path in files[:-1]) and folders[REPO] and folders[planted]
    sample = Sample(
        "planter", "hostile", "ok", True, extra=lambda outside: read_probe(outside, files, folders)
    )
    course = tmp_path / "course"
    build_course(course, [sample])
    command = [sys.executable, "-m", "autograder", "grade", "01_attention", "--course"]
    command += [str(course), "--workers", "1", "--cell-timeout", "20", "--no-feedback"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=500)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    row = _rows(course)["planter"]
    assert probe_reports(course, ("planter",)) == {"planter": probe_said([])}
    assert float(row["score"]) == float(row["max_score"]) and row["verdict"] == "ok", row
    # matplotlib works from the allow-list alone: every cell that draws a figure ran without an
    # error in the grading run (which shows no figure of its own: the graded copy keeps what was
    # submitted).
    graded = course / "grading" / "autograded" / "planter" / "01_attention" / "01_attention.ipynb"
    plots = [c for c in nbformat.read(graded, 4).cells if c.source.endswith("plt.show()")]
    assert plots and all(c.execution_count for c in plots), plots
    notes = [o.get("text", "") for c in plots for o in c.outputs]
    assert not any("[grading run]" in note for note in notes), notes


def _run_in_sandbox(
    tmp_path: Path, code: str, assignment: str = "01_attention", **options
) -> sandbox.SandboxResult:
    """Run ``code`` in tmp_path/work with the staging folder of ``assignment`` on PYTHONPATH, as
    the grader runs the runner."""
    staging = build_staging(tmp_path / "site", assignment)
    workdir = tmp_path / "work"
    workdir.mkdir(exist_ok=True)
    env = {**sandbox.default_env(), "PYTHONPATH": str(staging)}
    return sandbox.run_sandboxed(
        [sys.executable, "-c", textwrap.dedent(code)],
        workdir=workdir,
        env=env,
        readonly_binds=[staging],
        limits=sandbox.Limits(wall_seconds=120),
        **options,
    )


def test_attention_lab_comes_from_the_staging_folder_and_the_checks_from_nowhere(tmp_path):
    code = """
        import importlib.util, sys
        import attention_lab
        print(attention_lab.__file__)
        print(importlib.util.find_spec("autograder.checks"))
        print(sorted(sys.modules["autograder"].__dict__.get("__path__", [])))
        """
    result = _run_in_sandbox(tmp_path, code)
    assert result.verdict == "ok", result.stderr
    package, checks, autograder_path = result.stdout.splitlines()
    assert package == str(tmp_path / "site" / "attention_lab" / "__init__.py")
    assert checks == "None"
    assert autograder_path == repr([str(tmp_path / "site" / "autograder")])


@pytest.mark.slow  # a sandbox per assignment: kept out of the fast tier
@pytest.mark.parametrize(
    "assignment", ["01_attention", "03_transformer_block", "07_attention_at_scale"]
)
def test_a_submission_cannot_import_the_reference_of_its_own_assignment(tmp_path, assignment):
    """The old paste: import the answer from the package. In the sandbox grading N, the modules
    of N and later are not there; the earlier ones are, for the notebook's own imports."""
    references = sorted(p.stem for p in (REPO / "attention_lab" / "reference").glob("a*.py"))
    code = f"""
        import importlib
        for name in {references!r}:
            try:
                importlib.import_module(f"attention_lab.reference.{{name}}")
                print(name, "imported")
            except ModuleNotFoundError as error:
                print(name, type(error).__name__, error.name)
        """
    result = _run_in_sandbox(tmp_path, code, assignment)
    assert result.verdict == "ok", result.stderr
    for name in references:
        module = f"attention_lab.reference.{name}"
        expected = "imported" if name[1:] < assignment else f"ModuleNotFoundError {module}"
        assert f"{name} {expected}" in result.stdout.splitlines(), result.stdout


FORGE = """
import glob, json, os, stat
line = json.dumps({"cell": {"index": 2, "status": "ok", "outputs": [], "execution_count": 3}})
reached = []
for fd in range(3, 256):  # the kernel's own descriptors, pipes only: sockets would kill it
    try:
        if stat.S_ISFIFO(os.fstat(fd).st_mode):
            os.write(fd, (line + "\\n").encode())
            reached.append(fd)
    except OSError:
        pass
for path in glob.glob("/proc/[0-9]*/fd/*"):  # every process's, the runner's among them
    try:
        if stat.S_ISFIFO(os.stat(path).st_mode):
            fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
            os.write(fd, (line + "\\n").encode())
            os.close(fd)
            reached.append(path)
    except OSError:
        pass
print("reached", reached, flush=True)
"""


@pytest.mark.slow
def test_the_kernel_cannot_write_into_the_report(tmp_path):
    notebook = new_notebook(
        cells=[new_code_cell("print('honest')"), new_code_cell(FORGE), new_code_cell("1 / 0")]
    )
    (tmp_path / "work").mkdir()
    nbformat.write(notebook, tmp_path / "work" / "nb.ipynb")
    code = f"""
        import sys
        from autograder.isolation.runner import main
        sys.exit(main(["nb.ipynb", "--report-fd", "{sandbox.REPORT_FD}", "--cell-timeout", "60"]))
        """
    result = _run_in_sandbox(tmp_path, code, report_bytes=1 << 20)
    assert result.verdict == "ok", result.stderr
    report = parse_report(result.report)
    # The forger wrote only into pipes of its own: its reply pipe to the runner, which reads a
    # line for another cell as a broken kernel, restarts it and goes on.  The report is intact.
    assert [(c["index"], c["status"]) for c in report["cells"]] == [
        (0, "ok"),
        (1, "crashed"),
        (2, "error"),
    ]
    assert report["cells"][2]["ename"] == "ZeroDivisionError" and report["restarts"] == 1
