"""Issue 40's blind corpus for 06_char_lm (see tests/mutants/blind/__init__.py)."""

from tests.mutants import Mutant, Rewrite

A = "06_char_lm"

WRONG = [
    Mutant(
        "g06-09: nll_loss on the raw logits (no log_softmax)",
        A,
        {
            "lm_loss": Rewrite(
                r'''
                def lm_loss(logits: Tensor, targets: Tensor) -> Tensor:
                    """Mean cross-entropy of logits (B, L, V) against targets (B, L) -> scalar."""
                    return F.nll_loss(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
                '''
            )
        },
        {
            "test_lm_loss": "minus the mean of the target logits",
            # Its held-out loss is far above ln V: once told it was "close to" it.
            "test_trained_loss": "is above ln V",
        },
        not_told=("close to ln V",),
    ),
    Mutant(
        "g06-11: sample's k-th largest logit read as values[:, -1], its axis dropped",
        A,
        {
            "sample": Rewrite(
                r'''
                @torch.no_grad()
                def sample(
                    model: nn.Module,
                    idx: Tensor,
                    max_new_tokens: int,
                    temperature: float = 1.0,
                    top_k: int | None = None,
                    generator: torch.Generator | None = None,
                ) -> Tensor:
                    """Extend idx (B, L) by max_new_tokens sampled ids -> (B, L + max_new_tokens)."""
                    model.eval()
                    for _ in range(max_new_tokens):
                        logits = model(idx[:, -model.block_size :])[:, -1, :] / temperature
                        if top_k is not None:
                            kth = torch.topk(logits, min(top_k, logits.shape[-1]), dim=-1).values[:, -1]
                            logits = logits.masked_fill(logits < kth, float("-inf"))
                        probs = torch.softmax(logits, dim=-1)
                        next_id = torch.multinomial(probs, 1, generator=generator)
                        idx = torch.cat([idx, next_id], dim=1)
                    return idx
                '''
            )
        },
        {"test_sample": "the k-th largest logit is read without keeping its axis"},
        # Its error's settings once printed the generator's repr, a memory address.
        not_told=("object at 0x",),
    ),
    Mutant(
        "g06-13: penalise_repeats divides every seen logit by 1 + strength",
        A,
        {
            "penalise_repeats": Rewrite(
                r'''
                def penalise_repeats(logits: Tensor, context: Tensor, strength: float) -> Tensor:
                    """Next-id logits (B, V), the ids in each row's context (B, L) made less likely."""
                    # My rule: shrink the logit of every seen id by the factor 1 + strength.
                    seen = torch.zeros_like(logits, dtype=torch.bool).scatter(1, context, True)
                    return torch.where(seen, logits / (1 + strength), logits)
                '''
            )
        },
        {"test_penalise_repeats": "a negative logit divided by it rises towards 0"},
    ),
    Mutant(
        "g06-07: CharLM adds the token embedding to position(tok), which holds it already",
        A,
        {
            "charlm": Rewrite(
                r'''
                class CharLM(nn.Module):
                    """A tiny character-level GPT: ids (B, L) -> next-id logits (B, L, vocab_size)."""

                    def __init__(
                        self,
                        vocab_size: int,
                        block_size: int,
                        d_model: int = 64,
                        num_heads: int = 4,
                        num_layers: int = 2,
                        dropout: float = 0.0,
                    ):
                        super().__init__()
                        self.block_size = block_size
                        self.token_embedding = nn.Embedding(vocab_size, d_model)
                        self.position = LearnedPositionalEmbedding(block_size, d_model)
                        self.blocks = nn.ModuleList(
                            [Block(d_model, num_heads, block_size, dropout) for _ in range(num_layers)]
                        )
                        self.ln_f = LayerNorm(d_model)
                        self.lm_head = nn.Linear(d_model, vocab_size)

                    def forward(self, idx: Tensor) -> Tensor:
                        tok = self.token_embedding(idx)
                        x = tok + self.position(tok)
                        for block in self.blocks:
                            x = block(x)
                        return self.lm_head(self.ln_f(x))
                '''
            )
        },
        {"test_charlm": "the token embedding is added twice"},
    ),
    Mutant(
        "h06-02: make_blocks rolls each input block left by one for its targets",
        A,
        {
            "make_blocks": Rewrite(
                r'''
                def make_blocks(ids: Tensor, block_size: int) -> tuple[Tensor, Tensor]:
                    """Cut ids (N,) into inputs x and targets y, both (n_blocks, block_size)."""
                    n_blocks = (len(ids) - 1) // block_size
                    x = ids[: n_blocks * block_size].view(n_blocks, block_size)
                    y = x.roll(-1, dims=1)
                    return x, y
                '''
            )
        },
        # Once told only where y first differed, the cause unnamed.
        {"test_make_blocks": "rolled left by one (x.roll(-1, dims=1))"},
    ),
    Mutant(
        "i06-14: sample: one top-k threshold for the whole batch (topk(...).values.min())",
        A,
        {
            "sample": Rewrite(
                r'''
                @torch.no_grad()
                def sample(
                    model: nn.Module,
                    idx: Tensor,
                    max_new_tokens: int,
                    temperature: float = 1.0,
                    top_k: int | None = None,
                    generator: torch.Generator | None = None,
                ) -> Tensor:
                    """Extend idx (B, L) by max_new_tokens sampled ids -> (B, L + max_new_tokens)."""
                    model.eval()
                    for _ in range(max_new_tokens):
                        logits = model(idx[:, -model.block_size :])[:, -1, :] / temperature
                        if top_k is not None:
                            threshold = torch.topk(logits, top_k).values.min()
                            logits[logits < threshold] = float("-inf")
                        probs = F.softmax(logits, dim=-1)
                        idx = torch.cat([idx, torch.multinomial(probs, 1, generator=generator)], dim=1)
                    return idx
                '''
            )
        },
        {"test_sample": "in a batch whose rows have different logits"},
        # Issue 40's fourth blind corpus: every hidden batch gave each row the same logits.
    ),
    Mutant(
        "i06-09: CharLM: the position table sized by vocab_size, LearnedPositionalEmbedding(vocab_size, d_model)",
        A,
        {
            "charlm": Rewrite(
                r'''
                class CharLM(nn.Module):
                    """A tiny character-level GPT: ids (B, L) -> next-id logits (B, L, vocab_size)."""

                    def __init__(
                        self,
                        vocab_size: int,
                        block_size: int,
                        d_model: int = 64,
                        num_heads: int = 4,
                        num_layers: int = 2,
                        dropout: float = 0.0,
                    ):
                        super().__init__()
                        self.block_size = block_size
                        self.token_embedding = nn.Embedding(vocab_size, d_model)
                        self.position = LearnedPositionalEmbedding(vocab_size, d_model)
                        self.blocks = nn.ModuleList(
                            [Block(d_model, num_heads, block_size, dropout) for _ in range(num_layers)]
                        )
                        self.ln_f = LayerNorm(d_model)
                        self.lm_head = nn.Linear(d_model, vocab_size)

                    def forward(self, idx: Tensor) -> Tensor:
                        """idx (B, L) token ids, L <= block_size -> logits (B, L, vocab_size)."""
                        x = self.position(self.token_embedding(idx))
                        for block in self.blocks:
                            x = block(x)
                        return self.lm_head(self.ln_f(x))
                '''
            )
        },
        {"test_charlm": "self.position's table is ("},
        # Issue 40's fourth blind corpus: every hidden model had vocab_size > block_size.
    ),
    Mutant(
        "i06-11: lm_loss as -log of the softmax's probability of the target",
        A,
        {
            "lm_loss": Rewrite(
                r'''
                def lm_loss(logits: Tensor, targets: Tensor) -> Tensor:
                    """Mean cross-entropy of logits (B, L, V) against targets (B, L) -> scalar.

                    The mean is over all B*L positions.
                    """
                    probs = torch.softmax(logits, dim=-1)  # (B, L, V)
                    p_target = probs.gather(-1, targets.unsqueeze(-1)).squeeze(-1)  # (B, L)
                    return -torch.log(p_target).mean()
                '''
            )
        },
        {"test_lm_loss": "the loss takes the log of the softmax's probabilities"},
        # Issue 40's fourth blind corpus: kept full marks while the statement promised nothing
        # for far-apart logits; it now does, and a target 100 below its row gives log(0).
    ),
    Mutant(
        "i06-02: make_blocks reshapes to (block_size, n_blocks)",
        A,
        {
            "make_blocks": Rewrite(
                r'''
                def make_blocks(ids: Tensor, block_size: int) -> tuple[Tensor, Tensor]:
                    """Cut ids (N,) into inputs x and targets y, both (n_blocks, block_size).

                    y[i, t] is x[i, t] one step later in the text.
                    """
                    n_blocks = (len(ids) - 1) // block_size
                    end = n_blocks * block_size
                    x = ids[:end].reshape(block_size, n_blocks)
                    y = ids[1 : end + 1].reshape(block_size, n_blocks)
                    return x, y
                '''
            )
        },
        {"test_make_blocks": "the reshape's two sizes are swapped"},
        # Issue 40's fourth blind corpus: told "make_blocks is wrong on int32 ids" (its dtype is
        # right) and reminded of n_blocks (its count is right).
        not_told=("is wrong on int32 ids", "is right on int64", "n_blocks = (len(ids) - 1)"),
    ),
    Mutant(
        "j06-07: CharLM keeps its blocks in a plain Python list, never registered",
        A,
        {
            "charlm": Rewrite(
                r'''
                class CharLM(nn.Module):
                    """A tiny character-level GPT: ids (B, L) -> next-id logits (B, L, vocab_size)."""

                    def __init__(
                        self,
                        vocab_size: int,
                        block_size: int,
                        d_model: int = 64,
                        num_heads: int = 4,
                        num_layers: int = 2,
                        dropout: float = 0.0,
                    ):
                        super().__init__()
                        self.block_size = block_size
                        self.token_embedding = nn.Embedding(vocab_size, d_model)
                        self.position = LearnedPositionalEmbedding(block_size, d_model)
                        self.blocks = [Block(d_model, num_heads, block_size, dropout) for _ in range(num_layers)]
                        self.ln_f = LayerNorm(d_model)
                        self.lm_head = nn.Linear(d_model, vocab_size)

                    def forward(self, idx: Tensor) -> Tensor:
                        """idx (B, L) token ids, L <= block_size -> logits (B, L, vocab_size)."""
                        x = self.position(self.token_embedding(idx))
                        for block in self.blocks:
                            x = block(x)
                        return self.lm_head(self.ln_f(x))
                '''
            )
        },
        {"test_charlm": "the blocks are kept in a plain Python container"},
        # Issue 40's fifth blind corpus: told that F.dropout drops unless given training=, and
        # that CharLM drops nothing outside its blocks, neither of which it does.
        not_told=("F.dropout(x, p) drops unless", "CharLM drops nothing outside them"),
        in_notebook=True,  # its confirmer observes the kernel's model through the judge
    ),
    Mutant(
        "j06-14: penalise_repeats renormalises probabilities and returns their log",
        A,
        {
            "penalise_repeats": Rewrite(
                r'''
                def penalise_repeats(logits: Tensor, context: Tensor, strength: float) -> Tensor:
                    """Next-id logits (B, V), the ids in each row's context (B, L) made less likely."""
                    # Rule: divide each seen id's probability by (1 + strength) and hand the mass
                    # it loses to the unseen ids in proportion to their probability, which keeps
                    # their odds; return log-probabilities (a valid set of logits).
                    p = torch.softmax(logits, dim=-1)
                    seen = torch.zeros_like(p, dtype=torch.bool).scatter(1, context, True)
                    seen_mass = (p * seen).sum(-1, keepdim=True)
                    new_seen_mass = seen_mass / (1 + strength)
                    unseen_scale = (1 - new_seen_mass) / (1 - seen_mass)
                    new_p = torch.where(seen, p / (1 + strength), p * unseen_scale)
                    return torch.log(new_p)
                '''
            )
        },
        {"test_penalise_repeats": "(a spread of 100 or more within each row)"},
        # Issue 40's fifth blind corpus: kept full marks; finite logits far apart within a row
        # give -inf, inf and NaN, where the statement asks for finite values.
    ),
    Mutant(
        "j06-09: lm_loss's log-sum-exp without the row's maximum subtracted",
        A,
        {
            "lm_loss": Rewrite(
                r'''
                def lm_loss(logits: Tensor, targets: Tensor) -> Tensor:
                    """Mean cross-entropy of logits (B, L, V) against targets (B, L) -> scalar.

                    The mean is over all B*L positions.
                    """
                    log_z = torch.log(torch.exp(logits).sum(dim=-1))  # (B, L)
                    target_logit = logits.gather(-1, targets.unsqueeze(-1)).squeeze(-1)
                    return (log_z - target_logit).mean()
                '''
            )
        },
        {"test_lm_loss": "without the row's largest logit taken out first"},
        # Issue 40's fifth blind corpus: shown inf against the exact loss, no cause named.
    ),
    Mutant(
        "k06-01: n_blocks = len(ids) // block_size (the '- 1' for the last target is fo",
        A,
        {
            "make_blocks": Rewrite(
                r'''
                def make_blocks(ids: Tensor, block_size: int) -> tuple[Tensor, Tensor]:
                    """Cut ids (N,) into inputs x and targets y, both (n_blocks, block_size).

                    y[i, t] is x[i, t] one step later in the text.
                    """
                    n_blocks = len(ids) // block_size
                    x = ids[: n_blocks * block_size].view(n_blocks, block_size)
                    y = ids[1 : n_blocks * block_size + 1].view(n_blocks, block_size)
                    return x, y
                '''
            )
        },
        {
            "test_make_blocks": "n_blocks counts len(ids) // block_size blocks: where len(ids) is a multiple of block_size, the last block's last target "
        },
        # Issue 40's sixth blind corpus, graded blind on bdfa422: named.
    ),
    Mutant(
        "k06-02: the scores are divided by sqrt(d_model) (x.shape[-1]) instead of sqrt(",
        A,
        {
            "causal_head": Rewrite(
                r'''
                class CausalSelfAttentionHead(nn.Module):
                    """One head of causal self-attention: x (B, L, d_model) -> (B, L, head_size).

                    Position t sees positions 0..t.
                    """

                    def __init__(self, d_model: int, head_size: int, block_size: int):
                        super().__init__()
                        self.query = nn.Linear(d_model, head_size, bias=False)
                        self.key = nn.Linear(d_model, head_size, bias=False)
                        self.value = nn.Linear(d_model, head_size, bias=False)
                        self.register_buffer("mask", causal_mask(block_size), persistent=False)

                    def forward(self, x: Tensor) -> Tensor:
                        """x (B, L, d_model), L <= block_size -> (B, L, head_size)."""
                        B, L, C = x.shape
                        q, k, v = self.query(x), self.key(x), self.value(x)
                        scores = q @ k.transpose(-2, -1) * C**-0.5
                        scores = scores.masked_fill(~self.mask[:L, :L], float("-inf"))
                        return torch.softmax(scores, dim=-1) @ v
                '''
            )
        },
        {
            "test_causal_head": "scores are scaled by √d_model instead of √head_size",
            "test_multihead_causal": "this cell uses your answer cell",
        },
        # Issue 40's sixth blind corpus, graded blind on bdfa422: counterexample, its course's
        # draw having d_model = 9 and head_size = 3 (÷√d_model is ÷head_size there); named
        # under any secret since the head's draws tell the scale factors apart
        # (tests/test_scale_draws.py).
    ),
    Mutant(
        "k06-03: the ModuleList holds the same head object num_heads times ([head] * nu",
        A,
        {
            "multihead_causal": Rewrite(
                r'''
                class MultiHeadCausalAttention(nn.Module):
                    """num_heads causal heads side by side, concatenated and projected.

                    x (B, L, d_model) -> (B, L, d_model).
                    """

                    def __init__(self, d_model: int, num_heads: int, block_size: int):
                        super().__init__()
                        head = CausalSelfAttentionHead(d_model, d_model // num_heads, block_size)
                        self.heads = nn.ModuleList([head] * num_heads)
                        self.proj = nn.Linear(d_model, d_model)

                    def forward(self, x: Tensor) -> Tensor:
                        """x (B, L, d_model), L <= block_size -> (B, L, d_model)."""
                        out = torch.cat([h(x) for h in self.heads], dim=-1)
                        return self.proj(out)
                '''
            )
        },
        {"test_multihead_causal": "self.heads holds the same head object more than once"},
        # Issue 40's sixth blind corpus, graded blind on bdfa422: named.
    ),
    Mutant(
        "k06-04: takes the log of the softmax (torch.softmax(...).log()) instead of log",
        A,
        {
            "lm_loss": Rewrite(
                r'''
                def lm_loss(logits: Tensor, targets: Tensor) -> Tensor:
                    """Mean cross-entropy of logits (B, L, V) against targets (B, L) -> scalar.

                    The mean is over all B*L positions.
                    """
                    probs = torch.softmax(logits, dim=-1)
                    picked = probs.gather(-1, targets.unsqueeze(-1)).squeeze(-1)  # (B, L)
                    return -picked.log().mean()
                '''
            )
        },
        {
            "test_lm_loss": "the loss takes the log of the softmax's probabilities: a target far below the largest logit of its row gets probability"
        },
        # Issue 40's sixth blind corpus, graded blind on bdfa422: named.
    ),
    Mutant(
        "k06-05: divides the seen ids' logits by (1 + strength) (a CTRL-style rule appl",
        A,
        {
            "penalise_repeats": Rewrite(
                r'''
                def penalise_repeats(logits: Tensor, context: Tensor, strength: float) -> Tensor:
                    """Next-id logits (B, V), the ids in each row's context (B, L) made less likely."""
                    # My rule: shrink the logits of the ids already in the context by the factor
                    # 1 + strength, so a strongly predicted repeat loses most of its advantage.
                    seen = torch.zeros(logits.shape, dtype=torch.bool, device=logits.device)
                    seen.scatter_(1, context, True)
                    return torch.where(seen, logits / (1.0 + strength), logits)
                '''
            )
        },
        {"test_penalise_repeats": "every seen id's logit is divided by the same factor above"},
        # Issue 40's sixth blind corpus, graded blind on bdfa422: named.
    ),
]

CORRECT: list[Mutant] = [
    Mutant(
        "k06-06: correct alternative",
        A,
        {
            "penalise_repeats": Rewrite(
                r'''
                def penalise_repeats(logits: Tensor, context: Tensor, strength: float) -> Tensor:
                    """Next-id logits (B, V), the ids in each row's context (B, L) made less likely."""
                    # My rule: every occurrence of an id in the row's context lowers its logit by
                    # `strength`, so an id repeated three times is pushed down three times as far.
                    # Lowering some logits by non-negative amounts can only move probability from
                    # them to the other ids, whatever the signs, and the unseen ids keep their odds
                    # (their logits are untouched). Strength 0 changes nothing; more strength, more push.
                    counts = torch.zeros_like(logits)
                    counts.scatter_add_(1, context, torch.ones_like(context, dtype=logits.dtype))
                    return logits - strength * counts
                '''
            )
        },
        # Issue 40's sixth blind corpus, graded blind on bdfa422: correct-full.
    ),
]
