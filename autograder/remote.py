"""Hidden checks judged outside the student's process: the kernel serves, the grader calls.

A graded test cell ends with ``run_hidden_checks(assignment, grade_id, globals())``.  Inside the
grading sandbox that name is :func:`checkpoint`: the student's kernel connects to the judge's Unix
socket and answers requests (look up a name, call it, read an attribute, back-propagate) until the
judge, a trusted process that never runs student code, sends its verdict.  Every value crosses as
data: tensors are saved with ``torch.save`` and read back with ``torch.load(weights_only=True)``;
anything else stays in the kernel and is named by a reference number.  The judge's torch, NumPy
and check code are never reachable from the student's code, so patching them changes nothing.

This module is copied into the sandbox, so it imports only the standard library, NumPy and torch.
"""

from __future__ import annotations

import io
import os
import socket
import struct
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import torch

JUDGE_SOCKET_ENV = "ATTENTION_LAB_JUDGE"

# Larger messages are refused: a student's value must not exhaust the judge's memory.
MAX_MESSAGE_BYTES = 256 * 2**20
_HEADER = struct.Struct("!Q")
_REPR_CHARS = 200
_ERROR_CHARS = 2000


class ProtocolError(RuntimeError):
    """The other side sent something that is not a valid message."""


# ---------------------------------------------------------------------------------------------
# Framing and the value codec, shared by both sides


def send_message(sock: socket.socket, message: dict[str, Any], tensors: list[torch.Tensor]) -> None:
    """Send one message: a tree of plain values plus the tensors it refers to by index."""
    buffer = io.BytesIO()
    torch.save({"message": message, "tensors": tensors}, buffer)
    payload = buffer.getvalue()
    if len(payload) > MAX_MESSAGE_BYTES:
        raise ProtocolError(f"a message of {len(payload)} bytes exceeds {MAX_MESSAGE_BYTES}")
    sock.sendall(_HEADER.pack(len(payload)) + payload)


def _receive_exactly(sock: socket.socket, count: int) -> bytes:
    chunks, left = [], count
    while left:
        chunk = sock.recv(min(left, 1 << 20))
        if not chunk:
            raise ConnectionError("the other side closed the connection")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def receive_message(sock: socket.socket) -> tuple[dict[str, Any], list[torch.Tensor]]:
    """Receive one message; only plain containers, numbers, strings and tensors can be loaded."""
    (length,) = _HEADER.unpack(_receive_exactly(sock, _HEADER.size))
    if length > MAX_MESSAGE_BYTES:
        raise ProtocolError(f"a message of {length} bytes exceeds {MAX_MESSAGE_BYTES}")
    try:
        data = torch.load(
            io.BytesIO(_receive_exactly(sock, length)), weights_only=True, map_location="cpu"
        )
    except Exception as error:
        raise ProtocolError(f"unreadable message: {error}") from None
    if not (isinstance(data, dict) and isinstance(data.get("message"), dict)):
        raise ProtocolError("a message must be a dict with a 'message' dict")
    tensors = data.get("tensors")
    if not (isinstance(tensors, list) and all(type(t) is torch.Tensor for t in tensors)):
        raise ProtocolError("a message's tensors must be a list of plain tensors")
    return data["message"], tensors


_PLAIN = (type(None), bool, int, float, str)


def encode(
    value: Any,
    tensors: list[torch.Tensor],
    reference: Callable[[Any], dict],
    positions: dict[int, int] | None = None,
) -> Any:
    """A tree of plain values for ``value``; tensors go to ``tensors``, the rest to ``reference``.

    positions, when given, maps id(tensor) -> its index in ``tensors``.
    """
    if type(value) in _PLAIN:
        return value
    if getattr(type(value), "is_proxy", False):  # the judge's stand-in for a kernel object
        return reference(value)
    if isinstance(value, torch.Tensor):
        plain = value.detach().as_subclass(torch.Tensor).cpu().clone()
        tensors.append(plain)
        if positions is not None:
            positions[id(value)] = len(tensors) - 1
        grad = value.grad if value.is_leaf and value.grad is not None else None
        grad_index = None
        if grad is not None:
            tensors.append(grad.detach().as_subclass(torch.Tensor).cpu().clone())
            grad_index = len(tensors) - 1
        return {
            "$": "tensor",
            "i": len(tensors) - 1 - (grad_index is not None),
            "grad": grad_index,
            "param": isinstance(value, torch.nn.Parameter),
            "requires_grad": bool(value.requires_grad),
            "oid": id(value),
        }
    if isinstance(value, np.ndarray) and value.dtype != object:
        tensors.append(torch.from_numpy(np.ascontiguousarray(value).copy()))
        return {"$": "ndarray", "i": len(tensors) - 1}
    if isinstance(value, np.generic) and not isinstance(value, np.object_):
        return {"$": "npscalar", "dtype": str(value.dtype), "v": value.item()}
    if isinstance(value, bool | int | float | str):  # subclasses of the plain types
        return encode(type(value).__mro__[-2](value), tensors, reference)
    if isinstance(value, torch.dtype):
        return {"$": "dtype", "v": str(value).removeprefix("torch.")}
    if isinstance(value, torch.device):
        return {"$": "device", "v": str(value)}
    if isinstance(value, torch.Size):
        return {"$": "size", "v": [int(x) for x in value]}
    if isinstance(value, slice):
        return {
            "$": "slice",
            "v": [
                encode(x, tensors, reference, positions)
                for x in (value.start, value.stop, value.step)
            ],
        }
    if value is Ellipsis:
        return {"$": "ellipsis"}
    if isinstance(value, torch.Generator) and value.device.type == "cpu":
        tensors.append(value.get_state())
        return {"$": "generator", "i": len(tensors) - 1}
    if type(value) in (list, tuple):
        return {
            "$": type(value).__name__,
            "v": [encode(x, tensors, reference, positions) for x in value],
        }
    if type(value) is dict or (isinstance(value, dict) and type(value).__module__ == "collections"):
        return {
            "$": "dict",
            "k": [encode(k, tensors, reference, positions) for k in value],
            "v": [encode(v, tensors, reference, positions) for v in value.values()],
        }
    return reference(value)


def decode(tree: Any, tensors: list[torch.Tensor], resolve: Callable[[dict], Any]) -> Any:
    """The value ``tree`` stands for; references are turned into objects by ``resolve``."""
    if isinstance(tree, _PLAIN):
        return tree
    if not isinstance(tree, dict) or not isinstance(tree.get("$"), str):
        raise ProtocolError(f"not an encoded value: {type(tree).__name__}")
    tag = tree["$"]
    if tag == "tensor":
        tensor = _tensor_at(tensors, tree.get("i"))
        if tree.get("param"):
            tensor = torch.nn.Parameter(tensor, requires_grad=bool(tree.get("requires_grad")))
        elif tree.get("requires_grad") and tensor.is_floating_point():
            tensor.requires_grad_(True)
        if tree.get("grad") is not None and tensor.requires_grad:
            tensor.grad = _tensor_at(tensors, tree["grad"])
        if isinstance(tree.get("oid"), int):
            tensor.origin_id = tree["oid"]  # the same parameter sent twice has the same origin
        return tensor
    if tag == "ndarray":
        return _tensor_at(tensors, tree.get("i")).numpy()
    if tag == "npscalar":
        return np.dtype(str(tree["dtype"])).type(tree["v"])
    if tag == "dtype":
        dtype = getattr(torch, str(tree["v"]), None)
        if not isinstance(dtype, torch.dtype):
            raise ProtocolError(f"unknown dtype {tree['v']!r}")
        return dtype
    if tag == "device":
        return torch.device(str(tree["v"]))
    if tag == "size":
        return torch.Size([int(x) for x in tree["v"]])
    if tag == "slice":
        return slice(*(decode(x, tensors, resolve) for x in tree["v"]))
    if tag == "ellipsis":
        return Ellipsis
    if tag in ("list", "tuple"):
        items = [decode(x, tensors, resolve) for x in tree["v"]]
        return items if tag == "list" else tuple(items)
    if tag == "dict":
        keys = [decode(k, tensors, resolve) for k in tree["k"]]
        return dict(zip(keys, (decode(v, tensors, resolve) for v in tree["v"]), strict=True))
    if tag in ("ref", "local"):
        return resolve(tree)
    if tag == "iter":
        return iter([decode(x, tensors, resolve) for x in tree["v"]])
    if tag == "generator":
        generator = torch.Generator()
        generator.set_state(_tensor_at(tensors, tree.get("i")))
        return generator
    raise ProtocolError(f"unknown value tag {tag!r}")


def _tensor_at(tensors: list[torch.Tensor], index: Any) -> torch.Tensor:
    if not isinstance(index, int) or not 0 <= index < len(tensors):
        raise ProtocolError(f"bad tensor index {index!r}")
    return tensors[index]


def class_path(cls: type) -> str:
    """``module:qualname`` of a class, the way both sides name it."""
    return f"{getattr(cls, '__module__', '?')}:{getattr(cls, '__qualname__', '?')}"


# ---------------------------------------------------------------------------------------------
# Observations of a call that only the process running it can make


class _TorchFunctionNames(torch.overrides.TorchFunctionMode):
    """Records the qualified name of every torch function called while active."""

    def __init__(self) -> None:
        super().__init__()
        self.names: set[str] = set()

    def __torch_function__(self, func, types, args=(), kwargs=None):  # noqa: ANN001
        self.names.add(function_name(func))
        return func(*args, **(kwargs or {}))


class _AtenOpNames(torch.utils._python_dispatch.TorchDispatchMode):
    """Records the name of every aten op that runs while active."""

    def __init__(self) -> None:
        super().__init__()
        self.names: set[str] = set()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # noqa: ANN001
        self.names.add(str(func))
        return func(*args, **(kwargs or {}))


def function_name(func: Any) -> str:
    """``module.qualname`` of a function, as the torch-function observation reports it."""
    name = getattr(func, "__qualname__", None) or getattr(func, "__name__", None) or repr(func)
    return f"{getattr(func, '__module__', None) or '?'}.{name}"


def observe(kind: str, fn: Callable[..., Any], args: tuple, kwargs: dict) -> tuple[Any, Any]:
    """Call ``fn`` and observe it: the torch functions or aten ops it ran, or its peak bytes."""
    if kind == "torch_functions":
        with _TorchFunctionNames() as recorder:
            result = fn(*args, **kwargs)
        return result, sorted(recorder.names)
    if kind == "aten_ops":
        with _AtenOpNames() as recorder:
            result = fn(*args, **kwargs)
        return result, sorted(recorder.names)
    if kind == "peak_bytes":
        from attention_lab.profiling import peak_memory

        threads = torch.get_num_threads()
        torch.set_num_threads(1)  # the peak does not depend on threads; one is faster
        try:
            return None, int(peak_memory(lambda: fn(*args, **kwargs), device="cpu"))
        finally:
            torch.set_num_threads(threads)
    raise ValueError(f"unknown observation {kind!r}")


# ---------------------------------------------------------------------------------------------
# Kernel side (untrusted): serve the student's objects until the verdict arrives


class _JudgeObject:
    """Stands for one of the judge's stand-in models inside the kernel; every use asks the judge."""

    __slots__ = ("_server", "_tree")
    is_proxy = True

    def __init__(self, server: _Server, tree: dict):
        object.__setattr__(self, "_server", server)
        object.__setattr__(self, "_tree", tree)

    @property
    def __class__(self) -> type:
        module = "torch.nn.modules.module:Module" in self._tree.get("mro", [])
        return torch.nn.Module if module else object

    def __getattr__(self, name: str) -> Any:
        return self._server.callback("getattr", self, name)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._server.callback("call", self, *args, **kwargs)


class _Server:
    """Answers the judge's requests about one namespace."""

    def __init__(self, sock: socket.socket, namespace: Mapping[str, Any]):
        self.sock = sock
        self.namespace = namespace
        self.objects: dict[int, Any] = {}
        self.numbers: dict[int, int] = {}  # id(object) -> reference number, stable identity
        self.calls: dict[int, tuple[list[torch.Tensor], list[torch.Tensor]]] = {}

    def reference(self, value: Any) -> dict:
        if type(value) is _JudgeObject:
            return object.__getattribute__(value, "_tree")
        number = self.numbers.get(id(value))
        if number is None:
            number = self.numbers[id(value)] = len(self.objects) + 1
            self.objects[number] = value
        cls = value if isinstance(value, type) else type(value)
        return {
            "$": "ref",
            "id": number,
            "kind": "class" if isinstance(value, type) else "object",
            "mro": [class_path(c) for c in cls.__mro__],
            "class_id": self.reference(cls)["id"] if cls is not value else number,
            "name": str(getattr(value, "__qualname__", "") or getattr(cls, "__qualname__", "")),
        }

    def resolve(self, tree: dict) -> Any:
        if tree["$"] == "local":
            return _JudgeObject(self, tree)
        number = tree.get("id")
        if number not in self.objects:
            raise ProtocolError(f"unknown reference {number!r}")
        return self.objects[number]

    def reply(
        self, value: Any, positions: dict[int, int] | None = None, **extra: Any
    ) -> tuple[dict, list[torch.Tensor]]:
        tensors: list[torch.Tensor] = []
        tree = encode(value, tensors, self.reference, positions)
        return {"ok": True, "value": tree, **extra}, tensors

    def callback(self, op: str, target: _JudgeObject, *args: Any, **kwargs: Any) -> Any:
        """Ask the judge to use one of its stand-ins (the student's code called or inspected it)."""
        tensors: list[torch.Tensor] = []
        message = {
            "callback": op,
            "target": object.__getattribute__(target, "_tree"),
            "args": encode(list(args), tensors, self.reference),
            "kwargs": encode(dict(kwargs), tensors, self.reference),
        }
        send_message(self.sock, message, tensors)
        reply, out = receive_message(self.sock)
        if not reply.get("ok"):
            raise RuntimeError(str(reply.get("message", "the judge's model failed")))
        return decode(reply.get("value"), out, self.resolve)

    def handle(self, request: dict, tensors: list[torch.Tensor]) -> tuple[dict, list]:
        op = request.get("op")
        args = decode(request.get("args", {"$": "list", "v": []}), tensors, self.resolve)
        kwargs = decode(
            request.get("kwargs", {"$": "dict", "k": [], "v": []}), tensors, self.resolve
        )
        if "rng" in request:
            torch.set_rng_state(_tensor_at(tensors, request["rng"]))
        if op == "contains":
            return self.reply(args[0] in self.namespace)
        if op == "global":
            return self.reply(self.namespace[args[0]])
        target = self.objects[request["ref"]] if "ref" in request else None
        if op == "getattr":
            return self.reply(getattr(target, args[0]))
        if op == "setattr":
            setattr(target, args[0], args[1])
            return self.reply(None)
        if op == "copy_into":  # write values into one of the object's tensors, in place
            with torch.no_grad():
                getattr(target, args[0]).copy_(args[1])
            return self.reply(None)
        if op in ("call", "observe"):
            return self.call(target, op, request, args, kwargs)
        if op == "backward":
            return self.backward(request, tensors)
        simple = {
            "getitem": lambda: target[args[0]],
            "len": lambda: len(target),
            "bool": lambda: bool(target),
            "contains_item": lambda: args[0] in target,
            "iter": lambda: iter(target),
            "next": lambda: next(target),
            "repr": lambda: repr(target)[:_REPR_CHARS],
        }
        if op not in simple:
            raise ProtocolError(f"unknown request {op!r}")
        return self.reply(simple[op]())

    def call(self, target: Any, op: str, request: dict, args: Any, kwargs: Any) -> tuple:
        inputs = [t for t in _tensors_in((args, kwargs)) if t.requires_grad]
        with torch.set_grad_enabled(bool(request.get("grad", True))):
            if op == "observe":
                result, observation = observe(request["kind"], target, tuple(args), kwargs)
            else:
                result, observation = target(*args, **kwargs), None
        outputs = [t for t in _tensors_in(result) if t.requires_grad and t.grad_fn is not None]
        call_id = None
        if outputs:
            call_id = len(self.calls) + 1
            self.calls[call_id] = (inputs, outputs)
        positions: dict[int, int] = {}
        message, tensors = self.reply(result, positions, call=call_id, observation=observation)
        message["graph_outputs"] = [positions[id(t)] for t in outputs]
        message["rng"] = len(tensors)
        tensors.append(torch.get_rng_state())
        return message, tensors

    def backward(self, request: dict, tensors: list[torch.Tensor]) -> tuple:
        inputs, outputs = self.calls[request["call"]]
        grads = [None if i is None else _tensor_at(tensors, i) for i in request["grads"]]
        pairs = [(o, g) for o, g in zip(outputs, grads, strict=True) if g is not None]
        for t in inputs:
            t.grad = None
        torch.autograd.backward([o for o, _ in pairs], [g for _, g in pairs])
        return self.reply([t.grad for t in inputs])


def _tensors_in(value: Any) -> list[torch.Tensor]:
    """Every tensor in nested lists, tuples and dicts, in encoding order."""
    if isinstance(value, torch.Tensor):
        return [value]
    if type(value) in (list, tuple):
        return [t for item in value for t in _tensors_in(item)]
    if isinstance(value, dict):
        return [t for item in value.values() for t in _tensors_in(item)]
    return []


def checkpoint(assignment: str, grade_id: str, namespace: Mapping[str, Any]) -> None:
    """Let the grader's judge run the hidden checks of ``grade_id``; raise if it says they fail."""
    path = os.environ.get(JUDGE_SOCKET_ENV)
    if not path:
        raise RuntimeError(
            "hidden checks run only inside the grading command (python -m autograder grade)"
        )
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.connect(path)
        server = _Server(sock, namespace)
        send_message(sock, {"hello": [assignment, grade_id]}, [])
        while True:
            request, tensors = receive_message(sock)
            if request.get("op") == "verdict":
                break
            try:
                reply, out = server.handle(request, tensors)
            except BaseException as error:  # noqa: BLE001 - the judge decides what it means
                reply, out = _error_reply(error), []
            send_message(sock, reply, out)
    if not request.get("passed"):
        raise AssertionError(str(request.get("message", "hidden checks failed")))


def _error_reply(error: BaseException) -> dict:
    return {
        "ok": False,
        "mro": [class_path(c) for c in type(error).__mro__],
        "message": str(error)[:_ERROR_CHARS],
    }
