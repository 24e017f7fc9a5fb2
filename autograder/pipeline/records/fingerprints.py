"""Fingerprints of a submission's answer code that padding does not dilute: the similarity
check's unit of comparison (autograder/pipeline/records/similarity.py compares them).

Each answer cell is parsed by Python's ``ast`` and reduced to the code that can run and matters:

- dropped: ``pass``, docstrings and every expression statement that calls nothing (a bare
  constant, name or arithmetic), statements after ``return``/``raise``/``continue``/``break`` in
  their block, the branches of ``if``/``while`` on a constant that never run (``if True:``'s
  body is kept in place of the ``if``);
- then dropped across all the submission's answer cells together: definitions (functions,
  classes, imports, assignments to plain names) of names that nothing left reads, repeated
  until none is left, except the names the released notebook needs (those its answer cells
  define, which the test cells call, and those its other cells read).  Methods in class bodies
  are kept: Python calls some of them by no name (``forward``).

What is left is printed again (the code the instructor's report shows) and read as a stream of
tokens in pre-order, one a node: its type, with its operator, an attribute or keyword name, a
constant, or a name written canonically.  Names the answer binds (locals, arguments, functions,
classes) become placeholders numbered in order of first appearance, afresh in each top-level
statement and method; attributes the answer assigns (``self.w_q``) or that share a name of its
own are one placeholder; names it only reads (``torch``, ``len``, a given cell's constant) and
attributes it only reads (``.softmax``, ``.transpose``) keep their names, which carry meaning; an
imported name is written as its module path (``F`` -> ``torch.nn.functional``); an f-string is
one token (a message: its text and the names in it count for nothing).  The top-level
definitions of a cell and the methods of a class come after the other statements, in a canonical
order (by their tokens), so reordering definitions changes nothing.

The stream is cut into k-grams of ``K`` tokens and winnowed (the smallest hash in each window of
``WINDOW`` consecutive k-grams, the rightmost on a tie): Dolos's tree-based winnowing, after
MOSS's.  Hashes are BLAKE2b, the same in every process, so a submission's fingerprints can be
kept and reused.

A cell that Python cannot parse (IPython's magics and ``!`` shell escapes) is parsed again with
those lines read as ``pass``: a cheap line rule, not IPython's input transformer, which is slow on
long cells.  If it still does not parse, its text is read as regex tokens (keywords, punctuation,
numbers and attribute names kept, other names and strings alike).
"""

from __future__ import annotations

import ast
import hashlib
import keyword
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field

K = 12  # tokens in a k-gram: about a line of code
WINDOW = 4  # k-grams in a winnowing window: every match of K + WINDOW - 1 tokens is seen
VERSION = "ast-winnow-1"  # changes whenever the fingerprints would: kept fingerprints are redone

Token = tuple[str, int]  # (the token, the line of the shown code it comes from, 1-based)

# An IPython line: a magic (%, %%), a shell escape (!), one assigned (x = !ls), help (x? ?x).
_IPYTHON_LINE = re.compile(r"\s*(?:[!%?]|[\w.]+\?{1,2}\s*$|[\w.,\s*]+=\s*[!%])")
_TEXT_TOKEN = re.compile(r"[^\W\d]\w*|\d[\w.]*|\"[^\"\n]*\"?|'[^'\n]*'?|\S")
_TERMINAL = (ast.Return, ast.Raise, ast.Continue, ast.Break)
_EFFECTS = (ast.Call, ast.Await, ast.Yield, ast.YieldFrom, ast.NamedExpr)
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def without_ipython(source: str) -> str:
    """``source`` with each line of IPython syntax read as ``pass`` (lines kept where they are)."""
    return "\n".join(
        line[: len(line) - len(line.lstrip())] + "pass" if _IPYTHON_LINE.match(line) else line
        for line in source.split("\n")
    )


def parse(source: str) -> tuple[ast.Module | None, str]:
    """The cell's tree (None when it is not Python, IPython lines aside) and the text parsed."""
    for text in (source, None):
        if text is None:
            text = without_ipython(source)
            if text == source:
                break
        try:
            return ast.parse(text), text
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
    return None, source


# ------------------------------------------------------------------------------------------
# What cannot run, or does nothing


def _truth(test: ast.expr) -> bool | None:
    """The test's truth when it is a constant (or ``not`` one), else None."""
    if isinstance(test, ast.Constant):
        return bool(test.value)
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = _truth(test.operand)
        return None if inner is None else not inner
    return None


def _inert(expression: ast.expr) -> bool:
    """Whether an expression statement can do nothing but show a value: it calls nothing."""
    return not any(isinstance(node, _EFFECTS) for node in ast.walk(expression))


def reachable(body: list[ast.stmt]) -> list[ast.stmt]:
    """The statements of ``body`` that can run and do something, their own bodies reduced too."""
    kept: list[ast.stmt] = []
    for statement in body:
        if isinstance(statement, ast.Pass):
            continue
        if isinstance(statement, ast.Expr) and _inert(statement.value):
            continue
        if isinstance(statement, ast.If | ast.While):
            truth = _truth(statement.test)
            if truth is False:
                kept += reachable(statement.orelse)
                if kept and isinstance(kept[-1], _TERMINAL):
                    break
                continue
            if truth is True and isinstance(statement, ast.If):
                kept += reachable(statement.body)
                if kept and isinstance(kept[-1], _TERMINAL):
                    break
                continue
        _reduce_blocks(statement, reachable)
        kept.append(statement)
        if isinstance(statement, _TERMINAL):
            break
    return kept


def _reduce_blocks(node: ast.AST, reduce: object) -> None:
    """Apply ``reduce`` to each block (list of statements) directly inside ``node``, keeping the
    tree valid Python: a required block left empty holds ``pass``."""
    for name, value in ast.iter_fields(node):
        if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
            setattr(node, name, reduce(value))  # type: ignore[operator]
        elif isinstance(value, list):
            for item in value:
                if isinstance(item, ast.excepthandler | ast.match_case):
                    _reduce_blocks(item, reduce)
    if hasattr(node, "body") and isinstance(node.body, list) and not node.body:
        node.body = [ast.Pass()]
    if isinstance(node, ast.Try | ast.TryStar) and not node.handlers and not node.finalbody:
        node.finalbody = [ast.Pass()]


# ------------------------------------------------------------------------------------------
# Definitions nothing reads


def _target_names(target: ast.expr) -> set[str] | None:
    """The names a plain assignment target binds, or None when it assigns anything else."""
    if isinstance(target, ast.Name):
        return {target.id}
    if isinstance(target, ast.Starred):
        return _target_names(target.value)
    if isinstance(target, ast.Tuple | ast.List):
        return _all_target_names(target.elts)
    return None


def _all_target_names(targets: list[ast.expr]) -> set[str] | None:
    """The names all of ``targets`` bind, or None when one assigns anything else."""
    names: set[str] = set()
    for target in targets:
        inner = _target_names(target)
        if inner is None:
            return None
        names |= inner
    return names


def _binds(statement: ast.stmt) -> set[str] | None:
    """The names a definition binds, or None when ``statement`` is not one."""
    if isinstance(statement, _DEFS):
        return {statement.name}
    if isinstance(statement, ast.Import | ast.ImportFrom):
        names = {(a.asname or a.name).split(".")[0] for a in statement.names}
        return None if "*" in names else names
    if isinstance(statement, ast.Assign):
        return _all_target_names(statement.targets)
    if isinstance(statement, ast.AnnAssign | ast.AugAssign):
        return _target_names(statement.target)
    return None


def _parts(node: ast.AST) -> tuple[list[ast.AST], list[list[ast.stmt]]]:
    """The expressions (and other non-statement parts) of a statement, and its blocks."""
    parts: list[ast.AST] = []
    blocks: list[list[ast.stmt]] = []
    for _, value in ast.iter_fields(node):
        if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
            blocks.append(value)
        elif isinstance(value, list):
            for item in value:
                if isinstance(item, ast.excepthandler | ast.match_case):
                    inner_parts, inner_blocks = _parts(item)
                    parts += inner_parts
                    blocks += inner_blocks
                elif isinstance(item, ast.AST):
                    parts.append(item)
        elif isinstance(value, ast.AST):
            parts.append(value)
    return parts, blocks


def _reads(parts: Iterable[ast.AST]) -> Counter[str]:
    """How often each name is read in ``parts``."""
    return Counter(
        node.id
        for part in parts
        for node in ast.walk(part)
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Store)
    )


@dataclass(eq=False)
class _Definition:
    node: ast.stmt
    binds: set[str]
    parent: _Definition | None
    reads: Counter[str] = field(default_factory=Counter)  # in it, not in the definitions inside
    inside: Counter[str] = field(default_factory=Counter)  # in it and the definitions left inside
    inner: list[_Definition] = field(default_factory=list)
    removed: bool = False
    queued: bool = True  # on the work list

    def subtree(self) -> Iterator[_Definition]:
        stack = [self]
        while stack:
            definition = stack.pop()
            if not definition.removed:
                yield definition
                stack += definition.inner


def drop_unused(trees: Iterable[ast.Module], keep: frozenset[str]) -> None:
    """Remove from ``trees`` (one submission's cells) the definitions of names that nothing
    else reads, over and over, but for the names in ``keep``.  Names are told apart by spelling
    alone (a local ``total`` read in one function keeps every ``total`` alive): simple, and
    never drops code that runs."""
    trees = list(trees)
    total: Counter[str] = Counter()
    by_name: dict[str, list[_Definition]] = {}
    everything: list[_Definition] = []

    def scan(body: list[ast.stmt], owner: _Definition | None, in_class: bool) -> None:
        for statement in body:
            binds = None if in_class else _binds(statement)
            here = owner
            if binds is not None:
                here = _Definition(statement, binds, owner)
                if owner is not None:
                    owner.inner.append(here)
                everything.append(here)
                for name in binds:
                    by_name.setdefault(name, []).append(here)
            parts, blocks = _parts(statement)
            reads = _reads(parts)
            total.update(reads)
            if here is not None:
                here.reads.update(reads)
                outer: _Definition | None = here
                while outer is not None:
                    outer.inside.update(reads)
                    outer = outer.parent
            for block in blocks:
                scan(block, here, isinstance(statement, ast.ClassDef))

    for tree in trees:
        scan(tree.body, None, False)

    def dead(definition: _Definition) -> bool:
        if definition.removed or definition.binds & keep:
            return False
        return all(total[n] - definition.inside[n] <= 0 for n in definition.binds)

    work = list(everything)
    removed: set[int] = set()
    while work:
        definition = work.pop()
        definition.queued = False
        if not dead(definition):
            continue
        for part in list(definition.subtree()):
            part.removed = True
            removed.add(id(part.node))
            total.subtract(part.reads)
            outer = definition.parent
            while outer is not None:
                outer.inside.subtract(part.reads)
                outer = outer.parent
            for name in part.reads:
                for other in by_name.get(name, ()):
                    if not other.removed and not other.queued:
                        other.queued = True
                        work.append(other)
    if removed:
        for tree in trees:
            tree.body = _without(tree.body, removed)
            for node in ast.walk(tree):
                if isinstance(node, ast.stmt | ast.excepthandler | ast.match_case):
                    _reduce_blocks(node, lambda block: _without(block, removed))


def _without(block: list[ast.stmt], removed: set[int]) -> list[ast.stmt]:
    return [statement for statement in block if id(statement) not in removed]


# ------------------------------------------------------------------------------------------
# Tokens


@dataclass(frozen=True)
class _Names:
    """How a cell's names are written: what it binds, the attributes it assigns, its imports."""

    own: frozenset[str]
    attributes: frozenset[str]
    imported: Mapping[str, str]

    @classmethod
    def of(cls, tree: ast.Module) -> _Names:
        own, attributes, imported = set(), set(), {}
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
                own.add(node.id)
            elif isinstance(node, _DEFS):
                own.add(node.name)
            elif isinstance(node, ast.arg):
                own.add(node.arg)
            elif isinstance(node, ast.ExceptHandler | ast.MatchAs | ast.MatchStar) and node.name:
                own.add(node.name)
            elif isinstance(node, ast.MatchMapping) and node.rest:
                own.add(node.rest)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                attributes.add(node.attr)
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    bound = alias.asname or alias.name.split(".")[0]
                    imported[bound] = alias.name if alias.asname else bound
            elif isinstance(node, ast.ImportFrom):
                module = "." * node.level + (node.module or "")
                for alias in node.names:
                    imported[alias.asname or alias.name] = f"{module}.{alias.name}"
        return cls(frozenset(own - imported.keys()), frozenset(attributes), imported)


_SKIPPED = (ast.expr_context, ast.operator, ast.boolop, ast.unaryop, ast.cmpop, ast.alias)


def _constant(value: object) -> str:
    if isinstance(value, str | bytes):
        return repr(value) if len(value) <= 20 else type(value).__name__
    return repr(value)


def _label(node: ast.AST, names: _Names, placeholders: dict[str, str]) -> str | None:
    """The token of one node, or None for a node that has none of its own."""

    def own(name: str) -> str:
        return placeholders.setdefault(name, f"v{len(placeholders)}")

    def name_of(name: str) -> str:
        if name in names.imported and name not in names.own:
            return names.imported[name]
        return own(name) if name in names.own else name

    kind = type(node).__name__
    if isinstance(node, _SKIPPED + (ast.Pass, ast.arguments)):
        return None
    if isinstance(node, ast.Name):
        return name_of(node.id)
    if isinstance(node, _DEFS):
        return f"{kind} {own(node.name)}"
    if isinstance(node, ast.arg):
        return f"arg {own(node.arg)}"
    if isinstance(node, ast.Attribute):
        mine = node.attr in names.attributes or node.attr in names.own
        return "." + ("*" if mine else node.attr)
    if isinstance(node, ast.keyword):
        return "kw " + ("**" if node.arg is None else "*" if node.arg in names.own else node.arg)
    if isinstance(node, ast.Constant):
        return "const " + _constant(node.value)
    if isinstance(node, ast.BinOp | ast.AugAssign):
        return f"{kind} {type(node.op).__name__}"
    if isinstance(node, ast.UnaryOp | ast.BoolOp):
        return f"{kind} {type(node.op).__name__}"
    if isinstance(node, ast.Compare):
        return " ".join([kind, *(type(op).__name__ for op in node.ops)])
    if isinstance(node, ast.Global | ast.Nonlocal):
        return " ".join([kind, *(own(n) for n in node.names)])
    if isinstance(node, ast.ExceptHandler | ast.MatchAs | ast.MatchStar):
        return f"{kind} {own(node.name)}" if node.name else kind
    return kind


def _walk_tokens(
    roots: list[ast.AST], names: _Names, placeholders: dict[str, str], line: int
) -> list[Token]:
    """The pre-order tokens of ``roots`` (iterative: no recursion limit), each block closed by
    an ``end`` token; imports have none."""
    tokens: list[Token] = []
    stack: list[tuple[ast.AST | None, int]] = [(root, line) for root in reversed(roots)]
    while stack:
        node, line = stack.pop()
        if node is None:
            tokens.append(("end", line))
            continue
        if isinstance(node, ast.Import | ast.ImportFrom):
            continue
        line = getattr(node, "lineno", line)
        label = _label(node, names, placeholders)
        if label is not None:
            tokens.append((label, line))
        if isinstance(node, ast.JoinedStr):  # a message: its text and names count for nothing
            continue
        children: list[tuple[ast.AST | None, int]] = []
        for _, value in ast.iter_fields(node):
            if isinstance(value, list):
                children += [(item, line) for item in value if isinstance(item, ast.AST)]
                if value and isinstance(value[0], ast.stmt):
                    children.append((None, getattr(value[-1], "end_lineno", line) or line))
            elif isinstance(value, ast.AST):
                children.append((value, line))
        stack += reversed(children)
    return tokens


def _units(body: list[ast.stmt], names: _Names) -> list[Token]:
    """The tokens of a module's or a class's body: each statement numbered afresh, the other
    statements in order, then the definitions in canonical order."""
    others: list[Token] = []
    definitions: list[list[Token]] = []
    for statement in body:
        if isinstance(statement, ast.Import | ast.ImportFrom):
            continue
        placeholders: dict[str, str] = {}
        if isinstance(statement, ast.ClassDef):
            head = [*statement.decorator_list, *statement.bases, *statement.keywords]
            tokens = [(_label(statement, names, placeholders) or "", statement.lineno)]
            tokens += _walk_tokens(head, names, placeholders, statement.lineno)
            tokens += _units(statement.body, names)
            tokens.append(("end", statement.end_lineno or statement.lineno))
            definitions.append(tokens)
        elif isinstance(statement, _DEFS):
            definitions.append(_walk_tokens([statement], names, placeholders, statement.lineno))
        else:
            others += _walk_tokens([statement], names, placeholders, statement.lineno)
    definitions.sort(key=lambda tokens: [label for label, _ in tokens])
    return others + [token for tokens in definitions for token in tokens]


def tree_tokens(tree: ast.Module) -> list[Token]:
    """The cell's token stream, lines as in ``tree``."""
    return _units(tree.body, _Names.of(tree))


def text_tokens(text: str) -> list[Token]:
    """Tokens of text that is not Python: keywords, punctuation, numbers and names after a dot
    as written, every other name ``id``, every string ``str``."""
    tokens: list[Token] = []
    for number, line in enumerate(text.split("\n"), 1):
        previous = ""
        for found in _TEXT_TOKEN.finditer(line):
            word = found.group()
            if word[0] in "\"'":
                token = "str"
            elif (word[0].isalpha() or word[0] == "_") and not keyword.iskeyword(word):
                token = word if previous == "." else "id"
            else:
                token = word
            tokens.append((token, number))
            previous = word
    return tokens


# ------------------------------------------------------------------------------------------
# Fingerprints


def _digest(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=8).digest()


def kgram_hashes(tokens: list[Token]) -> list[int]:
    """The hash of every k-gram of ``tokens``, in order."""
    digests: dict[str, bytes] = {}
    hashed = [digests.get(t) or digests.setdefault(t, _digest(t.encode())) for t, _ in tokens]
    return [
        int.from_bytes(_digest(b"".join(hashed[i : i + K])), "big") >> 1
        for i in range(len(tokens) - K + 1)
    ]


def winnowed(tokens: list[Token]) -> dict[int, list[int]]:
    """The winnowed fingerprints of ``tokens``: hash -> the lines its k-grams cover."""
    hashes = kgram_hashes(tokens)
    chosen: set[int] = set()
    for start in range(max(len(hashes) - WINDOW + 1, 1 if hashes else 0)):
        window = hashes[start : start + WINDOW]
        low = min(window)
        chosen.add(start + max(i for i, h in enumerate(window) if h == low))
    found: dict[int, set[int]] = {}
    for position in chosen:
        found.setdefault(hashes[position], set()).update(
            line for _, line in tokens[position : position + K]
        )
    return {h: sorted(lines) for h, lines in found.items()}


@dataclass(frozen=True)
class Reduced:
    """One answer cell as compared: the code shown (reachable code, printed again; the text when
    it is not Python) and its token stream, lines as in ``code``."""

    code: str
    tokens: list[Token]


def reduce_answers(answers: Mapping[str, str], keep: frozenset[str]) -> dict[str, Reduced]:
    """grade_id -> each answer cell of one submission, reduced (see the module's docstring)."""
    parsed = {grade_id: parse(source) for grade_id, source in answers.items()}
    trees = [tree for tree, _ in parsed.values() if tree is not None]
    for tree in trees:
        tree.body = reachable(tree.body)
    drop_unused(trees, keep)
    reduced = {}
    for grade_id, (tree, text) in parsed.items():
        if tree is None:
            reduced[grade_id] = Reduced(text, text_tokens(text))
            continue
        try:
            code = ast.unparse(tree)
            reduced[grade_id] = Reduced(code, tree_tokens(ast.parse(code)))
        except (RecursionError, SyntaxError, ValueError):  # too deep to print: lines as parsed
            reduced[grade_id] = Reduced(text, tree_tokens(tree))
    return reduced


def names_read(source: str) -> set[str]:
    """The names a cell of the released notebook reads (every word, if it is not Python)."""
    tree, text = parse(source)
    if tree is None:
        return set(re.findall(r"[^\W\d]\w*", text))
    return set(_reads([tree]))


def names_bound(source: str) -> set[str]:
    """The names a cell binds at its top level (a released answer cell: the graded names)."""
    tree, _ = parse(source)
    found: set[str] = set()
    for statement in tree.body if tree is not None else ():
        found |= _binds(statement) or set()
    return found
