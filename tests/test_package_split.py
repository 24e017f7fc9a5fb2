"""A student of assignment N has the tools and the reference answers of earlier assignments only,
at home (the release's bundle) and in the sandbox (the staging folder): for every N, no line of
a solution or hidden-test region of N or later is in either, no name that an answer of N or later
defines is defined by the package, and importing a reference of N or later fails there.

The bundles here are assembled from the committed notebooks/ (which tests/test_notebooks.py proves
equal to what nbgrader generates) and the release's own package copy, so no nbgrader run is
needed; tests/test_student_bundle.py builds real bundles and runs their notebooks.
"""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from autograder.isolation.staging import build_staging, copy_package
from autograder.pipeline.release import ROOT, assignments, leaks, released_with

ASSIGNMENTS = assignments()
REFERENCES = sorted(p.stem for p in (ROOT / "attention_lab" / "reference").glob("a[0-9]*.py"))


def _bundle(assignment: str, folder: Path) -> Path:
    """The bundle of ``assignment`` as the release assembles it, from the committed notebooks."""
    for name in released_with(assignment):
        shutil.copytree(ROOT / "notebooks" / name, folder / "notebooks" / name)
    copy_package(assignment, folder / "attention_lab", ROOT / "attention_lab")
    return folder


def _defined(source: str) -> set[str]:
    """The names a module (or a notebook cell) defines at its top level."""
    names = set()
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return names


def _answer_names(assignment: str) -> set[str]:
    """What the answers of ``assignment`` and later define: the names of their solution cells
    and of their reference modules."""
    later = ASSIGNMENTS[ASSIGNMENTS.index(assignment) :]
    names = set()
    for name in later:
        notebook = nbformat.read(ROOT / "solutions" / name / f"{name}.ipynb", 4)
        for cell in notebook.cells:
            if cell.cell_type == "code" and cell.metadata.get("nbgrader", {}).get("solution"):
                names |= _defined(cell.source)
        module = ROOT / "attention_lab" / "reference" / f"a{name}.py"
        if module.exists():
            names |= {n for n in _defined(module.read_text()) if not n.startswith("_")}
    return names


def test_every_reference_module_answers_one_assignment():
    assert REFERENCES and all(name[1:] in ASSIGNMENTS for name in REFERENCES)


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_bundle_and_staging_of_each_assignment_hold_no_line_of_its_answers(assignment, tmp_path):
    bundle = _bundle(assignment, tmp_path / "bundle")
    staging = build_staging(tmp_path / "site", assignment)
    number = ASSIGNMENTS.index(assignment)
    for package in (bundle / "attention_lab", staging / "attention_lab"):
        shipped = sorted(p.stem for p in (package / "reference").glob("a*.py"))
        assert shipped == [f"a{name}" for name in ASSIGNMENTS[:number] if f"a{name}" in REFERENCES]
    assert leaks(bundle, assignment) == []
    assert leaks(staging, assignment) == []


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_no_name_an_answer_defines_is_defined_in_the_package_of_its_assignment(
    assignment, tmp_path
):
    package = copy_package(assignment, tmp_path / "attention_lab", ROOT / "attention_lab")
    answers = _answer_names(assignment)
    for module in sorted(package.rglob("*.py")):
        found = _defined(module.read_text()) & answers
        assert not found, f"{module.relative_to(tmp_path)} defines answers of {assignment}: {found}"


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_a_reference_of_this_or_a_later_assignment_cannot_be_imported_in_its_staging(
    assignment, tmp_path
):
    staging = build_staging(tmp_path / "site", assignment)
    # -S: the staging folder alone, not the editable checkout that site-packages points to.
    probe = (
        "import importlib.util, sys\n"
        f"sys.path.insert(0, {str(staging)!r})\n"
        "for name in sys.argv[1:]:\n"
        "    try:\n"
        "        found = importlib.util.find_spec(f'attention_lab.reference.{name}') is not None\n"
        "    except ModuleNotFoundError:\n"
        "        found = False\n"
        "    print(name, found)\n"
    )
    shown = subprocess.run(
        [sys.executable, "-S", "-c", probe, *REFERENCES],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout.split("\n")
    for name in REFERENCES:
        expected = name[1:] < assignment
        assert f"{name} {expected}" in shown, f"{assignment}: {name} importable is not {expected}"


def test_the_instructors_checkout_keeps_every_reference():
    import attention_lab

    assert Path(attention_lab.__file__).parent == ROOT / "attention_lab"
    for name in REFERENCES:
        __import__(f"attention_lab.reference.{name}")
