"""Building blocks that hidden checks share: lookups, hidden seeds, diagnosis, reference bans."""

from __future__ import annotations

import dis
import functools
import inspect
import types
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from autograder.authoring.hidden_seeds import hidden_seed
from autograder.authoring.registry import (
    HELPER_LABEL,
    CheckFailed,
    Namespace,
    running_check,
)
from autograder.judging import kernel


def fail(diagnosis: object) -> None:
    """Fail the running check with a one-sentence diagnosis, a str or a named mistake (run_check
    adds the check's name)."""
    raise CheckFailed(HELPER_LABEL, str(diagnosis))


def require(namespace: Namespace, name: str, kind: type | None = None) -> Any:
    """The submission's definition of ``name``, or a clear failure if it is missing.

    Inside a check, a reference ban declared for ``name`` (:func:`ban`) is enforced first, so
    every cell whose checks use an exercise's answer carries that exercise's ban.
    """
    if name not in namespace:
        fail(f"`{name}` is not defined: did you rename or delete it, or skip running its cell?")
    value = namespace[name]
    if kind is not None and not (
        isinstance(value, kind) or (kind is type and inspect.isclass(value))
    ):
        fail(f"`{name}` should be a {kind.__name__}, got {type(value).__name__}")
    _enforce_bans(namespace, name)
    entry = running_check()
    if entry is not None:
        REQUIRED.add((entry.assignment, entry.grade_id, name))
    return value


# (assignment, graded cell, name): every name a check of that cell has required, in this
# process (tests/test_mutants.py holds them to the cells' declared dependencies)
REQUIRED: set[tuple[str, str, str]] = set()


def hidden_generator(label: str) -> torch.Generator:
    """A torch.Generator seeded from ``label`` and the course secret (:mod:`.hidden_seeds`)."""
    return torch.Generator().manual_seed(hidden_seed(label))


def draw_seed(generator: torch.Generator) -> int:
    """A seed for ``torch.manual_seed`` drawn from a hidden generator (model inits, dropout)."""
    return int(torch.randint(2**31, (1,), generator=generator))


def random_sizes(generator: torch.Generator, count: int, low: int = 2, high: int = 9) -> list[int]:
    """``count`` distinct sizes in [low, high], so no two axes can be confused."""
    if high - low + 1 < count:
        raise ValueError(f"cannot draw {count} distinct sizes from [{low}, {high}]")
    pool = torch.randperm(high - low + 1, generator=generator)[:count] + low
    return [int(x) for x in pool]


def is_close(actual: Any, expected: torch.Tensor, atol: float = 1e-5, rtol: float = 1e-4) -> bool:
    """True when ``actual`` is a tensor of ``expected``'s shape and values (NaN never matches)."""
    if not isinstance(actual, torch.Tensor) or actual.shape != expected.shape:
        return False
    actual = actual.detach().to(torch.float64).cpu()
    return bool(
        torch.allclose(actual, expected.detach().to(torch.float64).cpu(), atol=atol, rtol=rtol)
    )


SQUEEZED = (
    "an axis of size 1 disappeared (a batch of one, one head, or a length of one): squeeze() "
    "drops every such axis, so use squeeze(dim) on the axis you mean, or index it"
)


def squeezed(actual: Any, expected_shape: Sequence[int]) -> bool:
    """True when ``actual`` is a tensor of ``expected_shape`` with its size-1 axes dropped."""
    kept = tuple(size for size in expected_shape if size != 1)
    shape = tuple(getattr(actual, "shape", ()))
    return isinstance(actual, torch.Tensor) and shape != tuple(expected_shape) and shape == kept


def diagnose(
    actual: Any,
    expected: torch.Tensor,
    mistakes: Mapping[Any, torch.Tensor],
    otherwise: str,
    *,
    atol: float = 1e-5,
) -> None:
    """Pass if ``actual`` matches ``expected``; else fail naming the known mistake it matches.

    mistakes: diagnosis (a str or a :class:`~autograder.authoring.mistakes.Mistake`) -> what a
    submission with that misconception would return. A mistake is named only when ``actual``
    matches its output and no other mistake's: where two match, the answer could make either.
    otherwise: what is wrong when no known mistake matches; where the values first differ, and
    by how much, is added to it.
    """
    if is_close(actual, expected, atol=atol):
        return
    if squeezed(actual, expected.shape):
        fail(f"{SQUEEZED} (expected shape {tuple(expected.shape)}, got {tuple(actual.shape)})")
    matched: list[str] = []
    if isinstance(actual, torch.Tensor) and not torch.isfinite(actual.detach()).all():
        matched = [
            str(diagnosis)
            for diagnosis, value in mistakes.items()
            if not torch.isfinite(value).all() and actual.shape == value.shape
        ]
    if not matched:
        matched = [str(d) for d, value in mistakes.items() if is_close(actual, value, atol=atol)]
    if len(set(matched)) == 1:
        fail(matched[0])
    if isinstance(actual, torch.Tensor) and actual.shape != expected.shape:
        fail(f"{otherwise} (expected shape {tuple(expected.shape)}, got {tuple(actual.shape)})")
    fail(f"{otherwise} ({first_difference(actual, expected, atol)})")


def first_difference(actual: Any, expected: torch.Tensor, atol: float = 1e-5) -> str:
    """Where ``actual`` first departs from ``expected`` (same shape), and by how much at most."""
    if not isinstance(actual, torch.Tensor):
        return f"expected a tensor, got {type(actual).__name__}"
    got = actual.detach().to(torch.float64).cpu()
    want = expected.detach().to(torch.float64).cpu()
    differs = ~torch.isclose(got, want, atol=atol, rtol=1e-4)
    if not differs.any():
        return "the values agree within the tolerance"
    where = tuple(int(i) for i in differs.nonzero()[0])
    gap = (got - want).abs().nan_to_num(float("inf"))
    return (
        f"first difference at index {where}: got {got[where].item():.4g}, expected "
        f"{want[where].item():.4g}; {int(differs.sum())} of {differs.numel()} values differ, "
        f"by up to {gap.max().item():.3g}"
    )


def _code_objects(code: types.CodeType) -> Iterable[types.CodeType]:
    yield code
    for constant in code.co_consts:
        if isinstance(constant, types.CodeType):
            yield from _code_objects(constant)


def _functions_of(obj: Any) -> list[types.FunctionType]:
    """The plain functions behind a function, a method or a class's own methods."""
    if inspect.isclass(obj):
        return [f for f in vars(obj).values() if isinstance(f, types.FunctionType)]
    function = getattr(obj, "__func__", obj)
    functions = []
    while isinstance(function, types.FunctionType) and function not in functions:
        functions.append(function)
        function = getattr(function, "__wrapped__", None)  # a decorator's wrapper hides the body
    return functions


def forbid_references(
    obj: Any, banned: Mapping[str, Callable[..., Any] | type], exercise: str
) -> None:
    """Fail if ``obj`` subclasses, or its code uses, any banned reference implementation.

    banned: a readable name -> the banned object. An attribute access such as
    ``F.scaled_dot_product_attention`` is matched by the attribute's name; a global such as
    ``sdpa`` after ``from ... import scaled_dot_product_attention as sdpa`` is matched by
    identity, so the student's own class called ``LayerNorm`` is not mistaken for torch's.
    """
    if inspect.isclass(obj):
        for label, target in banned.items():
            if inspect.isclass(target) and issubclass(obj, target):
                fail(
                    f"{exercise} subclasses {label} instead of implementing it: write it "
                    "yourself (no credit for calling the reference)"
                )
    if _is_remote(obj):
        _forbid_in_source(obj, banned, exercise)
        return
    by_name: dict[str, str] = {}
    for label, target in banned.items():  # first label wins when two share a name
        by_name.setdefault(getattr(target, "__name__", label), label)
    by_id = {id(target): label for label, target in banned.items()}
    # The answer's name re-bound to a reference (attention = F.scaled_dot_product_attention).
    for bound, how in ((obj, "is"), (getattr(obj, "__func__", None), "wraps")):
        if bound is not None and id(bound) in by_id:
            fail(
                f"{exercise} {how} {by_id[id(bound)]} itself: write it yourself "
                "(no credit for calling the reference)"
            )
    if isinstance(obj, functools.partial) and id(obj.func) in by_id:
        fail(
            f"{exercise} is a functools.partial of {by_id[id(obj.func)]}: write it yourself "
            "(no credit for calling the reference)"
        )
    # A banned class's own methods, e.g. assigned as MyAttention.forward = Reference.forward.
    borrowed = {
        id(function): label
        for label, target in banned.items()
        if inspect.isclass(target)
        for function in _functions_of(target)
    }
    # (who owns the code, as the message names it; the code): a helper is named, not the answer
    pending = [(exercise, function) for function in _functions_of(obj)]
    seen: set[int] = set()
    while pending:
        owner, function = pending.pop()
        if id(function) in seen:
            continue
        seen.add(id(function))
        if id(function) in borrowed:
            fail(
                f"{exercise} uses {borrowed[id(function)]}'s own {function.__qualname__} instead "
                "of implementing it: write it yourself (no credit for calling the reference)"
            )
        for code in _code_objects(function.__code__):
            for instruction in dis.get_instructions(code):
                label = None
                if instruction.opname in ("LOAD_ATTR", "LOAD_METHOD"):
                    label = by_name.get(instruction.argval)
                elif instruction.opname in ("LOAD_GLOBAL", "LOAD_NAME"):
                    target = function.__globals__.get(instruction.argval)
                    label = by_id.get(id(target)) if target is not None else None
                    # Follow the student's own helpers, which live in the same namespace.
                    if label is None and getattr(target, "__module__", None) == function.__module__:
                        helper = f"`{instruction.argval}`"
                        pending.extend((helper, f) for f in _functions_of(target))
                if label is not None:
                    who = owner if owner == exercise else f"{owner}, which {exercise} uses,"
                    fail(
                        f"{who} calls {label} instead of implementing it: write the "
                        "computation yourself (no credit for calling the reference)"
                    )


def _is_remote(value: Any) -> bool:
    """A kernel object seen through the judge (checked without importing the judge)."""
    return getattr(type(value), "is_proxy", False) or hasattr(value, "__remote_id__")


def _forbid_in_source(
    obj: Any, banned: Mapping[str, Callable[..., Any] | type], exercise: str
) -> None:
    """forbid_references for a kernel object: judged from the notebook's source text."""
    from autograder.judging import proxies, source_bans

    name, sources = proxies.origin_of(obj), source_bans.current_sources()
    if name is None or sources is None:
        fail(f"{exercise} could not be checked for calls to the reference")
    found = source_bans.banned_use(sources, name, banned)
    if found is None:
        return
    if found.reference is not None:
        fail(f"{found.seen}: write it yourself (no credit for calling the reference)")
    fail(
        f"{found.seen}: bind {exercise} only by its own def or class (no credit for an answer "
        "the grader cannot check for calls to the reference)"
    )


@dataclass(frozen=True, eq=False)  # one per declaration, compared by identity
class ReferenceBan:
    """Exercise ``name`` must use none of ``banned``; a failure is reported as ``check_name``."""

    name: str
    banned: Mapping[str, Callable[..., Any] | type]
    check_name: str


# (assignment, a name a check requires) -> the bans that using it brings
_BANS: dict[tuple[str, str], list[ReferenceBan]] = {}


def ban(
    assignment: str,
    name: str,
    banned: Mapping[str, Callable[..., Any] | type],
    *,
    check_name: str | None = None,
    instances: Sequence[str] = (),
) -> ReferenceBan:
    """Declare, once per exercise, that the submission's ``name`` uses none of ``banned``.

    Every check of ``assignment`` that requires ``name``, or one of ``instances`` (names bound to
    objects built from it, such as a trained ``model``), first fails with ``check_name`` (by
    default ``<name>_does_not_call_the_reference``) if ``name`` uses a banned reference
    (:func:`forbid_references`): calling the reference earns nothing, on every cell.
    """
    entry = ReferenceBan(name, banned, check_name or f"{name}_does_not_call_the_reference")
    for used in (name, *instances):
        _BANS.setdefault((assignment, used), []).append(entry)
    return entry


def bans_of(assignment: str) -> list[ReferenceBan]:
    """Every reference ban declared for ``assignment`` (its checks must be imported)."""
    found = [entry for (a, _), entries in _BANS.items() if a == assignment for entry in entries]
    return list(dict.fromkeys(found))


def bans_using(assignment: str, used: str) -> list[ReferenceBan]:
    """The bans that a check of ``assignment`` brings when it requires ``used``."""
    return list(_BANS.get((assignment, used), ()))


def _enforce_bans(namespace: Namespace, used: str) -> None:
    """Fail the running check if ``used`` brings a ban that its exercise's answer breaks."""
    entry = running_check()
    if entry is None:
        return
    for reference_ban in bans_using(entry.assignment, used):
        if reference_ban.name not in namespace:
            continue  # the check that requires it says it is missing
        try:
            forbid_references(
                namespace[reference_ban.name], reference_ban.banned, f"`{reference_ban.name}`"
            )
        except CheckFailed as failure:
            raise CheckFailed(reference_ban.check_name, failure.diagnosis) from None


def observe_call(kind: str, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> tuple[Any, Any]:
    """Call ``fn`` and observe it in the process that runs it.

    kind: "torch_functions" (sorted ``module.qualname`` of every torch function called),
    "aten_ops" (sorted aten op names) or "peak_bytes" (peak tensor memory on the CPU; result None).
    A kernel's observations are its own report: numbers are judged here, these only add bans.
    """
    if _is_remote(fn):
        from autograder.judging import proxies

        return proxies.observed_call(fn, args, kwargs, kind)
    return kernel.observe(kind, fn, args, kwargs)


def identity(value: Any) -> int:
    """id() of an object, or of the original of a tensor a kernel sent by value."""
    return getattr(value, "origin_id", None) or id(value)


def copy_into(owner: Any, name: str, value: torch.Tensor) -> None:
    """``owner.<name>.copy_(value)`` without autograd, also when ``owner`` lives in a kernel."""
    if _is_remote(owner):
        from autograder.judging import proxies

        proxies.copy_into_remote(owner, name, value)
        return
    with torch.no_grad():
        getattr(owner, name).copy_(value)
