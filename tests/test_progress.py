"""The grading command's progress (pipeline/records/report.py): a tqdm bar that keeps its clock
moving on a terminal and writes a log file only when something happens."""

from __future__ import annotations

import io
import threading
import time

import pytest
from tqdm import tqdm

from autograder.pipeline.engines.jobs_and_outcomes import Outcome
from autograder.pipeline.records.report import Progress

TICK = 0.02


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _done(student: str) -> Outcome:
    return Outcome(student, "ok", [], None, [], 0.0)


def _frames(text: str) -> list[str]:
    return [frame for frame in text.replace("\n", "\r").split("\r") if frame.strip()]


@pytest.fixture(autouse=True)
def fast_ticks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Progress, "TICK_SECONDS", TICK)


def test_in_a_log_file_the_bar_is_written_at_the_start_and_per_submission_only():
    log = io.StringIO()
    progress = Progress(3, log)
    progress.stage("checking that a sandbox can be built")
    progress.start()
    time.sleep(20 * TICK)
    assert len(_frames(log.getvalue())) == 2, log.getvalue()  # the stage line, the bar at 0/3
    for student in ("ada", "alan", "eve\x1b[31m"):
        progress(_done(student))
    progress.stage("comparing the answers")
    text = log.getvalue()
    frames = _frames(text)
    assert frames[0] == "[  0.0s] checking that a sandbox can be built"
    assert [frame.split("] ")[1].split()[0] for frame in frames[1:5]] == [
        "0/3",
        "1/3",
        "2/3",
        "3/3",
    ], frames
    assert frames[4].endswith("eve\\x1b[31m") and "\x1b" not in text  # shown escaped
    assert "ETA" in frames[2] and frames[5].endswith("comparing the answers")
    assert text.endswith("comparing the answers\n") and "3/3" in text.split("\n")[1]


def test_on_a_terminal_the_clock_moves_between_submissions_and_stops_with_the_bar():
    terminal = Terminal()
    progress = Progress(2, terminal)
    progress.start()
    deadline = time.monotonic() + 10
    while len(_frames(terminal.getvalue())) < 3 and time.monotonic() < deadline:
        time.sleep(TICK)
    assert len(_frames(terminal.getvalue())) >= 3, "the bar was not redrawn between submissions"
    progress.stage("a stage line goes above the bar")
    progress(_done("ada"))
    progress(_done("alan"))
    ended = terminal.getvalue()
    time.sleep(20 * TICK)
    assert terminal.getvalue() == ended and ended.endswith("\n")  # no redraw after the end
    assert "s] a stage line goes above the bar\n" in ended, ended


def test_the_bar_starts_no_thread_in_the_grading_process(monkeypatch: pytest.MonkeyPatch):
    """The grading process forks after the bar is shown (similarity.py): tqdm's monitor thread
    would be beside every such fork."""
    monkeypatch.setattr(tqdm, "monitor", None)  # one an earlier bar in this process started
    before = set(threading.enumerate())
    progress = Progress(2, io.StringIO())
    progress.start()
    progress(_done("ada"))
    started = [thread.name for thread in set(threading.enumerate()) - before]
    progress(_done("bob"))
    assert not started, f"threads the progress bar started: {started}"
