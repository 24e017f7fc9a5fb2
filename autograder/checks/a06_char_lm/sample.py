"""Exercise 6, `sample` (test_sample): temperature, top-k, the generator and the cropped context."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch import Tensor, nn
from torch.nn import functional as F

import attention_lab.reference.a06_char_lm as encoder_reference
from autograder.authoring.diagnosis import diagnose
from autograder.authoring.hidden_draws import draw_seed, hidden_generator, random_sizes, under_seed
from autograder.authoring.mistakes import catalogue
from autograder.authoring.operation_mistakes import (
    mistaken_outputs,
    raising_alike,
    slice_indexed,
    softmax_over,
    top_k_slips,
)
from autograder.authoring.reference_bans import ban
from autograder.authoring.registry import EDGE_CASES, CheckFailed, Namespace, check, fail
from autograder.authoring.requiring import require
from autograder.authoring.student_errors import explain
from autograder.checks.a06_char_lm.shared import ASSIGNMENT


class StudentCodeError(Exception):
    """Raised by a stand-in model when the student's code calls it in a way it must not."""


# The named mistakes of `sample`, by family (autograder/authoring/mistakes.py): each is
# diagnosed only where the answer's ids (or draw frequencies) match that mistake's.
SAMPLE = catalogue(
    ASSIGNMENT,
    "sample",
    {
        "context kept": {
            "keeps_first_ids": "the model is fed the FIRST block_size ids of the sequence once "
            "it is longer than block_size: keep the last ones, idx[:, -model.block_size:]",
        },
        "position read": {
            "reads_first_position": "each new id comes from the logits at the first position of "
            "the context: read the last one, logits[:, -1, :]",
        },
        "appending": {
            "not_appended": "every new id is predicted from the prompt alone: append each new "
            "id to idx before the next step",
        },
        "temperature": {
            "temperature_multiplies": "temperature multiplies the logits instead of dividing "
            "them: use logits / temperature",
            "temperature_ignored": "the temperature is ignored: divide the logits by it BEFORE "
            "the softmax",
        },
        "top-k": {
            "top_k_ignored": "top_k is ignored: ids outside the k likeliest are drawn; set every "
            "logit below the k-th largest to -inf before the softmax",
            "top_k_one_more": "top_k keeps k + 1 ids: the cut sits at the (k+1)-th largest logit; "
            "keep the k largest, torch.topk(logits, k).values[:, -1:] is the k-th largest",
            "top_k_one_fewer": "top_k keeps only k - 1 ids: the k-th largest logit is set to -inf "
            "too; set only the logits strictly below it to -inf",
            "kth_logit_without_its_axis": "the k-th largest logit is read without keeping its "
            "axis, shape (B,) (values[:, -1]): compared with the logits (B, V) it lines up with "
            "the vocabulary axis, not with each row, so the cut is right only for one prompt; "
            "keep the axis, values[:, -1:]",
            "top_k_drops_ties": "top_k keeps exactly k ids, so where logits tie at the k-th "
            "largest some of the tied ids are never drawn; the statement sets to -inf only the "
            "logits below the k-th largest, and keeps every id tied with it",
        },
        "softmax axis": {
            "softmax_over_batch": "the softmax runs over the batch (dim 0 of the (B, V) logits), "
            "not over the vocabulary: each row of probabilities must be a distribution over the "
            "V ids (dim=-1)",
        },
        "drawing": {
            "argmax": "the new ids do not follow softmax(logits / temperature): draw with "
            "torch.multinomial(probs, 1), not argmax",
        },
    },
)
# Total variation; a known mistake 0.08 or more from the truth is named, and top_k's support is
# judged exactly (top_k + 1 may lie only 0.043 away).
TOLERANCE = 0.04


def within_block(idx: Tensor, block_size: int) -> None:
    """Refuse (as the student's mistake) ids (B, L) longer than a stand-in model's block_size."""
    if idx.shape[1] > block_size:
        raise StudentCodeError(
            f"sample gave the model {idx.shape[1]} ids in a row, more than its block_size = "
            f"{block_size} (it has no positions beyond)"
        )


class FixedLogits(nn.Module):
    """A stand-in model whose next-token logits are the same row at every position."""

    def __init__(self, row: Tensor, block_size: int):
        super().__init__()
        self.block_size = block_size
        self.register_buffer("row", row)
        self.unused = nn.Parameter(torch.zeros(1))
        self.saw_training_mode = False

    def forward(self, idx: Tensor) -> Tensor:
        within_block(idx, self.block_size)
        self.saw_training_mode |= self.training
        return self.row.expand(idx.shape[0], idx.shape[1], -1).clone()


class LogitsPerPrompt(nn.Module):
    """A stand-in model whose next-token logits at a position are ``table[id]`` of the id there:
    rows of a batch with different prompts get different logits."""

    def __init__(self, table: Tensor, block_size: int):
        super().__init__()
        self.block_size = block_size
        self.register_buffer("table", table)
        self.unused = nn.Parameter(torch.zeros(1))

    def forward(self, idx: Tensor) -> Tensor:
        within_block(idx, self.block_size)
        return self.table[idx].clone()


class NextId(nn.Module):
    """Predicts (id + 1) mod V after every id, at every position, with a large margin."""

    def __init__(self, vocab: int, block_size: int):
        super().__init__()
        self.vocab, self.block_size = vocab, block_size
        self.unused = nn.Parameter(torch.zeros(1))

    def forward(self, idx: Tensor) -> Tensor:
        within_block(idx, self.block_size)
        return 30.0 * F.one_hot((idx + 1) % self.vocab, self.vocab).float()


def call_sample(
    sample: Callable[..., Any],
    model: nn.Module,
    idx: Tensor,
    n: int,
    global_seed: int,
    **kwargs: Any,
):
    with under_seed(global_seed):
        try:
            out = sample(model, idx, n, **kwargs)
        except NotImplementedError:
            raise
        except StudentCodeError as error:
            fail(str(error))
        except Exception as error:
            said = explain(error, "sample", f" with {settings(kwargs)}")
            fail("\n".join(filter(None, [cut_raises(model, idx, kwargs, error), said])))
    expected_shape = (idx.shape[0], idx.shape[1] + n)
    if not isinstance(out, Tensor) or tuple(out.shape) != expected_shape:
        fail(
            f"sample must return (B, L + max_new_tokens) = {expected_shape}, got "
            f"{tuple(getattr(out, 'shape', ()))}"
        )
    if not torch.equal(out[:, : idx.shape[1]], idx):
        fail("the output of sample must start with the prompt, unchanged")
    return out


def settings(kwargs: dict[str, Any]) -> str:
    """The keyword arguments sample was called with, as a student would write them (a
    generator as what it is, not its repr and memory address)."""
    if not kwargs:
        return "the defaults"
    shown = {
        name: "a torch.Generator" if isinstance(value, torch.Generator) else repr(value)
        for name, value in kwargs.items()
    }
    return ", ".join(f"{name}={value}" for name, value in shown.items())


def cut_raises(model: nn.Module, idx: Tensor, kwargs: dict[str, Any], error: Exception) -> str:
    """SAMPLE's kth_logit_without_its_axis where the top-k cut of ``distribution``, on a batch of
    idx's size of the model's last-position logits, raises ``error`` itself once its k-th largest
    logit is read as values[:, -1] (operation_mistakes.py); "" otherwise."""
    if kwargs.get("top_k") is None:
        return ""
    with torch.no_grad():
        row = model(idx[:1, -model.block_size :])[0, -1]
    arguments = {
        "row": row,
        "temperature": kwargs.get("temperature", 1.0),
        "top_k": kwargs["top_k"],
        "batch": idx.shape[0],
    }
    if not raising_alike(distribution, arguments, [slice_indexed()], error):
        return ""
    return (
        f"{SAMPLE['kth_logit_without_its_axis']} (the reference cut, its k-th largest logit "
        "read as values[:, -1], raises this same error)"
    )


def total_variation(p: Tensor, q: Tensor) -> float:
    """Half the L1 distance between two distributions over the same ids."""
    return float((p - q).abs().sum() / 2)


def distribution(row: Tensor, temperature: float, top_k: int | None, batch: int = 1) -> Tensor:
    """(V,): how often each id is drawn after ``row`` (V,) of logits, in a batch of ``batch``
    such rows, from softmax(logits / temperature) over the top_k ids (multinomial normalises a
    row of probabilities, whatever its sum)."""
    scaled = row.double().expand(batch, -1) / temperature
    if top_k is not None:
        kth_largest = torch.topk(scaled, top_k, dim=-1).values[:, -1:]
        scaled = scaled.masked_fill(scaled < kth_largest, float("-inf"))
    probs = torch.softmax(scaled, dim=-1)[0]
    return probs / probs.sum()


ban(
    ASSIGNMENT,
    "sample",
    {"attention_lab's CausalLM.generate": encoder_reference.CausalLM.generate},
    check_name="sample_does_not_call_generate",
)


@check(
    ASSIGNMENT,
    "test_sample",
    keeps=(
        "at each step: logits of the last position, divided by `temperature`; if "
        "`top_k` is given, every logit below the $k$-th largest becomes `-inf` "
        "(`torch.topk`); softmax; draw one id per row with `torch.multinomial(probs, 1, "
        "generator=generator)`",
        "put the model in `eval()` mode",
    ),
)
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
            draw_seed(g),
            temperature=temperature,
            top_k=top_k,
            generator=torch.Generator().manual_seed(seed),
        )
        freq = torch.bincount(out[:, 1], minlength=vocab).double()[:vocab] / n
        expected = distribution(row, temperature, top_k)
        drawn, allowed = freq > 0, expected > 0
        setting = f"(temperature {temperature}, top_k {top_k})"
        # Which ids may be drawn is exact; how often, within TOLERANCE.
        outside = bool((drawn & ~allowed).any())
        fewer = top_k is not None and 1 < top_k and int(drawn.sum()) < top_k
        if not (outside or fewer) and total_variation(freq, expected) < TOLERANCE:
            continue
        candidates = {
            SAMPLE["temperature_multiplies"]: distribution(
                row * temperature**2, temperature, top_k
            ),
            SAMPLE["temperature_ignored"]: distribution(row, 1.0, top_k),
            SAMPLE["argmax"]: torch.nn.functional.one_hot(row.argmax(), vocab).double(),
            # The softmax over the batch sees n equal rows (operation_mistakes.py).
            **mistaken_outputs(
                SAMPLE,
                distribution,
                {"row": row, "temperature": temperature, "top_k": top_k, "batch": n},
                [softmax_over(0, "softmax_over_batch"), *top_k_slips()],
            ),
        }
        if top_k is not None:
            candidates[SAMPLE["top_k_ignored"]] = distribution(row, temperature, None)
        # A mistake is named where the answer draws only ids it draws, about as often, and no
        # other mistake fits; one that gives the right distribution at this setting explains
        # nothing (the temperature's at temperature 1).
        matched = [
            mistake
            for mistake, p in candidates.items()
            if total_variation(p, expected) >= 2 * TOLERANCE
            and not (drawn & ~(p > 0)).any()
            and total_variation(freq, p) < TOLERANCE
        ]
        if len(matched) == 1:
            fail(f"{matched[0]} {setting}")
        seen = (
            f"the draw frequencies {[round(f, 3) for f in freq.tolist()]} of ids 0 to "
            f"{vocab - 1} do not match softmax(logits / temperature) restricted to the top k, "
            f"{[round(p, 3) for p in expected.tolist()]} {setting}, for the logits "
            f"{[round(x, 2) for x in row.tolist()]} at every position"
        )
        if outside:
            ids = (drawn & ~allowed).nonzero().flatten().tolist()
            seen += f"; ids {ids} are drawn, outside the {top_k} likeliest"
        if fewer:
            seen += f"; only {int(drawn.sum())} distinct ids are drawn, of the {top_k} allowed"
        fail(seen)
    top_k_per_row(sample, row, g)
    if model.saw_training_mode:
        fail(
            "the model was in training mode when sample called it (the statement asks sample "
            "to put it in eval mode)"
        )


def top_k_per_row(sample: Callable[..., Any], row: Tensor, g: torch.Generator) -> None:
    """The k-th largest logit is each row's own: a batch of rows with the prompt 0, whose logits
    are ``row``, and rows with the prompt 1, whose logits are ``row`` - 10 (the same softmax and
    the same top k), draws only each row's top k (issue 40's blind answer i06-14 took one
    threshold for the whole batch, and the rows of prompt 0 drew every id)."""
    vocab, top_k, n = row.shape[0], 3, 20000
    table = row.expand(vocab, -1).clone()
    table[1] = row - 10
    prompts = (torch.arange(n) % 2).unsqueeze(-1)  # rows of prompt 0 and of prompt 1 alternate
    seed = int(torch.randint(0, 2**31 - 1, (1,), generator=g))
    out = call_sample(
        sample,
        LogitsPerPrompt(table, block_size=3),
        prompts,
        1,
        draw_seed(g),
        top_k=top_k,
        generator=torch.Generator().manual_seed(seed),
    )
    expected = distribution(row, 1.0, top_k)
    for prompt in (0, 1):
        drawn_ids = out[prompts[:, 0] == prompt, 1]
        freq = torch.bincount(drawn_ids, minlength=vocab).double()[:vocab] / len(drawn_ids)
        outside = (freq > 0) & ~(expected > 0)
        if outside.any() or total_variation(freq, expected) >= TOLERANCE:
            seen = (
                f"in a batch whose rows have different logits (top_k {top_k}, temperature 1): "
                f"the rows with the prompt [{prompt}], whose logits are "
                f"{[round(x, 2) for x in table[prompt].tolist()]}, drew ids 0 to {vocab - 1} "
                f"with the frequencies {[round(f, 3) for f in freq.tolist()]}, where their own "
                f"top {top_k} give {[round(p, 3) for p in expected.tolist()]}"
            )
            if outside.any():
                seen += (
                    f"; ids {outside.nonzero().flatten().tolist()} are outside their top {top_k}"
                )
            other = "minus" if prompt == 0 else "plus"
            fail(f"{seen}; the rows with the other prompt have these logits {other} 10")


@check(
    ASSIGNMENT,
    "test_sample",
    weight=EDGE_CASES,
    keeps=("every logit below the $k$-th largest becomes `-inf`",),
)
def sample_keeps_the_ids_tied_with_the_kth_logit(ns: Namespace) -> None:
    """Logits that tie at the k-th largest are all kept (blind answer v06-04 scattered
    torch.topk's k indices, and one tied id was never drawn)."""
    sample = require(ns, "sample")
    g = hidden_generator("a06 sample ties")
    vocab, top_k, n = 7, 2, 20000
    values = torch.tensor([2.0, 1.0, 1.0, 0.0, -0.5, -1.0, -1.5])  # the 2nd and 3rd tie
    row = values[torch.randperm(vocab, generator=g)]
    seed = int(torch.randint(0, 2**31 - 1, (1,), generator=g))
    out = call_sample(
        sample,
        FixedLogits(row, block_size=3),
        torch.zeros(n, 1, dtype=torch.long),
        1,
        draw_seed(g),
        top_k=top_k,
        generator=torch.Generator().manual_seed(seed),
    )
    freq = torch.bincount(out[:, 1], minlength=vocab).double()[:vocab] / n
    expected = distribution(row, 1.0, top_k)  # every id tied with the k-th largest kept
    if total_variation(freq, expected) < TOLERANCE and not ((freq > 0) & (expected == 0)).any():
        return
    tied = (row == 1.0).nonzero().flatten().tolist()
    never = [i for i in tied if freq[i] == 0]
    seen = (
        f"for the logits {[round(x, 2) for x in row.tolist()]} and top_k {top_k}, ids {tied} tie "
        f"at the {top_k}nd largest logit: the draw frequencies of ids 0 to {vocab - 1} are "
        f"{[round(f, 3) for f in freq.tolist()]}, where keeping every id tied with it gives "
        f"{[round(p, 3) for p in expected.tolist()]}"
    )
    # Never drawn in n draws at a probability near 0.2: cut, not unlucky.
    drawn_elsewhere = ((freq > 0) & (expected == 0)).any()
    if len(never) == 1 and not drawn_elsewhere:
        fail(f"{SAMPLE['top_k_drops_ties']} ({seen}; id {never[0]} is never drawn)")
    fail(seen)


@check(
    ASSIGNMENT,
    "test_sample",
    keeps=("draw one id per row with `torch.multinomial(probs, 1, generator=generator)`",),
)
def sample_uses_the_generator(ns: Namespace) -> None:
    sample = require(ns, "sample")
    g = hidden_generator("a06 sample generator")
    model = FixedLogits(torch.tensor([0.3, -0.2, 0.5, 0.1, 0.0]), block_size=4)
    prompt = torch.zeros(50, 2, dtype=torch.long)
    draws = []
    seed, first = draw_seed(g), draw_seed(g)
    for global_seed in (first, first + 1):  # only a sample that ignores `generator` uses them
        generator = torch.Generator().manual_seed(seed)
        draws.append(call_sample(sample, model, prompt, 6, global_seed, generator=generator))
    if not torch.equal(draws[0], draws[1]):
        fail(
            "two calls given generators of the same seed gave different samples when only the "
            "global seed changed: the draws follow the global random state, not `generator`"
        )


def greedy_continuation(
    prompt: Tensor, n_new: int, vocab: int, block_size: int, mistake: str
) -> Tensor:
    """(B, n_new): the ids NextId gives a sampler making ``mistake`` (a SAMPLE name), top_k=1."""
    ids = prompt.clone()
    for _ in range(n_new):
        source = prompt if mistake == "not_appended" else ids
        context = (
            source[:, :block_size] if mistake == "keeps_first_ids" else source[:, -block_size:]
        )
        position = 0 if mistake == "reads_first_position" else -1
        ids = torch.cat([ids, (context[:, [position]] + 1) % vocab], dim=1)
    return ids[:, prompt.shape[1] :]


@check(
    ASSIGNMENT,
    "test_sample",
    keeps=(
        "`idx` is `(B, L)`; return `(B, L + max_new_tokens)`, the prompt followed by the new ids",
        "the model knows only `model.block_size` positions: feed it at most the last "
        "`model.block_size` ids",
        "at each step: logits of the last position",
    ),
)
def sample_crops_the_context_and_reads_the_last_position(ns: Namespace) -> None:
    sample = require(ns, "sample")
    g = hidden_generator("a06 sample context")
    vocab, block_size, extra, n_new = random_sizes(g, 4, low=2, high=9)
    prompt_len = block_size + extra  # longer than the context on every draw: it must be cropped
    vocab += prompt_len
    model = NextId(vocab, block_size)
    # Distinct ids in a row: a sampler's mistakes (which ids it keeps, which position it reads)
    # give other ids on every draw.
    prompt = torch.stack([torch.randperm(vocab, generator=g)[:prompt_len] for _ in range(3)])
    global_seed = draw_seed(g)
    out = call_sample(sample, model, prompt, n_new, global_seed, top_k=1)
    expected = (prompt[:, -1:] + torch.arange(1, n_new + 1)) % vocab
    if not torch.equal(out[:, prompt_len:], expected):
        mistakes = {
            SAMPLE[name]: greedy_continuation(prompt, n_new, vocab, block_size, name)
            for name in ("keeps_first_ids", "reads_first_position", "not_appended")
        }
        diagnose(
            out[:, prompt_len:].double(),
            expected.double(),
            {mistake: ids.double() for mistake, ids in mistakes.items()},
            f"with top_k=1 the new ids must be the likeliest next ids, read at the last position "
            f"of the last block_size = {block_size} ids (a prompt of {prompt_len} ids, "
            f"{n_new} new ones)",
        )
    out = call_sample(sample, model, prompt, n_new, global_seed, temperature=0.05)
    if not torch.equal(out[:, prompt_len:], expected):
        fail(
            f"with temperature 0.05 the new ids {out[0, prompt_len:].tolist()} (first prompt) are "
            f"not the likeliest ones, {expected[0].tolist()}, which a low temperature almost "
            "always picks"
        )
    call_sample(sample, model, prompt, 0, global_seed)  # max_new_tokens = 0 gives the prompt back
    one = prompt[:1, -1:]  # one prompt of one id: a squeeze() that drops an axis shows here
    try:
        out = call_sample(sample, model, one, n_new, global_seed, top_k=1)
    except CheckFailed as failure:
        fail(
            "sample works on a batch of prompts but not on one prompt of one id, shape (1, 1):"
            f"\n{failure.diagnosis}"
        )
    if not torch.equal(out[:, 1:], expected[:1]):
        fail("sample gives other ids for one prompt than for the same prompt inside a batch")
