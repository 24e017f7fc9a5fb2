"""The student notebooks are exactly what nbgrader makes of solutions/, and fail only at TODOs."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import start_new_kernel
from nbclient import NotebookClient

from autograder.pipeline.course.course import NBGRADER

ROOT = Path(__file__).resolve().parents[1]
ASSIGNMENTS = sorted(p.name for p in (ROOT / "solutions").iterdir() if p.is_dir())
ALLOWED_STUDENT_ERRORS = {"NotImplementedError", "NameError"}
# The widest code line a notebook may have (issue 25): wider signatures, docstrings and
# assertion messages made students scroll a code cell sideways in JupyterLab.
CELL_WIDTH = 88
# The Python the notebooks are committed with: the oldest the course supports (pyproject's
# requires-python). A notebook's language_info.version is compared by major.minor only, so that
# the fast tier passes on any Python the course supports (3.11, 3.12, 3.13), whatever its patch.
COURSE_PYTHON = "3.11"
# What JupyterLab writes into a notebook it opens with this course's python3 kernel: the kernel
# spec, and the language_info of the kernel's kernel_info reply (its version checked apart, see
# COURSE_PYTHON). Committed as is, so that opening a notebook on the course's Python leaves git
# clean but for the patch number; nbgrader generate_assignment copies it from solutions/ to
# notebooks/.
JUPYTERLAB_METADATA = {
    "kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"},
    "language_info": {
        "codemirror_mode": {"name": "ipython", "version": 3},
        "file_extension": ".py",
        "mimetype": "text/x-python",
        "name": "python",
        "nbconvert_exporter": "python",
        "pygments_lexer": "ipython3",
    },
}


def major_minor(version: str) -> str:
    """ "3.11.7" -> "3.11"."""
    return ".".join(version.split(".")[:2])


def without_version(metadata: dict) -> dict:
    """The metadata with language_info's version left out (it is compared by major_minor)."""
    info = {k: v for k, v in metadata.get("language_info", {}).items() if k != "version"}
    return {**metadata, "language_info": info}


def test_the_course_python_is_the_oldest_supported():
    import tomllib

    requires = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["requires-python"]
    assert requires == f">={COURSE_PYTHON}", requires


def notebook_path(folder: str, assignment: str) -> Path:
    return ROOT / folder / assignment / f"{assignment}.ipynb"


def nbgrader_meta(cell) -> dict:
    return cell.metadata.get("nbgrader", {})


def marked_region(source: str, begin: str, end: str) -> list[str]:
    """The non-blank lines between begin and end markers."""
    lines, inside = [], False
    for line in source.splitlines():
        if begin in line:
            inside = True
        elif end in line:
            inside = False
        elif inside and line.strip():
            lines.append(line.strip())
    return lines


def test_every_assignment_has_a_student_notebook():
    assert ASSIGNMENTS, "no assignments found under solutions/"
    released = sorted(p.name for p in (ROOT / "notebooks").iterdir() if p.is_dir())
    assert released == ASSIGNMENTS


@pytest.mark.parametrize("folder", ["solutions", "notebooks"])
def test_committed_notebooks_carry_no_outputs(folder):
    for path in sorted((ROOT / folder).glob("*/*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        for index, cell in enumerate(nb.cells):
            if cell.cell_type == "code":
                assert cell.outputs == [], f"{path.name} cell {index} has outputs"
                assert cell.execution_count is None, f"{path.name} cell {index} has a count"


@pytest.mark.parametrize("folder", ["solutions", "notebooks"])
def test_code_cells_fit_the_cell_width(folder):
    too_wide = []
    for path in sorted((ROOT / folder).glob("*/*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        for cell in nb.cells:
            if cell.cell_type != "code":
                continue
            for number, line in enumerate(cell.source.splitlines(), start=1):
                if len(line) > CELL_WIDTH:
                    too_wide.append(
                        f"{path.relative_to(ROOT)} cell {cell.id} line {number} "
                        f"({len(line)} columns): {line.strip()[:60]}"
                    )
    assert not too_wide, (
        f"{len(too_wide)} code lines are wider than {CELL_WIDTH} columns:\n" + "\n".join(too_wide)
    )


@pytest.mark.parametrize("folder", ["solutions", "notebooks"])
def test_committed_notebooks_carry_the_metadata_jupyterlab_writes(folder):
    stale = []
    for path in sorted((ROOT / folder).glob("*/*.ipynb")):
        metadata = nbformat.read(path, as_version=4).metadata
        version = major_minor(metadata.get("language_info", {}).get("version", ""))
        if without_version(metadata) != JUPYTERLAB_METADATA or version != COURSE_PYTHON:
            stale.append(path.parent.name)
    assert not stale, (
        f"{folder}/ {stale}: opening these in JupyterLab rewrites their metadata and dirties git; "
        f"set each notebook's metadata to {json.dumps(JUPYTERLAB_METADATA)} in solutions/, with "
        f'language_info.version "{COURSE_PYTHON}.x", then regenerate the student copy with '
        "`nbgrader generate_assignment <assignment> --force`"
    )


@pytest.mark.slow
def test_the_kernel_reports_the_committed_language_info():
    manager, client = start_new_kernel(kernel_name="python3")
    try:
        reply = client.kernel_info(reply=True, timeout=60)
        spec = KernelSpecManager().get_kernel_spec("python3")
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)
    info = reply["content"]["language_info"]
    shown = without_version({"language_info": info})["language_info"]
    assert shown == without_version(JUPYTERLAB_METADATA)["language_info"]
    assert major_minor(info["version"]) == f"{sys.version_info.major}.{sys.version_info.minor}"
    assert (spec.display_name, spec.language) == (
        JUPYTERLAB_METADATA["kernelspec"]["display_name"],
        JUPYTERLAB_METADATA["kernelspec"]["language"],
    )


@pytest.mark.slow
@pytest.mark.sandbox  # 40 s of a worker (tests/tiers.py)
def test_student_notebooks_are_exactly_what_nbgrader_generates(tmp_path):
    shutil.copy(ROOT / "nbgrader_config.py", tmp_path)
    shutil.copytree(ROOT / "solutions", tmp_path / "solutions")
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    problems = []  # every assignment is regenerated, so one report names all that are stale
    for assignment in ASSIGNMENTS:
        result = subprocess.run(
            [*NBGRADER, "generate_assignment", assignment, "--force"],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
        )
        if result.returncode != 0:
            problems.append(f"{assignment}: nbgrader failed:\n{result.stderr[-3000:]}")
            continue
        generated_path = tmp_path / "notebooks" / assignment / f"{assignment}.ipynb"
        generated = nbformat.read(generated_path, as_version=4)
        committed = nbformat.read(notebook_path("notebooks", assignment), as_version=4)
        if without_version(generated.metadata) != JUPYTERLAB_METADATA:
            problems.append(
                f"{assignment}: the generated metadata is not what JupyterLab writes: set "
                f"solutions/{assignment}'s to JUPYTERLAB_METADATA (tests/test_notebooks.py)"
            )
        if committed != generated:
            problems.append(
                f"notebooks/{assignment} is stale: "
                f"run `nbgrader generate_assignment {assignment} --force`"
            )
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_student_notebook_hides_solutions_and_hidden_tests(assignment):
    source = nbformat.read(notebook_path("solutions", assignment), as_version=4)
    student_text = notebook_path("notebooks", assignment).read_text()
    for marker in ("BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS", "END HIDDEN TESTS"):
        assert marker not in student_text
    student = nbformat.read(notebook_path("notebooks", assignment), as_version=4)
    student_lines = {line.strip() for cell in student.cells for line in cell.source.splitlines()}
    for cell in source.cells:
        secret = marked_region(cell.source, "BEGIN SOLUTION", "END SOLUTION")
        secret += marked_region(cell.source, "BEGIN HIDDEN TESTS", "END HIDDEN TESTS")
        # Short lines such as `return out` may legitimately appear elsewhere.
        leaked = [line for line in secret if len(line) > 25 and line in student_lines]
        assert not leaked, f"{assignment}: solution or hidden-test lines leaked: {leaked[:3]}"


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
@pytest.mark.slow
def test_student_notebook_fails_only_at_its_todos(assignment, tmp_path):
    nb = nbformat.read(notebook_path("notebooks", assignment), as_version=4)
    client = NotebookClient(
        nb,
        timeout=120,
        allow_errors=True,
        kernel_name="python3",
        resources={"metadata": {"path": str(tmp_path)}},
    )
    client.execute()

    first_todo = next(
        i
        for i, cell in enumerate(nb.cells)
        if cell.cell_type == "code" and nbgrader_meta(cell).get("solution")
    )
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        errors = [out for out in cell.outputs if out.output_type == "error"]
        meta = nbgrader_meta(cell)
        if meta.get("solution"):
            assert "raise NotImplementedError()" in cell.source, f"cell {index} has no stub"
        if index < first_todo:
            assert not errors, f"cell {index} fails before the first TODO: {errors[0].evalue}"
        for error in errors:
            assert error.ename in ALLOWED_STUDENT_ERRORS, (
                f"cell {index} raised {error.ename}: {error.evalue}"
            )
        if meta.get("grade"):
            # An untouched stub must not earn the points of any graded test cell.
            assert errors, f"graded cell {meta['grade_id']} passes without a solution"
