"""Hidden checks for 03_transformer_block, one module per exercise."""

from importlib import import_module

# Imported in the notebook's order, which is the order of the checks within each graded cell.
EXERCISES = ("encoder_block",)
for exercise in EXERCISES:
    import_module(f"{__name__}.{exercise}")
