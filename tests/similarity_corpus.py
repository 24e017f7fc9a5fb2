"""The corpus that calibrates the similarity threshold (autograder/pipeline/similarity.py).

Must be flagged: three copies of each assignment's reference answers, verbatim, with every local
variable and attribute renamed, and reformatted by a real formatter at another line width.
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
from autograder.pipeline.similarity import REFERENCE, Comparison, compare_class
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
COPIES = ("verbatim", "renamed", "reformatted")


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


def copies(assignment: str) -> dict[str, dict[str, str]]:
    """kind -> a submission that copies every reference answer of ``assignment``."""
    answers = solution_answers(assignment)
    return {
        "verbatim": submission(assignment, answers),
        "renamed": submission(assignment, {g: renamed(s) for g, s in answers.items()}),
        "reformatted": submission(assignment, reformatted(answers)),
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
