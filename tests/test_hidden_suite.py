"""The pytest suite in autograder/suite grades any notebook named on the command line."""

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]


def run_suite(notebook: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "autograder/suite",
            "--submission",
            notebook,
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_solution_passes_every_hidden_check():
    result = run_suite("solutions/01_attention/01_attention.ipynb")
    assert result.returncode == 0, result.stdout[-3000:]
    assert "test_attention_numpy: 2 of 2 points (3 of 3 checks passed)" in result.stdout


def test_stub_fails_with_diagnoses_and_no_check_source():
    result = run_suite("notebooks/01_attention/01_attention.ipynb")
    assert result.returncode == 1, result.stdout[-3000:]
    assert "[rows_sum_to_one_over_keys] not implemented yet" in result.stdout
    assert "hidden_generator(" not in result.stdout  # pytrace=False: no check source shown
    assert "test_attention_numpy: 0 of 2 points (0 of 3 checks passed)" in result.stdout
