"""Submissions from a Canvas download: the zip that "Download Submissions" gives.

Canvas puts every file at the top of the zip, named ``<name>_<canvas id>_<submission id>_<file>``
(``<name>_late_<canvas id>_...`` when Canvas counts the submission late; it may also rename the
file, say ``01_attention-1.ipynb`` for a second upload).  Each student's one ``.ipynb`` becomes
``grading/submitted/<student>/<assignment>/<assignment>.ipynb``, the student found through the
roster's ``canvas_id``.  The whole zip is checked before anything is written: an entry of another
layout, a folder, a link, a name that climbs out (``..``), an unknown Canvas user, or a student
with two notebooks is an error that lists them all, and nothing is unpacked.  A submission that
differs from one already collected for that student is never overwritten.
"""

from __future__ import annotations

import io
import re
import stat
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from autograder.pipeline.course import Course, GradingError
from autograder.pipeline.grade_record import grading_folder
from autograder.pipeline.intake import MAX_BYTES
from autograder.pipeline.roster import RosterError, read_roster
from autograder.untrusted import UntrustedFile, read_regular_file

MAX_ZIP_BYTES = 2_000_000_000
CANVAS_NAME = re.compile(
    r"^(?P<name>[^/]+?)_(?:(?P<late>late)_)?(?P<canvas_id>\d+)_(?P<submission_id>\d+)_"
    r"(?P<filename>[^/]+)$",
    re.IGNORECASE,
)
LAYOUT = "<name>_<canvas id>_<submission id>_<file> (or <name>_late_...), all at the top"


@dataclass(frozen=True)
class Collected:
    """What one zip gave: the students whose notebook was unpacked, and what to tell the user."""

    students: list[str]
    late: list[str]  # students whose file Canvas marks late
    ignored: list[str]  # entries that are not notebooks (kept in the zip, not graded)


def unpack_canvas_zip(course: Course, assignment: str, zip_path: Path, roster: Path) -> Collected:
    """Check the whole zip, then collect each student's notebook; :class:`GradingError` says
    what is wrong (nothing is written then)."""
    try:
        members = {m.canvas_id: m.student for m in read_roster(roster) if m.canvas_id}
        data = read_regular_file(zip_path, MAX_ZIP_BYTES)
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (RosterError, UntrustedFile) as error:
        raise GradingError(str(error)) from None
    except zipfile.BadZipFile as error:
        raise GradingError(f"{zip_path} is not a zip file ({error})") from None
    problems, found, late, ignored = [], {}, [], []
    for info in archive.infolist():
        name = info.filename
        match = CANVAS_NAME.match(name)
        mode = info.external_attr >> 16
        if info.is_dir() or stat.S_ISLNK(mode) or ".." in PurePosixPath(name).parts:
            problems.append(f"{name!r} is a folder, a link or climbs out of the zip")
        elif match is None:
            problems.append(f"{name!r} is not named {LAYOUT}")
        elif match["canvas_id"] not in members:
            problems.append(f"{name!r}: Canvas user {match['canvas_id']} is not in the roster")
        elif not match["filename"].lower().endswith(".ipynb"):
            ignored.append(name)
        else:
            student = members[match["canvas_id"]]
            found.setdefault(student, []).append(info)
            if match["late"]:
                late.append(student)
    for student, infos in sorted(found.items()):
        if len(infos) > 1:
            names = ", ".join(repr(i.filename) for i in infos)
            problems.append(f"{student} handed in {len(infos)} notebooks ({names}): keep one")
    if not found and not problems:
        problems.append(f"no notebook in it (expected entries named {LAYOUT})")
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
    return Collected(sorted(contents), sorted(set(late)), ignored)


def _bounded(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> bytes:
    """The entry's bytes, at most one past the intake's cap (the grader then refuses it as too
    large, with a verdict), whatever size its header claims."""
    with archive.open(info) as handle:
        return handle.read(MAX_BYTES + 1)


def collect_from_zip(
    course: Course, assignment: str, zip_path: Path, roster: Path | None
) -> list[str]:
    """``grade --from-zip``: unpack the download and say what it held; the students to grade."""
    roster = roster or grading_folder(course.coursedir) / "roster.csv"
    collected = unpack_canvas_zip(course, assignment, zip_path, roster)
    print(f"{zip_path}: {len(collected.students)} notebooks collected", file=sys.stderr)
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
    return collected.students
