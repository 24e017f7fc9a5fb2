"""Attention Lab's shared package: reference code that the course notebooks and graders import.

Modules: attention (scaled dot-product and multi-head attention, masks), encoder (embeddings,
LayerNorm, encoder blocks, the sentiment classifier and the tiny GPT), tokenizer, data,
training, baseline (TF-IDF), plots, profiling, and checking (the notebooks' public checks).
"""
