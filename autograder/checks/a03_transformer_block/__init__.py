"""Hidden checks for 03_transformer_block, one module per exercise."""

from importlib import import_module

# In the notebook's order: checks register on import, and run in the order they registered.
EXERCISES = (
    "clean",
    "build_vocab",
    "encode",
    "sinusoidal_encoding",
    "layer_norm",
    "ffn",
    "encoder_block",
    "padded_block",
)
for exercise in EXERCISES:
    import_module(f"{__name__}.{exercise}")
