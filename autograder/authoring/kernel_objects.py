"""The student's objects in a check, wherever they live: in this process, or in the kernel
seen through the judge's proxies (calls observed, identities, copies into them)."""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from typing import Any

import torch

from autograder.judging import kernel


def is_remote(value: Any) -> bool:
    """A kernel object seen through the judge (checked without importing the judge)."""
    return getattr(type(value), "is_proxy", False) or hasattr(value, "__remote_id__")


def observe_call(kind: str, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> tuple[Any, Any]:
    """Call ``fn`` and observe it in the process that runs it.

    kind: "torch_functions" (sorted ``module.qualname`` of every torch function called),
    "aten_ops" (sorted aten op names), "peak_bytes" (peak tensor memory on the CPU; result None)
    or "calls_held" (``fn`` called once per positional argument, every result held until the last
    call returns, so that a result a later call changed arrives as that call left it; the result
    is the list of results, the observation [i, j, position] wherever results i and j are tuples
    holding one list object at ``position``).
    A kernel's observations are its own report: numbers are judged here, these only add bans.
    """
    if is_remote(fn):
        from autograder.judging import proxies

        return proxies.observed_call(fn, args, kwargs, kind)
    before = _requests_sent()
    observed = kernel.observe(kind, fn, args, kwargs)
    if _requests_sent() != before:
        # A function of this process that calls into a kernel (a repair's wrapper of the
        # student's answer, repairs.py): what ran there is not in what was observed here.
        raise ObservedElsewhere(
            f"the {kind} of a call were observed in the grader's process, while the call ran "
            "in the kernel: nothing can be concluded from them"
        )
    return observed


class ObservedElsewhere(RuntimeError):
    """An observation of a call whose work ran in another process: it measured nothing."""


def _requests_sent() -> int:
    """Requests this process has sent to kernels so far (0 where none was ever connected)."""
    proxies = sys.modules.get("autograder.judging.proxies")
    return proxies.requests_sent() if proxies is not None else 0


def identity(value: Any) -> int:
    """id() of an object, or of the original of a tensor a kernel sent by value."""
    return getattr(value, "origin_id", None) or id(value)


def same_object(a: Any, b: Any) -> bool:
    """Whether ``a`` and ``b`` are one object: in this process, or one kernel object seen
    through two proxies."""
    if a is b:
        return True
    if is_remote(a) and is_remote(b):
        from autograder.judging import proxies

        return proxies.same_remote(a, b)
    return False


# `self.<name> = ...` or `self.<name>: <annotation> = ...` in an answer cell's source
_ASSIGNED = re.compile(r"\bself\.([A-Za-z]\w*)\s*(?::[^=\n]*)?=(?!=)")


def attribute_names(owner: Any) -> list[str]:
    """The public attributes ``owner`` holds: its own, in this process; for a kernel's object,
    whose attributes the judge does not list, the names that the answer cells being judged assign
    to ``self`` (each then read from the object itself, where it may be missing)."""
    if is_remote(owner):
        from autograder.authoring.student_errors import answer_sources

        return sorted({name for source in answer_sources() for name in _ASSIGNED.findall(source)})
    return sorted(name for name in getattr(owner, "__dict__", {}) if not name.startswith("_"))


def sharing(owner: Any, names: tuple[str, ...]) -> list[str]:
    """The first group of ``owner``'s submodules ``names`` whose first parameters are one tensor
    (one object, in a kernel too), as where one part is stored under several names; else []."""
    holders: dict[int, list[str]] = {}
    for name in names:
        part = getattr(owner, name, None)
        first = next(iter(part.parameters()), None) if hasattr(part, "parameters") else None
        if isinstance(first, torch.Tensor):
            holders.setdefault(identity(first), []).append(name)
    return next((group for group in holders.values() if len(group) > 1), [])


def copy_into(owner: Any, name: str, value: torch.Tensor) -> None:
    """``owner.<name>.copy_(value)`` without autograd, also when ``owner`` lives in a kernel."""
    if is_remote(owner):
        from autograder.judging import proxies

        proxies.copy_into_remote(owner, name, value)
        return
    with torch.no_grad():
        getattr(owner, name).copy_(value)
