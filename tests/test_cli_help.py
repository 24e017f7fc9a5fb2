"""The command line says its defaults and, at the end of the demo, what it kept."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from autograder.pipeline import cli


def _subcommands() -> dict[str, argparse.ArgumentParser]:
    parser = cli._parser()
    (commands,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(commands.choices)


@pytest.mark.parametrize("name", sorted(_subcommands()))
def test_every_options_default_shows_in_help(name: str):
    parser = _subcommands()[name]
    shown = " ".join(parser.format_help().split())
    formatter = parser._get_formatter()
    missing = []
    for action in parser._actions:
        if not action.option_strings or isinstance(action, argparse._HelpAction):
            continue
        text = " ".join(formatter._expand_help(action).split())
        if "(default" not in text or text not in shown:
            missing.append(f"{'/'.join(action.option_strings)}: {text!r}")
    assert not missing, f"`python -m autograder {name} --help` gives no default for {missing}"


def test_demo_defaults_are_its_own():
    shown = " ".join(_subcommands()["demo"].format_help().split())
    assert "busy CPU (default: 20.0)" in shown  # set_defaults, not grade's 120


@pytest.mark.parametrize("keep", [False, True])
def test_the_demo_ends_saying_what_it_kept(
    keep: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
):
    import autograder.examples

    built = []
    monkeypatch.setattr(
        autograder.examples, "build_demo_course", lambda root: built.append(root) or (None, "01_a")
    )
    monkeypatch.setattr(cli, "run_grade", lambda *args, **kwargs: 0)
    monkeypatch.setattr(cli, "describe_bwrap", lambda: "sandbox: (not probed in this test)")
    argv = ["demo", "--keep", str(tmp_path / "kept")] if keep else ["demo"]
    assert cli.main(argv) == 0
    out = capsys.readouterr().out
    if keep:
        assert f"demo course kept in {tmp_path / 'kept'}" in out
        assert "01_a_grades.csv" in out and "feedback" in out
    else:
        assert not built[0].exists()
        assert f"demo course deleted: {built[0]} was a temporary folder" in out
        assert "python -m autograder demo --keep" in out


def test_the_demo_says_what_each_sample_student_shows():
    # Issue 41: the demo graded ten students without saying who does what, nor why similarity
    # flags several of them at 1.000.
    from autograder.examples import DEMO_CLASS

    assert all(len(s.about) > 10 for s in DEMO_CLASS), [s.student for s in DEMO_CLASS]
    said = cli.demo_cast(DEMO_CLASS).splitlines()
    for sample in DEMO_CLASS:
        (line,) = [line for line in said if line.split()[:1] == [f"{sample.student}:"]]
        assert line.endswith(sample.about), line
    assert any("similarity flags" in line and "1.000" in line for line in said), said
