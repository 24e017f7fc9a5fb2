"""Submissions from a Canvas download: the zip that "Download Submissions" gives.

Canvas puts every file at the top of the zip, named ``<name>_<canvas id>_<submission id>_<file>``
(``<name>_late_<canvas id>_...`` when Canvas counts the submission late; it may also rename the
file, say ``01_attention-1.ipynb`` for a second upload).  ``<name>`` is the student's sortable
name, scrubbed by Canvas of ``_<digits>_`` and then of non-word characters, so it is word
characters only, but may still hold ``_<digits>_`` (a name that reads ``x_1001_77_`` after the
scrub).  So an entry is read at every place where ``_<digits>_<digits>_`` follows a name of word
characters, and resolved against the roster's Canvas ids (ASCII digits): an entry that names no
roster student, or more than one, is refused alone, as are the notebooks of a student who handed
in two; the others are collected.  Each student's one ``.ipynb`` becomes
``grading/submitted/<student>/<assignment>/<assignment>.ipynb``.  A zip that Canvas cannot have
made (an entry of another layout, a folder, a link, a name that climbs out with ``..``) is an
error that lists them all, and nothing is unpacked.  A submission that differs from one already
collected for that student is never overwritten.
"""

from __future__ import annotations

import io
import re
import stat
import sys
import zipfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from autograder.pipeline.course.course import Course, GradingError
from autograder.pipeline.intake.intake import MAX_BYTES
from autograder.pipeline.intake.roster import RosterError, read_roster
from autograder.pipeline.records.grade_record import grading_folder
from autograder.untrusted import UntrustedFile, read_regular_file

MAX_ZIP_BYTES = 2_000_000_000
# Where the name may end: "_", "late_" when Canvas counts it late, the Canvas id, the
# submission id.  Tried at every "_" of an entry's name.
CANVAS_IDS = re.compile(r"_(?:(?P<late>late)_)?(?P<canvas_id>[0-9]+)_(?P<submission_id>[0-9]+)_")
# Canvas's scrubbed sortable name: word characters only (letters and digits of any script).
NOT_A_NAME = re.compile(r"\W")
LAYOUT = "<name>_<canvas id>_<submission id>_<file> (or <name>_late_...), all at the top"


@dataclass(frozen=True)
class Collected:
    """What one zip gave: the students whose notebook was unpacked, and what to tell the user."""

    students: list[str]
    late: list[str]  # students whose file Canvas marks late
    ignored: list[str]  # entries that are not notebooks (kept in the zip, not graded)
    refused: list[str] = field(default_factory=list)  # entries not collected, each saying why


@dataclass(frozen=True)
class _Reading:
    """One way to read an entry's name: the Canvas id, whether late, and the file's name."""

    canvas_id: str
    late: bool
    filename: str


def readings(entry: str) -> list[_Reading]:
    """Every way ``entry`` can be read as Canvas names an entry (none: another layout)."""
    found = []
    other = NOT_A_NAME.search(entry)  # the name ends before the first non-word character
    for position in range(1, other.start() if other else len(entry)):
        match = CANVAS_IDS.match(entry, position)
        if match and match.end() < len(entry):
            found.append(_Reading(match["canvas_id"], bool(match["late"]), entry[match.end() :]))
    return found


def unpack_canvas_zip(course: Course, assignment: str, zip_path: Path, roster: Path) -> Collected:
    """Check the whole zip, then collect each student's notebook; :class:`GradingError` says
    what is wrong (nothing is written then)."""
    try:
        listed = read_roster(roster)
        members = {m.canvas_id: m.student for m in listed.members if m.canvas_id}
        data = read_regular_file(zip_path, MAX_ZIP_BYTES)
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (RosterError, UntrustedFile) as error:
        raise GradingError(str(error)) from None
    except zipfile.BadZipFile as error:
        raise GradingError(f"{zip_path} is not a zip file ({error})") from None
    problems, refused, found, late, ignored = [], list(listed.refused), {}, [], []
    for info in archive.infolist():
        name = info.filename
        mode = info.external_attr >> 16
        ways = readings(name) if "/" not in name else []
        students = {members[way.canvas_id] for way in ways if way.canvas_id in members}
        if info.is_dir() or stat.S_ISLNK(mode) or ".." in PurePosixPath(name).parts:
            problems.append(f"{name!r} is a folder, a link or climbs out of the zip")
        elif not ways:
            problems.append(f"{name!r} is not named {LAYOUT}")
        elif not students:
            ids = ", ".join(sorted({way.canvas_id for way in ways}))
            refused.append(f"{name!r}: Canvas user {ids} is not in the roster")
        elif len(students) > 1:
            refused.append(
                f"{name!r} reads as a submission of {' or of '.join(sorted(students))} "
                "(a name Canvas scrubbed can hold _<digits>_): collect it by hand"
            )
        else:
            (student,) = students
            way = next(w for w in ways if members.get(w.canvas_id) == student)
            if not way.filename.lower().endswith(".ipynb"):
                ignored.append(name)
                continue
            found.setdefault(student, []).append(info)
            if way.late:
                late.append(student)
    for student, infos in sorted(found.items()):
        if len(infos) > 1:
            names = ", ".join(repr(i.filename) for i in infos)
            refused.append(f"{student} handed in {len(infos)} notebooks ({names}): keep one")
            del found[student]
    late = [student for student in late if student in found]
    if not found and not problems:
        problems.append(f"no notebook in it to collect (expected entries named {LAYOUT})")
        problems += refused
    if problems:
        raise GradingError(
            f"{zip_path} cannot be collected, nothing was unpacked: " + "; ".join(problems)
        )
    contents = {s: _bounded(archive, infos[0]) for s, infos in found.items()}
    for student, content in sorted(contents.items()):
        target = course.path(course.coursedir.submitted_directory, student, assignment)
        existing = target / f"{assignment}.ipynb"
        if existing.exists() and existing.read_bytes() != content:
            problems.append(f"{existing} already holds a different submission of {student}")
    if problems:
        raise GradingError(
            "nothing was unpacked: "
            + "; ".join(problems)
            + " (move it away to grade the download's copy)"
        )
    for student, content in contents.items():
        target = course.path(course.coursedir.submitted_directory, student, assignment)
        target.mkdir(parents=True, exist_ok=True)
        (target / f"{assignment}.ipynb").write_bytes(content)
    return Collected(sorted(contents), sorted(set(late)), ignored, refused)


def _bounded(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> bytes:
    """The entry's bytes, at most one past the intake's cap (the grader then refuses it as too
    large, with a verdict), whatever size its header claims."""
    with archive.open(info) as handle:
        return handle.read(MAX_BYTES + 1)


def collect_from_zip(
    course: Course, assignment: str, zip_path: Path, roster: Path | None
) -> Collected:
    """``grade --from-zip``: unpack the download and say what it held (its ``students`` are the
    ones to grade)."""
    roster = roster or grading_folder(course.coursedir) / "roster.csv"
    collected = unpack_canvas_zip(course, assignment, zip_path, roster)
    print(f"{zip_path}: {len(collected.students)} notebooks collected", file=sys.stderr)
    for why in collected.refused:
        print(f"not collected: {why}", file=sys.stderr)
    if collected.ignored:
        shown = ", ".join(collected.ignored)
        print(f"not notebooks, so not graded (still in the zip): {shown}", file=sys.stderr)
    if collected.late:
        print(
            f"Canvas marks late: {', '.join(collected.late)}. The download holds no submission "
            "times, so no late penalty is applied here: Canvas's late policy applies, or write "
            "each one's timestamp.txt beside the notebook and grade again",
            file=sys.stderr,
        )
    return collected
