"""Mutants of 06_char_lm.

Every mutant re-runs the whole notebook, training included, so the list is short on purpose.
"""

from tests.mutants import Body, Mutant, Replace, Rewrite

A = "06_char_lm"

PENALTY_SEEN = "seen = seen.scatter_(1, context, True)  # (B, V): True where the row saw the id"
PENALTY_RETURN = "return logits - strength * seen.to(logits.dtype)"

WRONG = [
    Mutant(
        "targets not shifted by one",
        A,
        {
            "make_blocks": Replace(
                "ids[1 : n_blocks * block_size + 1]", "ids[: n_blocks * block_size]"
            )
        },
        {"test_make_blocks": "not shifted by one"},
    ),
    Mutant(
        "transposed causal mask: the model sees the future",
        A,
        {"causal_head": Replace("~self.mask[:length, :length]", "~self.mask[:length, :length].T")},
        {
            "test_causal_head": "the causal mask is transposed",
            "test_multihead_causal": "CausalSelfAttentionHead, is judged by test_causal_head",
            "test_charlm_causality": "uses your answer cell `causal_head` (which fails",
            "test_trained_loss": "future characters change earlier logits",
        },
    ),
    Mutant(
        "sampling ignores top_k",
        A,
        {
            "sample": Replace(
                "        if top_k is not None:\n"
                "            kth_largest = torch.topk(logits, top_k, dim=-1).values[:, -1:]  # (B, 1)\n"
                '            logits = logits.masked_fill(logits < kth_largest, float("-inf"))\n',
                "",
            )
        },
        {"test_sample": "top_k is ignored"},
    ),
    Mutant(
        "lm_loss summed over the positions",
        A,
        {"lm_loss": Replace("targets.reshape(-1))", 'targets.reshape(-1), reduction="sum")')},
        {"test_lm_loss": "summed over the positions"},
    ),
    Mutant(
        "heads concatenated along time",
        A,
        {
            "multihead_causal": Replace(
                "torch.cat([head(x) for head in self.heads], dim=-1)",
                "torch.cat([head(x) for head in self.heads], dim=1).view(x.shape[0], x.shape[1], -1)",
            )
        },
        {"test_multihead_causal": "each head alone is causal"},
        in_notebook=True,
    ),
    Mutant(  # right whenever B and L exceed 1, as in training: one sequence or one position shows it
        "CharLM logits squeezed",
        A,
        {
            "charlm": Replace(
                "return self.lm_head(self.ln_f(x))", "return self.lm_head(self.ln_f(x)).squeeze()"
            )
        },
        {"test_charlm": "squeeze() drops every such axis"},
    ),
    Mutant(  # right for a batch of prompts: only a single prompt shows it
        "sample: next id squeezed, then unsqueezed",
        A,
        {
            "sample": Replace(
                "        next_id = torch.multinomial(probs, 1, generator=generator)  # (B, 1)\n",
                "        next_id = torch.multinomial(probs, 1, generator=generator).squeeze()\n"
                "        next_id = next_id.unsqueeze(-1)\n",
            )
        },
        {"test_sample": "not on one prompt of one id"},
    ),
    Mutant(
        "causal head output squeezed",
        A,
        {
            "causal_head": Replace(
                "        return weights @ v", "        return (weights @ v).squeeze()"
            )
        },
        {"test_causal_head": "squeeze() drops every such axis"},
        in_notebook=True,
    ),
    # The families of issue 25: the sampling context, the position read, appending, the
    # temperature, the draw; where the final norm sits, the embeddings, the chain of blocks.
    Mutant(
        "sample keeps the first block_size ids",
        A,
        {"sample": Replace("idx[:, -model.block_size :]", "idx[:, : model.block_size]")},
        {"test_sample": "FIRST block_size ids"},
    ),
    Mutant(
        "sample reads the first position",
        A,
        {"sample": Replace("model(context)[:, -1, :]", "model(context)[:, 0, :]")},
        {"test_sample": "first position of the context"},
    ),
    Mutant(
        "sample never appends to the context",
        A,
        {
            "sample": (
                Replace("    model.eval()\n", "    model.eval()\n    prompt = idx\n"),
                Replace(
                    "context = idx[:, -model.block_size :]",
                    "context = prompt[:, -model.block_size :]",
                ),
            )
        },
        {"test_sample": "predicted from the prompt alone"},
    ),
    Mutant(
        "sample multiplies by the temperature",
        A,
        {"sample": Replace("[:, -1, :] / temperature", "[:, -1, :] * temperature")},
        {"test_sample": "temperature multiplies the logits"},
    ),
    Mutant(
        "sample takes the argmax",
        A,
        {
            "sample": Replace(
                "torch.multinomial(probs, 1, generator=generator)",
                "probs.argmax(dim=-1, keepdim=True)",
            )
        },
        {"test_sample": "not argmax"},
    ),
    Mutant(
        "ln_f before the blocks",
        A,
        {
            "charlm": (
                Replace(
                    "x = self.position(self.token_embedding(idx))",
                    "x = self.ln_f(self.position(self.token_embedding(idx)))",
                ),
                Replace("return self.lm_head(self.ln_f(x))", "return self.lm_head(x)"),
            )
        },
        {"test_charlm": "applied before the blocks"},
    ),
    Mutant(
        "ln_f after every block",
        A,
        {
            "charlm": (
                Replace("            x = block(x)\n", "            x = self.ln_f(block(x))\n"),
                Replace("return self.lm_head(self.ln_f(x))", "return self.lm_head(x)"),
            )
        },
        {"test_charlm": "applied after every block"},
    ),
    Mutant(
        "CharLM without position embeddings",
        A,
        {
            "charlm": Replace(
                "self.position(self.token_embedding(idx))", "self.token_embedding(idx)"
            )
        },
        {"test_charlm": "position embeddings are missing"},
    ),
    Mutant(
        "CharLM returns inside the loop over blocks",
        A,
        {
            "charlm": Replace(
                "            x = block(x)\n",
                "            return self.lm_head(self.ln_f(block(x)))\n",
            )
        },
        {"test_charlm": "only the first block runs"},
    ),
    # penalise_repeats: the rule is the student's design; each of these breaks a stated property.
    Mutant(  # a negative logit divided by a factor above 1 rises: those seen ids gain
        "penalise_repeats: every seen logit divided by 1 + strength, whatever its sign",
        A,
        {
            "penalise_repeats": Replace(
                PENALTY_RETURN, "return torch.where(seen, logits / (1 + strength), logits)"
            )
        },
        {"test_penalise_repeats": "of the probability before and"},
        makes=("penalise_repeats.negative_logits_divided",),
    ),
    Mutant(
        "penalise_repeats: the ids seen anywhere in the batch penalised in every row",
        A,
        {
            "penalise_repeats": Replace(
                PENALTY_SEEN,
                "seen = torch.zeros(logits.shape[-1], dtype=torch.bool, device=logits.device)\n"
                "    seen = seen.index_fill(0, context.flatten(), True).expand_as(logits)",
            )
        },
        {"test_penalise_repeats": "the ids seen are pooled over the batch"},
    ),
    Mutant(
        "penalise_repeats: a penalty of 1 + strength, so strength 0 still penalises",
        A,
        {"penalise_repeats": Replace("logits - strength * seen", "logits - (1 + strength) * seen")},
        {"test_penalise_repeats": "at strength 0"},
    ),
    Mutant(  # the penalised logits are right; the caller's logits are penalised too
        "penalise_repeats: the penalty subtracted from the caller's logits in place",
        A,
        {
            "penalise_repeats": Replace(
                PENALTY_RETURN,
                "logits -= strength * seen.to(logits.dtype)\n    return logits",
            )
        },
        {
            "test_penalise_repeats": (
                "`penalise_repeats` changed a tensor it was given, in place: its argument "
                "`logits` changed"
            )
        },
        makes=("inputs.written_in_place",),
    ),
]

CORRECT = [
    Mutant(
        "penalise_repeats: a count penalty, strength times how often the id appeared",
        A,
        {
            "penalise_repeats": Replace(
                PENALTY_RETURN,
                "counts = torch.zeros_like(logits).scatter_add_(\n"
                "        1, context, torch.ones(context.shape, dtype=logits.dtype)\n"
                "    )\n"
                "    return logits - strength * counts",
            )
        },
    ),
    Mutant(
        "penalise_repeats: seen logits divided by 1 + strength if positive, multiplied if negative",
        A,
        {
            "penalise_repeats": Replace(
                PENALTY_RETURN,
                "factor = 1 + strength  # both branches lower the logit\n"
                "    lowered = torch.where(logits > 0, logits / factor, logits * factor)\n"
                "    return torch.where(seen, lowered, logits)",
            )
        },
    ),
    Mutant(
        "float tril buffer compared with 0; fused multi-head forward with F.scaled_dot_product_attention",
        A,
        {
            # Written from scratch in another style: the layers are even created in another order.
            "causal_head": Rewrite("""
class CausalSelfAttentionHead(nn.Module):
    def __init__(self, d_model, head_size, block_size):
        super().__init__()
        self.key = nn.Linear(d_model, head_size, bias=False)
        self.query = nn.Linear(d_model, head_size, bias=False)
        self.value = nn.Linear(d_model, head_size, bias=False)
        self.register_buffer("mask", torch.tril(torch.ones(block_size, block_size)), persistent=False)

    def forward(self, x):
        B, T, C = x.shape
        k = self.key(x)
        q = self.query(x)
        wei = q @ k.transpose(-2, -1) * k.shape[-1] ** -0.5
        wei = wei.masked_fill(self.mask[:T, :T] == 0, float("-inf"))
        wei = F.softmax(wei, dim=-1)
        return wei @ self.value(x)
"""),
            "multihead_causal": Body(
                "forward",
                """
                # all heads at once: stack their projections into (H, head_size, d_model)
                B, L, _ = x.shape
                wq, wk, wv = (torch.stack([getattr(h, n).weight for h in self.heads]) for n in ("query", "key", "value"))
                q, k, v = (torch.einsum("bld,hkd->bhlk", x, w) for w in (wq, wk, wv))
                out = F.scaled_dot_product_attention(q, k, v, is_causal=True)  # (B, H, L, head_size)
                return self.proj(out.transpose(1, 2).reshape(B, L, -1))
                """,
            ),
        },
    ),
    Mutant(
        "package attention in the head; transpose-based loss; sort-based top_k; narrow/view blocks",
        A,
        {
            "make_blocks": Body(
                "make_blocks",
                """
                n = (ids.numel() - 1) // block_size
                x = ids.narrow(0, 0, n * block_size).view(n, block_size)
                y = ids.narrow(0, 1, n * block_size).view(n, block_size)
                return x, y
                """,
            ),
            "causal_head": Body(
                "forward",
                """
                L = x.size(1)
                out, _ = scaled_dot_product_attention(self.query(x), self.key(x), self.value(x), self.mask[:L, :L])
                return out
                """,
            ),
            "lm_loss": Body(
                "lm_loss",
                """
                # cross_entropy takes the classes in dim 1: (B, V, L) against (B, L)
                return F.cross_entropy(logits.transpose(1, 2), targets)
                """,
            ),
            "sample": Body(
                "sample",
                """
                model.eval()
                out = idx
                for _ in range(max_new_tokens):
                    logits = model(out[:, -model.block_size :])[:, -1].double() / temperature
                    if top_k is not None:
                        ranked, _ = torch.sort(logits, dim=-1, descending=True)
                        cutoff = ranked[:, top_k - 1 : top_k]
                        logits = torch.where(logits >= cutoff, logits, torch.full_like(logits, -math.inf))
                    probs = F.softmax(logits, dim=-1)
                    out = torch.cat((out, torch.multinomial(probs, num_samples=1, generator=generator)), dim=1)
                return out
                """,
            ),
        },
    ),
]
# The families of issue 25 without a mutant above (autograder/checks/a06_char_lm: HEAD,
# MULTIHEAD, LOSS). Each mutant trains a model, so two mistakes of independent exercises share
# one where neither cell uses the other's answer.
WRONG += [
    Mutant(
        "head not scaled; lm_loss in bits",
        A,
        {
            "causal_head": Replace(" / math.sqrt(q.shape[-1])", ""),
            "lm_loss": Replace(
                "return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))",
                "return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))"
                " / math.log(2)",
            ),
        },
        {"test_causal_head": "scores are not scaled", "test_lm_loss": "in bits"},
    ),
    Mutant(
        "head softmax over the queries",
        A,
        {"causal_head": Replace("torch.softmax(scores, dim=-1)", "torch.softmax(scores, dim=-2)")},
        {"test_causal_head": "the softmax runs over the queries"},
    ),
    Mutant(
        "no output projection; targets paired with the wrong positions",
        A,
        {
            "multihead_causal": Replace(
                "return self.proj(torch.cat([head(x) for head in self.heads], dim=-1))",
                "return torch.cat([head(x) for head in self.heads], dim=-1)",
            ),
            "lm_loss": Replace("targets.reshape(-1)", "targets.T.reshape(-1)"),
        },
        {
            "test_multihead_causal": "self.proj is not applied",
            "test_lm_loss": "paired with the wrong positions",
        },
    ),
    Mutant(
        "head mask hides the diagonal",
        A,
        {
            "causal_head": Replace(
                "~self.mask[:length, :length]", "~self.mask[:length, :length].tril(-1)"
            )
        },
        {"test_causal_head": "the mask hides the diagonal too"},
        makes=("CausalSelfAttentionHead.hides_diagonal",),
    ),
]


# Train mode: judged stage by stage, with recorders in the blocks', ln_f's and lm_head's place
FINAL_NORM = "self.ln_f = LayerNorm(d_model)"
EMBEDDED = "x = self.position(self.token_embedding(idx))  # (B, L, d_model)"
WRONG += [
    Mutant(
        "charlm: the blocks built without dropout",
        A,
        {
            "charlm": Replace(
                "Block(d_model, num_heads, block_size, dropout)",
                "Block(d_model, num_heads, block_size)",
            )
        },
        {"test_charlm": "the blocks drop at Block's default rate"},
    ),
    Mutant(
        "charlm: F.dropout on the embeddings, left on in eval mode",
        A,
        {
            "charlm": (
                Replace(FINAL_NORM, FINAL_NORM + "\n        self.p = dropout"),
                Replace(
                    EMBEDDED, "x = F.dropout(self.position(self.token_embedding(idx)), self.p)"
                ),
            )
        },
        {"test_charlm": "in eval mode the model's logits change with the random seed"},
    ),
    Mutant(
        "charlm: dropout on the embeddings",
        A,
        {
            "charlm": (
                Replace(FINAL_NORM, FINAL_NORM + "\n        self.dropout = nn.Dropout(dropout)"),
                Replace(EMBEDDED, "x = self.dropout(self.position(self.token_embedding(idx)))"),
            )
        },
        {"test_charlm": "applies dropout of its own to the embeddings"},
    ),
    Mutant(
        "charlm: dropout between ln_f and lm_head",
        A,
        {
            "charlm": (
                Replace(FINAL_NORM, FINAL_NORM + "\n        self.dropout = nn.Dropout(dropout)"),
                Replace("self.lm_head(self.ln_f(x))", "self.lm_head(self.dropout(self.ln_f(x)))"),
            )
        },
        {"test_charlm": "dropout of its own between self.ln_f and self.lm_head"},
    ),
]
CORRECT += [
    Mutant(
        "charlm: the blocks run by index",
        A,
        {
            "charlm": Replace(
                "for block in self.blocks:\n            x = block(x)",
                "for i in range(len(self.blocks)):\n            x = self.blocks[i](x)",
            )
        },
    ),
]
# Named mistakes of top_k and of dropout outside the blocks beyond the mutants above: two of
# independent exercises per trained mutant (test_sample judges sample with stand-in models).
BLOCK_LOOP = "            x = block(x)\n"
WRONG += [
    Mutant(
        "sample: top_k masks the k-th largest too; charlm: dropout between the blocks",
        A,
        {
            "sample": Replace("logits < kth_largest", "logits <= kth_largest"),
            "charlm": (
                Replace(FINAL_NORM, FINAL_NORM + "\n        self.dropout = nn.Dropout(dropout)"),
                Replace(BLOCK_LOOP, "            x = self.dropout(block(x))\n"),
            ),
        },
        {
            "test_sample": "top_k keeps only k - 1 ids",
            "test_charlm": "applies dropout of its own between the blocks",
        },
    ),
    Mutant(
        "sample: top_k cut at the (k+1)-th largest; charlm: dropout on the logits",
        A,
        {
            "sample": Replace(
                "torch.topk(logits, top_k, dim=-1).values[:, -1:]",
                "torch.sort(logits, dim=-1, descending=True).values[:, top_k : top_k + 1]",
            ),
            "charlm": (
                Replace(FINAL_NORM, FINAL_NORM + "\n        self.dropout = nn.Dropout(dropout)"),
                Replace(
                    "return self.lm_head(self.ln_f(x))",
                    "return self.dropout(self.lm_head(self.ln_f(x)))",
                ),
            ),
        },
        {
            "test_sample": "top_k keeps k + 1 ids",
            "test_charlm": "applies dropout of its own to the logits",
        },
    ),
]
# Issue 40: the statement registers the mask with persistent=False; a persistent one computes
# the same outputs and was graded full marks.
WRONG += [
    Mutant(
        "causal mask buffer registered persistent, so it is saved in state_dict()",
        A,
        {
            "causal_head": Replace(
                ", causal_mask(block_size), persistent=False)", ", causal_mask(block_size))"
            )
        },
        {"test_causal_head": "is saved in state_dict()"},
    ),
    Mutant(  # issue 40's tenth blind corpus (u06-01): the clause was stated, not checked
        "causal mask kept as a plain tensor attribute, not a registered buffer",
        A,
        {
            "causal_head": Replace(
                'self.register_buffer("mask", causal_mask(block_size), persistent=False)',
                "self.mask = causal_mask(block_size)",
            )
        },
        {"test_causal_head": "`self.mask` is a plain Tensor attribute"},
        in_notebook=True,  # judge parity: named_buffers() and the attribute through the kernel
    ),
    Mutant(  # issue 40's tenth blind corpus (v06-04): no hidden logits tied at the k-th
        "sample: top_k keeps exactly torch.topk's k indices, dropping ties",
        A,
        {
            "sample": Replace(
                '            logits = logits.masked_fill(logits < kth_largest, float("-inf"))',
                "            kept = torch.topk(logits, top_k, dim=-1).indices\n"
                '            logits = torch.full_like(logits, float("-inf")).scatter(\n'
                "                -1, kept, logits.gather(-1, kept)\n"
                "            )",
            )
        },
        {"test_sample": "top_k keeps exactly k ids"},
    ),
]
# Issue 40's blind corpus (/work/fresh-corpus: f06-02, f06-06, f06-09, f06-12, f06-14): answers
# written without the checks, each once told only a bare exception, a NaN count or a stock line.
WRONG += [
    Mutant(  # right unless len(ids) is a multiple of block_size: then the last target is missing
        "make_blocks: n_blocks = len(ids) // block_size",
        A,
        {
            "make_blocks": Replace(
                "n_blocks = (len(ids) - 1) // block_size", "n_blocks = len(ids) // block_size"
            )
        },
        {"test_make_blocks": "leaves one id for the last target"},
        in_notebook=True,
    ),
    Mutant(  # the past hidden, the future shown, and the last row sees nothing (NaN)
        "causal head: the may-attend mask passed to masked_fill without ~",
        A,
        {"causal_head": Replace("~self.mask[:length, :length]", "self.mask[:length, :length]")},
        {"test_causal_head": "the causal mask is reversed"},
    ),
    Mutant(  # proj then gets head_size features and raises; right when num_heads = 1
        "multi-head: heads concatenated along dim 1",
        A,
        {
            "multihead_causal": Replace(
                "for head in self.heads], dim=-1))", "for head in self.heads], dim=1))"
            )
        },
        {"test_multihead_causal": "the heads are concatenated along another axis than"},
        in_notebook=True,
    ),
    Mutant(
        "charlm returns softmax probabilities",
        A,
        {
            "charlm": Replace(
                "return self.lm_head(self.ln_f(x))",
                "return torch.softmax(self.lm_head(self.ln_f(x)), dim=-1)",
            )
        },
        {
            "test_charlm": "the model returns probabilities",
            "test_trained_loss": "the trained model's outputs are probabilities",
        },
        in_notebook=True,
    ),
    Mutant(  # cross_entropy reads dim 1, the positions, as the classes: the training cell raises
        "lm_loss: (B, L, V) logits straight to cross_entropy",
        A,
        {"lm_loss": Body("lm_loss", "return F.cross_entropy(logits, targets)")},
        {
            "test_lm_loss": "cross_entropy read dim 1 of the logits as the classes",
            "test_trained_loss": "the training cell did not run to the end",
        },
        not_told=("close to ln V",),
        in_notebook=True,
    ),
]
# Issue 40, mistakes by operation: `sample` and `lm_loss` share 01's softmax-axis detector; and
# a loss no catalogue holds gets a small public input, not a cause.
WRONG += [
    Mutant(
        "sample: softmax over the batch; lm_loss: log-softmax over the positions",
        A,
        {
            "sample": Replace("torch.softmax(logits, dim=-1)", "torch.softmax(logits, dim=0)"),
            "lm_loss": Replace(
                "return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))",
                "log_probs = F.log_softmax(logits, dim=1)  # (B, L, V)\n"
                "    return -log_probs.gather(-1, targets.unsqueeze(-1)).mean()",
            ),
        },
        {
            "test_sample": "the softmax runs over the batch (dim 0",
            "test_lm_loss": "the log-softmax runs over the positions (dim 1",
        },
        # Cause words only: the message quotes the setting, "(temperature 1.0, top_k None)".
        not_told=(
            "flatten",
            "temperature multiplies",
            "temperature is ignored",
            "top_k is ignored",
            "summed",
            "bits",
        ),
    ),
    Mutant(  # in no catalogue: no cause can be confirmed, so a small public input is shown
        "lm_loss with label smoothing",
        A,
        {"lm_loss": Replace("targets.reshape(-1))", "targets.reshape(-1), label_smoothing=0.1)")},
        {"test_lm_loss": "a small input on which yours differs"},
        not_told=("flatten", "summed", "bits", "positions:", "log-softmax runs", "paired"),
    ),
]
WRONG += [
    Mutant(  # randomness that the seed does not explain: its cause is not confirmed, only seen
        "charlm: its own dropout of the embeddings from a NumPy generator, in every mode",
        A,
        {
            "charlm": (
                Replace(
                    "class CharLM(nn.Module):", "import numpy as np\n\n\nclass CharLM(nn.Module):"
                ),
                Replace(
                    "        self.block_size = block_size\n",
                    "        self.block_size = block_size\n"
                    "        self.p, self.rng = dropout, np.random.default_rng(0)\n",
                ),
                Replace(
                    "        x = self.position(self.token_embedding(idx))  # (B, L, d_model)\n",
                    "        x = self.position(self.token_embedding(idx))  # (B, L, d_model)\n"
                    "        keep = torch.from_numpy(self.rng.random(tuple(x.shape)) >= self.p)\n"
                    "        x = x * keep.to(x.dtype) / (1 - self.p)\n",
                ),
            )
        },
        {
            "test_charlm": "in eval mode the model gives different logits at every call, even "
            "under the same random seed"
        },
        # Told "CharLM drops nothing outside them" of blocks it never looked into, once.
        not_told=("CharLM drops nothing outside them",),
    ),
]
# Issue 40's seventh blind corpus (n05-05's family in lm_loss): a softmax before the
# cross-entropy is named; a log-softmax there gives the same loss as the logits and is correct.
WRONG += [
    Mutant(
        "lm_loss gives F.cross_entropy the softmax's probabilities",
        A,
        {
            "lm_loss": Replace(
                "    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))",
                "    probabilities = logits.softmax(dim=-1)  # (B, L, V)\n"
                "    return F.cross_entropy(probabilities.view(-1, logits.shape[-1]), targets.view(-1))",
            )
        },
        {
            "test_lm_loss": "the logits pass through a softmax before F.cross_entropy",
            "test_trained_loss": "the trained model's held-out loss",
        },
    ),
]
CORRECT += [
    Mutant(
        "lm_loss gives F.cross_entropy log-probabilities, (B, V, L) (log_softmax changes no loss)",
        A,
        {
            "lm_loss": Replace(
                "    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))",
                "    return F.cross_entropy(torch.log_softmax(logits, -1).transpose(1, 2), targets)",
            )
        },
    ),
]
# Issue 40's seventh blind corpus (p06-05): what the answer builds from the context is as wide
# as its largest id plus one, here by a bincount per row without minlength.
WRONG += [
    Mutant(
        "penalise_repeats: a bincount per row without minlength",
        A,
        {
            "penalise_repeats": Replace(
                "    seen = torch.zeros_like(logits, dtype=torch.bool)\n"
                "    seen = seen.scatter_(1, context, True)  # (B, V): True where the row saw the id\n",
                "    seen = torch.stack([torch.bincount(row) > 0 for row in context])\n",
            )
        },
        {"test_penalise_repeats": "is as wide as the context's largest id plus one"},
    ),
]
# Issue 40's seventh blind corpus (p06-02): the token embedding's weight as the output head, tied
# in __init__ (p06-02) or used in forward, is named where the logits are seen to be it and a
# weight drawn as nn.Linear draws one gives the same hidden states a loss near ln V.
WRONG += [
    Mutant(
        "charlm: the token embedding's weight as the output head, in forward",
        A,
        {
            "charlm": Replace(
                "        return self.lm_head(self.ln_f(x))  # (B, L, vocab_size)\n",
                "        return F.linear(self.ln_f(x), self.token_embedding.weight, self.lm_head.bias)\n",
            )
        },
        {"test_charlm": "the logits are the final hidden states times the token embedding's"},
    ),
]

# Issue 40's eighth blind corpus named these for q06-03 and r06-05: the same mistakes in other forms.
WRONG += [
    Mutant(
        "MultiHeadCausalAttention stacks the heads on dim=3 and reshapes: interleaved",
        A,
        {
            "multihead_causal": Replace(
                "self.proj(torch.cat([head(x) for head in self.heads], dim=-1))",
                "self.proj(torch.stack([head(x) for head in self.heads], dim=3).reshape("
                "x.shape[0], x.shape[1], -1))",
            )
        },
        {
            "test_multihead_causal": "the heads' outputs are interleaved, not concatenated "
            "(head after head)"
        },
    ),
    Mutant(
        "penalise_repeats raises the unseen ids by the seen ones' count over theirs: NaN when "
        "every id is seen",
        A,
        {
            "penalise_repeats": Replace(
                PENALTY_RETURN,
                "unseen = ~seen\n"
                "    share = strength * seen.sum(-1, keepdim=True) / unseen.sum(-1, keepdim=True)\n"
                "    return logits - strength * seen.to(logits.dtype) + share * unseen",
            )
        },
        {"test_penalise_repeats": "non-finite exactly in the rows whose context holds every id"},
    ),
]

# Issue 40's ninth blind corpus (t06-05 pooled the seen ids over the batch): the same family as a
# count penalty, each id's count taken over every row's context.
WRONG += [
    Mutant(
        "penalise_repeats: a count penalty whose counts are taken over the whole batch",
        A,
        {
            "penalise_repeats": Replace(
                PENALTY_RETURN,
                "counts = torch.bincount(context.flatten(), minlength=logits.shape[-1])\n"
                "    return logits - strength * counts.to(logits.dtype)",
            )
        },
        {"test_penalise_repeats": "the ids seen are pooled over the batch"},
    ),
]
