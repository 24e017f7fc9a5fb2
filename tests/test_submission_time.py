"""Submission times: timestamp.txt is a claim, read strictly; the exchange's ctime is evidence."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from autograder.pipeline.intake.submission_time import (
    UNVERIFIED,
    ClaimRefused,
    decide,
    exchange_receipt,
    parse_claim,
)

NOON = datetime(2026, 11, 20, 12, 0)


def _ctime(path: Path) -> datetime:
    """The inode change time of ``path``, naive UTC as the gradebook keeps it."""
    return datetime.fromtimestamp(os.lstat(path).st_ctime, UTC).replace(tzinfo=None)


@pytest.mark.parametrize(
    "text",
    [
        "2026-11-20 12:00:00.000000 UTC",  # nbgrader's own
        "2026-11-20T12:00:00Z",
        "2026-11-20T13:00:00+01:00",
        "2026-11-20 07:00:00-0500",
        "2026-11-20 13:00 Europe/Paris",
    ],
)
def test_accepted_forms_name_one_instant(text: str):
    assert parse_claim(text) == NOON


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("11/12/2026", "not written as"),  # 11 December or 12 November?
        ("2026-11-21 13:00:00 86340", "86340 is not a time zone name"),
        ("2026-11-21 13:00:00+86:40", "not a zone on Earth"),
        ("2026-11-21 13:00:00 Etc/GMT-14", "read their sign backwards"),
        ("2026-11-20 12:00", "not written as"),  # no zone
        ("\uff12\uff10\uff12\uff16-11-20 12:00 UTC", "not written as"),  # full-width digits
        ("2026-02-30 12:00 UTC", "not a real date"),
        ("2026-03-29 02:30 Europe/Paris", "does not exist in Europe/Paris"),
        ("2026-11-20 12:00 ../../etc/localtime", "not written as"),
        ("2026-11-20 12:00 Mars/Olympus", "not a time zone name"),
    ],
)
def test_other_forms_are_refused_saying_why(text: str, why: str):
    with pytest.raises(ClaimRefused, match=why.replace("(", r"\(")):
        parse_claim(text)


def test_the_later_reading_of_an_hour_the_clocks_repeat_counts():
    assert parse_claim("2026-10-25 02:30 Europe/Paris") == datetime(2026, 10, 25, 1, 30)


def test_the_claim_counts_only_when_the_evidence_agrees():
    late = NOON + timedelta(days=1)
    agreeing = decide("2026-11-21 11:59:30 UTC", None, late, late)
    assert agreeing.counted == datetime(2026, 11, 21, 11, 59, 30) and agreeing.notes == ()
    earlier = decide("2026-11-20 11:00:00 UTC", None, late, late)
    assert earlier.counted == late and "earlier than the exchange received" in earlier.notes[0]
    # No exchange copy: the claim stands unless it is after the grader's own copy.
    assert decide("2026-11-20 11:00:00 UTC", None, None, late).counted == NOON - timedelta(hours=1)
    future = decide("2026-12-20 11:00:00 UTC", None, None, late)
    assert future.counted == late and "after the grader's copy was made" in future.notes[0]
    unknown = decide(None, None, None, late)
    assert unknown.counted is None and "lateness unknown" in unknown.notes[0]
    assert {t.unverified for t in (agreeing, earlier, future, unknown)} == {None}  # evidence


def test_a_claim_that_stands_alone_is_said_to_be_unverified():
    # Issue 39: a notebook collected by hand, with a timestamp.txt claiming it was on time, was
    # graded without a late penalty and without a note; the claim is only the student's word.
    alone = decide("2026-11-20 11:00:00 UTC", None, None, NOON + timedelta(days=1))
    assert alone.counted == NOON - timedelta(hours=1)  # no penalty is invented either way
    assert alone.notes == (
        f"{UNVERIFIED}: timestamp.txt, which the student can write, says 2026-11-20 11:00:00 "
        "UTC, and no copy in nbgrader's exchange confirms it",
    )
    assert alone.unverified == alone.notes[0]
    assert decide("2026-11-20 11:00:00 UTC", None, None, None).notes == alone.notes


def test_only_the_students_own_copy_with_the_same_bytes_is_evidence(tmp_path: Path):
    inbound = tmp_path / "inbound"
    content = b'{"cells": []}'

    def hand_in(folder: str, data: bytes) -> Path:
        (inbound / folder).mkdir(parents=True)
        (inbound / folder / "a1.ipynb").write_bytes(data)
        return inbound / folder / "a1.ipynb"

    assert exchange_receipt(inbound, "ann", "a1", content) is None  # no exchange at all
    hand_in("anna+a1+2026-01-01 00:00:00 UTC+x", content)  # a classmate whose name starts alike
    assert exchange_receipt(inbound, "ann", "a1", content) is None
    other = hand_in("ann+a1+2026-01-01 00:00:00 UTC+x", b'{"cells": [1]}')  # other bytes
    (inbound / "ann+a1+link").mkdir()
    os.symlink(tmp_path / "elsewhere.ipynb", inbound / "ann+a1+link" / "a1.ipynb")
    (tmp_path / "elsewhere.ipynb").write_bytes(content)
    unmatched = exchange_receipt(inbound, "ann", "a1", content)  # her copies, none of these bytes
    assert unmatched is not None and not unmatched.matched
    assert unmatched.time >= _ctime(other) - timedelta(seconds=1)
    own = hand_in("ann+a1+2026-01-02 00:00:00 UTC+y", content)
    received = exchange_receipt(inbound, "ann", "a1", content)
    ctime = _ctime(own)
    assert received.matched and abs(received.time - ctime) < timedelta(seconds=1)


def test_copies_too_many_to_read_make_the_latest_change_count(tmp_path: Path):
    """Padding the exchange with same-size copies cannot hide the real one and leave the claim."""
    inbound = tmp_path / "inbound"
    content = b'{"cells": [0]}'
    for number in range(60):
        folder = inbound / f"ann+a1+2026-01-{number:02d}+pad"
        folder.mkdir(parents=True)
        (folder / "a1.ipynb").write_bytes(content if number == 0 else b'{"cells": [9]}')
    received = exchange_receipt(inbound, "ann", "a1", content)
    assert received is not None and not received.matched
    last = inbound / "ann+a1+2026-01-59+pad" / "a1.ipynb"
    assert received.time >= _ctime(last) - timedelta(seconds=1)
    said = decide("2020-01-01 00:00:00 UTC", None, received, None)
    assert said.counted == received.time and "too many to read" in said.notes[0]
