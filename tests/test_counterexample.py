"""The smallest public input on which an answer differs from the reference."""

from __future__ import annotations

import torch
from torch import Tensor

from autograder.authoring.counterexample import (
    PUBLIC_SEED,
    small_integers,
    smallest_counterexample,
    smallest_module_counterexample,
)

SIZES = [(1,), (2,), (3,), (4,)]


def inputs(generator: torch.Generator, size: tuple[int, ...]) -> dict[str, Tensor]:
    return {"x": small_integers(generator, *size)}


def softmax(x: Tensor) -> Tensor:
    return torch.softmax(x, dim=-1)


def test_a_right_answer_has_no_counterexample():
    assert smallest_counterexample(softmax, softmax, inputs, SIZES) is None


def test_the_smallest_size_that_shows_the_mistake_is_the_one_shown():
    """Halving the scores changes nothing on one value: the example has two."""
    found = smallest_counterexample(lambda x: softmax(x / 2), softmax, inputs, SIZES)
    assert found is not None and "public, not a hidden input" in found
    shown = found.split("x = ")[1].split(";")[0]
    assert len(eval(shown)) == 2, found  # noqa: S307 - our own printed list
    assert "yours gives" in found and "expected" in found


def test_the_inputs_are_the_public_seed_s_whatever_the_answer_does():
    drawn = []

    def record(x: Tensor) -> Tensor:
        drawn.append(x.clone())
        return softmax(x)

    smallest_counterexample(record, softmax, inputs, SIZES)
    generator = torch.Generator().manual_seed(PUBLIC_SEED)
    assert torch.equal(drawn[0], small_integers(generator, 1))


def test_an_answer_that_raises_or_changes_shape_is_left_to_the_other_checks():
    def raises(x: Tensor) -> Tensor:
        raise ValueError("no")

    assert smallest_counterexample(raises, softmax, inputs, SIZES) is None
    assert smallest_counterexample(lambda x: x.sum(), softmax, inputs, SIZES) is None


class Unbiased(torch.nn.Linear):
    """A linear layer that forgets its bias: the wrong module of these tests."""

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002 - nn.Linear's own name
        return input @ self.weight.T


def linear_inputs(generator: torch.Generator, size: tuple[int, ...]) -> dict[str, Tensor]:
    return {"input": small_integers(generator, 1, size[0])}


def test_a_module_is_compared_with_the_reference_under_the_same_small_parameters():
    def reference(size: tuple[int, ...]) -> torch.nn.Module:
        return torch.nn.Linear(size[0], size[0])

    assert smallest_module_counterexample(reference, reference, linear_inputs, [(1,), (2,)]) is None
    found = smallest_module_counterexample(
        lambda size: Unbiased(size[0], size[0]), reference, linear_inputs, [(1,), (2,)]
    )
    assert found is not None and "bias = [" in found and "weight = [" in found, found
    shown = eval(found.split("bias = ")[1].split(",")[0])  # noqa: S307 - our own printed list
    assert shown != [0] and all(value in (-1, 0, 1) for value in shown), found


def test_a_module_that_cannot_take_the_reference_s_parameters_has_no_counterexample():
    found = smallest_module_counterexample(
        lambda size: torch.nn.Linear(size[0], size[0], bias=False),
        lambda size: torch.nn.Linear(size[0], size[0]),
        linear_inputs,
        [(1,), (2,)],
    )
    assert found is None


def test_a_split_attention_gets_a_counterexample_of_two_small_parts():
    """Issue 40's third blind corpus (h07-19): a merge weighting the parts by their key counts was
    shown only sizes and an index; its counterexample is two parts of a few small integers."""
    from autograder.checks.a07_attention_at_scale import SplitAttention, smaller_split_example

    def partial(q: Tensor, k: Tensor, v: Tensor) -> tuple[Tensor, int]:
        scores = q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5
        return torch.softmax(scores, -1) @ v, k.shape[-2]

    def by_count(a: tuple[Tensor, int], b: tuple[Tensor, int]) -> tuple[Tensor, int]:
        return (a[0] * a[1] + b[0] * b[1]) / (a[1] + b[1]), a[1] + b[1]

    found = smaller_split_example(SplitAttention(partial, by_count, lambda p: p[0]))
    assert found is not None and found.startswith("with the parts k[:1] and k[1:]"), found
    assert "a small input on which yours differs" in found and "yours gives [[1.5]]" in found

    def by_mass(q: Tensor, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        scores = q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5
        return torch.softmax(scores, -1) @ v, scores.logsumexp(-1, keepdim=True)

    def merge(a: tuple[Tensor, Tensor], b: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        mass = torch.logaddexp(a[1], b[1])
        return a[0] * (a[1] - mass).exp() + b[0] * (b[1] - mass).exp(), mass

    assert smaller_split_example(SplitAttention(by_mass, merge, lambda p: p[0])) is None
