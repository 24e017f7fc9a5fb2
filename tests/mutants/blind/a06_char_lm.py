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
    Mutant(
        "n06-01: n_blocks = len(ids) // block_size: the last target one past the end",
        A,
        {
            "make_blocks": Rewrite(
                r'''
                def make_blocks(ids: Tensor, block_size: int) -> tuple[Tensor, Tensor]:
                    """Cut ids (N,) into inputs x and targets y, both (n_blocks, block_size).

                    y[i, t] is x[i, t] one step later in the text.
                    """
                    n_blocks = len(ids) // block_size
                    n = n_blocks * block_size
                    x = ids[:n].reshape(n_blocks, block_size)
                    y = ids[1 : n + 1].reshape(n_blocks, block_size)
                    return x, y
                '''
            )
        },
        {"test_make_blocks": "n_blocks counts len(ids) // block_size blocks: where len(ids) is a"},
        # Issue 40's seventh blind corpus, graded blind on 451e037: named.
    ),
    Mutant(
        "n06-02: the head's scores scaled by sqrt(d_model)",
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
                        B, L, d_model = x.shape
                        q, k, v = self.query(x), self.key(x), self.value(x)
                        scores = q @ k.transpose(-2, -1) / math.sqrt(d_model)
                        scores = scores.masked_fill(~self.mask[:L, :L], float("-inf"))
                        return torch.softmax(scores, dim=-1) @ v
                '''
            )
        },
        {
            "test_causal_head": "scores are scaled by √d_model instead of √head_size (the width of q",
            "test_multihead_causal": "this cell uses your answer cell `causal_head`",
        },
        # Issue 40's seventh blind corpus, graded blind on 451e037: named.
    ),
    Mutant(
        "n06-03: one head object repeated num_heads times",
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
                        head_size = d_model // num_heads
                        head = CausalSelfAttentionHead(d_model, head_size, block_size)
                        self.heads = nn.ModuleList([head] * num_heads)
                        self.proj = nn.Linear(d_model, d_model)

                    def forward(self, x: Tensor) -> Tensor:
                        """x (B, L, d_model), L <= block_size -> (B, L, d_model)."""
                        return self.proj(torch.cat([head(x) for head in self.heads], dim=-1))
                '''
            )
        },
        {"test_multihead_causal": "self.heads holds the same head object more than once"},
        # Issue 40's seventh blind corpus, graded blind on 451e037: named.
    ),
    Mutant(
        "n06-04: the log of the softmax's probabilities",
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
        {"test_lm_loss": "the loss takes the log of the softmax's probabilities: a target far"},
        # Issue 40's seventh blind corpus, graded blind on 451e037: named.
    ),
    Mutant(
        "n06-05: the context cropped to the first block_size ids",
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
                        context = idx[:, : model.block_size]
                        logits = model(context)[:, -1, :] / temperature  # (B, V)
                        if top_k is not None:
                            k = min(top_k, logits.shape[-1])
                            kth = torch.topk(logits, k, dim=-1).values[:, -1:]  # (B, 1)
                            logits = logits.masked_fill(logits < kth, float("-inf"))
                        probs = torch.softmax(logits, dim=-1)
                        next_id = torch.multinomial(probs, 1, generator=generator)  # (B, 1)
                        idx = torch.cat([idx, next_id], dim=1)
                    return idx
                '''
            )
        },
        {"test_sample": "the model is fed the FIRST block_size ids of the sequence once it is"},
        # Issue 40's seventh blind corpus, graded blind on 451e037: named.
    ),
    Mutant(
        "p06-01: -log of the softmax's probability of the target",
        A,
        {
            "lm_loss": Rewrite(
                r'''
                # kind: wrong
                # grade_id: lm_loss
                # mistake: computes -log(softmax(logits)[target]) with an explicit softmax then log, which underflows to log(0) = -inf (loss inf) when a target's logit sits about 100 or more below its row's largest, a case the statement says must stay finite.
                # evidence: tools/ev06.py: logits with a target 120 below its row's max and another 150 below: F.cross_entropy and my answer give 135.69, this one gives inf.
                def lm_loss(logits: Tensor, targets: Tensor) -> Tensor:
                    """Mean cross-entropy of logits (B, L, V) against targets (B, L) -> scalar."""
                    probs = torch.softmax(logits, dim=-1)  # (B, L, V)
                    p_target = probs.gather(-1, targets.unsqueeze(-1)).squeeze(-1)  # (B, L)
                    return -torch.log(p_target).mean()
                '''
            )
        },
        {"test_lm_loss": "the loss takes the log of the softmax's probabilities: a target far"},
        # Issue 40's seventh blind corpus, graded blind on 451e037: named.
    ),
    Mutant(
        "p06-02: the output head tied to the token embedding",
        A,
        {
            "charlm": Rewrite(
                r'''
                # kind: wrong
                # grade_id: charlm
                # mistake: ties lm_head's weight to the token embedding (GPT-2 style weight tying) although the statement asks for a plain nn.Linear head, so the untrained logits are large (std about 5 against 0.65) and the start-up loss is far from ln V.
                # evidence: tools/ev06.py: with the public check's set-up the untrained loss is 0.769 against ln 11 = 2.398 (mine 2.297), logits std 4.96 (mine 0.65); lm_head.weight is the embedding matrix.
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
                            Block(d_model, num_heads, block_size, dropout) for _ in range(num_layers)
                        )
                        self.ln_f = LayerNorm(d_model)
                        self.lm_head = nn.Linear(d_model, vocab_size)
                        # share the input and output embeddings, as GPT-2 does (fewer parameters)
                        self.lm_head.weight = self.token_embedding.weight

                    def forward(self, idx: Tensor) -> Tensor:
                        """idx (B, L) token ids, L <= block_size -> logits (B, L, vocab_size)."""
                        x = self.position(self.token_embedding(idx))
                        for block in self.blocks:
                            x = block(x)
                        return self.lm_head(self.ln_f(x))
                '''
            )
        },
        {"test_charlm": "the logits are the final hidden states times the token embedding's"},
        # Issue 40's seventh blind corpus, graded blind on 451e037: counterexample; named since.
    ),
    Mutant(
        "p06-03: the head's scores scaled by sqrt(d_model)",
        A,
        {
            "causal_head": Rewrite(
                r'''
                # kind: wrong
                # grade_id: causal_head
                # mistake: divides the scores by sqrt(d_model) (the model width) instead of sqrt(head_size) = sqrt(d_k), as the statement defines d_k.
                # evidence: tools/ev06.py: head_size 8, d_model 32: output differs from F.scaled_dot_product_attention(is_causal, scale 1/sqrt(head_size)) by 0.19 (mine 1.2e-7).
                class CausalSelfAttentionHead(nn.Module):
                    """One head of causal self-attention: x (B, L, d_model) -> (B, L, head_size)."""

                    def __init__(self, d_model: int, head_size: int, block_size: int):
                        super().__init__()
                        self.d_model = d_model
                        self.query = nn.Linear(d_model, head_size, bias=False)
                        self.key = nn.Linear(d_model, head_size, bias=False)
                        self.value = nn.Linear(d_model, head_size, bias=False)
                        self.register_buffer("mask", causal_mask(block_size), persistent=False)

                    def forward(self, x: Tensor) -> Tensor:
                        """x (B, L, d_model), L <= block_size -> (B, L, head_size)."""
                        L = x.shape[1]
                        q, k, v = self.query(x), self.key(x), self.value(x)
                        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_model)
                        scores = scores.masked_fill(~self.mask[:L, :L], float("-inf"))
                        return torch.softmax(scores, dim=-1) @ v
                '''
            )
        },
        {
            "test_causal_head": "scores are scaled by √d_model instead of √head_size (the width of q",
            "test_multihead_causal": "this cell uses your answer cell `causal_head`",
        },
        # Issue 40's seventh blind corpus, graded blind on 451e037: named.
    ),
    Mutant(
        "p06-04: sample never puts the model in eval mode",
        A,
        {
            "sample": Rewrite(
                r'''
                # kind: wrong
                # grade_id: sample
                # mistake: never puts the model in eval() mode (the statement asks for it), so a model with dropout left in train mode samples from dropout-perturbed logits.
                # evidence: tools/ev06.py: CharLM with dropout 0.5 left in train mode: after sample the model is still in train mode and two calls with the same generator seed give different samples (mine: eval mode, identical samples).
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
                    # no gradients here (decorator), so nothing else to switch
                    for _ in range(max_new_tokens):
                        context = idx[:, -model.block_size :]
                        logits = model(context)[:, -1, :] / temperature  # (B, V)
                        if top_k is not None:
                            kth = torch.topk(logits, min(top_k, logits.shape[-1]), dim=-1).values[:, -1:]
                            logits = logits.masked_fill(logits < kth, float("-inf"))
                        probs = torch.softmax(logits, dim=-1)
                        next_id = torch.multinomial(probs, 1, generator=generator)
                        idx = torch.cat([idx, next_id], dim=1)
                    return idx
                '''
            )
        },
        {"test_sample": "the model was in training mode when sample called it (the statement"},
        # Issue 40's seventh blind corpus, graded blind on 451e037: named.
    ),
    Mutant(
        "p06-05: F.one_hot without num_classes in penalise_repeats",
        A,
        {
            "penalise_repeats": Rewrite(
                r'''
                # kind: wrong
                # grade_id: penalise_repeats
                # mistake: builds the seen-id mask with F.one_hot(context) without num_classes, so its width is (largest id in the context + 1) instead of V and it fails to broadcast against the logits whenever the context lacks the id V - 1.
                # evidence: tools/ev06.py: V = 6 and contexts whose largest id is 3: raises RuntimeError (size 6 vs 4); when a context holds id 5 it equals my answer.
                def penalise_repeats(logits: Tensor, context: Tensor, strength: float) -> Tensor:
                    """Next-id logits (B, V), the ids in each row's context (B, L) made less likely."""
                    # My rule: subtract `strength` from the logit of each id seen in the row's
                    # context. That multiplies a seen id's odds against any unseen id by
                    # exp(-strength) whatever the sign of its logit, leaves the unseen ids' odds
                    # alone, is the identity at strength 0 and grows with the strength.
                    seen = F.one_hot(context).sum(dim=1) > 0  # (B, V): id appears in the row
                    return logits - strength * seen.to(logits.dtype)
                '''
            )
        },
        {"test_penalise_repeats": "is as wide as the context's largest id plus one"},
        # Issue 40's seventh blind corpus, graded blind on 451e037: counterexample; named since.
    ),
    Mutant(
        "q06-03: the heads stacked on a new last axis and flattened: interleaved",
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
                        self.heads = nn.ModuleList(
                            [
                                CausalSelfAttentionHead(d_model, d_model // num_heads, block_size)
                                for _ in range(num_heads)
                            ]
                        )
                        self.proj = nn.Linear(d_model, d_model)

                    def forward(self, x: Tensor) -> Tensor:
                        """x (B, L, d_model), L <= block_size -> (B, L, d_model)."""
                        return self.proj(torch.stack([head(x) for head in self.heads], dim=-1).flatten(2))
                '''
            )
        },
        {
            "test_multihead_causal": "the heads' outputs are interleaved, not concatenated (head after head)"
        },
        # Issue 40's eighth blind corpus, graded blind on 47d54b0: counterexample (named since).
    ),
    Mutant(
        "r06-05: the unseen ids' probability divides: NaN when the context holds every id",
        A,
        {
            "penalise_repeats": Rewrite(
                r'''
                # id: r06-05
                # kind: wrong
                # grade_id: penalise_repeats
                # mistake: the design moves probability from the seen ids to the unseen ones in proportion to their probabilities; for a row whose context holds every id there is no unseen mass, the division is 0/0 and the returned logits are NaN (the statement requires finite values there).
                # evidence: my experiment (scripts ev0N.py, output ev0N.txt in /work/fresh-corpus8b):
                #   r06-05: strength 1.5, row 0 context holds every id: correct [[-1.0, -2.5, 0.5], [-0.5, -1.5, -1.0]] | wrong [[nan, nan, nan], [-1.9076058864593506, -2.9076058864593506, -0.22695274651050568]]
                #   r06-05: strength 0.0, row 0 context holds every id: correct [[0.5, -1.0, 2.0], [1.0, 0.0, -1.0]] | wrong [[nan, nan, nan], [-0.40760597586631775, -1.4076058864593506, -2.4076058864593506]]
                # public checks: passes every public check of the notebook
                def penalise_repeats(logits: Tensor, context: Tensor, strength: float) -> Tensor:
                    """Next-id logits (B, V), the ids in each row's context (B, L) made less likely."""
                    # Rule: every seen id keeps only a share exp(-strength) of its probability; the
                    # probability taken from the seen ids is handed to the unseen ids in proportion
                    # to their own probabilities (so their odds stay the same). strength 0 keeps
                    # everything. I return the log of the new probabilities as logits.
                    probs = torch.softmax(logits, dim=-1)
                    seen = torch.zeros_like(probs).scatter(1, context, 1.0)
                    keep = math.exp(-strength)
                    taken = (probs * seen).sum(dim=-1, keepdim=True) * (1.0 - keep)
                    unseen_mass = (probs * (1.0 - seen)).sum(dim=-1, keepdim=True)
                    new_probs = probs * seen * keep + probs * (1.0 - seen) * (1.0 + taken / unseen_mass)
                    return torch.log(new_probs)
                '''
            )
        },
        {"test_penalise_repeats": "non-finite exactly in the rows whose context holds every id"},
        # Issue 40's eighth blind corpus, graded blind on 47d54b0: counterexample (named since).
    ),
    Mutant(
        "q06-01: make_blocks counts len(ids) // block_size blocks",
        A,
        {
            "make_blocks": Rewrite(
                r'''
                def make_blocks(ids: Tensor, block_size: int) -> tuple[Tensor, Tensor]:
                    """Cut ids (N,) into inputs x and targets y, both (n_blocks, block_size).

                    y[i, t] is x[i, t] one step later in the text.
                    """
                    n_blocks = len(ids) // block_size
                    n = n_blocks * block_size
                    x = ids[:n].reshape(n_blocks, block_size)
                    y = ids[1 : n + 1].reshape(n_blocks, block_size)
                    return x, y
                '''
            )
        },
        {"test_make_blocks": "n_blocks counts len(ids) // block_size blocks"},
        # Issue 40's eighth blind corpus, graded blind on 47d54b0: named.
    ),
    Mutant(
        "q06-02: the head's scores scaled by sqrt(d_model), not sqrt(head_size)",
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
                        L = x.shape[1]
                        q, k, v = self.query(x), self.key(x), self.value(x)
                        scores = q @ k.transpose(-2, -1) / math.sqrt(x.shape[-1])
                        scores = scores.masked_fill(~self.mask[:L, :L], float("-inf"))
                        return torch.softmax(scores, dim=-1) @ v
                '''
            )
        },
        {
            "test_causal_head": "scores are scaled by √d_model instead of √head_size",
            "test_multihead_causal": "this cell uses your answer cell `causal_head`",
        },
        # Issue 40's eighth blind corpus, graded blind on 47d54b0: named.
    ),
    Mutant(
        "q06-04: CharLM never applies ln_f",
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
                        """idx (B, L) token ids, L <= block_size -> logits (B, L, vocab_size)."""
                        x = self.position(self.token_embedding(idx))
                        for block in self.blocks:
                            x = block(x)
                        return self.lm_head(x)
                '''
            )
        },
        {"test_charlm": "self.ln_f is not applied"},
        # Issue 40's eighth blind corpus, graded blind on 47d54b0: named.
    ),
    Mutant(
        "q06-05: lm_loss takes the log of the softmax's probabilities",
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
        # Issue 40's eighth blind corpus, graded blind on 47d54b0: named.
    ),
    Mutant(
        "r06-01: the head's scores scaled by sqrt(d_model), not sqrt(head_size)",
        A,
        {
            "causal_head": Rewrite(
                r'''
                # id: r06-01
                # kind: wrong
                # grade_id: causal_head
                # mistake: scales the scores by 1/sqrt(d_model) (the input width) instead of 1/sqrt(head_size), misreading d_k.
                # evidence: my experiment (scripts ev0N.py, output ev0N.txt in /work/fresh-corpus8b):
                #   r06-01: d_model=16, head_size=4, same weights: max |correct - F.sdpa(causal)| 1.1920928955078125e-07 | max |wrong - F.sdpa| 0.15844130516052246
                # public checks: passes every public check of the notebook
                class CausalSelfAttentionHead(nn.Module):
                    """One head of causal self-attention: x (B, L, d_model) -> (B, L, head_size).

                    Position t sees positions 0..t.
                    """

                    def __init__(self, d_model: int, head_size: int, block_size: int):
                        super().__init__()
                        self.d_model = d_model
                        self.query = nn.Linear(d_model, head_size, bias=False)
                        self.key = nn.Linear(d_model, head_size, bias=False)
                        self.value = nn.Linear(d_model, head_size, bias=False)
                        self.register_buffer("mask", causal_mask(block_size), persistent=False)

                    def forward(self, x: Tensor) -> Tensor:
                        """x (B, L, d_model), L <= block_size -> (B, L, head_size)."""
                        length = x.shape[1]
                        q, k, v = self.query(x), self.key(x), self.value(x)
                        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_model)
                        scores = scores.masked_fill(~self.mask[:length, :length], float("-inf"))
                        return torch.softmax(scores, dim=-1) @ v
                '''
            )
        },
        {
            "test_causal_head": "scores are scaled by √d_model instead of √head_size",
            "test_multihead_causal": "this cell uses your answer cell `causal_head`",
        },
        # Issue 40's eighth blind corpus, graded blind on 47d54b0: named.
    ),
    Mutant(
        "r06-02: CharLM never applies ln_f",
        A,
        {
            "charlm": Rewrite(
                r'''
                # id: r06-02
                # kind: wrong
                # grade_id: charlm
                # mistake: creates self.ln_f but never applies it in forward: the last block's unnormalised residual stream goes straight into lm_head.
                # evidence: my experiment (scripts ev0N.py, output ev0N.txt in /work/fresh-corpus8b):
                #   r06-02: same weights: max |wrong logits - correct logits| 3.4836180210113525
                # public checks: passes every public check of the notebook
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
                        """idx (B, L) token ids, L <= block_size -> logits (B, L, vocab_size)."""
                        x = self.position(self.token_embedding(idx))
                        for block in self.blocks:
                            x = block(x)
                        return self.lm_head(x)
                '''
            )
        },
        {"test_charlm": "self.ln_f is not applied"},
        # Issue 40's eighth blind corpus, graded blind on 47d54b0: named.
    ),
    Mutant(
        "r06-03: lm_loss takes -log of the softmax at the targets",
        A,
        {
            "lm_loss": Rewrite(
                r'''
                # id: r06-03
                # kind: wrong
                # grade_id: lm_loss
                # mistake: computes -log(softmax(logits)) picked at the targets in two steps, so a target whose logit lies ~100 or more below its row's maximum has probability 0 in float32 and the loss becomes inf (the statement requires it finite).
                # evidence: my experiment (scripts ev0N.py, output ev0N.txt in /work/fresh-corpus8b):
                #   r06-03: a target logit 120 below its row max: correct 60.804718017578125 | wrong inf | F.cross_entropy 60.804718017578125
                # public checks: passes every public check of the notebook
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
        # Issue 40's eighth blind corpus, graded blind on 47d54b0: named.
    ),
    Mutant(
        "r06-04: sample never puts the model in eval mode",
        A,
        {
            "sample": Rewrite(
                r'''
                # id: r06-04
                # kind: wrong
                # grade_id: sample
                # mistake: never puts the model in eval mode, so a model left in train mode (as the training loop leaves it) samples with dropout active.
                # evidence: my experiment (scripts ev0N.py, output ev0N.txt in /work/fresh-corpus8b):
                #   r06-04: correct model left in train mode after the call: False
                #   r06-04: r06-04 model left in train mode after the call: True
                #   r06-04: model dropout 0.5, handed in train mode, same generator: correct == eval-mode sample: True | wrong == eval-mode sample: False
                # public checks: passes every public check of the notebook
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
                    # no gradients needed: the decorator turns them off
                    for _ in range(max_new_tokens):
                        context = idx[:, -model.block_size :]
                        logits = model(context)[:, -1, :] / temperature
                        if top_k is not None:
                            k = min(top_k, logits.shape[-1])
                            kth = torch.topk(logits, k, dim=-1).values[:, -1:]
                            logits = logits.masked_fill(logits < kth, float("-inf"))
                        probs = torch.softmax(logits, dim=-1)
                        next_id = torch.multinomial(probs, 1, generator=generator)
                        idx = torch.cat([idx, next_id], dim=1)
                    return idx
                '''
            )
        },
        {"test_sample": "the model was in training mode when sample called it"},
        # Issue 40's eighth blind corpus, graded blind on 47d54b0: named.
    ),
    Mutant(
        "t06-05: penalise_repeats pools the seen ids over the batch",
        A,
        {
            "penalise_repeats": Rewrite(
                r'''
                def penalise_repeats(logits: Tensor, context: Tensor, strength: float) -> Tensor:
                    """Next-id logits (B, V), the ids in each row's context (B, L) made less likely."""
                    # My rule: subtract `strength` from the logit of every recently seen id. A
                    # subtraction lowers a seen id's probability whatever the sign of its logit, the
                    # other ids keep their logits (so their odds), and 0 changes nothing.
                    seen = torch.zeros(logits.shape[-1], dtype=logits.dtype, device=logits.device)
                    seen[context.flatten()] = 1.0  # the ids that appear in the recent context
                    return logits - strength * seen
                '''
            )
        },
        {"test_penalise_repeats": "the ids seen are pooled over the batch: every row is penalised"},
        # Issue 40's ninth blind corpus, graded blind on feb0b2e: counterexample (named since).
    ),
    Mutant(
        "s06-01: make_blocks counts len(ids) // block_size blocks",
        A,
        {
            "make_blocks": Rewrite(
                r'''
                def make_blocks(ids: Tensor, block_size: int) -> tuple[Tensor, Tensor]:
                    """Cut ids (N,) into inputs x and targets y, both (n_blocks, block_size).

                    y[i, t] is x[i, t] one step later in the text.
                    """
                    n_blocks = len(ids) // block_size
                    n = n_blocks * block_size
                    x = ids[:n].view(n_blocks, block_size)
                    y = ids[1 : n + 1].view(n_blocks, block_size)
                    return x, y
                '''
            )
        },
        {
            "test_make_blocks": "n_blocks counts len(ids) // block_size blocks",
        },
        # Issue 40's ninth blind corpus, graded blind on feb0b2e: named.
    ),
    Mutant(
        "s06-02: causal_head scales the scores by √d_model, not √head_size",
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
                        L = x.shape[1]
                        q, k, v = self.query(x), self.key(x), self.value(x)
                        scores = q @ k.transpose(-2, -1) / math.sqrt(x.shape[-1])
                        scores = scores.masked_fill(~self.mask[:L, :L], float("-inf"))
                        return torch.softmax(scores, dim=-1) @ v
                '''
            )
        },
        {
            "test_causal_head": "scores are scaled by √d_model instead of √head_size",
            "test_multihead_causal": "this cell uses your answer cell `causal_head`",
        },
        # Issue 40's ninth blind corpus, graded blind on feb0b2e: named.
    ),
    Mutant(
        "s06-03: heads stacked on a last axis and flattened, their features interleaved",
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
                        head_size = d_model // num_heads
                        self.heads = nn.ModuleList(
                            [
                                CausalSelfAttentionHead(d_model, head_size, block_size)
                                for _ in range(num_heads)
                            ]
                        )
                        self.proj = nn.Linear(d_model, d_model)

                    def forward(self, x: Tensor) -> Tensor:
                        """x (B, L, d_model), L <= block_size -> (B, L, d_model)."""
                        return self.proj(torch.stack([head(x) for head in self.heads], dim=-1).flatten(-2))
                '''
            )
        },
        {
            "test_multihead_causal": "the heads' outputs are interleaved, not concatenated",
        },
        # Issue 40's ninth blind corpus, graded blind on feb0b2e: named.
    ),
    Mutant(
        "s06-04: lm_loss as log(softmax(logits)) in two steps",
        A,
        {
            "lm_loss": Rewrite(
                r'''
                def lm_loss(logits: Tensor, targets: Tensor) -> Tensor:
                    """Mean cross-entropy of logits (B, L, V) against targets (B, L) -> scalar.

                    The mean is over all B*L positions.
                    """
                    probs = torch.softmax(logits, dim=-1)  # (B, L, V)
                    picked = probs.gather(-1, targets.unsqueeze(-1)).squeeze(-1)  # (B, L)
                    return -torch.log(picked).mean()
                '''
            )
        },
        {
            "test_lm_loss": "the loss takes the log of the softmax's probabilities",
        },
        # Issue 40's ninth blind corpus, graded blind on feb0b2e: named.
    ),
    Mutant(
        "s06-05: sample crops the context to the first block_size ids",
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
                        context = idx[:, : model.block_size]
                        logits = model(context)[:, -1, :] / temperature
                        if top_k is not None:
                            kth = torch.topk(logits, top_k, dim=-1).values[:, -1:]
                            logits = logits.masked_fill(logits < kth, float("-inf"))
                        probs = torch.softmax(logits, dim=-1)
                        next_id = torch.multinomial(probs, 1, generator=generator)
                        idx = torch.cat([idx, next_id], dim=1)
                    return idx
                '''
            )
        },
        {
            "test_sample": "the model is fed the FIRST block_size ids of the sequence",
        },
        # Issue 40's ninth blind corpus, graded blind on feb0b2e: named.
    ),
    Mutant(
        "t06-01: causal_head scales the scores by 1/√d_model",
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
                        L = x.shape[1]
                        q, k, v = self.query(x), self.key(x), self.value(x)
                        scores = q @ k.transpose(-2, -1) / math.sqrt(x.shape[-1])  # / sqrt(d_model)
                        scores = scores.masked_fill(~self.mask[:L, :L], float("-inf"))
                        return torch.softmax(scores, dim=-1) @ v
                '''
            )
        },
        {
            "test_causal_head": "scores are scaled by √d_model instead of √head_size",
            "test_multihead_causal": "this cell uses your answer cell `causal_head`",
        },
        # Issue 40's ninth blind corpus, graded blind on feb0b2e: named.
    ),
    Mutant(
        "t06-02: lm_head's weight tied to the token embedding",
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
                        self.lm_head.weight = self.token_embedding.weight  # weight tying, as in GPT-2

                    def forward(self, idx: Tensor) -> Tensor:
                        """idx (B, L) token ids, L <= block_size -> logits (B, L, vocab_size)."""
                        x = self.position(self.token_embedding(idx))
                        for block in self.blocks:
                            x = block(x)
                        return self.lm_head(self.ln_f(x))
                '''
            )
        },
        {
            "test_charlm": "the logits are the final hidden states times the token embedding's weight",
        },
        # Issue 40's ninth blind corpus, graded blind on feb0b2e: named.
    ),
    Mutant(
        "t06-03: ln_f built but never applied",
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
                        """idx (B, L) token ids, L <= block_size -> logits (B, L, vocab_size)."""
                        x = self.position(self.token_embedding(idx))
                        for block in self.blocks:
                            x = block(x)
                        return self.lm_head(x)
                '''
            )
        },
        {
            "test_charlm": "self.ln_f is not applied",
        },
        # Issue 40's ninth blind corpus, graded blind on feb0b2e: named.
    ),
    Mutant(
        "t06-04: sample crops the context to the first block_size ids",
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
                        context = idx[:, : model.block_size]  # the model knows block_size positions
                        logits = model(context)[:, -1, :] / temperature
                        if top_k is not None:
                            kth = torch.topk(logits, min(top_k, logits.shape[-1]), dim=-1).values[:, -1:]
                            logits = logits.masked_fill(logits < kth, float("-inf"))
                        probs = torch.softmax(logits, dim=-1)
                        next_id = torch.multinomial(probs, 1, generator=generator)
                        idx = torch.cat([idx, next_id], dim=1)
                    return idx
                '''
            )
        },
        {
            "test_sample": "the model is fed the FIRST block_size ids of the sequence",
        },
        # Issue 40's ninth blind corpus, graded blind on feb0b2e: named.
    ),
    Mutant(
        "u06-01: the causal mask a plain tensor attribute, not a registered buffer",
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
                        self.mask = causal_mask(block_size)  # the causal mask for the longest sequence

                    def forward(self, x: Tensor) -> Tensor:
                        """x (B, L, d_model), L <= block_size -> (B, L, head_size)."""
                        L = x.shape[1]
                        q, k, v = self.query(x), self.key(x), self.value(x)
                        scores = q @ k.transpose(-2, -1) / math.sqrt(k.shape[-1])
                        scores = scores.masked_fill(~self.mask[:L, :L], float("-inf"))
                        return torch.softmax(scores, dim=-1) @ v
                '''
            )
        },
        {
            "test_causal_head": "`self.mask` is a plain Tensor attribute",
        },
        # Issue 40's tenth blind corpus, graded blind on 60c32e8: not caught (caught since).
    ),
    Mutant(
        "u06-02: causal_head scales the scores by √d_model",
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
                        L = x.shape[1]
                        q, k, v = self.query(x), self.key(x), self.value(x)
                        scores = q @ k.transpose(-2, -1) / math.sqrt(x.shape[-1])
                        scores = scores.masked_fill(~self.mask[:L, :L], float("-inf"))
                        return torch.softmax(scores, dim=-1) @ v
                '''
            )
        },
        {
            "test_causal_head": "scores are scaled by √d_model instead of √head_size",
            "test_multihead_causal": "this cell uses your answer cell `causal_head`",
        },
        # Issue 40's tenth blind corpus, graded blind on 60c32e8: named; test_multihead_causal not
        # charged again.
    ),
    Mutant(
        "u06-03: nn.ModuleList([head] * num_heads), one head shared",
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
                        head_size = d_model // num_heads
                        head = CausalSelfAttentionHead(d_model, head_size, block_size)
                        self.heads = nn.ModuleList([head] * num_heads)
                        self.proj = nn.Linear(d_model, d_model)

                    def forward(self, x: Tensor) -> Tensor:
                        """x (B, L, d_model), L <= block_size -> (B, L, d_model)."""
                        return self.proj(torch.cat([head(x) for head in self.heads], dim=-1))
                '''
            )
        },
        {
            "test_multihead_causal": "self.heads holds the same head object more than once",
        },
        # Issue 40's tenth blind corpus, graded blind on 60c32e8: named.
    ),
    Mutant(
        "u06-04: lm_loss as -log(softmax) gathered at the targets",
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
        {
            "test_lm_loss": "the loss takes the log of the softmax's probabilities",
        },
        # Issue 40's tenth blind corpus, graded blind on 60c32e8: named.
    ),
    Mutant(
        "u06-05: sample crops the context to the first block_size ids",
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
                        context = idx[:, : model.block_size]  # the model only knows block_size positions
                        logits = model(context)[:, -1, :] / temperature
                        if top_k is not None:
                            kth = torch.topk(logits, min(top_k, logits.shape[-1]), dim=-1).values[:, -1:]
                            logits = logits.masked_fill(logits < kth, float("-inf"))
                        probs = torch.softmax(logits, dim=-1)
                        next_id = torch.multinomial(probs, 1, generator=generator)
                        idx = torch.cat([idx, next_id], dim=1)
                    return idx
                '''
            )
        },
        {
            "test_sample": "the model is fed the FIRST block_size ids of the sequence",
        },
        # Issue 40's tenth blind corpus, graded blind on 60c32e8: named.
    ),
    Mutant(
        "v06-01: make_blocks unfolds ids and ids[1:] apart, x one block longer",
        A,
        {
            "make_blocks": Rewrite(
                r'''
                def make_blocks(ids: Tensor, block_size: int) -> tuple[Tensor, Tensor]:
                    """Cut ids (N,) into inputs x and targets y, both (n_blocks, block_size).

                    y[i, t] is x[i, t] one step later in the text.
                    """
                    x = ids.unfold(0, block_size, block_size)  # non-overlapping windows
                    y = ids[1:].unfold(0, block_size, block_size)
                    return x, y
                '''
            )
        },
        {
            "test_make_blocks": "n_blocks counts len(ids) // block_size blocks",
        },
        # Issue 40's tenth blind corpus, graded blind on 60c32e8: named.
    ),
    Mutant(
        "v06-02: causal_head scales by sqrt(x.shape[-1])",
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
                        self.head_size = head_size
                        self.query = nn.Linear(d_model, head_size, bias=False)
                        self.key = nn.Linear(d_model, head_size, bias=False)
                        self.value = nn.Linear(d_model, head_size, bias=False)
                        self.register_buffer("mask", causal_mask(block_size), persistent=False)

                    def forward(self, x: Tensor) -> Tensor:
                        """x (B, L, d_model), L <= block_size -> (B, L, head_size)."""
                        L = x.shape[1]
                        q, k, v = self.query(x), self.key(x), self.value(x)
                        scores = q @ k.transpose(-2, -1) / math.sqrt(x.shape[-1])
                        scores = scores.masked_fill(~self.mask[:L, :L], float("-inf"))
                        weights = torch.softmax(scores, dim=-1)
                        return weights @ v
                '''
            )
        },
        {
            "test_causal_head": "scores are scaled by √d_model instead of √head_size",
            "test_multihead_causal": "this cell uses your answer cell `causal_head`",
        },
        # Issue 40's tenth blind corpus, graded blind on 60c32e8: named; test_multihead_causal not
        # charged again.
    ),
    Mutant(
        "v06-03: torch.multinomial without the caller's generator",
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
                        context = idx[:, -model.block_size :]
                        logits = model(context)[:, -1, :] / temperature
                        if top_k is not None:
                            k = min(top_k, logits.shape[-1])
                            kth = torch.topk(logits, k, dim=-1).values[:, -1:]
                            logits = logits.masked_fill(logits < kth, float("-inf"))
                        probs = torch.softmax(logits, dim=-1)
                        next_id = torch.multinomial(probs, 1)
                        idx = torch.cat([idx, next_id], dim=1)
                    return idx
                '''
            )
        },
        {
            "test_sample": "the draws follow the global random state, not `generator`",
        },
        # Issue 40's tenth blind corpus, graded blind on 60c32e8: named.
    ),
    Mutant(
        "v06-04: top_k keeps exactly torch.topk's k ids, dropping ties",
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
                        context = idx[:, -model.block_size :]
                        logits = model(context)[:, -1, :] / temperature
                        if top_k is not None:
                            k = min(top_k, logits.shape[-1])
                            top = torch.topk(logits, k, dim=-1)
                            kept = torch.full_like(logits, float("-inf"))
                            logits = kept.scatter(1, top.indices, top.values)
                        probs = torch.softmax(logits, dim=-1)
                        next_id = torch.multinomial(probs, 1, generator=generator)
                        idx = torch.cat([idx, next_id], dim=1)
                    return idx
                '''
            )
        },
        {
            "test_sample": "top_k keeps exactly k ids, so where logits tie at the k-th largest",
        },
        # Issue 40's tenth blind corpus, graded blind on 60c32e8: not caught (caught since).
    ),
    Mutant(
        "v06-05: lm_loss takes the log of softmax's probabilities",
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
        {
            "test_lm_loss": "the loss takes the log of the softmax's probabilities",
        },
        # Issue 40's tenth blind corpus, graded blind on 60c32e8: named.
    ),
    Mutant(
        "w06-01: causal_head scales the scores by sqrt(d_model)",
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
            "test_multihead_causal": "this cell uses your answer cell `causal_head`",
        },
        # Issue 40's eleventh blind corpus, graded blind on 48fe40c: named; test_multihead_causal
        # not charged again.
    ),
    Mutant(
        "w06-02: ln_f made but never applied",
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
                        """idx (B, L) token ids, L <= block_size -> logits (B, L, vocab_size)."""
                        x = self.position(self.token_embedding(idx))
                        for block in self.blocks:
                            x = block(x)
                        return self.lm_head(x)
                '''
            )
        },
        {
            "test_charlm": "self.ln_f is not applied",
        },
        # Issue 40's eleventh blind corpus, graded blind on 48fe40c: named.
    ),
    Mutant(
        "w06-03: lm_loss takes the log of softmax probabilities",
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
        {
            "test_lm_loss": "the loss takes the log of the softmax's probabilities",
        },
        # Issue 40's eleventh blind corpus, graded blind on 48fe40c: named.
    ),
    Mutant(
        "w06-04: sample crops the context to the first block_size ids",
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
                        context = idx[:, : model.block_size]  # the model knows block_size positions
                        logits = model(context)[:, -1, :] / temperature
                        if top_k is not None:
                            kth = torch.topk(logits, top_k, dim=-1).values[:, -1:]
                            logits = logits.masked_fill(logits < kth, float("-inf"))
                        probs = torch.softmax(logits, dim=-1)
                        next_id = torch.multinomial(probs, 1, generator=generator)
                        idx = torch.cat([idx, next_id], dim=1)
                    return idx
                '''
            )
        },
        {
            "test_sample": "the model is fed the FIRST block_size ids",
        },
        # Issue 40's eleventh blind corpus, graded blind on 48fe40c: named.
    ),
    Mutant(
        "w06-05: every seen logit divided by 1 + strength, whatever its sign",
        A,
        {
            "penalise_repeats": Rewrite(
                r'''
                def penalise_repeats(logits: Tensor, context: Tensor, strength: float) -> Tensor:
                    """Next-id logits (B, V), the ids in each row's context (B, L) made less likely."""
                    # Rule: shrink the logit of every id seen in the context by the factor 1 + strength
                    # (strength 0: factor 1, no change). Unseen ids keep their logits.
                    seen = torch.zeros_like(logits, dtype=torch.bool).scatter_(1, context, True)
                    return torch.where(seen, logits / (1.0 + strength), logits)
                '''
            )
        },
        {
            "test_penalise_repeats": "every seen id's logit is divided by the same factor above 1, whatever its sign",
        },
        # Issue 40's eleventh blind corpus, graded blind on 48fe40c: named.
    ),
    Mutant(
        "x06-01: x and y unfolded apart, one block too many for x",
        A,
        {
            "make_blocks": Rewrite(
                r'''
                def make_blocks(ids: Tensor, block_size: int) -> tuple[Tensor, Tensor]:
                    """Cut ids (N,) into inputs x and targets y, both (n_blocks, block_size).

                    y[i, t] is x[i, t] one step later in the text.
                    """
                    # non-overlapping windows of block_size; y reads the same windows one id later
                    x = ids.unfold(0, block_size, block_size)
                    y = ids[1:].unfold(0, block_size, block_size)
                    return x, y
                '''
            )
        },
        {
            "test_make_blocks": "n_blocks counts len(ids) // block_size blocks",
        },
        # Issue 40's eleventh blind corpus, graded blind on 48fe40c: named.
    ),
    Mutant(
        "x06-02: causal_head divides the scores by sqrt(x.shape[-1])",
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
                        scores = q @ k.transpose(-2, -1) / math.sqrt(C)
                        scores = scores.masked_fill(~self.mask[:L, :L], float("-inf"))
                        return torch.softmax(scores, dim=-1) @ v
                '''
            )
        },
        {
            "test_causal_head": "scores are scaled by √d_model instead of √head_size",
            "test_multihead_causal": "this cell uses your answer cell `causal_head`",
        },
        # Issue 40's eleventh blind corpus, graded blind on 48fe40c: named; test_multihead_causal
        # not charged again.
    ),
    Mutant(
        "x06-03: the causal mask a plain tensor attribute, not a buffer",
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
                        # fixed, not trained: no need to make it a parameter
                        self.mask = causal_mask(block_size)

                    def forward(self, x: Tensor) -> Tensor:
                        """x (B, L, d_model), L <= block_size -> (B, L, head_size)."""
                        L = x.shape[1]
                        q, k, v = self.query(x), self.key(x), self.value(x)
                        out, _ = scaled_dot_product_attention(q, k, v, self.mask[:L, :L])
                        return out
                '''
            )
        },
        {
            "test_causal_head": "`self.mask` is a plain Tensor attribute",
        },
        # Issue 40's eleventh blind corpus, graded blind on 48fe40c: named.
    ),
    Mutant(
        "x06-04: lm_loss gathers -log(softmax(logits)) at the targets",
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
        {
            "test_lm_loss": "the loss takes the log of the softmax's probabilities",
        },
        # Issue 40's eleventh blind corpus, graded blind on 48fe40c: named.
    ),
    Mutant(
        "x06-05: sample never puts the model in eval mode",
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
                    for _ in range(max_new_tokens):
                        context = idx[:, -model.block_size :]
                        logits = model(context)[:, -1, :] / temperature  # (B, V)
                        if top_k is not None:
                            kth = torch.topk(logits, min(top_k, logits.shape[-1]), dim=-1).values[:, -1:]
                            logits = logits.masked_fill(logits < kth, float("-inf"))
                        probs = torch.softmax(logits, dim=-1)
                        next_id = torch.multinomial(probs, 1, generator=generator)  # (B, 1)
                        idx = torch.cat([idx, next_id], dim=1)
                    return idx
                '''
            )
        },
        {
            "test_sample": "the model was in training mode when sample called it",
        },
        # Issue 40's eleventh blind corpus, graded blind on 48fe40c: named.
    ),
    Mutant(
        "aa06-01: make_blocks counts len(ids) // block_size blocks",
        A,
        {
            "make_blocks": Rewrite(
                r'''
                def make_blocks(ids: Tensor, block_size: int) -> tuple[Tensor, Tensor]:
                    """Cut ids (N,) into inputs x and targets y, both (n_blocks, block_size).

                    y[i, t] is x[i, t] one step later in the text.
                    """
                    n_blocks = len(ids) // block_size
                    n = n_blocks * block_size
                    x = ids[:n].reshape(n_blocks, block_size)
                    y = ids[1 : n + 1].reshape(n_blocks, block_size)
                    return x, y
                '''
            )
        },
        {
            "test_make_blocks": "n_blocks counts len(ids) // block_size blocks",
        },
        # Issue 40's thirteenth blind corpus, graded blind on 8b5375e: named.
    ),
    Mutant(
        "aa06-02: causal_head scales by head_size ** 1/2, that is head_size / 2",
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
                        self.head_size = head_size
                        self.query = nn.Linear(d_model, head_size, bias=False)
                        self.key = nn.Linear(d_model, head_size, bias=False)
                        self.value = nn.Linear(d_model, head_size, bias=False)
                        self.register_buffer("mask", causal_mask(block_size), persistent=False)

                    def forward(self, x: Tensor) -> Tensor:
                        """x (B, L, d_model), L <= block_size -> (B, L, head_size)."""
                        L = x.shape[1]
                        q, k, v = self.query(x), self.key(x), self.value(x)
                        scale = self.head_size ** 1/2  # sqrt(d_k)
                        scores = q @ k.transpose(-2, -1) / scale  # (B, L, L)
                        scores = scores.masked_fill(~self.mask[:L, :L], float("-inf"))
                        return torch.softmax(scores, dim=-1) @ v
                '''
            )
        },
        {
            "test_causal_head": "the head's output differs from softmax(q kᵀ / √head_size, future keys at -inf) v",
        },
        # Issue 40's thirteenth blind corpus, graded blind on 8b5375e: counterexample only;
        # test_multihead_causal waived as the answer cell it uses (not charged again).
        not_told=(
            "√d_model instead of √head_size",
            "divided by head_size instead of √head_size",
            "scores are not scaled",
        ),
        charged_once=True,
    ),
    Mutant(
        "aa06-03: the heads stacked on a last axis and flattened, their features interleaved",
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
                        head_size = d_model // num_heads
                        self.heads = nn.ModuleList(
                            [CausalSelfAttentionHead(d_model, head_size, block_size) for _ in range(num_heads)]
                        )
                        self.proj = nn.Linear(d_model, d_model)

                    def forward(self, x: Tensor) -> Tensor:
                        """x (B, L, d_model), L <= block_size -> (B, L, d_model)."""
                        # (B, L, head_size, H) -> (B, L, d_model) in one reshape, no Python concatenation
                        out = torch.stack([head(x) for head in self.heads], dim=-1).flatten(-2)
                        return self.proj(out)
                '''
            )
        },
        {
            "test_multihead_causal": "the heads' outputs are interleaved, not concatenated (head after head)",
        },
        # Issue 40's thirteenth blind corpus, graded blind on 8b5375e: named.
    ),
    Mutant(
        "aa06-04: CharLM's blocks one Block repeated, nn.ModuleList([Block(...)] * num_layers)",
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
                            [Block(d_model, num_heads, block_size, dropout)] * num_layers
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
        {
            "test_charlm": "self.blocks holds one Block object more than once",
        },
        # Issue 40's thirteenth blind corpus, graded blind on 8b5375e: named.
    ),
    Mutant(
        "aa06-05: sample crops the context to the first block_size ids",
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
                        context = idx[:, : model.block_size]  # the model sees at most block_size ids
                        logits = model(context)[:, -1, :] / temperature  # (B, V)
                        if top_k is not None:
                            k = min(top_k, logits.shape[-1])
                            kth = torch.topk(logits, k, dim=-1).values[:, -1:]  # (B, 1)
                            logits = logits.masked_fill(logits < kth, float("-inf"))
                        probs = torch.softmax(logits, dim=-1)
                        next_id = torch.multinomial(probs, 1, generator=generator)  # (B, 1)
                        idx = torch.cat([idx, next_id], dim=1)
                    return idx
                '''
            )
        },
        {
            "test_sample": "the model is fed the FIRST block_size ids of the sequence",
        },
        # Issue 40's thirteenth blind corpus, graded blind on 8b5375e: named.
    ),
    Mutant(
        "ab06-01: make_blocks counts len(ids) // block_size blocks, the - 1 dropped",
        A,
        {
            "make_blocks": Rewrite(
                r'''
                def make_blocks(ids: Tensor, block_size: int) -> tuple[Tensor, Tensor]:
                    """Cut ids (N,) into inputs x and targets y, both (n_blocks, block_size).

                    y[i, t] is x[i, t] one step later in the text.
                    """
                    n_blocks = len(ids) // block_size
                    n = n_blocks * block_size
                    x = ids[:n].reshape(n_blocks, block_size)
                    y = ids[1 : n + 1].reshape(n_blocks, block_size)
                    return x, y
                '''
            )
        },
        {
            "test_make_blocks": "n_blocks counts len(ids) // block_size blocks",
        },
        # Issue 40's thirteenth blind corpus, graded blind on 8b5375e: named.
    ),
    Mutant(
        "ab06-02: causal_head by hand, the scores divided by sqrt(x.shape[-1]), d_model",
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
                        B, L, d = x.shape
                        q, k, v = self.query(x), self.key(x), self.value(x)
                        scores = q @ k.transpose(-2, -1) / math.sqrt(d)  # (B, L, L)
                        scores = scores.masked_fill(~self.mask[:L, :L], float("-inf"))
                        return torch.softmax(scores, dim=-1) @ v
                '''
            )
        },
        {
            "test_causal_head": "scores are scaled by √d_model instead of √head_size",
        },
        # Issue 40's thirteenth blind corpus, graded blind on 8b5375e: named; test_multihead_causal
        # waived as the answer cell it uses (not charged again).
        charged_once=True,
    ),
    Mutant(
        "ab06-03: lm_loss as -log(softmax(logits)) gathered at the targets",
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
        {
            "test_lm_loss": "the loss takes the log of the softmax's probabilities",
        },
        # Issue 40's thirteenth blind corpus, graded blind on 8b5375e: named.
    ),
    Mutant(
        "ab06-04: sample draws with torch.multinomial without the caller's generator",
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
                        context = idx[:, -model.block_size :]
                        logits = model(context)[:, -1, :] / temperature  # (B, V)
                        if top_k is not None:
                            k = min(top_k, logits.shape[-1])
                            kth = torch.topk(logits, k, dim=-1).values[:, -1:]  # (B, 1)
                            logits = logits.masked_fill(logits < kth, float("-inf"))
                        probs = torch.softmax(logits, dim=-1)
                        next_id = torch.multinomial(probs, 1)  # (B, 1)
                        idx = torch.cat([idx, next_id], dim=1)
                    return idx
                '''
            )
        },
        {
            "test_sample": "the draws follow the global random state, not `generator`",
        },
        # Issue 40's thirteenth blind corpus, graded blind on 8b5375e: named.
    ),
    Mutant(
        "ab06-05: penalise_repeats divides every seen logit by 1 + strength",
        A,
        {
            "penalise_repeats": Rewrite(
                r'''
                def penalise_repeats(logits: Tensor, context: Tensor, strength: float) -> Tensor:
                    """Next-id logits (B, V), the ids in each row's context (B, L) made less likely."""
                    # My rule: divide the logit of every id seen in the row's context by (1 + strength),
                    # as in the CTRL paper's repetition penalty: a seen id's logit shrinks towards 0,
                    # so it is less likely, and strength 0 divides by 1 and changes nothing. Ids not in
                    # the context keep their logits, so their odds are untouched.
                    seen = torch.zeros(logits.shape, dtype=torch.bool, device=logits.device)
                    seen = seen.scatter(1, context.to(logits.device), True)
                    out = logits.clone()
                    out[seen] = out[seen] / (1.0 + strength)
                    return out
                '''
            )
        },
        {
            "test_penalise_repeats": "a negative logit divided by it rises towards 0",
        },
        # Issue 40's thirteenth blind corpus, graded blind on 8b5375e: named.
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
    Mutant(
        "n06-06: a sign-aware multiplicative penalty (CTRL)",
        A,
        {
            "penalise_repeats": Rewrite(
                r'''
                def penalise_repeats(logits: Tensor, context: Tensor, strength: float) -> Tensor:
                    """Next-id logits (B, V), the ids in each row's context (B, L) made less likely."""
                    # Rule (as in the CTRL paper, made sign-aware): a seen id's logit is divided by
                    # (1 + strength) when it is positive and multiplied by (1 + strength) when it is
                    # negative, so it always moves down. Counts do not matter, only "seen or not".
                    # Unseen logits are untouched (their odds stay), strength 0 is the identity.
                    factor = 1.0 + strength
                    seen = torch.zeros_like(logits, dtype=torch.bool).scatter(1, context, True)
                    lowered = torch.where(logits > 0, logits / factor, logits * factor)
                    return torch.where(seen, lowered, logits)
                '''
            )
        },
        # Issue 40's seventh blind corpus, graded blind on 451e037: correct-full.
    ),
    Mutant(
        "p06-06: a sign-aware multiplicative penalty by scatter and torch.where",
        A,
        {
            "penalise_repeats": Rewrite(
                r'''
                # kind: correct
                # grade_id: penalise_repeats
                # alternative: the CTRL-style multiplicative rule made sign-aware: a seen id's logit is divided by (1 + strength) when positive and multiplied by (1 + strength) when negative; built with a per-row scatter and torch.where.
                # evidence: tools/ev06.py: 200 random batches (V 7, strengths 0..4): seen ids' mass never rises, unseen odds kept, strength 0 = identity, monotone in strength, input untouched, finite, also for a context holding every id.
                def penalise_repeats(logits: Tensor, context: Tensor, strength: float) -> Tensor:
                    """Next-id logits (B, V), the ids in each row's context (B, L) made less likely."""
                    # My rule (CTRL's penalty, made safe for negative logits): with f = 1 + strength,
                    # a seen id's logit z becomes z / f if z > 0 and z * f if z <= 0. Either way it
                    # moves down (or stays at 0), so the seen ids can only lose probability; unseen
                    # logits are untouched, so their odds among themselves stay; f = 1 at strength
                    # 0; a larger f moves every seen logit further down. Per-row scatter keeps
                    # rows apart; all values stay finite for finite logits.
                    factor = 1.0 + strength
                    seen = torch.zeros(logits.shape, dtype=torch.bool, device=logits.device)
                    seen = seen.scatter(1, context, torch.ones_like(context, dtype=torch.bool))
                    penalised = torch.where(logits > 0, logits / factor, logits * factor)
                    return torch.where(seen, penalised, logits)
                '''
            )
        },
        # Issue 40's seventh blind corpus, graded blind on 451e037: correct-full.
    ),
    Mutant(
        "q06-06: penalise_repeats divides the positive seen logits, multiplies the negative ones",
        A,
        {
            "penalise_repeats": Rewrite(
                r'''
                def penalise_repeats(logits: Tensor, context: Tensor, strength: float) -> Tensor:
                    """Next-id logits (B, V), the ids in each row's context (B, L) made less likely."""
                    # Design (as in CTRL, with factor 1 + strength): a seen id's logit is divided by
                    # 1 + strength if it is positive and multiplied by it if it is negative, so it
                    # always moves down (dividing a negative logit would raise it). Unseen logits stay
                    # as they are, so their odds do not change; strength 0 gives factor 1.
                    factor = 1.0 + strength
                    seen = torch.zeros(logits.shape, dtype=torch.bool, device=logits.device)
                    seen[torch.arange(logits.shape[0], device=logits.device).unsqueeze(1), context] = True
                    lowered = torch.where(logits > 0, logits / factor, logits * factor)
                    return torch.where(seen, lowered, logits)
                '''
            )
        },
        # Issue 40's eighth blind corpus, graded blind on 47d54b0: correct-full.
    ),
    Mutant(
        "r06-06: make_blocks with Tensor.unfold",
        A,
        {
            "make_blocks": Rewrite(
                r'''
                # id: r06-06
                # kind: correct
                # grade_id: make_blocks
                # alternative: Tensor.unfold: windows of block_size + 1 ids with step block_size, inputs = the window without its last id, targets = without its first.
                # evidence: my experiment (scripts ev0N.py, output ev0N.txt in /work/fresh-corpus8b):
                #   r06-06: unfold version equals the slice version for lengths 3..100 and block sizes 1..8 (empty cases included): True
                # public checks: passes every public check of the notebook
                def make_blocks(ids: Tensor, block_size: int) -> tuple[Tensor, Tensor]:
                    """Cut ids (N,) into inputs x and targets y, both (n_blocks, block_size).

                    y[i, t] is x[i, t] one step later in the text.
                    """
                    # windows of block_size + 1 ids, starting every block_size ids: there are
                    # (len(ids) - 1) // block_size of them, and each holds a block and its targets
                    if len(ids) < block_size + 1:  # not even one block: two empty (0, block_size)
                        empty = ids[:0].reshape(0, block_size)
                        return empty, empty.clone()
                    windows = ids.unfold(0, block_size + 1, block_size)
                    return windows[:, :-1].contiguous(), windows[:, 1:].contiguous()
                '''
            )
        },
        # Issue 40's eighth blind corpus, graded blind on 47d54b0: correct-full.
    ),
    Mutant(
        "s06-06: a CTRL-style multiplicative repetition penalty",
        A,
        {
            "penalise_repeats": Rewrite(
                r'''
                def penalise_repeats(logits: Tensor, context: Tensor, strength: float) -> Tensor:
                    """Next-id logits (B, V), the ids in each row's context (B, L) made less likely."""
                    # My rule (after CTRL): factor = 1 + strength. A seen id's logit is divided by the
                    # factor when positive and multiplied by it when negative, so it always moves
                    # down (never up, whatever its sign); unseen logits are untouched, so their odds
                    # stay. Strength 0 is factor 1, the identity; a larger factor moves seen logits
                    # further down. Each row uses only its own context (scatter along dim 1).
                    factor = 1.0 + strength
                    seen = torch.zeros(logits.shape, dtype=torch.bool, device=logits.device)
                    seen = seen.scatter(1, context.long().to(logits.device), True)
                    penalised = torch.where(logits > 0, logits / factor, logits * factor)
                    return torch.where(seen, penalised, logits)
                '''
            )
        },
        # Issue 40's ninth blind corpus, graded blind on feb0b2e: correct-full.
    ),
    Mutant(
        "t06-06: lm_loss by log_softmax and gather",
        A,
        {
            "lm_loss": Rewrite(
                r'''
                def lm_loss(logits: Tensor, targets: Tensor) -> Tensor:
                    """Mean cross-entropy of logits (B, L, V) against targets (B, L) -> scalar.

                    The mean is over all B*L positions.
                    """
                    log_probs = torch.log_softmax(logits, dim=-1)  # stable: subtracts the row max
                    picked = log_probs.gather(-1, targets.unsqueeze(-1)).squeeze(-1)  # (B, L)
                    return -picked.mean()
                '''
            )
        },
        # Issue 40's ninth blind corpus, graded blind on feb0b2e: correct-full.
    ),
    Mutant(
        "v06-06: penalise_repeats: CTRL-style, positive seen logits divided by 1 + strength",
        A,
        {
            "penalise_repeats": Rewrite(
                r'''
                def penalise_repeats(logits: Tensor, context: Tensor, strength: float) -> Tensor:
                    """Next-id logits (B, V), the ids in each row's context (B, L) made less likely."""
                    # Rule (Keskar et al., CTRL): theta = 1 + strength; a seen id's logit is divided by
                    # theta when positive and multiplied by theta when negative, so it always moves down
                    # (dividing a negative logit would raise it). Unseen logits are untouched, so their
                    # odds stay; theta = 1 changes nothing; a larger theta moves seen logits further down.
                    theta = 1.0 + float(strength)
                    seen = F.one_hot(context, logits.shape[-1]).amax(dim=1).bool()  # (B, V)
                    penalised = torch.where(logits > 0, logits / theta, logits * theta)
                    return torch.where(seen, penalised, logits)
                '''
            )
        },
        # Issue 40's tenth blind corpus, graded blind on 60c32e8: correct-full.
    ),
    Mutant(
        "w06-06: penalise_repeats, CTRL-style: a seen positive logit divided, a negative one multiplied",
        A,
        {
            "penalise_repeats": Rewrite(
                r'''
                def penalise_repeats(logits: Tensor, context: Tensor, strength: float) -> Tensor:
                    """Next-id logits (B, V), the ids in each row's context (B, L) made less likely."""
                    # Rule (as in CTRL, Keskar et al. 2019, with theta = 1 + strength): a seen id's
                    # logit moves down whatever its sign, positive ones divided by theta, negative ones
                    # multiplied by it. Unseen logits do not move, so their odds stay; theta = 1 at
                    # strength 0 changes nothing, and a larger theta only pushes seen logits lower.
                    theta = 1.0 + strength
                    seen = torch.zeros(logits.shape, dtype=torch.bool, device=logits.device)
                    seen[torch.arange(logits.shape[0], device=logits.device)[:, None], context] = True
                    penalised = torch.where(logits > 0, logits / theta, logits * theta)
                    return torch.where(seen, penalised, logits)
                '''
            )
        },
        # Issue 40's eleventh blind corpus, graded blind on 48fe40c: correct-full.
    ),
    Mutant(
        "x06-06: a frequency penalty, strength * log(1 + count), counted with one_hot",
        A,
        {
            "penalise_repeats": Rewrite(
                r'''
                def penalise_repeats(logits: Tensor, context: Tensor, strength: float) -> Tensor:
                    """Next-id logits (B, V), the ids in each row's context (B, L) made less likely."""
                    # Design: a frequency penalty that saturates: an id seen c times in the row's context
                    # loses strength * log(1 + c) from its logit (c = 0: nothing). Subtracting works for
                    # negative logits too, the unseen ids are not touched (same odds among them), 0 is
                    # off, and the penalty grows with the strength. Rows are handled independently.
                    V = logits.shape[-1]
                    counts = F.one_hot(context.long(), V).sum(dim=1).to(logits.dtype)  # (B, V)
                    penalty = strength * torch.log1p(counts)
                    return torch.where(counts > 0, logits - penalty, logits)
                '''
            )
        },
        # Issue 40's eleventh blind corpus, graded blind on 48fe40c: correct-full.
    ),
]
