"""The wire between the student's kernel and the judge: framing and the value codec.

Every value crosses as data, and nothing on the wire is a pickle: a message is a JSON tree of
plain values, and the tensors it refers to by index travel beside it in the safetensors format
(a JSON header, then raw little-endian bytes), which can express no code, no object and no
strided view.  Anything else stays on its side and is named by a reference number.  Both sides
use this module; it is copied into the sandbox, so it imports only the standard library, NumPy,
torch and safetensors.

A frame is ``!QQ`` (the tree's bytes, the tensors' bytes), the tree, then the tensors.
"""

from __future__ import annotations

import json
import socket
import struct
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import safetensors.torch
import torch

# Bounds checked before anything a message describes is built: the kernel controls every byte.
MAX_MESSAGE_BYTES = 256 * 2**20  # the tensors of one message
MAX_TREE_BYTES = 8 * 2**20  # its JSON tree
MAX_TENSORS = 10_000
MAX_DEPTH = 64
MAX_NODES = 200_000
MAX_ELEMENTS = 2**26  # per tensor: 64 Mi elements, 512 MiB of float64
# The dtypes a value may carry: numbers and booleans (complex128 has no safetensors name).
TENSOR_DTYPES = frozenset(
    {
        torch.bool,
        torch.uint8,
        torch.int8,
        torch.int16,
        torch.int32,
        torch.int64,
        torch.float16,
        torch.bfloat16,
        torch.float32,
        torch.float64,
        torch.complex64,
    }
)
# The same, as safetensors names them in a header, with each element's size in bytes.
_WIRE_DTYPES = {
    "BOOL": 1,
    "U8": 1,
    "I8": 1,
    "I16": 2,
    "I32": 4,
    "I64": 8,
    "F16": 2,
    "BF16": 2,
    "F32": 4,
    "F64": 8,
    "C64": 8,
}
NUMPY_DTYPES = frozenset(
    {
        "bool",
        "uint8",
        "uint16",
        "uint32",
        "uint64",
        "int8",
        "int16",
        "int32",
        "int64",
        "float16",
        "float32",
        "float64",
        "complex64",
        "complex128",
    }
)
_HEADER = struct.Struct("!QQ")
_TENSORS_HEADER = struct.Struct("<Q")  # safetensors: the length of its JSON header


class ProtocolError(RuntimeError):
    """The other side sent something that is not a valid message."""


def send_message(sock: socket.socket, message: dict[str, Any], tensors: list[torch.Tensor]) -> None:
    """Send one message: a tree of plain values plus the tensors it refers to by index."""
    for tensor in tensors:
        if tensor.dtype not in TENSOR_DTYPES:
            raise ProtocolError(f"a tensor of dtype {tensor.dtype} cannot cross")
    tree = json.dumps(message, separators=(",", ":")).encode()
    blob = safetensors.torch.save({str(i): t for i, t in enumerate(tensors)}) if tensors else b""
    if len(tree) > MAX_TREE_BYTES or len(blob) > MAX_MESSAGE_BYTES:
        raise ProtocolError(
            f"a message of {len(tree)} + {len(blob)} bytes exceeds {MAX_TREE_BYTES} + "
            f"{MAX_MESSAGE_BYTES}"
        )
    sock.sendall(_HEADER.pack(len(tree), len(blob)) + tree + blob)


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
    """Receive one message; only plain values and tensors of numbers can be built from it."""
    tree_bytes, blob_bytes = _HEADER.unpack(_receive_exactly(sock, _HEADER.size))
    if tree_bytes > MAX_TREE_BYTES or blob_bytes > MAX_MESSAGE_BYTES:
        raise ProtocolError(
            f"a message of {tree_bytes} + {blob_bytes} bytes exceeds {MAX_TREE_BYTES} + "
            f"{MAX_MESSAGE_BYTES}"
        )
    tree = _receive_exactly(sock, tree_bytes)
    blob = _receive_exactly(sock, blob_bytes)
    try:
        message = json.loads(tree)
    except (ValueError, RecursionError):
        raise ProtocolError(
            "a message's value is unreadable, too large or nested too deeply"
        ) from None
    if not isinstance(message, dict):
        raise ProtocolError("a message must be a JSON object")
    _check_tree(message)
    return message, _tensors_from(blob)


def _check_tree(tree: Any) -> None:
    """Refuse a message whose value tree is deeper or larger than any honest value."""
    pending, nodes = [(tree, 0)], 0
    while pending:
        value, depth = pending.pop()
        nodes += 1
        if nodes > MAX_NODES or depth > MAX_DEPTH:
            raise ProtocolError("a message's value is unreadable, too large or nested too deeply")
        if isinstance(value, dict):
            pending.extend((v, depth + 1) for v in value.values())
        elif isinstance(value, list):
            pending.extend((v, depth + 1) for v in value)


def _tensors_from(blob: bytes) -> list[torch.Tensor]:
    """The tensors of a safetensors blob, named 0, 1, ..., each checked before it is built."""
    if not blob:
        return []
    header = _tensors_header(blob)
    entries = {k: v for k, v in header.items() if k != "__metadata__"}
    if set(entries) != {str(i) for i in range(len(entries))} or len(entries) > MAX_TENSORS:
        raise ProtocolError("a message's tensors must be named 0, 1, ... (at most 10,000)")
    data_bytes = len(blob) - _TENSORS_HEADER.size - _TENSORS_HEADER.unpack_from(blob)[0]
    for entry in entries.values():
        _check_entry(entry, data_bytes)
    try:
        loaded = safetensors.torch.load(blob)
    except Exception as error:  # noqa: BLE001 - whatever the parser refuses, we refuse
        raise ProtocolError(f"unreadable tensors: {error}") from None
    tensors = [loaded[str(i)] for i in range(len(entries))]
    for tensor in tensors:
        _check_tensor(tensor)
    return tensors


def _tensors_header(blob: bytes) -> dict[str, Any]:
    if len(blob) < _TENSORS_HEADER.size:
        raise ProtocolError("unreadable tensors: the blob is shorter than its header")
    (length,) = _TENSORS_HEADER.unpack_from(blob)
    if length > min(len(blob) - _TENSORS_HEADER.size, MAX_TREE_BYTES):
        raise ProtocolError(f"unreadable tensors: a header of {length} bytes")
    try:
        header = json.loads(blob[_TENSORS_HEADER.size : _TENSORS_HEADER.size + length])
    except (ValueError, RecursionError):
        raise ProtocolError("unreadable tensors: the header is not JSON") from None
    if not isinstance(header, dict):
        raise ProtocolError("unreadable tensors: the header is not a JSON object")
    return header


def _check_entry(entry: Any, data_bytes: int) -> None:
    """One header entry: a known dtype, a bounded shape, and the bytes it claims really sent."""
    dtype = entry.get("dtype") if isinstance(entry, dict) else None
    if dtype not in _WIRE_DTYPES:
        raise ProtocolError(f"a tensor of dtype {dtype!r} cannot cross")
    shape, offsets = entry.get("shape"), entry.get("data_offsets")
    if not (isinstance(shape, list) and all(type(n) is int and n >= 0 for n in shape)):
        raise ProtocolError("unreadable tensors: a shape that is not a list of sizes")
    if len(shape) > MAX_DEPTH:
        raise ProtocolError(f"a tensor of {len(shape)} dimensions cannot cross")
    elements = 1
    for size in shape:
        elements *= size
    if elements > MAX_ELEMENTS:
        raise ProtocolError(f"a tensor of {elements} elements exceeds {MAX_ELEMENTS}")
    claimed = elements * _WIRE_DTYPES[entry["dtype"]]
    if not (
        isinstance(offsets, list)
        and len(offsets) == 2
        and all(type(n) is int for n in offsets)
        and 0 <= offsets[0] <= offsets[1] <= data_bytes
        and offsets[1] - offsets[0] == claimed
    ):
        raise ProtocolError(
            f"a tensor of shape {tuple(shape)} claims {claimed} bytes that the message does not "
            "hold"
        )


def _check_tensor(tensor: torch.Tensor) -> None:
    """A tensor must be a bounded array of numbers."""
    if tensor.dtype not in TENSOR_DTYPES:
        raise ProtocolError(f"a tensor of dtype {tensor.dtype} cannot cross")
    if tensor.numel() > MAX_ELEMENTS:
        raise ProtocolError(f"a tensor of {tensor.numel()} elements exceeds {MAX_ELEMENTS}")


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
        tensors.append(plain_copy(value))
        if positions is not None:
            positions[id(value)] = len(tensors) - 1
        grad = value.grad if value.is_leaf and value.grad is not None else None
        grad_index = None
        if grad is not None:
            tensors.append(plain_copy(grad))
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
    if is_sent_by_value(value):
        return {
            "$": "dict",
            "k": [encode(k, tensors, reference, positions) for k in value],
            "v": [encode(v, tensors, reference, positions) for v in value.values()],
        }
    return reference(value)


def plain_copy(tensor: torch.Tensor) -> torch.Tensor:
    """A compact copy to send: a plain CPU tensor with its own contiguous storage."""
    plain = tensor.detach().as_subclass(torch.Tensor).cpu()
    return plain.clone(memory_format=torch.contiguous_format)


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
        if tree.get("dtype") not in NUMPY_DTYPES:
            raise ProtocolError(f"a NumPy scalar of dtype {tree.get('dtype')!r} cannot cross")
        return np.dtype(tree["dtype"]).type(tree["v"])
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


def is_sent_by_value(value: Any) -> bool:
    """A dict that crosses as its items (a plain dict, or one of collections'), not by reference."""
    return type(value) is dict or (
        isinstance(value, dict) and type(value).__module__ == "collections"
    )


def argument_dicts(args: Any, kwargs: Mapping[str, Any]) -> list[dict]:
    """The dicts among a call's arguments, positional then keyword, in encoding order: the side
    that makes a call and the side that runs it find the same ones."""
    return [value for value in (*args, *kwargs.values()) if is_sent_by_value(value)]


def dict_state(value: dict) -> tuple[list, list]:
    """A dict's keys and values as objects, to tell whether a call wrote into it (added, removed
    or replaced an entry: :func:`dict_written`)."""
    return list(value), list(value.values())


def dict_written(value: dict, state: tuple[list, list]) -> bool:
    """Whether ``value`` no longer holds the keys and values (the same objects) of ``state``."""
    keys, values = state
    return len(value) != len(keys) or not all(
        now is then for now, then in zip((*value, *value.values()), (*keys, *values), strict=True)
    )


def tensors_in(value: Any) -> list[torch.Tensor]:
    """Every tensor in nested lists, tuples and dicts, in encoding order."""
    if isinstance(value, torch.Tensor):
        return [value]
    if type(value) in (list, tuple):
        return [t for item in value for t in tensors_in(item)]
    if isinstance(value, dict):
        return [t for item in value.values() for t in tensors_in(item)]
    return []
