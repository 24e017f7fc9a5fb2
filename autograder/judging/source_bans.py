"""Reference bans judged from the submission's source text, never from objects in its process.

When the checks run against a remote kernel, a function's code lives in the student's process and
anything it reports about itself could be forged.  So the judge reads the notebook's code cells
(its own copy) and finds what a check's name is bound to when the last cell has run: the last
module-level binding in cell order, of any form (def, class, assignment, import, loop or ``with``
target, walrus, ``del``).  An alias is followed to what it names.  The answer passes only if that
is the student's own definition and neither it, nor its later patches (``Cls.forward = ...``), nor
the student's helpers that it uses reach a banned reference (an attribute with a banned name, a
name bound to a banned object, a banned base class).  A binding the text cannot pin down (through
``globals()``, ``setattr`` on a module, ``exec``, a ``global`` declaration in a function, or an
expression that is not a definition) fails: it cannot be checked.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import sys
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

# Only these packages are imported to resolve a dotted name: never a module the student names.
_RESOLVABLE_ROOTS = {"torch", "numpy", "attention_lab", "math", "sklearn"}
# Calls that return a module's namespace, whose items are the notebook's globals.
_NAMESPACE_CALLS = {"globals", "vars", "locals"}
# How code reaches the notebook's module, or the builtins behind its globals, besides sys.modules.
_MODULE_NAMES = {"__main__", "builtins", "__builtins__"}
_MODULE_CALLS = {"__import__", "importlib.import_module", "importlib.reload"}
_DYNAMIC_CODE = {"exec", "eval", "compile"}
_FRAME_NAMESPACES = {"f_globals", "f_locals", "f_builtins"}
# Calls that look an attribute up by a string: getattr(obj, "name"), attrgetter("name").
_LOOKUPS = {"getattr", "attrgetter", "operator.attrgetter", "methodcaller", "operator.methodcaller"}
_MAX_DEPTH = 50  # aliases followed before a chain counts as one that cannot be checked

_state = threading.local()


@contextlib.contextmanager
def using_sources(sources: Sequence[str]) -> Iterator[None]:
    """Make ``sources`` (the submission's code cells, in order) what bans are judged against."""
    previous = getattr(_state, "sources", None)
    _state.sources = list(sources)
    try:
        yield
    finally:
        _state.sources = previous


def current_sources() -> list[str] | None:
    """The sources set by :func:`using_sources` in this thread, if any."""
    return getattr(_state, "sources", None)


def _dotted(node: ast.expr) -> str | None:
    """``a.b.c`` for a chain of attributes on a name, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return ".".join([node.id, *reversed(parts)])


def _resolve(dotted: str) -> Any:
    """The object a fully expanded dotted name refers to, or None.

    Nothing is imported: a name the student wrote is looked up among the modules the judge has
    already imported (every banned reference lives in one), so no student-chosen module, such
    as a package's ``__main__``, ever runs in the grader.
    """
    parts = dotted.split(".")
    if parts[0] not in _RESOLVABLE_ROOTS or any(p.startswith("__") for p in parts):
        return None
    for cut in range(len(parts), 0, -1):
        value: Any = sys.modules.get(".".join(parts[:cut]))
        if value is None:
            continue
        for attribute in parts[cut:]:
            value = getattr(value, attribute, None)
        return value
    return None


@dataclass(frozen=True)
class _Binding:
    """One binding of a module-level name, where it was seen and to what.

    kind: "definition" (``node`` is the def or class), "import" (``dotted`` is what is imported),
    "value" (``node`` is the bound expression, None when the text does not say, e.g. a ``with``
    target), "deleted", or "dynamic" (``how`` says through what; ``node`` is the value, if seen).
    """

    kind: str
    where: str
    node: ast.AST | None = None
    dotted: str = ""
    how: str = ""
    order: int = 0  # statements run in this order; a value sees only bindings made before it


def _where(cell: int, node: ast.AST) -> str:
    """Where ``node`` is, in the student's words: their code cells, test cells not counted."""
    return f"your code cell {cell + 1}, line {getattr(node, 'lineno', '?')}"


def _is_namespace(node: ast.expr) -> bool:
    """``globals()``, ``vars(...)``, ``locals()``, or a run-time module or its ``__dict__``."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        return node.func.id in _NAMESPACE_CALLS
    if isinstance(node, ast.Attribute) and node.attr == "__dict__":
        return _is_module_handle(node.value)
    if isinstance(node, ast.Attribute) and node.attr in _FRAME_NAMESPACES:
        return True  # a frame's globals are the notebook's, whichever frame it is
    return _is_module_handle(node)


def _is_module_handle(node: ast.expr) -> bool:
    """``sys.modules[...]``, ``__main__``, ``builtins``, ``__import__(...)``, or a part of one."""
    while isinstance(node, ast.Attribute | ast.Subscript):
        if _dotted(node) == "sys.modules":
            return True
        node = node.value
    if isinstance(node, ast.Call):
        return _dotted(node.func) in _MODULE_CALLS
    return isinstance(node, ast.Name) and node.id in _MODULE_NAMES


def _constant_key(node: ast.expr | None) -> str | None:
    """The string that ``node`` is, if it is a string literal."""
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _names_bound(node: ast.AST) -> set[str]:
    """The names that ``node`` itself binds in its scope."""
    if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
        return {node.id}
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return {node.name}
    if isinstance(node, ast.Import | ast.ImportFrom):
        return {a.asname or a.name.split(".")[0] for a in node.names}
    return set()


@functools.lru_cache(maxsize=256)
def _parsed(source: str) -> ast.Module | None:
    """A cell's syntax tree (None if it does not parse), shared by the notebooks that hold it.

    The grading run executes cells as plain Python (isolation/plain_kernel.py): a cell with an
    IPython magic or shell escape does not compile there, runs nothing and binds nothing.
    """
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _truth(node: ast.expr) -> bool | None:
    """The truth of a test the text settles (a constant, ``not`` of one), else None."""
    if isinstance(node, ast.Constant):
        return bool(node.value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        inner = _truth(node.operand)
        return None if inner is None else not inner
    return None


def _fields_that_run(statement: ast.stmt) -> tuple[str, ...]:
    """The blocks of ``statement`` that can run: a branch that a constant test rules out
    (``if False:``, the ``else`` of ``if True:`` or of ``while True:``) binds nothing."""
    if isinstance(statement, ast.If | ast.While):
        truth = _truth(statement.test)
        if truth is False:
            return ("orelse",)
        if truth is True:
            return ("body",)  # a while True loop ends only by break, which skips its else
    return ("body", "orelse", "finalbody")


class _Notebook:
    """Every binding of a notebook's module-level names, in cell order, and its dynamic writes."""

    def __init__(self, sources: Sequence[str]):
        self.bindings: dict[str, list[_Binding]] = {}
        self.dynamic: dict[str | None, list[_Binding]] = {}  # None: a name computed at run time
        self.patches: dict[str, list[_Binding]] = {}  # Cls.attr = value, setattr(Cls, ...)
        self._assigned: dict[int, ast.expr | None] = {}  # id(an attribute target) -> its value
        self._made = 0  # bindings recorded so far
        self._star = False  # (a cell's part) whether it resolved a `from m import *` just now
        for cell, source in enumerate(sources):
            self._extend(_cell(source, cell))

    @classmethod
    def of_cell(cls, source: str, cell: int) -> _Notebook:
        """What the code cell at index ``cell`` binds and writes, its bindings numbered from 1."""
        part = cls(())
        tree = _parsed(source)
        if tree is not None:  # else the cell did not run either
            part._block(tree.body, cell)
            for node in ast.walk(tree):
                part._dynamic_writes(node, cell)
        return part

    def _extend(self, part: _Notebook) -> None:
        """Add the next cell's bindings and writes (:meth:`of_cell`) after those seen so far."""
        for name, found in part.bindings.items():
            numbered = (replace(b, order=self._made + b.order) for b in found)
            self.bindings.setdefault(name, []).extend(numbered)
        self._made += part._made
        for key, writes in part.dynamic.items():
            self.dynamic.setdefault(key, []).extend(writes)
        for owner, patches in part.patches.items():
            self.patches.setdefault(owner, []).extend(patches)

    # -- module-level bindings, in the order they run

    def _bind(self, name: str, binding: _Binding) -> None:
        """Record a binding of ``name``, after those seen before it."""
        self._made += 1
        self.bindings.setdefault(name, []).append(replace(binding, order=self._made))

    def _block(self, statements: Sequence[ast.stmt], cell: int) -> None:
        """Record the bindings of module-level ``statements``, in order, up to the first that
        ends the block: what follows a ``raise`` (or ``break``, ``continue``) never runs."""
        for statement in statements:
            self._walruses(statement, cell)
            self._statement(statement, cell)
            if isinstance(statement, ast.Raise | ast.Return | ast.Break | ast.Continue):
                return

    def _walruses(self, statement: ast.stmt, cell: int) -> None:
        """``(name := value)`` outside any function binds a module-level name."""
        pending: list[ast.AST] = [statement]
        while pending:
            node = pending.pop()
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                pending.extend(getattr(node, "decorator_list", []))
                continue
            if isinstance(node, ast.ClassDef) and node is not statement:
                continue
            if isinstance(node, ast.NamedExpr):
                self._bind(node.target.id, _Binding("value", _where(cell, node), node.value))
            if isinstance(node, ast.stmt) and node is not statement:
                continue  # a nested block's statements are visited as statements
            pending.extend(ast.iter_child_nodes(node))

    def _statement(self, statement: ast.stmt, cell: int) -> None:
        """Record what one module-level statement binds, and the blocks nested in it."""
        where = _where(cell, statement)
        if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            self._bind(statement.name, _Binding("definition", where, statement))
        elif isinstance(statement, ast.Assign):
            for target in statement.targets:
                self._target(target, statement.value, where)
        elif isinstance(statement, ast.AnnAssign | ast.AugAssign):
            if statement.value is not None:  # x += y binds x to what x + y returns
                value = statement.value if isinstance(statement, ast.AnnAssign) else statement
                self._target(statement.target, value, where)
        elif isinstance(statement, ast.Import | ast.ImportFrom):
            self._import(statement, where)
        elif isinstance(statement, ast.For | ast.AsyncFor):
            self._target(statement.target, None, where, choices=statement.iter)
        elif isinstance(statement, ast.With | ast.AsyncWith):
            for item in statement.items:
                if item.optional_vars is not None:
                    self._target(item.optional_vars, None, where)
        elif isinstance(statement, ast.Try | ast.TryStar):
            for handler in statement.handlers:
                if handler.name:
                    self._bind(handler.name, _Binding("value", _where(cell, handler)))
        elif isinstance(statement, ast.Delete):
            for target in statement.targets:
                if isinstance(target, ast.Name):
                    self._bind(target.id, _Binding("deleted", where))
        elif isinstance(statement, ast.Match):
            for case in statement.cases:
                for node in ast.walk(case.pattern):
                    name = getattr(node, "name", None) or getattr(node, "rest", None)
                    if isinstance(name, str):
                        self._bind(name, _Binding("value", _where(cell, case.pattern)))
        if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            return  # their bodies bind their own names
        for field in _fields_that_run(statement):
            self._block(getattr(statement, field, []), cell)
        for clause in getattr(statement, "handlers", []) + getattr(statement, "cases", []):
            self._block(clause.body, cell)

    def _target(
        self,
        target: ast.expr,
        value: ast.AST | None,
        where: str,
        choices: ast.expr | None = None,
    ) -> None:
        """Bind the names in ``target`` to the parts of ``value`` they receive, where visible."""
        if isinstance(target, ast.Name):
            if choices is not None and isinstance(choices, ast.List | ast.Tuple | ast.Set):
                for element in choices.elts:  # for x in [a, b]: x is each in turn
                    self._bind(target.id, _Binding("value", where, element))
            else:
                self._bind(target.id, _Binding("value", where, value))
        elif isinstance(target, ast.Tuple | ast.List):
            values = value.elts if isinstance(value, ast.Tuple | ast.List) else None
            starred = any(isinstance(t, ast.Starred) for t in target.elts)
            for index, element in enumerate(target.elts):
                paired = (
                    values[index]
                    if values and not starred and len(values) == len(target.elts)
                    else None
                )
                self._target(element, paired, where)
        elif isinstance(target, ast.Starred):
            self._target(target.value, None, where)

    def _import(self, statement: ast.Import | ast.ImportFrom, where: str) -> None:
        """Bind each imported name to the dotted name it imports."""
        if isinstance(statement, ast.Import):
            for alias in statement.names:
                root = alias.name.split(".")[0]  # import a.b binds a
                dotted = alias.name if alias.asname else root
                self._bind(alias.asname or root, _Binding("import", where, dotted=dotted))
            return
        module = statement.module if not statement.level else None
        for alias in statement.names:
            if alias.name != "*":
                dotted = f"{module}.{alias.name}" if module else ""
                self._bind(alias.asname or alias.name, _Binding("import", where, dotted=dotted))
                continue
            found = _resolve(module) if module else None
            self._star = True
            if found is None:  # which names it binds is not in the text
                how = f"from {module or '.'} import *"
                self.dynamic.setdefault(None, []).append(_Binding("dynamic", where, how=how))
                continue
            for name in getattr(found, "__all__", None) or [n for n in vars(found) if n[0] != "_"]:
                self._bind(name, _Binding("import", where, dotted=f"{module}.{name}"))

    # -- writes into the module's namespace that no statement shows, anywhere in the code

    def _dynamic(self, name: str | None, where: str, how: str, value: ast.AST | None) -> None:
        """Record a write of ``name`` (None: computed at run time) that no statement shows."""
        self.dynamic.setdefault(name, []).append(_Binding("dynamic", where, value, how=how))

    def _dynamic_writes(self, node: ast.AST, cell: int, at: str | None = None) -> None:
        """Record ``node`` if it writes a global at run time or patches a global's attribute."""
        where = at or _where(cell, node)  # at: the exec(...) call whose code holds ``node``
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store | ast.Del):
            if _is_namespace(node.value):
                how = f"{ast.unparse(node.value)}[...]"
                self._dynamic(_constant_key(node.slice), where, how, self._assigned.get(id(node)))
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store | ast.Del):
            value = self._assigned.get(id(node))
            if _is_module_handle(node.value):
                self._dynamic(node.attr, where, f"{ast.unparse(node.value)}.{node.attr} =", value)
            elif isinstance(node.value, ast.Name):
                self.patches.setdefault(node.value.id, []).append(_Binding("value", where, value))
        elif isinstance(node, ast.Call):
            self._dynamic_call(node, where, cell)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            self._global_declarations(node, cell, at)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            # Walked before its targets: Cls.attr = value and globals()[key] = value know it.
            for target in getattr(node, "targets", None) or [node.target]:
                self._assigned[id(target)] = node.value

    def _dynamic_call(self, call: ast.Call, where: str, cell: int) -> None:
        """exec/eval/compile, setattr and namespace updates (``globals().update(...)``)."""
        function = call.func
        if isinstance(function, ast.Name) and function.id in _DYNAMIC_CODE:
            how = f"{function.id}(...)"
            code = _constant_key(call.args[0]) if call.args else None
            tree = _parsed(code) if code is not None else None
            if tree is None:  # code made at run time: it may bind any name
                self._dynamic(None, where, how, None)
                return
            for node in ast.walk(tree):
                for name in _names_bound(node):
                    self._dynamic(name, where, how, None)
                self._dynamic_writes(node, cell, where)
        elif isinstance(function, ast.Name) and function.id == "setattr" and len(call.args) >= 2:
            owner, key = call.args[0], _constant_key(call.args[1])
            value = call.args[2] if len(call.args) > 2 else None
            if _is_module_handle(owner) or _is_namespace(owner):
                self._dynamic(key, where, "setattr on a module", value)
            elif isinstance(owner, ast.Name):
                self.patches.setdefault(owner.id, []).append(_Binding("value", where, value))
        elif isinstance(function, ast.Attribute) and _is_namespace(function.value):
            if function.attr in {"update", "setdefault", "__setitem__", "pop", "__delitem__"}:
                how = f"{ast.unparse(function.value)}.{function.attr}(...)"
                # (the name written or None if computed; its value, where the code shows it)
                writes = [(k.arg, k.value) for k in call.keywords]
                for argument in call.args[:1]:
                    if isinstance(argument, ast.Dict):
                        writes += [
                            (_constant_key(k), v)
                            for k, v in zip(argument.keys, argument.values, strict=True)
                        ]
                    else:
                        second = call.args[1] if len(call.args) > 1 else None
                        writes.append((_constant_key(argument), second))
                for key, value in writes or [(None, None)]:
                    self._dynamic(key, where, how, value)

    def _global_declarations(
        self, function: ast.FunctionDef | ast.AsyncFunctionDef, cell: int, at: str | None
    ) -> None:
        """A name declared ``global`` in a function and bound there is bound whenever it runs."""
        declared = {n for s in ast.walk(function) if isinstance(s, ast.Global) for n in s.names}
        for node in ast.walk(function):
            bound = _names_bound(node) if node is not function else set()
            for name in bound & declared:
                how = f"a `global {name}` in function `{function.name}`"
                self._dynamic(name, at or _where(cell, node), how, None)


@functools.lru_cache(maxsize=2)
def _notebook(sources: tuple[str, ...]) -> _Notebook:
    """Each submission's cells are parsed once, however many checks ask about them."""
    return _Notebook(sources)


@functools.lru_cache(maxsize=1024)
def _cell_once(source: str, cell: int) -> _Notebook:
    return _Notebook.of_cell(source, cell)


def _cell(source: str, cell: int) -> _Notebook:
    """One code cell's part of a notebook, analysed once for the notebooks that share the cell
    (the solution's cells, under each of the tests' appended tricks).  A cell with ``import *``
    is analysed each time: which names it binds depends on the modules imported by then."""
    part = _cell_once(source, cell)
    return _Notebook.of_cell(source, cell) if part._star else part


@dataclass(frozen=True)
class BrokenBan:
    """What the text shows that breaks a ban, in words, and the banned reference it reaches."""

    seen: str
    reference: str | None


def _attribute_spelled(node: ast.AST) -> str | None:
    """The attribute name that ``node`` looks up: ``obj.name``, or the same spelled as a string
    (``getattr(obj, "name")``, ``attrgetter("name")``, ``obj.__dict__["name"]``,
    ``vars(obj)["name"]``), which reaches the same object."""
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Call) and _dotted(node.func) in _LOOKUPS:
        spelled = [_constant_key(arg) for arg in node.args]
        return next((key for key in spelled if key is not None), None)
    if isinstance(node, ast.Subscript):
        owner = node.value
        from_dict = isinstance(owner, ast.Attribute) and owner.attr == "__dict__"
        from_vars = isinstance(owner, ast.Call) and _dotted(owner.func) == "vars"
        if from_dict or from_vars:
            return _constant_key(node.slice)
    return None


class _Scan:
    """Whether one answer, as the notebook's text binds it, reaches a banned reference."""

    def __init__(self, notebook: _Notebook, banned: Mapping[str, Any]):
        self.notebook = notebook
        self.by_id = {id(target): label for label, target in banned.items()}
        self.by_name: dict[str, str] = {}
        for label, target in banned.items():
            self.by_name.setdefault(getattr(target, "__name__", label), label)
        self.classes = {label: t for label, t in banned.items() if isinstance(t, type)}
        self.followed: set[str] = set()  # globals already judged as helpers
        self.patched: dict[int, str] = {}  # id(a value assigned to Cls.attr) -> where

    def bindings(self, name: str, before: int | None) -> list[_Binding]:
        """The module-level bindings of ``name`` made before binding number ``before`` (None:
        all of them, as a function body sees them when the notebook has run)."""
        found = self.notebook.bindings.get(name, [])
        return [b for b in found if before is None or b.order < before]

    def final(self, name: str, before: int | None = None) -> _Binding | None:
        """The last module-level binding of ``name`` made before ``before``, if any."""
        bindings = self.bindings(name, before)
        return bindings[-1] if bindings else None

    def obj(self, node: ast.AST | None, before: int | None = None, depth: int = 0) -> Any:
        """The importable object that a name or an attribute chain names, if the text says."""
        dotted = _dotted(node) if isinstance(node, ast.expr) else None
        if dotted is None or depth > _MAX_DEPTH:
            return None
        first, _, rest = dotted.partition(".")
        binding = self.final(first, before)
        if binding is None:
            return _resolve(dotted) if first in _RESOLVABLE_ROOTS else None
        if binding.kind == "import":
            return _resolve(".".join(filter(None, [binding.dotted, rest])))
        if binding.kind != "value":
            return None
        base = self.obj(binding.node, binding.order, depth + 1)
        for attribute in filter(None, rest.split(".")):
            if attribute.startswith("__"):
                return None
            base = getattr(base, attribute, None)
        return base

    def label(self, node: ast.AST | None, before: int | None = None) -> str | None:
        """The banned reference that ``node`` names (either branch of ``a if c else b``), if any."""
        if isinstance(node, ast.IfExp):
            return self.label(node.body, before) or self.label(node.orelse, before)
        target = self.obj(node, before)
        return self.by_id.get(id(target)) if target is not None else None

    def answer(self, name: str) -> BrokenBan | None:
        """What was seen that breaks the ban on ``name``, or None."""
        dynamic = self.notebook.dynamic.get(name, []) + self.notebook.dynamic.get(None, [])
        if not dynamic:
            return self.binding(name, None, depth=0)
        how, label = dynamic[0], self.label(dynamic[0].node)
        if label:
            return BrokenBan(
                f"`{name}` is bound dynamically ({how.how}, {how.where}) to {label}", label
            )
        seen = (
            f"`{name}` may be bound dynamically ({how.how}, {how.where}), so it cannot be checked"
        )
        return BrokenBan(seen, None)

    def binding(self, name: str, before: int | None, depth: int) -> BrokenBan | None:
        """Judge the last binding of ``name`` made before ``before`` and what it leads to."""
        bindings = self.bindings(name, before)
        if not bindings:
            seen = f"`{name}` is bound nowhere in the notebook's code, so it cannot be checked"
            return BrokenBan(seen, None)
        last = bindings[-1]
        verb = "re-bound" if len(bindings) > 1 else "bound"
        if last.kind == "deleted":
            return None  # the check that requires it says it is missing
        if last.kind == "definition":
            return self.definition(name, last.node)
        if last.kind == "import":
            label = self.by_id.get(id(_resolve(last.dotted))) if last.dotted else None
            if label:
                return BrokenBan(
                    f"`{name}` is {verb} ({last.where}) by an import, to {label}", label
                )
            seen = (
                f"`{name}` is {verb} ({last.where}) by an import of `{last.dotted or '?'}`, "
                "not by a definition of its own, so it cannot be checked"
            )
            return BrokenBan(seen, None)
        return self.value(name, last, verb, depth)

    def value(self, name: str, last: _Binding, verb: str, depth: int) -> BrokenBan | None:
        """Judge ``name = <expression>``: an alias is followed, anything else cannot be checked."""
        label = self.label(last.node, last.order)
        if label:
            return BrokenBan(f"`{name}` is {verb} ({last.where}) to {label}", label)
        node = last.node
        for choice in [node.body, node.orelse] if isinstance(node, ast.IfExp) else [node]:
            if isinstance(choice, ast.Lambda):
                found = self.code(name, choice)
            elif isinstance(choice, ast.Name) and depth < _MAX_DEPTH:
                found = self.binding(choice.id, last.order, depth + 1)
                if found is not None:
                    seen = f"`{name}` is {verb} ({last.where}) to `{choice.id}`, and {found.seen}"
                    return BrokenBan(seen, found.reference)
            else:
                shown = (
                    f"`{ast.unparse(choice)[:80]}`" if choice else "a value the code does not show"
                )
                seen = (
                    f"`{name}` is {verb} ({last.where}) to {shown}, which is not a definition "
                    "of its own, so it cannot be checked"
                )
                return BrokenBan(seen, None)
            if found is not None:
                return found
        return None

    def definition(self, name: str, node: ast.AST | None) -> BrokenBan | None:
        """Judge the student's own def or class ``name`` and everything it uses."""
        if isinstance(node, ast.ClassDef):
            for base in node.bases:
                target = self.obj(base)
                for label, cls in self.classes.items():
                    if isinstance(target, type) and issubclass(target, cls):
                        seen = f"`{name}` subclasses {label} instead of implementing it"
                        return BrokenBan(seen, label)
        return self.code(name, node)

    def code(self, name: str, root: ast.AST | None) -> BrokenBan | None:
        """Whether ``root``, its patches and the helpers it uses reach a banned reference."""
        pending: list[tuple[str, ast.AST | None]] = [(name, root)]
        visited: set[int] = set()
        while pending:
            owner, node = pending.pop()
            if node is None or id(node) in visited:
                continue
            visited.add(id(node))
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                for patch in self.notebook.patches.get(owner, []):  # Cls.forward = ..., later
                    if patch.node is None:
                        seen = (
                            f"`{owner}` is patched ({patch.where}) with a value the code does not "
                            "show, so it cannot be checked"
                        )
                        return BrokenBan(seen, None)
                    pending.append((owner, patch.node))
                    self.patched[id(patch.node)] = patch.where
            for child in ast.walk(node):
                spelled = _attribute_spelled(child)
                if spelled in self.by_name:
                    label = self.label(child) or self.by_name[spelled]
                    if id(node) in self.patched:
                        seen = f"`{owner}` is patched ({self.patched[id(node)]}) with {label}"
                        return BrokenBan(seen, label)
                    return self.uses(name, owner, label)
                if isinstance(child, ast.Name) and child is not node:
                    found = self.helper(name, owner, child.id, pending)
                    if found is not None:
                        return found
        return None

    def helper(
        self, name: str, owner: str, helper: str, pending: list[tuple[str, ast.AST | None]]
    ) -> BrokenBan | None:
        """Judge a global that the answer's code uses; the student's own code is queued."""
        if helper in self.followed:
            return None
        self.followed.add(helper)
        dynamic = self.notebook.dynamic.get(helper)
        if dynamic:
            seen = (
                f"`{name}` uses `{helper}`, which may be bound dynamically "
                f"({dynamic[0].how}, {dynamic[0].where}), so it cannot be checked"
            )
            return BrokenBan(seen, None)
        binding = self.final(helper)
        if binding is None:
            return None
        if binding.kind == "definition":
            pending.append((helper, binding.node))
            return None
        label = (
            self.label(ast.Name(helper)) if binding.kind == "import" else self.label(binding.node)
        )
        if label:
            return self.uses(name, owner, label)
        node = binding.node  # module-level values are followed only where they are code
        for choice in [node.body, node.orelse] if isinstance(node, ast.IfExp) else [node]:
            if isinstance(choice, ast.Lambda):
                pending.append((helper, choice))
            elif isinstance(choice, ast.Name):
                found = self.helper(name, helper, choice.id, pending)
                if found is not None:
                    return found
        return None

    def uses(self, name: str, owner: str, label: str) -> BrokenBan:
        """The finding that ``owner``, used by the answer ``name``, reaches ``label``."""
        who = f"`{name}`" if owner == name else f"`{owner}`, which `{name}` uses,"
        return BrokenBan(f"{who} calls {label} instead of implementing it", label)


def banned_use(sources: Sequence[str], name: str, banned: Mapping[str, Any]) -> BrokenBan | None:
    """What the notebook's text shows that makes ``name`` break its ban, or None."""
    return _Scan(_notebook(tuple(sources)), banned).answer(name)
