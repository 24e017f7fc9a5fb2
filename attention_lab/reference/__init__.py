"""The reference answers, one module per assignment, named after it (``a03_transformer_block``
answers ``03_transformer_block``).

A student of assignment N is given the modules of the assignments before N only: their
deadlines are past, and later notebooks build on them. A module imports only the package's
tools and the modules of earlier assignments, so the package for N is complete without the rest.
The instructor's checkout keeps them all: the hidden checks use them as oracles.
"""
