"""Issue 40's blind corpus for 02_multi_head (see tests/mutants/blind/__init__.py)."""

from tests.mutants import Mutant, Rewrite

A = "02_multi_head"

WRONG = [
    Mutant(
        "f02-02: split_heads views the features as (d_k, H): heads get strided features",
        A,
        {
            "split_heads": Rewrite(
                r'''
                def split_heads(x: Tensor, num_heads: int) -> Tensor:
                    """(B, L, d_model) -> (B, H, L, d_k)."""
                    B, L, d_model = x.shape
                    return x.reshape(B, L, d_model // num_heads, num_heads).permute(0, 3, 1, 2)
                '''
            )
        },
        {
            "test_split_heads": "interleaved features",
        },
    ),
    Mutant(
        "f02-03: split_heads without the transpose: (B, L, H, d_k)",
        A,
        {
            "split_heads": Rewrite(
                r'''
                def split_heads(x: Tensor, num_heads: int) -> Tensor:
                    """(B, L, d_model) -> (B, H, L, d_k)."""
                    B, L, d_model = x.shape
                    return x.reshape(B, L, num_heads, d_model // num_heads)
                '''
            )
        },
        {
            "test_split_heads": "returned (B, L, H, d_k)",
        },
    ),
    Mutant(
        "f02-06: merge_heads permutes to (B, L, d_k, H): heads interleaved",
        A,
        {
            "merge_heads": Rewrite(
                r'''
                def merge_heads(x: Tensor) -> Tensor:
                    """(B, H, L, d_k) -> (B, L, H * d_k)."""
                    B, H, L, d_k = x.shape
                    return x.permute(0, 2, 3, 1).reshape(B, L, H * d_k)
                '''
            )
        },
        {
            "test_merge_heads": "interleaved",
        },
    ),
    Mutant(
        "f02-07: ValueError that names neither number",
        A,
        {
            "multi_head_attention": Rewrite(
                r'''
                class MultiHeadAttention(nn.Module):
                    """Multi-head attention: project, split into heads, attend, merge, project back."""

                    def __init__(self, d_model: int, num_heads: int):
                        super().__init__()
                        if d_model % num_heads != 0:
                            raise ValueError("bad configuration")
                        self.d_model = d_model
                        self.num_heads = num_heads
                        self.d_k = d_model // num_heads
                        self.q_proj = nn.Linear(d_model, d_model)
                        self.k_proj = nn.Linear(d_model, d_model)
                        self.v_proj = nn.Linear(d_model, d_model)
                        self.out_proj = nn.Linear(d_model, d_model)

                    def forward(
                        self,
                        query: Tensor,
                        key: Tensor | None = None,
                        value: Tensor | None = None,
                        mask: Tensor | None = None,
                    ) -> tuple[Tensor, Tensor]:
                        if key is None:
                            key = query
                        if value is None:
                            value = key
                        q = split_heads(self.q_proj(query), self.num_heads)
                        k = split_heads(self.k_proj(key), self.num_heads)
                        v = split_heads(self.v_proj(value), self.num_heads)
                        if mask is not None and mask.dim() == 3:
                            mask = mask.unsqueeze(1)
                        out, weights = scaled_dot_product_attention(q, k, v, mask)
                        return self.out_proj(merge_heads(out)), weights
                '''
            )
        },
        {
            "test_mha_shapes": "the statement asks for both numbers",
        },
    ),
    Mutant(
        "f02-08: divisibility checked with assert",
        A,
        {
            "multi_head_attention": Rewrite(
                r'''
                class MultiHeadAttention(nn.Module):
                    """Multi-head attention: project, split into heads, attend, merge, project back."""

                    def __init__(self, d_model: int, num_heads: int):
                        super().__init__()
                        assert d_model % num_heads == 0, f"{d_model} not divisible by {num_heads}"
                        self.d_model = d_model
                        self.num_heads = num_heads
                        self.d_k = d_model // num_heads
                        self.q_proj = nn.Linear(d_model, d_model)
                        self.k_proj = nn.Linear(d_model, d_model)
                        self.v_proj = nn.Linear(d_model, d_model)
                        self.out_proj = nn.Linear(d_model, d_model)

                    def forward(
                        self,
                        query: Tensor,
                        key: Tensor | None = None,
                        value: Tensor | None = None,
                        mask: Tensor | None = None,
                    ) -> tuple[Tensor, Tensor]:
                        if key is None:
                            key = query
                        if value is None:
                            value = key
                        q = split_heads(self.q_proj(query), self.num_heads)
                        k = split_heads(self.k_proj(key), self.num_heads)
                        v = split_heads(self.v_proj(value), self.num_heads)
                        if mask is not None and mask.dim() == 3:
                            mask = mask.unsqueeze(1)
                        out, weights = scaled_dot_product_attention(q, k, v, mask)
                        return self.out_proj(merge_heads(out)), weights
                '''
            )
        },
        {
            "test_mha_shapes": "raises AssertionError for sizes that do not divide",
        },
    ),
    Mutant(
        "f02-09: value defaults to query",
        A,
        {
            "multi_head_attention": Rewrite(
                r'''
                class MultiHeadAttention(nn.Module):
                    """Multi-head attention: project, split into heads, attend, merge, project back."""

                    def __init__(self, d_model: int, num_heads: int):
                        super().__init__()
                        if d_model % num_heads != 0:
                            raise ValueError(
                                f"d_model = {d_model} is not divisible by num_heads = {num_heads}"
                            )
                        self.d_model = d_model
                        self.num_heads = num_heads
                        self.d_k = d_model // num_heads
                        self.q_proj = nn.Linear(d_model, d_model)
                        self.k_proj = nn.Linear(d_model, d_model)
                        self.v_proj = nn.Linear(d_model, d_model)
                        self.out_proj = nn.Linear(d_model, d_model)

                    def forward(
                        self,
                        query: Tensor,
                        key: Tensor | None = None,
                        value: Tensor | None = None,
                        mask: Tensor | None = None,
                    ) -> tuple[Tensor, Tensor]:
                        if key is None:
                            key = query
                        if value is None:
                            value = query
                        q = split_heads(self.q_proj(query), self.num_heads)
                        k = split_heads(self.k_proj(key), self.num_heads)
                        v = split_heads(self.v_proj(value), self.num_heads)
                        if mask is not None and mask.dim() == 3:
                            mask = mask.unsqueeze(1)
                        out, weights = scaled_dot_product_attention(q, k, v, mask)
                        return self.out_proj(merge_heads(out)), weights
                '''
            )
        },
        {
            "test_mha_shapes": "value must default to key",
        },
    ),
    Mutant(
        "f02-10: a (B, L_q, L_k) mask without a head axis",
        A,
        {
            "multi_head_attention": Rewrite(
                r'''
                class MultiHeadAttention(nn.Module):
                    """Multi-head attention: project, split into heads, attend, merge, project back."""

                    def __init__(self, d_model: int, num_heads: int):
                        super().__init__()
                        if d_model % num_heads != 0:
                            raise ValueError(
                                f"d_model = {d_model} is not divisible by num_heads = {num_heads}"
                            )
                        self.d_model = d_model
                        self.num_heads = num_heads
                        self.d_k = d_model // num_heads
                        self.q_proj = nn.Linear(d_model, d_model)
                        self.k_proj = nn.Linear(d_model, d_model)
                        self.v_proj = nn.Linear(d_model, d_model)
                        self.out_proj = nn.Linear(d_model, d_model)

                    def forward(
                        self,
                        query: Tensor,
                        key: Tensor | None = None,
                        value: Tensor | None = None,
                        mask: Tensor | None = None,
                    ) -> tuple[Tensor, Tensor]:
                        if key is None:
                            key = query
                        if value is None:
                            value = key
                        q = split_heads(self.q_proj(query), self.num_heads)
                        k = split_heads(self.k_proj(key), self.num_heads)
                        v = split_heads(self.v_proj(value), self.num_heads)
                        out, weights = scaled_dot_product_attention(q, k, v, mask)
                        return self.out_proj(merge_heads(out)), weights
                '''
            )
        },
        {"test_mha_mask": "mask.unsqueeze(1)"},
        # Graded blind on 95e49e7: charged in the parity cell too; since, the parity cell passes
        # with each 3-D mask given its head axis, so it is waived as the same mistake.
        charged_once=True,
    ),
    Mutant(
        "f02-11: no output projection",
        A,
        {
            "multi_head_attention": Rewrite(
                r'''
                class MultiHeadAttention(nn.Module):
                    """Multi-head attention: project, split into heads, attend, merge, project back."""

                    def __init__(self, d_model: int, num_heads: int):
                        super().__init__()
                        if d_model % num_heads != 0:
                            raise ValueError(
                                f"d_model = {d_model} is not divisible by num_heads = {num_heads}"
                            )
                        self.d_model = d_model
                        self.num_heads = num_heads
                        self.d_k = d_model // num_heads
                        self.q_proj = nn.Linear(d_model, d_model)
                        self.k_proj = nn.Linear(d_model, d_model)
                        self.v_proj = nn.Linear(d_model, d_model)
                        self.out_proj = nn.Linear(d_model, d_model)

                    def forward(
                        self,
                        query: Tensor,
                        key: Tensor | None = None,
                        value: Tensor | None = None,
                        mask: Tensor | None = None,
                    ) -> tuple[Tensor, Tensor]:
                        if key is None:
                            key = query
                        if value is None:
                            value = key
                        q = split_heads(self.q_proj(query), self.num_heads)
                        k = split_heads(self.k_proj(key), self.num_heads)
                        v = split_heads(self.v_proj(value), self.num_heads)
                        if mask is not None and mask.dim() == 3:
                            mask = mask.unsqueeze(1)
                        out, weights = scaled_dot_product_attention(q, k, v, mask)
                        return merge_heads(out), weights
                '''
            )
        },
        {
            "test_mha_shapes": "`out_proj` is never used in forward",
            "test_mha_parity": "the output projection is missing",
        },
    ),
    Mutant(
        "f02-12: values projected with k_proj",
        A,
        {
            "multi_head_attention": Rewrite(
                r'''
                class MultiHeadAttention(nn.Module):
                    """Multi-head attention: project, split into heads, attend, merge, project back."""

                    def __init__(self, d_model: int, num_heads: int):
                        super().__init__()
                        if d_model % num_heads != 0:
                            raise ValueError(
                                f"d_model = {d_model} is not divisible by num_heads = {num_heads}"
                            )
                        self.d_model = d_model
                        self.num_heads = num_heads
                        self.d_k = d_model // num_heads
                        self.q_proj = nn.Linear(d_model, d_model)
                        self.k_proj = nn.Linear(d_model, d_model)
                        self.v_proj = nn.Linear(d_model, d_model)
                        self.out_proj = nn.Linear(d_model, d_model)

                    def forward(
                        self,
                        query: Tensor,
                        key: Tensor | None = None,
                        value: Tensor | None = None,
                        mask: Tensor | None = None,
                    ) -> tuple[Tensor, Tensor]:
                        if key is None:
                            key = query
                        if value is None:
                            value = key
                        q = split_heads(self.q_proj(query), self.num_heads)
                        k = split_heads(self.k_proj(key), self.num_heads)
                        v = split_heads(self.k_proj(value), self.num_heads)
                        if mask is not None and mask.dim() == 3:
                            mask = mask.unsqueeze(1)
                        out, weights = scaled_dot_product_attention(q, k, v, mask)
                        return self.out_proj(merge_heads(out)), weights
                '''
            )
        },
        {
            "test_mha_shapes": "`v_proj` is never used",
            "test_mha_parity": "projected with k_proj",
        },
    ),
    Mutant(
        "f02-13: mask inverted for torch's True = blocked",
        A,
        {
            "multi_head_attention": Rewrite(
                r'''
                class MultiHeadAttention(nn.Module):
                    """Multi-head attention: project, split into heads, attend, merge, project back."""

                    def __init__(self, d_model: int, num_heads: int):
                        super().__init__()
                        if d_model % num_heads != 0:
                            raise ValueError(
                                f"d_model = {d_model} is not divisible by num_heads = {num_heads}"
                            )
                        self.d_model = d_model
                        self.num_heads = num_heads
                        self.d_k = d_model // num_heads
                        self.q_proj = nn.Linear(d_model, d_model)
                        self.k_proj = nn.Linear(d_model, d_model)
                        self.v_proj = nn.Linear(d_model, d_model)
                        self.out_proj = nn.Linear(d_model, d_model)

                    def forward(
                        self,
                        query: Tensor,
                        key: Tensor | None = None,
                        value: Tensor | None = None,
                        mask: Tensor | None = None,
                    ) -> tuple[Tensor, Tensor]:
                        if key is None:
                            key = query
                        if value is None:
                            value = key
                        q = split_heads(self.q_proj(query), self.num_heads)
                        k = split_heads(self.k_proj(key), self.num_heads)
                        v = split_heads(self.v_proj(value), self.num_heads)
                        if mask is not None and mask.dim() == 3:
                            mask = mask.unsqueeze(1)
                        out, weights = scaled_dot_product_attention(
                            q, k, v, None if mask is None else ~mask.bool()
                        )
                        return self.out_proj(merge_heads(out)), weights
                '''
            )
        },
        {
            "test_mha_mask": "polarity reversed",
            "test_mha_parity": "polarity reversed",
        },
    ),
    Mutant(
        "g02-11: heads_switched_off with keep inverted",
        A,
        {
            "heads_switched_off": Rewrite(
                r'''
                def heads_switched_off(mha: nn.Module, x: Tensor, keep: Tensor) -> Tensor:
                    """mha's self-attention on x (B, L, d_model), with only the heads keep (H,) marks.

                    -> (B, L, d_model).
                    """
                    # My design: a switched-off head contributes nothing. Its slice of the merged heads
                    # is zero before out_proj mixes them, and the kept heads are not rescaled. With
                    # every head off only out_proj's bias is left, the same vector at every position.
                    batch, length, d_model = x.shape

                    def heads(projection: nn.Module) -> Tensor:  # (B, L, d_model) -> (B, H, L, d_k)
                        return projection(x).view(batch, length, mha.num_heads, mha.d_k).transpose(1, 2)

                    out, _ = scaled_dot_product_attention(
                        heads(mha.q_proj), heads(mha.k_proj), heads(mha.v_proj)
                    )
                    out = out * (~keep).to(out.dtype)[:, None, None]  # (B, H, L, d_k): off heads are zero
                    return mha.out_proj(out.transpose(1, 2).reshape(batch, length, d_model))
                '''
            )
        },
        {
            "test_heads_switched_off": "keep is read the wrong way round",
        },
        in_notebook=True,  # keep_read_right confirms it through the judge, on the kernel's module
    ),
    Mutant(
        "g02-04: merge_heads flattens its transpose with .view",
        A,
        {
            "merge_heads": Rewrite(
                r'''
                def merge_heads(x: Tensor) -> Tensor:
                    """(B, H, L, d_k) -> (B, L, H * d_k)."""
                    B, H, L, d_k = x.shape
                    return x.transpose(1, 2).view(B, L, H * d_k)
                '''
            )
        },
        {
            "test_merge_heads": "non-contiguous",
            # The module's cells call it: no repair waives them, as none would under the
            # grading command (the kernel's tensors reach a check contiguous).
            "test_mha_shapes": ".view() cannot reshape it",
            "test_mha_mask": ".view() cannot reshape it",
            "test_mha_parity": ".view() cannot reshape it",
        },
        in_notebook=True,  # graded through the command too: one grade in both (judge_parity)
    ),
    Mutant(
        "g02-10: MultiHeadAttention projections built with bias=False",
        A,
        {
            "multi_head_attention": Rewrite(
                r'''
                class MultiHeadAttention(nn.Module):
                    """Multi-head attention: project, split into heads, attend, merge, project back."""

                    def __init__(self, d_model: int, num_heads: int):
                        super().__init__()
                        if d_model % num_heads != 0:
                            raise ValueError(
                                f"d_model = {d_model} is not divisible by num_heads = {num_heads}"
                            )
                        self.d_model = d_model
                        self.num_heads = num_heads
                        self.d_k = d_model // num_heads
                        self.q_proj = nn.Linear(d_model, d_model, bias=False)
                        self.k_proj = nn.Linear(d_model, d_model, bias=False)
                        self.v_proj = nn.Linear(d_model, d_model, bias=False)
                        self.out_proj = nn.Linear(d_model, d_model, bias=False)

                    def forward(
                        self,
                        query: Tensor,
                        key: Tensor | None = None,
                        value: Tensor | None = None,
                        mask: Tensor | None = None,
                    ) -> tuple[Tensor, Tensor]:
                        if key is None:
                            key = query
                        if value is None:
                            value = key
                        q = split_heads(self.q_proj(query), self.num_heads)
                        k = split_heads(self.k_proj(key), self.num_heads)
                        v = split_heads(self.v_proj(value), self.num_heads)
                        if mask is not None and mask.dim() == 3:
                            mask = mask.unsqueeze(1)
                        out, weights = scaled_dot_product_attention(q, k, v, mask)
                        return self.out_proj(merge_heads(out)), weights
                '''
            )
        },
        {"test_mha_shapes": "without a bias"},
        # Charged there once: the mask and parity cells are waived as the same mistake.
        charged_once=True,
    ),
    Mutant(
        "h02-15: heads_switched_off zeroes an off head's query rows, in a deep copy",
        A,
        {
            "heads_switched_off": Rewrite(
                r'''
                def heads_switched_off(mha: nn.Module, x: Tensor, keep: Tensor) -> Tensor:
                    """mha's self-attention on x (B, L, d_model), with only the heads keep (H,) marks."""
                    # My design: an off head gets a zero query, so it has nothing to ask for. Kept heads
                    # are not rescaled. mha is copied so it stays unchanged.
                    import copy

                    layer = copy.deepcopy(mha)
                    with torch.no_grad():
                        for h in range(layer.num_heads):
                            if not keep[h]:
                                rows = slice(h * layer.d_k, (h + 1) * layer.d_k)
                                layer.q_proj.weight[rows] = 0.0
                                layer.q_proj.bias[rows] = 0.0
                    return layer(x)[0]
                '''
            )
        },
        {"test_heads_switched_off": "its weights are uniform over the keys"},
    ),
    Mutant(
        "h02-17: heads_switched_off masks the merged features with keep.repeat(d_k)",
        A,
        {
            "heads_switched_off": Rewrite(
                r'''
                def heads_switched_off(mha: nn.Module, x: Tensor, keep: Tensor) -> Tensor:
                    """mha's self-attention on x (B, L, d_model), with only the heads keep (H,) marks."""
                    # My design: zero the off heads' features in the merged vector, before out_proj mixes
                    # the heads; no rescaling; all heads off leaves out_proj's bias.
                    B, L, d_model = x.shape
                    q = split_heads(mha.q_proj(x), mha.num_heads)
                    k = split_heads(mha.k_proj(x), mha.num_heads)
                    v = split_heads(mha.v_proj(x), mha.num_heads)
                    out, _ = scaled_dot_product_attention(q, k, v)
                    merged = merge_heads(out)
                    feature_keep = keep.repeat(mha.d_k).to(merged.dtype)  # (d_model,)
                    return mha.out_proj(merged * feature_keep)
                '''
            )
        },
        {"test_heads_switched_off": "those keep.repeat(d_k) marks off"},
    ),
    Mutant(
        "i02-12: a head axis added to every mask that is not 2-D",
        A,
        {
            "multi_head_attention": Rewrite(
                r'''
                class MultiHeadAttention(nn.Module):
                    """Multi-head attention: project, split into heads, attend, merge, project back."""

                    def __init__(self, d_model: int, num_heads: int):
                        super().__init__()
                        if d_model % num_heads != 0:
                            raise ValueError(
                                f"d_model = {d_model} is not divisible by num_heads = {num_heads}"
                            )
                        self.d_model = d_model
                        self.num_heads = num_heads
                        self.d_k = d_model // num_heads
                        self.q_proj = nn.Linear(d_model, d_model)
                        self.k_proj = nn.Linear(d_model, d_model)
                        self.v_proj = nn.Linear(d_model, d_model)
                        self.out_proj = nn.Linear(d_model, d_model)

                    def forward(
                        self,
                        query: Tensor,
                        key: Tensor | None = None,
                        value: Tensor | None = None,
                        mask: Tensor | None = None,
                    ) -> tuple[Tensor, Tensor]:
                        """query (B, L_q, d_model), key/value (B, L_k, d_model), mask True = may attend
                        -> (output (B, L_q, d_model), weights (B, H, L_q, L_k)).
                        """
                        if key is None:
                            key = query
                        if value is None:
                            value = key
                        q = split_heads(self.q_proj(query), self.num_heads)
                        k = split_heads(self.k_proj(key), self.num_heads)
                        v = split_heads(self.v_proj(value), self.num_heads)
                        if mask is not None and mask.dim() != 2:
                            # (B, L_q, L_k) -> (B, 1, L_q, L_k): one mask per sentence, shared by its heads
                            mask = mask.unsqueeze(1)
                        heads, weights = scaled_dot_product_attention(q, k, v, mask)
                        return self.out_proj(merge_heads(heads)), weights
                '''
            )
        },
        {"test_mha_mask": "a (B, H, L_q, L_k) mask is given a head axis too"},
    ),
    Mutant(
        "j02-09: heads_switched_off zeroes out_proj's columns of the off heads in place",
        A,
        {
            "heads_switched_off": Rewrite(
                r'''
                def heads_switched_off(mha: nn.Module, x: Tensor, keep: Tensor) -> Tensor:
                    """mha's self-attention on x (B, L, d_model), with only the heads keep (H,) marks.

                    -> (B, L, d_model).
                    """
                    # Design: a switched-off head's columns of out_proj are set to zero, so its
                    # result never reaches the output; kept heads are not rescaled; with every
                    # head off, the output is out_proj's bias.
                    with torch.no_grad():
                        for h in range(mha.num_heads):
                            if not keep[h]:
                                mha.out_proj.weight[:, h * mha.d_k : (h + 1) * mha.d_k] = 0.0
                        return mha(x)[0]
                '''
            )
        },
        {"test_heads_switched_off": "it was given"},
        # Issue 40's fifth blind corpus: through the command, the judge's refusal of its write
        # was told as the check's own error ("your code did not raise it") and flagged.
        in_notebook=True,
        not_told=("the check itself raised", "your code did not raise it"),
    ),
    Mutant(
        "j02-11: heads_switched_off returns mha(x)[0] with every head off",
        A,
        {
            "heads_switched_off": Rewrite(
                r'''
                def heads_switched_off(mha: nn.Module, x: Tensor, keep: Tensor) -> Tensor:
                    """mha's self-attention on x (B, L, d_model), with only the heads keep (H,) marks.

                    -> (B, L, d_model).
                    """
                    # Design: a switched-off head contributes zero to the merged vector before
                    # out_proj (its d_k features are zeroed), the kept heads are not rescaled, and
                    # with every head off the output is out_proj's bias alone at every position.
                    if not keep.any():
                        # nothing left to ablate: fall back to the plain layer
                        return mha(x)[0]
                    H, d_k = mha.num_heads, mha.d_k
                    q = split_heads(mha.q_proj(x), H)
                    k = split_heads(mha.k_proj(x), H)
                    v = split_heads(mha.v_proj(x), H)
                    heads, _ = scaled_dot_product_attention(q, k, v)
                    gate = keep.to(device=heads.device, dtype=heads.dtype).view(1, H, 1, 1)
                    heads = torch.where(gate.bool(), heads, torch.zeros_like(heads))
                    return mha.out_proj(merge_heads(heads))
                '''
            )
        },
        {"test_heads_switched_off": "with every head off the output is mha(x)[0]"},
    ),
    Mutant(
        "j02-02: split_heads views the features as (d_k, H); its author's heads_switched_off "
        "calls it",
        A,
        {
            "split_heads": Rewrite(
                r'''
                def split_heads(x: Tensor, num_heads: int) -> Tensor:
                    """(B, L, d_model) -> (B, H, L, d_k) with d_k = d_model // H.

                    Head h holds features h*d_k:(h+1)*d_k.
                    """
                    B, L, d_model = x.shape
                    return x.view(B, L, d_model // num_heads, num_heads).permute(0, 3, 1, 2)
                '''
            ),
            # The author's own heads_switched_off, right, built on split_heads and merge_heads.
            "heads_switched_off": Rewrite(
                r'''
                def heads_switched_off(mha: nn.Module, x: Tensor, keep: Tensor) -> Tensor:
                    """mha's self-attention on x (B, L, d_model), with only the heads keep (H,) marks.

                    -> (B, L, d_model).
                    """
                    # Design: a switched-off head contributes zero to the merged vector before
                    # out_proj (its d_k features are zeroed), the kept heads are not rescaled, and
                    # with every head off the output is out_proj's bias alone at every position.
                    H, d_k = mha.num_heads, mha.d_k
                    q = split_heads(mha.q_proj(x), H)
                    k = split_heads(mha.k_proj(x), H)
                    v = split_heads(mha.v_proj(x), H)
                    heads, _ = scaled_dot_product_attention(q, k, v)
                    gate = keep.to(device=heads.device, dtype=heads.dtype).view(1, H, 1, 1)
                    heads = torch.where(gate.bool(), heads, torch.zeros_like(heads))
                    return mha.out_proj(merge_heads(heads))
                '''
            ),
        },
        {
            "test_split_heads": "head h got the interleaved features h, h+H, h+2H",
            "test_heads_switched_off": "this cell's answer may call your answer cell `split_heads`",
        },
        makes=("MultiHeadAttention.split_interleaved",),
        not_told=("keep.repeat(d_k)", "keep.repeat_interleave(d_k)"),
    ),
    Mutant(
        "k02-01: reshapes (B",
        A,
        {
            "split_heads": Rewrite(
                r'''
                def split_heads(x: Tensor, num_heads: int) -> Tensor:
                    """(B, L, d_model) -> (B, H, L, d_k) with d_k = d_model // H.

                    Head h holds features h*d_k:(h+1)*d_k.
                    """
                    B, L, d_model = x.shape
                    return x.reshape(B, num_heads, L, d_model // num_heads)
                '''
            )
        },
        {
            "test_split_heads": "heads split without a transpose: reshaping (B, L, d_model) straight to (B, H, L, d_k) cuts across positions, so view(B, ",
            "test_mha_mask": "this cell uses your answer cell",
            "test_mha_parity": "this cell uses your answer cell",
        },
        # Issue 40's sixth blind corpus, graded blind on bdfa422: named.
        makes=("MultiHeadAttention.split_no_transpose",),
    ),
    Mutant(
        "k02-02: the ValueError for an indivisible d_model is raised with a message tha",
        A,
        {
            "multi_head_attention": Rewrite(
                r'''
                class MultiHeadAttention(nn.Module):
                    """Multi-head attention: project, split into heads, attend, merge, project back."""

                    def __init__(self, d_model: int, num_heads: int):
                        super().__init__()
                        if d_model % num_heads:
                            raise ValueError("invalid number of heads")
                        self.d_model = d_model
                        self.num_heads = num_heads
                        self.d_k = d_model // num_heads
                        self.q_proj = nn.Linear(d_model, d_model)
                        self.k_proj = nn.Linear(d_model, d_model)
                        self.v_proj = nn.Linear(d_model, d_model)
                        self.out_proj = nn.Linear(d_model, d_model)

                    def forward(
                        self,
                        query: Tensor,
                        key: Tensor | None = None,
                        value: Tensor | None = None,
                        mask: Tensor | None = None,
                    ) -> tuple[Tensor, Tensor]:
                        """query (B, L_q, d_model), key/value (B, L_k, d_model), mask True = may attend
                        -> (output (B, L_q, d_model), weights (B, H, L_q, L_k)).
                        """
                        key = query if key is None else key
                        value = key if value is None else value
                        q = split_heads(self.q_proj(query), self.num_heads)
                        k = split_heads(self.k_proj(key), self.num_heads)
                        v = split_heads(self.v_proj(value), self.num_heads)
                        if mask is not None and mask.dim() == 3:
                            mask = mask.unsqueeze(1)
                        out, weights = scaled_dot_product_attention(q, k, v, mask)
                        return self.out_proj(merge_heads(out)), weights
                '''
            )
        },
        {"test_mha_shapes": "the ValueError for MultiHeadAttention"},
        # Issue 40's sixth blind corpus, graded blind on bdfa422: named.
    ),
    Mutant(
        "k02-03: every mask that is not 2-D gets a head axis inserted (mask.dim() != 2)",
        A,
        {
            "multi_head_attention": Rewrite(
                r'''
                class MultiHeadAttention(nn.Module):
                    """Multi-head attention: project, split into heads, attend, merge, project back."""

                    def __init__(self, d_model: int, num_heads: int):
                        super().__init__()
                        if d_model % num_heads != 0:
                            raise ValueError(
                                f"d_model = {d_model} is not divisible by num_heads = {num_heads}"
                            )
                        self.d_model = d_model
                        self.num_heads = num_heads
                        self.d_k = d_model // num_heads
                        self.q_proj = nn.Linear(d_model, d_model)
                        self.k_proj = nn.Linear(d_model, d_model)
                        self.v_proj = nn.Linear(d_model, d_model)
                        self.out_proj = nn.Linear(d_model, d_model)

                    def forward(
                        self,
                        query: Tensor,
                        key: Tensor | None = None,
                        value: Tensor | None = None,
                        mask: Tensor | None = None,
                    ) -> tuple[Tensor, Tensor]:
                        """query (B, L_q, d_model), key/value (B, L_k, d_model), mask True = may attend
                        -> (output (B, L_q, d_model), weights (B, H, L_q, L_k)).
                        """
                        if key is None:
                            key = query
                        if value is None:
                            value = key
                        q = split_heads(self.q_proj(query), self.num_heads)
                        k = split_heads(self.k_proj(key), self.num_heads)
                        v = split_heads(self.v_proj(value), self.num_heads)
                        if mask is not None and mask.dim() != 2:
                            # one mask per sentence: give it an axis for the heads
                            mask = mask.unsqueeze(1)
                        out, weights = scaled_dot_product_attention(q, k, v, mask)
                        return self.out_proj(merge_heads(out)), weights
                '''
            )
        },
        {"test_mha_mask": "your MultiHeadAttention raised ValueError on a (B, H, L_q, L_k)"},
        # Issue 40's sixth blind corpus, graded blind on bdfa422: named.
        makes=("MultiHeadAttention.head_axis_added_to_4d",),
    ),
    Mutant(
        "k02-04: switches heads off by zeroing their columns of mha.out_proj.weight in",
        A,
        {
            "heads_switched_off": Rewrite(
                r'''
                def heads_switched_off(mha: nn.Module, x: Tensor, keep: Tensor) -> Tensor:
                    """mha's self-attention on x (B, L, d_model), with only the heads keep (H,) marks.

                    -> (B, L, d_model).
                    """
                    # Design: a head that is off contributes nothing: the columns of out_proj that read
                    # its features are set to zero, so out_proj ignores it. Kept heads are not rescaled.
                    # With every head off the output is out_proj's bias.
                    d_k = mha.d_k
                    with torch.no_grad():
                        for h in range(mha.num_heads):
                            if not bool(keep[h]):
                                mha.out_proj.weight[:, h * d_k : (h + 1) * d_k] = 0.0
                    return mha(x)[0]
                '''
            )
        },
        {"test_heads_switched_off": "it was given"},
        # Issue 40's sixth blind corpus, graded blind on bdfa422: named.
    ),
    Mutant(
        "k02-05: rebuilds the output as the sum of the kept heads' contributions throug",
        A,
        {
            "heads_switched_off": Rewrite(
                r'''
                def heads_switched_off(mha: nn.Module, x: Tensor, keep: Tensor) -> Tensor:
                    """mha's self-attention on x (B, L, d_model), with only the heads keep (H,) marks.

                    -> (B, L, d_model).
                    """
                    # Design: the output is a sum over heads of head_h @ W_O[:, block h].T; a head that is
                    # off is left out of the sum. No rescaling; with every head off the output is zero.
                    B, L, d_model = x.shape
                    H, d_k = mha.num_heads, mha.d_k
                    q = mha.q_proj(x).view(B, L, H, d_k).transpose(1, 2)
                    k = mha.k_proj(x).view(B, L, H, d_k).transpose(1, 2)
                    v = mha.v_proj(x).view(B, L, H, d_k).transpose(1, 2)
                    heads, _ = scaled_dot_product_attention(q, k, v)
                    out = torch.zeros(B, L, d_model, dtype=x.dtype, device=x.device)
                    W_O = mha.out_proj.weight
                    for h in range(H):
                        if bool(keep[h]):
                            out = out + heads[:, h] @ W_O[:, h * d_k : (h + 1) * d_k].T
                    return out
                '''
            )
        },
        {"test_heads_switched_off": "out_proj's bias is missing from the output"},
        # Issue 40's sixth blind corpus, graded blind on bdfa422: counterexample; named since.
    ),
    Mutant(
        "j02-03: split_heads hard-codes d_k = 4, the public test's head size",
        A,
        {
            "split_heads": Rewrite(
                r'''
                def split_heads(x: Tensor, num_heads: int) -> Tensor:
                    """(B, L, d_model) -> (B, H, L, d_k) with d_k = d_model // H.

                    Head h holds features h*d_k:(h+1)*d_k.
                    """
                    B, L, d_model = x.shape
                    return x.view(B, L, num_heads, 4).transpose(1, 2)
                '''
            )
        },
        {
            "test_split_heads": "the head size is a fixed number, not d_model // num_heads",
            "test_mha_shapes": "this cell uses your answer cell `split_heads`",
            "test_mha_mask": "this cell uses your answer cell `split_heads`",
            "test_mha_parity": "this cell uses your answer cell `split_heads`",
        },
        # Issue 40's fifth blind corpus (5a), graded blind: counterexample, and marks that
        # depended on the secret (a drawn d_k of 4 passed); named, with two d_k a check, since.
    ),
    Mutant(
        "n02-01: split_heads transposes before reshaping",
        A,
        {
            "split_heads": Rewrite(
                r'''
                def split_heads(x: Tensor, num_heads: int) -> Tensor:
                    """(B, L, d_model) -> (B, H, L, d_k) with d_k = d_model // H.

                    Head h holds features h*d_k:(h+1)*d_k.
                    """
                    B, L, d_model = x.shape
                    d_k = d_model // num_heads
                    return x.transpose(1, 2).reshape(B, num_heads, L, d_k)
                '''
            )
        },
        {
            "test_split_heads": "transposed before viewing: x.transpose(1, 2) then reshape cuts the wrong axis",
            "test_mha_mask": "this cell uses your answer cell `split_heads`",
            "test_mha_parity": "this cell uses your answer cell `split_heads`",
        },
        # Issue 40's seventh blind corpus, graded blind on 451e037: named; test_mha_mask and
        # test_mha_parity not charged again.
    ),
    Mutant(
        "n02-02: a head axis added to a per-head (B, H, L_q, L_k) mask too",
        A,
        {
            "multi_head_attention": Rewrite(
                r'''
                class MultiHeadAttention(nn.Module):
                    """Multi-head attention: project, split into heads, attend, merge, project back."""

                    def __init__(self, d_model: int, num_heads: int):
                        super().__init__()
                        if d_model % num_heads != 0:
                            raise ValueError(
                                f"d_model = {d_model} is not divisible by num_heads = {num_heads}"
                            )
                        self.d_model = d_model
                        self.num_heads = num_heads
                        self.d_k = d_model // num_heads
                        self.q_proj = nn.Linear(d_model, d_model)
                        self.k_proj = nn.Linear(d_model, d_model)
                        self.v_proj = nn.Linear(d_model, d_model)
                        self.out_proj = nn.Linear(d_model, d_model)

                    def forward(
                        self,
                        query: Tensor,
                        key: Tensor | None = None,
                        value: Tensor | None = None,
                        mask: Tensor | None = None,
                    ) -> tuple[Tensor, Tensor]:
                        """query (B, L_q, d_model), key/value (B, L_k, d_model), mask True = may attend
                        -> (output (B, L_q, d_model), weights (B, H, L_q, L_k)).
                        """
                        if key is None:
                            key = query
                        if value is None:
                            value = key
                        q = split_heads(self.q_proj(query), self.num_heads)
                        k = split_heads(self.k_proj(key), self.num_heads)
                        v = split_heads(self.v_proj(value), self.num_heads)
                        if mask is not None and mask.dim() > 2:
                            mask = mask.unsqueeze(1)  # per-sentence mask: add the head axis
                        out, weights = scaled_dot_product_attention(q, k, v, mask)
                        return self.out_proj(merge_heads(out)), weights
                '''
            )
        },
        {"test_mha_mask": "a (B, H, L_q, L_k) mask is given a head axis too"},
        # Issue 40's seventh blind corpus, graded blind on 451e037: named.
    ),
    Mutant(
        "n02-03: the divisibility ValueError shows neither number",
        A,
        {
            "multi_head_attention": Rewrite(
                r'''
                class MultiHeadAttention(nn.Module):
                    """Multi-head attention: project, split into heads, attend, merge, project back."""

                    def __init__(self, d_model: int, num_heads: int):
                        super().__init__()
                        if d_model % num_heads != 0:
                            raise ValueError("d_model must be divisible by num_heads")
                        self.d_model = d_model
                        self.num_heads = num_heads
                        self.d_k = d_model // num_heads
                        self.q_proj = nn.Linear(d_model, d_model)
                        self.k_proj = nn.Linear(d_model, d_model)
                        self.v_proj = nn.Linear(d_model, d_model)
                        self.out_proj = nn.Linear(d_model, d_model)

                    def forward(
                        self,
                        query: Tensor,
                        key: Tensor | None = None,
                        value: Tensor | None = None,
                        mask: Tensor | None = None,
                    ) -> tuple[Tensor, Tensor]:
                        """query (B, L_q, d_model), key/value (B, L_k, d_model), mask True = may attend
                        -> (output (B, L_q, d_model), weights (B, H, L_q, L_k)).
                        """
                        if key is None:
                            key = query
                        if value is None:
                            value = key
                        q = split_heads(self.q_proj(query), self.num_heads)
                        k = split_heads(self.k_proj(key), self.num_heads)
                        v = split_heads(self.v_proj(value), self.num_heads)
                        if mask is not None and mask.dim() == 3:
                            mask = mask.unsqueeze(1)  # (B, 1, L_q, L_k): shared by the heads
                        out, weights = scaled_dot_product_attention(q, k, v, mask)
                        return self.out_proj(merge_heads(out)), weights
                '''
            )
        },
        {
            "test_mha_shapes": "reads 'd_model must be divisible by num_heads': the statement asks for both numbers in it"
        },
        # Issue 40's seventh blind corpus, graded blind on 451e037: named.
    ),
    Mutant(
        "n02-04: kept heads rescaled by H / kept: NaN with every head off",
        A,
        {
            "heads_switched_off": Rewrite(
                r'''
                def heads_switched_off(mha: nn.Module, x: Tensor, keep: Tensor) -> Tensor:
                    """mha's self-attention on x (B, L, d_model), with only the heads keep (H,) marks.

                    -> (B, L, d_model).
                    """
                    # Design: like dropout on whole heads: an off head's output is zeroed before the
                    # merge, and the kept heads are scaled up by H / (number kept) so that the total
                    # size of what reaches out_proj stays about the same.
                    H, d_k = mha.num_heads, mha.d_k
                    B, L, d_model = x.shape
                    q = mha.q_proj(x).view(B, L, H, d_k).transpose(1, 2)
                    k = mha.k_proj(x).view(B, L, H, d_k).transpose(1, 2)
                    v = mha.v_proj(x).view(B, L, H, d_k).transpose(1, 2)
                    heads, _ = scaled_dot_product_attention(q, k, v)
                    factor = keep.float() * (H / keep.float().sum())
                    heads = heads * factor.view(1, H, 1, 1)
                    return mha.out_proj(heads.transpose(1, 2).reshape(B, L, d_model))
                '''
            )
        },
        {"test_heads_switched_off": "your rescale divides by the number of kept heads"},
        # Issue 40's seventh blind corpus, graded blind on 451e037: counterexample ("the
        # output holds non-finite values on"); named since fix8a.
    ),
    Mutant(
        "n02-05: an off head's v_proj rows zeroed, its v_proj bias left on",
        A,
        {
            "heads_switched_off": Rewrite(
                r'''
                import copy


                def heads_switched_off(mha: nn.Module, x: Tensor, keep: Tensor) -> Tensor:
                    """mha's self-attention on x (B, L, d_model), with only the heads keep (H,) marks.

                    -> (B, L, d_model).
                    """
                    # Design: a switched-off head gets zero value vectors, so whatever it attends to it
                    # returns zeros; kept heads are not rescaled. All heads off leaves out_proj's bias.
                    # The layer is copied so mha itself is not changed.
                    ablated = copy.deepcopy(mha)
                    d_k = mha.d_k
                    with torch.no_grad():
                        for h in range(mha.num_heads):
                            if not bool(keep[h]):
                                ablated.v_proj.weight[h * d_k : (h + 1) * d_k] = 0.0
                    return ablated(x)[0]
                '''
            )
        },
        {"test_heads_switched_off": "an off head still passes on its rows of v_proj.bias"},
        # Issue 40's seventh blind corpus, graded blind on 451e037: counterexample ("yet the
        # output changed by up to"); named since fix8a.
    ),
    Mutant(
        "p02-01: merge_heads reshapes without the transpose",
        A,
        {
            "merge_heads": Rewrite(
                r'''
                # kind: wrong
                # grade_id: merge_heads
                # mistake: merges by reshaping (B, H, L, d_k) straight to (B, L, H*d_k) without first moving the head axis behind the sequence axis, so features of different positions get mixed.
                # evidence: tools/ev02.py: merge_heads(split_heads(x)) != x for x (2, 5, 12) (my answer gives x back exactly).
                def merge_heads(x: Tensor) -> Tensor:
                    """(B, H, L, d_k) -> (B, L, H * d_k): concatenate the heads' features."""
                    B, H, L, d_k = x.shape
                    return x.reshape(B, L, H * d_k)
                '''
            )
        },
        {
            "test_merge_heads": "heads merged without a transpose",
            "test_mha_parity": "outputs differ as if the heads were merged without a transpose",
        },
        # Issue 40's seventh blind corpus, graded blind on 451e037: named; test_mha_parity not charged
        # again.
    ),
    Mutant(
        "p02-02: a head axis added to a per-head (B, H, L_q, L_k) mask too",
        A,
        {
            "multi_head_attention": Rewrite(
                r'''
                # kind: wrong
                # grade_id: multi_head_attention
                # mistake: adds the head axis to every mask with more than two dims (dim >= 3), so a per-head (B, H, L_q, L_k) mask becomes (B, 1, H, L_q, L_k) and the call raises instead of using the mask as it is.
                # evidence: tools/ev02.py: with a per-head mask (2, 3, 5, 5) my answer gives (2, 3, 5, 5) weights zero where hidden; this one raises ValueError ('expected mask broadcastable to (2, 3, 5, 5) ..., got (2, 1, 3, 5, 5)'); with (B, L, L) and (L, L) masks it equals mine.
                class MultiHeadAttention(nn.Module):
                    """Multi-head attention: project, split into heads, attend, merge, project back."""

                    def __init__(self, d_model: int, num_heads: int):
                        super().__init__()
                        if d_model % num_heads != 0:
                            raise ValueError(
                                f"d_model = {d_model} is not divisible by num_heads = {num_heads}"
                            )
                        self.d_model = d_model
                        self.num_heads = num_heads
                        self.d_k = d_model // num_heads
                        self.q_proj = nn.Linear(d_model, d_model)
                        self.k_proj = nn.Linear(d_model, d_model)
                        self.v_proj = nn.Linear(d_model, d_model)
                        self.out_proj = nn.Linear(d_model, d_model)

                    def forward(
                        self,
                        query: Tensor,
                        key: Tensor | None = None,
                        value: Tensor | None = None,
                        mask: Tensor | None = None,
                    ) -> tuple[Tensor, Tensor]:
                        if key is None:
                            key = query
                        if value is None:
                            value = key
                        q = split_heads(self.q_proj(query), self.num_heads)
                        k = split_heads(self.k_proj(key), self.num_heads)
                        v = split_heads(self.v_proj(value), self.num_heads)
                        if mask is not None and mask.dim() >= 3:
                            mask = mask.unsqueeze(1)  # batch masks need a head axis
                        heads, weights = scaled_dot_product_attention(q, k, v, mask)
                        return self.out_proj(merge_heads(heads)), weights
                '''
            )
        },
        {"test_mha_mask": "a (B, H, L_q, L_k) mask is given a head axis too"},
        # Issue 40's seventh blind corpus, graded blind on 451e037: named.
    ),
    Mutant(
        "p02-03: the divisibility ValueError shows neither number",
        A,
        {
            "multi_head_attention": Rewrite(
                r'''
                # kind: wrong
                # grade_id: multi_head_attention
                # mistake: the ValueError for d_model not divisible by num_heads has a generic message that does not show the two numbers, breaking the statement's "shows both numbers" clause.
                # evidence: tools/ev02.py: MultiHeadAttention(10, 3) raises ValueError('d_model must be divisible by num_heads'), which shows neither 10 nor 3 (mine: 'd_model = 10 is not divisible by num_heads = 3').
                class MultiHeadAttention(nn.Module):
                    """Multi-head attention: project, split into heads, attend, merge, project back."""

                    def __init__(self, d_model: int, num_heads: int):
                        super().__init__()
                        if d_model % num_heads != 0:
                            raise ValueError("d_model must be divisible by num_heads")
                        self.d_model = d_model
                        self.num_heads = num_heads
                        self.d_k = d_model // num_heads
                        self.q_proj = nn.Linear(d_model, d_model)
                        self.k_proj = nn.Linear(d_model, d_model)
                        self.v_proj = nn.Linear(d_model, d_model)
                        self.out_proj = nn.Linear(d_model, d_model)

                    def forward(
                        self,
                        query: Tensor,
                        key: Tensor | None = None,
                        value: Tensor | None = None,
                        mask: Tensor | None = None,
                    ) -> tuple[Tensor, Tensor]:
                        if key is None:
                            key = query
                        if value is None:
                            value = key
                        q = split_heads(self.q_proj(query), self.num_heads)
                        k = split_heads(self.k_proj(key), self.num_heads)
                        v = split_heads(self.v_proj(value), self.num_heads)
                        if mask is not None and mask.dim() == 3:
                            mask = mask.unsqueeze(1)
                        heads, weights = scaled_dot_product_attention(q, k, v, mask)
                        return self.out_proj(merge_heads(heads)), weights
                '''
            )
        },
        {
            "test_mha_shapes": "reads 'd_model must be divisible by num_heads': the statement asks for both numbers in it"
        },
        # Issue 40's seventh blind corpus, graded blind on 451e037: named.
    ),
    Mutant(
        "p02-04: kept heads rescaled by H / kept: NaN with every head off",
        A,
        {
            "heads_switched_off": Rewrite(
                r'''
                # kind: wrong
                # grade_id: heads_switched_off
                # mistake: rescales the kept heads by H / (number kept), dropout-style, which divides by zero when every head is off and makes that output NaN instead of finite.
                # evidence: tools/ev02.py: keep = all False gives 120 of 120 NaN values (mine: finite, out_proj's bias); all kept equals mha(x)[0].
                def heads_switched_off(mha: nn.Module, x: Tensor, keep: Tensor) -> Tensor:
                    """mha's self-attention on x (B, L, d_model), with only the heads keep (H,) marks."""
                    # Design: like dropout on whole heads. An off head's output is zeroed before
                    # the merge; the kept heads are scaled up by H / n_kept so the total "amount"
                    # of attention output that reaches out_proj stays the same. All heads kept
                    # gives factor 1, i.e. the layer itself.
                    H = mha.num_heads
                    q = split_heads(mha.q_proj(x), H)
                    k = split_heads(mha.k_proj(x), H)
                    v = split_heads(mha.v_proj(x), H)
                    heads, _ = scaled_dot_product_attention(q, k, v)
                    gate = keep.to(heads.dtype).view(1, H, 1, 1)
                    heads = heads * gate * (H / keep.sum())
                    return mha.out_proj(merge_heads(heads))
                '''
            )
        },
        {"test_heads_switched_off": "your rescale divides by the number of kept heads"},
        # Issue 40's seventh blind corpus, graded blind on 451e037: counterexample ("the
        # output holds non-finite values on"); named since fix8a.
    ),
    Mutant(
        "p02-05: heads switched off in mha's own v_proj, in place",
        A,
        {
            "heads_switched_off": Rewrite(
                r'''
                # kind: wrong
                # grade_id: heads_switched_off
                # mistake: switches heads off by zeroing their value rows and biases in mha's own v_proj, in place, so the caller's layer is permanently changed (the statement says to leave mha unchanged).
                # evidence: tools/ev02.py: after one call with head 1 off, mha's v_proj.weight and v_proj.bias have changed and mha(x) no longer gives its earlier output; my answer leaves mha's state_dict unchanged.
                def heads_switched_off(mha: nn.Module, x: Tensor, keep: Tensor) -> Tensor:
                    """mha's self-attention on x (B, L, d_model), with only the heads keep (H,) marks."""
                    # Design: an off head's values are all zero, so whatever it attends to it
                    # outputs zeros and adds nothing before out_proj. Kept heads are not
                    # rescaled; all heads off gives out_proj's bias. Then I just run the layer.
                    d_k = mha.d_k
                    with torch.no_grad():
                        for h in range(mha.num_heads):
                            if not keep[h]:
                                mha.v_proj.weight[h * d_k : (h + 1) * d_k] = 0.0
                                mha.v_proj.bias[h * d_k : (h + 1) * d_k] = 0.0
                    return mha(x)[0]
                '''
            )
        },
        {
            "test_heads_switched_off": "heads_switched_off changed the parameters of the layer it was given"
        },
        # Issue 40's seventh blind corpus, graded blind on 451e037: named (through the grading
        # command, its write into the layer's weight raised AttributeError; in-process, the layer is
        # seen changed).
    ),
    Mutant(
        "q02-01: split_heads reshapes to (B, H, L, d_k) without the transpose",
        A,
        {
            "split_heads": Rewrite(
                r'''
                def split_heads(x: Tensor, num_heads: int) -> Tensor:
                    """(B, L, d_model) -> (B, H, L, d_k) with d_k = d_model // H.

                    Head h holds features h*d_k:(h+1)*d_k.
                    """
                    B, L, d_model = x.shape
                    d_k = d_model // num_heads
                    return x.reshape(B, num_heads, L, d_k)
                '''
            )
        },
        {
            "test_split_heads": "heads split without a transpose",
            "test_mha_mask": "this cell uses your answer cell `split_heads`",
            "test_mha_parity": "weights differ as if the heads were split without a transpose",
        },
        # Issue 40's eighth blind corpus, graded blind on 47d54b0: named.
    ),
    Mutant(
        "q02-02: value defaults to the query, not to the key",
        A,
        {
            "multi_head_attention": Rewrite(
                r'''
                class MultiHeadAttention(nn.Module):
                    """Multi-head attention: project, split into heads, attend, merge, project back."""

                    def __init__(self, d_model: int, num_heads: int):
                        super().__init__()
                        if d_model % num_heads != 0:
                            raise ValueError(
                                f"d_model = {d_model} is not divisible by num_heads = {num_heads}"
                            )
                        self.d_model = d_model
                        self.num_heads = num_heads
                        self.d_k = d_model // num_heads
                        self.q_proj = nn.Linear(d_model, d_model)
                        self.k_proj = nn.Linear(d_model, d_model)
                        self.v_proj = nn.Linear(d_model, d_model)
                        self.out_proj = nn.Linear(d_model, d_model)

                    def forward(
                        self,
                        query: Tensor,
                        key: Tensor | None = None,
                        value: Tensor | None = None,
                        mask: Tensor | None = None,
                    ) -> tuple[Tensor, Tensor]:
                        """query (B, L_q, d_model), key/value (B, L_k, d_model), mask True = may attend
                        -> (output (B, L_q, d_model), weights (B, H, L_q, L_k)).
                        """
                        if key is None:
                            key = query
                        if value is None:
                            value = query
                        q = split_heads(self.q_proj(query), self.num_heads)
                        k = split_heads(self.k_proj(key), self.num_heads)
                        v = split_heads(self.v_proj(value), self.num_heads)
                        if mask is not None and mask.dim() == 3:
                            mask = mask.unsqueeze(1)  # (B, 1, L_q, L_k): shared by the heads
                        out, weights = scaled_dot_product_attention(q, k, v, mask)
                        return self.out_proj(merge_heads(out)), weights
                '''
            )
        },
        {"test_mha_shapes": "value must default to key, not to query"},
        # Issue 40's eighth blind corpus, graded blind on 47d54b0: named.
    ),
    Mutant(
        "q02-03: a per-head (B, H, L_q, L_k) mask is given a head axis too",
        A,
        {
            "multi_head_attention": Rewrite(
                r'''
                class MultiHeadAttention(nn.Module):
                    """Multi-head attention: project, split into heads, attend, merge, project back."""

                    def __init__(self, d_model: int, num_heads: int):
                        super().__init__()
                        if d_model % num_heads != 0:
                            raise ValueError(
                                f"d_model = {d_model} is not divisible by num_heads = {num_heads}"
                            )
                        self.d_model = d_model
                        self.num_heads = num_heads
                        self.d_k = d_model // num_heads
                        self.q_proj = nn.Linear(d_model, d_model)
                        self.k_proj = nn.Linear(d_model, d_model)
                        self.v_proj = nn.Linear(d_model, d_model)
                        self.out_proj = nn.Linear(d_model, d_model)

                    def forward(
                        self,
                        query: Tensor,
                        key: Tensor | None = None,
                        value: Tensor | None = None,
                        mask: Tensor | None = None,
                    ) -> tuple[Tensor, Tensor]:
                        """query (B, L_q, d_model), key/value (B, L_k, d_model), mask True = may attend
                        -> (output (B, L_q, d_model), weights (B, H, L_q, L_k)).
                        """
                        if key is None:
                            key = query
                        if value is None:
                            value = key
                        q = split_heads(self.q_proj(query), self.num_heads)
                        k = split_heads(self.k_proj(key), self.num_heads)
                        v = split_heads(self.v_proj(value), self.num_heads)
                        if mask is not None and mask.dim() != 2:
                            mask = mask.unsqueeze(1)  # (B, 1, L_q, L_k): shared by the heads
                        out, weights = scaled_dot_product_attention(q, k, v, mask)
                        return self.out_proj(merge_heads(out)), weights
                '''
            )
        },
        {"test_mha_mask": "a (B, H, L_q, L_k) mask is given a head axis too"},
        # Issue 40's eighth blind corpus, graded blind on 47d54b0: named.
    ),
    Mutant(
        "q02-04: the ValueError shows neither d_model nor num_heads",
        A,
        {
            "multi_head_attention": Rewrite(
                r'''
                class MultiHeadAttention(nn.Module):
                    """Multi-head attention: project, split into heads, attend, merge, project back."""

                    def __init__(self, d_model: int, num_heads: int):
                        super().__init__()
                        if d_model % num_heads != 0:
                            raise ValueError("d_model must be divisible by num_heads")
                        self.d_model = d_model
                        self.num_heads = num_heads
                        self.d_k = d_model // num_heads
                        self.q_proj = nn.Linear(d_model, d_model)
                        self.k_proj = nn.Linear(d_model, d_model)
                        self.v_proj = nn.Linear(d_model, d_model)
                        self.out_proj = nn.Linear(d_model, d_model)

                    def forward(
                        self,
                        query: Tensor,
                        key: Tensor | None = None,
                        value: Tensor | None = None,
                        mask: Tensor | None = None,
                    ) -> tuple[Tensor, Tensor]:
                        """query (B, L_q, d_model), key/value (B, L_k, d_model), mask True = may attend
                        -> (output (B, L_q, d_model), weights (B, H, L_q, L_k)).
                        """
                        if key is None:
                            key = query
                        if value is None:
                            value = key
                        q = split_heads(self.q_proj(query), self.num_heads)
                        k = split_heads(self.k_proj(key), self.num_heads)
                        v = split_heads(self.v_proj(value), self.num_heads)
                        if mask is not None and mask.dim() == 3:
                            mask = mask.unsqueeze(1)  # (B, 1, L_q, L_k): shared by the heads
                        out, weights = scaled_dot_product_attention(q, k, v, mask)
                        return self.out_proj(merge_heads(out)), weights
                '''
            )
        },
        {"test_mha_shapes": "the statement asks for both numbers in it"},
        # Issue 40's eighth blind corpus, graded blind on 47d54b0: named.
    ),
    Mutant(
        "q02-05: heads_switched_off zeroes out_proj's columns of mha in place",
        A,
        {
            "heads_switched_off": Rewrite(
                r'''
                def heads_switched_off(mha: nn.Module, x: Tensor, keep: Tensor) -> Tensor:
                    """mha's self-attention on x (B, L, d_model), with only the heads keep (H,) marks.

                    -> (B, L, d_model).
                    """
                    # Design: a switched-off head contributes nothing: the columns of out_proj that
                    # read its d_k features are set to zero, so its output never reaches the result.
                    # Kept heads are not rescaled; with every head off only out_proj's bias remains.
                    with torch.no_grad():
                        for h in range(mha.num_heads):
                            if not bool(keep[h]):
                                mha.out_proj.weight[:, h * mha.d_k : (h + 1) * mha.d_k] = 0.0
                    return mha(x)[0]
                '''
            )
        },
        {
            "test_heads_switched_off": "heads_switched_off changed the parameters of the layer it was given"
        },
        # Issue 40's eighth blind corpus, graded blind on 47d54b0: named.
    ),
    Mutant(
        "r02-01: merge_heads permutes to (B, L, d_k, H)",
        A,
        {
            "merge_heads": Rewrite(
                r'''
                # id: r02-01
                # kind: wrong
                # grade_id: merge_heads
                # mistake: merges with permute(0, 2, 3, 1), which puts d_k before H, so the features of the heads are interleaved (feature j*H + h) instead of head h occupying the block h*d_k:(h+1)*d_k.
                # evidence: my experiment (scripts ev0N.py, output ev0N.txt in /work/fresh-corpus8b):
                #   r02-01: max |wrong merge - correct merge|: 4.433047771453857 | wrong features 0..3 at (0,0) = [-1.1258398294448853, 0.5988394618034363, -0.10230965167284012, -1.152360200881958] head0 = [-1.1258398294448853, -1.152360200881958, -0.2505785822868347, -0.4338788092136383]
                # public checks: FAILS public check(s): ERROR in test_merge_heads: AssertionError: features 0..3 of every position must be head 0's vector at that position (30 of 40 values differ; first at index (0, 0, 1): got -1.6115, expected -0.0898821); ERROR in test_mha_parity: AssertionError: outputs differ from nn.MultiheadAttention's although the per-head weights agree: the difference arises after the weights (weights @ v, the merge, out_proj)
                def merge_heads(x: Tensor) -> Tensor:
                    """(B, H, L, d_k) -> (B, L, H * d_k): concatenate the heads' features.

                    Head h lands at features h*d_k:(h+1)*d_k.
                    """
                    batch, heads, length, d_k = x.shape
                    # bring L next to B, then flatten the (d_k, H) axes into one feature axis
                    return x.permute(0, 2, 3, 1).reshape(batch, length, heads * d_k)
                '''
            )
        },
        {
            "test_merge_heads": "the heads' features are interleaved (head h at h, h+H, ...)",
            "test_mha_parity": "this cell uses your answer cell `merge_heads`",
        },
        # Issue 40's eighth blind corpus, graded blind on 47d54b0: named.
    ),
    Mutant(
        "r02-02: a per-head (B, H, L_q, L_k) mask is given a head axis too",
        A,
        {
            "multi_head_attention": Rewrite(
                r'''
                # id: r02-02
                # kind: wrong
                # grade_id: multi_head_attention
                # mistake: unsqueezes EVERY mask that is not 2-D, so a per-head mask (B, H, L_q, L_k), which the statement allows, becomes 5-D (B, 1, H, L_q, L_k) and the weights come out 5-D / wrongly broadcast.
                # evidence: my experiment (scripts ev0N.py, output ev0N.txt in /work/fresh-corpus8b):
                #   r02-02: correct with a (B,H,L,L) mask: out (2, 6, 12) weights (2, 3, 6, 6) | zero weight on hidden keys: True
                #   r02-02: r02-02 with a (B,H,L,L) mask raised ValueError expected mask broadcastable to (2, 3, 6, 6) (..., L_q, L_k), got (2, 1, 3, 6, 6)
                # public checks: passes every public check of the notebook
                class MultiHeadAttention(nn.Module):
                    """Multi-head attention: project, split into heads, attend, merge, project back."""

                    def __init__(self, d_model: int, num_heads: int):
                        super().__init__()
                        if d_model % num_heads != 0:
                            raise ValueError(
                                f"d_model = {d_model} is not divisible by num_heads = {num_heads}"
                            )
                        self.d_model = d_model
                        self.num_heads = num_heads
                        self.d_k = d_model // num_heads
                        self.q_proj = nn.Linear(d_model, d_model)
                        self.k_proj = nn.Linear(d_model, d_model)
                        self.v_proj = nn.Linear(d_model, d_model)
                        self.out_proj = nn.Linear(d_model, d_model)

                    def forward(
                        self,
                        query: Tensor,
                        key: Tensor | None = None,
                        value: Tensor | None = None,
                        mask: Tensor | None = None,
                    ) -> tuple[Tensor, Tensor]:
                        """query (B, L_q, d_model), key/value (B, L_k, d_model), mask True = may attend
                        -> (output (B, L_q, d_model), weights (B, H, L_q, L_k)).
                        """
                        if key is None:
                            key = query
                        if value is None:
                            value = key
                        q = split_heads(self.q_proj(query), self.num_heads)
                        k = split_heads(self.k_proj(key), self.num_heads)
                        v = split_heads(self.v_proj(value), self.num_heads)
                        if mask is not None and mask.dim() != 2:
                            # a batched mask needs a head axis so that every head gets it
                            mask = mask.unsqueeze(1)
                        out, weights = scaled_dot_product_attention(q, k, v, mask)
                        return self.out_proj(merge_heads(out)), weights
                '''
            )
        },
        {"test_mha_mask": "a (B, H, L_q, L_k) mask is given a head axis too"},
        # Issue 40's eighth blind corpus, graded blind on 47d54b0: named.
    ),
    Mutant(
        "r02-03: the ValueError shows neither d_model nor num_heads",
        A,
        {
            "multi_head_attention": Rewrite(
                r'''
                # id: r02-03
                # kind: wrong
                # grade_id: multi_head_attention
                # mistake: the ValueError for a d_model not divisible by num_heads has a generic message that shows neither number (the statement asks for a message that says so and shows both numbers).
                # evidence: my experiment (scripts ev0N.py, output ev0N.txt in /work/fresh-corpus8b):
                #   r02-03: correct ValueError message: 'd_model = 10 is not divisible by num_heads = 3'
                #   r02-03: r02-03 ValueError message: 'd_model must be divisible by num_heads'
                # public checks: passes every public check of the notebook
                class MultiHeadAttention(nn.Module):
                    """Multi-head attention: project, split into heads, attend, merge, project back."""

                    def __init__(self, d_model: int, num_heads: int):
                        super().__init__()
                        if d_model % num_heads != 0:
                            raise ValueError("d_model must be divisible by num_heads")
                        self.d_model = d_model
                        self.num_heads = num_heads
                        self.d_k = d_model // num_heads
                        self.q_proj = nn.Linear(d_model, d_model)
                        self.k_proj = nn.Linear(d_model, d_model)
                        self.v_proj = nn.Linear(d_model, d_model)
                        self.out_proj = nn.Linear(d_model, d_model)

                    def forward(
                        self,
                        query: Tensor,
                        key: Tensor | None = None,
                        value: Tensor | None = None,
                        mask: Tensor | None = None,
                    ) -> tuple[Tensor, Tensor]:
                        """query (B, L_q, d_model), key/value (B, L_k, d_model), mask True = may attend
                        -> (output (B, L_q, d_model), weights (B, H, L_q, L_k)).
                        """
                        if key is None:
                            key = query
                        if value is None:
                            value = key
                        q = split_heads(self.q_proj(query), self.num_heads)
                        k = split_heads(self.k_proj(key), self.num_heads)
                        v = split_heads(self.v_proj(value), self.num_heads)
                        if mask is not None and mask.dim() == 3:
                            mask = mask.unsqueeze(1)  # (B, 1, L_q, L_k): shared by the heads
                        out, weights = scaled_dot_product_attention(q, k, v, mask)
                        return self.out_proj(merge_heads(out)), weights
                '''
            )
        },
        {"test_mha_shapes": "the statement asks for both numbers in it"},
        # Issue 40's eighth blind corpus, graded blind on 47d54b0: named.
    ),
    Mutant(
        "r02-04: heads_switched_off zeroes v_proj's rows of mha in place",
        A,
        {
            "heads_switched_off": Rewrite(
                r'''
                # id: r02-04
                # kind: wrong
                # grade_id: heads_switched_off
                # mistake: switches heads off by zeroing their rows of mha.v_proj IN PLACE and never restores them, so mha is left changed (the statement says to leave mha unchanged) and every later call on the same layer uses the damaged weights.
                # evidence: my experiment (scripts ev0N.py, output ev0N.txt in /work/fresh-corpus8b):
                #   r02-04: correct | parameters changed by the call: [] | next all-on call equals the original mha(x): True
                #   r02-04: r02-04 | parameters changed by the call: ['v_proj.weight', 'v_proj.bias'] | next all-on call equals the original mha(x): False
                # public checks: passes every public check of the notebook
                def heads_switched_off(mha: nn.Module, x: Tensor, keep: Tensor) -> Tensor:
                    """mha's self-attention on x (B, L, d_model), with only the heads keep (H,) marks.

                    -> (B, L, d_model).
                    """
                    # Design: a head whose values are all zero contributes nothing to the merge, so
                    # I zero the value rows (weight and bias) of every switched-off head and run the
                    # layer as it is. The kept heads are not rescaled; with every head off only
                    # out_proj's bias remains.
                    d_k = mha.d_k
                    with torch.no_grad():
                        for h in range(mha.num_heads):
                            if not bool(keep[h]):
                                mha.v_proj.weight[h * d_k : (h + 1) * d_k] = 0.0
                                mha.v_proj.bias[h * d_k : (h + 1) * d_k] = 0.0
                    return mha(x)[0]
                '''
            )
        },
        {
            "test_heads_switched_off": "heads_switched_off changed the parameters of the layer it was given"
        },
        # Issue 40's eighth blind corpus, graded blind on 47d54b0: named.
    ),
    Mutant(
        "r02-05: split_heads views the features as (d_k, H), not (H, d_k)",
        A,
        {
            "split_heads": Rewrite(
                r'''
                # id: r02-05
                # kind: wrong
                # grade_id: split_heads
                # mistake: cuts the feature axis into d_k groups of H (reshape to (B, L, d_k, H)) instead of H blocks of d_k, so head h gets the strided features h, h+H, h+2H, ... instead of h*d_k:(h+1)*d_k.
                # evidence: my experiment (scripts ev0N.py, output ev0N.txt in /work/fresh-corpus8b):
                #   r02-05: head 0 of position 0, correct: [0.0, 1.0, 2.0, 3.0] | wrong: [0.0, 3.0, 6.0, 9.0]
                # public checks: FAILS public check(s): ERROR in test_split_heads: AssertionError: head 0 must hold features 0..3 of every position, x[..., 0:4] (30 of 40 values differ; first at index (0, 0, 1): got -0.433879, expected -1.15236); ERROR in test_mha_parity: AssertionError: per-head weights differ from nn.MultiheadAttention's with the same projection weights (150 of 150 values differ; first at index (0, 0, 0, 0): got 0.0931098, expected 0
                def split_heads(x: Tensor, num_heads: int) -> Tensor:
                    """(B, L, d_model) -> (B, H, L, d_k) with d_k = d_model // H.

                    Head h holds features h*d_k:(h+1)*d_k.
                    """
                    batch, length, d_model = x.shape
                    d_k = d_model // num_heads
                    # (B, L, d_k, H) -> (B, H, L, d_k)
                    return x.reshape(batch, length, d_k, num_heads).permute(0, 3, 1, 2)
                '''
            )
        },
        {
            "test_split_heads": "head h got the interleaved features h, h+H, h+2H, ...",
            "test_mha_parity": "weights differ as if each head got interleaved features h, h+H, ...",
        },
        # Issue 40's eighth blind corpus, graded blind on 47d54b0: named.
    ),
    Mutant(
        "s02-01: split_heads views (B, L, d_model) as (B, H, L, d_k) without a transpose",
        A,
        {
            "split_heads": Rewrite(
                r'''
                def split_heads(x: Tensor, num_heads: int) -> Tensor:
                    """(B, L, d_model) -> (B, H, L, d_k) with d_k = d_model // H.

                    Head h holds features h*d_k:(h+1)*d_k.
                    """
                    B, L, d_model = x.shape
                    d_k = d_model // num_heads
                    return x.reshape(B, num_heads, L, d_k)
                '''
            )
        },
        {
            "test_split_heads": "heads split without a transpose",
            "test_mha_mask": "this cell uses your answer cell `split_heads`",
            "test_mha_parity": "weights differ as if the heads were split without a transpose",
        },
        # Issue 40's ninth blind corpus, graded blind on feb0b2e: named.
    ),
    Mutant(
        "s02-02: value = key if value is None else key, a given value ignored",
        A,
        {
            "multi_head_attention": Rewrite(
                r'''
                class MultiHeadAttention(nn.Module):
                    """Multi-head attention: project, split into heads, attend, merge, project back."""

                    def __init__(self, d_model: int, num_heads: int):
                        super().__init__()
                        if d_model % num_heads != 0:
                            raise ValueError(
                                f"d_model = {d_model} is not divisible by num_heads = {num_heads}"
                            )
                        self.d_model = d_model
                        self.num_heads = num_heads
                        self.d_k = d_model // num_heads
                        self.q_proj = nn.Linear(d_model, d_model)
                        self.k_proj = nn.Linear(d_model, d_model)
                        self.v_proj = nn.Linear(d_model, d_model)
                        self.out_proj = nn.Linear(d_model, d_model)

                    def forward(
                        self,
                        query: Tensor,
                        key: Tensor | None = None,
                        value: Tensor | None = None,
                        mask: Tensor | None = None,
                    ) -> tuple[Tensor, Tensor]:
                        """query (B, L_q, d_model), key/value (B, L_k, d_model), mask True = may attend
                        -> (output (B, L_q, d_model), weights (B, H, L_q, L_k)).
                        """
                        if key is None:
                            key = query
                        value = key if value is None else key
                        q = split_heads(self.q_proj(query), self.num_heads)
                        k = split_heads(self.k_proj(key), self.num_heads)
                        v = split_heads(self.v_proj(value), self.num_heads)
                        if mask is not None and mask.dim() == 3:
                            mask = mask.unsqueeze(1)
                        out, weights = scaled_dot_product_attention(q, k, v, mask)
                        return self.out_proj(merge_heads(out)), weights
                '''
            )
        },
        {
            "test_mha_parity": "the values are projected from `key` instead of `value`",
        },
        # Issue 40's ninth blind corpus, graded blind on feb0b2e: named.
    ),
    Mutant(
        "s02-03: kept heads rescaled by H over their number, NaN with every head off",
        A,
        {
            "heads_switched_off": Rewrite(
                r'''
                def heads_switched_off(mha: nn.Module, x: Tensor, keep: Tensor) -> Tensor:
                    """mha's self-attention on x (B, L, d_model), with only the heads keep (H,) marks.

                    -> (B, L, d_model).
                    """
                    # Design: a switched-off head's output is set to zero before out_proj; the kept
                    # heads are scaled up by H / kept (as dropout does) so the total stays comparable.
                    B, L, _ = x.shape
                    H, d_k = mha.num_heads, mha.d_k
                    q = mha.q_proj(x).view(B, L, H, d_k).transpose(1, 2)
                    k = mha.k_proj(x).view(B, L, H, d_k).transpose(1, 2)
                    v = mha.v_proj(x).view(B, L, H, d_k).transpose(1, 2)
                    heads, _ = scaled_dot_product_attention(q, k, v)
                    gate = keep.to(heads.dtype).view(1, H, 1, 1) * (H / keep.sum())
                    heads = heads * gate
                    return mha.out_proj(heads.transpose(1, 2).reshape(B, L, H * d_k))
                '''
            )
        },
        {
            "test_heads_switched_off": "your rescale divides by the number of kept heads, which is 0 when every head is off",
        },
        # Issue 40's ninth blind corpus, graded blind on feb0b2e: named.
    ),
    Mutant(
        "s02-04: heads switched off by zeroing v_proj's rows of mha in place",
        A,
        {
            "heads_switched_off": Rewrite(
                r'''
                def heads_switched_off(mha: nn.Module, x: Tensor, keep: Tensor) -> Tensor:
                    """mha's self-attention on x (B, L, d_model), with only the heads keep (H,) marks.

                    -> (B, L, d_model).
                    """
                    # Design: an off head gets zero value vectors (its rows of v_proj are zeroed), so
                    # it contributes nothing to what out_proj reads. Kept heads are not rescaled.
                    # With every head off only out_proj's bias remains.
                    d_k = mha.d_k
                    with torch.no_grad():
                        for h in range(mha.num_heads):
                            if not keep[h]:
                                mha.v_proj.weight[h * d_k : (h + 1) * d_k] = 0.0
                                mha.v_proj.bias[h * d_k : (h + 1) * d_k] = 0.0
                    return mha(x)[0]
                '''
            )
        },
        {
            "test_heads_switched_off": "heads_switched_off changed the parameters of the layer it was given",
        },
        # Issue 40's ninth blind corpus, graded blind on feb0b2e: named.
    ),
    Mutant(
        "s02-05: a 3-D mask whose first size is num_heads taken for a per-head mask",
        A,
        {
            "multi_head_attention": Rewrite(
                r'''
                class MultiHeadAttention(nn.Module):
                    """Multi-head attention: project, split into heads, attend, merge, project back."""

                    def __init__(self, d_model: int, num_heads: int):
                        super().__init__()
                        if d_model % num_heads != 0:
                            raise ValueError(
                                f"d_model = {d_model} is not divisible by num_heads = {num_heads}"
                            )
                        self.d_model = d_model
                        self.num_heads = num_heads
                        self.d_k = d_model // num_heads
                        self.q_proj = nn.Linear(d_model, d_model)
                        self.k_proj = nn.Linear(d_model, d_model)
                        self.v_proj = nn.Linear(d_model, d_model)
                        self.out_proj = nn.Linear(d_model, d_model)

                    def forward(
                        self,
                        query: Tensor,
                        key: Tensor | None = None,
                        value: Tensor | None = None,
                        mask: Tensor | None = None,
                    ) -> tuple[Tensor, Tensor]:
                        """query (B, L_q, d_model), key/value (B, L_k, d_model), mask True = may attend
                        -> (output (B, L_q, d_model), weights (B, H, L_q, L_k)).
                        """
                        if key is None:
                            key = query
                        if value is None:
                            value = key
                        q = split_heads(self.q_proj(query), self.num_heads)
                        k = split_heads(self.k_proj(key), self.num_heads)
                        v = split_heads(self.v_proj(value), self.num_heads)
                        if mask is not None and mask.dim() == 3 and mask.shape[0] != self.num_heads:
                            # (B, L_q, L_k): one mask per sentence, shared by its heads;
                            # a first axis of num_heads is already one mask per head
                            mask = mask.unsqueeze(1)
                        out, weights = scaled_dot_product_attention(q, k, v, mask)
                        return self.out_proj(merge_heads(out)), weights
                '''
            )
        },
        {
            "test_mha_mask": "sentence b's (B, L_q, L_k) mask hid keys in head b of every sentence",
        },
        # Issue 40's ninth blind corpus, graded blind on feb0b2e: named.
        makes=("MultiHeadAttention.sentence_masks_mishandled",),
    ),
    Mutant(
        "t02-01: split_heads transposes before cutting the features",
        A,
        {
            "split_heads": Rewrite(
                r'''
                def split_heads(x: Tensor, num_heads: int) -> Tensor:
                    """(B, L, d_model) -> (B, H, L, d_k) with d_k = d_model // H.

                    Head h holds features h*d_k:(h+1)*d_k.
                    """
                    B, L, d_model = x.shape
                    d_k = d_model // num_heads
                    # bring the features in front of the positions, then cut them into heads
                    return x.transpose(1, 2).reshape(B, num_heads, L, d_k)
                '''
            )
        },
        {
            "test_split_heads": "transposed before viewing",
            "test_mha_mask": "this cell uses your answer cell `split_heads`",
            "test_mha_parity": "this cell uses your answer cell `split_heads`",
        },
        # Issue 40's ninth blind corpus, graded blind on feb0b2e: named.
    ),
    Mutant(
        "t02-02: a 3-D mask whose first size is num_heads taken for a per-head mask",
        A,
        {
            "multi_head_attention": Rewrite(
                r'''
                class MultiHeadAttention(nn.Module):
                    """Multi-head attention: project, split into heads, attend, merge, project back."""

                    def __init__(self, d_model: int, num_heads: int):
                        super().__init__()
                        if d_model % num_heads != 0:
                            raise ValueError(
                                f"d_model = {d_model} is not divisible by num_heads = {num_heads}"
                            )
                        self.d_model = d_model
                        self.num_heads = num_heads
                        self.d_k = d_model // num_heads
                        self.q_proj = nn.Linear(d_model, d_model)
                        self.k_proj = nn.Linear(d_model, d_model)
                        self.v_proj = nn.Linear(d_model, d_model)
                        self.out_proj = nn.Linear(d_model, d_model)

                    def forward(
                        self,
                        query: Tensor,
                        key: Tensor | None = None,
                        value: Tensor | None = None,
                        mask: Tensor | None = None,
                    ) -> tuple[Tensor, Tensor]:
                        """query (B, L_q, d_model), key/value (B, L_k, d_model), mask True = may attend
                        -> (output (B, L_q, d_model), weights (B, H, L_q, L_k)).
                        """
                        if key is None:
                            key = query
                        if value is None:
                            value = key
                        q = split_heads(self.q_proj(query), self.num_heads)
                        k = split_heads(self.k_proj(key), self.num_heads)
                        v = split_heads(self.v_proj(value), self.num_heads)
                        if mask is not None and mask.dim() == 3 and mask.shape[0] != self.num_heads:
                            # (B, L_q, L_k): one mask per sentence, shared by its heads.
                            # (A 3-D mask with num_heads entries is already one per head.)
                            mask = mask.unsqueeze(1)
                        out, weights = scaled_dot_product_attention(q, k, v, mask)
                        return self.out_proj(merge_heads(out)), weights
                '''
            )
        },
        {
            "test_mha_mask": "sentence b's (B, L_q, L_k) mask hid keys in head b of every sentence",
        },
        # Issue 40's ninth blind corpus, graded blind on feb0b2e: named.
        makes=("MultiHeadAttention.sentence_masks_mishandled",),
    ),
    Mutant(
        "t02-03: heads switched off by zeroing v_proj's rows of mha in place",
        A,
        {
            "heads_switched_off": Rewrite(
                r'''
                def heads_switched_off(mha: nn.Module, x: Tensor, keep: Tensor) -> Tensor:
                    """mha's self-attention on x (B, L, d_model), with only the heads keep (H,) marks.

                    -> (B, L, d_model).
                    """
                    # Design: a switched-off head gets zero value vectors (its rows of v_proj's weight
                    # and bias are set to 0), so whatever it attends to, it contributes a zero vector
                    # to the concatenation; its queries and keys then no longer matter. The kept heads
                    # are not rescaled. With every head off only out_proj's bias remains.
                    d_k = mha.d_k
                    with torch.no_grad():
                        for h in range(mha.num_heads):
                            if not bool(keep[h]):
                                mha.v_proj.weight[h * d_k : (h + 1) * d_k] = 0.0
                                mha.v_proj.bias[h * d_k : (h + 1) * d_k] = 0.0
                    return mha(x)[0]
                '''
            )
        },
        {
            "test_heads_switched_off": "heads_switched_off changed the parameters of the layer it was given",
        },
        # Issue 40's ninth blind corpus, graded blind on feb0b2e: named.
    ),
    Mutant(
        "t02-04: queries divided by √d_k before an attention that scales again",
        A,
        {
            "multi_head_attention": Rewrite(
                r'''
                class MultiHeadAttention(nn.Module):
                    """Multi-head attention: project, split into heads, attend, merge, project back."""

                    def __init__(self, d_model: int, num_heads: int):
                        super().__init__()
                        if d_model % num_heads != 0:
                            raise ValueError(
                                f"d_model = {d_model} is not divisible by num_heads = {num_heads}"
                            )
                        self.d_model = d_model
                        self.num_heads = num_heads
                        self.d_k = d_model // num_heads
                        self.q_proj = nn.Linear(d_model, d_model)
                        self.k_proj = nn.Linear(d_model, d_model)
                        self.v_proj = nn.Linear(d_model, d_model)
                        self.out_proj = nn.Linear(d_model, d_model)

                    def forward(
                        self,
                        query: Tensor,
                        key: Tensor | None = None,
                        value: Tensor | None = None,
                        mask: Tensor | None = None,
                    ) -> tuple[Tensor, Tensor]:
                        """query (B, L_q, d_model), key/value (B, L_k, d_model), mask True = may attend
                        -> (output (B, L_q, d_model), weights (B, H, L_q, L_k)).
                        """
                        if key is None:
                            key = query
                        if value is None:
                            value = key
                        q = split_heads(self.q_proj(query), self.num_heads)
                        q = q / self.d_k**0.5  # scaled dot-product: divide by sqrt(d_k)
                        k = split_heads(self.k_proj(key), self.num_heads)
                        v = split_heads(self.v_proj(value), self.num_heads)
                        if mask is not None and mask.dim() == 3:
                            # (B, L_q, L_k): one mask per sentence, shared by its heads.

                            mask = mask.unsqueeze(1)
                        out, weights = scaled_dot_product_attention(q, k, v, mask)
                        return self.out_proj(merge_heads(out)), weights
                '''
            )
        },
        {
            "test_mha_parity": "each head's scores are divided by d_k instead of √d_k",
        },
        # Issue 40's ninth blind corpus, graded blind on feb0b2e: named.
    ),
    Mutant(
        "t02-05: merge_heads ends with squeeze()",
        A,
        {
            "merge_heads": Rewrite(
                r'''
                def merge_heads(x: Tensor) -> Tensor:
                    """(B, H, L, d_k) -> (B, L, H * d_k): concatenate the heads' features.

                    Head h lands at features h*d_k:(h+1)*d_k.
                    """
                    B, H, L, d_k = x.shape
                    return x.transpose(1, 2).reshape(B, L, H * d_k).squeeze()
                '''
            )
        },
        {
            "test_merge_heads": "an axis of size 1 disappeared",
            "test_mha_shapes": "an axis of size 1 disappeared",
            "test_mha_parity": "an axis of size 1 disappeared",
        },
        # Issue 40's ninth blind corpus, graded blind on feb0b2e: named.
    ),
    Mutant(
        "u02-01: split_heads reshapes (B, L, d_model) to (B, H, L, d_k) without a transpose",
        A,
        {
            "split_heads": Rewrite(
                r'''
                def split_heads(x: Tensor, num_heads: int) -> Tensor:
                    """(B, L, d_model) -> (B, H, L, d_k) with d_k = d_model // H.

                    Head h holds features h*d_k:(h+1)*d_k.
                    """
                    B, L, d_model = x.shape
                    d_k = d_model // num_heads
                    return x.reshape(B, num_heads, L, d_k)
                '''
            )
        },
        {
            "test_split_heads": "heads split without a transpose",
            "test_mha_mask": "this cell uses your answer cell `split_heads`",
            "test_mha_parity": "weights differ as if the heads were split without a transpose",
        },
        # Issue 40's tenth blind corpus, graded blind on 60c32e8: named; test_mha_mask and
        # test_mha_parity not charged again.
    ),
    Mutant(
        "u02-02: values projected from key, v_proj(key)",
        A,
        {
            "multi_head_attention": Rewrite(
                r'''
                class MultiHeadAttention(nn.Module):
                    """Multi-head attention: project, split into heads, attend, merge, project back."""

                    def __init__(self, d_model: int, num_heads: int):
                        super().__init__()
                        if d_model % num_heads != 0:
                            raise ValueError(
                                f"d_model = {d_model} is not divisible by num_heads = {num_heads}"
                            )
                        self.d_model = d_model
                        self.num_heads = num_heads
                        self.d_k = d_model // num_heads
                        self.q_proj = nn.Linear(d_model, d_model)
                        self.k_proj = nn.Linear(d_model, d_model)
                        self.v_proj = nn.Linear(d_model, d_model)
                        self.out_proj = nn.Linear(d_model, d_model)

                    def forward(
                        self,
                        query: Tensor,
                        key: Tensor | None = None,
                        value: Tensor | None = None,
                        mask: Tensor | None = None,
                    ) -> tuple[Tensor, Tensor]:
                        """query (B, L_q, d_model), key/value (B, L_k, d_model), mask True = may attend
                        -> (output (B, L_q, d_model), weights (B, H, L_q, L_k)).
                        """
                        if key is None:
                            key = query
                        if value is None:
                            value = key
                        q = split_heads(self.q_proj(query), self.num_heads)
                        k = split_heads(self.k_proj(key), self.num_heads)
                        v = split_heads(self.v_proj(key), self.num_heads)
                        if mask is not None and mask.dim() == 3:
                            mask = mask.unsqueeze(1)
                        heads, weights = scaled_dot_product_attention(q, k, v, mask)
                        return self.out_proj(merge_heads(heads)), weights
                '''
            )
        },
        {
            "test_mha_parity": "the values are projected from `key` instead of `value`",
        },
        # Issue 40's tenth blind corpus, graded blind on 60c32e8: named.
    ),
    Mutant(
        "u02-03: a 3-D mask repeated H times and viewed as (B, H, L_q, L_k)",
        A,
        {
            "multi_head_attention": Rewrite(
                r'''
                class MultiHeadAttention(nn.Module):
                    """Multi-head attention: project, split into heads, attend, merge, project back."""

                    def __init__(self, d_model: int, num_heads: int):
                        super().__init__()
                        if d_model % num_heads != 0:
                            raise ValueError(
                                f"d_model = {d_model} is not divisible by num_heads = {num_heads}"
                            )
                        self.d_model = d_model
                        self.num_heads = num_heads
                        self.d_k = d_model // num_heads
                        self.q_proj = nn.Linear(d_model, d_model)
                        self.k_proj = nn.Linear(d_model, d_model)
                        self.v_proj = nn.Linear(d_model, d_model)
                        self.out_proj = nn.Linear(d_model, d_model)

                    def forward(
                        self,
                        query: Tensor,
                        key: Tensor | None = None,
                        value: Tensor | None = None,
                        mask: Tensor | None = None,
                    ) -> tuple[Tensor, Tensor]:
                        """query (B, L_q, d_model), key/value (B, L_k, d_model), mask True = may attend
                        -> (output (B, L_q, d_model), weights (B, H, L_q, L_k)).
                        """
                        if key is None:
                            key = query
                        if value is None:
                            value = key
                        B = query.shape[0]
                        q = split_heads(self.q_proj(query), self.num_heads)
                        k = split_heads(self.k_proj(key), self.num_heads)
                        v = split_heads(self.v_proj(value), self.num_heads)
                        if mask is not None and mask.dim() == 3:
                            # one mask per (sentence, head), as nn.MultiheadAttention wants
                            L_q, L_k = mask.shape[-2:]
                            mask = mask.repeat(self.num_heads, 1, 1).view(B, self.num_heads, L_q, L_k)
                        heads, weights = scaled_dot_product_attention(q, k, v, mask)
                        return self.out_proj(merge_heads(heads)), weights
                '''
            )
        },
        {"test_mha_mask": "the sentence masks were repeated H times one after the other"},
        # Issue 40's tenth blind corpus, graded blind on 60c32e8: untrue (true since); charged in
        # the parity cell too (since, waived there as the same mistake).
        makes=("MultiHeadAttention.sentence_masks_mishandled",),
        charged_once=True,
    ),
    Mutant(
        "u02-04: q, k and v projections one shared nn.Linear, [layer] * 3",
        A,
        {
            "multi_head_attention": Rewrite(
                r'''
                class MultiHeadAttention(nn.Module):
                    """Multi-head attention: project, split into heads, attend, merge, project back."""

                    def __init__(self, d_model: int, num_heads: int):
                        super().__init__()
                        if d_model % num_heads != 0:
                            raise ValueError(
                                f"d_model = {d_model} is not divisible by num_heads = {num_heads}"
                            )
                        self.d_model = d_model
                        self.num_heads = num_heads
                        self.d_k = d_model // num_heads
                        self.q_proj, self.k_proj, self.v_proj = [nn.Linear(d_model, d_model)] * 3
                        self.out_proj = nn.Linear(d_model, d_model)

                    def forward(
                        self,
                        query: Tensor,
                        key: Tensor | None = None,
                        value: Tensor | None = None,
                        mask: Tensor | None = None,
                    ) -> tuple[Tensor, Tensor]:
                        """query (B, L_q, d_model), key/value (B, L_k, d_model), mask True = may attend
                        -> (output (B, L_q, d_model), weights (B, H, L_q, L_k)).
                        """
                        if key is None:
                            key = query
                        if value is None:
                            value = key
                        q = split_heads(self.q_proj(query), self.num_heads)
                        k = split_heads(self.k_proj(key), self.num_heads)
                        v = split_heads(self.v_proj(value), self.num_heads)
                        if mask is not None and mask.dim() == 3:
                            mask = mask.unsqueeze(1)
                        heads, weights = scaled_dot_product_attention(q, k, v, mask)
                        return self.out_proj(merge_heads(heads)), weights
                '''
            )
        },
        {
            "test_mha_shapes": "q_proj, k_proj, v_proj hold one weight tensor (one object)",
        },
        # Issue 40's tenth blind corpus, graded blind on 60c32e8: counterexample (named since).
    ),
    Mutant(
        "u02-05: heads switched off by zeroing out_proj's columns in place",
        A,
        {
            "heads_switched_off": Rewrite(
                r'''
                def heads_switched_off(mha: nn.Module, x: Tensor, keep: Tensor) -> Tensor:
                    """mha's self-attention on x (B, L, d_model), with only the heads keep (H,) marks.

                    -> (B, L, d_model).
                    """
                    # Design: a switched-off head contributes nothing: the columns of W_O that read its
                    # d_k features are set to zero, so out_proj ignores it. Kept heads are not rescaled.
                    # With every head off the output is out_proj's bias.
                    d_k = mha.d_k
                    with torch.no_grad():
                        for h in range(mha.num_heads):
                            if not bool(keep[h]):
                                mha.out_proj.weight[:, h * d_k : (h + 1) * d_k] = 0.0
                    return mha(x)[0]
                '''
            )
        },
        {
            "test_heads_switched_off": "heads_switched_off changed the parameters of the layer it was given",
        },
        # Issue 40's tenth blind corpus, graded blind on 60c32e8: named.
    ),
    Mutant(
        "v02-01: merge_heads permutes to (B, L, d_k, H), the heads interleaved",
        A,
        {
            "merge_heads": Rewrite(
                r'''
                def merge_heads(x: Tensor) -> Tensor:
                    """(B, H, L, d_k) -> (B, L, H * d_k): concatenate the heads' features.

                    Head h lands at features h*d_k:(h+1)*d_k.
                    """
                    B, H, L, d_k = x.shape
                    return x.permute(0, 2, 3, 1).reshape(B, L, H * d_k)
                '''
            )
        },
        {
            "test_merge_heads": "the heads' features are interleaved (head h at h, h+H, ...)",
            "test_mha_parity": "this cell uses your answer cell `merge_heads`",
        },
        # Issue 40's tenth blind corpus, graded blind on 60c32e8: named; test_mha_parity not charged
        # again.
    ),
    Mutant(
        "v02-02: the ValueError does not show d_model and num_heads",
        A,
        {
            "multi_head_attention": Rewrite(
                r'''
                class MultiHeadAttention(nn.Module):
                    """Multi-head attention: project, split into heads, attend, merge, project back."""

                    def __init__(self, d_model: int, num_heads: int):
                        super().__init__()
                        if d_model % num_heads != 0:
                            raise ValueError("d_model must be divisible by num_heads")
                        self.d_model = d_model
                        self.num_heads = num_heads
                        self.d_k = d_model // num_heads
                        self.q_proj = nn.Linear(d_model, d_model)
                        self.k_proj = nn.Linear(d_model, d_model)
                        self.v_proj = nn.Linear(d_model, d_model)
                        self.out_proj = nn.Linear(d_model, d_model)

                    def forward(
                        self,
                        query: Tensor,
                        key: Tensor | None = None,
                        value: Tensor | None = None,
                        mask: Tensor | None = None,
                    ) -> tuple[Tensor, Tensor]:
                        """query (B, L_q, d_model), key/value (B, L_k, d_model), mask True = may attend
                        -> (output (B, L_q, d_model), weights (B, H, L_q, L_k)).
                        """
                        if key is None:
                            key = query
                        if value is None:
                            value = key
                        q = split_heads(self.q_proj(query), self.num_heads)
                        k = split_heads(self.k_proj(key), self.num_heads)
                        v = split_heads(self.v_proj(value), self.num_heads)
                        if mask is not None and mask.dim() == 3:
                            mask = mask.unsqueeze(1)
                        out, weights = scaled_dot_product_attention(q, k, v, mask)
                        return self.out_proj(merge_heads(out)), weights
                '''
            )
        },
        {
            "test_mha_shapes": "the statement asks for both numbers in it",
        },
        # Issue 40's tenth blind corpus, graded blind on 60c32e8: named.
    ),
    Mutant(
        "v02-03: value defaults to query, not key",
        A,
        {
            "multi_head_attention": Rewrite(
                r'''
                class MultiHeadAttention(nn.Module):
                    """Multi-head attention: project, split into heads, attend, merge, project back."""

                    def __init__(self, d_model: int, num_heads: int):
                        super().__init__()
                        if d_model % num_heads != 0:
                            raise ValueError(
                                f"d_model = {d_model} is not divisible by num_heads = {num_heads}"
                            )
                        self.d_model = d_model
                        self.num_heads = num_heads
                        self.d_k = d_model // num_heads
                        self.q_proj = nn.Linear(d_model, d_model)
                        self.k_proj = nn.Linear(d_model, d_model)
                        self.v_proj = nn.Linear(d_model, d_model)
                        self.out_proj = nn.Linear(d_model, d_model)

                    def forward(
                        self,
                        query: Tensor,
                        key: Tensor | None = None,
                        value: Tensor | None = None,
                        mask: Tensor | None = None,
                    ) -> tuple[Tensor, Tensor]:
                        """query (B, L_q, d_model), key/value (B, L_k, d_model), mask True = may attend
                        -> (output (B, L_q, d_model), weights (B, H, L_q, L_k)).
                        """
                        if key is None:
                            key = query
                        if value is None:
                            value = query
                        q = split_heads(self.q_proj(query), self.num_heads)
                        k = split_heads(self.k_proj(key), self.num_heads)
                        v = split_heads(self.v_proj(value), self.num_heads)
                        if mask is not None and mask.dim() == 3:
                            mask = mask.unsqueeze(1)
                        out, weights = scaled_dot_product_attention(q, k, v, mask)
                        return self.out_proj(merge_heads(out)), weights
                '''
            )
        },
        {
            "test_mha_shapes": "value must default to key, not to query",
        },
        # Issue 40's tenth blind corpus, graded blind on 60c32e8: named.
    ),
    Mutant(
        "v02-04: a head axis added to every mask that is not 2-D",
        A,
        {
            "multi_head_attention": Rewrite(
                r'''
                class MultiHeadAttention(nn.Module):
                    """Multi-head attention: project, split into heads, attend, merge, project back."""

                    def __init__(self, d_model: int, num_heads: int):
                        super().__init__()
                        if d_model % num_heads != 0:
                            raise ValueError(
                                f"d_model = {d_model} is not divisible by num_heads = {num_heads}"
                            )
                        self.d_model = d_model
                        self.num_heads = num_heads
                        self.d_k = d_model // num_heads
                        self.q_proj = nn.Linear(d_model, d_model)
                        self.k_proj = nn.Linear(d_model, d_model)
                        self.v_proj = nn.Linear(d_model, d_model)
                        self.out_proj = nn.Linear(d_model, d_model)

                    def forward(
                        self,
                        query: Tensor,
                        key: Tensor | None = None,
                        value: Tensor | None = None,
                        mask: Tensor | None = None,
                    ) -> tuple[Tensor, Tensor]:
                        """query (B, L_q, d_model), key/value (B, L_k, d_model), mask True = may attend
                        -> (output (B, L_q, d_model), weights (B, H, L_q, L_k)).
                        """
                        if key is None:
                            key = query
                        if value is None:
                            value = key
                        q = split_heads(self.q_proj(query), self.num_heads)
                        k = split_heads(self.k_proj(key), self.num_heads)
                        v = split_heads(self.v_proj(value), self.num_heads)
                        if mask is not None and mask.dim() != 2:
                            mask = mask.unsqueeze(1)
                        out, weights = scaled_dot_product_attention(q, k, v, mask)
                        return self.out_proj(merge_heads(out)), weights
                '''
            )
        },
        {
            "test_mha_mask": "a (B, H, L_q, L_k) mask is given a head axis too",
        },
        # Issue 40's tenth blind corpus, graded blind on 60c32e8: named.
    ),
    Mutant(
        "v02-05: heads switched off by zeroing v_proj's rows in place",
        A,
        {
            "heads_switched_off": Rewrite(
                r'''
                def heads_switched_off(mha: nn.Module, x: Tensor, keep: Tensor) -> Tensor:
                    """mha's self-attention on x (B, L, d_model), with only the heads keep (H,) marks.

                    -> (B, L, d_model).
                    """
                    # Design: a switched-off head gets zero value vectors, so its attention output is 0
                    # and it contributes nothing to out_proj; kept heads are not rescaled; with every
                    # head off only out_proj's bias remains.
                    d_k = mha.d_k
                    with torch.no_grad():
                        for h in range(mha.num_heads):
                            if not bool(keep[h]):
                                mha.v_proj.weight[h * d_k : (h + 1) * d_k] = 0.0
                                mha.v_proj.bias[h * d_k : (h + 1) * d_k] = 0.0
                        return mha(x)[0]
                '''
            )
        },
        {
            "test_heads_switched_off": "heads_switched_off changed the parameters of the layer it was given",
        },
        # Issue 40's tenth blind corpus, graded blind on 60c32e8: named.
    ),
    Mutant(
        "w02-01: split_heads reshapes straight to (B, H, L, d_k), no transpose",
        A,
        {
            "split_heads": Rewrite(
                r'''
                def split_heads(x: Tensor, num_heads: int) -> Tensor:
                    """(B, L, d_model) -> (B, H, L, d_k) with d_k = d_model // H.

                    Head h holds features h*d_k:(h+1)*d_k.
                    """
                    B, L, d_model = x.shape
                    return x.reshape(B, num_heads, L, d_model // num_heads)
                '''
            )
        },
        {
            "test_split_heads": "heads split without a transpose",
            "test_mha_mask": "this cell uses your answer cell `split_heads`",
            "test_mha_parity": "weights differ as if the heads were split without a transpose",
        },
        # Issue 40's eleventh blind corpus, graded blind on 48fe40c: named; test_mha_mask and
        # test_mha_parity not charged again.
    ),
    Mutant(
        "w02-02: the ValueError does not show d_model and num_heads",
        A,
        {
            "multi_head_attention": Rewrite(
                r'''
                class MultiHeadAttention(nn.Module):
                    """Multi-head attention: project, split into heads, attend, merge, project back."""

                    def __init__(self, d_model: int, num_heads: int):
                        super().__init__()
                        if d_model % num_heads != 0:
                            raise ValueError("d_model must be divisible by num_heads")
                        self.d_model = d_model
                        self.num_heads = num_heads
                        self.d_k = d_model // num_heads
                        self.q_proj = nn.Linear(d_model, d_model)
                        self.k_proj = nn.Linear(d_model, d_model)
                        self.v_proj = nn.Linear(d_model, d_model)
                        self.out_proj = nn.Linear(d_model, d_model)

                    def forward(
                        self,
                        query: Tensor,
                        key: Tensor | None = None,
                        value: Tensor | None = None,
                        mask: Tensor | None = None,
                    ) -> tuple[Tensor, Tensor]:
                        """query (B, L_q, d_model), key/value (B, L_k, d_model), mask True = may attend
                        -> (output (B, L_q, d_model), weights (B, H, L_q, L_k)).
                        """
                        if key is None:
                            key = query
                        if value is None:
                            value = key
                        q = split_heads(self.q_proj(query), self.num_heads)
                        k = split_heads(self.k_proj(key), self.num_heads)
                        v = split_heads(self.v_proj(value), self.num_heads)
                        if mask is not None and mask.dim() == 3:
                            mask = mask.unsqueeze(1)
                        out, weights = scaled_dot_product_attention(q, k, v, mask)
                        return self.out_proj(merge_heads(out)), weights
                '''
            )
        },
        {
            "test_mha_shapes": "the statement asks for both numbers in it",
        },
        # Issue 40's eleventh blind corpus, graded blind on 48fe40c: named.
    ),
    Mutant(
        "w02-03: value defaults to query, not key",
        A,
        {
            "multi_head_attention": Rewrite(
                r'''
                class MultiHeadAttention(nn.Module):
                    """Multi-head attention: project, split into heads, attend, merge, project back."""

                    def __init__(self, d_model: int, num_heads: int):
                        super().__init__()
                        if d_model % num_heads != 0:
                            raise ValueError(
                                f"d_model={d_model} is not divisible by num_heads={num_heads}"
                            )
                        self.d_model = d_model
                        self.num_heads = num_heads
                        self.d_k = d_model // num_heads
                        self.q_proj = nn.Linear(d_model, d_model)
                        self.k_proj = nn.Linear(d_model, d_model)
                        self.v_proj = nn.Linear(d_model, d_model)
                        self.out_proj = nn.Linear(d_model, d_model)

                    def forward(
                        self,
                        query: Tensor,
                        key: Tensor | None = None,
                        value: Tensor | None = None,
                        mask: Tensor | None = None,
                    ) -> tuple[Tensor, Tensor]:
                        """query (B, L_q, d_model), key/value (B, L_k, d_model), mask True = may attend
                        -> (output (B, L_q, d_model), weights (B, H, L_q, L_k)).
                        """
                        if key is None:
                            key = query
                        if value is None:
                            value = query
                        q = split_heads(self.q_proj(query), self.num_heads)
                        k = split_heads(self.k_proj(key), self.num_heads)
                        v = split_heads(self.v_proj(value), self.num_heads)
                        if mask is not None and mask.dim() == 3:
                            mask = mask.unsqueeze(1)
                        out, weights = scaled_dot_product_attention(q, k, v, mask)
                        return self.out_proj(merge_heads(out)), weights
                '''
            )
        },
        {
            "test_mha_shapes": "value must default to key, not to query",
        },
        # Issue 40's eleventh blind corpus, graded blind on 48fe40c: named.
    ),
    Mutant(
        "w02-04: a head axis added to every mask of 3 dimensions or more",
        A,
        {
            "multi_head_attention": Rewrite(
                r'''
                class MultiHeadAttention(nn.Module):
                    """Multi-head attention: project, split into heads, attend, merge, project back."""

                    def __init__(self, d_model: int, num_heads: int):
                        super().__init__()
                        if d_model % num_heads != 0:
                            raise ValueError(
                                f"d_model={d_model} is not divisible by num_heads={num_heads}"
                            )
                        self.d_model = d_model
                        self.num_heads = num_heads
                        self.d_k = d_model // num_heads
                        self.q_proj = nn.Linear(d_model, d_model)
                        self.k_proj = nn.Linear(d_model, d_model)
                        self.v_proj = nn.Linear(d_model, d_model)
                        self.out_proj = nn.Linear(d_model, d_model)

                    def forward(
                        self,
                        query: Tensor,
                        key: Tensor | None = None,
                        value: Tensor | None = None,
                        mask: Tensor | None = None,
                    ) -> tuple[Tensor, Tensor]:
                        """query (B, L_q, d_model), key/value (B, L_k, d_model), mask True = may attend
                        -> (output (B, L_q, d_model), weights (B, H, L_q, L_k)).
                        """
                        if key is None:
                            key = query
                        if value is None:
                            value = key
                        q = split_heads(self.q_proj(query), self.num_heads)
                        k = split_heads(self.k_proj(key), self.num_heads)
                        v = split_heads(self.v_proj(value), self.num_heads)
                        if mask is not None and mask.dim() >= 3:
                            mask = mask.unsqueeze(1)
                        out, weights = scaled_dot_product_attention(q, k, v, mask)
                        return self.out_proj(merge_heads(out)), weights
                '''
            )
        },
        {
            "test_mha_mask": "a (B, H, L_q, L_k) mask is given a head axis too",
        },
        # Issue 40's eleventh blind corpus, graded blind on 48fe40c: named.
    ),
    Mutant(
        "w02-05: the off heads zeroed in the caller's out_proj.weight",
        A,
        {
            "heads_switched_off": Rewrite(
                r'''
                def heads_switched_off(mha: nn.Module, x: Tensor, keep: Tensor) -> Tensor:
                    """mha's self-attention on x (B, L, d_model), with only the heads keep (H,) marks.

                    -> (B, L, d_model).
                    """
                    # Design: a switched-off head contributes nothing: the columns of out_proj that read
                    # its d_k features are set to zero, so out_proj never sees it. Kept heads are not
                    # rescaled. With every head off only out_proj's bias is left.
                    d_k = mha.d_k
                    with torch.no_grad():
                        for h in range(mha.num_heads):
                            if not bool(keep[h]):
                                mha.out_proj.weight[:, h * d_k : (h + 1) * d_k] = 0.0
                    return mha(x)[0]
                '''
            )
        },
        {
            "test_heads_switched_off": "heads_switched_off changed the parameters of the layer it was given",
        },
        # Issue 40's eleventh blind corpus, graded blind on 48fe40c: named.
    ),
    Mutant(
        "x02-01: split_heads transposes first, then cuts into heads",
        A,
        {
            "split_heads": Rewrite(
                r'''
                def split_heads(x: Tensor, num_heads: int) -> Tensor:
                    """(B, L, d_model) -> (B, H, L, d_k) with d_k = d_model // H.

                    Head h holds features h*d_k:(h+1)*d_k.
                    """
                    B, L, d_model = x.shape
                    d_k = d_model // num_heads
                    # bring the features in front of the positions, then cut them into heads
                    return x.transpose(1, 2).reshape(B, num_heads, L, d_k)
                '''
            )
        },
        {
            "test_split_heads": "transposed before viewing",
            "test_mha_mask": "this cell uses your answer cell `split_heads`",
            "test_mha_parity": "this cell uses your answer cell `split_heads`",
        },
        # Issue 40's eleventh blind corpus, graded blind on 48fe40c: named; test_mha_mask and
        # test_mha_parity not charged again.
    ),
    Mutant(
        "x02-02: value defaults to query, not key",
        A,
        {
            "multi_head_attention": Rewrite(
                r'''
                class MultiHeadAttention(nn.Module):
                    """Multi-head attention: project, split into heads, attend, merge, project back."""

                    def __init__(self, d_model: int, num_heads: int):
                        super().__init__()
                        if d_model % num_heads != 0:
                            raise ValueError(
                                f"d_model ({d_model}) must be divisible by num_heads ({num_heads})"
                            )
                        self.d_model = d_model
                        self.num_heads = num_heads
                        self.d_k = d_model // num_heads
                        self.q_proj = nn.Linear(d_model, d_model)
                        self.k_proj = nn.Linear(d_model, d_model)
                        self.v_proj = nn.Linear(d_model, d_model)
                        self.out_proj = nn.Linear(d_model, d_model)

                    def forward(
                        self,
                        query: Tensor,
                        key: Tensor | None = None,
                        value: Tensor | None = None,
                        mask: Tensor | None = None,
                    ) -> tuple[Tensor, Tensor]:
                        """query (B, L_q, d_model), key/value (B, L_k, d_model), mask True = may attend
                        -> (output (B, L_q, d_model), weights (B, H, L_q, L_k)).
                        """
                        if key is None:
                            key = query
                        if value is None:
                            value = query
                        q = split_heads(self.q_proj(query), self.num_heads)
                        k = split_heads(self.k_proj(key), self.num_heads)
                        v = split_heads(self.v_proj(value), self.num_heads)
                        if mask is not None and mask.dim() == 3:
                            mask = mask.unsqueeze(1)  # (B, 1, L_q, L_k): shared by the heads
                        heads, weights = scaled_dot_product_attention(q, k, v, mask)
                        return self.out_proj(merge_heads(heads)), weights
                '''
            )
        },
        {
            "test_mha_shapes": "value must default to key, not to query",
        },
        # Issue 40's eleventh blind corpus, graded blind on 48fe40c: named.
    ),
    Mutant(
        "x02-03: the ValueError does not show d_model and num_heads",
        A,
        {
            "multi_head_attention": Rewrite(
                r'''
                class MultiHeadAttention(nn.Module):
                    """Multi-head attention: project, split into heads, attend, merge, project back."""

                    def __init__(self, d_model: int, num_heads: int):
                        super().__init__()
                        if d_model % num_heads != 0:
                            raise ValueError("d_model must be divisible by num_heads")
                        self.d_model = d_model
                        self.num_heads = num_heads
                        self.d_k = d_model // num_heads
                        self.q_proj = nn.Linear(d_model, d_model)
                        self.k_proj = nn.Linear(d_model, d_model)
                        self.v_proj = nn.Linear(d_model, d_model)
                        self.out_proj = nn.Linear(d_model, d_model)

                    def forward(
                        self,
                        query: Tensor,
                        key: Tensor | None = None,
                        value: Tensor | None = None,
                        mask: Tensor | None = None,
                    ) -> tuple[Tensor, Tensor]:
                        """query (B, L_q, d_model), key/value (B, L_k, d_model), mask True = may attend
                        -> (output (B, L_q, d_model), weights (B, H, L_q, L_k)).
                        """
                        if key is None:
                            key = query
                        if value is None:
                            value = key
                        q = split_heads(self.q_proj(query), self.num_heads)
                        k = split_heads(self.k_proj(key), self.num_heads)
                        v = split_heads(self.v_proj(value), self.num_heads)
                        if mask is not None and mask.dim() == 3:
                            mask = mask.unsqueeze(1)  # (B, 1, L_q, L_k): shared by the heads
                        heads, weights = scaled_dot_product_attention(q, k, v, mask)
                        return self.out_proj(merge_heads(heads)), weights
                '''
            )
        },
        {
            "test_mha_shapes": "the statement asks for both numbers in it",
        },
        # Issue 40's eleventh blind corpus, graded blind on 48fe40c: named.
    ),
    Mutant(
        "x02-04: a head axis added to every mask that is not 2-D",
        A,
        {
            "multi_head_attention": Rewrite(
                r'''
                class MultiHeadAttention(nn.Module):
                    """Multi-head attention: project, split into heads, attend, merge, project back."""

                    def __init__(self, d_model: int, num_heads: int):
                        super().__init__()
                        if d_model % num_heads != 0:
                            raise ValueError(
                                f"d_model ({d_model}) must be divisible by num_heads ({num_heads})"
                            )
                        self.d_model = d_model
                        self.num_heads = num_heads
                        self.d_k = d_model // num_heads
                        self.q_proj = nn.Linear(d_model, d_model)
                        self.k_proj = nn.Linear(d_model, d_model)
                        self.v_proj = nn.Linear(d_model, d_model)
                        self.out_proj = nn.Linear(d_model, d_model)

                    def forward(
                        self,
                        query: Tensor,
                        key: Tensor | None = None,
                        value: Tensor | None = None,
                        mask: Tensor | None = None,
                    ) -> tuple[Tensor, Tensor]:
                        """query (B, L_q, d_model), key/value (B, L_k, d_model), mask True = may attend
                        -> (output (B, L_q, d_model), weights (B, H, L_q, L_k)).
                        """
                        if key is None:
                            key = query
                        if value is None:
                            value = key
                        q = split_heads(self.q_proj(query), self.num_heads)
                        k = split_heads(self.k_proj(key), self.num_heads)
                        v = split_heads(self.v_proj(value), self.num_heads)
                        if mask is not None and mask.dim() > 2:
                            mask = mask.unsqueeze(1)  # one mask per sentence: add the head axis
                        heads, weights = scaled_dot_product_attention(q, k, v, mask)
                        return self.out_proj(merge_heads(heads)), weights
                '''
            )
        },
        {
            "test_mha_mask": "a (B, H, L_q, L_k) mask is given a head axis too",
        },
        # Issue 40's eleventh blind corpus, graded blind on 48fe40c: named.
    ),
    Mutant(
        "x02-05: heads switched off in v_proj of the caller's layer, its bias never restored",
        A,
        {
            "heads_switched_off": Rewrite(
                r'''
                def heads_switched_off(mha: nn.Module, x: Tensor, keep: Tensor) -> Tensor:
                    """mha's self-attention on x (B, L, d_model), with only the heads keep (H,) marks.

                    -> (B, L, d_model).
                    """
                    # Design: a switched-off head has zero values, so whatever it attends to it outputs
                    # zeros, and out_proj only adds its bias for that block. Kept heads are not rescaled,
                    # so all on is mha(x) itself; all off leaves out_proj's bias, finite. I zero the
                    # value rows of the off heads, run the layer, and put the weights back afterwards.
                    d_k = mha.d_k
                    saved = mha.v_proj.weight.detach().clone()
                    with torch.no_grad():
                        for h in range(mha.num_heads):
                            if not bool(keep[h]):
                                mha.v_proj.weight[h * d_k : (h + 1) * d_k] = 0.0
                                mha.v_proj.bias[h * d_k : (h + 1) * d_k] = 0.0
                        out = mha(x)[0]
                        mha.v_proj.weight.copy_(saved)
                    return out
                '''
            )
        },
        {
            "test_heads_switched_off": "heads_switched_off changed the parameters of the layer it was given",
        },
        # Issue 40's eleventh blind corpus, graded blind on 48fe40c: named.
    ),
    Mutant(
        "aa02-01: split_heads views the features as (d_k, H) and permutes, not (H, d_k)",
        A,
        {
            "split_heads": Rewrite(
                r'''
                def split_heads(x: Tensor, num_heads: int) -> Tensor:
                    """(B, L, d_model) -> (B, H, L, d_k) with d_k = d_model // H.

                    Head h holds features h*d_k:(h+1)*d_k.
                    """
                    B, L, d_model = x.shape
                    d_k = d_model // num_heads
                    return x.view(B, L, d_k, num_heads).permute(0, 3, 1, 2)
                '''
            )
        },
        {
            "test_split_heads": "head h got the interleaved features h, h+H, h+2H, ...",
        },
        # Issue 40's thirteenth blind corpus, graded blind on 8b5375e: named; test_mha_parity waived
        # as the answer cell it uses (not charged again), its message naming the interleaved
        # features too.
        makes=("MultiHeadAttention.split_interleaved",),
        charged_once=True,
    ),
    Mutant(
        "aa02-03: a head axis added to every mask that is not 2-D (dim() != 2)",
        A,
        {
            "multi_head_attention": Rewrite(
                r'''
                class MultiHeadAttention(nn.Module):
                    """Multi-head attention: project, split into heads, attend, merge, project back."""

                    def __init__(self, d_model: int, num_heads: int):
                        super().__init__()
                        if d_model % num_heads != 0:
                            raise ValueError(
                                f"d_model = {d_model} is not divisible by num_heads = {num_heads}"
                            )
                        self.d_model = d_model
                        self.num_heads = num_heads
                        self.d_k = d_model // num_heads
                        self.q_proj = nn.Linear(d_model, d_model)
                        self.k_proj = nn.Linear(d_model, d_model)
                        self.v_proj = nn.Linear(d_model, d_model)
                        self.out_proj = nn.Linear(d_model, d_model)

                    def forward(
                        self,
                        query: Tensor,
                        key: Tensor | None = None,
                        value: Tensor | None = None,
                        mask: Tensor | None = None,
                    ) -> tuple[Tensor, Tensor]:
                        """query (B, L_q, d_model), key/value (B, L_k, d_model), mask True = may attend
                        -> (output (B, L_q, d_model), weights (B, H, L_q, L_k)).
                        """
                        if key is None:
                            key = query
                        if value is None:
                            value = key
                        q = split_heads(self.q_proj(query), self.num_heads)
                        k = split_heads(self.k_proj(key), self.num_heads)
                        v = split_heads(self.v_proj(value), self.num_heads)
                        if mask is not None and mask.dim() != 2:
                            mask = mask.unsqueeze(1)  # per-sentence mask: add the head axis
                        heads, weights = scaled_dot_product_attention(q, k, v, mask)
                        return self.out_proj(merge_heads(heads)), weights
                '''
            )
        },
        {
            "test_mha_mask": "a (B, H, L_q, L_k) mask is given a head axis too",
        },
        # Issue 40's thirteenth blind corpus, graded blind on 8b5375e: named.
    ),
    Mutant(
        "aa02-04: the divisibility ValueError shows neither d_model nor num_heads",
        A,
        {
            "multi_head_attention": Rewrite(
                r'''
                class MultiHeadAttention(nn.Module):
                    """Multi-head attention: project, split into heads, attend, merge, project back."""

                    def __init__(self, d_model: int, num_heads: int):
                        super().__init__()
                        if d_model % num_heads != 0:
                            raise ValueError("d_model must be divisible by num_heads")
                        self.d_model = d_model
                        self.num_heads = num_heads
                        self.d_k = d_model // num_heads
                        self.q_proj = nn.Linear(d_model, d_model)
                        self.k_proj = nn.Linear(d_model, d_model)
                        self.v_proj = nn.Linear(d_model, d_model)
                        self.out_proj = nn.Linear(d_model, d_model)

                    def forward(
                        self,
                        query: Tensor,
                        key: Tensor | None = None,
                        value: Tensor | None = None,
                        mask: Tensor | None = None,
                    ) -> tuple[Tensor, Tensor]:
                        """query (B, L_q, d_model), key/value (B, L_k, d_model), mask True = may attend
                        -> (output (B, L_q, d_model), weights (B, H, L_q, L_k)).
                        """
                        if key is None:
                            key = query
                        if value is None:
                            value = key
                        q = split_heads(self.q_proj(query), self.num_heads)
                        k = split_heads(self.k_proj(key), self.num_heads)
                        v = split_heads(self.v_proj(value), self.num_heads)
                        if mask is not None and mask.dim() == 3:
                            mask = mask.unsqueeze(1)  # (B, 1, L_q, L_k): shared by the heads
                        heads, weights = scaled_dot_product_attention(q, k, v, mask)
                        return self.out_proj(merge_heads(heads)), weights
                '''
            )
        },
        {
            "test_mha_shapes": "the statement asks for both numbers in it",
        },
        # Issue 40's thirteenth blind corpus, graded blind on 8b5375e: named.
    ),
    Mutant(
        "aa02-05: the off heads' columns of the caller's out_proj.weight zeroed in place",
        A,
        {
            "heads_switched_off": Rewrite(
                r'''
                def heads_switched_off(mha: nn.Module, x: Tensor, keep: Tensor) -> Tensor:
                    """mha's self-attention on x (B, L, d_model), with only the heads keep (H,) marks.

                    -> (B, L, d_model).
                    """
                    # My design: a switched-off head writes nothing: I zero the columns of out_proj that
                    # read its features (no copy of the layer needed, so it is fast); the kept heads are
                    # not rescaled, and with every head off only out_proj's bias is left.
                    d_k = mha.d_k
                    with torch.no_grad():
                        for h in range(mha.num_heads):
                            if not bool(keep[h]):
                                mha.out_proj.weight[:, h * d_k : (h + 1) * d_k] = 0.0
                    return mha(x)[0]
                '''
            )
        },
        {
            "test_heads_switched_off": "heads_switched_off changed the parameters of the layer it was given",
        },
        # Issue 40's thirteenth blind corpus, graded blind on 8b5375e: named (then as an
        # AttributeError of the write the grader refused: "your code wrote into 'weight' of the
        # model it was given, in place").
    ),
    Mutant(
        "ab02-01: split_heads transposes first, then reshapes to (B, H, L, d_k)",
        A,
        {
            "split_heads": Rewrite(
                r'''
                def split_heads(x: Tensor, num_heads: int) -> Tensor:
                    """(B, L, d_model) -> (B, H, L, d_k) with d_k = d_model // H.

                    Head h holds features h*d_k:(h+1)*d_k.
                    """
                    B, L, d_model = x.shape
                    d_k = d_model // num_heads
                    # move the features in front of the positions, then regroup into (H, L, d_k)
                    return x.transpose(1, 2).reshape(B, num_heads, L, d_k)
                '''
            )
        },
        {
            "test_split_heads": "transposed before viewing: x.transpose(1, 2) then reshape cuts the wrong axis",
        },
        # Issue 40's thirteenth blind corpus, graded blind on 8b5375e: named; test_mha_mask and
        # test_mha_parity waived as the answer cell they use (not charged again).
        charged_once=True,
    ),
    Mutant(
        "ab02-03: a head axis added to every mask of more than 2 dims (dim() > 2)",
        A,
        {
            "multi_head_attention": Rewrite(
                r'''
                class MultiHeadAttention(nn.Module):
                    """Multi-head attention: project, split into heads, attend, merge, project back."""

                    def __init__(self, d_model: int, num_heads: int):
                        super().__init__()
                        if d_model % num_heads != 0:
                            raise ValueError(
                                f"d_model ({d_model}) is not divisible by num_heads ({num_heads})"
                            )
                        self.d_model = d_model
                        self.num_heads = num_heads
                        self.d_k = d_model // num_heads
                        self.q_proj = nn.Linear(d_model, d_model)
                        self.k_proj = nn.Linear(d_model, d_model)
                        self.v_proj = nn.Linear(d_model, d_model)
                        self.out_proj = nn.Linear(d_model, d_model)

                    def forward(
                        self,
                        query: Tensor,
                        key: Tensor | None = None,
                        value: Tensor | None = None,
                        mask: Tensor | None = None,
                    ) -> tuple[Tensor, Tensor]:
                        """query (B, L_q, d_model), key/value (B, L_k, d_model), mask True = may attend
                        -> (output (B, L_q, d_model), weights (B, H, L_q, L_k)).
                        """
                        if key is None:
                            key = query
                        if value is None:
                            value = key
                        q = split_heads(self.q_proj(query), self.num_heads)
                        k = split_heads(self.k_proj(key), self.num_heads)
                        v = split_heads(self.v_proj(value), self.num_heads)
                        if mask is not None and mask.dim() > 2:
                            mask = mask.unsqueeze(1)  # a per-sentence mask: add the head axis
                        heads, weights = scaled_dot_product_attention(q, k, v, mask)
                        return self.out_proj(merge_heads(heads)), weights
                '''
            )
        },
        {
            "test_mha_mask": "a (B, H, L_q, L_k) mask is given a head axis too",
        },
        # Issue 40's thirteenth blind corpus, graded blind on 8b5375e: named.
    ),
    Mutant(
        "ab02-04: the divisibility ValueError says so without the two numbers",
        A,
        {
            "multi_head_attention": Rewrite(
                r'''
                class MultiHeadAttention(nn.Module):
                    """Multi-head attention: project, split into heads, attend, merge, project back."""

                    def __init__(self, d_model: int, num_heads: int):
                        super().__init__()
                        if d_model % num_heads != 0:
                            raise ValueError("d_model must be divisible by num_heads")
                        self.d_model = d_model
                        self.num_heads = num_heads
                        self.d_k = d_model // num_heads
                        self.q_proj = nn.Linear(d_model, d_model)
                        self.k_proj = nn.Linear(d_model, d_model)
                        self.v_proj = nn.Linear(d_model, d_model)
                        self.out_proj = nn.Linear(d_model, d_model)

                    def forward(
                        self,
                        query: Tensor,
                        key: Tensor | None = None,
                        value: Tensor | None = None,
                        mask: Tensor | None = None,
                    ) -> tuple[Tensor, Tensor]:
                        """query (B, L_q, d_model), key/value (B, L_k, d_model), mask True = may attend
                        -> (output (B, L_q, d_model), weights (B, H, L_q, L_k)).
                        """
                        if key is None:
                            key = query
                        if value is None:
                            value = key
                        q = split_heads(self.q_proj(query), self.num_heads)
                        k = split_heads(self.k_proj(key), self.num_heads)
                        v = split_heads(self.v_proj(value), self.num_heads)
                        if mask is not None and mask.dim() == 3:
                            mask = mask.unsqueeze(1)  # (B, 1, L_q, L_k): one mask per sentence, all heads
                        heads, weights = scaled_dot_product_attention(q, k, v, mask)
                        return self.out_proj(merge_heads(heads)), weights
                '''
            )
        },
        {
            "test_mha_shapes": "the statement asks for both numbers in it",
        },
        # Issue 40's thirteenth blind corpus, graded blind on 8b5375e: named.
    ),
    Mutant(
        "ab02-05: the off heads' out_proj columns zeroed in the given layer, never restored",
        A,
        {
            "heads_switched_off": Rewrite(
                r'''
                def heads_switched_off(mha: nn.Module, x: Tensor, keep: Tensor) -> Tensor:
                    """mha's self-attention on x (B, L, d_model), with only the heads keep (H,) marks.

                    -> (B, L, d_model).
                    """
                    # Design: a switched-off head is cut off where out_proj reads it: I zero the
                    # columns of out_proj.weight that read that head's d_k features, so whatever the
                    # head computes is multiplied by 0. Kept heads are not rescaled; out_proj's bias
                    # stays, so with every head off the output is that bias everywhere.
                    d_k = mha.d_k
                    with torch.no_grad():
                        for h, on in enumerate(keep.tolist()):
                            if not on:
                                mha.out_proj.weight[:, h * d_k : (h + 1) * d_k] = 0.0
                    return mha(x)[0]
                '''
            )
        },
        {
            "test_heads_switched_off": "heads_switched_off changed the parameters of the layer it was given",
        },
        # Issue 40's thirteenth blind corpus, graded blind on 8b5375e: named (then as an
        # AttributeError of the write the grader refused: "your code wrote into 'weight' of the
        # model it was given, in place").
    ),
]

CORRECT = [
    Mutant(
        "f02-14: split_heads: H chunks stacked on a head axis",
        A,
        {
            "split_heads": Rewrite(
                r"""
                def split_heads(x: Tensor, num_heads: int) -> Tensor:
                    d_k = x.shape[-1] // num_heads
                    return torch.stack(torch.split(x, d_k, dim=-1), dim=1)
                """
            )
        },
    ),
    Mutant(
        "f02-15: merge_heads: heads unbound and concatenated",
        A,
        {
            "merge_heads": Rewrite(
                r"""
                def merge_heads(x: Tensor) -> Tensor:
                    return torch.cat(x.unbind(dim=1), dim=-1)
                """
            )
        },
    ),
    Mutant(
        "f02-16: unflatten and movedim, mask.unsqueeze(-3), divmod",
        A,
        {
            "multi_head_attention": Rewrite(
                r"""
                class MultiHeadAttention(nn.Module):
                    def __init__(self, d_model: int, num_heads: int):
                        super().__init__()
                        d_k, rest = divmod(d_model, num_heads)
                        if rest:
                            raise ValueError(
                                f"d_model ({d_model}) must be divisible by num_heads ({num_heads})"
                            )
                        self.d_model, self.num_heads, self.d_k = d_model, num_heads, d_k
                        self.q_proj = nn.Linear(d_model, d_model)
                        self.k_proj = nn.Linear(d_model, d_model)
                        self.v_proj = nn.Linear(d_model, d_model)
                        self.out_proj = nn.Linear(d_model, d_model)

                    def _heads(self, t):
                        return t.unflatten(-1, (self.num_heads, self.d_k)).movedim(-2, 1)

                    def forward(self, query, key=None, value=None, mask=None):
                        key = query if key is None else key
                        value = key if value is None else value
                        q = self._heads(self.q_proj(query))
                        k = self._heads(self.k_proj(key))
                        v = self._heads(self.v_proj(value))
                        if mask is not None and mask.dim() == 3:
                            mask = mask.unsqueeze(-3)
                        out, weights = scaled_dot_product_attention(q, k, v, mask)
                        out = out.movedim(1, -2).flatten(-2)
                        return self.out_proj(out), weights
                """
            )
        },
    ),
    Mutant(
        "k02-06: correct alternative",
        A,
        {
            "merge_heads": Rewrite(
                r'''
                def merge_heads(x: Tensor) -> Tensor:
                    """(B, H, L, d_k) -> (B, L, H * d_k): concatenate the heads' features.

                    Head h lands at features h*d_k:(h+1)*d_k.
                    """
                    return torch.cat(torch.unbind(x, dim=1), dim=-1)
                '''
            )
        },
        # Issue 40's sixth blind corpus, graded blind on bdfa422: correct-full.
    ),
    Mutant(
        "n02-06: a deep copy with the off heads' out_proj columns zeroed",
        A,
        {
            "heads_switched_off": Rewrite(
                r'''
                import copy


                def heads_switched_off(mha: nn.Module, x: Tensor, keep: Tensor) -> Tensor:
                    """mha's self-attention on x (B, L, d_model), with only the heads keep (H,) marks.

                    -> (B, L, d_model).
                    """
                    # Design: out_proj is the only place where heads mix. Zeroing the columns of
                    # out_proj.weight that read head h's features removes head h entirely (its q, k, v
                    # rows can change freely without effect). Kept heads are not rescaled; with every
                    # head off each position gets out_proj's bias. The copy leaves mha unchanged.
                    ablated = copy.deepcopy(mha)
                    d_k = mha.d_k
                    col_keep = keep.to(torch.bool).cpu().repeat_interleave(d_k)  # (d_model,)
                    with torch.no_grad():
                        w = ablated.out_proj.weight
                        w.mul_(col_keep.to(device=w.device, dtype=w.dtype).unsqueeze(0))
                    return ablated(x)[0]
                '''
            )
        },
        # Issue 40's seventh blind corpus, graded blind on 451e037: correct-full.
    ),
    Mutant(
        "p02-06: out_proj's bias plus each kept head's block of out_proj",
        A,
        {
            "heads_switched_off": Rewrite(
                r'''
                # kind: correct
                # grade_id: heads_switched_off
                # alternative: writes the output as out_proj's bias plus the sum over KEPT heads of head_h times its own block of out_proj's columns (no gating tensor, no merge), on a per-head loop.
                # evidence: tools/ev02.py: over 15 cases (widths 12/8/16, 3/1/4 heads, random keeps, a batch of one 1-token sentence) max diff to my answer and to mha(x)[0] when all kept: 6e-8.
                def heads_switched_off(mha: nn.Module, x: Tensor, keep: Tensor) -> Tensor:
                    """mha's self-attention on x (B, L, d_model), with only the heads keep (H,) marks."""
                    # Design: the output is bias + sum_h head_h W_O[:, block h]^T. A switched-off
                    # head's term is simply left out of the sum (it contributes exactly zero), the
                    # kept heads' terms are not rescaled, and with no head kept the output is the
                    # bias at every position. mha is only read.
                    H, d_k = mha.num_heads, mha.d_k
                    B, L, d_model = x.shape
                    q = mha.q_proj(x).view(B, L, H, d_k)
                    k = mha.k_proj(x).view(B, L, H, d_k)
                    v = mha.v_proj(x).view(B, L, H, d_k)
                    out = mha.out_proj.bias.expand(B, L, d_model).clone()
                    for h in range(H):
                        if bool(keep[h]):
                            scores = q[:, :, h] @ k[:, :, h].transpose(1, 2) / d_k**0.5
                            head = torch.softmax(scores, dim=-1) @ v[:, :, h]  # (B, L, d_k)
                            out = out + head @ mha.out_proj.weight[:, h * d_k : (h + 1) * d_k].T
                    return out
                '''
            )
        },
        # Issue 40's seventh blind corpus, graded blind on 451e037: correct-full.
    ),
    Mutant(
        "q02-06: heads_switched_off zeroes out_proj's columns of a deep copy",
        A,
        {
            "heads_switched_off": Rewrite(
                r'''
                def heads_switched_off(mha: nn.Module, x: Tensor, keep: Tensor) -> Tensor:
                    """mha's self-attention on x (B, L, d_model), with only the heads keep (H,) marks.

                    -> (B, L, d_model).
                    """
                    # Design: a switched-off head contributes nothing: in a copy of the layer, the
                    # columns of out_proj that read its d_k features are zero, so its output never
                    # reaches the result. Kept heads are not rescaled; with every head off only
                    # out_proj's bias remains. The copy leaves mha itself unchanged.
                    import copy

                    ablated = copy.deepcopy(mha)
                    with torch.no_grad():
                        for h in range(ablated.num_heads):
                            if not bool(keep[h]):
                                ablated.out_proj.weight[:, h * ablated.d_k : (h + 1) * ablated.d_k] = 0.0
                    return ablated(x)[0]
                '''
            )
        },
        # Issue 40's eighth blind corpus, graded blind on 47d54b0: correct-full.
    ),
    Mutant(
        "r02-06: heads_switched_off rescales the kept heads by H over their number",
        A,
        {
            "heads_switched_off": Rewrite(
                r'''
                # id: r02-06
                # kind: correct
                # grade_id: heads_switched_off
                # alternative: another design: the off heads are removed and the kept heads are RESCALED by H / (number kept), like inverted dropout; attention computed head by head in a loop over kept heads. All on: factor 1 = the layer; all off: out_proj's bias only.
                # evidence: my experiment (scripts ev0N.py, output ev0N.txt in /work/fresh-corpus8b):
                #   r02-06: all on == mha(x)[0]: True | off heads gone: True | kept head counts: True | all off finite: True (3, 7, 16) | one head, 1x1 batch: (1, 1, 8)
                # public checks: passes every public check of the notebook
                def heads_switched_off(mha: nn.Module, x: Tensor, keep: Tensor) -> Tensor:
                    """mha's self-attention on x (B, L, d_model), with only the heads keep (H,) marks.

                    -> (B, L, d_model).
                    """
                    # Design: the switched-off heads contribute zeros to the concatenation; the kept
                    # heads are rescaled by H / n_kept so that the total stays on the same scale (as
                    # inverted dropout does). With every head kept the factor is 1, which is the
                    # layer itself. With every head off the concatenation is all zeros and only
                    # out_proj's bias is left.
                    heads, d_k = mha.num_heads, mha.d_k
                    n_kept = int(keep.sum())
                    factor = heads / max(n_kept, 1)
                    q_all, k_all, v_all = mha.q_proj(x), mha.k_proj(x), mha.v_proj(x)
                    pieces = []
                    for h in range(heads):
                        cols = slice(h * d_k, (h + 1) * d_k)
                        if bool(keep[h]):
                            out_h, _ = scaled_dot_product_attention(
                                q_all[..., cols], k_all[..., cols], v_all[..., cols]
                            )
                            pieces.append(factor * out_h)
                        else:
                            pieces.append(torch.zeros_like(v_all[..., cols]))
                    return mha.out_proj(torch.cat(pieces, dim=-1))
                '''
            )
        },
        # Issue 40's eighth blind corpus, graded blind on 47d54b0: correct-full.
    ),
    Mutant(
        "s02-06: split_heads: H chunks of the features stacked on a head axis",
        A,
        {
            "split_heads": Rewrite(
                r'''
                def split_heads(x: Tensor, num_heads: int) -> Tensor:
                    """(B, L, d_model) -> (B, H, L, d_k) with d_k = d_model // H.

                    Head h holds features h*d_k:(h+1)*d_k.
                    """
                    return torch.stack(x.chunk(num_heads, dim=-1), dim=1)
                '''
            )
        },
        # Issue 40's ninth blind corpus, graded blind on feb0b2e: correct-full.
    ),
    Mutant(
        "t02-06: split_heads by unflatten and permute",
        A,
        {
            "split_heads": Rewrite(
                r'''
                def split_heads(x: Tensor, num_heads: int) -> Tensor:
                    """(B, L, d_model) -> (B, H, L, d_k) with d_k = d_model // H.

                    Head h holds features h*d_k:(h+1)*d_k.
                    """
                    return x.unflatten(-1, (num_heads, -1)).permute(0, 2, 1, 3)
                '''
            )
        },
        # Issue 40's ninth blind corpus, graded blind on feb0b2e: correct-full.
    ),
    Mutant(
        "u02-06: split_heads by Tensor.split into H chunks, stacked on a head axis",
        A,
        {
            "split_heads": Rewrite(
                r'''
                def split_heads(x: Tensor, num_heads: int) -> Tensor:
                    """(B, L, d_model) -> (B, H, L, d_k) with d_k = d_model // H.

                    Head h holds features h*d_k:(h+1)*d_k.
                    """
                    d_k = x.shape[-1] // num_heads
                    return torch.stack(x.split(d_k, dim=-1), dim=1)
                '''
            )
        },
        # Issue 40's tenth blind corpus, graded blind on 60c32e8: correct-full.
    ),
    Mutant(
        "v02-06: heads_switched_off sums the kept heads' out_proj blocks",
        A,
        {
            "heads_switched_off": Rewrite(
                r'''
                def heads_switched_off(mha: nn.Module, x: Tensor, keep: Tensor) -> Tensor:
                    """mha's self-attention on x (B, L, d_model), with only the heads keep (H,) marks.

                    -> (B, L, d_model).
                    """
                    # Design: out_proj(concat heads) = sum_h head_h @ W_O[:, block h].T + b_O, so each head
                    # has its own additive contribution. A switched-off head's contribution is dropped.
                    # The kept ones are rescaled by H / (number kept) so that the total keeps its size
                    # (factor 1 when all are kept, so all-on is the layer). With every head off only the
                    # bias b_O remains (the factor is then irrelevant: nothing is summed).
                    H, d_k = mha.num_heads, mha.d_k
                    keep = keep.bool()
                    n_kept = int(keep.sum())
                    factor = H / max(n_kept, 1)
                    with torch.no_grad():
                        q = split_heads(mha.q_proj(x), H)
                        k = split_heads(mha.k_proj(x), H)
                        v = split_heads(mha.v_proj(x), H)
                        heads, _ = scaled_dot_product_attention(q, k, v)  # (B, H, L, d_k)
                        out = mha.out_proj.bias.expand(x.shape[0], x.shape[1], -1).clone()
                        for h in range(H):
                            if keep[h]:
                                w_block = mha.out_proj.weight[:, h * d_k : (h + 1) * d_k]  # (d_model, d_k)
                                out = out + factor * heads[:, h] @ w_block.T
                    return out
                '''
            )
        },
        # Issue 40's tenth blind corpus, graded blind on 60c32e8: correct-full.
    ),
    Mutant(
        "w02-06: each kept head through its own columns of out_proj.weight, summed with the bias",
        A,
        {
            "heads_switched_off": Rewrite(
                r'''
                def heads_switched_off(mha: nn.Module, x: Tensor, keep: Tensor) -> Tensor:
                    """mha's self-attention on x (B, L, d_model), with only the heads keep (H,) marks.

                    -> (B, L, d_model).
                    """
                    # Design: out_proj(concat(heads)) = bias + sum_h head_h @ W[:, block h]^T. A head
                    # that is off simply has no term in that sum; kept heads are not rescaled; with
                    # every head off the output is out_proj's bias at every position. mha is only read.
                    B, L, _ = x.shape
                    H, d_k = mha.num_heads, mha.d_k
                    q = split_heads(mha.q_proj(x), H)
                    k = split_heads(mha.k_proj(x), H)
                    v = split_heads(mha.v_proj(x), H)
                    heads, _ = scaled_dot_product_attention(q, k, v)  # (B, H, L, d_k)
                    W, b = mha.out_proj.weight, mha.out_proj.bias
                    out = b.expand(B, L, -1).clone() if b is not None else x.new_zeros(B, L, W.shape[0])
                    for h in range(H):
                        if bool(keep[h]):
                            out = out + heads[:, h] @ W[:, h * d_k : (h + 1) * d_k].T
                    return out
                '''
            )
        },
        # Issue 40's eleventh blind corpus, graded blind on 48fe40c: correct-full.
    ),
    Mutant(
        "x02-06: each kept head projected and attended alone, through its columns of out_proj",
        A,
        {
            "heads_switched_off": Rewrite(
                r'''
                def heads_switched_off(mha: nn.Module, x: Tensor, keep: Tensor) -> Tensor:
                    """mha's self-attention on x (B, L, d_model), with only the heads keep (H,) marks.

                    -> (B, L, d_model).
                    """
                    # Design: the output is a sum of per-head contributions, head_h @ W_O[:, block h].T,
                    # plus out_proj's bias. A switched-off head's contribution is simply left out of the
                    # sum; kept heads are not rescaled; with every head off only the bias is left, at
                    # every position (finite, shape of x). mha is read only.
                    H, d_k = mha.num_heads, mha.d_k
                    B, L, _ = x.shape
                    W_O = mha.out_proj.weight
                    b_O = mha.out_proj.bias
                    out = torch.zeros(B, L, W_O.shape[0], dtype=x.dtype, device=x.device)
                    if b_O is not None:
                        out = out + b_O
                    for h in range(H):
                        if not bool(keep[h]):
                            continue
                        rows = slice(h * d_k, (h + 1) * d_k)
                        q = F.linear(x, mha.q_proj.weight[rows], mha.q_proj.bias[rows])
                        k = F.linear(x, mha.k_proj.weight[rows], mha.k_proj.bias[rows])
                        v = F.linear(x, mha.v_proj.weight[rows], mha.v_proj.bias[rows])
                        head, _ = scaled_dot_product_attention(q, k, v)  # (B, L, d_k)
                        out = out + head @ W_O[:, rows].T
                    return out
                '''
            )
        },
        # Issue 40's eleventh blind corpus, graded blind on 48fe40c: correct-full.
    ),
    Mutant(
        "ab02-06: heads_switched_off zeroes out_proj's columns of the off heads in a deep copy",
        A,
        {
            "heads_switched_off": Rewrite(
                r'''
                import copy


                def heads_switched_off(mha: nn.Module, x: Tensor, keep: Tensor) -> Tensor:
                    """mha's self-attention on x (B, L, d_model), with only the heads keep (H,) marks.

                    -> (B, L, d_model).
                    """
                    # Design: a switched-off head is cut off where out_proj reads it: on a copy of the
                    # layer I zero the columns of out_proj.weight that read that head's d_k features,
                    # so whatever the head computes is multiplied by 0. Kept heads are not rescaled;
                    # out_proj's bias stays, so with every head off the output is that bias everywhere.
                    # mha itself is left unchanged (I work on a deep copy).
                    ablated = copy.deepcopy(mha)
                    d_k = ablated.d_k
                    with torch.no_grad():
                        for h, on in enumerate(keep.tolist()):
                            if not on:
                                ablated.out_proj.weight[:, h * d_k : (h + 1) * d_k] = 0.0
                    return ablated(x)[0]
                '''
            )
        },
        # Issue 40's thirteenth blind corpus, graded blind on 8b5375e: correct-full.
    ),
]
