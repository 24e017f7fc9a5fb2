"""Exercise 4, `EncoderBlock` (test_encoder_block): the post-norm block against two oracles."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from functools import partial

import torch
from torch import Tensor, nn

import attention_lab.reference.a03_transformer_block as reference
from attention_lab.reference.a01_attention import causal_mask
from attention_lab.reference.a04_depth import TransformerEncoder
from attention_lab.torch_mha import load_into_torch_mha
from autograder.authoring.closeness import first_difference, is_close
from autograder.authoring.counterexample import small_integers, smallest_module_counterexample
from autograder.authoring.dependencies import depends_on
from autograder.authoring.diagnosis import diagnose
from autograder.authoring.dropout_sites import (
    RATE_TOLERANCE,
    all_masks,
    drop_rate,
    matching_rows,
)
from autograder.authoring.hidden_draws import (
    draw_seed,
    eval_randomness,
    hidden_generator,
    random_sizes,
    under_seed,
    under_seeds,
)
from autograder.authoring.in_place_writes import inputs_kept
from autograder.authoring.kernel_objects import sharing
from autograder.authoring.mistakes import catalogue
from autograder.authoring.reference_bans import ban
from autograder.authoring.registry import Namespace, check, fail
from autograder.authoring.requiring import require
from autograder.authoring.student_errors import explain
from autograder.checks.a03_transformer_block.shared import ASSIGNMENT

# The block is built on the student's PositionwiseFeedForward: students of 03 have no other.
depends_on(ASSIGNMENT, ["test_encoder_block"], {"feed_forward": ["test_feed_forward"]})

BLOCK_BANNED = {
    "attention_lab's EncoderBlock": reference.EncoderBlock,
    "attention_lab's TransformerEncoder": TransformerEncoder,
    "nn.TransformerEncoderLayer": nn.TransformerEncoderLayer,
    "nn.TransformerEncoder": nn.TransformerEncoder,
}


def reference_block(
    d_model: int, num_heads: int, d_ff: int, generator: torch.Generator, dropout: float = 0.0
) -> reference.EncoderBlock:
    """attention_lab's post-norm block with random weights and non-trivial LayerNorm parameters."""
    with under_seed(int(torch.randint(2**31, (1,), generator=generator))):
        block = reference.EncoderBlock(d_model, num_heads, d_ff, dropout)
    with torch.no_grad():
        for norm in (block.norm1, block.norm2):
            norm.weight.copy_(torch.rand(d_model, generator=generator) + 0.5)
            norm.bias.copy_(torch.rand(d_model, generator=generator) - 0.5)
    return block


def build_block(cls: type, ref: nn.Module, d_model: int, num_heads: int, d_ff: int, dropout=0.0):
    """The student's block (global RNG untouched) with the reference's weights copied in."""
    # Fixed, not hidden: the reference's weights, drawn from a hidden seed, replace these.
    with under_seed(0):
        mine = cls(d_model, num_heads, d_ff, dropout)
    if not isinstance(mine, nn.Module):
        fail(
            f"EncoderBlock(...) is a {type(mine).__name__}, not an nn.Module, as the statement's "
            "class EncoderBlock(nn.Module) is"
        )
    for name in ("self_attn", "feed_forward", "norm1", "norm2"):
        if not isinstance(getattr(mine, name, None), nn.Module):
            fail(
                f"the block has no submodule `self.{name}`, which the exercise's table names "
                f"(found {type(getattr(mine, name, None)).__name__})"
            )
    try:
        mine.load_state_dict(ref.state_dict())
    except RuntimeError as error:
        first = str(error).strip().splitlines()[-1].strip()
        fail(
            "the reference block's parameters (self_attn, feed_forward, norm1, norm2 of the "
            f"exercise's table, at the given sizes) do not load into yours ({first})"
        )
    return mine.to(ref.norm1.weight.dtype)


def call_block(
    block: nn.Module, x: Tensor, mask: Tensor | None, what: str
) -> tuple[Tensor, Tensor]:
    """block(x, mask=mask); a failure where it raised, wrote into x or mask (which the
    reference uses), or returned no pair."""
    with inputs_kept("EncoderBlock", x=x, mask=mask):
        try:
            result = block(x, mask=mask)
        except NotImplementedError:
            raise
        except Exception as error:
            fail(explain(error, "your EncoderBlock", f" on {what}"))
    if not (isinstance(result, tuple) and len(result) == 2):
        fail(
            f"forward returned a {type(result).__name__} on {what}: the statement asks for a "
            "tuple (out, weights)"
        )
    return result


# The named mistakes of EncoderBlock, by family (autograder/authoring/mistakes.py): each is
# diagnosed only where the block's weights or output match those of the reference's own parts
# put together with that mistake (block_mistakes), or, for dropout, where masks at that site
# explain the train-mode output (branch_masks).
POST_NORM = "h = norm1(x + attn(x)) and out = norm2(h + ffn(h))"
BLOCK = catalogue(
    ASSIGNMENT,
    "EncoderBlock",
    {
        "norm placement": {
            "pre_norm_weights": "LayerNorm is applied before the sublayer (pre-norm): this "
            f"block is post-norm, {POST_NORM}",
            "pre_norm": f"LayerNorm is applied before each sublayer (pre-norm): this block is "
            f"post-norm, {POST_NORM}",
            "norm1_twice": "norm1 is used twice: the second residual sum goes through norm2",
            "norms_swapped": "norm1 and norm2 are swapped: norm1 follows the attention "
            "sublayer, norm2 the feed-forward",
            "no_norm2": "the second LayerNorm is missing: out = norm2(h + ffn(h))",
            "no_norm1": "the first LayerNorm is missing: h = norm1(x + attn(x))",
        },
        "residuals": {
            "no_residuals": f"no residual connections: add each sublayer's input back, {POST_NORM}",
            "no_attention_residual": "the attention sublayer has no residual connection: h = "
            "norm1(x + attn(x)), add the input x back before the norm",
            "no_feed_forward_residual": "the feed-forward sublayer has no residual connection: "
            "out = norm2(h + ffn(h)), add h back before the norm",
            "second_residual_adds_x": "the second residual adds the block's input x: out = "
            "norm2(h + ffn(h)) with h = norm1(x + attn(x))",
        },
        "sublayer input": {
            "ffn_reads_attention": "the feed-forward network reads the raw attention output: "
            "it must read h = norm1(x + attn(x))",
            "ffn_reads_x": "the feed-forward network reads the block's input x: it must read h "
            "= norm1(x + attn(x))",
        },
        "mask": {
            "mask_not_passed": "the mask is not passed on: call self.self_attn(x, mask=mask), "
            "so hidden keys get zero weight",
        },
        "weights returned": {
            "weights_averaged": "weights are averaged over the heads: return the per-head "
            "weights of self_attn, (B, num_heads, L, L)",
        },
        "dropout passed on": {
            "sublayers_without_dropout": "dropout is not passed on to the sublayers: build "
            "MultiHeadAttention(d_model, num_heads, dropout) and PositionwiseFeedForward("
            "d_model, d_ff, dropout)",
            "attention_without_dropout": "dropout is not passed on to the MultiHeadAttention "
            "sublayer: in train mode it never drops anything; build it with the block's "
            "dropout, MultiHeadAttention(d_model, num_heads, dropout)",
            "ffn_without_dropout": "dropout is not passed on to the PositionwiseFeedForward "
            "sublayer: in train mode it never drops anything; build it with the block's "
            "dropout, PositionwiseFeedForward(d_model, d_ff, dropout)",
        },
        "dropout mode": {
            # What was observed only (as 06's): a dropout that eval() does not reach has
            # several causes (F.dropout without training=, modules held in a plain list).
            "random_in_eval": "in eval mode the block's output changes with the random seed, so "
            "something in it still draws at random",
            "mode_ignored": "dropout ignores the mode: in eval mode the block's output equals "
            "the reference's with dropout run in train mode under the same seed, as an F.dropout "
            "without training=self.training, or a dropout module that eval() does not reach, gives",
        },
        "dropout scale": {
            "dropout_unscaled": "the block's dropout zeroes values but does not scale the kept "
            "ones by 1/(1-p): use nn.Dropout(dropout), which does, so the expected output stays "
            "the same",
        },
        "dropout placement": {
            "no_dropout": "dropout1 and dropout2 are not applied in training mode: h = "
            "norm1(x + dropout1(attn(x))), out = norm2(h + dropout2(ffn(h)))",
            "dropout1_none": "dropout1 is not applied in training mode: h = norm1(x + "
            "dropout1(attn(x)))",
            "dropout2_none": "dropout2 is not applied in training mode: out = norm2(h + "
            "dropout2(ffn(h)))",
            "dropout1_sum": "dropout1 is applied to the residual sum x + attn(x): it belongs on "
            "the attention output alone, h = norm1(x + dropout1(attn(x)))",
            "dropout1_after": "dropout1 is applied after norm1: it belongs on the attention "
            "output before the residual sum, h = norm1(x + dropout1(attn(x)))",
            "dropout2_sum": "dropout2 is applied to the residual sum h + ffn(h): it belongs on "
            "the feed-forward output alone, out = norm2(h + dropout2(ffn(h)))",
            "dropout2_after": "dropout2 is applied after norm2: it belongs on the feed-forward "
            "output before the residual sum, out = norm2(h + dropout2(ffn(h)))",
        },
    },
)


def block_mistakes(ref: reference.EncoderBlock, x: Tensor, mask: Tensor | None):
    """(weight mistakes, output mistakes) computed from the reference block's own parts."""

    def attn(inputs: Tensor, m: Tensor | None = mask) -> Tensor:
        return ref.self_attn(inputs, mask=m)[0]

    n1, n2, ffn = ref.norm1, ref.norm2, ref.feed_forward
    a = attn(x)
    h = n1(x + a)
    pre_h = x + attn(n1(x))
    weights = {
        BLOCK["pre_norm_weights"]: ref.self_attn(n1(x), mask=mask)[1],
        BLOCK["weights_averaged"]: ref.self_attn(x, mask=mask)[1].mean(1),
    }
    if mask is not None:
        weights[BLOCK["mask_not_passed"]] = ref.self_attn(x)[1]
    outputs = {
        BLOCK["pre_norm"]: pre_h + ffn(n2(pre_h)),
        BLOCK["no_residuals"]: n2(ffn(n1(a))),
        BLOCK["no_attention_residual"]: n2(n1(a) + ffn(n1(a))),
        BLOCK["no_feed_forward_residual"]: n2(ffn(h)),
        BLOCK["second_residual_adds_x"]: n2(x + ffn(h)),
        BLOCK["ffn_reads_attention"]: n2(h + ffn(a)),
        BLOCK["ffn_reads_x"]: n2(h + ffn(x)),
        BLOCK["norm1_twice"]: n1(h + ffn(h)),
        BLOCK["norms_swapped"]: n1(n2(x + a) + ffn(n2(x + a))),
        BLOCK["no_norm2"]: h + ffn(h),
        BLOCK["no_norm1"]: n2(x + a + ffn(x + a)),
    }
    if mask is not None:
        free = n1(x + attn(x, None))
        outputs[BLOCK["mask_not_passed"]] = n2(free + ffn(free))
    return weights, outputs


def block_sizes(generator: torch.Generator) -> tuple[int, int, int, int, int]:
    """B, L, H, d_k, d_ff with H >= 2, all different, d_model = H * d_k unlike the others."""
    while True:
        b, length, h, d_k = random_sizes(generator, 4, low=2, high=7)
        d_ff = int(torch.randint(3, 30, (1,), generator=generator))
        if len({b, length, h, d_k, d_ff, h * d_k}) == 6:
            return b, length, h, d_k, d_ff


def degenerate_block_sizes(generator: torch.Generator) -> list[tuple[int, int, int, int, int]]:
    """B, L, H, d_k, d_ff with the axes of size one the contract allows: one sentence of one
    token with several heads, and one head over a batch of sentences."""
    b, length, h, d_k, d_ff = block_sizes(generator)
    return [(1, 1, h, d_k, d_ff), (b, length, 1, h * d_k, d_ff)]


ban(
    ASSIGNMENT,
    "EncoderBlock",
    BLOCK_BANNED,
    check_name="encoder_block_does_not_call_the_reference",
)


def eval_output(block: nn.Module, x: Tensor, p: float) -> Tensor:
    """The block's eval-mode output on ``x``."""
    with torch.no_grad():
        return call_block(block, x, None, f"dropout={p}, eval mode")[0]


def dropouts_in_train_mode(
    ref: reference.EncoderBlock, x: Tensor, seed: int, answer: Tensor
) -> bool:
    """Whether some of the reference's dropouts run in train mode (the rest of it in eval mode)
    give the answer's eval-mode output ``answer`` on ``x`` under the global seed ``seed``: its
    dropout then draws what nn.Dropout draws in training, whatever the mode."""
    dropouts = [module for module in ref.modules() if isinstance(module, nn.Dropout)]
    for count in range(1, len(dropouts) + 1):
        for chosen in itertools.combinations(dropouts, count):
            ref.eval()
            for module in chosen:
                module.train()
            with torch.no_grad():
                expected = under_seeds(lambda: ref(x)[0], [seed])[0]
            if is_close(answer, expected, atol=1e-9):
                return True
    return False


# Worth points, not a gate: the cell's other checks run the block with dropout 0 or in train
# mode, where a dropout that ignores eval mode changes nothing (blind answer r03-04 lost them all).
@check(
    ASSIGNMENT,
    "test_encoder_block",
    keeps=("`self.dropout1`, `self.dropout2` | `nn.Dropout(dropout)`",),
)
def encoder_block_is_deterministic_in_eval_mode(ns: Namespace) -> None:
    """In eval mode the block's output depends on its input alone, whatever its dropout."""
    cls = require(ns, "EncoderBlock", type)
    g = hidden_generator("a03 block eval")
    b, length, h, d_k, d_ff = block_sizes(g)
    d_model = h * d_k
    for p in (0.0, 0.3):
        ref = reference_block(d_model, h, d_ff, g, dropout=p).double()
        mine = build_block(cls, ref, d_model, h, d_ff, dropout=p).eval()
        x = torch.randn(b, length, d_model, generator=g, dtype=torch.float64)
        first = draw_seed(g)
        randomness, output = eval_randomness(partial(eval_output, mine, x, p), first)
        if randomness == "seeded":
            if dropouts_in_train_mode(ref, x, first, output):
                fail(f"{BLOCK['mode_ignored']} (dropout={p})")
            fail(f"{BLOCK['random_in_eval']} (dropout={p})")
        if randomness:
            fail(
                f"in eval mode the block gives a different output at every call, even under the same "
                f"random seed (dropout={p}): its output must depend on its input alone"
            )


@check(
    ASSIGNMENT,
    "test_encoder_block",
    keeps=(
        "In `forward(x, mask=None)`, apply the two equations above.",
        "the mask follows attention_lab's convention (True = may attend)",
        "mask broadcastable to (B, num_heads, L, L)",
        "Return `(out, weights)`: the block's output and the attention weights.",
    ),
)
def encoder_block_matches_the_reference(ns: Namespace) -> None:
    cls = require(ns, "EncoderBlock", type)
    g = hidden_generator("a03 block")
    for b, length, h, d_k, d_ff in (block_sizes(g), block_sizes(g), *degenerate_block_sizes(g)):
        d_model = h * d_k
        ref = reference_block(d_model, h, d_ff, g).double().eval()
        mine = build_block(cls, ref, d_model, h, d_ff).eval()
        # One part stored under two names loads the second's weights into both (u03-03).
        shared = sharing(mine, ("self_attn", "feed_forward", "norm1", "norm2"))
        if shared:
            fail(
                f"`self.{shared[0]}` and `self.{shared[1]}` hold one parameter tensor (one "
                "object), so the block cannot hold a set of weights for each: the exercise's "
                "table builds each part on its own"
            )
        x = torch.randn(b, length, d_model, generator=g, dtype=torch.float64) * 2
        padding = torch.ones(b, 1, length, dtype=torch.bool)
        padding[0, 0, length // 2 + 1 :] = False  # the first sentence ends in padding
        pairs = torch.rand(b, length, length, generator=g) > 0.5
        pairs[..., 0] = True
        sizes = f"d_model={d_model}, num_heads={h}, d_ff={d_ff}, B={b}, L={length}"
        for mask, what in (
            (None, "no mask"),
            (padding, "a (B, 1, L) padding mask"),
            (causal_mask(length), "an (L, L) causal mask"),
            (pairs, "a (B, L, L) mask"),
        ):
            with torch.no_grad():
                out, weights = call_block(mine, x, mask, f"{sizes}, {what}")
                expected_out, expected_weights = ref(x, mask)
                weight_mistakes, output_mistakes = block_mistakes(ref, x, mask)
            diagnose(
                weights,
                expected_weights,
                weight_mistakes,
                f"the attention weights differ from the reference block's, given the same "
                f"parameters ({sizes}, {what})",
                atol=1e-9,
                counterexample=smaller_block_example(cls, "weights", what),
            )
            diagnose(
                out,
                expected_out,
                output_mistakes,
                f"the output differs from the reference post-norm block's, given the same "
                f"parameters ({sizes}, {what}); the statement's block: "
                "h = norm1(x + dropout1(attn(x))), out = norm2(h + dropout2(ffn(h)))",
                atol=1e-9,
                counterexample=smaller_block_example(cls, "output", what),
            )


# The public (B, L, H, d_k, d_ff) a counterexample is looked for at, smallest first.
EXAMPLE_SIZES = sorted(
    (
        (b, length, h, d_k, d_ff)
        for b in (1, 2)
        for length in (1, 2, 3)
        for h in (1, 2)
        for d_k in (1, 2)
        for d_ff in (1, 2)
    ),
    key=lambda size: (sum(size), size),
)
# A mask of each kind the reference check gives the block, for public (B, L).
EXAMPLE_MASKS: dict[str, Callable[[torch.Generator, int, int], Tensor]] = {
    "padding": lambda g, b, length: (
        torch.arange(length).expand(b, 1, length)
        < torch.randint(1, length + 1, (b, 1, 1), generator=g)
    ),
    "causal": lambda g, b, length: causal_mask(length),
    "(B, L, L)": lambda g, b, length: (
        (torch.rand(b, length, length, generator=g) > 0.5) | (torch.arange(length) == 0)
    ),
}


def smaller_block_example(cls: type, what: str, mask: str) -> Callable[[], str | None]:
    """A counterexample finder for ``what`` ("output" or "weights") of the student's block
    against attention_lab's, both given the same small integer parameters, on public inputs
    of EXAMPLE_SIZES, with a mask of the kind ``mask`` names (see EXAMPLE_MASKS), or none."""
    kind = next((name for name in EXAMPLE_MASKS if name in mask), None)

    def inputs(g: torch.Generator, size: tuple[int, ...]) -> dict[str, Tensor]:
        b, length, h, d_k, _ = size
        args = {"x": small_integers(g, b, length, h * d_k)}
        if kind is not None:
            args["mask"] = EXAMPLE_MASKS[kind](g, b, length)
        return args

    def module(of: type) -> Callable[[tuple[int, ...]], nn.Module]:
        return lambda size: of(size[2] * size[3], size[2], size[4], 0.0)

    index = {"output": 0, "weights": 1}[what]
    return lambda: smallest_module_counterexample(
        module(cls),
        module(reference.EncoderBlock),
        inputs,
        EXAMPLE_SIZES,
        output=lambda result: result[index] if isinstance(result, tuple) else result,
        # A LayerNorm of a nearly constant row differs in its fifth digit: not worth showing.
        atol=1e-3,
    )


@check(
    ASSIGNMENT,
    "test_encoder_block",
    keeps=(
        "In `forward(x, mask=None)`, apply the two equations above.",
        "This is the paper's post-norm arrangement",
    ),
)
def encoder_block_matches_torch_encoder_layer(ns: Namespace) -> None:
    """An independent oracle: nn.TransformerEncoderLayer (post-norm, ReLU) with the same weights."""
    cls = require(ns, "EncoderBlock", type)
    g = hidden_generator("a03 block torch")
    b, length, h, d_k, d_ff = block_sizes(g)
    d_model = h * d_k
    ref = reference_block(d_model, h, d_ff, g).double().eval()
    mine = build_block(cls, ref, d_model, h, d_ff).eval()
    with torch.random.fork_rng(devices=[]):
        layer = nn.TransformerEncoderLayer(
            d_model, h, d_ff, dropout=0.0, batch_first=True, dtype=torch.float64
        ).eval()
    attn = ref.self_attn
    projections = (attn.q_proj, attn.k_proj, attn.v_proj, attn.out_proj)
    load_into_torch_mha(
        layer.self_attn, *(p.weight for p in projections), *(p.bias for p in projections)
    )
    with torch.no_grad():
        layer.linear1.load_state_dict(ref.feed_forward.linear1.state_dict())
        layer.linear2.load_state_dict(ref.feed_forward.linear2.state_dict())
        layer.norm1.load_state_dict(ref.norm1.state_dict())
        layer.norm2.load_state_dict(ref.norm2.state_dict())
        x = torch.randn(b, length, d_model, generator=g, dtype=torch.float64)
        out, _ = call_block(mine, x, None, f"d_model={d_model}, num_heads={h}")
        expected = layer(x)
    if not is_close(out, expected, atol=1e-9):
        seen = first_difference(out, expected, 1e-9)
        fail(
            f"the output differs from nn.TransformerEncoderLayer (post-norm) with the same "
            f"weights ({seen}); the statement's block: h = norm1(x + attn(x)), "
            "out = norm2(h + ffn(h))"
        )


def dropout_block_sizes(generator: torch.Generator) -> tuple[int, int, int, int, int]:
    """B, L, H, d_k, d_ff, all different, with d_model = H * d_k = 6: small enough to try every
    dropout mask of a position, one residual branch against the other."""
    h, d_k = (2, 3) if torch.rand((), generator=generator) < 0.5 else (3, 2)
    b, d_ff = (4, 5) if torch.rand((), generator=generator) < 0.5 else (5, 4)
    return b, int(torch.randint(10, 14, (1,), generator=generator)), h, d_k, d_ff


def train_mode_copy(
    cls: type, generator: torch.Generator
) -> tuple[nn.Module, reference.EncoderBlock, Tensor, float]:
    """(the student's block in train mode, the reference in eval mode, an input, dropout p)."""
    b, length, h, d_k, d_ff = dropout_block_sizes(generator)
    d_model, p = h * d_k, round(0.3 + 0.2 * float(torch.rand((), generator=generator)), 3)
    ref = reference_block(d_model, h, d_ff, generator, dropout=p).double().eval()
    mine = build_block(cls, ref, d_model, h, d_ff, dropout=p).train()
    x = torch.randn(b, length, d_model, generator=generator, dtype=torch.float64)
    return mine, ref, x, p


def drops_in_train_mode(sublayer: nn.Module, x: Tensor) -> bool:
    """Whether ``sublayer`` (an attention or a feed-forward module) gives another output on
    ``x`` in train mode than in eval mode, under the current global seed."""
    outputs = []
    for train in (False, True):
        sublayer.train(train)
        result = sublayer(x)
        outputs.append(result[0] if isinstance(result, tuple) else result)
    return not is_close(outputs[1], outputs[0], atol=1e-9)


@check(
    ASSIGNMENT,
    "test_encoder_block",
    keeps=(
        "`MultiHeadAttention(d_model, num_heads, dropout)` from "
        "`attention_lab.reference.a02_multi_head`",
        "your `PositionwiseFeedForward(d_model, d_ff, dropout)` (Exercise 4)",
    ),
)
def encoder_block_passes_dropout_to_its_sublayers(ns: Namespace) -> None:
    """In train mode each sublayer of the block drops at random: it was built with dropout."""
    cls = require(ns, "EncoderBlock", type)
    # The block builds the student's feed-forward network (declared with depends_on): required
    # here, up front, so that its reference ban costs this cell whatever this check goes on to do.
    ffn_cls = require(ns, "PositionwiseFeedForward", type)
    mine, ref, x, p = train_mode_copy(cls, hidden_generator("a03 block sublayer dropout"))
    d_model, h, d_ff = x.shape[-1], ref.self_attn.num_heads, ref.feed_forward.linear1.out_features
    still = []
    with (
        under_seed(draw_seed(hidden_generator("a03 block sublayer dropout seed"))),
        torch.no_grad(),
    ):
        for name, sublayer, expected in (
            ("MultiHeadAttention", mine.self_attn, ref.self_attn(x)[0]),
            ("PositionwiseFeedForward", mine.feed_forward, ref.feed_forward(x)),
        ):
            try:
                result = sublayer(x)
            except NotImplementedError:
                raise
            except Exception as error:
                fail(explain(error, f"your block's {name}", " in train mode"))
            out = result[0] if isinstance(result, tuple) else result
            if is_close(out, expected, atol=1e-9):
                still.append(name)
        if not still:
            return
        # Named only where the notebook's class, built with dropout, does drop: then the block
        # built it without (a feed-forward that never drops fails its own cell instead).
        built_with_dropout = {
            "MultiHeadAttention": lambda: require(ns, "MultiHeadAttention", type)(d_model, h, p),
            "PositionwiseFeedForward": lambda: ffn_cls(d_model, d_ff, p),
        }
        try:
            passed_on = all(
                drops_in_train_mode(built_with_dropout[name]().double(), x) for name in still
            )
        except NotImplementedError:
            raise
        except Exception:
            passed_on = False
    if passed_on:
        key = {
            ("MultiHeadAttention",): "attention_without_dropout",
            ("PositionwiseFeedForward",): "ffn_without_dropout",
        }.get(tuple(still), "sublayers_without_dropout")
        fail(f"{BLOCK[key]} (dropout={p})")
    fail(
        f"in train mode the block's {' and '.join(still)} never drops anything for dropout={p}, "
        "where the statement builds each sublayer with the block's dropout"
    )


# Where a residual branch's dropout can sit: (norm, r, s, masks (K, d), c) -> (N, K, d), the
# values LayerNorm `norm` gives for the residual r (N, d) and the sublayer output s (N, d).
BRANCH_SITES = {
    "branch": lambda norm, r, s, m, c: norm(r[:, None] + s[:, None] * m * c),
    "none": lambda norm, r, s, m, c: norm(r + s)[:, None],
    "sum": lambda norm, r, s, m, c: norm((r + s)[:, None] * m * c),
    "after": lambda norm, r, s, m, c: norm(r + s)[:, None] * m * c,
}
MISPLACED = {
    (name, site): BLOCK[f"{name}_{site}"]
    for name in ("dropout1", "dropout2")
    for site in ("none", "sum", "after")
}


def branch_masks(
    ref: reference.EncoderBlock, x: Tensor, out: Tensor, p: float
) -> tuple[str, str, float, Tensor, Tensor] | None:
    """(site of dropout1, site of dropout2, scale, masks1, masks2) that give the block's output
    ``out`` (N, d) from x (B, L, d) with the reference's deterministic sublayers, the formula's
    sites first; None when no sites and masks do."""
    d_model = x.shape[-1]
    masks = all_masks(d_model)
    rows = x.reshape(-1, d_model)
    with torch.no_grad():
        attended = ref.self_attn(x)[0].reshape(-1, d_model)
        for scale in (1 / (1 - p), 1.0):
            # Unscaled dropout is tried where the formula puts it only: no more is named.
            sites = list(BRANCH_SITES) if scale != 1.0 else ["branch", "none"]
            for first, second in itertools.product(sites, repeat=2):
                h = BRANCH_SITES[first](ref.norm1, rows, attended, masks, scale)  # (N, K1, d)
                flat_h = h.reshape(-1, d_model)
                outs = BRANCH_SITES[second](
                    ref.norm2, flat_h, ref.feed_forward(flat_h), masks, scale
                )  # (N * K1, K2, d)
                index = matching_rows(out, outs.reshape(len(rows), -1, d_model))
                if (index >= 0).all():
                    used = [masks if site != "none" else masks[-1:] for site in (first, second)]
                    k1, k2 = index // len(used[1]), index % len(used[1])
                    return first, second, scale, used[0][k1], used[1][k2]
    return None


@check(
    ASSIGNMENT,
    "test_encoder_block",
    keeps=(
        r"h = \mathrm{LayerNorm}_1\big(x + \mathrm{Dropout}(\mathrm{MultiHead}(x, x, " r"x))\big)",
        r"\text{out} = \mathrm{LayerNorm}_2\big(h + " r"\mathrm{Dropout}(\mathrm{FFN}(h))\big)",
        "`self.dropout1`, `self.dropout2` | `nn.Dropout(dropout)`",
    ),
)
def encoder_block_applies_dropout_where_the_formula_puts_it(ns: Namespace) -> None:
    """With its sublayers in eval mode, the block's train-mode output is explained by dropout
    masks on the two residual branches, at rate p: judged from the output, in any random order."""
    cls = require(ns, "EncoderBlock", type)
    g = hidden_generator("a03 block dropout")
    mine, ref, x, p = train_mode_copy(cls, g)
    mine.self_attn.eval()
    mine.feed_forward.eval()  # their own dropout is checked apart; here only the block's draws
    with under_seed(draw_seed(g)), torch.no_grad():
        out = call_block(mine, x, None, f"dropout={p}, train mode, sublayers in eval mode")[0]
    if not (isinstance(out, Tensor) and out.shape == x.shape):
        fail(f"in train mode the output must keep the input's shape {tuple(x.shape)}")
    found = branch_masks(ref, x, out.reshape(-1, x.shape[-1]), p)
    if found is None:
        with torch.no_grad():
            in_eval = call_block(mine.eval(), x, None, f"dropout={p}, eval mode")[0]
            expected = ref(x)[0]
        if not is_close(in_eval, expected, atol=1e-9):
            fail(
                f"in eval mode (dropout={p}) the output already differs from the reference "
                f"post-norm block's ({first_difference(in_eval, expected, 1e-9)}): this check "
                "fails for that same cause, and cannot tell from the train-mode output where the "
                "block's dropout sits"
            )
        fail(
            f"in train mode (dropout={p}, the sublayers in eval mode) your output is that of no "
            "dropout on the residual branches, before, on or after each residual sum, that "
            "zeroes values and scales the others by 1/(1-p) or leaves them"
        )
    first, second, scale, masks1, masks2 = found
    if first == second == "none":
        fail(BLOCK["no_dropout"])
    wrong = [
        str(MISPLACED[name, site])
        for name, site in (("dropout1", first), ("dropout2", second))
        if site != "branch"
    ]
    if wrong:
        fail("; ".join(wrong))
    rates = {"dropout1": drop_rate(masks1), "dropout2": drop_rate(masks2)}
    if scale == 1.0:
        seen = ", ".join(f"{name} zeroes {rate:.0%}" for name, rate in rates.items())
        if all(abs(rate - p) <= RATE_TOLERANCE for rate in rates.values()):
            fail(f"{BLOCK['dropout_unscaled']} (dropout={p}: {seen})")
        fail(
            f"in train mode the block's dropout zeroes values at other rates than p and leaves "
            f"the kept ones unscaled (dropout={p}: {seen})"
        )
    for name, rate in rates.items():
        if abs(rate - p) > RATE_TOLERANCE:
            formula = (
                "h = norm1(x + dropout1(attn(x)))"
                if name == "dropout1"
                else "out = norm2(h + dropout2(ffn(h)))"
            )
            fail(
                f"in train mode for dropout={p}, {rate:.0%} of the values at {name}'s place in the "
                f"statement's {formula} are zero, not about {p:.0%} (zeros that reach it from "
                "the sublayer count too)"
            )


@check(
    ASSIGNMENT,
    "test_encoder_block",
    keeps=("In `forward(x, mask=None)`, apply the two equations above.",),
)
def encoder_block_gradients_reach_every_parameter(ns: Namespace) -> None:
    cls = require(ns, "EncoderBlock", type)
    g = hidden_generator("a03 block grad")
    b, length, h, d_k, d_ff = block_sizes(g)
    d_model = h * d_k
    ref = reference_block(d_model, h, d_ff, g).double()
    mine = build_block(cls, ref, d_model, h, d_ff)
    x = torch.randn(b, length, d_model, generator=g, dtype=torch.float64)
    out, _ = call_block(mine, x, None, "a gradient check")
    (out * torch.randn(out.shape, generator=g, dtype=torch.float64)).sum().backward()
    for name, parameter in mine.named_parameters():
        if parameter.grad is None or (
            name.endswith("weight") and not parameter.grad.abs().sum() > 0
        ):
            fail(
                f"`{name}` gets no gradient from the block's output: backpropagating through "
                "the output leaves its gradient "
                f"{'unset' if parameter.grad is None else 'zero'}"
            )
