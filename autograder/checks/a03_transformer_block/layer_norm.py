"""Exercise 3, `LayerNorm` (test_layer_norm): against nn.LayerNorm, values and gradients."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import torch
from torch import Tensor, nn
from torch.nn import functional as F

import attention_lab.reference.a03_transformer_block as reference
from autograder.authoring.closeness import first_difference, is_close
from autograder.authoring.counterexample import small_integers, smallest_module_counterexample
from autograder.authoring.diagnosis import SQUEEZED, borne_out, diagnose, squeezed
from autograder.authoring.hidden_draws import hidden_generator, random_sizes
from autograder.authoring.in_place_writes import inputs_kept
from autograder.authoring.kernel_objects import copy_into, observe_call
from autograder.authoring.mistakes import Mistake, catalogue
from autograder.authoring.reference_bans import ban
from autograder.authoring.registry import CheckFailed, Namespace, check, fail
from autograder.authoring.requiring import require
from autograder.checks.a03_transformer_block.shared import ASSIGNMENT
from autograder.judging.kernel import function_name

LAYER_NORM_BANNED = {
    "nn.LayerNorm": nn.LayerNorm,
    "F.layer_norm": F.layer_norm,
    "torch.layer_norm": torch.layer_norm,
    "torch.native_layer_norm": torch.native_layer_norm,
    "attention_lab's LayerNorm": reference.LayerNorm,
}


def layer_norm_variant(
    x: Tensor,
    weight: Tensor,
    bias: Tensor,
    eps: float,
    *,
    correction: int = 0,
    eps_at: str = "inside",
    dims: str = "last",
    affine: str = "scale then shift",
) -> Tensor:
    """LayerNorm in float64, with one detail changed per keyword."""
    dim = {"last": (-1,), "first": (0,), "last two": (-2, -1), "all": tuple(range(x.dim()))}[dims]
    mean = x.mean(dim=dim, keepdim=True)
    var = x.var(dim=dim, keepdim=True, correction=correction)
    if eps_at == "inside":
        normed = (x - mean) / torch.sqrt(var + eps)
    elif eps_at == "outside":
        normed = (x - mean) / (torch.sqrt(var) + eps)
    elif eps_at == "missing":
        normed = (x - mean) / torch.sqrt(var)
    elif eps_at == "1e-5":
        normed = (x - mean) / torch.sqrt(var + 1e-5)
    elif eps_at == "outside, 1e-5":
        normed = (x - mean) / (torch.sqrt(var) + 1e-5)
    if affine == "scale then shift":
        return normed * weight + bias
    if affine == "none":
        return normed
    if affine == "scale only":
        return normed * weight
    if affine == "swapped":
        return normed * bias + weight
    return (normed + bias) * weight  # "shift then scale"


# The named mistakes of LayerNorm, by family (autograder/authoring/mistakes.py): each is
# diagnosed only where the output matches that variant of the formula (layer_norm_variant).
NORM = catalogue(
    ASSIGNMENT,
    "LayerNorm",
    {
        "variance": {
            "unbiased": "the variance is unbiased (divides by d - 1): LayerNorm uses the biased "
            "variance, divide by d (x.var(-1, unbiased=False) or the mean of squared deviations)",
            "std_unbiased_eps_outside": "x.std() is unbiased (divides by d - 1) and eps is added "
            "outside the root: use sqrt(biased variance + eps)",
            "one_pass": "the variance is computed as E[x²] - E[x]², which cancels in float32 on "
            "vectors almost constant far from zero (your output is that formula's in float32, "
            "and is right in float64): take the mean of the squared deviations, (x - μ)²",
        },
        "eps": {
            "eps_outside": "eps is added outside the square root (std + eps): it goes inside, "
            "sqrt(variance + eps)",
            "fixed_eps_outside": "a hard-coded 1e-5 is added outside the square root: use "
            "sqrt(variance + self.eps)",
            "no_eps": "eps is missing: divide by sqrt(variance + eps)",
            "fixed_eps": "eps is hard-coded as 1e-5: use self.eps, the eps passed to __init__",
        },
        "affine": {
            "no_affine": "gamma (self.weight) and beta (self.bias) are not applied: return x_hat "
            "* self.weight + self.bias",
            "no_shift": "beta (self.bias) is not added: the output is x_hat * self.weight, "
            "without the learned shift",
            "affine_swapped": "gamma and beta are swapped: scale by self.weight, then shift by "
            "self.bias",
            "shift_then_scale": "beta is added before scaling by gamma: return x_hat * "
            "self.weight + self.bias",
        },
        "gradient": {
            "detached_statistics": "the mean and the variance are detached: the gradient with "
            "respect to the input flows through them too, so do not call .detach() on either",
            "detached_mean": "the mean is detached: the gradient with respect to the input "
            "flows through it too, so do not call .detach() on it",
            "detached_variance": "the variance is detached: the gradient with respect to the "
            "input flows through it too, so do not call .detach() on it",
        },
        "input shape": {
            "three_d_only": "LayerNorm works on (B, L, d_model) inputs only: it must take any "
            "(..., d_model) tensor, so normalise over dim=-1 with keepdim=True and do not "
            "unpack a fixed number of axes",
        },
        "axis": {
            "all_dimensions": "mean and variance are taken over the whole tensor: normalise each "
            "vector over its LAST dimension only (dim=-1, keepdim=True)",
            "first_dimension": "normalised over the first dimension: take the mean and variance "
            "over the LAST dimension (dim=-1, keepdim=True)",
            "positions_and_features": "mean and variance are taken over the positions and the "
            "features together (the last two dimensions of a (B, L, d_model) input): normalise "
            "each vector over its LAST dimension only (dim=-1, keepdim=True)",
        },
    },
)


def layer_norm_mistakes(
    x: Tensor, weight: Tensor, bias: Tensor, eps: float
) -> dict[Mistake, Tensor]:
    def variant(**change: Any) -> Tensor:
        return layer_norm_variant(x, weight, bias, eps, **change)

    mistakes = {
        NORM["unbiased"]: variant(correction=1),
        NORM["eps_outside"]: variant(eps_at="outside"),
        NORM["std_unbiased_eps_outside"]: variant(correction=1, eps_at="outside"),
        NORM["no_eps"]: variant(eps_at="missing"),
        NORM["no_affine"]: variant(affine="none"),
        NORM["no_shift"]: variant(affine="scale only"),
        NORM["affine_swapped"]: variant(affine="swapped"),
        NORM["shift_then_scale"]: variant(affine="shift then scale"),
        NORM["all_dimensions"]: variant(dims="all"),
    }
    if x.dim() > 1 and x.shape[0] > 1:
        mistakes[NORM["first_dimension"]] = variant(dims="first")
    if x.dim() == 3 and x.shape[1] > 1:  # on 3-D inputs alone: positions are the axis -2 there
        mistakes[NORM["positions_and_features"]] = variant(dims="last two")
    if eps != 1e-5:  # with eps = 1e-5 a hard-coded 1e-5 gives the same output as self.eps
        mistakes[NORM["fixed_eps_outside"]] = variant(eps_at="outside, 1e-5")
        mistakes[NORM["fixed_eps"]] = variant(eps_at="1e-5")
    return mistakes


def input_gradient_detached(
    x: Tensor, weight: Tensor, bias: Tensor, eps: float, upstream: Tensor, detached: set[str]
) -> Tensor:
    """d(sum(LayerNorm(x) * upstream))/dx with the ``detached`` statistics ("mean",
    "variance") cut from autograd, in float64."""
    x = x.detach().clone().requires_grad_(True)
    mean = x.mean(dim=-1, keepdim=True)
    mean = mean.detach() if "mean" in detached else mean
    variance = (x - mean).pow(2).mean(dim=-1, keepdim=True)
    variance = variance.detach() if "variance" in detached else variance
    out = (x - mean) / torch.sqrt(variance + eps) * weight.detach() + bias.detach()
    (grad,) = torch.autograd.grad((out * upstream).sum(), x)
    return grad


def gradient_mistakes(
    x: Tensor, weight: Tensor, bias: Tensor, eps: float, upstream: Tensor
) -> dict[Mistake, Tensor]:
    """The input gradients of LayerNorm with its statistics detached, each way."""
    return {
        NORM[f"detached_{name}"]: input_gradient_detached(x, weight, bias, eps, upstream, cut)
        for name, cut in (
            ("statistics", {"mean", "variance"}),
            ("mean", {"mean"}),
            ("variance", {"variance"}),
        )
    }


def build_layer_norm(
    cls: type, d: int, eps: float, generator: torch.Generator, dtype=torch.float64
):
    """(the student's LayerNorm, nn.LayerNorm) with the same random gamma and beta, in dtype."""
    with torch.random.fork_rng(devices=[]):
        mine = cls(d, eps=eps)
    if not isinstance(mine, nn.Module):
        fail(
            f"LayerNorm({d}, eps={eps}) is a {type(mine).__name__}, not an nn.Module, as the "
            "statement's class LayerNorm(nn.Module) is"
        )
    weight, bias = getattr(mine, "weight", None), getattr(mine, "bias", None)
    if not (isinstance(weight, nn.Parameter) and isinstance(bias, nn.Parameter)):
        fail(
            f"self.weight and self.bias are {type(weight).__name__} and {type(bias).__name__}: "
            "the given __init__ makes them nn.Parameters (gamma and beta)"
        )
    if weight.shape != (d,) or bias.shape != (d,):
        fail(
            f"self.weight and self.bias have shapes {tuple(weight.shape)} and "
            f"{tuple(bias.shape)} for d_model={d}: the given __init__ makes them ({d},)"
        )
    if getattr(mine, "eps", None) != eps:
        fail(
            f"LayerNorm({d}, eps={eps}) has self.eps = {getattr(mine, 'eps', None)!r}: the given "
            "__init__ stores the eps argument as self.eps"
        )
    theirs = nn.LayerNorm(d, eps=eps)
    new_weight = torch.rand(d, generator=generator) * 3 - 1
    new_bias = torch.randn(d, generator=generator)
    copy_into(mine, "weight", new_weight)
    copy_into(mine, "bias", new_bias)
    with torch.no_grad():
        theirs.weight.copy_(new_weight)
        theirs.bias.copy_(new_bias)
    return mine.to(dtype), theirs.to(dtype)


def layer_norm_input(generator: torch.Generator, lead: tuple[int, ...], d: int) -> Tensor:
    """float64 rows with very different scales and offsets, some almost constant."""
    scale = 10.0 ** (torch.rand(*lead, 1, generator=generator, dtype=torch.float64) * 5 - 3)
    offset = torch.randn(*lead, 1, generator=generator, dtype=torch.float64) * 20
    return torch.randn(*lead, d, generator=generator, dtype=torch.float64) * scale + offset


def call_layer_norm(layer_norm: nn.Module, x: Tensor, theirs: nn.LayerNorm) -> Any:
    """layer_norm(x), or a failure that says any (..., d_model) input is allowed; a LayerNorm
    that fails on ``x`` but is right on the same vectors as one (1, N, d_model) batch is told it
    works for (B, L, d_model) inputs only; a failure where it wrote into x, which the reference
    uses."""
    try:
        with inputs_kept("LayerNorm", x=x):
            return layer_norm(x)
    except (NotImplementedError, CheckFailed):  # the stub, or a write into x
        raise
    except Exception as error:
        if x.dim() == 3:
            raise
        raised = f"your LayerNorm raised {type(error).__name__}: {error}"
    batch = x.reshape(1, -1, x.shape[-1])
    try:
        three_d_only = is_close(layer_norm(batch), theirs(batch), atol=1e-7)
    except Exception:
        three_d_only = False
    if three_d_only:
        fail(
            f"{NORM['three_d_only']} (it fails on a {x.dim()}-D input of shape "
            f"{tuple(x.shape)})\n{raised}"
        )
    fail(
        f"LayerNorm fails on a {x.dim()}-D input of shape {tuple(x.shape)}, where the statement "
        f"allows any (..., d_model) tensor\n{raised}"
    )


ban(ASSIGNMENT, "LayerNorm", LAYER_NORM_BANNED)


# A gate: calling the reference would pass the other checks, which must then earn nothing.
@check(
    ASSIGNMENT,
    "test_layer_norm",
    gate=True,
    keeps=("Do not call `F.layer_norm` or `nn.LayerNorm`.",),
)
def layer_norm_runs_no_reference(ns: Namespace) -> None:
    cls = require(ns, "LayerNorm", type)
    g = hidden_generator("a03 layer norm calls")
    mine, _ = build_layer_norm(cls, 5, 1e-5, g)
    _, called = observe_call(
        "torch_functions", mine, torch.randn(2, 3, 5, generator=g, dtype=torch.float64)
    )
    for label in ("F.layer_norm", "torch.layer_norm", "torch.native_layer_norm"):
        if function_name(LAYER_NORM_BANNED[label]) in called:
            fail(
                f"`LayerNorm` calls {label} instead of implementing it: compute the mean and variance "
                "yourself (no credit for calling the reference)"
            )


@check(
    ASSIGNMENT,
    "test_layer_norm",
    keeps=(
        "implement layer normalisation and match `nn.LayerNorm` to floating-point precision",
        "Write `forward` for inputs of shape `(..., d_model)`, normalising over the "
        "last dimension only.",
        "the variance is the biased one: divide by $d$, not $d-1$",
        r"$\varepsilon$ (default `1e-5`) goes inside the square root",
    ),
)
def layer_norm_matches_torch(ns: Namespace) -> None:
    cls = require(ns, "LayerNorm", type)
    g = hidden_generator("a03 layer norm")
    ds = [2, *random_sizes(g, 3, low=3, high=40)]
    trials = []
    for trial, (d, eps) in enumerate(zip(ds, (1e-5, 1e-3, 1e-6, 1e-3), strict=True)):
        lead = tuple(random_sizes(g, trial % 3 + 1, low=2, high=6))
        trials.append(outcome_on(cls, g, lead, d, eps))
    # A batch of one sequence of one vector, and a single vector (..., d_model) with no lead axis.
    for lead, d in (((1, 1), ds[1]), ((), ds[2])):
        trials.append(outcome_on(cls, g, lead, d, 1e-3))
    # A mistake is named only where every trial the answer is wrong on bears it out: with d = 2
    # a missing eps and one added outside the root give the same numbers; other trials do not.
    named = borne_out(
        [(out, expected, mistakes) for out, expected, mistakes, _ in trials],
        atol=1e-7,
        where_defined=True,  # positions_and_features: of 3-D inputs alone
    )
    for out, expected, mistakes, eps in trials:
        diagnose(
            out,
            expected,
            {mistake: value for mistake, value in mistakes.items() if mistake in named},
            f"LayerNorm differs from nn.LayerNorm with the same weight and bias (input "
            f"{tuple(expected.shape)}, eps={eps})",
            atol=1e-7,
            counterexample=lambda eps=eps: smaller_layer_norm_example(cls, eps),
        )


def outcome_on(
    cls: type, g: torch.Generator, lead: tuple[int, ...], d: int, eps: float
) -> tuple[Tensor, Tensor, dict, float]:
    """The student's LayerNorm on a (*lead, d) input, nn.LayerNorm's output and the mistakes'
    outputs, and eps; a failure where the answer does not keep the input's shape."""
    mine, theirs = build_layer_norm(cls, d, eps, g)
    x = layer_norm_input(g, lead, d)
    with torch.no_grad():
        out = call_layer_norm(mine, x, theirs)
        expected = theirs(x)
    if squeezed(out, x.shape):
        fail(f"{SQUEEZED} (LayerNorm must keep the shape {tuple(x.shape)}, got {tuple(out.shape)})")
    if not isinstance(out, Tensor) or out.shape != x.shape:
        fail(
            f"LayerNorm must keep the shape {tuple(x.shape)}, got {tuple(getattr(out, 'shape', ()))}"
        )
    mistakes = layer_norm_mistakes(x, theirs.weight.detach(), theirs.bias.detach(), eps)
    if eps == 1e-5:  # a hard-coded 1e-5 outside the root is the eps outside it, here
        mistakes[NORM["fixed_eps_outside"]] = mistakes[NORM["eps_outside"]]
    return out, expected, mistakes, eps


# The public (N, d_model) a counterexample is looked for at, smallest first.
EXAMPLE_SIZES = sorted(
    ((n, d) for n in (1, 2) for d in (1, 2, 3, 4)), key=lambda size: (sum(size), size)
)


def smaller_layer_norm_example(cls: type, eps: float) -> str | None:
    """The student's LayerNorm(d, eps) against attention_lab's, both given the same small integer
    weight and bias, on public (N, d) integer inputs: a counterexample, or None."""

    def inputs(g: torch.Generator, size: tuple[int, ...]) -> dict[str, Tensor]:
        return {"x": small_integers(g, *size)}

    def module(of: type) -> Callable[[tuple[int, ...]], nn.Module]:
        return lambda size: of(size[1], eps=eps)

    found = smallest_module_counterexample(
        module(cls), module(reference.LayerNorm), inputs, EXAMPLE_SIZES
    )
    return f"with eps={eps}, {found}" if found else None


@check(
    ASSIGNMENT,
    "test_layer_norm",
    keeps=(
        "implement layer normalisation and match `nn.LayerNorm` to floating-point precision",
        r"then applies a learned per-feature scale $\gamma$ and shift $\beta$",
    ),
)
def layer_norm_gradients_match_torch(ns: Namespace) -> None:
    cls = require(ns, "LayerNorm", type)
    g = hidden_generator("a03 layer norm grad")
    lead_1, lead_2, d = random_sizes(g, 3, low=2, high=9)
    eps = 1e-4
    mine, theirs = build_layer_norm(cls, d, eps, g)
    x = layer_norm_input(g, (lead_1, lead_2), d)
    x_mine, x_theirs = x.clone().requires_grad_(True), x.clone().requires_grad_(True)
    upstream = torch.randn(x.shape, generator=g, dtype=torch.float64)
    out = mine(x_mine)
    if not out.requires_grad:
        fail(
            "LayerNorm of an input that requires grad gave an output that does not: the output "
            "is cut from autograd"
        )
    expected = theirs(x_theirs)
    (out * upstream).sum().backward()
    (expected * upstream).sum().backward()
    for name, a, b in (
        ("the input", x_mine.grad, x_theirs.grad),
        ("self.weight", mine.weight.grad, theirs.weight.grad),
        ("self.bias", mine.bias.grad, theirs.bias.grad),
    ):
        if a is not None and torch.allclose(a, b, atol=1e-7, rtol=1e-5):
            continue
        # A wrong output has wrong gradients whatever the backward pass does: say only that.
        if not torch.allclose(out, expected, atol=1e-7, rtol=1e-5):
            fail(
                f"the output already differs from nn.LayerNorm on this input "
                f"({first_difference(out, expected, 1e-7)}), so the gradients differ too"
            )
        if a is None:
            fail(
                f"{name} receives no gradient although the output matches nn.LayerNorm: "
                f"forward does not use {name} itself in the computation autograd records"
            )
        otherwise = (
            f"the output matches nn.LayerNorm, but the gradient with respect to {name} differs"
        )
        if name == "the input":
            weight, bias = theirs.weight, theirs.bias
            mistakes = gradient_mistakes(x, weight, bias, eps, upstream)
            diagnose(a, b, mistakes, otherwise, atol=1e-7)
        fail(f"{otherwise} ({first_difference(a, b, 1e-7)})")


@check(
    ASSIGNMENT,
    "test_layer_norm",
    keeps=(
        "implement layer normalisation and match `nn.LayerNorm` to floating-point precision",
        "it matters when a vector is almost constant",
    ),
)
def layer_norm_float32_and_constant_vectors(ns: Namespace) -> None:
    cls = require(ns, "LayerNorm", type)
    g = hidden_generator("a03 layer norm float32")
    b, length, d = random_sizes(g, 3, low=2, high=12)
    mine, theirs = build_layer_norm(cls, d, 1e-5, g, dtype=torch.float32)
    x = torch.randn(b, length, d, generator=g) * 3 + 2  # well conditioned for float32
    with torch.no_grad():
        out = mine(x)
        if out.dtype != torch.float32:
            fail(f"a float32 input must give a float32 output, got {out.dtype}")
        expected = theirs(x)
        if not torch.allclose(out, expected, atol=1e-4, rtol=1e-4):
            if is_one_pass(mine, theirs, x, out):  # cancels on a few features too (j03-09)
                fail(
                    f"{NORM['one_pass']} (on a float32 input of shape {tuple(x.shape)}: "
                    f"{first_difference(out, expected, 1e-4)})"
                )
            fail(
                f"LayerNorm differs from nn.LayerNorm on a float32 input of shape {tuple(x.shape)} "
                f"({first_difference(out, expected, 1e-4)})"
            )
        constant = mine(torch.full((b, d), -7.5))
        almost_constant_vectors(mine, theirs, g)
    if not torch.isfinite(constant).all():
        fail(f"LayerNorm of a constant vector (every value -7.5, d_model={d}) gives NaN or inf")
    beta = theirs.bias.detach().expand(b, d)
    if not torch.allclose(constant, beta, atol=1e-5):
        fail(
            f"LayerNorm of a constant vector (every value -7.5) is not beta (self.bias), which "
            f"it must be, x - mean being zero there ({first_difference(constant, beta, 1e-5)})"
        )


def is_one_pass(mine: nn.Module, theirs: nn.LayerNorm, x: Tensor, out: Tensor) -> bool:
    """Whether ``out``, the answer's float32 output on ``x``, is the one-pass variance's
    (E[x²] - E[x]²) in float32, and the answer is right on ``x`` in float64 (where that formula
    loses nothing here): a correct answer, within 1e-4 of nn.LayerNorm, never gets this far."""
    weight, bias = theirs.weight.float(), theirs.bias.float()
    mean = x.mean(-1, keepdim=True)
    one_pass = (x - mean) * torch.rsqrt((x * x).mean(-1, keepdim=True) - mean * mean + theirs.eps)
    in_float64 = copy.deepcopy(mine).double()(x.double())
    return is_close(out, one_pass * weight + bias, atol=1e-4) and is_close(
        in_float64, copy.deepcopy(theirs).double()(x.double()), atol=1e-7
    )


def almost_constant_vectors(mine: nn.Module, theirs: nn.LayerNorm, g: torch.Generator) -> None:
    """float32 vectors of spread 0.02 to 0.04 about offsets of 4 to 8 in size, against
    nn.LayerNorm: a correct float32 LayerNorm is off it by 3e-4 at most there, while the
    variance as E[x²] - E[x]² loses a few float32 units of E[x²] (5e-3 or more; measured over
    300 draws of these sizes)."""
    b, length = random_sizes(g, 2, low=2, high=12)
    d = theirs.weight.shape[0]
    offset = (torch.rand(b, length, 1, generator=g) * 4 + 4) * (
        torch.randint(2, (b, length, 1), generator=g) * 2 - 1
    )
    spread = torch.rand(b, length, 1, generator=g) * 0.02 + 0.02
    x = torch.randn(b, length, d, generator=g) * spread + offset
    out, expected = mine(x), theirs(x)
    if is_close(out, expected, atol=1e-3):
        return
    if is_one_pass(mine, theirs, x, out):
        fail(f"{NORM['one_pass']} (on {tuple(x.shape)}: {first_difference(out, expected, 1e-3)})")
    fail(
        f"LayerNorm differs from nn.LayerNorm on float32 vectors almost constant far from zero "
        f"(spread 0.02 to 0.04 about offsets of 4 to 8 in size, shape {tuple(x.shape)}: "
        f"{first_difference(out, expected, 1e-3)})"
    )
