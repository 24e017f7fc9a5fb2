"""Exercise 4, `CharLM` (test_charlm, test_charlm_causality): structure and causality."""

from __future__ import annotations

import math
from functools import partial
from typing import Any

import torch
from torch import Tensor, nn
from torch.nn import functional as F

import attention_lab.reference.a06_char_lm as reference
from attention_lab.embedding import LearnedPositionalEmbedding
from autograder.authoring.closeness import is_close, not_finite
from autograder.authoring.dependencies import depends_on
from autograder.authoring.diagnosis import SQUEEZED, diagnose, squeezed
from autograder.authoring.hidden_draws import (
    draw_seed,
    eval_randomness,
    hidden_generator,
    random_sizes,
)
from autograder.authoring.mistakes import catalogue
from autograder.authoring.operation_mistakes import mistaken_outputs, probabilities
from autograder.authoring.reference_bans import ban
from autograder.authoring.registry import Namespace, check, fail
from autograder.authoring.requiring import require
from autograder.authoring.stage_recorders import Recorder, TrainModeWords, judge_train_mode
from autograder.authoring.student_errors import explain
from autograder.checks.a06_char_lm.shared import ASSIGNMENT, MODEL_LEAKS, build


def lm_config(g: torch.Generator, *, one_head: bool = False) -> dict[str, int]:
    """Sizes that all differ: vocab, block_size, d_model = H * d_k with H > 1, layers; or one
    head in one layer (d_model = d_k), which the contract allows too."""
    num_heads, d_k, num_layers, block_size = random_sizes(g, 4, low=2, high=8)
    vocab = int(torch.randint(11, 30, (1,), generator=g))
    if one_head:
        num_heads, num_layers = 1, 1
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
        fail(
            f"model.block_size is {getattr(lm, 'block_size', None)!r}, not {block_size}: the statement "
            "keeps it as self.block_size (the training loop and the sampler read it)"
        )
    return lm


def run_lm(lm: nn.Module, idx: Tensor) -> Tensor:
    with torch.no_grad():
        try:
            logits = lm(idx)
        except NotImplementedError:
            raise
        except Exception as error:
            shorter = ""
            if idx.shape[1] < getattr(lm, "block_size", 0):
                shorter = f" (L = {idx.shape[1]} < block_size = {lm.block_size})"
            fail(explain(error, "your CharLM", f" on ids of shape {tuple(idx.shape)}{shorter}"))
    if not isinstance(logits, Tensor):
        fail(f"CharLM.forward must return the logits tensor, got {type(logits).__name__}")
    if not torch.isfinite(logits).all():
        fail(not_finite(logits, f"the logits for ids of shape {tuple(idx.shape)}"))
    return logits


def expect_logit_shapes(lm: nn.Module, idx: Tensor, vocab: int) -> None:
    """(B, L, vocab_size) logits for L = block_size, a shorter L and L = 1, for B sequences and
    for one (a squeeze() shows at the sizes of one)."""
    block_size = idx.shape[1]
    for rows in (idx, idx[:1]):
        for length in (block_size, block_size // 2, 1):
            logits = run_lm(lm, rows[:, :length])
            expected = (len(rows), length, vocab)
            what = f"for B = {len(rows)}, L = {length} (block_size {block_size})"
            if squeezed(logits, expected):
                fail(f"{SQUEEZED}: logits must be (B, L, vocab_size) = {expected} {what}")
            if logits.shape != expected:
                fail(
                    f"logits must be (B, L, vocab_size) = {expected} {what}, got "
                    f"{tuple(logits.shape)}"
                )


OUTSIDE_BLOCKS = "the blocks apply their own dropout; CharLM drops nothing outside them"

# The named mistakes of CharLM, by family (autograder/authoring/mistakes.py): each is diagnosed
# only where the logits match those of the model with that mistake (its own modules reused).
CHARLM = catalogue(
    ASSIGNMENT,
    "charlm",
    {
        "final norm": {
            "no_ln_f": "self.ln_f is not applied: normalise the last block's output before lm_head",
            "ln_f_before_blocks": "self.ln_f is applied before the blocks instead of after them: "
            "normalise the last block's output, lm_head(self.ln_f(x)) after the loop",
            "ln_f_after_every_block": "self.ln_f is applied after every block instead of once "
            "after the last: move it out of the loop, before lm_head",
        },
        "output": {
            "probabilities": "the model returns probabilities, a softmax over the vocabulary of "
            "lm_head's output, where the statement asks for logits: cross_entropy and sample "
            "apply their own softmax to what the model returns",
        },
        "output head scale": {
            "head_is_the_embedding": "the logits are the final hidden states times the token "
            "embedding's weight (lm_head's weight is token_embedding's, or the embedding is "
            "used as the head), where the statement asks for its own "
            "nn.Linear(d_model, vocab_size)",
        },
        "embedding": {
            "no_position": "the position embeddings are missing: x = "
            "self.position(self.token_embedding(idx))",
            "token_embedding_twice": "the token embedding is added twice: self.position "
            "already returns its input plus the position embeddings, so tok + "
            "self.position(tok) is 2 * tok + positions; x = self.position(tok) is the sum",
        },
        "blocks": {
            "first_block_only": "only the first block runs: is the `return` inside the loop "
            "over self.blocks?",
            "blocks_not_chained": "the blocks are not chained: feed each block the previous "
            "block's output (x = block(x))",
        },
        "blocks registered": {
            "blocks_not_registered": "the blocks are kept in a plain Python container, which "
            "nn.Module does not register: model.eval(), model.parameters() and model.to() never "
            "reach them (they keep dropping in eval mode and an optimizer over "
            "model.parameters() never trains them); hold them in nn.ModuleList",
        },
        "dropout passed on": {
            "blocks_without_dropout": "the blocks drop at Block's default rate, not the model's "
            "dropout: pass it on, Block(d_model, num_heads, block_size, dropout)",
        },
        "train mode": {
            # What was observed only: where its cause is not confirmed (blind answer j06-07's
            # blocks in a plain list, which eval() never reaches, was once pointed elsewhere).
            "random_in_eval": "in eval mode the model's logits change with the random seed, so "
            "something in it still draws at random",
            "dropout_on_embeddings": "the model applies dropout of its own to the embeddings, "
            f"the input of block 0: {OUTSIDE_BLOCKS}",
            "dropout_between_blocks": "the model applies dropout of its own between the blocks: "
            f"{OUTSIDE_BLOCKS}",
            "dropout_before_ln_f": "the model applies dropout of its own to the last block's "
            f"output, the input of self.ln_f: {OUTSIDE_BLOCKS}",
            "dropout_before_lm_head": "the model applies dropout of its own between self.ln_f "
            f"and self.lm_head: {OUTSIDE_BLOCKS}",
            "dropout_on_logits": "the model applies dropout of its own to the logits: "
            f"{OUTSIDE_BLOCKS}",
            "mode_switched": "a part of the model runs in another mode than the model: leave "
            "each part's mode to the model's train()/eval(); do not switch it in forward",
        },
    },
)


ban(
    ASSIGNMENT,
    "CharLM",
    {"attention_lab's CausalLM": reference.CausalLM},
    check_name="charlm_is_not_the_reference",
    instances=("model",),  # the trained model of test_trained_loss is a CharLM
)


# CharLM stacks Blocks built on the student's heads, as the notebook asks.
depends_on(
    ASSIGNMENT,
    ["test_charlm", "test_charlm_causality"],
    {"causal_head": ["test_causal_head"], "multihead_causal": ["test_multihead_causal"]},
)


def unregistered_blocks(lm: nn.Module) -> str | None:
    """The blocks_not_registered mistake with what confirms it, or None: ``self.blocks`` is a
    list, tuple or dict (no nn.Module) of modules that the model's eval() left in training mode
    and whose parameters none of the model's registered ones are named after (a ModuleList's are
    ``blocks.<i>...``); observed on the kernel's objects through the judge alike."""
    blocks = getattr(lm, "blocks", None)
    if isinstance(blocks, nn.Module) or not isinstance(blocks, list | tuple | dict):
        return None
    held = list(blocks.values()) if isinstance(blocks, dict) else list(blocks)
    modules = [module for module in held if isinstance(module, nn.Module)]
    if not modules:
        return None
    lm.eval()
    still_training = sum(bool(module.training) for module in modules)
    registered = [name for name, _ in lm.named_parameters()]
    in_blocks = sum(int(p.numel()) for module in modules for p in module.parameters())
    if not still_training or any(name.startswith("blocks.") for name in registered):
        return None
    return (
        f"{CHARLM['blocks_not_registered']} (self.blocks is a {type(blocks).__name__} of "
        f"{len(modules)} modules; after model.eval() {still_training} of them are still in "
        f"training mode, and model.parameters() holds none of their {in_blocks} numbers)"
    )


def train_mode_config(g: torch.Generator) -> tuple[dict[str, int], float]:
    """A configuration and a dropout p for the train-mode checks."""
    return lm_config(g), round(0.2 + 0.2 * float(torch.rand((), generator=g)), 3)


BLOCKS_WITH_DROPOUT = (
    "`self.blocks = nn.ModuleList(...)` of `num_layers` `Block(d_model, num_heads, "
    "block_size, dropout)`",
)


def judge_eval_mode(cls: type, g: torch.Generator, dropout: float) -> None:
    """Fail unless a model built with ``dropout`` gives, in eval mode, the same logits under two
    random seeds; named where the logits follow the seed."""
    config = lm_config(g)
    lm = build_lm(cls, config, seed=draw_seed(g), dropout=dropout)
    idx = torch.randint(0, config["vocab_size"], (3, config["block_size"]), generator=g)
    randomness, _ = eval_randomness(partial(run_lm, lm, idx), draw_seed(g))
    if not randomness:
        return
    if (unregistered := unregistered_blocks(lm)) is not None:
        fail(unregistered)
    if randomness == "seeded":
        fail(f"{CHARLM['random_in_eval']} (dropout={dropout})")
    fail(
        f"in eval mode the model gives different logits at every call, even under the same "
        f"random seed (dropout={dropout}): in eval mode the logits must depend on the ids alone"
    )


# A gate, and first: the other checks judge eval mode with dropout 0, and a model that draws at
# random even then would have their verdicts be chance (a rate written into the code).
@check(ASSIGNMENT, "test_charlm", gate=True, keeps=BLOCKS_WITH_DROPOUT)
def charlm_is_deterministic_without_dropout(ns: Namespace) -> None:
    """Built with dropout 0, the model gives the same logits in eval mode whatever the seed."""
    judge_eval_mode(require(ns, "CharLM", type), hidden_generator("a06 charlm eval"), 0.0)


# Worth points, not a gate: a dropout that eval() does not reach costs this check (and the
# train-mode one, which sees it too), while the checks run with dropout 0 still judge the rest.
@check(ASSIGNMENT, "test_charlm", keeps=BLOCKS_WITH_DROPOUT)
def charlm_is_deterministic_in_eval_mode(ns: Namespace) -> None:
    """Built with dropout, the model gives the same logits in eval mode whatever the seed."""
    g = hidden_generator("a06 charlm eval dropout")
    judge_eval_mode(require(ns, "CharLM", type), g, train_mode_config(g)[1])


@check(
    ASSIGNMENT,
    "test_charlm",
    keeps=(
        "`__init__(vocab_size, block_size, d_model=64, num_heads=4, num_layers=2, "
        "dropout=0.0)` creates, with these names",
        "`self.token_embedding = nn.Embedding(vocab_size, d_model)`",
        "`self.position = LearnedPositionalEmbedding(block_size, d_model)`",
        "`self.blocks = nn.ModuleList(...)` of `num_layers` `Block(d_model, num_heads, "
        "block_size, dropout)`",
        "`self.lm_head = nn.Linear(d_model, vocab_size)`",
        "`forward(idx)` maps `(B, L)` ids, `L <= block_size`, to logits `(B, L, vocab_size)`",
    ),
)
def charlm_structure_and_shapes(ns: Namespace) -> None:
    cls = require(ns, "CharLM", type)
    g = hidden_generator("a06 charlm shapes")
    config = lm_config(g)
    lm = build_lm(cls, config, seed=draw_seed(g), dropout=0.0)
    vocab, block_size, d_model = config["vocab_size"], config["block_size"], config["d_model"]
    embedding = getattr(lm, "token_embedding", None)
    if not isinstance(embedding, nn.Embedding) or tuple(embedding.weight.shape) != (vocab, d_model):
        fail("self.token_embedding must be nn.Embedding(vocab_size, d_model)")
    position = getattr(lm, "position", None)
    if not isinstance(position, LearnedPositionalEmbedding):
        fail("self.position must be LearnedPositionalEmbedding(block_size, d_model)")
    # Its table has a row per position (issue 40's blind answer i06-09 sized it by vocab_size,
    # which the hidden sizes, vocab_size > block_size, never let a forward pass notice).
    table = tuple(getattr(getattr(position, "embedding", None), "weight", torch.empty(0)).shape)
    if table != (block_size, d_model):
        fail(
            f"self.position's table is {table} for vocab_size = {vocab}, block_size = "
            f"{block_size}, d_model = {d_model}: LearnedPositionalEmbedding(block_size, d_model) "
            f"holds one row per position, ({block_size}, {d_model})"
        )
    blocks = getattr(lm, "blocks", None)
    if not isinstance(blocks, nn.ModuleList) or len(blocks) != config["num_layers"]:
        if (unregistered := unregistered_blocks(lm)) is not None:
            fail(unregistered)
        fail(f"self.blocks must be an nn.ModuleList of num_layers = {config['num_layers']} Blocks")
    if len({id(block) for block in blocks}) != len(blocks):
        fail(
            "self.blocks holds one Block object more than once; the statement asks for a new Block per layer"
        )
    head = getattr(lm, "lm_head", None)
    if not isinstance(head, nn.Linear) or (head.in_features, head.out_features) != (d_model, vocab):
        fail("self.lm_head must be nn.Linear(d_model, vocab_size)")
    b = int(torch.randint(2, 5, (1,), generator=g))
    idx = torch.randint(0, vocab, (b, block_size), generator=g)
    expect_logit_shapes(lm, idx, vocab)
    small = lm_config(g, one_head=True)
    one_head = build_lm(cls, small, seed=draw_seed(g))
    ids = torch.randint(0, small["vocab_size"], (b, small["block_size"]), generator=g)
    expect_logit_shapes(one_head, ids, small["vocab_size"])
    if not is_close(run_lm(lm, idx[1:2]), run_lm(lm, idx)[1:2]):
        fail(
            "a sequence gets other logits alone than inside a batch (row 1 of a batch against the same row alone)"
        )
    default = build(cls, vocab, block_size, seed=draw_seed(g), what="CharLM")
    emb = getattr(default, "token_embedding", None)
    layers = getattr(default, "blocks", [])
    if (
        getattr(emb, "embedding_dim", None) != 64
        or len(layers) != 2
        or len(getattr(getattr(layers[0], "attn", None), "heads", [])) != 4
    ):
        fail(
            "CharLM built with its defaults is not d_model=64, num_heads=4, num_layers=2, the statement's defaults"
        )


@check(
    ASSIGNMENT,
    "test_charlm",
    keeps=(
        "idx (B, L) ─token_embedding─► (B, L, d_model) ─+ position─► Block ─► ... ─► "
        "Block ─► ln_f ─► lm_head ─► logits (B, L, V)",
        "`self.ln_f = LayerNorm(d_model)` (pre-norm blocks leave the residual stream "
        "unnormalised, so one last norm)",
    ),
)
def charlm_matches_its_parts(ns: Namespace) -> None:
    """logits = lm_head(ln_f(blocks(position(token_embedding(idx))))), every block once, in order."""
    cls = require(ns, "CharLM", type)
    g = hidden_generator("a06 charlm parts")
    config = lm_config(g)
    lm = build_lm(cls, config, seed=draw_seed(g))
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
        token_twice = embedded + lm.position(embedded)
        for block in lm.blocks:
            token_twice = block(token_twice)
        normalised_first = lm.ln_f(lm.position(embedded))
        every_block = lm.position(embedded)
        for block in lm.blocks:
            normalised_first = block(normalised_first)
            every_block = lm.ln_f(block(every_block))
        mistakes = {
            CHARLM["no_ln_f"]: lm.lm_head(x),
            CHARLM["ln_f_before_blocks"]: lm.lm_head(normalised_first),
            CHARLM["ln_f_after_every_block"]: lm.lm_head(every_block),
            CHARLM["no_position"]: lm.lm_head(lm.ln_f(no_position)),
            CHARLM["token_embedding_twice"]: lm.lm_head(lm.ln_f(token_twice)),
            CHARLM["first_block_only"]: lm.lm_head(lm.ln_f(outputs[0])),
            CHARLM["blocks_not_chained"]: lm.lm_head(lm.ln_f(lm.blocks[-1](lm.position(embedded)))),
            **mistaken_outputs(
                CHARLM,
                lambda normalised: lm.lm_head(normalised),
                {"normalised": lm.ln_f(x)},
                [probabilities()],
            ),
        }
        embedding_as_head = times_the_embedding(lm, lm.ln_f(x))
        if embedding_as_head is not None:
            mistakes[CHARLM["head_is_the_embedding"]] = embedding_as_head
    diagnose(
        logits,
        expected,
        mistakes,
        "the logits differ from lm_head(ln_f(x)) with x = position(token_embedding(idx)) passed "
        "through every block in order, computed with your model's own modules (no known mistake "
        "explains the difference; follow the diagram of Exercise 4)",
    )


@check(
    ASSIGNMENT,
    "test_charlm",
    keeps=(
        "`self.blocks = nn.ModuleList(...)` of `num_layers` `Block(d_model, num_heads, "
        "block_size, dropout)`",
    ),
)
def charlm_drops_only_inside_its_blocks(ns: Namespace) -> None:
    """The blocks are built with the model's dropout and run in train mode; nothing else drops:
    judged stage by stage, with recorders in the blocks', ln_f's and lm_head's place."""
    cls = require(ns, "CharLM", type)
    g = hidden_generator("a06 charlm train mode")
    config, p = train_mode_config(g)
    lm = build_lm(cls, config, seed=draw_seed(g), dropout=p)
    blocks = getattr(lm, "blocks", None)
    if not isinstance(blocks, nn.ModuleList) or len(blocks) != config["num_layers"]:
        if (unregistered := unregistered_blocks(lm)) is not None:
            fail(unregistered)
        fail(f"self.blocks must be an nn.ModuleList of num_layers = {config['num_layers']} Blocks")
    for i, block in enumerate(blocks):
        rates = dropout_rates(block)
        if rates == [p]:
            continue
        seen = (
            f"block {i} drops with dropout={', '.join(map(str, rates)) or 'nothing'}, not the "
            f"model's dropout={p}"
        )
        if block_default_rates(ns, config, p) == rates:
            fail(f"{CHARLM['blocks_without_dropout']} ({seen})")
        fail(
            f"{seen}; the statement builds each block as Block(d_model, num_heads, block_size, dropout)"
        )
    for name in ("ln_f", "lm_head"):
        if not isinstance(getattr(lm, name, None), nn.Module):
            fail(
                f"the model has no submodule `self.{name}`, the statement's name (a check reads model.{name})"
            )
    lm.double()
    b, length, d_model = 3, config["block_size"] - 1, config["d_model"]
    recorders = {
        **{
            f"block {i}": Recorder(torch.randn(b, length, d_model, generator=g).double())
            for i in range(len(blocks))
        },
        "self.ln_f": Recorder(torch.randn(b, length, d_model, generator=g).double()),
        "self.lm_head": Recorder(
            torch.randn(b, length, config["vocab_size"], generator=g).double()
        ),
    }
    for i in range(len(blocks)):
        setattr(blocks, str(i), recorders[f"block {i}"])  # lm.blocks[i], also remotely
    lm.ln_f, lm.lm_head = recorders["self.ln_f"], recorders["self.lm_head"]
    idx = torch.randint(0, config["vocab_size"], (b, length), generator=g)

    def forward() -> list[tuple[str, Tensor]]:
        return [("the logits", run_lm(lm, idx))]

    words = TrainModeWords(
        whole="the model",
        detail=f"dropout={p}",
        mode_switched=CHARLM["mode_switched"],
        random_in_eval=CHARLM["random_in_eval"],
        allowed=OUTSIDE_BLOCKS,
        site=lambda stage: dropout_site(stage, len(blocks)),
    )
    judge_train_mode(lm, recorders, forward, g, words)


def dropout_rates(block: nn.Module) -> list[float]:
    """The rates of the nn.Dropout modules inside ``block``, each once, in order."""
    return sorted({float(m.p) for m in block.modules() if isinstance(m, nn.Dropout)})


def block_default_rates(ns: Namespace, config: dict[str, int], p: float) -> list[float] | None:
    """The dropout rates of the notebook's Block built without a dropout argument, where Block
    built with ``p`` drops at ``p`` alone (it passes its dropout on); None otherwise."""
    try:
        block_cls = require(ns, "Block", type)
        sizes = (config["d_model"], config["num_heads"], config["block_size"])
        with torch.random.fork_rng(devices=[]):
            default, given = block_cls(*sizes), block_cls(*sizes, p)
        if dropout_rates(given) != [p]:
            return None
        return dropout_rates(default)
    except NotImplementedError:
        raise
    except Exception:  # a Block the student changed: what it drops is not known here
        return None


def dropout_site(stage: str, num_blocks: int) -> str | None:
    """The CHARLM mistake of dropout applied to ``stage`` (as compare_modes names the stages of
    one call of each recorder), said of train mode, or None for any other stage."""
    sites = {
        "the input of block 0": "dropout_on_embeddings",
        **{f"the input of block {i}": "dropout_between_blocks" for i in range(1, num_blocks)},
        "the input of self.ln_f": "dropout_before_ln_f",
        "the input of self.lm_head": "dropout_before_lm_head",
        "the logits": "dropout_on_logits",
    }
    return f"in train mode {CHARLM[sites[stage]]}" if stage in sites else None


@check(
    ASSIGNMENT,
    "test_charlm",
    keeps=("the check of Exercise 4 wants an untrained model's loss close to it",),
)
def charlm_starts_near_uniform_loss(ns: Namespace) -> None:
    cls = require(ns, "CharLM", type)
    g = hidden_generator("a06 charlm start")
    for _ in range(2):
        config = lm_config(g)
        lm = build_lm(cls, config, seed=draw_seed(g))
        vocab = config["vocab_size"]
        idx = torch.randint(0, vocab, (8, config["block_size"]), generator=g)
        targets = torch.randint(0, vocab, idx.shape, generator=g)
        logits = run_lm(lm, idx)
        loss = F.cross_entropy(logits.reshape(-1, vocab), targets.reshape(-1)).item()
        if abs(loss - math.log(vocab)) > 0.5:
            # Observed, not guessed: outputs returned as probabilities score about ln V here,
            # so only what the logits look like is said, and a cause only where an experiment
            # on the model's own parts shows it.
            spread = logits.std(-1).mean().item()
            seen = (
                f"an untrained model scores {loss:.2f} nats, far from ln V = "
                f"{math.log(vocab):.2f}: its initial logits spread by {spread:.2f} over the vocabulary "
                "on average, where a uniform guess has equal logits"
            )
            named = head_is_the_embedding(lm, idx, targets, logits, config["d_model"])
            fail(f"{named}\n{seen}" if named else seen)


def times_the_embedding(lm: Any, hidden: Tensor) -> Tensor | None:
    """F.linear(hidden, token_embedding's weight, lm_head's bias): the logits of a model whose
    head is the embedding, or None where the model's parts do not allow that product."""
    try:
        bias = getattr(lm.lm_head, "bias", None)
        return F.linear(hidden, torch.as_tensor(lm.token_embedding.weight), bias)
    except Exception:  # noqa: BLE001 - a model built otherwise: no such mistake to compare with
        return None


def head_is_the_embedding(
    lm: Any, idx: Tensor, targets: Tensor, logits: Tensor, d_model: int
) -> str | None:
    """CHARLM's head_is_the_embedding with what confirms it, or None: the model's logits are
    ln_f of its blocks' output times token_embedding's weight (plus lm_head's bias, if it has
    one), computed here from its own parts, and the same hidden states times a weight drawn as
    nn.Linear draws one (from a fixed seed) score within 0.5 of ln V."""
    vocab = logits.shape[-1]
    try:
        with torch.no_grad():
            x = lm.position(lm.token_embedding(idx))
            for block in lm.blocks:
                x = block(x)
            hidden = torch.as_tensor(lm.ln_f(x)).double()
            embedding = torch.as_tensor(lm.token_embedding.weight).double()
            bias = getattr(lm.lm_head, "bias", None)
            shift = torch.zeros(vocab) if bias is None else torch.as_tensor(bias)
            tied = hidden @ embedding.T + shift.double()
    except Exception:  # noqa: BLE001 - a model built otherwise: nothing is confirmed
        return None
    if tied.shape != logits.shape or not is_close(tied, logits.double(), atol=1e-4):
        return None
    g = torch.Generator().manual_seed(0)
    bound = 1 / math.sqrt(d_model)  # nn.Linear's initial weights: uniform(-bound, bound)
    own = (2 * torch.rand(vocab, d_model, generator=g, dtype=torch.float64) - 1) * bound
    untied = hidden @ own.T + shift.double()  # (B, L, V): the sizes the tied product had
    loss = F.cross_entropy(untied.reshape(-1, vocab), targets.reshape(-1)).item()
    if abs(loss - math.log(vocab)) > 0.5:
        return None
    return (
        f"{CHARLM['head_is_the_embedding']} (your logits equal ln_f(x) @ "
        f"token_embedding.weight.T{'' if bias is None else ' + lm_head.bias'}). That weight "
        "is what spreads the untrained logits: with one drawn as nn.Linear draws it, "
        f"uniform(-1/√d_model, 1/√d_model), the same hidden states score {loss:.2f} nats"
    )


@check(
    ASSIGNMENT,
    "test_charlm_causality",
    keeps=(r"the logits at position $t$ may depend on characters $0 \dots t$ only",),
)
def charlm_logits_ignore_the_future(ns: Namespace) -> None:
    cls = require(ns, "CharLM", type)
    g = hidden_generator("a06 charlm causality")
    for trial in range(2):
        config = lm_config(g)
        lm = build_lm(cls, config, seed=draw_seed(g))
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


@check(
    ASSIGNMENT,
    "test_charlm_causality",
    keeps=(
        "The hidden checks also make sure the model does use its past: changing an "
        "early character must change later logits.",
    ),
)
def charlm_uses_the_past(ns: Namespace) -> None:
    cls = require(ns, "CharLM", type)
    g = hidden_generator("a06 charlm past")
    config = lm_config(g)
    lm = build_lm(cls, config, seed=draw_seed(g))
    vocab = config["vocab_size"]
    idx = torch.randint(0, vocab, (3, config["block_size"]), generator=g)
    changed = idx.clone()
    changed[:, 0] = (idx[:, 0] + 1) % vocab
    if is_close(run_lm(lm, changed)[:, -1], run_lm(lm, idx)[:, -1], atol=1e-7):
        fail(
            "changing the first character does not change the last position's logits: each "
            "position must attend to the past (keys j <= t), not only to itself"
        )
