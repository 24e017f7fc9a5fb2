"""Issue 40's blind corpus for 03_transformer_block (see tests/mutants/blind/__init__.py)."""

from tests.mutants import Mutant, Rewrite

A = "03_transformer_block"

WRONG = [
    Mutant(
        "f03-01: clean: one inner apostrophe at most, (?:'\\w+)?",
        A,
        {
            "clean": Rewrite(
                r'''
                def clean(text: str) -> list[str]:
                    """Lowercase text and split it into words and punctuation marks."""
                    text = text.lower().replace("\u2019", "'")
                    return re.findall(r"\w+(?:'\w+)?|[^\w\s]", text)
                '''
            )
        },
        {
            "test_clean": "repeat the group",
        },
    ),
    Mutant(
        "f03-04: build_vocab: Counter.most_common, ties in first-seen order",
        A,
        {
            "build_vocab": Rewrite(
                r'''
                def build_vocab(
                    texts: list[str], max_vocab_size: int | None = None, min_freq: int = 1
                ) -> list[str]:
                    """id_to_token: the special tokens, then tokens by falling count, ties alphabetical."""
                    counts = Counter()
                    for text in texts:
                        counts.update(clean(text))
                    ordered = counts.most_common()
                    vocab = list(SPECIAL_TOKENS) + [tok for tok, c in ordered if c >= min_freq]
                    if max_vocab_size is not None:
                        vocab = vocab[:max_vocab_size]
                    return vocab
                '''
            )
        },
        {
            "test_build_vocab": "sorted alphabetically",
        },
    ),
    Mutant(
        "f03-06: build_vocab: count > min_freq",
        A,
        {
            "build_vocab": Rewrite(
                r'''
                def build_vocab(
                    texts: list[str], max_vocab_size: int | None = None, min_freq: int = 1
                ) -> list[str]:
                    """id_to_token: the special tokens, then tokens by falling count, ties alphabetical."""
                    counts = Counter()
                    for text in texts:
                        counts.update(clean(text))
                    ordered = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
                    vocab = list(SPECIAL_TOKENS) + [tok for tok, c in ordered if c > min_freq]
                    if max_vocab_size is not None:
                        vocab = vocab[:max_vocab_size]
                    return vocab
                '''
            )
        },
        {
            "test_build_vocab": "use count >= min_freq, not >",
        },
    ),
    Mutant(
        "f03-07: encode: words cut before <cls>, padding only without max_len",
        A,
        {
            "encode": Rewrite(
                r'''
                # the positions of "<pad>", "<unk>", "<cls>" in SPECIAL_TOKENS
                PAD_ID, UNK_ID, CLS_ID = 0, 1, 2


                def encode(
                    text: str, token_to_id: dict[str, int], max_len: int | None = None
                ) -> list[int]:
                    """[CLS_ID] + one id per token of clean(text) (UNK_ID if unknown)."""
                    ids = [token_to_id.get(tok, UNK_ID) for tok in clean(text)]
                    if max_len is not None:
                        ids = [CLS_ID] + ids[:max_len]
                    else:
                        ids = [CLS_ID] + ids
                        ids = ids + [PAD_ID] * (max_len - len(ids))
                    return ids
                '''
            )
        },
        {
            "test_encode": "unsupported operand type(s) for -: 'NoneType' and 'int'",
        },
    ),
    Mutant(
        "f03-08: encode: padding in front of <cls>",
        A,
        {
            "encode": Rewrite(
                r'''
                # the positions of "<pad>", "<unk>", "<cls>" in SPECIAL_TOKENS
                PAD_ID, UNK_ID, CLS_ID = 0, 1, 2


                def encode(
                    text: str, token_to_id: dict[str, int], max_len: int | None = None
                ) -> list[int]:
                    """[CLS_ID] + one id per token of clean(text) (UNK_ID if unknown)."""
                    ids = [CLS_ID] + [token_to_id.get(tok, UNK_ID) for tok in clean(text)]
                    if max_len is not None:
                        ids = ids[:max_len]
                        ids = [PAD_ID] * (max_len - len(ids)) + ids
                    return ids
                '''
            )
        },
        {
            "test_encode": "padding goes at the end",
        },
    ),
    Mutant(
        "f03-09: encode: pads even without max_len",
        A,
        {
            "encode": Rewrite(
                r'''
                # the positions of "<pad>", "<unk>", "<cls>" in SPECIAL_TOKENS
                PAD_ID, UNK_ID, CLS_ID = 0, 1, 2


                def encode(
                    text: str, token_to_id: dict[str, int], max_len: int | None = None
                ) -> list[int]:
                    """[CLS_ID] + one id per token of clean(text) (UNK_ID if unknown)."""
                    ids = [CLS_ID] + [token_to_id.get(tok, UNK_ID) for tok in clean(text)]
                    ids = ids[:max_len] + [PAD_ID] * (max_len - len(ids[:max_len]))
                    return ids
                '''
            )
        },
        {
            "test_encode": "unsupported operand type(s) for -: 'NoneType' and 'int'",
        },
    ),
    Mutant(
        "f03-10: pe: sines in the first half, cosines in the second",
        A,
        {
            "sinusoidal_encoding": Rewrite(
                r'''
                def sinusoidal_encoding(max_len: int, d_model: int) -> torch.Tensor:
                    """(max_len, d_model) float32 table of sinusoidal positions."""
                    pos = torch.arange(max_len, dtype=torch.float64).unsqueeze(1)
                    two_i = torch.arange(0, d_model, 2, dtype=torch.float64)
                    angles = pos * torch.pow(10000.0, -two_i / d_model)
                    pe = torch.zeros(max_len, d_model, dtype=torch.float64)
                    pe[:, : d_model // 2] = torch.sin(angles)
                    pe[:, d_model // 2 :] = torch.cos(angles)
                    return pe.float()
                '''
            )
        },
        {
            "test_sinusoidal_encoding": "the notebook's layout is interleaved",
        },
    ),
    Mutant(
        "f03-11: pe: each column its own exponent j/d_model",
        A,
        {
            "sinusoidal_encoding": Rewrite(
                r'''
                def sinusoidal_encoding(max_len: int, d_model: int) -> torch.Tensor:
                    """(max_len, d_model) float32 table of sinusoidal positions."""
                    pos = torch.arange(max_len, dtype=torch.float64).unsqueeze(1)
                    j = torch.arange(d_model, dtype=torch.float64)
                    angles = pos * torch.pow(10000.0, -j / d_model)
                    pe = torch.zeros(max_len, d_model, dtype=torch.float64)
                    pe[:, 0::2] = torch.sin(angles[:, 0::2])
                    pe[:, 1::2] = torch.cos(angles[:, 1::2])
                    return pe.float()
                '''
            )
        },
        {
            "test_sinusoidal_encoding": "must share ONE angle",
        },
    ),
    Mutant(
        "f03-12: pe: returned in float64",
        A,
        {
            "sinusoidal_encoding": Rewrite(
                r'''
                def sinusoidal_encoding(max_len: int, d_model: int) -> torch.Tensor:
                    """(max_len, d_model) float32 table of sinusoidal positions."""
                    pos = torch.arange(max_len, dtype=torch.float64).unsqueeze(1)
                    two_i = torch.arange(0, d_model, 2, dtype=torch.float64)
                    angles = pos * torch.pow(10000.0, -two_i / d_model)
                    pe = torch.zeros(max_len, d_model, dtype=torch.float64)
                    pe[:, 0::2] = torch.sin(angles)
                    pe[:, 1::2] = torch.cos(angles)
                    return pe
                '''
            )
        },
        {
            "test_sinusoidal_encoding": "must return float32",
        },
    ),
    Mutant(
        "f03-13: layer norm: unbiased variance",
        A,
        {
            "layer_norm": Rewrite(
                r'''
                class LayerNorm(nn.Module):
                    """Normalise the last dim to mean 0 and variance 1."""

                    def __init__(self, d_model: int, eps: float = 1e-5):
                        super().__init__()
                        self.eps = eps
                        self.weight = nn.Parameter(torch.ones(d_model))  # gamma
                        self.bias = nn.Parameter(torch.zeros(d_model))  # beta

                    def forward(self, x: torch.Tensor) -> torch.Tensor:
                        mean = x.mean(-1, keepdim=True)
                        var = x.var(-1, keepdim=True)
                        return self.weight * (x - mean) / torch.sqrt(var + self.eps) + self.bias
                '''
            )
        },
        {
            "test_layer_norm": "the variance is unbiased",
        },
        not_told=("detach",),
    ),
    Mutant(
        "f03-14: layer norm: eps added to the standard deviation",
        A,
        {
            "layer_norm": Rewrite(
                r'''
                class LayerNorm(nn.Module):
                    """Normalise the last dim to mean 0 and variance 1."""

                    def __init__(self, d_model: int, eps: float = 1e-5):
                        super().__init__()
                        self.eps = eps
                        self.weight = nn.Parameter(torch.ones(d_model))  # gamma
                        self.bias = nn.Parameter(torch.zeros(d_model))  # beta

                    def forward(self, x: torch.Tensor) -> torch.Tensor:
                        mean = x.mean(-1, keepdim=True)
                        var = ((x - mean) ** 2).mean(-1, keepdim=True)
                        return self.weight * (x - mean) / (torch.sqrt(var) + self.eps) + self.bias
                '''
            )
        },
        {
            "test_layer_norm": "eps is added outside the square root",
        },
        not_told=("detach",),
    ),
    Mutant(
        "f03-18: block: the second residual adds the block's input x",
        A,
        {
            "encoder_block": Rewrite(
                r'''
                class EncoderBlock(nn.Module):
                    """Post-norm encoder block."""

                    def __init__(self, d_model: int, num_heads: int, d_ff: int, dropout: float = 0.0):
                        super().__init__()
                        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout)
                        self.feed_forward = PositionwiseFeedForward(d_model, d_ff, dropout)
                        self.norm1 = nn.LayerNorm(d_model)
                        self.norm2 = nn.LayerNorm(d_model)
                        self.dropout1 = nn.Dropout(dropout)
                        self.dropout2 = nn.Dropout(dropout)

                    def forward(
                        self, x: torch.Tensor, mask: torch.Tensor | None = None
                    ) -> tuple[torch.Tensor, torch.Tensor]:
                        attended, weights = self.self_attn(x, mask=mask)
                        h = self.norm1(x + self.dropout1(attended))
                        out = self.norm2(x + self.dropout2(self.feed_forward(h)))
                        return out, weights
                '''
            )
        },
        {
            "test_encoder_block": "the second residual adds the block's input x",
        },
    ),
    Mutant(
        "g03-15: padded_block hides the pads as queries, (B, 1, L, 1)",
        A,
        {
            "padded_block": Rewrite(
                r'''
                def padded_block(
                    block: nn.Module, x: torch.Tensor, is_pad: torch.Tensor
                ) -> torch.Tensor:
                    """The block's output for x (B, L, d_model), blind to the pads of is_pad (B, L).

                    -> (B, L, d_model).
                    """
                    # 1. The mask hides the pad keys from every query: (B, 1, 1, L) broadcasts
                    #    over the heads and the queries: a real token's softmax sees real tokens only.
                    # 2. Pad positions keep whatever the block computes for them (they still see the
                    #    real tokens): finite, and nothing downstream reads them.
                    # 3. A sentence of pads only has query rows with no visible key: attention gives
                    #    them zero weights (notebook 01's rule), so its outputs stay finite.
                    may_attend = ~is_pad[:, None, :, None]  # (B, 1, L, 1)
                    out, _ = block(x, mask=may_attend)
                    return out
                '''
            )
        },
        {
            "test_padded_block": "the mask hides the pads as queries",
        },
        in_notebook=True,  # its repair lends a module to the kernel: judged through the command too
    ),
    Mutant(
        "g03-16: padded_block passes the (B, L) mask as is",
        A,
        {
            "padded_block": Rewrite(
                r'''
                def padded_block(
                    block: nn.Module, x: torch.Tensor, is_pad: torch.Tensor
                ) -> torch.Tensor:
                    """The block's output for x (B, L, d_model), blind to the pads of is_pad (B, L).

                    -> (B, L, d_model).
                    """
                    # 1. The mask hides the pad keys from every query: (B, 1, 1, L) broadcasts
                    #    over the heads and the queries: a real token's softmax sees real tokens only.
                    # 2. Pad positions keep whatever the block computes for them (they still see the
                    #    real tokens): finite, and nothing downstream reads them.
                    # 3. A sentence of pads only has query rows with no visible key: attention gives
                    #    them zero weights (notebook 01's rule), so its outputs stay finite.
                    may_attend = ~is_pad
                    out, _ = block(x, mask=may_attend)
                    return out
                '''
            )
        },
        {
            "test_padded_block": "the (B, L) mask is handed to the block as it is",
        },
        in_notebook=True,  # its repair lends a module to the kernel: judged through the command too
    ),
    Mutant(
        "h03-17: variance by the one-pass formula E[x^2] - E[x]^2 (float32 cancellation)",
        A,
        {
            "layer_norm": Rewrite(
                r'''
                class LayerNorm(nn.Module):
                    """Normalise the last dim to mean 0 and variance 1."""

                    def __init__(self, d_model: int, eps: float = 1e-5):
                        super().__init__()
                        self.eps = eps
                        self.weight = nn.Parameter(torch.ones(d_model))  # gamma
                        self.bias = nn.Parameter(torch.zeros(d_model))  # beta

                    def forward(self, x: torch.Tensor) -> torch.Tensor:
                        mu = x.mean(-1, keepdim=True)
                        var = (x * x).mean(-1, keepdim=True) - mu * mu
                        return (x - mu) * torch.rsqrt(var + self.eps) * self.weight + self.bias
                '''
            )
        },
        {"test_layer_norm": "E[x²] - E[x]², which cancels in float32"},
        # Its confirmer copies the student's module: through the grading command the copy is the
        # kernel's to make (a proxy copied in the judge took its socket along: "cannot pickle").
        in_notebook=True,
        not_told=("cannot pickle",),
    ),
    Mutant(
        "i03-08: eps added to the standard deviation, not under the square root",
        A,
        {
            "layer_norm": Rewrite(
                r'''
                class LayerNorm(nn.Module):
                    """Normalise the last dim to mean 0 and variance 1.

                    Then scale by gamma (weight) and shift by beta (bias).
                    """

                    def __init__(self, d_model: int, eps: float = 1e-5):
                        super().__init__()
                        self.eps = eps
                        self.weight = nn.Parameter(torch.ones(d_model))  # gamma
                        self.bias = nn.Parameter(torch.zeros(d_model))  # beta

                    def forward(self, x: torch.Tensor) -> torch.Tensor:
                        """x: (..., d_model) -> (..., d_model)."""
                        mean = x.mean(dim=-1, keepdim=True)
                        std = x.std(dim=-1, unbiased=False, keepdim=True)  # biased
                        return self.weight * (x - mean) / (std + self.eps) + self.bias
                '''
            )
        },
        {"test_layer_norm": "eps is added outside the square root"},
        # Graded through the command it was told "your code raised TypeError: cannot pickle
        # 'socket' object", the judge's own failure to copy a proxy, blamed on the student.
        in_notebook=True,
        not_told=("cannot pickle", "your code raised"),
    ),
    Mutant(
        "h03-13: the position multiplied by 10000^(2i/d) instead of divided",
        A,
        {
            "sinusoidal_encoding": Rewrite(
                r'''
                def sinusoidal_encoding(max_len: int, d_model: int) -> torch.Tensor:
                    """(max_len, d_model) float32 table of sinusoidal positions."""
                    pe = torch.zeros(max_len, d_model)
                    position = torch.arange(max_len).unsqueeze(1).float()
                    div = torch.pow(10000.0, torch.arange(0, d_model, 2).float() / d_model)
                    pe[:, 0::2] = torch.sin(position * div)
                    pe[:, 1::2] = torch.cos(position * div)
                    return pe
                '''
            )
        },
        {"test_sinusoidal_encoding": "the exponent's sign flipped"},
    ),
    Mutant(
        "h03-16: LayerNorm over the positions and the features",
        A,
        {
            "layer_norm": Rewrite(
                r'''
                class LayerNorm(nn.Module):
                    """Normalise the last dim to mean 0 and variance 1."""

                    def __init__(self, d_model: int, eps: float = 1e-5):
                        super().__init__()
                        self.eps = eps
                        self.weight = nn.Parameter(torch.ones(d_model))  # gamma
                        self.bias = nn.Parameter(torch.zeros(d_model))  # beta

                    def forward(self, x: torch.Tensor) -> torch.Tensor:
                        dims = tuple(range(1, x.dim())) if x.dim() > 1 else (-1,)
                        mean = x.mean(dim=dims, keepdim=True)
                        var = x.var(dim=dims, keepdim=True, unbiased=False)
                        return (x - mean) / torch.sqrt(var + self.eps) * self.weight + self.bias
                '''
            )
        },
        {"test_layer_norm": "over the positions and the features together"},
    ),
    Mutant(
        "h03-26: padded_block passes is_pad itself as the may-attend mask",
        A,
        {
            "padded_block": Rewrite(
                r'''
                def padded_block(
                    block: nn.Module, x: torch.Tensor, is_pad: torch.Tensor
                ) -> torch.Tensor:
                    """The block's output for x (B, L, d_model), blind to the pads of is_pad (B, L)."""
                    # 1. The mask marks the pad keys, (B, 1, 1, L), for every head and query.
                    # 2. Pad positions keep the block's output.
                    # 3. A sentence of pads only is handled by attention's zero-weight rule.
                    mask = is_pad[:, None, None, :]
                    out, _ = block(x, mask=mask)
                    return out
                '''
            )
        },
        {"test_padded_block": "mask polarity reversed"},
        in_notebook=True,  # its repair lends a module to the kernel: judged through the command too
    ),
    Mutant(
        "h03-18: GELU instead of ReLU in the feed-forward network",
        A,
        {
            "feed_forward": Rewrite(
                r'''
                class PositionwiseFeedForward(nn.Module):
                    """FFN(x) = linear2(dropout(relu(linear1(x))))."""

                    def __init__(self, d_model: int, d_ff: int, dropout: float = 0.0):
                        super().__init__()
                        self.linear1 = nn.Linear(d_model, d_ff)
                        self.dropout = nn.Dropout(dropout)
                        self.linear2 = nn.Linear(d_ff, d_model)

                    def forward(self, x: torch.Tensor) -> torch.Tensor:
                        return self.linear2(self.dropout(F.gelu(self.linear1(x))))
                '''
            )
        },
        {
            "test_feed_forward": "GELU instead of ReLU",
            "test_encoder_block": "this cell uses your answer cell `feed_forward`",
        },
        not_told=("your output is that of no dropout", "which it gives with dropout=0"),
    ),
    Mutant(
        "h03-21: second residual from the block input x",
        A,
        {
            "encoder_block": Rewrite(
                r'''
                class EncoderBlock(nn.Module):
                    """Post-norm encoder block."""

                    def __init__(self, d_model: int, num_heads: int, d_ff: int, dropout: float = 0.0):
                        super().__init__()
                        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout)
                        self.feed_forward = PositionwiseFeedForward(d_model, d_ff, dropout)
                        self.norm1 = nn.LayerNorm(d_model)
                        self.norm2 = nn.LayerNorm(d_model)
                        self.dropout1 = nn.Dropout(dropout)
                        self.dropout2 = nn.Dropout(dropout)

                    def forward(
                        self, x: torch.Tensor, mask: torch.Tensor | None = None
                    ) -> tuple[torch.Tensor, torch.Tensor]:
                        attended, weights = self.self_attn(x, mask=mask)
                        h = self.norm1(x + self.dropout1(attended))
                        out = self.norm2(x + self.dropout2(self.feed_forward(h)))
                        return out, weights
                '''
            )
        },
        {"test_encoder_block": "the second residual adds the block's input x"},
        not_told=("your output is that of no dropout",),
    ),
    Mutant(
        "h03-22: pre-norm instead of post-norm",
        A,
        {
            "encoder_block": Rewrite(
                r'''
                class EncoderBlock(nn.Module):
                    """Post-norm encoder block."""

                    def __init__(self, d_model: int, num_heads: int, d_ff: int, dropout: float = 0.0):
                        super().__init__()
                        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout)
                        self.feed_forward = PositionwiseFeedForward(d_model, d_ff, dropout)
                        self.norm1 = nn.LayerNorm(d_model)
                        self.norm2 = nn.LayerNorm(d_model)
                        self.dropout1 = nn.Dropout(dropout)
                        self.dropout2 = nn.Dropout(dropout)

                    def forward(
                        self, x: torch.Tensor, mask: torch.Tensor | None = None
                    ) -> tuple[torch.Tensor, torch.Tensor]:
                        attended, weights = self.self_attn(self.norm1(x), mask=mask)
                        h = x + self.dropout1(attended)
                        out = h + self.dropout2(self.feed_forward(self.norm2(h)))
                        return out, weights
                '''
            )
        },
        {"test_encoder_block": "LayerNorm is applied before the sublayer (pre-norm)"},
        not_told=("your output is that of no dropout",),
    ),
    Mutant(
        "i03-04: words cut to max_vocab_size - 3, a negative slice below 3",
        A,
        {
            "build_vocab": Rewrite(
                r'''
                def build_vocab(
                    texts: list[str], max_vocab_size: int | None = None, min_freq: int = 1
                ) -> list[str]:
                    """id_to_token: the special tokens, then tokens by falling count, ties alphabetical.

                    At most max_vocab_size entries in all.
                    """
                    counts = Counter()
                    for text in texts:
                        counts.update(clean(text))
                    ordered = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
                    words = [tok for tok, n in ordered if n >= min_freq]
                    if max_vocab_size is not None:
                        # the 3 special tokens count towards the limit
                        words = words[: max_vocab_size - len(SPECIAL_TOKENS)]
                    return list(SPECIAL_TOKENS) + words
                '''
            )
        },
        {"test_build_vocab": "cut to words[:max_vocab_size - 3], whose end is negative"},
        # Told a counterexample until build_vocab.negative_slice_end (k03-02, j03-04) named it.
    ),
    Mutant(
        "i03-06: encode tokenises with text.lower().split()",
        A,
        {
            "encode": Rewrite(
                r'''
                # the positions of "<pad>", "<unk>", "<cls>" in SPECIAL_TOKENS
                PAD_ID, UNK_ID, CLS_ID = 0, 1, 2


                def encode(
                    text: str, token_to_id: dict[str, int], max_len: int | None = None
                ) -> list[int]:
                    """[CLS_ID] + one id per token of clean(text) (UNK_ID if unknown).

                    Cut and padded to max_len if given.
                    """
                    ids = [CLS_ID] + [token_to_id.get(tok, UNK_ID) for tok in text.lower().split()]
                    if max_len is not None:
                        ids = ids[:max_len]
                        ids = ids + [PAD_ID] * (max_len - len(ids))
                    return ids
                '''
            )
        },
        {"test_encode": "text.lower().split()"},
    ),
    Mutant(
        "i03-13: key mask from each sentence's length, pads assumed at the end",
        A,
        {
            "padded_block": Rewrite(
                r'''
                def padded_block(
                    block: nn.Module, x: torch.Tensor, is_pad: torch.Tensor
                ) -> torch.Tensor:
                    """The block's output for x (B, L, d_model), blind to the pads of is_pad (B, L).

                    -> (B, L, d_model).
                    """
                    # 1. Mask: sentence b has n_b real tokens; every query may attend to keys
                    #    0..n_b-1 only. Shape (B, 1, 1, L), shared by the heads and the queries.
                    # 2. Pad positions: zeros.
                    # 3. An all-pad sentence has n_b = 0: no visible key, the attention gives zero
                    #    weights, and its outputs are zeroed anyway.
                    B, L = is_pad.shape
                    lengths = (~is_pad).sum(dim=1)  # (B,)
                    positions = torch.arange(L, device=x.device)
                    key_mask = (positions[None, :] < lengths[:, None])[:, None, None, :]
                    out, _ = block(x, mask=key_mask)
                    return out.masked_fill(is_pad[..., None], 0.0)
                '''
            )
        },
        {"test_padded_block": "number of real tokens (position < that number)"},
        in_notebook=True,  # the experiment lends the block to the kernel wrapped
    ),
    Mutant(
        "j03-03: clean takes [a-z0-9] for word characters",
        A,
        {
            "clean": Rewrite(
                r'''
                def clean(text: str) -> list[str]:
                    """Lowercase text and split it into words and punctuation marks.

                    "Didn't it?" -> ["didn't", "it", "?"].
                    """
                    text = text.lower().replace("\u2019", "'")
                    return re.findall(r"[a-z0-9]+(?:'[a-z0-9]+)*|[^a-z0-9\s]", text)
                '''
            )
        },
        {"test_clean": "non-ASCII letters such as é or ß are word characters too"},
        # Issue 40's fifth blind corpus: a counterexample alone on c03db00; the ASCII-only
        # mistake was simulated with the underscore as a word character only.
    ),
    Mutant(
        "j03-02: clean's words are \\w[\\w']*, a trailing apostrophe kept",
        A,
        {
            "clean": Rewrite(
                r'''
                def clean(text: str) -> list[str]:
                    """Lowercase text and split it into words and punctuation marks.

                    "Didn't it?" -> ["didn't", "it", "?"].
                    """
                    text = text.lower().replace("\u2019", "'")
                    return re.findall(r"\w[\w']*|[^\w\s]", text)
                '''
            )
        },
        {"test_clean": "an apostrophe that is not between two word characters is kept in a word"},
        # Issue 40's fifth blind corpus: a counterexample alone on c03db00; only [\w']+ was
        # simulated.
    ),
    Mutant(
        "j03-05: encode adds unknown words to token_to_id (setdefault)",
        A,
        {
            "encode": Rewrite(
                r'''
                # the positions of "<pad>", "<unk>", "<cls>" in SPECIAL_TOKENS
                PAD_ID, UNK_ID, CLS_ID = 0, 1, 2


                def encode(
                    text: str, token_to_id: dict[str, int], max_len: int | None = None
                ) -> list[int]:
                    """[CLS_ID] + one id per token of clean(text) (UNK_ID if unknown).

                    Cut and padded to max_len if given.
                    """
                    ids = [CLS_ID] + [token_to_id.setdefault(token, UNK_ID) for token in clean(text)]
                    if max_len is not None:
                        ids = ids[:max_len]
                        ids = ids + [PAD_ID] * (max_len - len(ids))
                    return ids
                '''
            )
        },
        {"test_encode": "changed token_to_id (entries added: ["},
        in_notebook=True,  # the dict is written in the kernel: judged through the command too
    ),
    Mutant(
        "j03-09: LayerNorm variance as E[x*x] - mean*mean (one pass)",
        A,
        {
            "layer_norm": Rewrite(
                r'''
                class LayerNorm(nn.Module):
                    """Normalise the last dim to mean 0 and variance 1.

                    Then scale by gamma (weight) and shift by beta (bias).
                    """

                    def __init__(self, d_model: int, eps: float = 1e-5):
                        super().__init__()
                        self.eps = eps
                        self.weight = nn.Parameter(torch.ones(d_model))  # gamma
                        self.bias = nn.Parameter(torch.zeros(d_model))  # beta

                    def forward(self, x: torch.Tensor) -> torch.Tensor:
                        """x: (..., d_model) -> (..., d_model)."""
                        mean = x.mean(dim=-1, keepdim=True)
                        var = (x * x).mean(dim=-1, keepdim=True) - mean * mean
                        return self.weight * (x - mean) / torch.sqrt(var + self.eps) + self.bias
                '''
            )
        },
        {"test_layer_norm": "E[x²] - E[x]², which cancels in float32"},
    ),
    Mutant(
        "j03-15: padded_block hides the pads as queries, (B, 1, L, 1) expanded to (B, 1, L, L)",
        A,
        {
            "padded_block": Rewrite(
                r'''
                def padded_block(
                    block: nn.Module, x: torch.Tensor, is_pad: torch.Tensor
                ) -> torch.Tensor:
                    """The block's output for x (B, L, d_model), blind to the pads of is_pad (B, L).

                    -> (B, L, d_model).
                    """
                    # 1. Mask (B, 1, L, L): every query may attend to the real keys of its sentence
                    #    only; pad keys are hidden for every query (pad queries included).
                    # 2. Pad positions: the output there is set to zeros.
                    # 3. An all-pad sentence: its rows would have no visible key, so for such a
                    #    sentence we let every query see every key (a finite dummy computation),
                    #    then zero the whole output, as every position is a pad.
                    real = ~is_pad  # (B, L)
                    empty = ~real.any(dim=-1)  # (B,)
                    keys = real | empty[:, None]  # all-pad rows: show all keys
                    mask = keys[:, None, :, None].expand(-1, 1, -1, x.shape[1])
                    out, _ = block(x, mask=mask)
                    return torch.where(is_pad[..., None], torch.zeros_like(out), out)
                '''
            )
        },
        {"test_padded_block": "the mask hides the pads as queries"},
        in_notebook=True,  # its repair lends a module to the kernel: judged through the command too
    ),
    Mutant(
        "j03-16: padded_block fills a torch.zeros(x.shape) buffer, float32 whatever x's dtype",
        A,
        {
            "padded_block": Rewrite(
                r'''
                def padded_block(
                    block: nn.Module, x: torch.Tensor, is_pad: torch.Tensor
                ) -> torch.Tensor:
                    """The block's output for x (B, L, d_model), blind to the pads of is_pad (B, L).

                    -> (B, L, d_model).
                    """
                    # 1. Mask (B, 1, L, L): every query may attend to the real keys of its sentence
                    #    only; pad keys are hidden for every query (pad queries included).
                    # 2. Pad positions: the output there is set to zeros.
                    # 3. An all-pad sentence: its rows would have no visible key, so for such a
                    #    sentence we let every query see every key (a finite dummy computation),
                    #    then zero the whole output, as every position is a pad.
                    real = ~is_pad  # (B, L)
                    empty = ~real.any(dim=-1)  # (B,)
                    keys = real | empty[:, None]  # all-pad rows: show all keys
                    mask = keys[:, None, None, :].expand(-1, 1, x.shape[1], -1)
                    out, _ = block(x, mask=mask)
                    result = torch.zeros(x.shape)  # pads stay zero
                    result[~is_pad] = out[~is_pad]
                    return result
                '''
            )
        },
        {
            "test_padded_block": "raises on this float64 batch, and runs on the same batch and block in float32"
        },
        in_notebook=True,  # the block is lent to the kernel: judged through the command too
    ),
    Mutant(
        "k03-01: the word pattern lets an apostrophe be followed by zero word character",
        A,
        {
            "clean": Rewrite(
                r'''
                def clean(text: str) -> list[str]:
                    """Lowercase text and split it into words and punctuation marks.

                    "Didn't it?" -> ["didn't", "it", "?"].
                    """
                    text = text.lower().replace("\u2019", "'")
                    return re.findall(r"\w+(?:'\w*)*|[^\w\s]", text)
                '''
            )
        },
        {
            "test_clean": "an apostrophe that is not between two word characters is kept in a word: only an apostrophe between two word characters "
        },
        # Issue 40's sixth blind corpus, graded blind on bdfa422: named.
    ),
    Mutant(
        "k03-02: max_vocab_size is applied as words[",
        A,
        {
            "build_vocab": Rewrite(
                r'''
                def build_vocab(
                    texts: list[str], max_vocab_size: int | None = None, min_freq: int = 1
                ) -> list[str]:
                    """id_to_token: the special tokens, then tokens by falling count, ties alphabetical.

                    At most max_vocab_size entries in all.
                    """
                    counts = Counter(token for text in texts for token in clean(text))
                    words = [
                        token
                        for token, count in sorted(counts.items(), key=lambda tc: (-tc[1], tc[0]))
                        if count >= min_freq
                    ]
                    if max_vocab_size is not None:
                        # the special tokens take 3 of the places
                        words = words[: max_vocab_size - len(SPECIAL_TOKENS)]
                    return list(SPECIAL_TOKENS) + words
                '''
            )
        },
        {"test_build_vocab": "cut to words[:max_vocab_size - 3], whose end is negative"},
        # Issue 40's sixth blind corpus, graded blind on bdfa422: counterexample; named since.
    ),
    Mutant(
        "k03-03: looks tokens up with token_to_id.setdefault(token",
        A,
        {
            "encode": Rewrite(
                r'''
                # the positions of "<pad>", "<unk>", "<cls>" in SPECIAL_TOKENS
                PAD_ID, UNK_ID, CLS_ID = 0, 1, 2


                def encode(
                    text: str, token_to_id: dict[str, int], max_len: int | None = None
                ) -> list[int]:
                    """[CLS_ID] + one id per token of clean(text) (UNK_ID if unknown).

                    Cut and padded to max_len if given.
                    """
                    ids = [CLS_ID]
                    for token in clean(text):
                        ids.append(token_to_id.setdefault(token, UNK_ID))
                    if max_len is not None:
                        ids = ids[:max_len] + [PAD_ID] * max(0, max_len - len(ids))
                    return ids
                '''
            )
        },
        {
            "test_encode": "encode(text, token_to_id, max_len=None) changed token_to_id (entries added"
        },
        # Issue 40's sixth blind corpus, graded blind on bdfa422: named.
    ),
    Mutant(
        "k03-04: dropout is applied to the output of linear2 instead of the hidden laye",
        A,
        {
            "feed_forward": Rewrite(
                r'''
                class PositionwiseFeedForward(nn.Module):
                    """FFN(x) = linear2(dropout(relu(linear1(x)))), the same layers at each position."""

                    def __init__(self, d_model: int, d_ff: int, dropout: float = 0.0):
                        super().__init__()
                        self.linear1 = nn.Linear(d_model, d_ff)
                        self.dropout = nn.Dropout(dropout)
                        self.linear2 = nn.Linear(d_ff, d_model)

                    def forward(self, x: torch.Tensor) -> torch.Tensor:
                        """x: (..., d_model) -> (..., d_model)."""
                        hidden = torch.relu(self.linear1(x))
                        return self.dropout(self.linear2(hidden))
                '''
            )
        },
        {
            "test_feed_forward": "dropout is applied to the output: in train mode whole output values are zeroed; dropout belongs on the hidden layer, lin"
        },
        # Issue 40's sixth blind corpus, graded blind on bdfa422: named.
    ),
    Mutant(
        "k03-05: assumes the pads sit at the end of each sentence",
        A,
        {
            "padded_block": Rewrite(
                r'''
                def padded_block(
                    block: nn.Module, x: torch.Tensor, is_pad: torch.Tensor
                ) -> torch.Tensor:
                    """The block's output for x (B, L, d_model), blind to the pads of is_pad (B, L).

                    -> (B, L, d_model).
                    """
                    # 1. No mask at all: every sentence is cut to its real tokens and run alone.
                    # 2. Pad positions get zeros.
                    # 3. A sentence of nothing but pads has no real token: its output is all zeros.
                    out = torch.zeros_like(x)
                    lengths = (~is_pad).sum(dim=1)
                    for b in range(x.shape[0]):
                        n = int(lengths[b])
                        if n == 0:
                            continue
                        y, _ = block(x[b : b + 1, :n])
                        out = torch.cat([out[:b], torch.cat([y, out[b : b + 1, n:]], dim=1), out[b + 1 :]], dim=0)
                    return out
                '''
            )
        },
        {"test_padded_block": "real tokens are taken to be its first n positions"},
        # Issue 40's sixth blind corpus, graded blind on bdfa422: counterexample; named since.
    ),
    Mutant(
        "n03-01: \\w* after an apostrophe: a trailing apostrophe stays in the word",
        A,
        {
            "clean": Rewrite(
                r'''
                def clean(text: str) -> list[str]:
                    """Lowercase text and split it into words and punctuation marks.

                    "Didn't it?" -> ["didn't", "it", "?"].
                    """
                    text = text.lower().replace("\u2019", "'")
                    return re.findall(r"\w+(?:'\w*)*|[^\w\s]", text)
                '''
            )
        },
        {"test_clean": "an apostrophe that is not between two word characters is kept in a word"},
        # Issue 40's seventh blind corpus, graded blind on 451e037: named.
    ),
    Mutant(
        "n03-02: words[:max_vocab_size - 3], a negative end below 3",
        A,
        {
            "build_vocab": Rewrite(
                r'''
                def build_vocab(
                    texts: list[str], max_vocab_size: int | None = None, min_freq: int = 1
                ) -> list[str]:
                    """id_to_token: the special tokens, then tokens by falling count, ties alphabetical.

                    At most max_vocab_size entries in all.
                    """
                    counts = Counter()
                    for text in texts:
                        counts.update(clean(text))
                    ordered = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
                    tokens = [token for token, count in ordered if count >= min_freq]
                    if max_vocab_size is not None:
                        # the special tokens count too, so keep max_vocab_size - 3 words
                        tokens = tokens[: max_vocab_size - len(SPECIAL_TOKENS)]
                    return list(SPECIAL_TOKENS) + tokens
                '''
            )
        },
        {
            "test_build_vocab": "the tokens after the special tokens are cut to words[:max_vocab_size - 3], whose end is negative"
        },
        # Issue 40's seventh blind corpus, graded blind on 451e037: named.
    ),
    Mutant(
        "n03-03: the key mask rebuilt from each sentence's length",
        A,
        {
            "padded_block": Rewrite(
                r'''
                def padded_block(
                    block: nn.Module, x: torch.Tensor, is_pad: torch.Tensor
                ) -> torch.Tensor:
                    """The block's output for x (B, L, d_model), blind to the pads of is_pad (B, L).

                    -> (B, L, d_model).
                    """
                    # 1. Mask: each sentence has n real tokens followed by pads; query and key must both
                    #    be among the first n positions... only keys matter, so the mask is (B, 1, 1, L),
                    #    True for key positions < n.
                    # 2. Pad positions: zeros.
                    # 3. All-pad sentence (n = 0): no key is visible; its output is all zeros.
                    B, L, _ = x.shape
                    lengths = (~is_pad).sum(dim=1)  # (B,) number of real tokens
                    real = torch.arange(L, device=x.device)[None, :] < lengths[:, None]  # (B, L)
                    x_in = torch.where(real.unsqueeze(-1), x, torch.zeros_like(x))
                    out, _ = block(x_in, mask=real[:, None, None, :])
                    return torch.where(real.unsqueeze(-1), out, torch.zeros_like(out))
                '''
            )
        },
        {
            "test_padded_block": "the key mask is built from each sentence's number of real tokens (position < that number)"
        },
        # Issue 40's seventh blind corpus, graded blind on 451e037: named.
    ),
    Mutant(
        "n03-04: each cosine's exponent from its own odd column, (2i+1)/d_model",
        A,
        {
            "sinusoidal_encoding": Rewrite(
                r'''
                def sinusoidal_encoding(max_len: int, d_model: int) -> torch.Tensor:
                    """(max_len, d_model) float32 table of sinusoidal positions.

                    PE[pos, 2i] = sin(pos / 10000^(2i/d_model)), PE[pos, 2i+1] = cos(same).
                    """
                    position = torch.arange(max_len, dtype=torch.float32).unsqueeze(1)  # (max_len, 1)
                    even = torch.arange(0, d_model, 2, dtype=torch.float32)  # column indices 0, 2, 4, ...
                    odd = torch.arange(1, d_model, 2, dtype=torch.float32)  # column indices 1, 3, 5, ...
                    pe = torch.zeros(max_len, d_model)
                    pe[:, 0::2] = torch.sin(position / 10000.0 ** (even / d_model))
                    pe[:, 1::2] = torch.cos(position / 10000.0 ** (odd / d_model))
                    return pe
                '''
            )
        },
        {"test_sinusoidal_encoding": "columns 2i and 2i+1 must share ONE angle"},
        # Issue 40's seventh blind corpus, graded blind on 451e037: named.
    ),
    Mutant(
        "n03-05: eps added to the standard deviation, outside the square root",
        A,
        {
            "layer_norm": Rewrite(
                r'''
                class LayerNorm(nn.Module):
                    """Normalise the last dim to mean 0 and variance 1.

                    Then scale by gamma (weight) and shift by beta (bias).
                    """

                    def __init__(self, d_model: int, eps: float = 1e-5):
                        super().__init__()
                        self.eps = eps
                        self.weight = nn.Parameter(torch.ones(d_model))  # gamma
                        self.bias = nn.Parameter(torch.zeros(d_model))  # beta

                    def forward(self, x: torch.Tensor) -> torch.Tensor:
                        """x: (..., d_model) -> (..., d_model)."""
                        mean = x.mean(dim=-1, keepdim=True)
                        var = ((x - mean) ** 2).mean(dim=-1, keepdim=True)
                        std = torch.sqrt(var)
                        return self.weight * (x - mean) / (std + self.eps) + self.bias
                '''
            )
        },
        {"test_layer_norm": "eps is added outside the square root (std + eps)"},
        # Issue 40's seventh blind corpus, graded blind on 451e037: named.
    ),
    Mutant(
        "p03-01: \\w* after an apostrophe: a trailing apostrophe stays in the word",
        A,
        {
            "clean": Rewrite(
                r'''
                # kind: wrong
                # grade_id: clean
                # mistake: the word pattern lets an apostrophe be followed by ZERO word characters (\w*), so a trailing apostrophe stays inside the word ("dogs'" -> "dogs'" instead of "dogs", "'").
                # evidence: tools/ev03.py: clean("the dogs' bowls") gives ['the', "dogs'", 'bowls'] instead of ['the', 'dogs', "'", 'bowls'] (statement: an apostrophe not between two word characters is its own token).
                def clean(text: str) -> list[str]:
                    """Lowercase text and split it into words and punctuation marks."""
                    text = text.lower().replace("\u2019", "'")
                    return re.findall(r"\w+(?:'\w*)*|[^\w\s]", text)
                '''
            )
        },
        {"test_clean": "an apostrophe that is not between two word characters is kept in a word"},
        # Issue 40's seventh blind corpus, graded blind on 451e037: named.
    ),
    Mutant(
        "p03-02: words[:max_vocab_size - 3], a negative end below 3",
        A,
        {
            "build_vocab": Rewrite(
                r'''
                # kind: wrong
                # grade_id: build_vocab
                # mistake: max_vocab_size is applied by keeping words[:max_vocab_size - 3] after the specials, which for max_vocab_size below 3 (e.g. 2) slices from the end and returns more than max_vocab_size entries.
                # evidence: tools/ev03.py: build_vocab(['the cat sat','the dog sat','a cat'], max_vocab_size=2) returns 7 entries ['<pad>','<unk>','<cls>','cat','sat','the','a'] (mine: ['<pad>','<unk>']); also wrong for 1 and 0.
                def build_vocab(
                    texts: list[str], max_vocab_size: int | None = None, min_freq: int = 1
                ) -> list[str]:
                    """id_to_token: the special tokens, then tokens by falling count, ties alphabetical."""
                    counts = Counter()
                    for text in texts:
                        counts.update(clean(text))
                    ordered = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
                    words = [token for token, count in ordered if count >= min_freq]
                    if max_vocab_size is not None:
                        # the specials take len(SPECIAL_TOKENS) of the slots
                        words = words[: max_vocab_size - len(SPECIAL_TOKENS)]
                    return list(SPECIAL_TOKENS) + words
                '''
            )
        },
        {
            "test_build_vocab": "the tokens after the special tokens are cut to words[:max_vocab_size - 3], whose end is negative"
        },
        # Issue 40's seventh blind corpus, graded blind on 451e037: named.
    ),
    Mutant(
        "p03-03: dropout on the feed-forward's output, not its hidden layer",
        A,
        {
            "feed_forward": Rewrite(
                r'''
                # kind: wrong
                # grade_id: feed_forward
                # mistake: dropout is applied to the network's OUTPUT (after linear2) instead of to the hidden layer after the ReLU, against the statement's linear2(dropout(relu(linear1(x)))).
                # evidence: tools/ev03.py: same weights, dropout 0.5, train mode, same seed: 93 of 192 output entries are exactly 0 (whole outputs dropped, linear2's bias included) while mine has none; eval mode identical.
                class PositionwiseFeedForward(nn.Module):
                    """FFN(x) = linear2(dropout(relu(linear1(x)))), the same layers at each position."""

                    def __init__(self, d_model: int, d_ff: int, dropout: float = 0.0):
                        super().__init__()
                        self.linear1 = nn.Linear(d_model, d_ff)
                        self.dropout = nn.Dropout(dropout)
                        self.linear2 = nn.Linear(d_ff, d_model)

                    def forward(self, x: torch.Tensor) -> torch.Tensor:
                        """x: (..., d_model) -> (..., d_model)."""
                        return self.dropout(self.linear2(torch.relu(self.linear1(x))))
                '''
            )
        },
        {
            "test_feed_forward": "dropout is applied to the output: in train mode whole output values are zeroed"
        },
        # Issue 40's seventh blind corpus, graded blind on 451e037: named.
    ),
    Mutant(
        "p03-04: self-attention built without the block's dropout",
        A,
        {
            "encoder_block": Rewrite(
                r'''
                # kind: wrong
                # grade_id: encoder_block
                # mistake: self_attn is built as MultiHeadAttention(d_model, num_heads) without the dropout rate the table asks for, so in training mode the attention weights are never dropped.
                # evidence: tools/ev03.py: same weights, dropout 0.5, train mode: my block's self_attn has a Dropout(0.5) and 143 attention weights are dropped to 0; this one's self_attn dropout is 0.0 and drops none; eval mode identical.
                class EncoderBlock(nn.Module):
                    """Post-norm encoder block: self-attention, then feed-forward."""

                    def __init__(self, d_model: int, num_heads: int, d_ff: int, dropout: float = 0.0):
                        super().__init__()
                        self.self_attn = MultiHeadAttention(d_model, num_heads)
                        self.feed_forward = PositionwiseFeedForward(d_model, d_ff, dropout)
                        self.norm1 = nn.LayerNorm(d_model)
                        self.norm2 = nn.LayerNorm(d_model)
                        self.dropout1 = nn.Dropout(dropout)
                        self.dropout2 = nn.Dropout(dropout)

                    def forward(
                        self, x: torch.Tensor, mask: torch.Tensor | None = None
                    ) -> tuple[torch.Tensor, torch.Tensor]:
                        attended, weights = self.self_attn(x, mask=mask)
                        h = self.norm1(x + self.dropout1(attended))
                        out = self.norm2(h + self.dropout2(self.feed_forward(h)))
                        return out, weights
                '''
            )
        },
        {"test_encoder_block": "dropout is not passed on to the MultiHeadAttention sublayer"},
        # Issue 40's seventh blind corpus, graded blind on 451e037: named.
    ),
    Mutant(
        "p03-05: the key mask built from each sentence's length",
        A,
        {
            "padded_block": Rewrite(
                r'''
                # kind: wrong
                # grade_id: padded_block
                # mistake: the mask is built from each sentence's LENGTH (number of real tokens), showing keys 0..length-1, which is right only when the pads sit at the end; pads placed first or in between are shown and real tokens at the end are hidden.
                # evidence: tools/ev03.py: with pads first (row 0) or in the middle (row 1) the real positions differ from the block on the sentence alone by 0.58 and 0.30 (mine: 0.0); with pads at the end it equals mine.
                def padded_block(
                    block: nn.Module, x: torch.Tensor, is_pad: torch.Tensor
                ) -> torch.Tensor:
                    """The block's output for x (B, L, d_model), blind to the pads of is_pad (B, L)."""
                    # Design:
                    # 1. mask (B, 1, 1, L): every query may attend to the first `length` keys of
                    #    its sentence, where length = its number of real tokens (encode pads at the
                    #    end, so those are exactly the real tokens).
                    # 2. pad positions: returned as zeros.
                    # 3. an all-pad sentence has length 0; I let it see every key (length = L) so
                    #    no softmax row is empty, and its output is zeroed anyway.
                    B, L = is_pad.shape
                    lengths = (~is_pad).sum(dim=1)  # (B,)
                    lengths = torch.where(lengths == 0, torch.full_like(lengths, L), lengths)
                    positions = torch.arange(L, device=x.device)
                    keys = positions[None, :] < lengths[:, None]  # (B, L)
                    out, _ = block(x, mask=keys[:, None, None, :])
                    return torch.where(is_pad.unsqueeze(-1), torch.zeros_like(out), out)
                '''
            )
        },
        {
            "test_padded_block": "the key mask is built from each sentence's number of real tokens (position < that number)"
        },
        # Issue 40's seventh blind corpus, graded blind on 451e037: named.
    ),
    Mutant(
        "r03-04: the residual dropouts are F.dropout without training=, active in eval mode",
        A,
        {
            "encoder_block": Rewrite(
                r'''
                # id: r03-04
                # kind: wrong
                # grade_id: encoder_block
                # mistake: applies the residual dropout with F.dropout(..., p) without training=self.training, so dropout stays active in eval mode (the output of an eval-mode block with dropout > 0 is random).
                # evidence: my experiment (scripts ev0N.py, output ev0N.txt in /work/fresh-corpus8b):
                #   r03-04: correct eval mode, dropout 0.3: two calls on the same x identical: True | max diff 0.0
                #   r03-04: r03-04 eval mode, dropout 0.3: two calls on the same x identical: False | max diff 1.1303128004074097
                # public checks: passes every public check of the notebook
                class EncoderBlock(nn.Module):
                    """Post-norm encoder block: self-attention, then feed-forward.

                    Each sits inside a residual and a LayerNorm.
                    """

                    def __init__(self, d_model: int, num_heads: int, d_ff: int, dropout: float = 0.0):
                        super().__init__()
                        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout)
                        self.feed_forward = PositionwiseFeedForward(d_model, d_ff, dropout)
                        self.norm1 = nn.LayerNorm(d_model)
                        self.norm2 = nn.LayerNorm(d_model)
                        self.dropout1 = nn.Dropout(dropout)
                        self.dropout2 = nn.Dropout(dropout)
                        self.p = dropout

                    def forward(
                        self, x: torch.Tensor, mask: torch.Tensor | None = None
                    ) -> tuple[torch.Tensor, torch.Tensor]:
                        """x: (B, L, d_model), mask broadcastable to (B, num_heads, L, L)
                        -> ((B, L, d_model), (B, num_heads, L, L)).
                        """
                        attended, weights = self.self_attn(x, mask=mask)
                        h = self.norm1(x + F.dropout(attended, self.p))
                        out = self.norm2(h + F.dropout(self.feed_forward(h), self.p))
                        return out, weights
                '''
            )
        },
        {"test_encoder_block": "dropout ignores the mode"},
        # Issue 40's eighth blind corpus, graded blind on 47d54b0: counterexample (named since).
    ),
    Mutant(
        "q03-01: clean's word pattern [\\w']+ keeps outer apostrophes in the word",
        A,
        {
            "clean": Rewrite(
                r'''
                def clean(text: str) -> list[str]:
                    """Lowercase text and split it into words and punctuation marks.

                    "Didn't it?" -> ["didn't", "it", "?"].
                    """
                    text = text.lower().replace("\u2019", "'")
                    # a word: word characters, optionally continued through inner apostrophes;
                    # otherwise one character that is neither a word character nor whitespace
                    return re.findall(r"[\w']+|[^\w\s]", text)
                '''
            )
        },
        {"test_clean": "an apostrophe that is not between two word characters is kept in a word"},
        # Issue 40's eighth blind corpus, graded blind on 47d54b0: named.
    ),
    Mutant(
        "q03-02: encode looks tokens up with setdefault, adding the unknown ones",
        A,
        {
            "encode": Rewrite(
                r'''
                # the positions of "<pad>", "<unk>", "<cls>" in SPECIAL_TOKENS
                PAD_ID, UNK_ID, CLS_ID = 0, 1, 2


                def encode(
                    text: str, token_to_id: dict[str, int], max_len: int | None = None
                ) -> list[int]:
                    """[CLS_ID] + one id per token of clean(text) (UNK_ID if unknown).

                    Cut and padded to max_len if given.
                    """
                    ids = [CLS_ID] + [token_to_id.setdefault(token, UNK_ID) for token in clean(text)]
                    if max_len is not None:
                        ids = ids[:max_len]
                        ids = ids + [PAD_ID] * (max_len - len(ids))
                    return ids
                '''
            )
        },
        {"test_encode": "changed token_to_id"},
        # Issue 40's eighth blind corpus, graded blind on 47d54b0: named.
    ),
    Mutant(
        "q03-03: LayerNorm adds eps outside the square root",
        A,
        {
            "layer_norm": Rewrite(
                r'''
                class LayerNorm(nn.Module):
                    """Normalise the last dim to mean 0 and variance 1.

                    Then scale by gamma (weight) and shift by beta (bias).
                    """

                    def __init__(self, d_model: int, eps: float = 1e-5):
                        super().__init__()
                        self.eps = eps
                        self.weight = nn.Parameter(torch.ones(d_model))  # gamma
                        self.bias = nn.Parameter(torch.zeros(d_model))  # beta

                    def forward(self, x: torch.Tensor) -> torch.Tensor:
                        """x: (..., d_model) -> (..., d_model)."""
                        mean = x.mean(dim=-1, keepdim=True)
                        var = ((x - mean) ** 2).mean(dim=-1, keepdim=True)  # biased variance
                        return self.weight * (x - mean) / (torch.sqrt(var) + self.eps) + self.bias
                '''
            )
        },
        {"test_layer_norm": "eps is added outside the square root"},
        # Issue 40's eighth blind corpus, graded blind on 47d54b0: named.
    ),
    Mutant(
        "q03-04: the second residual adds the block's input x",
        A,
        {
            "encoder_block": Rewrite(
                r'''
                class EncoderBlock(nn.Module):
                    """Post-norm encoder block: self-attention, then feed-forward.

                    Each sits inside a residual and a LayerNorm.
                    """

                    def __init__(self, d_model: int, num_heads: int, d_ff: int, dropout: float = 0.0):
                        super().__init__()
                        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout)
                        self.feed_forward = PositionwiseFeedForward(d_model, d_ff, dropout)
                        self.norm1 = nn.LayerNorm(d_model)
                        self.norm2 = nn.LayerNorm(d_model)
                        self.dropout1 = nn.Dropout(dropout)
                        self.dropout2 = nn.Dropout(dropout)

                    def forward(
                        self, x: torch.Tensor, mask: torch.Tensor | None = None
                    ) -> tuple[torch.Tensor, torch.Tensor]:
                        """x: (B, L, d_model), mask broadcastable to (B, num_heads, L, L)
                        -> ((B, L, d_model), (B, num_heads, L, L)).
                        """
                        attended, weights = self.self_attn(x, mask=mask)
                        h = self.norm1(x + self.dropout1(attended))
                        out = self.norm2(x + self.dropout2(self.feed_forward(h)))
                        return out, weights
                '''
            )
        },
        {"test_encoder_block": "the second residual adds the block's input x"},
        # Issue 40's eighth blind corpus, graded blind on 47d54b0: named.
    ),
    Mutant(
        "q03-05: padded_block's key mask from each sentence's number of real tokens",
        A,
        {
            "padded_block": Rewrite(
                r'''
                def padded_block(
                    block: nn.Module, x: torch.Tensor, is_pad: torch.Tensor
                ) -> torch.Tensor:
                    """The block's output for x (B, L, d_model), blind to the pads of is_pad (B, L).

                    -> (B, L, d_model).
                    """
                    # 1. Mask: every query may attend to the real keys of its own sentence only;
                    #    shape (B, 1, 1, L), which broadcasts over the heads and the queries. Pads may
                    #    sit anywhere: the mask is read off is_pad position by position.
                    # 2. Pad positions: the output there is set to zero.
                    # 3. A sentence of nothing but pads: all its keys are hidden, so attention gives
                    #    zero weights (the package's convention, never NaN); its output is all zeros.
                    lengths = (~is_pad.bool()).sum(dim=-1)  # real tokens per sentence
                    keep = torch.arange(x.shape[1], device=x.device)[None, :] < lengths[:, None]
                    mask = keep[:, None, None, :]
                    out, _ = block(x, mask=mask)
                    return out.masked_fill(is_pad.bool().unsqueeze(-1), 0.0)
                '''
            )
        },
        {"test_padded_block": "the key mask is built from each sentence's number of real tokens"},
        # Issue 40's eighth blind corpus, graded blind on 47d54b0: named.
    ),
    Mutant(
        "r03-01: clean's word pattern [\\w']+ keeps outer apostrophes in the word",
        A,
        {
            "clean": Rewrite(
                r'''
                # id: r03-01
                # kind: wrong
                # grade_id: clean
                # mistake: the word pattern [\w']+ lets apostrophes anywhere into a word, so a trailing or leading apostrophe ("dogs'", "'tis") stays glued to the word instead of being a punctuation token of its own.
                # evidence: my experiment (scripts ev0N.py, output ev0N.txt in /work/fresh-corpus8b):
                #   r03-01: "the dogs' bowls" correct ['the', 'dogs', "'", 'bowls'] | wrong ['the', "dogs'", 'bowls']
                #   r03-01: "'tis late" correct ["'", 'tis', 'late'] | wrong ["'tis", 'late']
                # public checks: passes every public check of the notebook
                def clean(text: str) -> list[str]:
                    """Lowercase text and split it into words and punctuation marks.

                    "Didn't it?" -> ["didn't", "it", "?"].
                    """
                    text = text.lower().replace("\u2019", "'")
                    # a word is letters/digits/underscores and apostrophes; anything else that is
                    # not a space is one punctuation mark
                    return re.findall(r"[\w']+|[^\w\s]", text)
                '''
            )
        },
        {"test_clean": "an apostrophe that is not between two word characters is kept in a word"},
        # Issue 40's eighth blind corpus, graded blind on 47d54b0: named.
    ),
    Mutant(
        "r03-02: build_vocab keeps the three special tokens whatever max_vocab_size",
        A,
        {
            "build_vocab": Rewrite(
                r'''
                # id: r03-02
                # kind: wrong
                # grade_id: build_vocab
                # mistake: always keeps the three special tokens and cuts only the words to max_vocab_size - 3 (floored at 0), so max_vocab_size below 3 returns 3 entries, breaking "the whole list, special tokens included, has at most max_vocab_size entries".
                # evidence: my experiment (scripts ev0N.py, output ev0N.txt in /work/fresh-corpus8b):
                #   r03-02: max_vocab_size=2: correct ['<pad>', '<unk>'] | wrong ['<pad>', '<unk>', '<cls>']
                #   r03-02: max_vocab_size=1: correct ['<pad>'] | wrong ['<pad>', '<unk>', '<cls>']
                #   r03-02: max_vocab_size=5: correct ['<pad>', '<unk>', '<cls>', 'cat', 'sat'] | wrong ['<pad>', '<unk>', '<cls>', 'cat', 'sat']
                # public checks: passes every public check of the notebook
                def build_vocab(
                    texts: list[str], max_vocab_size: int | None = None, min_freq: int = 1
                ) -> list[str]:
                    """id_to_token: the special tokens, then tokens by falling count, ties alphabetical.

                    At most max_vocab_size entries in all.
                    """
                    counts = Counter(token for text in texts for token in clean(text))
                    ordered = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
                    words = [tok for tok, n in ordered if n >= min_freq]
                    if max_vocab_size is not None:
                        # the specials always stay; the words get the remaining places
                        words = words[: max(0, max_vocab_size - len(SPECIAL_TOKENS))]
                    return list(SPECIAL_TOKENS) + words
                '''
            )
        },
        {
            "test_build_vocab": "the whole list, special tokens included, has at most max_vocab_size entries"
        },
        # Issue 40's eighth blind corpus, graded blind on 47d54b0: named.
    ),
    Mutant(
        "r03-03: encode looks tokens up with setdefault, adding the unknown ones",
        A,
        {
            "encode": Rewrite(
                r'''
                # id: r03-03
                # kind: wrong
                # grade_id: encode
                # mistake: uses token_to_id.setdefault(token, UNK_ID), which ADDS every unknown token to the caller's vocabulary dict (the statement says encode must not add to it or change it).
                # evidence: my experiment (scripts ev0N.py, output ev0N.txt in /work/fresh-corpus8b):
                #   r03-03: correct ids [2, 3, 1] | dict after the call: {'<pad>': 0, '<unk>': 1, '<cls>': 2, 'the': 3}
                #   r03-03: r03-03 ids [2, 3, 1] | dict after the call: {'<pad>': 0, '<unk>': 1, '<cls>': 2, 'the': 3, 'zebra': 1}
                # public checks: passes every public check of the notebook
                # the positions of "<pad>", "<unk>", "<cls>" in SPECIAL_TOKENS
                PAD_ID, UNK_ID, CLS_ID = 0, 1, 2


                def encode(
                    text: str, token_to_id: dict[str, int], max_len: int | None = None
                ) -> list[int]:
                    """[CLS_ID] + one id per token of clean(text) (UNK_ID if unknown).

                    Cut and padded to max_len if given.
                    """
                    ids = [CLS_ID]
                    for token in clean(text):
                        ids.append(token_to_id.setdefault(token, UNK_ID))
                    if max_len is not None:
                        ids = ids[:max_len] + [PAD_ID] * (max_len - len(ids))
                    return ids
                '''
            )
        },
        {"test_encode": "changed token_to_id"},
        # Issue 40's eighth blind corpus, graded blind on 47d54b0: named.
    ),
    Mutant(
        "r03-05: padded_block's key mask from each sentence's number of real tokens",
        A,
        {
            "padded_block": Rewrite(
                r'''
                # id: r03-05
                # kind: wrong
                # grade_id: padded_block
                # mistake: builds the key mask from each sentence's LENGTH (positions < number of real tokens), which assumes the pads sit at the end; with pads first or in between it hides real tokens and shows pads.
                # evidence: my experiment (scripts ev0N.py, output ev0N.txt in /work/fresh-corpus8b):
                #   r03-05: correct pads first: max |out - sentence alone| 0.0 | pads in between: 0.0
                #   r03-05: r03-05 pads first: max |out - sentence alone| 0.575813889503479 | pads in between: 0.7652252912521362
                # public checks: passes every public check of the notebook
                def padded_block(
                    block: nn.Module, x: torch.Tensor, is_pad: torch.Tensor
                ) -> torch.Tensor:
                    """The block's output for x (B, L, d_model), blind to the pads of is_pad (B, L).

                    -> (B, L, d_model).
                    """
                    # 1. Mask (B, 1, 1, L): key j is visible when j < the sentence's length (its
                    #    number of real tokens), for every query; shape broadcasts over heads/queries.
                    # 2. Pad positions are returned as zeros.
                    # 3. An all-pad sentence has length 0; I let it see its first position so that
                    #    no row is fully masked, and its output is zeros anyway.
                    batch, length = is_pad.shape
                    lengths = (~is_pad).sum(dim=-1, keepdim=True).clamp(min=1)  # (B, 1)
                    positions = torch.arange(length, device=x.device).unsqueeze(0)  # (1, L)
                    visible = positions < lengths  # (B, L)
                    out, _ = block(x, mask=visible[:, None, None, :])
                    return out.masked_fill(is_pad.unsqueeze(-1), 0.0)
                '''
            )
        },
        {"test_padded_block": "the key mask is built from each sentence's number of real tokens"},
        # Issue 40's eighth blind corpus, graded blind on 47d54b0: named.
    ),
    Mutant(
        "s03-01: clean's word \\w+'?\\w* keeps a trailing apostrophe, and one at most",
        A,
        {
            "clean": Rewrite(
                r'''
                def clean(text: str) -> list[str]:
                    """Lowercase text and split it into words and punctuation marks.

                    "Didn't it?" -> ["didn't", "it", "?"].
                    """
                    text = text.lower().replace("\u2019", "'")
                    return re.findall(r"\w+'?\w*|[^\w\s]", text)
                '''
            )
        },
        {"test_clean": "a word holds at most one apostrophe and keeps it at its end too"},
        # Issue 40's ninth blind corpus, graded blind on feb0b2e: counterexample (named since).
    ),
    Mutant(
        "s03-02: encode looks unknown words up with setdefault, adding them to the vocabulary",
        A,
        {
            "encode": Rewrite(
                r'''
                # the positions of "<pad>", "<unk>", "<cls>" in SPECIAL_TOKENS
                PAD_ID, UNK_ID, CLS_ID = 0, 1, 2


                def encode(
                    text: str, token_to_id: dict[str, int], max_len: int | None = None
                ) -> list[int]:
                    """[CLS_ID] + one id per token of clean(text) (UNK_ID if unknown).

                    Cut and padded to max_len if given.
                    """
                    ids = [CLS_ID]
                    for token in clean(text):
                        ids.append(token_to_id.setdefault(token, UNK_ID))
                    if max_len is not None:
                        ids = ids[:max_len] + [PAD_ID] * (max_len - len(ids))
                    return ids
                '''
            )
        },
        {
            "test_encode": "encode(text, token_to_id, max_len=None) changed token_to_id",
        },
        # Issue 40's ninth blind corpus, graded blind on feb0b2e: named.
    ),
    Mutant(
        "s03-03: LayerNorm's eps added outside the square root",
        A,
        {
            "layer_norm": Rewrite(
                r'''
                class LayerNorm(nn.Module):
                    """Normalise the last dim to mean 0 and variance 1.

                    Then scale by gamma (weight) and shift by beta (bias).
                    """

                    def __init__(self, d_model: int, eps: float = 1e-5):
                        super().__init__()
                        self.eps = eps
                        self.weight = nn.Parameter(torch.ones(d_model))  # gamma
                        self.bias = nn.Parameter(torch.zeros(d_model))  # beta

                    def forward(self, x: torch.Tensor) -> torch.Tensor:
                        """x: (..., d_model) -> (..., d_model)."""
                        mean = x.mean(dim=-1, keepdim=True)
                        var = ((x - mean) ** 2).mean(dim=-1, keepdim=True)
                        return self.weight * (x - mean) / (torch.sqrt(var) + self.eps) + self.bias
                '''
            )
        },
        {
            "test_layer_norm": "eps is added outside the square root",
        },
        # Issue 40's ninth blind corpus, graded blind on feb0b2e: counterexample (named since).
    ),
    Mutant(
        "s03-04: the feed-forward sublayer reads the block's input x, not h",
        A,
        {
            "encoder_block": Rewrite(
                r'''
                class EncoderBlock(nn.Module):
                    """Post-norm encoder block: self-attention, then feed-forward.

                    Each sits inside a residual and a LayerNorm.
                    """

                    def __init__(self, d_model: int, num_heads: int, d_ff: int, dropout: float = 0.0):
                        super().__init__()
                        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout)
                        self.feed_forward = PositionwiseFeedForward(d_model, d_ff, dropout)
                        self.norm1 = nn.LayerNorm(d_model)
                        self.norm2 = nn.LayerNorm(d_model)
                        self.dropout1 = nn.Dropout(dropout)
                        self.dropout2 = nn.Dropout(dropout)

                    def forward(
                        self, x: torch.Tensor, mask: torch.Tensor | None = None
                    ) -> tuple[torch.Tensor, torch.Tensor]:
                        """x: (B, L, d_model), mask broadcastable to (B, num_heads, L, L)

                        -> ((B, L, d_model), (B, num_heads, L, L)).
                        """
                        attended, weights = self.self_attn(x, mask=mask)
                        h = self.norm1(x + self.dropout1(attended))
                        out = self.norm2(h + self.dropout2(self.feed_forward(x)))
                        return out, weights
                '''
            )
        },
        {
            "test_encoder_block": "the feed-forward network reads the block's input x",
        },
        # Issue 40's ninth blind corpus, graded blind on feb0b2e: named.
    ),
    Mutant(
        "s03-05: padded_block's key mask from sentence lengths, pads assumed at the end",
        A,
        {
            "padded_block": Rewrite(
                r'''
                def padded_block(
                    block: nn.Module, x: torch.Tensor, is_pad: torch.Tensor
                ) -> torch.Tensor:
                    """The block's output for x (B, L, d_model), blind to the pads of is_pad (B, L).

                    -> (B, L, d_model).
                    """
                    # 1. The mask (B, 1, L, L): every query sees the first n keys of its sentence,
                    #    n = its number of real tokens (the pads follow them); a sentence with no
                    #    real token sees its first key so that no row is empty.
                    # 2. Pad positions: their output is set to zero.
                    # 3. An all-pad sentence: one visible key (finite), then zeros.
                    B, L, _ = x.shape
                    lengths = (~is_pad).sum(dim=1).clamp(min=1)  # (B,)
                    positions = torch.arange(L, device=x.device)
                    key_visible = positions[None, :] < lengths[:, None]  # (B, L)
                    mask = key_visible[:, None, None, :].expand(B, 1, L, L)
                    out, _ = block(x, mask=mask)
                    return out.masked_fill(is_pad.unsqueeze(-1), 0.0)
                '''
            )
        },
        {
            "test_padded_block": "the key mask is built from each sentence's number of real tokens",
        },
        # Issue 40's ninth blind corpus, graded blind on feb0b2e: named.
    ),
    Mutant(
        "t03-01: encode looks tokens up with setdefault, adding unknown words",
        A,
        {
            "encode": Rewrite(
                r'''
                # the positions of "<pad>", "<unk>", "<cls>" in SPECIAL_TOKENS
                PAD_ID, UNK_ID, CLS_ID = 0, 1, 2


                def encode(
                    text: str, token_to_id: dict[str, int], max_len: int | None = None
                ) -> list[int]:
                    """[CLS_ID] + one id per token of clean(text) (UNK_ID if unknown).

                    Cut and padded to max_len if given.
                    """
                    ids = [CLS_ID]
                    for token in clean(text):
                        ids.append(token_to_id.setdefault(token, UNK_ID))
                    if max_len is not None:
                        ids = ids[:max_len]
                        while len(ids) < max_len:
                            ids.append(PAD_ID)
                    return ids
                '''
            )
        },
        {
            "test_encode": "encode(text, token_to_id, max_len=None) changed token_to_id",
        },
        # Issue 40's ninth blind corpus, graded blind on feb0b2e: named.
    ),
    Mutant(
        "t03-02: build_vocab keeps the specials and cuts the words to max_vocab_size - 3",
        A,
        {
            "build_vocab": Rewrite(
                r'''
                def build_vocab(
                    texts: list[str], max_vocab_size: int | None = None, min_freq: int = 1
                ) -> list[str]:
                    """id_to_token: the special tokens, then tokens by falling count, ties alphabetical.

                    At most max_vocab_size entries in all.
                    """
                    counts = Counter(token for text in texts for token in clean(text))
                    words = sorted(
                        (token for token, count in counts.items() if count >= min_freq),
                        key=lambda token: (-counts[token], token),
                    )
                    if max_vocab_size is not None:
                        # the special tokens count towards the limit
                        words = words[: max_vocab_size - len(SPECIAL_TOKENS)]
                    return list(SPECIAL_TOKENS) + words
                '''
            )
        },
        {
            "test_build_vocab": "the tokens after the special tokens are cut to words[:max_vocab_size - 3]",
        },
        # Issue 40's ninth blind corpus, graded blind on feb0b2e: named.
    ),
    Mutant(
        "t03-03: LayerNorm's eps outside the square root",
        A,
        {
            "layer_norm": Rewrite(
                r'''
                class LayerNorm(nn.Module):
                    """Normalise the last dim to mean 0 and variance 1.

                    Then scale by gamma (weight) and shift by beta (bias).
                    """

                    def __init__(self, d_model: int, eps: float = 1e-5):
                        super().__init__()
                        self.eps = eps
                        self.weight = nn.Parameter(torch.ones(d_model))  # gamma
                        self.bias = nn.Parameter(torch.zeros(d_model))  # beta

                    def forward(self, x: torch.Tensor) -> torch.Tensor:
                        """x: (..., d_model) -> (..., d_model)."""
                        mu = x.mean(dim=-1, keepdim=True)
                        sigma = x.var(dim=-1, unbiased=False, keepdim=True).sqrt()
                        return self.weight * (x - mu) / (sigma + self.eps) + self.bias
                '''
            )
        },
        {
            "test_layer_norm": "eps is added outside the square root",
        },
        # Issue 40's ninth blind corpus, graded blind on feb0b2e: named.
    ),
    Mutant(
        "t03-04: dropout1 and dropout2 built but never applied",
        A,
        {
            "encoder_block": Rewrite(
                r'''
                class EncoderBlock(nn.Module):
                    """Post-norm encoder block: self-attention, then feed-forward.

                    Each sits inside a residual and a LayerNorm.
                    """

                    def __init__(self, d_model: int, num_heads: int, d_ff: int, dropout: float = 0.0):
                        super().__init__()
                        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout)
                        self.feed_forward = PositionwiseFeedForward(d_model, d_ff, dropout)
                        self.norm1 = nn.LayerNorm(d_model)
                        self.norm2 = nn.LayerNorm(d_model)
                        self.dropout1 = nn.Dropout(dropout)
                        self.dropout2 = nn.Dropout(dropout)

                    def forward(
                        self, x: torch.Tensor, mask: torch.Tensor | None = None
                    ) -> tuple[torch.Tensor, torch.Tensor]:
                        """x: (B, L, d_model), mask broadcastable to (B, num_heads, L, L)
                        -> ((B, L, d_model), (B, num_heads, L, L)).
                        """
                        attended, weights = self.self_attn(x, mask=mask)
                        h = self.norm1(x + attended)
                        out = self.norm2(h + self.feed_forward(h))
                        return out, weights
                '''
            )
        },
        {
            "test_encoder_block": "dropout1 and dropout2 are not applied in training mode",
        },
        # Issue 40's ninth blind corpus, graded blind on feb0b2e: named.
    ),
    Mutant(
        "t03-05: padded_block's key mask from sentence lengths",
        A,
        {
            "padded_block": Rewrite(
                r'''
                def padded_block(
                    block: nn.Module, x: torch.Tensor, is_pad: torch.Tensor
                ) -> torch.Tensor:
                    """The block's output for x (B, L, d_model), blind to the pads of is_pad (B, L).

                    -> (B, L, d_model).
                    """
                    # 1. Mask: (B, 1, 1, L), key j visible when j < the sentence's length (its number
                    #    of real tokens), the same for every query and head.
                    # 2. Pad positions: zeros.
                    # 3. A sentence of pads only has length 0; it sees key 0 only, to stay finite,
                    #    and its output is all zeros.
                    B, L = is_pad.shape
                    lengths = (~is_pad).sum(dim=-1, keepdim=True)  # (B, 1)
                    positions = torch.arange(L, device=x.device)
                    key_ok = positions < lengths.clamp(min=1)  # (B, L)
                    out, _ = block(x, mask=key_ok[:, None, None, :])
                    return out.masked_fill(is_pad[..., None], 0.0)
                '''
            )
        },
        {
            "test_padded_block": "the key mask is built from each sentence's number of real tokens",
        },
        # Issue 40's ninth blind corpus, graded blind on feb0b2e: named.
    ),
    Mutant(
        "u03-01: sinusoidal_encoding: sines in the first half, cosines in the second",
        A,
        {
            "sinusoidal_encoding": Rewrite(
                r'''
                def sinusoidal_encoding(max_len: int, d_model: int) -> torch.Tensor:
                    """(max_len, d_model) float32 table of sinusoidal positions.

                    PE[pos, 2i] = sin(pos / 10000^(2i/d_model)), PE[pos, 2i+1] = cos(same).
                    """
                    position = torch.arange(max_len, dtype=torch.float32).unsqueeze(1)
                    two_i = torch.arange(0, d_model, 2, dtype=torch.float32)
                    angles = position / (10000.0 ** (two_i / d_model))
                    return torch.cat([torch.sin(angles), torch.cos(angles)], dim=-1)
                '''
            )
        },
        {
            "test_sinusoidal_encoding": "sines and cosines are concatenated",
        },
        # Issue 40's tenth blind corpus, graded blind on 60c32e8: named.
    ),
    Mutant(
        "u03-02: layer_norm divides by std + eps",
        A,
        {
            "layer_norm": Rewrite(
                r'''
                class LayerNorm(nn.Module):
                    """Normalise the last dim to mean 0 and variance 1.

                    Then scale by gamma (weight) and shift by beta (bias).
                    """

                    def __init__(self, d_model: int, eps: float = 1e-5):
                        super().__init__()
                        self.eps = eps
                        self.weight = nn.Parameter(torch.ones(d_model))  # gamma
                        self.bias = nn.Parameter(torch.zeros(d_model))  # beta

                    def forward(self, x: torch.Tensor) -> torch.Tensor:
                        """x: (..., d_model) -> (..., d_model)."""
                        mean = x.mean(dim=-1, keepdim=True)
                        std = x.var(dim=-1, keepdim=True, unbiased=False).sqrt()
                        return self.weight * (x - mean) / (std + self.eps) + self.bias
                '''
            )
        },
        {
            "test_layer_norm": "eps is added outside the square root",
        },
        # Issue 40's tenth blind corpus, graded blind on 60c32e8: named.
    ),
    Mutant(
        "u03-03: norm1 and norm2 one shared LayerNorm",
        A,
        {
            "encoder_block": Rewrite(
                r'''
                class EncoderBlock(nn.Module):
                    """Post-norm encoder block: self-attention, then feed-forward.

                    Each sits inside a residual and a LayerNorm.
                    """

                    def __init__(self, d_model: int, num_heads: int, d_ff: int, dropout: float = 0.0):
                        super().__init__()
                        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout)
                        self.feed_forward = PositionwiseFeedForward(d_model, d_ff, dropout)
                        self.norm1 = self.norm2 = nn.LayerNorm(d_model)
                        self.dropout1 = nn.Dropout(dropout)
                        self.dropout2 = nn.Dropout(dropout)

                    def forward(
                        self, x: torch.Tensor, mask: torch.Tensor | None = None
                    ) -> tuple[torch.Tensor, torch.Tensor]:
                        """x: (B, L, d_model), mask broadcastable to (B, num_heads, L, L)
                        -> ((B, L, d_model), (B, num_heads, L, L)).
                        """
                        attended, weights = self.self_attn(x, mask=mask)
                        h = self.norm1(x + self.dropout1(attended))
                        out = self.norm2(h + self.dropout2(self.feed_forward(h)))
                        return out, weights
                '''
            )
        },
        {
            "test_encoder_block": "`self.norm1` and `self.norm2` hold one parameter tensor (one object)",
        },
        # Issue 40's tenth blind corpus, graded blind on 60c32e8: counterexample (named since).
    ),
    Mutant(
        "u03-04: padded_block's key mask from each sentence's length",
        A,
        {
            "padded_block": Rewrite(
                r'''
                def padded_block(
                    block: nn.Module, x: torch.Tensor, is_pad: torch.Tensor
                ) -> torch.Tensor:
                    """The block's output for x (B, L, d_model), blind to the pads of is_pad (B, L).

                    -> (B, L, d_model).
                    """
                    # 1. Mask (B, 1, 1, L): every query may see the first `length` keys of its sentence,
                    #    the real tokens; the pads (after them) are hidden.
                    # 2. Pad positions return zeros.
                    # 3. A sentence of pads only (length 0) gets length 1, so its rows are not empty;
                    #    its output is zeroed anyway.
                    B, L = is_pad.shape
                    lengths = (~is_pad).sum(dim=-1).clamp(min=1)  # (B,)
                    may_see = torch.arange(L, device=x.device)[None, :] < lengths[:, None]  # (B, L)
                    out, _ = block(x, mask=may_see[:, None, None, :])
                    return out.masked_fill(is_pad.unsqueeze(-1), 0.0)
                '''
            )
        },
        {
            "test_padded_block": "the key mask is built from each sentence's number of real tokens",
        },
        # Issue 40's tenth blind corpus, graded blind on 60c32e8: named.
    ),
    Mutant(
        "u03-05: encode looks tokens up with setdefault, adding unknown ones",
        A,
        {
            "encode": Rewrite(
                r'''
                # the positions of "<pad>", "<unk>", "<cls>" in SPECIAL_TOKENS
                PAD_ID, UNK_ID, CLS_ID = 0, 1, 2


                def encode(
                    text: str, token_to_id: dict[str, int], max_len: int | None = None
                ) -> list[int]:
                    """[CLS_ID] + one id per token of clean(text) (UNK_ID if unknown).

                    Cut and padded to max_len if given.
                    """
                    ids = [CLS_ID]
                    for token in clean(text):
                        ids.append(token_to_id.setdefault(token, UNK_ID))
                    if max_len is not None:
                        ids = ids[:max_len]
                        while len(ids) < max_len:
                            ids.append(PAD_ID)
                    return ids
                '''
            )
        },
        {
            "test_encode": "changed token_to_id (entries added: ",
        },
        # Issue 40's tenth blind corpus, graded blind on 60c32e8: named.
    ),
    Mutant(
        "v03-01: clean allows one inner apostrophe, (?:'\\w+)?",
        A,
        {
            "clean": Rewrite(
                r'''
                def clean(text: str) -> list[str]:
                    """Lowercase text and split it into words and punctuation marks.

                    "Didn't it?" -> ["didn't", "it", "?"].
                    """
                    text = text.lower().replace("\u2019", "'")
                    return re.findall(r"\w+(?:'\w+)?|[^\w\s]", text)
                '''
            )
        },
        {
            "test_clean": "a word may contain several inner apostrophes",
        },
        # Issue 40's tenth blind corpus, graded blind on 60c32e8: named.
    ),
    Mutant(
        "v03-02: build_vocab slices words[:max_vocab_size - 3], negative below 3",
        A,
        {
            "build_vocab": Rewrite(
                r'''
                def build_vocab(
                    texts: list[str], max_vocab_size: int | None = None, min_freq: int = 1
                ) -> list[str]:
                    """id_to_token: the special tokens, then tokens by falling count, ties alphabetical.

                    At most max_vocab_size entries in all.
                    """
                    counts = Counter()
                    for text in texts:
                        counts.update(clean(text))
                    ordered = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
                    words = [token for token, count in ordered if count >= min_freq]
                    if max_vocab_size is not None:
                        # the specials take len(SPECIAL_TOKENS) of the places
                        words = words[: max_vocab_size - len(SPECIAL_TOKENS)]
                    return list(SPECIAL_TOKENS) + words
                '''
            )
        },
        {
            "test_build_vocab": "the tokens after the special tokens are cut to words[:max_vocab_size - 3]",
        },
        # Issue 40's tenth blind corpus, graded blind on 60c32e8: named.
    ),
    Mutant(
        "v03-03: encode adds unknown tokens with setdefault",
        A,
        {
            "encode": Rewrite(
                r'''
                # the positions of "<pad>", "<unk>", "<cls>" in SPECIAL_TOKENS
                PAD_ID, UNK_ID, CLS_ID = 0, 1, 2


                def encode(
                    text: str, token_to_id: dict[str, int], max_len: int | None = None
                ) -> list[int]:
                    """[CLS_ID] + one id per token of clean(text) (UNK_ID if unknown).

                    Cut and padded to max_len if given.
                    """
                    ids = [CLS_ID] + [token_to_id.setdefault(token, UNK_ID) for token in clean(text)]
                    if max_len is not None:
                        ids = ids[:max_len]
                        ids = ids + [PAD_ID] * (max_len - len(ids))
                    return ids
                '''
            )
        },
        {
            "test_encode": "changed token_to_id (entries added: ",
        },
        # Issue 40's tenth blind corpus, graded blind on 60c32e8: named.
    ),
    Mutant(
        "v03-04: layer_norm puts eps outside the square root",
        A,
        {
            "layer_norm": Rewrite(
                r'''
                class LayerNorm(nn.Module):
                    """Normalise the last dim to mean 0 and variance 1.

                    Then scale by gamma (weight) and shift by beta (bias).
                    """

                    def __init__(self, d_model: int, eps: float = 1e-5):
                        super().__init__()
                        self.eps = eps
                        self.weight = nn.Parameter(torch.ones(d_model))  # gamma
                        self.bias = nn.Parameter(torch.zeros(d_model))  # beta

                    def forward(self, x: torch.Tensor) -> torch.Tensor:
                        """x: (..., d_model) -> (..., d_model)."""
                        mu = x.mean(dim=-1, keepdim=True)
                        var = ((x - mu) ** 2).mean(dim=-1, keepdim=True)
                        return self.weight * (x - mu) / (torch.sqrt(var) + self.eps) + self.bias
                '''
            )
        },
        {
            "test_layer_norm": "eps is added outside the square root",
        },
        # Issue 40's tenth blind corpus, graded blind on 60c32e8: named.
    ),
    Mutant(
        "v03-05: padded_block masks keys by each sentence's length",
        A,
        {
            "padded_block": Rewrite(
                r'''
                def padded_block(
                    block: nn.Module, x: torch.Tensor, is_pad: torch.Tensor
                ) -> torch.Tensor:
                    """The block's output for x (B, L, d_model), blind to the pads of is_pad (B, L).

                    -> (B, L, d_model).
                    """
                    # 1. Mask (B, 1, 1, L): key j is visible when j < length of the sentence, so every
                    #    query sees exactly the real tokens and no pad (the pads come after the text).
                    # 2. Pad positions: zeros.
                    # 3. A sentence of only pads (length 0): it may see every key (finite), output zeroed.
                    B, L, _ = x.shape
                    lengths = (~is_pad).sum(dim=1)  # (B,)
                    visible = torch.arange(L, device=x.device)[None, :] < lengths[:, None]  # (B, L)
                    visible = visible | (lengths == 0)[:, None]
                    out, _ = block(x, mask=visible[:, None, None, :])
                    real = torch.arange(L, device=x.device)[None, :] < lengths[:, None]
                    return torch.where(real.unsqueeze(-1), out, torch.zeros_like(out))
                '''
            )
        },
        {
            "test_padded_block": "the key mask is built from each sentence's number of real tokens",
        },
        # Issue 40's tenth blind corpus, graded blind on 60c32e8: named.
    ),
    Mutant(
        "w03-01: clean: one optional apostrophe, \\w+'?\\w*",
        A,
        {
            "clean": Rewrite(
                r'''
                def clean(text: str) -> list[str]:
                    """Lowercase text and split it into words and punctuation marks.

                    "Didn't it?" -> ["didn't", "it", "?"].
                    """
                    text = text.lower().replace("\u2019", "'")
                    return re.findall(r"\w+'?\w*|[^\w\s]", text)
                '''
            )
        },
        {
            "test_clean": "a word holds at most one apostrophe and keeps it at its end too",
        },
        # Issue 40's eleventh blind corpus, graded blind on 48fe40c: named.
    ),
    Mutant(
        "w03-02: encode adds unknown words to token_to_id (setdefault)",
        A,
        {
            "encode": Rewrite(
                r'''
                # the positions of "<pad>", "<unk>", "<cls>" in SPECIAL_TOKENS
                PAD_ID, UNK_ID, CLS_ID = 0, 1, 2


                def encode(
                    text: str, token_to_id: dict[str, int], max_len: int | None = None
                ) -> list[int]:
                    """[CLS_ID] + one id per token of clean(text) (UNK_ID if unknown).

                    Cut and padded to max_len if given.
                    """
                    ids = [CLS_ID] + [token_to_id.setdefault(token, UNK_ID) for token in clean(text)]
                    if max_len is not None:
                        ids = ids[:max_len]
                        ids = ids + [PAD_ID] * (max_len - len(ids))
                    return ids
                '''
            )
        },
        {
            "test_encode": "changed token_to_id (entries added:",
        },
        # Issue 40's eleventh blind corpus, graded blind on 48fe40c: named.
    ),
    Mutant(
        "w03-03: layer_norm adds eps to the standard deviation",
        A,
        {
            "layer_norm": Rewrite(
                r'''
                class LayerNorm(nn.Module):
                    """Normalise the last dim to mean 0 and variance 1.

                    Then scale by gamma (weight) and shift by beta (bias).
                    """

                    def __init__(self, d_model: int, eps: float = 1e-5):
                        super().__init__()
                        self.eps = eps
                        self.weight = nn.Parameter(torch.ones(d_model))  # gamma
                        self.bias = nn.Parameter(torch.zeros(d_model))  # beta

                    def forward(self, x: torch.Tensor) -> torch.Tensor:
                        """x: (..., d_model) -> (..., d_model)."""
                        mean = x.mean(dim=-1, keepdim=True)
                        std = x.std(dim=-1, keepdim=True, unbiased=False)
                        return self.weight * (x - mean) / (std + self.eps) + self.bias
                '''
            )
        },
        {
            "test_layer_norm": "eps is added outside the square root",
        },
        # Issue 40's eleventh blind corpus, graded blind on 48fe40c: named.
    ),
    Mutant(
        "w03-04: the second residual adds the block's input x",
        A,
        {
            "encoder_block": Rewrite(
                r'''
                class EncoderBlock(nn.Module):
                    """Post-norm encoder block: self-attention, then feed-forward.

                    Each sits inside a residual and a LayerNorm.
                    """

                    def __init__(self, d_model: int, num_heads: int, d_ff: int, dropout: float = 0.0):
                        super().__init__()
                        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout)
                        self.feed_forward = PositionwiseFeedForward(d_model, d_ff, dropout)
                        self.norm1 = nn.LayerNorm(d_model)
                        self.norm2 = nn.LayerNorm(d_model)
                        self.dropout1 = nn.Dropout(dropout)
                        self.dropout2 = nn.Dropout(dropout)

                    def forward(
                        self, x: torch.Tensor, mask: torch.Tensor | None = None
                    ) -> tuple[torch.Tensor, torch.Tensor]:
                        """x: (B, L, d_model), mask broadcastable to (B, num_heads, L, L)
                        -> ((B, L, d_model), (B, num_heads, L, L)).
                        """
                        attended, weights = self.self_attn(x, mask=mask)
                        h = self.norm1(x + self.dropout1(attended))
                        out = self.norm2(x + self.dropout2(self.feed_forward(h)))
                        return out, weights
                '''
            )
        },
        {
            "test_encoder_block": "the second residual adds the block's input x",
        },
        # Issue 40's eleventh blind corpus, graded blind on 48fe40c: named.
    ),
    Mutant(
        "w03-05: padded_block's key mask built from each sentence's length",
        A,
        {
            "padded_block": Rewrite(
                r'''
                def padded_block(
                    block: nn.Module, x: torch.Tensor, is_pad: torch.Tensor
                ) -> torch.Tensor:
                    """The block's output for x (B, L, d_model), blind to the pads of is_pad (B, L).

                    -> (B, L, d_model).
                    """
                    # 1. Mask (B, 1, 1, L): each query sees the first `length` keys of its sentence,
                    #    the real tokens; the pads after them are hidden as keys.
                    # 2. Pad positions: zeros.
                    # 3. A sentence of pads only has length 0: I let it see every key (finite), then
                    #    its output is zeroed anyway.
                    B, L = is_pad.shape
                    lengths = (~is_pad).sum(dim=-1, keepdim=True)  # (B, 1)
                    keys = torch.arange(L, device=x.device)[None, :] < lengths  # (B, L)
                    keys = keys | (lengths == 0)
                    out, _ = block(x, mask=keys[:, None, None, :])
                    return out.masked_fill(is_pad.unsqueeze(-1), 0.0)
                '''
            )
        },
        {
            "test_padded_block": "the key mask is built from each sentence's number of real tokens",
        },
        # Issue 40's eleventh blind corpus, graded blind on 48fe40c: named.
    ),
    Mutant(
        "x03-01: clean: a word is a run of [\\w']",
        A,
        {
            "clean": Rewrite(
                r'''
                def clean(text: str) -> list[str]:
                    """Lowercase text and split it into words and punctuation marks.

                    "Didn't it?" -> ["didn't", "it", "?"].
                    """
                    text = text.lower().replace("\u2019", "'")
                    # a word, possibly continued through inner apostrophes, or one punctuation mark
                    return re.findall(r"[\w']+|[^\w\s]", text)
                '''
            )
        },
        {
            "test_clean": "an apostrophe that is not between two word characters is kept in a word",
        },
        # Issue 40's eleventh blind corpus, graded blind on 48fe40c: named.
    ),
    Mutant(
        "x03-02: encode adds unknown tokens to token_to_id (setdefault)",
        A,
        {
            "encode": Rewrite(
                r'''
                # the positions of "<pad>", "<unk>", "<cls>" in SPECIAL_TOKENS
                PAD_ID, UNK_ID, CLS_ID = 0, 1, 2


                def encode(
                    text: str, token_to_id: dict[str, int], max_len: int | None = None
                ) -> list[int]:
                    """[CLS_ID] + one id per token of clean(text) (UNK_ID if unknown).

                    Cut and padded to max_len if given.
                    """
                    ids = [CLS_ID] + [token_to_id.setdefault(tok, UNK_ID) for tok in clean(text)]
                    if max_len is not None:
                        ids = ids[:max_len]
                        ids = ids + [PAD_ID] * (max_len - len(ids))
                    return ids
                '''
            )
        },
        {
            "test_encode": "changed token_to_id (entries added:",
        },
        # Issue 40's eleventh blind corpus, graded blind on 48fe40c: named.
    ),
    Mutant(
        "x03-03: layer_norm adds eps to sigma, outside the square root",
        A,
        {
            "layer_norm": Rewrite(
                r'''
                class LayerNorm(nn.Module):
                    """Normalise the last dim to mean 0 and variance 1.

                    Then scale by gamma (weight) and shift by beta (bias).
                    """

                    def __init__(self, d_model: int, eps: float = 1e-5):
                        super().__init__()
                        self.eps = eps
                        self.weight = nn.Parameter(torch.ones(d_model))  # gamma
                        self.bias = nn.Parameter(torch.zeros(d_model))  # beta

                    def forward(self, x: torch.Tensor) -> torch.Tensor:
                        """x: (..., d_model) -> (..., d_model)."""
                        mean = x.mean(dim=-1, keepdim=True)
                        centred = x - mean
                        var = (centred * centred).mean(dim=-1, keepdim=True)  # biased: divide by d
                        return self.weight * centred / (torch.sqrt(var) + self.eps) + self.bias
                '''
            )
        },
        {
            "test_layer_norm": "eps is added outside the square root",
        },
        # Issue 40's eleventh blind corpus, graded blind on 48fe40c: named.
    ),
    Mutant(
        "x03-04: self_attn built without the block's dropout",
        A,
        {
            "encoder_block": Rewrite(
                r'''
                class EncoderBlock(nn.Module):
                    """Post-norm encoder block: self-attention, then feed-forward.

                    Each sits inside a residual and a LayerNorm.
                    """

                    def __init__(self, d_model: int, num_heads: int, d_ff: int, dropout: float = 0.0):
                        super().__init__()
                        self.self_attn = MultiHeadAttention(d_model, num_heads)
                        self.feed_forward = PositionwiseFeedForward(d_model, d_ff, dropout)
                        self.norm1 = nn.LayerNorm(d_model)
                        self.norm2 = nn.LayerNorm(d_model)
                        self.dropout1 = nn.Dropout(dropout)
                        self.dropout2 = nn.Dropout(dropout)

                    def forward(
                        self, x: torch.Tensor, mask: torch.Tensor | None = None
                    ) -> tuple[torch.Tensor, torch.Tensor]:
                        """x: (B, L, d_model), mask broadcastable to (B, num_heads, L, L)
                        -> ((B, L, d_model), (B, num_heads, L, L)).
                        """
                        attended, weights = self.self_attn(x, mask=mask)
                        h = self.norm1(x + self.dropout1(attended))
                        out = self.norm2(h + self.dropout2(self.feed_forward(h)))
                        return out, weights
                '''
            )
        },
        {
            "test_encoder_block": "dropout is not passed on to the MultiHeadAttention sublayer",
        },
        # Issue 40's eleventh blind corpus, graded blind on 48fe40c: named.
    ),
    Mutant(
        "x03-05: padded_block runs the block on each sentence's first n positions",
        A,
        {
            "padded_block": Rewrite(
                r'''
                def padded_block(
                    block: nn.Module, x: torch.Tensor, is_pad: torch.Tensor
                ) -> torch.Tensor:
                    """The block's output for x (B, L, d_model), blind to the pads of is_pad (B, L).

                    -> (B, L, d_model).
                    """
                    # Design.
                    # 1. No mask at all: I run the block on each sentence separately, cut to its real
                    #    tokens, so the pads are simply not there (mask=None).
                    # 2. At pad positions I return zeros.
                    # 3. A sentence with no real token is not run through the block at all: its output
                    #    is all zeros, which is finite, and has no gradient problem.
                    out = torch.zeros_like(x)
                    n_real = (~is_pad).sum(dim=1)  # (B,) real tokens per sentence
                    for b in range(x.shape[0]):
                        n = int(n_real[b])
                        if n == 0:
                            continue
                        y, _ = block(x[b : b + 1, :n])
                        out[b, :n] = y[0]
                    return out
                '''
            )
        },
        {
            "test_padded_block": "each sentence's real tokens are taken to be its first n positions",
        },
        # Issue 40's eleventh blind corpus, graded blind on 48fe40c: named.
    ),
    Mutant(
        "aa03-01: padded_block's key mask from each sentence's number of real tokens",
        A,
        {
            "padded_block": Rewrite(
                r'''
                def padded_block(
                    block: nn.Module, x: torch.Tensor, is_pad: torch.Tensor
                ) -> torch.Tensor:
                    """The block's output for x (B, L, d_model), blind to the pads of is_pad (B, L).

                    -> (B, L, d_model).
                    """
                    # 1. the mask hides the pad keys: every sentence has n real tokens, so keys 0..n-1
                    #    are visible, shape (B, 1, 1, L), shared by the heads and the queries;
                    # 2. at the pad positions I return zeros;
                    # 3. a sentence of pads only has n = 0, no visible key: the block's attention gives
                    #    zero weights there, and I return zeros.
                    B, L = is_pad.shape
                    lengths = (~is_pad).sum(dim=1)  # (B,) real tokens per sentence
                    mask = torch.arange(L, device=x.device)[None, :] < lengths[:, None]  # (B, L)
                    out, _ = block(x, mask=mask[:, None, None, :])
                    return torch.where(is_pad.unsqueeze(-1), torch.zeros_like(out), out)
                '''
            )
        },
        {
            "test_padded_block": "the key mask is built from each sentence's number of real tokens",
        },
        # Issue 40's thirteenth blind corpus, graded blind on 8b5375e: named.
    ),
    Mutant(
        "aa03-02: build_vocab slices words[:max_vocab_size - 3], negative below 3",
        A,
        {
            "build_vocab": Rewrite(
                r'''
                def build_vocab(
                    texts: list[str], max_vocab_size: int | None = None, min_freq: int = 1
                ) -> list[str]:
                    """id_to_token: the special tokens, then tokens by falling count, ties alphabetical.

                    At most max_vocab_size entries in all.
                    """
                    counts = Counter()
                    for text in texts:
                        counts.update(clean(text))
                    ordered = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
                    words = [token for token, count in ordered if count >= min_freq]
                    if max_vocab_size is not None:
                        words = words[: max_vocab_size - len(SPECIAL_TOKENS)]  # room for the specials
                    return list(SPECIAL_TOKENS) + words
                '''
            )
        },
        {
            "test_build_vocab": "whose end is negative for a max_vocab_size below 3",
        },
        # Issue 40's thirteenth blind corpus, graded blind on 8b5375e: named.
    ),
    Mutant(
        "aa03-03: encode looks tokens up with setdefault, adding the unknown ones",
        A,
        {
            "encode": Rewrite(
                r'''
                # the positions of "<pad>", "<unk>", "<cls>" in SPECIAL_TOKENS
                PAD_ID, UNK_ID, CLS_ID = 0, 1, 2


                def encode(
                    text: str, token_to_id: dict[str, int], max_len: int | None = None
                ) -> list[int]:
                    """[CLS_ID] + one id per token of clean(text) (UNK_ID if unknown).

                    Cut and padded to max_len if given.
                    """
                    ids = [CLS_ID] + [token_to_id.setdefault(token, UNK_ID) for token in clean(text)]
                    if max_len is not None:
                        ids = ids[:max_len]
                        ids = ids + [PAD_ID] * (max_len - len(ids))
                    return ids
                '''
            )
        },
        {
            "test_encode": "changed token_to_id (entries added:",
        },
        # Issue 40's thirteenth blind corpus, graded blind on 8b5375e: named.
    ),
    Mutant(
        "aa03-04: layer_norm divides by std + eps, eps outside the square root",
        A,
        {
            "layer_norm": Rewrite(
                r'''
                class LayerNorm(nn.Module):
                    """Normalise the last dim to mean 0 and variance 1.

                    Then scale by gamma (weight) and shift by beta (bias).
                    """

                    def __init__(self, d_model: int, eps: float = 1e-5):
                        super().__init__()
                        self.eps = eps
                        self.weight = nn.Parameter(torch.ones(d_model))  # gamma
                        self.bias = nn.Parameter(torch.zeros(d_model))  # beta

                    def forward(self, x: torch.Tensor) -> torch.Tensor:
                        """x: (..., d_model) -> (..., d_model)."""
                        mean = x.mean(dim=-1, keepdim=True)
                        std = x.std(dim=-1, keepdim=True, unbiased=False)
                        return self.weight * (x - mean) / (std + self.eps) + self.bias
                '''
            )
        },
        {
            "test_layer_norm": "eps is added outside the square root (std + eps)",
        },
        # Issue 40's thirteenth blind corpus, graded blind on 8b5375e: named.
    ),
    Mutant(
        "aa03-05: the feed-forward sublayer reads the block's input x, not h",
        A,
        {
            "encoder_block": Rewrite(
                r'''
                class EncoderBlock(nn.Module):
                    """Post-norm encoder block: self-attention, then feed-forward.

                    Each sits inside a residual and a LayerNorm.
                    """

                    def __init__(self, d_model: int, num_heads: int, d_ff: int, dropout: float = 0.0):
                        super().__init__()
                        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout)
                        self.feed_forward = PositionwiseFeedForward(d_model, d_ff, dropout)
                        self.norm1 = nn.LayerNorm(d_model)
                        self.norm2 = nn.LayerNorm(d_model)
                        self.dropout1 = nn.Dropout(dropout)
                        self.dropout2 = nn.Dropout(dropout)

                    def forward(
                        self, x: torch.Tensor, mask: torch.Tensor | None = None
                    ) -> tuple[torch.Tensor, torch.Tensor]:
                        """x: (B, L, d_model), mask broadcastable to (B, num_heads, L, L)
                        -> ((B, L, d_model), (B, num_heads, L, L)).
                        """
                        attended, weights = self.self_attn(x, mask=mask)
                        h = self.norm1(x + self.dropout1(attended))
                        out = self.norm2(h + self.dropout2(self.feed_forward(x)))
                        return out, weights
                '''
            )
        },
        {
            "test_encoder_block": "the feed-forward network reads the block's input x",
        },
        # Issue 40's thirteenth blind corpus, graded blind on 8b5375e: named.
    ),
    Mutant(
        "ab03-02: encode adds unknown tokens to token_to_id (setdefault)",
        A,
        {
            "encode": Rewrite(
                r'''
                # the positions of "<pad>", "<unk>", "<cls>" in SPECIAL_TOKENS
                PAD_ID, UNK_ID, CLS_ID = 0, 1, 2


                def encode(
                    text: str, token_to_id: dict[str, int], max_len: int | None = None
                ) -> list[int]:
                    """[CLS_ID] + one id per token of clean(text) (UNK_ID if unknown).

                    Cut and padded to max_len if given.
                    """
                    ids = [CLS_ID] + [token_to_id.setdefault(token, UNK_ID) for token in clean(text)]
                    if max_len is not None:
                        ids = ids[:max_len]
                        ids = ids + [PAD_ID] * (max_len - len(ids))
                    return ids
                '''
            )
        },
        {
            "test_encode": "changed token_to_id (entries added:",
        },
        # Issue 40's thirteenth blind corpus, graded blind on 8b5375e: named.
    ),
    Mutant(
        "ab03-03: LayerNorm divides by the biased std + eps",
        A,
        {
            "layer_norm": Rewrite(
                r'''
                class LayerNorm(nn.Module):
                    """Normalise the last dim to mean 0 and variance 1.

                    Then scale by gamma (weight) and shift by beta (bias).
                    """

                    def __init__(self, d_model: int, eps: float = 1e-5):
                        super().__init__()
                        self.eps = eps
                        self.weight = nn.Parameter(torch.ones(d_model))  # gamma
                        self.bias = nn.Parameter(torch.zeros(d_model))  # beta

                    def forward(self, x: torch.Tensor) -> torch.Tensor:
                        """x: (..., d_model) -> (..., d_model)."""
                        mean = x.mean(dim=-1, keepdim=True)
                        std = x.std(dim=-1, unbiased=False, keepdim=True)  # biased: divide by d
                        return self.weight * (x - mean) / (std + self.eps) + self.bias
                '''
            )
        },
        {
            "test_layer_norm": "eps is added outside the square root (std + eps)",
        },
        # Issue 40's thirteenth blind corpus, graded blind on 8b5375e: named.
    ),
    Mutant(
        "ab03-05: padded_block hides positions past the number of real tokens, pads assumed last",
        A,
        {
            "padded_block": Rewrite(
                r'''
                def padded_block(
                    block: nn.Module, x: torch.Tensor, is_pad: torch.Tensor
                ) -> torch.Tensor:
                    """The block's output for x (B, L, d_model), blind to the pads of is_pad (B, L).

                    -> (B, L, d_model).
                    """
                    # 1. Mask: each sentence has n real tokens followed by its pads, so every query may
                    #    attend to keys 0..n-1 only (the pad keys at the end are hidden). Shape
                    #    (B, 1, 1, L): broadcast over the heads and the queries.
                    # 2. At pad positions I return zeros (nothing downstream reads them).
                    # 3. A sentence of pads only has n = 0: every key is hidden, the attention gives
                    #    zero weights (finite, no NaN), and its output is all zeros like any pad.
                    B, L = is_pad.shape
                    lengths = (~is_pad.bool()).sum(dim=1, keepdim=True)  # (B, 1): real tokens
                    keep = torch.arange(L, device=x.device)[None, :] < lengths.to(x.device)  # (B, L)
                    mask = keep[:, None, None, :]
                    out, _ = block(x, mask=mask)
                    return torch.where(keep.unsqueeze(-1), out, torch.zeros_like(out))
                '''
            )
        },
        {
            "test_padded_block": "the key mask is built from each sentence's number of real tokens",
        },
        # Issue 40's thirteenth blind corpus, graded blind on 8b5375e: named.
    ),
]

CORRECT = [
    Mutant(
        "f03-20: clean: \\S as the one-character alternative, finditer",
        A,
        {
            "clean": Rewrite(
                r"""
                def clean(text: str) -> list[str]:
                    text = text.replace("\u2019", "'").lower()
                    pattern = re.compile(r"\w+(?:'\w+)*|\S")
                    return [m.group(0) for m in pattern.finditer(text)]
                """
            )
        },
    ),
    Mutant(
        "f03-21: build_vocab: two stable sorts",
        A,
        {
            "build_vocab": Rewrite(
                r"""
                def build_vocab(texts, max_vocab_size=None, min_freq=1):
                    counts = Counter(tok for text in texts for tok in clean(text))
                    words = sorted(tok for tok in counts if counts[tok] >= min_freq)
                    words.sort(key=counts.__getitem__, reverse=True)
                    vocab = [*SPECIAL_TOKENS, *words]
                    return vocab if max_vocab_size is None else vocab[:max_vocab_size]
                """
            )
        },
    ),
    Mutant(
        "f03-22: layer norm: var_mean, rsqrt and addcmul",
        A,
        {
            "layer_norm": Rewrite(
                r"""
                class LayerNorm(nn.Module):
                    def __init__(self, d_model: int, eps: float = 1e-5):
                        super().__init__()
                        self.eps = eps
                        self.weight = nn.Parameter(torch.ones(d_model))  # gamma
                        self.bias = nn.Parameter(torch.zeros(d_model))  # beta

                    def forward(self, x: torch.Tensor) -> torch.Tensor:
                        var, mean = torch.var_mean(x, dim=-1, keepdim=True, correction=0)
                        return torch.addcmul(self.bias, (x - mean) * torch.rsqrt(var + self.eps), self.weight)
                """
            )
        },
    ),
    Mutant(
        "k03-06: correct alternative",
        A,
        {
            "sinusoidal_encoding": Rewrite(
                r'''
                def sinusoidal_encoding(max_len: int, d_model: int) -> torch.Tensor:
                    """(max_len, d_model) float32 table of sinusoidal positions.

                    PE[pos, 2i] = sin(pos / 10000^(2i/d_model)), PE[pos, 2i+1] = cos(same).
                    """
                    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
                    omega = 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
                    angle = pos * omega[None, :]  # (max_len, d_model / 2)
                    pe = torch.stack((angle.sin(), angle.cos()), dim=-1)  # (max_len, d_model/2, 2)
                    return pe.reshape(max_len, d_model).to(torch.float32)
                '''
            )
        },
        # Issue 40's sixth blind corpus, graded blind on bdfa422: correct-full.
    ),
    Mutant(
        "n03-06: each sentence run alone without its pads, index_copy back",
        A,
        {
            "padded_block": Rewrite(
                r'''
                def padded_block(
                    block: nn.Module, x: torch.Tensor, is_pad: torch.Tensor
                ) -> torch.Tensor:
                    """The block's output for x (B, L, d_model), blind to the pads of is_pad (B, L).

                    -> (B, L, d_model).
                    """
                    # 1. Mask: none at all. Each sentence is run through the block on its own, with its
                    #    pads removed (a (1, n, d_model) input), so there is nothing to hide.
                    # 2. Pad positions: zeros.
                    # 3. A sentence of pads only is not run at all: its whole row stays zero.
                    out = torch.zeros_like(x)
                    rows = []
                    for b in range(x.shape[0]):
                        real = (~is_pad[b].bool()).nonzero(as_tuple=True)[0]
                        row = torch.zeros_like(x[b])
                        if real.numel() > 0:
                            y, _ = block(x[b : b + 1, real])
                            row = row.index_copy(0, real, y[0])
                        rows.append(row)
                    return torch.stack(rows) if rows else out
                '''
            )
        },
        # Issue 40's seventh blind corpus, graded blind on 451e037: correct-full.
    ),
    Mutant(
        "p03-06: each sentence run alone by boolean indexing, no mask",
        A,
        {
            "padded_block": Rewrite(
                r'''
                # kind: correct
                # grade_id: padded_block
                # alternative: no mask at all; runs the block on each sentence alone with its pads removed (boolean indexing), writes the results into a zero tensor, and leaves all-pad sentences at zero.
                # evidence: tools/ev03.py: two EncoderBlocks, pads anywhere incl. an all-pad and a pad-free sentence: max diff to my answer and to each sentence alone 6e-8; output and gradients finite; dtype kept.
                def padded_block(
                    block: nn.Module, x: torch.Tensor, is_pad: torch.Tensor
                ) -> torch.Tensor:
                    """The block's output for x (B, L, d_model), blind to the pads of is_pad (B, L)."""
                    # Design:
                    # 1. mask: none. The pads are removed before the block runs: each sentence's
                    #    real tokens (wherever they sit) go through the block alone, as a batch of
                    #    one, with mask=None. The block has no positions of its own, so this is
                    #    exactly "the sentence alone with its pads removed".
                    # 2. pad positions stay zero in the returned tensor.
                    # 3. a sentence with no real token is not run at all: its row stays zero, which
                    #    is finite with zero gradient.
                    rows = []
                    for b in range(x.shape[0]):
                        real = ~is_pad[b]
                        row = torch.zeros_like(x[b])
                        if bool(real.any()):
                            out, _ = block(x[b][real].unsqueeze(0))
                            row = row.index_put((real.nonzero().squeeze(1),), out[0])
                        rows.append(row)
                    return torch.stack(rows)
                '''
            )
        },
        # Issue 40's seventh blind corpus, graded blind on 451e037: correct-full.
    ),
    Mutant(
        "q03-06: padded_block runs each sentence alone, its pads removed",
        A,
        {
            "padded_block": Rewrite(
                r'''
                def padded_block(
                    block: nn.Module, x: torch.Tensor, is_pad: torch.Tensor
                ) -> torch.Tensor:
                    """The block's output for x (B, L, d_model), blind to the pads of is_pad (B, L).

                    -> (B, L, d_model).
                    """
                    # 1. Mask: none. Each sentence goes through the block alone, with its pads removed
                    #    (wherever they sit), so no query can see a pad: mask=None, shape irrelevant.
                    # 2. Pad positions: zeros.
                    # 3. A sentence of nothing but pads is not run at all: its output is all zeros.
                    out = torch.zeros_like(x)
                    for b in range(x.shape[0]):
                        real = ~is_pad[b].bool()
                        if bool(real.any()):
                            y, _ = block(x[b : b + 1, real])
                            out[b, real] = y[0]
                    return out
                '''
            )
        },
        # Issue 40's eighth blind corpus, graded blind on 47d54b0: correct-full.
    ),
    Mutant(
        "r03-06: padded_block runs each sentence alone, its pads removed, no mask",
        A,
        {
            "padded_block": Rewrite(
                r'''
                # id: r03-06
                # kind: correct
                # grade_id: padded_block
                # alternative: another design: no mask at all; every sentence is run through the block ALONE with its pads removed (a loop over the batch), and the results are scattered back; pad positions and all-pad sentences get zeros.
                # evidence: my experiment (scripts ev0N.py, output ev0N.txt in /work/fresh-corpus8b):
                #   r03-06: max |alt - correct| at real positions 0.0 | shape/dtype (4, 7, 12) torch.float32 | finite True | grad finite True
                # public checks: passes every public check of the notebook
                def padded_block(
                    block: nn.Module, x: torch.Tensor, is_pad: torch.Tensor
                ) -> torch.Tensor:
                    """The block's output for x (B, L, d_model), blind to the pads of is_pad (B, L).

                    -> (B, L, d_model).
                    """
                    # 1. No mask is handed to the block: each sentence runs alone, on its real tokens
                    #    only, so no pad can be seen (a (1, n) sentence needs no mask).
                    # 2. Pad positions get zeros.
                    # 3. A sentence of pads only is not run at all: its whole output is zeros.
                    rows = []
                    for b in range(x.shape[0]):
                        real = ~is_pad[b]
                        row = torch.zeros_like(x[b])
                        if bool(real.any()):
                            out, _ = block(x[b : b + 1, real])
                            row = row.index_put((real.nonzero(as_tuple=True)[0],), out[0])
                        rows.append(row)
                    return torch.stack(rows)
                '''
            )
        },
        # Issue 40's eighth blind corpus, graded blind on 47d54b0: correct-full.
    ),
    Mutant(
        "s03-06: sinusoidal encoding with sin and cos stacked and flattened",
        A,
        {
            "sinusoidal_encoding": Rewrite(
                r'''
                def sinusoidal_encoding(max_len: int, d_model: int) -> torch.Tensor:
                    """(max_len, d_model) float32 table of sinusoidal positions.

                    PE[pos, 2i] = sin(pos / 10000^(2i/d_model)), PE[pos, 2i+1] = cos(same).
                    """
                    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
                    freq = torch.exp(
                        -torch.arange(0, d_model, 2, dtype=torch.float64) * math.log(10000.0) / d_model
                    )
                    angles = pos * freq  # (max_len, d_model / 2)
                    pe = torch.stack([torch.sin(angles), torch.cos(angles)], dim=-1)  # (max_len, d/2, 2)
                    return pe.reshape(max_len, d_model).to(torch.float32)
                '''
            )
        },
        # Issue 40's ninth blind corpus, graded blind on feb0b2e: correct-full.
    ),
    Mutant(
        "t03-06: LayerNorm with torch.var(correction=0), rsqrt and addcmul",
        A,
        {
            "layer_norm": Rewrite(
                r'''
                class LayerNorm(nn.Module):
                    """Normalise the last dim to mean 0 and variance 1.

                    Then scale by gamma (weight) and shift by beta (bias).
                    """

                    def __init__(self, d_model: int, eps: float = 1e-5):
                        super().__init__()
                        self.eps = eps
                        self.weight = nn.Parameter(torch.ones(d_model))  # gamma
                        self.bias = nn.Parameter(torch.zeros(d_model))  # beta

                    def forward(self, x: torch.Tensor) -> torch.Tensor:
                        """x: (..., d_model) -> (..., d_model)."""
                        var, mean = torch.var_mean(x, dim=-1, correction=0, keepdim=True)
                        normalised = (x - mean) * torch.rsqrt(var + self.eps)
                        return torch.addcmul(self.bias, normalised, self.weight)
                '''
            )
        },
        # Issue 40's ninth blind corpus, graded blind on feb0b2e: correct-full.
    ),
    Mutant(
        "u03-06: layer_norm with torch.var_mean, rsqrt and addcmul",
        A,
        {
            "layer_norm": Rewrite(
                r'''
                class LayerNorm(nn.Module):
                    """Normalise the last dim to mean 0 and variance 1.

                    Then scale by gamma (weight) and shift by beta (bias).
                    """

                    def __init__(self, d_model: int, eps: float = 1e-5):
                        super().__init__()
                        self.eps = eps
                        self.weight = nn.Parameter(torch.ones(d_model))  # gamma
                        self.bias = nn.Parameter(torch.zeros(d_model))  # beta

                    def forward(self, x: torch.Tensor) -> torch.Tensor:
                        """x: (..., d_model) -> (..., d_model)."""
                        var, mean = torch.var_mean(x, dim=-1, keepdim=True, correction=0)
                        x_hat = (x - mean) * torch.rsqrt(var + self.eps)
                        return torch.addcmul(self.bias, x_hat, self.weight)
                '''
            )
        },
        # Issue 40's tenth blind corpus, graded blind on 60c32e8: correct-full.
    ),
    Mutant(
        "v03-06: padded_block runs each sentence's real tokens alone",
        A,
        {
            "padded_block": Rewrite(
                r'''
                def padded_block(
                    block: nn.Module, x: torch.Tensor, is_pad: torch.Tensor
                ) -> torch.Tensor:
                    """The block's output for x (B, L, d_model), blind to the pads of is_pad (B, L).

                    -> (B, L, d_model).
                    """
                    # 1. Mask: none. Each sentence is run alone with its pads REMOVED, so no mask is
                    #    needed at all (the block sees only real tokens); this is the definition of
                    #    "blind to padding", by construction.
                    # 2. Pad positions: zeros.
                    # 3. A sentence of only pads: nothing to run, its output is all zeros.
                    out = torch.zeros_like(x)
                    for b in range(x.shape[0]):
                        real = ~is_pad[b].bool()
                        if real.any():
                            y, _ = block(x[b : b + 1, real])
                            out[b, real] = y[0].to(x.dtype)
                    return out
                '''
            )
        },
        # Issue 40's tenth blind corpus, graded blind on 60c32e8: correct-full.
    ),
    Mutant(
        "w03-06: exp(-2i ln 10000 / d_model) frequencies, sin and cos stacked and flattened",
        A,
        {
            "sinusoidal_encoding": Rewrite(
                r'''
                def sinusoidal_encoding(max_len: int, d_model: int) -> torch.Tensor:
                    """(max_len, d_model) float32 table of sinusoidal positions.

                    PE[pos, 2i] = sin(pos / 10000^(2i/d_model)), PE[pos, 2i+1] = cos(same).
                    """
                    pos = torch.arange(max_len, dtype=torch.float32)[:, None]
                    freq = torch.exp(torch.arange(0, d_model, 2, dtype=torch.float32) * (-math.log(10000.0) / d_model))
                    angle = pos * freq[None, :]  # (max_len, d_model / 2)
                    return torch.stack((torch.sin(angle), torch.cos(angle)), dim=-1).reshape(max_len, d_model)
                '''
            )
        },
        # Issue 40's eleventh blind corpus, graded blind on 48fe40c: correct-full.
    ),
    Mutant(
        "x03-06: angles in float64 from 10000 ** (-2i / d_model), stacked and flattened",
        A,
        {
            "sinusoidal_encoding": Rewrite(
                r'''
                def sinusoidal_encoding(max_len: int, d_model: int) -> torch.Tensor:
                    """(max_len, d_model) float32 table of sinusoidal positions.

                    PE[pos, 2i] = sin(pos / 10000^(2i/d_model)), PE[pos, 2i+1] = cos(same).
                    """
                    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
                    even = torch.arange(0, d_model, 2, dtype=torch.float64)
                    angles = pos / 10000.0 ** (even / d_model)  # (max_len, d_model/2)
                    # stack (sin, cos) on a new last axis and flatten: sin, cos, sin, cos, ...
                    pe = torch.stack((angles.sin(), angles.cos()), dim=-1).reshape(max_len, d_model)
                    return pe.to(torch.float32)
                '''
            )
        },
        # Issue 40's eleventh blind corpus, graded blind on 48fe40c: correct-full.
    ),
    Mutant(
        "aa03-06: sinusoidal table: exp/log frequencies, an outer product, sin and cos stacked, flattened",
        A,
        {
            "sinusoidal_encoding": Rewrite(
                r'''
                def sinusoidal_encoding(max_len: int, d_model: int) -> torch.Tensor:
                    """(max_len, d_model) float32 table of sinusoidal positions.

                    PE[pos, 2i] = sin(pos / 10000^(2i/d_model)), PE[pos, 2i+1] = cos(same).
                    """
                    two_i = torch.arange(0, d_model, 2, dtype=torch.float32)
                    freq = torch.exp(-two_i * math.log(10000.0) / d_model)  # 10000^(-2i/d_model)
                    angles = torch.outer(torch.arange(max_len, dtype=torch.float32), freq)
                    # (max_len, d_model/2, 2) -> (max_len, d_model): sin, cos, sin, cos, ...
                    return torch.stack([torch.sin(angles), torch.cos(angles)], dim=-1).flatten(1)
                '''
            )
        },
        # Issue 40's thirteenth blind corpus, graded blind on 8b5375e: correct-full.
    ),
    Mutant(
        "ab03-06: sinusoidal table from exp/log frequencies, sin and cos stacked and reshaped",
        A,
        {
            "sinusoidal_encoding": Rewrite(
                r'''
                def sinusoidal_encoding(max_len: int, d_model: int) -> torch.Tensor:
                    """(max_len, d_model) float32 table of sinusoidal positions.

                    PE[pos, 2i] = sin(pos / 10000^(2i/d_model)), PE[pos, 2i+1] = cos(same).
                    """
                    pos = torch.arange(max_len, dtype=torch.float64)[:, None]  # (max_len, 1)
                    # 1 / 10000^(2i/d_model) = exp(-ln(10000) * 2i / d_model), one per (sin, cos) pair
                    inv_freq = torch.exp(
                        -math.log(10000.0) * torch.arange(0, d_model, 2, dtype=torch.float64) / d_model
                    )
                    angles = pos * inv_freq  # (max_len, d_model/2)
                    # stack sin and cos on a new last axis and flatten: sin, cos, sin, cos, ...
                    pe = torch.stack([torch.sin(angles), torch.cos(angles)], dim=-1)
                    return pe.reshape(max_len, d_model).to(torch.float32)
                '''
            )
        },
        # Issue 40's thirteenth blind corpus, graded blind on 8b5375e: correct-full.
    ),
]
