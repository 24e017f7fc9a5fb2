"""Text a student chose (an id, a folder name, a note that quotes them), as the instructor's
terminal and spreadsheet show it: escaped, and never read as a formula.

Its own module, below the report and the grade record, which both write CSV cells with it.
"""

from __future__ import annotations


def shown(text: str) -> str:
    """``text`` safe to print on a terminal: control characters and newlines escaped."""
    return "".join(
        c if c.isprintable() else c.encode("unicode_escape", "backslashreplace").decode("ascii")
        for c in text
    )


def spreadsheet_safe(text: str) -> str:
    """``text`` shown escaped, and never read as a formula by a spreadsheet (=, +, -, @).

    A text that starts with the guard's own apostrophe is guarded too, so two texts never give
    one cell (``'alice`` is not ``alice``).  A cell is matched back by writing the name again
    and comparing, never by stripping the guard.
    """
    text = shown(text)
    return "'" + text if text[:1] in ("=", "+", "-", "@", "'") else text
