"""The judge's view of a student's kernel: proxies for its objects, its namespace, and gradients.

The hidden checks of autograder/checks run unchanged against a :class:`RemoteNamespace`: calling
a student's function sends the arguments to the kernel and brings the result back as data (see
autograder/judging/protocol.py).  Gradients flow across: a remote call's tensor outputs are tied
into this process's autograd graph, and ``backward`` asks the kernel for the input gradients.
"""

from __future__ import annotations

import builtins
import copy
import itertools
import socket
import sys
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np
import torch

from autograder.authoring.registry import StopChecks
from autograder.authoring.student_errors import refused_write
from autograder.judging import protocol

# How much of an exception message raised by the student's code the checks may quote.
STUDENT_MESSAGE_CHARS = 300

# Classes from these packages stand in for the kernel's classes in isinstance and issubclass.
_TRUSTED_ROOTS = {"torch", "attention_lab", "builtins", "numpy", "collections", "abc"}


class KernelGone(StopChecks, ConnectionError):
    """The kernel stopped answering: it crashed, exited or was stopped for a limit; no later
    check of the cell can run."""


class NotPlainValue(TypeError):
    """The kernel named an object whose class claims to be data (a tensor, an array): real data
    always crosses by value, so such an object is a forgery and is never handed to the checks."""

    answer_raised = True  # the kernel's doing (autograder/authoring/student_errors.py)

    def __init__(self) -> None:
        super().__init__(
            "your code returned an object that poses as a tensor or NumPy array without being "
            "one: return real torch tensors (or plain Python values)"
        )


# Instances of these always cross by value; a reference claiming one of them is refused.
_DATA_TYPES = (torch.Tensor, np.ndarray, np.generic, torch.dtype, torch.device, torch.Generator)


class RemoteError(Exception):
    """The student's code raised an exception with no built-in equivalent."""


class _RemoteGraph(torch.autograd.Function):
    """Ties a remote call's outputs to its inputs; backward asks the kernel for the gradients."""

    @staticmethod
    def forward(ctx, link: Link, call_id: int, n_inputs: int, *tensors: torch.Tensor):  # noqa: ANN205
        ctx.link, ctx.call_id, ctx.n_inputs = link, call_id, n_inputs
        ctx.n_outputs = len(tensors) - n_inputs
        return tuple(t.clone() for t in tensors[n_inputs:])

    @staticmethod
    def backward(ctx, *grads: torch.Tensor):  # noqa: ANN205
        input_grads = ctx.link.backward(ctx.call_id, grads)
        input_grads += [None] * (ctx.n_inputs - len(input_grads))  # the anchor has none
        return (None, None, None, *input_grads[: ctx.n_inputs], *([None] * ctx.n_outputs))


class RemoteObject:
    """Stands for one object in the kernel; every use becomes a request."""

    __slots__ = ("_link", "_ref", "_info")
    is_proxy = True

    def __init__(self, link: Link, info: dict):
        object.__setattr__(self, "_link", link)
        object.__setattr__(self, "_ref", info["id"])
        object.__setattr__(self, "_info", info)

    @property
    def __class__(self) -> type:  # isinstance(x, nn.Module) and friends see the kernel's class
        return self._link.local_class(self._info["class_id"], self._info["mro"])

    def __getattr__(self, name: str) -> Any:
        # Protocol lookups (__array_interface__, __torch_function__, ...) would let the kernel
        # hand the judge raw pointers or hooks; a student object has none that checks need.
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return self._link.request("getattr", self, name)

    def __setattr__(self, name: str, value: Any) -> None:
        self._link.request("setattr", self, name, value)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._link.call(self._ref, args, kwargs)

    def __getitem__(self, key: Any) -> Any:
        return self._link.request("getitem", self, key)

    def __len__(self) -> int:
        return _checked(self._link.request("len", self), int)

    def __bool__(self) -> bool:
        return _checked(self._link.request("bool", self), bool)

    def __contains__(self, item: Any) -> bool:
        return _checked(self._link.request("contains_item", self, item), bool)

    def __iter__(self) -> Iterator[Any]:
        iterator = self._link.request("iter", self)
        if not isinstance(iterator, RemoteObject):
            raise _answers(TypeError("iter() of a student's object must give an iterator"))
        return iterator

    def __next__(self) -> Any:
        return self._link.request("next", self)

    def __deepcopy__(self, memo: dict) -> Any:
        # Made in the kernel: copied here, the proxy would take its socket along (and fail).
        return self._link.request("deepcopy", self)

    def __repr__(self) -> str:
        try:
            return str(self._link.request("repr", self))
        except Exception:  # noqa: BLE001 - a repr must not fail inside an error message
            return f"<student object {self._info.get('name', '?')}>"


def _checked(value: Any, kind: type) -> Any:
    if not isinstance(value, kind):
        raise _answers(
            TypeError(
                f"expected {kind.__name__} from the student's object, got {type(value).__name__}"
            )
        )
    return value


def _answers(error: Exception) -> Exception:
    """``error``, marked as the student's code's doing (autograder/authoring/student_errors.py)."""
    error.answer_raised = True  # type: ignore[attr-defined]
    return error


def _trusted_class(path: str) -> type | None:
    """The class named ``module:qualname`` if it lives in an already imported trusted package."""
    module_name, _, qualname = path.partition(":")
    if module_name.split(".")[0] not in _TRUSTED_ROOTS or module_name not in sys.modules:
        return None
    value: Any = sys.modules[module_name]
    for part in qualname.split("."):
        value = getattr(value, part, None)
    return value if isinstance(value, type) and value is not object else None


def _local_bases(mro: Sequence[str]) -> tuple[type, ...]:
    """The most specific trusted classes of a kernel class's MRO."""
    found = [c for c in map(_trusted_class, mro) if c is not None]
    return tuple(c for c in found if not any(o is not c and issubclass(o, c) for o in found))


# How many requests this process has sent to kernels: an observation made here of a call that
# sent one observed this process, not the kernel that did the work (kernel_objects.observe_call).
_SENT = [0]


def requests_sent() -> int:
    """How many requests this process has sent to kernels so far."""
    return _SENT[0]


class Link:
    """One checkpoint connection: sends requests to the kernel and decodes its replies."""

    def __init__(self, sock: socket.socket):
        self.sock = sock
        self.alive = True
        self.proxies: dict[int, Any] = {}
        self.classes: dict[int, type] = {}
        self.origins: dict[int, str] = {}  # id(proxy) -> the global name it was looked up by
        self.stand_ins: list[torch.nn.Module] = []  # the judge's models lent to the kernel
        self.copies: list[torch.nn.Module] = []  # deep copies of them the student's code made
        self.callback_error: Exception | None = None
        # ref -> what judges the torch functions that a call of that kernel object runs
        self.watched: dict[int, Callable[[list[str]], None]] = {}

    # -- encoding this side's values for the kernel

    def reference(self, value: Any) -> dict:
        if isinstance(value, RemoteObject):
            return {"$": "ref", "id": object.__getattribute__(value, "_ref")}
        if (
            isinstance(value, type)
            and self.classes.get(getattr(value, "__remote_id__", None)) is value
        ):
            return {"$": "ref", "id": value.__remote_id__}
        if isinstance(value, torch.nn.Module):  # a stand-in model the student's code may use
            if not any(value is m for m in self.stand_ins):
                self.stand_ins.append(value)
            number = next(i for i, m in enumerate(self.stand_ins) if m is value)
            return {
                "$": "local",
                "id": number,
                "mro": [protocol.class_path(c) for c in type(value).__mro__],
            }
        raise TypeError(f"cannot send a {type(value).__name__} to the student's code")

    def answer_callback(self, message: dict, tensors: list[torch.Tensor]) -> tuple[dict, list]:
        """Use a stand-in model for the kernel: public attributes and methods, results as data."""
        target = message.get("target") or {}
        number, method = target.get("id"), target.get("method")
        if not isinstance(number, int) or not 0 <= number < len(self.stand_ins):
            raise protocol.ProtocolError("unknown stand-in")
        module = self.stand_ins[number]
        args = protocol.decode(message.get("args"), tensors, self.resolve)
        kwargs = protocol.decode(message.get("kwargs"), tensors, self.resolve)
        if message.get("callback") == "getattr":
            name = args[0] if args else None
            if not isinstance(name, str) or name.startswith("_"):
                raise AttributeError(f"{name!r} is not available on the grader's model")
            value = getattr(module, name)
            if callable(value) and not isinstance(value, torch.nn.Module):
                return self._reply({"$": "local", "id": number, "method": name, "mro": []}, [])
        elif message.get("callback") == "deepcopy":
            value = copy.deepcopy(module)
            self.copies.append(value)
        elif message.get("callback") == "assign":
            value = self._assign(module, *args)
        elif message.get("callback") == "call":
            function = getattr(module, method) if isinstance(method, str) else module
            if isinstance(method, str) and method.startswith("_"):
                raise AttributeError(f"{method!r} is not available on the grader's model")
            value = function(*args, **kwargs)
        else:
            raise protocol.ProtocolError("unknown callback")
        if isinstance(value, Iterator):
            value = iter(list(itertools.islice(value, 100_000)))
        out: list[torch.Tensor] = []
        return self._reply(self._encode_result(value, out), out)

    def _assign(self, module: torch.nn.Module, name: Any, values: Any) -> None:
        """Write what the student's code wrote into a tensor it read from ``module``: allowed
        into the copies it made (copy.deepcopy), refused for the judge's own models."""
        # The kernel sends the name, and a refusal quotes it: an attribute's name, nothing more.
        if not (isinstance(name, str) and name.isidentifier() and len(name) <= 64):
            raise protocol.ProtocolError("bad attribute name for a stand-in's tensor")
        if not any(module is part for copied in self.copies for part in copied.modules()):
            raise refused_write(name)
        target = getattr(module, name, None)
        if not (
            isinstance(target, torch.Tensor)
            and isinstance(values, torch.Tensor)
            and values.shape == target.shape
        ):
            raise protocol.ProtocolError("bad write into a stand-in's tensor")
        with torch.no_grad():
            target.copy_(values)

    def _encode_result(self, value: Any, out: list[torch.Tensor]) -> Any:
        if isinstance(value, Iterator):
            return {"$": "iter", "v": [protocol.encode(x, out, self.reference) for x in value]}
        return protocol.encode(value, out, self.reference)

    @staticmethod
    def _reply(tree: Any, out: list[torch.Tensor]) -> tuple[dict, list]:
        return {"ok": True, "value": tree}, out

    def resolve(self, tree: dict) -> Any:
        if tree.get("$") == "local":
            number = tree.get("id")
            if (
                not isinstance(number, int)
                or not 0 <= number < len(self.stand_ins)
                or tree.get("method")
            ):
                raise protocol.ProtocolError("bad stand-in reference")
            return self.stand_ins[number]
        number = tree.get("id")
        if not isinstance(number, int) or not isinstance(tree.get("mro"), list):
            raise protocol.ProtocolError("bad reference")
        if number not in self.proxies:
            if tree.get("kind") == "class":
                self.proxies[number] = self.local_class(number, tree["mro"])
            else:
                self.local_class(tree.get("class_id"), tree["mro"])  # refuses forged data
                self.proxies[number] = RemoteObject(self, tree)
        return self.proxies[number]

    def local_class(self, class_id: int, mro: Sequence[str]) -> type:
        """A local class standing for the kernel class ``class_id``; calling it constructs there."""
        if class_id in self.classes:
            return self.classes[class_id]
        own = _trusted_class(mro[0]) if mro else None
        bases = (own,) if own is not None else _local_bases(mro[1:]) or (object,)
        if any(issubclass(base, _DATA_TYPES) for base in bases):
            raise NotPlainValue()
        link = self

        def construct(cls: type, *args: Any, **kwargs: Any) -> Any:
            return link.call(class_id, args, kwargs)

        name = str(mro[0].partition(":")[2] or "StudentClass").rpartition(".")[2]
        attributes = {"__new__": construct, "__remote_id__": class_id, "__module__": "student"}
        try:
            cls = type(name, bases, attributes)
        except TypeError:  # bases that cannot be combined: keep only the identity
            cls = type(name, (object,), attributes)
        self.classes[class_id] = cls
        return cls

    # -- requests

    def exchange(
        self, message: dict, tensors: list[torch.Tensor]
    ) -> tuple[dict, list[torch.Tensor]]:
        if not self.alive:
            raise KernelGone("the kernel is gone")
        self.callback_error = None
        _SENT[0] += 1
        try:
            protocol.send_message(self.sock, message, tensors)
            reply, out = protocol.receive_message(self.sock)
            while "callback" in reply:  # the student's code is using one of our stand-ins
                try:
                    answer, answer_tensors = self.answer_callback(reply, out)
                except (OSError, protocol.ProtocolError):
                    raise
                except Exception as error:  # noqa: BLE001 - reported to the kernel, kept here
                    self.callback_error = _answers(error)  # the kernel's call failed here
                    answer, answer_tensors = {"ok": False, "message": str(error)[:2000]}, []
                protocol.send_message(self.sock, answer, answer_tensors)
                reply, out = protocol.receive_message(self.sock)
        except (OSError, protocol.ProtocolError) as error:
            self.alive = False
            raise KernelGone(
                "your kernel stopped answering while the hidden checks ran (it crashed, exited, "
                f"or ran past a limit): {error}"
            ) from None
        if not reply.get("ok"):
            raise self.callback_error or _exception_from(reply)
        return reply, out

    def request(self, op: str, target: Any = None, *args: Any) -> Any:
        tensors: list[torch.Tensor] = []
        message: dict[str, Any] = {
            "op": op,
            "args": protocol.encode(list(args), tensors, self.reference),
        }
        if target is not None:
            message["ref"] = object.__getattribute__(target, "_ref")
        reply, out = self.exchange(message, tensors)
        return protocol.decode(reply.get("value"), out, self.resolve)

    def call(self, ref: int, args: tuple, kwargs: dict, kind: str | None = None) -> Any:
        """Call the kernel's object ``ref``; with ``kind``, return (result, observation).  A
        watched object's call is observed and judged (:func:`watch`), whatever the check asked."""
        watcher = self.watched.get(ref) if kind is None else None
        if watcher is not None:
            value, names = self.call(ref, args, kwargs, kind="torch_functions")
            watcher(names if isinstance(names, list) else [])
            if type(value) is RemoteObject:  # an instance of a watched class is watched too
                self.watched.setdefault(object.__getattribute__(value, "_ref"), watcher)
            return value
        tensors: list[torch.Tensor] = []
        message = {
            "op": "observe" if kind else "call",
            "kind": kind,
            "ref": ref,
            "args": protocol.encode(list(args), tensors, self.reference),
            "kwargs": protocol.encode(dict(kwargs), tensors, self.reference),
            "grad": torch.is_grad_enabled(),
            "rng": len(tensors),
        }
        tensors.append(torch.get_rng_state())  # the kernel draws the same random numbers
        inputs = [t for t in protocol.tensors_in((list(args), dict(kwargs))) if t.requires_grad]
        reply, out = self.exchange(message, tensors)
        torch.set_rng_state(protocol.tensor_at(out, reply.get("rng")))
        _write_back(protocol.tensors_in((list(args), dict(kwargs))), reply.get("written"), out)
        dicts = protocol.argument_dicts(args, kwargs)
        self.write_back_dicts(dicts, reply.get("written_dicts"), out)
        graph = reply.get("graph_outputs") or []
        if graph and torch.is_grad_enabled() and isinstance(reply.get("call"), int):
            anchor = inputs or [torch.zeros((), requires_grad=True)]
            outputs = [protocol.tensor_at(out, i) for i in graph]
            linked = _RemoteGraph.apply(self, reply["call"], len(anchor), *anchor, *outputs)
            for index, tensor in zip(graph, linked, strict=True):
                out[index] = tensor
        value = protocol.decode(reply.get("value"), out, self.resolve)
        return (value, reply.get("observation")) if kind else value

    def write_back_dicts(self, given: list[dict], written: Any, out: list[torch.Tensor]) -> None:
        """Give the judge's dict arguments the entries that the kernel's call left in its copies
        of them: a check that passes a dict sees a write into it, as it would in one process."""
        if written is None:
            return
        if not isinstance(written, list):
            raise protocol.ProtocolError("malformed writes into dict arguments")
        for entry in written:
            if not (isinstance(entry, list) and len(entry) == 2 and type(entry[0]) is int):
                raise protocol.ProtocolError(f"a malformed write into a dict: {entry!r}"[:200])
            index, tree = entry
            if not 0 <= index < len(given):
                raise protocol.ProtocolError(f"a write into dict argument {index} of {len(given)}")
            entries = protocol.decode(tree, out, self.resolve)
            if not isinstance(entries, dict):
                raise protocol.ProtocolError("a write into a dict that is no dict")
            given[index].clear()
            given[index].update(entries)

    def backward(self, call_id: int, grads: Sequence[torch.Tensor | None]) -> list:
        tensors: list[torch.Tensor] = []
        indices = []
        for grad in grads:
            indices.append(None if grad is None else len(tensors))
            if grad is not None:
                tensors.append(protocol.plain_copy(grad))
        reply, out = self.exchange({"op": "backward", "call": call_id, "grads": indices}, tensors)
        value = protocol.decode(reply.get("value"), out, self.resolve)
        if not isinstance(value, list):
            raise protocol.ProtocolError("backward must answer with a list of gradients")
        return [g if isinstance(g, torch.Tensor) else None for g in value]


def _write_back(given: list[torch.Tensor], written: Any, out: list[torch.Tensor]) -> None:
    """Copy into the judge's tensor arguments what the kernel's call wrote into its copies of
    them: a check that passes a tensor sees an in-place write, as it would in one process."""
    if not isinstance(written, list):
        return
    for entry in written:
        if not (isinstance(entry, list) and len(entry) == 2 and all(type(i) is int for i in entry)):
            raise protocol.ProtocolError(f"a malformed in-place write: {entry!r}"[:200])
        index, position = entry
        if not 0 <= index < len(given):
            raise protocol.ProtocolError(f"an in-place write to argument {index} of {len(given)}")
        values = protocol.tensor_at(out, position)
        if values.shape != given[index].shape:
            raise protocol.ProtocolError("an in-place write of another shape")
        with torch.no_grad():
            given[index].copy_(values)


def _exception_from(reply: dict) -> Exception:
    """The built-in exception closest to the one the kernel raised, with its message and, as
    ``raised_at``, the (cell, line) of the student's code it came from, if the kernel said."""
    # A student's message may carry what their code saw; the feedback shows only its start.
    message = str(reply.get("message", ""))[:STUDENT_MESSAGE_CHARS]
    error: Exception | None = None
    for path in reply.get("mro") or []:
        module, _, name = str(path).partition(":")
        if module == "builtins":
            cls = getattr(builtins, name, None)
            if isinstance(cls, type) and issubclass(cls, Exception) and cls is not Exception:
                error = cls(message)
            break
    if error is None:
        first = str((reply.get("mro") or ["?:error"])[0]).partition(":")[2]
        error = RemoteError(f"{first}: {message}" if message else first)
    _answers(error)  # raised by the kernel's code
    # Only two integers cross; the line shown is read from the submitted source (student_errors).
    where = reply.get("where")
    if isinstance(where, list) and len(where) == 2 and all(type(n) is int for n in where):
        error.raised_at = (where[0], where[1])  # type: ignore[attr-defined]
    return error


def is_remote(value: Any) -> bool:
    """True for a proxy or a local stand-in class of a kernel object."""
    return isinstance(value, RemoteObject) or hasattr(value, "__remote_id__")


def same_remote(a: Any, b: Any) -> bool:
    """Whether two proxies stand for one kernel object."""
    return (
        type(a) is RemoteObject
        and type(b) is RemoteObject
        and object.__getattribute__(a, "_link") is object.__getattribute__(b, "_link")
        and object.__getattribute__(a, "_ref") == object.__getattribute__(b, "_ref")
    )


def observed_call(fn: Any, args: tuple, kwargs: dict, kind: str) -> tuple[Any, Any]:
    """Call the kernel object ``fn`` (a proxy or a stand-in class) and observe the call there."""
    if type(fn) is RemoteObject:  # its __class__ is the kernel class's stand-in
        link, ref = object.__getattribute__(fn, "_link"), object.__getattribute__(fn, "_ref")
    else:
        link, ref = current_link(), fn.__remote_id__
    return link.call(ref, args, kwargs, kind=kind)


def watch(fn: Any, judge: Callable[[list[str]], None]) -> None:
    """From now on in this connection, every call of the kernel function or class ``fn``, and of
    every object a call of it returns (a class's instances), is observed where it runs, and
    ``judge`` is given the torch functions it ran (and may fail the check)."""
    if type(fn) is RemoteObject:
        link = object.__getattribute__(fn, "_link")
        link.watched[object.__getattribute__(fn, "_ref")] = judge
    elif isinstance(getattr(fn, "__remote_id__", None), int):  # a kernel class's stand-in
        current_link().watched[fn.__remote_id__] = judge


def copy_into_remote(owner: RemoteObject, name: str, value: torch.Tensor) -> None:
    """``owner.<name>.copy_(value)`` without autograd, in the kernel that holds ``owner``."""
    object.__getattribute__(owner, "_link").request("copy_into", owner, name, value)


class RemoteNamespace(Mapping[str, Any]):
    """The kernel's globals, as the checks see them."""

    def __init__(self, link: Link):
        self.link = link

    def __getitem__(self, name: str) -> Any:
        if not self.link.request("contains", None, name):
            raise KeyError(name)
        value = self.link.request("global", None, name)
        if is_remote(value):
            self.link.origins.setdefault(id(value), name)
        return value

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and bool(self.link.request("contains", None, name))

    def __iter__(self) -> Iterator[str]:
        raise TypeError("the kernel's namespace cannot be listed")

    def __len__(self) -> int:
        raise TypeError("the kernel's namespace cannot be counted")


_current: threading.local = threading.local()


def current_link() -> Link:
    """The connection whose checks run in this thread."""
    link = getattr(_current, "link", None)
    if link is None:
        raise RuntimeError("no remote checks are running in this thread")
    return link


def origin_of(value: Any) -> str | None:
    """The global name under which the checks looked ``value`` up, if it is protocol."""
    link = getattr(_current, "link", None)
    return link.origins.get(id(value)) if link is not None else None
