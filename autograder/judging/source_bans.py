"""Reference bans judged from the submission's source text, never from objects in its process.

When the checks run against a remote kernel, a function's code lives in the student's process and
anything it reports about itself could be forged.  So the judge reads the notebook's code cells
(its own copy), finds the definition a check names, and looks for banned references in it: an
attribute with a banned name, a name imported or assigned from a banned object, a banned base
class, and the same inside the student's own helpers that the definition uses.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import sys
import threading
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from autograder.cells import to_python

# Only these packages are imported to resolve a dotted name: never a module the student names.
_RESOLVABLE_ROOTS = {"torch", "numpy", "attention_lab", "math", "sklearn"}

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


@functools.lru_cache(maxsize=2)
def _bindings(sources: tuple[str, ...]) -> _Bindings:
    """Each submission's cells are parsed once, however many checks ask about them."""
    return _Bindings(sources)


class _Bindings:
    """Top-level definitions and import aliases of a notebook, later cells overriding earlier."""

    def __init__(self, sources: Sequence[str]):
        self.definitions: dict[str, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef] = {}
        self.aliases: dict[str, str] = {}
        for source in sources:
            try:
                tree = ast.parse(to_python(source))
            except (SyntaxError, ValueError):
                continue  # the cell did not run either
            for node in ast.walk(tree):  # imports anywhere, even inside functions
                self._imports(node)
            for statement in tree.body:
                self._statement(statement)

    def _imports(self, node: ast.AST) -> None:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    self.aliases[alias.asname] = alias.name
                else:
                    root = alias.name.split(".")[0]
                    self.aliases[root] = root
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                self.aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"

    def _statement(self, statement: ast.stmt) -> None:
        if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            self.definitions[statement.name] = statement
            self.aliases.pop(statement.name, None)
        elif isinstance(statement, ast.Assign) and len(statement.targets) == 1:
            target, dotted = statement.targets[0], _dotted(statement.value)
            if isinstance(target, ast.Name):
                self.definitions.pop(target.id, None)
                if dotted is not None:
                    self.aliases[target.id] = self.expand(dotted)

    def expand(self, dotted: str) -> str:
        """Replace the first part of ``dotted`` by what it was imported as."""
        first, _, rest = dotted.partition(".")
        if first in self.aliases and self.aliases[first] != dotted:
            return ".".join(filter(None, [self.aliases[first], rest]))
        return dotted


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


def banned_use(
    sources: Sequence[str], name: str, banned: Mapping[str, Any]
) -> tuple[str, str] | None:
    """(label, "calls" or "subclasses") if the definition of ``name`` uses a banned reference."""
    bindings = _bindings(tuple(sources))
    by_id = {id(target): label for label, target in banned.items()}
    by_name: dict[str, str] = {}
    for label, target in banned.items():
        by_name.setdefault(getattr(target, "__name__", label), label)
    classes = {label: t for label, t in banned.items() if isinstance(t, type)}

    def resolved(dotted: str) -> Any:
        return _resolve(bindings.expand(dotted))

    if name not in bindings.definitions:  # bound by an import or an assignment
        target = resolved(name) if name in bindings.aliases else None
        label = by_id.get(id(target)) if target is not None else None
        return (label, "calls") if label else None
    pending, seen = [bindings.definitions[name]], set()
    while pending:
        node = pending.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, ast.ClassDef):
            for base in node.bases:
                dotted = _dotted(base)
                target = resolved(dotted) if dotted else None
                for label, cls in classes.items():
                    if isinstance(target, type) and issubclass(target, cls):
                        return label, "subclasses"
        for child in ast.walk(node):
            if isinstance(child, ast.Attribute) and child.attr in by_name:
                return by_name[child.attr], "calls"
            if isinstance(child, ast.Name) and child is not node:
                if child.id in bindings.definitions:
                    pending.append(bindings.definitions[child.id])
                elif child.id in bindings.aliases:
                    target = resolved(child.id)
                    if target is not None and id(target) in by_id:
                        return by_id[id(target)], "calls"
    return None
