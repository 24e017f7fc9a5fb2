"""In-place writes: an answer that changes the tensors it is given, seen on the call and told.

An answer that writes into its arguments (``q.div_(s)``, ``x -= mean``) changes its caller's
tensors. A check that used them again after the call, for its reference or a second call, would
judge the answer on inputs it never had and could blame a cause it does not have (issue 40's
f01-10: "scores are not scaled", for a q the answer had already divided). A check calls a pure
answer inside :func:`inputs_kept`: each tensor argument's values are kept before the call and
compared after it, and a change is told as what it is, observed on this very answer, before
anything is computed from that tensor again. Under the grading command the kernel copies such a
write back into the judge's tensor (autograder/judging/proxies.py), so the judge sees it as one
process would; a change of shape alone (``x.t_()``) is not copied back, nor is a write into a
NumPy array, so a check hands a NumPy answer copies of its arrays instead.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import torch

from autograder.authoring.mistakes import Mistake, catalogue
from autograder.authoring.registry import fail

T = TypeVar("T")

WRITTEN_IN_PLACE = "changed a tensor it was given, in place"


def written_in_place_mistake(assignment: str) -> Mistake:
    """WRITTEN_IN_PLACE as a named mistake of ``assignment`` (key "inputs.written_in_place"): any
    of its exercises may make it, and :func:`inputs_kept` names it only where a tensor argument
    changed during the call."""
    families = {"in-place writes": {"written_in_place": WRITTEN_IN_PLACE}}
    return catalogue(assignment, "inputs", families)["written_in_place"]


def _same(now: torch.Tensor, then: torch.Tensor) -> bool:
    """Whether a tensor holds what it held (a NaN where a NaN was counts as the same)."""
    if now.shape != then.shape or now.dtype != then.dtype:
        return False
    if torch.equal(now, then):
        return True
    return now.is_floating_point() and bool(((now == then) | (now.isnan() & then.isnan())).all())


def _change(now: torch.Tensor, then: torch.Tensor) -> str:
    """How a tensor changed during a call: its shape or dtype, or where its values moved and how
    many did (never a value: it may be a hidden input)."""
    if now.shape != then.shape or now.dtype != then.dtype:
        return (
            f"it was {tuple(then.shape)} {then.dtype} before the call and "
            f"{tuple(now.shape)} {now.dtype} after it"
        )
    moved = now != then
    if now.is_floating_point():
        moved &= ~(now.isnan() & then.isnan())
    where = tuple(int(i) for i in moved.nonzero()[0])
    # Where, and how many, but no value: the tensor may be a hidden input.
    return f"first at index {where}; {int(moved.sum())} of {moved.numel()} values changed"


@contextlib.contextmanager
def inputs_kept(what: str, **arguments: Any) -> Iterator[None]:
    """Run the block, a call of ``what`` given ``arguments`` (named as the statement names them);
    where it ends without an error, fail, naming the argument, if a tensor among them changed."""
    kept = {
        name: value.detach().clone()
        for name, value in arguments.items()
        if isinstance(value, torch.Tensor)
    }
    yield
    changed = [name for name, before in kept.items() if not _same(arguments[name].detach(), before)]
    if changed:
        first = changed[0]
        named = " and ".join(", ".join(f"`{name}`" for name in changed).rsplit(", ", 1))
        said = _change(arguments[first].detach(), kept[first])
        fail(
            f"`{what}` {WRITTEN_IN_PLACE}: its argument{'s' * (len(changed) > 1)} {named} "
            f"changed during the call ({f'`{first}`: ' * (len(changed) > 1)}{said}); the "
            "caller's tensors must keep their values"
        )


def on_copies(function: Callable[..., T]) -> Callable[..., T]:
    """``function`` handed copies of its tensor arguments, so that what it writes into them stays
    there: the repair of WRITTEN_IN_PLACE (autograder/authoring/repairs.py). It changes nothing
    else, so a failing check that passes with it failed for the write alone (on a correct answer
    it changes nothing at all).

    A tensor that requires grad is handed as it is: a student's kernel receives each such tensor
    as a leaf, where a write in place raises whether or not the judge copied it, so a copy (not
    a leaf) would repair here an answer that the grading command cannot repair."""

    def copied(value: Any) -> Any:
        fresh = isinstance(value, torch.Tensor) and not value.requires_grad
        return value.clone() if fresh else value

    def repaired(*args: Any, **kwargs: Any) -> T:
        return function(
            *(copied(a) for a in args), **{key: copied(value) for key, value in kwargs.items()}
        )

    return repaired
