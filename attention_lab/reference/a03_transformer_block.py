"""Notebook 03's answers: the word tokenizer, sinusoidal positions, LayerNorm, the feed-forward
network and the post-norm encoder block.

`WordTokenizer` splits text into words and reserves three special tokens with
fixed ids: PAD = 0 (fills short sequences), UNK = 1 (any word missing from the
vocabulary) and CLS = 2 (prepended so a classifier can read one summary position).
"""

from __future__ import annotations

import json
import os
import re
import warnings
from collections import Counter
from collections.abc import Iterable, Sequence

import torch
from torch import Tensor, nn
from torch.nn import functional as F

from attention_lab.reference.a02_multi_head import MultiHeadAttention
from attention_lab.tokenizer import CLS, PAD, SPECIAL_TOKENS, UNK, as_id_list

# A word is a run of letters/digits, optionally joined by inner apostrophes ("didn't");
# any other non-space character (punctuation) becomes a token of its own.
_TOKEN_PATTERN = re.compile(r"\w+(?:'\w+)*|[^\w\s]")
_FILE_FORMAT = "attention_lab.WordTokenizer"


def _check_max_len(max_len: int | None) -> None:
    """Reject a max_len that is neither None nor a positive int."""
    if max_len is not None and (
        not isinstance(max_len, int) or isinstance(max_len, bool) or max_len < 1
    ):
        raise ValueError(f"expected max_len to be None or a positive int, got {max_len!r}")


def _check_truncate(truncate: str) -> None:
    """Reject a truncate other than "end" or "start"."""
    if truncate not in ("end", "start"):
        raise ValueError(f"expected truncate to be 'end' or 'start', got {truncate!r}")


class WordTokenizer:
    """Word-level tokenizer whose vocabulary holds the most frequent words of a training corpus."""

    def __init__(self, max_vocab_size: int | None = None, min_freq: int = 1) -> None:
        if max_vocab_size is not None and (
            not isinstance(max_vocab_size, int) or max_vocab_size < len(SPECIAL_TOKENS)
        ):
            raise ValueError(
                f"expected max_vocab_size to be None or an int >= {len(SPECIAL_TOKENS)} "
                f"(room for the special tokens), got {max_vocab_size!r}"
            )
        if not isinstance(min_freq, int) or isinstance(min_freq, bool) or min_freq < 1:
            raise ValueError(f"expected min_freq to be an int >= 1, got {min_freq!r}")
        self.max_vocab_size = max_vocab_size
        self.min_freq = min_freq
        self._id_to_token: list[str] = []
        self._token_to_id: dict[str, int] = {}

    @staticmethod
    def clean(text: str) -> list[str]:
        """Lowercase `text` and split it into words and punctuation marks."""
        if not isinstance(text, str):
            raise TypeError(f"expected text to be a str, got {type(text).__name__}")
        # Typographic apostrophes would otherwise split "didn’t" into three tokens.
        return _TOKEN_PATTERN.findall(text.lower().replace("\u2019", "'"))

    def fit(self, texts: Iterable[str]) -> WordTokenizer:
        """Build the vocabulary: specials, then words by falling count, ties alphabetical."""
        if isinstance(texts, str):
            raise TypeError("expected an iterable of texts, got a single str")
        counts: Counter[str] = Counter()
        for index, text in enumerate(texts):
            if not isinstance(text, str):
                raise TypeError(
                    f"expected every text to be a str, got {type(text).__name__} at index {index}"
                )
            counts.update(self.clean(text))
        if not counts:
            raise ValueError(
                "cannot fit a WordTokenizer on an empty corpus: no words found in the texts"
            )
        # Sorting on (-count, word) makes the vocabulary identical on every run.
        words = [
            word
            for word, count in sorted(counts.items(), key=lambda item: (-item[1], item[0]))
            if count >= self.min_freq
        ]
        if self.max_vocab_size is not None:
            words = words[: self.max_vocab_size - len(SPECIAL_TOKENS)]
        self._set_vocabulary([*SPECIAL_TOKENS, *words])
        return self

    def _set_vocabulary(self, id_to_token: list[str]) -> None:
        """Install a vocabulary whose first entries are the special tokens."""
        self._id_to_token = id_to_token
        self._token_to_id = {token: token_id for token_id, token in enumerate(id_to_token)}

    def _require_fitted(self) -> None:
        """Fail clearly when the vocabulary has not been built yet."""
        if not self._id_to_token:
            raise RuntimeError(
                "this WordTokenizer is not fitted yet: "
                "call fit(texts) or WordTokenizer.load(path) first"
            )

    @property
    def id_to_token(self) -> list[str]:
        """The vocabulary in id order (read-only)."""
        self._require_fitted()
        return self._id_to_token

    @property
    def token_to_id(self) -> dict[str, int]:
        """Map from token to id (read-only)."""
        self._require_fitted()
        return self._token_to_id

    @property
    def vocab_size(self) -> int:
        """Number of tokens, specials included."""
        return len(self.id_to_token)

    @property
    def pad_id(self) -> int:
        """Id of the padding token."""
        return SPECIAL_TOKENS.index(PAD)

    @property
    def unk_id(self) -> int:
        """Id that stands for every out-of-vocabulary word."""
        return SPECIAL_TOKENS.index(UNK)

    @property
    def cls_id(self) -> int:
        """Id of the classification token placed first in a sequence."""
        return SPECIAL_TOKENS.index(CLS)

    def encode(
        self,
        text: str,
        max_len: int | None = None,
        add_cls: bool = True,
        pad: bool = True,
        truncate: str = "end",
    ) -> list[int]:
        """Ids of `text`: CLS first, UNK for unknown words, cut to `max_len` and padded up to it.

        `truncate` says which end of a too-long text is cut: "end" keeps its first words,
        "start" its last ones (where the deciding clause of "... but ..." often sits); CLS stays.
        """
        token_to_id = self.token_to_id
        _check_max_len(max_len)
        _check_truncate(truncate)
        words = [token_to_id.get(word, self.unk_id) for word in self.clean(text)]
        head = [self.cls_id] if add_cls else []
        return self._fit_to_length(head, words, max_len, pad, truncate)

    def _fit_to_length(
        self, head: list[int], words: list[int], max_len: int | None, pad: bool, truncate: str
    ) -> list[int]:
        """head + words, cut at the `truncate` end of the words and padded to max_len."""
        if max_len is None:
            return head + words
        room = max(max_len - len(head), 0)
        if len(words) > room:
            words = words[:room] if truncate == "end" else words[len(words) - room :]
        ids = (head + words)[:max_len]
        if pad:
            ids += [self.pad_id] * (max_len - len(ids))
        return ids

    def longest(self, texts: Iterable[str], add_cls: bool = True) -> int:
        """The length in tokens of the longest text, CLS included: a max_len that cuts nothing."""
        if isinstance(texts, str):
            raise TypeError("expected an iterable of texts, got a single str")
        lengths = [len(self.clean(text)) + add_cls for text in texts]
        if not lengths:
            raise ValueError("expected at least one text, got none")
        return max(lengths)

    def encode_batch(
        self,
        texts: Sequence[str],
        max_len: int,
        truncate: str = "end",
        on_truncate: str = "warn",
    ) -> torch.Tensor:
        """Encode several texts into one (B, max_len) LongTensor, each row starting with CLS.

        Texts longer than `max_len` lose their `truncate` end; `on_truncate` ("warn", "error" or
        "ignore") says what to do when any does, and the message counts them.
        """
        if isinstance(texts, str):
            raise TypeError("expected a sequence of texts, got a single str")
        self._require_fitted()
        if max_len is None:
            raise ValueError(
                "expected max_len to be a positive int, got None: a batch needs one common length"
            )
        _check_max_len(max_len)
        if on_truncate not in ("warn", "error", "ignore"):
            raise ValueError(
                f"expected on_truncate to be 'warn', 'error' or 'ignore', got {on_truncate!r}"
            )
        _check_truncate(truncate)
        rows = [self.encode(text) for text in texts]  # CLS + words, uncut
        cut = sum(len(row) > max_len for row in rows)
        if cut and on_truncate != "ignore":
            message = (
                f"{cut} of {len(rows)} texts are longer than max_len={max_len} tokens and lose "
                f"their {truncate} (the longest has {max(map(len, rows))} tokens); raise max_len "
                "(WordTokenizer.longest gives one that cuts nothing) or pick the end to cut "
                "with truncate='start' or 'end'"
            )
            if on_truncate == "error":
                raise ValueError(message)
            warnings.warn(message, stacklevel=2)
        rows = [self._fit_to_length(row[:1], row[1:], max_len, True, truncate) for row in rows]
        return torch.tensor(rows, dtype=torch.long).reshape(len(rows), max_len)

    def decode(self, ids: Sequence[int] | torch.Tensor, skip_special: bool = True) -> str:
        """Tokens of `ids` joined by spaces; `skip_special` drops PAD and CLS but keeps UNK."""
        id_list = as_id_list(ids, self.vocab_size)
        hidden = {self.pad_id, self.cls_id} if skip_special else set()
        return " ".join(
            self._id_to_token[token_id] for token_id in id_list if token_id not in hidden
        )

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the settings and vocabulary to a JSON file."""
        state = {
            "format": _FILE_FORMAT,
            "max_vocab_size": self.max_vocab_size,
            "min_freq": self.min_freq,
            "id_to_token": self.id_to_token,
        }
        with open(path, "w", encoding="utf-8") as file:
            json.dump(state, file, ensure_ascii=False, indent=1)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> WordTokenizer:
        """Rebuild a tokenizer written by `save`."""
        with open(path, encoding="utf-8") as file:
            state = json.load(file)
        if not isinstance(state, dict) or state.get("format") != _FILE_FORMAT:
            raise ValueError(
                f"expected a JSON file written by WordTokenizer.save, got something else in {path}"
            )
        id_to_token = state.get("id_to_token")
        if (
            not isinstance(id_to_token, list)
            or not all(isinstance(token, str) for token in id_to_token)
            or tuple(id_to_token[: len(SPECIAL_TOKENS)]) != SPECIAL_TOKENS
            or len(set(id_to_token)) != len(id_to_token)
        ):
            raise ValueError(
                f"expected 'id_to_token' in {path} to be a list of distinct strings "
                f"starting with {list(SPECIAL_TOKENS)}"
            )
        tokenizer = cls(
            max_vocab_size=state.get("max_vocab_size"), min_freq=state.get("min_freq", 1)
        )
        tokenizer._set_vocabulary(list(id_to_token))
        return tokenizer


def sinusoidal_table(max_len: int, d_model: int) -> Tensor:
    """(max_len, d_model) table with the paper's interleaved convention.

    PE[pos, 2i] = sin(pos / 10000^(2i/d_model)) and PE[pos, 2i+1] = cos(same angle),
    so even columns hold sines, odd columns cosines, and position 0 is [0, 1, 0, 1, ...].
    """
    position = torch.arange(max_len, dtype=torch.float32).unsqueeze(1)  # (max_len, 1)
    even_dims = torch.arange(0, d_model, 2, dtype=torch.float32)  # the 2i values
    angle = position / (10000.0 ** (even_dims / d_model))  # (max_len, ceil(d_model/2))
    table = torch.zeros(max_len, d_model)
    table[:, 0::2] = torch.sin(angle)
    table[:, 1::2] = torch.cos(angle[:, : d_model // 2])
    return table


class SinusoidalPositionalEncoding(nn.Module):
    """Adds the fixed sinusoidal table (see ``sinusoidal_table``) to (B, L, d_model) inputs."""

    def __init__(self, d_model: int, max_len: int = 512, dropout: float = 0.0):
        super().__init__()
        self.register_buffer("pe", sinusoidal_table(max_len, d_model), persistent=False)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: Tensor) -> Tensor:
        max_len, d_model = self.pe.shape
        if x.dim() != 3 or x.shape[-1] != d_model or x.shape[1] > max_len:
            raise ValueError(
                f"expected input of shape (B, L <= {max_len}, d_model={d_model}), "
                f"got {tuple(x.shape)}"
            )
        return self.dropout(x + self.pe[: x.shape[1]])


class LayerNorm(nn.Module):
    """Normalise the last dim to zero mean, unit variance, then scale and shift."""

    def __init__(self, d_model: int, eps: float = 1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d_model))  # gamma
        self.bias = nn.Parameter(torch.zeros(d_model))  # beta

    def forward(self, x: Tensor) -> Tensor:
        centred = x - x.mean(dim=-1, keepdim=True)
        # Biased variance (divide by d_model) with eps inside the root, as nn.LayerNorm does;
        # the mean of squares, because Tensor.var is ten times slower on the CPU here.
        variance = (centred * centred).mean(dim=-1, keepdim=True)
        return centred / torch.sqrt(variance + self.eps) * self.weight + self.bias


class FeedForward(nn.Module):
    """Position-wise network: Linear(d_model, d_ff) -> ReLU -> dropout -> Linear(d_ff, d_model)."""

    def __init__(self, d_model: int, d_ff: int, dropout: float = 0.0):
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.dropout = nn.Dropout(dropout)
        self.linear2 = nn.Linear(d_ff, d_model)

    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(self.dropout(F.relu(self.linear1(x))))


class EncoderBlock(nn.Module):
    """Self-attention and feed-forward sublayers, each wrapped in a residual and a LayerNorm.

    Post-norm (the paper, default): x = norm(x + sublayer(x)).
    Pre-norm (``norm_first=True``, as in GPT-2): x = x + sublayer(norm(x)).
    """

    def __init__(
        self,
        d_model: int,
        num_heads: int,
        d_ff: int,
        dropout: float = 0.0,
        norm_first: bool = False,
    ):
        super().__init__()
        self.norm_first = norm_first
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout)
        self.feed_forward = FeedForward(d_model, d_ff, dropout)
        self.norm1 = LayerNorm(d_model)
        self.norm2 = LayerNorm(d_model)
        self.dropout1 = nn.Dropout(dropout)
        self.dropout2 = nn.Dropout(dropout)

    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        """x: (B, L, d_model) -> (B, L, d_model), plus weights (B, H, L, L)."""
        if self.norm_first:
            attended, weights = self.self_attn(self.norm1(x), mask=mask)
            x = x + self.dropout1(attended)
            x = x + self.dropout2(self.feed_forward(self.norm2(x)))
        else:
            attended, weights = self.self_attn(x, mask=mask)
            x = self.norm1(x + self.dropout1(attended))
            x = self.norm2(x + self.dropout2(self.feed_forward(x)))
        return x, weights
