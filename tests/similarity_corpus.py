"""The corpus that calibrates the similarity threshold (autograder/pipeline/records/similarity.py).

Must be flagged: six copies of each assignment's reference answers: verbatim, with every local
variable and attribute renamed, reformatted by a real formatter at another line width, padded with
``pass`` after every statement, after more than 20,000 characters of code that never runs or is
never used, and with its definitions (functions, methods) in reverse order.
Must not be flagged: the mutation corpus's correct alternatives (tests/mutants), against the
reference or against each other.  Each alternative is a submission that holds only the cells it
writes itself, the others left as the released stub: a mutant keeps the solution's text wherever
it does not patch it, and that text is the reference, not the alternative's own work.

Every submission is built in memory from the released notebook, as a student hands it in.
"""

from __future__ import annotations

import ast
import difflib
import importlib
import io
import pkgutil
import subprocess
import sys
import tempfile
import tokenize
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import nbformat

import tests.mutants
from autograder.cells import answer_cells
from autograder.examples import solution_answers
from autograder.pipeline.records.similarity import REFERENCE, Comparison, compare_class
from tests.mutants import Mutant, mutated_cells

ROOT = Path(__file__).resolve().parents[1]
# A correct alternative that changes at most this many tokens of the reference is the reference
# with an edit, not work of its own: flagging it is right (test_similarity.py asserts it is).
ONE_EDIT_TOKENS = 3


def changed_tokens(mutant: Mutant) -> int:
    """How many tokens of the reference's answer cells ``mutant`` replaces, inserts or deletes."""
    reference = solution_answers(mutant.assignment)
    changed = 0
    for grade_id, source in mutated_cells(mutant).items():
        before, after = _tokens(reference[grade_id]), _tokens(source)
        matcher = difflib.SequenceMatcher(a=before, b=after, autojunk=False)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag != "equal":
                changed += max(i2 - i1, j2 - j1)
    return changed


def _tokens(source: str) -> list[str]:
    """The code's tokens, without layout or comments."""
    skip = {tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.COMMENT}
    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    return [token.string for token in tokens if token.type not in skip]


_CORRECT: list[Mutant] = [
    mutant
    for info in pkgutil.iter_modules(tests.mutants.__path__)
    for mutant in importlib.import_module(f"tests.mutants.{info.name}").CORRECT
]
_CHANGED = [(m, changed_tokens(m)) for m in _CORRECT]
ALTERNATIVES = [m for m, changed in _CHANGED if changed > ONE_EDIT_TOKENS]
ONE_EDIT_COPIES = [m for m, changed in _CHANGED if changed <= ONE_EDIT_TOKENS]
ASSIGNMENTS = sorted({m.assignment for m in ALTERNATIVES})
COPIES = ("verbatim", "renamed", "reformatted", "padded", "dead code", "reordered")
DEAD_CODE_CHARS = 20_000  # at least this much dead code before each copied answer


@cache
def release(assignment: str) -> nbformat.NotebookNode:
    """The released (student) notebook of ``assignment``."""
    return nbformat.read(ROOT / "notebooks" / assignment / f"{assignment}.ipynb", as_version=4)


def submission(assignment: str, answers: Mapping[str, str]) -> dict[str, str]:
    """The answer cells of the released notebook with ``answers`` (grade_id -> source) written
    into it, the others left as the stub."""
    notebook = nbformat.from_dict(release(assignment))
    for cell in notebook.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in answers:
            cell.source = answers[grade_id]
    return answer_cells(notebook)


def renamed(source: str) -> str:
    """``source`` with every local variable and attribute it assigns renamed, layout kept."""
    assigned = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef):
            for inner in ast.walk(node):
                if isinstance(inner, ast.Name) and isinstance(inner.ctx, ast.Store):
                    assigned.add(inner.id)
                elif isinstance(inner, ast.Attribute) and isinstance(inner.ctx, ast.Store):
                    assigned.add(inner.attr)
    names = {name: f"renamed_{number}" for number, name in enumerate(sorted(assigned))}
    tokens = [
        token._replace(string=names.get(token.string, token.string))
        if token.type == tokenize.NAME
        else token
        for token in tokenize.generate_tokens(io.StringIO(source).readline)
    ]
    return tokenize.untokenize(tokens)


def reformatted(sources: Mapping[str, str]) -> dict[str, str]:
    """Each source as ``ruff format`` writes it at a line width of 60 (the solutions use 100)."""
    with tempfile.TemporaryDirectory() as folder:
        paths = {key: Path(folder) / f"{key}.py" for key in sources}
        for key, path in paths.items():
            path.write_text(sources[key])
        subprocess.run(
            [sys.executable, "-m", "ruff", "format", "--no-cache", "--line-length", "60", folder],
            check=True,
            capture_output=True,
            timeout=60,
        )
        return {key: path.read_text() for key, path in paths.items()}


def padded(source: str) -> str:
    """``source`` with a ``pass`` after every statement and before the first of every block."""
    lines = source.split("\n")
    after: dict[int, list[str]] = {}  # line index -> the indents of the passes after it
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.stmt):
            continue
        if lines[node.lineno - 1][: node.col_offset].strip() == "":  # it starts its line
            after.setdefault(node.end_lineno - 1, []).append(" " * node.col_offset)
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and body[0].lineno > node.lineno:
            after.setdefault(body[0].lineno - 2, []).append(" " * body[0].col_offset)
    out = []
    for number, line in enumerate(lines):
        out.append(line)
        out += [f"{indent}pass" for indent in sorted(after.get(number, ()), key=len, reverse=True)]
    return "\n".join(out)


def dead_code() -> str:
    """More than DEAD_CODE_CHARS characters of code that never runs or is never used: a chain of
    functions that only the unused last one calls, unused classes and assignments, and branches
    that never run."""
    parts = []
    for n in range(80):
        parts.append(
            f"def scratch_{n}(values, scale={n}):\n"
            "    total = 0\n"
            "    for index, value in enumerate(values):\n"
            f"        if index % {n % 5 + 2} == 0:\n"
            "            total = total + value * scale\n"
            "        else:\n"
            f"            total = total - value // {n % 7 + 1}\n"
            + (
                f"    return scratch_{n - 1}([total, scale]) if total > {n} else total\n"
                if n
                else "    return total\n"
            )
        )
        if n % 10 == 0:
            parts.append(
                f"class Scratch{n}:\n"
                f"    def __init__(self, size={n}):\n"
                "        self.size = size\n\n"
                "    def grow(self):\n"
                f"        return [self.size * {n}] * {n % 4 + 1}\n"
            )
            parts.append(f"unused_{n} = [{n}, {n + 1}, {n + 2}] * {n % 3 + 1}\n")
            parts.append(
                f"if False:\n    print(scratch_{n}([{n}]))\nwhile 0:\n    unused_{n} += 1\n"
            )
    text = "\n".join(parts)
    assert len(text) > DEAD_CODE_CHARS
    return text


def reordered(source: str) -> str:
    """``source`` with the definitions of its top level, and of each class there, in reverse
    order (each keeps its text; what lies between them stays in place)."""
    lines = source.split("\n")

    def spans(body: list[ast.stmt]) -> list[tuple[int, int]]:
        found = []
        for node in body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                found.append((start - 1, node.end_lineno))
        return found

    tree = ast.parse(source)
    runs = [spans(tree.body)]
    runs += [spans(node.body) for node in tree.body if isinstance(node, ast.ClassDef)]
    replaced: dict[int, tuple[int, list[str]]] = {}  # first line -> (end, new text)
    for found in runs:
        for (start, end), (other_start, other_end) in zip(found, reversed(found), strict=True):
            replaced[start] = (end, lines[other_start:other_end])
    out, number = [], 0
    while number < len(lines):
        if number in replaced:
            end, text = replaced[number]
            out += text
            number = end
        else:
            out.append(lines[number])
            number += 1
    return "\n".join(out)


def copies(assignment: str) -> dict[str, dict[str, str]]:
    """kind -> a submission that copies every reference answer of ``assignment``."""
    answers = solution_answers(assignment)
    return {
        "verbatim": submission(assignment, answers),
        "renamed": submission(assignment, {g: renamed(s) for g, s in answers.items()}),
        "reformatted": submission(assignment, reformatted(answers)),
        "padded": submission(assignment, {g: padded(s) for g, s in answers.items()}),
        "dead code": submission(assignment, {g: dead_code() + s for g, s in answers.items()}),
        "reordered": submission(assignment, {g: reordered(s) for g, s in answers.items()}),
    }


def alternatives(assignment: str) -> dict[str, dict[str, str]]:
    """name -> a submission that holds the cells one correct alternative writes itself."""
    return {
        m.name: submission(assignment, mutated_cells(m))
        for m in ALTERNATIVES
        if m.assignment == assignment
    }


@dataclass(frozen=True)
class Calibration:
    """Per assignment: each copy compared with the reference, and the alternatives compared with
    the reference and with each other."""

    copies: dict[str, Comparison]  # "assignment: kind" -> that copy alone, with the reference
    alternatives: dict[str, Comparison]  # assignment -> its alternatives, as one class

    def copy_scores(self) -> dict[str, float]:
        """ "assignment: kind" -> the copy's score against the reference."""
        scores = {}
        for key, comparison in self.copies.items():
            (pair,) = comparison.best.values()
            assert pair.second == REFERENCE, (key, pair)
            scores[key] = pair.score
        return scores

    def alternative_scores(self) -> dict[str, float]:
        """ "assignment: name" -> the alternative's highest score, against the reference or
        another alternative."""
        return {
            f"{assignment}: {name}": pair.score
            for assignment, comparison in self.alternatives.items()
            for name, pair in comparison.best.items()
        }


def calibration() -> Calibration:
    """The comparisons the threshold is calibrated on, every assignment of the corpus."""
    copied, alternative = {}, {}
    for assignment in ASSIGNMENTS:
        reference = solution_answers(assignment)
        for kind, answers in copies(assignment).items():
            copied[f"{assignment}: {kind}"] = compare_class(
                {kind: answers}, reference, release(assignment)
            )
        alternative[assignment] = compare_class(
            alternatives(assignment), reference, release(assignment)
        )
    return Calibration(copied, alternative)
