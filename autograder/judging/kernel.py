"""The kernel's side of remote judging: serve the judge until it sends its verdict.

A graded test cell ends with ``run_hidden_checks(assignment, grade_id, globals())``.  Inside the
grading sandbox that name is :func:`checkpoint`: the student's kernel connects to the judge's Unix
socket and answers requests (look up a name, call it, read an attribute, back-propagate) until the
judge, a trusted process that never runs student code, sends its verdict.  Values cross as data
(autograder/judging/protocol.py); the judge's torch, NumPy and check code are never reachable from
the student's code, so patching them changes nothing.

This module is copied into the sandbox, so it imports only the standard library, NumPy, torch,
the protocol and autograder/private_apis.py.
"""

from __future__ import annotations

import copy
import os
import socket
from collections.abc import Callable, Mapping
from typing import Any

import torch

from autograder.isolation.cell_files import cell_of
from autograder.judging.protocol import (
    ProtocolError,
    argument_dicts,
    class_path,
    decode,
    dict_state,
    dict_written,
    encode,
    receive_message,
    send_message,
    tensor_at,
    tensors_in,
)
from autograder.private_apis import torch_dispatch_mode

JUDGE_SOCKET_ENV = "ATTENTION_LAB_JUDGE"
_REPR_CHARS = 200
_ERROR_CHARS = 2000


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


class _AtenOpNames(torch_dispatch_mode()):
    """Records the name of every aten op that runs while active."""

    def __init__(self) -> None:
        super().__init__()
        self.names: set[str] = set()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # noqa: ANN001
        self.names.add(str(func))
        return func(*args, **(kwargs or {}))


# Torch functions that make a tensor from sizes or data alone: without device= it lands on
# torch's default device, the CPU, wherever the call's inputs are.
FACTORY_NAMES = frozenset(
    "arange as_tensor empty eye full linspace logspace ones rand randint randn randperm tensor "
    "tril_indices triu_indices zeros".split()
)
_FACTORIES = frozenset(getattr(torch, name) for name in FACTORY_NAMES)
# Tensor methods that move a tensor where their device or tensor argument says.
_MOVES = frozenset((torch.Tensor.to, torch.Tensor.cuda, torch.Tensor.type_as))
# Ops that accept a CPU index or value beside a tensor on another device.
_MIXING_ALLOWED = frozenset(
    (torch.Tensor.__getitem__, torch.Tensor.__setitem__, torch.Tensor.copy_)
)


class _DefaultDeviceTracker(torch.overrides.TorchFunctionMode):
    """Follows the tensors a call makes without device= (on the CPU, whatever the inputs'
    device) and records the first op that combines one with a tensor that came from outside
    the call: with the inputs on a GPU that op raises, as torch mixes devices only for a CPU
    tensor of 0 dimensions."""

    def __init__(self) -> None:
        super().__init__()
        self.made: dict[int, tuple[torch.Tensor, str]] = {}  # id -> (tensor, the factory behind it)
        self.mixed: list[str] = []  # ["meets" or "returned", the factory's name], once seen

    def _origin(self, value: Any) -> str | None:
        entry = self.made.get(id(value))
        return entry[1] if entry is not None and entry[0] is value else None

    def _keep(self, result: Any, origin: str) -> None:
        for tensor in tensors_in(result):
            self.made[id(tensor)] = (tensor, origin)

    def __torch_function__(self, func, types, args=(), kwargs=None):  # noqa: ANN001
        kwargs = kwargs or {}
        result = func(*args, **kwargs)
        given = tensors_in((args, kwargs))
        if func in _FACTORIES and not given:
            if kwargs.get("device") is None:
                self._keep(result, func.__name__)
            return result
        made = [(t, self._origin(t)) for t in given]
        outside = [t for t, origin in made if origin is None]
        inside = [(t, origin) for t, origin in made if origin is not None]
        where = (*args[1:], kwargs.get("device"), kwargs.get("other"))
        if func in _MOVES and (
            func is torch.Tensor.cuda
            or any(isinstance(a, torch.device | str | int | torch.Tensor) for a in where)
        ):
            # Moved where an argument says: the inputs' device, in grading.  On the CPU the move
            # may hand back the tensor itself, which is then where the inputs are.
            self.made.pop(id(result), None)
            return result
        if func in _MIXING_ALLOWED:
            if inside and self._origin(args[0]) is not None:
                self._keep(result, self._origin(args[0]))
            return result
        wide = [(t, origin) for t, origin in inside if t.dim() > 0]
        if outside and wide and not self.mixed:
            self.mixed = ["meets", wide[0][1]]
        if inside and not outside:
            self._keep(result, inside[0][1])
        return result


def function_name(func: Any) -> str:
    """``module.qualname`` of a function, as the torch-function observation reports it."""
    name = getattr(func, "__qualname__", None) or getattr(func, "__name__", None) or repr(func)
    return f"{getattr(func, '__module__', None) or '?'}.{name}"


def observe(kind: str, fn: Callable[..., Any], args: tuple, kwargs: dict) -> tuple[Any, Any]:
    """Call ``fn`` and observe it: the torch functions or aten ops it ran, its peak bytes, or
    where it mixes a tensor made on the default device with its inputs."""
    if kind == "torch_functions":
        with _TorchFunctionNames() as recorder:
            result = fn(*args, **kwargs)
        return result, sorted(recorder.names)
    if kind == "aten_ops":
        with _AtenOpNames() as recorder:
            result = fn(*args, **kwargs)
        return result, sorted(recorder.names)
    if kind == "calls_held":
        # One call per positional argument, every result held until the last call returns (so
        # a result that a later call changed is sent as that call left it); the observation:
        # where two results are tuples holding one list object, [first, later, position].
        results = [fn(argument, **kwargs) for argument in args]
        return results, _one_list_in_two_results(results)
    if kind == "default_device":
        # The result, and ["meets" or "returned", factory name] where the call combines a tensor
        # made on the default device with one it was given (or returns it), else [].
        with _DefaultDeviceTracker() as tracker:
            result = fn(*args, **kwargs)
        returned = [tracker._origin(t) for t in tensors_in(result) if t.dim() > 0]
        if not tracker.mixed and any(returned):
            tracker.mixed = ["returned", next(filter(None, returned))]
        return result, tracker.mixed
    if kind == "peak_bytes":
        from attention_lab.profiling import peak_memory

        threads = torch.get_num_threads()
        torch.set_num_threads(1)  # the peak does not depend on threads; one is faster
        try:
            return None, int(peak_memory(lambda: fn(*args, **kwargs), device="cpu"))
        finally:
            torch.set_num_threads(threads)
    raise ValueError(f"unknown observation {kind!r}")


def _one_list_in_two_results(results: list[Any]) -> list[list[int]]:
    """[i, j, position] for every two tuples results[i], results[j] (i < j) whose items at
    ``position`` are one list object."""
    shared = []
    for j, later in enumerate(results):
        for i, first in enumerate(results[:j]):
            if isinstance(first, tuple) and isinstance(later, tuple):
                shared += [
                    [i, j, position]
                    for position, (a, b) in enumerate(zip(first, later, strict=False))
                    if isinstance(a, list) and a is b
                ]
    return shared


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
        value = self._server.callback("getattr", self, name)
        if isinstance(value, torch.Tensor):
            self._server.lent.append((self, name, value, value.detach().clone()))
        return value

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._server.callback("call", self, *args, **kwargs)

    def __deepcopy__(self, memo: dict) -> Any:
        # The judge copies its model: the copy is the student's to change (see _Server.lent).
        return self._server.callback("deepcopy", self)


def _same(now: torch.Tensor, then: torch.Tensor) -> bool:
    """Whether a tensor still holds what it held (a NaN where a NaN was counts as the same)."""
    if torch.equal(now, then):
        return True
    if not now.is_floating_point():
        return False
    return bool(((now == then) | (now.isnan() & then.isnan())).all())


class _Server:
    """Answers the judge's requests about one namespace."""

    def __init__(self, sock: socket.socket, namespace: dict[str, Any]):
        self.sock = sock
        self.namespace = namespace
        self.objects: dict[int, Any] = {}
        self.numbers: dict[int, int] = {}  # id(object) -> reference number, stable identity
        self.calls: dict[int, tuple[list[torch.Tensor], list[torch.Tensor]]] = {}
        # (stand-in, attribute, the tensor read from it, what it held): a tensor of the judge's
        # model arrives by value, so what the student's code writes into it in place is sent
        # back before the judge's model is used again, as one process would see it.
        self.lent: list[tuple[_JudgeObject, str, torch.Tensor, torch.Tensor]] = []
        # the namespace as it was before each "define" (autograder/authoring/used_answers.py)
        self.defined: list[dict[str, Any]] = []

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
        for i, (owner, name, tensor, then) in enumerate(self.lent):
            if tensor.shape == then.shape and not _same(tensor.detach(), then):
                self.lent[i] = (owner, name, tensor, tensor.detach().clone())
                self._ask("assign", owner, name, tensor.detach())
        return self._ask(op, target, *args, **kwargs)

    def _ask(self, op: str, target: _JudgeObject, *args: Any, **kwargs: Any) -> Any:
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
        self.lent.clear()  # a new request: the tensors lent to the last one are not watched
        args = decode(request.get("args", {"$": "list", "v": []}), tensors, self.resolve)
        kwargs = decode(
            request.get("kwargs", {"$": "dict", "k": [], "v": []}), tensors, self.resolve
        )
        if "rng" in request:
            torch.set_rng_state(tensor_at(tensors, request["rng"]))
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
        if op == "define":  # the course's answers in place of the student's, for a while
            self.defined.append(dict(self.namespace))
            for source in args:
                exec(compile(str(source), "<the course's answer>", "exec"), self.namespace)
            return self.reply(None)
        if op == "undefine":  # the student's own names back, as they were before "define"
            restore(self.namespace, self.defined.pop())
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
            # A check's copy of a student's object is made where the object lives, as
            # copy.deepcopy makes it in one process; the judge gets a reference to the copy.
            "deepcopy": lambda: copy.deepcopy(target),
        }
        if op not in simple:
            raise ProtocolError(f"unknown request {op!r}")
        return self.reply(simple[op]())

    def call(self, target: Any, op: str, request: dict, args: Any, kwargs: Any) -> tuple:
        inputs = [t for t in tensors_in((args, kwargs)) if t.requires_grad]
        # What each tensor argument held: a call that writes into one in place is seen, and the
        # judge's argument gets the same values, as it would in one process.
        given = tensors_in((args, kwargs))
        before = [t.detach().clone() for t in given]
        # So is a write into a dict argument (an entry added, removed or replaced).
        dicts = argument_dicts(args, kwargs)
        dicts_before = [dict_state(d) for d in dicts]
        with torch.set_grad_enabled(bool(request.get("grad", True))):
            if op == "observe":
                result, observation = observe(request["kind"], target, tuple(args), kwargs)
            else:
                result, observation = target(*args, **kwargs), None
        outputs = [t for t in tensors_in(result) if t.requires_grad and t.grad_fn is not None]
        call_id = None
        if outputs:
            call_id = len(self.calls) + 1
            self.calls[call_id] = (inputs, outputs)
        positions: dict[int, int] = {}
        message, tensors = self.reply(result, positions, call=call_id, observation=observation)
        message["graph_outputs"] = [positions[id(t)] for t in outputs]
        written = [
            i
            for i, (now, then) in enumerate(zip(given, before, strict=True))
            if now.shape == then.shape and not _same(now.detach(), then)
        ]
        message["written"] = [[i, len(tensors) + n] for n, i in enumerate(written)]
        tensors.extend(given[i].detach() for i in written)
        message["written_dicts"] = [
            [i, encode(d, tensors, self.reference)]
            for i, (d, then) in enumerate(zip(dicts, dicts_before, strict=True))
            if dict_written(d, then)
        ]
        message["rng"] = len(tensors)
        tensors.append(torch.get_rng_state())
        return message, tensors

    def backward(self, request: dict, tensors: list[torch.Tensor]) -> tuple:
        inputs, outputs = self.calls[request["call"]]
        grads = [None if i is None else tensor_at(tensors, i) for i in request["grads"]]
        pairs = [(o, g) for o, g in zip(outputs, grads, strict=True) if g is not None]
        for t in inputs:
            t.grad = None
        backward_exactly(pairs)
        return self.reply([t.grad for t in inputs])


def restore(namespace: dict[str, Any], before: Mapping[str, Any]) -> None:
    """Put ``namespace`` back as ``before`` was: names added removed, names rebound rebound."""
    for name in [n for n in namespace if n not in before]:
        del namespace[name]
    for name, value in before.items():
        if name not in namespace or namespace[name] is not value:
            namespace[name] = value


def backward_exactly(pairs: list[tuple[torch.Tensor, torch.Tensor]]) -> None:
    """Back-propagate each gradient into its output, as ``torch.autograd.backward(outputs,
    grads)`` does, bit for bit.

    Through the scalar sum of <output, gradient> each output receives 1 * gradient, exactly its
    gradient.  torch's own call with gradient tensors imports sympy on its first use, about 0.4 s
    of CPU in every graded kernel (each is a new process); the scalar's backward does not.
    """
    total = None
    for output, grad in pairs:
        if grad.shape != output.shape:  # as backward() refuses: a product would broadcast
            raise ValueError(
                f"a gradient of shape {tuple(grad.shape)} for an output of shape "
                f"{tuple(output.shape)}"
            )
        term = (output * grad.to(output.dtype)).sum()
        total = term if total is None else total + term
    if total is not None:
        total.backward()


def checkpoint(
    assignment: str, grade_id: str, namespace: dict[str, Any], visible_passed: bool = True
) -> None:
    """Let the grader's judge run the hidden checks of ``grade_id`` against ``namespace``; raise
    if it says they fail.  The judge decides whether this call is judged at all: only the graded
    test cell that is running may call, once (autograder/judging/judge.py).  ``visible_passed``:
    whether the cell's visible checks passed, which the judge shows as pass or fail only."""
    path = os.environ.get(JUDGE_SOCKET_ENV)
    if not path:
        raise RuntimeError(
            "hidden checks run only inside the grading command (python -m autograder grade)"
        )
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.connect(path)
        server = _Server(sock, namespace)
        send_message(sock, {"hello": [assignment, grade_id], "visible": visible_passed}, [])
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
    reply = {
        "ok": False,
        "mro": [class_path(c) for c in type(error).__mro__],
        "message": str(error)[:_ERROR_CHARS],
    }
    where = raised_in_cell(error)
    if where is not None:
        reply["where"] = list(where)
    return reply


def raised_in_cell(error: BaseException) -> tuple[int, int] | None:
    """(cell, line): the innermost place in a notebook cell's code that ``error`` passed through,
    or None when it never did (an error inside the judge's own stand-ins, say)."""
    found = None
    trace = error.__traceback__
    while trace is not None:
        cell = cell_of(trace.tb_frame.f_code.co_filename)
        if cell is not None:
            found = (cell, trace.tb_lineno)
        trace = trace.tb_next
    return found
