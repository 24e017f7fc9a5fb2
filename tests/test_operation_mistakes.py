"""Mistakes by operation: each slip gives what an answer with that one mistake returns, and only
that; diagnose names it on such an answer and on no other."""

from __future__ import annotations

import math

import pytest
import torch
from torch import Tensor
from torch.nn import functional as F

import attention_lab.reference.a01_attention as reference
from autograder.authoring.closeness import is_close
from autograder.authoring.diagnosis import borne_out, diagnose
from autograder.authoring.mistakes import catalogue
from autograder.authoring.operation_mistakes import (
    InTrainMode,
    any_over,
    causal_mask_slips,
    computed_in,
    concatenated_along,
    finite_fill,
    keepdim_dropped,
    mask_dropped,
    mask_slips,
    max_over_everything,
    mistaken_outputs,
    outputs,
    plain_softmax_rows,
    probabilities,
    raising_alike,
    scale_slips,
    slice_indexed,
    softmax_axis_slips,
    softmax_before_cross_entropy,
    softmax_over,
    top_k_slips,
    trailing_axis_dropped,
)
from autograder.authoring.registry import CheckFailed

L_Q, L_K, D_K, D_V = 3, 5, 4, 6  # all different: no axis or size stands in for another


def inputs(seed: int = 0) -> dict[str, Tensor]:
    g = torch.Generator().manual_seed(seed)
    return {
        "q": torch.randn(2, L_Q, D_K, generator=g, dtype=torch.float64),
        "k": torch.randn(2, L_K, D_K, generator=g, dtype=torch.float64),
        "v": torch.randn(2, L_K, D_V, generator=g, dtype=torch.float64),
    }


def weights(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None, scale=True) -> Tensor:
    """The reference's attention weights (..., L_q, L_k)."""
    return reference.scaled_dot_product_attention(q, k, v, mask, scale=scale)[1]


def written_weights(q: Tensor, k: Tensor, *, scale: float, dim: int = -1, fill=None, mask=None):
    """Attention weights written out by hand, as a student would, with the given choices."""
    scores = q @ k.transpose(-2, -1) * scale
    if mask is not None:
        scores = scores.masked_fill(~mask, fill)
    return torch.softmax(scores, dim=dim)


def only_match(found: dict[str, Tensor], answer: Tensor) -> list[str]:
    """The names of the slips whose output ``answer`` matches."""
    return [name for name, value in found.items() if is_close(answer, value, equal_nan=True)]


def test_the_softmax_over_another_axis_is_the_answer_written_with_that_axis():
    args = inputs()
    found = outputs(weights, args, softmax_axis_slips(3))
    assert sorted(found) == ["softmax_over_axis_-2", "softmax_over_axis_-3"]
    right = written_weights(args["q"], args["k"], scale=1 / math.sqrt(D_K))
    over_queries = written_weights(args["q"], args["k"], scale=1 / math.sqrt(D_K), dim=-2)
    over_batch = written_weights(args["q"], args["k"], scale=1 / math.sqrt(D_K), dim=0)
    unscaled = written_weights(args["q"], args["k"], scale=1.0)
    assert only_match(found, over_queries) == ["softmax_over_axis_-2"]
    assert only_match(found, over_batch) == ["softmax_over_axis_-3"]
    assert only_match(found, right) == [] and only_match(found, unscaled) == []


@pytest.mark.parametrize(
    "softmax",
    [
        lambda x, dim: torch.softmax(x, dim),
        lambda x, dim: F.softmax(x, dim=dim),
        lambda x, dim: x.softmax(dim),
        lambda x, dim: torch.log_softmax(x, dim=dim).exp(),
        lambda x, dim: F.log_softmax(x, dim).exp(),
        lambda x, dim: x.log_softmax(dim=dim).exp(),
    ],
    ids=["torch", "F", "method", "torch log", "F log", "method log"],
)
def test_every_spelling_of_the_softmax_is_slipped(softmax):
    x = torch.randn(3, 4, dtype=torch.float64)
    found = outputs(lambda x: softmax(x, -1), {"x": x}, [softmax_over(0)])
    assert torch.allclose(found["softmax_over_axis_0"], torch.softmax(x, 0))
    assert torch.allclose(softmax(x, -1), torch.softmax(x, -1))  # and the mode is gone after


def test_a_softmax_before_the_cross_entropy_is_every_spelling_of_it_and_no_log_softmax():
    g = torch.Generator().manual_seed(0)
    logits = torch.randn(2, 3, 5, generator=g, dtype=torch.float64)  # (B, L, V)
    targets = torch.randint(0, 5, (2, 3), generator=g)

    def loss(logits: Tensor, targets: Tensor) -> Tensor:
        return F.cross_entropy(logits.reshape(-1, 5), targets.reshape(-1))

    found = outputs(loss, {"logits": logits, "targets": targets}, [softmax_before_cross_entropy()])
    slipped = found["softmax_before_cross_entropy"]
    assert is_close(
        slipped, F.cross_entropy(logits.softmax(-1).reshape(-1, 5), targets.reshape(-1))
    )
    # the classes on dim 1 of (B, V, L), and a batch of rows given as keywords: the same slip
    by_columns = F.cross_entropy(torch.softmax(logits, -1).transpose(1, 2), targets)
    assert is_close(slipped, by_columns)
    assert is_close(
        outputs(
            lambda logits, targets: F.cross_entropy(input=logits.transpose(1, 2), target=targets),
            {"logits": logits, "targets": targets},
            [softmax_before_cross_entropy()],
        )["softmax_before_cross_entropy"],
        by_columns,
    )
    # a log-softmax before it changes no loss: no slip matches it
    log_probabilities = F.cross_entropy(logits.log_softmax(-1).reshape(-1, 5), targets.reshape(-1))
    assert is_close(log_probabilities, loss(logits, targets))
    assert not is_close(log_probabilities, slipped)


def test_a_trailing_axis_dropped_broadcasts_and_raises_as_the_tensor_without_it():
    def shifted(x: Tensor) -> Tensor:
        return x - x.amax(-1).unsqueeze(-1)

    square = torch.arange(27.0).view(3, 3, 3)  # sizes that broadcast: rows mixed up
    found = outputs(shifted, {"x": square}, [trailing_axis_dropped()])
    assert torch.equal(found["trailing_axis_dropped"], square - square.amax(-1))
    with pytest.raises(RuntimeError) as raised:
        torch.zeros(4, 3, 6) - torch.zeros(4, 3)
    names = raising_alike(
        shifted, {"x": torch.zeros(4, 3, 6)}, [trailing_axis_dropped()], raised.value
    )
    assert names == ["trailing_axis_dropped"]
    assert outputs(lambda x: x.unsqueeze(0), {"x": square}, [trailing_axis_dropped()]) == {}


def test_a_slip_of_an_operation_the_reference_never_does_gives_nothing():
    x = torch.randn(3, 4)
    assert outputs(lambda x: x.exp(), {"x": x}, [softmax_over(0), *top_k_slips()]) == {}


def test_each_scale_factor_is_the_answer_scaled_that_way():
    args = inputs(1)
    q, k = args["q"], args["k"]
    found = outputs(weights, args, scale_slips(D_K, {"l_k": L_K, "d_v": D_V}))
    answers = {
        "not_scaled": written_weights(q, k, scale=1.0),
        "divided_by_d_k": written_weights(q, k, scale=1 / D_K),
        "multiplied_by_sqrt_d_k": written_weights(q, k, scale=math.sqrt(D_K)),
        "scaled_by_sqrt_l_k": written_weights(q, k, scale=1 / math.sqrt(L_K)),
        "scaled_by_sqrt_d_v": written_weights(q, k, scale=1 / math.sqrt(D_V)),
    }
    assert sorted(found) == sorted(answers)
    for name, answer in answers.items():
        assert only_match(found, answer) == [name]
    assert only_match(found, written_weights(q, k, scale=1 / math.sqrt(D_K))) == []
    assert only_match(found, written_weights(q, k, scale=1 / math.sqrt(D_K), dim=-2)) == []


def test_a_mistake_is_borne_out_only_where_every_wrong_draw_matches_it():
    # d_k = 2, d_v = 4: 1/d_k is 1/√d_v, and only the second draw (d_v = 9) tells them apart.
    cases = []
    for d_v in (4, 9, 2):
        g = torch.Generator().manual_seed(d_v)
        q, k = (torch.randn(n, 2, generator=g, dtype=torch.float64) for n in (L_Q, L_K))
        v = torch.randn(L_K, d_v, generator=g, dtype=torch.float64)
        found = outputs(weights, {"q": q, "k": k, "v": v}, scale_slips(2, {"d_v": d_v}))
        answer = written_weights(q, k, scale=1 / math.sqrt(d_v))
        cases.append((answer, weights(q, k, v), found))
    assert only_match(cases[0][2], cases[0][0]) == ["divided_by_d_k", "scaled_by_sqrt_d_v"]
    assert borne_out(cases) == {"scaled_by_sqrt_d_v"}  # the third draw, d_v = d_k, is right


def test_a_size_equal_to_d_k_is_no_scale_mistake():
    names = [slip.name for slip in scale_slips(4, {"d_v": 4, "l_k": 16})]
    assert "scaled_by_sqrt_d_v" not in names and "scaled_by_sqrt_l_k" in names


def test_causal_mask_slips_are_the_masks_written_those_ways():
    causal = torch.ones(4, 4, dtype=torch.bool).tril()
    i = torch.arange(4)
    found = outputs(lambda mask: mask, {"mask": causal}, causal_mask_slips())
    assert torch.equal(found["reversed"], ~causal)
    assert torch.equal(found["hides_diagonal"], i[None, :] < i[:, None])
    assert torch.equal(found["shows_next"], i[None, :] <= i[:, None] + 1)
    assert torch.equal(found["transposed"], i[None, :] >= i[:, None])


def test_a_reversed_or_missing_mask_and_a_finite_fill_are_the_answers_written_so():
    args = inputs(2)
    q, k = args["q"], args["k"]
    mask = torch.rand(2, L_Q, L_K, generator=torch.Generator().manual_seed(3)) > 0.4
    mask[..., 0], mask[..., -1, :] = True, True  # every query sees a key, and so does ~mask's
    mask[..., 0, -1] = False
    # A fill of -1 (not -100, whose weight exp(-100) is below any tolerance at these scores).
    slips = [*mask_slips(), finite_fill(-1.0), mask_dropped()]
    found = outputs(weights, {**args, "mask": mask}, slips)
    scale = 1 / math.sqrt(D_K)
    reversed_answer = torch.softmax(
        (q @ k.transpose(-2, -1) * scale).masked_fill(mask, -math.inf), -1
    ).nan_to_num(0.0)  # the rows ~mask hides whole get zero weights, as the contract says
    assert only_match(found, reversed_answer) == ["mask_reversed"]
    assert only_match(found, written_weights(q, k, scale=scale, fill=-1.0, mask=mask)) == [
        "finite_fill"
    ]
    assert only_match(found, written_weights(q, k, scale=scale)) == ["no_mask"]
    right = written_weights(q, k, scale=scale, fill=-math.inf, mask=mask)
    assert only_match(found, right) == []


def test_a_finite_fill_leaves_other_fills_alone():
    x = torch.zeros(2, 3)
    hide = torch.tensor([[True, False, False], [False, False, True]])
    found = outputs(lambda x: x.masked_fill(hide, 0.5), {"x": x}, [finite_fill()])
    assert found == {}


def distribution(logits: Tensor, top_k: int) -> Tensor:
    """softmax over the top_k largest of logits (V,), written as sample does."""
    kth = torch.topk(logits, top_k).values[-1]
    return torch.softmax(logits.masked_fill(logits < kth, -math.inf), -1)


def test_top_k_off_by_one_keeps_one_more_or_one_fewer():
    logits = torch.tensor([0.3, -1.0, 2.0, 0.9, -0.2], dtype=torch.float64)
    found = outputs(distribution, {"logits": logits, "top_k": 3}, top_k_slips())
    assert torch.equal(found["top_k_one_more"] > 0, distribution(logits, 4) > 0)
    assert torch.equal(found["top_k_one_fewer"] > 0, distribution(logits, 2) > 0)
    assert only_match(found, distribution(logits, 3)) == []
    # k - 1 = 0 keeps nothing and k + 1 > V cannot be drawn: neither is an answer's output.
    assert sorted(outputs(distribution, {"logits": logits, "top_k": 1}, top_k_slips())) == [
        "top_k_one_more"
    ]
    assert sorted(outputs(distribution, {"logits": logits, "top_k": 5}, top_k_slips())) == [
        "top_k_one_fewer"
    ]


def test_a_dropped_keepdim_broadcasts_where_the_sizes_allow_and_is_no_answer_elsewhere():
    def stable_exp(x: Tensor) -> Tensor:
        return (x - x.amax(-1, keepdim=True)).exp()

    square = torch.randn(3, 3, dtype=torch.float64)
    found = outputs(stable_exp, {"x": square}, [keepdim_dropped()])
    assert torch.allclose(found["keepdim_dropped"], (square - square.amax(-1)).exp())
    assert outputs(stable_exp, {"x": torch.randn(3, 4)}, [keepdim_dropped()]) == {}


def test_a_slice_of_width_one_written_as_an_index_drops_its_axis():
    def cut(x: Tensor) -> Tensor:
        return x.masked_fill(x < x.sort(-1).values[:, -2:-1], 0.0)

    square, wide = torch.randn(3, 3, dtype=torch.float64), torch.randn(3, 4)
    # Where the sizes broadcast, each row is compared with the column's value, not its own.
    (found,) = outputs(cut, {"x": square}, [slice_indexed()]).values()
    assert torch.equal(found, square.masked_fill(square < square.sort(-1).values[:, -2], 0.0))
    with pytest.raises(RuntimeError) as raised:
        wide.masked_fill(wide < wide.sort(-1).values[:, -2], 0.0)
    assert raising_alike(cut, {"x": wide}, [slice_indexed()], raised.value) == ["slice_indexed"]
    # Slices wider than one, or empty, are no slip.
    assert slice_indexed().output(lambda x: x[:, -2:] + x[:, 1:3], {"x": wide}) is None
    assert slice_indexed().output(lambda x: x[:, -1:0], {"x": wide}) is None


def test_a_max_over_everything_is_the_answer_that_takes_one_max_for_the_batch():
    def row_max_and_shift(x: Tensor) -> tuple[Tensor, Tensor]:
        return x.amax(-1), x - x.amax(dim=(-1,), keepdim=True)

    x = torch.randn(3, 4, dtype=torch.float64)
    top, shifted = max_over_everything().output(row_max_and_shift, {"x": x})
    assert torch.equal(top, x.max()) and torch.equal(shifted, x - x.max())
    # A maximum already over every axis, or of a single row, is no slip.
    assert max_over_everything().output(lambda x: x.amax((0, 1)), {"x": x}) is None
    assert max_over_everything().output(lambda x: x.amax(-1), {"x": x[0]}) is None


def test_rows_that_see_a_key_asked_of_the_queries_is_the_answer_written_so():
    """The reference's rows with a visible key, mask.any(dim=-1), asked of dim -2 instead:
    issue 40's h01-10, a key no query sees scored 0 and zeroed after the softmax."""
    q, k = torch.randn(L_Q, D_K, dtype=torch.float64), torch.randn(L_K, D_K, dtype=torch.float64)
    mask = torch.rand(L_Q, L_K) > 0.5
    mask[:, 0], mask[1], mask[:, -1] = True, False, False
    slipped = any_over(-2).output(
        reference.scaled_dot_product_attention, {"q": q, "k": k, "v": k, "mask": mask}
    )
    seen = mask.any(dim=-2, keepdim=True)
    scores = (q @ k.T / math.sqrt(D_K)).masked_fill(~mask, -math.inf).masked_fill(~seen, 0.0)
    assert is_close(slipped[1], torch.softmax(scores, -1).masked_fill(~seen, 0.0))
    # Asked of the axis the reference asks already, it changes nothing: no slip.
    assert (
        any_over(-1).output(
            reference.scaled_dot_product_attention, {"q": q, "k": k, "v": k, "mask": mask}
        )
        is None
    )


def test_rows_that_see_no_key_give_nan_as_a_plain_softmax_does():
    out = torch.ones(3, 2)
    mask = torch.tensor([[True, False], [False, False], [True, True]])
    assert plain_softmax_rows(out, mask).isnan().tolist() == [[False] * 2, [True] * 2, [False] * 2]
    assert plain_softmax_rows(out, None) is out


NAMED = catalogue(
    "tests/test_operation_mistakes",
    "attention",
    {
        "softmax axis": {"softmax_over_queries": "the softmax runs over the queries"},
        "scaling": {
            "not_scaled": "the scores are not scaled",
            "divided_by_d_k": "the scores are divided by d_k",
            "multiplied_by_sqrt_d_k": "the scores are multiplied by √d_k",
            "scaled_by_sqrt_d_v": "the scores are scaled by √d_v",
        },
    },
)


def diagnosis(answer: Tensor, args: dict[str, Tensor]) -> str | None:
    """What diagnose says of ``answer`` given every slip of NAMED; None if it passes."""
    slips = [softmax_over(-2, "softmax_over_queries"), *scale_slips(D_K, {"d_v": D_V})]
    try:
        diagnose(answer, weights(**args), mistaken_outputs(NAMED, weights, args, slips), "differs")
    except CheckFailed as failure:
        return failure.diagnosis
    return None


def test_diagnose_names_a_slip_only_on_an_answer_that_makes_it():
    args = inputs(4)
    q, k = args["q"], args["k"]
    assert diagnosis(written_weights(q, k, scale=1 / math.sqrt(D_K)), args) is None
    assert diagnosis(written_weights(q, k, scale=1 / math.sqrt(D_V)), args) == str(
        NAMED["scaled_by_sqrt_d_v"]
    )
    assert diagnosis(written_weights(q, k, scale=1 / math.sqrt(D_K), dim=-2), args) == str(
        NAMED["softmax_over_queries"]
    )
    # A mistake outside the catalogue: √(d_k + 1). Nothing is named; what differs is shown.
    told = diagnosis(written_weights(q, k, scale=1 / math.sqrt(D_K + 1)), args)
    assert told.startswith("differs (first difference at index")
    assert not any(str(mistake) in told for mistake in NAMED.values())


def test_a_slip_the_catalogue_does_not_name_is_refused():
    with pytest.raises(KeyError, match="scaled_by_sqrt_l_k"):
        mistaken_outputs(NAMED, weights, inputs(), scale_slips(D_K, {"l_k": L_K}))


def test_computing_in_float32_is_the_answer_that_upcasts():
    x = torch.randn(3, 4, generator=torch.Generator().manual_seed(5)).half()
    found = outputs(lambda x: torch.softmax(x, -1), {"x": x}, [computed_in(torch.float32)])
    upcast = torch.softmax(x.float(), -1)
    assert found["computed_in_float32"].dtype == torch.float32 == upcast.dtype
    assert torch.equal(found["computed_in_float32"], upcast)


def test_train_mode_runs_the_module_with_dropout_and_restores_its_mode():
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Dropout(0.5)).eval()
    x = torch.randn(2, 4)

    def reference(model: torch.nn.Module, x: Tensor) -> Tensor:
        torch.manual_seed(0)
        return model(x)

    found = outputs(reference, {"model": model, "x": x}, [InTrainMode()])
    assert not any(part.training for part in model.modules())  # back in eval mode
    assert not torch.equal(found["in_train_mode"], reference(model, x))
    torch.manual_seed(0)
    assert torch.equal(found["in_train_mode"], model.train()(x))
    assert outputs(lambda x: x, {"x": x}, [InTrainMode()]) == {}


@pytest.mark.parametrize(
    "join",
    [
        lambda parts: torch.cat(parts, dim=-1),
        lambda parts: torch.cat(parts, -1),
        lambda parts: torch.concat(parts, dim=2),
        lambda parts: torch.concatenate(parts, -1),
    ],
    ids=["cat keyword", "cat positional", "concat", "concatenate"],
)
def test_every_spelling_of_a_concatenation_is_slipped(join):
    parts = [torch.randn(2, 3, 4, dtype=torch.float64) for _ in range(3)]
    found = outputs(join, {"parts": parts}, [concatenated_along(1), concatenated_along(-1)])
    assert sorted(found) == ["concatenated_along_axis_1"]  # the axis asked for is no slip
    assert torch.equal(found["concatenated_along_axis_1"], torch.cat(parts, 1))


def projected(parts: list[Tensor], weight: Tensor) -> Tensor:
    """The parts joined along the features, then projected, as multi-head attention does."""
    return F.linear(torch.cat(parts, dim=-1), weight)


def test_an_error_is_raised_alike_only_by_the_slips_that_raise_it_word_for_word():
    parts = [torch.randn(2, 3, 4) for _ in range(3)]
    weight = torch.randn(12, 12)
    slips = [concatenated_along(0, "dim=0"), concatenated_along(1, "dim=1")]
    try:
        F.linear(torch.cat(parts, dim=1), weight)
    except RuntimeError as error:
        along_positions = error
    # Along the batch or the positions, the same rows of 4 features reach the product.
    assert raising_alike(projected, {"parts": parts, "weight": weight}, slips, along_positions) == [
        "dim=0",
        "dim=1",
    ]
    other = RuntimeError("mat1 and mat2 shapes cannot be multiplied (6x12 and 4x4)")
    assert raising_alike(projected, {"parts": parts, "weight": weight}, slips, other) == []
    renamed = ValueError(str(along_positions))  # another type, the same words
    assert raising_alike(projected, {"parts": parts, "weight": weight}, slips, renamed) == []
    # A slip that changes nothing it calls, or calls without an error, raises nothing alike.
    assert (
        raising_alike(projected, {"parts": parts[:1], "weight": weight[:, :4]}, slips, other) == []
    )


def test_probabilities_are_the_softmax_of_what_the_reference_returns():
    logits = torch.randn(2, 3, 5, dtype=torch.float64)
    found = outputs(lambda logits: logits * 2, {"logits": logits}, [probabilities()])
    assert torch.allclose(found["probabilities"], torch.softmax(logits * 2, -1))
    assert only_match(found, logits * 2) == []
