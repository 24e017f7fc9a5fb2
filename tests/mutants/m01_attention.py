"""Mutants of 01_attention."""

from tests.mutants import Mutant

A = "01_attention"

ATTENTION_HEAD = """
def attention(q, k, v, mask=None, scale=True):
"""


def attention_cell(body: str) -> str:
    """An `attention` answer cell whose body is ``body`` (already indented by 4)."""
    return ATTENTION_HEAD + body


CORRECT_MASKING = """
    if mask is None:
        weights = torch.softmax(scores, dim=-1)
        return weights @ v, weights
    mask = mask.bool()
    visible = mask.any(dim=-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~visible, 0.0)
    weights = torch.softmax(scores, dim=-1).masked_fill(~visible, 0.0)
    return weights @ v, weights
"""

WRONG = [
    Mutant(
        "softmax over queries",
        A,
        {
            "attention": attention_cell("""
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]) if scale else q @ k.transpose(-2, -1)
    if mask is not None:
        scores = scores.masked_fill(~mask.bool(), float("-inf"))
    weights = torch.nan_to_num(torch.softmax(scores, dim=-2))
    return weights @ v, weights
""")
        },
        {"test_attention_rows_sum_to_one": "over queries, not keys"},
    ),
    Mutant(
        "no scaling",
        A,
        {
            "attention": attention_cell(
                """
    scores = q @ k.transpose(-2, -1)
"""
                + CORRECT_MASKING
            )
        },
        {"test_attention_scaling": "not scaled"},
    ),
    Mutant(
        "scaled by d_k",
        A,
        {
            "attention": attention_cell(
                """
    scores = q @ k.transpose(-2, -1)
    if scale:
        scores = scores / q.shape[-1]
"""
                + CORRECT_MASKING
            )
        },
        {"test_attention_scaling": "by d_k instead of √d_k"},
    ),
    Mutant(
        "scaled by sqrt(L_k)",
        A,
        {
            "attention": attention_cell(
                """
    scores = q @ k.transpose(-2, -1)
    if scale:
        scores = scores / math.sqrt(k.shape[-2])
"""
                + CORRECT_MASKING
            )
        },
        {"test_attention_scaling": "√L_k"},
    ),
    Mutant(
        "mask polarity reversed",
        A,
        {
            "attention": attention_cell(
                """
    scores = q @ k.transpose(-2, -1)
    if scale:
        scores = scores / math.sqrt(q.shape[-1])
    if mask is not None:
        mask = ~mask.bool()
"""
                + CORRECT_MASKING
            )
        },
        {"test_attention_parity": "polarity reversed"},
    ),
    Mutant(
        "masking with -100",
        A,
        {
            "attention": attention_cell("""
    scores = q @ k.transpose(-2, -1)
    if scale:
        scores = scores / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask.bool(), -100.0)
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights
""")
        },
        {"test_attention_parity": "finite number"},
    ),
    Mutant(
        "NaN on fully masked rows",
        A,
        {
            "attention": attention_cell("""
    scores = q @ k.transpose(-2, -1)
    if scale:
        scores = scores / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask.bool(), float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights
""")
        },
        {"test_attention_fully_masked_row": "NaN"},
    ),
    Mutant(
        "calls the reference",
        A,
        {
            "attention": attention_cell(
                """
    mask = None if mask is None else mask.bool()
    scale_value = None if scale else 1.0
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=scale_value)
    scores = q @ k.transpose(-2, -1) * (q.shape[-1] ** -0.5 if scale else 1.0)
"""
                + CORRECT_MASKING.replace("return weights @ v, weights", "return out, weights", 1)
            )
        },
        {"test_attention_rows_sum_to_one": "calls F.scaled_dot_product_attention"},
    ),
    Mutant(
        "causal mask without the diagonal",
        A,
        {
            "causal_mask": """
def causal_mask(n):
    return torch.ones(n, n, dtype=torch.bool).tril(-1)
"""
        },
        {"test_causal_mask": "hides the diagonal"},
    ),
    Mutant(
        "causal mask hard-coded for the public example",
        A,
        {
            "causal_mask": """
def causal_mask(n):
    return torch.tensor([[1, 0, 0, 0], [1, 1, 0, 0], [1, 1, 1, 0], [1, 1, 1, 1]]).bool()
"""
        },
        {"test_causal_mask": "must be an (1, 1) tensor"},
    ),
    Mutant(
        "naive exp in NumPy",
        A,
        {
            "attention_numpy": """
def attention_numpy(Q, K, V):
    scores = Q @ K.T / np.sqrt(Q.shape[-1])
    weights = np.exp(scores) / np.exp(scores).sum(axis=-1, keepdims=True)
    return weights @ V, weights
"""
        },
        {"test_attention_numpy": "overflows"},
    ),
]

CORRECT = [
    Mutant(
        "einsum",
        A,
        {
            "attention": attention_cell(
                """
    scores = torch.einsum("...qd,...kd->...qk", q, k)
    if scale:
        scores = scores / q.shape[-1] ** 0.5
"""
                + CORRECT_MASKING.replace(
                    "return weights @ v, weights",
                    'return torch.einsum("...qk,...kd->...qd", weights, v), weights',
                )
            )
        },
    ),
    Mutant(
        "explicit loop over queries",
        A,
        {
            "attention": attention_cell("""
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
""")
        },
    ),
    Mutant(
        "float64 inside",
        A,
        {
            "attention": attention_cell(
                """
    dtype = q.dtype
    q, k, v = q.double(), k.double(), v.double()
    scores = q @ k.transpose(-2, -1)
    if scale:
        scores = scores / math.sqrt(q.shape[-1])
"""
                + CORRECT_MASKING.replace(
                    "return weights @ v, weights",
                    "return (weights @ v).to(dtype), weights.to(dtype)",
                )
            )
        },
    ),
    Mutant(
        "finfo.min and explicit zeroing",
        A,
        {
            "attention": attention_cell("""
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
""")
        },
    ),
    Mutant(
        "numpy via logsumexp, causal mask from triu",
        A,
        {
            "attention_numpy": """
def attention_numpy(Q, K, V):
    scores = (Q @ K.T) / np.sqrt(K.shape[1])
    top = scores.max(axis=1, keepdims=True)
    log_norm = top + np.log(np.exp(scores - top).sum(axis=1, keepdims=True))
    weights = np.exp(scores - log_norm)
    return weights @ V, weights
""",
            "causal_mask": """
def causal_mask(n):
    return ~torch.ones(n, n, dtype=torch.bool).triu(1)
""",
        },
    ),
]
