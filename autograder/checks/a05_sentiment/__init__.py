"""Hidden checks for 05_sentiment, a module per exercise (three for the model of Exercise 2)."""

from importlib import import_module

# In the order they registered in when 05 was one module (the trained model's cells before the
# training step's, which the notebook puts first): checks register on import, and run in the
# order they registered.
EXERCISES = (
    "masked_mean",
    "sentiment_model",
    "sentiment_model_dropout",
    "padding_invariance",
    "trained_model",
    "training_step",
    "token_importance",
)
for exercise in EXERCISES:
    import_module(f"{__name__}.{exercise}")
