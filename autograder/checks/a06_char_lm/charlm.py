"""Hidden checks for 06_char_lm: shifted blocks, causal heads, the CharLM, its loss, training, sampling."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch
from torch import Tensor, nn
from torch.nn import functional as F

import attention_lab.attention as attention_reference
import attention_lab.data as data_reference
import attention_lab.encoder as encoder_reference
from attention_lab.attention import load_into_torch_mha
from attention_lab.data import load_char_corpus
from attention_lab.tokenizer import CharTokenizer
from autograder.authoring.helpers import (
    ban,
    diagnose,
    fail,
    hidden_generator,
    is_close,
    random_sizes,
    require,
)
from autograder.authoring.registry import Namespace, check

ASSIGNMENT = "06_char_lm"
BANNED_ATTENTION = {
    "nn.MultiheadAttention": nn.MultiheadAttention,
    "F.multi_head_attention_forward": F.multi_head_attention_forward,
    "attention_lab's MultiHeadAttention": attention_reference.MultiHeadAttention,
    "attention_lab's CausalLM": encoder_reference.CausalLM,
}
TRAINED_FRACTION = (
    0.6  # the trained model's held-out loss must be below 0.6 ln V (notebook, section 8)
)

NOT_SHIFTED = (
    "targets are not shifted by one: y equals x, so the model would learn to copy its input; "
    "y[i] must be the same slice moved one position ahead, ids[i*block_size + 1 : (i+1)*block_size + 1]"
)
LEAKS = (
    "future characters change earlier outputs: position t sees positions after t; hide the keys "
    "j > t with -inf (causal_mask(L) is True on and below the diagonal, and must not be transposed)"
)
MODEL_LEAKS = (
    "future characters change earlier logits: the model sees the future, so it can copy the "
    "character it should predict; check the causal mask of your head (missing, transposed or not "
    "cropped to L x L)"
)

NOT_FINITE = (
    "the output contains NaN: some query has every key masked; a position must attend to itself "
    "(causal_mask keeps the diagonal, keys j <= t)"
)


class StudentCodeError(Exception):
    """Raised by a stand-in model when the student's code calls it in a way it must not."""


# ---------------------------------------------------------------------------------------------
# make_blocks


def oracle_blocks(ids: Tensor, block_size: int) -> tuple[Tensor, Tensor]:
    """Non-overlapping blocks and their targets, written as a loop (independent of the reference)."""
    n_blocks = (len(ids) - 1) // block_size
    x = [ids[i * block_size : (i + 1) * block_size] for i in range(n_blocks)]
    y = [ids[i * block_size + 1 : (i + 1) * block_size + 1] for i in range(n_blocks)]
    return torch.stack(x), torch.stack(y)


def call_make_blocks(make_blocks: Callable[..., Any], ids: Tensor, block_size: int):
    try:
        result = make_blocks(ids, block_size)
    except NotImplementedError:
        raise
    except Exception as error:
        hint = ""
        if len(ids) % block_size == 0:
            hint = (
                f" (len(ids) = {len(ids)} is a multiple of block_size = {block_size}, so only "
                "(len(ids) - 1) // block_size blocks have a full target: the last target needs "
                "one id beyond its block)"
            )
        fail(f"make_blocks raised {type(error).__name__}{hint}: {error}")
    if not (isinstance(result, tuple) and len(result) == 2):
        fail("make_blocks must return a tuple (x, y)")
    return result


ban(
    ASSIGNMENT,
    "make_blocks",
    {
        "attention_lab's make_lm_blocks": data_reference.make_lm_blocks,
        "attention_lab's sample_lm_batch": data_reference.sample_lm_batch,
    },
    cells=("test_make_blocks",),
)


@check(ASSIGNMENT, "test_make_blocks")
def make_blocks_shifts_targets_by_one(ns: Namespace) -> None:
    make_blocks = require(ns, "make_blocks")
    g = hidden_generator("a06 blocks")
    cases = []
    for _ in range(3):
        block_size, n_blocks, rest = random_sizes(g, 3, low=2, high=9)
        cases.append((n_blocks * block_size + rest % block_size + 1, block_size))
    cases += [(4 * 6, 6), (4 * 6 + 1, 6), (13, 1)]  # a multiple of block_size, one more, size 1
    for length, block_size in cases:
        ids = torch.randint(0, 60, (length,), generator=g)
        ids = ids + 1000 * torch.arange(length)  # every id distinct: any misalignment shows
        x, y = call_make_blocks(make_blocks, ids, block_size)
        expected_x, expected_y = oracle_blocks(ids, block_size)
        what = f"make_blocks(ids of length {length}, block_size={block_size})"
        if not isinstance(x, Tensor) or not isinstance(y, Tensor):
            fail("make_blocks must return two tensors (x, y)")
        if x.shape != expected_x.shape or y.shape != expected_y.shape:
            fail(
                f"{what} must give {tuple(expected_x.shape)} blocks, got x {tuple(x.shape)} and y "
                f"{tuple(y.shape)}: n_blocks = (len(ids) - 1) // block_size non-overlapping blocks"
            )
        if torch.equal(x, expected_y) and torch.equal(y, expected_x):
            fail("x and y are swapped: x is the block of inputs, y the same block one step ahead")
        diagnose(
            x,
            expected_x,
            {
                "the input blocks start one position late: x[i] = ids[i*block_size : (i+1)*block_size]": expected_y
            },
            f"{what}: x[i] must be ids[i*block_size : (i+1)*block_size]",
            atol=0.0,
        )
        y_mistakes = {NOT_SHIFTED: expected_x}
        end = len(expected_x) * block_size
        if len(ids) >= end + 2:
            y_mistakes["targets are shifted by two positions instead of one"] = ids[
                2 : end + 2
            ].reshape(expected_y.shape)
        diagnose(
            y,
            expected_y,
            y_mistakes,
            f"{what}: y must be x shifted one step ahead, y[i, t] = ids[i*block_size + t + 1]",
            atol=0.0,
        )


@check(ASSIGNMENT, "test_make_blocks")
def make_blocks_keeps_the_dtype(ns: Namespace) -> None:
    make_blocks = require(ns, "make_blocks")
    ids = torch.arange(3, 40, dtype=torch.int32)
    x, y = call_make_blocks(make_blocks, ids, 5)
    if x.dtype != torch.int32 or y.dtype != torch.int32:
        fail(
            f"make_blocks changed the dtype of int32 ids to {x.dtype}/{y.dtype}: slice and reshape"
        )
    if not (torch.equal(x, oracle_blocks(ids, 5)[0]) and torch.equal(y, oracle_blocks(ids, 5)[1])):
        fail("make_blocks is wrong on int32 ids")


# ---------------------------------------------------------------------------------------------
# CausalSelfAttentionHead


def build(cls: type, *args: Any, seed: int, what: str, **kwargs: Any) -> nn.Module:
    """A fresh module in eval mode, built without touching the global RNG."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        module = cls(*args, **kwargs)
    if not isinstance(module, nn.Module):
        fail(f"{what} must be an nn.Module")
    return module.eval()


def check_projections(head: nn.Module, d_model: int, head_size: int) -> None:
    for name in ("query", "key", "value"):
        layer = getattr(head, name, None)
        if not isinstance(layer, nn.Linear):
            fail(f"the head needs self.{name} = nn.Linear(d_model, head_size, bias=False)")
        if layer.bias is not None:
            fail(f"self.{name} must have no bias: nn.Linear(d_model, head_size, bias=False)")
        if tuple(layer.weight.shape) != (head_size, d_model):
            fail(
                f"self.{name} must map d_model = {d_model} to head_size = {head_size}, got weight "
                f"shape {tuple(layer.weight.shape)}"
            )


def head_outcomes(head: nn.Module, x: Tensor) -> tuple[Tensor, dict[str, Tensor]]:
    """The right causal-head output for x and the outputs of known mistakes (float64)."""
    x = x.double()
    with torch.no_grad():
        q, k, v = (getattr(head, n).weight.double() for n in ("query", "key", "value"))
        q, k, v = x @ q.T, x @ k.T, x @ v.T
        length, head_size, d_model = x.shape[1], q.shape[-1], x.shape[-1]
        raw = q @ k.transpose(-2, -1)
        past = torch.ones(length, length, dtype=torch.bool).tril()

        def attend(scores: Tensor, keep: Tensor | None, dim: int = -1) -> Tensor:
            if keep is not None:
                scores = scores.masked_fill(~keep, float("-inf"))
            return torch.softmax(scores, dim=dim) @ v

        scaled = raw / math.sqrt(head_size)
        mistakes = {
            "no causal mask: every position attends to the future too; hide the keys j > t with "
            "-inf using the top-left L x L corner of the mask buffer": attend(scaled, None),
            "the causal mask is transposed: position t attends to t and the positions AFTER it; "
            "keep the lower triangle (keys j <= t), as causal_mask gives it": attend(
                scaled, past.T
            ),
            "scores are not scaled: divide q kᵀ by √head_size": attend(raw, past),
            "scores are scaled by √d_model instead of √head_size (the width of q and k)": attend(
                raw / math.sqrt(d_model), past
            ),
            "the softmax runs over the queries (dim=-2): each row must be a distribution over the "
            "keys (dim=-1)": attend(scaled, past, dim=-2),
        }
        if length > 1:
            mistakes[
                "the mask hides the diagonal too, so position 0 sees nothing (NaN): a position may "
                "attend to itself (causal_mask keeps j <= t)"
            ] = attend(scaled, past.tril(-1))
    return attend(scaled, past), mistakes


def call_module(module: nn.Module, x: Tensor, what: str, block_size: int | None = None) -> Tensor:
    try:
        out = module(x)
    except NotImplementedError:
        raise
    except Exception as error:
        if block_size is not None and x.shape[1] < block_size:
            fail(
                f"{what} fails on L = {x.shape[1]} < block_size = {block_size} "
                f"({type(error).__name__}): crop the mask to its top-left L x L corner, "
                "self.mask[:L, :L]"
            )
        fail(f"{what} raised {type(error).__name__} on an input of shape {tuple(x.shape)}: {error}")
    if not isinstance(out, Tensor):
        fail(f"{what} must return a tensor, got {type(out).__name__}")
    if not torch.isfinite(out).all():
        fail(NOT_FINITE)
    return out


def future_leak(module: nn.Module, x: Tensor, g: torch.Generator, atol: float = 1e-5) -> bool:
    """True if changing positions after t changes the output at some position <= t."""
    with torch.no_grad():
        out = module(x)
        for t in range(x.shape[1] - 1):
            changed = x.clone()
            changed[:, t + 1 :] = torch.randn(changed[:, t + 1 :].shape, generator=g, dtype=x.dtype)
            if not is_close(module(changed)[:, : t + 1], out[:, : t + 1], atol=atol):
                return True
    return False


ban(
    ASSIGNMENT,
    "CausalSelfAttentionHead",
    BANNED_ATTENTION,
    cells=("test_causal_head",),
    check_name="causal_head_does_not_call_a_reference_layer",
    kind=type,
)


@check(ASSIGNMENT, "test_causal_head")
def causal_head_matches_masked_attention(ns: Namespace) -> None:
    cls = require(ns, "CausalSelfAttentionHead", type)
    g = hidden_generator("a06 head")
    for trial in range(3):
        b, d_model, head_size, length, extra = random_sizes(g, 5, low=2, high=9)
        block_size = length + (extra if trial else 0)  # L == block_size once, then L < block_size
        head = build(
            cls, d_model, head_size, block_size, seed=trial, what="CausalSelfAttentionHead"
        )
        check_projections(head, d_model, head_size)
        x = torch.randn(b, length, d_model, generator=g)
        out = call_module(head, x, "your head", block_size)
        expected, mistakes = head_outcomes(head, x)
        diagnose(
            out,
            expected,
            mistakes,
            f"the head's output differs from softmax(q kᵀ / √head_size, future keys at -inf) v "
            f"(d_model {d_model}, head_size {head_size}, L {length}, block_size {block_size})",
        )


@check(ASSIGNMENT, "test_causal_head")
def causal_head_ignores_the_future(ns: Namespace) -> None:
    cls = require(ns, "CausalSelfAttentionHead", type)
    g = hidden_generator("a06 head future")
    d_model, head_size, length = random_sizes(g, 3, low=3, high=10)
    head = build(cls, d_model, head_size, length + 3, seed=5, what="CausalSelfAttentionHead")
    x = torch.randn(2, length, d_model, generator=g)
    call_module(head, x, "your head", length + 3)
    if future_leak(head, x, g):
        fail(LEAKS)
    parameters = sum(p.numel() for p in head.parameters())
    if parameters != 3 * d_model * head_size:
        fail(
            f"the head has {parameters} parameters instead of 3 x d_model x head_size = "
            f"{3 * d_model * head_size}: only query, key and value, without bias; the mask is a "
            "buffer (register_buffer), not a parameter"
        )


# ---------------------------------------------------------------------------------------------
# MultiHeadCausalAttention


def to_torch_mha(mha: nn.Module, d_model: int, num_heads: int) -> nn.MultiheadAttention:
    """nn.MultiheadAttention (eval) with mha's weights: heads' rows stacked in order, W_O = proj."""
    with torch.random.fork_rng(devices=[]):
        theirs = nn.MultiheadAttention(d_model, num_heads, batch_first=True, dtype=torch.float64)
    w_q, w_k, w_v = (
        torch.cat([getattr(h, name).weight for h in mha.heads])
        for name in ("query", "key", "value")
    )
    return load_into_torch_mha(theirs, w_q, w_k, w_v, mha.proj.weight, b_o=mha.proj.bias).eval()


ban(
    ASSIGNMENT,
    "MultiHeadCausalAttention",
    BANNED_ATTENTION,
    cells=("test_multihead_causal",),
    check_name="multihead_does_not_call_a_reference_layer",
    kind=type,
)


@check(ASSIGNMENT, "test_multihead_causal")
def multihead_matches_torch_multihead_attention(ns: Namespace) -> None:
    cls = require(ns, "MultiHeadCausalAttention", type)
    head_cls = require(ns, "CausalSelfAttentionHead", type)
    g = hidden_generator("a06 multi-head")
    for trial in range(3):
        b, num_heads, head_size, length, extra = random_sizes(g, 5, low=2, high=7)
        d_model, block_size = num_heads * head_size, length + extra
        mha = build(
            cls, d_model, num_heads, block_size, seed=trial, what="MultiHeadCausalAttention"
        )
        heads = getattr(mha, "heads", None)
        if not isinstance(heads, nn.ModuleList) or len(heads) != num_heads:
            fail(f"self.heads must be an nn.ModuleList of num_heads = {num_heads} heads")
        if not all(isinstance(h, head_cls) for h in heads):
            fail("self.heads must hold instances of your CausalSelfAttentionHead")
        if len({id(h) for h in heads}) != num_heads:
            fail("self.heads repeats one head object: create a NEW head for every entry")
        for h in heads:
            check_projections(h, d_model, head_size)
        proj = getattr(mha, "proj", None)
        if not isinstance(proj, nn.Linear) or proj.bias is None or proj.in_features != d_model:
            fail("self.proj must be nn.Linear(d_model, d_model) with a bias")
        x = torch.randn(b, length, d_model, generator=g)
        out = call_module(mha, x, "your MultiHeadCausalAttention", block_size)
        if future_leak(mha, x, g):
            fail(LEAKS)
        for h in heads:
            if not is_close(
                call_module(h, x, "a head in self.heads", block_size), head_outcomes(h, x)[0]
            ):
                fail(
                    "a head in self.heads gives wrong outputs on its own: fix "
                    "CausalSelfAttentionHead first (see test_causal_head)"
                )
        x64 = x.double()
        blocked = ~torch.ones(length, length, dtype=torch.bool).tril()
        with torch.no_grad():
            expected, _ = to_torch_mha(mha, d_model, num_heads)(
                x64, x64, x64, attn_mask=blocked, need_weights=False
            )
            per_head = [head_outcomes(h, x)[0] for h in heads]
            w, bias = proj.weight.double(), proj.bias.double()
            mistakes = {
                "self.proj is not applied: concatenate the heads, then apply self.proj": torch.cat(
                    per_head, -1
                ),
                "the heads are concatenated in reverse order: head 0 comes first": torch.cat(
                    per_head[::-1], -1
                )
                @ w.T
                + bias,
                "every head's output is the first head's: run each head of self.heads on x": torch.cat(
                    [per_head[0]] * num_heads, -1
                )
                @ w.T
                + bias,
            }
        diagnose(
            out,
            expected,
            mistakes,
            f"differs from causal multi-head attention ({num_heads} heads of size {head_size}, "
            f"L {length}): concatenate the heads' outputs along the last dim, head 0 first, "
            "then apply self.proj",
        )


# ---------------------------------------------------------------------------------------------
# CharLM


def lm_config(g: torch.Generator) -> dict[str, int]:
    """Sizes that all differ: vocab, block_size, d_model = H * d_k with H > 1, layers."""
    num_heads, d_k, num_layers, block_size = random_sizes(g, 4, low=2, high=8)
    vocab = int(torch.randint(11, 30, (1,), generator=g))
    return dict(
        vocab_size=vocab,
        block_size=block_size + 2,
        d_model=num_heads * d_k,
        num_heads=num_heads,
        num_layers=min(num_layers, 3),
    )


def build_lm(cls: type, config: dict[str, int], seed: int, **extra: Any) -> nn.Module:
    kwargs = dict(config)
    vocab, block_size = kwargs.pop("vocab_size"), kwargs.pop("block_size")
    lm = build(cls, vocab, block_size, seed=seed, what="CharLM", **kwargs, **extra)
    if getattr(lm, "block_size", None) != block_size:
        fail("store self.block_size = block_size (the training loop and the sampler read it)")
    return lm


def run_lm(lm: nn.Module, idx: Tensor) -> Tensor:
    with torch.no_grad():
        try:
            logits = lm(idx)
        except NotImplementedError:
            raise
        except Exception as error:
            hint = ""
            if idx.shape[1] < getattr(lm, "block_size", 0):
                hint = " (L < block_size: is the causal mask cropped to its top-left L x L corner?)"
            fail(
                f"your CharLM raised {type(error).__name__} on ids of shape {tuple(idx.shape)}"
                f"{hint}: {error}"
            )
    if not isinstance(logits, Tensor):
        fail(f"CharLM.forward must return the logits tensor, got {type(logits).__name__}")
    if not torch.isfinite(logits).all():
        fail(
            "the logits contain NaN or inf: some query has every key masked; a position must "
            "attend to itself (causal_mask keeps the diagonal, keys j <= t)"
        )
    return logits


ban(
    ASSIGNMENT,
    "CharLM",
    {"attention_lab's CausalLM": encoder_reference.CausalLM},
    cells=("test_charlm_causality", "test_charlm"),
    check_name="charlm_is_not_the_reference",
    kind=type,
)


@check(ASSIGNMENT, "test_charlm")
def charlm_structure_and_shapes(ns: Namespace) -> None:
    cls = require(ns, "CharLM", type)
    g = hidden_generator("a06 charlm shapes")
    config = lm_config(g)
    lm = build_lm(cls, config, seed=1, dropout=0.1)
    vocab, block_size, d_model = config["vocab_size"], config["block_size"], config["d_model"]
    embedding = getattr(lm, "token_embedding", None)
    if not isinstance(embedding, nn.Embedding) or tuple(embedding.weight.shape) != (vocab, d_model):
        fail("self.token_embedding must be nn.Embedding(vocab_size, d_model)")
    if not isinstance(getattr(lm, "position", None), encoder_reference.LearnedPositionalEmbedding):
        fail("self.position must be LearnedPositionalEmbedding(block_size, d_model)")
    blocks = getattr(lm, "blocks", None)
    if not isinstance(blocks, nn.ModuleList) or len(blocks) != config["num_layers"]:
        fail(f"self.blocks must be an nn.ModuleList of num_layers = {config['num_layers']} Blocks")
    if len({id(block) for block in blocks}) != len(blocks):
        fail("self.blocks repeats one Block object: create a NEW Block for every layer")
    head = getattr(lm, "lm_head", None)
    if not isinstance(head, nn.Linear) or (head.in_features, head.out_features) != (d_model, vocab):
        fail("self.lm_head must be nn.Linear(d_model, vocab_size)")
    b = int(torch.randint(2, 5, (1,), generator=g))
    idx = torch.randint(0, vocab, (b, block_size), generator=g)
    for length in (block_size, block_size // 2, 1):
        logits = run_lm(lm, idx[:, :length])
        if logits.shape != (b, length, vocab):
            fail(
                f"logits must be (B, L, vocab_size) = {(b, length, vocab)} for L = {length} "
                f"(block_size {block_size}), got {tuple(logits.shape)}"
            )
    if not is_close(run_lm(lm, idx[1:2]), run_lm(lm, idx)[1:2]):
        fail("a sequence gets other logits alone than inside a batch: keep the rows independent")
    default = build(cls, vocab, block_size, seed=2, what="CharLM")
    emb = getattr(default, "token_embedding", None)
    layers = getattr(default, "blocks", [])
    if (
        getattr(emb, "embedding_dim", None) != 64
        or len(layers) != 2
        or len(getattr(getattr(layers[0], "attn", None), "heads", [])) != 4
    ):
        fail("keep the defaults d_model=64, num_heads=4, num_layers=2")


@check(ASSIGNMENT, "test_charlm")
def charlm_matches_its_parts(ns: Namespace) -> None:
    """logits = lm_head(ln_f(blocks(position(token_embedding(idx))))), every block once, in order."""
    cls = require(ns, "CharLM", type)
    g = hidden_generator("a06 charlm parts")
    config = lm_config(g)
    lm = build_lm(cls, config, seed=3)
    idx = torch.randint(0, config["vocab_size"], (3, config["block_size"] - 1), generator=g)
    logits = run_lm(lm, idx)
    with torch.no_grad():
        embedded = lm.token_embedding(idx)
        x = lm.position(embedded)
        outputs = []
        for block in lm.blocks:
            x = block(x)
            outputs.append(x)
        expected = lm.lm_head(lm.ln_f(x))
        no_position = embedded
        for block in lm.blocks:
            no_position = block(no_position)
        mistakes = {
            "self.ln_f is not applied: normalise the last block's output before lm_head": lm.lm_head(
                x
            ),
            "the position embeddings are missing: x = self.position(self.token_embedding(idx))": lm.lm_head(
                lm.ln_f(no_position)
            ),
            "only the first block runs: is the `return` inside the loop over self.blocks?": lm.lm_head(
                lm.ln_f(outputs[0])
            ),
            "the blocks are not chained: feed each block the previous block's output (x = block(x))": lm.lm_head(
                lm.ln_f(lm.blocks[-1](lm.position(embedded)))
            ),
        }
    diagnose(
        logits,
        expected,
        mistakes,
        "the logits are not lm_head(ln_f(blocks(position(token_embedding(idx))))): follow the "
        "diagram of Exercise 4",
    )


@check(ASSIGNMENT, "test_charlm")
def charlm_starts_near_uniform_loss(ns: Namespace) -> None:
    cls = require(ns, "CharLM", type)
    g = hidden_generator("a06 charlm start")
    for trial in range(2):
        config = lm_config(g)
        lm = build_lm(cls, config, seed=10 + trial)
        vocab = config["vocab_size"]
        idx = torch.randint(0, vocab, (8, config["block_size"]), generator=g)
        targets = torch.randint(0, vocab, idx.shape, generator=g)
        loss = F.cross_entropy(run_lm(lm, idx).reshape(-1, vocab), targets.reshape(-1)).item()
        if abs(loss - math.log(vocab)) > 0.5:
            fail(
                f"an untrained model scores {loss:.2f} nats, far from ln V = {math.log(vocab):.2f}: "
                "the initial logits are too large (or not logits at all: no softmax in forward)"
            )


@check(ASSIGNMENT, "test_charlm_causality")
def charlm_logits_ignore_the_future(ns: Namespace) -> None:
    cls = require(ns, "CharLM", type)
    g = hidden_generator("a06 charlm causality")
    for trial in range(2):
        config = lm_config(g)
        lm = build_lm(cls, config, seed=20 + trial)
        vocab, block_size = config["vocab_size"], config["block_size"]
        idx = torch.randint(0, vocab, (3, block_size - trial), generator=g)
        logits = run_lm(lm, idx)
        for t in range(idx.shape[1] - 1):
            changed = idx.clone()
            changed[:, t + 1 :] = (
                idx[:, t + 1 :] + torch.randint(1, vocab, (1,), generator=g)
            ) % vocab
            if not is_close(run_lm(lm, changed)[:, : t + 1], logits[:, : t + 1]):
                fail(MODEL_LEAKS + f" (the logits at positions <= {t} moved)")


@check(ASSIGNMENT, "test_charlm_causality")
def charlm_uses_the_past(ns: Namespace) -> None:
    cls = require(ns, "CharLM", type)
    g = hidden_generator("a06 charlm past")
    config = lm_config(g)
    lm = build_lm(cls, config, seed=30)
    vocab = config["vocab_size"]
    idx = torch.randint(0, vocab, (3, config["block_size"]), generator=g)
    changed = idx.clone()
    changed[:, 0] = (idx[:, 0] + 1) % vocab
    if is_close(run_lm(lm, changed)[:, -1], run_lm(lm, idx)[:, -1], atol=1e-7):
        fail(
            "changing the first character does not change the last position's logits: each "
            "position must attend to the past (keys j <= t), not only to itself"
        )


# ---------------------------------------------------------------------------------------------
# lm_loss


@check(ASSIGNMENT, "test_lm_loss")
def lm_loss_is_the_mean_over_all_positions(ns: Namespace) -> None:
    lm_loss = require(ns, "lm_loss")
    g = hidden_generator("a06 loss")
    for _ in range(3):
        b, length, vocab = random_sizes(g, 3, low=2, high=9)
        logits = torch.randn(b, length, vocab, generator=g, dtype=torch.float64, requires_grad=True)
        targets = torch.randint(0, vocab, (b, length), generator=g)
        loss = lm_loss(logits, targets)
        if not isinstance(loss, Tensor) or loss.dim() != 0:
            fail(
                f"lm_loss must return a scalar tensor, got shape {tuple(getattr(loss, 'shape', ()))}"
            )
        with torch.no_grad():
            nll = -torch.log_softmax(logits, -1).gather(-1, targets.unsqueeze(-1)).squeeze(-1)
            mistakes = {
                "the loss is summed over the positions: take the mean over all B*L positions": nll.sum(),
                "the loss sums over each sequence and averages over the batch: take the mean over "
                "all B*L positions": nll.sum(1).mean(),
                "the loss is in bits (log base 2): cross-entropy uses the natural log": nll.mean()
                / math.log(2),
                "the targets are paired with the wrong positions: flatten logits (B, L, V) to "
                "(B*L, V) and targets (B, L) to (B*L,) in the same order": F.cross_entropy(
                    logits.reshape(-1, vocab), targets.T.reshape(-1)
                ),
            }
        diagnose(
            loss.detach(),
            nll.mean(),
            mistakes,
            f"lm_loss for (B, L, V) = {(b, length, vocab)} must be the mean over all B*L positions "
            "of -log softmax(logits)[target]",
        )
        loss.backward()
        if logits.grad is None or not torch.isfinite(logits.grad).all():
            fail("lm_loss must be differentiable in the logits: do not detach or use .item()")


# ---------------------------------------------------------------------------------------------
# The trained model


def held_out_ids() -> tuple[Tensor, int]:
    """The last 10% of the corpus, re-read and re-encoded here, and its vocabulary size."""
    text = load_char_corpus("fables")
    tokenizer = CharTokenizer(text)
    ids = torch.tensor(tokenizer.encode(text), dtype=torch.long)
    return ids[int(0.9 * len(ids)) :], tokenizer.vocab_size


def trained_model(ns: Namespace) -> tuple[nn.Module, torch.device, int]:
    model = require(ns, "model", nn.Module)
    block_size = getattr(model, "block_size", None)
    if not isinstance(block_size, int):
        fail("the trained `model` has no integer block_size: store self.block_size in CharLM")
    try:
        device = next(model.parameters()).device
    except StopIteration:
        fail("your trained `model` has no parameters: register its layers as submodules")
    return model, device, block_size


@check(ASSIGNMENT, "test_trained_loss")
def trained_model_is_causal(ns: Namespace) -> None:
    model, device, block_size = trained_model(ns)
    held_out, vocab = held_out_ids()
    g = hidden_generator("a06 trained causality")
    starts = torch.randint(0, len(held_out) - block_size, (4,), generator=g)
    idx = torch.stack([held_out[s : s + block_size] for s in starts.tolist()])
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            logits = model(idx.to(device)).cpu()
            for t in sorted({0, block_size // 3, block_size // 2, block_size - 2}):
                changed = idx.clone()
                changed[:, t + 1 :] = torch.randint(
                    0, vocab, changed[:, t + 1 :].shape, generator=g
                )
                moved = model(changed.to(device)).cpu()
                if not is_close(moved[:, : t + 1], logits[:, : t + 1], atol=1e-4):
                    fail(
                        f"{MODEL_LEAKS}; a low loss bought by peeking at the next character does "
                        "not count"
                    )
    finally:
        model.train(was_training)


@check(ASSIGNMENT, "test_trained_loss")
def trained_model_beats_the_uniform_guess(ns: Namespace) -> None:
    model, device, block_size = trained_model(ns)
    held_out, vocab = held_out_ids()
    x, y = oracle_blocks(held_out, block_size)
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            total = 0.0
            for xb, yb in zip(x.split(64), y.split(64), strict=True):
                logits = model(xb.to(device)).float().cpu()
                if logits.shape != (*xb.shape, vocab):
                    fail(
                        f"the trained model must give (B, L, V) = {(*xb.shape, vocab)} logits, got "
                        f"{tuple(logits.shape)}: build it with the corpus's vocabulary size"
                    )
                total += F.cross_entropy(
                    logits.reshape(-1, vocab), yb.reshape(-1), reduction="sum"
                ).item()
    finally:
        model.train(was_training)
    loss, uniform = total / y.numel(), math.log(vocab)
    if loss >= 0.9 * uniform:
        fail(
            f"your model looks untrained: its held-out loss {loss:.2f} nats is close to ln V = "
            f"{uniform:.2f}, the loss of a uniform guess; did the training cell run to the end?"
        )
    if loss >= TRAINED_FRACTION * uniform:
        fail(
            f"held-out loss {loss:.3f} nats is not below {TRAINED_FRACTION} ln V = "
            f"{TRAINED_FRACTION * uniform:.3f}: it learned something, but too little; run the "
            "overfit sanity check, then train again"
        )


# ---------------------------------------------------------------------------------------------
# sample


TOLERANCE = 0.04  # total variation; every known mistake lies 0.1 or more away from the truth


class FixedLogits(nn.Module):
    """A stand-in model whose next-token logits are the same row at every position."""

    def __init__(self, row: Tensor, block_size: int):
        super().__init__()
        self.block_size = block_size
        self.register_buffer("row", row)
        self.unused = nn.Parameter(torch.zeros(1))
        self.saw_training_mode = False

    def forward(self, idx: Tensor) -> Tensor:
        if idx.shape[1] > self.block_size:
            raise StudentCodeError(
                f"the model got {idx.shape[1]} ids, more than block_size = {self.block_size}: feed "
                "it only the last block_size ids, idx[:, -model.block_size:]"
            )
        self.saw_training_mode |= self.training
        return self.row.expand(idx.shape[0], idx.shape[1], -1).clone()


class NextId(nn.Module):
    """Predicts (id + 1) mod V after every id, at every position, with a large margin."""

    def __init__(self, vocab: int, block_size: int):
        super().__init__()
        self.vocab, self.block_size = vocab, block_size
        self.unused = nn.Parameter(torch.zeros(1))

    def forward(self, idx: Tensor) -> Tensor:
        if idx.shape[1] > self.block_size:
            raise StudentCodeError(
                f"the model got {idx.shape[1]} ids, more than block_size = {self.block_size}: feed "
                "it only the last block_size ids, idx[:, -model.block_size:]"
            )
        return 30.0 * F.one_hot((idx + 1) % self.vocab, self.vocab).float()


def call_sample(
    sample: Callable[..., Any],
    model: nn.Module,
    idx: Tensor,
    n: int,
    global_seed: int = 0,
    **kwargs: Any,
):
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(global_seed)
        try:
            out = sample(model, idx, n, **kwargs)
        except NotImplementedError:
            raise
        except StudentCodeError as error:
            fail(str(error))
        except Exception as error:
            fail(f"sample raised {type(error).__name__} with {kwargs or 'the defaults'}: {error}")
    expected_shape = (idx.shape[0], idx.shape[1] + n)
    if not isinstance(out, Tensor) or tuple(out.shape) != expected_shape:
        fail(
            f"sample must return (B, L + max_new_tokens) = {expected_shape}, got "
            f"{tuple(getattr(out, 'shape', ()))}: append each new id to idx"
        )
    if not torch.equal(out[:, : idx.shape[1]], idx):
        fail("the output of sample must start with the prompt, unchanged")
    return out


def distribution(row: Tensor, temperature: float, top_k: int | None) -> Tensor:
    scaled = row.double() / temperature
    if top_k is not None:
        scaled = scaled.masked_fill(scaled < torch.topk(scaled, top_k).values[-1], float("-inf"))
    return torch.softmax(scaled, -1)


ban(
    ASSIGNMENT,
    "sample",
    {"attention_lab's CausalLM.generate": encoder_reference.CausalLM.generate},
    cells=("test_sample",),
    check_name="sample_does_not_call_generate",
)


@check(ASSIGNMENT, "test_sample")
def sample_follows_temperature_and_top_k(ns: Namespace) -> None:
    sample = require(ns, "sample")
    g = hidden_generator("a06 sample")
    vocab = 7
    row = torch.randperm(vocab, generator=g).float() * 0.6 - 1.5  # distinct logits
    model = FixedLogits(row, block_size=3)
    n = 20000  # total variation of the frequencies from the truth: about 0.007, at most ~0.016
    for temperature, top_k in [(1.0, None), (0.5, None), (2.0, 3), (1.0, 4), (0.7, 1)]:
        seed = int(torch.randint(0, 2**31 - 1, (1,), generator=g))
        out = call_sample(
            sample,
            model,
            torch.zeros(n, 1, dtype=torch.long),
            1,
            temperature=temperature,
            top_k=top_k,
            generator=torch.Generator().manual_seed(seed),
        )
        freq = torch.bincount(out[:, 1], minlength=vocab).double()[:vocab] / n
        expected = distribution(row, temperature, top_k)
        drawn, allowed = freq > 0, expected > 0
        setting = f"(temperature {temperature}, top_k {top_k})"
        if (drawn & ~allowed).any():
            if top_k is not None and int(drawn.sum()) > top_k + 1:
                fail(
                    f"top_k is ignored {setting}: ids outside the {top_k} likeliest were drawn; set "
                    "every logit below the k-th largest to -inf before the softmax"
                )
            fail(
                f"top_k={top_k} lets more than {top_k} ids through {setting}: keep exactly the k "
                "largest logits (torch.topk(logits, k).values[:, -1:] is the k-th largest)"
            )
        if top_k is not None and int(drawn.sum()) < top_k and top_k > 1:
            fail(f"top_k={top_k} keeps fewer than {top_k} ids {setting}: is it off by one?")
        if (freq - expected).abs().sum() / 2 < TOLERANCE:
            continue
        candidates = {
            f"temperature multiplies the logits instead of dividing them {setting}: use logits / temperature": distribution(
                row * temperature**2, temperature, top_k
            ),
            f"the temperature is ignored {setting}: divide the logits by it BEFORE the softmax": distribution(
                row, 1.0, top_k
            ),
            f"the new ids do not follow softmax(logits / temperature) {setting}: draw with torch.multinomial(probs, 1), "
            "not argmax": torch.nn.functional.one_hot(row.argmax(), vocab).double(),
        }
        for diagnosis, p in candidates.items():
            if (freq - p).abs().sum() / 2 < TOLERANCE:
                fail(diagnosis)
        fail(
            f"the draw frequencies {[round(f, 3) for f in freq.tolist()]} do not match softmax(logits "
            f"/ temperature) restricted to the top k, {[round(p, 3) for p in expected.tolist()]} "
            f"{setting}"
        )
    if model.saw_training_mode:
        fail("sample leaves the model in training mode: call model.eval() before generating")


@check(ASSIGNMENT, "test_sample")
def sample_uses_the_generator(ns: Namespace) -> None:
    sample = require(ns, "sample")
    model = FixedLogits(torch.tensor([0.3, -0.2, 0.5, 0.1, 0.0]), block_size=4)
    prompt = torch.zeros(50, 2, dtype=torch.long)
    draws = []
    for global_seed in (1, 2):
        generator = torch.Generator().manual_seed(1234)
        draws.append(call_sample(sample, model, prompt, 6, global_seed, generator=generator))
    if not torch.equal(draws[0], draws[1]):
        fail(
            "the same generator seed gave different samples: pass generator=generator to "
            "torch.multinomial so that sampling is reproducible"
        )


@check(ASSIGNMENT, "test_sample")
def sample_crops_the_context_and_reads_the_last_position(ns: Namespace) -> None:
    sample = require(ns, "sample")
    g = hidden_generator("a06 sample context")
    vocab, block_size, prompt_len, n_new = random_sizes(g, 4, low=3, high=9)
    model = NextId(vocab, block_size)
    prompt = torch.randint(0, vocab, (3, prompt_len), generator=g)
    out = call_sample(sample, model, prompt, n_new, top_k=1)
    expected = (prompt[:, -1:] + torch.arange(1, n_new + 1)) % vocab
    if not torch.equal(out[:, prompt_len:], expected):
        fail(
            "each new id must come from the logits at the LAST position of the context "
            "(logits[:, -1, :]), and be appended before the next step"
        )
    out = call_sample(sample, model, prompt, n_new, temperature=0.05)
    if not torch.equal(out[:, prompt_len:], expected):
        fail("a low temperature must (almost) always pick the likeliest id: divide the logits by T")
    call_sample(sample, model, prompt, 0)  # max_new_tokens = 0 gives the prompt back
