"""Issue 40's blind corpus for 05_sentiment (see tests/mutants/blind/__init__.py)."""

from tests.mutants import Mutant, Rewrite

A = "05_sentiment"

WRONG = [
    Mutant(
        "g05-07: SentimentModel pools the last position, hidden[:, -1]",
        A,
        {
            "sentiment_model": Rewrite(
                r'''
                class SentimentModel(nn.Module):
                    """Token ids (B, L) -> class logits (B, num_classes)."""

                    def __init__(
                        self,
                        vocab_size: int,
                        d_model: int = 64,
                        num_heads: int = 4,
                        num_layers: int = 2,
                        d_ff: int = 128,
                        num_classes: int = 2,
                        max_len: int = 64,
                        pad_id: int = 0,
                        dropout: float = 0.1,
                    ):
                        super().__init__()
                        self.pad_id = pad_id
                        self.embed = TokenEmbedding(vocab_size, d_model, padding_idx=pad_id)
                        self.position = SinusoidalPositionalEncoding(d_model, max_len, dropout)
                        self.encoder = TransformerEncoder(num_layers, d_model, num_heads, d_ff, dropout)
                        self.classifier = nn.Linear(d_model, num_classes)

                    def forward(self, token_ids: Tensor, return_attention: bool = False):
                        mask = padding_mask(token_ids, self.pad_id)
                        hidden, weights = self.encoder(self.position(self.embed(token_ids)), mask)
                        logits = self.classifier(hidden[:, -1])
                        if return_attention:
                            return logits, weights
                        return logits
                '''
            )
        },
        {
            "test_sentiment_model": "the encoder's output at the last position, hidden[:, -1]",
            "test_padding_invariance": "the encoder's output at the last position, hidden[:, -1]",
        },
    ),
    Mutant(
        "g05-11: train_step returns the loss of a second forward pass after the update",
        A,
        {
            "training_step": Rewrite(
                r'''
                def make_optimizer(
                    model: nn.Module, lr: float, weight_decay: float
                ) -> torch.optim.Optimizer:
                    """AdamW over every parameter of model."""
                    return torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=weight_decay)


                def train_step(
                    model: nn.Module,
                    inputs: Tensor,
                    labels: Tensor,
                    optimizer: torch.optim.Optimizer,
                    max_grad_norm: float,
                    scheduler=None,
                ) -> float:
                    """One update on inputs (B, L) and labels (B,); returns the pre-update loss."""
                    model.train()
                    loss = F.cross_entropy(model(inputs), labels)
                    optimizer.zero_grad()
                    loss.backward()
                    nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
                    optimizer.step()
                    if scheduler is not None:
                        scheduler.step()
                    with torch.no_grad():
                        return F.cross_entropy(model(inputs), labels).item()
                '''
            )
        },
        {"test_train_step": "train_step returns the loss of a second forward pass"},
    ),
    Mutant(
        "i05-04: masked_mean: the sum over every position minus the pads' sum",
        A,
        {
            "masked_mean": Rewrite(
                r'''
                def masked_mean(hidden: Tensor, token_ids: Tensor, pad_id: int) -> Tensor:
                    """Mean of hidden (B, L, d_model) over the non-padding positions -> (B, d_model).

                    A position is padding where token_ids (B, L) == pad_id.
                    """
                    pad = (token_ids == pad_id).unsqueeze(-1).to(hidden.dtype)  # (B, L, 1)
                    total = hidden.sum(dim=1) - (hidden * pad).sum(dim=1)  # all minus the pads
                    real = hidden.shape[1] - pad.sum(dim=1)
                    return total / real.clamp(min=1)
                '''
            )
        },
        {"test_masked_mean": "changed the pooled vectors (first difference at index"},
        # Issue 40's fourth blind corpus: its message read "got -0.3009, expected -0.3009", two
        # values that differ printed alike (closeness.told_apart).
        in_notebook=True,  # its visible checks fail too
    ),
    Mutant(
        "i05-01: masked_mean: sum / count with no guard, NaN for a row made only of padding",
        A,
        {
            "masked_mean": Rewrite(
                r'''
                def masked_mean(hidden: Tensor, token_ids: Tensor, pad_id: int) -> Tensor:
                    """Mean of hidden (B, L, d_model) over the non-padding positions -> (B, d_model).

                    A position is padding where token_ids (B, L) == pad_id.
                    """
                    weight = (token_ids != pad_id).unsqueeze(-1).to(hidden.dtype)  # (B, L, 1)
                    return (hidden * weight).sum(dim=1) / weight.sum(dim=1)
                '''
            )
        },
        {"test_masked_mean": "divides a sum of 0 by a count of 0"},
        # Issue 40's fourth blind corpus: caught with a counterexample alone (row 1 is NaN).
    ),
    Mutant(
        "i05-09: train_step switches to train mode after the forward pass",
        A,
        {
            "training_step": Rewrite(
                r'''
                def make_optimizer(
                    model: nn.Module, lr: float, weight_decay: float
                ) -> torch.optim.Optimizer:
                    """AdamW over every parameter of model."""
                    return torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=weight_decay)

                def train_step(
                    model: nn.Module,
                    inputs: Tensor,
                    labels: Tensor,
                    optimizer: torch.optim.Optimizer,
                    max_grad_norm: float,
                    scheduler=None,
                ) -> float:
                    """One update on inputs (B, L) and labels (B,); returns the pre-update loss."""
                    loss = F.cross_entropy(model(inputs), labels)
                    model.train()
                    optimizer.zero_grad()
                    loss.backward()
                    nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
                    optimizer.step()
                    if scheduler is not None:
                        scheduler.step()
                    return loss.item()
                '''
            )
        },
        {"test_train_step": "model.train() comes after the forward pass"},
        # Issue 40's fourth blind corpus: a counterexample alone, and its failing check on
        # gradients left before the call spoke of fresh gradients, though it clears them.
        not_told=("the gradients left before the call enter",),
    ),
    Mutant(
        "j05-09: train_step calls model.train() at the end of the step",
        A,
        {
            "training_step": Rewrite(
                r'''
                def make_optimizer(
                    model: nn.Module, lr: float, weight_decay: float
                ) -> torch.optim.Optimizer:
                    """AdamW over every parameter of model."""
                    return torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=weight_decay)


                def train_step(
                    model: nn.Module,
                    inputs: Tensor,
                    labels: Tensor,
                    optimizer: torch.optim.Optimizer,
                    max_grad_norm: float,
                    scheduler=None,
                ) -> float:
                    """One update on inputs (B, L) and labels (B,); returns the pre-update loss."""
                    loss = F.cross_entropy(model(inputs), labels)
                    optimizer.zero_grad()
                    loss.backward()
                    nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
                    optimizer.step()
                    if scheduler is not None:
                        scheduler.step()
                    model.train()  # leave the model ready for the next step
                    return loss.item()
                '''
            )
        },
        {"test_train_step": "model.train() comes after the forward pass"},
        # Issue 40's fifth blind corpus: a counterexample alone on c03db00; named by the mistake
        # written for the fourth corpus's i05-09 (4454a5b) before this answer was read.
        not_told=("the gradients left before the call enter",),
    ),
    Mutant(
        "j05-08: the classifier hard-coded to 2 outputs, whatever num_classes",
        A,
        {
            "sentiment_model": Rewrite(
                r'''
                class SentimentModel(nn.Module):
                    """Token ids (B, L) -> class logits (B, num_classes).

                    Embed, add positions, encode with a padding mask, pool, classify.
                    """

                    def __init__(
                        self,
                        vocab_size: int,
                        d_model: int = 64,
                        num_heads: int = 4,
                        num_layers: int = 2,
                        d_ff: int = 128,
                        num_classes: int = 2,
                        max_len: int = 64,
                        pad_id: int = 0,
                        dropout: float = 0.1,
                    ):
                        super().__init__()
                        self.pad_id = pad_id
                        self.embed = TokenEmbedding(vocab_size, d_model, padding_idx=pad_id)
                        self.position = SinusoidalPositionalEncoding(d_model, max_len, dropout)
                        self.encoder = TransformerEncoder(num_layers, d_model, num_heads, d_ff, dropout)
                        self.classifier = nn.Linear(d_model, 2)  # positive / negative

                    def forward(self, token_ids: Tensor, return_attention: bool = False):
                        """token_ids (B, L) -> logits (B, num_classes).

                        With return_attention, also a list of (B, H, L, L) weights, one per layer.
                        """
                        mask = padding_mask(token_ids, self.pad_id)
                        x = self.position(self.embed(token_ids))
                        hidden, weights = self.encoder(x, mask)
                        logits = self.classifier(masked_mean(hidden, token_ids, self.pad_id))
                        if return_attention:
                            return logits, weights
                        return logits
                '''
            )
        },
        {"test_sentiment_model": "the number of logits does not follow num_classes"},
        # Issue 40's fifth blind corpus: shown the logits' shape only; its visible check fails too.
        in_notebook=True,
    ),
    Mutant(
        "j05-12: make_optimizer does not pass weight_decay to AdamW",
        A,
        {
            "training_step": Rewrite(
                r'''
                def make_optimizer(
                    model: nn.Module, lr: float, weight_decay: float
                ) -> torch.optim.Optimizer:
                    """AdamW over every parameter of model."""
                    return torch.optim.AdamW(model.parameters(), lr=lr)


                def train_step(
                    model: nn.Module,
                    inputs: Tensor,
                    labels: Tensor,
                    optimizer: torch.optim.Optimizer,
                    max_grad_norm: float,
                    scheduler=None,
                ) -> float:
                    """One update on inputs (B, L) and labels (B,); returns the pre-update loss."""
                    model.train()
                    loss = F.cross_entropy(model(inputs), labels)
                    optimizer.zero_grad()
                    loss.backward()
                    nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
                    optimizer.step()
                    if scheduler is not None:
                        scheduler.step()
                    return loss.item()
                '''
            )
        },
        {"test_make_optimizer": "the weight_decay asked for never reaches AdamW"},
        # Issue 40's fifth blind corpus: shown the groups' 0.01 only; its visible check fails too.
        in_notebook=True,
    ),
    Mutant(
        "j05-04: masked_mean's weight built with .float(), half precision promoted to float32",
        A,
        {
            "masked_mean": Rewrite(
                r'''
                def masked_mean(hidden: Tensor, token_ids: Tensor, pad_id: int) -> Tensor:
                    """Mean of hidden (B, L, d_model) over the non-padding positions -> (B, d_model).

                    A position is padding where token_ids (B, L) == pad_id.
                    """
                    weight = (token_ids != pad_id).float().unsqueeze(-1)  # (B, L, 1)
                    count = weight.sum(dim=1).clamp(min=1.0)
                    return (hidden * weight).sum(dim=1) / count
                '''
            )
        },
        {"test_masked_mean": "masked_mean computes in float32 when given half precision"},
        # Issue 40's fifth blind corpus: shown the float32 dtype only, no cause named.
    ),
    Mutant(
        "k05-01: divides the masked sum by the count of real tokens with no guard",
        A,
        {
            "masked_mean": Rewrite(
                r'''
                def masked_mean(hidden: Tensor, token_ids: Tensor, pad_id: int) -> Tensor:
                    """Mean of hidden (B, L, d_model) over the non-padding positions -> (B, d_model).

                    A position is padding where token_ids (B, L) == pad_id.
                    """
                    weight = (token_ids != pad_id).unsqueeze(-1).to(hidden.dtype)  # (B, L, 1)
                    return (hidden * weight).sum(dim=1) / weight.sum(dim=1)
                '''
            )
        },
        {"test_masked_mean": "a row made only of padding divides a sum of"},
        # Issue 40's sixth blind corpus, graded blind on bdfa422: named.
    ),
    Mutant(
        "k05-02: the padding positions are found with token_ids != 0 (pad id hard-coded",
        A,
        {
            "masked_mean": Rewrite(
                r'''
                def masked_mean(hidden: Tensor, token_ids: Tensor, pad_id: int) -> Tensor:
                    """Mean of hidden (B, L, d_model) over the non-padding positions -> (B, d_model).

                    A position is padding where token_ids (B, L) == pad_id.
                    """
                    real = (token_ids != 0).unsqueeze(-1)  # <pad> is id 0
                    total = torch.where(real, hidden, torch.zeros_like(hidden)).sum(dim=1)
                    count = real.sum(dim=1).clamp_min(1).to(hidden.dtype)
                    return total / count
                '''
            )
        },
        {
            "test_masked_mean": "the pad id is hard-coded to",
            "test_padding_invariance": "this cell uses your answer cell",
        },
        # Issue 40's sixth blind corpus, graded blind on bdfa422: named.
    ),
    Mutant(
        "k05-03: creates self.position but never applies it in forward (no positional e",
        A,
        {
            "sentiment_model": Rewrite(
                r'''
                class SentimentModel(nn.Module):
                    """Token ids (B, L) -> class logits (B, num_classes).

                    Embed, add positions, encode with a padding mask, pool, classify.
                    """

                    def __init__(
                        self,
                        vocab_size: int,
                        d_model: int = 64,
                        num_heads: int = 4,
                        num_layers: int = 2,
                        d_ff: int = 128,
                        num_classes: int = 2,
                        max_len: int = 64,
                        pad_id: int = 0,
                        dropout: float = 0.1,
                    ):
                        super().__init__()
                        self.pad_id = pad_id
                        self.embed = TokenEmbedding(vocab_size, d_model, padding_idx=pad_id)
                        self.position = SinusoidalPositionalEncoding(d_model, max_len, dropout)
                        self.encoder = TransformerEncoder(num_layers, d_model, num_heads, d_ff, dropout)
                        self.head = nn.Linear(d_model, num_classes)

                    def forward(self, token_ids: Tensor, return_attention: bool = False):
                        """token_ids (B, L) -> logits (B, num_classes).

                        With return_attention, also a list of (B, H, L, L) weights, one per layer.
                        """
                        x = self.embed(token_ids)
                        hidden, weights = self.encoder(x, padding_mask(token_ids, self.pad_id))
                        logits = self.head(masked_mean(hidden, token_ids, self.pad_id))
                        return (logits, weights) if return_attention else logits
                '''
            )
        },
        {
            "test_sentiment_model": "the positional encoding is missing: add self.position to the token embeddings",
            "test_heldout_contrast": "this cell uses your answer cell",
        },
        # Issue 40's sixth blind corpus, graded blind on bdfa422: named.
    ),
    Mutant(
        "k05-04: pools with a plain mean over all L positions (hidden.mean(dim=1)) inst",
        A,
        {
            "sentiment_model": Rewrite(
                r'''
                class SentimentModel(nn.Module):
                    """Token ids (B, L) -> class logits (B, num_classes).

                    Embed, add positions, encode with a padding mask, pool, classify.
                    """

                    def __init__(
                        self,
                        vocab_size: int,
                        d_model: int = 64,
                        num_heads: int = 4,
                        num_layers: int = 2,
                        d_ff: int = 128,
                        num_classes: int = 2,
                        max_len: int = 64,
                        pad_id: int = 0,
                        dropout: float = 0.1,
                    ):
                        super().__init__()
                        self.pad_id = pad_id
                        self.embed = TokenEmbedding(vocab_size, d_model, padding_idx=pad_id)
                        self.position = SinusoidalPositionalEncoding(d_model, max_len, dropout)
                        self.encoder = TransformerEncoder(num_layers, d_model, num_heads, d_ff, dropout)
                        self.classifier = nn.Linear(d_model, num_classes)

                    def forward(self, token_ids: Tensor, return_attention: bool = False):
                        """token_ids (B, L) -> logits (B, num_classes).

                        With return_attention, also a list of (B, H, L, L) weights, one per layer.
                        """
                        mask = padding_mask(token_ids, self.pad_id)
                        hidden, weights = self.encoder(self.position(self.embed(token_ids)), mask)
                        logits = self.classifier(hidden.mean(dim=1))
                        if return_attention:
                            return logits, weights
                        return logits
                '''
            )
        },
        {
            "test_padding_invariance": "pooling includes padding: the mean runs over all L positions, so <pad> outputs enter the sentence vector; weight each po",
        },
        # Issue 40's sixth blind corpus, graded blind on bdfa422: named.
        # Charged once, in test_padding_invariance: test_sentiment_model judges sentences
        # without padding.
        charged_once=True,
    ),
    Mutant(
        "k05-05: model.train() is called after the forward pass (just before backward)",
        A,
        {
            "training_step": Rewrite(
                r'''
                def make_optimizer(
                    model: nn.Module, lr: float, weight_decay: float
                ) -> torch.optim.Optimizer:
                    """AdamW over every parameter of model."""
                    return torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=weight_decay)


                def train_step(
                    model: nn.Module,
                    inputs: Tensor,
                    labels: Tensor,
                    optimizer: torch.optim.Optimizer,
                    max_grad_norm: float,
                    scheduler=None,
                ) -> float:
                    """One update on inputs (B, L) and labels (B,); returns the pre-update loss."""
                    logits = model(inputs)
                    loss = F.cross_entropy(logits, labels)
                    model.train()
                    optimizer.zero_grad()
                    loss.backward()
                    nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
                    optimizer.step()
                    if scheduler is not None:
                        scheduler.step()
                    return float(loss.item())
                '''
            )
        },
        {
            "test_train_step": "model.train() comes after the forward pass, so a step begun in eval mode computes its loss and gradients with dropout of"
        },
        # Issue 40's sixth blind corpus, graded blind on bdfa422: named.
    ),
    Mutant(
        "n05-01: masked_mean divides 0 by 0 on an all-padding row",
        A,
        {
            "masked_mean": Rewrite(
                r'''
                def masked_mean(hidden: Tensor, token_ids: Tensor, pad_id: int) -> Tensor:
                    """Mean of hidden (B, L, d_model) over the non-padding positions -> (B, d_model).

                    A position is padding where token_ids (B, L) == pad_id.
                    """
                    real = (token_ids != pad_id).unsqueeze(-1)  # (B, L, 1)
                    total = torch.where(real, hidden, torch.zeros_like(hidden)).sum(dim=1)
                    return total / real.sum(dim=1)
                '''
            )
        },
        {"test_masked_mean": "a row made only of padding divides a sum of"},
        # Issue 40's seventh blind corpus, graded blind on 451e037: named.
    ),
    Mutant(
        "n05-02: the pad id hard-coded to 0 in the attention mask",
        A,
        {
            "sentiment_model": Rewrite(
                r'''
                class SentimentModel(nn.Module):
                    """Token ids (B, L) -> class logits (B, num_classes).

                    Embed, add positions, encode with a padding mask, pool, classify.
                    """

                    def __init__(
                        self,
                        vocab_size: int,
                        d_model: int = 64,
                        num_heads: int = 4,
                        num_layers: int = 2,
                        d_ff: int = 128,
                        num_classes: int = 2,
                        max_len: int = 64,
                        pad_id: int = 0,
                        dropout: float = 0.1,
                    ):
                        super().__init__()
                        self.pad_id = pad_id
                        self.embed = TokenEmbedding(vocab_size, d_model, padding_idx=pad_id)
                        self.position = SinusoidalPositionalEncoding(d_model, max_len, dropout)
                        self.encoder = TransformerEncoder(num_layers, d_model, num_heads, d_ff, dropout)
                        self.classifier = nn.Linear(d_model, num_classes)

                    def forward(self, token_ids: Tensor, return_attention: bool = False):
                        """token_ids (B, L) -> logits (B, num_classes).

                        With return_attention, also a list of (B, H, L, L) weights, one per layer.
                        """
                        mask = padding_mask(token_ids, 0)  # <pad> has id 0
                        x = self.position(self.embed(token_ids))
                        hidden, weights = self.encoder(x, mask)
                        logits = self.classifier(masked_mean(hidden, token_ids, self.pad_id))
                        if return_attention:
                            return logits, weights
                        return logits
                '''
            )
        },
        {
            "test_padding_invariance": "the pad id is hard-coded to",
        },
        # Issue 40's seventh blind corpus, graded blind on 451e037: named.
        # Charged once, in test_padding_invariance: test_sentiment_model judges sentences
        # without padding.
        charged_once=True,
    ),
    Mutant(
        "n05-03: masked_mean's 0/1 weight made .float(): half precision promoted",
        A,
        {
            "masked_mean": Rewrite(
                r'''
                def masked_mean(hidden: Tensor, token_ids: Tensor, pad_id: int) -> Tensor:
                    """Mean of hidden (B, L, d_model) over the non-padding positions -> (B, d_model).

                    A position is padding where token_ids (B, L) == pad_id.
                    """
                    weight = (token_ids != pad_id).float().unsqueeze(-1)  # (B, L, 1) 0/1
                    total = (hidden * weight).sum(dim=1)
                    return total / weight.sum(dim=1).clamp_min(1.0)
                '''
            )
        },
        {"test_masked_mean": "masked_mean computes in float"},
        # Issue 40's seventh blind corpus, graded blind on 451e037: named.
    ),
    Mutant(
        "n05-04: model.train() after the forward pass",
        A,
        {
            "training_step": Rewrite(
                r'''
                def make_optimizer(
                    model: nn.Module, lr: float, weight_decay: float
                ) -> torch.optim.Optimizer:
                    """AdamW over every parameter of model."""
                    return torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=weight_decay)


                def train_step(
                    model: nn.Module,
                    inputs: Tensor,
                    labels: Tensor,
                    optimizer: torch.optim.Optimizer,
                    max_grad_norm: float,
                    scheduler=None,
                ) -> float:
                    """One update on inputs (B, L) and labels (B,); returns the pre-update loss."""
                    logits = model(inputs)
                    loss = F.cross_entropy(logits, labels)
                    model.train()
                    optimizer.zero_grad()
                    loss.backward()
                    nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
                    optimizer.step()
                    if scheduler is not None:
                        scheduler.step()
                    return loss.item()
                '''
            )
        },
        {"test_train_step": "model.train() comes after the forward pass, so a step begun in eval"},
        # Issue 40's seventh blind corpus, graded blind on 451e037: named.
    ),
    Mutant(
        "n05-05: a softmax before F.cross_entropy",
        A,
        {
            "training_step": Rewrite(
                r'''
                def make_optimizer(
                    model: nn.Module, lr: float, weight_decay: float
                ) -> torch.optim.Optimizer:
                    """AdamW over every parameter of model."""
                    return torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=weight_decay)


                def train_step(
                    model: nn.Module,
                    inputs: Tensor,
                    labels: Tensor,
                    optimizer: torch.optim.Optimizer,
                    max_grad_norm: float,
                    scheduler=None,
                ) -> float:
                    """One update on inputs (B, L) and labels (B,); returns the pre-update loss."""
                    model.train()
                    logits = model(inputs)
                    probs = torch.softmax(logits, dim=-1)
                    loss = F.cross_entropy(probs, labels)
                    optimizer.zero_grad()
                    loss.backward()
                    nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
                    optimizer.step()
                    if scheduler is not None:
                        scheduler.step()
                    return loss.item()
                '''
            )
        },
        {"test_train_step": "the logits pass through a softmax before F.cross_entropy"},
        # Issue 40's seventh blind corpus, graded blind on 451e037: counterexample; named since.
    ),
    Mutant(
        "p05-01: model.train() at the end of the step",
        A,
        {
            "training_step": Rewrite(
                r'''
                # kind: wrong
                # grade_id: training_step
                # mistake: model.train() is called at the END of the step instead of at the start, so a model handed over in eval mode (as after every evaluation) runs that step's forward pass without dropout.
                # evidence: tools/ev05.py: a model with Dropout(0.5) handed over in eval mode: this step's returned loss 1.8305 equals the eval-mode (no dropout) loss, mine 1.7291 (dropout on); the weights after the step differ.
                def make_optimizer(
                    model: nn.Module, lr: float, weight_decay: float
                ) -> torch.optim.Optimizer:
                    """AdamW over every parameter of model."""
                    return torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=weight_decay)


                def train_step(
                    model: nn.Module,
                    inputs: Tensor,
                    labels: Tensor,
                    optimizer: torch.optim.Optimizer,
                    max_grad_norm: float,
                    scheduler=None,
                ) -> float:
                    """One update on inputs (B, L) and labels (B,); returns the pre-update loss."""
                    loss = F.cross_entropy(model(inputs), labels)
                    optimizer.zero_grad()
                    loss.backward()
                    nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
                    optimizer.step()
                    if scheduler is not None:
                        scheduler.step()
                    model.train()  # leave the model ready for the next training step
                    return loss.item()
                '''
            )
        },
        {"test_train_step": "model.train() comes after the forward pass, so a step begun in eval"},
        # Issue 40's seventh blind corpus, graded blind on 451e037: named.
    ),
    Mutant(
        "p05-02: the scheduler stepped before the optimizer",
        A,
        {
            "training_step": Rewrite(
                r'''
                # kind: wrong
                # grade_id: training_step
                # mistake: the scheduler is stepped BEFORE optimizer.step(), so every update uses the next step's learning rate (the first warm-up update is 2/4 of the rate instead of 1/4).
                # evidence: tools/ev05.py: SGD lr 1, clip 0.05, 4-step warm-up: first update norm 0.0250 instead of 0.0125 (the second warm-up rate 2/4 was used).
                def make_optimizer(
                    model: nn.Module, lr: float, weight_decay: float
                ) -> torch.optim.Optimizer:
                    """AdamW over every parameter of model."""
                    return torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=weight_decay)


                def train_step(
                    model: nn.Module,
                    inputs: Tensor,
                    labels: Tensor,
                    optimizer: torch.optim.Optimizer,
                    max_grad_norm: float,
                    scheduler=None,
                ) -> float:
                    """One update on inputs (B, L) and labels (B,); returns the pre-update loss."""
                    model.train()
                    loss = F.cross_entropy(model(inputs), labels)
                    optimizer.zero_grad()
                    loss.backward()
                    nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
                    if scheduler is not None:
                        scheduler.step()  # set this step's learning rate first
                    optimizer.step()
                    return loss.item()
                '''
            )
        },
        {"test_train_step": "scheduler.step() runs before optimizer.step(), so the first update"},
        # Issue 40's seventh blind corpus, graded blind on 451e037: named.
    ),
    Mutant(
        "p05-03: zero_grad at the end of the step, not before backward",
        A,
        {
            "training_step": Rewrite(
                r'''
                # kind: wrong
                # grade_id: training_step
                # mistake: the gradients are cleared at the END of the step (zero_grad(set_to_none=False)) instead of before backward, so the step does not leave its batch's gradient in .grad and a model arriving with stale gradients accumulates them into its first update.
                # evidence: tools/ev05.py: after the step .grad holds zeros (sum of norms 0.0; mine 3.54, the batch's gradient); for a model that arrives with a stale gradient the weights after one step differ from mine.
                def make_optimizer(
                    model: nn.Module, lr: float, weight_decay: float
                ) -> torch.optim.Optimizer:
                    """AdamW over every parameter of model."""
                    return torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=weight_decay)


                def train_step(
                    model: nn.Module,
                    inputs: Tensor,
                    labels: Tensor,
                    optimizer: torch.optim.Optimizer,
                    max_grad_norm: float,
                    scheduler=None,
                ) -> float:
                    """One update on inputs (B, L) and labels (B,); returns the pre-update loss."""
                    model.train()
                    loss = F.cross_entropy(model(inputs), labels)
                    loss.backward()
                    nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
                    optimizer.step()
                    if scheduler is not None:
                        scheduler.step()
                    # clean up after the update so the next step starts from zero
                    optimizer.zero_grad(set_to_none=False)
                    return loss.item()
                '''
            )
        },
        {"test_train_step": "the gradients the parameters already held when train_step began were"},
        # Issue 40's seventh blind corpus, graded blind on 451e037: named.
    ),
    Mutant(
        "p05-04: the pad id hard-coded to 0 in the mask and the pooling",
        A,
        {
            "sentiment_model": Rewrite(
                r'''
                # kind: wrong
                # grade_id: sentiment_model
                # mistake: the padding mask and the pooling use the literal pad id 0 instead of self.pad_id, so a model built with another pad_id attends to and averages in its padding.
                # evidence: tools/ev05.py: SentimentModel(pad_id=3): weight on pad keys up to 0.195 (mine 0) and appending 4 pads changes the logits by 0.33 (mine 0).
                class SentimentModel(nn.Module):
                    """Token ids (B, L) -> class logits (B, num_classes)."""

                    def __init__(
                        self,
                        vocab_size: int,
                        d_model: int = 64,
                        num_heads: int = 4,
                        num_layers: int = 2,
                        d_ff: int = 128,
                        num_classes: int = 2,
                        max_len: int = 64,
                        pad_id: int = 0,
                        dropout: float = 0.1,
                    ):
                        super().__init__()
                        self.pad_id = pad_id
                        self.embed = TokenEmbedding(vocab_size, d_model, padding_idx=pad_id)
                        self.position = SinusoidalPositionalEncoding(d_model, max_len, dropout)
                        self.encoder = TransformerEncoder(num_layers, d_model, num_heads, d_ff, dropout)
                        self.classifier = nn.Linear(d_model, num_classes)

                    def forward(self, token_ids: Tensor, return_attention: bool = False):
                        x = self.position(self.embed(token_ids))
                        hidden, weights = self.encoder(x, padding_mask(token_ids, 0))
                        logits = self.classifier(masked_mean(hidden, token_ids, 0))
                        if return_attention:
                            return logits, weights
                        return logits
                '''
            )
        },
        {
            "test_padding_invariance": "the pad id is hard-coded to",
        },
        # Issue 40's seventh blind corpus, graded blind on 451e037: named.
        # Charged once, in test_padding_invariance: test_sentiment_model judges sentences
        # without padding.
        charged_once=True,
    ),
    Mutant(
        "p05-05: masked_mean divides 0 by 0 on an all-padding row",
        A,
        {
            "masked_mean": Rewrite(
                r'''
                # kind: wrong
                # grade_id: masked_mean
                # mistake: divides by the raw count of real tokens without guarding against zero, so a row made only of padding gives 0/0 = NaN instead of zeros.
                # evidence: tools/ev05.py: a row of ids all equal to pad_id gives [nan, nan, nan] (mine [0, 0, 0]); other rows equal mine.
                def masked_mean(hidden: Tensor, token_ids: Tensor, pad_id: int) -> Tensor:
                    """Mean of hidden (B, L, d_model) over the non-padding positions -> (B, d_model)."""
                    is_real = (token_ids != pad_id).unsqueeze(-1)  # (B, L, 1)
                    total = hidden.masked_fill(~is_real, 0.0).sum(dim=1)
                    count = is_real.sum(dim=1)  # (B, 1) number of real tokens
                    return (total / count).to(hidden.dtype)
                '''
            )
        },
        {"test_masked_mean": "a row made only of padding divides a sum of"},
        # Issue 40's seventh blind corpus, graded blind on 451e037: named.
    ),
    Mutant(
        "r05-05: forward returns softmax probabilities, not logits",
        A,
        {
            "sentiment_model": Rewrite(
                r'''
                # id: r05-05
                # kind: wrong
                # grade_id: sentiment_model
                # mistake: forward returns softmax PROBABILITIES instead of logits, so F.cross_entropy (which applies its own log-softmax) is computed on probabilities; the statement says forward returns the logits.
                # evidence: my experiment (scripts ev0N.py, output ev0N.txt in /work/fresh-corpus8b):
                #   r05-05: same weights: correct logits [-0.07762905955314636, 0.5467740297317505] | wrong output [0.34878069162368774, 0.6512193083763123] (rows sum to [1.0, 1.0, 1.0] )
                # public checks: passes every public check of the notebook
                class SentimentModel(nn.Module):
                    """Token ids (B, L) -> class logits (B, num_classes).

                    Embed, add positions, encode with a padding mask, pool, classify.
                    """

                    def __init__(
                        self,
                        vocab_size: int,
                        d_model: int = 64,
                        num_heads: int = 4,
                        num_layers: int = 2,
                        d_ff: int = 128,
                        num_classes: int = 2,
                        max_len: int = 64,
                        pad_id: int = 0,
                        dropout: float = 0.1,
                    ):
                        super().__init__()
                        self.pad_id = pad_id
                        self.embed = TokenEmbedding(vocab_size, d_model, padding_idx=pad_id)
                        self.position = SinusoidalPositionalEncoding(d_model, max_len, dropout)
                        self.encoder = TransformerEncoder(num_layers, d_model, num_heads, d_ff, dropout)
                        self.classifier = nn.Linear(d_model, num_classes)

                    def forward(self, token_ids: Tensor, return_attention: bool = False):
                        """token_ids (B, L) -> logits (B, num_classes).

                        With return_attention, also a list of (B, H, L, L) weights, one per layer.
                        """
                        mask = padding_mask(token_ids, self.pad_id)
                        hidden = self.position(self.embed(token_ids))
                        hidden, weights = self.encoder(hidden, mask)
                        scores = self.classifier(masked_mean(hidden, token_ids, self.pad_id))
                        probs = torch.softmax(scores, dim=-1)  # class probabilities
                        if return_attention:
                            return probs, weights
                        return probs
                '''
            )
        },
        {"test_sentiment_model": "forward returns probabilities (a softmax of the logits"},
        # Issue 40's eighth blind corpus, graded blind on 47d54b0: counterexample (named since).
    ),
    Mutant(
        "q05-03: the embeddings multiplied by sqrt(d_model) again, scaled twice",
        A,
        {
            "sentiment_model": Rewrite(
                r'''
                class SentimentModel(nn.Module):
                    """Token ids (B, L) -> class logits (B, num_classes).

                    Embed, add positions, encode with a padding mask, pool, classify.
                    """

                    def __init__(
                        self,
                        vocab_size: int,
                        d_model: int = 64,
                        num_heads: int = 4,
                        num_layers: int = 2,
                        d_ff: int = 128,
                        num_classes: int = 2,
                        max_len: int = 64,
                        pad_id: int = 0,
                        dropout: float = 0.1,
                    ):
                        super().__init__()
                        self.pad_id = pad_id
                        self.embed_dim = d_model
                        self.embed = TokenEmbedding(vocab_size, d_model, padding_idx=pad_id)
                        self.position = SinusoidalPositionalEncoding(d_model, max_len, dropout)
                        self.encoder = TransformerEncoder(num_layers, d_model, num_heads, d_ff, dropout)
                        self.classifier = nn.Linear(d_model, num_classes)

                    def forward(self, token_ids: Tensor, return_attention: bool = False):
                        """token_ids (B, L) -> logits (B, num_classes).

                        With return_attention, also a list of (B, H, L, L) weights, one per layer.
                        """
                        mask = padding_mask(token_ids, self.pad_id)  # (B, 1, L): hides the pad keys
                        x = self.position(self.embed(token_ids) * self.embed_dim**0.5)
                        hidden, weights = self.encoder(x, mask)
                        logits = self.classifier(masked_mean(hidden, token_ids, self.pad_id))
                        if return_attention:
                            return logits, weights
                        return logits
                '''
            )
        },
        {"test_sentiment_model": "the token embeddings are scaled by √d_model twice"},
        # Issue 40's eighth blind corpus, graded blind on 47d54b0: counterexample (named since).
    ),
    Mutant(
        "q05-01: masked_mean divides 0 by 0 for a row made only of padding",
        A,
        {
            "masked_mean": Rewrite(
                r'''
                def masked_mean(hidden: Tensor, token_ids: Tensor, pad_id: int) -> Tensor:
                    """Mean of hidden (B, L, d_model) over the non-padding positions -> (B, d_model).

                    A position is padding where token_ids (B, L) == pad_id.
                    """
                    real = (token_ids != pad_id).to(hidden.dtype).unsqueeze(-1)  # (B, L, 1)
                    total = (hidden * real).sum(dim=1)  # (B, d_model)
                    count = real.sum(dim=1)  # (B, 1): real tokens per row
                    return total / count
                '''
            )
        },
        {"test_masked_mean": "a row made only of padding divides a sum of 0 by a count of 0"},
        # Issue 40's eighth blind corpus, graded blind on 47d54b0: named.
    ),
    Mutant(
        "q05-02: masked_mean's weights in float32 whatever hidden's dtype",
        A,
        {
            "masked_mean": Rewrite(
                r'''
                def masked_mean(hidden: Tensor, token_ids: Tensor, pad_id: int) -> Tensor:
                    """Mean of hidden (B, L, d_model) over the non-padding positions -> (B, d_model).

                    A position is padding where token_ids (B, L) == pad_id.
                    """
                    real = (token_ids != pad_id).float().unsqueeze(-1)  # (B, L, 1)
                    total = (hidden * real).sum(dim=1)  # (B, d_model)
                    count = real.sum(dim=1).clamp_min(1.0)  # (B, 1); a row of pads counts 1
                    return total / count
                '''
            )
        },
        {"test_masked_mean": "masked_mean computes in float32 when given half precision"},
        # Issue 40's eighth blind corpus, graded blind on 47d54b0: named.
    ),
    Mutant(
        "q05-04: SentimentModel hard-codes the pad id 0",
        A,
        {
            "sentiment_model": Rewrite(
                r'''
                class SentimentModel(nn.Module):
                    """Token ids (B, L) -> class logits (B, num_classes).

                    Embed, add positions, encode with a padding mask, pool, classify.
                    """

                    def __init__(
                        self,
                        vocab_size: int,
                        d_model: int = 64,
                        num_heads: int = 4,
                        num_layers: int = 2,
                        d_ff: int = 128,
                        num_classes: int = 2,
                        max_len: int = 64,
                        pad_id: int = 0,
                        dropout: float = 0.1,
                    ):
                        super().__init__()
                        self.pad_id = pad_id
                        self.embed = TokenEmbedding(vocab_size, d_model, padding_idx=pad_id)
                        self.position = SinusoidalPositionalEncoding(d_model, max_len, dropout)
                        self.encoder = TransformerEncoder(num_layers, d_model, num_heads, d_ff, dropout)
                        self.classifier = nn.Linear(d_model, num_classes)

                    def forward(self, token_ids: Tensor, return_attention: bool = False):
                        """token_ids (B, L) -> logits (B, num_classes).

                        With return_attention, also a list of (B, H, L, L) weights, one per layer.
                        """
                        mask = padding_mask(token_ids, 0)  # (B, 1, L): hides the pad keys
                        x = self.position(self.embed(token_ids))
                        hidden, weights = self.encoder(x, mask)
                        logits = self.classifier(masked_mean(hidden, token_ids, 0))
                        if return_attention:
                            return logits, weights
                        return logits
                '''
            )
        },
        {
            "test_padding_invariance": "the pad id is hard-coded to 0",
        },
        # Issue 40's eighth blind corpus, graded blind on 47d54b0: named.
        # Charged once, in test_padding_invariance: test_sentiment_model judges sentences
        # without padding.
        charged_once=True,
    ),
    Mutant(
        "q05-05: train_step returns the loss of a second forward pass, after the update",
        A,
        {
            "training_step": Rewrite(
                r'''
                def make_optimizer(
                    model: nn.Module, lr: float, weight_decay: float
                ) -> torch.optim.Optimizer:
                    """AdamW over every parameter of model."""
                    return torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=weight_decay)


                def train_step(
                    model: nn.Module,
                    inputs: Tensor,
                    labels: Tensor,
                    optimizer: torch.optim.Optimizer,
                    max_grad_norm: float,
                    scheduler=None,
                ) -> float:
                    """One update on inputs (B, L) and labels (B,); returns the pre-update loss."""
                    model.train()
                    loss = F.cross_entropy(model(inputs), labels)
                    optimizer.zero_grad()
                    loss.backward()
                    nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
                    optimizer.step()
                    if scheduler is not None:
                        scheduler.step()
                    # report the loss of the updated model
                    with torch.no_grad():
                        loss = F.cross_entropy(model(inputs), labels)
                    return loss.item()
                '''
            )
        },
        {
            "test_train_step": "train_step returns the loss of a second forward pass, run after the update"
        },
        # Issue 40's eighth blind corpus, graded blind on 47d54b0: named.
    ),
    Mutant(
        "r05-01: train_step returns the loss of a second forward pass, after the update",
        A,
        {
            "training_step": Rewrite(
                r'''
                # id: r05-01
                # kind: wrong
                # grade_id: training_step
                # mistake: returns the loss recomputed AFTER the update (a second forward pass), not the batch's loss before the update; the extra forward in train mode also draws new dropout masks.
                # evidence: my experiment (scripts ev0N.py, output ev0N.txt in /work/fresh-corpus8b):
                #   r05-01: correct returned 1.8332
                #   r05-01: r05-01 returned 0.3153
                #   r05-01: pre-update train-mode loss with the same dropout draw 1.8332
                # public checks: passes every public check of the notebook
                def make_optimizer(
                    model: nn.Module, lr: float, weight_decay: float
                ) -> torch.optim.Optimizer:
                    """AdamW over every parameter of model."""
                    return torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=weight_decay)


                def train_step(
                    model: nn.Module,
                    inputs: Tensor,
                    labels: Tensor,
                    optimizer: torch.optim.Optimizer,
                    max_grad_norm: float,
                    scheduler=None,
                ) -> float:
                    """One update on inputs (B, L) and labels (B,); returns the pre-update loss."""
                    model.train()
                    loss = F.cross_entropy(model(inputs), labels)
                    optimizer.zero_grad()
                    loss.backward()
                    nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
                    optimizer.step()
                    if scheduler is not None:
                        scheduler.step()
                    # report the loss of the batch with the updated weights
                    with torch.no_grad():
                        new_loss = F.cross_entropy(model(inputs), labels)
                    return new_loss.item()
                '''
            )
        },
        {
            "test_train_step": "train_step returns the loss of a second forward pass, run after the update"
        },
        # Issue 40's eighth blind corpus, graded blind on 47d54b0: named.
    ),
    Mutant(
        "r05-02: train_step calls model.train() after the forward pass",
        A,
        {
            "training_step": Rewrite(
                r'''
                # id: r05-02
                # kind: wrong
                # grade_id: training_step
                # mistake: switches to train mode only AFTER the forward pass, so the forward (and the loss and gradients) runs in whatever mode the model was left in: in eval mode after an evaluation, i.e. without dropout.
                # evidence: my experiment (scripts ev0N.py, output ev0N.txt in /work/fresh-corpus8b):
                #   r05-02: correct model handed in eval mode (dropout 0.3): returned loss 1.8332
                #   r05-02: r05-02 model handed in eval mode (dropout 0.3): returned loss 1.8305
                #   r05-02: max |param difference| after one step: 0.23567160964012146
                # public checks: passes every public check of the notebook
                def make_optimizer(
                    model: nn.Module, lr: float, weight_decay: float
                ) -> torch.optim.Optimizer:
                    """AdamW over every parameter of model."""
                    return torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=weight_decay)


                def train_step(
                    model: nn.Module,
                    inputs: Tensor,
                    labels: Tensor,
                    optimizer: torch.optim.Optimizer,
                    max_grad_norm: float,
                    scheduler=None,
                ) -> float:
                    """One update on inputs (B, L) and labels (B,); returns the pre-update loss."""
                    logits = model(inputs)
                    loss = F.cross_entropy(logits, labels)
                    model.train()  # training from here on
                    optimizer.zero_grad()
                    loss.backward()
                    nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
                    optimizer.step()
                    if scheduler is not None:
                        scheduler.step()
                    return loss.item()
                '''
            )
        },
        {"test_train_step": "model.train() comes after the forward pass"},
        # Issue 40's eighth blind corpus, graded blind on 47d54b0: named.
    ),
    Mutant(
        "r05-03: masked_mean finds the real tokens with token_ids > 0",
        A,
        {
            "masked_mean": Rewrite(
                r'''
                # id: r05-03
                # kind: wrong
                # grade_id: masked_mean
                # mistake: finds the real tokens with token_ids > 0 instead of token_ids != pad_id, i.e. assumes the pad id is 0 (the statement: "pad_id: the id to ignore (not always 0!)").
                # evidence: my experiment (scripts ev0N.py, output ev0N.txt in /work/fresh-corpus8b):
                #   r05-03: pad_id=5: correct [-0.7798593044281006, -0.1518249213695526, 0.22071528434753418] | wrong [-0.5083609223365784, -0.2438022792339325, 0.29389408230781555] | mean of first 2 positions [-0.7798593044281006, -0.1518249213695526, 0.22071528434753418]
                # public checks: passes every public check of the notebook
                def masked_mean(hidden: Tensor, token_ids: Tensor, pad_id: int) -> Tensor:
                    """Mean of hidden (B, L, d_model) over the non-padding positions -> (B, d_model).

                    A position is padding where token_ids (B, L) == pad_id.
                    """
                    real = (token_ids > 0).to(hidden.dtype).unsqueeze(-1)  # (B, L, 1); <pad> is 0
                    total = (hidden * real).sum(dim=1)
                    count = real.sum(dim=1).clamp(min=1.0)
                    return total / count
                '''
            )
        },
        {
            "test_masked_mean": "the pad id is hard-coded to 0",
            "test_padding_invariance": "the pad id is hard-coded to 0",
        },
        # Issue 40's eighth blind corpus, graded blind on 47d54b0: named.
    ),
    Mutant(
        "r05-04: make_optimizer exempts biases and LayerNorm weights from weight decay",
        A,
        {
            "training_step": Rewrite(
                r'''
                # id: r05-04
                # kind: wrong
                # grade_id: training_step
                # mistake: make_optimizer puts biases and LayerNorm weights in a second parameter group with weight_decay 0 (a common practice), so not every parameter gets the weight decay passed in and the optimizer has two groups instead of one.
                # evidence: my experiment (scripts ev0N.py, output ev0N.txt in /work/fresh-corpus8b):
                #   r05-04: param groups (lr, wd, n params): [(0.004, 0.05, 1), (0.004, 0.0, 1)]
                # public checks: FAILS public check(s): ERROR in test_make_optimizer: AssertionError: expected one parameter group with lr 0.004 and weight_decay 0.05, got [(0.004, 0.05), (0.004, 0.0)]
                def make_optimizer(
                    model: nn.Module, lr: float, weight_decay: float
                ) -> torch.optim.Optimizer:
                    """AdamW over every parameter of model."""
                    # no weight decay on biases and norm weights (1-D parameters), as in GPT-2/BERT
                    decay = [p for p in model.parameters() if p.dim() >= 2]
                    no_decay = [p for p in model.parameters() if p.dim() < 2]
                    return torch.optim.AdamW(
                        [
                            {"params": decay, "weight_decay": weight_decay},
                            {"params": no_decay, "weight_decay": 0.0},
                        ],
                        lr=lr,
                    )


                def train_step(
                    model: nn.Module,
                    inputs: Tensor,
                    labels: Tensor,
                    optimizer: torch.optim.Optimizer,
                    max_grad_norm: float,
                    scheduler=None,
                ) -> float:
                    """One update on inputs (B, L) and labels (B,); returns the pre-update loss."""
                    model.train()
                    logits = model(inputs)
                    loss = F.cross_entropy(logits, labels)
                    optimizer.zero_grad()
                    loss.backward()
                    nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
                    optimizer.step()
                    if scheduler is not None:
                        scheduler.step()
                    return loss.item()
                '''
            )
        },
        {"test_make_optimizer": "returned an AdamW whose weight_decay is not"},
        # Issue 40's eighth blind corpus, graded blind on 47d54b0: named.
    ),
    Mutant(
        "t05-01: train_step returns the loss of a separate forward pass in eval mode before the update",
        A,
        {
            "training_step": Rewrite(
                r'''
                def make_optimizer(
                    model: nn.Module, lr: float, weight_decay: float
                ) -> torch.optim.Optimizer:
                    """AdamW over every parameter of model."""
                    return torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=weight_decay)


                def train_step(
                    model: nn.Module,
                    inputs: Tensor,
                    labels: Tensor,
                    optimizer: torch.optim.Optimizer,
                    max_grad_norm: float,
                    scheduler=None,
                ) -> float:
                    """One update on inputs (B, L) and labels (B,); returns the pre-update loss."""
                    # the loss before the update, measured cleanly (no dropout, no graph)
                    model.eval()
                    with torch.no_grad():
                        loss_before = F.cross_entropy(model(inputs), labels).item()
                    model.train()
                    loss = F.cross_entropy(model(inputs), labels)
                    optimizer.zero_grad()
                    loss.backward()
                    nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
                    optimizer.step()
                    if scheduler is not None:
                        scheduler.step()
                    return loss_before
                '''
            )
        },
        {
            "test_train_step": "comes from another forward pass, in eval mode (without dropout), before the update"
        },
        # Issue 40's ninth blind corpus, graded blind on feb0b2e: counterexample (named since).
    ),
    Mutant(
        "t05-05: token_importance averages over the padded queries' rows too",
        A,
        {
            "token_importance": Rewrite(
                r'''
                def token_importance(weights: list[Tensor], token_ids: Tensor, pad_id: int) -> Tensor:
                    """One score per token from the attention maps -> (B, L).

                    weights: one (B, H, L, L) map per layer; token_ids: (B, L), padding where == pad_id.
                    A sentence's real tokens' scores sum to 1; padded positions score 0.
                    """
                    # My score: the attention each token receives as a key, averaged over the
                    # queries, the heads and the layers (every row is a distribution, so the column
                    # means sum to 1); pads are then set to 0 and each sentence renormalised.
                    real = (token_ids != pad_id).to(weights[0].dtype)
                    received = torch.stack([w.mean(dim=(1, 2)) for w in weights]).mean(dim=0)  # (B, L)
                    received = received * real
                    total = received.sum(dim=-1, keepdim=True)
                    return torch.where(total > 0, received / torch.where(total > 0, total, 1), 0.0)
                '''
            )
        },
        {
            "test_token_importance": "your score reads the padded queries' rows: changing only what they hold"
        },
        # Issue 40's ninth blind corpus, graded blind on feb0b2e: counterexample (named since).
    ),
    Mutant(
        "s05-01: masked_mean divides by a count that may be 0",
        A,
        {
            "masked_mean": Rewrite(
                r'''
                def masked_mean(hidden: Tensor, token_ids: Tensor, pad_id: int) -> Tensor:
                    """Mean of hidden (B, L, d_model) over the non-padding positions -> (B, d_model).

                    A position is padding where token_ids (B, L) == pad_id.
                    """
                    real = (token_ids != pad_id).to(hidden.dtype).unsqueeze(-1)  # (B, L, 1)
                    total = (hidden * real).sum(dim=1)  # (B, d_model)
                    count = real.sum(dim=1)  # (B, 1)
                    return total / count
                '''
            )
        },
        {
            "test_masked_mean": "a row made only of padding divides a sum of 0 by a count of 0, which is NaN",
        },
        # Issue 40's ninth blind corpus, graded blind on feb0b2e: named.
    ),
    Mutant(
        "s05-02: masked_mean's weights made with .float(), promoting half precision",
        A,
        {
            "masked_mean": Rewrite(
                r'''
                def masked_mean(hidden: Tensor, token_ids: Tensor, pad_id: int) -> Tensor:
                    """Mean of hidden (B, L, d_model) over the non-padding positions -> (B, d_model).

                    A position is padding where token_ids (B, L) == pad_id.
                    """
                    real = (token_ids != pad_id).float().unsqueeze(-1)  # (B, L, 1)
                    total = (hidden * real).sum(dim=1)  # (B, d_model)
                    count = real.sum(dim=1).clamp(min=1.0)  # (B, 1)
                    return total / count
                '''
            )
        },
        {
            "test_masked_mean": "masked_mean computes in float32 when given half precision",
        },
        # Issue 40's ninth blind corpus, graded blind on feb0b2e: named.
    ),
    Mutant(
        "s05-03: pad id 0 written in for the mask and the pooling",
        A,
        {
            "sentiment_model": Rewrite(
                r'''
                class SentimentModel(nn.Module):
                    """Token ids (B, L) -> class logits (B, num_classes).

                    Embed, add positions, encode with a padding mask, pool, classify.
                    """

                    def __init__(
                        self,
                        vocab_size: int,
                        d_model: int = 64,
                        num_heads: int = 4,
                        num_layers: int = 2,
                        d_ff: int = 128,
                        num_classes: int = 2,
                        max_len: int = 64,
                        pad_id: int = 0,
                        dropout: float = 0.1,
                    ):
                        super().__init__()
                        self.pad_id = pad_id
                        self.embed = TokenEmbedding(vocab_size, d_model, padding_idx=pad_id)
                        self.position = SinusoidalPositionalEncoding(d_model, max_len, dropout)
                        self.encoder = TransformerEncoder(num_layers, d_model, num_heads, d_ff, dropout)
                        self.classifier = nn.Linear(d_model, num_classes)

                    def forward(self, token_ids: Tensor, return_attention: bool = False):
                        """token_ids (B, L) -> logits (B, num_classes).

                        With return_attention, also a list of (B, H, L, L) weights, one per layer.
                        """
                        mask = padding_mask(token_ids, 0)
                        x = self.position(self.embed(token_ids))
                        hidden, weights = self.encoder(x, mask)
                        logits = self.classifier(masked_mean(hidden, token_ids, 0))
                        if return_attention:
                            return logits, weights
                        return logits
                '''
            )
        },
        {
            "test_padding_invariance": "the pad id is hard-coded to 0",
        },
        # Issue 40's ninth blind corpus, graded blind on feb0b2e: named.
        # Charged once, in test_padding_invariance: test_sentiment_model judges sentences
        # without padding.
        charged_once=True,
    ),
    Mutant(
        "s05-04: model.train() called after the forward pass",
        A,
        {
            "training_step": Rewrite(
                r'''
                def make_optimizer(
                    model: nn.Module, lr: float, weight_decay: float
                ) -> torch.optim.Optimizer:
                    """AdamW over every parameter of model."""
                    return torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=weight_decay)


                def train_step(
                    model: nn.Module,
                    inputs: Tensor,
                    labels: Tensor,
                    optimizer: torch.optim.Optimizer,
                    max_grad_norm: float,
                    scheduler=None,
                ) -> float:
                    """One update on inputs (B, L) and labels (B,); returns the pre-update loss."""
                    logits = model(inputs)
                    model.train()
                    loss = F.cross_entropy(logits, labels)
                    optimizer.zero_grad()
                    loss.backward()
                    nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
                    optimizer.step()
                    if scheduler is not None:
                        scheduler.step()
                    return loss.item()
                '''
            )
        },
        {
            "test_train_step": "model.train() comes after the forward pass",
        },
        # Issue 40's ninth blind corpus, graded blind on feb0b2e: named.
    ),
    Mutant(
        "s05-05: token_importance sums over the keys' axis, not the queries'",
        A,
        {
            "token_importance": Rewrite(
                r'''
                def token_importance(weights: list[Tensor], token_ids: Tensor, pad_id: int) -> Tensor:
                    """One score per token from the attention maps -> (B, L).

                    weights: one (B, H, L, L) map per layer; token_ids: (B, L), padding where == pad_id.
                    A sentence's real tokens' scores sum to 1; padded positions score 0.
                    """
                    # My score: the attention weight each token receives as a key, averaged over
                    # the REAL queries only (padded queries' rows are ignored), over the heads and
                    # over the layers; then restricted to the real tokens and renormalised so a
                    # sentence's scores sum to 1. A sentence of nothing but pads scores zeros.
                    stacked = torch.stack(list(weights))  # (layers, B, H, L, L)
                    mean_map = stacked.mean(dim=(0, 2))  # (B, L, L): query x key
                    real = (token_ids != pad_id).to(device=mean_map.device, dtype=mean_map.dtype)
                    received = (mean_map * real.unsqueeze(-1)).sum(dim=-1)  # (B, L): over real queries
                    received = received * real
                    total = received.sum(dim=-1, keepdim=True)
                    safe = torch.where(total > 0, total, torch.ones_like(total))
                    return torch.where(total > 0, received / safe, torch.zeros_like(received))
                '''
            )
        },
        {
            "test_token_importance": "your score of a token is the sum of its own row",
        },
        # Issue 40's ninth blind corpus, graded blind on feb0b2e: counterexample (named since).
    ),
    Mutant(
        "t05-02: make_optimizer exempts biases and norm weights from weight decay",
        A,
        {
            "training_step": Rewrite(
                r'''
                def make_optimizer(
                    model: nn.Module, lr: float, weight_decay: float
                ) -> torch.optim.Optimizer:
                    """AdamW over every parameter of model."""
                    decay, no_decay = [], []
                    for param in model.parameters():
                        # biases and LayerNorm gains (1-D) are not decayed
                        (no_decay if param.dim() < 2 else decay).append(param)
                    groups = [
                        {"params": decay, "weight_decay": weight_decay},
                        {"params": no_decay, "weight_decay": 0.0},
                    ]
                    return torch.optim.AdamW(groups, lr=lr)


                def train_step(
                    model: nn.Module,
                    inputs: Tensor,
                    labels: Tensor,
                    optimizer: torch.optim.Optimizer,
                    max_grad_norm: float,
                    scheduler=None,
                ) -> float:
                    """One update on inputs (B, L) and labels (B,); returns the pre-update loss."""
                    model.train()
                    logits = model(inputs)
                    loss = F.cross_entropy(logits, labels)
                    optimizer.zero_grad()
                    loss.backward()
                    nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
                    optimizer.step()
                    if scheduler is not None:
                        scheduler.step()
                    return loss.item()
                '''
            )
        },
        {
            "test_make_optimizer": "returned an AdamW whose weight_decay is not",
        },
        # Issue 40's ninth blind corpus, graded blind on feb0b2e: named.
    ),
    Mutant(
        "t05-03: the attention mask built with pad id 0",
        A,
        {
            "sentiment_model": Rewrite(
                r'''
                class SentimentModel(nn.Module):
                    """Token ids (B, L) -> class logits (B, num_classes).

                    Embed, add positions, encode with a padding mask, pool, classify.
                    """

                    def __init__(
                        self,
                        vocab_size: int,
                        d_model: int = 64,
                        num_heads: int = 4,
                        num_layers: int = 2,
                        d_ff: int = 128,
                        num_classes: int = 2,
                        max_len: int = 64,
                        pad_id: int = 0,
                        dropout: float = 0.1,
                    ):
                        super().__init__()
                        self.pad_id = pad_id
                        self.embed = TokenEmbedding(vocab_size, d_model, padding_idx=pad_id)
                        self.position = SinusoidalPositionalEncoding(d_model, max_len, dropout)
                        self.encoder = TransformerEncoder(num_layers, d_model, num_heads, d_ff, dropout)
                        self.classifier = nn.Linear(d_model, num_classes)

                    def forward(self, token_ids: Tensor, return_attention: bool = False):
                        """token_ids (B, L) -> logits (B, num_classes).

                        With return_attention, also a list of (B, H, L, L) weights, one per layer.
                        """
                        x = self.position(self.embed(token_ids))
                        mask = padding_mask(token_ids, 0)  # <pad> is id 0
                        hidden, weights = self.encoder(x, mask)
                        logits = self.classifier(masked_mean(hidden, token_ids, self.pad_id))
                        if return_attention:
                            return logits, weights
                        return logits
                '''
            )
        },
        {
            "test_padding_invariance": "the pad id is hard-coded to 0",
        },
        # Issue 40's ninth blind corpus, graded blind on feb0b2e: named.
        # Charged once, in test_padding_invariance: test_sentiment_model judges sentences
        # without padding.
        charged_once=True,
    ),
    Mutant(
        "t05-04: masked_mean divides by a count that may be 0",
        A,
        {
            "masked_mean": Rewrite(
                r'''
                def masked_mean(hidden: Tensor, token_ids: Tensor, pad_id: int) -> Tensor:
                    """Mean of hidden (B, L, d_model) over the non-padding positions -> (B, d_model).

                    A position is padding where token_ids (B, L) == pad_id.
                    """
                    is_real = token_ids != pad_id  # (B, L)
                    summed = hidden.masked_fill(~is_real.unsqueeze(-1), 0.0).sum(dim=1)
                    return summed / is_real.sum(dim=1, keepdim=True).to(hidden.dtype)
                '''
            )
        },
        {
            "test_masked_mean": "a row made only of padding divides a sum of 0 by a count of 0, which is NaN",
        },
        # Issue 40's ninth blind corpus, graded blind on feb0b2e: named.
    ),
    Mutant(
        "u05-01: masked_mean divides by a count that may be 0",
        A,
        {
            "masked_mean": Rewrite(
                r'''
                def masked_mean(hidden: Tensor, token_ids: Tensor, pad_id: int) -> Tensor:
                    """Mean of hidden (B, L, d_model) over the non-padding positions -> (B, d_model).

                    A position is padding where token_ids (B, L) == pad_id.
                    """
                    real = (token_ids != pad_id).unsqueeze(-1).to(hidden.dtype)  # (B, L, 1)
                    return (hidden * real).sum(dim=1) / real.sum(dim=1)
                '''
            )
        },
        {
            "test_masked_mean": "a row made only of padding divides a sum of 0 by a count of 0",
        },
        # Issue 40's tenth blind corpus, graded blind on 60c32e8: named.
    ),
    Mutant(
        "u05-02: the pooling call hard-codes pad id 0",
        A,
        {
            "sentiment_model": Rewrite(
                r'''
                class SentimentModel(nn.Module):
                    """Token ids (B, L) -> class logits (B, num_classes).

                    Embed, add positions, encode with a padding mask, pool, classify.
                    """

                    def __init__(
                        self,
                        vocab_size: int,
                        d_model: int = 64,
                        num_heads: int = 4,
                        num_layers: int = 2,
                        d_ff: int = 128,
                        num_classes: int = 2,
                        max_len: int = 64,
                        pad_id: int = 0,
                        dropout: float = 0.1,
                    ):
                        super().__init__()
                        self.pad_id = pad_id
                        self.embed = TokenEmbedding(vocab_size, d_model, padding_idx=pad_id)
                        self.position = SinusoidalPositionalEncoding(d_model, max_len, dropout)
                        self.encoder = TransformerEncoder(num_layers, d_model, num_heads, d_ff, dropout)
                        self.classifier = nn.Linear(d_model, num_classes)

                    def forward(self, token_ids: Tensor, return_attention: bool = False):
                        """token_ids (B, L) -> logits (B, num_classes).

                        With return_attention, also a list of (B, H, L, L) weights, one per layer.
                        """
                        x = self.position(self.embed(token_ids))
                        hidden, weights = self.encoder(x, padding_mask(token_ids, self.pad_id))
                        logits = self.classifier(masked_mean(hidden, token_ids, 0))
                        if return_attention:
                            return logits, weights
                        return logits
                '''
            )
        },
        {
            "test_padding_invariance": "the pad id is hard-coded to 0",
        },
        # Issue 40's tenth blind corpus, graded blind on 60c32e8: named, and charged in
        # test_padding_invariance too.
        # Charged once, in test_padding_invariance: test_sentiment_model judges sentences
        # without padding.
        charged_once=True,
    ),
    Mutant(
        "u05-03: the output layer kept in a plain Python list",
        A,
        {
            "sentiment_model": Rewrite(
                r'''
                class SentimentModel(nn.Module):
                    """Token ids (B, L) -> class logits (B, num_classes).

                    Embed, add positions, encode with a padding mask, pool, classify.
                    """

                    def __init__(
                        self,
                        vocab_size: int,
                        d_model: int = 64,
                        num_heads: int = 4,
                        num_layers: int = 2,
                        d_ff: int = 128,
                        num_classes: int = 2,
                        max_len: int = 64,
                        pad_id: int = 0,
                        dropout: float = 0.1,
                    ):
                        super().__init__()
                        self.pad_id = pad_id
                        self.embed = TokenEmbedding(vocab_size, d_model, padding_idx=pad_id)
                        self.position = SinusoidalPositionalEncoding(d_model, max_len, dropout)
                        self.encoder = TransformerEncoder(num_layers, d_model, num_heads, d_ff, dropout)
                        self.head = [nn.Linear(d_model, num_classes)]  # the classification layer

                    def forward(self, token_ids: Tensor, return_attention: bool = False):
                        """token_ids (B, L) -> logits (B, num_classes).

                        With return_attention, also a list of (B, H, L, L) weights, one per layer.
                        """
                        x = self.position(self.embed(token_ids))
                        hidden, weights = self.encoder(x, padding_mask(token_ids, self.pad_id))
                        logits = self.head[0](masked_mean(hidden, token_ids, self.pad_id))
                        if return_attention:
                            return logits, weights
                        return logits
                '''
            )
        },
        {
            "test_sentiment_model": "self.head is a plain Python list, and nn.Module does not "
            "register the modules in it",
        },
        # Issue 40's tenth blind corpus, graded blind on 60c32e8: counterexample (named since:
        # registration.dtype_left_behind).
    ),
    Mutant(
        "u05-04: training_step clips each gradient entry, clip_grad_value_",
        A,
        {
            "training_step": Rewrite(
                r'''
                def make_optimizer(
                    model: nn.Module, lr: float, weight_decay: float
                ) -> torch.optim.Optimizer:
                    """AdamW over every parameter of model."""
                    return torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=weight_decay)


                def train_step(
                    model: nn.Module,
                    inputs: Tensor,
                    labels: Tensor,
                    optimizer: torch.optim.Optimizer,
                    max_grad_norm: float,
                    scheduler=None,
                ) -> float:
                    """One update on inputs (B, L) and labels (B,); returns the pre-update loss."""
                    model.train()
                    optimizer.zero_grad()
                    loss = F.cross_entropy(model(inputs), labels)
                    loss.backward()
                    nn.utils.clip_grad_value_(model.parameters(), max_grad_norm)
                    optimizer.step()
                    if scheduler is not None:
                        scheduler.step()
                    return loss.item()
                '''
            )
        },
        {
            "test_train_step": "each gradient entry is clipped to [-max_grad_norm, max_grad_norm]",
        },
        # Issue 40's tenth blind corpus, graded blind on 60c32e8: named.
    ),
    Mutant(
        "u05-05: token_importance averages over every query row, pads included",
        A,
        {
            "token_importance": Rewrite(
                r'''
                def token_importance(weights: list[Tensor], token_ids: Tensor, pad_id: int) -> Tensor:
                    """One score per token from the attention maps -> (B, L).

                    weights: one (B, H, L, L) map per layer; token_ids: (B, L), padding where == pad_id.
                    A sentence's real tokens' scores sum to 1; padded positions score 0.
                    """
                    # Score: the attention each token receives as a key, averaged over the queries,
                    # heads and layers, with the pads set to 0 and renormalised over the real tokens
                    # (a sentence of pads only has total 0, clamped, so it scores 0).
                    received = torch.stack(list(weights)).mean(dim=(0, 2)).mean(dim=1)  # (B, L_k)
                    received = received.masked_fill(token_ids == pad_id, 0.0)
                    total = received.sum(dim=-1, keepdim=True)
                    return received / total.clamp_min(torch.finfo(received.dtype).tiny)
                '''
            )
        },
        {
            "test_token_importance": "your score reads the padded queries' rows",
        },
        # Issue 40's tenth blind corpus, graded blind on 60c32e8: named.
    ),
    Mutant(
        "v05-01: masked_mean hard-codes pad id 0",
        A,
        {
            "masked_mean": Rewrite(
                r'''
                def masked_mean(hidden: Tensor, token_ids: Tensor, pad_id: int) -> Tensor:
                    """Mean of hidden (B, L, d_model) over the non-padding positions -> (B, d_model).

                    A position is padding where token_ids (B, L) == pad_id.
                    """
                    real = (token_ids != 0).to(hidden.dtype).unsqueeze(-1)  # (B, L, 1)
                    total = (hidden * real).sum(dim=1)
                    count = real.sum(dim=1).clamp(min=1.0)
                    return total / count
                '''
            )
        },
        {
            "test_masked_mean": "the pad id is hard-coded to 0",
            "test_padding_invariance": "this cell uses your answer cell `masked_mean`",
        },
        # Issue 40's tenth blind corpus, graded blind on 60c32e8: named; test_sentiment_model and
        # test_padding_invariance not charged again.
    ),
    Mutant(
        "v05-02: masked_mean's weights made with .float()",
        A,
        {
            "masked_mean": Rewrite(
                r'''
                def masked_mean(hidden: Tensor, token_ids: Tensor, pad_id: int) -> Tensor:
                    """Mean of hidden (B, L, d_model) over the non-padding positions -> (B, d_model).

                    A position is padding where token_ids (B, L) == pad_id.
                    """
                    real = (token_ids != pad_id).float().unsqueeze(-1)  # (B, L, 1)
                    total = (hidden * real).sum(dim=1)
                    count = real.sum(dim=1).clamp(min=1.0)
                    return total / count
                '''
            )
        },
        {
            "test_masked_mean": "masked_mean computes in float32 when given half precision",
        },
        # Issue 40's tenth blind corpus, graded blind on 60c32e8: named.
    ),
    Mutant(
        "v05-03: self.position made but never added",
        A,
        {
            "sentiment_model": Rewrite(
                r'''
                class SentimentModel(nn.Module):
                    """Token ids (B, L) -> class logits (B, num_classes).

                    Embed, add positions, encode with a padding mask, pool, classify.
                    """

                    def __init__(
                        self,
                        vocab_size: int,
                        d_model: int = 64,
                        num_heads: int = 4,
                        num_layers: int = 2,
                        d_ff: int = 128,
                        num_classes: int = 2,
                        max_len: int = 64,
                        pad_id: int = 0,
                        dropout: float = 0.1,
                    ):
                        super().__init__()
                        self.pad_id = pad_id
                        self.embed = TokenEmbedding(vocab_size, d_model, padding_idx=pad_id)
                        self.position = SinusoidalPositionalEncoding(d_model, max_len, dropout)
                        self.encoder = TransformerEncoder(num_layers, d_model, num_heads, d_ff, dropout)
                        self.classifier = nn.Linear(d_model, num_classes)

                    def forward(self, token_ids: Tensor, return_attention: bool = False):
                        """token_ids (B, L) -> logits (B, num_classes).

                        With return_attention, also a list of (B, H, L, L) weights, one per layer.
                        """
                        mask = padding_mask(token_ids, self.pad_id)
                        x = self.embed(token_ids)
                        hidden, weights = self.encoder(x, mask)
                        logits = self.classifier(masked_mean(hidden, token_ids, self.pad_id))
                        if return_attention:
                            return logits, weights
                        return logits
                '''
            )
        },
        {
            "test_sentiment_model": "the positional encoding is missing",
            "test_heldout_contrast": "this cell uses your answer cell `sentiment_model`",
        },
        # Issue 40's tenth blind corpus, graded blind on 60c32e8: named, and charged in
        # test_heldout_contrast too.
    ),
    Mutant(
        "v05-04: training_step returns the loss of a second pass after the update",
        A,
        {
            "training_step": Rewrite(
                r'''
                def make_optimizer(
                    model: nn.Module, lr: float, weight_decay: float
                ) -> torch.optim.Optimizer:
                    """AdamW over every parameter of model."""
                    return torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=weight_decay)


                def train_step(
                    model: nn.Module,
                    inputs: Tensor,
                    labels: Tensor,
                    optimizer: torch.optim.Optimizer,
                    max_grad_norm: float,
                    scheduler=None,
                ) -> float:
                    """One update on inputs (B, L) and labels (B,); returns the pre-update loss."""
                    model.train()
                    logits = model(inputs)
                    loss = F.cross_entropy(logits, labels)
                    optimizer.zero_grad()
                    loss.backward()
                    nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
                    optimizer.step()
                    if scheduler is not None:
                        scheduler.step()
                    with torch.no_grad():  # report the loss of the updated model
                        loss = F.cross_entropy(model(inputs), labels)
                    return loss.item()
                '''
            )
        },
        {
            "test_train_step": "train_step returns the loss of a second forward pass, run after the update",
        },
        # Issue 40's tenth blind corpus, graded blind on 60c32e8: named.
    ),
    Mutant(
        "v05-05: token_importance averages over all query rows, padded ones included",
        A,
        {
            "token_importance": Rewrite(
                r'''
                def token_importance(weights: list[Tensor], token_ids: Tensor, pad_id: int) -> Tensor:
                    """One score per token from the attention maps -> (B, L).

                    weights: one (B, H, L, L) map per layer; token_ids: (B, L), padding where == pad_id.
                    A sentence's real tokens' scores sum to 1; padded positions score 0.
                    """
                    # Design: the attention weight each token RECEIVES as a key, averaged over the real
                    # queries of its sentence, over the heads and over the layers (padded queries' rows
                    # are ignored). Pad keys are zeroed and the result is renormalised over the real
                    # keys, so a sentence's real tokens share 1. A sentence of pads only scores 0.
                    real = token_ids != pad_id  # (B, L)
                    stacked = torch.stack(list(weights), dim=0)  # (layers, B, H, L, L)
                    dtype = stacked.dtype
                    q_weight = torch.ones_like(real, dtype=dtype)[None, :, None, :, None]  # every query
                    received = (stacked * q_weight).sum(dim=3)  # (layers, B, H, L_k)
                    received = received.mean(dim=(0, 2))  # (B, L_k)
                    received = received * real.to(dtype)
                    total = received.sum(dim=-1, keepdim=True)
                    safe = torch.where(total > 0, total, torch.ones_like(total))
                    return torch.where(total > 0, received / safe, torch.zeros_like(received))
                '''
            )
        },
        {
            "test_token_importance": "your score reads the padded queries' rows",
        },
        # Issue 40's tenth blind corpus, graded blind on 60c32e8: named.
    ),
    Mutant(
        "w05-01: masked_mean finds the pads with token_ids != 0",
        A,
        {
            "masked_mean": Rewrite(
                r'''
                def masked_mean(hidden: Tensor, token_ids: Tensor, pad_id: int) -> Tensor:
                    """Mean of hidden (B, L, d_model) over the non-padding positions -> (B, d_model).

                    A position is padding where token_ids (B, L) == pad_id.
                    """
                    attention_mask = (token_ids != 0).to(hidden.dtype).unsqueeze(-1)  # 1 = keep
                    total = (hidden * attention_mask).sum(dim=1)
                    count = attention_mask.sum(dim=1).clamp(min=1.0)
                    return total / count
                '''
            )
        },
        {
            "test_masked_mean": "the pad id is hard-coded to 0",
            "test_padding_invariance": "this cell uses your answer cell `masked_mean`",
        },
        # Issue 40's eleventh blind corpus, graded blind on 48fe40c: named; test_padding_invariance
        # not charged again (test_sentiment_model then too; it judges no padding since).
    ),
    Mutant(
        "w05-02: SentimentModel pools with a plain mean over every position",
        A,
        {
            "sentiment_model": Rewrite(
                r'''
                class SentimentModel(nn.Module):
                    """Token ids (B, L) -> class logits (B, num_classes).

                    Embed, add positions, encode with a padding mask, pool, classify.
                    """

                    def __init__(
                        self,
                        vocab_size: int,
                        d_model: int = 64,
                        num_heads: int = 4,
                        num_layers: int = 2,
                        d_ff: int = 128,
                        num_classes: int = 2,
                        max_len: int = 64,
                        pad_id: int = 0,
                        dropout: float = 0.1,
                    ):
                        super().__init__()
                        self.pad_id = pad_id
                        self.embed = TokenEmbedding(vocab_size, d_model, padding_idx=pad_id)
                        self.position = SinusoidalPositionalEncoding(d_model, max_len, dropout)
                        self.encoder = TransformerEncoder(num_layers, d_model, num_heads, d_ff, dropout)
                        self.classifier = nn.Linear(d_model, num_classes)

                    def forward(self, token_ids: Tensor, return_attention: bool = False):
                        """token_ids (B, L) -> logits (B, num_classes).

                        With return_attention, also a list of (B, H, L, L) weights, one per layer.
                        """
                        mask = padding_mask(token_ids, self.pad_id)
                        x = self.position(self.embed(token_ids))
                        hidden, weights = self.encoder(x, mask)
                        logits = self.classifier(hidden.mean(dim=1))
                        if return_attention:
                            return logits, weights
                        return logits
                '''
            )
        },
        {
            "test_padding_invariance": "pooling includes padding",
        },
        # Issue 40's eleventh blind corpus, graded blind on 48fe40c: named; charged in both cells
        # then, once since, in test_padding_invariance (test_sentiment_model judges sentences
        # without padding).
        charged_once=True,
    ),
    Mutant(
        "w05-03: model.train() called at the end of the step",
        A,
        {
            "training_step": Rewrite(
                r'''
                def make_optimizer(
                    model: nn.Module, lr: float, weight_decay: float
                ) -> torch.optim.Optimizer:
                    """AdamW over every parameter of model."""
                    return torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=weight_decay)


                def train_step(
                    model: nn.Module,
                    inputs: Tensor,
                    labels: Tensor,
                    optimizer: torch.optim.Optimizer,
                    max_grad_norm: float,
                    scheduler=None,
                ) -> float:
                    """One update on inputs (B, L) and labels (B,); returns the pre-update loss."""
                    logits = model(inputs)
                    loss = F.cross_entropy(logits, labels)
                    optimizer.zero_grad()
                    loss.backward()
                    nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
                    optimizer.step()
                    if scheduler is not None:
                        scheduler.step()
                    model.train()  # leave the model in train mode
                    return loss.item()
                '''
            )
        },
        {
            "test_train_step": "model.train() comes after the forward pass",
        },
        # Issue 40's eleventh blind corpus, graded blind on 48fe40c: named.
    ),
    Mutant(
        "w05-04: make_optimizer returns Adam with weight_decay",
        A,
        {
            "training_step": Rewrite(
                r'''
                def make_optimizer(
                    model: nn.Module, lr: float, weight_decay: float
                ) -> torch.optim.Optimizer:
                    """AdamW over every parameter of model."""
                    return torch.optim.Adam(model.parameters(), lr=lr, weight_decay=weight_decay)


                def train_step(
                    model: nn.Module,
                    inputs: Tensor,
                    labels: Tensor,
                    optimizer: torch.optim.Optimizer,
                    max_grad_norm: float,
                    scheduler=None,
                ) -> float:
                    """One update on inputs (B, L) and labels (B,); returns the pre-update loss."""
                    model.train()
                    logits = model(inputs)
                    loss = F.cross_entropy(logits, labels)
                    optimizer.zero_grad()
                    loss.backward()
                    nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
                    optimizer.step()
                    if scheduler is not None:
                        scheduler.step()
                    return loss.item()
                '''
            )
        },
        {
            "test_make_optimizer": "this is Adam, not AdamW",
            "test_heldout_accuracy": "this cell uses your answer cell `training_step`",
            "test_heldout_contrast": "this cell uses your answer cell `training_step`",
        },
        # Issue 40's eleventh blind corpus, graded blind on 48fe40c: named; the held-out cells
        # charged too (the model it trains learns nothing), as then.
    ),
    Mutant(
        "w05-05: token_importance averages over every query, the padded ones too",
        A,
        {
            "token_importance": Rewrite(
                r'''
                def token_importance(weights: list[Tensor], token_ids: Tensor, pad_id: int) -> Tensor:
                    """One score per token from the attention maps -> (B, L).

                    weights: one (B, H, L, L) map per layer; token_ids: (B, L), padding where == pad_id.
                    A sentence's real tokens' scores sum to 1; padded positions score 0.
                    """
                    # Design: the attention each token receives as a key, averaged over the queries,
                    # the heads and the layers, zero at the pads, renormalised per sentence.
                    real = (token_ids != pad_id).to(weights[0].dtype)
                    received = torch.stack([w.mean(dim=(1, 2)) for w in weights]).mean(dim=0)  # (B, L)
                    received = received * real
                    total = received.sum(dim=-1, keepdim=True)
                    return received / total.clamp(min=torch.finfo(received.dtype).tiny)
                '''
            )
        },
        {
            "test_token_importance": "your score reads the padded queries' rows",
        },
        # Issue 40's eleventh blind corpus, graded blind on 48fe40c: named.
    ),
    Mutant(
        "x05-01: masked_mean divides by a count that may be 0",
        A,
        {
            "masked_mean": Rewrite(
                r'''
                def masked_mean(hidden: Tensor, token_ids: Tensor, pad_id: int) -> Tensor:
                    """Mean of hidden (B, L, d_model) over the non-padding positions -> (B, d_model).

                    A position is padding where token_ids (B, L) == pad_id.
                    """
                    real = (token_ids != pad_id).to(hidden.dtype).unsqueeze(-1)  # (B, L, 1)
                    total = (hidden * real).sum(dim=1)  # (B, d_model)
                    count = real.sum(dim=1)  # (B, 1): the number of real tokens
                    return total / count
                '''
            )
        },
        {
            "test_masked_mean": "a row made only of padding divides a sum of 0 by a count of 0",
        },
        # Issue 40's eleventh blind corpus, graded blind on 48fe40c: named.
    ),
    Mutant(
        "x05-02: masked_mean's padding weights made with .float()",
        A,
        {
            "masked_mean": Rewrite(
                r'''
                def masked_mean(hidden: Tensor, token_ids: Tensor, pad_id: int) -> Tensor:
                    """Mean of hidden (B, L, d_model) over the non-padding positions -> (B, d_model).

                    A position is padding where token_ids (B, L) == pad_id.
                    """
                    real = (token_ids != pad_id).float().unsqueeze(-1)  # (B, L, 1)
                    total = (hidden * real).sum(dim=1)  # (B, d_model)
                    count = real.sum(dim=1).clamp_min(1.0)  # (B, 1): a row of pads divides by 1
                    return total / count
                '''
            )
        },
        {
            "test_masked_mean": "masked_mean computes in float32 when given half precision",
        },
        # Issue 40's eleventh blind corpus, graded blind on 48fe40c: named.
    ),
    Mutant(
        "x05-03: the padding mask built with the literal pad id 0",
        A,
        {
            "sentiment_model": Rewrite(
                r'''
                class SentimentModel(nn.Module):
                    """Token ids (B, L) -> class logits (B, num_classes).

                    Embed, add positions, encode with a padding mask, pool, classify.
                    """

                    def __init__(
                        self,
                        vocab_size: int,
                        d_model: int = 64,
                        num_heads: int = 4,
                        num_layers: int = 2,
                        d_ff: int = 128,
                        num_classes: int = 2,
                        max_len: int = 64,
                        pad_id: int = 0,
                        dropout: float = 0.1,
                    ):
                        super().__init__()
                        self.pad_id = pad_id
                        self.embed = TokenEmbedding(vocab_size, d_model, padding_idx=pad_id)
                        self.position = SinusoidalPositionalEncoding(d_model, max_len, dropout)
                        self.encoder = TransformerEncoder(num_layers, d_model, num_heads, d_ff, dropout)
                        self.classifier = nn.Linear(d_model, num_classes)

                    def forward(self, token_ids: Tensor, return_attention: bool = False):
                        """token_ids (B, L) -> logits (B, num_classes).

                        With return_attention, also a list of (B, H, L, L) weights, one per layer.
                        """
                        mask = padding_mask(token_ids, 0)  # (B, 1, L): hides padded keys
                        hidden, weights = self.encoder(self.position(self.embed(token_ids)), mask)
                        pooled = masked_mean(hidden, token_ids, self.pad_id)
                        logits = self.classifier(pooled)
                        if return_attention:
                            return logits, weights
                        return logits
                '''
            )
        },
        {
            "test_padding_invariance": "the pad id is hard-coded to 0",
        },
        # Issue 40's eleventh blind corpus, graded blind on 48fe40c: named; charged in both cells
        # then, once since, in test_padding_invariance (test_sentiment_model judges sentences
        # without padding).
        charged_once=True,
    ),
    Mutant(
        "x05-04: the scheduler stepped before the optimizer",
        A,
        {
            "training_step": Rewrite(
                r'''
                def make_optimizer(
                    model: nn.Module, lr: float, weight_decay: float
                ) -> torch.optim.Optimizer:
                    """AdamW over every parameter of model."""
                    return torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=weight_decay)


                def train_step(
                    model: nn.Module,
                    inputs: Tensor,
                    labels: Tensor,
                    optimizer: torch.optim.Optimizer,
                    max_grad_norm: float,
                    scheduler=None,
                ) -> float:
                    """One update on inputs (B, L) and labels (B,); returns the pre-update loss."""
                    model.train()
                    logits = model(inputs)
                    loss = F.cross_entropy(logits, labels)
                    optimizer.zero_grad()
                    loss.backward()
                    nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
                    if scheduler is not None:
                        scheduler.step()
                    optimizer.step()
                    return loss.item()
                '''
            )
        },
        {
            "test_train_step": "scheduler.step() runs before optimizer.step()",
        },
        # Issue 40's eleventh blind corpus, graded blind on 48fe40c: named.
    ),
    Mutant(
        "x05-05: a query counted as real when its row holds any weight",
        A,
        {
            "token_importance": Rewrite(
                r'''
                def token_importance(weights: list[Tensor], token_ids: Tensor, pad_id: int) -> Tensor:
                    """One score per token from the attention maps -> (B, L).

                    weights: one (B, H, L, L) map per layer; token_ids: (B, L), padding where == pad_id.
                    A sentence's real tokens' scores sum to 1; padded positions score 0.
                    """
                    # Design: the attention a token RECEIVES as a key, summed over the real queries only
                    # (the padded queries' rows are ignored, so pads change nothing), averaged over the
                    # heads and the layers, zeroed at the pads and renormalised so that the real tokens
                    # of each sentence share 1. A sentence of pads only has a zero total: it keeps zeros.
                    dtype = weights[0].dtype
                    real = (token_ids != pad_id).to(device=weights[0].device, dtype=dtype)  # (B, L)
                    received = torch.zeros_like(real)
                    for w in weights:  # (B, H, L_q, L_k)
                        # a query counts when its row holds weight (a padded query's row is empty)
                        live = (w.sum(dim=-1, keepdim=True) > 0).to(dtype)  # (B, H, L_q, 1)
                        per_head = (w * live).sum(dim=2)  # (B, H, L_k)
                        received = received + per_head.mean(dim=1)
                    received = received / len(weights) * real
                    total = received.sum(dim=-1, keepdim=True)
                    safe = torch.where(total > 0, total, torch.ones_like(total))
                    return torch.where(total > 0, received / safe, torch.zeros_like(received))
                '''
            )
        },
        {
            "test_token_importance": "your score reads the padded queries' rows",
        },
        # Issue 40's eleventh blind corpus, graded blind on 48fe40c: named.
    ),
    Mutant(
        "aa05-01: masked_mean divides by a count that may be 0",
        A,
        {
            "masked_mean": Rewrite(
                r'''
                def masked_mean(hidden: Tensor, token_ids: Tensor, pad_id: int) -> Tensor:
                    """Mean of hidden (B, L, d_model) over the non-padding positions -> (B, d_model).

                    A position is padding where token_ids (B, L) == pad_id.
                    """
                    real = (token_ids != pad_id).to(hidden.dtype).unsqueeze(-1)  # (B, L, 1)
                    return (hidden * real).sum(dim=1) / real.sum(dim=1)
                '''
            )
        },
        {
            "test_masked_mean": "a row made only of padding divides a sum of 0 by a count of 0",
        },
        # Issue 40's thirteenth blind corpus, graded blind on 8b5375e: named.
    ),
    Mutant(
        "aa05-02: pad id 0 hard-coded in forward, for the mask and the pooling",
        A,
        {
            "sentiment_model": Rewrite(
                r'''
                class SentimentModel(nn.Module):
                    """Token ids (B, L) -> class logits (B, num_classes).

                    Embed, add positions, encode with a padding mask, pool, classify.
                    """

                    def __init__(
                        self,
                        vocab_size: int,
                        d_model: int = 64,
                        num_heads: int = 4,
                        num_layers: int = 2,
                        d_ff: int = 128,
                        num_classes: int = 2,
                        max_len: int = 64,
                        pad_id: int = 0,
                        dropout: float = 0.1,
                    ):
                        super().__init__()
                        self.pad_id = pad_id
                        self.embed = TokenEmbedding(vocab_size, d_model, padding_idx=pad_id)
                        self.position = SinusoidalPositionalEncoding(d_model, max_len, dropout)
                        self.encoder = TransformerEncoder(num_layers, d_model, num_heads, d_ff, dropout)
                        self.classifier = nn.Linear(d_model, num_classes)

                    def forward(self, token_ids: Tensor, return_attention: bool = False):
                        """token_ids (B, L) -> logits (B, num_classes).

                        With return_attention, also a list of (B, H, L, L) weights, one per layer.
                        """
                        mask = padding_mask(token_ids, 0)  # (B, 1, L): <pad> is id 0
                        x = self.position(self.embed(token_ids))
                        hidden, weights = self.encoder(x, mask)
                        logits = self.classifier(masked_mean(hidden, token_ids, 0))
                        if return_attention:
                            return logits, weights
                        return logits
                '''
            )
        },
        {
            "test_padding_invariance": "the pad id is hard-coded to 0",
        },
        # Issue 40's thirteenth blind corpus, graded blind on 8b5375e: named.
    ),
    Mutant(
        "aa05-03: train_step calls model.train() after the update",
        A,
        {
            "training_step": Rewrite(
                r'''
                def make_optimizer(
                    model: nn.Module, lr: float, weight_decay: float
                ) -> torch.optim.Optimizer:
                    """AdamW over every parameter of model."""
                    return torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=weight_decay)


                def train_step(
                    model: nn.Module,
                    inputs: Tensor,
                    labels: Tensor,
                    optimizer: torch.optim.Optimizer,
                    max_grad_norm: float,
                    scheduler=None,
                ) -> float:
                    """One update on inputs (B, L) and labels (B,); returns the pre-update loss."""
                    logits = model(inputs)
                    loss = F.cross_entropy(logits, labels)
                    optimizer.zero_grad()
                    loss.backward()
                    nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
                    optimizer.step()
                    if scheduler is not None:
                        scheduler.step()
                    model.train()  # leave the model in train mode for the next step
                    return loss.item()
                '''
            )
        },
        {
            "test_train_step": "model.train() comes after the forward pass",
        },
        # Issue 40's thirteenth blind corpus, graded blind on 8b5375e: named.
    ),
    Mutant(
        "aa05-04: token_importance normalised by the sum over the whole batch, not per sentence",
        A,
        {
            "token_importance": Rewrite(
                r'''
                def token_importance(weights: list[Tensor], token_ids: Tensor, pad_id: int) -> Tensor:
                    """One score per token from the attention maps -> (B, L).

                    weights: one (B, H, L, L) map per layer; token_ids: (B, L), padding where == pad_id.
                    A sentence's real tokens' scores sum to 1; padded positions score 0.
                    """
                    # My score: the attention weight each token receives as a key, averaged over the
                    # heads, summed over the real queries and the layers, then normalised to sum to 1.
                    dtype = weights[0].dtype
                    real = (token_ids != pad_id).to(device=weights[0].device, dtype=dtype)  # (B, L)
                    received = torch.zeros(real.shape, dtype=dtype, device=real.device)
                    for w in weights:
                        received = received + (w.mean(dim=1) * real.unsqueeze(-1)).sum(dim=1)
                    received = received * real
                    total = received.sum()
                    if total > 0:
                        received = received / total
                    return received
                '''
            )
        },
        {
            "test_token_importance": "sum to 1 over each sentence's real tokens",
        },
        # Issue 40's thirteenth blind corpus, graded blind on 8b5375e: named by the properties it
        # breaks (each sentence's scores sum to 1, sentences scored apart), with a counterexample;
        # no sentence names the sum over the batch.
        not_told=("reads the padded queries' rows",),
    ),
    Mutant(
        "aa05-05: masked_mean zeroes the pads of the caller's hidden through an alias, in place",
        A,
        {
            "masked_mean": Rewrite(
                r'''
                def masked_mean(hidden: Tensor, token_ids: Tensor, pad_id: int) -> Tensor:
                    """Mean of hidden (B, L, d_model) over the non-padding positions -> (B, d_model).

                    A position is padding where token_ids (B, L) == pad_id.
                    """
                    is_pad = token_ids == pad_id  # (B, L)
                    h = hidden
                    h[is_pad] = 0.0  # padded positions contribute nothing
                    count = (~is_pad).sum(dim=1, keepdim=True).clamp(min=1).to(hidden.dtype)  # (B, 1)
                    return h.sum(dim=1) / count
                '''
            )
        },
        {
            "test_masked_mean": "changed a tensor it was given, in place",
        },
        # Issue 40's thirteenth blind corpus, graded blind on 8b5375e: named.
    ),
    Mutant(
        "ab05-01: masked_mean divides by the unclamped count of real tokens",
        A,
        {
            "masked_mean": Rewrite(
                r'''
                def masked_mean(hidden: Tensor, token_ids: Tensor, pad_id: int) -> Tensor:
                    """Mean of hidden (B, L, d_model) over the non-padding positions -> (B, d_model).

                    A position is padding where token_ids (B, L) == pad_id.
                    """
                    real = (token_ids != pad_id).to(hidden.dtype).unsqueeze(-1)  # (B, L, 1)
                    total = (hidden * real).sum(dim=1)  # (B, d_model)
                    count = real.sum(dim=1)  # (B, 1): number of real tokens
                    return total / count
                '''
            )
        },
        {
            "test_masked_mean": "a row made only of padding divides a sum of 0 by a count of 0",
        },
        # Issue 40's thirteenth blind corpus, graded blind on 8b5375e: named.
    ),
    Mutant(
        "ab05-02: the pad id hard-coded to 0 in the attention mask",
        A,
        {
            "sentiment_model": Rewrite(
                r'''
                class SentimentModel(nn.Module):
                    """Token ids (B, L) -> class logits (B, num_classes).

                    Embed, add positions, encode with a padding mask, pool, classify.
                    """

                    def __init__(
                        self,
                        vocab_size: int,
                        d_model: int = 64,
                        num_heads: int = 4,
                        num_layers: int = 2,
                        d_ff: int = 128,
                        num_classes: int = 2,
                        max_len: int = 64,
                        pad_id: int = 0,
                        dropout: float = 0.1,
                    ):
                        super().__init__()
                        self.pad_id = pad_id
                        self.embed = TokenEmbedding(vocab_size, d_model, padding_idx=pad_id)
                        self.position = SinusoidalPositionalEncoding(d_model, max_len, dropout)
                        self.encoder = TransformerEncoder(num_layers, d_model, num_heads, d_ff, dropout)
                        self.classifier = nn.Linear(d_model, num_classes)

                    def forward(self, token_ids: Tensor, return_attention: bool = False):
                        """token_ids (B, L) -> logits (B, num_classes).

                        With return_attention, also a list of (B, H, L, L) weights, one per layer.
                        """
                        mask = padding_mask(token_ids, 0)  # (B, 1, L): hide the <pad> keys
                        x = self.position(self.embed(token_ids))
                        hidden, weights = self.encoder(x, mask)
                        logits = self.classifier(masked_mean(hidden, token_ids, self.pad_id))
                        if return_attention:
                            return logits, weights
                        return logits
                '''
            )
        },
        {
            "test_padding_invariance": "the pad id is hard-coded to 0",
        },
        # Issue 40's thirteenth blind corpus, graded blind on 8b5375e: named.
    ),
    Mutant(
        "ab05-03: train_step never calls model.train()",
        A,
        {
            "training_step": Rewrite(
                r'''
                def make_optimizer(
                    model: nn.Module, lr: float, weight_decay: float
                ) -> torch.optim.Optimizer:
                    """AdamW over every parameter of model."""
                    return torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=weight_decay)


                def train_step(
                    model: nn.Module,
                    inputs: Tensor,
                    labels: Tensor,
                    optimizer: torch.optim.Optimizer,
                    max_grad_norm: float,
                    scheduler=None,
                ) -> float:
                    """One update on inputs (B, L) and labels (B,); returns the pre-update loss."""
                    logits = model(inputs)
                    loss = F.cross_entropy(logits, labels)
                    optimizer.zero_grad()
                    loss.backward()
                    nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
                    optimizer.step()
                    if scheduler is not None:
                        scheduler.step()
                    return loss.item()
                '''
            )
        },
        {
            "test_train_step": "the model trains with dropout off: call model.train() at the start of train_step",
        },
        # Issue 40's thirteenth blind corpus, graded blind on 8b5375e: named.
    ),
    Mutant(
        "ab05-04: train_step calls torch.manual_seed(0) at the start of every step",
        A,
        {
            "training_step": Rewrite(
                r'''
                def make_optimizer(
                    model: nn.Module, lr: float, weight_decay: float
                ) -> torch.optim.Optimizer:
                    """AdamW over every parameter of model."""
                    return torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=weight_decay)


                def train_step(
                    model: nn.Module,
                    inputs: Tensor,
                    labels: Tensor,
                    optimizer: torch.optim.Optimizer,
                    max_grad_norm: float,
                    scheduler=None,
                ) -> float:
                    """One update on inputs (B, L) and labels (B,); returns the pre-update loss."""
                    model.train()
                    torch.manual_seed(0)  # the same dropout draws on every run, reproducible steps
                    logits = model(inputs)
                    loss = F.cross_entropy(logits, labels)
                    optimizer.zero_grad()
                    loss.backward()
                    nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
                    optimizer.step()
                    if scheduler is not None:
                        scheduler.step()
                    return loss.item()
                '''
            )
        },
        {
            "test_train_step": "train_step sets torch's random state itself",
        },
        # Issue 40's thirteenth blind corpus, graded blind on 8b5375e: counterexample only (named
        # since, by what it leaves of the random state: 50d019e).
        not_told=(
            "dropout off",
            "model.train() comes after",
            "the gradients left before the call enter",
            "the gradients add up",
        ),
    ),
    Mutant(
        "ab05-05: token_importance sums over every query, padded queries' rows included",
        A,
        {
            "token_importance": Rewrite(
                r'''
                def token_importance(weights: list[Tensor], token_ids: Tensor, pad_id: int) -> Tensor:
                    """One score per token from the attention maps -> (B, L).

                    weights: one (B, H, L, L) map per layer; token_ids: (B, L), padding where == pad_id.
                    A sentence's real tokens' scores sum to 1; padded positions score 0.
                    """
                    # My score: the attention weight each token receives as a key, summed over the
                    # queries, averaged over the heads and summed over the layers, then renormalised
                    # over the sentence's real tokens. It says how much the positions read from each
                    # token, on average. (The pad keys already have weight 0.)
                    dtype, device = weights[0].dtype, weights[0].device
                    real = (token_ids != pad_id).to(device)
                    real_f = real.to(dtype)  # (B, L)
                    received = torch.zeros(real.shape, dtype=dtype, device=device)
                    for layer_weights in weights:
                        # (B, H, L_q, L_k): sum over the queries, mean over the heads
                        received = received + layer_weights.sum(dim=2).mean(dim=1)
                    received = received * real_f  # exactly 0 at the pads
                    total = received.sum(dim=-1, keepdim=True)
                    safe_total = torch.where(total > 0, total, torch.ones_like(total))
                    return torch.where(total > 0, received / safe_total, torch.zeros_like(received))
                '''
            )
        },
        {
            "test_token_importance": "your score reads the padded queries' rows",
        },
        # Issue 40's thirteenth blind corpus, graded blind on 8b5375e: named.
    ),
]

CORRECT = [
    # Its NaN at a padded position (0 * inf) once counted as a mistake: the statement now
    # promises only finite values of hidden there, which this answer ignores.
    Mutant(
        "h05-02: masked_mean weights hidden by the 0/1 mask of real tokens",
        A,
        {
            "masked_mean": Rewrite(
                r'''
                def masked_mean(hidden: Tensor, token_ids: Tensor, pad_id: int) -> Tensor:
                    """Mean of hidden (B, L, d_model) over the non-padding positions -> (B, d_model)."""
                    weight = (token_ids != pad_id).unsqueeze(-1).to(hidden.dtype)  # (B, L, 1)
                    return (hidden * weight).sum(dim=1) / weight.sum(dim=1).clamp(min=1)
                '''
            )
        },
    ),
    Mutant(
        "k05-06: correct alternative",
        A,
        {
            "masked_mean": Rewrite(
                r'''
                def masked_mean(hidden: Tensor, token_ids: Tensor, pad_id: int) -> Tensor:
                    """Mean of hidden (B, L, d_model) over the non-padding positions -> (B, d_model).

                    A position is padding where token_ids (B, L) == pad_id.
                    """
                    weight = token_ids.ne(pad_id).to(hidden.dtype)  # (B, L)
                    summed = torch.bmm(weight.unsqueeze(1), hidden).squeeze(1)  # (B, d_model)
                    count = weight.sum(dim=1, keepdim=True)
                    return summed / torch.clamp(count, min=1.0)
                '''
            )
        },
        # Issue 40's sixth blind corpus, graded blind on bdfa422: correct-full.
    ),
    Mutant(
        "n05-06: <cls> pooling, hidden[:, 0]",
        A,
        {
            "sentiment_model": Rewrite(
                r'''
                class SentimentModel(nn.Module):
                    """Token ids (B, L) -> class logits (B, num_classes).

                    Embed, add positions, encode with a padding mask, pool, classify.
                    """

                    def __init__(
                        self,
                        vocab_size: int,
                        d_model: int = 64,
                        num_heads: int = 4,
                        num_layers: int = 2,
                        d_ff: int = 128,
                        num_classes: int = 2,
                        max_len: int = 64,
                        pad_id: int = 0,
                        dropout: float = 0.1,
                    ):
                        super().__init__()
                        self.pad_id = pad_id
                        self.embed = TokenEmbedding(vocab_size, d_model, padding_idx=pad_id)
                        self.position = SinusoidalPositionalEncoding(d_model, max_len, dropout)
                        self.encoder = TransformerEncoder(num_layers, d_model, num_heads, d_ff, dropout)
                        self.classifier = nn.Linear(d_model, num_classes)

                    def forward(self, token_ids: Tensor, return_attention: bool = False):
                        """token_ids (B, L) -> logits (B, num_classes).

                        With return_attention, also a list of (B, H, L, L) weights, one per layer.
                        """
                        mask = padding_mask(token_ids, self.pad_id)
                        x = self.position(self.embed(token_ids))
                        hidden, weights = self.encoder(x, mask)
                        logits = self.classifier(hidden[:, 0])  # CLS pooling: the output at <cls>
                        if return_attention:
                            return logits, weights
                        return logits
                '''
            )
        },
        # Issue 40's seventh blind corpus, graded blind on 451e037: correct-full.
    ),
    Mutant(
        "p05-06: <cls> pooling, hidden[:, 0]",
        A,
        {
            "sentiment_model": Rewrite(
                r'''
                # kind: correct
                # grade_id: sentiment_model
                # alternative: CLS pooling (the statement's allowed alternative): the classifier reads hidden[:, 0], the <cls> position, instead of masked_mean.
                # evidence: tools/ev05.py: pad_id=7: logits (3, 2), per-layer weights (3, 4, 6, 6), zero weight on pads, logits unchanged by appending pads (0.0).
                class SentimentModel(nn.Module):
                    """Token ids (B, L) -> class logits (B, num_classes)."""

                    def __init__(
                        self,
                        vocab_size: int,
                        d_model: int = 64,
                        num_heads: int = 4,
                        num_layers: int = 2,
                        d_ff: int = 128,
                        num_classes: int = 2,
                        max_len: int = 64,
                        pad_id: int = 0,
                        dropout: float = 0.1,
                    ):
                        super().__init__()
                        self.pad_id = pad_id
                        self.embed = TokenEmbedding(vocab_size, d_model, padding_idx=pad_id)
                        self.position = SinusoidalPositionalEncoding(d_model, max_len, dropout)
                        self.encoder = TransformerEncoder(
                            num_layers=num_layers,
                            d_model=d_model,
                            num_heads=num_heads,
                            d_ff=d_ff,
                            dropout=dropout,
                        )
                        self.head = nn.Linear(d_model, num_classes)

                    def forward(self, token_ids: Tensor, return_attention: bool = False):
                        keep = padding_mask(token_ids, self.pad_id)  # (B, 1, L), True = real key
                        hidden, weights = self.encoder(self.position(self.embed(token_ids)), keep)
                        logits = self.head(hidden[:, 0])  # the <cls> token's output
                        return (logits, weights) if return_attention else logits
                '''
            )
        },
        # Issue 40's seventh blind corpus, graded blind on 451e037: correct-full.
    ),
    Mutant(
        "q05-06: SentimentModel pools the <cls> output",
        A,
        {
            "sentiment_model": Rewrite(
                r'''
                class SentimentModel(nn.Module):
                    """Token ids (B, L) -> class logits (B, num_classes).

                    Embed, add positions, encode with a padding mask, pool, classify.
                    """

                    def __init__(
                        self,
                        vocab_size: int,
                        d_model: int = 64,
                        num_heads: int = 4,
                        num_layers: int = 2,
                        d_ff: int = 128,
                        num_classes: int = 2,
                        max_len: int = 64,
                        pad_id: int = 0,
                        dropout: float = 0.1,
                    ):
                        super().__init__()
                        self.pad_id = pad_id
                        self.embed = TokenEmbedding(vocab_size, d_model, padding_idx=pad_id)
                        self.position = SinusoidalPositionalEncoding(d_model, max_len, dropout)
                        self.encoder = TransformerEncoder(num_layers, d_model, num_heads, d_ff, dropout)
                        self.classifier = nn.Linear(d_model, num_classes)

                    def forward(self, token_ids: Tensor, return_attention: bool = False):
                        """token_ids (B, L) -> logits (B, num_classes).

                        With return_attention, also a list of (B, H, L, L) weights, one per layer.
                        """
                        mask = padding_mask(token_ids, self.pad_id)  # (B, 1, L): hides the pad keys
                        x = self.position(self.embed(token_ids))
                        hidden, weights = self.encoder(x, mask=mask)
                        logits = self.classifier(hidden[:, 0])  # CLS pooling: the <cls> token's output
                        if return_attention:
                            return logits, weights
                        return logits
                '''
            )
        },
        # Issue 40's eighth blind corpus, graded blind on 47d54b0: correct-full.
    ),
    Mutant(
        "q05-new: token_importance, the attention a token receives from the real queries",
        A,
        {
            "token_importance": Rewrite(
                r'''
                def token_importance(weights: list[Tensor], token_ids: Tensor, pad_id: int) -> Tensor:
                    """One score per token from the attention maps -> (B, L).

                    weights: one (B, H, L, L) map per layer; token_ids: (B, L), padding where == pad_id.
                    A sentence's real tokens' scores sum to 1; padded positions score 0.
                    """
                    # Design: the attention a token RECEIVES as a key, from the real queries only,
                    # averaged over the heads and the layers, as a share of its sentence: for each
                    # sentence, sum over its real queries of the head- and layer-averaged weight on
                    # key j, zero at the pads, divided by the sentence's total. The padded queries'
                    # rows are never read (so appending pads changes nothing), pad keys score exactly
                    # 0, and a sentence made only of padding has total 0 and gets zeros (no 0/0).
                    # Every sentence is scored from its own rows only.
                    real = token_ids != pad_id  # (B, L)
                    maps = torch.stack(list(weights), dim=0)  # (layers, B, H, L, L)
                    real_f = real.to(maps.dtype)
                    mean_map = maps.mean(dim=(0, 2))  # (B, L_q, L_k): averaged over layers and heads
                    received = (mean_map * real_f.unsqueeze(-1)).sum(dim=-2)  # (B, L_k), real queries only
                    received = received * real_f  # pads exactly 0
                    total = received.sum(dim=-1, keepdim=True)  # (B, 1)
                    share = received / total.clamp_min(torch.finfo(maps.dtype).tiny)
                    return torch.where(total > 0, share, torch.zeros_like(share))
                '''
            )
        },
        # Issue 40's eighth blind corpus, graded blind on 47d54b0: correct-full.
    ),
    Mutant(
        "r05-06: train_step clears the gradients first, float(loss) of nn.CrossEntropyLoss",
        A,
        {
            "training_step": Rewrite(
                r'''
                # id: r05-06
                # kind: correct
                # grade_id: training_step
                # alternative: gradients cleared at the START of the step (before the forward, set_to_none=False), loss through nn.CrossEntropyLoss, clipping over a list of the parameters that have a gradient, float(loss) instead of .item(); make_optimizer with a keyword-only AdamW over list(model.parameters()).
                # evidence: my experiment (scripts ev0N.py, output ev0N.txt in /work/fresh-corpus8b):
                #   r05-06: after 6 steps (dropout, clip 0.5, warm-up): max |param diff| 0.0 | losses equal: True | train mode: True | type float
                # public checks: passes every public check of the notebook
                def make_optimizer(
                    model: nn.Module, lr: float, weight_decay: float
                ) -> torch.optim.Optimizer:
                    """AdamW over every parameter of model."""
                    params = list(model.parameters())
                    return torch.optim.AdamW(params=params, lr=lr, weight_decay=weight_decay)


                def train_step(
                    model: nn.Module,
                    inputs: Tensor,
                    labels: Tensor,
                    optimizer: torch.optim.Optimizer,
                    max_grad_norm: float,
                    scheduler=None,
                ) -> float:
                    """One update on inputs (B, L) and labels (B,); returns the pre-update loss."""
                    optimizer.zero_grad(set_to_none=False)  # fresh gradients for this batch
                    model.train(True)
                    criterion = nn.CrossEntropyLoss()
                    loss = criterion(model(inputs), labels)
                    loss.backward()
                    with_grad = [p for p in model.parameters() if p.grad is not None]
                    torch.nn.utils.clip_grad_norm_(with_grad, max_norm=max_grad_norm)
                    optimizer.step()
                    if scheduler is not None:
                        scheduler.step()
                    return float(loss.detach())
                '''
            )
        },
        # Issue 40's eighth blind corpus, graded blind on 47d54b0: correct-full.
    ),
    Mutant(
        "r05-new: token_importance, the attention a token receives, averaged over real queries",
        A,
        {
            "token_importance": Rewrite(
                r'''
                # kind: correct (added in phase 3: notebook 05 gained this exercise while the corpus was written)
                # grade_id: token_importance
                def token_importance(weights: list[Tensor], token_ids: Tensor, pad_id: int) -> Tensor:
                    """One score per token from the attention maps -> (B, L).

                    weights: one (B, H, L, L) map per layer; token_ids: (B, L), padding where == pad_id.
                    A sentence's real tokens' scores sum to 1; padded positions score 0.
                    """
                    # Design: the attention each token RECEIVES as a key, averaged over the heads and
                    # the layers and over the REAL queries only (the padded queries' rows are left
                    # out, so appending pads changes nothing), kept at the real positions only and
                    # divided by its sum over the sentence so that the real tokens' scores sum to 1.
                    # A sentence of pads only has no real query and no real key: its sum is 0 and the
                    # division by a clamped denominator gives zeros, never NaN.
                    real = (token_ids != pad_id).to(weights[0].dtype)  # (B, L)
                    mean_map = torch.stack(list(weights)).mean(dim=(0, 2))  # (B, L_q, L_k)
                    received = (mean_map * real.unsqueeze(-1)).sum(dim=1)  # (B, L_k), real queries only
                    received = received * real
                    total = received.sum(dim=-1, keepdim=True)
                    return received / total.clamp_min(torch.finfo(received.dtype).tiny)
                '''
            )
        },
        # Issue 40's eighth blind corpus, graded blind on 47d54b0: correct-full.
    ),
    Mutant(
        "t05-06: token importance by attention rollout",
        A,
        {
            "token_importance": Rewrite(
                r'''
                def token_importance(weights: list[Tensor], token_ids: Tensor, pad_id: int) -> Tensor:
                    """One score per token from the attention maps -> (B, L).

                    weights: one (B, H, L, L) map per layer; token_ids: (B, L), padding where == pad_id.
                    A sentence's real tokens' scores sum to 1; padded positions score 0.
                    """
                    # Attention rollout (Abnar and Zuidema): each layer's head-averaged map mixed with
                    # the identity for the residual path, 0.5 (A + I), multiplied from the first layer
                    # to the last (later layers on the left). Row i of the product says how much of
                    # each input token reaches position i's output. The score of token j is the mean
                    # of column j over the REAL queries' rows; pad rows are never read, and a real
                    # query's row puts no weight on a pad key (A is 0 there and I only on itself),
                    # so pads change nothing. Pads are set to 0 and each sentence renormalised; a
                    # sentence of pads only has no real row, total 0, and gets zeros.
                    dtype = weights[0].dtype
                    real = (token_ids != pad_id).to(dtype)  # (B, L)
                    L = token_ids.shape[-1]
                    eye = torch.eye(L, dtype=dtype, device=weights[0].device)
                    rollout = eye.expand(token_ids.shape[0], L, L)
                    for layer in weights:
                        mixed = 0.5 * (layer.mean(dim=1) + eye)
                        rollout = mixed @ rollout
                    scores = (rollout * real[..., None]).sum(dim=1) * real  # sum over real query rows
                    total = scores.sum(dim=-1, keepdim=True)
                    safe = torch.where(total > 0, total, torch.ones_like(total))
                    return torch.where(total > 0, scores / safe, torch.zeros_like(scores))
                '''
            )
        },
        # Issue 40's ninth blind corpus, graded blind on feb0b2e: correct-full.
    ),
    Mutant(
        "u05-06: CLS pooling, the encoder's output at position 0",
        A,
        {
            "sentiment_model": Rewrite(
                r'''
                class SentimentModel(nn.Module):
                    """Token ids (B, L) -> class logits (B, num_classes).

                    Embed, add positions, encode with a padding mask, pool, classify.
                    """

                    def __init__(
                        self,
                        vocab_size: int,
                        d_model: int = 64,
                        num_heads: int = 4,
                        num_layers: int = 2,
                        d_ff: int = 128,
                        num_classes: int = 2,
                        max_len: int = 64,
                        pad_id: int = 0,
                        dropout: float = 0.1,
                    ):
                        super().__init__()
                        self.pad_id = pad_id
                        self.embed = TokenEmbedding(vocab_size, d_model, padding_idx=pad_id)
                        self.position = SinusoidalPositionalEncoding(d_model, max_len, dropout)
                        self.encoder = TransformerEncoder(num_layers, d_model, num_heads, d_ff, dropout)
                        self.classifier = nn.Linear(d_model, num_classes)

                    def forward(self, token_ids: Tensor, return_attention: bool = False):
                        """token_ids (B, L) -> logits (B, num_classes).

                        With return_attention, also a list of (B, H, L, L) weights, one per layer.
                        """
                        x = self.position(self.embed(token_ids))
                        hidden, weights = self.encoder(x, padding_mask(token_ids, self.pad_id))
                        logits = self.classifier(hidden[:, 0])  # CLS pooling: <cls> is always first
                        if return_attention:
                            return logits, weights
                        return logits
                '''
            )
        },
        # Issue 40's tenth blind corpus, graded blind on 60c32e8: correct-full.
    ),
    Mutant(
        "w05-06: the max over the heads, the real queries summed, each sentence renormalised",
        A,
        {
            "token_importance": Rewrite(
                r'''
                def token_importance(weights: list[Tensor], token_ids: Tensor, pad_id: int) -> Tensor:
                    """One score per token from the attention maps -> (B, L).

                    weights: one (B, H, L, L) map per layer; token_ids: (B, L), padding where == pad_id.
                    A sentence's real tokens' scores sum to 1; padded positions score 0.
                    """
                    # Design: for each layer and each key, the largest weight any head gives it from a
                    # real query (a head that reads a word sharply counts in full), summed over the real
                    # queries; averaged over the layers; pads set to 0; renormalised per sentence so the
                    # real tokens share 1. Padded queries never enter, so appending pads changes
                    # nothing; a sentence of pads only has total 0 and gets zeros.
                    dtype = weights[0].dtype
                    real = token_ids != pad_id  # (B, L)
                    per_layer = []
                    for w in weights:
                        strongest = w.amax(dim=1)  # (B, L_q, L_k)
                        strongest = strongest * real.to(dtype).unsqueeze(-1)  # drop padded queries
                        per_layer.append(strongest.sum(dim=1))  # (B, L_k)
                    score = torch.stack(per_layer).mean(dim=0) * real.to(dtype)
                    total = score.sum(dim=-1, keepdim=True)
                    safe = torch.where(total > 0, total, torch.ones_like(total))
                    return torch.where(total > 0, score / safe, torch.zeros_like(score))
                '''
            )
        },
        # Issue 40's eleventh blind corpus, graded blind on 48fe40c: correct-full.
    ),
    Mutant(
        "x05-06: SentimentModel pools the <cls> position, hidden[:, 0]",
        A,
        {
            "sentiment_model": Rewrite(
                r'''
                class SentimentModel(nn.Module):
                    """Token ids (B, L) -> class logits (B, num_classes).

                    Embed, add positions, encode with a padding mask, pool, classify.
                    """

                    def __init__(
                        self,
                        vocab_size: int,
                        d_model: int = 64,
                        num_heads: int = 4,
                        num_layers: int = 2,
                        d_ff: int = 128,
                        num_classes: int = 2,
                        max_len: int = 64,
                        pad_id: int = 0,
                        dropout: float = 0.1,
                    ):
                        super().__init__()
                        self.pad_id = pad_id
                        self.embed = TokenEmbedding(vocab_size, d_model, padding_idx=pad_id)
                        self.position = SinusoidalPositionalEncoding(d_model, max_len, dropout)
                        self.encoder = TransformerEncoder(num_layers, d_model, num_heads, d_ff, dropout)
                        self.classifier = nn.Linear(d_model, num_classes)

                    def forward(self, token_ids: Tensor, return_attention: bool = False):
                        """token_ids (B, L) -> logits (B, num_classes).

                        With return_attention, also a list of (B, H, L, L) weights, one per layer.
                        """
                        mask = padding_mask(token_ids, self.pad_id)  # (B, 1, L): hides padded keys
                        hidden, weights = self.encoder(self.position(self.embed(token_ids)), mask)
                        pooled = hidden[:, 0]  # the <cls> position: pads are hidden from it by the mask
                        logits = self.classifier(pooled)
                        if return_attention:
                            return logits, weights
                        return logits
                '''
            )
        },
        # Issue 40's eleventh blind corpus, graded blind on 48fe40c: correct-full.
    ),
    Mutant(
        "aa05-06: SentimentModel pools the <cls> position, hidden[:, 0]",
        A,
        {
            "sentiment_model": Rewrite(
                r'''
                class SentimentModel(nn.Module):
                    """Token ids (B, L) -> class logits (B, num_classes).

                    Embed, add positions, encode with a padding mask, pool, classify.
                    """

                    def __init__(
                        self,
                        vocab_size: int,
                        d_model: int = 64,
                        num_heads: int = 4,
                        num_layers: int = 2,
                        d_ff: int = 128,
                        num_classes: int = 2,
                        max_len: int = 64,
                        pad_id: int = 0,
                        dropout: float = 0.1,
                    ):
                        super().__init__()
                        self.pad_id = pad_id
                        self.embed = TokenEmbedding(vocab_size, d_model, padding_idx=pad_id)
                        self.position = SinusoidalPositionalEncoding(d_model, max_len, dropout)
                        self.encoder = TransformerEncoder(num_layers, d_model, num_heads, d_ff, dropout)
                        self.classifier = nn.Linear(d_model, num_classes)

                    def forward(self, token_ids: Tensor, return_attention: bool = False):
                        """token_ids (B, L) -> logits (B, num_classes).

                        With return_attention, also a list of (B, H, L, L) weights, one per layer.
                        """
                        mask = padding_mask(token_ids, self.pad_id)  # (B, 1, L): pad keys hidden
                        hidden, weights = self.encoder(self.position(self.embed(token_ids)), mask)
                        logits = self.classifier(hidden[:, 0])  # CLS pooling: the <cls> position
                        if return_attention:
                            return logits, weights
                        return logits
                '''
            )
        },
        # Issue 40's thirteenth blind corpus, graded blind on 8b5375e: correct-full.
    ),
]
