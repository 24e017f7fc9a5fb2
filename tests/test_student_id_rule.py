"""One student-id rule: the batch's folder names, the roster's ids and ``extend``'s argument are
judged by the same function (autograder/pipeline/intake/student_ids.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from autograder.pipeline.cli import main
from autograder.pipeline.intake.roster import RosterError, read_roster
from autograder.pipeline.intake.student_ids import student_id_problem

REFUSED = ["", ".", "..", "a/b", " ada", "ada ", "eve\x1b[31m", "jos\udce9", "zero\u200bwidth"]
ACCEPTED = ["ada", "zoë", "o'brien", "李雷", "ada.lovelace"]


def test_the_rule_refuses_what_cannot_be_a_folder_or_a_printed_key_and_says_why():
    assert all(student_id_problem(student) for student in REFUSED)
    assert not [student for student in ACCEPTED if student_id_problem(student)]


@pytest.mark.parametrize("student", REFUSED)
def test_extend_refuses_every_id_the_rule_refuses(student: str, tmp_path: Path, capsys):
    assert main(["extend", "01_attention", student, "--days", "1", "--course", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "expected a student id" in err and "\x1b" not in err, err


@pytest.mark.parametrize("student", [s for s in REFUSED if s == s.strip() and s])
def test_a_roster_refuses_every_id_the_rule_refuses(student: str, tmp_path: Path):
    roster = tmp_path / "roster.csv"
    roster.write_text(f"student,canvas_id\n{student},1\n", errors="surrogateescape")
    with pytest.raises(RosterError):
        read_roster(roster)
