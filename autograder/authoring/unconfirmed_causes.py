"""The lint's cause rule: no text that reaches a student names a cause that no confirmer
established (issue 40).

Two places hold such texts, and each is read where the texts live:

- **the hidden checks** (``autograder/checks/**``): every string a check module writes may end up
  in a failure, through ``fail``, ``diagnose(..., otherwise=...)``, a gate, a constant or a helper
  that builds a message, so every string of the module is read, f-strings by their constant parts
  (a hole reads ``{}``); only docstrings and the messages of the mistakes declared with
  :func:`~autograder.authoring.mistakes.catalogue` are left out, since a confirmer guards those
  (``diagnose`` names a mistake only where the answer's output is that mistake's), and the
  statement's words that a check quotes in ``keeps`` (no message: students read them in the
  statement);
- **the notebooks' public checks** (the graded test cells of ``solutions/``, above ``### BEGIN
  HIDDEN TESTS``): the messages given to ``check(condition, message)``, ``check_close(actual,
  expected, message)``, ``assert condition, message`` and ``raise AssertionError(message)``.

A text with a cause word (:func:`~autograder.authoring.cause_words.cause_words`) is a problem,
unless :data:`DELIBERATE` lists it with the reason it is confirmed on the spot. The other side
of the rule -- that a declared mistake is named only through a confirmer -- is
:func:`unguarded_mistakes`.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import nbformat

from autograder.authoring.cause_words import cause_words
from autograder.cells import HIDDEN_TESTS, is_test_cell, region_lines


@dataclass(frozen=True)
class Text:
    """One text that may reach a student: where it is written, and what it says."""

    where: str  # "autograder/checks/a01_attention.py:212" or "01_attention/test_causal_mask"
    text: str  # f-string holes read "{}"

    def problem(self, words: list[str]) -> str:
        return (
            f"{self.where}: {self.text!r} names a cause ({', '.join(repr(w) for w in words)}) "
            "that no confirmer established: say what was observed (the promise broken, "
            "expected vs got, a counterexample), or declare it as a Mistake with catalogue() "
            "and name it only where diagnose or an experiment on the answer confirms it"
        )


# where -> (the start of the text, why its cause is confirmed where it is printed): a deliberate
# exception, each with its reason; a listed text that no longer names a cause is a problem too.
DELIBERATE: dict[tuple[str, str], str] = {
    ("autograder/checks/a03_transformer_block/layer_norm.py", "`LayerNorm` calls {} instead"): (
        "the call is observed on the answer (observe_call) before the message is printed"
    ),
    ("autograder/checks/a05_sentiment/training_step.py", "`{}` is attention_lab's own"): (
        "printed only where the answer is the reference object itself (an identity check)"
    ),
    ("autograder/checks/a04_depth.py", "keep no reduced axis"): (
        "a catalogued mistake's message, kept in one constant for two catalogues; diagnose "
        "names it only where the answer equals the keepdim output"
    ),
}


def _f_string(node: ast.JoinedStr) -> str:
    """An f-string's constant parts, each hole written ``{}``."""
    return "".join(part.value if isinstance(part, ast.Constant) else "{}" for part in node.values)


def _docstrings(nodes: list[ast.AST]) -> set[int]:
    """The ids of the docstring nodes of the modules, classes and functions of ``nodes``."""
    found = set()
    for node in nodes:
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            first = node.body[0] if node.body else None
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def _called(node: ast.Call) -> str:
    """The name a call calls: ``fail`` for ``fail(...)`` and ``registry.fail(...)``."""
    func = node.func
    return func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")


def _labels(nodes: list[ast.AST]) -> set[str]:
    """The strings a module (all its ``nodes``) compares something with, and those it passes by
    the name of a parameter whose default is one: labels (a variant's name), not sentences."""
    compared = {
        operand.value
        for node in nodes
        if isinstance(node, ast.Compare)
        for operand in (node.left, *node.comparators)
        if isinstance(operand, ast.Constant) and isinstance(operand.value, str)
    }
    labelled = set()  # the parameters whose default is a label
    for node in nodes:
        if isinstance(node, ast.FunctionDef):
            arguments = node.args
            named = arguments.posonlyargs + arguments.args
            pairs = list(
                zip(named[len(named) - len(arguments.defaults) :], arguments.defaults, strict=True)
            )
            pairs += list(zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True))
            for parameter, default in pairs:
                if isinstance(default, ast.Constant) and default.value in compared:
                    labelled.add(parameter.arg)
    passed = {
        keyword.value.value
        for node in nodes
        if isinstance(node, ast.Call)
        for keyword in node.keywords
        if keyword.arg in labelled and isinstance(keyword.value, ast.Constant)
    }
    return compared | passed


def module_texts(source: str, where: str) -> Iterator[Text]:
    """Every string of a check module that may reach a student, one per string literal or
    f-string: docstrings, catalogue() messages, the statement's words a check keeps, single
    words and labels the module compares with are left out."""
    nodes = list(ast.walk(ast.parse(source)))
    skipped, labels = _docstrings(nodes), _labels(nodes)
    kept_names: set[str] = set()  # a clause several checks keep, named once in the module
    for node in nodes:
        if isinstance(node, ast.Call) and _called(node) == "catalogue":
            skipped |= {id(inner) for inner in ast.walk(node)}
        elif isinstance(node, ast.Call) and _called(node) == "check":
            kept = [keyword.value for keyword in node.keywords if keyword.arg == "keeps"]
            inner_nodes = [inner for value in kept for inner in ast.walk(value)]
            skipped |= {id(inner) for inner in inner_nodes}
            kept_names |= {inner.id for inner in inner_nodes if isinstance(inner, ast.Name)}
        elif isinstance(node, ast.JoinedStr):
            # Its constant parts (and a format spec's) are read once, as the whole f-string.
            skipped |= {id(inner) for inner in ast.walk(node) if inner is not node}
    # a name used only in keeps: its module-level string is the statement's words too
    used_elsewhere = {
        node.id
        for node in nodes
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and id(node) not in skipped
    }
    for node in nodes:
        if isinstance(node, ast.Assign) and any(
            isinstance(target, ast.Name) and target.id in kept_names - used_elsewhere
            for target in node.targets
        ):
            skipped |= {id(inner) for inner in ast.walk(node.value)}
    for node in nodes:
        if id(node) in skipped:
            continue
        if isinstance(node, ast.JoinedStr):
            yield Text(f"{where}:{node.lineno}", _f_string(node))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if " " in node.value.strip() and node.value not in labels:
                yield Text(f"{where}:{node.lineno}", node.value)


def _message_parts(node: ast.expr | None) -> Iterator[str]:
    """The texts of a public check's message expression: its strings, f-strings, and the parts
    of a concatenation or a conditional."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        yield node.value
    elif isinstance(node, ast.JoinedStr):
        yield _f_string(node)
    elif isinstance(node, ast.BinOp):
        yield from _message_parts(node.left)
        yield from _message_parts(node.right)
    elif isinstance(node, ast.IfExp):
        yield from _message_parts(node.body)
        yield from _message_parts(node.orelse)


def _argument(node: ast.Call, index: int, keyword: str) -> ast.expr | None:
    """The argument of ``node`` at position ``index`` or named ``keyword``."""
    if len(node.args) > index:
        return node.args[index]
    return next((k.value for k in node.keywords if k.arg == keyword), None)


# public check -> (position, name) of its message argument (attention_lab/checking.py)
PUBLIC_CHECKS = {"check": (1, "message"), "check_close": (2, "message"), "AssertionError": (0, "")}


def public_messages(source: str) -> Iterator[str]:
    """The messages of the public checks in a test cell's visible ``source``."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.Assert):
            yield from _message_parts(node.msg)
        elif isinstance(node, ast.Call) and _called(node) in PUBLIC_CHECKS:
            yield from _message_parts(_argument(node, *PUBLIC_CHECKS[_called(node)]))


def visible_part(source: str) -> str:
    """A test cell's source outside its hidden tests: what a student reads and runs."""
    return "".join(line for line, place in region_lines(source, HIDDEN_TESTS) if place == "outside")


def notebook_texts(assignment: str, notebook: nbformat.NotebookNode) -> Iterator[Text]:
    """The public checks' messages of the graded test cells of ``notebook``."""
    for cell in notebook.cells:
        if is_test_cell(cell):
            grade_id = cell.metadata["nbgrader"].get("grade_id", "")
            for message in public_messages(visible_part(cell.source)):
                yield Text(f"{assignment}/{grade_id}", message)


def check_modules(root: Path) -> list[Path]:
    """The hidden check modules of ``root``, in order."""
    return sorted((root / "autograder" / "checks").rglob("*.py"))


def course_texts(root: Path, notebooks: Iterable[Path]) -> Iterator[Text]:
    """Every text of the course that the rule reads: ``root``'s check modules, then the public
    checks of ``notebooks`` (its solution notebooks)."""
    for path in check_modules(root):
        yield from module_texts(path.read_text(), str(path.relative_to(root)))
    for path in notebooks:
        yield from notebook_texts(path.parent.name, nbformat.read(path, as_version=4))


def _place(where: str) -> str:
    """The file (or public test cell) a text's place names, without the line."""
    return where.split(":")[0]


def cause_problems(
    texts: Iterable[Text],
    deliberate: Mapping[tuple[str, str], str] = DELIBERATE,
) -> list[str]:
    """The texts that name a cause, but those ``deliberate`` lists by (place without its line,
    start of the text); and the entries of that list that no longer match."""
    problems, used = [], set()
    for text in texts:
        words = cause_words(text.text)
        if not words:
            continue
        place = _place(text.where)
        listed = next(
            (key for key in deliberate if key[0] == place and text.text.startswith(key[1])),
            None,
        )
        if listed is not None:
            used.add(listed)
        else:
            problems.append(text.problem(words))
    problems += [
        f"{place}: listed in DELIBERATE ({start!r}...) but no text there names a cause any "
        "more: remove it from the list"
        for place, start in deliberate
        if (place, start) not in used
    ]
    return problems


# The other side of the rule: a catalogued mistake is named only where an experiment on the answer
# confirmed it. Statically, that is checked as far as it can be: a mistake given to diagnose's
# mapping is confirmed by diagnose; one given to fail must sit under a condition (an if, a
# conditional expression, a loop's test or an except clause: the outcome of an experiment), and
# never in diagnose's ``otherwise``, which is printed whatever the answer returned. Whether the
# condition is a fitting experiment is for the mutation corpus to show (tests/test_mutants.py:
# no mutant is told of a mistake it does not make); no static reading can tell.
GUARDS = (ast.If, ast.IfExp, ast.While, ast.ExceptHandler, ast.match_case)


def mistake_names(sources: Iterable[str]) -> set[str]:
    """The module-level names that hold catalogued mistakes in ``sources``: each ``NAME =
    catalogue(...)``, and each alias ``ALIAS = NAME["key"]``."""
    trees = [ast.parse(source) for source in sources]
    catalogues = {
        target.id
        for tree in trees
        for node in tree.body
        if isinstance(node, ast.Assign)
        and isinstance(node.value, ast.Call)
        and _called(node.value) == "catalogue"
        for target in node.targets
        if isinstance(target, ast.Name)
    }
    aliases = {
        target.id
        for tree in trees
        for node in tree.body
        if isinstance(node, ast.Assign)
        and isinstance(node.value, ast.Subscript)
        and isinstance(node.value.value, ast.Name)
        and node.value.value.id in catalogues
        for target in node.targets
        if isinstance(target, ast.Name)
    }
    return catalogues | aliases


def _names_a_mistake(node: ast.AST, names: set[str]) -> bool:
    """True when ``node`` refers to a catalogued mistake: ``NAME["key"]`` or an alias."""
    return any(
        isinstance(inner, ast.Name) and inner.id in names and isinstance(inner.ctx, ast.Load)
        for inner in ast.walk(node)
    )


def unguarded_mistakes(source: str, where: str, names: set[str]) -> list[str]:
    """The places of ``source`` where a catalogued mistake (one of ``names``) is printed without
    a confirmer: in an unconditional ``fail``, or in diagnose's ``otherwise``."""
    tree = ast.parse(source)
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}

    def guarded(node: ast.AST) -> bool:
        while node in parents and not isinstance(node, ast.FunctionDef | ast.Module):
            node = parents[node]
            if isinstance(node, GUARDS):
                return True
        return False

    problems = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        if _called(node) == "fail" and node.args and _names_a_mistake(node.args[0], names):
            if not guarded(node):
                problems.append(
                    f"{where}:{node.lineno}: fail() names a catalogued mistake unconditionally: "
                    "name it only where diagnose or an experiment on the answer confirms it"
                )
        elif _called(node) == "diagnose":
            otherwise = _argument(node, 3, "otherwise")
            if otherwise is not None and _names_a_mistake(otherwise, names):
                problems.append(
                    f"{where}:{node.lineno}: diagnose's otherwise names a catalogued mistake, "
                    "printed whatever the answer returned: give the mistake its output in the "
                    "mapping instead"
                )
    return problems


def course_unguarded_mistakes(root: Path) -> list[str]:
    """:func:`unguarded_mistakes` over every check module of ``root``."""
    paths = check_modules(root)
    sources = {path: path.read_text() for path in paths}
    names = mistake_names(sources.values())
    return [
        problem
        for path, source in sources.items()
        for problem in unguarded_mistakes(source, str(path.relative_to(root)), names)
    ]
