"""A student of assignment N has the tools and the reference answers of earlier assignments only,
at home (the release's bundle) and in the sandbox (the staging folder): for every N, no line of
a solution or hidden-test region of N or later is in either, no name that an answer of N or later
defines is defined by the package, and importing a reference of N or later fails there.

The bundles here are assembled from the committed notebooks/ (which tests/test_notebooks.py proves
equal to what nbgrader generates) and the release's own package copy, so no nbgrader run is
needed; tests/test_student_bundle.py builds real bundles and runs their notebooks, and
tests/test_sandbox_mounts.py imports the references inside the sandbox.
"""

from __future__ import annotations

import ast
import json
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from autograder.isolation.staging import build_staging, copy_package
from autograder.pipeline.course.release import ROOT, assignments, leaks, released_with

ASSIGNMENTS = assignments()
REFERENCES = sorted(p.stem for p in (ROOT / "attention_lab" / "reference").glob("a[0-9]*.py"))


def _bundle(assignment: str, folder: Path) -> Path:
    """The bundle of ``assignment`` as the release assembles it, from the committed notebooks."""
    for name in released_with(assignment):
        shutil.copytree(ROOT / "notebooks" / name, folder / "notebooks" / name)
    copy_package(assignment, folder / "attention_lab", ROOT / "attention_lab")
    return folder


def _defined(source: str) -> set[str]:
    """The names a module (or a notebook cell) defines at its top level."""
    names = set()
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return names


def _answer_names(assignment: str) -> set[str]:
    """What the answers of ``assignment`` and later define: the names of their solution cells
    and of their reference modules."""
    later = ASSIGNMENTS[ASSIGNMENTS.index(assignment) :]
    names = set()
    for name in later:
        notebook = nbformat.read(ROOT / "solutions" / name / f"{name}.ipynb", 4)
        for cell in notebook.cells:
            if cell.cell_type == "code" and cell.metadata.get("nbgrader", {}).get("solution"):
                names |= _defined(cell.source)
        module = ROOT / "attention_lab" / "reference" / f"a{name}.py"
        if module.exists():
            names |= {n for n in _defined(module.read_text()) if not n.startswith("_")}
    return names


def test_every_reference_module_answers_one_assignment():
    assert REFERENCES and all(name[1:] in ASSIGNMENTS for name in REFERENCES)


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_bundle_and_staging_of_each_assignment_hold_no_line_of_its_answers(assignment, tmp_path):
    bundle = _bundle(assignment, tmp_path / "bundle")
    staging = build_staging(tmp_path / "site", assignment)
    number = ASSIGNMENTS.index(assignment)
    for package in (bundle / "attention_lab", staging / "attention_lab"):
        shipped = sorted(p.stem for p in (package / "reference").glob("a*.py"))
        assert shipped == [f"a{name}" for name in ASSIGNMENTS[:number] if f"a{name}" in REFERENCES]
    assert leaks(bundle, assignment) == []
    assert leaks(staging, assignment) == []


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_no_name_an_answer_defines_is_defined_in_the_package_of_its_assignment(
    assignment, tmp_path
):
    package = copy_package(assignment, tmp_path / "attention_lab", ROOT / "attention_lab")
    answers = _answer_names(assignment)
    for module in sorted(package.rglob("*.py")):
        found = _defined(module.read_text()) & answers
        assert not found, f"{module.relative_to(tmp_path)} defines answers of {assignment}: {found}"


# Where the answers were importable before the package was split: (module, name, assignment).
OLD_PATHS = [
    ("attention", "scaled_dot_product_attention", "01_attention"),
    ("attention", "causal_mask", "01_attention"),
    ("attention", "MultiHeadAttention", "02_multi_head"),
    ("tokenizer", "WordTokenizer", "03_transformer_block"),
    ("encoder", "sinusoidal_table", "03_transformer_block"),
    ("encoder", "SinusoidalPositionalEncoding", "03_transformer_block"),
    ("encoder", "LayerNorm", "03_transformer_block"),
    ("encoder", "FeedForward", "03_transformer_block"),
    ("encoder", "EncoderBlock", "03_transformer_block"),
    ("encoder", "TransformerEncoder", "04_depth"),
    ("encoder", "SentimentClassifier", "05_sentiment"),
    ("training", "make_optimizer", "05_sentiment"),
    ("training", "train_step", "05_sentiment"),
    ("training", "train_classifier", "05_sentiment"),
    ("data", "make_lm_blocks", "06_char_lm"),
    ("encoder", "CausalLM", "06_char_lm"),
    ("training", "train_language_model", "06_char_lm"),
]
# One process (torch imported once) tries each staging folder in turn, forgetting attention_lab
# in between; the staging folder comes first on sys.path, before the editable checkout.
PROBE = """
import json, sys
results = {}
for staging, attempts in json.loads(sys.argv[1]).items():
    sys.path.insert(0, staging)
    for name in [m for m in sys.modules if m.split(".")[0] == "attention_lab"]:
        del sys.modules[name]
    for module, name in attempts:
        try:
            exec(f"from {module} import {name}" if name else f"import {module}", {})
            outcome = "imported"
        except ImportError as error:
            outcome = f"{type(error).__name__}: {error}"
        results[f"{staging} {module} {name}"] = outcome
    assert sys.modules["attention_lab"].__file__.startswith(staging)
    sys.path.remove(staging)
print(json.dumps(results))
"""


@pytest.mark.slow
def test_an_answer_of_this_or_a_later_assignment_cannot_be_imported_in_its_staging(tmp_path):
    """A pasted ``from attention_lab... import <reference>``, by the old path or the new one, fails
    in the staging for N for every answer of N or later; the earlier references import."""
    attempts = {}
    for assignment in ASSIGNMENTS:
        staging = build_staging(tmp_path / assignment, assignment)
        old = [(f"attention_lab.{module}", name) for module, name, _ in OLD_PATHS]
        new = [(f"attention_lab.reference.{name}", "") for name in REFERENCES]
        attempts[str(staging)] = old + new
    probe = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(attempts)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert probe.returncode == 0, probe.stderr[-2000:]
    results = json.loads(probe.stdout.splitlines()[-1])
    for assignment in ASSIGNMENTS:
        staging = tmp_path / assignment
        for module, name, answers in OLD_PATHS:
            if answers >= assignment:
                outcome = results[f"{staging} attention_lab.{module} {name}"]
                assert outcome.startswith("ImportError: cannot import name") or outcome.startswith(
                    f"ModuleNotFoundError: No module named 'attention_lab.{module}'"
                ), f"{assignment}: attention_lab.{module}.{name} gave {outcome}"
        for name in REFERENCES:
            outcome = results[f"{staging} attention_lab.reference.{name} "]
            if name[1:] < assignment:
                assert outcome == "imported", f"{assignment}: {name} {outcome}"
            else:
                missing = f"ModuleNotFoundError: No module named 'attention_lab.reference.{name}'"
                assert outcome == missing, f"{assignment}: {name} {outcome}"


def test_the_instructors_checkout_keeps_every_reference():
    import attention_lab

    assert Path(attention_lab.__file__).parent == ROOT / "attention_lab"
    for name in REFERENCES:
        __import__(f"attention_lab.reference.{name}")
