"""Repairs: an answer with one named mistake undone, so that grading can learn what that mistake
alone costs.

A repair is an experiment on the student's own answer: it runs that answer with one change that
undoes one named mistake (:class:`~autograder.authoring.mistakes.Mistake`), and nothing else.
Where a failing check passes on the repaired answer, that mistake is confirmed as the reason it
failed (a correct answer, repaired, would fail instead); where a whole cell earns full marks on
it, the cell fails only because of that mistake (:func:`autograder.authoring.registry.grade_cell`
then charges the mistake once per submission). A repair that does not fit an answer makes its
checks fail, so it confirms nothing and waives nothing.

One mistake may have several repairs, several ways to undo it (01's softmax over the queries'
axis: the queries and keys exchanged, or one sequence at a time for a softmax over dim=1).  A
check's failure is explained by the first that makes it pass, and they
are one mistake when charged.  A repair works on a kernel's objects as on this process's (the
grading command hands the checks proxies, and tensors that arrive contiguous), or it is not
declared: in-process grading and the grading command give one grade, and name one cause
confirmed by one repair (tests/judge_parity.py; tests/test_mutants.py has every repair confirm a
cause of a mutant graded through the command).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from autograder.authoring.check_modules import import_checks
from autograder.authoring.mistakes import Mistake

Undo = Callable[[Any], Any]  # the student's definition -> the same with the mistake undone


@dataclass(frozen=True)
class Repair:
    """How to undo ``mistake`` in the student's definition of ``name``."""

    mistake: Mistake
    name: str
    undo: Undo

    @property
    def key(self) -> str:
        """Which repair it is, unique in its assignment: "attention.softmax_over_queries
        (one_sequence_at_a_time)" (a mistake may have several repairs)."""
        return f"{self.mistake.key} ({getattr(self.undo, '__name__', 'undo')})"

    @property
    def cause(self) -> str:
        """The mistake in a few words, as feedback names it: "the softmax axis in `attention`"."""
        return f"the {self.mistake.family} in `{self.name}`"

    def applied_to(self, namespace: Mapping[str, Any]) -> Mapping[str, Any]:
        """``namespace`` with ``name`` repaired; every other name is the student's own."""
        return _Repaired(namespace, self)


# assignment -> its repairs, in the order they are declared (the order they are tried)
_REPAIRS: dict[str, list[Repair]] = {}


def repairs(assignment: str, mistake: Mistake, name: str) -> Callable[[Undo], Undo]:
    """Declare ``undo`` (the student's definition of ``name`` -> that definition with
    ``mistake`` undone) as the repair of ``mistake``, next to the checks that name it."""

    def register(undo: Undo) -> Undo:
        declared = _REPAIRS.setdefault(assignment, [])
        repair = Repair(mistake, name, undo)
        if any(r.key == repair.key for r in declared):
            raise ValueError(f"{assignment}: two repairs are {repair.key}; name their functions")
        declared.append(repair)
        return undo

    return register


def repairs_of(assignment: str) -> list[Repair]:
    """The repairs declared for ``assignment`` (its checks imported)."""
    import_checks(assignment)
    return list(_REPAIRS.get(assignment, ()))


class _Repaired(Mapping[str, Any]):
    """A namespace in which one name is the repaired answer (built when a check first asks)."""

    def __init__(self, namespace: Mapping[str, Any], repair: Repair):
        self.namespace = namespace
        self.repair = repair
        self.value: list[Any] = []

    def __getitem__(self, name: str) -> Any:
        if name != self.repair.name:
            return self.namespace[name]
        if not self.value:
            self.value.append(self.repair.undo(self.namespace[name]))
        return self.value[0]

    def __contains__(self, name: object) -> bool:
        return name in self.namespace

    def __iter__(self) -> Iterator[str]:
        return iter(self.namespace)

    def __len__(self) -> int:
        return len(self.namespace)
