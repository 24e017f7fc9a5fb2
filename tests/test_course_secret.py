"""The course secret: made once per course, rotated per term, kept outside the course, the
repository and the sandbox, and read by the grading command, which says which one it uses."""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

import pytest

from autograder.authoring import hidden_seeds
from autograder.isolation.sandbox import sandbox_system_paths
from autograder.isolation.staging import secret_paths
from autograder.pipeline.cli import main
from autograder.pipeline.course.course import GradingError
from autograder.pipeline.course.course_secret import (
    SECRET_FILE_ENV,
    check_location,
    course_secret,
    default_secret_path,
    secret_path,
)
from autograder.pipeline.engines.dask_engine import GradingSetup
from autograder.pipeline.worker.one_submission import warm_up

HEX_SECRET = re.compile(r"[0-9a-f]{64}\n")


@pytest.fixture
def config_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty $XDG_CONFIG_HOME, and no secret file named by the environment."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv(SECRET_FILE_ENV, raising=False)
    return tmp_path / "config"


@pytest.fixture
def course(tmp_path: Path) -> Path:
    """A course folder nbgrader can load, with nothing in it."""
    root = tmp_path / "course"
    root.mkdir()
    (root / "nbgrader_config.py").write_text("c = get_config()\n")
    return root


def test_init_makes_one_private_secret_per_course_under_the_config_home(
    config_home: Path, course: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    assert main(["secret", "init", "--course", str(course)]) == 0
    path = default_secret_path(course)
    assert path.parent == config_home / "attention-lab" / "secrets"
    assert HEX_SECRET.fullmatch(path.read_text())
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert f"course secret made: {path}" in capsys.readouterr().out
    other = tmp_path / "other-term" / "course"
    assert default_secret_path(other) != path  # keyed by the course folder
    assert main(["secret", "show-path", "--course", str(course)]) == 0
    assert capsys.readouterr().out == f"{path}\n"


def test_init_never_overwrites_and_rotate_keeps_nothing_of_the_old_secret(
    config_home: Path, course: Path, capsys: pytest.CaptureFixture[str]
):
    assert main(["secret", "rotate", "--course", str(course)]) == 2
    assert "no course secret at" in capsys.readouterr().err
    assert main(["secret", "init", "--course", str(course)]) == 0
    path = default_secret_path(course)
    first = path.read_text()
    assert main(["secret", "init", "--course", str(course)]) == 2
    assert "already exists" in capsys.readouterr().err and path.read_text() == first
    assert main(["secret", "rotate", "--course", str(course)]) == 0
    assert HEX_SECRET.fullmatch(path.read_text()) and path.read_text() != first
    assert os.listdir(path.parent) == [path.name]  # no copy, no temporary file


def test_the_lookup_takes_the_option_then_the_environment_then_the_default(
    config_home: Path, course: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    assert secret_path(course) == default_secret_path(course)
    monkeypatch.setenv(SECRET_FILE_ENV, str(tmp_path / "from-environment"))
    assert secret_path(course) == tmp_path / "from-environment"
    assert secret_path(course, tmp_path / "given") == tmp_path / "given"


def test_a_secret_where_students_or_git_could_reach_it_is_refused(course: Path):
    for inside in (course / "secret", secret_paths()[0] / "secret"):
        with pytest.raises(GradingError, match="lies inside .*: keep it outside"):
            check_location(inside, course)
    assert Path("/usr/lib") in sandbox_system_paths()  # the loader's, shown read-only
    with pytest.raises(GradingError, match="a tree the grading sandbox shows"):
        check_location(Path("/usr/lib/attention-lab-secret"), course)


def test_the_default_and_the_test_runs_secret_lie_outside_every_tree_the_sandbox_shows(
    course: Path,
):
    for path in (default_secret_path(course), Path(os.environ[SECRET_FILE_ENV])):
        check_location(path, course)
        shown = [p for p in sandbox_system_paths() if path.resolve().is_relative_to(p.resolve())]
        assert not shown, (path, shown)


def test_a_secret_others_may_read_or_not_made_by_init_is_refused(course: Path, tmp_path: Path):
    path = tmp_path / "secret"
    with pytest.raises(GradingError, match=r"no course secret at .*secret init --course"):
        course_secret(course, path)
    path.write_text("ab" * 32)
    path.chmod(0o644)
    with pytest.raises(GradingError, match=r"can be read by others \(mode -rw-r--r--\)"):
        course_secret(course, path)
    path.chmod(0o600)
    assert course_secret(course, path) == bytes.fromhex("ab" * 32)
    path.write_text("hunter2")
    with pytest.raises(GradingError, match="should hold 64 hexadecimal digits.*got 7 characters"):
        course_secret(course, path)


def test_grading_without_a_course_secret_refuses_and_says_how_to_make_one(
    config_home: Path, course: Path, capsys: pytest.CaptureFixture[str]
):
    assert main(["grade", "01_attention", "--course", str(course)]) == 2
    error = capsys.readouterr().err
    assert f"no course secret at {default_secret_path(course)}" in error
    assert "python -m autograder secret init --course" in error
    assert "--development-secret" in error


def test_the_grading_command_says_which_secret_it_draws_from_in_its_first_lines(
    config_home: Path, course: Path, capsys: pytest.CaptureFixture[str]
):
    main(["grade", "01_attention", "--course", str(course), "--development-secret"])
    first_lines = capsys.readouterr().err.splitlines()[:2]
    assert first_lines[1].startswith("hidden seeds: the PUBLIC development secret"), first_lines
    assert main(["secret", "init", "--course", str(course)]) == 0
    path = default_secret_path(course)
    fingerprint = hidden_seeds.secret_fingerprint(bytes.fromhex(path.read_text()))
    capsys.readouterr()
    main(["grade", "01_attention", "--course", str(course)])
    first_lines = capsys.readouterr().err.splitlines()[:2]
    assert first_lines[1] == f"hidden seeds: course secret {path} (fingerprint {fingerprint})"


def test_a_grading_worker_draws_from_the_secret_its_set_up_brings():
    secret = b"a course secret from the set-up!"
    before = hidden_seeds.hidden_seed("a01 rows")
    try:
        warm_up("01_attention", {}, {}, secret)
        with hidden_seeds.secret_in_use(secret):
            expected = hidden_seeds.hidden_seed("a01 rows")
        assert hidden_seeds.hidden_seed("a01 rows") == expected != before
    finally:
        hidden_seeds.use_secret(hidden_seeds.DEVELOPMENT_SECRET)


def test_a_dask_set_up_carries_the_secret_under_a_name_that_does_not_reveal_it():
    this_term = GradingSetup("01_attention", {}, {}, True, b"this term's secret, 32 bytes long")
    next_term = GradingSetup("01_attention", {}, {}, True, b"next term's secret, 32 bytes long")
    assert this_term.name != next_term.name  # a worker set up last term is set up again
    assert this_term.secret.hex() not in this_term.name
