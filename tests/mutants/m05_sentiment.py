"""Mutants of 05_sentiment.

Every mutant re-runs the whole notebook, training included, so the list is short on purpose.
"""

from tests.mutants import Mutant

A = "05_sentiment"

MASKED_MEAN = """
def masked_mean(hidden, token_ids, pad_id):
{body}
"""

CORRECT_MEAN = """
    keep = (token_ids != pad_id).unsqueeze(-1).to(hidden.dtype)
    return (hidden * keep).sum(dim=1) / keep.sum(dim=1).clamp(min=1.0)
"""

MODEL_INIT = """
class SentimentModel(nn.Module):
    def __init__(self, vocab_size, d_model=64, num_heads=4, num_layers=2, d_ff=128,
                 num_classes=2, max_len=64, pad_id=0, dropout=0.1):
        super().__init__()
        self.pad_id = pad_id
        self.embed = TokenEmbedding(vocab_size, d_model, padding_idx=pad_id)
        self.position = SinusoidalPositionalEncoding(d_model, max_len, dropout)
        self.encoder = TransformerEncoder(num_layers, d_model, num_heads, d_ff, dropout)
        self.classifier = nn.Linear(d_model, num_classes)

"""


def model_cell(forward: str) -> str:
    """A SentimentModel answer cell: the solution's __init__, then ``forward`` (indented by 4)."""
    return MODEL_INIT + forward


WRONG = [
    Mutant(
        "mean pooling over padding",
        A,
        {"masked_mean": MASKED_MEAN.format(body="    return hidden.mean(dim=1)")},
        {
            "test_masked_mean": "pooling includes padding",
            "test_padding_invariance": "pooling includes padding",
        },
    ),
    Mutant(
        "pad id hard-coded to 0 in masked_mean",
        A,
        {"masked_mean": MASKED_MEAN.format(body=CORRECT_MEAN.replace("!= pad_id", "!= 0"))},
        {
            "test_masked_mean": "hard-coded to 0",
            "test_padding_invariance": "hard-coded to 0",
        },
    ),
    Mutant(
        "no padding mask in attention",
        A,
        {
            "sentiment_model": model_cell("""
    def forward(self, token_ids, return_attention=False):
        hidden = self.position(self.embed(token_ids))
        hidden, weights = self.encoder(hidden)
        logits = self.classifier(masked_mean(hidden, token_ids, self.pad_id))
        return (logits, weights) if return_attention else logits
""")
        },
        {
            "test_sentiment_model": "no padding mask",
            "test_padding_invariance": "no padding mask",
        },
    ),
    Mutant(
        # A forward pass under no_grad makes loss.backward() raise in the training cell, so the
        # model keeps its initial weights: the realistic way a submission arrives untrained.
        "forward under torch.no_grad(), so the model is never trained",
        A,
        {
            "sentiment_model": model_cell("""
    @torch.no_grad()
    def forward(self, token_ids, return_attention=False):
        hidden = self.position(self.embed(token_ids))
        hidden, weights = self.encoder(hidden, padding_mask(token_ids, self.pad_id))
        logits = self.classifier(masked_mean(hidden, token_ids, self.pad_id))
        return (logits, weights) if return_attention else logits
""")
        },
        {
            "test_heldout_accuracy": "looks untrained",
            "test_heldout_contrast": "looks untrained",
        },
    ),
]

CORRECT = [
    Mutant(
        "CLS pooling instead of mean pooling",
        A,
        {
            "sentiment_model": model_cell("""
    def forward(self, token_ids, return_attention=False):
        hidden = self.position(self.embed(token_ids))
        hidden, weights = self.encoder(hidden, padding_mask(token_ids, self.pad_id))
        logits = self.classifier(hidden[:, 0])  # the <cls> token's output
        return (logits, weights) if return_attention else logits
""")
        },
    ),
    Mutant(
        "einsum masked mean with torch.where; a hand-built key mask",
        A,
        {
            "masked_mean": MASKED_MEAN.format(
                body="""
    keep = token_ids.ne(pad_id).to(hidden.dtype)  # (B, L)
    total = torch.einsum("bl,bld->bd", keep, hidden)
    count = keep.sum(dim=-1, keepdim=True)
    return torch.where(count > 0, total / count.clamp_min(1.0), torch.zeros_like(total))
"""
            ),
            "sentiment_model": model_cell("""
    def forward(self, token_ids, return_attention=False):
        keys = (token_ids != self.pad_id)[:, None, :]  # (B, 1, L): True = may attend
        x = self.embed(token_ids)
        x = self.position(x)
        x, maps = self.encoder(x, mask=keys)
        out = self.classifier(masked_mean(x, token_ids, self.pad_id))
        if return_attention:
            return out, maps
        return out
"""),
        },
    ),
]
