"""The class roster: which Canvas user each nbgrader student id is.

A CSV with a header row naming ``student`` (the nbgrader id: the folder under
``grading/submitted/``) and ``canvas_id`` (Canvas's numeric user ID, the ``ID`` column of a
Canvas gradebook export) or ``sis_login_id`` (``SIS Login ID``) or both, and optionally ``name``
and ``section``.  Every student, Canvas ID and SIS login occurs once.  Student ids are read
as :func:`~autograder.pipeline.intake.student_ids.canonical` (NFC); a line whose id prints like an
earlier line's (:func:`~autograder.pipeline.intake.student_ids.look_alike`) is left out with a note,
and the others are read.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from pathlib import Path

from autograder.pipeline.intake.student_ids import EXPECTED as STUDENT_ID
from autograder.pipeline.intake.student_ids import canonical, look_alike, student_id_problem
from autograder.untrusted import UntrustedFile, read_regular_file

MAX_ROSTER_BYTES = 10_000_000
COLUMNS = ("student", "canvas_id", "sis_login_id", "name", "section")
EXPECTED = (
    "a CSV whose header names student and canvas_id or sis_login_id (and optionally name, "
    "section), one row per student"
)


class RosterError(ValueError):
    """The roster cannot be used; the message says where and what was expected."""


@dataclass(frozen=True)
class Roster:
    """The students of a roster, and the lines left out because their id prints like another's."""

    members: list[Member]
    refused: list[str]


@dataclass(frozen=True)
class Member:
    """One student of the roster."""

    student: str
    canvas_id: str = ""
    sis_login_id: str = ""
    name: str = ""
    section: str = ""


def read_roster(path: Path) -> Roster:
    """The roster at ``path``, checked whole; :class:`RosterError` says what is wrong."""
    try:
        text = read_regular_file(path, MAX_ROSTER_BYTES).decode("utf-8-sig")
    except (UntrustedFile, UnicodeDecodeError) as error:
        raise RosterError(f"roster {path}: {error}; expected {EXPECTED}") from None
    rows = list(csv.reader(io.StringIO(text)))
    header = [cell.strip().lower() for cell in rows[0]] if rows else []
    if "student" not in header or not {"canvas_id", "sis_login_id"} & set(header):
        raise RosterError(
            f"roster {path}: the header is {rows[0] if rows else 'missing'}; expected {EXPECTED}"
        )
    unknown = sorted(set(header) - set(COLUMNS))
    if unknown:
        raise RosterError(f"roster {path}: unknown columns {unknown}; expected {EXPECTED}")
    members, written, problems = [], [], []
    for line, row in enumerate(rows[1:], start=2):
        if not any(cell.strip() for cell in row):
            continue
        if len(row) != len(header):
            problems.append(f"line {line} has {len(row)} cells, the header {len(header)}")
            continue
        cells = {name: cell.strip() for name, cell in zip(header, row, strict=True)}
        member = Member(**{**cells, "student": canonical(cells["student"])})
        if not member.student:
            problems.append(f"line {line} has no student id")
        elif problem := student_id_problem(member.student):
            problems.append(
                f"line {line}: student id {member.student!r} cannot be a folder name ({problem}; "
                f"expected {STUDENT_ID})"
            )
        elif not member.canvas_id and not member.sis_login_id:
            problems.append(f"line {line} ({member.student}) has no canvas_id or sis_login_id")
        elif member.canvas_id and not (member.canvas_id.isascii() and member.canvas_id.isdigit()):
            problems.append(
                f"line {line} ({member.student}): canvas_id {member.canvas_id!r} is not a number"
            )
        else:
            members.append(member)
            written.append(cells["student"])
    members, refused = _without_look_alikes(members, written, path)
    for field in ("student", "canvas_id", "sis_login_id"):
        seen: dict[str, int] = {}
        for member in members:
            value = getattr(member, field)
            if value:
                seen[value] = seen.get(value, 0) + 1
        problems += [f"{field} {value!r} occurs {n} times" for value, n in seen.items() if n > 1]
    if problems:
        raise RosterError(f"roster {path}: " + "; ".join(problems))
    if not members:
        raise RosterError(f"roster {path} lists no student; expected {EXPECTED}")
    return Roster(members, refused)


def _without_look_alikes(
    members: list[Member], written: list[str], path: Path
) -> tuple[list[Member], list[str]]:
    """The members whose id, as ``written`` in the file, prints like no earlier member's, and a
    note for each one left out."""
    first: dict[str, str] = {}
    kept, refused = [], []
    for member, student in zip(members, written, strict=True):
        earlier = first.setdefault(look_alike(student), student)
        if earlier == student:  # the same id written twice is an error, found by the caller
            kept.append(member)
        else:
            refused.append(
                f"roster {path}: student {ascii(student)} prints like {ascii(earlier)}, "
                "an earlier line, so it was left out: give one of them another id"
            )
    return kept, refused
