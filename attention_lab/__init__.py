"""Attention Lab's shared package: the tools the course notebooks and graders import, and the
reference answers, one module per assignment.

Tools, which answer no exercise: checking (the notebooks' public checks), plots, profiling,
data (corpora and language-model batches), tokenizer (special tokens, characters), embedding
(token and learned position embeddings), torch_mha (our weights into torch's attention),
training (device, seeds, loaders, evaluation), baseline (TF-IDF), induction (notebook 04's task).

Reference answers: ``attention_lab.reference.aNN_<assignment>``. A student of assignment N is
given only the modules of assignments before N.
"""
