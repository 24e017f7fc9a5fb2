"""The special tokens every tokenizer of the course reserves, and a character tokenizer.

PAD = 0 fills short sequences, UNK = 1 stands for any word missing from the vocabulary and
CLS = 2 is prepended so a classifier can read one summary position. `CharTokenizer` maps every
character of a corpus to an id, for character-level language modelling. The word tokenizer is
notebook 03's exercise: `attention_lab.reference.a03_transformer_block.WordTokenizer`.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence

import torch

PAD = "<pad>"
UNK = "<unk>"
CLS = "<cls>"
SPECIAL_TOKENS: tuple[str, ...] = (PAD, UNK, CLS)


def as_id_list(ids: Sequence[int] | torch.Tensor, vocab_size: int) -> list[int]:
    """Check that `ids` is a 1-D run of in-vocabulary integer ids and return it as a list."""
    if isinstance(ids, torch.Tensor):
        if ids.dim() != 1 or ids.dtype.is_floating_point or ids.dtype.is_complex:
            raise TypeError(
                "expected a 1-D integer tensor of ids, "
                f"got shape {tuple(ids.shape)} and dtype {ids.dtype}"
            )
        ids = ids.tolist()
    if isinstance(ids, str):
        raise TypeError("expected a sequence of integer ids, got a str")
    id_list = list(ids)
    for position, token_id in enumerate(id_list):
        # numbers.Integral also admits NumPy integers, e.g. from an argmax over logits.
        if not isinstance(token_id, numbers.Integral) or isinstance(token_id, bool):
            raise TypeError(
                f"expected integer ids, got {token_id!r} ({type(token_id).__name__}) "
                f"at position {position}"
            )
        if not 0 <= token_id < vocab_size:
            raise ValueError(
                f"id {token_id} at position {position} is out of range "
                f"for a vocabulary of {vocab_size} tokens"
            )
    return [int(token_id) for token_id in id_list]


class CharTokenizer:
    """Character-level tokenizer whose vocabulary is the sorted set of characters in a corpus."""

    def __init__(self, text: str) -> None:
        if not isinstance(text, str):
            raise TypeError(f"expected the corpus to be a str, got {type(text).__name__}")
        if not text:
            raise ValueError("cannot build a CharTokenizer from an empty text")
        self.itos: list[str] = sorted(set(text))
        self.stoi: dict[str, int] = {char: index for index, char in enumerate(self.itos)}

    @property
    def vocab_size(self) -> int:
        """Number of distinct characters."""
        return len(self.itos)

    def encode(self, text: str) -> list[int]:
        """Map each character of `text` to its id."""
        if not isinstance(text, str):
            raise TypeError(f"expected text to be a str, got {type(text).__name__}")
        unknown = sorted(set(text) - self.stoi.keys())
        if unknown:
            raise ValueError(f"characters not in the vocabulary: {', '.join(map(repr, unknown))}")
        return [self.stoi[char] for char in text]

    def decode(self, ids: Sequence[int] | torch.Tensor) -> str:
        """Map ids back to the characters they stand for."""
        return "".join(self.itos[index] for index in as_id_list(ids, self.vocab_size))
