"""Every command the README and docs/ show in a ```bash block still works as shown, so the docs
cannot rot.

Each command is checked by what it is, cheaply (the fast tier): ``python -m autograder ...`` must
parse with the command's own parser (its subcommand exists and takes every option shown), an
``nbgrader`` subcommand must exist and take the flags shown, ``jupyter lab``, ``dask`` and
``pytest`` must be installed, with the markers, plugins and options shown, and every file or
folder named must exist.  The cheap ones also run: the ``secret`` commands, in a scratch course.
The expensive ones (grading, the demo, a release, generating and exporting) run in the tests of
their own (test_demo.py, test_course_flow.py, test_release.py, test_nbgrader_roundtrip.py); here
they only parse.  A command no rule knows fails the test: add a rule when the docs show a new
kind of command.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from autograder.pipeline import cli

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
# What the Slurm example in docs/scale.md does around the grading command: shell and Slurm.
SHELL = {"source", "export", "sleep"}
EXAMPLE_ENV = {"HOME": "/home/instructor", "SLURM_JOB_ID": "1234"}


def bash_blocks(text: str) -> list[str]:
    """The contents of every ```bash fenced block of a markdown page."""
    blocks, language, lines = [], None, []
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("```"):
            if language is None:
                language, lines = stripped[3:] or "text", []
            else:
                if language == "bash":
                    blocks.append("\n".join(lines))
                language = None
        elif language is not None:
            lines.append(line)
    return blocks


def commands(block: str) -> list[list[str]]:
    """The commands of a block as words: continuation lines joined, comments dropped, variables
    that the block assigns expanded, ``a && b`` split, Slurm's ``srun`` and ``&`` taken off."""
    env = dict(EXAMPLE_ENV)
    found = []
    for line in block.replace("\\\n", " ").splitlines():
        words = shlex.split(line, comments=True)
        if not words:
            continue
        if re.match(r"[A-Z_]+=", line):  # NAME="value": the block's own variable
            name, _, value = line.partition("=")
            env[name] = shlex.split(value, comments=True)[0]
            continue
        expanded = []
        for word in words:
            value = re.sub(r"\$(\w+)", lambda m: env.get(m[1], m[0]), word)
            expanded += value.split() if word.startswith("$") else [value]
        command: list[str] = []
        for word in [*expanded, "&&"]:
            if word == "&&":
                found.append([w for w in command if w != "&"])
                command = []
            else:
                command.append(word)
    return [c[1:] if c[0] == "srun" else c for c in found if c]


COMMANDS = [
    pytest.param(words, id=f"{page.name}: {' '.join(words)[:70]}")
    for page in PAGES
    for block in bash_blocks(page.read_text())
    for words in commands(block)
]


def test_the_docs_show_commands():
    assert len(COMMANDS) >= 25, [c.values[0] for c in COMMANDS]


def _markers() -> set[str]:
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    return {line.split(":")[0] for line in declared["markers"]}


def _check_pytest(args: list[str]) -> None:
    if "-n" in args:
        import xdist  # noqa: F401  (pytest-xdist gives -n and --dist)
    if "-m" in args:
        expression = args[args.index("-m") + 1]
        words = set(re.findall(r"\w+", expression)) - {"not", "and", "or"}
        assert words <= _markers(), f"{expression}: markers not declared in pyproject.toml"
    for word in args:
        if not word.startswith("-") and "/" in word:
            assert (ROOT / word).exists() or word.startswith("grading/"), word
    if "--submission" in args:
        conftest = (ROOT / "autograder" / "suite" / "conftest.py").read_text()
        assert 'addoption("--submission"' in conftest


def _check_nbgrader(args: list[str]) -> None:
    from nbgrader.apps import NbGraderApp

    subcommands = NbGraderApp.subcommands
    assert args[0] in subcommands, f"nbgrader has no subcommand {args[0]!r}"
    app = subcommands[args[0]][0]
    if isinstance(app, str):
        module, _, name = app.rpartition(".")
        app = getattr(__import__(module, fromlist=[name]), name)
    for word in args[1:]:
        if word.startswith("--"):
            option = word[2:].split("=")[0]
            assert option in app.flags or option in app.aliases, f"nbgrader {args[0]}: {word}?"


def _check(words: list[str]) -> None:
    """Fail unless ``words`` is a command the project still accepts as shown."""
    if words[0] in SHELL or words[0].startswith("#"):
        return
    if words[:3] == ["python", "-m", "autograder"]:
        try:
            cli._parser().parse_args(words[3:])
        except SystemExit as exit:
            pytest.fail(f"`{' '.join(words)}` does not parse (exit {exit.code})")
    elif words[:3] == ["python", "-m", "pip"]:
        assert words[3:5] == ["install", "-r"] or "--index-url" in words, words
        if words[3:5] == ["install", "-r"]:
            assert (ROOT / words[5]).is_file()
    elif words[:3] == ["python", "-m", "pytest"]:
        _check_pytest(words[3:])
    elif words[0] == "nbgrader":
        _check_nbgrader(words[1:])
    elif words[:2] == ["jupyter", "lab"]:
        import jupyterlab  # noqa: F401

        for word in words[2:]:
            assert word.startswith("--") or (ROOT / word).is_dir(), word
    elif words[:2] in (["dask", "scheduler"], ["dask", "worker"]):
        import distributed  # noqa: F401  (its options: test_dask_options_exist)
    elif words[0] == "python" and words[1].startswith("scripts/"):
        shown = subprocess.run(
            [sys.executable, str(ROOT / words[1]), "--help"], capture_output=True, text=True
        )
        assert shown.returncode == 0, shown.stderr
        for word in words[2:]:
            assert not word.startswith("--") or word in shown.stdout, f"{words[1]}: {word}?"
    elif words[0] == "scripts/lock.sh":
        assert os.access(ROOT / words[0], os.X_OK), f"{words[0]} is not executable"
        # It hands its arguments to `uv pip compile` (uv comes with the dev extra).
        uv = Path(sys.executable).with_name("uv")
        shown = subprocess.run([uv, "pip", "compile", "--help"], capture_output=True, text=True)
        assert shown.returncode == 0, shown.stderr
        for word in words[1:]:
            assert not word.startswith("--") or word in shown.stdout, f"uv pip compile: {word}?"
    else:
        pytest.fail(f"no rule checks `{' '.join(words)}`: add one to tests/test_docs_commands.py")


@pytest.mark.parametrize("words", COMMANDS)
def test_every_command_in_the_docs_is_accepted(words: list[str]):
    _check(words)


def test_the_secret_commands_run_as_shown(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    every = [tuple(w[3:]) for w in (c.values[0] for c in COMMANDS) if w[3:4] == ["secret"]]
    shown = list(dict.fromkeys(every))  # in the order the pages show them, each once
    assert set(shown) >= {("secret", a) for a in ("init", "rotate", "show-path")}
    monkeypatch.setenv("ATTENTION_LAB_SECRET_FILE", str(tmp_path / "secret" / "course.key"))
    course = tmp_path / "course"
    course.mkdir()
    for words in shown:
        assert cli.main([*words, "--course", str(course)]) == 0, words
    assert (tmp_path / "secret" / "course.key").is_file()


def test_what_a_documented_demo_keeps_in_the_checkout_is_git_ignored():
    # The README's `demo --keep demo-course`, run from the checkout, left demo-course/ untracked.
    kept = [
        w[w.index("--keep") + 1]
        for w in (c.values[0] for c in COMMANDS)
        if w[3:4] == ["demo"] and "--keep" in w
    ]
    said = re.findall(r"demo --keep (\S+)", cli.demo_epilogue(Path("x"), "01_attention", False))
    assert kept and said
    ignored = (ROOT / ".gitignore").read_text().splitlines()
    for folder in {*kept, *said}:
        assert "/" not in folder.strip("/"), folder  # a folder of the checkout's root
        assert f"{folder.strip('/')}/" in ignored, f"{folder} is not in .gitignore"


@pytest.mark.slow
def test_the_dask_options_shown_exist():
    shown = [
        w
        for w in (c.values[0] for c in COMMANDS)
        if w[:2] in (["dask", "scheduler"], ["dask", "worker"])
    ]
    assert shown
    for words in shown:
        result = subprocess.run(
            [sys.executable, "-m", "distributed.cli.dask_" + words[1], "--help"],
            capture_output=True,
            text=True,
        )
        for option in (w.split("=")[0] for w in words if w.startswith("--")):
            assert option in result.stdout, f"`dask {words[1]}` has no {option}"
