"""Mutants of 04_depth."""

from tests.mutants import Body, Mutant, Replace

A = "04_depth"

BLOCK = "EncoderBlock(d_model, num_heads, d_ff, dropout)"
LAYERS = f"nn.ModuleList(\n            {BLOCK} for _ in range(num_layers)\n        )"
ENTROPY = "-torch.special.xlogy(weights, weights).sum(dim=-1)"
TOTAL_VARIATION = "0.5 * (p - q).abs().sum(dim=-1)"
KEEP_MAP = "maps.append(weights)"
LAYER_CALL = "x, weights = layer(x, mask)  # the same mask in every layer"

FOCUS_RETURN = "return 1 + torch.special.xlogy(weights, weights).sum(dim=-1) / math.log(num_keys)"
FOCUS_SINGLE_KEY = """if num_keys == 1:
        return weights.new_ones(weights.shape[:-1])
    """  # with the next line's indent, so that removing it leaves valid code

WRONG = [
    Mutant(
        "entropy: an epsilon of 1e-4 added inside the log, p * log(p + 1e-4)",
        A,
        {"attention_metrics": Replace(ENTROPY, "-(weights * (weights + 1e-4).log()).sum(dim=-1)")},
        {"test_attention_metrics": "the weights are clamped at, or shifted by, an epsilon inside"},
    ),
    Mutant(  # issue 40's blind answer r04-05 seeds once per layer; once is enough to be wrong
        "DepthStack seeds the global generator before building its layers",
        A,
        {
            "depth_stack": Replace(
                "        self.layers = nn.ModuleList(",
                "        torch.manual_seed(0)  # reproducible stacks\n        self.layers = nn.ModuleList(",
            )
        },
        {"test_depth_stack_layers": "the stack's weights do not follow the seed set before"},
    ),
    Mutant(
        "return inside the layer loop",
        A,
        {"depth_stack": Replace("        return x, maps", "            return x, maps")},
        {
            "test_depth_stack": "`forward` returns inside the layer loop, so only the first layer runs",
            "test_depth_stack_layers": "`forward` returns inside the layer loop, so only the first layer runs",
        },
    ),
    Mutant(
        "one block repeated with [block] * num_layers; entropy: 0 * log(0) gives NaN",
        A,
        {
            "depth_stack": Replace(
                f"{BLOCK} for _ in range(num_layers)", f"[{BLOCK}] * num_layers"
            ),
            "attention_metrics": Replace(ENTROPY, "-(weights * torch.log(weights)).sum(dim=-1)"),
        },
        {
            "test_depth_stack": "one block reused num_layers times",
            "test_depth_stack_layers": "the same EncoderBlock object appears several times",
            "test_attention_metrics": "0 * log(0) gives NaN",
        },
    ),
    Mutant(
        "the first layer applied num_layers times; entropy in bits",
        A,
        {
            "depth_stack": Replace(
                f"for layer in self.layers:\n            {LAYER_CALL}",
                "for _ in range(len(self.layers)):\n            x, weights = self.layers[0](x, mask)",
            ),
            "attention_metrics": Replace(
                ENTROPY, "-(torch.special.xlogy(weights, weights) / math.log(2)).sum(dim=-1)"
            ),
        },
        {
            "test_depth_stack": "one layer is applied num_layers times",
            "test_depth_stack_layers": "one layer is applied num_layers times",
            "test_attention_metrics": "in bits",
        },
    ),
    Mutant(
        "only the last layer's attention returned; entropy with log(p + 1e-3)",
        A,
        {
            "depth_stack": (
                Replace("        maps = []\n", ""),
                Replace(KEEP_MAP, "maps = [weights]"),
            ),
            "attention_metrics": Replace(
                ENTROPY, "-(weights * torch.log(weights + 1e-3)).sum(dim=-1)"
            ),
        },
        {
            "test_depth_stack": "only the last layer's attention map is returned",
            "test_depth_stack_layers": "only the last layer's attention map is returned",
            "test_attention_metrics": "an epsilon inside the log",
        },
    ),
    Mutant(
        "the last layer's map repeated num_layers times; total variation without the 1/2",
        A,
        {
            "depth_stack": Body(
                "forward",
                """
                for layer in self.layers:
                    x, weights = layer(x, mask)
                return x, [weights] * len(self.layers)
                """,
            ),
            "attention_metrics": Replace(TOTAL_VARIATION, "(p - q).abs().sum(dim=-1)"),
        },
        {
            "test_depth_stack_layers": "only the last layer's attention map is returned",
            "test_attention_metrics": "the factor 1/2 is missing",
        },
    ),
    Mutant(
        "layers not chained (each applied to the input)",
        A,
        {
            "depth_stack": (
                Replace(LAYER_CALL, "out, weights = layer(x, mask)"),
                Replace("return x, maps", "return out, maps"),
            )
        },
        {
            "test_depth_stack": "the layers are not chained",
            "test_depth_stack_layers": "the layers are not chained",
        },
    ),
    Mutant(
        "head axis dropped with weights[:, 0]; total variation summed over every dimension",
        A,
        {
            "depth_stack": Replace(KEEP_MAP, "maps.append(weights[:, 0])  # one map per layer"),
            "attention_metrics": Replace(TOTAL_VARIATION, "0.5 * (p - q).abs().sum()"),
        },
        {
            "test_depth_stack": "keeps only the first head",
            "test_attention_metrics": "reduce over the LAST dimension only",
        },
    ),
    Mutant(  # the family of n04-03: a fixed axis, right for (N, L_k) rows alone
        "attention_entropy summed over dim=1",
        A,
        {"attention_metrics": Replace(ENTROPY, "-torch.special.xlogy(weights, weights).sum(1)")},
        {
            "test_attention_metrics": "the entropy is summed over a fixed axis counted from the front"
        },
    ),
    Mutant(  # the same family, at axis 2: right for (B, N, L_k) rows alone
        "total_variation summed over dim=2",
        A,
        {"attention_metrics": Replace(TOTAL_VARIATION, "0.5 * torch.sum((p - q).abs(), dim=2)")},
        {"test_attention_metrics": "TV is summed over a fixed axis counted from the front"},
    ),
    Mutant(
        "dropout not passed on",
        A,
        {"depth_stack": Replace(BLOCK, "EncoderBlock(d_model, num_heads, d_ff)")},
        {"test_depth_stack_layers": "built with EncoderBlock's default dropout"},
    ),
    Mutant(
        "uses attention_lab's TransformerEncoder",
        A,
        {
            "depth_stack": (
                Replace(
                    "class DepthStack",
                    "from attention_lab.reference.a04_depth import TransformerEncoder\n\n\nclass DepthStack",
                ),
                Replace(
                    LAYERS,
                    "TransformerEncoder(num_layers, d_model, num_heads, d_ff, dropout).layers",
                ),
            )
        },
        {"test_depth_stack": "calls attention_lab's TransformerEncoder instead of implementing it"},
    ),
    Mutant(
        "mask not passed to the layers",
        A,
        {"depth_stack": Replace(LAYER_CALL, "x, weights = layer(x)")},
        {"test_depth_stack": "the mask never reaches the layers"},
        in_notebook=True,
    ),
    Mutant(
        "mask given to the first layer only",
        A,
        {
            "depth_stack": Body(
                "forward",
                """
                x, weights = self.layers[0](x, mask)  # the mask hides keys of the input
                maps = [weights]
                for layer in self.layers[1:]:
                    x, weights = layer(x)
                    maps.append(weights)
                return x, maps
                """,
            )
        },
        {"test_depth_stack": "only the first layer gets the mask"},
    ),
    Mutant(
        "heads averaged into one map per layer",
        A,
        {"depth_stack": Replace(KEEP_MAP, "maps.append(weights.mean(dim=1))  # one map per layer")},
        {
            "test_depth_stack": "each map is the mean over the heads",
            "test_depth_stack_layers": "each map is the mean over the heads",
        },
    ),
    Mutant(
        "squeeze() on every map (passes the public sizes, fails a batch of one, one head, one token)",
        A,
        {"depth_stack": Replace(KEEP_MAP, "maps.append(weights.squeeze())")},
        {"test_depth_stack": "an axis of size 1 disappeared"},
    ),
    # attention_focus: the formula is the student's design; each of these breaks a stated property.
    Mutant(
        "attention_focus: the entropy itself, not calibrated",
        A,
        {
            "attention_focus": Replace(
                FOCUS_RETURN, "return -torch.special.xlogy(weights, weights).sum(dim=-1)"
            )
        },
        {"test_attention_focus": "where the statement asks for 0"},
    ),
    Mutant(
        "attention_focus: the largest weight, not rescaled",
        A,
        {"attention_focus": Body("attention_focus", "return weights.amax(dim=-1)")},
        {"test_attention_focus": "where the statement asks for 0"},
    ),
    Mutant(
        "attention_focus: a Gini coefficient of the weights in key order, unsorted",
        A,
        {
            "attention_focus": Replace(
                FOCUS_RETURN,
                "rank = torch.arange(1, num_keys + 1, dtype=weights.dtype)\n"
                "    return ((2 * rank - num_keys - 1) * weights).sum(dim=-1) / (num_keys - 1)",
            )
        },
        {"test_attention_focus": "where the statement asks for 1"},
    ),
    Mutant(  # the family of p04-04: the keys with weight counted, a one-key row guarded
        "attention_focus: 1 - H / log(count_nonzero), one key with weight scoring 1",
        A,
        {
            "attention_focus": Body(
                "attention_focus",
                """
                used = torch.count_nonzero(weights, dim=-1).to(weights.dtype)
                entropy = -torch.special.xlogy(weights, weights).sum(dim=-1)
                return torch.where(
                    used > 1, 1 - entropy / used.clamp(min=2).log(), torch.ones_like(entropy)
                )
                """,
            )
        },
        {"test_attention_focus": "the score is 1 - H / log(the number of non-zero weights), not"},
    ),
    Mutant(  # the family of n04-05: 1 - (effective number of keys) / L_k, 1 / sum p² here
        "attention_focus: 1 - 1 / (L_k sum p²), the participation ratio's share",
        A,
        {
            "attention_focus": Body(
                "attention_focus",
                "return 1 - 1 / (weights.shape[-1] * weights.square().sum(dim=-1))",
            )
        },
        {"test_attention_focus": "the score is 1 - (the effective number of keys) / L_k"},
    ),
    Mutant(
        "attention_focus: p log p with 0 log 0 left as nan",
        A,
        {
            "attention_focus": Replace(
                "torch.special.xlogy(weights, weights)", "(weights * weights.log())"
            )
        },
        {"test_attention_focus": "scores nan, where the statement asks for 1"},
    ),
    Mutant(  # right at every length but 1, where it divides 0 by log 1 = 0
        "attention_focus: a single key divides by log 1",
        A,
        {"attention_focus": Replace(FOCUS_SINGLE_KEY, "")},
        {"test_attention_focus": "the score is 1 - H / log(L_k), right for two keys or more"},
    ),
    # Writes into what the answer is given (the statement's "writes nothing into ..." clauses):
    # blind answer t04-04 clamps attention_focus's weights in place; the same family in the other
    # exercises that take tensors.
    Mutant(
        "total_variation subtracts q from p in place",
        A,
        {"attention_metrics": Replace(TOTAL_VARIATION, "0.5 * p.sub_(q).abs().sum(dim=-1)")},
        {
            "test_attention_metrics": (
                "`total_variation` changed a tensor it was given, in place: its argument `p`"
            )
        },
        makes=("inputs.written_in_place",),
    ),
    Mutant(
        "DepthStack writes each layer's output into x in place",
        A,
        {
            "depth_stack": Replace(
                LAYER_CALL,
                "out, weights = layer(x, mask)  # the same mask in every layer\n"
                "            x = x.copy_(out)  # one buffer for every layer's output",
            )
        },
        {
            "test_depth_stack": (
                "`DepthStack` changed a tensor it was given, in place: its argument `x`"
            ),
            "test_depth_stack_layers": (
                "`DepthStack` changed a tensor it was given, in place: its argument `x`"
            ),
        },
        makes=("inputs.written_in_place",),
    ),
    # The list of maps returned (the statement's "returns a new list at each call"): blind answer
    # t04-02 clears and refills one list kept on the module; this one only appends to it.
    Mutant(
        "DepthStack appends every call's maps to one list kept on the module",
        A,
        {
            "depth_stack": (
                Replace(LAYERS, LAYERS + "\n        self.maps: list[torch.Tensor] = []"),
                Replace("maps = []", "maps = self.maps  # every layer's map, kept for plots"),
            )
        },
        {"test_depth_stack": "every call returns one and the same list object, so the next call"},
    ),
    # Blind answer t04-05 replaces the summed entropy's NaN with nan_to_num; the same mistake
    # written with torch.where.
    Mutant(
        "entropy: a NaN sum set to 0 with torch.where",
        A,
        {
            "attention_metrics": Body(
                "attention_entropy",
                """
                entropy = -(weights * weights.log()).sum(dim=-1)
                return torch.where(entropy.isnan(), torch.zeros_like(entropy), entropy)
                """,
            )
        },
        {"test_attention_metrics": "0 * log(0) is NaN, and replacing the NaN after the sum"},
    ),
    # Blind answer s04-04 rescales the largest weight from 1/L_k to 1 with no case for one key;
    # the same rescaling of sum p².
    Mutant(
        "attention_focus: sum p² rescaled from 1/L_k to 1, no case for one key",
        A,
        {
            "attention_focus": Body(
                "attention_focus",
                """
                num_keys = weights.shape[-1]
                same_key = weights.pow(2).sum(dim=-1)  # 1 / L_k uniform, 1 on one key
                return (num_keys * same_key - 1) / (num_keys - 1)
                """,
            )
        },
        {"test_attention_focus": "the score is (x - 1/L_k) / (1 - 1/L_k), right for two keys"},
    ),
]

CORRECT = [
    Mutant(
        "DepthStack keeps the last call's maps on the module, a new list at each call",
        A,
        {
            "depth_stack": Replace(
                "maps = []", "self.attention_maps = maps = []  # the last call's maps, for plots"
            )
        },
    ),
    Mutant(
        "attention_focus: the largest weight, rescaled from 1 / L_k to 1",
        A,
        {
            "attention_focus": Replace(
                FOCUS_RETURN,
                "# how far the top weight has moved from uniform (1 / L_k) towards 1\n"
                "    return (weights.amax(dim=-1) - 1 / num_keys) / (1 - 1 / num_keys)",
            )
        },
    ),
    Mutant(
        "attention_focus: the chance that two draws pick the same key, rescaled; 0 for one key",
        A,
        {
            "attention_focus": Body(
                "attention_focus",
                """
                num_keys = weights.shape[-1]
                same_key = weights.pow(2).sum(dim=-1)  # 1 / L_k uniform, 1 on one key
                if num_keys == 1:
                    return torch.zeros_like(same_key)
                return (num_keys * same_key - 1) / (num_keys - 1)
                """,
            )
        },
    ),
    Mutant(
        "attention_focus: the largest weight minus the smallest",
        A,
        {
            "attention_focus": Body(
                "attention_focus", "return weights.amax(dim=-1) - weights.amin(dim=-1)"
            )
        },
    ),
    Mutant(
        "layers appended one by one, indexed loop; entropy with clamp_min, TV with where",
        A,
        {
            "depth_stack": (
                Replace(
                    LAYERS,
                    "nn.ModuleList()\n"
                    "        for _ in range(num_layers):\n"
                    "            self.layers.append(EncoderBlock(d_model, num_heads, d_ff, dropout))",
                ),
                Body(
                    "forward",
                    """
                    hidden, maps = x, [None] * len(self.layers)
                    for i in range(len(self.layers)):
                        hidden, weights = self.layers[i](hidden, mask)
                        maps[i] = weights
                    return hidden, maps
                    """,
                ),
            ),
            "attention_metrics": (
                Replace(ENTROPY, "-(weights * weights.clamp_min(1e-30).log()).sum(-1)"),
                Replace(TOTAL_VARIATION, "torch.where(p > q, p - q, q - p).sum(-1) / 2"),
            ),
        },
    ),
    Mutant(
        "recursive forward, maps stacked then unbound; Categorical entropy, TV as a positive part",
        A,
        {
            "depth_stack": Body(
                "forward",
                """
                def run(h, layers):
                    if not layers:
                        return h, []
                    h, weights = layers[0](h, mask)
                    h, rest = run(h, layers[1:])
                    return h, [weights, *rest]

                out, maps = run(x, list(self.layers))
                return out, list(torch.stack(maps).unbind(0))
                """,
            ),
            "attention_metrics": (
                Replace(ENTROPY, "torch.distributions.Categorical(probs=weights).entropy()"),
                Replace(
                    TOTAL_VARIATION,
                    "(p - q).clamp_min(0).sum(-1)  # = 1/2 sum |p - q| for two distributions",
                ),
            ),
        },
    ),
    Mutant(
        "keyword arguments, an all-True mask for None, maps gathered with +=",
        A,
        {
            "depth_stack": (
                Replace(
                    LAYERS,
                    "nn.ModuleList(\n"
                    "            [EncoderBlock(d_model, num_heads, d_ff, dropout=dropout) "
                    "for _ in range(num_layers)]\n"
                    "        )",
                ),
                Body(
                    "forward",
                    """
                    if mask is None:  # attend everywhere
                        mask = torch.ones(x.shape[1], x.shape[1], dtype=torch.bool, device=x.device)
                    maps = []
                    hidden = x
                    for block in self.layers:
                        hidden, attention = block(hidden, mask=mask)
                        maps += [attention]
                    return hidden, maps
                    """,
                ),
            )
        },
    ),
]
# The families of issue 25 without a mutant above (autograder/checks/a04_depth.py: TV).
WRONG += [
    Mutant(
        "total variation of the signed difference",
        A,
        {"attention_metrics": Replace(TOTAL_VARIATION, "0.5 * (p - q).sum(dim=-1)")},
        {"test_attention_metrics": "take (p - q).abs() before summing"},
    ),
    # Issue 40's fresh corpus (f04-12): over 2 or 3 keys the maximum equals the half sum, so it
    # kept full marks under the secrets whose draw had at most 3 keys (tests/test_hidden_seeds.py).
    Mutant(
        "total variation as the largest |p - q|",
        A,
        {"attention_metrics": Replace(TOTAL_VARIATION, "(p - q).abs().amax(dim=-1)")},
        {"test_attention_metrics": "TV sums |p - q|, not its maximum"},
    ),
    # Its entropy is right to 1e-10, but the caller's zeros become 1e-12: the reference, computed
    # from them after the call, no longer had them.
    Mutant(
        "entropy clamps the weights in place to avoid log(0)",
        A,
        {
            "attention_metrics": Replace(
                ENTROPY, "-(weights.clamp_(min=1e-12) * weights.log()).sum(dim=-1)"
            )
        },
        {
            "test_attention_metrics": (
                "`attention_entropy` changed a tensor it was given, in place: its argument "
                "`weights` changed"
            )
        },
        makes=("inputs.written_in_place",),
    ),
]


# Train mode: judged stage by stage, with recorders in the layers' place
STACK_INIT = "        self.layers = nn.ModuleList("
WITH_DROPOUT = "        self.dropout = nn.Dropout(dropout)\n" + STACK_INIT
WRONG += [
    Mutant(
        "stack: its own dropout between the layers",
        A,
        {
            "depth_stack": (
                Replace(STACK_INIT, WITH_DROPOUT),
                Replace(LAYER_CALL, "x, weights = layer(x, mask)\n            x = self.dropout(x)"),
            )
        },
        {"test_depth_stack_layers": "the stack applies dropout of its own between the layers"},
    ),
    Mutant(
        "stack: its own dropout on the output",
        A,
        {
            "depth_stack": (
                Replace(STACK_INIT, WITH_DROPOUT),
                Replace("return x, maps", "return self.dropout(x), maps"),
            )
        },
        {"test_depth_stack_layers": "the stack applies dropout of its own to its output"},
    ),
    Mutant(
        "stack: F.dropout on the input, left on in eval mode",
        A,
        {
            "depth_stack": (
                Replace(STACK_INIT, "        self.p = dropout\n" + STACK_INIT),
                Replace(
                    "maps = []", "maps = []\n        x = torch.nn.functional.dropout(x, self.p)"
                ),
            )
        },
        {"test_depth_stack_layers": "in eval mode the stack draws random numbers"},
    ),
    Mutant(  # not dropout: a stage only scaled must not be said to have dropout applied
        "stack: its output scaled by 1.5 in train mode",
        A,
        {
            "depth_stack": Replace(
                "return x, maps", "return x * (1.5 if self.training else 1.0), maps"
            )
        },
        {"test_depth_stack_layers": "no value is zeroed: every value is multiplied by 1.500"},
    ),
    Mutant(
        "stack: the layers switched to eval mode in forward",
        A,
        {"depth_stack": Replace(LAYER_CALL, "layer.eval()\n            " + LAYER_CALL)},
        {"test_depth_stack_layers": "a layer runs in another mode than the stack"},
        in_notebook=True,
    ),
]
CORRECT += [
    Mutant(
        "stack: each layer told the stack's mode, by index",
        A,
        {
            "depth_stack": Body(
                "forward",
                """
                maps = []
                for i in range(len(self.layers)):
                    self.layers[i].train(self.training)
                    x, weights = self.layers[i](x, mask)
                    maps.append(weights)
                return x, maps
                """,
            )
        },
    ),
    Mutant(
        "stack: an nn.Dropout(0.0) kept for symmetry, applied between the layers",
        A,
        {
            "depth_stack": (
                Replace(STACK_INIT, "        self.dropout = nn.Dropout(0.0)\n" + STACK_INIT),
                Replace(LAYER_CALL, "x, weights = layer(x, mask)\n            x = self.dropout(x)"),
            )
        },
    ),
]

# Issue 40: wrong answers that no catalogued mistake explains are shown the smallest public input
# on which they differ (autograder/authoring/counterexample.py), and no cause.
WRONG += [
    Mutant(
        "entropy normalised by log(L_k), so that it lies in [0, 1]",
        A,
        {
            "attention_metrics": Body(
                "attention_entropy",
                "return -torch.special.xlogy(weights, weights).sum(dim=-1) "
                "/ math.log(weights.shape[-1])",
            )
        },
        {"test_attention_metrics": "p = [1]; yours gives nan, expected 0"},
        not_told=("use torch.special.xlogy", "use the natural log"),
    ),
    Mutant(
        "total variation computed as the squared Hellinger distance",
        A,
        {
            "attention_metrics": Body(
                "total_variation", "return 0.5 * (p.sqrt() - q.sqrt()).square().sum(dim=-1)"
            )
        },
        {"test_attention_metrics": "a small input on which yours differs (public"},
        not_told=("TV uses the absolute difference, not the squared one",),
    ),
]

WRONG += [
    Mutant(  # issue 40's eleventh blind corpus (x04-02): once shown a counterexample only
        "the maps collected last layer first",
        A,
        {
            "depth_stack": Replace(
                "            maps.append(weights)\n", "            maps.insert(0, weights)\n"
            )
        },
        {"test_depth_stack": "the maps come last layer first"},
    ),
    Mutant(  # issue 40's eleventh blind corpus (x04-05): once shown the shapes only
        "attention_focus squeezes its scores",
        A,
        {
            "attention_focus": Replace(
                "    return 1 + torch.special.xlogy(weights, weights).sum(dim=-1) / math.log(num_keys)\n",
                "    return (1 + torch.special.xlogy(weights, weights).sum(dim=-1) / math.log(num_keys)).squeeze()\n",
            )
        },
        {"test_attention_focus": "an axis of size 1 disappeared"},
    ),
]
