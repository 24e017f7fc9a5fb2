"""The sources pass ruff with the project's configuration (pyproject.toml): lint and format.

That covers the Python sources and the solution notebooks; the student notebooks are generated
from the solutions and excluded there.
"""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def ruff(*args: str) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "ruff", *args, "--no-cache", "."]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True)


def test_ruff_check_is_clean():
    result = ruff("check")
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]


def test_ruff_format_leaves_everything_as_it_is():
    result = ruff("format", "--check")
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]


def test_generated_notebooks_are_outside_lint_and_format():
    listed = ruff("check", "--show-files").stdout
    assert "solutions/01_attention/01_attention.ipynb" in listed
    assert "notebooks/" not in listed.replace(str(ROOT), "")
