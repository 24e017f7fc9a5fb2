"""Reference bans: the references an exercise's answer must not call, declared once per exercise
(:func:`ban`), found in the answer's code, and enforced in every check that requires it."""

from __future__ import annotations

import dis
import functools
import inspect
import types
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn
from torch.nn import functional as F

from autograder.authoring.kernel_objects import is_remote
from autograder.authoring.registry import CheckFailed, Namespace, fail, running_check

# torch's own attention, by every entry point a notebook can reach: the public function, its
# private kernels and their aten operators.  An exercise that writes attention bans them all.
_ATEN_SCALED_DOT_PRODUCT = (
    "scaled_dot_product_attention",
    "_scaled_dot_product_attention_math",
    "_scaled_dot_product_flash_attention",
    "_scaled_dot_product_flash_attention_for_cpu",
    "_scaled_dot_product_efficient_attention",
    "_scaled_dot_product_cudnn_attention",
    "_fused_sdp_choice",
    "_masked_softmax",
    "_safe_softmax",
)
TORCH_SCALED_DOT_PRODUCT: dict[str, Callable[..., Any]] = {
    "F.scaled_dot_product_attention": F.scaled_dot_product_attention,
    **{f"torch.ops.aten.{op}": getattr(torch.ops.aten, op) for op in _ATEN_SCALED_DOT_PRODUCT},
}
# torch's multi-head attention, likewise: the module, its functional form and fused kernels.
_ATEN_MULTI_HEAD = ("_native_multi_head_attention", "_transformer_encoder_layer_fwd")
TORCH_MULTI_HEAD: dict[str, Callable[..., Any] | type] = {
    "nn.MultiheadAttention": nn.MultiheadAttention,
    "F.multi_head_attention_forward": F.multi_head_attention_forward,
    "torch._native_multi_head_attention": torch._native_multi_head_attention,
    **{f"torch.ops.aten.{op}": getattr(torch.ops.aten, op) for op in _ATEN_MULTI_HEAD},
}
# torch's causal masks, the public method and the private helper behind it.
TORCH_CAUSAL_MASK: dict[str, Callable[..., Any]] = {
    "nn.Transformer.generate_square_subsequent_mask": (
        nn.Transformer.generate_square_subsequent_mask
    ),
    "nn.modules.transformer._generate_square_subsequent_mask": (
        nn.modules.transformer._generate_square_subsequent_mask
    ),
}


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
    if is_remote(obj):
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


def enforce_bans(namespace: Namespace, used: str) -> None:
    """Fail the running check if ``used`` brings a ban that its exercise's answer breaks; and
    have every later call of a kernel function under a ban observed where it runs, so that one
    reaching a banned torch function fails whatever name it was reached by."""
    entry = running_check()
    if entry is None:
        return
    for reference_ban in bans_using(entry.assignment, used):
        if reference_ban.name not in namespace:
            continue  # the check that requires it says it is missing
        answer = namespace[reference_ban.name]
        try:
            forbid_references(answer, reference_ban.banned, f"`{reference_ban.name}`")
        except CheckFailed as failure:
            raise CheckFailed(reference_ban.check_name, failure.diagnosis) from None
        _watch_torch_calls(answer, reference_ban)


def _torch_functions(banned: Mapping[str, Callable[..., Any] | type]) -> dict[str, str]:
    """The banned functions of torch itself, by the name their calls are observed under."""
    return {
        target.__name__: label
        for label, target in banned.items()
        if not isinstance(target, type)
        and str(getattr(target, "__module__", "")).split(".")[0] == "torch"
    }


def _watch_torch_calls(answer: Any, reference_ban: ReferenceBan) -> None:
    """Observe each call of a kernel function or class ``answer``, and of the instances a class
    makes, where it runs: one that runs a banned torch function, by any route (``torch.ops``,
    ``getattr``, a name built at run time, a module held inside), fails."""
    names = _torch_functions(reference_ban.banned)
    if not names or not is_remote(answer):
        return
    from autograder.judging import proxies

    exercise = f"`{reference_ban.name}`"

    def judge(observed: list[str]) -> None:
        for function in observed:
            label = names.get(function.rsplit(".", 1)[-1])
            if label is not None:
                raise CheckFailed(
                    reference_ban.check_name,
                    f"{exercise} ran {label} when the grader called it: write the computation "
                    "yourself (no credit for calling the reference)",
                )

    proxies.watch(answer, judge)
