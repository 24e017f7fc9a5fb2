"""What a student id may be: one rule for the folder names a batch grades and the ids a roster
lists.

An id is a folder name under ``grading/submitted/`` and a key of the gradebook, the CSV and the
terminal's table, so it must be one folder's name and print as it is.
"""

from __future__ import annotations

EXPECTED = (
    "non-empty, printable UTF-8 text without leading or trailing spaces, naming one folder "
    "(no '/', not '.' or '..')"
)


def student_id_problem(student: str) -> str:
    """Why ``student`` cannot be a student id, in words; "" when it can."""
    try:
        student.encode("utf-8")
    except UnicodeEncodeError:  # bytes that are not UTF-8, as some zip tools write them
        return "it is not UTF-8 text"
    if not student:
        return "it is empty"
    if not student.isprintable():
        return "it holds characters that do not print"
    if student.strip() != student:
        return "it starts or ends with a space"
    if "/" in student or student in (".", ".."):
        return "it does not name one folder"
    return ""


def is_student_id(student: str) -> bool:
    """True when ``student`` can be a student id (see :data:`EXPECTED`)."""
    return not student_id_problem(student)
