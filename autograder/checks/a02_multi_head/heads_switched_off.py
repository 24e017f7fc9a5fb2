"""Exercise 4, `heads_switched_off` (test_heads_switched_off): head ablation, by design.

What a switched-off head contributes, and whether the kept heads are rescaled, is the student's
design, so nothing here compares with one reference output. Each check tests a property the
statement lists, on attention_lab's layer with hidden weights: changing only an off head's rows
of the projections leaves the output alone, changing a kept head's value rows does not, all heads
on is the layer itself, and the output stays finite with every head off. A failure says which
heads were on, what was changed and what was observed; where the checks pass on the answer given
``~keep`` instead, that experiment names the reversed mask.
"""

from __future__ import annotations

import copy
from collections.abc import Callable

import torch
from torch import Tensor, nn

from attention_lab.reference.a01_attention import scaled_dot_product_attention
from attention_lab.reference.a02_multi_head import MultiHeadAttention
from autograder.authoring.closeness import is_close
from autograder.authoring.dependencies import depends_on
from autograder.authoring.hidden_draws import hidden_generator, random_sizes, under_seed
from autograder.authoring.mistakes import catalogue
from autograder.authoring.registry import EDGE_CASES, CheckFailed, Namespace, check, fail
from autograder.authoring.repairs import repairs
from autograder.authoring.requiring import require
from autograder.authoring.student_errors import explain
from autograder.checks.a02_multi_head.shared import ASSIGNMENT, oracle_merge, oracle_split

ATOL = 1e-9  # float64 throughout
ABLATION = catalogue(
    ASSIGNMENT,
    "heads_switched_off",
    {
        "keep polarity": {
            "keep_reversed": "keep is read the wrong way round: True marks a head that stays "
            "on, so switch off the heads where keep is False",
        },
        "what an off head passes on": {
            "uniform_weights": "the output is the layer's with each off head's scores all zero "
            "(what a zero query or key gives), so its weights are uniform over the keys and it "
            "still adds the mean of its values to the output",
            "value_bias_left_on": "an off head still passes on its rows of v_proj.bias: its "
            "weights sum to 1 over the keys, so with its rows of v_proj's weight zeroed its "
            "output is that bias at every position, and out_proj carries it into the output",
        },
        "every head off": {
            "all_off_is_the_layer": "with every head off the output is mha(x)[0], the layer's "
            "output with every head on",
            "rescaled_by_kept_count": "your rescale divides by the number of kept heads, which "
            "is 0 when every head is off: with n of the H heads kept, your output is the "
            "layer's with each off head's output zeroed and each kept head's multiplied by a "
            "constant over n before out_proj (finite whenever a head is kept), and with none "
            "kept that is a division by zero",
        },
        "output bias": {
            "out_proj_bias_missing": "out_proj's bias is missing from the output: with every "
            "head on, your output plus out_proj.bias is mha(x)[0] at every position, and on the "
            "same layer with that bias set to zero your output is the layer's",
        },
        "head layout": {
            "keep_tiled": "the features the output ignores are those keep.repeat(d_k) marks off "
            "(the heads tiled: feature f follows head f mod H), not each off head's d_k "
            "consecutive features, which keep.repeat_interleave(d_k) marks",
        },
    },
)


# The answer may be built on the student's split_heads and merge_heads, or not: their design.
depends_on(
    ASSIGNMENT,
    ["test_heads_switched_off"],
    {"split_heads": ["test_split_heads"], "merge_heads": ["test_merge_heads"]},
    by_design=False,
)


@repairs(ASSIGNMENT, ABLATION["keep_reversed"], "heads_switched_off")
def keep_read_right(ablate: Callable) -> Callable:
    """``ablate`` given the opposite of each keep it is called with."""
    return lambda mha, x, keep: ablate(mha, x, ~keep)


def hidden_layer(generator: torch.Generator, num_heads: int, d_k: int) -> MultiHeadAttention:
    """attention_lab's layer in float64 and eval mode, with weights from a hidden draw."""
    with under_seed(int(torch.randint(2**31, (1,), generator=generator))):
        return MultiHeadAttention(num_heads * d_k, num_heads).double().eval()


def run_ablation(ablate: Callable, mha: nn.Module, x: Tensor, keep: Tensor, what: str) -> Tensor:
    """The answer's output, (B, L, d_model) and finite, with the layer's parameters unchanged."""
    before = copy.deepcopy(mha.state_dict())
    try:
        with torch.no_grad():
            out = ablate(mha, x.clone(), keep.clone())
    except NotImplementedError:
        raise
    except Exception as error:
        fail(explain(error, "your heads_switched_off", f" on {what}"))
    if any(not torch.equal(before[name], value) for name, value in mha.state_dict().items()):
        fail(f"heads_switched_off changed the parameters of the layer it was given, on {what}")
    if not (isinstance(out, Tensor) and out.shape == x.shape):
        got = f"{type(out).__name__} {tuple(getattr(out, 'shape', ()))}"
        fail(f"expected a tensor of shape {tuple(x.shape)}, that of x, on {what}; got {got}")
    if not torch.isfinite(out).all():
        cause = ""
        if not keep.any():
            constant = kept_count_rescale(ablate, hidden_generator("a02 heads off rescale"))
            if constant is not None:
                cause = (
                    f": {ABLATION['rescaled_by_kept_count']} (on another layer with n of 4 heads "
                    f"kept, for n = 1, 2 and 4, each kept head is multiplied by {constant:.4g} / n)"
                )
        fail(f"the output holds non-finite values on {what}{cause}")
    return out.to(torch.float64)


def kept_count_rescale(ablate: Callable, g: torch.Generator) -> float | None:
    """The experiment behind rescaled_by_kept_count: the constant K where, on a hidden layer of
    4 heads with 1, 2 and then all 4 heads kept, the answer's output is finite and is the
    layer's with each off head's output zeroed and each kept head's multiplied by K / (number
    kept) before out_proj, for one K; else None. An answer that keeps its kept heads as they
    are multiplies them by 1 whatever their number, never by one constant over it."""
    b, length, d_k = random_sizes(g, 3, low=2, high=6)
    num_heads = 4
    mha = hidden_layer(g, num_heads, d_k)
    x = torch.randn(b, length, num_heads * d_k, generator=g, dtype=torch.float64)
    with torch.no_grad():
        q, k, v = (oracle_split(p(x), num_heads) for p in (mha.q_proj, mha.k_proj, mha.v_proj))
        heads = scaled_dot_product_attention(q, k, v)[0]  # (B, H, L, d_k)
    constants = []
    for count in (1, 2, num_heads):
        keep = torch.zeros(num_heads, dtype=torch.bool)
        keep[torch.randperm(num_heads, generator=g)[:count]] = True
        try:
            with torch.no_grad():
                out = ablate(copy.deepcopy(mha), x.clone(), keep.clone())
        except Exception:  # noqa: BLE001 - an answer that raises here shows no rescale
            return None
        if not (isinstance(out, Tensor) and out.shape == x.shape and out.isfinite().all()):
            return None
        with torch.no_grad():
            kept = oracle_merge(heads * keep.to(heads.dtype).view(1, -1, 1, 1))
            through = kept @ mha.out_proj.weight.T  # the kept heads through out_proj, no bias
            moved = out.to(torch.float64) - mha.out_proj.bias
        if not bool(through.abs().max() > 0):
            return None
        factor = float((moved * through).sum() / (through * through).sum())
        if not is_close(moved, factor * through, atol=ATOL * 1e3):
            return None
        constants.append(factor * count)
    first = constants[0]
    if first == 0 or any(abs(c - first) > 1e-6 * abs(first) for c in constants):
        return None
    return first


def changed_rows(mha: nn.Module, head: int, generator: torch.Generator, names: tuple[str, ...]):
    """A copy of ``mha`` with new values in head ``head``'s rows of the named projections."""
    changed = copy.deepcopy(mha)
    rows = slice(head * mha.d_k, (head + 1) * mha.d_k)
    with torch.no_grad():
        for name in names:
            projection = getattr(changed, name)
            shape = projection.weight[rows].shape
            projection.weight[rows] = torch.randn(shape, generator=generator, dtype=torch.float64)
            projection.bias[rows] = torch.randn(shape[0], generator=generator, dtype=torch.float64)
    return changed


def ablation_case(generator: torch.Generator) -> tuple[MultiHeadAttention, Tensor, Tensor, str]:
    """(layer, x, keep with at least one head on and one off, the case in words)."""
    b, length, num_heads, d_k = random_sizes(generator, 4, low=2, high=7)
    mha = hidden_layer(generator, num_heads, d_k)
    x = torch.randn(b, length, num_heads * d_k, generator=generator, dtype=torch.float64)
    keep = torch.rand(num_heads, generator=generator) < 0.5
    keep[0], keep[-1] = True, False
    keep = keep[torch.randperm(num_heads, generator=generator)]
    on = keep.nonzero().flatten().tolist()
    return (
        mha,
        x,
        keep,
        f"d_model={num_heads * d_k}, num_heads={num_heads}, B={b}, L={length}, heads on {on}",
    )


def uniform_heads(mha: nn.Module, keep: Tensor) -> nn.Module:
    """A copy of ``mha`` whose off heads score every key 0: zero rows of q_proj."""
    uniform = copy.deepcopy(mha)
    with torch.no_grad():
        for head in (~keep).nonzero().flatten().tolist():
            rows = slice(head * mha.d_k, (head + 1) * mha.d_k)
            uniform.q_proj.weight[rows] = 0.0
            uniform.q_proj.bias[rows] = 0.0
    return uniform


def changed_features(mha: nn.Module, features: Tensor, generator: torch.Generator) -> nn.Module:
    """A copy of ``mha`` with new values in v_proj's rows where ``features`` (d_model,) is True."""
    changed = copy.deepcopy(mha)
    with torch.no_grad():
        projection = changed.v_proj
        shape = projection.weight[features].shape
        projection.weight[features] = torch.randn(shape, generator=generator, dtype=torch.float64)
        projection.bias[features] = torch.randn(shape[0], generator=generator, dtype=torch.float64)
    return changed


def ignores_tiled_features(
    ablate: Callable, cases: list[tuple[nn.Module, Tensor, Tensor, str]], g: torch.Generator
) -> bool:
    """Whether, on every case where tiling keeps some of an off head's features (one at least),
    the answer ignores v_proj's rows at the features keep.repeat(d_k) marks off, and not those
    it keeps of an off head: the heads tiled."""
    tried = 0
    for mha, x, keep, what in cases:
        tiled = keep.repeat(mha.d_k)
        kept_off = tiled & ~keep.repeat_interleave(mha.d_k)  # an off head's, kept by the tiling
        if not kept_off.any():
            continue
        tried += 1
        out = run_ablation(ablate, mha, x, keep, what)
        dropped = run_ablation(ablate, changed_features(mha, ~tiled, g), x, keep, what)
        kept = run_ablation(ablate, changed_features(mha, kept_off, g), x, keep, what)
        if not is_close(dropped, out, atol=ATOL) or is_close(kept, out, atol=ATOL):
            return False
    return tried > 0


def own_split_and_merge_agree(ns: Namespace, g: torch.Generator) -> bool:
    """Whether the student's split_heads and merge_heads, if defined, give the oracle's heads and
    features on a hidden input: where they do not, a pattern that an answer built on them shows
    may be theirs, not the ablation's."""
    split, merge = ns.get("split_heads"), ns.get("merge_heads")
    b, length, num_heads, d_k = random_sizes(g, 4, low=2, high=7)
    x = torch.randn(b, length, num_heads * d_k, generator=g, dtype=torch.float64)
    heads = oracle_split(x, num_heads)
    try:
        with torch.no_grad():
            split_ok = split is None or is_close(split(x.clone(), num_heads), heads, atol=ATOL)
            merge_ok = merge is None or is_close(
                merge(heads.clone()), oracle_merge(heads), atol=ATOL
            )
    except Exception:  # noqa: BLE001 - a split or merge that raises is not the oracle's
        return False
    return split_ok and merge_ok


def value_bias_passes(
    ablate: Callable, case: tuple[nn.Module, Tensor, Tensor, str], g: torch.Generator
) -> bool:
    """The experiment behind value_bias_left_on, on ``case``: changing an off head's rows of
    q_proj, k_proj and v_proj moves the output, and on copies of the layer whose off heads'
    rows of v_proj.bias are zero the same change moves nothing (the rest of those rows
    changed alike)."""
    try:
        return _value_bias_passes(ablate, case, g)
    except CheckFailed:  # the answer fails on a copy of the layer: no experiment to read
        return False


def _value_bias_passes(
    ablate: Callable, case: tuple[nn.Module, Tensor, Tensor, str], g: torch.Generator
) -> bool:
    mha, x, keep, what = case
    head = int((~keep).nonzero().flatten()[0])
    changed = changed_rows(mha, head, g, ("q_proj", "k_proj", "v_proj"))
    if is_close(
        run_ablation(ablate, changed, x, keep, what),
        run_ablation(ablate, mha, x, keep, what),
        atol=ATOL,
    ):
        return False
    without = []
    for layer in (mha, changed):
        layer = copy.deepcopy(layer)
        with torch.no_grad():
            for off in (~keep).nonzero().flatten().tolist():
                layer.v_proj.bias[off * mha.d_k : (off + 1) * mha.d_k] = 0.0
        without.append(run_ablation(ablate, layer, x, keep, what))
    return is_close(without[0], without[1], atol=ATOL)


def off_head_cause(
    ablate: Callable,
    case: tuple[nn.Module, Tensor, Tensor, str],
    g: torch.Generator,
    ns: Namespace,
) -> str:
    """The named cause of an off head that moves the output, where experiments on ``case`` and
    a second case confirm one, else nothing. The heads tiled are named only where the student's
    split_heads and merge_heads are right: an answer built on a split that strides the features
    shows the same pattern with its ablation right (issue 40's blind answer j02-02)."""
    cases = [case, ablation_case(g)]
    for mha, x, keep, what in cases:
        with torch.no_grad():
            uniform = uniform_heads(mha, keep)(x)[0]
        if not is_close(run_ablation(ablate, mha, x, keep, what), uniform, atol=ATOL):
            break
    else:
        return f": {ABLATION['uniform_weights']}"
    if all(value_bias_passes(ablate, one_case, g) for one_case in cases):
        return f": {ABLATION['value_bias_left_on']}"
    if ignores_tiled_features(ablate, cases, g) and own_split_and_merge_agree(
        ns, hidden_generator("a02 heads off split and merge")
    ):
        return f": {ABLATION['keep_tiled']}"
    return ""


@check(
    ASSIGNMENT,
    "test_heads_switched_off",
    keeps=(
        "a switched-off head is gone:",
        "a kept head still counts:",
        "Leave `mha` itself unchanged.",
        "and what happens when every head is off",
    ),
)
def switched_off_heads_are_gone_and_kept_heads_count(ns: Namespace) -> None:
    """An off head's q, k, v rows change nothing; a kept head's value rows change the output."""
    ablate = require(ns, "heads_switched_off")
    g = hidden_generator("a02 heads off")
    for _ in range(2):
        mha, x, keep, what = ablation_case(g)
        out = run_ablation(ablate, mha, x, keep, what)
        for head in (~keep).nonzero().flatten().tolist():
            changed = changed_rows(mha, head, g, ("q_proj", "k_proj", "v_proj"))
            moved = run_ablation(ablate, changed, x, keep, what)
            if not is_close(moved, out, atol=ATOL):
                fail(
                    f"head {head} is off ({what}), yet the output changed by up to "
                    f"{float((moved - out).abs().max()):.3g} when only head {head}'s rows of "
                    "q_proj, k_proj and v_proj changed"
                    + off_head_cause(ablate, (mha, x, keep, what), g, ns)
                )
        for head in keep.nonzero().flatten().tolist():
            changed = changed_rows(mha, head, g, ("v_proj",))
            if is_close(run_ablation(ablate, changed, x, keep, what), out, atol=ATOL):
                fail(
                    f"head {head} is on ({what}), yet the output stayed the same when its rows "
                    "of v_proj changed"
                )
    # Every head off, whatever the design gives then: each of them is gone too.
    mha, x, keep, what = ablation_case(g)
    keep, what = torch.zeros_like(keep), what.split(", heads on")[0] + ", every head off"
    out = run_ablation(ablate, mha, x, keep, what)
    for head in range(mha.num_heads):
        changed = changed_rows(mha, head, g, ("q_proj", "k_proj", "v_proj"))
        moved = run_ablation(ablate, changed, x, keep, what)
        if not is_close(moved, out, atol=ATOL):
            with torch.no_grad():
                layer = mha(x)[0]
            observed = (
                f": {ABLATION['all_off_is_the_layer']}" if is_close(out, layer, atol=ATOL) else ""
            )
            fail(
                f"head {head} is off ({what}), yet the output changed by up to "
                f"{float((moved - out).abs().max()):.3g} when only head {head}'s rows of "
                "q_proj, k_proj and v_proj changed" + observed
            )


@check(
    ASSIGNMENT,
    "test_heads_switched_off",
    weight=EDGE_CASES,
    keeps=("all on is the layer: with every head kept, the output is `mha(x)[0]`",),
)
def every_head_on_is_the_layer(ns: Namespace) -> None:
    """With every head kept, the output is the layer's own."""
    ablate = require(ns, "heads_switched_off")
    g = hidden_generator("a02 heads all on")
    mha, x, keep, what = ablation_case(g)
    keep = torch.ones_like(keep)
    what = what.split(", heads on")[0] + ", every head on"
    out = run_ablation(ablate, mha, x, keep, what)
    with torch.no_grad():
        expected = mha(x)[0]
    if not is_close(out, expected, atol=ATOL):
        seen = (
            f"with every head on ({what}) the output differs from mha(x)[0] by up to "
            f"{float((out - expected).abs().max()):.3g}"
        )
        if lacks_the_output_bias(ablate, mha, x, keep, what, out, expected):
            fail(f"{ABLATION['out_proj_bias_missing']} ({seen})")
        fail(seen)


def lacks_the_output_bias(
    ablate: Callable,
    mha: nn.Module,
    x: Tensor,
    keep: Tensor,
    what: str,
    out: Tensor,
    expected: Tensor,
) -> bool:
    """The experiment behind out_proj_bias_missing: the answer's output differs from the layer's
    by out_proj's bias at every position, and on a copy of the layer whose out_proj has a zero
    bias the answer gives the layer's output (a correct answer differs from the layer there by
    nothing, so never by the bias)."""
    bias = mha.out_proj.bias
    if bias is None or not is_close(out + bias.detach(), expected, atol=ATOL):
        return False
    unbiased = copy.deepcopy(mha)
    with torch.no_grad():
        unbiased.out_proj.bias.zero_()
        layer = unbiased(x)[0]
    return is_close(run_ablation(ablate, unbiased, x, keep, what), layer, atol=ATOL)


@check(
    ASSIGNMENT,
    "test_heads_switched_off",
    weight=EDGE_CASES,
    keeps=(
        "always defined: the output has the shape of `x` and is finite, also with every "
        "head off, with one head, and for a batch of one sentence of one token",
    ),
)
def ablation_is_defined_at_the_edges(ns: Namespace) -> None:
    """Every head off, a layer of one head (on, then off), one sentence of one token."""
    ablate = require(ns, "heads_switched_off")
    g = hidden_generator("a02 heads edges")
    mha, x, keep, what = ablation_case(g)
    run_ablation(
        ablate, mha, x, torch.zeros_like(keep), what.split(", heads on")[0] + ", every head off"
    )
    d_k = random_sizes(g, 1, low=2, high=7)[0]
    single = hidden_layer(g, 1, d_k)
    one_token = torch.randn(1, 1, d_k, generator=g, dtype=torch.float64)
    for state in (True, False):
        run_ablation(
            ablate,
            single,
            one_token,
            torch.tensor([state]),
            f"one head of d_k={d_k}, {'on' if state else 'off'}, B=1, L=1",
        )
