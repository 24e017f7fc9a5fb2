"""Hidden checks for 04_depth: a stack of independent layers, and two attention metrics."""

from __future__ import annotations

import contextlib
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

import torch
from torch import Tensor, nn

import attention_lab.reference.a04_depth as reference
from attention_lab.reference.a01_attention import causal_mask
from attention_lab.reference.a03_transformer_block import EncoderBlock
from autograder.authoring.closeness import first_difference, is_close
from autograder.authoring.counterexample import smallest_counterexample
from autograder.authoring.diagnosis import (
    SQUEEZED,
    diagnose,
    size_one_axes,
    squeezed,
    squeezed_mistake,
)
from autograder.authoring.hidden_draws import draw_seed, hidden_generator, random_sizes, under_seed
from autograder.authoring.in_place_writes import inputs_kept, written_in_place_mistake
from autograder.authoring.kernel_objects import identity, observe_call
from autograder.authoring.mistakes import Mistake, catalogue
from autograder.authoring.reference_bans import ban
from autograder.authoring.registry import (
    EDGE_CASES,
    CheckFailed,
    Namespace,
    StopChecks,
    check,
    fail,
)
from autograder.authoring.repairs import repairs
from autograder.authoring.requiring import require
from autograder.authoring.stage_recorders import Recorder, TrainModeWords, judge_train_mode
from autograder.authoring.student_errors import explain

ASSIGNMENT = "04_depth"
squeezed_mistake(ASSIGNMENT)  # diagnose names it in every exercise
written_in_place_mistake(ASSIGNMENT)  # inputs_kept names it in every exercise
# The clauses behind that charge, one per exercise: every check that calls the answer inside
# inputs_kept keeps its exercise's.
STACK_KEEPS_ITS_INPUTS = (
    "`forward` writes nothing into `x` or `mask`: the caller's tensors keep their values."
)
STACK_RETURNS_A_NEW_LIST = (
    "`forward` returns a new list at each call: a list returned earlier never changes."
)
METRICS_KEEP_THEIR_INPUTS = (
    "Neither writes into the tensors it is given: the caller's tensors keep their values."
)
FOCUS_KEEPS_ITS_INPUT = "It writes nothing into `weights`: the caller's tensors keep their values."
BANNED = {
    "attention_lab's TransformerEncoder": reference.TransformerEncoder,
    "nn.TransformerEncoder": nn.TransformerEncoder,
}

STACK_DRAWS_NOTHING = (
    "each EncoderBlock applies its own dropout; the stack only feeds each layer the previous "
    "layer's output and returns the last one's, unchanged, in either mode"
)

# The named mistakes of each exercise, by family (autograder/authoring/mistakes.py): each is
# diagnosed only where the answer's output matches that mistake's, computed from the same layers
# (output_mistakes, check_maps) or inputs (entropy_mistakes, tv_mistakes); same_block and
# same_initial_weights are seen in the module itself (one object listed twice; two layers whose
# parameters are all equal as built).
STACK = catalogue(
    ASSIGNMENT,
    "DepthStack",
    {
        "layer order": {
            "return_in_loop": "`forward` returns inside the layer loop, so only the first layer "
            "runs: dedent the `return` so it comes after the loop",
            "not_chained": "the layers are not chained: every layer is applied to the original "
            "input x, so the output is the last layer's alone; feed each layer the PREVIOUS "
            "layer's output (x, weights = layer(x, mask))",
            "one_layer_repeated": "one layer is applied num_layers times: loop over self.layers "
            "so that each of its layers runs once",
            "last_layer_repeated": "the last layer's weights are used for every layer (one block "
            "reused num_layers times): create a NEW EncoderBlock for every layer",
            "reversed": "the layers run in reverse order: apply self.layers[0] first",
        },
        "gradients": {
            "input_detached": "each layer is given a detached input: the forward calls "
            "detach() and the output's values are the layers' chain, yet only the last layer's "
            "parameters get a gradient from the stack's output",
        },
        "layer list": {
            "layers_in_a_list": "self.layers is a Python list, not the nn.ModuleList of the "
            "statement: nn.Module registers no layer held in a list",
        },
        "layers": {
            "same_block": "the same EncoderBlock object appears several times in self.layers "
            "([block] * num_layers repeats one block): create a NEW EncoderBlock for every layer",
            "same_initial_weights": "start with identical weights, every parameter tensor equal "
            "right after the stack is built: the statement asks for every layer to be "
            "constructed as its own EncoderBlock(d_model, num_heads, d_ff, dropout), starting "
            "from its own random weights",
        },
        "mask": {
            "mask_ignored": "the mask never reaches the layers: the output is what the layers "
            "give without it; pass it to every layer, x, weights = layer(x, mask)",
            "mask_first_only": "only the first layer gets the mask, the later ones attend to "
            "every key: pass the mask to EVERY layer, layer(x, mask), inside the loop",
        },
        "dropout passed on": {
            "dropout_not_passed": "the layers are built with EncoderBlock's default dropout, not "
            "the stack's: pass dropout=dropout to every EncoderBlock",
        },
        "train mode": {
            "dropout_on_input": "the stack applies dropout of its own to its input, before "
            f"layer 0: {STACK_DRAWS_NOTHING}",
            "dropout_between_layers": "the stack applies dropout of its own between the layers: "
            f"{STACK_DRAWS_NOTHING}",
            "dropout_on_output": "the stack applies dropout of its own to its output: "
            f"{STACK_DRAWS_NOTHING}",
            "dropout_on_maps": "the stack applies dropout to the attention maps it returns: "
            f"{STACK_DRAWS_NOTHING}",
            # What was observed only (as 06's): a dropout that eval() does not reach has
            # several causes (F.dropout without training=, modules held in a plain list).
            "random_in_eval": "in eval mode the stack draws random numbers, so its values change "
            "from one call to the next",
            "layer_mode_switched": "a layer runs in another mode than the stack: leave the "
            "layers' mode to the stack's train()/eval(); do not switch it in forward",
        },
        "returned list": {
            "one_list_for_every_call": "every call returns one and the same list object, so "
            "the next call changes the list of maps an earlier call returned: build a new list "
            "in each call (maps = [] inside forward)",
        },
        "maps": {
            "only_last_map": "only the last layer's attention map is returned: append the "
            "weights of EVERY layer to the list inside the loop",
            "first_map_repeated": "the first layer's attention map is repeated: append each "
            "layer's own weights",
            "maps_reversed": "the maps come last layer first (map i is layer num_layers - 1 - i's "
            "weights): list them in the order the layers run, map i for layer i",
            "heads_averaged": "each map is the mean over the heads: keep every head's weights, "
            "(B, H, L, L), as the layer returns them",
            "first_head_only": "each map keeps only the first head (weights[:, 0] or "
            "squeeze(1)): keep every head's weights, (B, H, L, L), as the layer returns them",
        },
    },
)
KEEPDIM = "keep no reduced axis: (..., L_k) -> (...), without keepdim=True"
ENTROPY = catalogue(
    ASSIGNMENT,
    "attention_entropy",
    {
        "zero probabilities": {
            "nan_at_zero": "0 * log(0) gives NaN: use torch.special.xlogy(p, p), which is 0 "
            "where p == 0",
            "nan_replaced_after_sum": "0 * log(0) is NaN, and replacing the NaN after the sum "
            "(nan_to_num, torch.where) zeroes the whole row's entropy: every row with an exact "
            "zero gets entropy 0, its other weights ignored; give each term 0 where p == 0 "
            "before summing, torch.special.xlogy(p, p)",
            "eps_in_log": "the weights are clamped at, or shifted by, an epsilon inside the "
            "log (p * log(max(p, eps)) or p * log(p + eps)), which changes every term whose "
            "weight lies below or near eps: use torch.special.xlogy(p, p) instead, 0 where "
            "p == 0",
        },
        "units and sign": {
            "bits": "the entropy is in bits (log2): use the natural log, nats",
            "no_minus": "the minus sign is missing: H(p) = -sum p log p is never negative",
        },
        "reduction": {
            "mean": "the entropy is averaged over the keys: sum over the last dimension, do not "
            "take the mean",
            "all_dimensions": "the entropy is taken over all dimensions: reduce over the LAST "
            "dimension only, (..., L_k) -> (...)",
            "first_dimension": "the entropy is taken over the first dimension: reduce over the "
            "LAST dimension, (..., L_k) -> (...)",
            "fixed_axis": "the entropy is summed over a fixed axis counted from the front "
            "(such as dim=1), which is the last axis only for inputs of one dimension more: "
            "the statement reduces over the last dimension whatever the number of leading "
            "ones, (..., L_k) -> (...)",
            "keepdim": KEEPDIM,
        },
    },
)
TV = catalogue(
    ASSIGNMENT,
    "total_variation",
    {
        "factor": {
            "no_half": "the factor 1/2 is missing: TV(p, q) = 1/2 * sum |p - q|, so it lies in "
            "[0, 1]",
        },
        "reduction": {
            "all_dimensions": "TV is taken over all dimensions: reduce over the LAST dimension "
            "only, (..., L_k) -> (...)",
            "first_dimension": "TV is taken over the first dimension: reduce over the LAST "
            "dimension, (..., L_k) -> (...)",
            "fixed_axis": "TV is summed over a fixed axis counted from the front (such as "
            "dim=1), which is the last axis only for inputs of one dimension more: the "
            "statement reduces over the last dimension whatever the number of leading ones, "
            "(..., L_k) -> (...)",
            "mean": "TV is averaged over the keys: sum over the last dimension, do not take the "
            "mean",
            "keepdim": KEEPDIM,
        },
        "difference": {
            "max": "TV sums |p - q|, not its maximum: 0.5 * (p - q).abs().sum(dim=-1)",
            "signed": "TV sums absolute differences: take (p - q).abs() before summing",
            "squared": "TV uses the absolute difference, not the squared one: 0.5 * (p - "
            "q).abs().sum(dim=-1)",
        },
    },
)
RETURN_IN_LOOP = STACK["return_in_loop"]


@dataclass(frozen=True)
class StackCase:
    """One hidden configuration of the stack and its input."""

    num_layers: int
    num_heads: int
    batch: int
    length: int
    d_k: int
    d_ff: int
    mask: str  # "none", "causal" or "padding"

    @property
    def d_model(self) -> int:
        return self.num_heads * self.d_k

    def describe(self) -> str:
        masked = "" if self.mask == "none" else f", a {self.mask} mask"
        return (
            f"num_layers={self.num_layers}, num_heads={self.num_heads}, d_model={self.d_model}, "
            f"d_ff={self.d_ff}, B={self.batch}, L={self.length}{masked}"
        )

    def make_mask(self, generator: torch.Generator) -> Tensor | None:
        """None, a (L, L) causal mask, or a (B, 1, 1, L) padding mask that keeps key 0."""
        if self.mask == "causal":
            return causal_mask(self.length)
        if self.mask == "padding":
            keep = torch.rand(self.batch, 1, 1, self.length, generator=generator) > 0.4
            keep[..., 0] = True
            return keep
        return None


MAIN_CASES = 3


def stack_cases(generator: torch.Generator) -> list[StackCase]:
    """All-different sizes first (the first MAIN_CASES), then the degenerate ones: one head, one
    layer, B = 1, L = 1."""
    b, length, d_k = random_sizes(generator, 3, low=2, high=7)
    d_ff = int(torch.randint(8, 24, (1,), generator=generator))
    deep = int(torch.randint(3, 6, (1,), generator=generator))
    return [
        StackCase(deep, 2, b, length, d_k, d_ff, "none"),
        StackCase(2, 3, b, length + 1, d_k, d_ff + 1, "padding"),
        StackCase(3, 1, b + 1, length, d_k + 1, d_ff, "causal"),
        StackCase(2, 1, 1, length, d_k, d_ff, "causal"),  # a batch of one, one head
        StackCase(1, 2, b, length, d_k, d_ff, "causal"),  # one layer
        StackCase(2, 2, b, 1, d_k, d_ff, "causal"),  # a single token
        StackCase(1, 1, 1, 1, d_k, d_ff, "none"),  # everything of size one
    ]


# ---------------------------------------------------------------------------------------------
# Building and running the student's stack without touching the global RNG


def build_stack(
    cls: type, num_layers: int, d_model: int, num_heads: int, d_ff: int, seed: int, **kwargs: Any
):
    with under_seed(seed):
        try:
            stack = cls(num_layers, d_model, num_heads, d_ff, **kwargs)
        except NotImplementedError:
            raise
        except Exception as error:
            fail(
                explain(
                    error,
                    "DepthStack(num_layers, d_model, num_heads, d_ff, dropout)",
                    f" with num_layers={num_layers}, d_model={d_model}, num_heads={num_heads}, d_ff={d_ff}",
                )
            )
    if not isinstance(stack, nn.Module):
        fail("DepthStack must be an nn.Module (class DepthStack(nn.Module))")
    return stack


def run_stack(
    stack: nn.Module, x: Tensor, mask: Tensor | None, what: str
) -> tuple[Tensor, list[Tensor]]:
    with inputs_kept("DepthStack", x=x, mask=mask):  # the checks use x and mask again
        try:
            result = stack(x) if mask is None else stack(x, mask)
        except NotImplementedError:
            raise
        except Exception as error:
            fail(explain(error, "your DepthStack", f" on {what}"))
    return returned_pair(result, what)


def returned_pair(result: Any, what: str) -> tuple[Tensor, list[Tensor]]:
    """``result``, what the stack returned on ``what``, as (output, maps); a failure where it is
    no tuple of a tensor and a list of tensors."""
    if not (isinstance(result, tuple) and len(result) == 2):
        fail("forward must return a tuple (output, maps)")
    out, maps = result
    if not isinstance(out, Tensor):
        fail(f"the first element returned must be the output tensor, got {type(out).__name__}")
    if not isinstance(maps, list) or not all(isinstance(m, Tensor) for m in maps):
        fail(
            f"the second element returned must be a list of tensors, one (B, H, L, L) map per layer, got {type(maps).__name__}"
        )
    return out, maps


def chain(
    layers: list[nn.Module], x: Tensor, masks: list[Tensor | None]
) -> tuple[Tensor, list[Tensor]]:
    """x through the layers in order, layer i with masks[i], and each layer's (B, H, L, L) map."""
    maps = []
    for layer, mask in zip(layers, masks, strict=True):
        x, weights = layer(x, mask)
        maps.append(weights)
    return x, maps


def output_mistakes(
    layers: list[nn.Module], x: Tensor, mask: Tensor | None
) -> dict[Mistake, Tensor]:
    """What the stack's output would be under each misconception, from the same layers."""
    n = len(layers)
    every = [mask] * n
    mistakes = {}
    if mask is not None:
        mistakes[STACK["mask_ignored"]] = chain(layers, x, [None] * n)[0]
        if n > 1:
            mistakes[STACK["mask_first_only"]] = chain(layers, x, [mask] + [None] * (n - 1))[0]
    if n > 1:
        mistakes[RETURN_IN_LOOP] = layers[0](x, mask)[0]
        mistakes[STACK["not_chained"]] = layers[-1](x, mask)[0]
        mistakes[STACK["one_layer_repeated"]] = chain([layers[0]] * n, x, every)[0]
        mistakes[STACK["last_layer_repeated"]] = chain([layers[-1]] * n, x, every)[0]
        mistakes[STACK["reversed"]] = chain(layers[::-1], x, every)[0]
    return mistakes


def check_maps(maps: list[Tensor], expected: list[Tensor], what: str) -> None:
    """One (B, H, L, L) map per layer, each the map of its own layer."""
    n = len(expected)
    shape = tuple(expected[0].shape)
    if len(maps) != n:
        if len(maps) == 1 and n > 1 and is_close(maps[0], expected[-1], atol=1e-9):
            fail(STACK["only_last_map"])
        fail(
            f"expected a list of num_layers = {n} maps ({what}), got {len(maps)}: one map per layer"
        )
    for i, (m, e) in enumerate(zip(maps, expected, strict=True)):
        if m.shape == e.shape:
            continue
        if is_close(m, e.mean(1), atol=1e-9) and e.shape[1] > 1:
            fail(STACK["heads_averaged"])
        if is_close(m, e[:, 0], atol=1e-9) and e.shape[1] > 1:
            fail(STACK["first_head_only"])
        if squeezed(m, shape):
            lost = size_one_axes(shape, ("B", "H", "L", "L"))
            fail(
                f"{SQUEEZED} (map {i} lost {lost}: expected (B, H, L, L) = {shape}, "
                f"got {tuple(m.shape)})"
            )
        fail(f"map {i} must be the layer's weights (B, H, L, L) = {shape}, got {tuple(m.shape)}")
    # With one token every map is all ones: a repeated map is a mistake only where maps differ.
    distinct = not all(is_close(e, expected[0], atol=1e-9) for e in expected[1:])
    if distinct and all(is_close(m, expected[-1], atol=1e-9) for m in maps):
        fail(STACK["only_last_map"])
    if distinct and all(is_close(m, expected[0], atol=1e-9) for m in maps):
        fail(STACK["first_map_repeated"])
    # Named where the order is seen: the maps differ from their own reversal.
    flipped = expected[::-1]
    if not all(is_close(e, f, atol=1e-9) for e, f in zip(expected, flipped, strict=True)) and all(
        is_close(m, f, atol=1e-9) for m, f in zip(maps, flipped, strict=True)
    ):
        fail(STACK["maps_reversed"])
    for i, (m, e) in enumerate(zip(maps, expected, strict=True)):
        if not is_close(m, e, atol=1e-9):
            fail(
                f"map {i} is not the attention map of layer {i} ({what}; "
                f"{first_difference(m, e, 1e-9)})"
            )


def layer_sizes(generator: torch.Generator) -> tuple[int, int, int, int, int]:
    """B, L, d_model, num_heads, d_ff for the checks that need one all-different configuration."""
    b, length, d_k = random_sizes(generator, 3, low=2, high=7)
    # Two or three heads: one head is stack_cases' degenerate case, never a chance of this draw
    # (a squeeze() of the maps would fail these checks only on some draws).
    num_heads = int(torch.randint(2, 4, (1,), generator=generator))
    d_ff = int(torch.randint(8, 24, (1,), generator=generator))
    return b, length, num_heads * d_k, num_heads, d_ff


def check_structure(stack: nn.Module, num_layers: int, num_heads: int) -> list[nn.Module]:
    layers = getattr(stack, "layers", None)
    if layers is None:
        fail("the stack has no attribute self.layers, the nn.ModuleList of the statement")
    if type(layers) is list:  # observed, so named
        fail(
            f"{STACK['layers_in_a_list']} (it registers {sum(1 for _ in stack.parameters())} parameter tensors)"
        )
    if not isinstance(layers, nn.ModuleList):
        fail(
            f"self.layers is {type(layers).__name__}, not the nn.ModuleList of the statement "
            f"(the module registers {sum(1 for _ in stack.parameters())} parameter tensors)"
        )
    if len(layers) != num_layers:
        fail(f"DepthStack({num_layers}, ...) must hold {num_layers} layers, found {len(layers)}")
    for layer in layers:
        if not isinstance(layer, EncoderBlock):
            fail(f"every layer must be an EncoderBlock, found {type(layer).__name__}")
        if layer.self_attn.num_heads != num_heads:
            fail(
                f"every layer must have the stack's num_heads = {num_heads}, found "
                f"{layer.self_attn.num_heads}"
            )
        if layer.norm_first:
            fail("a layer has norm_first=True; the statement's layers are post-norm EncoderBlocks")
    return list(layers)


# ---------------------------------------------------------------------------------------------
# DepthStack: structure and parity with attention_lab's TransformerEncoder


ban(
    ASSIGNMENT,
    "DepthStack",
    BANNED,
    check_name="depth_stack_does_not_call_the_reference",
)


def judge_stack(cls: type, g: torch.Generator, cases: list[StackCase]) -> None:
    """Fail unless ``cls`` built like the reference stack of each of ``cases``, with its weights,
    gives the reference's output and maps."""
    for case in cases:
        seed = int(torch.randint(2**31, (1,), generator=g))
        n, d_model = case.num_layers, case.d_model
        with under_seed(seed):
            ref = reference.TransformerEncoder(n, d_model, case.num_heads, case.d_ff)
        with torch.no_grad():  # non-trivial LayerNorm parameters
            for layer in ref.layers:
                for norm in (layer.norm1, layer.norm2):
                    norm.weight.copy_(torch.rand(d_model, generator=g) + 0.5)
                    norm.bias.copy_(torch.rand(d_model, generator=g) - 0.5)
        ref = ref.double().eval()
        stack = build_stack(cls, n, d_model, case.num_heads, case.d_ff, seed)
        check_structure(stack, n, case.num_heads)
        try:
            stack.load_state_dict(ref.state_dict())
        except RuntimeError as error:
            first = str(error).strip().splitlines()[-1].strip()
            fail(
                "could not copy a reference stack's weights into yours: self.layers must hold exactly "
                f"num_layers EncoderBlock(d_model, num_heads, d_ff, dropout) ({first})"
            )
        stack = stack.double().eval()
        what = case.describe()
        x = torch.randn(case.batch, case.length, d_model, generator=g, dtype=torch.float64)
        mask = case.make_mask(g)
        with torch.no_grad():
            out, maps = run_stack(stack, x, mask, what)
            expected_out, expected_maps = chain(list(ref.layers), x, [mask] * n)
            mistakes = output_mistakes(list(ref.layers), x, mask)
        if out.shape != expected_out.shape:
            if squeezed(out, expected_out.shape):
                fail(f"{SQUEEZED} (the output: expected {tuple(expected_out.shape)} on {what})")
            fail(
                f"the output must keep the input's shape {tuple(x.shape)}, got {tuple(out.shape)} ({what})"
            )
        reference_out, _ = ref(x, mask)
        assert torch.allclose(reference_out, expected_out)  # the oracle agrees with attention_lab
        if n > 1 and len(maps) == 1 and is_close(out, mistakes[RETURN_IN_LOOP], atol=1e-9):
            fail(RETURN_IN_LOOP)
        diagnose(
            out,
            expected_out,
            mistakes,
            f"the output differs from layer 1, then layer 2, ... applied in order ({what})",
            atol=1e-9,
        )
        check_maps(maps, expected_maps, what)


@check(
    ASSIGNMENT,
    "test_depth_stack",
    keeps=(
        "store the layers in an `nn.ModuleList` named `self.layers`",
        "feed `x` (B, L, d_model) through the layers in order, each layer taking the "
        "previous layer's output, and give every layer the same `mask`",
        "collect every layer's weights, as they are, in a list. Return `(output of the "
        "last layer, list of num_layers maps)`.",
        STACK_KEEPS_ITS_INPUTS,
    ),
)
def depth_stack_matches_the_reference(ns: Namespace) -> None:
    g = hidden_generator("a04 stack")
    judge_stack(require(ns, "DepthStack", type), g, stack_cases(g)[:MAIN_CASES])


@check(
    ASSIGNMENT,
    "test_depth_stack",
    weight=EDGE_CASES,
    keeps=(
        "feed `x` (B, L, d_model) through the layers in order, each layer taking the "
        "previous layer's output, and give every layer the same `mask`",
        "Keep every axis: with one head, a batch of one or a single token, some axes "
        "have size 1, and the hidden checks try those sizes too",
        STACK_KEEPS_ITS_INPUTS,
    ),
)
def depth_stack_matches_the_reference_at_size_one(ns: Namespace) -> None:
    # The degenerate stacks: one head, one layer, a batch of one, a single token.
    g = hidden_generator("a04 stack degenerate")
    judge_stack(require(ns, "DepthStack", type), g, stack_cases(g)[MAIN_CASES:])


@check(
    ASSIGNMENT,
    "test_depth_stack",
    weight=EDGE_CASES,
    keeps=(
        STACK_RETURNS_A_NEW_LIST,
        STACK_KEEPS_ITS_INPUTS,
        "collect every layer's weights, as they are, in a list. Return `(output of the "
        "last layer, list of num_layers maps)`.",
    ),
)
def depth_stack_returns_a_new_list_at_each_call(ns: Namespace) -> None:
    """The list of maps a first call returned holds, after a second call on other sizes, the maps
    of the shapes that call alone returns; where it does not, and both calls returned one list
    object, that is said."""
    cls = require(ns, "DepthStack", type)
    g = hidden_generator("a04 new list")
    b, length, d_model, num_heads, d_ff = layer_sizes(g)
    num_layers = 2
    stack = build_stack(cls, num_layers, d_model, num_heads, d_ff, draw_seed(g))
    check_structure(stack, num_layers, num_heads)
    stack.eval()
    first = torch.randn(b, length, d_model, generator=g)
    second = torch.randn(b + 1, length + 1, d_model, generator=g)
    what = f"num_layers={num_layers}, num_heads={num_heads}, B={b}, L={length}"
    with torch.no_grad():
        # The shapes of the first call's maps, read before any other call.
        alone = [tuple(m.shape) for m in run_stack(stack, first, None, what)[1]]
        try:
            # The two calls where they run, their results held together.
            results, shared = observe_call("calls_held", stack, first, second)
        except (CheckFailed, StopChecks, NotImplementedError):
            raise
        except Exception as error:
            fail(explain(error, "your DepthStack", f" on two calls ({what})"))
    if not (isinstance(results, list) and len(results) == 2):
        fail(f"two calls of your DepthStack did not give two results ({what})")
    maps = [returned_pair(result, what)[1] for result in results]
    shapes = [tuple(m.shape) for m in maps[0]]
    if shapes == alone:
        return
    seen = (
        f"the list of maps that a call on B={b}, L={length} returned holds, after a second call "
        f"on B={b + 1}, L={length + 1}, {len(shapes)} maps of shapes {shapes[:4]}, where that "
        f"call alone returns {len(alone)} of shape {alone[0] if alone else ()}: a "
        "list returned earlier changed"
    )
    if isinstance(shared, list) and [0, 1, 1] in shared:
        fail(f"{STACK['one_list_for_every_call']} ({seen})")
    fail(seen)


# ---------------------------------------------------------------------------------------------
# DepthStack: independent layers, one distinct map each, gradient for every layer


@check(
    ASSIGNMENT,
    "test_depth_stack_layers",
    keeps=(
        "Construct every layer as its own `EncoderBlock(d_model, num_heads, d_ff, "
        "dropout)`, so that each starts from its own random weights, as a newly built "
        "block does.",
    ),
)
def depth_stack_layers_are_independent(ns: Namespace) -> None:
    """Distinct blocks, parameters of their own, and no two layers equal as built."""
    cls = require(ns, "DepthStack", type)
    g = hidden_generator("a04 layers")
    for num_layers in (2, 3, 5):
        _, _, d_model, num_heads, d_ff = layer_sizes(g)
        seed = int(torch.randint(2**31, (1,), generator=g))
        stack = build_stack(cls, num_layers, d_model, num_heads, d_ff, seed)
        layers = getattr(stack, "layers", None)
        if isinstance(layers, (nn.ModuleList, list)) and len({id(m) for m in layers}) < len(layers):
            fail(STACK["same_block"])
        layers = check_structure(stack, num_layers, num_heads)
        with torch.random.fork_rng(devices=[]):
            block = EncoderBlock(d_model, num_heads, d_ff)
            one = sum(p.numel() for p in block.parameters())
        count = sum(p.numel() for p in stack.parameters())
        if count != num_layers * one:
            fail(
                f"{num_layers} independent EncoderBlocks have {num_layers * one} parameters, yours "
                f"{count}"
            )
        parameters = [list(layer.parameters()) for layer in layers]
        seen: dict[int, int] = {}
        for i, own in enumerate(parameters):
            for p in own:
                if identity(p) in seen:
                    fail(
                        f"layers {seen[identity(p)]} and {i} share a parameter tensor (one object, "
                        f"of shape {tuple(p.shape)})"
                    )
                seen[identity(p)] = i
        # Freshly built blocks agree only on their LayerNorms' ones and zeros: two layers equal
        # in every tensor start from one set of random weights.
        for j in range(1, num_layers):
            for i in range(j):
                first, second = parameters[i], parameters[j]
                if len(first) == len(second) and all(
                    torch.equal(a, b) for a, b in zip(first, second, strict=True)
                ):
                    fail(
                        f"layers {i} and {j} {STACK['same_initial_weights']} (DepthStack("
                        f"{num_layers}, d_model={d_model}, num_heads={num_heads}, d_ff={d_ff}))"
                    )


@check(
    ASSIGNMENT,
    "test_depth_stack_layers",
    weight=EDGE_CASES,
    keeps=(
        "The weights come from the global random generator, as a new block's do: never seed it "
        "inside the stack",
    ),
)
def depth_stack_follows_the_callers_seed(ns: Namespace) -> None:
    """Stacks built after two different seeds start from different weights."""
    cls = require(ns, "DepthStack", type)
    g = hidden_generator("a04 callers seed")
    _, _, d_model, num_heads, d_ff = layer_sizes(g)
    first = draw_seed(g)
    stacks = [build_stack(cls, 3, d_model, num_heads, d_ff, seed) for seed in (first, first + 1)]
    weights = [list(stack.parameters()) for stack in stacks]
    if len(weights[0]) == len(weights[1]) and all(
        torch.equal(a, b) for a, b in zip(*weights, strict=True)
    ):
        fail(
            "built right after torch.manual_seed(s) and after torch.manual_seed(s + 1), the "
            "stacks start from identical weights, every parameter equal: "
            "the stack's weights do not follow the seed set before building it, so the "
            "sections that build one stack per seed would get one stack for all of them"
        )


@check(
    ASSIGNMENT,
    "test_depth_stack_layers",
    keeps=(
        "`__init__(num_layers, d_model, num_heads, d_ff, dropout=0.0)`",
        "Construct every layer as its own `EncoderBlock(d_model, num_heads, d_ff, "
        "dropout)`, so that each starts from its own random weights, as a newly built "
        "block does.",
    ),
)
def depth_stack_passes_dropout_on(ns: Namespace) -> None:
    cls = require(ns, "DepthStack", type)
    g = hidden_generator("a04 dropout")
    _, _, d_model, num_heads, d_ff = layer_sizes(g)
    stack = build_stack(cls, 3, d_model, num_heads, d_ff, 0, dropout=0.35)
    with torch.random.fork_rng(devices=[]):
        default = EncoderBlock(d_model, num_heads, d_ff)  # what a block without dropout= gets
    for i, layer in enumerate(check_structure(stack, 3, num_heads)):
        built = (layer.dropout1.p, layer.self_attn.attn_dropout.p)
        if built == (0.35, 0.35):
            continue
        if built == (default.dropout1.p, default.self_attn.attn_dropout.p):
            fail(f"{STACK['dropout_not_passed']} (layer {i} drops with p={built[0]}, not 0.35)")
        fail(
            f"layer {i} was built with dropout {built[0]} (attention dropout {built[1]}), not the "
            "stack's 0.35"
        )


@check(
    ASSIGNMENT,
    "test_depth_stack_layers",
    keeps=(
        "feed `x` (B, L, d_model) through the layers in order, each layer taking the "
        "previous layer's output, and give every layer the same `mask`",
        "collect every layer's weights, as they are, in a list. Return `(output of the "
        "last layer, list of num_layers maps)`.",
        STACK_KEEPS_ITS_INPUTS,
    ),
)
def depth_stack_returns_one_distinct_map_per_layer(ns: Namespace) -> None:
    cls = require(ns, "DepthStack", type)
    g = hidden_generator("a04 maps")
    for num_layers in (2, 4):
        b, length, d_model, num_heads, d_ff = layer_sizes(g)
        seed = int(torch.randint(2**31, (1,), generator=g))
        stack = build_stack(cls, num_layers, d_model, num_heads, d_ff, seed)
        layers = check_structure(stack, num_layers, num_heads)
        stack.eval()
        x = torch.randn(b, length, d_model, generator=g) * 2
        what = f"num_layers={num_layers}, num_heads={num_heads}, B={b}, L={length}"
        with torch.no_grad():
            out, maps = run_stack(stack, x, None, what)
            expected_out, expected_maps = chain(layers, x, [None] * num_layers)
            mistakes = output_mistakes(layers, x, None)
        if len(maps) == 1 and is_close(out, mistakes[RETURN_IN_LOOP], atol=1e-6):
            fail(RETURN_IN_LOOP)
        diagnose(
            out,
            expected_out,
            mistakes,
            f"the output differs from your layers applied in order, each to the previous one's output ({what})",
            atol=1e-6,
        )
        check_maps(maps, expected_maps, what)
        for i in range(num_layers):
            for j in range(i):
                if maps[i] is maps[j] or torch.allclose(maps[i], maps[j], atol=1e-6):
                    fail(f"maps {j} and {i} are equal ({what})")


@check(
    ASSIGNMENT,
    "test_depth_stack_layers",
    keeps=(
        "layers are independent and all of them are trained",
        STACK_KEEPS_ITS_INPUTS,
    ),
)
def depth_stack_gradients_reach_every_layer(ns: Namespace) -> None:
    cls = require(ns, "DepthStack", type)
    g = hidden_generator("a04 gradients")
    b, length, d_model, num_heads, d_ff = layer_sizes(g)
    num_layers = 4
    seed = int(torch.randint(2**31, (1,), generator=g))
    stack = build_stack(cls, num_layers, d_model, num_heads, d_ff, seed)
    layers = check_structure(stack, num_layers, num_heads)
    x = torch.randn(b, length, d_model, generator=g)
    out, maps = run_stack(stack, x, None, f"num_layers={num_layers}")
    if len(maps) == 1 and is_close(out.detach(), layers[0](x)[0].detach(), atol=1e-6):
        fail(RETURN_IN_LOOP)
    (out * torch.randn(out.shape, generator=g)).sum().backward()
    without = []
    for i, layer in enumerate(layers):
        grads = [p.grad for p in layer.parameters()]
        if any(grad is None for grad in grads) or not sum(grad.abs().sum() for grad in grads) > 0:
            without.append(i)
    stack.zero_grad(set_to_none=True)
    if without == list(range(num_layers - 1)) and detached_between_layers(stack, layers, x):
        fail(f"{STACK['input_detached']} (num_layers={num_layers})")
    if without:
        fail(
            f"layer {without[0]}'s parameters get no gradient from the stack's output "
            f"(num_layers={num_layers})"
        )


def detached_between_layers(stack: nn.Module, layers: list[nn.Module], x: Tensor) -> bool:
    """The experiment behind input_detached, where every layer but the last got no gradient:
    the stack's output on ``x`` is the layers' chain, and its forward calls detach() and never
    switches gradients off (torch.no_grad would cut the graph too). A correct stack, whose
    layers all get a gradient, never gets here."""
    result, called = observe_call("torch_functions", stack, x)
    if not (isinstance(result, tuple) and len(result) == 2 and isinstance(result[0], Tensor)):
        return False
    with torch.no_grad():
        expected = chain(layers, x, [None] * len(layers))[0]
    names = called if isinstance(called, list) else []
    return (
        is_close(result[0].detach(), expected, atol=1e-6)
        and any(str(name).endswith((".detach", ".detach_")) for name in names)
        and not any("grad_enabled" in str(name) for name in names)
    )


@check(
    ASSIGNMENT,
    "test_depth_stack_layers",
    keeps=(
        "feed `x` (B, L, d_model) through the layers in order, each layer taking the "
        "previous layer's output, and give every layer the same `mask`",
        STACK_KEEPS_ITS_INPUTS,
    ),
)
def depth_stack_changes_nothing_in_train_mode(ns: Namespace) -> None:
    """In train mode every layer runs in train mode and gets what it gets in eval mode: judged
    stage by stage with recorders in the layers' place, so any random order passes."""
    cls = require(ns, "DepthStack", type)
    g = hidden_generator("a04 train mode")
    b, length, d_model, num_heads, d_ff = layer_sizes(g)
    num_layers, p = 3, round(0.2 + 0.2 * float(torch.rand((), generator=g)), 3)
    stack = build_stack(cls, num_layers, d_model, num_heads, d_ff, draw_seed(g), dropout=p)
    check_structure(stack, num_layers, num_heads)
    stack.double()
    recorders = {
        f"layer {i}": Recorder(
            (
                torch.randn(b, length, d_model, generator=g, dtype=torch.float64),
                torch.rand(b, num_heads, length, length, generator=g, dtype=torch.float64).softmax(
                    -1
                ),
            )
        )
        for i in range(num_layers)
    }
    for i, recorder in enumerate(recorders.values()):
        setattr(stack.layers, str(i), recorder)  # stack.layers[i] = recorder, also remotely
    x = torch.randn(b, length, d_model, generator=g, dtype=torch.float64)
    what = f"dropout={p}, num_layers={num_layers}, B={b}, L={length}"

    def forward() -> list[tuple[str, Tensor]]:
        out, maps = run_stack(stack, x, None, what)
        return [("the stack's output", out)] + [(f"map {i}", m) for i, m in enumerate(maps)]

    words = TrainModeWords(
        whole="the stack",
        detail=what,
        mode_switched=STACK["layer_mode_switched"],
        random_in_eval=STACK["random_in_eval"],
        allowed=STACK_DRAWS_NOTHING,
        site=dropout_site,
    )
    judge_train_mode(stack, recorders, forward, g, words)


def dropout_site(stage: str) -> str | None:
    """The STACK mistake of dropout applied to ``stage`` (as compare_modes names the stages of
    the stack's one call per layer), said of train mode, or None for any other stage."""
    if stage == "the stack's output":
        site = "dropout_on_output"
    elif re.fullmatch(r"map \d+", stage):
        site = "dropout_on_maps"
    elif layer := re.fullmatch(r"the input of layer (\d+)", stage):
        site = "dropout_on_input" if layer.group(1) == "0" else "dropout_between_layers"
    else:
        return None
    return f"in train mode {STACK[site]}"


# ---------------------------------------------------------------------------------------------
# attention_entropy and total_variation


def random_distributions(generator: torch.Generator, shape: tuple[int, ...]) -> Tensor:
    """float64 distributions over the last dim with exact zeros and some one-hot rows."""
    p = torch.rand(shape, generator=generator, dtype=torch.float64) ** 3
    p = p * (torch.rand(shape, generator=generator) > 0.35)
    first = torch.zeros(shape[-1], dtype=torch.float64)
    first[0] = 1.0
    p = p + 0.05 * first
    p = p / p.sum(-1, keepdim=True)
    flat = p.reshape(-1, shape[-1])
    if flat.shape[0] > 1:  # one row puts all its weight on one key
        flat[0] = torch.roll(first, int(torch.randint(shape[-1], (1,), generator=generator)))
    return flat.reshape(shape)


def entropy_mistakes(p: Tensor) -> dict[Mistake, Tensor]:
    plogp = p * torch.log(p)  # NaN where p == 0
    safe = torch.special.xlogy(p, p)
    return {
        ENTROPY["nan_at_zero"]: -plogp.sum(-1),
        ENTROPY["bits"]: -(safe / math.log(2)).sum(-1),
        ENTROPY["no_minus"]: safe.sum(-1),
        ENTROPY["mean"]: -safe.mean(-1),
        ENTROPY["all_dimensions"]: -safe.sum(),
        ENTROPY["first_dimension"]: -safe.sum(0),
        ENTROPY["keepdim"]: -safe.sum(-1, keepdim=True),
        ENTROPY["eps_in_log"]: -(p * torch.log(p + 1e-3)).sum(-1),
    }


def nan_replaced_after_the_sum(answer: Any) -> bool:
    """The experiment behind nan_replaced_after_sum: on rows of 5 keys, three without an exact
    zero and three with one or two (none with all its weight on one key), ``answer`` gives
    -sum p log p on the first three and exactly 0 on the others. A correct entropy is positive
    on every such row, and an answer that is 0 everywhere is not -sum p log p on the first."""
    rows = softmax_rows(torch.Generator().manual_seed(9), 6, 5, 1.0)
    rows[3, 0] = 0.0
    rows[4, 1:3] = 0.0
    rows[5, 4] = 0.0
    rows /= rows.sum(-1, keepdim=True)
    expected = -(rows * rows.log()).sum(-1).nan_to_num(nan=0.0)
    try:
        got = answer(rows.clone())
    except Exception:  # noqa: BLE001 - an answer that raises here does not make this mistake
        return False
    return is_close(got, expected, atol=1e-9)


def entropy_with_epsilon(p: Tensor, epsilon: float, clamped: bool) -> Tensor:
    """-sum p log(max(p, epsilon)) (``clamped``) or -sum p log(p + epsilon) over the last dim."""
    inside = p.clamp_min(epsilon) if clamped else p + epsilon
    return -(p * inside.log()).sum(-1)


# The experiment's row: weights from 1e-12 to 0.3, so that any epsilon between them changes
# its entropy, and by more the larger it is.
EPSILON_ROW = torch.tensor([10.0**-e for e in range(12, 0, -1)], dtype=torch.float64)
EPSILON_ROW = torch.cat([EPSILON_ROW, 1 - EPSILON_ROW.sum().reshape(1)])


def epsilon_read_off(answer: Any) -> dict[bool, float]:
    """clamped -> the epsilon for which ``answer`` gives entropy_with_epsilon on EPSILON_ROW
    (found by bisection over log10 epsilon in [-14, 0], where that entropy falls as epsilon
    grows), for each way of putting it in the log that some epsilon fits; empty where the
    answer raises, gives no float, or gives the exact entropy."""
    try:
        got = answer(EPSILON_ROW.clone())
        got = float(got.detach().double().reshape(()))
    except Exception:  # noqa: BLE001 - an answer that raises here gives nothing to read
        return {}
    if not math.isfinite(got) or abs(got - float(entropy_oracle(EPSILON_ROW))) < 1e-12:
        return {}
    found = {}
    for clamped in (True, False):
        low, high = -14.0, 0.0  # log10 of epsilon
        if (
            not float(entropy_with_epsilon(EPSILON_ROW, 10.0**high, clamped))
            <= got
            <= float(entropy_with_epsilon(EPSILON_ROW, 10.0**low, clamped))
        ):
            continue
        for _ in range(80):
            middle = (low + high) / 2
            if float(entropy_with_epsilon(EPSILON_ROW, 10.0**middle, clamped)) > got:
                low = middle
            else:
                high = middle
        found[clamped] = 10.0 ** ((low + high) / 2)
    return found


def epsilon_mistake(epsilons: dict[bool, float], p: Tensor, got: Any) -> dict[Mistake, Tensor]:
    """{eps_in_log: the entropy with the epsilon read off the answer (epsilon_read_off)} where,
    so computed, it gives what the answer gave on ``p`` too (another input than the one the
    epsilon was read off), else nothing: diagnose then names it only where it matches."""
    for clamped, epsilon in epsilons.items():
        value = entropy_with_epsilon(p, epsilon, clamped)
        if isinstance(got, Tensor) and is_close(got, value, atol=1e-9):
            return {ENTROPY["eps_in_log"]: value}
    return {}


def tv_mistakes(p: Tensor, q: Tensor) -> dict[Mistake, Tensor]:
    diff = (p - q).abs()
    return {
        TV["no_half"]: diff.sum(-1),
        TV["all_dimensions"]: 0.5 * diff.sum(),
        TV["first_dimension"]: 0.5 * diff.sum(0),
        TV["max"]: diff.amax(-1),
        TV["signed"]: 0.5 * (p - q).sum(-1),
        TV["squared"]: 0.5 * (p - q).square().sum(-1),
        TV["mean"]: 0.5 * diff.mean(-1),
        TV["keepdim"]: 0.5 * diff.sum(-1, keepdim=True),
    }


def entropy_over(axis: int, p: Tensor) -> Tensor:
    """-sum p log p over ``axis``, 0 log 0 = 0."""
    return 0.0 - torch.special.xlogy(p, p).sum(axis)


def tv_over(axis: int, p: Tensor, q: Tensor) -> Tensor:
    """1/2 sum |p - q| over ``axis``."""
    return 0.5 * (p - q).abs().sum(axis)


def fixed_axis_of(answer: Any, over: Any, arguments: int) -> int | None:
    """The experiment behind the fixed_axis mistakes: the axis d (1 or 2) for which ``answer``
    on distributions of d + 1 dimensions gives ``over(-1, ...)``, the statement's reduction over
    the last axis, on d + 2 and d + 3 dimensions gives ``over(d, ...)``, the reduction over axis
    d, and on d dimensions (no axis d) raises; else None. An answer that reduces over the last
    axis is right on every number of dimensions, so never matches."""
    g = torch.Generator().manual_seed(11)

    def draw(ndim: int) -> list[Tensor]:
        shape = (2, 3, 4, 5)[: ndim - 1] + (7,)  # sizes all different, 7 keys
        return [
            torch.softmax(2 * torch.randn(shape, generator=g, dtype=torch.float64), dim=-1)
            for _ in range(arguments)
        ]

    def gives(inputs: list[Tensor], expected: Tensor) -> bool:
        try:
            return is_close(answer(*(t.clone() for t in inputs)), expected, atol=1e-9)
        except Exception:  # noqa: BLE001 - an answer that raises here gives nothing
            return False

    for axis in (1, 2):
        right = draw(axis + 1)
        if not gives(right, over(-1, *right)):
            continue
        if not all(
            gives(inputs, over(axis, *inputs)) for inputs in map(draw, (axis + 2, axis + 3))
        ):
            continue
        try:
            answer(*(t.clone() for t in draw(axis)))
        except Exception:  # noqa: BLE001 - the experiment's outcome: it raises without axis d
            return axis
    return None


def over_a_fixed_axis(axis: int, name: str) -> str:
    """The observation behind a fixed_axis mistake, in words."""
    return (
        f"on {axis + 1}-D inputs your {name} is right, on {axis + 2}-D and {axis + 3}-D inputs "
        f"it sums over axis {axis}, and on {axis}-D inputs it raises"
    )


def metric_shapes(generator: torch.Generator) -> list[tuple[int, ...]]:
    """All-different sizes with 4 to 9 keys, then the degenerate ones: a batch of one, a single
    key."""
    # At least 4 keys in every draw: over 2 or 3 keys max |p - q| equals 1/2 * sum |p - q| (one
    # side of p - q is a single key), so a TV taken as the maximum would pass under some secrets.
    k = 4 + int(torch.randint(6, (1,), generator=generator))
    a, b, c = [size for size in random_sizes(generator, 4, low=2, high=9) if size != k][:3]
    return [(k,), (a, k), (b, a, k), (c, 1, a, k), (1, k), (a, 1), (1, 1, 1)]


# The public counterexamples' shapes, smallest first: distributions over the last axis.
PUBLIC_SHAPES = [(1,), (2,), (3,), (2, 2), (2, 3), (2, 2, 3)]


def small_distribution(generator: torch.Generator, shape: tuple[int, ...]) -> Tensor:
    """Rows of counts in {0, 1, 2} (the first raised to 1 where a row is all zeros), divided
    by their sums: halves, thirds, quarters and exact zeros, easy to work by hand."""
    counts = torch.randint(0, 3, shape, generator=generator).to(torch.float64)
    counts[..., 0] += counts.sum(-1) == 0
    return counts / counts.sum(-1, keepdim=True)


def public_distribution(generator: torch.Generator, shape: tuple[int, ...]) -> dict[str, Tensor]:
    return {"p": small_distribution(generator, shape)}


def public_pair(generator: torch.Generator, shape: tuple[int, ...]) -> dict[str, Tensor]:
    return {"p": small_distribution(generator, shape), "q": small_distribution(generator, shape)}


def entropy_oracle(p: Tensor) -> Tensor:
    """-sum p log p over the last axis, in nats, with 0 log 0 = 0."""
    return 0.0 - torch.special.xlogy(p, p).sum(-1)  # 0 - 0 is 0, where -(0) prints as -0


def tv_oracle(p: Tensor, q: Tensor) -> Tensor:
    """1/2 sum |p - q| over the last axis."""
    return 0.5 * (p - q).abs().sum(-1)


@check(
    ASSIGNMENT,
    "test_attention_metrics",
    keeps=(
        r"entropy $H(p) = -\sum_j p_j \log p_j$ (in nats, with $0 \log 0 = 0$)",
        "Both reduce over the last dimension and keep all leading dimensions: `(..., "
        "L_k) -> (...)`.",
        METRICS_KEEP_THEIR_INPUTS,
    ),
)
def attention_entropy_matches_categorical(ns: Namespace) -> None:
    attention_entropy = require(ns, "attention_entropy")
    g = hidden_generator("a04 entropy")
    axis = fixed_axis_of(attention_entropy, entropy_over, 1)
    epsilons = epsilon_read_off(attention_entropy)
    nan_replaced = nan_replaced_after_the_sum(attention_entropy)
    for shape in metric_shapes(g):
        p = random_distributions(g, shape)
        with inputs_kept("attention_entropy", weights=p):  # the reference is computed from p
            got = raised_over_a_fixed_axis(
                attention_entropy, (p,), axis, ENTROPY["fixed_axis"], "attention_entropy"
            )
        diagnose(
            got,
            torch.distributions.Categorical(probs=p).entropy(),
            {
                **entropy_mistakes(p),
                **epsilon_mistake(epsilons, p, got),
                **(
                    {ENTROPY["nan_replaced_after_sum"]: -(p * p.log()).sum(-1).nan_to_num(nan=0.0)}
                    if nan_replaced
                    else {}
                ),
                **(
                    {ENTROPY["fixed_axis"]: entropy_over(axis, p)}
                    if axis is not None and p.dim() >= axis + 2
                    else {}
                ),
            },
            f"attention_entropy of a {shape} input differs from -sum p log p over the last dim (in nats, 0 log 0 = 0)",
            atol=1e-6,
            counterexample=partial(
                smallest_counterexample,
                lambda p: attention_entropy(p),  # positional: the answer names its argument
                entropy_oracle,
                public_distribution,
                PUBLIC_SHAPES,
            ),
        )
    for length in (1, 2, 9):
        uniform = torch.full((3, length), 1.0 / length)
        got = attention_entropy(uniform)
        if not is_close(got, torch.full((3,), math.log(length)), atol=1e-5):
            fail(
                f"uniform attention over {length} keys must have entropy log({length}) = {math.log(length):.4f}"
            )


def raised_over_a_fixed_axis(
    answer: Any, arguments: tuple[Tensor, ...], axis: int | None, mistake: Mistake, name: str
) -> Any:
    """``answer(*arguments)``; where it raises and the answer reduces over the fixed ``axis``
    (fixed_axis_of's experiment) that the arguments lack, a failure naming ``mistake`` above
    the error's own lines."""
    try:
        return answer(*arguments)
    except (CheckFailed, StopChecks, NotImplementedError):
        raise
    except Exception as error:  # noqa: BLE001 - re-raised unless the experiment explains it
        if axis is None or arguments[0].dim() > axis:
            raise
        fail(f"{mistake} ({over_a_fixed_axis(axis, name)})\n{explain(error)}")


def call_total_variation(
    total_variation: Any, p: Tensor, q: Tensor, axis: int | None = None
) -> Any:
    """``total_variation(p, q)``; a failure where it changed p or q, which the reference uses,
    or where it raised for lack of the fixed ``axis`` it reduces over."""
    with inputs_kept("total_variation", p=p, q=q):
        return raised_over_a_fixed_axis(
            total_variation, (p, q), axis, TV["fixed_axis"], "total_variation"
        )


def tv_mistakes_with(axis: int | None, p: Tensor, q: Tensor) -> dict[Mistake, Tensor]:
    """tv_mistakes, and the sum over the fixed ``axis`` where the experiment found one."""
    fixed = (
        {TV["fixed_axis"]: tv_over(axis, p, q)} if axis is not None and p.dim() >= axis + 2 else {}
    )
    return {**tv_mistakes(p, q), **fixed}


@check(
    ASSIGNMENT,
    "test_attention_metrics",
    keeps=(
        r"$\mathrm{TV}(p, q) = \tfrac12 \sum_j |p_j - q_j|$",
        "Both reduce over the last dimension and keep all leading dimensions: `(..., "
        "L_k) -> (...)`.",
        METRICS_KEEP_THEIR_INPUTS,
    ),
)
def total_variation_matches_the_definition(ns: Namespace) -> None:
    total_variation = require(ns, "total_variation")
    g = hidden_generator("a04 tv")
    axis = fixed_axis_of(total_variation, tv_over, 2)
    for shape in metric_shapes(g):
        p = random_distributions(g, shape)
        q = torch.softmax(torch.randn(shape, generator=g, dtype=torch.float64) * 3, dim=-1)
        expected = torch.as_tensor(0.5 * abs(p.numpy() - q.numpy()).sum(-1))
        what = f"total_variation of two {shape} inputs differs from 1/2 * sum |p - q| over the last dim"
        example = partial(
            smallest_counterexample,
            lambda p, q: total_variation(p, q),  # positional: the answer names its arguments
            tv_oracle,
            public_pair,
            PUBLIC_SHAPES,
        )
        diagnose(
            call_total_variation(total_variation, p, q, axis),
            expected,
            tv_mistakes_with(axis, p, q),
            what,
            atol=1e-9,
            counterexample=example,
        )
        diagnose(
            call_total_variation(total_variation, q, p, axis),
            expected,
            tv_mistakes_with(axis, q, p),
            what + " (TV is symmetric)",
            atol=1e-9,
            counterexample=example,
        )
        diagnose(
            call_total_variation(total_variation, p, p, axis),
            torch.zeros(shape[:-1], dtype=torch.float64),
            {},
            "TV(p, p) must be 0",
            atol=1e-12,
            counterexample=example,
        )
    apart = torch.eye(5, dtype=torch.float64)
    distance = total_variation(apart, apart.roll(1, dims=0))
    one = torch.ones(5, dtype=torch.float64)
    diagnose(
        distance,
        one,
        {TV["no_half"]: 2 * one},
        "distributions on different keys must be at TV distance 1",
    )


# Exercise 3, `attention_focus` (test_attention_focus): the score's formula is the student's
# design, so no check compares it with one reference; each tests a property the statement lists,
# on hidden distributions, and a failure shows the rows and the scores it observed.
FOCUS_ATOL = 1e-6
FOCUS = catalogue(
    ASSIGNMENT,
    "attention_focus",
    {
        "axis": {
            "first_axis": "the score depends on the size of the first axis (weights.shape[0]), "
            "not only on the number of keys: it passes when that axis has L_k rows; normalise by "
            "weights.shape[-1], the number of keys",
        },
        "effective number of keys": {
            "one_minus_effective_keys": "the score is 1 - (the effective number of keys) / "
            "L_k: all the weight on one key is an effective number of 1, so it scores "
            "1 - 1 / L_k, where the statement asks for 1",
        },
        "normaliser": {
            "keys_used": "the score is 1 - H / log(the number of non-zero weights): a row with "
            "all its weight on one key, or a single key, gives 0 / log 1 = 0 / 0, NaN",
            "log_num_keys": "the score is 1 - H / log(L_k), right for two keys or more: with a "
            "single key, H = 0 and log 1 = 0, so the score is 0 / 0, NaN",
            "keys_used_jumps": "the score is 1 - H / log(the number of non-zero weights), "
            "not of the number of keys L_k: where weights underflow to exactly 0 as T falls, "
            "that number drops and the score jumps down, so it rises as T grows past that "
            "point",
            "rescaled_from_uniform": "the score is (x - 1/L_k) / (1 - 1/L_k), right for two "
            "keys or more: with a single key x = 1 and 1/L_k = 1, so the score is 0 / 0, NaN",
            "single_key": "the score is not finite for a single key (L_k = 1) alone: on rows of "
            "2 or more keys it is finite and calibrated (0 for uniform rows, 1 for all the "
            "weight on one key, in [0, 1] otherwise); the statement asks for a finite score with "
            "a single key too",
        },
    },
)


def normalised_by_keys_used(focus: Any) -> bool:
    """True when ``focus`` gives 1 - H / log(the number of non-zero weights) on rows of 7 keys,
    some with exact zeros, one with all its weight on one key (0 / 0 there), entropy H in nats."""
    rows = softmax_rows(torch.Generator().manual_seed(4), 5, 7, 1.0)
    rows[1, :3] = 0.0
    rows[2] = nn.functional.one_hot(torch.tensor(5), 7)
    rows[3] = torch.tensor([0.0, 0.25, 0.0, 0.25, 0.25, 0.0, 0.25])
    rows /= rows.sum(-1, keepdim=True)
    entropy = -torch.special.xlogy(rows, rows).sum(-1)
    expected = 1 - entropy / (rows > 0).sum(-1).to(rows.dtype).log()
    try:
        got = focus(rows.clone())
    except Exception:
        return False
    return is_close(got, expected, atol=FOCUS_ATOL, equal_nan=True)


def keys_used_rows() -> Tensor:
    """(6, 7) rows, each with 2 non-zero weights or more, four of them with exact zeros."""
    rows = softmax_rows(torch.Generator().manual_seed(6), 6, 7, 1.0)
    rows[1, :3] = 0.0
    rows[2, 1:6] = 0.0
    rows[3] = torch.tensor([0.0, 0.25, 0.0, 0.25, 0.25, 0.0, 0.25])
    rows[4, ::2] = 0.0
    return rows / rows.sum(-1, keepdim=True)


def normalised_by_keys_used_where_defined(focus: Any) -> bool:
    """True when ``focus`` gives 1 - H / log(the number of non-zero weights) on rows of 7 keys
    that each have 2 non-zero weights or more (no 0 / 0), four of them with exact zeros, where
    that differs from 1 - H / log 7: the normaliser counts the keys with weight, whatever the
    answer does where that count is 1."""
    rows = keys_used_rows()
    entropy = -torch.special.xlogy(rows, rows).sum(-1)
    expected = 1 - entropy / (rows > 0).sum(-1).to(rows.dtype).log()
    try:
        got = focus(rows.clone())
    except Exception:  # noqa: BLE001 - an answer that raises here is not that formula
        return False
    return is_close(got, expected, atol=FOCUS_ATOL)


def formula_fitted(
    focus: Any,
    seed: int,
    formulas: dict[str, Callable[[Tensor], Tensor]],
    score: Callable[[Tensor, int], Tensor],
) -> str | None:
    """The one name of ``formulas`` (name -> x(p), one value per row) for which ``focus`` gives
    score(x, L_k) on calibration rows of 2, 3, 5 and 9 keys drawn from ``seed``; else None."""
    g = torch.Generator().manual_seed(seed)
    matched = set(formulas)
    for num_keys in (2, 3, 5, 9):
        rows = calibration_rows(g, 5, num_keys)
        try:
            got = focus(rows.clone())
        except Exception:  # noqa: BLE001 - an answer that raises here is no such formula
            return None
        matched = {
            name
            for name in matched
            if is_close(got, score(formulas[name](rows), num_keys), atol=FOCUS_ATOL)
        }
    return next(iter(matched)) if len(matched) == 1 else None


def effective_number_of_keys(focus: Any) -> str | None:
    """The effective number of keys N, exp(H) or 1 / sum p², for which ``focus`` gives
    1 - N / L_k on rows of 2, 3, 5 and 9 keys (softmax rows, rows with exact zeros, a row with
    all its weight on one key, a uniform row), as a formula in words; else None. Both are 1 for
    all the weight on one key, so such a score is 1 - 1 / L_k there, never 1."""
    formulas = {
        "exp(H), the perplexity": lambda p: torch.exp(-torch.special.xlogy(p, p).sum(-1)),
        "1 / sum p²": lambda p: 1 / p.square().sum(-1),
    }
    return formula_fitted(focus, 8, formulas, lambda n, num_keys: 1 - n / num_keys)


def normalised_by_log_keys(focus: Any) -> bool:
    """True when ``focus`` gives 1 - H / log(L_k) on rows of 7 keys, some with exact zeros, one
    with all its weight on one key (entropy H in nats), and NaN on rows of a single key: a
    correct score is finite there, so it never passes this."""
    rows = softmax_rows(torch.Generator().manual_seed(4), 5, 7, 1.0)
    rows[1, :3] = 0.0
    rows[2] = nn.functional.one_hot(torch.tensor(5), 7)
    rows /= rows.sum(-1, keepdim=True)
    expected = 1 + torch.special.xlogy(rows, rows).sum(-1) / math.log(7)
    try:
        got, single = focus(rows.clone()), focus(torch.ones(3, 1, dtype=torch.float64))
    except Exception:  # noqa: BLE001 - an answer that raises here is not that formula
        return False
    return is_close(got, expected, atol=FOCUS_ATOL) and bool(torch.isnan(single).all())


def rescaled_from_uniform(focus: Any) -> str | None:
    """The x, the largest weight or sum p², for which ``focus`` gives (x - 1/L_k) / (1 - 1/L_k)
    on rows of 2, 3, 5 and 9 keys (softmax rows, rows with exact zeros, a row with all its weight
    on one key, a uniform row) and NaN on rows of a single key, as words; else None. A correct
    score is finite for a single key, so it never passes this."""
    formulas = {
        "the largest weight": lambda p: p.amax(-1),
        "sum p²": lambda p: p.square().sum(-1),
    }
    name = formula_fitted(
        focus, 10, formulas, lambda x, num_keys: (x - 1 / num_keys) / (1 - 1 / num_keys)
    )
    try:
        single = focus(torch.ones(3, 1, dtype=torch.float64))
    except Exception:  # noqa: BLE001 - an answer that raises here is no such formula
        return None
    if not (isinstance(single, Tensor) and single.shape == (3,) and bool(single.isnan().all())):
        return None
    return name


def calibrated_beyond_one_key(focus: Any) -> bool:
    """True when ``focus`` gives finite scores of the statement's calibration on rows of 2, 3, 5
    and 8 keys: 0 for uniform rows, 1 for rows with all the weight on one key, in [0, 1] for
    softmax rows and rows with exact zeros (the experiment behind single_key: a score that is
    not finite there is wrong beyond the single key)."""
    g = torch.Generator().manual_seed(5)
    for num_keys in (2, 3, 5, 8):
        rows = calibration_rows(g, 6, num_keys)
        try:
            got = focus(rows.clone())
        except Exception:  # noqa: BLE001 - an answer that raises here is wrong beyond one key
            return False
        if not (isinstance(got, Tensor) and got.shape == (6,) and got.is_floating_point()):
            return False
        got = got.detach().to(torch.float64)
        if (
            not torch.isfinite(got).all()
            or not ((got >= -FOCUS_ATOL) & (got <= 1 + FOCUS_ATOL)).all()
        ):
            return False
        if not is_close(got[:2], torch.tensor([0.0, 1.0], dtype=torch.float64), atol=FOCUS_ATOL):
            return False
    return True


def _reads_the_first_axis(focus: Any) -> bool:
    """Whether ``focus`` gives three rows other scores once a fourth row joins them (a score
    normalised by weights.shape[0], the batch, rather than by the number of keys)."""
    rows = torch.rand(4, 5, generator=torch.Generator().manual_seed(4), dtype=torch.float64)
    rows = rows / rows.sum(-1, keepdim=True)
    try:
        three, four = focus(rows[:3].clone()), focus(rows.clone())
    except (NotImplementedError, StopChecks):
        raise
    except Exception:  # noqa: BLE001 - an answer that raises here is not this mistake
        return False
    return (
        isinstance(three, Tensor)
        and isinstance(four, Tensor)
        and tuple(three.shape) == (3,)
        and tuple(four.shape) == (4,)
        and not is_close(three, four[:3], atol=1e-9)
    )


@repairs(ASSIGNMENT, FOCUS["first_axis"], "attention_focus")
def first_axis_of_the_keys_size(focus: Any) -> Any:
    """``focus`` called on its rows stacked L_k times along a new first axis, so that
    weights.shape[0] is the number of keys; a score that reads each row alone is unchanged.
    An answer that does not read the first axis (_reads_the_first_axis) is left as it is: the
    reshape would mend other mistakes too (a squeeze, once told it was this one)."""
    if not _reads_the_first_axis(focus):
        return focus

    def repaired(weights: Tensor) -> Tensor:
        num_keys = weights.shape[-1]
        rows = weights.reshape(1, -1, num_keys).expand(num_keys, -1, -1)
        return focus(rows)[0].reshape(weights.shape[:-1])

    return repaired


TEMPERATURES = torch.logspace(-1.5, 1.5, 13, dtype=torch.float64)  # sharp to nearly uniform


def run_focus(focus: Any, weights: Tensor, what: str, kept: bool = False) -> Tensor:
    """The answer's scores for ``weights`` (..., L_k): a float tensor of shape (...). The answer
    gets a copy of ``weights``, or with ``kept`` the tensor itself, inside inputs_kept (a failure
    naming the write where the call changed it)."""
    given = weights if kept else weights.clone()
    with inputs_kept("attention_focus", weights=weights) if kept else contextlib.nullcontext():
        try:
            scores = focus(given)
        except NotImplementedError:
            raise
        except Exception as error:
            fail(explain(error, "your attention_focus", f" on {what}"))
    expected_shape = tuple(weights.shape[:-1])
    if not (isinstance(scores, Tensor) and tuple(scores.shape) == expected_shape):
        got = f"{type(scores).__name__} {tuple(getattr(scores, 'shape', ()))}"
        seen = (
            f"weights of shape {tuple(weights.shape)} ({what}) must give scores of shape "
            f"{expected_shape}; got {got}"
        )
        if squeezed(scores, expected_shape) and keeps_wider_axes(focus, weights):
            fail(f"{SQUEEZED} ({seen})")
        fail(seen)
    if not scores.is_floating_point():
        fail(f"the scores on {what} are of dtype {scores.dtype}, not a floating-point dtype")
    return scores.detach().to(torch.float64)


def keeps_wider_axes(focus: Any, weights: Tensor) -> bool:
    """Whether ``focus`` gives the scores their full shape once every size-1 axis of
    ``weights`` but the keys' is 2 long: then those axes were lost for their size alone (a
    squeeze), not reduced over (a mean over the queries, which loses them at any size)."""
    wider = weights.expand(
        *(2 if size == 1 else size for size in weights.shape[:-1]), weights.shape[-1]
    ).clone()
    try:
        scores = focus(wider)
    except (NotImplementedError, StopChecks):
        raise
    except Exception:  # noqa: BLE001 - nothing is confirmed by an answer that raises here
        return False
    return isinstance(scores, Tensor) and tuple(scores.shape) == tuple(wider.shape[:-1])


def show_row(row: Tensor) -> str:
    """A distribution, rounded for a message."""
    return (
        "["
        + ", ".join(f"{float(v):.3g}" for v in row.flatten()[:8])
        + (", ...]" if row.numel() > 8 else "]")
    )


def focus_lengths(generator: torch.Generator) -> list[int]:
    """Three numbers of keys, all at least 2 and all different, one of them large."""
    small = random_sizes(generator, 2, low=2, high=9)
    return [*small, int(torch.randint(20, 60, (1,), generator=generator))]


def calibration_rows(g: torch.Generator, count: int, num_keys: int) -> Tensor:
    """(count, num_keys) softmax rows whose first is uniform, second all on the last key, and
    third with key 0 at exactly 0: the rows the statement's calibration speaks of."""
    rows = softmax_rows(g, count, num_keys, 2.0)
    rows[0] = 1 / num_keys
    rows[1] = nn.functional.one_hot(torch.tensor(num_keys - 1), num_keys)
    rows[2, 0] = 0.0
    rows[2] /= rows[2].sum()
    return rows


def softmax_rows(generator: torch.Generator, rows: int, num_keys: int, spread: float) -> Tensor:
    """(rows, num_keys) softmax distributions of scores drawn at scale ``spread``."""
    scores = spread * torch.randn(rows, num_keys, generator=generator, dtype=torch.float64)
    return torch.softmax(scores, dim=-1)


@check(
    ASSIGNMENT,
    "test_attention_focus",
    keeps=(
        r"calibrated: for every $L_k \ge 2$, uniform attention scores 0, all the weight "
        "on one key scores 1, and every other distribution scores something in $[0, 1]$",
    ),
)
def attention_focus_is_calibrated(ns: Namespace) -> None:
    """0 for uniform, 1 for one key, within [0, 1] otherwise, at several lengths and batch shapes."""
    focus = require(ns, "attention_focus")
    g = hidden_generator("a04 focus calibrated")
    for num_keys in focus_lengths(g):
        lead = tuple(random_sizes(g, 2, low=2, high=5))
        # Also more rows than keys: a score that reads L_k from the first axis (len(weights)) is
        # off there whatever the draw (blind answer v04-05 kept full marks under its secret).
        for rows in (lead, (num_keys + 3,)):
            uniform = torch.full((*rows, num_keys), 1 / num_keys, dtype=torch.float64)
            got = run_focus(focus, uniform, f"uniform rows of {num_keys} keys")
            if not is_close(got, torch.zeros(rows, dtype=torch.float64), atol=FOCUS_ATOL):
                fail(
                    f"uniform rows of {num_keys} keys, {tuple(uniform.shape)} in all, score "
                    f"{float(got.flatten()[0]):.4g}, where the statement asks for 0"
                )
        keys = torch.randint(num_keys, lead, generator=g)
        one_key = nn.functional.one_hot(keys, num_keys).to(torch.float64)
        got = run_focus(focus, one_key, f"rows of {num_keys} keys with all the weight on one")
        if not is_close(got, torch.ones(lead, dtype=torch.float64), atol=FOCUS_ATOL):
            index = int((~((got - 1).abs() <= FOCUS_ATOL)).flatten().nonzero()[0])
            seen = (
                f"all the weight on key {int(keys.flatten()[index])} of {num_keys} scores "
                f"{float(got.flatten()[index]):.4g}, where the statement asks for 1"
            )
            if normalised_by_keys_used(focus):
                fail(f"{FOCUS['keys_used']} ({seen})")
            effective = effective_number_of_keys(focus)
            if effective is not None:
                fail(
                    f"{FOCUS['one_minus_effective_keys']} ({seen}; on rows of 2, 3, 5 and 9 "
                    f"keys your score is 1 - N / L_k with N = {effective})"
                )
            fail(seen)
        for spread in (0.3, 1.0, 4.0):
            rows = softmax_rows(g, 6, num_keys, spread)
            got = run_focus(focus, rows, f"softmax rows of {num_keys} keys")
            outside = ~((got >= -FOCUS_ATOL) & (got <= 1 + FOCUS_ATOL))
            if outside.any():
                index = int(outside.nonzero()[0])
                fail(
                    f"the distribution {show_row(rows[index])} ({num_keys} keys) scores "
                    f"{float(got[index]):.4g}, outside [0, 1]"
                )


@check(
    ASSIGNMENT,
    "test_attention_focus",
    weight=EDGE_CASES,
    keeps=(
        "blind to order: permuting the keys leaves the score unchanged",
        r"sharper means more focused: for the weights $\mathrm{softmax}(s / T)$ of any "
        "scores $s$, the score never rises as the temperature $T$ grows",
    ),
)
def attention_focus_ignores_order_and_falls_with_temperature(ns: Namespace) -> None:
    """Permuted keys score alike; softmax(s / T) scores never rise as T grows."""
    focus = require(ns, "attention_focus")
    g = hidden_generator("a04 focus order and temperature")
    for num_keys in focus_lengths(g):
        rows = softmax_rows(g, 5, num_keys, 2.0)
        rows[0, torch.randperm(num_keys, generator=g)[: num_keys // 2]] = 0.0  # masked keys
        rows[0] /= rows[0].sum()
        permutation = torch.randperm(num_keys, generator=g)
        got = run_focus(focus, rows, f"rows of {num_keys} keys")
        permuted = run_focus(focus, rows[:, permutation], f"rows of {num_keys} keys, permuted")
        if not is_close(permuted, got, atol=FOCUS_ATOL):
            index = int((~((permuted - got).abs() <= FOCUS_ATOL)).nonzero()[0])
            fail(
                f"the distribution {show_row(rows[index])} scores {float(got[index]):.4g}, and the "
                f"same weights with the keys permuted, {show_row(rows[index, permutation])}, score "
                f"{float(permuted[index]):.4g}"
            )
        scores = 3 * torch.randn(4, num_keys, generator=g, dtype=torch.float64)
        if num_keys >= 3:
            # Two more rows with 1 to L_k - 2 keys 200 to 400 below the others: at the sharp end
            # of the path their weights underflow to exact zeros, which warmer T brings back.
            close = 0.5 * torch.randn(2, num_keys, generator=g, dtype=torch.float64)
            for row in close:
                far = torch.randperm(num_keys, generator=g)[
                    : int(torch.randint(1, num_keys - 1, (), generator=g))
                ]
                row[far] -= 200 + 200 * torch.rand(len(far), generator=g, dtype=torch.float64)
            scores = torch.cat([scores, close])
        path = torch.softmax(scores[:, None] / TEMPERATURES[:, None], dim=-1)  # (rows, T, L_k)
        got = run_focus(focus, path, f"softmax(s / T) rows of {num_keys} keys")
        rises = got[:, 1:] > got[:, :-1] + FOCUS_ATOL
        if rises.any():
            row, step = (int(i) for i in rises.nonzero()[0])
            low, high = float(TEMPERATURES[step]), float(TEMPERATURES[step + 1])
            seen = (
                f"for the scores s = {show_row(scores[row])} ({num_keys} keys), softmax(s / T) "
                f"scores {float(got[row, step]):.4g} at T = {low:.3g} and {float(got[row, step + 1]):.4g} "
                f"at T = {high:.3g}: the score rose as T grew"
            )
            used = (path[row, step : step + 2] > 0).sum(-1)
            if used[0] < used[1] and normalised_by_keys_used_where_defined(focus):
                fail(
                    f"{FOCUS['keys_used_jumps']} ({seen}; {int(used[0])} of the weights are "
                    f"non-zero at T = {low:.3g}, {int(used[1])} at T = {high:.3g})"
                )
            fail(seen)


@check(
    ASSIGNMENT,
    "test_attention_focus",
    weight=EDGE_CASES,
    keeps=(
        "defined everywhere: every score is finite, with exact zeros in a row, with a "
        "single key ($L_k = 1$",
        "with no leading dimension (one `(L_k,)` row gives a 0-dim tensor)",
        FOCUS_KEEPS_ITS_INPUT,
    ),
)
def attention_focus_is_defined_everywhere(ns: Namespace) -> None:
    """Finite scores for rows with exact zeros, for a single key, for a 0-dim batch."""
    focus = require(ns, "attention_focus")
    g = hidden_generator("a04 focus everywhere")
    num_keys = random_sizes(g, 1, low=3, high=9)[0]
    sparse = softmax_rows(g, 4, num_keys, 1.0)
    sparse[sparse < sparse.median(dim=-1, keepdim=True).values] = 0.0  # about half the keys masked
    sparse /= sparse.sum(-1, keepdim=True)
    rows_of_one = random_sizes(g, 1, low=2, high=6)[0]
    cases = [
        (sparse, f"rows of {num_keys} keys with exact zeros, such as {show_row(sparse[0])}"),
        (torch.ones(rows_of_one, 1, dtype=torch.float64), f"{rows_of_one} rows of a single key"),
        (sparse[0], f"one row of {num_keys} keys with no leading dimension, {show_row(sparse[0])}"),
        (sparse[:, None, :], f"rows of shape {tuple(sparse[:, None].shape)}, an axis of size 1"),
    ]
    for weights, what in cases:
        got = run_focus(focus, weights.clone(), what, kept=True)
        if not torch.isfinite(got).all():
            seen = f"{what}: non-finite scores {got.flatten().tolist()[:6]}"
            if normalised_by_keys_used(focus):
                fail(f"{FOCUS['keys_used']} ({seen})")
            if normalised_by_log_keys(focus):
                fail(f"{FOCUS['log_num_keys']} ({seen})")
            rescaled = rescaled_from_uniform(focus) if weights.shape[-1] == 1 else None
            if rescaled is not None:
                fail(
                    f"{FOCUS['rescaled_from_uniform']} ({seen}; on rows of 2, 3, 5 and 9 keys "
                    f"your score is that with x = {rescaled})"
                )
            if weights.shape[-1] == 1 and calibrated_beyond_one_key(focus):
                fail(f"{FOCUS['single_key']} ({seen})")
            fail(seen)
        if not ((got >= -FOCUS_ATOL) & (got <= 1 + FOCUS_ATOL)).all():
            fail(f"{what}: scores {got.flatten().tolist()[:6]}, not all in [0, 1]")
