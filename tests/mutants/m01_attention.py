"""Mutants of 01_attention."""

from tests.mutants import Body, Mutant, Replace

A = "01_attention"

SCALING = "    if scale:\n        scores = scores / math.sqrt(q.shape[-1])\n"
# The two returns of the solution's `attention`: without a mask, and with one.
RETURN_UNMASKED = "        return weights @ v, weights\n"
RETURN_MASKED = "\n    return weights @ v, weights"
CAUSAL = "torch.ones(n, n, dtype=torch.bool).tril()"

WRONG = [
    Mutant(
        "rows that see a key found by mask.sum(-1) > 0, without keepdim",
        A,
        {
            "attention": Replace(
                "has_visible_key = mask.any(dim=-1, keepdim=True)  # (..., L_q, 1)",
                "has_visible_key = mask.sum(-1) > 0",
            )
        },
        {
            "test_attention_fully_masked_row": "the flags of the rows that see a key are a "
            "reduction over the keys without keepdim=True"
        },
        charged_once=True,  # the parity cell raises where L_q != L_k: the same mistake (q01-02)
    ),
    Mutant(
        "softmax over queries",
        A,
        {
            "attention": (
                Replace(
                    "torch.softmax(scores, dim=-1)\n",
                    "torch.nan_to_num(torch.softmax(scores, dim=-2))\n",
                ),
                Replace(
                    "torch.softmax(scores, dim=-1).masked_fill",
                    "torch.nan_to_num(torch.softmax(scores, dim=-2)).masked_fill",
                ),
            )
        },
        {"test_attention_rows_sum_to_one": "over queries, not keys"},
    ),
    Mutant(
        "softmax over queries, fully masked rows left to it",
        A,
        {
            "attention": (
                Replace("torch.softmax(scores, dim=-1)\n", "torch.softmax(scores, dim=-2)\n"),
                Replace(
                    "    has_visible_key = mask.any(dim=-1, keepdim=True)  # (..., L_q, 1)\n"
                    "    scores = scores.masked_fill(~has_visible_key, 0.0)  # no all -inf rows, "
                    "so no NaN\n",
                    "",
                ),
                Replace(
                    "torch.softmax(scores, dim=-1).masked_fill(~has_visible_key, 0.0)",
                    "torch.softmax(scores, dim=-2)",
                ),
            )
        },
        # Over the queries, a fully masked row gets weight 0 from its column's softmax; the key
        # that no query sees beside it is 0/0, under every secret (tests/test_hidden_seeds.py).
        {
            "test_attention_rows_sum_to_one": "over queries, not keys",
            "test_attention_fully_masked_row": "the output or the weights hold NaN or inf",
        },
    ),
    Mutant(
        "numpy answer returns tensors",
        A,
        {
            "attention_numpy": Replace(
                "return weights @ V, weights",
                "return torch.as_tensor(weights @ V), torch.as_tensor(weights)",
            )
        },
        {"test_attention_numpy": "must return NumPy arrays"},
    ),
    Mutant(
        "no scaling",
        A,
        {"attention": Replace(SCALING, "")},
        {"test_attention_scaling": "not scaled"},
    ),
    Mutant(
        "scaled by d_k",
        A,
        {"attention": Replace("scores / math.sqrt(q.shape[-1])", "scores / q.shape[-1]")},
        {"test_attention_scaling": "by d_k instead of √d_k"},
    ),
    Mutant(
        "scaled by sqrt(L_k)",
        A,
        {"attention": Replace("math.sqrt(q.shape[-1])", "math.sqrt(k.shape[-2])")},
        {"test_attention_scaling": "√L_k"},
    ),
    Mutant(  # issue 40's tenth blind corpus (v01-03): once charged in the parity cell again
        "scaled by sqrt(d_v)",
        A,
        {"attention": Replace("math.sqrt(q.shape[-1])", "math.sqrt(v.shape[-1])")},
        {"test_attention_scaling": "√d_v (v.shape[-1], the values' size)"},
        charged_once=True,
        in_notebook=True,  # its repair held to the grading command (judge parity)
    ),
    Mutant(
        "mask polarity reversed",
        A,
        {"attention": Replace("mask = mask.bool()", "mask = ~mask.bool()")},
        # Charged once, in the first cell it fails: parity and causal weights are waived.
        {"test_attention_fully_masked_row": "polarity reversed"},
        charged_once=True,
    ),
    Mutant(  # one charge per mistake: a later cell with a mistake of its own is still charged
        "scaled by sqrt(L_k), mask polarity reversed",
        A,
        {
            "attention": (
                Replace("math.sqrt(q.shape[-1])", "math.sqrt(k.shape[-2])"),
                Replace("mask = mask.bool()", "mask = ~mask.bool()"),
            )
        },
        {
            "test_attention_scaling": "√L_k",
            "test_attention_fully_masked_row": "polarity reversed",
            "test_attention_parity": "√L_k",
            "test_causal_weights": "uses your answer cell `attention`",
        },
    ),
    Mutant(  # one charge per mistake: a later cell with a mistake of its own is still charged
        "softmax over dim=1, unscaled",
        A,
        {
            "attention": (
                Replace("torch.softmax(scores, dim=-1)\n", "torch.softmax(scores, dim=1)\n"),
                Replace(
                    "torch.softmax(scores, dim=-1).masked_fill",
                    "torch.softmax(scores, dim=1).masked_fill",
                ),
                Replace(SCALING, ""),
            )
        },
        {
            "test_attention_rows_sum_to_one": "over queries, not keys",
            "test_attention_scaling": "weights differ from softmax(q kᵀ / √d_k)",
            "test_attention_parity": "not scaled",
        },
    ),
    Mutant(
        "masking with -100",
        A,
        {"attention": Replace('masked_fill(~mask, float("-inf"))', "masked_fill(~mask, -100.0)")},
        {"test_attention_parity": "finite number"},
    ),
    Mutant(
        "NaN on fully masked rows",
        A,
        {
            "attention": (
                Replace(
                    "    has_visible_key = mask.any(dim=-1, keepdim=True)  # (..., L_q, 1)\n"
                    "    scores = scores.masked_fill(~has_visible_key, 0.0)"
                    "  # no all -inf rows, so no NaN\n",
                    "",
                ),
                Replace(".masked_fill(~has_visible_key, 0.0)", ""),
            )
        },
        {"test_attention_fully_masked_row": "NaN"},
    ),
    Mutant(
        "calls the reference",
        A,
        {
            "attention": Replace(
                RETURN_UNMASKED,
                "        out = F.scaled_dot_product_attention(q, k, v, scale=None if scale else 1.0)\n"
                "        return out, weights\n",
            )
        },
        {  # every cell that uses `attention` carries its ban
            grade_id: "calls F.scaled_dot_product_attention"
            for grade_id in (
                "test_attention_rows_sum_to_one",
                "test_attention_scaling",
                "test_attention_fully_masked_row",
                "test_attention_parity",
                "test_causal_weights",
            )
        },
    ),
    Mutant(
        "causal mask without the diagonal",
        A,
        {"causal_mask": Replace(".tril()", ".tril(-1)")},
        {"test_causal_mask": "hides the diagonal"},
        in_notebook=True,  # its repair (diagonal_shown) confirms the cause through the command
        charged_once=True,  # the causal weights cell, which applies the mask, is not charged again
    ),
    Mutant(
        "causal mask hard-coded for the public example",
        A,
        {
            "causal_mask": Replace(
                CAUSAL,
                "torch.tensor([[1, 0, 0, 0], [1, 1, 0, 0], [1, 1, 1, 0], [1, 1, 1, 1]]).bool()",
            )
        },
        {"test_causal_mask": "must be an (2, 2) tensor"},
    ),
    # Mistakes whose messages used to name a cause they do not have (issue 25)
    Mutant(
        "scores multiplied by sqrt(d_k)",
        A,
        {
            "attention": Replace(
                "scores / math.sqrt(q.shape[-1])", "scores * math.sqrt(q.shape[-1])"
            )
        },
        {"test_attention_scaling": "multiplied by √d_k instead of divided"},
    ),
    Mutant(
        "causal mask fully inverted",
        A,
        {"causal_mask": Replace(CAUSAL, "~torch.ones(n, n, dtype=torch.bool).tril()")},
        {"test_causal_mask": "causal mask polarity reversed"},
        in_notebook=True,
        charged_once=True,
    ),
    Mutant(
        "causal mask shows the next position",
        A,
        {"causal_mask": Replace(".tril()", ".tril(1)")},
        {"test_causal_mask": "also shows the next position"},
        in_notebook=True,
        charged_once=True,
    ),
    Mutant(
        "causal mask transposed",
        A,
        {"causal_mask": Replace(".tril()", ".triu()")},
        {"test_causal_mask": "see the future (upper triangle)"},
        in_notebook=True,
        charged_once=True,
    ),
    Mutant(
        "naive exp in NumPy",
        A,
        {
            "attention_numpy": Replace(
                "    # stable: the largest exponent is 0\n"
                "    scores = scores - scores.max(axis=-1, keepdims=True)\n",
                "",
            )
        },
        {"test_attention_numpy": "overflows"},
    ),
    # Degenerate sizes and the mistakes that the traced messages used to misname
    Mutant(
        "weights squeezed",
        A,
        {
            "attention": Replace(
                "        weights = torch.softmax(scores, dim=-1)\n" + RETURN_UNMASKED,
                "        weights = torch.softmax(scores, dim=-1).squeeze()\n" + RETURN_UNMASKED,
            )
        },
        {"test_attention_rows_sum_to_one": "squeeze() drops every such axis"},
        in_notebook=True,
    ),
    Mutant(
        "numpy: returns (weights, output)",
        A,
        {
            "attention_numpy": Replace(
                "    return weights @ V, weights", "    return weights, weights @ V"
            )
        },
        {"test_attention_numpy": "returns (weights, output)"},
        in_notebook=True,
    ),
    Mutant(
        "hand-written softmax without the max",
        A,
        {
            "attention": Replace(
                "        weights = torch.softmax(scores, dim=-1)\n" + RETURN_UNMASKED,
                "        exp_scores = torch.exp(scores)\n"
                "        weights = exp_scores / exp_scores.sum(dim=-1, keepdim=True)\n"
                + RETURN_UNMASKED,
            )
        },
        {"test_attention_parity": "exp overflowed"},
        in_notebook=True,
    ),
    Mutant(  # in no catalogue: no cause can be confirmed, so a small public input is shown
        "scaled by √(d_k + 1)",
        A,
        {
            "attention": Replace(
                "scores = scores / math.sqrt(q.shape[-1])",
                "scores = scores / math.sqrt(q.shape[-1] + 1)",
            )
        },
        {
            "test_attention_scaling": "a small input on which yours differs",
            "test_attention_parity": "a small input on which yours differs",
        },
        not_told=("not scaled", "instead of", "over queries", "polarity", "finite number"),
    ),
    Mutant(  # in no catalogue, nor a scale: a counterexample, and no cause words
        "scores taken as absolute values, in both answers",
        A,
        {
            "attention": Replace(
                "    scores = q @ k.transpose(-2, -1)",
                "    scores = (q @ k.transpose(-2, -1)).abs()",
            ),
            "attention_numpy": Replace(
                "scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k)",
                "scores = np.abs(Q @ np.swapaxes(K, -1, -2)) / np.sqrt(d_k)",
            ),
        },
        {
            "test_attention_numpy": "a small input on which yours differs",
            "test_attention_scaling": "a small input on which yours differs",
            "test_attention_parity": "a small input on which yours differs",
        },
        not_told=(
            "not scaled",
            "instead of",
            "over queries",
            "polarity",
            "finite number",
            "overflow",
            "wrong dimension",
        ),
    ),
    # Issue 40's fresh corpus: kept full marks before (torch.equal compares across dtypes).
    Mutant(
        "causal_mask returns float 0/1, not bool",
        A,
        {
            "causal_mask": Replace(
                "    return torch.ones(n, n, dtype=torch.bool).tril()",
                "    return torch.tril(torch.ones(n, n))",
            )
        },
        {"test_causal_mask": "must return a bool tensor, got torch.float32"},
    ),
    # Issue 40's fresh corpus (f01-10): the scale is right, but written into the caller's q. The
    # checks computed their reference from that q after the call, so the answer looked unscaled
    # and, called twice on one q, leaky.
    Mutant(
        "q scaled in place with q.div_",
        A,
        {
            "attention": Replace(
                "    scores = q @ k.transpose(-2, -1)  # (..., L_q, L_k)\n" + SCALING,
                "    if scale:\n"
                "        q = q.div_(math.sqrt(q.shape[-1]))\n"
                "    scores = q @ k.transpose(-2, -1)  # (..., L_q, L_k)\n",
            )
        },
        {
            "test_attention_rows_sum_to_one": (
                "`attention` changed a tensor it was given, in place: its argument `q` changed"
            )
        },
        makes=("inputs.written_in_place",),
        not_told=("not scaled", "future leaks", "instead of", "over queries", "polarity"),
        in_notebook=True,  # on_copies confirms the write through the judge, on the kernel's q
    ),
]

CORRECT = [
    Mutant(
        "einsum",
        A,
        {
            "attention": (
                Replace("q @ k.transpose(-2, -1)", 'torch.einsum("...qd,...kd->...qk", q, k)'),
                Replace("math.sqrt(q.shape[-1])", "q.shape[-1] ** 0.5"),
                Replace(
                    RETURN_UNMASKED,
                    '        return torch.einsum("...qk,...kd->...qd", weights, v), weights\n',
                ),
                Replace(
                    RETURN_MASKED,
                    '\n    return torch.einsum("...qk,...kd->...qd", weights, v), weights',
                ),
            )
        },
    ),
    Mutant(
        "explicit loop over queries",
        A,
        {
            "attention": Body(
                "attention",
                """
                d_k = q.shape[-1]
                scores = q @ k.transpose(-2, -1) / (math.sqrt(d_k) if scale else 1.0)
                if mask is not None:
                    mask = mask.bool().expand(scores.shape)
                rows = []
                for i in range(scores.shape[-2]):
                    row = scores[..., i, :]
                    if mask is not None:
                        keep = mask[..., i, :]
                        row = torch.where(keep, row, torch.full_like(row, float("-inf")))
                        safe = torch.where(keep.any(-1, keepdim=True), row, torch.zeros_like(row))
                        w = torch.softmax(safe, dim=-1) * keep.any(-1, keepdim=True)
                    else:
                        w = torch.softmax(row, dim=-1)
                    rows.append(w)
                weights = torch.stack(rows, dim=-2)
                return weights @ v, weights
                """,
            )
        },
    ),
    Mutant(
        "float64 inside",
        A,
        {
            "attention": (
                Replace(
                    "    scores = q @ k.transpose(-2, -1)",
                    "    dtype = q.dtype\n"
                    "    q, k, v = q.double(), k.double(), v.double()\n"
                    "    scores = q @ k.transpose(-2, -1)",
                ),
                Replace(
                    RETURN_UNMASKED, "        return (weights @ v).to(dtype), weights.to(dtype)\n"
                ),
                Replace(RETURN_MASKED, "\n    return (weights @ v).to(dtype), weights.to(dtype)"),
            )
        },
    ),
    Mutant(
        "finfo.min and explicit zeroing",
        A,
        {
            "attention": Body(
                "attention",
                """
                scores = q @ k.transpose(-2, -1)
                if scale:
                    scores = scores / math.sqrt(q.shape[-1])
                if mask is None:
                    weights = scores.softmax(-1)
                else:
                    keep = mask != 0
                    scores = scores.masked_fill(~keep, torch.finfo(scores.dtype).min)
                    weights = scores.softmax(-1) * keep  # exactly 0 on hidden keys, 0 rows when all hidden
                return weights @ v, weights
                """,
            )
        },
    ),
    Mutant(
        "numpy via logsumexp, causal mask from triu",
        A,
        {
            "attention_numpy": Body(
                "attention_numpy",
                """
                scores = (Q @ K.T) / np.sqrt(K.shape[1])
                top = scores.max(axis=1, keepdims=True)
                log_norm = top + np.log(np.exp(scores - top).sum(axis=1, keepdims=True))
                weights = np.exp(scores - log_norm)
                return weights @ V, weights
                """,
            ),
            "causal_mask": Replace(CAUSAL, "~torch.ones(n, n, dtype=torch.bool).triu(1)"),
        },
    ),
]

# sees_the_future: the test's design is the student's; these designs break a property.
SEES_THE_FUTURE = "sees_the_future"
TOLERANCE = "(after[:, : i + 1] - before[:, : i + 1]).abs().max() > 1e-4"
LATER = "t[:, i + 1 :] = torch.randn(batch, length - i - 1, d, generator=g)"
WRONG += [
    Mutant(  # the family of p01-02: every mask, bool ones too, added to the scores, scaled
        "attention: the mask added to the scores as a bias (4 · mask), bool or 0/1",
        A,
        {
            "attention": Replace(
                """    mask = mask.bool()
    # hidden keys: exactly zero weight""",
                """    weights = torch.softmax(scores + 4 * mask.to(scores.dtype), dim=-1)
    return weights @ v, weights
    # hidden keys: exactly zero weight""",
            )
        },
        {
            "test_attention_fully_masked_row": "the mask is added to the scores",
            "test_attention_parity": "the mask is added to the scores",
        },
    ),
    Mutant(  # a causal attention may move earlier rows by float rounding
        "sees_the_future: earlier rows compared with torch.equal, no tolerance",
        A,
        {
            SEES_THE_FUTURE: Replace(
                TOLERANCE, "not torch.equal(after[:, : i + 1], before[:, : i + 1])"
            )
        },
        {"test_sees_the_future": "returned True for causal attention whose scores are centred"},
        makes=("sees_the_future.rounding_is_a_leak",),
    ),
    Mutant(  # out of the range where a causal attention promises causality
        "sees_the_future: the later positions set to a million times a draw",
        A,
        {SEES_THE_FUTURE: Replace(LATER, LATER.replace("= torch.randn(", "= 1e6 * torch.randn("))},
        {"test_sees_the_future": "returned True for causal attention whose scores are centred"},
    ),
    Mutant(  # the 2% mix moves earlier rows by 1e-3 to 5e-2
        "sees_the_future: a move above 0.1 is a leak",
        A,
        {SEES_THE_FUTURE: Replace("> 1e-4", "> 0.1")},
        {"test_sees_the_future": "returned False for causal attention mixed with 2%"},
        makes=("sees_the_future.small_leaks_pass",),
    ),
    Mutant(
        "sees_the_future: only position i + 1 changed, only row i compared",
        A,
        {
            SEES_THE_FUTURE: (
                Replace(
                    "t[:, i + 1 :] = torch.randn(batch, length - i - 1, d",
                    "t[:, i + 1] = torch.randn(batch, d",
                ),
                Replace(TOLERANCE, "(after[:, i] - before[:, i]).abs().max() > 1e-4"),
            )
        },
        {
            "test_sees_the_future": "returned False for causal attention whose mask also shows the last key"
        },
    ),
    Mutant(  # the weights can be causal while the output is not
        "sees_the_future: reads the weights above the diagonal",
        A,
        {
            SEES_THE_FUTURE: Body(
                SEES_THE_FUTURE,
                """
                q = k = v = torch.randn(2, 8, 4, generator=torch.Generator().manual_seed(0))
                _, weights = attend(q, k, v)
                return bool((weights.triu(1) != 0).any())
                """,
            )
        },
        {"test_sees_the_future": "returned False for attention that returns causal weights"},
        makes=("sees_the_future.reads_the_weights",),
    ),
    Mutant(  # a causal attention need not be softmax(q kᵀ / √d_k) attention
        "sees_the_future: compares with its own causal attention",
        A,
        {
            SEES_THE_FUTURE: Body(
                SEES_THE_FUTURE,
                """
                q, k, v = (torch.randn(2, 8, 4, generator=torch.Generator().manual_seed(0)) for _ in range(3))
                out, _ = attend(q, k, v)
                i = torch.arange(8)
                scores = (q @ k.transpose(-2, -1) / 2.0).masked_fill(i[None, :] > i[:, None], float("-inf"))
                return not torch.allclose(out, torch.softmax(scores, dim=-1) @ v, atol=1e-5)
                """,
            )
        },
        {"test_sees_the_future": "returned True for causal attention with unscaled scores"},
        in_notebook=True,
    ),
    Mutant(  # the attention it is given gives values only, as the statement says
        "sees_the_future: by autograd, through an output that carries no gradient",
        A,
        {
            SEES_THE_FUTURE: Body(
                SEES_THE_FUTURE,
                """
                g = torch.Generator().manual_seed(0)
                q, k, v = (torch.randn(2, 8, 4, generator=g, requires_grad=True) for _ in range(3))
                out, _ = attend(q, k, v)
                for i in range(7):
                    k.grad = v.grad = None
                    out[:, i].sum().backward(retain_graph=True)
                    if k.grad[:, i + 1 :].abs().max() > 1e-6 or v.grad[:, i + 1 :].abs().max() > 1e-6:
                        return True
                return False
                """,
            )
        },
        {"test_sees_the_future": "your sees_the_future raised RuntimeError"},
        in_notebook=True,
    ),
    Mutant(  # issue 40's tenth blind corpus (u01-02): one path per case, and one forgets `scale`
        "attention: the masked path divides by √d_k whatever scale says",
        A,
        {
            "attention": Replace(
                "    mask = mask.bool()\n",
                "    mask = mask.bool()\n"
                "    if not scale:\n"
                "        scores = scores / math.sqrt(q.shape[-1])\n",
            )
        },
        {"test_attention_parity": "with a mask, scale=False still divides the scores by √d_k"},
    ),
    Mutant(  # the tenth blind corpus (u01-04, v01-04): a table built for a longest sequence
        "causal_mask: cut from a table of 512 positions",
        A,
        {
            "causal_mask": Replace(
                "    return torch.ones(n, n, dtype=torch.bool).tril()\n",
                "    table = torch.ones(512, 512, dtype=torch.bool).tril()\n"
                "    return table[:n, :n]\n",
            )
        },
        {"test_causal_mask": "causal_mask cuts its mask from a table of a fixed size"},
    ),
    Mutant(  # the tenth blind corpus (v01-05): one cut, in the middle, compares no later row
        "sees_the_future: one cut in the middle of the sequence",
        A,
        {
            SEES_THE_FUTURE: Replace(
                "    for i in range(length - 1):\n", "    for i in [length // 2]:\n"
            )
        },
        {"test_sees_the_future": "misses the same key leaking into the next-to-last query"},
    ),
]

CORRECT += [
    Mutant(
        "sees_the_future: each later position alone, float64, tolerance 1e-6",
        A,
        {
            SEES_THE_FUTURE: Body(
                SEES_THE_FUTURE,
                """
                # My design: float64 (rounding near 1e-16), 3 sequences of 6 positions, width 3;
                # each position j >= 1 alone gets new draws twice, and rows 0..j-1 may move by
                # 1e-6 at most.
                g = torch.Generator().manual_seed(1)
                q, k, v = (torch.randn(3, 6, 3, generator=g, dtype=torch.float64) for _ in range(3))
                out, _ = attend(q, k, v)
                for j in range(1, 6):
                    for _ in range(2):
                        changed = [t.clone() for t in (q, k, v)]
                        for t in changed:
                            t[:, j] = torch.randn(3, 3, generator=g, dtype=torch.float64)
                        moved = (attend(*changed)[0] - out)[:, :j].abs().max()
                        if moved > 1e-6:
                            return True
                return False
                """,
            )
        },
    ),
    Mutant(
        "sees_the_future: 64 sequences with a random cut each, relative tolerance",
        A,
        {
            SEES_THE_FUTURE: Body(
                SEES_THE_FUTURE,
                """
                # My design: one call on 64 sequences of 12 positions (width 16), each with its
                # own random cut; every position after the cut gets new draws. A move of the
                # rows up to the cut above 1e-4 times (1 + the largest output) is a leak.
                length = 12
                q, k, v = (torch.randn(64, length, 16) for _ in range(3))
                out, _ = attend(q, k, v)
                cut = torch.randint(0, length - 1, (64, 1))
                later = (torch.arange(length) > cut)[..., None]  # (64, L, 1)
                after, _ = attend(*(torch.where(later, torch.randn_like(t), t) for t in (q, k, v)))
                moved = ((after - out).abs() * ~later).max()
                return bool(moved > 1e-4 * (1 + out.abs().max()))
                """,
            )
        },
    ),
]

# NaN weights that no large score made: no overflow may be named for them.
WRONG += [
    Mutant(
        "the hidden keys' -inf added as a product, 0 * -inf = NaN for every visible key",
        A,
        {
            "attention": Replace(
                "    if mask is None:\n"
                "        weights = torch.softmax(scores, dim=-1)\n"
                "        return weights @ v, weights\n"
                "    mask = mask.bool()\n"
                "    # hidden keys: exactly zero weight\n"
                '    scores = scores.masked_fill(~mask, float("-inf"))\n',
                "    if mask is None:\n"
                "        mask = torch.ones_like(scores, dtype=torch.bool)\n"
                "    mask = mask.bool()\n"
                "    # hidden keys: exactly zero weight\n"
                '    scores = scores + (~mask).to(scores.dtype) * float("-inf")\n',
            )
        },
        {"test_attention_parity": "the weights are NaN or inf"},
        not_told=("exp overflowed",),
    ),
]
WRONG += [
    Mutant(
        "hand-written softmax in float32, without the max",
        A,
        {
            "attention": Replace(
                "        weights = torch.softmax(scores, dim=-1)\n" + RETURN_UNMASKED,
                "        exp_scores = torch.exp(scores.float())\n"
                "        weights = (exp_scores / exp_scores.sum(dim=-1, keepdim=True)).to(q.dtype)\n"
                + RETURN_UNMASKED,
            )
        },
        {"test_attention_parity": "every score of a row is far below 0"},
        makes=("attention.overflow",),
    ),
]
