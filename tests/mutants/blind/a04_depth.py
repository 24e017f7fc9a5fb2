"""Issue 40's blind corpus for 04_depth (see tests/mutants/blind/__init__.py)."""

from tests.mutants import Mutant, Rewrite

A = "04_depth"

WRONG = [
    Mutant(
        "f04-04: every layer fed the stack's input",
        A,
        {
            "depth_stack": Rewrite(
                r'''
                class DepthStack(nn.Module):
                    """num_layers independent post-norm encoder layers, applied one after the other."""

                    def __init__(
                        self,
                        num_layers: int,
                        d_model: int,
                        num_heads: int,
                        d_ff: int,
                        dropout: float = 0.0,
                    ):
                        super().__init__()
                        self.layers = nn.ModuleList(
                            [EncoderBlock(d_model, num_heads, d_ff, dropout) for _ in range(num_layers)]
                        )

                    def forward(
                        self, x: torch.Tensor, mask: torch.Tensor | None = None
                    ) -> tuple[torch.Tensor, list[torch.Tensor]]:
                        maps = []
                        out = x
                        for layer in self.layers:
                            out, weights = layer(x, mask)
                            maps.append(weights)
                        return out, maps
                '''
            )
        },
        {
            "test_depth_stack": "the layers are not chained",
            "test_depth_stack_layers": "the layers are not chained",
        },
    ),
    Mutant(
        "f04-06: the mask given to the first layer only, by index",
        A,
        {
            "depth_stack": Rewrite(
                r'''
                class DepthStack(nn.Module):
                    """num_layers independent post-norm encoder layers, applied one after the other."""

                    def __init__(
                        self,
                        num_layers: int,
                        d_model: int,
                        num_heads: int,
                        d_ff: int,
                        dropout: float = 0.0,
                    ):
                        super().__init__()
                        self.layers = nn.ModuleList(
                            [EncoderBlock(d_model, num_heads, d_ff, dropout) for _ in range(num_layers)]
                        )

                    def forward(
                        self, x: torch.Tensor, mask: torch.Tensor | None = None
                    ) -> tuple[torch.Tensor, list[torch.Tensor]]:
                        maps = []
                        for i, layer in enumerate(self.layers):
                            x, weights = layer(x, mask if i == 0 else None)
                            maps.append(weights)
                        return x, maps
                '''
            )
        },
        {
            "test_depth_stack": "only the first layer gets the mask",
        },
    ),
    Mutant(
        "f04-07: every layer a deep copy of one block",
        A,
        {
            "depth_stack": Rewrite(
                r'''
                class DepthStack(nn.Module):
                    """num_layers independent post-norm encoder layers, applied one after the other."""

                    def __init__(
                        self,
                        num_layers: int,
                        d_model: int,
                        num_heads: int,
                        d_ff: int,
                        dropout: float = 0.0,
                    ):
                        super().__init__()
                        import copy as _copy
                        block = EncoderBlock(d_model, num_heads, d_ff, dropout)
                        self.layers = nn.ModuleList([_copy.deepcopy(block) for _ in range(num_layers)])

                    def forward(
                        self, x: torch.Tensor, mask: torch.Tensor | None = None
                    ) -> tuple[torch.Tensor, list[torch.Tensor]]:
                        maps = []
                        for layer in self.layers:
                            x, weights = layer(x, mask)
                            maps.append(weights)
                        return x, maps
                '''
            )
        },
        {
            "test_depth_stack_layers": "layers 0 and 1 start with identical weights",
        },
        makes=("DepthStack.same_initial_weights",),
    ),
    Mutant(
        "f04-08: EncoderBlock(d_model, d_ff, num_heads, dropout): arguments swapped",
        A,
        {
            "depth_stack": Rewrite(
                r'''
                class DepthStack(nn.Module):
                    """num_layers independent post-norm encoder layers, applied one after the other."""

                    def __init__(
                        self,
                        num_layers: int,
                        d_model: int,
                        num_heads: int,
                        d_ff: int,
                        dropout: float = 0.0,
                    ):
                        super().__init__()
                        self.layers = nn.ModuleList(
                            [EncoderBlock(d_model, d_ff, num_heads, dropout) for _ in range(num_layers)]
                        )

                    def forward(
                        self, x: torch.Tensor, mask: torch.Tensor | None = None
                    ) -> tuple[torch.Tensor, list[torch.Tensor]]:
                        maps = []
                        for layer in self.layers:
                            x, weights = layer(x, mask)
                            maps.append(weights)
                        return x, maps
                '''
            )
        },
        {
            "test_depth_stack": "d_model must be divisible by num_heads, got",
            "test_depth_stack_layers": "d_model must be divisible by num_heads, got",
        },
    ),
    Mutant(
        "f04-13: entropy summed over every dimension",
        A,
        {
            "attention_metrics": Rewrite(
                r'''
                def attention_entropy(weights: torch.Tensor) -> torch.Tensor:
                    """Entropy in nats of each distribution over the last dim, 0 log 0 = 0."""
                    return -torch.special.xlogy(weights, weights).sum()


                def total_variation(p: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
                    """Total variation distance 1/2 * sum |p - q| over the last dim."""
                    return 0.5 * (p - q).abs().sum(dim=-1)
                '''
            )
        },
        {
            "test_attention_metrics": "reduce over the LAST dimension only",
        },
    ),
    Mutant(
        "g04-11: attention_focus normalised by log(weights.shape[0])",
        A,
        {
            "attention_focus": Rewrite(
                r'''
                def attention_focus(weights: torch.Tensor) -> torch.Tensor:
                    """Focus of each distribution over the last dim: 0 uniform, 1 on one key.

                    (..., L_k) -> (...).
                    """
                    # 1 - H / H_max, with H_max = log(number of keys).
                    n = weights.shape[0]
                    if n == 1:
                        return torch.ones(weights.shape[:-1])
                    entropy = -torch.special.xlogy(weights, weights).sum(dim=-1)
                    return 1 - entropy / math.log(n)
                '''
            )
        },
        {
            "test_attention_focus": "the score depends on the size of the first axis",
        },
        in_notebook=True,  # first_axis_of_the_keys_size confirms it through the judge
    ),
    Mutant(
        "g04-04: self.layers a Python list of EncoderBlocks",
        A,
        {
            "depth_stack": Rewrite(
                r'''
                class DepthStack(nn.Module):
                    """num_layers independent post-norm encoder layers, applied one after the other."""

                    def __init__(
                        self,
                        num_layers: int,
                        d_model: int,
                        num_heads: int,
                        d_ff: int,
                        dropout: float = 0.0,
                    ):
                        super().__init__()
                        self.layers = [EncoderBlock(d_model, num_heads, d_ff, dropout) for _ in range(num_layers)]

                    def forward(
                        self, x: torch.Tensor, mask: torch.Tensor | None = None
                    ) -> tuple[torch.Tensor, list[torch.Tensor]]:
                        maps = []
                        for layer in self.layers:
                            x, weights = layer(x, mask)
                            maps.append(weights)
                        return x, maps
                '''
            )
        },
        {
            "test_depth_stack": "not the nn.ModuleList of the statement",
            # No repair waives it: none can hold a kernel's layers in a ModuleList here.
            "test_depth_stack_layers": "not the nn.ModuleList of the statement",
        },
        in_notebook=True,  # graded through the command too: one grade in both (judge_parity)
    ),
    Mutant(
        "h04-05: weights.squeeze(1) drops the head axis when there is one head",
        A,
        {
            "depth_stack": Rewrite(
                r'''
                class DepthStack(nn.Module):
                    """num_layers independent post-norm encoder layers, applied one after the other."""

                    def __init__(
                        self,
                        num_layers: int,
                        d_model: int,
                        num_heads: int,
                        d_ff: int,
                        dropout: float = 0.0,
                    ):
                        super().__init__()
                        self.layers = nn.ModuleList(
                            [EncoderBlock(d_model, num_heads, d_ff, dropout) for _ in range(num_layers)]
                        )

                    def forward(
                        self, x: torch.Tensor, mask: torch.Tensor | None = None
                    ) -> tuple[torch.Tensor, list[torch.Tensor]]:
                        maps = []
                        for layer in self.layers:
                            x, weights = layer(x, mask)
                            maps.append(weights.squeeze(1))  # drop the head axis when there is one head
                        return x, maps
                '''
            )
        },
        {"test_depth_stack": "map 0 lost the axis H"},
        makes=("shapes.squeezed",),
        not_told=("use squeeze(dim) on the axis you mean",),
    ),
    Mutant(
        "h04-13: entropy normalised by the log of the number of non-zero weights",
        A,
        {
            "attention_focus": Rewrite(
                r'''
                def attention_focus(weights: torch.Tensor) -> torch.Tensor:
                    """Focus of each distribution over the last dim: 0 uniform, 1 on one key."""
                    # My score: 1 - H / log(number of keys actually used), so masked keys do not count.
                    entropy = -torch.special.xlogy(weights, weights).sum(-1)
                    used = (weights > 0).sum(-1).to(weights.dtype)
                    return 1 - entropy / torch.log(used)
                '''
            )
        },
        {"test_attention_focus": "1 - H / log(the number of non-zero weights)"},
    ),
    Mutant(
        "i04-09: entropy normalised by the log of the number of non-zero weights, one usable key scoring 1",
        A,
        {
            "attention_focus": Rewrite(
                r'''
                def attention_focus(weights: torch.Tensor) -> torch.Tensor:
                    """Focus of each distribution over the last dim: 0 uniform, 1 on one key.

                    (..., L_k) -> (...).
                    """
                    # My score: 1 - H(p) / log(n), where n is the number of keys the row can really
                    # use (weight > 0): a masked key is not a key this row could have attended to, so
                    # it should not count. Uniform over the usable keys scores 0, one key scores 1.
                    entropy = -torch.special.xlogy(weights, weights).sum(dim=-1)
                    usable = (weights > 0).sum(dim=-1).to(weights.dtype)
                    max_entropy = torch.log(usable)
                    score = 1.0 - entropy / max_entropy.clamp_min(1e-12)
                    # a single usable key: all the weight on it
                    score = torch.where(usable > 1, score, torch.ones_like(score))
                    return score.clamp(0.0, 1.0)
                '''
            )
        },
        {"test_attention_focus": "the score is 1 - H / log(the number of non-zero weights), not"},
        # Told "the score rose as T grew" alone until fix8a, which names its normaliser (the
        # seventh corpus's p04-04 makes the same mistake).
    ),
    Mutant(
        "j04-09: attention_focus 1 - H / log(L_k), NaN for a single key",
        A,
        {
            "attention_focus": Rewrite(
                r'''
                def attention_focus(weights: torch.Tensor) -> torch.Tensor:
                    """Focus of each distribution over the last dim: 0 uniform, 1 on one key.

                    (..., L_k) -> (...).
                    """
                    # Design: 1 - H(p) / log(L_k): how far the entropy sits below its maximum,
                    # as a share of that maximum (0 uniform, 1 one key).
                    entropy = -torch.special.xlogy(weights, weights).sum(dim=-1)
                    return 1.0 - entropy / math.log(weights.shape[-1])
                '''
            )
        },
        {"test_attention_focus": "the score is 1 - H / log(L_k), right for two keys or more"},
    ),
    Mutant(
        "j04-05: DepthStack feeds each layer x.detach()",
        A,
        {
            "depth_stack": Rewrite(
                r'''
                class DepthStack(nn.Module):
                    """num_layers independent post-norm encoder layers, applied one after the other."""

                    def __init__(
                        self,
                        num_layers: int,
                        d_model: int,
                        num_heads: int,
                        d_ff: int,
                        dropout: float = 0.0,
                    ):
                        super().__init__()
                        self.layers = nn.ModuleList(
                            [EncoderBlock(d_model, num_heads, d_ff, dropout) for _ in range(num_layers)]
                        )

                    def forward(
                        self, x: torch.Tensor, mask: torch.Tensor | None = None
                    ) -> tuple[torch.Tensor, list[torch.Tensor]]:
                        """x: (B, L, d_model), mask broadcastable to (B, H, L, L)
                        -> (output (B, L, d_model), [num_layers (B, H, L, L)]).
                        """
                        maps = []
                        for layer in self.layers:
                            x, weights = layer(x.detach(), mask)
                            maps.append(weights)
                        return x, maps
                '''
            )
        },
        {"test_depth_stack_layers": "each layer is given a detached input"},
        in_notebook=True,  # the forward is observed in the kernel: judged through the command too
    ),
    Mutant(
        "k04-01: builds one EncoderBlock and fills the list with copy.deepcopy of it",
        A,
        {
            "depth_stack": Rewrite(
                r'''
                class DepthStack(nn.Module):
                    """num_layers independent post-norm encoder layers, applied one after the other."""

                    def __init__(
                        self,
                        num_layers: int,
                        d_model: int,
                        num_heads: int,
                        d_ff: int,
                        dropout: float = 0.0,
                    ):
                        super().__init__()
                        block = EncoderBlock(d_model, num_heads, d_ff, dropout)
                        self.layers = nn.ModuleList([copy.deepcopy(block) for _ in range(num_layers)])

                    def forward(
                        self, x: torch.Tensor, mask: torch.Tensor | None = None
                    ) -> tuple[torch.Tensor, list[torch.Tensor]]:
                        """x: (B, L, d_model), mask broadcastable to (B, H, L, L)
                        -> (output (B, L, d_model), [num_layers (B, H, L, L)]).
                        """
                        maps = []
                        for layer in self.layers:
                            x, weights = layer(x, mask)
                            maps.append(weights)
                        return x, maps
                '''
            )
        },
        {"test_depth_stack_layers": "[depth_stack_layers_are_independent]"},
        # Issue 40's sixth blind corpus, graded blind on bdfa422: named.
        makes=("DepthStack.same_initial_weights",),
    ),
    Mutant(
        "k04-02: squeezes every layer's weights before storing them (weights.squeeze())",
        A,
        {
            "depth_stack": Rewrite(
                r'''
                class DepthStack(nn.Module):
                    """num_layers independent post-norm encoder layers, applied one after the other."""

                    def __init__(
                        self,
                        num_layers: int,
                        d_model: int,
                        num_heads: int,
                        d_ff: int,
                        dropout: float = 0.0,
                    ):
                        super().__init__()
                        self.layers = nn.ModuleList(
                            EncoderBlock(d_model, num_heads, d_ff, dropout) for _ in range(num_layers)
                        )

                    def forward(
                        self, x: torch.Tensor, mask: torch.Tensor | None = None
                    ) -> tuple[torch.Tensor, list[torch.Tensor]]:
                        """x: (B, L, d_model), mask broadcastable to (B, H, L, L)
                        -> (output (B, L, d_model), [num_layers (B, H, L, L)]).
                        """
                        maps = []
                        h = x
                        for layer in self.layers:
                            h, attn = layer(h, mask)
                            maps.append(attn.squeeze())  # drop the empty axes
                        return h, maps
                '''
            )
        },
        {"test_depth_stack": "[depth_stack_matches_the_reference]"},
        # Issue 40's sixth blind corpus, graded blind on bdfa422: named.
        makes=("shapes.squeezed",),
    ),
    Mutant(
        "k04-03: total_variation is computed as the largest absolute difference max_j |",
        A,
        {
            "attention_metrics": Rewrite(
                r'''
                def attention_entropy(weights: torch.Tensor) -> torch.Tensor:
                    """Entropy in nats of each distribution over the last dim, 0 log 0 = 0.

                    (..., L_k) -> (...).
                    """
                    plogp = torch.where(weights > 0, weights * torch.log(weights), torch.zeros_like(weights))
                    return -plogp.sum(dim=-1)


                def total_variation(p: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
                    """Total variation distance 1/2 * sum |p - q| over the last dim.

                    (..., L_k), (..., L_k) -> (...).
                    """
                    # the most weight that has to move on any one key
                    return (p - q).abs().amax(dim=-1)
                '''
            )
        },
        {"test_attention_metrics": "TV sums |p - q|, not its maximum"},
        # Issue 40's sixth blind corpus, graded blind on bdfa422: named.
    ),
    Mutant(
        "k04-04: the score (max weight - 1/L_k) / (1 - 1/L_k) divides 0 by 0 for a sing",
        A,
        {
            "attention_focus": Rewrite(
                r'''
                def attention_focus(weights: torch.Tensor) -> torch.Tensor:
                    """Focus of each distribution over the last dim: 0 uniform, 1 on one key.

                    (..., L_k) -> (...).
                    """
                    # My score: how far the largest weight has moved from uniform (1/L_k) towards one
                    # key (1), as a fraction of that whole way.
                    n = weights.shape[-1]
                    top = weights.amax(dim=-1)
                    return (top - 1.0 / n) / (1.0 - 1.0 / n)
                '''
            )
        },
        {"test_attention_focus": "the score is (x - 1/L_k) / (1 - 1/L_k), right for two keys"},
        # Issue 40's sixth blind corpus, graded blind on bdfa422: counterexample; named since
        # (the formula itself since the ninth corpus's s04-04, the same code).
    ),
    Mutant(
        "k04-05: the layers are built as EncoderBlock(d_model",
        A,
        {
            "depth_stack": Rewrite(
                r'''
                class DepthStack(nn.Module):
                    """num_layers independent post-norm encoder layers, applied one after the other."""

                    def __init__(
                        self,
                        num_layers: int,
                        d_model: int,
                        num_heads: int,
                        d_ff: int,
                        dropout: float = 0.0,
                    ):
                        super().__init__()
                        self.layers = nn.ModuleList()
                        for _ in range(num_layers):
                            self.layers.append(EncoderBlock(d_model, num_heads, d_ff))

                    def forward(
                        self, x: torch.Tensor, mask: torch.Tensor | None = None
                    ) -> tuple[torch.Tensor, list[torch.Tensor]]:
                        """x: (B, L, d_model), mask broadcastable to (B, H, L, L)
                        -> (output (B, L, d_model), [num_layers (B, H, L, L)]).
                        """
                        maps = []
                        for layer in self.layers:
                            x, weights = layer(x, mask=mask)
                            maps.append(weights)
                        return x, maps
                '''
            )
        },
        {
            "test_depth_stack_layers": "the layers are built with EncoderBlock's default dropout, not the stack's: pass dropout=dropout to every EncoderBlock (l"
        },
        # Issue 40's sixth blind corpus, graded blind on bdfa422: named.
        makes=("DepthStack.dropout_not_passed",),
    ),
    Mutant(
        "n04-01: every layer's weights squeezed",
        A,
        {
            "depth_stack": Rewrite(
                r'''
                class DepthStack(nn.Module):
                    """num_layers independent post-norm encoder layers, applied one after the other."""

                    def __init__(
                        self,
                        num_layers: int,
                        d_model: int,
                        num_heads: int,
                        d_ff: int,
                        dropout: float = 0.0,
                    ):
                        super().__init__()
                        self.layers = nn.ModuleList(
                            [EncoderBlock(d_model, num_heads, d_ff, dropout) for _ in range(num_layers)]
                        )

                    def forward(
                        self, x: torch.Tensor, mask: torch.Tensor | None = None
                    ) -> tuple[torch.Tensor, list[torch.Tensor]]:
                        """x: (B, L, d_model), mask broadcastable to (B, H, L, L)
                        -> (output (B, L, d_model), [num_layers (B, H, L, L)]).
                        """
                        maps = []
                        for layer in self.layers:
                            x, weights = layer(x, mask)
                            maps.append(weights.squeeze())
                        return x, maps
                '''
            )
        },
        {
            "test_depth_stack": "an axis of size 1 disappeared (a batch of one, one head, or a length of one)"
        },
        # Issue 40's seventh blind corpus, graded blind on 451e037: named.
    ),
    Mutant(
        "n04-02: the layers built without the stack's dropout",
        A,
        {
            "depth_stack": Rewrite(
                r'''
                class DepthStack(nn.Module):
                    """num_layers independent post-norm encoder layers, applied one after the other."""

                    def __init__(
                        self,
                        num_layers: int,
                        d_model: int,
                        num_heads: int,
                        d_ff: int,
                        dropout: float = 0.0,
                    ):
                        super().__init__()
                        self.layers = nn.ModuleList(
                            [EncoderBlock(d_model, num_heads, d_ff) for _ in range(num_layers)]
                        )

                    def forward(
                        self, x: torch.Tensor, mask: torch.Tensor | None = None
                    ) -> tuple[torch.Tensor, list[torch.Tensor]]:
                        """x: (B, L, d_model), mask broadcastable to (B, H, L, L)
                        -> (output (B, L, d_model), [num_layers (B, H, L, L)]).
                        """
                        maps = []
                        for layer in self.layers:
                            x, weights = layer(x, mask)
                            maps.append(weights)
                        return x, maps
                '''
            )
        },
        {
            "test_depth_stack_layers": "the layers are built with EncoderBlock's default dropout, not the stack's"
        },
        # Issue 40's seventh blind corpus, graded blind on 451e037: named.
    ),
    Mutant(
        "n04-03: total variation summed over dim=1",
        A,
        {
            "attention_metrics": Rewrite(
                r'''
                def attention_entropy(weights: torch.Tensor) -> torch.Tensor:
                    """Entropy in nats of each distribution over the last dim, 0 log 0 = 0.

                    (..., L_k) -> (...).
                    """
                    return -torch.special.xlogy(weights, weights).sum(dim=-1)


                def total_variation(p: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
                    """Total variation distance 1/2 * sum |p - q| over the last dim.

                    (..., L_k), (..., L_k) -> (...).
                    """
                    return 0.5 * (p - q).abs().sum(dim=1)
                '''
            )
        },
        {"test_attention_metrics": "TV is summed over a fixed axis counted from the front"},
        # Issue 40's seventh blind corpus, graded blind on 451e037: the error's lines alone ("an
        # axis index is out of range: the tensor has fewer axes than the code expects"); named
        # since fix8a, above those lines.
    ),
    Mutant(
        "n04-04: a max-weight score that divides 0 by 0 for a single key",
        A,
        {
            "attention_focus": Rewrite(
                r'''
                def attention_focus(weights: torch.Tensor) -> torch.Tensor:
                    """Focus of each distribution over the last dim: 0 uniform, 1 on one key.

                    (..., L_k) -> (...).
                    """
                    # Design: how far the largest weight has moved from uniform (1/L_k) towards one
                    # key (1): (max - 1/L_k) / (1 - 1/L_k). Uniform -> 0, one key -> 1, and the largest
                    # weight of softmax(s / T) falls as T grows.
                    n_keys = weights.shape[-1]
                    top = weights.max(dim=-1).values
                    return (top - 1.0 / n_keys) / (1.0 - 1.0 / n_keys)
                '''
            )
        },
        {"test_attention_focus": "the score is (x - 1/L_k) / (1 - 1/L_k), right for two keys"},
        # Issue 40's seventh blind corpus, graded blind on 451e037: named (the formula itself
        # since the ninth corpus's s04-04, the same code).
    ),
    Mutant(
        "n04-05: a perplexity score, 1 - exp(H)/L_k, not 1 on one key",
        A,
        {
            "attention_focus": Rewrite(
                r'''
                def attention_focus(weights: torch.Tensor) -> torch.Tensor:
                    """Focus of each distribution over the last dim: 0 uniform, 1 on one key.

                    (..., L_k) -> (...).
                    """
                    # Design: the perplexity exp(H) is the "effective number of keys" attended to,
                    # from 1 (one key) to L_k (uniform). The score is the share of keys NOT used:
                    # 1 - exp(H) / L_k, which is 0 for uniform attention and grows as it sharpens.
                    n_keys = weights.shape[-1]
                    entropy = -torch.special.xlogy(weights, weights).sum(dim=-1)
                    return 1.0 - torch.exp(entropy) / n_keys
                '''
            )
        },
        {"test_attention_focus": "the score is 1 - (the effective number of keys) / L_k"},
        # Issue 40's seventh blind corpus, graded blind on 451e037: counterexample ("where the
        # statement asks for 1"); named since fix8a.
    ),
    Mutant(
        "p04-01: weights.squeeze() on every layer's map",
        A,
        {
            "depth_stack": Rewrite(
                r'''
                # kind: wrong
                # grade_id: depth_stack
                # mistake: collects each layer's map as weights.squeeze(), which drops the head axis (one head) and the batch axis (batch of one) that the statement says to keep.
                # evidence: tools/ev04.py: DepthStack(2, 8, 1 head, 16) on a batch of one: maps of shape (5, 5) instead of (1, 1, 5, 5).
                class DepthStack(nn.Module):
                    """num_layers independent post-norm encoder layers, applied one after the other."""

                    def __init__(
                        self,
                        num_layers: int,
                        d_model: int,
                        num_heads: int,
                        d_ff: int,
                        dropout: float = 0.0,
                    ):
                        super().__init__()
                        self.layers = nn.ModuleList(
                            EncoderBlock(d_model, num_heads, d_ff, dropout) for _ in range(num_layers)
                        )

                    def forward(
                        self, x: torch.Tensor, mask: torch.Tensor | None = None
                    ) -> tuple[torch.Tensor, list[torch.Tensor]]:
                        maps = []
                        for layer in self.layers:
                            x, weights = layer(x, mask)
                            maps.append(weights.squeeze())  # tidy the map up for plotting
                        return x, maps
                '''
            )
        },
        {
            "test_depth_stack": "an axis of size 1 disappeared (a batch of one, one head, or a length of one)"
        },
        # Issue 40's seventh blind corpus, graded blind on 451e037: named.
    ),
    Mutant(
        "p04-02: the layers built without dropout",
        A,
        {
            "depth_stack": Rewrite(
                r'''
                # kind: wrong
                # grade_id: depth_stack
                # mistake: builds every layer as EncoderBlock(d_model, num_heads, d_ff) without passing dropout, so the stack has no dropout at all in training mode whatever rate it was given.
                # evidence: tools/ev04.py: DepthStack(..., dropout=0.3): the Dropout modules inside have p = 0.0 (mine 0.3); two train-mode calls give identical outputs (mine differ).
                class DepthStack(nn.Module):
                    """num_layers independent post-norm encoder layers, applied one after the other."""

                    def __init__(
                        self,
                        num_layers: int,
                        d_model: int,
                        num_heads: int,
                        d_ff: int,
                        dropout: float = 0.0,
                    ):
                        super().__init__()
                        self.dropout = dropout
                        self.layers = nn.ModuleList(
                            EncoderBlock(d_model, num_heads, d_ff) for _ in range(num_layers)
                        )

                    def forward(
                        self, x: torch.Tensor, mask: torch.Tensor | None = None
                    ) -> tuple[torch.Tensor, list[torch.Tensor]]:
                        maps = []
                        for layer in self.layers:
                            x, weights = layer(x, mask)
                            maps.append(weights)
                        return x, maps
                '''
            )
        },
        {
            "test_depth_stack_layers": "the layers are built with EncoderBlock's default dropout, not the stack's"
        },
        # Issue 40's seventh blind corpus, graded blind on 451e037: named.
    ),
    Mutant(
        "p04-03: total variation as the largest |p - q|",
        A,
        {
            "attention_metrics": Rewrite(
                r'''
                # kind: wrong
                # grade_id: attention_metrics
                # mistake: total_variation returns the LARGEST single-key difference max|p - q| instead of half the sum of |p - q| (entropy is correct).
                # evidence: tools/ev04.py: TV([.5,.5,0,0], [0,0,.5,.5]) = 0.5 here, 1.0 by the definition (and in my answer).
                def attention_entropy(weights: torch.Tensor) -> torch.Tensor:
                    """Entropy in nats of each distribution over the last dim, 0 log 0 = 0."""
                    return -torch.special.xlogy(weights, weights).sum(dim=-1)


                def total_variation(p: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
                    """Total variation distance 1/2 * sum |p - q| over the last dim."""
                    # TV is the largest amount by which p and q disagree
                    return (p - q).abs().amax(dim=-1)
                '''
            )
        },
        {"test_attention_metrics": "TV sums |p - q|, not its maximum"},
        # Issue 40's seventh blind corpus, graded blind on 451e037: named.
    ),
    Mutant(
        "p04-04: entropy normalised by the count of non-zero weights",
        A,
        {
            "attention_focus": Rewrite(
                r'''
                # kind: wrong
                # grade_id: attention_focus
                # mistake: normalises the entropy by log of the number of NON-ZERO weights (so masked keys "do not count"), which makes the score jump up when a tiny weight underflows to exactly 0, so it can rise as the temperature grows.
                # evidence: tools/ev04.py: scores s = [0, 0, -120]: softmax(s/1) = [.5,.5,0] (exact 0 by underflow) scores 0.0, softmax(s/4) = [.5,.5,4.7e-14] scores 0.369: the score rises as T grows (mine: 0.369 at both).
                def attention_focus(weights: torch.Tensor) -> torch.Tensor:
                    """Focus of each distribution over the last dim: 0 uniform, 1 on one key."""
                    # My score: 1 - H / log(n), where n is the number of keys that actually
                    # receive weight: a masked key (weight exactly 0) is not a key this query
                    # could have looked at, so it should not make the query look focused.
                    # n is clamped to at least 2 so a one-key row (H = 0) scores 1, not 0/0.
                    n = (weights > 0).sum(dim=-1).clamp_min(2).to(weights.dtype)
                    entropy = -torch.special.xlogy(weights, weights).sum(dim=-1)
                    return (1 - entropy / torch.log(n)).clamp(0.0, 1.0)
                '''
            )
        },
        {"test_attention_focus": "the score is 1 - H / log(the number of non-zero weights), not"},
        # Issue 40's seventh blind corpus, graded blind on 451e037: counterexample ("the score
        # rose as T grew"); named since fix8a.
    ),
    Mutant(
        "q04-04: entropy with the weights clamped at 1e-3 inside the log",
        A,
        {
            "attention_metrics": Rewrite(
                r'''
                def attention_entropy(weights: torch.Tensor) -> torch.Tensor:
                    """Entropy in nats of each distribution over the last dim, 0 log 0 = 0.

                    (..., L_k) -> (...).
                    """
                    # xlogy(0, 0) = 0, so exact zeros add nothing
                    return -(weights * weights.clamp_min(1e-3).log()).sum(dim=-1)


                def total_variation(p: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
                    """Total variation distance 1/2 * sum |p - q| over the last dim.

                    (..., L_k), (..., L_k) -> (...).
                    """
                    return 0.5 * (p - q).abs().sum(dim=-1)
                '''
            )
        },
        {"test_attention_metrics": "the weights are clamped at, or shifted by, an epsilon inside"},
        # Issue 40's eighth blind corpus, graded blind on 47d54b0: counterexample (named since).
    ),
    Mutant(
        "q04-01: DepthStack squeezes every layer's map",
        A,
        {
            "depth_stack": Rewrite(
                r'''
                class DepthStack(nn.Module):
                    """num_layers independent post-norm encoder layers, applied one after the other."""

                    def __init__(
                        self,
                        num_layers: int,
                        d_model: int,
                        num_heads: int,
                        d_ff: int,
                        dropout: float = 0.0,
                    ):
                        super().__init__()
                        self.layers = nn.ModuleList(
                            [EncoderBlock(d_model, num_heads, d_ff, dropout) for _ in range(num_layers)]
                        )

                    def forward(
                        self, x: torch.Tensor, mask: torch.Tensor | None = None
                    ) -> tuple[torch.Tensor, list[torch.Tensor]]:
                        """x: (B, L, d_model), mask broadcastable to (B, H, L, L)
                        -> (output (B, L, d_model), [num_layers (B, H, L, L)]).
                        """
                        maps = []
                        for layer in self.layers:
                            x, weights = layer(x, mask)
                            maps.append(weights.squeeze())
                        return x, maps
                '''
            )
        },
        {"test_depth_stack": "an axis of size 1 disappeared"},
        # Issue 40's eighth blind corpus, graded blind on 47d54b0: named.
    ),
    Mutant(
        "q04-02: DepthStack passes the mask to the first layer only",
        A,
        {
            "depth_stack": Rewrite(
                r'''
                class DepthStack(nn.Module):
                    """num_layers independent post-norm encoder layers, applied one after the other."""

                    def __init__(
                        self,
                        num_layers: int,
                        d_model: int,
                        num_heads: int,
                        d_ff: int,
                        dropout: float = 0.0,
                    ):
                        super().__init__()
                        self.layers = nn.ModuleList(
                            [EncoderBlock(d_model, num_heads, d_ff, dropout) for _ in range(num_layers)]
                        )

                    def forward(
                        self, x: torch.Tensor, mask: torch.Tensor | None = None
                    ) -> tuple[torch.Tensor, list[torch.Tensor]]:
                        """x: (B, L, d_model), mask broadcastable to (B, H, L, L)
                        -> (output (B, L, d_model), [num_layers (B, H, L, L)]).
                        """
                        maps = []
                        for i, layer in enumerate(self.layers):
                            # the mask hides the keys at the input; after it they are mixed in
                            x, weights = layer(x, mask if i == 0 else None)
                            maps.append(weights)
                        return x, maps
                '''
            )
        },
        {"test_depth_stack": "only the first layer gets the mask"},
        # Issue 40's eighth blind corpus, graded blind on 47d54b0: named.
    ),
    Mutant(
        "q04-03: total_variation takes the largest difference, not half the sum",
        A,
        {
            "attention_metrics": Rewrite(
                r'''
                def attention_entropy(weights: torch.Tensor) -> torch.Tensor:
                    """Entropy in nats of each distribution over the last dim, 0 log 0 = 0.

                    (..., L_k) -> (...).
                    """
                    # xlogy(0, 0) = 0, so exact zeros add nothing
                    return -torch.special.xlogy(weights, weights).sum(dim=-1)


                def total_variation(p: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
                    """Total variation distance 1/2 * sum |p - q| over the last dim.

                    (..., L_k), (..., L_k) -> (...).
                    """
                    return (p - q).abs().amax(dim=-1)
                '''
            )
        },
        {"test_attention_metrics": "TV sums |p - q|, not its maximum"},
        # Issue 40's eighth blind corpus, graded blind on 47d54b0: named.
    ),
    Mutant(
        "q04-05: attention_focus divides by log(L_k): NaN for a single key",
        A,
        {
            "attention_focus": Rewrite(
                r'''
                def attention_focus(weights: torch.Tensor) -> torch.Tensor:
                    """Focus of each distribution over the last dim: 0 uniform, 1 on one key.

                    (..., L_k) -> (...).
                    """
                    # Design: 1 - H(p) / log(L_k), the entropy's distance from its maximum, as a share
                    # of the whole range [0, log L_k]. Uniform: H = log L_k -> 0; one key: H = 0 -> 1.
                    # The entropy ignores the keys' order, and it grows with the softmax temperature,
                    # so the score falls. A single key (log 1 = 0) gets 1; rounding is clamped to [0, 1].
                    n = weights.shape[-1]
                    entropy = -torch.special.xlogy(weights, weights).sum(dim=-1)
                    return (1.0 - entropy / math.log(n)).clamp(0.0, 1.0)
                '''
            )
        },
        {"test_attention_focus": "the score is 1 - H / log(L_k), right for two keys or more"},
        # Issue 40's eighth blind corpus, graded blind on 47d54b0: named.
    ),
    Mutant(
        "r04-01: DepthStack squeezes every layer's map",
        A,
        {
            "depth_stack": Rewrite(
                r'''
                # id: r04-01
                # kind: wrong
                # grade_id: depth_stack
                # mistake: stores each layer's map with .squeeze(), which drops every axis of size 1 (one head, a batch of one, a single token), although the statement asks for the weights as they are, (B, H, L, L).
                # evidence: my experiment (scripts ev0N.py, output ev0N.txt in /work/fresh-corpus8b):
                #   r04-01: correct one head, batch of one: map shapes [(1, 1, 4, 4), (1, 1, 4, 4)]
                #   r04-01: r04-01 one head, batch of one: map shapes [(4, 4), (4, 4)]
                # public checks: passes every GRADED public check cell; only ungraded demo cells of the notebook raise: ERROR in (ungraded cell): ValueError: expected layer 0 weights of shape (L, L) or (H, L, L), got shape (); ERROR in (ungraded cell): ValueError: expected layer 0 weights of shape (L, L) or (H, L, L), got shape (); ERROR in (ungraded cell): IndexError: index 4 is out of bounds for dimension 0 with size 0; ERROR in (ungraded cell): NameError: name 'attention_stats' is not defined; ERROR in (ungraded
                class DepthStack(nn.Module):
                    """num_layers independent post-norm encoder layers, applied one after the other."""

                    def __init__(
                        self,
                        num_layers: int,
                        d_model: int,
                        num_heads: int,
                        d_ff: int,
                        dropout: float = 0.0,
                    ):
                        super().__init__()
                        self.layers = nn.ModuleList(
                            [EncoderBlock(d_model, num_heads, d_ff, dropout) for _ in range(num_layers)]
                        )

                    def forward(
                        self, x: torch.Tensor, mask: torch.Tensor | None = None
                    ) -> tuple[torch.Tensor, list[torch.Tensor]]:
                        """x: (B, L, d_model), mask broadcastable to (B, H, L, L)
                        -> (output (B, L, d_model), [num_layers (B, H, L, L)]).
                        """
                        maps = []
                        for layer in self.layers:
                            x, weights = layer(x, mask)
                            maps.append(weights.squeeze())  # tidy the map for plotting
                        return x, maps
                '''
            )
        },
        {"test_depth_stack": "an axis of size 1 disappeared"},
        # Issue 40's eighth blind corpus, graded blind on 47d54b0: named.
    ),
    Mutant(
        "r04-02: DepthStack builds its layers without the stack's dropout",
        A,
        {
            "depth_stack": Rewrite(
                r'''
                # id: r04-02
                # kind: wrong
                # grade_id: depth_stack
                # mistake: builds every layer as EncoderBlock(d_model, num_heads, d_ff) without passing the dropout rate, so the stack never applies the dropout it is given (the statement asks for EncoderBlock(d_model, num_heads, d_ff, dropout)).
                # evidence: my experiment (scripts ev0N.py, output ev0N.txt in /work/fresh-corpus8b):
                #   r04-02: correct dropout=0.5 in train mode: two calls differ: True | dropout rates inside: [0.5]
                #   r04-02: r04-02 dropout=0.5 in train mode: two calls differ: False | dropout rates inside: [0.0]
                # public checks: passes every public check of the notebook
                class DepthStack(nn.Module):
                    """num_layers independent post-norm encoder layers, applied one after the other."""

                    def __init__(
                        self,
                        num_layers: int,
                        d_model: int,
                        num_heads: int,
                        d_ff: int,
                        dropout: float = 0.0,
                    ):
                        super().__init__()
                        self.layers = nn.ModuleList()
                        for _ in range(num_layers):
                            self.layers.append(EncoderBlock(d_model, num_heads, d_ff))

                    def forward(
                        self, x: torch.Tensor, mask: torch.Tensor | None = None
                    ) -> tuple[torch.Tensor, list[torch.Tensor]]:
                        """x: (B, L, d_model), mask broadcastable to (B, H, L, L)
                        -> (output (B, L, d_model), [num_layers (B, H, L, L)]).
                        """
                        maps = []
                        for layer in self.layers:
                            x, weights = layer(x, mask)
                            maps.append(weights)
                        return x, maps
                '''
            )
        },
        {
            "test_depth_stack_layers": "the layers are built with EncoderBlock's default dropout, not the stack's"
        },
        # Issue 40's eighth blind corpus, graded blind on 47d54b0: named.
    ),
    Mutant(
        "r04-03: total_variation takes the largest difference, not half the sum",
        A,
        {
            "attention_metrics": Rewrite(
                r'''
                # id: r04-03
                # kind: wrong
                # grade_id: attention_metrics
                # mistake: total_variation returns the LARGEST absolute difference over the keys instead of half the sum of the absolute differences (they agree only when a single key gains or loses all the moved weight, as in the public examples).
                # evidence: my experiment (scripts ev0N.py, output ev0N.txt in /work/fresh-corpus8b):
                #   r04-03: TV([.5,.5,0,0],[0,0,.5,.5]) correct 1.0 | wrong 0.5
                # public checks: passes every public check of the notebook
                def attention_entropy(weights: torch.Tensor) -> torch.Tensor:
                    """Entropy in nats of each distribution over the last dim, 0 log 0 = 0.

                    (..., L_k) -> (...).
                    """
                    return -torch.special.xlogy(weights, weights).sum(dim=-1)


                def total_variation(p: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
                    """Total variation distance 1/2 * sum |p - q| over the last dim.

                    (..., L_k), (..., L_k) -> (...).
                    """
                    # the largest amount of weight that any key has to give up or receive
                    return (p - q).abs().amax(dim=-1)
                '''
            )
        },
        {"test_attention_metrics": "TV sums |p - q|, not its maximum"},
        # Issue 40's eighth blind corpus, graded blind on 47d54b0: named.
    ),
    Mutant(
        "r04-04: attention_focus as (L_k - perplexity) / (L_k - 1): NaN for a single key",
        A,
        {
            "attention_focus": Rewrite(
                r'''
                # id: r04-04
                # kind: wrong
                # grade_id: attention_focus
                # mistake: the design (L_k - perplexity) / (L_k - 1) divides by zero for a single key (L_k = 1), giving NaN, although the statement requires a finite score in [0, 1] there.
                # evidence: my experiment (scripts ev0N.py, output ev0N.txt in /work/fresh-corpus8b):
                #   r04-04: single key rows (3,1): correct [0.0, 0.0, 0.0] | wrong [nan, nan, nan]
                # public checks: FAILS public check(s): ERROR in test_attention_focus: AssertionError: three rows of a single key, shape (3, 1), must give 3 scores in [0, 1]; got tensor([nan, nan, nan])
                def attention_focus(weights: torch.Tensor) -> torch.Tensor:
                    """Focus of each distribution over the last dim: 0 uniform, 1 on one key.

                    (..., L_k) -> (...).
                    """
                    # Design: the perplexity exp(H) is the "effective number of keys" looked at:
                    # L_k for uniform attention, 1 for one key. Mapping it linearly so that L_k keys
                    # give 0 and one key gives 1: (L_k - exp(H)) / (L_k - 1). exp(H) grows with the
                    # temperature and ignores the order of the keys.
                    num_keys = weights.shape[-1]
                    entropy = -torch.special.xlogy(weights, weights).sum(dim=-1)
                    return (num_keys - entropy.exp()) / (num_keys - 1)
                '''
            )
        },
        {"test_attention_focus": "the score is not finite for a single key (L_k = 1) alone"},
        # Issue 40's eighth blind corpus, graded blind on 47d54b0: named.
    ),
    Mutant(
        "r04-05: DepthStack reseeds torch before building each layer",
        A,
        {
            "depth_stack": Rewrite(
                r'''
                # id: r04-05
                # kind: wrong
                # grade_id: depth_stack
                # mistake: reseeds the global RNG (torch.manual_seed(i)) before building layer i "for reproducibility", so every DepthStack starts from the same weights whatever seed the caller set (the 20 seeds of Section 5 all get identical stacks) and the caller's RNG stream is reset.
                # evidence: my experiment (scripts ev0N.py, output ev0N.txt in /work/fresh-corpus8b):
                #   r04-05: correct stacks built after seeds 1 and 2 identical: False | caller RNG after building one layer same as after building an EncoderBlock: True
                #   r04-05: r04-05 stacks built after seeds 1 and 2 identical: True | caller RNG after building one layer same as after building an EncoderBlock: False
                # public checks: passes every public check of the notebook
                class DepthStack(nn.Module):
                    """num_layers independent post-norm encoder layers, applied one after the other."""

                    def __init__(
                        self,
                        num_layers: int,
                        d_model: int,
                        num_heads: int,
                        d_ff: int,
                        dropout: float = 0.0,
                    ):
                        super().__init__()
                        layers = []
                        for i in range(num_layers):
                            # a different, reproducible seed per layer, so that no two layers start
                            # from the same weights
                            torch.manual_seed(i)
                            layers.append(EncoderBlock(d_model, num_heads, d_ff, dropout))
                        self.layers = nn.ModuleList(layers)

                    def forward(
                        self, x: torch.Tensor, mask: torch.Tensor | None = None
                    ) -> tuple[torch.Tensor, list[torch.Tensor]]:
                        """x: (B, L, d_model), mask broadcastable to (B, H, L, L)
                        -> (output (B, L, d_model), [num_layers (B, H, L, L)]).
                        """
                        maps = []
                        for layer in self.layers:
                            x, weights = layer(x, mask)
                            maps.append(weights)
                        return x, maps

                '''
            )
        },
        {"test_depth_stack_layers": "the stack's weights do not follow the seed set before"},
        # Issue 40's eighth blind corpus, graded blind on 47d54b0: not caught (caught since).
    ),
    Mutant(
        "t04-04: attention_focus clamps the caller's weights in place",
        A,
        {
            "attention_focus": Rewrite(
                r'''
                def attention_focus(weights: torch.Tensor) -> torch.Tensor:
                    """Focus of each distribution over the last dim: 0 uniform, 1 on one key.

                    (..., L_k) -> (...).
                    """
                    # My score: 1 - H(p) / log(L_k), the entropy relative to its maximum (uniform
                    # attention). 0 for uniform, 1 for one key; entropy ignores the order of the keys
                    # and grows with the temperature. A single key counts as fully focused (1).
                    n = weights.shape[-1]
                    if n == 1:
                        return torch.ones(weights.shape[:-1], dtype=weights.dtype)
                    p = weights.clamp_(min=1e-12)  # no log(0)
                    entropy = -(p * p.log()).sum(dim=-1)
                    return (1 - entropy / math.log(n)).clamp(0.0, 1.0)
                '''
            )
        },
        {
            "test_attention_focus": (
                "`attention_focus` changed a tensor it was given, in place: its argument "
                "`weights` changed during the call"
            )
        },
        makes=("inputs.written_in_place",),
        # Issue 40's ninth blind corpus, graded blind on feb0b2e: not caught (caught since).
    ),
    Mutant(
        "t04-02: one list of maps kept on the module, cleared and refilled by every call",
        A,
        {
            "depth_stack": Rewrite(
                r'''
                class DepthStack(nn.Module):
                    """num_layers independent post-norm encoder layers, applied one after the other."""

                    def __init__(
                        self,
                        num_layers: int,
                        d_model: int,
                        num_heads: int,
                        d_ff: int,
                        dropout: float = 0.0,
                    ):
                        super().__init__()
                        self.layers = nn.ModuleList(
                            [EncoderBlock(d_model, num_heads, d_ff, dropout) for _ in range(num_layers)]
                        )
                        self.attention_maps: list[torch.Tensor] = []  # the last forward's maps, for plots

                    def forward(
                        self, x: torch.Tensor, mask: torch.Tensor | None = None
                    ) -> tuple[torch.Tensor, list[torch.Tensor]]:
                        """x: (B, L, d_model), mask broadcastable to (B, H, L, L)
                        -> (output (B, L, d_model), [num_layers (B, H, L, L)]).
                        """
                        self.attention_maps.clear()
                        for layer in self.layers:
                            x, weights = layer(x, mask)
                            self.attention_maps.append(weights)
                        return x, self.attention_maps
                '''
            )
        },
        {"test_depth_stack": "every call returns one and the same list object, so the next call"},
        in_notebook=True,
        # Issue 40's ninth blind corpus, graded blind on feb0b2e: not caught (caught since).
    ),
    Mutant(
        "t04-05: entropy's NaN replaced by 0 after the sum",
        A,
        {
            "attention_metrics": Rewrite(
                r'''
                def attention_entropy(weights: torch.Tensor) -> torch.Tensor:
                    """Entropy in nats of each distribution over the last dim, 0 log 0 = 0.

                    (..., L_k) -> (...).
                    """
                    entropy = -(weights * torch.log(weights)).sum(dim=-1)
                    return torch.nan_to_num(entropy, nan=0.0)  # 0 * log 0 = nan, counts as 0


                def total_variation(p: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
                    """Total variation distance 1/2 * sum |p - q| over the last dim.

                    (..., L_k), (..., L_k) -> (...).
                    """
                    return 0.5 * (p - q).abs().sum(dim=-1)
                '''
            )
        },
        {"test_attention_metrics": "0 * log(0) is NaN, and replacing the NaN after the sum"},
        # Issue 40's ninth blind corpus, graded blind on feb0b2e: counterexample (named since).
    ),
    Mutant(
        "s04-01: each layer's map squeezed, its axes of size 1 dropped",
        A,
        {
            "depth_stack": Rewrite(
                r'''
                class DepthStack(nn.Module):
                    """num_layers independent post-norm encoder layers, applied one after the other."""

                    def __init__(
                        self,
                        num_layers: int,
                        d_model: int,
                        num_heads: int,
                        d_ff: int,
                        dropout: float = 0.0,
                    ):
                        super().__init__()
                        self.layers = nn.ModuleList(
                            [EncoderBlock(d_model, num_heads, d_ff, dropout) for _ in range(num_layers)]
                        )

                    def forward(
                        self, x: torch.Tensor, mask: torch.Tensor | None = None
                    ) -> tuple[torch.Tensor, list[torch.Tensor]]:
                        """x: (B, L, d_model), mask broadcastable to (B, H, L, L)

                        -> (output (B, L, d_model), [num_layers (B, H, L, L)]).
                        """
                        maps = []
                        for layer in self.layers:
                            x, weights = layer(x, mask)
                            maps.append(weights.squeeze())
                        return x, maps
                '''
            )
        },
        {
            "test_depth_stack": "an axis of size 1 disappeared",
        },
        # Issue 40's ninth blind corpus, graded blind on feb0b2e: named.
    ),
    Mutant(
        "s04-02: only the first layer gets the mask",
        A,
        {
            "depth_stack": Rewrite(
                r'''
                class DepthStack(nn.Module):
                    """num_layers independent post-norm encoder layers, applied one after the other."""

                    def __init__(
                        self,
                        num_layers: int,
                        d_model: int,
                        num_heads: int,
                        d_ff: int,
                        dropout: float = 0.0,
                    ):
                        super().__init__()
                        self.layers = nn.ModuleList(
                            [EncoderBlock(d_model, num_heads, d_ff, dropout) for _ in range(num_layers)]
                        )

                    def forward(
                        self, x: torch.Tensor, mask: torch.Tensor | None = None
                    ) -> tuple[torch.Tensor, list[torch.Tensor]]:
                        """x: (B, L, d_model), mask broadcastable to (B, H, L, L)

                        -> (output (B, L, d_model), [num_layers (B, H, L, L)]).
                        """
                        maps = []
                        for i, layer in enumerate(self.layers):
                            # the first layer applies the mask; later layers read its masked output
                            x, weights = layer(x, mask if i == 0 else None)
                            maps.append(weights)
                        return x, maps
                '''
            )
        },
        {
            "test_depth_stack": "only the first layer gets the mask, the later ones attend to every key",
        },
        # Issue 40's ninth blind corpus, graded blind on feb0b2e: named.
    ),
    Mutant(
        "s04-03: total variation as the largest single-key difference",
        A,
        {
            "attention_metrics": Rewrite(
                r'''
                def attention_entropy(weights: torch.Tensor) -> torch.Tensor:
                    """Entropy in nats of each distribution over the last dim, 0 log 0 = 0.

                    (..., L_k) -> (...).
                    """
                    return -torch.special.xlogy(weights, weights).sum(dim=-1)


                def total_variation(p: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
                    """Total variation distance 1/2 * sum |p - q| over the last dim.

                    (..., L_k), (..., L_k) -> (...).
                    """
                    return (p - q).abs().amax(dim=-1)
                '''
            )
        },
        {
            "test_attention_metrics": "TV sums |p - q|, not its maximum",
        },
        # Issue 40's ninth blind corpus, graded blind on feb0b2e: named.
    ),
    Mutant(
        "s04-04: max-weight focus score with no guard for a single key",
        A,
        {
            "attention_focus": Rewrite(
                r'''
                def attention_focus(weights: torch.Tensor) -> torch.Tensor:
                    """Focus of each distribution over the last dim: 0 uniform, 1 on one key.

                    (..., L_k) -> (...).
                    """
                    # My score: how far the largest weight has moved from uniform (1/L) towards
                    # one-hot (1), as a fraction of the way: (max - 1/L) / (1 - 1/L).
                    n = weights.shape[-1]
                    top = weights.amax(dim=-1)
                    return (top - 1.0 / n) / (1.0 - 1.0 / n)
                '''
            )
        },
        {
            "test_attention_focus": "the score is (x - 1/L_k) / (1 - 1/L_k), right for two keys or more",
        },
        # Issue 40's ninth blind corpus, graded blind on feb0b2e: counterexample (named since).
    ),
    Mutant(
        "s04-05: attention_entropy sets the caller's zero weights to 1 in place",
        A,
        {
            "attention_metrics": Rewrite(
                r'''
                def attention_entropy(weights: torch.Tensor) -> torch.Tensor:
                    """Entropy in nats of each distribution over the last dim, 0 log 0 = 0.

                    (..., L_k) -> (...).
                    """
                    # 0 log 0 counts as 0: put 1 where a weight is 0, since 1 * log 1 = 0 too
                    weights[weights == 0] = 1.0
                    return -(weights * weights.log()).sum(dim=-1)


                def total_variation(p: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
                    """Total variation distance 1/2 * sum |p - q| over the last dim.

                    (..., L_k), (..., L_k) -> (...).
                    """
                    return 0.5 * (p - q).abs().sum(dim=-1)
                '''
            )
        },
        {
            "test_attention_metrics": "changed a tensor it was given, in place",
        },
        # Issue 40's ninth blind corpus, graded blind on feb0b2e: named.
    ),
    Mutant(
        "t04-01: the layers built without the stack's dropout",
        A,
        {
            "depth_stack": Rewrite(
                r'''
                class DepthStack(nn.Module):
                    """num_layers independent post-norm encoder layers, applied one after the other."""

                    def __init__(
                        self,
                        num_layers: int,
                        d_model: int,
                        num_heads: int,
                        d_ff: int,
                        dropout: float = 0.0,
                    ):
                        super().__init__()
                        self.layers = nn.ModuleList()
                        for _ in range(num_layers):
                            self.layers.append(EncoderBlock(d_model, num_heads, d_ff))

                    def forward(
                        self, x: torch.Tensor, mask: torch.Tensor | None = None
                    ) -> tuple[torch.Tensor, list[torch.Tensor]]:
                        """x: (B, L, d_model), mask broadcastable to (B, H, L, L)
                        -> (output (B, L, d_model), [num_layers (B, H, L, L)]).
                        """
                        maps = []
                        for layer in self.layers:
                            x, weights = layer(x, mask)
                            maps.append(weights)
                        return x, maps
                '''
            )
        },
        {
            "test_depth_stack_layers": "the layers are built with EncoderBlock's default dropout, not the stack's",
        },
        # Issue 40's ninth blind corpus, graded blind on feb0b2e: named.
    ),
    Mutant(
        "t04-03: total variation as the largest absolute difference",
        A,
        {
            "attention_metrics": Rewrite(
                r'''
                def attention_entropy(weights: torch.Tensor) -> torch.Tensor:
                    """Entropy in nats of each distribution over the last dim, 0 log 0 = 0.

                    (..., L_k) -> (...).
                    """
                    return -torch.special.xlogy(weights, weights).sum(dim=-1)


                def total_variation(p: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
                    """Total variation distance 1/2 * sum |p - q| over the last dim.

                    (..., L_k), (..., L_k) -> (...).
                    """
                    # the largest amount of weight that differs between the two distributions
                    return (p - q).abs().amax(dim=-1)
                '''
            )
        },
        {
            "test_attention_metrics": "TV sums |p - q|, not its maximum",
        },
        # Issue 40's ninth blind corpus, graded blind on feb0b2e: named.
    ),
    Mutant(
        "u04-01: depth_stack returns one list kept on the module",
        A,
        {
            "depth_stack": Rewrite(
                r'''
                class DepthStack(nn.Module):
                    """num_layers independent post-norm encoder layers, applied one after the other."""

                    def __init__(
                        self,
                        num_layers: int,
                        d_model: int,
                        num_heads: int,
                        d_ff: int,
                        dropout: float = 0.0,
                    ):
                        super().__init__()
                        self.layers = nn.ModuleList(
                            [EncoderBlock(d_model, num_heads, d_ff, dropout) for _ in range(num_layers)]
                        )
                        self.maps: list[torch.Tensor] = []  # the last forward's attention maps

                    def forward(
                        self, x: torch.Tensor, mask: torch.Tensor | None = None
                    ) -> tuple[torch.Tensor, list[torch.Tensor]]:
                        """x: (B, L, d_model), mask broadcastable to (B, H, L, L)
                        -> (output (B, L, d_model), [num_layers (B, H, L, L)]).
                        """
                        self.maps.clear()
                        for layer in self.layers:
                            x, weights = layer(x, mask)
                            self.maps.append(weights)
                        return x, self.maps
                '''
            )
        },
        {
            "test_depth_stack": "every call returns one and the same list object",
        },
        # Issue 40's tenth blind corpus, graded blind on 60c32e8: named.
    ),
    Mutant(
        "u04-02: depth_stack builds its layers without the stack's dropout",
        A,
        {
            "depth_stack": Rewrite(
                r'''
                class DepthStack(nn.Module):
                    """num_layers independent post-norm encoder layers, applied one after the other."""

                    def __init__(
                        self,
                        num_layers: int,
                        d_model: int,
                        num_heads: int,
                        d_ff: int,
                        dropout: float = 0.0,
                    ):
                        super().__init__()
                        self.layers = nn.ModuleList()
                        for _ in range(num_layers):
                            self.layers.append(EncoderBlock(d_model, num_heads, d_ff))

                    def forward(
                        self, x: torch.Tensor, mask: torch.Tensor | None = None
                    ) -> tuple[torch.Tensor, list[torch.Tensor]]:
                        """x: (B, L, d_model), mask broadcastable to (B, H, L, L)
                        -> (output (B, L, d_model), [num_layers (B, H, L, L)]).
                        """
                        maps = []
                        for layer in self.layers:
                            x, weights = layer(x, mask)
                            maps.append(weights)
                        return x, maps
                '''
            )
        },
        {
            "test_depth_stack_layers": "the layers are built with EncoderBlock's default dropout, not the stack's",
        },
        # Issue 40's tenth blind corpus, graded blind on 60c32e8: named.
    ),
    Mutant(
        "u04-03: attention_focus clamps the caller's weights in place",
        A,
        {
            "attention_focus": Rewrite(
                r'''
                def attention_focus(weights: torch.Tensor) -> torch.Tensor:
                    """Focus of each distribution over the last dim: 0 uniform, 1 on one key.

                    (..., L_k) -> (...).
                    """
                    # Score = 1 - H / log(L_k): the entropy as a fraction of its largest value (uniform
                    # attention), turned round so that uniform is 0 and one key is 1. Single key: 1.
                    n = weights.shape[-1]
                    if n == 1:
                        return torch.ones(weights.shape[:-1], dtype=weights.dtype)
                    w = weights.clamp_(min=1e-12)  # no log(0)
                    entropy = -(w * w.log()).sum(dim=-1)
                    return (1.0 - entropy / math.log(n)).clamp(0.0, 1.0)
                '''
            )
        },
        {
            "test_attention_focus": "changed a tensor it was given, in place",
        },
        # Issue 40's tenth blind corpus, graded blind on 60c32e8: named.
    ),
    Mutant(
        "u04-04: total_variation is the largest single-key difference",
        A,
        {
            "attention_metrics": Rewrite(
                r'''
                def attention_entropy(weights: torch.Tensor) -> torch.Tensor:
                    """Entropy in nats of each distribution over the last dim, 0 log 0 = 0.

                    (..., L_k) -> (...).
                    """
                    return -torch.special.xlogy(weights, weights).sum(dim=-1)


                def total_variation(p: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
                    """Total variation distance 1/2 * sum |p - q| over the last dim.

                    (..., L_k), (..., L_k) -> (...).
                    """
                    # the largest amount of weight that moves between p and q
                    return (p - q).abs().amax(dim=-1)
                '''
            )
        },
        {
            "test_attention_metrics": "TV sums |p - q|, not its maximum",
        },
        # Issue 40's tenth blind corpus, graded blind on 60c32e8: named.
    ),
    Mutant(
        "u04-05: attention_focus 1 - H / log(L_k), NaN for a single key",
        A,
        {
            "attention_focus": Rewrite(
                r'''
                def attention_focus(weights: torch.Tensor) -> torch.Tensor:
                    """Focus of each distribution over the last dim: 0 uniform, 1 on one key.

                    (..., L_k) -> (...).
                    """
                    # Normalised entropy: H / log(L_k) is 1 for uniform attention and 0 for one key,
                    # whatever the length; 1 minus it is the focus.
                    entropy = -torch.special.xlogy(weights, weights).sum(dim=-1)
                    return 1.0 - entropy / math.log(weights.shape[-1])
                '''
            )
        },
        {
            "test_attention_focus": "the score is 1 - H / log(L_k), right for two keys or more",
        },
        # Issue 40's tenth blind corpus, graded blind on 60c32e8: named.
    ),
    Mutant(
        "v04-01: depth_stack clears and refills one list kept on the module",
        A,
        {
            "depth_stack": Rewrite(
                r'''
                class DepthStack(nn.Module):
                    """num_layers independent post-norm encoder layers, applied one after the other."""

                    def __init__(
                        self,
                        num_layers: int,
                        d_model: int,
                        num_heads: int,
                        d_ff: int,
                        dropout: float = 0.0,
                    ):
                        super().__init__()
                        self.layers = nn.ModuleList(
                            [EncoderBlock(d_model, num_heads, d_ff, dropout) for _ in range(num_layers)]
                        )
                        self.maps: list[torch.Tensor] = []  # filled by forward

                    def forward(
                        self, x: torch.Tensor, mask: torch.Tensor | None = None
                    ) -> tuple[torch.Tensor, list[torch.Tensor]]:
                        """x: (B, L, d_model), mask broadcastable to (B, H, L, L)
                        -> (output (B, L, d_model), [num_layers (B, H, L, L)]).
                        """
                        self.maps.clear()
                        h = x
                        for layer in self.layers:
                            h, weights = layer(h, mask)
                            self.maps.append(weights)
                        return h, self.maps
                '''
            )
        },
        {
            "test_depth_stack": "every call returns one and the same list object",
        },
        # Issue 40's tenth blind corpus, graded blind on 60c32e8: named.
    ),
    Mutant(
        "v04-02: depth_stack squeezes each layer's weights",
        A,
        {
            "depth_stack": Rewrite(
                r'''
                class DepthStack(nn.Module):
                    """num_layers independent post-norm encoder layers, applied one after the other."""

                    def __init__(
                        self,
                        num_layers: int,
                        d_model: int,
                        num_heads: int,
                        d_ff: int,
                        dropout: float = 0.0,
                    ):
                        super().__init__()
                        self.layers = nn.ModuleList(
                            [EncoderBlock(d_model, num_heads, d_ff, dropout) for _ in range(num_layers)]
                        )

                    def forward(
                        self, x: torch.Tensor, mask: torch.Tensor | None = None
                    ) -> tuple[torch.Tensor, list[torch.Tensor]]:
                        """x: (B, L, d_model), mask broadcastable to (B, H, L, L)
                        -> (output (B, L, d_model), [num_layers (B, H, L, L)]).
                        """
                        maps = []
                        h = x
                        for layer in self.layers:
                            h, weights = layer(h, mask)
                            maps.append(weights.squeeze())  # drop size-1 axes for plotting
                        return h, maps
                '''
            )
        },
        {
            "test_depth_stack": "an axis of size 1 disappeared",
        },
        # Issue 40's tenth blind corpus, graded blind on 60c32e8: named.
    ),
    Mutant(
        "v04-03: total_variation returns the largest single-key difference",
        A,
        {
            "attention_metrics": Rewrite(
                r'''
                def attention_entropy(weights: torch.Tensor) -> torch.Tensor:
                    """Entropy in nats of each distribution over the last dim, 0 log 0 = 0.

                    (..., L_k) -> (...).
                    """
                    return -torch.special.xlogy(weights, weights).sum(dim=-1)


                def total_variation(p: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
                    """Total variation distance 1/2 * sum |p - q| over the last dim.

                    (..., L_k), (..., L_k) -> (...).
                    """
                    return (p - q).abs().amax(dim=-1)
                '''
            )
        },
        {
            "test_attention_metrics": "TV sums |p - q|, not its maximum",
        },
        # Issue 40's tenth blind corpus, graded blind on 60c32e8: named.
    ),
    Mutant(
        "v04-04: attention_entropy writes 1 into the caller's zero weights",
        A,
        {
            "attention_metrics": Rewrite(
                r'''
                def attention_entropy(weights: torch.Tensor) -> torch.Tensor:
                    """Entropy in nats of each distribution over the last dim, 0 log 0 = 0.

                    (..., L_k) -> (...).
                    """
                    weights.masked_fill_(weights == 0, 1.0)  # 1 * log 1 = 0, like 0 log 0
                    return -(weights * weights.log()).sum(dim=-1) * 1.0


                def total_variation(p: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
                    """Total variation distance 1/2 * sum |p - q| over the last dim.

                    (..., L_k), (..., L_k) -> (...).
                    """
                    return 0.5 * (p - q).abs().sum(dim=-1)
                '''
            )
        },
        {
            "test_attention_metrics": "changed a tensor it was given, in place",
        },
        # Issue 40's tenth blind corpus, graded blind on 60c32e8: named.
    ),
    Mutant(
        "v04-05: attention_focus takes the number of keys as len(weights)",
        A,
        {
            "attention_focus": Rewrite(
                r'''
                def attention_focus(weights: torch.Tensor) -> torch.Tensor:
                    """Focus of each distribution over the last dim: 0 uniform, 1 on one key.

                    (..., L_k) -> (...).
                    """
                    # Design: 1 - H(p) / log(L_k), the entropy normalised by its largest possible value
                    # (uniform attention). Uniform -> 0, one-hot -> 1, always in [0, 1]; entropy is
                    # order-blind and never falls as the softmax temperature grows. Zeros are handled
                    # by xlogy (0 log 0 = 0). For L_k = 1 there is nothing to normalise: score 1.
                    n = len(weights)  # number of keys
                    if n < 2:
                        return torch.ones(weights.shape[:-1], dtype=weights.dtype, device=weights.device)
                    entropy = -torch.special.xlogy(weights, weights).sum(dim=-1)
                    return (1.0 - entropy / math.log(n)).clamp(0.0, 1.0)
                '''
            )
        },
        {
            "test_attention_focus": "the score depends on the size of the first axis (weights.shape[0])",
        },
        # Issue 40's tenth blind corpus, graded blind on 60c32e8: not caught (caught since).
    ),
    Mutant(
        "w04-01: one list on the module, cleared and refilled at each call",
        A,
        {
            "depth_stack": Rewrite(
                r'''
                class DepthStack(nn.Module):
                    """num_layers independent post-norm encoder layers, applied one after the other."""

                    def __init__(
                        self,
                        num_layers: int,
                        d_model: int,
                        num_heads: int,
                        d_ff: int,
                        dropout: float = 0.0,
                    ):
                        super().__init__()
                        self.layers = nn.ModuleList(
                            [EncoderBlock(d_model, num_heads, d_ff, dropout) for _ in range(num_layers)]
                        )
                        self.maps: list[torch.Tensor] = []  # the last forward's maps, handy for plots

                    def forward(
                        self, x: torch.Tensor, mask: torch.Tensor | None = None
                    ) -> tuple[torch.Tensor, list[torch.Tensor]]:
                        """x: (B, L, d_model), mask broadcastable to (B, H, L, L)
                        -> (output (B, L, d_model), [num_layers (B, H, L, L)]).
                        """
                        self.maps.clear()
                        for layer in self.layers:
                            x, weights = layer(x, mask)
                            self.maps.append(weights)
                        return x, self.maps
                '''
            )
        },
        {
            "test_depth_stack": "every call returns one and the same list object",
        },
        # Issue 40's eleventh blind corpus, graded blind on 48fe40c: named.
    ),
    Mutant(
        "w04-02: every map squeezed before it is stored",
        A,
        {
            "depth_stack": Rewrite(
                r'''
                class DepthStack(nn.Module):
                    """num_layers independent post-norm encoder layers, applied one after the other."""

                    def __init__(
                        self,
                        num_layers: int,
                        d_model: int,
                        num_heads: int,
                        d_ff: int,
                        dropout: float = 0.0,
                    ):
                        super().__init__()
                        self.layers = nn.ModuleList(
                            [EncoderBlock(d_model, num_heads, d_ff, dropout) for _ in range(num_layers)]
                        )

                    def forward(
                        self, x: torch.Tensor, mask: torch.Tensor | None = None
                    ) -> tuple[torch.Tensor, list[torch.Tensor]]:
                        """x: (B, L, d_model), mask broadcastable to (B, H, L, L)
                        -> (output (B, L, d_model), [num_layers (B, H, L, L)]).
                        """
                        maps = []
                        for layer in self.layers:
                            x, weights = layer(x, mask)
                            maps.append(weights.squeeze())  # drop the head axis for one-head plots
                        return x, maps
                '''
            )
        },
        {
            "test_depth_stack": "an axis of size 1 disappeared",
        },
        # Issue 40's eleventh blind corpus, graded blind on 48fe40c: named.
    ),
    Mutant(
        "w04-03: attention_entropy clamps the caller's weights in place",
        A,
        {
            "attention_metrics": Rewrite(
                r'''
                def attention_entropy(weights: torch.Tensor) -> torch.Tensor:
                    """Entropy in nats of each distribution over the last dim, 0 log 0 = 0.

                    (..., L_k) -> (...).
                    """
                    p = weights.clamp_(min=1e-12)  # no log(0)
                    return -(p * p.log()).sum(dim=-1)


                def total_variation(p: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
                    """Total variation distance 1/2 * sum |p - q| over the last dim.

                    (..., L_k), (..., L_k) -> (...).
                    """
                    return 0.5 * (p - q).abs().sum(dim=-1)
                '''
            )
        },
        {
            "test_attention_metrics": "changed a tensor it was given, in place",
        },
        # Issue 40's eleventh blind corpus, graded blind on 48fe40c: named.
    ),
    Mutant(
        "w04-04: total variation as the largest |p - q|",
        A,
        {
            "attention_metrics": Rewrite(
                r'''
                def attention_entropy(weights: torch.Tensor) -> torch.Tensor:
                    """Entropy in nats of each distribution over the last dim, 0 log 0 = 0.

                    (..., L_k) -> (...).
                    """
                    return -torch.special.xlogy(weights, weights).sum(dim=-1)


                def total_variation(p: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
                    """Total variation distance 1/2 * sum |p - q| over the last dim.

                    (..., L_k), (..., L_k) -> (...).
                    """
                    # TV is the largest difference in probability the two give to anything
                    return (p - q).abs().amax(dim=-1)
                '''
            )
        },
        {
            "test_attention_metrics": "TV sums |p - q|, not its maximum",
        },
        # Issue 40's eleventh blind corpus, graded blind on 48fe40c: named.
    ),
    Mutant(
        "w04-05: attention_focus from the max weight, 0/0 for a single key",
        A,
        {
            "attention_focus": Rewrite(
                r'''
                def attention_focus(weights: torch.Tensor) -> torch.Tensor:
                    """Focus of each distribution over the last dim: 0 uniform, 1 on one key.

                    (..., L_k) -> (...).
                    """
                    # Design: the largest weight, rescaled so that uniform attention (max 1/L_k) gives 0
                    # and one-key attention (max 1) gives 1. Order-blind, and the max weight of
                    # softmax(s / T) falls as T grows.
                    n = weights.shape[-1]
                    top = weights.amax(dim=-1)
                    return (top - 1.0 / n) / (1.0 - 1.0 / n)
                '''
            )
        },
        {
            "test_attention_focus": "the score is (x - 1/L_k) / (1 - 1/L_k), right for two keys or more",
        },
        # Issue 40's eleventh blind corpus, graded blind on 48fe40c: named.
    ),
    Mutant(
        "x04-01: one list on the module, cleared and refilled at each call",
        A,
        {
            "depth_stack": Rewrite(
                r'''
                class DepthStack(nn.Module):
                    """num_layers independent post-norm encoder layers, applied one after the other."""

                    def __init__(
                        self,
                        num_layers: int,
                        d_model: int,
                        num_heads: int,
                        d_ff: int,
                        dropout: float = 0.0,
                    ):
                        super().__init__()
                        # each layer built on its own, from the global generator: its own weights
                        self.layers = nn.ModuleList(
                            [EncoderBlock(d_model, num_heads, d_ff, dropout) for _ in range(num_layers)]
                        )

                    def forward(
                        self, x: torch.Tensor, mask: torch.Tensor | None = None
                    ) -> tuple[torch.Tensor, list[torch.Tensor]]:
                        """x: (B, L, d_model), mask broadcastable to (B, H, L, L)
                        -> (output (B, L, d_model), [num_layers (B, H, L, L)]).
                        """
                        # reuse one list instead of building a new one at every call
                        if not hasattr(self, "_maps"):
                            self._maps = []
                        self._maps.clear()
                        for layer in self.layers:
                            x, weights = layer(x, mask)
                            self._maps.append(weights)
                        return x, self._maps
                '''
            )
        },
        {
            "test_depth_stack": "every call returns one and the same list object",
        },
        # Issue 40's eleventh blind corpus, graded blind on 48fe40c: named.
    ),
    Mutant(
        "x04-02: the maps collected last layer first, insert(0, ...)",
        A,
        {
            "depth_stack": Rewrite(
                r'''
                class DepthStack(nn.Module):
                    """num_layers independent post-norm encoder layers, applied one after the other."""

                    def __init__(
                        self,
                        num_layers: int,
                        d_model: int,
                        num_heads: int,
                        d_ff: int,
                        dropout: float = 0.0,
                    ):
                        super().__init__()
                        # each layer built on its own, from the global generator: its own weights
                        self.layers = nn.ModuleList(
                            [EncoderBlock(d_model, num_heads, d_ff, dropout) for _ in range(num_layers)]
                        )

                    def forward(
                        self, x: torch.Tensor, mask: torch.Tensor | None = None
                    ) -> tuple[torch.Tensor, list[torch.Tensor]]:
                        """x: (B, L, d_model), mask broadcastable to (B, H, L, L)
                        -> (output (B, L, d_model), [num_layers (B, H, L, L)]).
                        """
                        maps = []
                        for layer in self.layers:
                            x, weights = layer(x, mask)
                            maps.insert(0, weights)  # top of the stack first, as the plots draw it
                        return x, maps
                '''
            )
        },
        {
            "test_depth_stack": "the maps come last layer first",
            "test_depth_stack_layers": "the maps come last layer first",
        },
        # Issue 40's eleventh blind corpus, graded blind on 48fe40c: counterexample (named since);
        # charged in both cells, as then.
    ),
    Mutant(
        "x04-03: attention_entropy writes 1 over the caller's zero weights",
        A,
        {
            "attention_metrics": Rewrite(
                r'''
                def attention_entropy(weights: torch.Tensor) -> torch.Tensor:
                    """Entropy in nats of each distribution over the last dim, 0 log 0 = 0.

                    (..., L_k) -> (...).
                    """
                    # 0 log 0 counts as 0: put 1 where p == 0, since 1 * log(1) = 0 as well
                    p = weights
                    p[p == 0] = 1.0
                    return -(p * p.log()).sum(dim=-1)


                def total_variation(p: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
                    """Total variation distance 1/2 * sum |p - q| over the last dim.

                    (..., L_k), (..., L_k) -> (...).
                    """
                    return 0.5 * (p - q).abs().sum(dim=-1)
                '''
            )
        },
        {
            "test_attention_metrics": "changed a tensor it was given, in place",
        },
        # Issue 40's eleventh blind corpus, graded blind on 48fe40c: named.
    ),
    Mutant(
        "x04-04: total variation as the largest |p - q|",
        A,
        {
            "attention_metrics": Rewrite(
                r'''
                def attention_entropy(weights: torch.Tensor) -> torch.Tensor:
                    """Entropy in nats of each distribution over the last dim, 0 log 0 = 0.

                    (..., L_k) -> (...).
                    """
                    # xlogy(p, p) = p log p, and exactly 0 where p == 0
                    return -torch.special.xlogy(weights, weights).sum(dim=-1)


                def total_variation(p: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
                    """Total variation distance 1/2 * sum |p - q| over the last dim.

                    (..., L_k), (..., L_k) -> (...).
                    """
                    # the largest amount by which the two distributions disagree on one key
                    return (p - q).abs().max(dim=-1).values
                '''
            )
        },
        {
            "test_attention_metrics": "TV sums |p - q|, not its maximum",
        },
        # Issue 40's eleventh blind corpus, graded blind on 48fe40c: named.
    ),
    Mutant(
        "x04-05: attention_focus squeezes its scores with .squeeze()",
        A,
        {
            "attention_focus": Rewrite(
                r'''
                def attention_focus(weights: torch.Tensor) -> torch.Tensor:
                    """Focus of each distribution over the last dim: 0 uniform, 1 on one key.

                    (..., L_k) -> (...).
                    """
                    # Design: one minus the normalised entropy, 1 - H(p) / log(L_k). The entropy of a
                    # distribution over L_k keys lies between 0 (one key) and log(L_k) (uniform), so the
                    # score is 0 for uniform, 1 for one key, in [0, 1] otherwise; it is blind to the
                    # order of the keys, and since the entropy of softmax(s / T) never falls as T grows,
                    # the score never rises. With a single key (log 1 = 0) the score is defined as 0.
                    n_keys = weights.shape[-1]
                    entropy = -torch.special.xlogy(weights, weights).sum(dim=-1, keepdim=True)
                    if n_keys < 2:
                        return torch.zeros_like(entropy).squeeze()
                    return (1.0 - entropy / math.log(n_keys)).clamp(0.0, 1.0).squeeze()
                '''
            )
        },
        {
            "test_attention_focus": "an axis of size 1 disappeared",
        },
        # Issue 40's eleventh blind corpus, graded blind on 48fe40c: counterexample (named since).
    ),
    Mutant(
        "aa04-01: DepthStack returns one list, self._maps, cleared and refilled at every call",
        A,
        {
            "depth_stack": Rewrite(
                r'''
                class DepthStack(nn.Module):
                    """num_layers independent post-norm encoder layers, applied one after the other."""

                    def __init__(
                        self,
                        num_layers: int,
                        d_model: int,
                        num_heads: int,
                        d_ff: int,
                        dropout: float = 0.0,
                    ):
                        super().__init__()
                        self.layers = nn.ModuleList(
                            [EncoderBlock(d_model, num_heads, d_ff, dropout) for _ in range(num_layers)]
                        )
                        self._maps = []  # reused at every call

                    def forward(
                        self, x: torch.Tensor, mask: torch.Tensor | None = None
                    ) -> tuple[torch.Tensor, list[torch.Tensor]]:
                        """x: (B, L, d_model), mask broadcastable to (B, H, L, L)
                        -> (output (B, L, d_model), [num_layers (B, H, L, L)]).
                        """
                        self._maps.clear()
                        for layer in self.layers:
                            x, weights = layer(x, mask)
                            self._maps.append(weights)
                        return x, self._maps
                '''
            )
        },
        {
            "test_depth_stack": "every call returns one and the same list object",
        },
        # Issue 40's thirteenth blind corpus, graded blind on 8b5375e: named.
    ),
    Mutant(
        "aa04-02: DepthStack stores weights.squeeze(1), the head axis dropped for one head",
        A,
        {
            "depth_stack": Rewrite(
                r'''
                class DepthStack(nn.Module):
                    """num_layers independent post-norm encoder layers, applied one after the other."""

                    def __init__(
                        self,
                        num_layers: int,
                        d_model: int,
                        num_heads: int,
                        d_ff: int,
                        dropout: float = 0.0,
                    ):
                        super().__init__()
                        self.layers = nn.ModuleList(
                            [EncoderBlock(d_model, num_heads, d_ff, dropout) for _ in range(num_layers)]
                        )

                    def forward(
                        self, x: torch.Tensor, mask: torch.Tensor | None = None
                    ) -> tuple[torch.Tensor, list[torch.Tensor]]:
                        """x: (B, L, d_model), mask broadcastable to (B, H, L, L)
                        -> (output (B, L, d_model), [num_layers (B, H, L, L)]).
                        """
                        maps = []
                        for layer in self.layers:
                            x, weights = layer(x, mask)
                            maps.append(weights.squeeze(1))  # one head: drop the head axis
                        return x, maps
                '''
            )
        },
        {
            "test_depth_stack": "squeeze(dim) drops axis dim whenever its size is 1",
        },
        # Issue 40's thirteenth blind corpus, graded blind on 8b5375e: named.
    ),
    Mutant(
        "aa04-03: attention_entropy clamps the caller's weights in place (clamp_)",
        A,
        {
            "attention_metrics": Rewrite(
                r'''
                def attention_entropy(weights: torch.Tensor) -> torch.Tensor:
                    """Entropy in nats of each distribution over the last dim, 0 log 0 = 0.

                    (..., L_k) -> (...).
                    """
                    p = weights.clamp_(min=1e-12)  # no log(0): 1e-12 * log(1e-12) is ~0 anyway
                    return -(p * p.log()).sum(dim=-1)


                def total_variation(p: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
                    """Total variation distance 1/2 * sum |p - q| over the last dim.

                    (..., L_k), (..., L_k) -> (...).
                    """
                    return 0.5 * (p - q).abs().sum(dim=-1)
                '''
            )
        },
        {
            "test_attention_metrics": "changed a tensor it was given, in place",
        },
        # Issue 40's thirteenth blind corpus, graded blind on 8b5375e: named.
    ),
    Mutant(
        "aa04-05: attention_focus subtracts from weights.max(dim=-1), a (values, indices) tuple",
        A,
        {
            "attention_focus": Rewrite(
                r'''
                def attention_focus(weights: torch.Tensor) -> torch.Tensor:
                    """Focus of each distribution over the last dim: 0 uniform, 1 on one key.

                    (..., L_k) -> (...).
                    """
                    # My score: the largest weight, moved from [1/L_k, 1] to [0, 1]:
                    # (max - 1/L_k) / (1 - 1/L_k). A single key scores 0.
                    n = weights.shape[-1]
                    if n < 2:
                        return torch.zeros(weights.shape[:-1], dtype=weights.dtype, device=weights.device)
                    top = weights.max(dim=-1)
                    return (top - 1.0 / n) / (1.0 - 1.0 / n)
                '''
            )
        },
        {
            "test_attention_focus": "the (values, indices) pair that max returns, was used as a tensor",
        },
        # Issue 40's thirteenth blind corpus, graded blind on 8b5375e: exception only (the TypeError
        # raised, the line shown); the pair used as a tensor is named since (df86d1b).
    ),
    Mutant(
        "ab04-01: DepthStack returns one list, self.maps, emptied and refilled at every call",
        A,
        {
            "depth_stack": Rewrite(
                r'''
                class DepthStack(nn.Module):
                    """num_layers independent post-norm encoder layers, applied one after the other."""

                    def __init__(
                        self,
                        num_layers: int,
                        d_model: int,
                        num_heads: int,
                        d_ff: int,
                        dropout: float = 0.0,
                    ):
                        super().__init__()
                        # a fresh EncoderBlock per layer: its own parameters and its own random start
                        self.layers = nn.ModuleList(
                            EncoderBlock(d_model, num_heads, d_ff, dropout) for _ in range(num_layers)
                        )
                        self.maps = []  # every layer's attention map of the last forward

                    def forward(
                        self, x: torch.Tensor, mask: torch.Tensor | None = None
                    ) -> tuple[torch.Tensor, list[torch.Tensor]]:
                        """x: (B, L, d_model), mask broadcastable to (B, H, L, L)
                        -> (output (B, L, d_model), [num_layers (B, H, L, L)]).
                        """
                        self.maps.clear()  # start afresh at every call
                        for layer in self.layers:
                            x, weights = layer(x, mask)
                            self.maps.append(weights)
                        return x, self.maps
                '''
            )
        },
        {
            "test_depth_stack": "every call returns one and the same list object",
        },
        # Issue 40's thirteenth blind corpus, graded blind on 8b5375e: named.
    ),
    Mutant(
        "ab04-03: attention_entropy writes 1 over the caller's zero weights in place",
        A,
        {
            "attention_metrics": Rewrite(
                r'''
                def attention_entropy(weights: torch.Tensor) -> torch.Tensor:
                    """Entropy in nats of each distribution over the last dim, 0 log 0 = 0.

                    (..., L_k) -> (...).
                    """
                    # 0 log 0 counts as 0: put a 1 where p = 0, since 1 * log 1 = 0 as well
                    p = weights
                    p[p == 0] = 1.0
                    return -(p * torch.log(p)).sum(dim=-1)


                def total_variation(p: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
                    """Total variation distance 1/2 * sum |p - q| over the last dim.

                    (..., L_k), (..., L_k) -> (...).
                    """
                    return 0.5 * (p - q).abs().sum(dim=-1)
                '''
            )
        },
        {
            "test_attention_metrics": "changed a tensor it was given, in place",
        },
        # Issue 40's thirteenth blind corpus, graded blind on 8b5375e: named.
    ),
    Mutant(
        "ab04-05: attention_focus as 1 - H / log(L_k), 0/0 for a single key",
        A,
        {
            "attention_focus": Rewrite(
                r'''
                def attention_focus(weights: torch.Tensor) -> torch.Tensor:
                    """Focus of each distribution over the last dim: 0 uniform, 1 on one key.

                    (..., L_k) -> (...).
                    """
                    # My score: 1 - H(p) / log(L_k), the entropy normalised by its largest possible
                    # value. Uniform has H = log L_k (score 0), one key has H = 0 (score 1), and the
                    # entropy of softmax(s / T) grows with T, so the score falls.
                    length = weights.shape[-1]
                    entropy = -torch.special.xlogy(weights, weights).sum(dim=-1)
                    return (1.0 - entropy / math.log(length)).clamp(0.0, 1.0)
                '''
            )
        },
        {
            "test_attention_focus": "the score is 1 - H / log(L_k), right for two keys or more",
        },
        # Issue 40's thirteenth blind corpus, graded blind on 8b5375e: named.
    ),
]

CORRECT = [
    Mutant(
        "f04-14: ModuleList from a generator, maps in a preallocated list",
        A,
        {
            "depth_stack": Rewrite(
                r"""
                class DepthStack(nn.Module):
                    def __init__(self, num_layers, d_model, num_heads, d_ff, dropout=0.0):
                        super().__init__()
                        self.layers = nn.ModuleList(
                            EncoderBlock(d_model, num_heads, d_ff, dropout) for _ in range(num_layers)
                        )

                    def forward(self, x, mask=None):
                        maps = [None] * len(self.layers)
                        hidden = x
                        for i, block in enumerate(self.layers):
                            hidden, maps[i] = block(hidden, mask=mask)
                        return hidden, maps
                """
            )
        },
    ),
    Mutant(
        "f04-15: entropy with torch.where, TV as an L1 vector norm",
        A,
        {
            "attention_metrics": Rewrite(
                r"""
                def attention_entropy(weights: torch.Tensor) -> torch.Tensor:
                    safe = weights.clamp_min(torch.finfo(weights.dtype).tiny)
                    terms = torch.where(weights > 0, weights * safe.log(), torch.zeros_like(weights))
                    return -terms.sum(-1)


                def total_variation(p: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
                    return torch.linalg.vector_norm(p - q, ord=1, dim=-1) / 2
                """
            )
        },
    ),
    Mutant(
        "k04-06: correct alternative",
        A,
        {
            "attention_focus": Rewrite(
                r'''
                def attention_focus(weights: torch.Tensor) -> torch.Tensor:
                    """Focus of each distribution over the last dim: 0 uniform, 1 on one key.

                    (..., L_k) -> (...).
                    """
                    # My score: how far the largest weight has moved from uniform (1/L_k) towards all
                    # the weight on one key (1), as a fraction of that way. It reads only the largest
                    # weight, so it ignores key order; the largest weight of softmax(s / T) falls as
                    # T grows. A single key (L_k = 1) has nowhere to move: it scores 1.
                    n = weights.shape[-1]
                    top = weights.amax(dim=-1)
                    if n == 1:
                        return torch.ones_like(top)
                    return ((top - 1.0 / n) / (1.0 - 1.0 / n)).clamp(0.0, 1.0)
                '''
            )
        },
        # Issue 40's sixth blind corpus, graded blind on bdfa422: correct-full.
    ),
    Mutant(
        "n04-06: the largest weight rescaled to [0, 1], 0 for a single key",
        A,
        {
            "attention_focus": Rewrite(
                r'''
                def attention_focus(weights: torch.Tensor) -> torch.Tensor:
                    """Focus of each distribution over the last dim: 0 uniform, 1 on one key.

                    (..., L_k) -> (...).
                    """
                    # Design: the largest weight, rescaled from [1/L_k, 1] to [0, 1]:
                    # (max p - 1/L_k) / (1 - 1/L_k). It ignores the order of the keys, and the largest
                    # weight of softmax(s / T) never grows with T. With one key (L_k = 1) the range is
                    # empty; the score is then 0 (any value in [0, 1] is allowed there).
                    n_keys = weights.shape[-1]
                    top = weights.amax(dim=-1)
                    if n_keys == 1:
                        return torch.zeros_like(top)
                    return ((top - 1.0 / n_keys) / (1.0 - 1.0 / n_keys)).clamp(0.0, 1.0)
                '''
            )
        },
        # Issue 40's seventh blind corpus, graded blind on 451e037: correct-full.
    ),
    Mutant(
        "q04-06: attention_focus as (L_k - exp(H)) / (L_k - 1)",
        A,
        {
            "attention_focus": Rewrite(
                r'''
                def attention_focus(weights: torch.Tensor) -> torch.Tensor:
                    """Focus of each distribution over the last dim: 0 uniform, 1 on one key.

                    (..., L_k) -> (...).
                    """
                    # Design: exp(H) is the effective number of keys attended to (L_k for uniform,
                    # 1 for one key). The score (L_k - exp(H)) / (L_k - 1) maps that range to [0, 1]:
                    # uniform 0, one key 1. H ignores the order of the keys and grows with the
                    # temperature, so the score falls. L_k = 1: the score is 0 (any value is allowed).
                    n = weights.shape[-1]
                    p_log_p = torch.where(weights > 0, weights * torch.log(weights.clamp_min(1e-300)), torch.zeros_like(weights))
                    effective = torch.exp(-p_log_p.sum(dim=-1))
                    if n == 1:
                        return torch.zeros_like(effective)
                    return ((n - effective) / (n - 1)).clamp(0.0, 1.0)
                '''
            )
        },
        # Issue 40's eighth blind corpus, graded blind on 47d54b0: correct-full.
    ),
    Mutant(
        "r04-06: attention_focus, the largest weight minus the smallest",
        A,
        {
            "attention_focus": Rewrite(
                r'''
                # id: r04-06
                # kind: correct
                # grade_id: attention_focus
                # alternative: another design: the largest weight minus the smallest weight of the row (0 for uniform, 1 for one key among >= 2, 0 for a single key); it only uses max and min, so it ignores the order, and max falls / min rises as the temperature grows.
                # evidence: my experiment (scripts ev0N.py, output ev0N.txt in /work/fresh-corpus8b):
                #   r04-06: calibrated/monotone/permutation checks on L=2,3,9,50: True | single key: [0.0, 0.0, 0.0] | [.5,.5,0,0] -> 0.5 torch.Size([])
                # public checks: passes every public check of the notebook
                def attention_focus(weights: torch.Tensor) -> torch.Tensor:
                    """Focus of each distribution over the last dim: 0 uniform, 1 on one key.

                    (..., L_k) -> (...).
                    """
                    # Design: the spread between the most and the least attended key. Uniform rows
                    # have max = min (score 0); one key among two or more has max 1, min 0 (score 1);
                    # any other row lies in between. For softmax(s / T), the largest weight never
                    # grows and the smallest never shrinks as T grows, so the score never rises.
                    # A single key gives max = min = 1: score 0. Exact zeros are fine.
                    return (weights.amax(dim=-1) - weights.amin(dim=-1)).clamp(0.0, 1.0)
                '''
            )
        },
        # Issue 40's eighth blind corpus, graded blind on 47d54b0: correct-full.
    ),
    Mutant(
        "u04-06: attention_metrics with torch.special.entr, TV as the positive part",
        A,
        {
            "attention_metrics": Rewrite(
                r'''
                def attention_entropy(weights: torch.Tensor) -> torch.Tensor:
                    """Entropy in nats of each distribution over the last dim, 0 log 0 = 0.

                    (..., L_k) -> (...).
                    """
                    return torch.special.entr(weights).sum(dim=-1)


                def total_variation(p: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
                    """Total variation distance 1/2 * sum |p - q| over the last dim.

                    (..., L_k), (..., L_k) -> (...).
                    """
                    # both sum to 1, so the weight p gains over q equals the weight it loses
                    return (p - q).clamp(min=0).sum(dim=-1)
                '''
            )
        },
        # Issue 40's tenth blind corpus, graded blind on 60c32e8: correct-full.
    ),
    Mutant(
        "w04-06: attention_focus from the collision probability, 1 for a single key",
        A,
        {
            "attention_focus": Rewrite(
                r'''
                def attention_focus(weights: torch.Tensor) -> torch.Tensor:
                    """Focus of each distribution over the last dim: 0 uniform, 1 on one key.

                    (..., L_k) -> (...).
                    """
                    # Design: sum_j p_j^2 is the chance that two keys drawn from p are the same key:
                    # 1/L_k for uniform attention, 1 for one key, in between otherwise. Rescaled to
                    # [0, 1]. It is symmetric in the keys, and for p = softmax(s / T) it only falls as
                    # T grows (its derivative in 1/T is twice Cov_p(p, s) >= 0). One key: 1.
                    n = weights.shape[-1]
                    collision = (weights * weights).sum(dim=-1)
                    if n == 1:
                        return torch.ones_like(collision)
                    return ((collision - 1.0 / n) / (1.0 - 1.0 / n)).clamp(0.0, 1.0)
                '''
            )
        },
        # Issue 40's eleventh blind corpus, graded blind on 48fe40c: correct-full.
    ),
    Mutant(
        "x04-06: attention_focus from the collision probability, 0 for a single key",
        A,
        {
            "attention_focus": Rewrite(
                r'''
                def attention_focus(weights: torch.Tensor) -> torch.Tensor:
                    """Focus of each distribution over the last dim: 0 uniform, 1 on one key.

                    (..., L_k) -> (...).
                    """
                    # Design: the collision probability sum_j p_j^2 (the chance that two keys drawn
                    # from p are the same key) runs from 1/L_k (uniform) to 1 (one key); I rescale it
                    # linearly onto [0, 1]. It depends only on the multiset of weights (order-blind),
                    # and for p = softmax(s / T) it falls as T grows, since raising the temperature
                    # moves weight from the large p_j to the small ones. A single key: defined as 0.
                    n_keys = weights.shape[-1]
                    collision = (weights * weights).sum(dim=-1)
                    if n_keys == 1:
                        return torch.zeros_like(collision)
                    floor = 1.0 / n_keys
                    return ((collision - floor) / (1.0 - floor)).clamp(0.0, 1.0)
                '''
            )
        },
        # Issue 40's eleventh blind corpus, graded blind on 48fe40c: correct-full.
    ),
    Mutant(
        "aa04-06: attention_focus from the collision probability, sum p^2 rescaled from 1/L_k",
        A,
        {
            "attention_focus": Rewrite(
                r'''
                def attention_focus(weights: torch.Tensor) -> torch.Tensor:
                    """Focus of each distribution over the last dim: 0 uniform, 1 on one key.

                    (..., L_k) -> (...).
                    """
                    # My score: sum_j p_j^2 (the chance that two draws pick the same key) runs from 1/L_k
                    # (uniform) to 1 (one key); I map it linearly onto [0, 1]. It is blind to the order
                    # of the keys and falls as the temperature flattens the softmax. One key: 0.
                    n = weights.shape[-1]
                    if n < 2:
                        return torch.zeros(weights.shape[:-1], dtype=weights.dtype, device=weights.device)
                    collision = (weights * weights).sum(dim=-1)
                    return ((collision - 1.0 / n) / (1.0 - 1.0 / n)).clamp(0.0, 1.0)
                '''
            )
        },
        # Issue 40's thirteenth blind corpus, graded blind on 8b5375e: correct-full.
    ),
    Mutant(
        "ab04-06: attention_focus as the largest weight rescaled from 1/L_k, 1 for a single key",
        A,
        {
            "attention_focus": Rewrite(
                r'''
                def attention_focus(weights: torch.Tensor) -> torch.Tensor:
                    """Focus of each distribution over the last dim: 0 uniform, 1 on one key.

                    (..., L_k) -> (...).
                    """
                    # My score: the largest weight, rescaled so that uniform attention (max = 1/L_k)
                    # scores 0 and all the weight on one key (max = 1) scores 1:
                    #     (max_j p_j - 1/L_k) / (1 - 1/L_k).
                    # The max does not care about the order of the keys, and the largest weight of
                    # softmax(s / T) can only shrink as T grows. A single key has no spread at all:
                    # I give it 1.
                    length = weights.shape[-1]
                    top = weights.amax(dim=-1)
                    if length < 2:
                        return torch.ones_like(top)
                    return ((top - 1.0 / length) / (1.0 - 1.0 / length)).clamp(0.0, 1.0)
                '''
            )
        },
        # Issue 40's thirteenth blind corpus, graded blind on 8b5375e: correct-full.
    ),
]
