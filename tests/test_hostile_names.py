"""Student folder names are data: whatever their bytes, the batch finishes and shows them escaped.

One batch holds an honest submission under a plain name and copies of honest submissions under a
Latin-1 name (not UTF-8, as some zip tools write it), a name that is a spreadsheet formula, and a
name with a terminal escape sequence and a newline that would print a forged table row.
"""

from __future__ import annotations

import csv
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.examples import UNSCALED, Sample, build_course
from autograder.pipeline.course.course import tool_env

pytestmark = [pytest.mark.slow, pytest.mark.sandbox]

ASSIGNMENT = "01_attention"
LATIN1 = os.fsdecode(b"jos\xe9")
FORMULA = "=cmd|' calc'!A0"  # a folder name holds no slash, so no URL: a DDE formula instead
ESCAPES = "eve\x1b[31m\nmallory  13 of 13  ok"


def test_hostile_folder_names_are_graded_or_refused_and_shown_escaped(tmp_path: Path):
    build_course(
        tmp_path,
        [
            Sample("ada", "correct", "ok", True),
            Sample("alan", "mistake", "ok", False, answers={"attention": UNSCALED}),
        ],
    )
    submitted = tmp_path / "grading" / "submitted"
    shutil.copytree(submitted / "ada", submitted / LATIN1)
    shutil.copytree(submitted / "alan", submitted / FORMULA)
    shutil.copytree(submitted / "ada", submitted / ESCAPES)
    done = subprocess.run(
        [sys.executable, "-m", "autograder", "grade", ASSIGNMENT, "--course", str(tmp_path)]
        + ["--workers", "2", "--no-feedback", "--cell-timeout", "60"],
        env=tool_env(OMP_NUM_THREADS="1"),
        capture_output=True,
        timeout=600,
    )
    stdout = done.stdout.decode("utf-8", "replace")
    assert done.returncode == 0, stdout + done.stderr.decode("utf-8", "replace")
    # No control character reaches the terminal but the table's own line breaks.
    assert not [c for c in stdout if not c.isprintable() and c != "\n"], stdout
    assert "\nmallory  13 of 13  ok" not in stdout
    rows = {line.split()[0]: line for line in stdout.splitlines() if line[:1].isalnum()}
    assert "15/21" in rows["ada"] and "ok" in rows["ada"]  # of total_max, manual points included
    assert "invalid name" in rows["jos\\udce9"]  # refused, and said so, escaped
    assert "invalid name" in rows["eve\\x1b[31m\\nmallory"]  # refused, shown escaped

    with open(tmp_path / "grading" / f"{ASSIGNMENT}_grades.csv", newline="") as handle:
        table = list(csv.reader(handle))
    assert len(table) == 1 + 5  # the header and every submission
    for row in table[1:]:
        for cell in row:
            assert cell[:1] not in ("=", "+", "-", "@"), row  # no cell is a formula
    by_name = {row[0]: row for row in table[1:]}
    formula_row = by_name["'" + FORMULA]
    assert formula_row[1] == "ok" and formula_row[2] == by_name["alan"][2]  # graded as alan
