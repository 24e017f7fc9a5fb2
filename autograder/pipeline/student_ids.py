"""Student ids as identities: one spelling per student, and when two ids are one name to a reader.

A student id reaches the grader from a folder name, a Canvas roster, a command line or the
gradebook, and Unicode lets one name be written several ways (``zoë`` composed, or ``zoe`` and a
combining diaeresis).  Every entry point passes its ids through :func:`canonical` (NFC), so one
student is one id everywhere; :func:`look_alike` says when two ids a reader cannot tell apart
(equal after NFKC: full-width digits, ligatures) would stand for one student, and the newer one
is then refused.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable


def canonical(student: str) -> str:
    """The one spelling of ``student`` that every record holds (Unicode NFC)."""
    return unicodedata.normalize("NFC", student)


def look_alike(student: str) -> str:
    """What ``student`` reads as: two ids with the same value print alike (Unicode NFKC)."""
    return unicodedata.normalize("NFKC", student)


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
