"""Hidden checks for 02_multi_head, one module per exercise."""

from importlib import import_module

# Imported in the notebook's order, which is the order of the checks within each graded cell.
EXERCISES = ("multi_head_attention",)
for exercise in EXERCISES:
    import_module(f"{__name__}.{exercise}")
