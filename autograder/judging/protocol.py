"""The wire between the student's kernel and the judge: framing and the value codec.

Every value crosses as data: tensors are saved with ``torch.save`` and read back with
``torch.load(weights_only=True)``; anything else stays on its side and is named by a reference
number.  Both sides use this module; it is copied into the sandbox, so it imports only the
standard library, NumPy and torch.
"""

from __future__ import annotations

import io
import socket
import struct
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

# Larger messages are refused: a student's value must not exhaust the judge's memory.
MAX_MESSAGE_BYTES = 256 * 2**20
_HEADER = struct.Struct("!Q")


class ProtocolError(RuntimeError):
    """The other side sent something that is not a valid message."""


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
        tensor = tensor_at(tensors, tree.get("i"))
        if tree.get("param"):
            tensor = torch.nn.Parameter(tensor, requires_grad=bool(tree.get("requires_grad")))
        elif tree.get("requires_grad") and tensor.is_floating_point():
            tensor.requires_grad_(True)
        if tree.get("grad") is not None and tensor.requires_grad:
            tensor.grad = tensor_at(tensors, tree["grad"])
        if isinstance(tree.get("oid"), int):
            tensor.origin_id = tree["oid"]  # the same parameter sent twice has the same origin
        return tensor
    if tag == "ndarray":
        return tensor_at(tensors, tree.get("i")).numpy()
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
        generator.set_state(tensor_at(tensors, tree.get("i")))
        return generator
    raise ProtocolError(f"unknown value tag {tag!r}")


def tensor_at(tensors: list[torch.Tensor], index: Any) -> torch.Tensor:
    if not isinstance(index, int) or not 0 <= index < len(tensors):
        raise ProtocolError(f"bad tensor index {index!r}")
    return tensors[index]


def class_path(cls: type) -> str:
    """``module:qualname`` of a class, the way both sides name it."""
    return f"{getattr(cls, '__module__', '?')}:{getattr(cls, '__qualname__', '?')}"


# ---------------------------------------------------------------------------------------------


def tensors_in(value: Any) -> list[torch.Tensor]:
    """Every tensor in nested lists, tuples and dicts, in encoding order."""
    if isinstance(value, torch.Tensor):
        return [value]
    if type(value) in (list, tuple):
        return [t for item in value for t in tensors_in(item)]
    if isinstance(value, dict):
        return [t for item in value.values() for t in tensors_in(item)]
    return []
