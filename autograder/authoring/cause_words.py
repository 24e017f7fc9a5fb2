"""Cause words: the phrases by which a message tells a student what their answer did wrong or what
to change, rather than what was observed.

A cause may reach a student only from a :class:`~autograder.authoring.mistakes.Mistake` that a
confirmer established on that very answer (``diagnose`` matched its output, or an experiment on
the answer showed what that cause predicts). Every other message -- ``fail("...")``,
``diagnose(..., otherwise=...)``, gates, and the notebooks' public checks -- says what was seen:
the promise broken, expected against got, a counterexample. The lint
(:mod:`autograder.authoring.lint`) reads every such text through :func:`cause_words`.

The list was made by reading the course's messages: it holds the questions and advice they used
to carry ("is your softmax over dim=-1?", "use key.shape[1]", "call zero_grad first"), and
leaves out what an observation says ("expected (2, 3), got (3, 2)", "must sum to 1", "the
statement asks for ...", "should raise ValueError": each "should" in the course's messages stated
a promise, none a cause).
"""

from __future__ import annotations

import re

# Phrases that guess at a cause or advise a change wherever they stand in a sentence.
_PHRASES = [
    r"\bdid you\b",
    r"\bdo you\b",
    r"\bhave you\b",
    r"\bare you\b",
    r"\bis (?:your|the|it|there)\b[^.;:!?]*\?",  # a question about the code: a guessed cause
    r"\bare (?:your|the)\b[^.;:!?]*\?",
    r"\bdoes\b[^.;:!?]*\?",
    r"\bmake sure\b",
    r"\bforg[eo]t",
    r"\binstead of\b",
    r"\brather than\b",
    r"\bremember\b",
    r"\btry\b",
    r"\bcheck (?:that|the|your|it|whether|how|for)\b",
    r"\bprobably\b",
    r"\blikely\b",
    r"\bmaybe\b",
    r"\bperhaps\b",
    r"\bmust be computed\b",
    r"\byou (?:need|must|have) to\b",
    r"\bfix (?:it|this|that|them)\b",
]

# Verbs that, opening a clause, tell the student what to do: advice, so a cause.
_IMPERATIVES = (
    "use|call|pass|add|subtract|divide|multiply|transpose|mask|keep|flatten|replace|give|apply|"
    "clip|hide|store|build|create|feed|loop|reduce|sort|lowercase|view|unsqueeze|"
    "squeeze|reshape|permute|scale|handle|train|register|move|put|drop|avoid|include|exclude|"
    "initiali[sz]e|shift|normali[sz]e|average|fill|swap|cast|convert|detach|wrap|stack|"
    "concatenate|gather|remove|delete|rename|skip|change|return|fix|look|set|break|"
    "compute|count|process|raise|write|do not|don't|never|always|be sure"
)
# A clause opens the text, or follows ": ", "; ", ". ", "! ", "(", "-- ", or ", then"/", and".
_CLAUSE_START = r"(?:^|[:;.!(]\s+|\(|--\s+|,\s+(?:then|and|or)\s+|\bthen\s+)"
_IMPERATIVE = rf"{_CLAUSE_START}(?:{_IMPERATIVES})\b(?![=_.])"

_CAUSE = re.compile("|".join([*_PHRASES, _IMPERATIVE]), re.IGNORECASE)
# Code quoted in backticks is a name, not a sentence: "`keep_dim`" opens no clause.
_QUOTED_CODE = re.compile(r"`[^`]*`")


def cause_words(text: str) -> list[str]:
    """The cause words of ``text`` (a message, f-string holes written ``{}``), in order."""
    plain = _QUOTED_CODE.sub("`code`", text)
    return [found.group(0).strip(" :;.!(,-") for found in _CAUSE.finditer(plain)]
