"""Student ids as identities: what an id may be, its one spelling, and when two ids are one name
to a reader.

An id is a folder name under ``grading/submitted/`` and a key of the gradebook, the CSV and the
terminal's table, so it must name one folder and print as it is (:func:`student_id_problem`, one
rule for folders, rosters and ``extend``). It reaches the grader from a folder name, a Canvas
roster, a command line or the gradebook, and Unicode lets one name be written several ways
(``zoë`` composed, or ``zoe`` and a combining diaeresis). Every entry point passes its ids through
:func:`canonical` (NFC), so one student is one id everywhere; :func:`look_alike` says when two ids
a reader cannot tell apart would stand for one student, and the newer one is then refused: equal
after NFKC (full-width digits, ligatures), or once the Cyrillic, Greek, Armenian and Cherokee
letters drawn like Latin ones are read as those (a Cyrillic "а" in "аlice").
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable

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


def canonical(student: str) -> str:
    """The one spelling of ``student`` that every record holds (Unicode NFC)."""
    return unicodedata.normalize("NFC", student)


# Letters of other scripts whose usual glyphs are those of a Latin letter, and that letter.
_DRAWN_LIKE_LATIN = str.maketrans(
    # Cyrillic capitals, then small letters
    "АВЕКМНОРСТУХІЈЅԚԜӀҮ"
    "аеорсухіјѕһԁԛԝӏ"
    # Greek capitals, then small letters
    "ΑΒΕΖΗΙΚΜΝΟΡΤΥΧ"
    "ονρϳ"
    # Armenian capitals, then small letters
    "ՕՍԼ"
    "օսհոզց"
    # Cherokee (capitals only: NFKC leaves its small letters as they are, and they print small)
    "ᎪᏴᏟᎬᏀᎻᎫᏦᏞᎷᏢᏚᎢᏙᎳᏃᎠᏒ"
    # Latin letters outside the basic alphabet that print as one of it
    "ɑɡǀı",
    # ... read as, in the same order
    "ABEKMHOPCTYXIJSQWIYaeopcyxijshdqwlABEZHIKMNOPTYXovpj"  # Cyrillic, Greek
    "OULouhnqg"  # Armenian
    "ABCEGHJKLMPSTVWZDR"  # Cherokee
    "agli",  # Latin
)


def look_alike(student: str) -> str:
    """What ``student`` reads as: two ids with the same value print alike (Unicode NFKC, then
    letters of other scripts drawn like Latin ones read as those)."""
    return unicodedata.normalize("NFKC", student).translate(_DRAWN_LIKE_LATIN)


def escaped(student: str) -> str:
    """``student`` with every character outside printable ASCII escaped, so that a refused id
    never prints like the one it was refused beside."""
    return ascii(student)[1:-1]


def spelled_as_recorded(student: str, recorded: Iterable[str]) -> str:
    """The id to record ``student`` under: the spelling the gradebook already holds for that
    name (a grade recorded before ids were normalised stays that student's), else canonical."""
    key = canonical(student)
    return next((id_ for id_ in sorted(recorded) if canonical(id_) == key), key)


def twin_of(student: str, others: Iterable[str]) -> str | None:
    """One of ``others`` that is not ``student`` but prints like it, else None."""
    key = look_alike(student)
    return next((o for o in sorted(others) if o != student and look_alike(o) == key), None)
