"""Mistakes by operation: what an answer returns when it does one operation another way.

A mistake is named only where the answer's output matches the output of that mistake
(:func:`autograder.authoring.diagnosis.diagnose`).  That output is computed here, once per kind of
operation, for every exercise: a :class:`Slip` runs the exercise's own reference with one
operation changed -- the softmax over another axis, the scores scaled by another factor, the mask
reversed or shifted off its diagonal, top-k keeping one id more or fewer, masked scores filled
with a finite number, one maximum over every axis where the reference takes each row's, which
rows hold a True asked of another axis, a reduction that drops its kept axis, a slice of width
one written as an index (``x[:, -1]`` for ``x[:, -1:]``), a concatenation along another axis,
probabilities returned for logits, a cross-entropy given probabilities -- so that 07's chunked
attention gets 01's scale mistakes, 06's ``sample`` and ``lm_loss`` its softmax-axis mistakes,
and 05's ``train_step`` and 06's ``lm_loss`` the same softmax before the cross-entropy, without a
copy.

Three ways to change an operation, one per kind of slip:

- while the reference runs (:class:`OperationSlip`, a ``TorchFunctionMode``): every call of that
  torch operation, as a function or as a method, is done another way;
- in the reference's arguments (:class:`ArgumentSlip`): the scale factor it is given, or the mask;
- after it, on its output (:class:`OutputSlip`): a softmax over the logits it returns.

Where a slip makes the reference raise, as the heads concatenated along the positions make the
output projection raise, the answer's own error is the evidence: :func:`raising_alike` names the
slips with which the reference raises that very error.

Each slip has a family and a name; an exercise's catalogue (autograder/authoring/mistakes.py)
gives a message to the names it can tell apart, in the exercise's own words.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor
from torch.overrides import TorchFunctionMode

Reference = Callable[..., Any]


class Slip:
    """One operation done another way; ``output`` is what the reference returns with it."""

    family: str
    name: str

    def output(self, reference: Reference, arguments: Mapping[str, Any]) -> Any:
        """``reference(**arguments)`` with this slip."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.family!r}, {self.name!r})"


# (operation name, args, kwargs) -> the args and kwargs to call it with, or None: unchanged
Change = Callable[[str, tuple, dict], "tuple[tuple, dict] | None"]


class _Rewrite(TorchFunctionMode):
    """Calls every torch operation (function or method) through ``change``."""

    def __init__(self, change: Change):
        super().__init__()
        self.change = change
        self.changed = 0  # how many calls it changed

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        changed = self.change(getattr(func, "__name__", ""), args, kwargs)
        if changed is None:
            return func(*args, **kwargs)
        self.changed += 1
        return func(*changed[0], **changed[1])


def _argument(args: tuple, kwargs: dict, position: int, name: str, default: Any) -> Any:
    """The argument at ``position`` (counting the tensor as 0) or keyword ``name``."""
    if name in kwargs:
        return kwargs[name]
    return args[position] if len(args) > position else default


def _with_argument(
    args: tuple, kwargs: dict, position: int, name: str, value: Any
) -> tuple[tuple, dict]:
    """``args, kwargs`` with the argument at ``position`` or keyword ``name`` set to ``value``."""
    if name not in kwargs and len(args) > position:
        return (*args[:position], value, *args[position + 1 :]), kwargs
    return args, {**kwargs, name: value}


class OperationSlip(Slip):
    """Every call of some torch operations, while the reference runs, changed by ``change``;
    the output is None (no mistake to compare with) where the reference made no such call."""

    def __init__(self, family: str, name: str, change: Change):
        self.family, self.name, self.change = family, name, change

    def output(self, reference: Reference, arguments: Mapping[str, Any]) -> Any:
        mode = _Rewrite(self.change)
        with mode:
            result = reference(**arguments)
        return result if mode.changed else None


@dataclass(frozen=True, repr=False)
class ArgumentSlip(Slip):
    """The reference given other arguments: ``change(arguments)`` -> the arguments it gets."""

    family: str
    name: str
    change: Callable[[dict[str, Any]], dict[str, Any]]

    def output(self, reference: Reference, arguments: Mapping[str, Any]) -> Any:
        return reference(**self.change(dict(arguments)))


def outputs(
    reference: Reference, arguments: Mapping[str, Any], slips: Iterable[Slip]
) -> dict[str, Any]:
    """slip name -> what ``reference(**arguments)`` returns with that slip, for every slip that
    changes an operation the reference does and runs on these arguments (a slip that raises, as
    top-k with k + 1 > V does, is no answer anyone returns)."""
    found = {}
    with torch.no_grad():
        for slip in slips:
            try:
                value = slip.output(reference, arguments)
            except (RuntimeError, IndexError, ValueError):
                continue
            if value is not None:
                found[slip.name] = value
    return found


# ---------------------------------------------------------------------------------------------
# softmax or log-softmax over another axis

SOFTMAX_AXIS = "softmax axis"
SOFTMAX_OPERATIONS = {"softmax", "log_softmax"}


def softmax_over(axis: int, name: str | None = None) -> OperationSlip:
    """Every softmax and log-softmax (torch., F., Tensor.) taken over ``axis`` of its input,
    whatever axis the reference asks for; named ``softmax_over_axis_<axis>`` by default."""

    def change(operation: str, args: tuple, kwargs: dict) -> tuple[tuple, dict] | None:
        if operation not in SOFTMAX_OPERATIONS:
            return None
        ndim = args[0].dim()
        asked = _argument(args, kwargs, 1, "dim", None)
        if asked is None or asked % ndim == axis % ndim:
            return None
        return _with_argument(args, kwargs, 1, "dim", axis)

    return OperationSlip(SOFTMAX_AXIS, name or f"softmax_over_axis_{axis}", change)


def softmax_axis_slips(ndim: int, right: int = -1) -> list[OperationSlip]:
    """A softmax over each axis of an ``ndim``-dimensional input but ``right``, named by its
    negative index (``softmax_over_axis_-2``: the queries of a (..., L_q, L_k) score matrix)."""
    return [
        softmax_over(axis - ndim) for axis in range(ndim) if (axis - ndim) % ndim != right % ndim
    ]


# ---------------------------------------------------------------------------------------------
# the scale factor of the scores

SCALE = "scaling"


def scale_slips(d_k: int, sizes: Mapping[str, int] | None = None) -> list[ArgumentSlip]:
    """The scores scaled by another factor than 1/√d_k, through the reference's ``scale``
    argument (a factor, as attention_lab's scaled_dot_product_attention takes it):
    not_scaled, divided_by_d_k, multiplied_by_sqrt_d_k, and scaled_by_sqrt_<size> for each other
    ``sizes`` ({"l_k": L_k, "d_v": d_v, "d_model": d_model}). A factor equal to the right one
    (a size equal to d_k) is left out: an answer with it is right on these inputs."""
    right = 1 / math.sqrt(d_k)
    factors = {
        "not_scaled": 1.0,
        "divided_by_d_k": 1 / d_k,
        "multiplied_by_sqrt_d_k": math.sqrt(d_k),
        **{f"scaled_by_sqrt_{size}": 1 / math.sqrt(n) for size, n in (sizes or {}).items()},
    }
    return [
        ArgumentSlip(SCALE, name, _scaled_by(factor))
        for name, factor in factors.items()
        if not math.isclose(factor, right)
    ]


def scale_factors_apart(d_k: int, sizes: Mapping[str, int] | None = None) -> bool:
    """True where no two of 1, d_k, √d_k and each other size n and √n of ``sizes`` are equal, so
    that the factors of :func:`scale_slips` differ from one another and from the right one on
    these sizes, and an answer matches one slip's output at most. With d_model = 9 and
    head_size = 3, dividing by √d_model and by head_size give the same numbers, and neither can
    be named (blind answer k06-02): a draw that names a scale slip redraws until this holds."""
    others = list((sizes or {}).values())
    values = [1.0, d_k, math.sqrt(d_k), *others, *(math.sqrt(n) for n in others)]
    return not any(math.isclose(a, b) for i, a in enumerate(values) for b in values[i + 1 :])


def _scaled_by(factor: float) -> Callable[[dict[str, Any]], dict[str, Any]]:
    return lambda arguments: {**arguments, "scale": factor}


# ---------------------------------------------------------------------------------------------
# the mask: polarity, the diagonal, a transposition, and what fills the hidden scores

MASK = "mask"
CAUSAL_MASK = "causal mask"


def _masked(transform: Callable[[Tensor], Tensor]) -> Callable[[dict[str, Any]], dict[str, Any]]:
    return lambda arguments: {**arguments, "mask": transform(arguments["mask"].bool())}


def mask_slips() -> list[ArgumentSlip]:
    """A mask (..., L_q, L_k) of any pattern, True = may attend, given reversed: mask_reversed."""
    return [ArgumentSlip(MASK, "mask_reversed", _masked(lambda mask: ~mask))]


def causal_mask_slips() -> list[ArgumentSlip]:
    """A causal mask (..., L, L), True on and below the diagonal, given another way: reversed
    (the future shown, the past hidden), hides_diagonal (j < i), shows_next (j <= i + 1),
    transposed (j >= i)."""
    return [
        ArgumentSlip(CAUSAL_MASK, "reversed", _masked(lambda mask: ~mask)),
        ArgumentSlip(CAUSAL_MASK, "hides_diagonal", _masked(lambda mask: mask.tril(-1))),
        ArgumentSlip(CAUSAL_MASK, "shows_next", _masked(_shows_next)),
        ArgumentSlip(CAUSAL_MASK, "transposed", _masked(lambda mask: mask.transpose(-2, -1))),
    ]


def _shows_next(mask: Tensor) -> Tensor:
    return mask | torch.ones_like(mask).tril(1) & ~torch.ones_like(mask).tril()


def finite_fill(value: float = -100.0) -> OperationSlip:
    """Hidden scores filled with a finite ``value`` (-100, -1e9) where the reference fills -inf:
    they keep a little weight (finite_fill)."""

    def change(operation: str, args: tuple, kwargs: dict) -> tuple[tuple, dict] | None:
        if operation not in {"masked_fill", "masked_fill_"}:
            return None
        fill = _argument(args, kwargs, 2, "value", None)
        if not (isinstance(fill, float) and fill == -math.inf):
            return None
        return _with_argument(args, kwargs, 2, "value", value)

    return OperationSlip(MASK, "finite_fill", change)


# ---------------------------------------------------------------------------------------------
# off by one: top-k


TOP_K = "top-k"


def top_k_off_by(delta: int, name: str) -> OperationSlip:
    """Every torch.topk keeping k + ``delta`` values (k - 1 = 0 or k + 1 > the size raises, and
    is no slip)."""

    def change(operation: str, args: tuple, kwargs: dict) -> tuple[tuple, dict] | None:
        if operation != "topk":
            return None
        k = _argument(args, kwargs, 1, "k", None)
        if k is None or k + delta < 1:
            raise ValueError(f"top-k with k = {k + delta} keeps nothing")
        return _with_argument(args, kwargs, 1, "k", k + delta)

    return OperationSlip(TOP_K, name, change)


def top_k_slips() -> list[OperationSlip]:
    """top_k_one_more and top_k_one_fewer."""
    return [top_k_off_by(1, "top_k_one_more"), top_k_off_by(-1, "top_k_one_fewer")]


# ---------------------------------------------------------------------------------------------
# keepdim and broadcasting

KEEPDIM = "keepdim"
REDUCTIONS = {
    "amax",
    "amin",
    "max",
    "min",
    "sum",
    "mean",
    "logsumexp",
    "std",
    "var",
    "norm",
    "any",
    "all",
}


def keepdim_dropped() -> OperationSlip:
    """Every reduction asked for keepdim=True run without it: its result then broadcasts
    against the other axis, or raises (no slip) where the sizes do not allow it."""

    def change(operation: str, args: tuple, kwargs: dict) -> tuple[tuple, dict] | None:
        if operation not in REDUCTIONS or kwargs.get("keepdim") is not True:
            return None
        return args, {**kwargs, "keepdim": False}

    return OperationSlip(KEEPDIM, "keepdim_dropped", change)


def trailing_axis_dropped() -> OperationSlip:
    """Every ``unsqueeze(-1)`` left out: done as ``unsqueeze(0)``, which broadcasts against a
    tensor of one more axis exactly as the tensor without it does (its axes lined up with the
    other's last ones), raising the same error where the sizes do not allow it."""

    def change(operation: str, args: tuple, kwargs: dict) -> tuple[tuple, dict] | None:
        if operation != "unsqueeze":
            return None
        tensor, dim = args[0], _argument(args, kwargs, 1, "dim", None)
        if dim is None or dim not in (-1, tensor.dim()):
            return None
        return _with_argument(args, kwargs, 1, "dim", 0)

    return OperationSlip(KEEPDIM, "trailing_axis_dropped", change)


def _as_index(part: Any) -> Any:
    """A slice of width one (``-1:``, ``i:i+1``) as the index it keeps (``-1``, ``i``)."""
    if not (isinstance(part, slice) and isinstance(part.start, int) and part.step is None):
        return part
    start, stop = part.start, part.stop
    # -1:0 is empty, not one wide
    one_wide = (start == -1 and stop is None) or (stop == start + 1 and stop != 0)
    return start if one_wide else part


def slice_indexed() -> OperationSlip:
    """Every slice of width one written as an index, ``x[:, -1]`` for ``x[:, -1:]``: the axis
    the slice keeps is dropped, as a reduction without keepdim drops it (slice_indexed)."""

    def change(operation: str, args: tuple, kwargs: dict) -> tuple[tuple, dict] | None:
        if operation != "__getitem__" or len(args) < 2:
            return None
        parts = args[1] if isinstance(args[1], tuple) else (args[1],)
        indexed = tuple(_as_index(part) for part in parts)
        if indexed == parts:
            return None
        return (args[0], indexed if isinstance(args[1], tuple) else indexed[0]), kwargs

    return OperationSlip(KEEPDIM, "slice_indexed", change)


# ---------------------------------------------------------------------------------------------
# the axes of a maximum

MAX_AXES = "reduction axes"


def max_over_everything() -> OperationSlip:
    """Every amax over some axes taken over all of them (``x.max()``, no dim): one maximum for
    the whole batch, where the reference takes each row's (max_over_everything)."""

    def change(operation: str, args: tuple, kwargs: dict) -> tuple[tuple, dict] | None:
        if operation != "amax" or args[0].dim() == 0:
            return None
        every = tuple(range(args[0].dim()))
        asked = _argument(args, kwargs, 1, "dim", ())
        asked = (asked,) if isinstance(asked, int) else tuple(asked)
        if not asked or {axis % len(every) for axis in asked} == set(every):
            return None
        return _with_argument(args, kwargs, 1, "dim", every)

    return OperationSlip(MAX_AXES, "max_over_everything", change)


ANY_OPERATIONS = {"any", "all"}


def any_over(axis: int, name: str | None = None) -> OperationSlip:
    """Every any and all over one axis (torch., Tensor.) taken over ``axis`` of its input,
    whatever axis the reference asks for: which queries see a key, asked of the queries' axis
    (``any_over_axis_-2``). One over every axis (no dim) is left alone."""

    def change(operation: str, args: tuple, kwargs: dict) -> tuple[tuple, dict] | None:
        if operation not in ANY_OPERATIONS or args[0].dim() == 0:
            return None
        asked = _argument(args, kwargs, 1, "dim", None)
        ndim = args[0].dim()
        if not isinstance(asked, int) or asked % ndim == axis % ndim:
            return None
        return _with_argument(args, kwargs, 1, "dim", axis)

    return OperationSlip(MAX_AXES, name or f"any_over_axis_{axis}", change)


# ---------------------------------------------------------------------------------------------
# dtype, and train/eval mode

DTYPE = "dtype"


def computed_in(dtype: torch.dtype) -> ArgumentSlip:
    """Every floating tensor argument cast to ``dtype`` first: the answer that computes, and
    returns, in float32 whatever it is given (computed_in_float32)."""

    def change(arguments: dict[str, Any]) -> dict[str, Any]:
        return {
            name: value.to(dtype)
            if isinstance(value, Tensor) and value.is_floating_point()
            else value
            for name, value in arguments.items()
        }

    return ArgumentSlip(DTYPE, f"computed_in_{str(dtype).removeprefix('torch.')}", change)


TRAIN_MODE = "train mode"


class InTrainMode(Slip):
    """Every module among the arguments run in training mode (dropout on), its mode restored
    after: the answer that never calls eval() (in_train_mode). The output is None where no
    argument is a module."""

    family, name = TRAIN_MODE, "in_train_mode"

    def output(self, reference: Reference, arguments: Mapping[str, Any]) -> Any:
        modules = [value for value in arguments.values() if isinstance(value, torch.nn.Module)]
        modes = [[(part, part.training) for part in module.modules()] for module in modules]
        try:
            for module in modules:
                module.train()
            return reference(**arguments) if modules else None
        finally:
            for part, training in (entry for entries in modes for entry in entries):
                part.training = training


def mask_dropped() -> ArgumentSlip:
    """No mask at all: every key visible (no_mask)."""
    return ArgumentSlip(MASK, "no_mask", lambda arguments: {**arguments, "mask": None})


# ---------------------------------------------------------------------------------------------
# the axis of a concatenation

CONCATENATION = "concatenation axis"
CONCATENATIONS = {"cat", "concat", "concatenate"}


def concatenated_along(axis: int, name: str | None = None) -> OperationSlip:
    """Every torch.cat (concat, concatenate) along ``axis`` of its inputs, whatever axis the
    reference asks for; named ``concatenated_along_axis_<axis>`` by default."""

    def change(operation: str, args: tuple, kwargs: dict) -> tuple[tuple, dict] | None:
        tensors = _argument(args, kwargs, 0, "tensors", ())
        if operation not in CONCATENATIONS or not tensors:
            return None
        ndim = tensors[0].dim()
        if _argument(args, kwargs, 1, "dim", 0) % ndim == axis % ndim:
            return None
        return _with_argument(args, kwargs, 1, "dim", axis)

    return OperationSlip(CONCATENATION, name or f"concatenated_along_axis_{axis}", change)


def raising_alike(
    reference: Reference, arguments: Mapping[str, Any], slips: Iterable[Slip], error: BaseException
) -> list[str]:
    """The names of the slips with which ``reference(**arguments)`` raises what an answer
    raised: an error of ``error``'s type name with its very message (torch's shape errors
    quote the shapes, so an answer that raises one did that operation that way)."""
    seen = (type(error).__name__, str(error))
    found = []
    with torch.no_grad():
        for slip in slips:
            try:
                slip.output(reference, arguments)
            except Exception as raised:  # noqa: BLE001 - any error is compared, none escapes
                if (type(raised).__name__, str(raised)) == seen and seen[1]:
                    found.append(slip.name)
    return found


# ---------------------------------------------------------------------------------------------
# what a cross-entropy is given: probabilities where it takes logits

LOSS_INPUT = "loss input"


def softmax_before_cross_entropy() -> OperationSlip:
    """Every F.cross_entropy given the softmax of its input over the classes (dim 1, or dim 0 of
    a single row of logits) instead of the logits: a softmax before a loss that applies
    log-softmax itself (softmax_before_cross_entropy)."""

    def change(operation: str, args: tuple, kwargs: dict) -> tuple[tuple, dict] | None:
        if operation != "cross_entropy":
            return None
        logits = _argument(args, kwargs, 0, "input", None)
        if not isinstance(logits, Tensor) or not logits.is_floating_point():
            return None
        classes = 1 if logits.dim() > 1 else 0
        return _with_argument(args, kwargs, 0, "input", torch.softmax(logits, dim=classes))

    return OperationSlip(LOSS_INPUT, "softmax_before_cross_entropy", change)


# ---------------------------------------------------------------------------------------------
# what is returned: probabilities where the statement asks for logits

OUTPUT = "output"


@dataclass(frozen=True, repr=False)
class OutputSlip(Slip):
    """The reference's output taken one operation further: ``change(output)``."""

    family: str
    name: str
    change: Callable[[Any], Any]

    def output(self, reference: Reference, arguments: Mapping[str, Any]) -> Any:
        return self.change(reference(**arguments))


def probabilities(axis: int = -1) -> OutputSlip:
    """Logits returned as probabilities, a softmax over ``axis`` (probabilities)."""
    return OutputSlip(OUTPUT, "probabilities", lambda logits: torch.softmax(logits, axis))


def mistaken_outputs(
    named: Mapping[str, Any],
    reference: Reference,
    arguments: Mapping[str, Any],
    slips: Iterable[Slip],
) -> dict[Any, Any]:
    """{named[slip.name]: what the reference returns with that slip}, as :func:`diagnose` takes
    them: ``named`` is an exercise's catalogue (name -> Mistake), which names every slip given."""
    slips = list(slips)
    unnamed = [slip.name for slip in slips if slip.name not in named]
    if unnamed:
        raise KeyError(f"slips the catalogue does not name: {unnamed}")
    return {named[name]: value for name, value in outputs(reference, arguments, slips).items()}


def plain_softmax_rows(output: Tensor, mask: Tensor | None) -> Tensor:
    """``output`` (..., L_q, d) of the reference attention with NaN in every row whose keys
    ``mask`` (..., L_q, L_k) all hides, as a plain softmax gives there (0/0): the reference
    gives such a row zeros, an answer that never meets one (a causal mask that keeps the
    diagonal) does not guard against it."""
    if mask is None:
        return output
    return output.masked_fill(~mask.bool().any(-1, keepdim=True), math.nan)
