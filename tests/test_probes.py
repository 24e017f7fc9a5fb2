"""The sandbox probes can fail: graded without the sandbox, each reaches what it looks for.

tests/test_grading_corpus.py grades the probes (eve, h08-gradebook, h09-solutions, h10-socket)
in the sandbox and expects full marks.  That proves something only if a leak would cost points,
so here the same submissions are graded with ``--unsafe-no-sandbox``: every probe must report
each of its targets as reached and lose its points, while an honest submission graded beside
them keeps full marks (so the lost points are the probes' doing, not the grader's).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from autograder.examples import build_course, find_outside, probe_said
from tests.test_grading_corpus import CORPUS, PROBES, BeaconServer, _rows, probe_reports

HONEST = "ada"


@pytest.mark.slow
@pytest.mark.sandbox  # grades five notebooks: the complete tier's only (tests/tiers.py)
def test_every_probe_loses_its_points_without_the_sandbox(tmp_path: Path):
    course = tmp_path / "course"
    samples = [s for s in CORPUS if s.student in (HONEST, *PROBES)]
    assert len(samples) == 1 + len(PROBES) == 5
    with BeaconServer() as server:
        build_course(course, samples, beacon=server.beacon)
        command = [
            sys.executable,
            "-m",
            "autograder",
            "grade",
            "01_attention",
            "--course",
            str(course),
            "--unsafe-no-sandbox",
            "--workers",
            "2",
            "--cell-timeout",
            "20",
            "--time-limit",
            "120",
            "--no-feedback",
        ]
        done = subprocess.run(command, capture_output=True, text=True, timeout=500)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "sandbox: none (--unsafe-no-sandbox)" in done.stderr

    rows = _rows(course)
    assert float(rows[HONEST]["score"]) == float(rows[HONEST]["max_score"]), rows[HONEST]
    for student in PROBES:
        assert float(rows[student]["score"]) == 0, rows[student]  # every graded cell lost

    # Each probe reached every one of its targets: the paths it was given are the real ones.
    outside = find_outside(course)
    solutions = [str(p) for p in outside.solutions]
    checks = [str(p) for p in outside.hidden_checks]
    gradebook = str(outside.gradebook)
    beacon = f"{server.beacon.host}:{server.beacon.port}"
    assert probe_reports(course, PROBES) == {
        "eve": probe_said([*solutions, *checks, gradebook]),
        "h08-gradebook": probe_said([gradebook]),
        "h09-solutions": probe_said([*solutions, *checks]),
        "h10-socket": probe_said([beacon]),
    }
    assert server.connections == 1  # h10's, and no one else's
