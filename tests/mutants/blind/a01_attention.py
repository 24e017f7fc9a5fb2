"""Issue 40's blind corpus for 01_attention (see tests/mutants/blind/__init__.py)."""

from tests.mutants import Mutant, Rewrite

A = "01_attention"

WRONG = [
    Mutant(
        "f01-01: NumPy softmax over the queries' axis (axis 0)",
        A,
        {
            "attention_numpy": Rewrite(
                r'''
                def attention_numpy(
                    Q: np.ndarray, K: np.ndarray, V: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray]:
                    """Scaled dot-product attention on NumPy arrays."""
                    d_k = Q.shape[-1]
                    scores = Q @ K.T / np.sqrt(d_k)
                    scores = scores - scores.max(axis=0, keepdims=True)
                    e = np.exp(scores)
                    weights = e / e.sum(axis=0, keepdims=True)
                    return weights @ V, weights
                '''
            )
        },
        {
            "test_attention_numpy": "over queries, not keys",
        },
    ),
    Mutant(
        "f01-02: NumPy scores divided by d_k",
        A,
        {
            "attention_numpy": Rewrite(
                r'''
                def attention_numpy(
                    Q: np.ndarray, K: np.ndarray, V: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray]:
                    """Scaled dot-product attention on NumPy arrays."""
                    d_k = Q.shape[-1]
                    scores = Q @ K.T / d_k
                    scores = scores - scores.max(axis=-1, keepdims=True)
                    e = np.exp(scores)
                    weights = e / e.sum(axis=-1, keepdims=True)
                    return weights @ V, weights
                '''
            )
        },
        {
            "test_attention_numpy": "divided by d_k instead of √d_k",
        },
    ),
    Mutant(
        "f01-03: NumPy exp of the raw scores, no maximum subtracted",
        A,
        {
            "attention_numpy": Rewrite(
                r'''
                def attention_numpy(
                    Q: np.ndarray, K: np.ndarray, V: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray]:
                    """Scaled dot-product attention on NumPy arrays."""
                    d_k = Q.shape[-1]
                    scores = Q @ K.T / np.sqrt(d_k)
                    e = np.exp(scores)
                    weights = e / e.sum(axis=-1, keepdims=True)
                    return weights @ V, weights
                '''
            )
        },
        {
            "test_attention_numpy": "np.exp overflows on large scores",
        },
    ),
    Mutant(
        "f01-04: softmax over the queries (dim=-2), masking right",
        A,
        {
            "attention": Rewrite(
                r'''
                def attention(
                    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None, scale: bool = True
                ) -> tuple[Tensor, Tensor]:
                    """softmax(q k^T / sqrt(d_k)) v, with an optional mask (True = may attend)."""
                    scores = q @ k.transpose(-2, -1)
                    if scale:
                        scores = scores / math.sqrt(q.shape[-1])
                    if mask is None:
                        weights = torch.softmax(scores, dim=-2)
                    else:
                        mask = mask.bool()
                        visible = mask.any(dim=-1, keepdim=True)
                        scores = scores.masked_fill(~mask, float("-inf"))
                        scores = scores.masked_fill(~visible, 0.0)
                        weights = torch.softmax(scores, dim=-2).masked_fill(~visible, 0.0)
                    return weights @ v, weights
                '''
            )
        },
        # Charged there alone, under every secret (tests/test_hidden_seeds.py): the other cells
        # that use attention are waived as the same mistake, and the fully masked row passes.
        {"test_attention_rows_sum_to_one": "rows sum to 1 over queries, not keys"},
    ),
    Mutant(
        "f01-05: a fully masked row left to a softmax of -inf scores",
        A,
        {
            "attention": Rewrite(
                r'''
                def attention(
                    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None, scale: bool = True
                ) -> tuple[Tensor, Tensor]:
                    """softmax(q k^T / sqrt(d_k)) v, with an optional mask (True = may attend)."""
                    scores = q @ k.transpose(-2, -1)
                    if scale:
                        scores = scores / math.sqrt(q.shape[-1])
                    if mask is None:
                        weights = torch.softmax(scores, dim=-1)
                    else:
                        mask = mask.bool()
                        visible = mask.any(dim=-1, keepdim=True)
                        scores = scores.masked_fill(~mask, float("-inf"))
                        weights = torch.softmax(scores, dim=-1)
                    return weights @ v, weights
                '''
            )
        },
        {
            "test_attention_fully_masked_row": "a fully masked row gives NaN",
        },
    ),
    Mutant(
        "f01-07: scale=False ignored: always divided by sqrt(d_k)",
        A,
        {
            "attention": Rewrite(
                r'''
                def attention(
                    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None, scale: bool = True
                ) -> tuple[Tensor, Tensor]:
                    """softmax(q k^T / sqrt(d_k)) v, with an optional mask (True = may attend)."""
                    scores = q @ k.transpose(-2, -1)
                    scores = scores / math.sqrt(q.shape[-1])
                    if mask is None:
                        weights = torch.softmax(scores, dim=-1)
                    else:
                        mask = mask.bool()
                        visible = mask.any(dim=-1, keepdim=True)
                        scores = scores.masked_fill(~mask, float("-inf"))
                        scores = scores.masked_fill(~visible, 0.0)
                        weights = torch.softmax(scores, dim=-1).masked_fill(~visible, 0.0)
                    return weights @ v, weights
                '''
            )
        },
        {
            "test_attention_scaling": "with scale=False the scores must be left unscaled",
        },
    ),
    Mutant(
        "f01-09: a 0/1 integer mask inverted with ~ (no mask.bool())",
        A,
        {
            "attention": Rewrite(
                r'''
                def attention(
                    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None, scale: bool = True
                ) -> tuple[Tensor, Tensor]:
                    """softmax(q k^T / sqrt(d_k)) v, with an optional mask (True = may attend)."""
                    scores = q @ k.transpose(-2, -1)
                    if scale:
                        scores = scores / math.sqrt(q.shape[-1])
                    if mask is None:
                        weights = torch.softmax(scores, dim=-1)
                    else:
                        visible = mask.any(dim=-1, keepdim=True)
                        scores = scores.masked_fill(~mask, float("-inf"))
                        scores = scores.masked_fill(~visible, 0.0)
                        weights = torch.softmax(scores, dim=-1).masked_fill(~visible, 0.0)
                    return weights @ v, weights
                '''
            )
        },
        {
            "test_attention_fully_masked_row": "the mask is used as given",
        },
    ),
    Mutant(
        "f01-06: -1e9 for masked scores, a fully masked row left uniform",
        A,
        {
            "attention": Rewrite(
                r'''
                def attention(
                    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None, scale: bool = True
                ) -> tuple[Tensor, Tensor]:
                    """softmax(q k^T / sqrt(d_k)) v, with an optional mask (True = may attend)."""
                    scores = q @ k.transpose(-2, -1)
                    if scale:
                        scores = scores / math.sqrt(q.shape[-1])
                    if mask is None:
                        weights = torch.softmax(scores, dim=-1)
                    else:
                        mask = mask.bool()
                        visible = mask.any(dim=-1, keepdim=True)
                        scores = scores.masked_fill(~mask, -1e9)
                        weights = torch.softmax(scores, dim=-1)
                    return weights @ v, weights
                '''
            )
        },
        {"test_attention_fully_masked_row": "a fully masked row must get all-zero weights"},
        # Once told that its softmax runs over the queries: a repair of that axis passed the
        # check for another reason (the transposed call's masked column is ~0 in every row).
        not_told=("over queries", "wrong dimension"),
    ),
    Mutant(
        "g01-10: causal mask as a NumPy array (np.tri)",
        A,
        {
            "causal_mask": Rewrite(
                r'''
                def causal_mask(n: int) -> Tensor:
                    """(n, n) bool mask, True where key j <= query i (may attend), diagonal included."""
                    return np.tri(n, dtype=bool)
                '''
            )
        },
        # Charged there once: test_causal_weights, which applies the mask, is waived as the same
        # mistake. Once told there that its values were wrong, which they are not.
        {"test_causal_mask": "causal_mask(2) must be an (2, 2) tensor"},
        makes=("causal_mask.not_a_tensor",),
        not_told=("is not True exactly",),
        in_notebook=True,  # as_a_tensor confirms the type through the judge, on a kernel's array
    ),
    Mutant(
        "g01-11: sees_the_future redraws only the last position",
        A,
        {
            "sees_the_future": Rewrite(
                r'''
                def sees_the_future(attend) -> bool:
                    """True when attend(q, k, v) -> (output, weights) lets a row use what follows it."""
                    # I change the last token only and see whether any earlier output row moves by more
                    # than 1e-4 (rounding is below 1e-5).
                    gen = torch.Generator().manual_seed(0)
                    for L in (2, 5, 9, 16):
                        q, k, v = (torch.randn(L, 8, generator=gen) for _ in range(3))
                        base = attend(q, k, v)[0]
                        q2, k2, v2 = q.clone(), k.clone(), v.clone()
                        for t in (q2, k2, v2):
                            t[-1] = torch.randn(8, generator=gen)
                        moved = attend(q2, k2, v2)[0][:-1] - base[:-1]
                        if moved.abs().max().item() > 1e-4:
                            return True
                    return False
                '''
            )
        },
        # Once kept full marks: every leak the checks had ran from the last key.
        {
            "test_sees_the_future": "returned False for causal attention whose mask also shows "
            "the next-to-last key"
        },
        makes=("sees_the_future.leaves_earlier_positions",),
    ),
    Mutant(
        "g01-02: NumPy softmax less one maximum of the whole score matrix",
        A,
        {
            "attention_numpy": Rewrite(
                r'''
                def attention_numpy(
                    Q: np.ndarray, K: np.ndarray, V: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray]:
                    """Scaled dot-product attention on NumPy arrays."""
                    d_k = Q.shape[-1]
                    scores = Q @ K.T / np.sqrt(d_k)
                    scores = scores - scores.max()
                    e = np.exp(scores)
                    weights = e / e.sum(axis=-1, keepdims=True)
                    return weights @ V, weights
                '''
            )
        },
        {
            "test_attention_numpy": "one maximum of the whole score matrix",
        },
    ),
    Mutant(
        "g01-03: NumPy scores scaled by sqrt(d_v)",
        A,
        {
            "attention_numpy": Rewrite(
                r'''
                def attention_numpy(
                    Q: np.ndarray, K: np.ndarray, V: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray]:
                    """Scaled dot-product attention on NumPy arrays."""
                    d_k = V.shape[-1]
                    scores = Q @ K.T / np.sqrt(d_k)
                    scores = scores - scores.max(axis=-1, keepdims=True)
                    e = np.exp(scores)
                    weights = e / e.sum(axis=-1, keepdims=True)
                    return weights @ V, weights
                '''
            )
        },
        {
            "test_attention_numpy": "scaled by √d_v",
        },
    ),
    Mutant(
        "g01-05: scores scaled by sqrt(k.shape[-2]), the number of keys",
        A,
        {
            "attention": Rewrite(
                r'''
                def attention(
                    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None, scale: bool = True
                ) -> tuple[Tensor, Tensor]:
                    """softmax(q k^T / sqrt(d_k)) v, with an optional mask (True = may attend)."""
                    scores = q @ k.transpose(-2, -1)
                    if scale:
                        scores = scores / math.sqrt(k.shape[-2])
                    if mask is None:
                        weights = torch.softmax(scores, dim=-1)
                    else:
                        mask = mask.bool()
                        visible = mask.any(dim=-1, keepdim=True)
                        scores = scores.masked_fill(~mask, float("-inf"))
                        scores = scores.masked_fill(~visible, 0.0)
                        weights = torch.softmax(scores, dim=-1).masked_fill(~visible, 0.0)
                    return weights @ v, weights
                '''
            )
        },
        {"test_attention_scaling": "√L_k"},
        # Charged there once: the parity and causal cells are waived as the same mistake.
        charged_once=True,
        in_notebook=True,
    ),
    Mutant(
        "g01-07: softmax over dim=1: the queries of a (B, L_q, L_k) score",
        A,
        {
            "attention": Rewrite(
                r'''
                def attention(
                    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None, scale: bool = True
                ) -> tuple[Tensor, Tensor]:
                    """softmax(q k^T / sqrt(d_k)) v, with an optional mask (True = may attend)."""
                    scores = q @ k.transpose(-2, -1)
                    if scale:
                        scores = scores / math.sqrt(q.shape[-1])
                    if mask is None:
                        weights = torch.softmax(scores, dim=1)
                    else:
                        mask = mask.bool()
                        visible = mask.any(dim=-1, keepdim=True)
                        scores = scores.masked_fill(~mask, float("-inf"))
                        scores = scores.masked_fill(~visible, 0.0)
                        weights = torch.softmax(scores, dim=1).masked_fill(~visible, 0.0)
                    return weights @ v, weights
                '''
            )
        },
        {"test_attention_rows_sum_to_one": "over queries, not keys"},
        # Charged there once: the scaling, fully masked row, parity and causal cells are waived.
        charged_once=True,
        in_notebook=True,
    ),
    Mutant(
        "g01-09: mask polarity reversed, fully masked rows read the same way",
        A,
        {
            "attention": Rewrite(
                r'''
                def attention(
                    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None, scale: bool = True
                ) -> tuple[Tensor, Tensor]:
                    """softmax(q k^T / sqrt(d_k)) v, with an optional mask (True = may attend)."""
                    scores = q @ k.transpose(-2, -1)
                    if scale:
                        scores = scores / math.sqrt(q.shape[-1])
                    if mask is None:
                        weights = torch.softmax(scores, dim=-1)
                    else:
                        mask = mask.bool()
                        visible = (~mask).any(dim=-1, keepdim=True)
                        scores = scores.masked_fill(mask, float("-inf"))
                        scores = scores.masked_fill(~visible, 0.0)
                        weights = torch.softmax(scores, dim=-1).masked_fill(~visible, 0.0)
                    return weights @ v, weights
                '''
            )
        },
        {"test_attention_fully_masked_row": "mask polarity reversed"},
        # Charged there once: the parity and causal cells are waived as the same mistake.
        charged_once=True,
        in_notebook=True,
    ),
    Mutant(
        "h01-10: rows that see a key found with any() over the queries (dim -2)",
        A,
        {
            "attention": Rewrite(
                r'''
                def attention(
                    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None, scale: bool = True
                ) -> tuple[Tensor, Tensor]:
                    """softmax(q k^T / sqrt(d_k)) v, with an optional mask (True = may attend)."""
                    scores = q @ k.transpose(-2, -1)
                    if scale:
                        scores = scores / math.sqrt(q.shape[-1])
                    if mask is None:
                        weights = torch.softmax(scores, dim=-1)
                        return weights @ v, weights
                    mask = mask.bool()
                    seen = mask.any(dim=-2, keepdim=True)
                    scores = scores.masked_fill(~mask, float("-inf"))
                    scores = scores.masked_fill(~seen, 0.0)
                    weights = torch.softmax(scores, dim=-1).masked_fill(~seen, 0.0)
                    return weights @ v, weights
                '''
            )
        },
        {"test_attention_fully_masked_row": "found over the queries' axis"},
    ),
    Mutant(
        "i01-05: masks after the softmax: zeroes the hidden keys' weights, then renormalises",
        A,
        {
            "attention": Rewrite(
                r'''
                def attention(
                    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None, scale: bool = True
                ) -> tuple[Tensor, Tensor]:
                    """softmax(q k^T / sqrt(d_k)) v, with an optional mask (True = may attend).

                    q (..., L_q, d_k), k (..., L_k, d_k), v (..., L_k, d_v), mask (..., L_q, L_k)
                    -> (output (..., L_q, d_v), weights (..., L_q, L_k)).
                    """
                    scores = q @ k.transpose(-2, -1)
                    if scale:
                        scores = scores / math.sqrt(q.shape[-1])
                    weights = torch.softmax(scores, dim=-1)
                    if mask is not None:
                        # hidden keys get exactly 0, then the visible ones are renormalised;
                        # a row with no visible key sums to 0 and stays 0 (clamp avoids 0/0)
                        weights = weights * mask.bool()
                        weights = weights / weights.sum(dim=-1, keepdim=True).clamp_min(1e-30)
                    return weights @ v, weights
                '''
            )
        },
        {"test_attention_parity": "the mask is applied after the softmax"},
    ),
    Mutant(
        "i01-13: moves up to 1e-2 taken for rounding",
        A,
        {
            "sees_the_future": Rewrite(
                r'''
                def sees_the_future(attend) -> bool:
                    """True when attend(q, k, v) -> (output, weights) lets a row use what follows it."""
                    # Design: for every length 2..16 and every cut i, replace q, k, v after i with
                    # fresh standard-normal draws (a batch of 4, float32) and measure how far rows
                    # 0..i move. Float arithmetic is noisy, so I allow a generous 1e-2 before I call
                    # it a leak: better no false alarm on a correct causal attention.
                    gen = torch.Generator().manual_seed(5)
                    for L in range(2, 17):
                        q = torch.randn(4, L, 5, generator=gen)
                        k = torch.randn(4, L, 5, generator=gen)
                        v = torch.randn(4, L, 3, generator=gen)
                        base, _ = attend(q, k, v)
                        for i in range(L - 1):
                            q2, k2, v2 = q.clone(), k.clone(), v.clone()
                            q2[:, i + 1 :] = torch.randn(4, L - i - 1, 5, generator=gen)
                            k2[:, i + 1 :] = torch.randn(4, L - i - 1, 5, generator=gen)
                            v2[:, i + 1 :] = torch.randn(4, L - i - 1, 3, generator=gen)
                            out, _ = attend(q2, k2, v2)
                            if (out[:, : i + 1] - base[:, : i + 1]).abs().max().item() > 1e-2:
                                return True
                    return False
                '''
            )
        },
        {"test_sees_the_future": "returned False for causal attention mixed with 0.3%"},
        makes=("sees_the_future.small_leaks_pass",),
    ),
    Mutant(
        "i01-08: d_k read as q.shape[1]",
        A,
        {
            "attention": Rewrite(
                r'''
                def attention(
                    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None, scale: bool = True
                ) -> tuple[Tensor, Tensor]:
                    """softmax(q k^T / sqrt(d_k)) v, with an optional mask (True = may attend).

                    q (..., L_q, d_k), k (..., L_k, d_k), v (..., L_k, d_v), mask (..., L_q, L_k)
                    -> (output (..., L_q, d_v), weights (..., L_q, L_k)).
                    """
                    d_k = q.shape[1]
                    scores = q @ k.transpose(-2, -1)
                    if scale:
                        scores = scores / math.sqrt(d_k)
                    if mask is None:
                        weights = torch.softmax(scores, dim=-1)
                    else:
                        mask = mask.bool()
                        any_visible = mask.any(dim=-1, keepdim=True)
                        scores = scores.masked_fill(~mask, float("-inf"))
                        scores = scores.masked_fill(~any_visible, 0.0)
                        weights = torch.softmax(scores, dim=-1)
                        weights = weights.masked_fill(~any_visible, 0.0)
                    return weights @ v, weights
                '''
            )
        },
        {"test_attention_scaling": "scaled by the square root of q.shape[1]"},
        in_notebook=True,  # its visible parity check fails first
        charged_once=True,
    ),
    Mutant(
        "j01-10: sees_the_future changes only the last position",
        A,
        {
            "sees_the_future": Rewrite(
                r'''
                def sees_the_future(attend) -> bool:
                    """True when attend(q, k, v) -> (output, weights) lets a row use what follows it."""
                    # Design: for several lengths L (2..12), every cut i in 0..L-2 and a few random
                    # draws, replace q, k, v at positions i+1.. by fresh standard-normal values and
                    # compare output rows 0..i before and after. Causal code moves them by rounding
                    # (< 1e-5 promised), a leak by > 1e-3 on most draws, so the threshold 1e-4 sits
                    # between. Leading dim (2,), widths 4 and 3; float64 inputs keep our own rounding
                    # out of the way. If attend raises, we answer False (no leak was shown).
                    gen = torch.Generator().manual_seed(12345)
                    tol = 1e-4
                    try:
                        for L in (8,):
                            for i in (L - 2,):  # change the last token only
                                for _ in range(3):
                                    q = torch.randn(2, L, 4, generator=gen, dtype=torch.float64)
                                    k = torch.randn(2, L, 4, generator=gen, dtype=torch.float64)
                                    v = torch.randn(2, L, 3, generator=gen, dtype=torch.float64)
                                    q2, k2, v2 = q.clone(), k.clone(), v.clone()
                                    n_new = L - i - 1
                                    q2[:, i + 1 :] = torch.randn(2, n_new, 4, generator=gen, dtype=torch.float64)
                                    k2[:, i + 1 :] = torch.randn(2, n_new, 4, generator=gen, dtype=torch.float64)
                                    v2[:, i + 1 :] = torch.randn(2, n_new, 3, generator=gen, dtype=torch.float64)
                                    out1 = attend(q, k, v)[0]
                                    out2 = attend(q2, k2, v2)[0]
                                    diff = (out1[..., : i + 1, :] - out2[..., : i + 1, :]).abs().max()
                                    if not bool(torch.isfinite(diff)) or float(diff) > tol:
                                        return True
                    except Exception:
                        return False
                    return False
                '''
            )
        },
        {"test_sees_the_future": "what it changes leaves that position alone"},
        # Issue 40's fifth blind corpus: a counterexample alone on c03db00 (what fooled the test).
    ),
    Mutant(
        "j01-11: sees_the_future compares the earlier rows exactly (torch.equal)",
        A,
        {
            "sees_the_future": Rewrite(
                r'''
                def sees_the_future(attend) -> bool:
                    """True when attend(q, k, v) -> (output, weights) lets a row use what follows it."""
                    # Design: for several lengths L (2..12), every cut i in 0..L-2 and a few random
                    # draws, replace q, k, v at positions i+1.. by fresh standard-normal values and
                    # compare output rows 0..i before and after. Causal code moves them by rounding
                    # (< 1e-5 promised), a leak by > 1e-3 on most draws, so the threshold 1e-4 sits
                    # between. Leading dim (2,), widths 4 and 3; float64 inputs keep our own rounding
                    # out of the way. If attend raises, we answer False (no leak was shown).
                    gen = torch.Generator().manual_seed(12345)
                    tol = 1e-4
                    try:
                        for L in (2, 3, 5, 8, 12):
                            for i in range(L - 1):
                                for _ in range(3):
                                    q = torch.randn(2, L, 4, generator=gen, dtype=torch.float64)
                                    k = torch.randn(2, L, 4, generator=gen, dtype=torch.float64)
                                    v = torch.randn(2, L, 3, generator=gen, dtype=torch.float64)
                                    q2, k2, v2 = q.clone(), k.clone(), v.clone()
                                    n_new = L - i - 1
                                    q2[:, i + 1 :] = torch.randn(2, n_new, 4, generator=gen, dtype=torch.float64)
                                    k2[:, i + 1 :] = torch.randn(2, n_new, 4, generator=gen, dtype=torch.float64)
                                    v2[:, i + 1 :] = torch.randn(2, n_new, 3, generator=gen, dtype=torch.float64)
                                    out1 = attend(q, k, v)[0]
                                    out2 = attend(q2, k2, v2)[0]
                                    diff = (out1[..., : i + 1, :] - out2[..., : i + 1, :]).abs().max()
                                    if not torch.equal(out1[..., : i + 1, :], out2[..., : i + 1, :]):
                                        return True
                    except Exception:
                        return False
                    return False
                '''
            )
        },
        {"test_sees_the_future": "your test calls rounding a leak"},
        # Issue 40's fifth blind corpus: a counterexample alone on c03db00 (what fooled the test).
    ),
    Mutant(
        "j01-12: sees_the_future compares the returned weights, not the outputs",
        A,
        {
            "sees_the_future": Rewrite(
                r'''
                def sees_the_future(attend) -> bool:
                    """True when attend(q, k, v) -> (output, weights) lets a row use what follows it."""
                    # Design: for several lengths L (2..12), every cut i in 0..L-2 and a few random
                    # draws, replace q, k, v at positions i+1.. by fresh standard-normal values and
                    # compare output rows 0..i before and after. Causal code moves them by rounding
                    # (< 1e-5 promised), a leak by > 1e-3 on most draws, so the threshold 1e-4 sits
                    # between. Leading dim (2,), widths 4 and 3; float64 inputs keep our own rounding
                    # out of the way. If attend raises, we answer False (no leak was shown).
                    gen = torch.Generator().manual_seed(12345)
                    tol = 1e-4
                    try:
                        for L in (2, 3, 5, 8, 12):
                            for i in range(L - 1):
                                for _ in range(3):
                                    q = torch.randn(2, L, 4, generator=gen, dtype=torch.float64)
                                    k = torch.randn(2, L, 4, generator=gen, dtype=torch.float64)
                                    v = torch.randn(2, L, 3, generator=gen, dtype=torch.float64)
                                    q2, k2, v2 = q.clone(), k.clone(), v.clone()
                                    n_new = L - i - 1
                                    q2[:, i + 1 :] = torch.randn(2, n_new, 4, generator=gen, dtype=torch.float64)
                                    k2[:, i + 1 :] = torch.randn(2, n_new, 4, generator=gen, dtype=torch.float64)
                                    v2[:, i + 1 :] = torch.randn(2, n_new, 3, generator=gen, dtype=torch.float64)
                                    out1 = attend(q, k, v)[1]
                                    out2 = attend(q2, k2, v2)[1]
                                    diff = (out1[..., : i + 1, :] - out2[..., : i + 1, :]).abs().max()
                                    if not bool(torch.isfinite(diff)) or float(diff) > tol:
                                        return True
                    except Exception:
                        return False
                    return False
                '''
            )
        },
        {"test_sees_the_future": "your test judges the weights attend returns"},
        # Issue 40's fifth blind corpus: a counterexample alone on c03db00 (what fooled the test).
    ),
    Mutant(
        "j01-13: sees_the_future allows moves up to 0.1 as rounding",
        A,
        {
            "sees_the_future": Rewrite(
                r'''
                def sees_the_future(attend) -> bool:
                    """True when attend(q, k, v) -> (output, weights) lets a row use what follows it."""
                    # Design: for several lengths L (2..12), every cut i in 0..L-2 and a few random
                    # draws, replace q, k, v at positions i+1.. by fresh standard-normal values and
                    # compare output rows 0..i before and after. Causal code moves them by rounding
                    # (< 1e-5 promised), a leak by > 1e-3 on most draws, so the threshold 1e-4 sits
                    # between. Leading dim (2,), widths 4 and 3; float64 inputs keep our own rounding
                    # out of the way. If attend raises, we answer False (no leak was shown).
                    gen = torch.Generator().manual_seed(12345)
                    tol = 0.1
                    try:
                        for L in (2, 3, 5, 8, 12):
                            for i in range(L - 1):
                                for _ in range(3):
                                    q = torch.randn(2, L, 4, generator=gen, dtype=torch.float64)
                                    k = torch.randn(2, L, 4, generator=gen, dtype=torch.float64)
                                    v = torch.randn(2, L, 3, generator=gen, dtype=torch.float64)
                                    q2, k2, v2 = q.clone(), k.clone(), v.clone()
                                    n_new = L - i - 1
                                    q2[:, i + 1 :] = torch.randn(2, n_new, 4, generator=gen, dtype=torch.float64)
                                    k2[:, i + 1 :] = torch.randn(2, n_new, 4, generator=gen, dtype=torch.float64)
                                    v2[:, i + 1 :] = torch.randn(2, n_new, 3, generator=gen, dtype=torch.float64)
                                    out1 = attend(q, k, v)[0]
                                    out2 = attend(q2, k2, v2)[0]
                                    diff = (out1[..., : i + 1, :] - out2[..., : i + 1, :]).abs().max()
                                    if not bool(torch.isfinite(diff)) or float(diff) > tol:
                                        return True
                    except Exception:
                        return False
                    return False
                '''
            )
        },
        {"test_sees_the_future": "your test lets small leaks through"},
        # Issue 40's fifth blind corpus: a counterexample alone on c03db00 (what fooled the test).
        in_notebook=True,  # the experiments run through the judge too
    ),
    Mutant(
        "j01-06: -inf added to hidden scores, NaN rows replaced by nan_to_num after the softmax",
        A,
        {
            "attention": Rewrite(
                r'''
                def attention(
                    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None, scale: bool = True
                ) -> tuple[Tensor, Tensor]:
                    """softmax(q k^T / sqrt(d_k)) v, with an optional mask (True = may attend).

                    q (..., L_q, d_k), k (..., L_k, d_k), v (..., L_k, d_v), mask (..., L_q, L_k)
                    -> (output (..., L_q, d_v), weights (..., L_q, L_k)).
                    """
                    scores = q @ k.transpose(-2, -1)
                    if scale:
                        scores = scores / math.sqrt(q.shape[-1])
                    if mask is None:
                        weights = torch.softmax(scores, dim=-1)
                    else:
                        mask = mask.bool()
                        scores = scores + torch.zeros_like(scores).masked_fill(~mask, float("-inf"))
                        # a fully masked row gives NaN: replace it by zeros
                        weights = torch.softmax(scores, dim=-1).nan_to_num(0.0)
                    return weights @ v, weights
                '''
            )
        },
        {"test_attention_fully_masked_row": "come from the row that sees no key alone"},
        # Issue 40's fifth blind corpus (and i01-06 in the fourth): the broken promise alone.
        in_notebook=True,  # its backward runs through the judge
    ),
    Mutant(
        "j01-04: hidden keys filled with -1e4 instead of -inf",
        A,
        {
            "attention": Rewrite(
                r'''
                def attention(
                    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None, scale: bool = True
                ) -> tuple[Tensor, Tensor]:
                    """softmax(q k^T / sqrt(d_k)) v, with an optional mask (True = may attend).

                    q (..., L_q, d_k), k (..., L_k, d_k), v (..., L_k, d_v), mask (..., L_q, L_k)
                    -> (output (..., L_q, d_v), weights (..., L_q, L_k)).
                    """
                    scores = q @ k.transpose(-2, -1)
                    if scale:
                        scores = scores / math.sqrt(q.shape[-1])
                    if mask is None:
                        weights = torch.softmax(scores, dim=-1)
                    else:
                        mask = mask.bool()
                        scores = scores.masked_fill(~mask, -1e4)
                        has_key = mask.any(dim=-1, keepdim=True)
                        scores = torch.where(has_key, scores, torch.zeros_like(scores))
                        weights = torch.softmax(scores, dim=-1)
                        weights = torch.where(has_key, weights, torch.zeros_like(weights))
                    return weights @ v, weights
                '''
            )
        },
        {"test_attention_parity": "masked keys filled with a finite number"},
    ),
    Mutant(
        "k01-01: the softmax exponentiates the raw scaled scores without subtracting ea",
        A,
        {
            "attention_numpy": Rewrite(
                r'''
                def attention_numpy(
                    Q: np.ndarray, K: np.ndarray, V: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray]:
                    """Scaled dot-product attention on NumPy arrays.

                    Q (L_q, d_k), K (L_k, d_k), V (L_k, d_v) -> (output (L_q, d_v), weights (L_q, L_k)).
                    """
                    d_k = Q.shape[-1]
                    scores = Q @ K.T / np.sqrt(d_k)
                    e = np.exp(scores)
                    weights = e / e.sum(axis=-1, keepdims=True)
                    return weights @ V, weights
                '''
            )
        },
        {
            "test_attention_numpy": "np.exp overflows on large scores: subtract each row's max before exponentiating"
        },
        # Issue 40's sixth blind corpus, graded blind on bdfa422: named.
    ),
    Mutant(
        "k01-02: a 0/1 (non-bool) mask is read the other way round (1 = hidden",
        A,
        {
            "attention": Rewrite(
                r'''
                def attention(
                    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None, scale: bool = True
                ) -> tuple[Tensor, Tensor]:
                    """softmax(q k^T / sqrt(d_k)) v, with an optional mask (True = may attend).

                    q (..., L_q, d_k), k (..., L_k, d_k), v (..., L_k, d_v), mask (..., L_q, L_k)
                    -> (output (..., L_q, d_v), weights (..., L_q, L_k)).
                    """
                    scores = q @ k.transpose(-2, -1)
                    if scale:
                        scores = scores / math.sqrt(q.shape[-1])
                    if mask is None:
                        return torch.softmax(scores, dim=-1) @ v, torch.softmax(scores, dim=-1)
                    if mask.dtype != torch.bool:
                        # a 0/1 mask marks the positions to block with 1
                        mask = mask == 0
                    scores = scores.masked_fill(~mask, float("-inf"))
                    has_key = mask.any(dim=-1, keepdim=True)
                    scores = scores.masked_fill(~has_key, 0.0)
                    weights = torch.softmax(scores, dim=-1).masked_fill(~has_key, 0.0)
                    return weights @ v, weights
                '''
            )
        },
        {
            "test_attention_fully_masked_row": "a 0/1 mask that is not bool is read the other way round (1 = hidden)"
        },
        # Issue 40's sixth blind corpus, graded blind on bdfa422: counterexample; named since
        # the repair that reverses only its 0/1 masks (graded through the command for it).
        in_notebook=True,
    ),
    Mutant(
        "k01-03: the scale argument is ignored",
        A,
        {
            "attention": Rewrite(
                r'''
                def attention(
                    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None, scale: bool = True
                ) -> tuple[Tensor, Tensor]:
                    """softmax(q k^T / sqrt(d_k)) v, with an optional mask (True = may attend).

                    q (..., L_q, d_k), k (..., L_k, d_k), v (..., L_k, d_v), mask (..., L_q, L_k)
                    -> (output (..., L_q, d_v), weights (..., L_q, L_k)).
                    """
                    d_k = q.shape[-1]
                    scores = q @ k.transpose(-2, -1) / math.sqrt(d_k)
                    if mask is None:
                        weights = torch.softmax(scores, dim=-1)
                    else:
                        mask = mask.bool()
                        scores = scores.masked_fill(~mask, float("-inf"))
                        has_key = mask.any(dim=-1, keepdim=True)
                        scores = scores.masked_fill(~has_key, 0.0)
                        weights = torch.softmax(scores, dim=-1).masked_fill(~has_key, 0.0)
                    return weights @ v, weights
                '''
            )
        },
        {
            "test_attention_scaling": "with scale=False the scores must be left unscaled (first difference at index"
        },
        # Issue 40's sixth blind corpus, graded blind on bdfa422: named.
    ),
    Mutant(
        "k01-04: returns a float 0/1 lower-triangular matrix instead of a bool tensor (",
        A,
        {
            "causal_mask": Rewrite(
                r'''
                def causal_mask(n: int) -> Tensor:
                    """(n, n) bool mask, True where key j <= query i (may attend), diagonal included."""
                    return torch.tril(torch.ones(n, n))
                '''
            )
        },
        {"test_causal_mask": "causal_mask must return a bool tensor, got torch.float"},
        # Issue 40's sixth blind corpus, graded blind on bdfa422: named.
    ),
    Mutant(
        "k01-05: the test reads only the returned weights (any weight above the diagona",
        A,
        {
            "sees_the_future": Rewrite(
                r'''
                def sees_the_future(attend) -> bool:
                    """True when attend(q, k, v) -> (output, weights) lets a row use what follows it."""
                    # Design: a causal attention puts zero weight on every later key, so I run attend on
                    # random inputs of a few sizes and call it leaky when any weight above the diagonal
                    # is larger than 1e-6 (rounding of a masked key is far below that).
                    g = torch.Generator().manual_seed(0)
                    try:
                        for L, d_k, d_v, dtype in ((2, 3, 2, torch.float32), (7, 5, 4, torch.float64),
                                                   (16, 8, 3, torch.float32)):
                            for _ in range(3):
                                q = torch.randn(2, L, d_k, generator=g, dtype=dtype)
                                k = torch.randn(2, L, d_k, generator=g, dtype=dtype)
                                v = torch.randn(2, L, d_v, generator=g, dtype=dtype)
                                with torch.no_grad():
                                    _, w = attend(q, k, v)
                                if w.triu(1).abs().max().item() > 1e-6:
                                    return True
                    except Exception:
                        return True
                    return False
                '''
            )
        },
        {
            "test_sees_the_future": "your test judges the weights attend returns, not its output: it calls attention leaky whose output is causal but whose r"
        },
        # Issue 40's sixth blind corpus, graded blind on bdfa422: named.
    ),
    Mutant(
        "n01-01: one maximum of the whole score matrix subtracted, not each row's",
        A,
        {
            "attention_numpy": Rewrite(
                r'''
                def attention_numpy(
                    Q: np.ndarray, K: np.ndarray, V: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray]:
                    """Scaled dot-product attention on NumPy arrays.

                    Q (L_q, d_k), K (L_k, d_k), V (L_k, d_v) -> (output (L_q, d_v), weights (L_q, L_k)).
                    """
                    d_k = Q.shape[-1]
                    scores = Q @ K.T / np.sqrt(d_k)
                    scores = scores - scores.max()  # stability: subtract the max
                    e = np.exp(scores)
                    weights = e / e.sum(axis=-1, keepdims=True)
                    return weights @ V, weights
                '''
            )
        },
        {
            "test_attention_numpy": "one maximum of the whole score matrix is subtracted (scores.max() with no axis)"
        },
        # Issue 40's seventh blind corpus, graded blind on 451e037: named.
    ),
    Mutant(
        "n01-02: a -inf bias, a fully masked row repaired with nan_to_num: NaN gradients",
        A,
        {
            "attention": Rewrite(
                r'''
                def attention(
                    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None, scale: bool = True
                ) -> tuple[Tensor, Tensor]:
                    """softmax(q k^T / sqrt(d_k)) v, with an optional mask (True = may attend).

                    q (..., L_q, d_k), k (..., L_k, d_k), v (..., L_k, d_v), mask (..., L_q, L_k)
                    -> (output (..., L_q, d_v), weights (..., L_q, L_k)).
                    """
                    scores = q @ k.transpose(-2, -1)
                    if scale:
                        scores = scores / math.sqrt(q.shape[-1])
                    if mask is not None:
                        bias = torch.zeros(mask.shape, dtype=scores.dtype).masked_fill(~mask.bool(), float("-inf"))
                        scores = scores + bias
                    weights = torch.softmax(scores, dim=-1)
                    # a row with no visible key is 0/0 = NaN: turn it into zeros
                    weights = torch.nan_to_num(weights, nan=0.0)
                    return weights @ v, weights
                '''
            )
        },
        {
            "test_attention_fully_masked_row": "the NaN or inf gradients come from the row that sees no key alone"
        },
        # Issue 40's seventh blind corpus, graded blind on 451e037: named.
    ),
    Mutant(
        "n01-03: ~mask on a 0/1 integer mask, never made bool",
        A,
        {
            "attention": Rewrite(
                r'''
                def attention(
                    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None, scale: bool = True
                ) -> tuple[Tensor, Tensor]:
                    """softmax(q k^T / sqrt(d_k)) v, with an optional mask (True = may attend).

                    q (..., L_q, d_k), k (..., L_k, d_k), v (..., L_k, d_v), mask (..., L_q, L_k)
                    -> (output (..., L_q, d_v), weights (..., L_q, L_k)).
                    """
                    scores = q @ k.transpose(-2, -1)
                    if scale:
                        scores = scores / math.sqrt(q.shape[-1])
                    if mask is None:
                        weights = torch.softmax(scores, dim=-1)
                    else:
                        hidden = ~mask
                        scores = scores.masked_fill(hidden, float("-inf"))
                        has_key = (~hidden).any(dim=-1, keepdim=True)
                        scores = scores.masked_fill(~has_key, 0.0)
                        weights = torch.softmax(scores, dim=-1)
                        weights = weights.masked_fill(~has_key, 0.0)
                    return weights @ v, weights
                '''
            )
        },
        {
            "test_attention_fully_masked_row": "the mask is used as given: your attention raised with a 0/1 integer mask"
        },
        # Issue 40's seventh blind corpus, graded blind on 451e037: named.
    ),
    Mutant(
        "n01-04: the causal mask as a float 0/1 tril, not bool",
        A,
        {
            "causal_mask": Rewrite(
                r'''
                def causal_mask(n: int) -> Tensor:
                    """(n, n) bool mask, True where key j <= query i (may attend), diagonal included."""
                    return torch.tril(torch.ones(n, n))
                '''
            )
        },
        {"test_causal_mask": "causal_mask must return a bool tensor, got torch.float"},
        # Issue 40's seventh blind corpus, graded blind on 451e037: named.
    ),
    Mutant(
        "n01-05: the test judges the returned weights, not the output",
        A,
        {
            "sees_the_future": Rewrite(
                r'''
                def sees_the_future(attend) -> bool:
                    """True when attend(q, k, v) -> (output, weights) lets a row use what follows it."""
                    # Design: random standard-normal q, k, v for several lengths; a causal attention
                    # puts no weight above the diagonal, so any weight there larger than 1e-6 means
                    # a row looks at a later position.
                    gen = torch.Generator().manual_seed(0)
                    try:
                        for L, d in ((2, 3), (5, 4), (16, 8)):
                            for _ in range(5):
                                q = torch.randn(2, L, d, generator=gen)
                                k = torch.randn(2, L, d, generator=gen)
                                v = torch.randn(2, L, d, generator=gen)
                                _, w = attend(q, k, v)
                                if bool((w.triu(1).abs() > 1e-6).any()):
                                    return True
                        return False
                    except Exception:
                        return True
                '''
            )
        },
        {"test_sees_the_future": "your test judges the weights attend returns, not its output"},
        # Issue 40's seventh blind corpus, graded blind on 451e037: named.
    ),
    Mutant(
        "p01-01: NumPy softmax without subtracting each row's max",
        A,
        {
            "attention_numpy": Rewrite(
                r'''
                # kind: wrong
                # grade_id: attention_numpy
                # mistake: the softmax exponentiates the raw scaled scores without subtracting each row's maximum, so it overflows to inf/NaN once scores reach the hundreds.
                # evidence: tools/ev01.py: Q, K scaled x60 (scaled scores up to ~4300): my answer's weights are finite, this one's contain NaN (exp overflow, inf/inf).
                def attention_numpy(
                    Q: np.ndarray, K: np.ndarray, V: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray]:
                    """Scaled dot-product attention on NumPy arrays."""
                    d_k = Q.shape[-1]
                    scores = Q @ K.T / np.sqrt(d_k)
                    e = np.exp(scores)
                    weights = e / e.sum(axis=-1, keepdims=True)
                    return weights @ V, weights
                '''
            )
        },
        {
            "test_attention_numpy": "np.exp overflows on large scores: subtract each row's max before exponentiating"
        },
        # Issue 40's seventh blind corpus, graded blind on 451e037: named.
    ),
    Mutant(
        "p01-02: a 0/1 mask added to the scores as a bias",
        A,
        {
            "attention": Rewrite(
                r'''
                # kind: wrong
                # grade_id: attention
                # mistake: a non-bool (0/1) mask is ADDED to the scores as a bias, the way F.scaled_dot_product_attention treats float masks, instead of being turned into bool with True/1 = may attend; so with a 0/1 mask hidden keys get weight and visible keys just get +1.
                # evidence: tools/ev01.py: with a 0/1 long mask hiding keys 3..5 of query 0 and all keys of query 2, query 0 puts 0.2402 of its weight on hidden keys (mine 0) and fully masked row 2 sums to 1 (mine 0); with the same mask as bool it equals my answer.
                def attention(
                    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None, scale: bool = True
                ) -> tuple[Tensor, Tensor]:
                    """softmax(q k^T / sqrt(d_k)) v, with an optional mask (True = may attend)."""
                    scores = q @ k.transpose(-2, -1)
                    if scale:
                        scores = scores / math.sqrt(q.shape[-1])
                    if mask is None:
                        weights = torch.softmax(scores, dim=-1)
                        return weights @ v, weights
                    if mask.dtype != torch.bool:
                        # a numeric mask is an additive bias on the scores (as in torch's sdpa)
                        weights = torch.softmax(scores + mask.to(scores.dtype), dim=-1)
                        return weights @ v, weights
                    has_key = mask.any(dim=-1, keepdim=True)
                    scores = scores.masked_fill(~mask, float("-inf"))
                    scores = torch.where(has_key, scores, torch.zeros_like(scores))
                    weights = torch.softmax(scores, dim=-1)
                    weights = torch.where(has_key, weights, torch.zeros_like(weights))
                    return weights @ v, weights
                '''
            )
        },
        {"test_attention_fully_masked_row": "the mask is added to the scores"},
        # Issue 40's seventh blind corpus, graded blind on 451e037: counterexample ("a fully
        # masked row must get all-zero weights"); named since fix8a.
    ),
    Mutant(
        "p01-03: a hand-written masked softmax without the row max: overflow",
        A,
        {
            "attention": Rewrite(
                r'''
                # kind: wrong
                # grade_id: attention
                # mistake: a hand-written softmax (exp times the mask, divided by the clamped row sum) handles fully masked rows but never subtracts the row maximum, so large scores overflow to inf and give NaN weights.
                # evidence: tools/ev01.py: q, k scaled x10 (max scaled score ~189): my answer matches F.scaled_dot_product_attention (9e-8), this one gives NaN in all 7 weight rows of one batch (exp overflow).
                def attention(
                    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None, scale: bool = True
                ) -> tuple[Tensor, Tensor]:
                    """softmax(q k^T / sqrt(d_k)) v, with an optional mask (True = may attend)."""
                    scores = q @ k.transpose(-2, -1)
                    if scale:
                        scores = scores / math.sqrt(q.shape[-1])
                    e = torch.exp(scores)
                    if mask is not None:
                        e = e * mask.to(e.dtype)  # hidden keys contribute exactly 0
                    # clamp keeps a fully masked row at 0 / tiny = 0 instead of 0 / 0
                    weights = e / e.sum(dim=-1, keepdim=True).clamp_min(1e-30)
                    return weights @ v, weights
                '''
            )
        },
        {"test_attention_parity": "weights differ from torch's scaled_dot_product_attention"},
        makes=("attention.overflow",),
        # Issue 40's seventh blind corpus, graded blind on 451e037: named (in a later check of the
        # cell: the weights' overflow).
    ),
    Mutant(
        "p01-04: a causal mask without its diagonal (strictly lower)",
        A,
        {
            "causal_mask": Rewrite(
                r'''
                # kind: wrong
                # grade_id: causal_mask
                # mistake: misreads "lower triangular" as strictly lower triangular (diagonal=-1), so a token may not attend to itself and query 0 sees nothing.
                # evidence: tools/ev01.py: causal_mask(3) gives [[0,0,0],[1,0,0],[1,1,0]] instead of [[1,0,0],[1,1,0],[1,1,1]]; the diagonal is False, against 'diagonal included'.
                def causal_mask(n: int) -> Tensor:
                    """(n, n) bool mask, True where key j <= query i (may attend), diagonal included."""
                    return torch.tril(torch.ones(n, n, dtype=torch.bool), diagonal=-1)
                '''
            )
        },
        {
            "test_causal_mask": "your causal mask hides the diagonal (j < i instead of j <= i)",
        },
        # Issue 40's seventh blind corpus, graded blind on 451e037: named, and charged in
        # test_causal_weights too; charged once since 01's repair of the mask's off-by-one.
        charged_once=True,
    ),
    Mutant(
        "p01-05: the test changes only the last position",
        A,
        {
            "sees_the_future": Rewrite(
                r'''
                # kind: wrong
                # grade_id: sees_the_future
                # mistake: the test only ever changes the LAST position and compares rows 0..L-2, so a leak from a middle key into an earlier query (e.g. key 3 into query 1) is never perturbed and goes unseen.
                # evidence: tools/ev01.py: an attend that is causal except that query 1 also sees key 3 (output leak): my answer says True, this one says False (it only ever perturbs the last position); both say False for causal attention.
                def sees_the_future(attend) -> bool:
                    """True when attend(q, k, v) -> (output, weights) lets a row use what follows it."""
                    # Design: the last token is "the future" of every other token, so I replace
                    # q, k, v at position L-1 with new standard-normal draws (5 draws, L = 8,
                    # widths 4 and 3, a batch of 2) and check that output rows 0..L-2 did not
                    # move by more than 1e-4 (rounding is below 1e-5, a leak above 1e-3).
                    gen = torch.Generator().manual_seed(0)
                    L, d_k, d_v = 8, 4, 3
                    try:
                        for _ in range(5):
                            q = torch.randn(2, L, d_k, generator=gen)
                            k = torch.randn(2, L, d_k, generator=gen)
                            v = torch.randn(2, L, d_v, generator=gen)
                            out, _ = attend(q, k, v)
                            q2, k2, v2 = q.clone(), k.clone(), v.clone()
                            q2[:, -1] = torch.randn(2, d_k, generator=gen)
                            k2[:, -1] = torch.randn(2, d_k, generator=gen)
                            v2[:, -1] = torch.randn(2, d_v, generator=gen)
                            out2, _ = attend(q2, k2, v2)
                            if (out2[:, :-1] - out[:, :-1]).abs().max().item() > 1e-4:
                                return True
                    except Exception:
                        return True
                    return False
                '''
            )
        },
        {
            "test_sees_the_future": "your test sees the first query reading the last key, and misses it reading the next-to-last key"
        },
        # Issue 40's seventh blind corpus, graded blind on 451e037: named.
    ),
    Mutant(
        "q01-02: fully masked rows found by mask.any(dim=-1) without keepdim",
        A,
        {
            "attention": Rewrite(
                r'''
                def attention(
                    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None, scale: bool = True
                ) -> tuple[Tensor, Tensor]:
                    """softmax(q k^T / sqrt(d_k)) v, with an optional mask (True = may attend).

                    q (..., L_q, d_k), k (..., L_k, d_k), v (..., L_k, d_v), mask (..., L_q, L_k)
                    -> (output (..., L_q, d_v), weights (..., L_q, L_k)).
                    """
                    scores = q @ k.transpose(-2, -1)
                    if scale:
                        scores = scores / math.sqrt(q.shape[-1])
                    if mask is None:
                        weights = torch.softmax(scores, dim=-1)
                    else:
                        mask = mask.bool()
                        # rows with at least one visible key
                        visible = mask.any(dim=-1)
                        scores = scores.masked_fill(~mask, float("-inf"))
                        scores = scores.masked_fill(~visible, 0.0)  # finite scores for empty rows
                        weights = torch.softmax(scores, dim=-1)
                        weights = weights.masked_fill(~visible, 0.0)  # and zero weights
                    return weights @ v, weights
                '''
            )
        },
        {
            "test_attention_fully_masked_row": "the flags of the rows that see a key are a "
            "reduction over the keys without keepdim=True"
        },
        charged_once=True,
        # Issue 40's eighth blind corpus, graded blind on 47d54b0: counterexample (named since).
    ),
    Mutant(
        "q01-01: attention masks additively and repairs the fully masked row with nan_to_num",
        A,
        {
            "attention": Rewrite(
                r'''
                def attention(
                    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None, scale: bool = True
                ) -> tuple[Tensor, Tensor]:
                    """softmax(q k^T / sqrt(d_k)) v, with an optional mask (True = may attend).

                    q (..., L_q, d_k), k (..., L_k, d_k), v (..., L_k, d_v), mask (..., L_q, L_k)
                    -> (output (..., L_q, d_v), weights (..., L_q, L_k)).
                    """
                    scores = q @ k.transpose(-2, -1)
                    if scale:
                        scores = scores / math.sqrt(q.shape[-1])
                    if mask is None:
                        weights = torch.softmax(scores, dim=-1)
                    else:
                        mask = mask.bool()
                        # hidden keys: add -inf to their scores
                        scores = scores + torch.where(mask, 0.0, float("-inf"))
                        # a row with no visible key is NaN after the softmax (0/0): make it zero
                        weights = torch.softmax(scores, dim=-1).nan_to_num(0.0)
                    return weights @ v, weights
                '''
            )
        },
        {
            "test_attention_fully_masked_row": "replacing it afterwards (nan_to_num, masked_fill, torch.where) hides it from the output, not from the backward pass"
        },
        # Issue 40's eighth blind corpus, graded blind on 47d54b0: named.
    ),
    Mutant(
        "q01-03: attention hides keys with -1e4, not -inf",
        A,
        {
            "attention": Rewrite(
                r'''
                def attention(
                    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None, scale: bool = True
                ) -> tuple[Tensor, Tensor]:
                    """softmax(q k^T / sqrt(d_k)) v, with an optional mask (True = may attend).

                    q (..., L_q, d_k), k (..., L_k, d_k), v (..., L_k, d_v), mask (..., L_q, L_k)
                    -> (output (..., L_q, d_v), weights (..., L_q, L_k)).
                    """
                    scores = q @ k.transpose(-2, -1)
                    if scale:
                        scores = scores / math.sqrt(q.shape[-1])
                    if mask is None:
                        weights = torch.softmax(scores, dim=-1)
                    else:
                        mask = mask.bool()
                        # rows with at least one visible key
                        visible = mask.any(dim=-1, keepdim=True)
                        scores = scores.masked_fill(~mask, -1e4)  # very negative: exp() gives 0
                        weights = torch.softmax(scores, dim=-1)
                        weights = weights.masked_fill(~visible, 0.0)  # and zero weights
                    return weights @ v, weights
                '''
            )
        },
        {
            "test_attention_parity": "masked keys filled with a finite number (like -100 or -1e9) instead of -inf"
        },
        # Issue 40's eighth blind corpus, graded blind on 47d54b0: named.
    ),
    Mutant(
        "q01-04: attention_numpy subtracts the whole score matrix's maximum",
        A,
        {
            "attention_numpy": Rewrite(
                r'''
                def attention_numpy(
                    Q: np.ndarray, K: np.ndarray, V: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray]:
                    """Scaled dot-product attention on NumPy arrays.

                    Q (L_q, d_k), K (L_k, d_k), V (L_k, d_v) -> (output (L_q, d_v), weights (L_q, L_k)).
                    """
                    d_k = Q.shape[-1]
                    scores = Q @ K.T / np.sqrt(d_k)  # (L_q, L_k)
                    scores = scores - scores.max()  # subtract the max, for stability
                    e = np.exp(scores)
                    weights = e / e.sum(axis=-1, keepdims=True)
                    return weights @ V, weights
                '''
            )
        },
        {"test_attention_numpy": "one maximum of the whole score matrix is subtracted"},
        # Issue 40's eighth blind corpus, graded blind on 47d54b0: named.
    ),
    Mutant(
        "q01-05: sees_the_future changes the last position only",
        A,
        {
            "sees_the_future": Rewrite(
                r'''
                def sees_the_future(attend) -> bool:
                    """True when attend(q, k, v) -> (output, weights) lets a row use what follows it."""
                    # Design: for several lengths L (2..16) and widths, draw standard-normal q, k, v
                    # (float64, batch of 2), and for EVERY cut i = 0..L-2 replace q, k, v at positions
                    # i+1.. with fresh standard-normal draws (3 draws per cut). If output rows 0..i move
                    # by more than 1e-4 on any of them, attend sees the future. 1e-4 sits between float
                    # rounding (< 1e-5 by the statement) and a leak (> 1e-3 on most draws); testing every
                    # cut catches a leak from any later key into any earlier query. Values only, no grad.
                    try:
                        gen = torch.Generator().manual_seed(1234)
                        for length, d_k, d_v in ((2, 3, 2), (5, 4, 3), (8, 8, 5), (16, 16, 7)):
                            q = torch.randn(2, length, d_k, generator=gen, dtype=torch.float64)
                            k = torch.randn(2, length, d_k, generator=gen, dtype=torch.float64)
                            v = torch.randn(2, length, d_v, generator=gen, dtype=torch.float64)
                            with torch.no_grad():
                                base = attend(q, k, v)[0]
                            for i in [length - 2]:  # change the last token
                                for _ in range(3):
                                    q2, k2, v2 = q.clone(), k.clone(), v.clone()
                                    n = length - i - 1
                                    q2[:, i + 1 :] = torch.randn(2, n, d_k, generator=gen, dtype=torch.float64)
                                    k2[:, i + 1 :] = torch.randn(2, n, d_k, generator=gen, dtype=torch.float64)
                                    v2[:, i + 1 :] = torch.randn(2, n, d_v, generator=gen, dtype=torch.float64)
                                    with torch.no_grad():
                                        out = attend(q2, k2, v2)[0]
                                    moved = (out[:, : i + 1] - base[:, : i + 1]).abs()
                                    if not bool((moved <= 1e-4).all()):  # NaN counts as moved
                                        return True
                        return False
                    except Exception:
                        return True
                '''
            )
        },
        {
            "test_sees_the_future": "your test sees the first query reading the last key, and misses it reading the next-to-last key"
        },
        # Issue 40's eighth blind corpus, graded blind on 47d54b0: named.
    ),
    Mutant(
        "r01-01: attention_numpy subtracts the whole score matrix's maximum",
        A,
        {
            "attention_numpy": Rewrite(
                r'''
                # id: r01-01
                # kind: wrong
                # grade_id: attention_numpy
                # mistake: subtracts the maximum of the WHOLE score matrix instead of each row's maximum, so rows whose scores lie far below the global maximum underflow to 0/0 = NaN when scores are in the thousands.
                # evidence: my experiment (scripts ev0N.py, output ev0N.txt in /work/fresh-corpus8b):
                #   r01-01: Q,K ~ 60*N(0,1) (scores up to 4932.0 ): correct weights finite: True | wrong weights NaN rows: [True, False, True, False]
                # public checks: passes every public check of the notebook
                def attention_numpy(
                    Q: np.ndarray, K: np.ndarray, V: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray]:
                    """Scaled dot-product attention on NumPy arrays.

                    Q (L_q, d_k), K (L_k, d_k), V (L_k, d_v) -> (output (L_q, d_v), weights (L_q, L_k)).
                    """
                    d_k = Q.shape[-1]
                    scores = Q @ K.T / np.sqrt(d_k)
                    # subtract the max so that exp cannot overflow
                    e = np.exp(scores - scores.max())
                    weights = e / e.sum(axis=-1, keepdims=True)
                    return weights @ V, weights
                '''
            )
        },
        {"test_attention_numpy": "one maximum of the whole score matrix is subtracted"},
        # Issue 40's eighth blind corpus, graded blind on 47d54b0: named.
    ),
    Mutant(
        "r01-02: attention adds a -inf bias and repairs with nan_to_num after the softmax",
        A,
        {
            "attention": Rewrite(
                r'''
                # id: r01-02
                # kind: wrong
                # grade_id: attention
                # mistake: hides keys by ADDING a -inf bias to the scores and repairs a fully masked row only after the softmax with torch.nan_to_num, so the forward pass is finite but the backward pass puts NaN into the gradients of q and k (the statement asks for finite gradients).
                # evidence: my experiment (scripts ev0N.py, output ev0N.txt in /work/fresh-corpus8b):
                #   r01-02: correct output finite True | grads finite q,k,v: [True, True, True]
                #   r01-02: r01-02 output finite True | grads finite q,k,v: [False, False, True]
                # public checks: passes every public check of the notebook
                def attention(
                    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None, scale: bool = True
                ) -> tuple[Tensor, Tensor]:
                    """softmax(q k^T / sqrt(d_k)) v, with an optional mask (True = may attend).

                    q (..., L_q, d_k), k (..., L_k, d_k), v (..., L_k, d_v), mask (..., L_q, L_k)
                    -> (output (..., L_q, d_v), weights (..., L_q, L_k)).
                    """
                    scores = q @ k.transpose(-2, -1)
                    if scale:
                        scores = scores / math.sqrt(q.shape[-1])
                    if mask is not None:
                        # additive mask: 0 where the key is visible, -inf where it is hidden
                        scores = scores + torch.where(mask.bool(), 0.0, float("-inf"))
                    weights = torch.softmax(scores, dim=-1)
                    # a row with every key masked is all NaN (0/0): turn those NaNs into zeros
                    weights = torch.nan_to_num(weights, nan=0.0)
                    return weights @ v, weights
                '''
            )
        },
        {
            "test_attention_fully_masked_row": "replacing it afterwards (nan_to_num, masked_fill, torch.where) hides it from the output, not from the backward pass"
        },
        # Issue 40's eighth blind corpus, graded blind on 47d54b0: named.
    ),
    Mutant(
        "r01-03: attention masks after the softmax and renormalises",
        A,
        {
            "attention": Rewrite(
                r'''
                # id: r01-03
                # kind: wrong
                # grade_id: attention
                # mistake: applies the mask AFTER the softmax (multiply the weights by the mask, then renormalise), so when the hidden keys have much larger scores the visible weights underflow to 0 and the row comes out all zero instead of a distribution over the visible keys.
                # evidence: my experiment (scripts ev0N.py, output ev0N.txt in /work/fresh-corpus8b):
                #   r01-03: correct weights for scores [-120,-150,60,400], keys 2,3 hidden: [1.0, 0.0, 0.0, 0.0]
                #   r01-03: r01-03 weights for scores [-120,-150,60,400], keys 2,3 hidden: [0.0, 0.0, 0.0, 0.0]
                #   r01-03: F.scaled_dot_product_attention weights: [1.0, 9.357622912219837e-14, 0.0, 0.0]
                # public checks: passes every GRADED public check cell; only ungraded demo cells of the notebook raise: ERROR in (ungraded cell): AssertionError: causality violated
                def attention(
                    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None, scale: bool = True
                ) -> tuple[Tensor, Tensor]:
                    """softmax(q k^T / sqrt(d_k)) v, with an optional mask (True = may attend).

                    q (..., L_q, d_k), k (..., L_k, d_k), v (..., L_k, d_v), mask (..., L_q, L_k)
                    -> (output (..., L_q, d_v), weights (..., L_q, L_k)).
                    """
                    scores = q @ k.transpose(-2, -1)
                    if scale:
                        scores = scores / math.sqrt(q.shape[-1])
                    weights = torch.softmax(scores, dim=-1)
                    if mask is not None:
                        # keep only the visible keys and make the rows sum to 1 again; a row that
                        # sees no key keeps zero weights (the clamp avoids 0/0)
                        weights = weights * mask.to(weights.dtype)
                        weights = weights / weights.sum(dim=-1, keepdim=True).clamp_min(1e-12)
                    return weights @ v, weights
                '''
            )
        },
        {"test_attention_parity": "the mask is applied after the softmax"},
        # Issue 40's eighth blind corpus, graded blind on 47d54b0: named.
    ),
    Mutant(
        "r01-04: sees_the_future judges the returned weights, not the output",
        A,
        {
            "sees_the_future": Rewrite(
                r'''
                # id: r01-04
                # kind: wrong
                # grade_id: sees_the_future
                # mistake: judges causality from the returned WEIGHTS (any weight above the diagonal) instead of from the output, so an attention that leaks in its output while returning causal weights is called causal (the statement defines a leak by the output).
                # evidence: my experiment (scripts ev0N.py, output ev0N.txt in /work/fresh-corpus8b):
                #   r01-04 causal -> False | output-leak with causal weights -> False | query0 sees key2 -> True
                # public checks: passes every public check of the notebook
                def sees_the_future(attend) -> bool:
                    """True when attend(q, k, v) -> (output, weights) lets a row use what follows it."""
                    # Design: the weights say where every query looks. Run attend on random inputs of
                    # a few lengths and check that every weight above the diagonal (key j > query i)
                    # is zero, up to 1e-6 for rounding. Weights are exact, so one call per length is
                    # enough.
                    gen = torch.Generator().manual_seed(0)
                    for length in (2, 5, 9, 16):
                        q = torch.randn(2, length, 4, generator=gen)
                        k = torch.randn(2, length, 4, generator=gen)
                        v = torch.randn(2, length, 3, generator=gen)
                        _, weights = attend(q, k, v)
                        future = weights.triu(1)
                        if float(future.abs().max()) > 1e-6:
                            return True
                    return False
                '''
            )
        },
        {"test_sees_the_future": "your test judges the weights attend returns, not its output"},
        # Issue 40's eighth blind corpus, graded blind on 47d54b0: named.
    ),
    Mutant(
        "r01-05: sees_the_future changes the last position only",
        A,
        {
            "sees_the_future": Rewrite(
                r'''
                # id: r01-05
                # kind: wrong
                # grade_id: sees_the_future
                # mistake: only ever changes the LAST position (one cut, i = L - 2), so a leak from a later key into an earlier query that does not involve the last position (e.g. query 0 seeing key 2 of 8) goes unnoticed.
                # evidence: my experiment (scripts ev0N.py, output ev0N.txt in /work/fresh-corpus8b):
                #   r01-05 causal -> False | output-leak with causal weights -> True | query0 sees key2 -> False
                # public checks: passes every public check of the notebook
                def sees_the_future(attend) -> bool:
                    """True when attend(q, k, v) -> (output, weights) lets a row use what follows it."""
                    # Design: the future of every position except the last contains the last token,
                    # so I change the last token only (q, k and v at position L - 1), 5 times per
                    # length, and check that outputs 0..L-2 move by less than 1e-4 (rounding is
                    # below 1e-5, a leak above 1e-3).
                    gen = torch.Generator().manual_seed(0)
                    for length in (2, 4, 8, 16):
                        for _ in range(5):
                            q = torch.randn(2, length, 4, generator=gen, dtype=torch.float64)
                            k = torch.randn(2, length, 4, generator=gen, dtype=torch.float64)
                            v = torch.randn(2, length, 3, generator=gen, dtype=torch.float64)
                            before = attend(q, k, v)[0]
                            q2, k2, v2 = q.clone(), k.clone(), v.clone()
                            q2[:, -1] = torch.randn(2, 4, generator=gen, dtype=torch.float64)
                            k2[:, -1] = torch.randn(2, 4, generator=gen, dtype=torch.float64)
                            v2[:, -1] = torch.randn(2, 3, generator=gen, dtype=torch.float64)
                            after = attend(q2, k2, v2)[0]
                            if float((after[:, :-1] - before[:, :-1]).abs().max()) > 1e-4:
                                return True
                    return False
                '''
            )
        },
        {
            "test_sees_the_future": "your test sees the first query reading the last key, and misses it reading the next-to-last key"
        },
        # Issue 40's eighth blind corpus, graded blind on 47d54b0: named.
    ),
    Mutant(
        "s01-01: the mask added as a 0/-inf bias, fully masked rows cleaned by nan_to_num",
        A,
        {
            "attention": Rewrite(
                r'''
                def attention(
                    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None, scale: bool = True
                ) -> tuple[Tensor, Tensor]:
                    """softmax(q k^T / sqrt(d_k)) v, with an optional mask (True = may attend).

                    q (..., L_q, d_k), k (..., L_k, d_k), v (..., L_k, d_v), mask (..., L_q, L_k)
                    -> (output (..., L_q, d_v), weights (..., L_q, L_k)).
                    """
                    scores = q @ k.transpose(-2, -1)
                    if scale:
                        scores = scores / math.sqrt(q.shape[-1])
                    if mask is not None:
                        bias = torch.zeros(mask.shape, dtype=scores.dtype, device=scores.device)
                        bias = bias.masked_fill(~mask.bool(), float("-inf"))
                        scores = scores + bias  # additive mask: 0 where visible, -inf where hidden
                    # a row with no visible key gives 0/0 = NaN: turn those into zeros
                    weights = torch.softmax(scores, dim=-1).nan_to_num(0.0)
                    return weights @ v, weights
                '''
            )
        },
        {
            "test_attention_fully_masked_row": "the NaN or inf gradients come from the row that sees no key alone",
        },
        # Issue 40's ninth blind corpus, graded blind on feb0b2e: named.
    ),
    Mutant(
        "s01-02: NumPy softmax without subtracting the row max",
        A,
        {
            "attention_numpy": Rewrite(
                r'''
                def attention_numpy(
                    Q: np.ndarray, K: np.ndarray, V: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray]:
                    """Scaled dot-product attention on NumPy arrays.

                    Q (L_q, d_k), K (L_k, d_k), V (L_k, d_v) -> (output (L_q, d_v), weights (L_q, L_k)).
                    """
                    d_k = Q.shape[-1]
                    scores = Q @ K.T / np.sqrt(d_k)
                    e = np.exp(scores)
                    weights = e / e.sum(axis=-1, keepdims=True)
                    return weights @ V, weights
                '''
            )
        },
        {
            "test_attention_numpy": "np.exp overflows on large scores",
        },
        # Issue 40's ninth blind corpus, graded blind on feb0b2e: named.
    ),
    Mutant(
        "s01-03: the caller's bool mask opened in place for fully masked rows",
        A,
        {
            "attention": Rewrite(
                r'''
                def attention(
                    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None, scale: bool = True
                ) -> tuple[Tensor, Tensor]:
                    """softmax(q k^T / sqrt(d_k)) v, with an optional mask (True = may attend).

                    q (..., L_q, d_k), k (..., L_k, d_k), v (..., L_k, d_v), mask (..., L_q, L_k)
                    -> (output (..., L_q, d_v), weights (..., L_q, L_k)).
                    """
                    scores = q @ k.transpose(-2, -1)
                    if scale:
                        scores = scores / math.sqrt(q.shape[-1])
                    if mask is None:
                        weights = torch.softmax(scores, dim=-1)
                        return weights @ v, weights
                    mask = mask.bool()
                    empty = ~mask.any(dim=-1, keepdim=True)  # rows that see no key
                    mask |= empty  # let those rows see everything for now (no NaN), zeroed below
                    scores = scores.masked_fill(~mask, float("-inf"))
                    weights = torch.softmax(scores, dim=-1)
                    weights = weights.masked_fill(empty, 0.0)
                    return weights @ v, weights
                '''
            )
        },
        {
            "test_attention_fully_masked_row": "changed a tensor it was given, in place",
        },
        # Issue 40's ninth blind corpus, graded blind on feb0b2e: named.
    ),
    Mutant(
        "s01-04: causal_mask returns a float 0/1 tensor, not a bool one",
        A,
        {
            "causal_mask": Rewrite(
                r'''
                def causal_mask(n: int) -> Tensor:
                    """(n, n) bool mask, True where key j <= query i (may attend), diagonal included."""
                    return torch.tril(torch.ones(n, n))
                '''
            )
        },
        {
            "test_causal_mask": "causal_mask must return a bool tensor",
        },
        # Issue 40's ninth blind corpus, graded blind on feb0b2e: named.
    ),
    Mutant(
        "s01-05: sees_the_future judges the returned weights, not the output",
        A,
        {
            "sees_the_future": Rewrite(
                r'''
                def sees_the_future(attend) -> bool:
                    """True when attend(q, k, v) -> (output, weights) lets a row use what follows it."""
                    # Design: run attend on random inputs of a few sizes and look at the weights:
                    # a causal attention puts no weight above the diagonal (key j > query i).
                    # Tolerance 1e-6 so float rounding is not a leak.
                    g = torch.Generator().manual_seed(0)
                    try:
                        for L, d in ((2, 3), (6, 4), (12, 8), (16, 16)):
                            q = torch.randn(2, L, d, generator=g)
                            k = torch.randn(2, L, d, generator=g)
                            v = torch.randn(2, L, d, generator=g)
                            _, w = attend(q, k, v)
                            if (w.triu(1).abs() > 1e-6).any():
                                return True
                    except Exception:
                        return False
                    return False
                '''
            )
        },
        {
            "test_sees_the_future": "your test judges the weights attend returns, not its output",
        },
        # Issue 40's ninth blind corpus, graded blind on feb0b2e: named.
    ),
    Mutant(
        "t01-01: the mask added as log(mask), fully masked rows cleaned by nan_to_num",
        A,
        {
            "attention": Rewrite(
                r'''
                def attention(
                    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None, scale: bool = True
                ) -> tuple[Tensor, Tensor]:
                    """softmax(q k^T / sqrt(d_k)) v, with an optional mask (True = may attend).

                    q (..., L_q, d_k), k (..., L_k, d_k), v (..., L_k, d_v), mask (..., L_q, L_k)
                    -> (output (..., L_q, d_v), weights (..., L_q, L_k)).
                    """
                    scores = q @ k.transpose(-2, -1)
                    if scale:
                        scores = scores / math.sqrt(q.shape[-1])
                    if mask is not None:
                        # additive mask: log(1) = 0 keeps a score, log(0) = -inf hides it
                        scores = scores + torch.log(mask.to(scores.dtype))
                    weights = torch.softmax(scores, dim=-1)
                    # a row with no visible key is 0/0 = NaN: turn those into zeros
                    weights = torch.nan_to_num(weights, nan=0.0)
                    return weights @ v, weights
                '''
            )
        },
        {
            "test_attention_fully_masked_row": "the NaN or inf gradients come from the row that sees no key alone",
        },
        # Issue 40's ninth blind corpus, graded blind on feb0b2e: named.
    ),
    Mutant(
        "t01-02: True written into the caller's mask for fully masked rows",
        A,
        {
            "attention": Rewrite(
                r'''
                def attention(
                    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None, scale: bool = True
                ) -> tuple[Tensor, Tensor]:
                    """softmax(q k^T / sqrt(d_k)) v, with an optional mask (True = may attend).

                    q (..., L_q, d_k), k (..., L_k, d_k), v (..., L_k, d_v), mask (..., L_q, L_k)
                    -> (output (..., L_q, d_v), weights (..., L_q, L_k)).
                    """
                    scores = q @ k.transpose(-2, -1)
                    if scale:
                        scores = scores / math.sqrt(q.shape[-1])
                    if mask is None:
                        weights = torch.softmax(scores, dim=-1)
                        return weights @ v, weights
                    mask = mask.bool()
                    empty = ~mask.any(dim=-1)  # rows where the query sees no key
                    # let those rows see every key for the softmax (no 0/0), zero them afterwards
                    mask[empty] = True
                    weights = torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)
                    weights = weights.masked_fill(empty.unsqueeze(-1), 0.0)
                    return weights @ v, weights
                '''
            )
        },
        {
            "test_attention_fully_masked_row": "changed a tensor it was given, in place",
        },
        # Issue 40's ninth blind corpus, graded blind on feb0b2e: named.
    ),
    Mutant(
        "t01-03: NumPy softmax subtracts the largest score of the whole matrix",
        A,
        {
            "attention_numpy": Rewrite(
                r'''
                def attention_numpy(
                    Q: np.ndarray, K: np.ndarray, V: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray]:
                    """Scaled dot-product attention on NumPy arrays.

                    Q (L_q, d_k), K (L_k, d_k), V (L_k, d_v) -> (output (L_q, d_v), weights (L_q, L_k)).
                    """
                    d_k = Q.shape[-1]
                    scores = Q @ K.T / np.sqrt(d_k)
                    scores = scores - scores.max()  # stability: largest exponent is 0
                    e = np.exp(scores)
                    weights = e / e.sum(axis=-1, keepdims=True)
                    return weights @ V, weights
                '''
            )
        },
        {
            "test_attention_numpy": "one maximum of the whole score matrix is subtracted",
        },
        # Issue 40's ninth blind corpus, graded blind on feb0b2e: named.
    ),
    Mutant(
        "t01-04: causal_mask keeps the upper triangle",
        A,
        {
            "causal_mask": Rewrite(
                r'''
                def causal_mask(n: int) -> Tensor:
                    """(n, n) bool mask, True where key j <= query i (may attend), diagonal included."""
                    return torch.triu(torch.ones(n, n, dtype=torch.bool))
                '''
            )
        },
        {
            "test_causal_mask": "your mask lets each position see the future",
        },
        # Issue 40's ninth blind corpus, graded blind on feb0b2e: named.
        charged_once=True,
    ),
    Mutant(
        "t01-05: sees_the_future changes only the last position",
        A,
        {
            "sees_the_future": Rewrite(
                r'''
                def sees_the_future(attend) -> bool:
                    """True when attend(q, k, v) -> (output, weights) lets a row use what follows it."""
                    # Design: one batch of random q, k, v (L = 8, width 6, float64). I change the last
                    # position only (the "future" of every other row) with a new random draw and
                    # compare rows 0..L-2 of the output. Causal attention moves them by rounding only
                    # (< 1e-5); I call a change larger than 1e-4 a leak. Repeated 5 times with
                    # different draws, any leak counts.
                    gen = torch.Generator().manual_seed(0)
                    L, d = 8, 6
                    try:
                        for _ in range(5):
                            q = torch.randn(2, L, d, generator=gen, dtype=torch.float64)
                            k = torch.randn(2, L, d, generator=gen, dtype=torch.float64)
                            v = torch.randn(2, L, d, generator=gen, dtype=torch.float64)
                            q2, k2, v2 = q.clone(), k.clone(), v.clone()
                            q2[:, -1] = torch.randn(2, d, generator=gen, dtype=torch.float64)
                            k2[:, -1] = torch.randn(2, d, generator=gen, dtype=torch.float64)
                            v2[:, -1] = torch.randn(2, d, generator=gen, dtype=torch.float64)
                            before, _ = attend(q, k, v)
                            after, _ = attend(q2, k2, v2)
                            if (before[:, : L - 1] - after[:, : L - 1]).abs().max() > 1e-4:
                                return True
                        return False
                    except Exception:
                        return True
                '''
            )
        },
        {
            "test_sees_the_future": "your test sees the first query reading the last key",
        },
        # Issue 40's ninth blind corpus, graded blind on feb0b2e: named.
    ),
    Mutant(
        "u01-01: attention_numpy subtracts the whole matrix's max, not each row's",
        A,
        {
            "attention_numpy": Rewrite(
                r'''
                def attention_numpy(
                    Q: np.ndarray, K: np.ndarray, V: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray]:
                    """Scaled dot-product attention on NumPy arrays.

                    Q (L_q, d_k), K (L_k, d_k), V (L_k, d_v) -> (output (L_q, d_v), weights (L_q, L_k)).
                    """
                    d_k = Q.shape[-1]
                    scores = Q @ K.T / np.sqrt(d_k)
                    scores = scores - scores.max()  # subtract the max so exp cannot overflow
                    e = np.exp(scores)
                    weights = e / e.sum(axis=-1, keepdims=True)
                    return weights @ V, weights
                '''
            )
        },
        {
            "test_attention_numpy": "one maximum of the whole score matrix is subtracted",
        },
        # Issue 40's tenth blind corpus, graded blind on 60c32e8: named.
    ),
    Mutant(
        "u01-02: the masked path divides by √d_k whatever scale says",
        A,
        {
            "attention": Rewrite(
                r'''
                def attention(
                    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None, scale: bool = True
                ) -> tuple[Tensor, Tensor]:
                    """softmax(q k^T / sqrt(d_k)) v, with an optional mask (True = may attend).

                    q (..., L_q, d_k), k (..., L_k, d_k), v (..., L_k, d_v), mask (..., L_q, L_k)
                    -> (output (..., L_q, d_v), weights (..., L_q, L_k)).
                    """
                    d_k = q.shape[-1]
                    if mask is None:
                        scores = q @ k.transpose(-2, -1)
                        if scale:
                            scores = scores / math.sqrt(d_k)
                        weights = torch.softmax(scores, dim=-1)
                        return weights @ v, weights
                    # masked attention
                    mask = mask.bool()
                    scores = q @ k.transpose(-2, -1) / math.sqrt(d_k)
                    has_key = mask.any(dim=-1, keepdim=True)
                    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
                    weights = torch.softmax(scores, dim=-1).masked_fill(~has_key, 0.0)
                    return weights @ v, weights
                '''
            )
        },
        {
            "test_attention_parity": "with a mask, scale=False still divides the scores by √d_k",
        },
        # Issue 40's tenth blind corpus, graded blind on 60c32e8: not caught (caught since).
    ),
    Mutant(
        "u01-03: the caller's bool mask opened in place for fully masked rows",
        A,
        {
            "attention": Rewrite(
                r'''
                def attention(
                    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None, scale: bool = True
                ) -> tuple[Tensor, Tensor]:
                    """softmax(q k^T / sqrt(d_k)) v, with an optional mask (True = may attend).

                    q (..., L_q, d_k), k (..., L_k, d_k), v (..., L_k, d_v), mask (..., L_q, L_k)
                    -> (output (..., L_q, d_v), weights (..., L_q, L_k)).
                    """
                    scores = q @ k.transpose(-2, -1)
                    if scale:
                        scores = scores / math.sqrt(q.shape[-1])
                    if mask is None:
                        weights = torch.softmax(scores, dim=-1)
                        return weights @ v, weights
                    mask = mask.bool()
                    empty = ~mask.any(dim=-1, keepdim=True)  # rows that see no key
                    # let the empty rows "see" everything so the softmax stays finite; zeroed below
                    mask |= empty
                    weights = torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)
                    weights = weights.masked_fill(empty, 0.0)
                    return weights @ v, weights
                '''
            )
        },
        {
            "test_attention_fully_masked_row": "changed a tensor it was given, in place",
        },
        # Issue 40's tenth blind corpus, graded blind on 60c32e8: named.
    ),
    Mutant(
        "u01-04: causal_mask cut from a shared table of 256 positions",
        A,
        {
            "causal_mask": Rewrite(
                r'''
                _CAUSAL_TABLE = torch.tril(torch.ones(256, 256, dtype=torch.bool))  # built once, reused


                def causal_mask(n: int) -> Tensor:
                    """(n, n) bool mask, True where key j <= query i (may attend), diagonal included."""
                    return _CAUSAL_TABLE[:n, :n]
                '''
            )
        },
        {
            "test_causal_mask": "causal_mask cuts its mask from a table of a fixed size M",
        },
        # Issue 40's tenth blind corpus, graded blind on 60c32e8: not caught (caught since).
    ),
    Mutant(
        "u01-05: sees_the_future changes only the last position",
        A,
        {
            "sees_the_future": Rewrite(
                r'''
                def sees_the_future(attend) -> bool:
                    """True when attend(q, k, v) -> (output, weights) lets a row use what follows it."""
                    # Design: change the last token (q, k, v at position L-1) to fresh normal draws, 20
                    # times for a few sizes, and see whether any earlier output row moves by more than
                    # 1e-4 (rounding stays below 1e-5, a leak is above 1e-3). The last token is the one
                    # every earlier query would peek at, so changing it is enough.
                    gen = torch.Generator().manual_seed(0)
                    for L, d_k, d_v in ((2, 3, 2), (6, 4, 5), (11, 8, 3), (16, 16, 16)):
                        for _ in range(20):
                            q = torch.randn(2, L, d_k, generator=gen, dtype=torch.float64)
                            k = torch.randn(2, L, d_k, generator=gen, dtype=torch.float64)
                            v = torch.randn(2, L, d_v, generator=gen, dtype=torch.float64)
                            q2, k2, v2 = q.clone(), k.clone(), v.clone()
                            q2[:, -1] = torch.randn(2, d_k, generator=gen, dtype=torch.float64)
                            k2[:, -1] = torch.randn(2, d_k, generator=gen, dtype=torch.float64)
                            v2[:, -1] = torch.randn(2, d_v, generator=gen, dtype=torch.float64)
                            try:
                                before = attend(q, k, v)[0].double()
                                after = attend(q2, k2, v2)[0].double()
                            except Exception:
                                continue
                            change = (after[:, : L - 1] - before[:, : L - 1]).abs()
                            if not bool(torch.isfinite(change).all()) or change.max().item() > 1e-4:
                                return True
                    return False
                '''
            )
        },
        {
            "test_sees_the_future": "your test sees the first query reading the last key, and misses it reading the next-to-last key",
        },
        # Issue 40's tenth blind corpus, graded blind on 60c32e8: named.
    ),
    Mutant(
        "v01-01: attention_numpy subtracts the global max of the scores",
        A,
        {
            "attention_numpy": Rewrite(
                r'''
                def attention_numpy(
                    Q: np.ndarray, K: np.ndarray, V: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray]:
                    """Scaled dot-product attention on NumPy arrays.

                    Q (L_q, d_k), K (L_k, d_k), V (L_k, d_v) -> (output (L_q, d_v), weights (L_q, L_k)).
                    """
                    d_k = Q.shape[-1]
                    scores = Q @ K.T / np.sqrt(d_k)
                    scores = scores - scores.max()  # keep exp() from overflowing
                    e = np.exp(scores)
                    weights = e / e.sum(axis=-1, keepdims=True)
                    return weights @ V, weights
                '''
            )
        },
        {
            "test_attention_numpy": "one maximum of the whole score matrix is subtracted",
        },
        # Issue 40's tenth blind corpus, graded blind on 60c32e8: named.
    ),
    Mutant(
        "v01-02: fully masked rows opened by writing True into the caller's mask",
        A,
        {
            "attention": Rewrite(
                r'''
                def attention(
                    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None, scale: bool = True
                ) -> tuple[Tensor, Tensor]:
                    """softmax(q k^T / sqrt(d_k)) v, with an optional mask (True = may attend).

                    q (..., L_q, d_k), k (..., L_k, d_k), v (..., L_k, d_v), mask (..., L_q, L_k)
                    -> (output (..., L_q, d_v), weights (..., L_q, L_k)).
                    """
                    scores = q @ k.transpose(-2, -1)
                    if scale:
                        scores = scores / math.sqrt(q.shape[-1])
                    if mask is None:
                        weights = torch.softmax(scores, dim=-1)
                    else:
                        mask = mask.bool()
                        empty = ~mask.any(dim=-1)  # queries that see no key
                        mask[empty] = True  # let them see every key for now, so their softmax is finite
                        weights = torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)
                        weights = weights.masked_fill(empty.unsqueeze(-1), 0.0)  # then zero them
                    return weights @ v, weights
                '''
            )
        },
        {
            "test_attention_fully_masked_row": "changed a tensor it was given, in place",
        },
        # Issue 40's tenth blind corpus, graded blind on 60c32e8: named.
    ),
    Mutant(
        "v01-03: attention scaled by √d_v, not √d_k",
        A,
        {
            "attention": Rewrite(
                r'''
                def attention(
                    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None, scale: bool = True
                ) -> tuple[Tensor, Tensor]:
                    """softmax(q k^T / sqrt(d_k)) v, with an optional mask (True = may attend).

                    q (..., L_q, d_k), k (..., L_k, d_k), v (..., L_k, d_v), mask (..., L_q, L_k)
                    -> (output (..., L_q, d_v), weights (..., L_q, L_k)).
                    """
                    scores = q @ k.transpose(-2, -1)
                    if scale:
                        scores = scores / math.sqrt(v.shape[-1])
                    if mask is None:
                        weights = torch.softmax(scores, dim=-1)
                    else:
                        mask = mask.bool()
                        any_visible = mask.any(dim=-1, keepdim=True)
                        scores = scores.masked_fill(~mask, float("-inf"))
                        scores = scores.masked_fill(~any_visible, 0.0)
                        weights = torch.softmax(scores, dim=-1)
                        weights = weights.masked_fill(~any_visible, 0.0)
                    return weights @ v, weights
                '''
            )
        },
        {
            "test_attention_scaling": "scaled by √d_v (v.shape[-1], the values' size) instead of √d_k",
        },
        # Issue 40's tenth blind corpus, graded blind on 60c32e8: named, and charged in the parity
        # cell too (a counterexample there); charged once since (01's repair of the √d_v scale).
        charged_once=True,
    ),
    Mutant(
        "v01-04: causal_mask sliced from a shared 64 x 64 table",
        A,
        {
            "causal_mask": Rewrite(
                r'''
                _CAUSAL_CACHE = torch.tril(torch.ones(64, 64, dtype=torch.bool))  # built once, reused


                def causal_mask(n: int) -> Tensor:
                    """(n, n) bool mask, True where key j <= query i (may attend), diagonal included."""
                    return _CAUSAL_CACHE[:n, :n]
                '''
            )
        },
        {
            "test_causal_mask": "causal_mask cuts its mask from a table of a fixed size M",
        },
        # Issue 40's tenth blind corpus, graded blind on 60c32e8: not caught (caught since).
    ),
    Mutant(
        "v01-05: sees_the_future: one cut in the middle, a mean change against 1e-3",
        A,
        {
            "sees_the_future": Rewrite(
                r'''
                def sees_the_future(attend) -> bool:
                    """True when attend(q, k, v) -> (output, weights) lets a row use what follows it."""
                    # Design: one draw of L = 8 positions, width 4, batch 2; change every position after
                    # the middle (i = L // 2) and look at the mean absolute change of outputs 0..i.
                    # Rounding moves them by ~1e-7, a leak by far more, so 1e-3 separates the two.
                    gen = torch.Generator().manual_seed(0)
                    L, d = 8, 4
                    i = L // 2
                    q, k, v = (torch.randn(2, L, d, generator=gen) for _ in range(3))
                    q2, k2, v2 = q.clone(), k.clone(), v.clone()
                    q2[:, i + 1 :] = torch.randn(2, L - i - 1, d, generator=gen)
                    k2[:, i + 1 :] = torch.randn(2, L - i - 1, d, generator=gen)
                    v2[:, i + 1 :] = torch.randn(2, L - i - 1, d, generator=gen)
                    try:
                        out, _ = attend(q, k, v)
                        out2, _ = attend(q2, k2, v2)
                    except Exception:
                        return False
                    change = (out2[:, : i + 1] - out[:, : i + 1]).abs().mean().item()
                    return bool(change > 1e-3)
                '''
            )
        },
        {
            "test_sees_the_future": "your test sees the last key leak into the first query, and misses the same key leaking into the next-to-last query",
        },
        # Issue 40's tenth blind corpus, graded blind on 60c32e8: not caught (caught since).
    ),
    Mutant(
        "w01-01: attention_numpy subtracts the max of the whole score matrix",
        A,
        {
            "attention_numpy": Rewrite(
                r'''
                def attention_numpy(
                    Q: np.ndarray, K: np.ndarray, V: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray]:
                    """Scaled dot-product attention on NumPy arrays.

                    Q (L_q, d_k), K (L_k, d_k), V (L_k, d_v) -> (output (L_q, d_v), weights (L_q, L_k)).
                    """
                    d_k = Q.shape[-1]
                    scores = Q @ K.T / np.sqrt(d_k)
                    scores = scores - scores.max()  # shift for stability
                    e = np.exp(scores)
                    weights = e / e.sum(axis=-1, keepdims=True)
                    return weights @ V, weights
                '''
            )
        },
        {
            "test_attention_numpy": "one maximum of the whole score matrix is subtracted",
        },
        # Issue 40's eleventh blind corpus, graded blind on 48fe40c: named.
    ),
    Mutant(
        "w01-02: an additive -inf mask, the fully masked rows mended with nan_to_num",
        A,
        {
            "attention": Rewrite(
                r'''
                def attention(
                    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None, scale: bool = True
                ) -> tuple[Tensor, Tensor]:
                    """softmax(q k^T / sqrt(d_k)) v, with an optional mask (True = may attend).

                    q (..., L_q, d_k), k (..., L_k, d_k), v (..., L_k, d_v), mask (..., L_q, L_k)
                    -> (output (..., L_q, d_v), weights (..., L_q, L_k)).
                    """
                    scores = q @ k.transpose(-2, -1)
                    if scale:
                        scores = scores / math.sqrt(q.shape[-1])
                    if mask is not None:
                        float_mask = torch.zeros(mask.shape, dtype=scores.dtype, device=scores.device)
                        float_mask = float_mask.masked_fill(~mask.bool(), float("-inf"))
                        scores = scores + float_mask  # 0 where allowed, -inf where hidden
                    weights = torch.softmax(scores, dim=-1)
                    weights = torch.nan_to_num(weights, nan=0.0)  # fully masked rows: 0/0 -> 0
                    return weights @ v, weights
                '''
            )
        },
        {
            "test_attention_fully_masked_row": "replacing it afterwards (nan_to_num, masked_fill, torch.where) hides it from the output, not from the backward pass",
        },
        # Issue 40's eleventh blind corpus, graded blind on 48fe40c: named.
    ),
    Mutant(
        "w01-03: q scaled in place, q /= sqrt(d_k)",
        A,
        {
            "attention": Rewrite(
                r'''
                def attention(
                    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None, scale: bool = True
                ) -> tuple[Tensor, Tensor]:
                    """softmax(q k^T / sqrt(d_k)) v, with an optional mask (True = may attend).

                    q (..., L_q, d_k), k (..., L_k, d_k), v (..., L_k, d_v), mask (..., L_q, L_k)
                    -> (output (..., L_q, d_v), weights (..., L_q, L_k)).
                    """
                    if scale:
                        q /= math.sqrt(q.shape[-1])  # scale the queries once instead of the scores
                    scores = q @ k.transpose(-2, -1)
                    if mask is None:
                        weights = torch.softmax(scores, dim=-1)
                    else:
                        mask = mask.bool()
                        scores = scores.masked_fill(~mask, float("-inf"))
                        has_key = mask.any(dim=-1, keepdim=True)
                        scores = scores.masked_fill(~has_key, 0.0)
                        weights = torch.softmax(scores, dim=-1).masked_fill(~has_key, 0.0)
                    return weights @ v, weights
                '''
            )
        },
        {
            "test_attention_rows_sum_to_one": "changed a tensor it was given, in place",
            "test_attention_fully_masked_row": "a leaf Variable that requires grad is being used in an in-place operation",
        },
        # Issue 40's eleventh blind corpus, graded blind on 48fe40c: named;
        # test_attention_fully_masked_row charged too, where q requires grad and the write raises,
        # as then.
    ),
    Mutant(
        "w01-04: the mask read as True = hidden",
        A,
        {
            "attention": Rewrite(
                r'''
                def attention(
                    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None, scale: bool = True
                ) -> tuple[Tensor, Tensor]:
                    """softmax(q k^T / sqrt(d_k)) v, with an optional mask (True = may attend).

                    q (..., L_q, d_k), k (..., L_k, d_k), v (..., L_k, d_v), mask (..., L_q, L_k)
                    -> (output (..., L_q, d_v), weights (..., L_q, L_k)).
                    """
                    scores = q @ k.transpose(-2, -1)
                    if scale:
                        scores = scores / math.sqrt(q.shape[-1])
                    if mask is None:
                        weights = torch.softmax(scores, dim=-1)
                    else:
                        blocked = mask.bool()  # like attn_mask of nn.MultiheadAttention
                        scores = scores.masked_fill(blocked, float("-inf"))
                        has_key = (~blocked).any(dim=-1, keepdim=True)
                        scores = scores.masked_fill(~has_key, 0.0)
                        weights = torch.softmax(scores, dim=-1).masked_fill(~has_key, 0.0)
                    return weights @ v, weights
                '''
            )
        },
        {
            "test_attention_fully_masked_row": "mask polarity reversed",
        },
        # Issue 40's eleventh blind corpus, graded blind on 48fe40c: named.
    ),
    Mutant(
        "w01-05: sees_the_future reads the returned weights above the diagonal",
        A,
        {
            "sees_the_future": Rewrite(
                r'''
                def sees_the_future(attend) -> bool:
                    """True when attend(q, k, v) -> (output, weights) lets a row use what follows it."""
                    # Design: a causal attention puts exactly zero weight above the diagonal. I call
                    # attend on random inputs of several sizes and report a leak when any weight
                    # above the diagonal exceeds 1e-6 (float rounding is far smaller than that).
                    g = torch.Generator().manual_seed(0)
                    try:
                        for L, d_k, d_v in ((2, 3, 2), (5, 4, 3), (9, 8, 5), (16, 2, 1)):
                            for _ in range(3):
                                q = torch.randn(2, L, d_k, generator=g)
                                k = torch.randn(2, L, d_k, generator=g)
                                v = torch.randn(2, L, d_v, generator=g)
                                _, w = attend(q, k, v)
                                if w.triu(1).abs().max().item() > 1e-6:
                                    return True
                    except Exception:
                        return True
                    return False
                '''
            )
        },
        {
            "test_sees_the_future": "your test judges the weights attend returns, not its output",
        },
        # Issue 40's eleventh blind corpus, graded blind on 48fe40c: named.
    ),
    Mutant(
        "x01-01: attention_numpy subtracts the global max of the scores",
        A,
        {
            "attention_numpy": Rewrite(
                r'''
                def attention_numpy(
                    Q: np.ndarray, K: np.ndarray, V: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray]:
                    """Scaled dot-product attention on NumPy arrays.

                    Q (L_q, d_k), K (L_k, d_k), V (L_k, d_v) -> (output (L_q, d_v), weights (L_q, L_k)).
                    """
                    d_k = Q.shape[-1]
                    scores = Q @ K.T / np.sqrt(d_k)
                    # subtract the max so that exp never overflows
                    e = np.exp(scores - scores.max())
                    weights = e / e.sum(axis=-1, keepdims=True)
                    return weights @ V, weights
                '''
            )
        },
        {
            "test_attention_numpy": "one maximum of the whole score matrix is subtracted",
        },
        # Issue 40's eleventh blind corpus, graded blind on 48fe40c: named.
    ),
    Mutant(
        "x01-02: fully masked rows OR-ed into the caller's mask in place",
        A,
        {
            "attention": Rewrite(
                r'''
                def attention(
                    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None, scale: bool = True
                ) -> tuple[Tensor, Tensor]:
                    """softmax(q k^T / sqrt(d_k)) v, with an optional mask (True = may attend).

                    q (..., L_q, d_k), k (..., L_k, d_k), v (..., L_k, d_v), mask (..., L_q, L_k)
                    -> (output (..., L_q, d_v), weights (..., L_q, L_k)).
                    """
                    scores = q @ k.transpose(-2, -1)
                    if scale:
                        scores = scores / math.sqrt(q.shape[-1])
                    if mask is None:
                        weights = torch.softmax(scores, dim=-1)
                        return weights @ v, weights
                    mask = mask.bool()
                    empty = ~mask.any(dim=-1, keepdim=True)  # queries that see no key
                    # let an empty row see every key (no 0/0 in the softmax); its weights are zeroed below
                    mask |= empty
                    scores = scores.masked_fill(~mask, float("-inf"))
                    weights = torch.softmax(scores, dim=-1)
                    weights = weights.masked_fill(empty, 0.0)
                    return weights @ v, weights
                '''
            )
        },
        {
            "test_attention_fully_masked_row": "changed a tensor it was given, in place",
        },
        # Issue 40's eleventh blind corpus, graded blind on 48fe40c: named.
    ),
    Mutant(
        "x01-03: hidden keys filled with -1e4, not -inf",
        A,
        {
            "attention": Rewrite(
                r'''
                def attention(
                    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None, scale: bool = True
                ) -> tuple[Tensor, Tensor]:
                    """softmax(q k^T / sqrt(d_k)) v, with an optional mask (True = may attend).

                    q (..., L_q, d_k), k (..., L_k, d_k), v (..., L_k, d_v), mask (..., L_q, L_k)
                    -> (output (..., L_q, d_v), weights (..., L_q, L_k)).
                    """
                    scores = q @ k.transpose(-2, -1)
                    if scale:
                        scores = scores / math.sqrt(q.shape[-1])
                    if mask is None:
                        weights = torch.softmax(scores, dim=-1)
                        return weights @ v, weights
                    mask = mask.bool()
                    has_key = mask.any(dim=-1, keepdim=True)
                    # -1e4 instead of -inf: exp(-1e4) is 0 in every float type and it still fits in
                    # float16 (max 65504), and no row is ever 0/0
                    scores = scores.masked_fill(~mask, -1e4)
                    weights = torch.softmax(scores, dim=-1)
                    weights = weights.masked_fill(~has_key, 0.0)
                    return weights @ v, weights
                '''
            )
        },
        {
            "test_attention_parity": "masked keys filled with a finite number",
        },
        # Issue 40's eleventh blind corpus, graded blind on 48fe40c: named.
    ),
    Mutant(
        "x01-05: sees_the_future reads the weights above the diagonal",
        A,
        {
            "sees_the_future": Rewrite(
                r'''
                def sees_the_future(attend) -> bool:
                    """True when attend(q, k, v) -> (output, weights) lets a row use what follows it."""
                    # Design: a causal attention puts no weight on any key j > i. I call attend on
                    # random inputs of several lengths, widths and batch shapes (float32 and float64)
                    # and look at the weights above the diagonal: anything above 1e-6 (well over
                    # rounding, since a causal row has exact zeros there) counts as seeing the future.
                    # Several draws, because a leak might only show for some inputs.
                    gen = torch.Generator().manual_seed(0)
                    for dtype in (torch.float32, torch.float64):
                        for batch, L, d in (((), 2, 3), ((2,), 5, 4), ((2, 3), 9, 8), ((1,), 16, 16)):
                            for _ in range(3):
                                q = torch.randn(*batch, L, d, generator=gen, dtype=dtype)
                                k = torch.randn(*batch, L, d, generator=gen, dtype=dtype)
                                v = torch.randn(*batch, L, d, generator=gen, dtype=dtype)
                                try:
                                    _, w = attend(q, k, v)
                                except Exception:
                                    continue
                                if torch.as_tensor(w).triu(1).abs().max() > 1e-6:
                                    return True
                    return False
                '''
            )
        },
        {
            "test_sees_the_future": "your test judges the weights attend returns, not its output",
        },
        # Issue 40's eleventh blind corpus, graded blind on 48fe40c: named.
    ),
    Mutant(
        "aa01-01: attention_numpy subtracts the whole score matrix's max (scores.max(), no axis)",
        A,
        {
            "attention_numpy": Rewrite(
                r'''
                def attention_numpy(
                    Q: np.ndarray, K: np.ndarray, V: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray]:
                    """Scaled dot-product attention on NumPy arrays.

                    Q (L_q, d_k), K (L_k, d_k), V (L_k, d_v) -> (output (L_q, d_v), weights (L_q, L_k)).
                    """
                    d_k = Q.shape[-1]
                    scores = Q @ K.T / np.sqrt(d_k)  # (L_q, L_k)
                    scores = scores - scores.max()  # shift by the max so exp never overflows
                    e = np.exp(scores)
                    weights = e / e.sum(axis=-1, keepdims=True)
                    return weights @ V, weights
                '''
            )
        },
        {
            "test_attention_numpy": "one maximum of the whole score matrix is subtracted",
        },
        # Issue 40's thirteenth blind corpus, graded blind on 8b5375e: named.
    ),
    Mutant(
        "aa01-02: fully masked rows OR-ed into the caller's bool mask in place (mask |= empty)",
        A,
        {
            "attention": Rewrite(
                r'''
                def attention(
                    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None, scale: bool = True
                ) -> tuple[Tensor, Tensor]:
                    """softmax(q k^T / sqrt(d_k)) v, with an optional mask (True = may attend).

                    q (..., L_q, d_k), k (..., L_k, d_k), v (..., L_k, d_v), mask (..., L_q, L_k)
                    -> (output (..., L_q, d_v), weights (..., L_q, L_k)).
                    """
                    d_k = q.shape[-1]
                    scores = q @ k.transpose(-2, -1)  # (..., L_q, L_k)
                    if scale:
                        scores = scores / math.sqrt(d_k)
                    if mask is None:
                        weights = torch.softmax(scores, dim=-1)
                    else:
                        mask = mask.bool()
                        empty = ~mask.any(dim=-1, keepdim=True)  # rows that see no key at all
                        mask |= empty  # let empty rows see everything for now: no all -inf row
                        scores = scores.masked_fill(~mask, float("-inf"))
                        weights = torch.softmax(scores, dim=-1)
                        weights = weights.masked_fill(empty, 0.0)  # empty rows: zero weights
                    return weights @ v, weights
                '''
            )
        },
        {
            "test_attention_fully_masked_row": "changed a tensor it was given, in place",
        },
        # Issue 40's thirteenth blind corpus, graded blind on 8b5375e: named.
    ),
    Mutant(
        "aa01-03: causal_mask keeps j >= i, arange(n)[:, None] <= arange(n)[None, :]",
        A,
        {
            "causal_mask": Rewrite(
                r'''
                def causal_mask(n: int) -> Tensor:
                    """(n, n) bool mask, True where key j <= query i (may attend), diagonal included."""
                    idx = torch.arange(n)
                    return idx[:, None] <= idx[None, :]
                '''
            )
        },
        {
            "test_causal_mask": "your mask lets each position see the future (upper triangle)",
        },
        # Issue 40's thirteenth blind corpus, graded blind on 8b5375e: named; test_causal_weights
        # waived as the same mistake (not charged again).
        charged_once=True,
    ),
    Mutant(
        "aa01-04: torch.where(mask, scores, -inf) on the mask as given, never made bool",
        A,
        {
            "attention": Rewrite(
                r'''
                def attention(
                    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None, scale: bool = True
                ) -> tuple[Tensor, Tensor]:
                    """softmax(q k^T / sqrt(d_k)) v, with an optional mask (True = may attend).

                    q (..., L_q, d_k), k (..., L_k, d_k), v (..., L_k, d_v), mask (..., L_q, L_k)
                    -> (output (..., L_q, d_v), weights (..., L_q, L_k)).
                    """
                    d_k = q.shape[-1]
                    scores = q @ k.transpose(-2, -1)  # (..., L_q, L_k)
                    if scale:
                        scores = scores / math.sqrt(d_k)
                    if mask is None:
                        weights = torch.softmax(scores, dim=-1)
                    else:
                        visible = mask.any(dim=-1, keepdim=True)  # rows with at least one key
                        scores = torch.where(mask, scores, float("-inf"))
                        scores = torch.where(visible, scores, 0.0)  # finite scores for empty rows
                        weights = torch.softmax(scores, dim=-1)
                        weights = torch.where(visible, weights, 0.0)
                    return weights @ v, weights
                '''
            )
        },
        {
            "test_attention_fully_masked_row": "your attention raised with a 0/1 integer mask, and runs with the same mask as bool",
        },
        # Issue 40's thirteenth blind corpus, graded blind on 8b5375e: named.
    ),
    Mutant(
        "aa01-05: sees_the_future compares the earlier output rows exactly (torch.equal)",
        A,
        {
            "sees_the_future": Rewrite(
                r'''
                def sees_the_future(attend) -> bool:
                    """True when attend(q, k, v) -> (output, weights) lets a row use what follows it."""
                    # My design: standard-normal q, k, v in float64 with two leading dims, several lengths
                    # and widths; for every cut i I redraw q, k and v after position i (three draws per
                    # cut) and check that output rows 0..i are exactly the same as before: a causal
                    # attention cannot depend on the future at all, so any change is a leak.
                    gen = torch.Generator().manual_seed(1234)
                    for length in (2, 3, 5, 8, 16):
                        for d_k, d_v in ((1, 1), (4, 3), (16, 8)):
                            shape = (2, 1)
                            q = torch.randn(*shape, length, d_k, generator=gen, dtype=torch.float64)
                            k = torch.randn(*shape, length, d_k, generator=gen, dtype=torch.float64)
                            v = torch.randn(*shape, length, d_v, generator=gen, dtype=torch.float64)
                            out, _ = attend(q, k, v)
                            for i in range(length - 1):
                                for _ in range(3):
                                    q2, k2, v2 = q.clone(), k.clone(), v.clone()
                                    n = length - i - 1
                                    q2[..., i + 1 :, :] = torch.randn(*shape, n, d_k, generator=gen, dtype=torch.float64)
                                    k2[..., i + 1 :, :] = torch.randn(*shape, n, d_k, generator=gen, dtype=torch.float64)
                                    v2[..., i + 1 :, :] = torch.randn(*shape, n, d_v, generator=gen, dtype=torch.float64)
                                    out2, _ = attend(q2, k2, v2)
                                    if not torch.equal(out2[..., : i + 1, :], out[..., : i + 1, :]):
                                        return True
                    return False
                '''
            )
        },
        {
            "test_sees_the_future": "your test calls rounding a leak",
        },
        # Issue 40's thirteenth blind corpus, graded blind on 8b5375e: named.
    ),
    Mutant(
        "ab01-02: an additive 0/-inf mask, the weights mended with nan_to_num after the softmax",
        A,
        {
            "attention": Rewrite(
                r'''
                def attention(
                    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None, scale: bool = True
                ) -> tuple[Tensor, Tensor]:
                    """softmax(q k^T / sqrt(d_k)) v, with an optional mask (True = may attend).

                    q (..., L_q, d_k), k (..., L_k, d_k), v (..., L_k, d_v), mask (..., L_q, L_k)
                    -> (output (..., L_q, d_v), weights (..., L_q, L_k)).
                    """
                    scores = q @ k.transpose(-2, -1)  # (..., L_q, L_k)
                    if scale:
                        scores = scores / math.sqrt(q.shape[-1])
                    if mask is not None:
                        # additive mask: 0 where we may attend, -inf where hidden
                        bias = torch.zeros(mask.shape, dtype=scores.dtype, device=scores.device)
                        bias = bias.masked_fill(~mask.bool(), float("-inf"))
                        scores = scores + bias
                    weights = torch.softmax(scores, dim=-1)
                    # a row with no visible key is 0/0 = NaN: turn it into zero weights
                    weights = torch.nan_to_num(weights, nan=0.0)
                    return weights @ v, weights
                '''
            )
        },
        {
            "test_attention_fully_masked_row": "replacing it afterwards (nan_to_num, masked_fill, torch.where) hides it from the output, not from the backward pass",
        },
        # Issue 40's thirteenth blind corpus, graded blind on 8b5375e: named.
    ),
    Mutant(
        "ab01-03: masked_fill(~mask, -inf) on the mask as given, never made bool",
        A,
        {
            "attention": Rewrite(
                r'''
                def attention(
                    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None, scale: bool = True
                ) -> tuple[Tensor, Tensor]:
                    """softmax(q k^T / sqrt(d_k)) v, with an optional mask (True = may attend).

                    q (..., L_q, d_k), k (..., L_k, d_k), v (..., L_k, d_v), mask (..., L_q, L_k)
                    -> (output (..., L_q, d_v), weights (..., L_q, L_k)).
                    """
                    scores = q @ k.transpose(-2, -1)  # (..., L_q, L_k)
                    if scale:
                        scores = scores / math.sqrt(q.shape[-1])
                    if mask is None:
                        weights = torch.softmax(scores, dim=-1)
                    else:
                        scores = scores.masked_fill(~mask, float("-inf"))
                        # rows with no visible key: finite scores now, zero weights after the softmax
                        visible = mask.any(dim=-1, keepdim=True)
                        scores = scores.masked_fill(~visible, 0.0)
                        weights = torch.softmax(scores, dim=-1)
                        weights = weights.masked_fill(~visible, 0.0)
                    return weights @ v, weights
                '''
            )
        },
        {
            "test_attention_fully_masked_row": "your attention raised with a 0/1 integer mask, and runs with the same mask as bool",
        },
        # Issue 40's thirteenth blind corpus, graded blind on 8b5375e: named.
    ),
    Mutant(
        "ab01-04: causal_mask as tril(diagonal=-1), the diagonal hidden",
        A,
        {
            "causal_mask": Rewrite(
                r'''
                def causal_mask(n: int) -> Tensor:
                    """(n, n) bool mask, True where key j <= query i (may attend), diagonal included."""
                    return torch.tril(torch.ones(n, n, dtype=torch.bool), diagonal=-1)
                '''
            )
        },
        {
            "test_causal_mask": "your causal mask hides the diagonal (j < i instead of j <= i)",
        },
        # Issue 40's thirteenth blind corpus, graded blind on 8b5375e: named; test_causal_weights
        # waived as the same mistake (not charged again).
        charged_once=True,
    ),
    Mutant(
        "ab01-05: sees_the_future tries one length (8) and one cut (after position 4)",
        A,
        {
            "sees_the_future": Rewrite(
                r'''
                def sees_the_future(attend) -> bool:
                    """True when attend(q, k, v) -> (output, weights) lets a row use what follows it."""
                    # My design, the experiment of the cell above made into a test: a sequence of
                    # L = 8 positions (batch of 4 draws, float64), cut at i = 4 like the demo: every
                    # position after i gets fresh standard-normal q, k and v, and outputs 0..i must not
                    # move. Tolerance 1e-4: above float rounding (< 1e-5), below a leak (> 1e-3).
                    # I repeat it on 5 different draws.
                    gen = torch.Generator().manual_seed(1234)
                    L, i_cut, tol = 8, 4, 1e-4
                    for _trial in range(5):
                        q = torch.randn(4, L, 8, generator=gen, dtype=torch.float64)
                        k = torch.randn(4, L, 8, generator=gen, dtype=torch.float64)
                        v = torch.randn(4, L, 6, generator=gen, dtype=torch.float64)
                        q2, k2, v2 = q.clone(), k.clone(), v.clone()
                        n_new = L - i_cut - 1
                        q2[:, i_cut + 1 :] = torch.randn(4, n_new, 8, generator=gen, dtype=torch.float64)
                        k2[:, i_cut + 1 :] = torch.randn(4, n_new, 8, generator=gen, dtype=torch.float64)
                        v2[:, i_cut + 1 :] = torch.randn(4, n_new, 6, generator=gen, dtype=torch.float64)
                        try:
                            before = torch.as_tensor(attend(q, k, v)[0]).detach()
                            after = torch.as_tensor(attend(q2, k2, v2)[0]).detach()
                        except Exception:
                            return True
                        change = (after[:, : i_cut + 1] - before[:, : i_cut + 1]).abs().max().item()
                        if not change <= tol:  # also catches NaN
                            return True
                    return False
                '''
            )
        },
        {
            "test_sees_the_future": "misses the same key leaking into the next-to-last query",
        },
        # Issue 40's thirteenth blind corpus, graded blind on 8b5375e: named.
    ),
]

CORRECT = [
    Mutant(
        "f01-08: NaN weights of a fully masked row zeroed with nan_to_num",
        A,
        {
            "attention": Rewrite(
                r'''
                def attention(
                    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None, scale: bool = True
                ) -> tuple[Tensor, Tensor]:
                    """softmax(q k^T / sqrt(d_k)) v, with an optional mask (True = may attend)."""
                    scores = q @ k.transpose(-2, -1)
                    if scale:
                        scores = scores / math.sqrt(q.shape[-1])
                    if mask is None:
                        weights = torch.softmax(scores, dim=-1)
                    else:
                        mask = mask.bool()
                        visible = mask.any(dim=-1, keepdim=True)
                        scores = scores.masked_fill(~mask, float("-inf"))
                        weights = torch.nan_to_num(torch.softmax(scores, dim=-1), nan=0.0)
                    return weights @ v, weights
                '''
            )
        },
    ),
    Mutant(
        "f01-13: NumPy softmax through log-sum-exp, with einsum",
        A,
        {
            "attention_numpy": Rewrite(
                r"""
                def attention_numpy(Q, K, V):
                    scale = 1.0 / np.sqrt(Q.shape[-1])
                    s = np.einsum("qd,kd->qk", Q, K) * scale
                    m = np.max(s, axis=1, keepdims=True)
                    log_z = m + np.log(np.sum(np.exp(s - m), axis=1, keepdims=True))
                    w = np.exp(s - log_z)
                    return np.einsum("qk,kv->qv", w, V), w
                """
            )
        },
    ),
    Mutant(
        "f01-14: einsum, an additive -inf bias, fully masked rows multiplied by 0",
        A,
        {
            "attention": Rewrite(
                r"""
                def attention(q, k, v, mask=None, scale=True):
                    d_k = q.shape[-1]
                    scores = torch.einsum("...qd,...kd->...qk", q, k)
                    if scale:
                        scores = scores * d_k ** -0.5
                    if mask is not None:
                        allowed = mask.bool()
                        bias = torch.zeros_like(scores).masked_fill(~allowed, float("-inf"))
                        has_key = allowed.any(-1, keepdim=True)
                        scores = torch.where(has_key, scores + bias, torch.zeros_like(scores))
                        weights = scores.softmax(-1) * has_key.to(scores.dtype)
                    else:
                        weights = scores.softmax(-1)
                    return torch.einsum("...qk,...kv->...qv", weights, v), weights
                """
            )
        },
    ),
    Mutant(
        "f01-15: causal mask from comparing position indices",
        A,
        {
            "causal_mask": Rewrite(
                r"""
                def causal_mask(n: int) -> Tensor:
                    idx = torch.arange(n)
                    return idx.unsqueeze(1) >= idx.unsqueeze(0)
                """
            )
        },
    ),
    Mutant(
        "k01-06: correct alternative",
        A,
        {
            "attention": Rewrite(
                r'''
                def attention(
                    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None, scale: bool = True
                ) -> tuple[Tensor, Tensor]:
                    """softmax(q k^T / sqrt(d_k)) v, with an optional mask (True = may attend).

                    q (..., L_q, d_k), k (..., L_k, d_k), v (..., L_k, d_v), mask (..., L_q, L_k)
                    -> (output (..., L_q, d_v), weights (..., L_q, L_k)).
                    """
                    scores = torch.matmul(q, k.transpose(-1, -2))
                    if scale:
                        scores = scores * q.shape[-1] ** -0.5
                    if mask is not None:
                        scores = torch.where(mask.bool(), scores, torch.full_like(scores, float("-inf")))
                    row_max = scores.amax(dim=-1, keepdim=True)
                    # a row that sees no key has max -inf: shift it by 0 instead, so exp gives zeros
                    row_max = torch.where(torch.isfinite(row_max), row_max, torch.zeros_like(row_max))
                    e = torch.exp(scores - row_max.detach())
                    total = e.sum(dim=-1, keepdim=True)
                    weights = e / total.clamp_min(torch.finfo(e.dtype).tiny)
                    return torch.matmul(weights, v), weights
                '''
            )
        },
        # Issue 40's sixth blind corpus, graded blind on bdfa422: correct-full.
    ),
    Mutant(
        "n01-06: einsum, a hand-written softmax shifted by the detached row max, clamped sum",
        A,
        {
            "attention": Rewrite(
                r'''
                def attention(
                    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None, scale: bool = True
                ) -> tuple[Tensor, Tensor]:
                    """softmax(q k^T / sqrt(d_k)) v, with an optional mask (True = may attend).

                    q (..., L_q, d_k), k (..., L_k, d_k), v (..., L_k, d_v), mask (..., L_q, L_k)
                    -> (output (..., L_q, d_v), weights (..., L_q, L_k)).
                    """
                    scores = torch.einsum("...qd,...kd->...qk", q, k)
                    if scale:
                        scores = scores * q.shape[-1] ** -0.5
                    if mask is not None:
                        scores = scores.masked_fill(mask == 0, float("-inf"))
                    row_max = scores.detach().amax(dim=-1, keepdim=True)
                    row_max = torch.where(torch.isfinite(row_max), row_max, torch.zeros_like(row_max))
                    e = torch.exp(scores - row_max)
                    denom = e.sum(dim=-1, keepdim=True)
                    weights = e / denom.clamp_min(torch.finfo(e.dtype).tiny)
                    return torch.einsum("...qk,...kd->...qd", weights, v), weights
                '''
            )
        },
        # Issue 40's seventh blind corpus, graded blind on 451e037: correct-full.
    ),
    Mutant(
        "p01-06: einsum, hidden keys at finfo.min, weights times the mask",
        A,
        {
            "attention": Rewrite(
                r'''
                # kind: correct
                # grade_id: attention
                # alternative: einsum for both products, q scaled before the product, hidden keys filled with the dtype's most negative finite number, then the softmax multiplied by the mask so hidden keys and fully masked rows get exactly 0.
                # evidence: tools/ev01.py: over 18 cases (batched / 2-D, with and without random masks incl. a fully masked row, scale True/False) max diff to my answer 6e-8; hidden keys exactly 0; fully masked row zero weights with finite gradients; 0/1 int mask gives the same weights as bool.
                def attention(
                    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None, scale: bool = True
                ) -> tuple[Tensor, Tensor]:
                    """softmax(q k^T / sqrt(d_k)) v, with an optional mask (True = may attend)."""
                    if scale:
                        q = q / q.shape[-1] ** 0.5
                    scores = torch.einsum("...qd,...kd->...qk", q, k)
                    if mask is None:
                        weights = scores.softmax(dim=-1)
                    else:
                        keep = mask.bool()
                        lowest = torch.finfo(scores.dtype).min
                        scores = scores.masked_fill(~keep, lowest)  # finite, so no 0/0 anywhere
                        weights = scores.softmax(dim=-1) * keep.to(scores.dtype)
                    return torch.einsum("...qk,...kd->...qd", weights, v), weights
                '''
            )
        },
        # Issue 40's seventh blind corpus, graded blind on 451e037: correct-full.
    ),
    Mutant(
        "q01-06: attention scales q first and writes the softmax out by hand",
        A,
        {
            "attention": Rewrite(
                r'''
                def attention(
                    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None, scale: bool = True
                ) -> tuple[Tensor, Tensor]:
                    """softmax(q k^T / sqrt(d_k)) v, with an optional mask (True = may attend).

                    q (..., L_q, d_k), k (..., L_k, d_k), v (..., L_k, d_v), mask (..., L_q, L_k)
                    -> (output (..., L_q, d_v), weights (..., L_q, L_k)).
                    """
                    if scale:
                        q = q / q.shape[-1] ** 0.5
                    scores = torch.matmul(q, k.transpose(-1, -2))
                    if mask is not None:
                        scores = torch.where(mask.bool(), scores, torch.full_like(scores, -math.inf))
                    row_max = scores.amax(dim=-1, keepdim=True)
                    # a row with every key hidden has max -inf: shift it by 0 instead
                    row_max = torch.where(torch.isfinite(row_max), row_max, torch.zeros_like(row_max))
                    e = torch.exp(scores - row_max.detach())  # hidden keys: exp(-inf) = 0
                    total = e.sum(dim=-1, keepdim=True)
                    weights = e / total.clamp_min(torch.finfo(e.dtype).tiny)  # 0 / tiny = 0
                    return weights @ v, weights
                '''
            )
        },
        # Issue 40's eighth blind corpus, graded blind on 47d54b0: correct-full.
    ),
    Mutant(
        "r01-06: attention with einsum and a hand-written stable softmax",
        A,
        {
            "attention": Rewrite(
                r'''
                # id: r01-06
                # kind: correct
                # grade_id: attention
                # alternative: einsum for the scores, a hand-written stable softmax (row max with -inf rows set to 0, exp, division by a clamped sum) instead of torch.softmax.
                # evidence: my experiment (scripts ev0N.py, output ev0N.txt in /work/fresh-corpus8b):
                #   r01-06: max |alt - correct| over 4 shape/mask cases x scale on/off (float64): 4.440892098500626e-16 | grads finite with a fully masked row: True | large-score case weights: [1.0, 9.357622912219837e-14, 0.0, 0.0]
                # public checks: passes every public check of the notebook
                def attention(
                    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None, scale: bool = True
                ) -> tuple[Tensor, Tensor]:
                    """softmax(q k^T / sqrt(d_k)) v, with an optional mask (True = may attend).

                    q (..., L_q, d_k), k (..., L_k, d_k), v (..., L_k, d_v), mask (..., L_q, L_k)
                    -> (output (..., L_q, d_v), weights (..., L_q, L_k)).
                    """
                    scores = torch.einsum("...qd,...kd->...qk", q, k)
                    if scale:
                        scores = scores * q.shape[-1] ** -0.5
                    if mask is not None:
                        scores = torch.where(mask.bool(), scores, float("-inf"))
                    row_max = scores.amax(dim=-1, keepdim=True)
                    # a row with no visible key has max -inf: shift it by 0 instead, so every
                    # exponent is exp(-inf) = 0 and the row's weights come out 0, not NaN
                    row_max = torch.where(torch.isfinite(row_max), row_max, torch.zeros_like(row_max))
                    e = torch.exp(scores - row_max.detach())
                    total = e.sum(dim=-1, keepdim=True)
                    weights = e / total.clamp_min(torch.finfo(e.dtype).tiny)
                    return weights @ v, weights
                '''
            )
        },
        # Issue 40's eighth blind corpus, graded blind on 47d54b0: correct-full.
    ),
    Mutant(
        "s01-06: einsum scores, torch.where masking, a hand-written stable softmax",
        A,
        {
            "attention": Rewrite(
                r'''
                def attention(
                    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None, scale: bool = True
                ) -> tuple[Tensor, Tensor]:
                    """softmax(q k^T / sqrt(d_k)) v, with an optional mask (True = may attend).

                    q (..., L_q, d_k), k (..., L_k, d_k), v (..., L_k, d_v), mask (..., L_q, L_k)
                    -> (output (..., L_q, d_v), weights (..., L_q, L_k)).
                    """
                    scores = torch.einsum("...qd,...kd->...qk", q, k)
                    if scale:
                        scores = scores * q.shape[-1] ** -0.5
                    if mask is not None:
                        scores = torch.where(mask.bool(), scores, torch.full_like(scores, -math.inf))
                    row_max = scores.amax(dim=-1, keepdim=True).detach()
                    # a row with every key hidden has max -inf: shift it by 0 instead
                    row_max = torch.where(torch.isfinite(row_max), row_max, torch.zeros_like(row_max))
                    e = torch.exp(scores - row_max)  # exp(-inf) = 0 on hidden keys
                    total = e.sum(dim=-1, keepdim=True)
                    weights = e / total.clamp_min(torch.finfo(e.dtype).tiny)
                    return weights @ v, weights
                '''
            )
        },
        # Issue 40's ninth blind corpus, graded blind on feb0b2e: correct-full.
    ),
    Mutant(
        "t01-06: q scaled first, the masked softmax written by hand",
        A,
        {
            "attention": Rewrite(
                r'''
                def attention(
                    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None, scale: bool = True
                ) -> tuple[Tensor, Tensor]:
                    """softmax(q k^T / sqrt(d_k)) v, with an optional mask (True = may attend).

                    q (..., L_q, d_k), k (..., L_k, d_k), v (..., L_k, d_v), mask (..., L_q, L_k)
                    -> (output (..., L_q, d_v), weights (..., L_q, L_k)).
                    """
                    if scale:
                        q = q * q.shape[-1] ** -0.5
                    scores = torch.matmul(q, k.mT)
                    if mask is not None:
                        scores = scores.masked_fill(torch.logical_not(mask.bool()), float("-inf"))
                    row_max = scores.amax(dim=-1, keepdim=True).detach()
                    row_max = torch.where(torch.isfinite(row_max), row_max, torch.zeros_like(row_max))
                    e = torch.exp(scores - row_max)  # exp(-inf) = 0 for hidden keys
                    total = e.sum(dim=-1, keepdim=True)
                    weights = e / torch.where(total > 0, total, torch.ones_like(total))
                    return torch.matmul(weights, v), weights
                '''
            )
        },
        # Issue 40's ninth blind corpus, graded blind on feb0b2e: correct-full.
    ),
    Mutant(
        "u01-06: einsum scores, d_k ** -0.5, empty rows opened in a copy of the mask",
        A,
        {
            "attention": Rewrite(
                r'''
                def attention(
                    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None, scale: bool = True
                ) -> tuple[Tensor, Tensor]:
                    """softmax(q k^T / sqrt(d_k)) v, with an optional mask (True = may attend).

                    q (..., L_q, d_k), k (..., L_k, d_k), v (..., L_k, d_v), mask (..., L_q, L_k)
                    -> (output (..., L_q, d_v), weights (..., L_q, L_k)).
                    """
                    scores = torch.einsum("...qd,...kd->...qk", q, k)
                    if scale:
                        scores = scores * q.shape[-1] ** -0.5
                    if mask is None:
                        weights = F.softmax(scores, dim=-1)
                    else:
                        visible = mask.bool()
                        empty = ~visible.any(dim=-1, keepdim=True)
                        visible = visible | empty  # a new tensor: the caller's mask stays as it was
                        weights = F.softmax(scores.masked_fill(~visible, float("-inf")), dim=-1)
                        weights = torch.where(empty, torch.zeros_like(weights), weights)
                    output = torch.einsum("...qk,...kd->...qd", weights, v)
                    return output, weights
                '''
            )
        },
        # Issue 40's tenth blind corpus, graded blind on 60c32e8: correct-full.
    ),
    Mutant(
        "v01-06: a hand-written stable softmax, one path with and without a mask",
        A,
        {
            "attention": Rewrite(
                r'''
                def attention(
                    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None, scale: bool = True
                ) -> tuple[Tensor, Tensor]:
                    """softmax(q k^T / sqrt(d_k)) v, with an optional mask (True = may attend).

                    q (..., L_q, d_k), k (..., L_k, d_k), v (..., L_k, d_v), mask (..., L_q, L_k)
                    -> (output (..., L_q, d_v), weights (..., L_q, L_k)).
                    """
                    d_k = q.shape[-1]
                    scores = torch.matmul(q, k.transpose(-2, -1))
                    if scale:
                        scores = scores * (1.0 / math.sqrt(d_k))
                    if mask is not None:
                        scores = torch.where(mask.bool(), scores, torch.full_like(scores, float("-inf")))
                    row_max = scores.amax(dim=-1, keepdim=True)
                    # a fully masked row has max -inf: use 0 there so that exp(-inf - 0) = 0, not NaN
                    row_max = torch.where(torch.isfinite(row_max), row_max, torch.zeros_like(row_max)).detach()
                    e = torch.exp(scores - row_max)
                    denom = e.sum(dim=-1, keepdim=True)
                    weights = e / denom.clamp_min(torch.finfo(e.dtype).tiny)
                    return torch.matmul(weights, v), weights
                '''
            )
        },
        # Issue 40's tenth blind corpus, graded blind on 60c32e8: correct-full.
    ),
    Mutant(
        "w01-06: a hand-written masked softmax, the row max made finite, a guarded sum",
        A,
        {
            "attention": Rewrite(
                r'''
                def attention(
                    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None, scale: bool = True
                ) -> tuple[Tensor, Tensor]:
                    """softmax(q k^T / sqrt(d_k)) v, with an optional mask (True = may attend).

                    q (..., L_q, d_k), k (..., L_k, d_k), v (..., L_k, d_v), mask (..., L_q, L_k)
                    -> (output (..., L_q, d_v), weights (..., L_q, L_k)).
                    """
                    d_k = q.shape[-1]
                    scores = torch.matmul(q, k.transpose(-2, -1)) * (d_k**-0.5 if scale else 1.0)
                    if mask is None:
                        masked = scores
                    else:
                        masked = scores.masked_fill(~mask.bool(), float("-inf"))
                    row_max = masked.amax(dim=-1, keepdim=True)
                    row_max = torch.where(torch.isfinite(row_max), row_max, torch.zeros_like(row_max))
                    e = torch.exp(masked - row_max.detach())  # exp(-inf) = 0 on hidden keys
                    total = e.sum(dim=-1, keepdim=True)
                    weights = e / torch.where(total > 0, total, torch.ones_like(total))
                    return torch.matmul(weights, v), weights
                '''
            )
        },
        # Issue 40's eleventh blind corpus, graded blind on 48fe40c: correct-full.
    ),
    Mutant(
        "x01-06: einsum products, torch.where for the mask, empty rows zeroed by a 0/1 factor",
        A,
        {
            "attention": Rewrite(
                r'''
                def attention(
                    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None, scale: bool = True
                ) -> tuple[Tensor, Tensor]:
                    """softmax(q k^T / sqrt(d_k)) v, with an optional mask (True = may attend).

                    q (..., L_q, d_k), k (..., L_k, d_k), v (..., L_k, d_v), mask (..., L_q, L_k)
                    -> (output (..., L_q, d_v), weights (..., L_q, L_k)).
                    """
                    d_k = q.shape[-1]
                    scores = torch.einsum("...qd,...kd->...qk", q, k)
                    if scale:
                        scores = scores * d_k ** -0.5
                    if mask is not None:
                        allowed = mask.bool()
                        neg_inf = torch.tensor(float("-inf"), dtype=scores.dtype, device=scores.device)
                        scores = torch.where(allowed, scores, neg_inf)
                        seen = allowed.any(dim=-1, keepdim=True)
                        zero = torch.zeros((), dtype=scores.dtype, device=scores.device)
                        scores = torch.where(seen, scores, zero)
                        weights = torch.softmax(scores, dim=-1) * seen.to(scores.dtype)
                    else:
                        weights = torch.softmax(scores, dim=-1)
                    out = torch.einsum("...qk,...kd->...qd", weights, v)
                    return out, weights
                '''
            )
        },
        # Issue 40's eleventh blind corpus, graded blind on 48fe40c: correct-full.
    ),
    Mutant(
        "aa01-06: causal_mask as arange(n)[None, :] <= arange(n)[:, None]",
        A,
        {
            "causal_mask": Rewrite(
                r'''
                def causal_mask(n: int) -> Tensor:
                    """(n, n) bool mask, True where key j <= query i (may attend), diagonal included."""
                    positions = torch.arange(n)
                    return positions[None, :] <= positions[:, None]  # [i, j] = (j <= i)
                '''
            )
        },
        # Issue 40's thirteenth blind corpus, graded blind on 8b5375e: correct-full.
    ),
]
