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
]

CORRECT: list[Mutant] = []
