"""Named mistakes: every diagnosis that names a cause has one stable identity, per exercise.

A message names a cause only when the answer's output matches the output of that mistake
(:func:`autograder.authoring.diagnosis.diagnose`, given ``{mistake: output_of_that_mistake}``);
otherwise it says what was seen. Each exercise lists its mistakes by family (the kinds of
variation a student's answer takes: the clipping kind, where a norm sits, which ids are kept) in
a catalogue next to its checks, so that the mutation corpus can declare which mistakes each wrong
mutant makes, and tests/test_mutants.py can assert that no mutant is told of one it does not make,
and that every family has a mutant.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from autograder.authoring.check_modules import import_checks


@dataclass(frozen=True)
class Mistake:
    """One named mistake of an exercise; ``str()`` is the message a student reads."""

    key: str  # "<exercise>.<name>", unique in its assignment
    family: str
    message: str

    def __str__(self) -> str:
        return self.message


# assignment -> key -> its mistake
_CATALOGUE: dict[str, dict[str, Mistake]] = {}


def catalogue(
    assignment: str, exercise: str, families: Mapping[str, Mapping[str, str]]
) -> dict[str, Mistake]:
    """Declare the named mistakes of ``exercise``: family -> name -> message; name -> Mistake.

    A message must not contain another mistake's message of the same assignment, so that the
    mistake a message names can be read back from it (:func:`named_in`).
    """
    found: dict[str, Mistake] = {}
    registered = _CATALOGUE.setdefault(assignment, {})
    for family, named in families.items():
        for name, message in named.items():
            mistake = Mistake(f"{exercise}.{name}", family, message)
            if name in found or registered.get(mistake.key, mistake) != mistake:
                raise ValueError(f"{assignment}: the mistake {mistake.key} is declared twice")
            found[name] = registered[mistake.key] = mistake
    return found


def mistakes_of(assignment: str) -> dict[str, Mistake]:
    """key -> mistake, for every mistake declared for ``assignment`` (its checks imported)."""
    import_checks(assignment)
    return dict(_CATALOGUE.get(assignment, {}))


def named_in(assignment: str, diagnosis: str) -> set[str]:
    """The keys of the mistakes of ``assignment`` whose message ``diagnosis`` contains."""
    return {key for key, m in mistakes_of(assignment).items() if m.message in diagnosis}
