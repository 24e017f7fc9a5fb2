"""Mutants of 04_depth."""

from tests.mutants import Body, Mutant, Replace

A = "04_depth"

BLOCK = "EncoderBlock(d_model, num_heads=1, d_ff=d_ff, dropout=dropout)"
LAYERS = f"nn.ModuleList(\n            {BLOCK} for _ in range(num_layers)\n        )"
ENTROPY = "-torch.special.xlogy(weights, weights).sum(dim=-1)"
TOTAL_VARIATION = "0.5 * (p - q).abs().sum(dim=-1)"
KEEP_MAP = "maps.append(weights[:, 0])"

WRONG = [
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
                "for layer in self.layers:\n            x, weights = layer(x)",
                "for _ in range(len(self.layers)):\n            x, weights = self.layers[0](x)",
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
                Replace(KEEP_MAP, "maps = [weights[:, 0]]"),
            ),
            "attention_metrics": Replace(
                ENTROPY, "-(weights * torch.log(weights + 1e-3)).sum(dim=-1)"
            ),
        },
        {
            "test_depth_stack": "only the last layer's attention map is returned",
            "test_depth_stack_layers": "only the last layer's attention map is returned",
            "test_attention_metrics": "adding a constant inside the log",
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
                    x, weights = layer(x)
                return x, [weights[:, 0]] * len(self.layers)
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
                Replace("x, weights = layer(x)", "out, weights = layer(x)"),
                Replace("return x, maps", "return out, maps"),
            )
        },
        {
            "test_depth_stack": "the layers are not chained",
            "test_depth_stack_layers": "the layers are not chained",
        },
    ),
    Mutant(
        "head axis kept; total variation summed over every dimension",
        A,
        {
            "depth_stack": Replace(KEEP_MAP, "maps.append(weights)"),
            "attention_metrics": Replace(TOTAL_VARIATION, "0.5 * (p - q).abs().sum()"),
        },
        {
            "test_depth_stack": "drop the head axis with weights[:, 0]",
            "test_attention_metrics": "reduce over the LAST dimension only",
        },
    ),
    Mutant(
        "dropout not passed on",
        A,
        {"depth_stack": Replace("dropout=dropout)", "dropout=0.1)")},
        {"test_depth_stack_layers": "pass dropout=dropout to every EncoderBlock"},
    ),
    Mutant(
        "uses attention_lab's TransformerEncoder",
        A,
        {
            "depth_stack": (
                Replace(
                    "class DepthStack",
                    "from attention_lab.encoder import TransformerEncoder\n\n\nclass DepthStack",
                ),
                Replace(LAYERS, "TransformerEncoder(num_layers, d_model, 1, d_ff, dropout).layers"),
            )
        },
        {"test_depth_stack": "calls attention_lab's TransformerEncoder instead of implementing it"},
    ),
]

CORRECT = [
    Mutant(
        "layers appended one by one, indexed loop, squeeze(1); entropy with clamp_min, TV with where",
        A,
        {
            "depth_stack": (
                Replace(
                    LAYERS,
                    "nn.ModuleList()\n"
                    "        for _ in range(num_layers):\n"
                    "            self.layers.append(EncoderBlock(d_model, 1, d_ff, dropout))",
                ),
                Body(
                    "forward",
                    """
                    hidden, maps = x, [None] * len(self.layers)
                    for i in range(len(self.layers)):
                        hidden, weights = self.layers[i](hidden)
                        maps[i] = weights.squeeze(1)
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
                    h, weights = layers[0](h)
                    h, rest = run(h, layers[1:])
                    return h, [weights[:, 0], *rest]

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
]
