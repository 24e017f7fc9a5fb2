"""Calling the reference earns nothing, on every cell that uses the exercise's answer.

For each reference ban of each assignment, the solution's definitions are graded in-process three
ways: as they are (full marks), without the exercise's answer (the cells that then fail are the
cells that use it), and with the answer's code also using the banned reference while computing the
same values (a cheat).  The cheat must lose exactly the cells that use the answer, each with the
ban's diagnosis.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path
from typing import Any

import pytest
import torch

from attention_lab.reference.a03_transformer_block import WordTokenizer
from autograder.authoring.check_modules import check_modules
from autograder.authoring.reference_bans import (
    TORCH_CAUSAL_MASK,
    TORCH_MULTI_HEAD,
    TORCH_SCALED_DOT_PRODUCT,
    ReferenceBan,
    bans_of,
)
from autograder.authoring.registry import checks_for
from autograder.examples import solution_answers
from autograder.judging.source_bans import banned_use
from autograder.suite.submission import DEMO_TAG, Submission, grade_submission, load_submission
from tests.tiers import by_assignment

ROOT = Path(__file__).resolve().parents[1]
BANNED_PHRASE = "no credit for calling the reference"
# Names the notebooks bind to objects built from an exercise's answer: a trained model uses it.
BUILT_FROM = {("05_sentiment", "SentimentModel"): "model", ("06_char_lm", "CharLM"): "model"}


def reference_expression(target: Any) -> tuple[str, str]:
    """(module to import, dotted expression) that names the banned ``target`` in code."""
    if isinstance(target, torch._ops.OpOverloadPacket):  # torch.ops.<namespace>.<op>
        namespace, _, op = target._qualified_op_name.partition("::")
        return "torch", f"torch.ops.{namespace}.{op}"
    qualname = getattr(target, "__qualname__", None) or target.__name__
    # A C binding's qualname names a private class (torch._VariableFunctionsClass.layer_norm).
    for name in dict.fromkeys([qualname, target.__name__]):
        for module in ("torch.nn.functional", "torch.nn", "torch", target.__module__):
            value: Any = importlib.import_module(module)
            for part in name.split("."):
                value = getattr(value, part, None)
            if value is target:
                return module, f"{module}.{name}"
    raise AssertionError(f"no importable name for {target!r}")


def using_the_reference(source: str, name: str, target: Any) -> str:
    """The answer cell ``source`` with ``name`` (its first method, for a class) also looking up
    ``target`` at run time; the values it computes are unchanged."""
    tree = ast.parse(source)
    found = [
        node
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.ClassDef) and node.name == name
    ]
    assert len(found) == 1, f"expected one top-level definition of {name}"
    function = found[0]
    if isinstance(function, ast.ClassDef):
        function = next(n for n in function.body if isinstance(n, ast.FunctionDef))
    body = function.body
    has_docstring = ast.get_docstring(function, clean=False) is not None
    first = body[1] if has_docstring and len(body) > 1 else body[0]
    module, expression = reference_expression(target)
    indent = " " * first.col_offset
    lines = source.splitlines(keepends=True)
    cheat = f"{indent}import {module}\n{indent}_reference = {expression}\n"
    return "".join(lines[: first.lineno - 1]) + cheat + "".join(lines[first.lineno - 1 :])


def answer_defining(assignment: str, name: str) -> str:
    """The solution's answer cell that defines ``name`` at top level."""
    for source in solution_answers(assignment).values():
        tree = ast.parse(source)
        if any(
            isinstance(node, ast.FunctionDef | ast.ClassDef) and node.name == name
            for node in tree.body
        ):
            return source
    raise AssertionError(f"no answer cell of {assignment} defines {name}")


def failed_cells(
    assignment: str, namespace: dict[str, Any], charge_again: bool = False
) -> dict[str, str]:
    """grade_id -> diagnosis of every graded cell that loses points with ``namespace`` (every
    cell that fails, with ``charge_again``: none is waived as failing for another's answer)."""
    results = grade_submission(Submission(assignment, namespace), charge_again)
    return {grade_id: r.first_failure for grade_id, r in results.items() if not r.full_marks}


def cells_using(assignment: str, namespace: dict[str, Any], reference_ban: ReferenceBan) -> set:
    """The graded cells that fail when the answer (or what is built from it) is missing: those a
    missing answer costs once charged again too (authoring/used_answers.py), since a ban costs
    every cell that uses the answer."""
    used = {reference_ban.name}
    if (assignment, reference_ban.name) in BUILT_FROM:
        used.add(BUILT_FROM[(assignment, reference_ban.name)])
    cells = set()
    for name in used:
        without = {k: v for k, v in namespace.items() if k != name}
        cells |= set(failed_cells(assignment, without, charge_again=True))
    return cells


@pytest.mark.slow
@pytest.mark.parametrize("assignment", by_assignment(check_modules()))
def test_an_answer_using_the_reference_loses_every_cell_that_uses_it(assignment: str):
    checks_for(assignment)
    bans = bans_of(assignment)
    assert bans, f"{assignment} declares no reference ban"
    path = ROOT / "solutions" / assignment / f"{assignment}.ipynb"
    solution = load_submission(path, skip_tags=(DEMO_TAG,)).namespace
    assert not failed_cells(assignment, solution)
    problems = []
    for reference_ban in bans:
        uses = cells_using(assignment, solution, reference_ban)
        assert uses, f"no cell of {assignment} uses {reference_ban.name}"
        label, target = next(iter(reference_ban.banned.items()))
        cheat = using_the_reference(
            answer_defining(assignment, reference_ban.name), reference_ban.name, target
        )
        namespace = dict(solution)
        exec(compile(cheat, f"<cheating {reference_ban.name}>", "exec"), namespace)
        failed = failed_cells(assignment, namespace)
        if set(failed) != uses:
            problems.append(
                f"{reference_ban.name} using {label}: lost {sorted(failed)}, "
                f"but the cells using it are {sorted(uses)}"
            )
        problems += [
            f"{reference_ban.name}, {grade_id}: {diagnosis}"
            for grade_id, diagnosis in failed.items()
            if BANNED_PHRASE not in diagnosis
        ]
    assert not problems, "\n".join(problems)


def test_the_cheat_uses_the_reference_and_nothing_else():
    import torch.nn.functional as F

    source = 'def attention(q):\n    """Doc."""\n    return q\n'
    cheat = using_the_reference(source, "attention", F.scaled_dot_product_attention)
    assert "_reference = torch.nn.functional.scaled_dot_product_attention" in cheat
    namespace: dict[str, Any] = {}
    exec(cheat, namespace)
    assert namespace["attention"](3) == 3


def _clean_through_the_reference(text: str) -> list[str]:
    return WordTokenizer.clean(text)


def _vocabulary_of_my_own(texts: list[str]) -> list[str]:
    return sorted({word for text in texts for word in _clean_through_the_reference(text)})


HELPER_CELLS = (
    "from attention_lab.reference.a03_transformer_block import WordTokenizer\n\n"
    "def clean(text):\n    return WordTokenizer.clean(text)\n",
    "def build_vocab(texts):\n    return sorted({w for t in texts for w in clean(t)})\n",
)


def test_a_ban_reached_through_a_helper_names_the_helper():
    """Only `clean` calls the reference: the vocabulary cell's ban says so, in-process and from
    the notebook's source, instead of blaming the vocabulary code that merely uses clean."""
    from autograder.authoring.reference_bans import forbid_references
    from autograder.authoring.registry import CheckFailed
    from autograder.checks.a03_transformer_block.shared import TOKENIZER_BANNED
    from autograder.judging.source_bans import banned_use

    helper = _clean_through_the_reference.__name__
    with pytest.raises(CheckFailed) as caught:
        forbid_references(_vocabulary_of_my_own, TOKENIZER_BANNED, "`build_vocab`")
    assert caught.value.diagnosis.startswith(f"`{helper}`, which `build_vocab` uses, calls "), (
        caught.value.diagnosis
    )
    found = banned_use(HELPER_CELLS, "build_vocab", TOKENIZER_BANNED)
    assert found is not None
    assert found.seen.startswith("`clean`, which `build_vocab` uses, calls "), found.seen


# Every exercise that writes attention bans torch's attention by each entry point a notebook can
# reach: the public one, its private kernels and their aten operators (issue 39).
ATTENTION_EXERCISES = {
    ("01_attention", "attention"): (TORCH_SCALED_DOT_PRODUCT, TORCH_MULTI_HEAD),
    ("01_attention", "attention_numpy"): (TORCH_SCALED_DOT_PRODUCT, TORCH_MULTI_HEAD),
    ("01_attention", "causal_mask"): (TORCH_CAUSAL_MASK,),
    ("02_multi_head", "MultiHeadAttention"): (TORCH_MULTI_HEAD,),
    ("07_attention_at_scale", "chunked_attention"): (TORCH_SCALED_DOT_PRODUCT, TORCH_MULTI_HEAD),
}


def test_each_attention_exercise_bans_torchs_private_and_aten_entry_points():
    assert sorted(TORCH_SCALED_DOT_PRODUCT) == [
        "F.scaled_dot_product_attention",
        "torch.ops.aten._fused_sdp_choice",
        "torch.ops.aten._masked_softmax",
        "torch.ops.aten._safe_softmax",
        "torch.ops.aten._scaled_dot_product_attention_math",
        "torch.ops.aten._scaled_dot_product_cudnn_attention",
        "torch.ops.aten._scaled_dot_product_efficient_attention",
        "torch.ops.aten._scaled_dot_product_flash_attention",
        "torch.ops.aten._scaled_dot_product_flash_attention_for_cpu",
        "torch.ops.aten.scaled_dot_product_attention",
    ]
    assert sorted(TORCH_MULTI_HEAD) == [
        "F.multi_head_attention_forward",
        "nn.MultiheadAttention",
        "torch._native_multi_head_attention",
        "torch.ops.aten._native_multi_head_attention",
        "torch.ops.aten._transformer_encoder_layer_fwd",
    ]
    for (assignment, name), groups in ATTENTION_EXERCISES.items():
        checks_for(assignment)
        banned = {label for b in bans_of(assignment) if b.name == name for label in b.banned}
        for group in groups:
            assert set(group) <= banned, (assignment, name, sorted(set(group) - banned))


# Private routes to torch's attention, each as an answer would write it.
PRIVATE_CALLS = {
    "attention": [
        "torch.ops.aten._scaled_dot_product_attention_math(q, k, v)",
        "torch.ops.aten._scaled_dot_product_flash_attention_for_cpu(q, k, v)",
        "torch._C._nn.scaled_dot_product_attention(q, k, v)",
        "torch.ops.aten._masked_softmax(q @ k.mT, None)",
    ],
    "causal_mask": ["nn.modules.transformer._generate_square_subsequent_mask(q) == 0"],
}


@pytest.mark.parametrize(
    ("name", "call"), [(n, c) for n, calls in PRIVATE_CALLS.items() for c in calls]
)
def test_a_private_entry_point_is_found_in_the_answers_source(name: str, call: str):
    checks_for("01_attention")
    (reference_ban,) = [b for b in bans_of("01_attention") if b.name == name]
    source = (
        f"import torch\nfrom torch import nn\ndef {name}(q, k=None, v=None):\n    return {call}\n"
    )
    found = banned_use([source], name, reference_ban.banned)
    assert found is not None and found.reference is not None, (call, found)
