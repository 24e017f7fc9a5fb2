"""Mutants of 06_char_lm.

Every mutant re-runs the whole notebook, training included, so the list is short on purpose.
"""

from tests.mutants import Mutant

A = "06_char_lm"

HEAD_INIT = """
class CausalSelfAttentionHead(nn.Module):
    def __init__(self, d_model, head_size, block_size):
        super().__init__()
        self.query = nn.Linear(d_model, head_size, bias=False)
        self.key = nn.Linear(d_model, head_size, bias=False)
        self.value = nn.Linear(d_model, head_size, bias=False)
        self.register_buffer("mask", causal_mask(block_size), persistent=False)

"""

SAMPLE_HEAD = """
@torch.no_grad()
def sample(model, idx, max_new_tokens, temperature=1.0, top_k=None, generator=None):
    model.eval()
    for _ in range(max_new_tokens):
        context = idx[:, -model.block_size :]
        logits = model(context)[:, -1, :] / temperature
"""

SAMPLE_TAIL = """
        probs = torch.softmax(logits, dim=-1)
        next_id = torch.multinomial(probs, 1, generator=generator)
        idx = torch.cat([idx, next_id], dim=1)
    return idx
"""

WRONG = [
    Mutant(
        "targets not shifted by one",
        A,
        {
            "make_blocks": """
def make_blocks(ids, block_size):
    n_blocks = (len(ids) - 1) // block_size
    x = ids[: n_blocks * block_size].reshape(n_blocks, block_size)
    y = ids[: n_blocks * block_size].reshape(n_blocks, block_size)
    return x, y
"""
        },
        {"test_make_blocks": "not shifted by one"},
    ),
    Mutant(
        "transposed causal mask: the model sees the future",
        A,
        {
            "causal_head": HEAD_INIT
            + """
    def forward(self, x):
        length = x.shape[1]
        q, k, v = self.query(x), self.key(x), self.value(x)
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        scores = scores.masked_fill(~self.mask[:length, :length].T, float("-inf"))
        return torch.softmax(scores, dim=-1) @ v
"""
        },
        {
            "test_causal_head": "the causal mask is transposed",
            "test_multihead_causal": "future characters change earlier outputs",
            "test_charlm_causality": "future characters change earlier logits",
            "test_trained_loss": "future characters change earlier logits",
        },
    ),
    Mutant(
        "sampling ignores top_k",
        A,
        {"sample": SAMPLE_HEAD + SAMPLE_TAIL},
        {"test_sample": "top_k is ignored"},
    ),
    Mutant(
        "lm_loss summed over the positions",
        A,
        {
            "lm_loss": """
def lm_loss(logits, targets):
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1), reduction="sum")
"""
        },
        {"test_lm_loss": "summed over the positions"},
    ),
]

CORRECT = [
    Mutant(
        "float tril buffer compared with 0; fused multi-head forward with F.scaled_dot_product_attention",
        A,
        {
            "causal_head": """
class CausalSelfAttentionHead(nn.Module):
    def __init__(self, d_model, head_size, block_size):
        super().__init__()
        self.key = nn.Linear(d_model, head_size, bias=False)
        self.query = nn.Linear(d_model, head_size, bias=False)
        self.value = nn.Linear(d_model, head_size, bias=False)
        self.register_buffer("mask", torch.tril(torch.ones(block_size, block_size)), persistent=False)

    def forward(self, x):
        B, T, C = x.shape
        k = self.key(x)
        q = self.query(x)
        wei = q @ k.transpose(-2, -1) * k.shape[-1] ** -0.5
        wei = wei.masked_fill(self.mask[:T, :T] == 0, float("-inf"))
        wei = F.softmax(wei, dim=-1)
        return wei @ self.value(x)
""",
            "multihead_causal": """
class MultiHeadCausalAttention(nn.Module):
    def __init__(self, d_model, num_heads, block_size):
        super().__init__()
        self.heads = nn.ModuleList([CausalSelfAttentionHead(d_model, d_model // num_heads, block_size) for _ in range(num_heads)])
        self.proj = nn.Linear(d_model, d_model)

    def forward(self, x):
        # all heads at once: stack their projections into (H, head_size, d_model)
        B, L, _ = x.shape
        wq, wk, wv = (torch.stack([getattr(h, n).weight for h in self.heads]) for n in ("query", "key", "value"))
        q, k, v = (torch.einsum("bld,hkd->bhlk", x, w) for w in (wq, wk, wv))
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True)  # (B, H, L, head_size)
        return self.proj(out.transpose(1, 2).reshape(B, L, -1))
""",
        },
    ),
    Mutant(
        "package attention in the head; transpose-based loss; sort-based top_k; narrow/view blocks",
        A,
        {
            "make_blocks": """
def make_blocks(ids, block_size):
    n = (ids.numel() - 1) // block_size
    x = ids.narrow(0, 0, n * block_size).view(n, block_size)
    y = ids.narrow(0, 1, n * block_size).view(n, block_size)
    return x, y
""",
            "causal_head": HEAD_INIT
            + """
    def forward(self, x):
        L = x.size(1)
        out, _ = scaled_dot_product_attention(self.query(x), self.key(x), self.value(x), self.mask[:L, :L])
        return out
""",
            "lm_loss": """
def lm_loss(logits, targets):
    # cross_entropy takes the classes in dim 1: (B, V, L) against (B, L)
    return F.cross_entropy(logits.transpose(1, 2), targets)
""",
            "sample": """
@torch.no_grad()
def sample(model, idx, max_new_tokens, temperature=1.0, top_k=None, generator=None):
    model.eval()
    out = idx
    for _ in range(max_new_tokens):
        logits = model(out[:, -model.block_size :])[:, -1].double() / temperature
        if top_k is not None:
            ranked, _ = torch.sort(logits, dim=-1, descending=True)
            cutoff = ranked[:, top_k - 1 : top_k]
            logits = torch.where(logits >= cutoff, logits, torch.full_like(logits, -math.inf))
        probs = F.softmax(logits, dim=-1)
        out = torch.cat((out, torch.multinomial(probs, num_samples=1, generator=generator)), dim=1)
    return out
""",
        },
    ),
]
