"""06's causes from issue 40's blind corpus, each named only where an experiment on the answer
confirms it, and never on an answer that does not make it: the cells' checks run in-process on
small answers written here (no notebook, no training); tests/mutants/m06_char_lm.py grades the
blind answers themselves."""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn
from torch.nn import functional as F

from attention_lab.reference.a01_attention import causal_mask
from autograder.authoring.registry import CheckFailed, grade_cell
from autograder.checks.a06_char_lm.charlm import CHARLM, charlm_starts_near_uniform_loss
from autograder.checks.a06_char_lm.make_blocks import BLOCKS, one_block_too_many
from autograder.checks.a06_char_lm.multihead_causal import MULTIHEAD
from autograder.checks.a06_char_lm.penalise_repeats import PENALTY
from autograder.checks.a06_char_lm.sample import SAMPLE
from autograder.checks.a06_char_lm.shared import HEAD
from autograder.checks.a06_char_lm.trained_model import training_step_error, unfinished_training

A = "06_char_lm"


def first_failure(grade_id: str, namespace: dict) -> str:
    """The message of the cell's first failing check, without its "[check name] "."""
    grade = grade_cell(A, grade_id, namespace)
    assert not grade.full_marks, grade.describe()
    return grade.first_failure.split("] ", 1)[1]


def blocks_counting(count):  # noqa: ANN001, ANN201
    """make_blocks with n_blocks = count(len(ids), block_size)."""

    def make_blocks(ids: Tensor, block_size: int) -> tuple[Tensor, Tensor]:
        n = count(len(ids), block_size)
        x = ids[: n * block_size].reshape(n, block_size)
        return x, ids[1 : n * block_size + 1].reshape(n, block_size)

    return make_blocks


def test_one_block_too_many_is_named_where_the_longer_lengths_get_the_right_blocks():
    answer = blocks_counting(lambda length, size: length // size)
    told = first_failure("test_make_blocks", {"make_blocks": answer})
    assert told.startswith(str(BLOCKS["one_block_too_many"]))
    assert "make_blocks raised RuntimeError on ids of length" in told  # the error itself too
    # Rounded up, the count is one too many on other lengths too: not this mistake.
    rounded_up = blocks_counting(lambda length, size: math.ceil((length - 1) / size))
    assert one_block_too_many(rounded_up, 24, 6) is None
    assert one_block_too_many(answer, 25, 6) is None  # the two counts agree there
    assert one_block_too_many(answer, 24, 1) is None  # no length of block_size 1 agrees
    assert "(on ids of length 25 to 29, " in one_block_too_many(answer, 24, 6)
    # One agreeing length is named as one (blind answer ab06-01 read "of length 9 to 9").
    assert "(on ids of length 9, " in one_block_too_many(answer, 8, 2)


class Head(nn.Module):
    """A causal head of the statement, given the mask it passes to masked_fill."""

    def __init__(self, d_model: int, head_size: int, block_size: int):
        super().__init__()
        self.query = nn.Linear(d_model, head_size, bias=False)
        self.key = nn.Linear(d_model, head_size, bias=False)
        self.value = nn.Linear(d_model, head_size, bias=False)
        self.register_buffer("mask", causal_mask(block_size), persistent=False)

    def hidden(self, length: int) -> Tensor:
        return ~self.mask[:length, :length]

    def forward(self, x: Tensor) -> Tensor:
        q, k, v = self.query(x), self.key(x), self.value(x)
        scores = q @ k.transpose(-2, -1) / math.sqrt(k.shape[-1])
        scores = scores.masked_fill(self.hidden(x.shape[1]), float("-inf"))
        return torch.softmax(scores, dim=-1) @ v


class ReversedHead(Head):
    def hidden(self, length: int) -> Tensor:
        return self.mask[:length, :length]  # the may-attend mask, as if it were the hidden one


class NaNHead(Head):
    def forward(self, x: Tensor) -> Tensor:
        return super().forward(x) / 0 * 0  # NaN everywhere: no mistake's NaN sit there alone


def test_a_reversed_mask_is_named_by_its_nan_row_and_its_values():
    told = first_failure("test_causal_head", {"CausalSelfAttentionHead": ReversedHead})
    assert told == str(HEAD["reversed"])
    told = first_failure("test_causal_head", {"CausalSelfAttentionHead": NaNHead})
    assert "holds NaN or inf" in told and str(HEAD["reversed"]) not in told


class AlongPositions(nn.Module):
    """Multi-head causal attention of the statement, its heads joined along ``axis``."""

    axis = 1

    def __init__(self, d_model: int, num_heads: int, block_size: int):
        super().__init__()
        self.heads = nn.ModuleList(
            Head(d_model, d_model // num_heads, block_size) for _ in range(num_heads)
        )
        self.proj = nn.Linear(d_model, d_model)

    def forward(self, x: Tensor) -> Tensor:
        return self.proj(torch.cat([head(x) for head in self.heads], dim=self.axis))


class ProjectedAcrossPositions(AlongPositions):
    """Joined along the features, then projected across the positions: another shape error."""

    def forward(self, x: Tensor) -> Tensor:
        joined = torch.cat([head(x) for head in self.heads], dim=-1)
        return self.proj(joined.transpose(1, 2))


def test_heads_joined_along_another_axis_are_named_by_the_very_error_they_raise():
    namespace = {"CausalSelfAttentionHead": Head, "MultiHeadCausalAttention": AlongPositions}
    told = first_failure("test_multihead_causal", namespace)
    assert told.startswith(str(MULTIHEAD["concatenated_across"]))
    assert "torch.cat(..., dim=0 or dim=1) and given to your self.proj raise" in told
    namespace["MultiHeadCausalAttention"] = ProjectedAcrossPositions
    told = first_failure("test_multihead_causal", namespace)
    assert str(MULTIHEAD["concatenated_across"]) not in told
    assert "mat1 and mat2 shapes cannot be multiplied" in told  # the error, told as it is


class TinyLM(nn.Module):
    """Logits (B, L, V) from the ids alone, or their softmax: enough for the output checks."""

    def __init__(self, vocab: int, block_size: int, softmax: bool = False):
        super().__init__()
        self.block_size, self.softmax = block_size, softmax
        self.table = nn.Embedding(vocab, vocab)

    def forward(self, idx: Tensor) -> Tensor:
        logits = self.table(idx)
        return torch.softmax(logits, -1) if self.softmax else logits


def test_a_training_cell_that_stopped_is_told_by_what_it_left():
    history = {"step": [50, 100], "train_loss": [3.0, 2.5], "val_loss": [3.1, 2.6]}
    assert unfinished_training({"STEPS": 100, "history": history}) is None
    assert unfinished_training({"history": history}) is None  # no STEPS: nothing to tell from
    assert "but no `history`" in unfinished_training({"STEPS": 100, "model": TinyLM(5, 4)})
    assert "records step 50 last, of its STEPS = 100" in unfinished_training(
        {"STEPS": 100, "history": {**history, "step": [50]}}
    )
    diverged = {**history, "val_loss": [3.1, math.nan]}
    assert "history['val_loss'] is nan at step 100" in unfinished_training(
        {"STEPS": 100, "history": diverged}
    )


def test_what_stopped_the_training_is_what_a_step_run_on_the_model_raises():
    def positions_as_classes(logits: Tensor, targets: Tensor) -> Tensor:
        return F.cross_entropy(logits, targets)

    def flattened(logits: Tensor, targets: Tensor) -> Tensor:
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))

    namespace = {"model": TinyLM(59, 8)}
    told = training_step_error(namespace, positions_as_classes)
    assert told is not None and "lm_loss raised RuntimeError on logits of shape (4, 8, 59)" in told
    assert training_step_error(namespace, flattened) is None
    assert training_step_error({}, flattened) is None  # no model to run


def test_probabilities_for_logits_are_named_in_the_model_and_in_the_trained_model():
    assert "probabilities" in CHARLM  # diagnosed in charlm_matches_its_parts, on the corpus
    with torch.no_grad():
        model = TinyLM(59, 8, softmax=True)
        history = {"step": [1], "train_loss": [4.0], "val_loss": [4.0]}
        namespace = {"model": model, "STEPS": 1, "history": history, "lm_loss": F.cross_entropy}
        told = first_failure("test_trained_loss", namespace)
    assert "the trained model's outputs are probabilities" in told
    assert "at least ln V - 1 = 3.08 nats" in told


def lm_of(gain: float, softmax: bool) -> type[nn.Module]:
    """A CharLM of the statement's signature whose outputs are random logits times ``gain``, or
    their softmax."""

    class CharLM(nn.Module):
        def __init__(self, vocab_size: int, block_size: int, *_: object, **__: object):
            super().__init__()
            self.block_size = block_size
            self.head = nn.Embedding(vocab_size, vocab_size)

        def forward(self, idx: Tensor) -> Tensor:
            logits = self.head(idx) * gain
            return logits.softmax(-1) if softmax else logits

    return CharLM


def _starting_loss_message(gain: float = 1.0, softmax: bool = False) -> str:
    """What charlm_starts_near_uniform_loss says of that model ("" if it passes)."""
    try:
        charlm_starts_near_uniform_loss({"CharLM": lm_of(gain, softmax)})
    except CheckFailed as failure:
        return failure.diagnosis
    return ""


def test_a_start_far_from_uniform_says_what_the_logits_look_like_and_guesses_no_cause():
    large = _starting_loss_message(gain=20.0)
    assert "its initial logits spread by" in large, large
    assert "softmax" not in large, large  # the old hint guessed one; these logits have none
    # Probabilities for logits score about ln V here: this check passes them (test_charlm's
    # comparison with the reference names them).
    assert _starting_loss_message(softmax=True) == ""


def sampler(kth_column: bool, flipped: bool = False):  # noqa: ANN201
    """sample with top-k, its k-th largest logit (B, 1), or (B,) where ``kth_column`` is False;
    ``flipped`` compares it on the left."""

    @torch.no_grad()
    def sample(model, idx, max_new_tokens, temperature=1.0, top_k=None, generator=None):  # noqa: ANN001, ANN202
        model.eval()
        for _ in range(max_new_tokens):
            logits = model(idx[:, -model.block_size :])[:, -1, :] / temperature
            if top_k is not None:
                values = torch.topk(logits, min(top_k, logits.shape[-1]), dim=-1).values
                kth = values[:, -1:] if kth_column else values[:, -1]
                below = kth > logits if flipped else logits < kth
                logits = logits.masked_fill(below, float("-inf"))
            next_id = torch.multinomial(torch.softmax(logits, -1), 1, generator=generator)
            idx = torch.cat([idx, next_id], dim=1)
        return idx

    return sample


def test_a_kth_logit_without_its_axis_is_named_by_the_very_error_the_reference_cut_raises():
    told = first_failure("test_sample", {"sample": sampler(kth_column=False)})
    assert told.startswith(str(SAMPLE["kth_logit_without_its_axis"]))
    assert "generator=a torch.Generator" in told and "object at 0x" not in told
    # The same slip compared the other way round raises another message: told as it is.
    told = first_failure("test_sample", {"sample": sampler(kth_column=False, flipped=True)})
    assert str(SAMPLE["kth_logit_without_its_axis"]) not in told
    assert told.startswith("two shapes do not broadcast")
    assert grade_cell(A, "test_sample", {"sample": sampler(kth_column=True)}).full_marks


def test_seen_logits_divided_whatever_their_sign_are_named_and_a_sign_aware_rule_passes():
    def scatter_seen(logits: Tensor, context: Tensor) -> Tensor:
        return torch.zeros_like(logits, dtype=torch.bool).scatter(1, context, True)

    def divided(logits: Tensor, context: Tensor, strength: float) -> Tensor:
        return torch.where(scatter_seen(logits, context), logits / (1 + strength), logits)

    def sign_aware(logits: Tensor, context: Tensor, strength: float) -> Tensor:
        factor = torch.where(logits > 0, 1 / (1 + strength), 1 + strength)
        return torch.where(scatter_seen(logits, context), logits * factor, logits)

    def shifted(logits: Tensor, context: Tensor, strength: float) -> Tensor:
        # seen ids raised, not divided: wrong, and no known rule
        return torch.where(scatter_seen(logits, context), logits + strength, logits)

    told = first_failure("test_penalise_repeats", {"penalise_repeats": divided})
    assert told.startswith(str(PENALTY["negative_logits_divided"]))
    told = first_failure("test_penalise_repeats", {"penalise_repeats": shifted})
    assert str(PENALTY["negative_logits_divided"]) not in told
    assert grade_cell(A, "test_penalise_repeats", {"penalise_repeats": sign_aware}).full_marks
