"""Modules that a model holds where nn.Module does not register them (in a plain list, tuple or
dict): the model's .to(), .double(), .eval() and .parameters() never reach them.

Observed on the student's objects wherever they live (kernel_objects.py): a cause is told only
where the object shows it, here a dtype that the model's own conversion left behind.
"""

from __future__ import annotations

import re
from typing import Any

from torch import nn

from autograder.authoring.kernel_objects import attribute_names, identity
from autograder.authoring.registry import StopChecks

# torch's messages where two operands' dtypes clash (a float32 weight meets float64 inputs)
_DTYPE_CLASH = re.compile(r"same dtype|scalar type|type \(torch\.\w+\) and weight type", re.I)


def unregistered_modules(owner: Any) -> dict[str, tuple[str, list[Any]]]:
    """``owner``'s attributes that hold modules in a plain list, tuple or dict: name -> (the
    container's type name, the modules in it none of whose parameters ``owner.parameters()``
    holds)."""
    registered = {identity(p) for p in owner.parameters()}
    found: dict[str, tuple[str, list[Any]]] = {}
    for name in attribute_names(owner):
        try:
            held = getattr(owner, name, None)
        except StopChecks:
            raise
        except Exception:  # noqa: BLE001 - a property of the student's that raises: not held
            continue
        if isinstance(held, nn.Module) or not isinstance(held, list | tuple | dict):
            continue
        items = list(held.values()) if isinstance(held, dict) else list(held)
        left_out = [
            module
            for module in items
            if isinstance(module, nn.Module)
            and (own := list(module.parameters()))
            and not any(identity(p) in registered for p in own)
        ]
        if left_out:
            found[name] = (type(held).__name__, left_out)
    return found


def dtype_left_behind(model: Any, error: BaseException) -> str | None:
    """Why ``model`` raised ``error``, a dtype clash, where it holds unregistered modules whose
    parameters have another dtype than all of its registered ones, in words; None where the model
    does not show that, or cannot be looked at (a kernel's model holding one of the grader's
    stand-ins cannot be walked from the judge)."""
    if not _DTYPE_CLASH.search(str(error)):
        return None
    try:
        return _left_behind(model)
    except StopChecks:
        raise
    except Exception:  # noqa: BLE001 - a failure to look is never the student's
        return None


def _left_behind(model: Any) -> str | None:
    """dtype_left_behind's sentence for ``model``, or None."""
    dtypes = {p.dtype for p in model.parameters()}
    if len(dtypes) != 1:
        return None
    (dtype,) = dtypes
    for name, (kind, modules) in unregistered_modules(model).items():
        kept = sorted({str(p.dtype) for m in modules for p in m.parameters()} - {str(dtype)})
        if kept:
            return (
                f"self.{name} is a plain Python {kind}, and nn.Module does not register the "
                f"modules in it: their weights are {', '.join(kept)} where the model's own are "
                f"{dtype}, since the model's .to(), .double() and .float() skip them, and "
                "model.parameters(), what an optimizer trains, leaves them out; assign a single "
                "layer to an attribute itself, or hold several in nn.ModuleList"
            )
    return None
