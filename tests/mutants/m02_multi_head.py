"""Mutants of 02_multi_head."""

from tests.mutants import Body, Mutant, Replace, Rewrite

A = "02_multi_head"

SPLIT = "x.view(batch, length, num_heads, d_model // num_heads).transpose(1, 2)"
ATTEND = "        heads, weights = scaled_dot_product_attention(q, k, v, mask)\n"
RETURN = "return self.out_proj(merge_heads(heads)), weights"
UNSQUEEZE = "        if mask is not None and mask.dim() == 3:\n            mask = mask.unsqueeze(1)"
ABLATE_KEEP = "out = out * keep.to(out.dtype)[:, None, None]"
DEFAULTS = """
key = query if key is None else key
value = key if value is None else value
"""
# Cause words that no message may hold for an answer whose mistake no confirmer names (issue 40).
NO_CAUSE = (" use ", "instead of", "should", "check the", "make sure", "did you", "forgot")

WRONG = [
    Mutant(
        "scaled by sqrt(d_model)",
        A,
        {
            "multi_head_attention": (
                Replace("class MultiHeadAttention", "import math\n\n\nclass MultiHeadAttention"),
                Replace(
                    ATTEND,
                    "        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_model)\n"
                    "        if mask is not None:\n"
                    '            scores = scores.masked_fill(~mask.bool(), float("-inf"))\n'
                    "        weights = torch.softmax(scores, dim=-1)\n"
                    "        heads = weights @ v\n",
                ),
            )
        },
        {"test_mha_parity": "scaled by √d_model instead of √d_k"},
        in_notebook=True,
    ),
    Mutant(
        "heads split without a transpose",
        A,
        {
            "split_heads": Replace(
                SPLIT, "x.reshape(batch, num_heads, length, d_model // num_heads)"
            )
        },
        {
            "test_split_heads": "heads split without a transpose",
            "test_mha_parity": "split without a transpose",
        },
    ),
    Mutant(
        "heads split with the feature blocks interleaved",
        A,
        {
            "split_heads": Replace(
                SPLIT, "x.view(batch, length, d_model // num_heads, num_heads).permute(0, 3, 1, 2)"
            )
        },
        {"test_split_heads": "interleaved"},
    ),
    Mutant(
        "no output projection",
        A,
        {"multi_head_attention": Replace(RETURN, "return merge_heads(heads), weights")},
        {
            "test_mha_shapes": "`out_proj` is never used in forward",
            "test_mha_parity": "output projection is missing",
        },
    ),
    Mutant(
        "heads merged without a transpose",
        A,
        {"merge_heads": Replace("x.transpose(1, 2).reshape(", "x.reshape(")},
        {
            "test_merge_heads": "merged without a transpose",
            "test_mha_parity": "merged without a transpose",
        },
    ),
    Mutant(
        "merge with .view after the transpose",
        A,
        {"merge_heads": Replace(".transpose(1, 2).reshape(", ".transpose(1, 2).view(")},
        {"test_merge_heads": "non-contiguous"},
    ),
    Mutant(
        "q_proj built without a bias",
        A,
        {
            "multi_head_attention": Replace(
                "self.q_proj = nn.Linear(d_model, d_model)",
                "self.q_proj = nn.Linear(d_model, d_model, bias=False)",
            )
        },
        # Charged once: the mask and parity cells are waived as the same mistake.
        {"test_mha_shapes": "without a bias"},
        charged_once=True,
        in_notebook=True,  # the bias added to the kernel's module, through the judge
    ),
    Mutant(  # one charge per mistake: a later cell with a mistake of its own is still charged
        "q_proj without a bias, and the mask inverted",
        A,
        {
            "multi_head_attention": (
                Replace(
                    "self.q_proj = nn.Linear(d_model, d_model)",
                    "self.q_proj = nn.Linear(d_model, d_model, bias=False)",
                ),
                Replace(
                    UNSQUEEZE,
                    "        if mask is not None:\n"
                    "            mask = ~mask.bool()  # True = blocked\n"
                    "            if mask.dim() == 3:\n"
                    "                mask = mask.unsqueeze(1)",
                ),
            )
        },
        {
            "test_mha_shapes": "without a bias",
            "test_mha_mask": "without a bias",
            "test_mha_parity": "without a bias",
        },
    ),
    Mutant(
        "calls nn.MultiheadAttention through the notebook's helpers",
        A,
        {
            "multi_head_attention": Body(
                "forward",
                DEFAULTS
                + """
reference = to_torch_mha(self)
out, weights = torch_mha_forward(reference, query, key, value, mask)
return out, weights
""",
            )
        },
        {
            "test_mha_shapes": "calls nn.MultiheadAttention",
            "test_mha_mask": "calls nn.MultiheadAttention",
            "test_mha_parity": "calls nn.MultiheadAttention",
        },
    ),
    Mutant(
        "subclasses attention_lab's MultiHeadAttention",
        A,
        {
            # The mistake is the whole cell: the class is the package's, not the student's.
            "multi_head_attention": Rewrite("""
from attention_lab.reference.a02_multi_head import MultiHeadAttention as _Reference


class MultiHeadAttention(_Reference):
    pass
""")
        },
        {"test_mha_parity": "subclasses attention_lab's MultiHeadAttention"},
    ),
    Mutant(
        "3-D mask not unsqueezed",
        A,
        {
            "multi_head_attention": Replace(
                UNSQUEEZE + "  # (B, 1, L_q, L_k): the same mask for every head\n", ""
            )
        },
        {"test_mha_mask": "mask.unsqueeze(1)"},
        # Where B == H the mask broadcasts as (1, B, L_q, L_k), without an error.
        makes=("MultiHeadAttention.mask_head_axis_in_front",),
        # The parity cell passes with each 3-D mask given its head axis (the repair of
        # checks/a02_multi_head/multi_head_attention.py), through the grading command too.
        in_notebook=True,
        charged_once=True,
    ),
    Mutant(  # issue 40's tenth blind corpus (u02-03): told it broadcast, where it tiled
        "3-D mask repeated H times and viewed as (B, H, L_q, L_k)",
        A,
        {
            "multi_head_attention": Replace(
                "            mask = mask.unsqueeze(1)",
                "            mask = mask.repeat(self.num_heads, 1, 1).view(\n"
                "                mask.shape[0], self.num_heads, *mask.shape[1:]\n"
                "            )",
            )
        },
        {"test_mha_mask": "the sentence masks were repeated H times one after the other"},
        makes=("MultiHeadAttention.sentence_masks_mishandled",),
        not_told=("broadcast as (1, B, L_q, L_k)",),
        charged_once=True,
    ),
    Mutant(  # issue 40's tenth blind corpus (u02-04): once told only the parameter count
        "q, k and v projections one shared nn.Linear",
        A,
        {
            "multi_head_attention": Replace(
                "        self.k_proj = nn.Linear(d_model, d_model)\n"
                "        self.v_proj = nn.Linear(d_model, d_model)\n",
                "        self.k_proj = self.v_proj = self.q_proj\n",
            )
        },
        {"test_mha_shapes": "hold one weight tensor (one object)"},
        in_notebook=True,  # judge parity: the identity of a kernel's tensors
    ),
    Mutant(
        "mask inverted for torch's convention",
        A,
        {
            "multi_head_attention": Replace(
                UNSQUEEZE,
                "        if mask is not None:\n"
                "            mask = ~mask.bool()  # True = blocked\n"
                "            if mask.dim() == 3:\n"
                "                mask = mask.unsqueeze(1)",
            )
        },
        {"test_mha_mask": "polarity reversed", "test_mha_parity": "polarity reversed"},
    ),
    Mutant(
        "value defaults to query",
        A,
        {
            "multi_head_attention": Replace(
                "value = key if value is None else value",
                "value = query if value is None else value",
            )
        },
        {"test_mha_shapes": "value must default to key"},
    ),
    Mutant(
        "assert instead of ValueError",
        A,
        {
            "multi_head_attention": Replace(
                "        if num_heads < 1 or d_model % num_heads != 0:\n"
                "            raise ValueError(\n"
                '                "d_model must be divisible by num_heads, "\n'
                '                f"got d_model={d_model}, num_heads={num_heads}"\n'
                "            )\n",
                "        assert d_model % num_heads == 0, 'd_model must be divisible by num_heads'\n",
            )
        },
        {"test_mha_shapes": "raises AssertionError for sizes that do not divide"},
    ),
    Mutant(
        "weights averaged over the heads",
        A,
        {"multi_head_attention": Replace(RETURN, RETURN + ".mean(dim=1)")},
        {
            "test_mha_shapes": "the weights have no head axis",
            "test_mha_parity": "averaged over the heads",
        },
    ),
    Mutant(
        "values projected from the key",
        A,
        {"multi_head_attention": Replace("self.v_proj(value)", "self.v_proj(key)")},
        {"test_mha_parity": "projected from `key` instead of `value`"},
    ),
    Mutant(  # from issue 40's fresh corpus, once told "use their own length, key.shape[1]"
        "keys projected from the query",
        A,
        {"multi_head_attention": Replace("self.k_proj(key)", "self.k_proj(query)")},
        {
            "test_mha_shapes": "changing `key` leaves the output unchanged",
            "test_mha_mask": "changing `key` leaves the output unchanged",
            "test_mha_parity": "changing `key` leaves the output unchanged",
        },
        not_told=("own length", "head axis"),
    ),
    Mutant(
        "keys projected with q_proj",
        A,
        {"multi_head_attention": Replace("self.k_proj(key)", "self.q_proj(key)")},
        {
            "test_mha_shapes": "`k_proj` is never used",
            "test_mha_parity": "keys are projected with q_proj",
        },
    ),
    Mutant(  # right whenever B, H and L_q exceed 1: the hidden one-head and one-query sizes show it
        "weights squeezed for plotting",
        A,
        {"multi_head_attention": Replace(RETURN, RETURN + ".squeeze()")},
        {
            "test_mha_shapes": "squeeze() drops every such axis",
            "test_mha_mask": "squeeze() drops every such axis",
            "test_mha_parity": "squeeze() drops every such axis",
        },
    ),
    Mutant(  # right for self-attention: only a key length unlike the query length shows it
        "keys and values split with the query's length",
        A,
        {
            "multi_head_attention": Body(
                "forward",
                DEFAULTS
                + """
if mask is not None and mask.dim() == 3:
    mask = mask.unsqueeze(1)
batch, length, _ = query.shape
q, k, v = (
    proj(t).view(batch, length, self.num_heads, self.d_k).transpose(1, 2)
    for proj, t in ((self.q_proj, query), (self.k_proj, key), (self.v_proj, value))
)
heads, weights = scaled_dot_product_attention(q, k, v, mask)
return self.out_proj(merge_heads(heads)), weights
""",
            )
        },
        {
            "test_mha_shapes": "split the keys and values with their own length",
            "test_mha_mask": "split the keys and values with their own length",
            "test_mha_parity": "split the keys and values with their own length",
        },
        in_notebook=True,  # the visible cross-attention raises first, with torch's raw error
    ),
    Mutant(
        "split_heads ends with squeeze()",
        A,
        {"split_heads": Replace(SPLIT, SPLIT + ".squeeze()")},
        {"test_split_heads": "squeeze() drops every such axis"},
        in_notebook=True,
    ),
    # The families of issue 25 (autograder/checks/a02_multi_head: SPLIT, MERGE, MHA).
    Mutant(
        "split_heads keeps the head axis after the positions",
        A,
        {"split_heads": Replace(SPLIT, SPLIT.removesuffix(".transpose(1, 2)"))},
        {"test_split_heads": "returned (B, L, H, d_k)"},
    ),
    Mutant(
        "merge_heads sums the heads",
        A,
        {
            "merge_heads": Replace(
                "x.transpose(1, 2).reshape(batch, length, num_heads * d_k)", "x.sum(dim=1)"
            )
        },
        {"test_merge_heads": "summed instead of concatenated"},
    ),
    # Issue 40: mistakes outside every catalogue get a counterexample, and no cause words.
    Mutant(
        "queries scaled before their projection",
        A,
        {
            "multi_head_attention": Replace(
                "self.q_proj(query)", "self.q_proj(query / self.d_k**0.5)"
            )
        },
        {"test_mha_parity": "a small input on which yours differs"},
        not_told=("check the projections, split_heads and the scale", *NO_CAUSE),
    ),
    Mutant(
        "output projection without its bias",
        A,
        {
            "multi_head_attention": Replace(
                RETURN, "return F.linear(merge_heads(heads), self.out_proj.weight), weights"
            )
        },
        {"test_mha_parity": "without out_proj's bias: it differs from nn.MultiheadAttention's"},
        not_told=("check v_proj, merge_heads and out_proj", *NO_CAUSE),
        in_notebook=True,  # the counterexample built through the judge, on the kernel's module
    ),
    Mutant(  # padding values reach every position through the mean: split_heads is right
        "values mixed with their mean over the positions",
        A,
        {
            "multi_head_attention": Replace(
                ATTEND,
                "        heads, weights = scaled_dot_product_attention(\n"
                "            q, k, v + v.mean(dim=2, keepdim=True), mask\n"
                "        )\n",
            )
        },
        {
            "test_mha_mask": "changed the output",
            "test_mha_parity": "a small input on which yours differs",
        },
        not_told=("check the mask", "split_heads keeps positions apart", *NO_CAUSE),
    ),
    Mutant(  # the softmax is over the last axis: the old hint named it as the cause
        "returns the scaled scores as the weights",
        A,
        {
            "multi_head_attention": Replace(
                ATTEND + "        " + RETURN,
                "        scores = q @ k.transpose(-2, -1) / self.d_k**0.5\n"
                "        if mask is not None:\n"
                '            scores = scores.masked_fill(~mask.bool(), float("-inf"))\n'
                "        heads = torch.softmax(scores, dim=-1) @ v\n"
                "        return self.out_proj(merge_heads(heads)), scores",
            )
        },
        {
            "test_mha_shapes": "must sum to 1 over the keys",
            "test_mha_parity": "a small input on which yours differs",
        },
        not_told=("softmax over the last axis", *NO_CAUSE),
    ),
    Mutant(
        "softmax over the queries",
        A,
        {
            "multi_head_attention": Replace(
                ATTEND,
                "        scores = q @ k.transpose(-2, -1) / self.d_k**0.5\n"
                "        if mask is not None:\n"
                '            scores = scores.masked_fill(~mask.bool(), float("-inf"))\n'
                "        weights = torch.softmax(scores, dim=-2)\n"
                "        heads = weights @ v\n",
            )
        },
        {
            "test_mha_shapes": "every column, over the queries, sums to 1",
            "test_mha_parity": "a softmax over the queries' axis",
        },
    ),
    Mutant(
        "split_heads gives the heads in reverse order",
        A,
        {"split_heads": Replace(SPLIT, SPLIT + ".flip(1)")},
        {"test_split_heads": "a small input on which yours differs"},
        not_told=NO_CAUSE,
    ),
    Mutant(
        "merge_heads does not flatten the heads",
        A,
        {"merge_heads": Replace(".reshape(batch, length, num_heads * d_k)", "")},
        {"test_merge_heads": "flatten the last two axes into H * d_k"},
    ),
    # heads_switched_off: what "off" means is the student's design; these break a property.
    Mutant(  # an off head with zero queries attends uniformly: it still averages its values
        "heads_switched_off: an off head's queries zeroed",
        A,
        {
            "heads_switched_off": Body(
                "heads_switched_off",
                """
                batch, length, d_model = x.shape

                def heads(t: Tensor) -> Tensor:
                    return t.view(batch, length, mha.num_heads, mha.d_k).transpose(1, 2)

                q = heads(mha.q_proj(x)) * keep.to(x.dtype)[:, None, None]
                out, _ = scaled_dot_product_attention(q, heads(mha.k_proj(x)), heads(mha.v_proj(x)))
                return mha.out_proj(out.transpose(1, 2).reshape(batch, length, d_model))
                """,
            )
        },
        {"test_heads_switched_off": "yet the output changed by up to"},
        makes=("heads_switched_off.uniform_weights",),
    ),
    Mutant(
        "heads_switched_off: the off heads' blocks of the output features zeroed, after out_proj",
        A,
        {
            "heads_switched_off": Body(
                "heads_switched_off",
                "return mha(x)[0] * keep.repeat_interleave(mha.d_k).to(x.dtype)",
            )
        },
        {"test_heads_switched_off": "yet the output changed by up to"},
    ),
    Mutant(  # right while a head is on; with every head off it divides by zero
        "heads_switched_off: the kept heads rescaled by H / number kept, unguarded",
        A,
        {
            "heads_switched_off": Replace(
                ABLATE_KEEP, ABLATE_KEEP + " * (mha.num_heads / keep.sum())"
            )
        },
        {"test_heads_switched_off": "your rescale divides by the number of kept heads"},
    ),
    Mutant(  # the family of n02-04: the kept heads averaged, 1 / number kept
        "heads_switched_off: the kept heads averaged (divided by the number kept), unguarded",
        A,
        {"heads_switched_off": Replace(ABLATE_KEEP, ABLATE_KEEP + " / keep.sum()")},
        {"test_heads_switched_off": "your rescale divides by the number of kept heads"},
    ),
    Mutant(  # the family of n02-05: v_proj's weight masked by head, its bias kept whole
        "heads_switched_off: the off heads' rows of v_proj's weight masked, its bias left on",
        A,
        {
            "heads_switched_off": [
                Replace(ABLATE_KEEP + "  # (B, H, L, d_k): off heads are zero", ""),
                Replace(
                    "heads(mha.q_proj), heads(mha.k_proj), heads(mha.v_proj)",
                    "heads(mha.q_proj),\n"
                    "        heads(mha.k_proj),\n"
                    "        F.linear(x, mha.v_proj.weight * keep.repeat_interleave(mha.d_k)[:, None], "
                    "mha.v_proj.bias)\n"
                    "        .view(batch, length, mha.num_heads, mha.d_k)\n"
                    "        .transpose(1, 2),",
                ),
            ]
        },
        {"test_heads_switched_off": "an off head still passes on its rows of v_proj.bias"},
    ),
    Mutant(  # the first call already changes the caller's query: that is what is told
        "the query divided by √d_k in place, before its projection",
        A,
        {
            "multi_head_attention": Replace(
                "        q = split_heads(self.q_proj(query), self.num_heads)",
                "        query = query.div_(self.d_k**0.5)\n"
                "        q = split_heads(self.q_proj(query), self.num_heads)",
            )
        },
        {
            "test_mha_shapes": (
                "`MultiHeadAttention` changed a tensor it was given, in place: its argument "
                "`query` changed"
            ),
        },
        makes=("inputs.written_in_place",),
    ),
]

CORRECT = [
    Mutant(
        "heads_switched_off: the kept heads rescaled by H / number kept, at least 1",
        A,
        {
            "heads_switched_off": Replace(
                ABLATE_KEEP, ABLATE_KEEP + " * (mha.num_heads / max(int(keep.sum()), 1))"
            )
        },
    ),
    Mutant(
        "heads_switched_off: a copy of the layer with the off heads' out_proj columns zeroed",
        A,
        {
            "heads_switched_off": Body(
                "heads_switched_off",
                """
                import copy

                pruned = copy.deepcopy(mha)  # the caller's layer stays as it is
                with torch.no_grad():
                    # out_proj reads head h from columns h * d_k to (h + 1) * d_k
                    pruned.out_proj.weight[:, (~keep).repeat_interleave(mha.d_k)] = 0.0
                return pruned(x)[0]
                """,
            )
        },
    ),
    Mutant(
        "einsum split and merge",
        A,
        {
            "split_heads": Body(
                "split_heads",
                'return torch.einsum("blhd->bhld", x.unflatten(-1, (num_heads, -1)))',
            ),
            "merge_heads": Body("merge_heads", 'return torch.einsum("bhld->blhd", x).flatten(-2)'),
        },
    ),
    Mutant(
        "fused qkv projection for self-attention, own attention in float64",
        A,
        {
            "multi_head_attention": Body(
                "forward",
                DEFAULTS
                + """
if query is key and key is value:  # self-attention: one fused projection, split in three
    w = torch.cat([self.q_proj.weight, self.k_proj.weight, self.v_proj.weight])
    b = torch.cat([self.q_proj.bias, self.k_proj.bias, self.v_proj.bias])
    q, k, v = F.linear(query, w, b).chunk(3, dim=-1)
else:
    q, k, v = self.q_proj(query), self.k_proj(key), self.v_proj(value)
q, k, v = (split_heads(t, self.num_heads).double() for t in (q, k, v))
scores = torch.matmul(q, k.transpose(-1, -2)) * self.d_k**-0.5
if mask is not None:
    mask = mask.bool()
    if mask.dim() == 3:
        mask = mask[:, None]
    scores = scores.masked_fill(mask.logical_not(), float("-inf"))
weights = scores.softmax(dim=-1).to(query.dtype)
heads = weights @ v.to(query.dtype)
return self.out_proj(merge_heads(heads)), weights
""",
            )
        },
    ),
    Mutant(
        "one head at a time, slicing the projection weights",
        A,
        {
            "multi_head_attention": Body(
                "forward",
                DEFAULTS
                + """
d_k = self.d_k
if mask is not None:
    mask = mask.bool()
    if mask.dim() == 3:
        mask = mask.unsqueeze(1)
    mask = mask.expand(query.shape[0], self.num_heads, query.shape[1], key.shape[1])
outputs, all_weights = [], []
for h in range(self.num_heads):
    rows = slice(h * d_k, (h + 1) * d_k)
    q = F.linear(query, self.q_proj.weight[rows], self.q_proj.bias[rows])
    k = F.linear(key, self.k_proj.weight[rows], self.k_proj.bias[rows])
    v = F.linear(value, self.v_proj.weight[rows], self.v_proj.bias[rows])
    out, w = scaled_dot_product_attention(q, k, v, None if mask is None else mask[:, h])
    outputs.append(out)
    all_weights.append(w)
return self.out_proj(torch.cat(outputs, dim=-1)), torch.stack(all_weights, dim=1)
""",
            )
        },
    ),
    Mutant(
        "permute/contiguous split and merge, ValueError via divmod",
        A,
        {
            "split_heads": Body(
                "split_heads",
                """
                b, l, d = x.shape
                return x.reshape(b, l, num_heads, d // num_heads).permute(0, 2, 1, 3)
                """,
            ),
            "merge_heads": Body(
                "merge_heads",
                """
                b, h, l, d = x.shape
                return x.permute(0, 2, 1, 3).contiguous().view(b, l, h * d)
                """,
            ),
            # Every method is written in another style (divmod, a setattr loop, a while loop).
            "multi_head_attention": Rewrite("""
class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        d_k, rest = divmod(d_model, num_heads)
        if rest:
            raise ValueError(f"cannot split d_model = {d_model} into {num_heads} equal heads")
        self.d_model, self.num_heads, self.d_k = d_model, num_heads, d_k
        for name in ("q_proj", "k_proj", "v_proj", "out_proj"):
            setattr(self, name, nn.Linear(d_model, d_model))

    def forward(self, query, key=None, value=None, mask=None):
        if key is None:
            key = query
        if value is None:
            value = key
        if mask is not None:
            while mask.dim() < 4:
                mask = mask.unsqueeze(-3)  # (L_q, L_k) -> (1, L_q, L_k) -> ... ; (B, L_q, L_k) -> (B, 1, ...)
        q, k, v = (split_heads(p(t), self.num_heads) for p, t in
                   ((self.q_proj, query), (self.k_proj, key), (self.v_proj, value)))
        heads, weights = scaled_dot_product_attention(q, k, v, mask=mask)
        return self.out_proj(merge_heads(heads)), weights
"""),
        },
    ),
]
