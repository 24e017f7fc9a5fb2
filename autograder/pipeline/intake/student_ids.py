"""Student ids as identities: what an id may be, its one spelling, and when two ids are one name
to a reader.

An id is a folder name under ``grading/submitted/`` and a key of the gradebook, the CSV and the
terminal's table, so it must name one folder and print as it is (:func:`student_id_problem`, one
rule for folders, rosters and ``extend``). It reaches the grader from a folder name, a Canvas
roster, a command line or the gradebook, and Unicode lets one name be written several ways
(``zoë`` composed, or ``zoe`` and a combining diaeresis). Every entry point passes its ids through
:func:`canonical` (NFC), so one student is one id everywhere; :func:`look_alike` says when two ids
a reader cannot tell apart would stand for one student, and the newer one is then refused: equal
once the characters that print as nothing are dropped and each character is read as Unicode's
confusables data (UTS #39) reads it: a Cyrillic "а" in "аlice", a hyphen U+2010 as "-", and also
"1" and "I" as "l", "0" as "O", "rn" as "m". So two real students "bob1" and "bobl" are one name
here too: the newer is refused, and the instructor gives it another id.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Callable, Iterable
from functools import cache, partial
from importlib.resources import files

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


@cache
def _reading() -> tuple[Callable[[str], str], dict[str, str]]:
    """What drops the characters that print as nothing, and what each character of Unicode's
    confusables data reads as (its prototype there).

    From installed packages, read when two names are first compared: regex's
    Default_Ignorable_Code_Point property, and confusable_homoglyphs's confusables.json, which
    holds each line of Unicode's confusables.txt both ways (``‐`` beside ``-`` and ``-`` beside
    ``‐``), its right-to-left glyphs between two invisible marks. Read without those, the
    characters that read as one prototype stand around it: the prototype is the one with two or
    more beside it, or the string of several characters (``rn`` beside ``m``). Of a pair the
    data does not say which is the prototype, and either answers "do two names read alike" the
    same: the one NFD leaves as it is, else the lower code point.
    """
    import regex

    drop = partial(regex.compile(r"\p{Default_Ignorable_Code_Point}+").sub, "")
    data = files("confusable_homoglyphs").joinpath("confusables.json").read_text("utf-8")
    alike: dict[str, set[str]] = {}
    for glyph, entries in json.loads(data).items():
        for entry in entries:
            one, other = drop(glyph), drop(entry["c"])
            if one != other:
                alike.setdefault(one, set()).add(other)
                alike.setdefault(other, set()).add(one)
    reads_as = {}
    for char, others in alike.items():
        if len(char) == 1 and len(others) == 1:
            (other,) = others
            pair = len(other) == 1 and len(alike[other]) == 1
            if not pair or min(char, other, key=_pair_order) == other:
                reads_as[char] = other
    # the characters of a prototype of several, each read as its pair's choice above
    return drop, {c: "".join(reads_as.get(p, p) for p in to) for c, to in reads_as.items()}


def _pair_order(char: str) -> tuple[bool, str]:
    return unicodedata.normalize("NFD", char) != char, char


def look_alike(student: str) -> str:
    """What ``student`` reads as: two ids with the same value print alike. Unicode NFKC, which
    reads full-width and compatibility forms as the plain ones, then the UTS #39 skeleton: NFD,
    less the default-ignorable characters, each character read as its prototype in Unicode's
    confusables data (a Cyrillic "а" as "a", a hyphen as "-", "1" and "I" as "l"), NFD again."""
    drop, reads_as = _reading()
    visible = drop(unicodedata.normalize("NFD", unicodedata.normalize("NFKC", student)))
    return unicodedata.normalize("NFD", "".join(reads_as.get(c, c) for c in visible))


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
