"""When a submission was handed in, from evidence the student's process cannot choose.

nbgrader's ``timestamp.txt`` is written by the student's own ``nbgrader submit``, so it is a
claim.  The evidence is the inode change time (ctime) of the notebook in nbgrader's exchange,
``<Exchange.root>/<course_id>/inbound/<student>+<assignment>+...``: the kernel sets it whenever
the file is written, renamed or linked, and no call a student may make (``touch`` included)
sets it to an earlier time.  The earliest inbound copy with the collected notebook's exact bytes
says when the exchange received that content.  The claim counts when it agrees with the evidence
within :data:`TOLERANCE` (``submit`` writes the claim a moment before it copies the files);
otherwise the evidence counts and a note says why.  Without an exchange copy, the ctime of the
collected notebook (when the grader's copy was made) only bounds the claim from above: a claim
that stands on its own is *unverified*, and every record of the submission says so
(:data:`UNVERIFIED`).  Nothing else here is a time the student could set: a file's mtime is never
read, and a Canvas download holds no times at all.

A claim is read strictly (:func:`parse_claim`): nbgrader's own format, or ISO 8601 with a numeric
offset or a real zone name; any other form is refused with a note, never read as "no penalty"
without one.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import os
import re
import stat
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from autograder.untrusted import TooLarge, UntrustedFile, read_regular_file

TOLERANCE = timedelta(minutes=2)
# The most copies of a student's notebook the grader reads from the exchange.
MAX_INBOUND_COPIES = 50
MAX_NOTEBOOK_BYTES = 50_000_000
ACCEPTED = (
    "nbgrader's 'YYYY-MM-DD HH:MM:SS.ffffff UTC', or ISO 8601 such as "
    "'2026-11-20T23:59:00+01:00' or '2026-11-20 23:59 Europe/Paris'"
)
_CLAIM = re.compile(
    r"(?P<date>[0-9]{4}-[0-9]{2}-[0-9]{2})[T ](?P<hour>[0-9]{2}):(?P<minute>[0-9]{2})"
    r"(?::(?P<second>[0-9]{2})(?:\.(?P<fraction>[0-9]{1,6}))?)?"
    r"(?:(?P<z>Z)| ?(?P<sign>[+-])(?P<off_h>[0-9]{2}):?(?P<off_m>[0-9]{2})"
    r"| (?P<zone>[A-Za-z0-9_/+-]+))",
    re.ASCII,
)
MAX_OFFSET = timedelta(hours=14)


# How each record (the grade CSV's notes, the table's, the feedback page) begins the note on a time
# that only the student's own word supports.
UNVERIFIED = "submission time unverified"
# Where the graded copy keeps that note for the feedback page: ``metadata["autograder"][...]``.
FEEDBACK_NOTE = "submission_time_unverified"


class ClaimRefused(ValueError):
    """The claimed time is not in an accepted form; the message says what was wrong."""


@dataclass(frozen=True)
class SubmissionTime:
    """The time that counts (naive UTC, as nbgrader's gradebook keeps it; None: unknown), the
    claim as written, and the notes that explain the choice."""

    counted: datetime | None
    claim_text: str | None
    notes: tuple[str, ...]
    # The note saying that ``counted`` is the student's claim alone, also one of ``notes``.
    unverified: str | None = None


def parse_claim(text: str) -> datetime:
    """The UTC instant (naive) that ``text`` names; :class:`ClaimRefused` for any other form."""
    match = _CLAIM.fullmatch(text)
    if match is None:
        raise ClaimRefused(f"it is not written as {ACCEPTED}")
    try:
        local = datetime.fromisoformat(
            f"{match['date']}T{match['hour']}:{match['minute']}:{match['second'] or '00'}"
            f".{(match['fraction'] or '0').ljust(6, '0')}"
        )
    except ValueError as error:
        raise ClaimRefused(f"it is not a real date and time ({error})") from None
    if match["z"]:
        return local
    if match["sign"]:
        hours, minutes = int(match["off_h"]), int(match["off_m"])
        offset = timedelta(hours=hours, minutes=minutes)
        if minutes >= 60 or offset > MAX_OFFSET:
            raise ClaimRefused(
                f"its offset {match['sign']}{match['off_h']}:{match['off_m']} "
                "is not a zone on Earth (at most 14:00)"
            )
        offset = -offset if match["sign"] == "-" else offset
        return local - offset
    return _in_zone(local, match["zone"])


def _in_zone(local: datetime, name: str) -> datetime:
    """``local`` wall-clock time in the IANA zone ``name``, as naive UTC; the later instant of
    an hour that the clocks go through twice."""
    from zoneinfo import ZoneInfo

    if name == "UTC":
        return local
    if name.startswith("Etc/") or name.startswith(("posix/", "right/")):
        raise ClaimRefused(
            f"the zone {name} is refused: Etc/GMT zones read their sign backwards "
            "(Etc/GMT-14 is 14 hours ahead); write the offset, such as +14:00"
        )
    if name not in _zone_names():
        raise ClaimRefused(f"{name} is not a time zone name")
    zone = ZoneInfo(name)
    instants = [local.replace(tzinfo=zone, fold=fold).astimezone(UTC) for fold in (0, 1)]
    for instant in instants:  # a wall time the clocks skip maps back to another wall time
        if instant.astimezone(zone).replace(tzinfo=None) != local:
            raise ClaimRefused(f"{local:%Y-%m-%d %H:%M} does not exist in {name}")
    return max(instants).replace(tzinfo=None)


@functools.cache
def _zone_names() -> frozenset[str]:
    from zoneinfo import available_timezones

    return frozenset(available_timezones())


def shown(moment: datetime) -> str:
    """A naive UTC time for a note."""
    return f"{moment:%Y-%m-%d %H:%M:%S} UTC"


def _ctime(stat_result: os.stat_result) -> datetime:
    return datetime.fromtimestamp(stat_result.st_ctime, UTC).replace(tzinfo=None)


@dataclass(frozen=True)
class Receipt:
    """What the exchange shows: when it received the collected bytes (``matched``), or, when no
    copy of them could be found among the student's own, the latest change to those copies."""

    time: datetime
    matched: bool


def exchange_receipt(
    inbound: Path, student: str, assignment: str, content: bytes
) -> Receipt | None:
    """The earliest ctime of a notebook in ``inbound`` handed in by ``student`` for
    ``assignment`` with exactly ``content``; None when the student has nothing there.

    No link is followed, and at most :data:`MAX_INBOUND_COPIES` copies of the same size are
    read.  When none matches (or the student's copies are too many to read), the latest ctime
    of any of them counts: clutter in the exchange can only make a submission later.
    """
    prefix = f"{student}+{assignment}+"
    try:
        listing = _listing(str(inbound), os.stat(inbound).st_mtime_ns)
    except OSError:
        return None
    start = bisect.bisect_left(listing, prefix)
    folders = itertools.takewhile(
        lambda name: name.startswith(prefix), itertools.islice(listing, start, None)
    )
    earliest = latest = None
    reads = 0
    for folder in folders:
        path = inbound / folder / f"{assignment}.ipynb"
        try:
            changed = max(_ctime(os.lstat(inbound / folder)), _ctime(os.lstat(path)))
        except OSError:
            continue
        latest = changed if latest is None else max(latest, changed)
        try:
            status = os.lstat(path)
            if not stat.S_ISREG(status.st_mode) or status.st_size != len(content):
                continue
            reads += 1
            if reads > MAX_INBOUND_COPIES or read_regular_file(path, MAX_NOTEBOOK_BYTES) != content:
                continue
            # The ctime after the read: a write during it would only make it later.
            received = _ctime(os.lstat(path))
        except (OSError, TooLarge, UntrustedFile):
            continue
        earliest = received if earliest is None else min(earliest, received)
    if earliest is not None and reads <= MAX_INBOUND_COPIES:
        return Receipt(earliest, True)
    return None if latest is None else Receipt(latest, False)


@functools.lru_cache(maxsize=1)
def _listing(inbound: str, modified_ns: int) -> tuple[str, ...]:
    """The names in ``inbound``, sorted; read once per batch (again only when it changes), so a
    folder full of one student's entries costs the class one listing, not one each."""
    with os.scandir(inbound) as entries:
        return tuple(sorted(entry.name for entry in entries))


def inbound_folder(config: Any, course_id: str) -> Path | None:
    """nbgrader's exchange inbound folder for the course, as ``nbgrader collect`` reads it."""
    if not course_id:
        return None
    root = config.Exchange.get("root", "/srv/nbgrader/exchange")
    return Path(str(root)) / course_id / "inbound"


def decide(
    claim_text: str | None,
    claim_problem: str | None,
    received: datetime | Receipt | None,
    collected: datetime | None,
) -> SubmissionTime:
    """The time that counts for one submission, and why.

    claim_text: timestamp.txt's text (None: missing); claim_problem: why it could not be read.
    received: when the exchange received this content; collected: the ctime of the grader's
    copy (it was on the grader's disk by then).
    """
    notes: list[str] = []
    if isinstance(received, Receipt) and not received.matched:
        notes.append(
            "no copy of this notebook was found among the student's copies in nbgrader's "
            "exchange (or they were too many to read): the latest change to them counts"
        )
    if isinstance(received, Receipt):
        received = received.time
    claim = None
    if claim_text is not None and claim_problem is None:
        try:
            claim = parse_claim(claim_text)
        except ClaimRefused as why:
            claim_problem = f"timestamp.txt {_quoted(claim_text)} is refused: {why}"
    elif claim_text is None and claim_problem is None:
        claim_problem = "no timestamp.txt"
    if received is not None:
        if claim is not None and abs(claim - received) <= TOLERANCE and not notes:
            return SubmissionTime(claim, claim_text, ())
        if claim is not None:
            direction = "earlier" if claim < received else "later"
            notes.append(
                f"timestamp.txt claims {shown(claim)}, {direction} than the exchange received "
                f"this notebook ({shown(received)}, a time the student cannot set): "
                f"{shown(received)} counts"
            )
        else:
            notes.append(
                f"{claim_problem}: the time the exchange received this notebook counts "
                f"({shown(received)}, a time the student cannot set)"
            )
        return SubmissionTime(received, claim_text, tuple(notes))
    if claim is None:
        where = f"; the grader's copy was made at {shown(collected)}" if collected else ""
        notes.append(
            f"{claim_problem}, and no copy in nbgrader's exchange shows when it was handed in: "
            f"lateness unknown, no late penalty applied{where}"
        )
        return SubmissionTime(None, claim_text, tuple(notes))
    if collected is not None and claim > collected + TOLERANCE:
        notes.append(
            f"timestamp.txt claims {shown(claim)}, after the grader's copy was made "
            f"({shown(collected)}): {shown(collected)} counts"
        )
        return SubmissionTime(collected, claim_text, tuple(notes))
    unverified = (
        f"{UNVERIFIED}: timestamp.txt, which the student can write, says {shown(claim)}, "
        "and no copy in nbgrader's exchange confirms it"
    )
    return SubmissionTime(claim, claim_text, (unverified,), unverified)


def _quoted(text: str) -> str:
    """A claim as it reads, short and printable."""
    shown_text = text if len(text) <= 40 else text[:37] + "..."
    return ascii(shown_text)


def submission_time(
    folder: Path, assignment: str, student: str, inbound: Path | None
) -> SubmissionTime:
    """The time that counts for the submission collected in ``folder``, and why."""
    notebook = folder / f"{assignment}.ipynb"
    stamp = folder / "timestamp.txt"
    claim_text = claim_problem = None
    if os.path.lexists(stamp):
        try:
            claim_text = read_regular_file(stamp, 1024).decode("utf-8").strip()
        except UntrustedFile as error:
            claim_problem = f"timestamp.txt was refused ({error})"
            claim_text = ""
        except UnicodeDecodeError:
            claim_problem, claim_text = "timestamp.txt is not UTF-8 text", ""
    received = collected = None
    try:
        content = read_regular_file(notebook, MAX_NOTEBOOK_BYTES)
        collected = _ctime(os.lstat(notebook))
    except (OSError, UntrustedFile):
        content = None
    if content is not None and inbound is not None:
        received = exchange_receipt(inbound, student, assignment, content)
    return decide(claim_text, claim_problem, received, collected)


def mark_graded_copy(notebook: Any, unverified: str | None) -> None:
    """Keep ``unverified`` (None: none) in the graded copy's metadata, where the feedback page
    reads it (templates/offline_feedback.html.j2); any earlier one is replaced."""
    if not isinstance(notebook.metadata.get("autograder"), dict):
        notebook.metadata["autograder"] = {}
    metadata = notebook.metadata["autograder"]  # as stored (nbformat copies a dict set in it)
    metadata.pop(FEEDBACK_NOTE, None)
    if unverified is not None:
        metadata[FEEDBACK_NOTE] = unverified
