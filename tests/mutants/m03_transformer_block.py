"""Mutants of 03_transformer_block."""

from tests.mutants import Body, Mutant, Replace, Rewrite

A = "03_transformer_block"

SIN_COS = "pe[:, 0::2] = torch.sin(angle)\n    pe[:, 1::2] = torch.cos(angle)"
TWO_I = "torch.arange(0, d_model, 2, dtype=torch.float32)"
VARIANCE = "variance = (x - mean).pow(2).mean(dim=-1, keepdim=True)"
FEED_FORWARD = "x = self.norm2(x + self.dropout2(self.feed_forward(x)))"
HIDDEN = "self.dropout(torch.relu(self.linear1(x)))"
# Cause words that no message may hold for an answer whose mistake no confirmer names (issue 40).
NO_CAUSE = (" use ", "instead of", "should", "check the", "make sure", "did you", "forgot")

WRONG = [
    Mutant(  # issue 40's tenth blind corpus (u03-03): once told a counterexample only
        "block: norm1 and norm2 one shared LayerNorm",
        A,
        {
            "encoder_block": Replace(
                "        self.norm2 = nn.LayerNorm(d_model)\n", "        self.norm2 = self.norm1\n"
            )
        },
        {"test_encoder_block": "`self.norm1` and `self.norm2` hold one parameter tensor"},
    ),
    # clean
    Mutant(
        "clean: apostrophes kept at word edges",
        A,
        {"clean": Replace(r"\w+(?:'\w+)*", r"[\w']+")},
        {"test_clean": "only an apostrophe between two word characters"},
    ),
    Mutant(
        "clean: punctuation runs",
        A,
        {"clean": Replace(r"[^\w\s]", r"[^\w\s]+")},
        {"test_clean": "runs of punctuation are kept together"},
    ),
    Mutant(  # test_build_vocab's visible asserts used to fail too (one mistake, two penalties)
        "clean: punctuation dropped",
        A,
        {"clean": Replace(r"\w+(?:'\w+)*|[^\w\s]", r"\w+(?:'\w+)*")},
        {"test_clean": "punctuation marks are dropped"},
    ),
    Mutant(  # test_encode's visible asserts used to fail too (one mistake, two penalties)
        "clean: not lowercased",
        A,
        {"clean": Replace("text = text.lower().replace(", "text = text.replace(")},
        {"test_clean": "the text is not lowercased"},
    ),
    Mutant(
        "clean: calls WordTokenizer.clean",
        A,
        {
            "clean": (
                Replace(
                    "def clean",
                    "from attention_lab.reference.a03_transformer_block import WordTokenizer\n\n\ndef clean",
                ),
                Body("clean", "return WordTokenizer.clean(text)"),
            )
        },
        {"test_clean": "calls attention_lab's WordTokenizer instead of implementing it"},
    ),
    Mutant(
        "clean: ASCII letters only",
        A,
        {"clean": Replace(r"\w+(?:'\w+)*|[^\w\s]", r"[a-z0-9_]+(?:'[a-z0-9_]+)*|[^a-z0-9_\s]")},
        {"test_clean": "non-ASCII letters such as é or ß are word characters too"},
    ),
    # build_vocab
    Mutant(
        "build_vocab: ties in first-seen order (most_common)",
        A,
        {
            "build_vocab": (
                Replace(
                    "    ordered = sorted(counts.items(), key=lambda item: (-item[1], item[0]))\n",
                    "",
                ),
                Replace("in ordered if", "in counts.most_common() if"),
            )
        },
        {"test_build_vocab": "sorted alphabetically"},
    ),
    Mutant(
        "build_vocab: max_vocab_size excludes the specials",
        A,
        {
            "build_vocab": Replace(
                "    vocab = list(SPECIAL_TOKENS) + words\n"
                "    return vocab if max_vocab_size is None else vocab[:max_vocab_size]",
                "    if max_vocab_size is not None:\n"
                "        words = words[:max_vocab_size]\n"
                "    return list(SPECIAL_TOKENS) + words",
            )
        },
        {"test_build_vocab": "max_vocab_size counts the special tokens too"},
    ),
    Mutant(  # the public asserts blame the sorting; the judge names the comparison
        "build_vocab: min_freq compared with >",
        A,
        {"build_vocab": Replace("count >= min_freq", "count > min_freq")},
        {"test_build_vocab": "use count >= min_freq, not >"},
        in_notebook=True,
    ),
    Mutant(
        "build_vocab: a token counted once per text",
        A,
        {"build_vocab": Replace("counts.update(clean(text))", "counts.update(set(clean(text)))")},
        {"test_build_vocab": "a token is counted once per text"},
    ),
    Mutant(  # right whenever min_freq is passed, as every other hidden call passes it
        "build_vocab: min_freq defaults to 2",
        A,
        {"build_vocab": Replace("min_freq: int = 1", "min_freq: int = 2")},
        {"test_build_vocab": "without max_vocab_size and min_freq"},
    ),
    # encode
    Mutant(
        "encode: <cls> not counted in max_len",
        A,
        {"encode": Replace("ids = ids[:max_len]", "ids = ids[: max_len + 1]")},
        {"test_encode": "<cls> counts towards max_len"},
    ),
    Mutant(
        "encode: padding in front",
        A,
        {
            "encode": Replace(
                "return ids + [PAD_ID] * (max_len - len(ids))",
                "return [PAD_ID] * (max_len - len(ids)) + ids",
            )
        },
        {"test_encode": "padding goes at the end"},
    ),
    Mutant(
        "encode: unknown tokens become PAD_ID",
        A,
        {"encode": Replace("token_to_id.get(token, UNK_ID)", "token_to_id.get(token, PAD_ID)")},
        {"test_encode": "unknown tokens must become UNK_ID = 1, not PAD_ID = 0"},
    ),
    Mutant(
        "encode: keeps the last max_len ids",
        A,
        {"encode": Replace("ids = ids[:max_len]", "ids = ids[-max_len:]")},
        {"test_encode": "the last max_len ids are kept"},
    ),
    Mutant(
        "encode: tokens from text.split()",
        A,
        {"encode": Replace("for token in clean(text)]", "for token in text.split()]")},
        {"test_encode": "the text is split with text.split()"},
    ),
    Mutant(  # right whenever max_len is passed, as every other hidden call passes it
        "encode: max_len defaults to 16",
        A,
        {"encode": Replace("max_len: int | None = None", "max_len: int | None = 16")},
        {"test_encode": "without max_len"},
    ),
    # sinusoidal_encoding
    Mutant(
        "pe: sin and cos swapped",
        A,
        {
            "sinusoidal_encoding": Replace(
                SIN_COS, "pe[:, 0::2] = torch.cos(angle)\n    pe[:, 1::2] = torch.sin(angle)"
            )
        },
        {"test_sinusoidal_encoding": "sin and cos are swapped"},
    ),
    Mutant(
        "pe: sines and cosines concatenated (not interleaved)",
        A,
        {
            "sinusoidal_encoding": Replace(
                SIN_COS,
                "pe[:, : d_model // 2] = torch.sin(angle)\n"
                "    pe[:, d_model // 2 :] = torch.cos(angle)",
            )
        },
        {"test_sinusoidal_encoding": "the notebook's layout is interleaved"},
    ),
    Mutant(
        "pe: cosine column uses the exponent (2i+1)/d_model",
        A,
        {
            # Every column gets its own exponent; the even ones feed sin, the odd ones cos.
            "sinusoidal_encoding": (
                Replace(TWO_I, "torch.arange(d_model, dtype=torch.float32)"),
                Replace(
                    SIN_COS,
                    "pe[:, 0::2] = torch.sin(angle[:, 0::2])\n"
                    "    pe[:, 1::2] = torch.cos(angle[:, 1::2])",
                ),
            )
        },
        {"test_sinusoidal_encoding": "must share ONE angle"},
    ),
    Mutant(  # the public asserts blame the column layout; the judge names the first position
        "pe: positions start at 1",
        A,
        {
            "sinusoidal_encoding": Replace(
                "torch.arange(max_len, dtype=torch.float32)",
                "torch.arange(1, max_len + 1, dtype=torch.float32)",
            )
        },
        {"test_sinusoidal_encoding": "positions start at 0, not 1"},
        in_notebook=True,
    ),
    Mutant(
        "pe: exponent i/d_model",
        A,
        {"sinusoidal_encoding": Replace(TWO_I, "torch.arange(d_model // 2, dtype=torch.float32)")},
        {"test_sinusoidal_encoding": "not i/d_model"},
    ),
    Mutant(
        "pe: calls sinusoidal_table",
        A,
        {
            "sinusoidal_encoding": (
                Replace(
                    "def sinusoidal_encoding",
                    "from attention_lab.reference.a03_transformer_block import sinusoidal_table\n\n\ndef sinusoidal_encoding",
                ),
                Body("sinusoidal_encoding", "return sinusoidal_table(max_len, d_model).clone()"),
            )
        },
        {
            "test_sinusoidal_encoding": "calls attention_lab's sinusoidal_table instead of implementing it"
        },
    ),
    # LayerNorm
    Mutant(
        "layer norm: unbiased variance",
        A,
        {"layer_norm": Replace(VARIANCE, "variance = x.var(dim=-1, keepdim=True)")},
        {"test_layer_norm": "the variance is unbiased"},
        not_told=("detach",),
    ),
    Mutant(
        "layer norm: eps outside the square root",
        A,
        {
            "layer_norm": Replace(
                "torch.sqrt(variance + self.eps)", "(torch.sqrt(variance) + self.eps)"
            )
        },
        {"test_layer_norm": "eps is added outside the square root"},
    ),
    Mutant(
        "layer norm: x.std() + eps",
        A,
        {
            "layer_norm": Body(
                "forward",
                "return (x - x.mean(-1, keepdim=True)) / (x.std(-1, keepdim=True) + self.eps)"
                " * self.weight + self.bias",
            )
        },
        {"test_layer_norm": "x.std() is unbiased"},
        not_told=("detach",),
    ),
    Mutant(
        "layer norm: hard-coded eps",
        A,
        {"layer_norm": Replace("variance + self.eps", "variance + 1e-5")},
        {"test_layer_norm": "eps is hard-coded"},
    ),
    Mutant(
        "layer norm: no gamma and beta",
        A,
        {"layer_norm": Replace(" * self.weight + self.bias", "")},
        {"test_layer_norm": "are not applied"},
    ),
    Mutant(
        "layer norm: gamma applied, beta left out",
        A,
        {"layer_norm": Replace(" * self.weight + self.bias", " * self.weight")},
        {"test_layer_norm": "beta (self.bias) is not added"},
    ),
    Mutant(
        "layer norm: detached statistics",
        A,
        {
            "layer_norm": (
                Replace(
                    "mean = x.mean(dim=-1, keepdim=True)",
                    "mean = x.mean(dim=-1, keepdim=True).detach()",
                ),
                Replace(VARIANCE, VARIANCE + ".detach()"),
            )
        },
        {"test_layer_norm": "the mean and the variance are detached"},
    ),
    Mutant(  # right on the (B, L, d_model) inputs of the notebook, wrong on any other rank
        "layer norm: written for (B, L, d_model) only",
        A,
        {
            "layer_norm": Body(
                "forward",
                """
                batch, length, d_model = x.shape
                mean = x.sum(dim=2, keepdim=True) / d_model
                variance = ((x - mean) ** 2).sum(dim=2, keepdim=True) / d_model
                return (x - mean) / torch.sqrt(variance + self.eps) * self.weight + self.bias
                """,
            )
        },
        {"test_layer_norm": "it must take any (..., d_model) tensor"},
        in_notebook=True,  # the visible d_model = 2 example raises first, with Python's raw error
    ),
    Mutant(
        "layer norm: calls F.layer_norm",
        A,
        {
            "layer_norm": Body(
                "forward", "return F.layer_norm(x, x.shape[-1:], self.weight, self.bias, self.eps)"
            )
        },
        {"test_layer_norm": "calls F.layer_norm instead of implementing it"},
    ),
    Mutant(
        "layer norm: wraps an nn.LayerNorm",
        A,
        {
            "layer_norm": Body(
                "forward",
                """
                reference = nn.LayerNorm(x.shape[-1], eps=self.eps).to(x.dtype)
                with torch.no_grad():
                    reference.weight.copy_(self.weight)
                    reference.bias.copy_(self.bias)
                return reference(x)
                """,
            )
        },
        {"test_layer_norm": "calls nn.LayerNorm instead of implementing it"},
    ),
    Mutant(
        "layer norm: F.layer_norm reached through getattr",
        A,
        {
            "layer_norm": Body(
                "forward",
                """
                norm = getattr(torch.nn.functional, "layer" + "_norm")
                return norm(x, (x.shape[-1],), self.weight, self.bias, self.eps)
                """,
            )
        },
        {"test_layer_norm": "calls F.layer_norm instead of implementing it"},
    ),
    # EncoderBlock
    Mutant(
        "block: no residual around the feed-forward",
        A,
        {"encoder_block": Replace("self.norm2(x + self.dropout2(", "self.norm2(self.dropout2(")},
        {"test_encoder_block": "the feed-forward sublayer has no residual connection"},
    ),
    Mutant(
        "block: no residual around the attention",
        A,
        {"encoder_block": Replace("self.norm1(x + self.dropout1(", "self.norm1(self.dropout1(")},
        {"test_encoder_block": "the attention sublayer has no residual connection"},
    ),
    Mutant(
        "block: pre-norm",
        A,
        {
            "encoder_block": Body(
                "forward",
                """
                attended, weights = self.self_attn(self.norm1(x), mask=mask)
                x = x + self.dropout1(attended)
                x = x + self.dropout2(self.feed_forward(self.norm2(x)))
                return x, weights
                """,
            )
        },
        {"test_encoder_block": "(pre-norm)"},
    ),
    Mutant(
        "block: mask ignored",
        A,
        {"encoder_block": Replace("self.self_attn(x, mask=mask)", "self.self_attn(x)")},
        {"test_encoder_block": "the mask is not passed on"},
    ),
    Mutant(
        "block: feed-forward on the attention output",
        A,
        {"encoder_block": Replace("self.feed_forward(x)", "self.feed_forward(attended)")},
        {"test_encoder_block": "reads the raw attention output"},
    ),
    Mutant(
        "block: norm1 used twice",
        A,
        {"encoder_block": Replace(FEED_FORWARD, FEED_FORWARD.replace("norm2", "norm1"))},
        {"test_encoder_block": "norm1 is used twice"},
    ),
    Mutant(
        "block: no dropout on the residual branches",
        A,
        {
            "encoder_block": (
                Replace("self.dropout1(attended)", "attended"),
                Replace("self.dropout2(self.feed_forward(x))", "self.feed_forward(x)"),
            )
        },
        {"test_encoder_block": "dropout1 and dropout2 are not applied"},
    ),
    Mutant(
        "block: dropout not passed to the sublayers",
        A,
        {
            "encoder_block": (
                Replace(
                    "MultiHeadAttention(d_model, num_heads, dropout)",
                    "MultiHeadAttention(d_model, num_heads)",
                ),
                Replace("FeedForward(d_model, d_ff, dropout)", "FeedForward(d_model, d_ff)"),
            )
        },
        {"test_encoder_block": "dropout is not passed on to the sublayers"},
    ),
    Mutant(
        "block: wraps attention_lab's EncoderBlock",
        A,
        {
            # The mistake is the whole cell: the class is the package's, not the student's.
            "encoder_block": Rewrite("""
from attention_lab.reference.a03_transformer_block import EncoderBlock as _Block


class EncoderBlock(_Block):
    pass
""")
        },
        {
            "test_encoder_block": "subclasses attention_lab's EncoderBlock instead of implementing it"
        },
    ),
    Mutant(  # right whenever B, H and L exceed 1: the hidden one-head and one-token sizes show it
        "block: weights squeezed",
        A,
        {"encoder_block": Replace("return x, weights", "return x, weights.squeeze()")},
        {"test_encoder_block": "squeeze() drops every such axis"},
    ),
    Mutant(
        "block: functional dropout ignores eval mode",
        A,
        {
            "encoder_block": Replace(
                "self.dropout1(attended)", "F.dropout(attended, self.dropout1.p)"
            )
        },
        {"test_encoder_block": "dropout ignores the mode"},
        in_notebook=True,
    ),
    # padded_block: the design is the student's; these break a property the statement lists.
    Mutant(
        "padded_block: no mask, the pads are keys like any token",
        A,
        {"padded_block": Replace("block(x, mask=may_attend)", "block(x)")},
        {"test_padded_block": "with only the pads' vectors redrawn, the output at its real"},
    ),
    Mutant(
        "padded_block: the pads' vectors zeroed, no mask",
        A,
        {
            "padded_block": Replace(
                "block(x, mask=may_attend)", "block(x.masked_fill(is_pad[..., None], 0.0))"
            )
        },
        {"test_padded_block": "redrawing only the pads' vectors left the output"},
    ),
    Mutant(
        "padded_block: the mask hides the pad queries, not the pad keys",
        A,
        {"padded_block": Replace("~is_pad[:, None, None, :]", "~is_pad[:, None, :, None]")},
        {"test_padded_block": "the mask hides the pads as queries, (B, 1, L, 1), not as keys"},
    ),
    Mutant(  # right for pads at the end, as encode puts them: it loses the pads-anywhere check
        "padded_block: the first n positions are taken as the real ones",
        A,
        {
            "padded_block": Replace(
                "may_attend = ~is_pad[:, None, None, :]",
                "n_real = (~is_pad).sum(-1, keepdim=True)  # (B, 1)\n"
                "    positions = torch.arange(x.shape[1], device=x.device)\n"
                "    may_attend = (positions < n_real)[:, None, None, :]",
            )
        },
        {"test_padded_block": "pads first"},
    ),
    Mutant(
        "padded_block: the pad positions marked with NaN",
        A,
        {
            "padded_block": Replace(
                "return out", "return out.masked_fill(is_pad[..., None], float('nan'))"
            )
        },
        {"test_padded_block": "non-finite values"},
    ),
]

CORRECT = [
    Mutant(
        "padded_block: pad queries and pad keys hidden, zeros at the pads",
        A,
        {
            "padded_block": Replace(
                "may_attend = ~is_pad[:, None, None, :]  # (B, 1, 1, L)\n"
                "    out, _ = block(x, mask=may_attend)\n"
                "    return out",
                "real = ~is_pad\n"
                "    # (B, 1, L, L): a pad query sees nothing, so attention gives its row zero weights\n"
                "    may_attend = real[:, None, :, None] & real[:, None, None, :]\n"
                "    out, _ = block(x, mask=may_attend)\n"
                "    return out.masked_fill(is_pad[..., None], 0.0)",
            )
        },
    ),
    Mutant(
        "padded_block: each sentence through the block alone, without its pads",
        A,
        {
            "padded_block": Body(
                "padded_block",
                """
                out = torch.zeros_like(x)  # the pads keep zeros
                for sentence in range(x.shape[0]):
                    real = ~is_pad[sentence]
                    if real.any():  # a sentence of pads only stays zero
                        out[sentence, real] = block(x[sentence, real][None])[0][0]
                return out
                """,
            )
        },
    ),
    Mutant(
        "padded_block: the pads keep their input vectors",
        A,
        {"padded_block": Replace("return out", "return torch.where(is_pad[..., None], x, out)")},
    ),
    Mutant(
        "clean by hand, vocabulary with a two-key sort, encode in a loop",
        A,
        {
            "clean": Body(
                "clean",
                r"""
                text = text.replace("\u2019", "'").lower()
                tokens, i = [], 0
                while i < len(text):
                    c = text[i]
                    if c.isspace():
                        i += 1
                    elif re.match(r"\w", c):
                        j = i
                        while j < len(text) and (re.match(r"\w", text[j]) or (
                                text[j] == "'" and j + 1 < len(text) and re.match(r"\w", text[j + 1]) and j > i)):
                            j += 1
                        tokens.append(text[i:j])
                        i = j
                    else:
                        tokens.append(c)
                        i += 1
                return tokens
                """,
            ),
            "build_vocab": Body(
                "build_vocab",
                """
                counts = {}
                for text in texts:
                    for token in clean(text):
                        counts[token] = counts.get(token, 0) + 1
                words = sorted(counts)                               # alphabetical ...
                words.sort(key=lambda word: counts[word], reverse=True)  # ... then stable by falling count
                vocab = list(SPECIAL_TOKENS) + [w for w in words if counts[w] >= min_freq]
                if max_vocab_size is not None:
                    del vocab[max_vocab_size:]
                return vocab
                """,
            ),
            "encode": Body(
                "encode",
                """
                ids = [CLS_ID]
                for token in clean(text):
                    ids.append(token_to_id[token] if token in token_to_id else UNK_ID)
                if max_len is not None:
                    while len(ids) > max_len:
                        ids.pop()
                    while len(ids) < max_len:
                        ids.append(PAD_ID)
                return ids
                """,
            ),
        },
    ),
    Mutant(
        "pe via exp and log, built with torch.stack",
        A,
        {
            "sinusoidal_encoding": Body(
                "sinusoidal_encoding",
                """
                position = torch.arange(max_len).float()[:, None]
                frequency = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))
                angle = position * frequency
                return torch.stack([torch.sin(angle), torch.cos(angle)], dim=-1).reshape(max_len, d_model)
                """,
            )
        },
    ),
    Mutant(
        "pe in float64, cast at the end",
        A,
        {
            "sinusoidal_encoding": Body(
                "sinusoidal_encoding",
                """
                pe = np.zeros((max_len, d_model))
                position = np.arange(max_len)[:, None]
                angle = position / np.power(10000.0, np.arange(0, d_model, 2) / d_model)
                pe[:, 0::2] = np.sin(angle)
                pe[:, 1::2] = np.cos(angle)
                return torch.from_numpy(pe).float()
                """,
            )
        },
    ),
    Mutant(
        "layer norm via torch.var_mean and rsqrt",
        A,
        {
            "layer_norm": Body(
                "forward",
                """
                variance, mean = torch.var_mean(x, dim=-1, keepdim=True, correction=0)
                return self.weight * (x - mean) * torch.rsqrt(variance + self.eps) + self.bias
                """,
            )
        },
    ),
    Mutant(
        "layer norm in float64 by hand, E[x^2] - E[x]^2",
        A,
        {
            "layer_norm": Body(
                "forward",
                """
                z = x.double()
                d = z.shape[-1]
                mean = z.sum(-1, keepdim=True) / d
                centred = z - mean
                variance = (centred * centred).sum(-1, keepdim=True) / d
                normed = centred / (variance + self.eps) ** 0.5
                return (normed * self.weight.double() + self.bias.double()).to(x.dtype)
                """,
            )
        },
    ),
    Mutant(
        "block with my own LayerNorm, written with intermediate names",
        A,
        {
            "encoder_block": (
                Replace(
                    "self.norm1 = nn.LayerNorm(d_model)\n        self.norm2 = nn.LayerNorm(d_model)",
                    "self.norm1 = LayerNorm(d_model)\n        self.norm2 = LayerNorm(d_model)",
                ),
                Body(
                    "forward",
                    """
                    attention_output, attention_weights = self.self_attn(x, x, x, mask)
                    h = x + self.dropout1(attention_output)
                    h = self.norm1(h)
                    ffn_output = self.dropout2(self.feed_forward(h))
                    return self.norm2(ffn_output + h), attention_weights
                    """,
                ),
            )
        },
    ),
]

# PositionwiseFeedForward (Exercise 4), as students get it wrong and right
FFN_RETURN = "return self.linear2(self.dropout(torch.relu(self.linear1(x))))"
WRONG += [
    Mutant(
        "ffn: no ReLU",
        A,
        {"feed_forward": Replace(FFN_RETURN, "return self.linear2(self.dropout(self.linear1(x)))")},
        {"test_feed_forward": "no ReLU between the two layers"},
    ),
    Mutant(
        "ffn: ReLU on the output too",
        A,
        {
            "feed_forward": Replace(
                FFN_RETURN,
                "return torch.relu(self.linear2(self.dropout(torch.relu(self.linear1(x)))))",
            )
        },
        {"test_feed_forward": "a ReLU after the second layer too"},
    ),
    Mutant(
        "ffn: GELU",
        A,
        {"feed_forward": Replace("torch.relu(self.linear1(x))", "F.gelu(self.linear1(x))")},
        {"test_feed_forward": "GELU instead of ReLU"},
    ),
    Mutant(
        "ffn: linear1 built as nn.Linear(d_ff, d_model)",
        A,
        {
            "feed_forward": Replace(
                "self.linear1 = nn.Linear(d_model, d_ff)", "self.linear1 = nn.Linear(d_ff, d_model)"
            )
        },
        {"test_feed_forward": "linear1 = nn.Linear(d_model, d_ff)"},
    ),
    Mutant(
        "ffn: squeeze() drops the size-1 axes",
        A,
        {
            "feed_forward": Replace(
                FFN_RETURN,
                "return self.linear2(self.dropout(torch.relu(self.linear1(x)))).squeeze()",
            )
        },
        {"test_feed_forward": "squeeze() drops every such axis"},
    ),
    Mutant(
        "ffn: functional dropout ignores eval mode",
        A,
        {
            "feed_forward": Replace(
                "self.dropout(torch.relu(self.linear1(x)))",
                "F.dropout(torch.relu(self.linear1(x)), self.dropout.p)",
            )
        },
        {"test_feed_forward": "in eval mode dropout still zeroes hidden units"},
        makes=(
            "EncoderBlock.random_in_eval",
            "EncoderBlock.mode_ignored",
        ),  # the block built on it draws at random too,
    ),
    Mutant(  # an nn.Dropout module indeed, built in forward: in train mode whatever the model's
        "ffn: a fresh nn.Dropout built at every call drops in eval mode",
        A,
        {
            "feed_forward": Replace(
                "self.dropout(torch.relu(self.linear1(x)))",
                "nn.Dropout(self.dropout.p)(torch.relu(self.linear1(x)))",
            )
        },
        {"test_feed_forward": "in eval mode dropout still zeroes hidden units"},
        makes=(
            "EncoderBlock.random_in_eval",
            "EncoderBlock.mode_ignored",
        ),  # the block built on it draws at random too
        # Once advised to use an nn.Dropout module, which it does.
        not_told=("use an nn.Dropout module",),
    ),
    # Not the last wrong one, which judge parity grades in the sandbox: there, as a student of 03
    # has it, attention_lab holds no reference of 03 and the import fails (test_package_split.py).
    Mutant(
        "ffn: subclasses attention_lab's FeedForward",
        A,
        {
            "feed_forward": Rewrite("""
from attention_lab.reference.a03_transformer_block import FeedForward


class PositionwiseFeedForward(FeedForward):
    pass
""")
        },
        {"test_feed_forward": "subclasses attention_lab's FeedForward instead of implementing it"},
    ),
    Mutant(
        "ffn: dropout never applied",
        A,
        {"feed_forward": Replace(FFN_RETURN, "return self.linear2(torch.relu(self.linear1(x)))")},
        {"test_feed_forward": "dropout is never applied"},
    ),
]
CORRECT += [
    Mutant(
        "ffn: clamp for the ReLU",
        A,
        {"feed_forward": Replace("torch.relu(self.linear1(x))", "self.linear1(x).clamp(min=0)")},
    ),
    Mutant(
        "ffn: the two layers written as matrix products",
        A,
        {
            "feed_forward": Body(
                "forward",
                """
                hidden = x @ self.linear1.weight.T + self.linear1.bias  # (..., d_ff)
                hidden = self.dropout(torch.maximum(hidden, torch.zeros_like(hidden)))
                return hidden @ self.linear2.weight.T + self.linear2.bias
                """,
            )
        },
    ),
]

# Train mode (dropout): judged from the output, so any random order of a correct answer passes
FFN_HIDDEN = "self.dropout(torch.relu(self.linear1(x)))"
ATTENTION_BRANCH = "x = self.norm1(x + self.dropout1(attended))"
WRONG += [
    Mutant(
        "ffn: dropout on the output instead of the hidden layer",
        A,
        {
            "feed_forward": Replace(
                FFN_RETURN, "return self.dropout(self.linear2(torch.relu(self.linear1(x))))"
            )
        },
        {"test_feed_forward": "dropout is applied to the output"},
    ),
    Mutant(
        "ffn: dropout on the input",
        A,
        {
            "feed_forward": Replace(
                FFN_RETURN, "return self.linear2(torch.relu(self.linear1(self.dropout(x))))"
            )
        },
        {"test_feed_forward": "dropout is applied to the input x"},
    ),
    Mutant(
        "ffn: a hand-made mask without the 1/(1-p) scale",
        A,
        {
            "feed_forward": Body(
                "forward",
                """
                hidden = torch.relu(self.linear1(x))
                if self.training:
                    hidden = hidden * (torch.rand_like(hidden) >= self.dropout.p)
                return self.linear2(hidden)
                """,
            )
        },
        {"test_feed_forward": "the kept hidden units are not scaled by 1/(1-p)"},
    ),
    Mutant(
        "ffn: dropout built with the keep probability",
        A,
        {"feed_forward": Replace("nn.Dropout(dropout)", "nn.Dropout(1 - dropout)")},
        {"test_feed_forward": "dropout is built with the keep probability 1 - p"},
    ),
    Mutant(
        "block: dropout1 on the residual sum",
        A,
        {"encoder_block": Replace(ATTENTION_BRANCH, "x = self.norm1(self.dropout1(x + attended))")},
        {"test_encoder_block": "dropout1 is applied to the residual sum x + attn(x)"},
    ),
    Mutant(
        "block: dropout2 after norm2",
        A,
        {
            "encoder_block": Replace(
                FEED_FORWARD, "x = self.dropout2(self.norm2(x + self.feed_forward(x)))"
            )
        },
        {"test_encoder_block": "dropout2 is applied after norm2"},
    ),
    Mutant(
        "block: dropout2 never applied",
        A,
        {"encoder_block": Replace(FEED_FORWARD, "x = self.norm2(x + self.feed_forward(x))")},
        {"test_encoder_block": "dropout2 is not applied in training mode"},
    ),
    Mutant(
        "block: hand-made masks without the 1/(1-p) scale",
        A,
        {
            "encoder_block": Body(
                "forward",
                """
                p = self.dropout1.p if self.training else 0.0
                attended, weights = self.self_attn(x, mask=mask)
                x = self.norm1(x + attended * (torch.rand_like(attended) >= p))
                transformed = self.feed_forward(x)
                x = self.norm2(x + transformed * (torch.rand_like(transformed) >= p))
                return x, weights
                """,
            )
        },
        {"test_encoder_block": "does not scale the kept ones by 1/(1-p)"},
    ),
    Mutant(
        "block: the feed-forward sublayer built without dropout",
        A,
        {
            "encoder_block": Replace(
                "PositionwiseFeedForward(d_model, d_ff, dropout)",
                "PositionwiseFeedForward(d_model, d_ff)",
            )
        },
        {"test_encoder_block": "dropout is not passed on to the PositionwiseFeedForward sublayer"},
    ),
]
CORRECT += [
    Mutant(
        "ffn: F.dropout following self.training",
        A,
        {
            "feed_forward": Replace(
                FFN_HIDDEN, "F.dropout(torch.relu(self.linear1(x)), self.dropout.p, self.training)"
            )
        },
    ),
    Mutant(
        "ffn: dropout before the ReLU (the same masks)",
        A,
        {"feed_forward": Replace(FFN_HIDDEN, "torch.relu(self.dropout(self.linear1(x)))")},
    ),
    Mutant(
        "ffn: a mask drawn with torch.bernoulli",
        A,
        {
            "feed_forward": Body(
                "forward",
                """
                hidden = torch.relu(self.linear1(x))
                if self.training and self.dropout.p > 0:
                    keep = 1 - self.dropout.p
                    hidden = hidden * torch.bernoulli(torch.full_like(hidden, keep)) / keep
                return self.linear2(hidden)
                """,
            )
        },
    ),
    Mutant(
        "block: one dropout module for both branches",
        A,
        {
            "encoder_block": Replace(
                "self.dropout2(self.feed_forward(x))", "self.dropout1(self.feed_forward(x))"
            )
        },
    ),
    Mutant(
        "block: both masks drawn first, in the other order",
        A,
        {
            "encoder_block": Body(
                "forward",
                """
                p = self.dropout1.p
                second = first = torch.ones_like(x)
                if self.training and p > 0:
                    second = (torch.rand_like(x) >= p) / (1 - p)
                    first = (torch.rand_like(x) >= p) / (1 - p)
                attended, weights = self.self_attn(x, mask=mask)
                x = self.norm1(x + attended * first)
                x = self.norm2(x + self.feed_forward(x) * second)
                return x, weights
                """,
            )
        },
    ),
]
# Issue 40: mistakes outside every catalogue get a counterexample, and no cause words.
WRONG += [
    Mutant(
        "layer norm: the variance of x about 0, not about its mean",
        A,
        {"layer_norm": Replace(VARIANCE, "variance = x.pow(2).mean(dim=-1, keepdim=True)")},
        {"test_layer_norm": "a small input on which yours differs"},
        not_told=NO_CAUSE,
    ),
    Mutant(
        "ffn: leaky ReLU",
        A,
        {
            "feed_forward": Replace(
                "torch.relu(self.linear1(x))", "F.leaky_relu(self.linear1(x), 0.1)"
            )
        },
        {"test_feed_forward": "a small input on which yours differs"},
        not_told=NO_CAUSE,
    ),
    Mutant(  # built with the constructor's dropout, which the old message told it to do
        "ffn: dropout applied twice to the hidden layer",
        A,
        {"feed_forward": Replace(HIDDEN, f"self.dropout({HIDDEN})")},
        {"test_feed_forward": "dropped as by dropout="},
        not_told=("with the constructor's dropout", *NO_CAUSE),
    ),
    Mutant(  # it returns self_attn's weights, which the old message told it to do
        "EncoderBlock returns the weights transposed",
        A,
        {"encoder_block": Replace("return x, weights", "return x, weights.transpose(-2, -1)")},
        {"test_encoder_block": "a small input on which yours differs"},
        not_told=("return the weights of self.self_attn", *NO_CAUSE),
    ),
    Mutant(
        "EncoderBlock: the feed-forward network reads norm1(h)",
        A,
        {
            "encoder_block": Replace(
                FEED_FORWARD, "x = self.norm2(x + self.dropout2(self.feed_forward(self.norm1(x))))"
            )
        },
        {"test_encoder_block": "a small input on which yours differs"},
        not_told=NO_CAUSE,
    ),
]
# The families of issue 25 without a mutant above (autograder/checks/a03_transformer_block:
# NORM, FFN, BLOCK).
WRONG += [
    Mutant(
        "LayerNorm over the whole tensor",
        A,
        {
            "layer_norm": Replace(
                "mean = x.mean(dim=-1, keepdim=True)\n"
                "        # biased: divide by d_model\n"
                "        variance = (x - mean).pow(2).mean(dim=-1, keepdim=True)",
                "mean = x.mean()\n        variance = (x - mean).pow(2).mean()",
            )
        },
        {"test_layer_norm": "taken over the whole tensor"},
    ),
    Mutant(
        "ffn adds its input back",
        A,
        {
            "feed_forward": Replace(
                "return self.linear2(self.dropout(torch.relu(self.linear1(x))))",
                "return x + self.linear2(self.dropout(torch.relu(self.linear1(x))))",
            )
        },
        {"test_feed_forward": "the input is added back (a residual) inside the network"},
    ),
    Mutant(
        "EncoderBlock returns head-averaged weights",
        A,
        {"encoder_block": Replace("return x, weights", "return x, weights.mean(dim=1)")},
        {"test_encoder_block": "averaged over the heads"},
    ),
    Mutant(
        "EncoderBlock without norm1",
        A,
        {
            "encoder_block": Replace(
                "x = self.norm1(x + self.dropout1(attended))", "x = x + self.dropout1(attended)"
            )
        },
        {"test_encoder_block": "the first LayerNorm is missing"},
    ),
]

# In-place writes into the caller's tensor: the output is right, the caller's x is not kept.
WRONG += [
    Mutant(
        "LayerNorm centres x in place (x -= mean)",
        A,
        {
            "layer_norm": Body(
                "forward",
                """
                x -= x.mean(dim=-1, keepdim=True)
                variance = x.pow(2).mean(dim=-1, keepdim=True)
                return x / torch.sqrt(variance + self.eps) * self.weight + self.bias
                """,
            )
        },
        {
            "test_layer_norm": (
                "`LayerNorm` changed a tensor it was given, in place: its argument `x` changed"
            )
        },
        makes=("inputs.written_in_place",),
    ),
    Mutant(
        "EncoderBlock adds the attention output into x in place (x += ...)",
        A,
        {
            "encoder_block": Replace(
                "        x = self.norm1(x + self.dropout1(attended))\n",
                "        x += self.dropout1(attended)\n        x = self.norm1(x)\n",
            )
        },
        {
            "test_encoder_block": (
                "`EncoderBlock` changed a tensor it was given, in place: its argument `x` changed"
            )
        },
        makes=("inputs.written_in_place",),
    ),
]
# Issue 40's ninth blind corpus (s03-01's word \w+'?\w* keeps a trailing apostrophe and at most
# one): the family of apostrophe rules, each named where the answer's tokens are that rule's on
# every text tried.
WRONG += [
    Mutant(
        "clean: a run of apostrophes kept inside a word",
        A,
        {"clean": Replace(r"\w+(?:'\w+)*", r"\w+(?:'+\w+)*")},
        {"test_clean": "a run of apostrophes between two word characters is kept in the word"},
    ),
    Mutant(
        "clean: a leading apostrophe kept on a word",
        A,
        {"clean": Replace(r"\w+(?:'\w+)*", r"'?\w+(?:'\w+)*")},
        {"test_clean": "an apostrophe that is not between two word characters is kept in a word"},
    ),
]
