"""Hidden checks for 02_multi_head, one module per exercise."""

from importlib import import_module

# In the notebook's order: checks register on import, and run in the order they registered.
EXERCISES = (
    "split_heads",
    "merge_heads",
    "multi_head_attention",
    "mha_parity",
    "heads_switched_off",
)
for exercise in EXERCISES:
    import_module(f"{__name__}.{exercise}")
