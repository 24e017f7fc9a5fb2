"""No two of autograder's modules import each other, directly or round a longer loop.

A loop hides itself behind an import inside a function, so such imports count too: the graph is
read from the source of every module (``ast``), each import wherever it stands.  Importing a
submodule also runs its packages' ``__init__``, an edge Python resolves by running the package
first; only the modules an import names are counted.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "autograder"


def module_name(path: Path, root: Path = PACKAGE) -> str:
    """``autograder.pipeline.cli`` for autograder/pipeline/cli.py; a package for its __init__."""
    parts = path.relative_to(root.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(path: Path, name: str, modules: set[str]) -> set[str]:
    """The modules of ``modules`` that the module ``name`` at ``path`` imports, anywhere in it."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            # `from package import module` imports the module; `from module import name`, it
            for alias in node.names:
                found.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base)
    return (found & modules) - {name}


def import_graph(root: Path = PACKAGE) -> dict[str, set[str]]:
    """module -> the modules it imports, for every module under ``root``."""
    paths = {module_name(path, root): path for path in root.rglob("*.py")}
    return {name: imported(path, name, set(paths)) for name, path in paths.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The groups of modules that reach one another (strongly connected, more than one), each
    sorted (Tarjan's algorithm, iteratively: the graph is deeper than Python's recursion)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            for target in edges:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph[target]))))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    group = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        group.append(member)
                        if member == node:
                            break
                    if len(group) > 1:
                        found.append(sorted(group))
    return found


def test_the_finder_sees_a_loop_through_an_import_inside_a_function(tmp_path: Path):
    package = tmp_path / "autograder"
    (package / "inner").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "inner" / "__init__.py").write_text("")
    (package / "inner" / "a.py").write_text("from autograder.inner import b\n")
    (package / "inner" / "b.py").write_text("def f():\n    from .c import g\n")
    (package / "inner" / "c.py").write_text("import autograder.inner.a\n")
    (package / "inner" / "d.py").write_text("from autograder.inner.a import x\n")
    assert cycles(import_graph(package)) == [
        ["autograder.inner.a", "autograder.inner.b", "autograder.inner.c"]
    ]


@pytest.mark.slow  # half a second or more in the fast tier (tests/tiers.py)
def test_no_module_of_autograder_imports_itself_round_a_loop():
    assert cycles(import_graph()) == []
