"""Hidden checks for 06_char_lm, one module per exercise."""

from importlib import import_module

# In the notebook's order: checks register on import, and run in the order they registered.
EXERCISES = (
    "make_blocks",
    "causal_head",
    "multihead_causal",
    "charlm",
    "lm_loss",
    "trained_model",
    "sample",
    "penalise_repeats",
)
for exercise in EXERCISES:
    import_module(f"{__name__}.{exercise}")
