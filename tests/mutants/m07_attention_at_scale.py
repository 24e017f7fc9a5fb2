"""Mutants of 07_attention_at_scale."""

from tests.mutants import Body, Mutant, Replace

A = "07_attention_at_scale"

SCALE_Q = "    q = q * (1.0 / math.sqrt(q.shape[-1]))  # scale once: L_q·d_k multiplications\n"
# The solution's chunked_attention after its argument checks: the mutants below that compute the
# attention another way replace all of it and keep the checks.
LOOP = (
    SCALE_Q
    + """\
    running_max = q.new_full((*q.shape[:-1], 1), -math.inf)  # (..., L_q, 1)
    running_sum = q.new_zeros((*q.shape[:-1], 1))  # (..., L_q, 1)
    acc = q.new_zeros((*q.shape[:-1], v.shape[-1]))  # (..., L_q, d_v)
    query_pos = torch.arange(len_q, device=q.device).unsqueeze(-1)  # (L_q, 1)
    for start in range(0, len_k, chunk_size):
        k_block = k[..., start : start + chunk_size, :]  # (..., C, d_k)
        v_block = v[..., start : start + chunk_size, :]  # (..., C, d_v)
        scores = q @ k_block.transpose(-2, -1)  # (..., L_q, C)
        if causal:
            # (C,): the positions of this block's keys
            key_pos = torch.arange(start, start + k_block.shape[-2], device=q.device)
            scores = scores.masked_fill(key_pos > query_pos, -math.inf)  # (L_q, C) mask
        new_max = torch.maximum(running_max, scores.amax(dim=-1, keepdim=True))
        factor = torch.exp(running_max - new_max)  # rescales everything summed so far
        p = torch.exp(scores - new_max)  # (..., L_q, C) un-normalised weights
        running_sum = running_sum * factor + p.sum(dim=-1, keepdim=True)
        acc = acc * factor + p @ v_block
        running_max = new_max
    return acc / running_sum
"""
)
KEY_POS = "torch.arange(start, start + k_block.shape[-2], device=q.device)"


def loop(new: str) -> Replace:
    """chunked_attention computed by ``new`` (indented by 4) after the solution's checks."""
    return Replace(LOOP, new.lstrip("\n"))


WRONG = [
    Mutant(  # issue 40's tenth blind corpus (u07-02): once told of the float's TypeError only
        "chunked: chunk_size checked only for being below 1",
        A,
        {
            "chunked_attention": Replace(
                "        not isinstance(chunk_size, int)\n"
                "        or isinstance(chunk_size, bool)\n"
                "        or chunk_size < 1\n",
                "        chunk_size < 1\n",
            )
        },
        {"test_chunked_attention_exact": "your function took it as the int 1"},
    ),
    Mutant(
        "online update: old sum not rescaled",
        A,
        {"online_softmax_update": Replace("running_sum * factor + ", "running_sum + ")},
        {"test_online_softmax_update": "old running sum is not rescaled"},
    ),
    Mutant(
        "online update: no max subtraction",
        A,
        {
            "online_softmax_update": Body(
                "online_softmax_update",
                """
                new_max = torch.maximum(running_max, scores.amax(dim=-1))
                total = running_sum * torch.exp(running_max) + torch.exp(scores).sum(dim=-1)
                return new_max, total / torch.exp(new_max)
                """,
            )
        },
        {"test_online_softmax_update": "exp overflows"},
    ),
    Mutant(  # right on every batch of rows, wrong on a single row: flatten(0, -2) needs two dims
        "online update: leading dims flattened, none allowed",
        A,
        {
            "online_softmax_update": Body(
                "online_softmax_update",
                """
                rows = scores.flatten(0, -2)  # (N, C): one row per running value
                old_max, old_sum = running_max.reshape(-1), running_sum.reshape(-1)
                new_max = torch.maximum(old_max, rows.amax(dim=-1))
                factor = torch.exp(old_max - new_max)
                new_sum = old_sum * factor + torch.exp(rows - new_max.unsqueeze(-1)).sum(dim=-1)
                return new_max.reshape(running_max.shape), new_sum.reshape(running_max.shape)
                """,
            )
        },
        {"test_online_softmax_update": "no leading dims"},
    ),
    Mutant(
        "accumulator not rescaled",
        A,
        {
            "chunked_attention": Replace(
                "acc = acc * factor + p @ v_block", "acc = acc + p @ v_block"
            )
        },
        {"test_chunked_attention_exact": "accumulator is not rescaled"},
    ),
    Mutant(
        "last partial block dropped",
        A,
        {
            "chunked_attention": Replace(
                "range(0, len_k, chunk_size)", "range(0, len_k - chunk_size + 1, chunk_size)"
            )
        },
        {"test_chunked_attention_exact": "last, shorter key block is dropped"},
        charged_once=True,  # the causal cell is waived as the same mistake (chunk sizes repaired)
    ),
    Mutant(  # issue 40's tenth blind corpus (v07-02): once charged in the causal cell again
        "only the L_k // chunk_size full blocks",
        A,
        {
            "chunked_attention": Replace(
                "range(0, len_k, chunk_size)",
                "range(0, len_k // chunk_size * chunk_size, chunk_size)",
            )
        },
        {"test_chunked_attention_exact": "last, shorter key block is dropped"},
        charged_once=True,
        in_notebook=True,  # its repair held to the grading command (judge parity)
    ),
    Mutant(
        "scores not scaled",
        A,
        {"chunked_attention": Replace(SCALE_Q, "")},
        {"test_chunked_attention_exact": "not scaled by 1/√d_k"},
        charged_once=True,  # the causal cell is waived as the same mistake (a scale repair)
        in_notebook=True,  # its repair held to the grading command (judge parity)
    ),
    Mutant(
        "running max never updated",
        A,
        {"chunked_attention": Replace("        running_max = new_max\n", "")},
        {"test_chunked_attention_exact": "running max is never updated"},
    ),
    Mutant(
        "no max subtraction (overflow)",
        A,
        {
            "chunked_attention": loop("""
    q = q / math.sqrt(q.shape[-1])
    total = q.new_zeros((*q.shape[:-1], 1))
    acc = q.new_zeros((*q.shape[:-1], v.shape[-1]))
    rows = torch.arange(len_q).unsqueeze(-1)
    for start in range(0, len_k, chunk_size):
        scores = q @ k[..., start : start + chunk_size, :].transpose(-2, -1)
        if causal:
            cols = torch.arange(start, start + scores.shape[-1])
            scores = scores.masked_fill(cols > rows, -math.inf)
        p = torch.exp(scores)
        total = total + p.sum(-1, keepdim=True)
        acc = acc + p @ v[..., start : start + chunk_size, :]
    return acc / total
""")
        },
        {"test_chunked_attention_exact": "exp of an unshifted score"},
        # Its torch.arange (or full, ones, zeros) has no device=: it makes that mistake too.
        makes=("chunked_attention.made_on_the_default_device",),
    ),
    Mutant(
        "full (L, L) score matrix materialised",
        A,
        {
            "chunked_attention": loop("""
    all_scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])  # (L_q, L_k): the mistake
    if causal:
        all_scores = all_scores.masked_fill(~causal_mask(len_q), -math.inf)
    running_max = all_scores.amax(-1, keepdim=True)
    running_sum = q.new_zeros((*q.shape[:-1], 1))
    acc = q.new_zeros((*q.shape[:-1], v.shape[-1]))
    for start in range(0, len_k, chunk_size):
        p = torch.exp(all_scores[..., start : start + chunk_size] - running_max)
        running_sum = running_sum + p.sum(-1, keepdim=True)
        acc = acc + p @ v[..., start : start + chunk_size, :]
    return acc / running_sum
""")
        },
        {"test_chunked_attention_memory": "builds a full (L, L) matrix"},
        # Its torch.arange (or full, ones, zeros) has no device=: it makes that mistake too.
        makes=("chunked_attention.made_on_the_default_device",),
    ),
    Mutant(
        "causal mask built for all L keys",
        A,
        {
            "chunked_attention": (
                Replace(
                    f"key_pos = {KEY_POS}",
                    "hidden = ~causal_mask(len_q)[:, start : start + chunk_size]",
                ),
                Replace(
                    "masked_fill(key_pos > query_pos, -math.inf)", "masked_fill(hidden, -math.inf)"
                ),
            )
        },
        {
            "test_chunked_attention_memory": "with causal=True, and only then, memory grows quadratically"
        },
        # Its torch.arange (or full, ones, zeros) has no device=: it makes that mistake too.
        makes=("chunked_attention.made_on_the_default_device",),
    ),
    Mutant(
        "causal mask without the block offset",
        A,
        {"chunked_attention": Replace(KEY_POS, "torch.arange(k_block.shape[-2], device=q.device)")},
        {"test_chunked_attention_causal": "ignores the block's offset"},
    ),
    Mutant(
        "calls F.scaled_dot_product_attention",
        A,
        {
            "chunked_attention": loop(
                "    return F.scaled_dot_product_attention(q, k, v, is_causal=causal)\n"
            )
        },
        {  # every cell that uses `chunked_attention` carries its ban
            grade_id: "calls F.scaled_dot_product_attention"
            for grade_id in (
                "test_chunked_attention_exact",
                "test_chunked_attention_causal",
                "test_chunked_attention_memory",
            )
        },
    ),
    Mutant(
        "no ValueError for a float chunk size",
        A,
        {
            "chunked_attention": Replace(
                "    if (\n"
                "        not isinstance(chunk_size, int)\n"
                "        or isinstance(chunk_size, bool)\n"
                "        or chunk_size < 1\n"
                "    ):",
                "    chunk_size = int(chunk_size)\n    if chunk_size < 1:",
            )
        },
        {"test_chunked_attention_exact": "your function took it as the int 2"},
    ),
    Mutant(  # issue 40's blind answers q07-02, r07-02 and s07-02
        "True accepted as a chunk size, bool being a subclass of int",
        A,
        {"chunked_attention": Replace("        or isinstance(chunk_size, bool)\n", "")},
        {"test_chunked_attention_exact": "took it as the int 1 (its output equals the one for"},
    ),
    Mutant(
        "online update: running max replaced by the block's max",
        A,
        {
            "online_softmax_update": Replace(
                "new_max = torch.maximum(running_max, scores.amax(dim=-1))",
                "new_max = scores.amax(dim=-1)",
            )
        },
        {"test_online_softmax_update": "running max is replaced by the block's max"},
    ),
    Mutant(
        "accumulator not divided by the running sum",
        A,
        {"chunked_attention": Replace("return acc / running_sum", "return acc")},
        {
            "test_chunked_attention_exact": "output is not normalised",
            "test_chunked_attention_causal": "output is not normalised",
        },
    ),
    Mutant(
        "causal mask hides the diagonal",
        A,
        {"chunked_attention": Replace("key_pos > query_pos", "key_pos >= query_pos")},
        {"test_chunked_attention_causal": "causal mask hides the diagonal"},
    ),
]

CORRECT = [
    Mutant(
        "logsumexp merge of normalised block outputs",
        A,
        {
            "chunked_attention": loop("""
    q = q / q.shape[-1] ** 0.5
    out = q.new_zeros((*q.shape[:-1], v.shape[-1]))
    lse = q.new_full((*q.shape[:-1], 1), -math.inf)  # log of the running denominator
    rows = torch.arange(len_q, device=q.device)[:, None]
    for start in range(0, len_k, chunk_size):
        stop = min(start + chunk_size, len_k)
        s = torch.einsum("...qd,...kd->...qk", q, k[..., start:stop, :])
        if causal:
            s = s.masked_fill(torch.arange(start, stop, device=q.device) > rows, -math.inf)
        block_lse = torch.logsumexp(s, dim=-1, keepdim=True)
        new_lse = torch.logaddexp(lse, block_lse)
        # A fully hidden block has block_lse = -inf and weight exp(-inf) = 0.
        block_out = torch.nan_to_num(torch.softmax(s, dim=-1)) @ v[..., start:stop, :]
        out = out * torch.exp(lse - new_lse) + block_out * torch.exp(block_lse - new_lse)
        lse = new_lse
    return out
""")
        },
    ),
    Mutant(
        "uses the student's online_softmax_update",
        A,
        {
            "chunked_attention": loop("""
    q = q * q.shape[-1] ** -0.5
    m = q.new_full(q.shape[:-1], -math.inf)
    s = q.new_zeros(q.shape[:-1])
    acc = q.new_zeros((*q.shape[:-1], v.shape[-1]))
    for start in range(0, len_k, chunk_size):
        scores = q @ k[..., start : start + chunk_size, :].mT
        if causal:
            cols = torch.arange(start, start + scores.shape[-1], device=q.device)
            rows = torch.arange(len_q, device=q.device)
            scores = torch.where(cols[None, :] <= rows[:, None], scores, -math.inf)
        new_m, s = online_softmax_update(m, s, scores)
        acc = acc * torch.exp(m - new_m)[..., None]
        acc = acc + torch.exp(scores - new_m[..., None]) @ v[..., start : start + chunk_size, :]
        m = new_m
    return acc / s[..., None]
""")
        },
    ),
    Mutant(
        "float64 accumulation, logaddexp online update",
        A,
        {
            "online_softmax_update": Body(
                "online_softmax_update",
                """
                new_max = torch.maximum(running_max, scores.amax(dim=-1))
                log_total = torch.logaddexp(
                    torch.log(running_sum) + running_max, torch.logsumexp(scores, dim=-1)
                )
                return new_max, torch.exp(log_total - new_max)
                """,
            ),
            "chunked_attention": (
                Replace(
                    SCALE_Q,
                    "    dtype = q.dtype\n"
                    "    q, k, v = q.double() / math.sqrt(q.shape[-1]), k.double(), v.double()\n",
                ),
                Replace("return acc / running_sum", "return (acc / running_sum).to(dtype)"),
            ),
        },
    ),
]
# Issue 40: the statement starts the running max at -inf. One that starts at 0 is exact for every
# row with a score above about -700, so only a row of very negative scores shows it (0/0).
WRONG += [
    Mutant(
        "chunked running max starts at 0 instead of -inf",
        A,
        {
            "chunked_attention": Replace(
                "running_max = q.new_full((*q.shape[:-1], 1), -math.inf)",
                "running_max = q.new_zeros((*q.shape[:-1], 1))",
            )
        },
        {"test_chunked_attention_exact": "the running max starts at 0 instead of -inf"},
    ),
]
# Issue 40, mistakes by operation: 07 shares 01's scale detector. √d_v is the scale mistake it is
# (d_v != d_k on every input that judges it), and was once told of a causal mask it has right.
WRONG += [
    Mutant(
        "chunked attention scaled by sqrt(d_v)",
        A,
        {"chunked_attention": Replace(SCALE_Q, SCALE_Q.replace("q.shape[-1]", "v.shape[-1]"))},
        {"test_chunked_attention_exact": "scaled by 1/√d_v (v.shape[-1]) instead of 1/√d_k"},
        not_told=("query position", "block's offset", "causal mask"),
        charged_once=True,  # the causal cell is waived as the same mistake (a scale repair)
    ),
    # The other two scale slips, each graded through the grading command, where its repair must
    # confirm the cause as in-process grading does (judge parity).
    Mutant(
        "chunked attention scaled by 1/d_k",
        A,
        {
            "chunked_attention": Replace(
                SCALE_Q, SCALE_Q.replace("math.sqrt(q.shape[-1])", "q.shape[-1]")
            )
        },
        {"test_chunked_attention_exact": "scores are scaled by 1/d_k instead of 1/√d_k"},
        charged_once=True,
        in_notebook=True,
    ),
    Mutant(
        "chunked attention multiplied by sqrt(d_k)",
        A,
        {
            "chunked_attention": Replace(
                SCALE_Q, SCALE_Q.replace("(1.0 / math.sqrt(q.shape[-1]))", "math.sqrt(q.shape[-1])")
            )
        },
        {"test_chunked_attention_exact": "scores are multiplied by √d_k instead of divided by it"},
        charged_once=True,
        in_notebook=True,
    ),
    Mutant(  # in no catalogue: no cause can be confirmed, so a small public input is shown
        "output divided by the running sum plus 0.1",
        A,
        {
            "chunked_attention": Replace(
                "return acc / running_sum", "return acc / (running_sum + 0.1)"
            )
        },
        {
            "test_chunked_attention_exact": "a small input on which yours differs",
            "test_chunked_attention_causal": "a small input on which yours differs",
        },
        not_told=("rescaled", "multiply", "instead of", "running max", "not normalised", "scaled"),
    ),
    # Issue 40's fresh corpus (answers written without the checks), each kept full marks before.
    Mutant(
        "online update written into the caller's tensors (mul_, copy_)",
        A,
        {
            "online_softmax_update": Replace(
                "    new_sum = (\n"
                "        running_sum * factor + torch.exp(scores - new_max.unsqueeze(-1)).sum(dim=-1)\n"
                "    )\n"
                "    return new_max, new_sum",
                "    running_sum.mul_(factor).add_(torch.exp(scores - new_max.unsqueeze(-1)).sum(-1))\n"
                "    running_max.copy_(new_max)\n"
                "    return running_max, running_sum",
            )
        },
        {
            "test_online_softmax_update": (
                "`online_softmax_update` changed a tensor it was given, in place: its arguments "
                "`running_max` and `running_sum` changed"
            )
        },
        makes=("inputs.written_in_place",),
        in_notebook=True,  # through the judge: the kernel's writes must reach the check
    ),
    Mutant(
        "accumulators made in the default dtype, not q's",
        A,
        {
            "chunked_attention": Replace(
                "    running_max = q.new_full((*q.shape[:-1], 1), -math.inf)  # (..., L_q, 1)\n"
                "    running_sum = q.new_zeros((*q.shape[:-1], 1))  # (..., L_q, 1)\n"
                "    acc = q.new_zeros((*q.shape[:-1], v.shape[-1]))  # (..., L_q, d_v)\n",
                "    running_max = torch.full((*q.shape[:-1], 1), -math.inf)\n"
                "    running_sum = torch.zeros((*q.shape[:-1], 1))\n"
                "    acc = torch.zeros((*q.shape[:-1], v.shape[-1]))\n",
            )
        },
        {"test_chunked_attention_exact": "on torch.bfloat16 q, k and v of shape (2, 9, 8)"},
        makes=(
            "chunked_attention.computed_in_float32",
            "chunked_attention.made_on_the_default_device",
        ),
    ),
]

WRONG += [
    Mutant(  # issue 40's eleventh blind corpus (x07-05): told of a tensor made without dtype=
        "q, k and v cast up to float32 on purpose, the output never cast back",
        A,
        {
            "chunked_attention": Replace(
                "    q = q * (1.0 / math.sqrt(q.shape[-1]))",
                "    q, k, v = (x.to(torch.promote_types(x.dtype, torch.float32)) for x in (q, k, v))\n"
                "    q = q * (1.0 / math.sqrt(q.shape[-1]))",
            )
        },
        {"test_chunked_attention_exact": "and returns the float32 result"},
        not_told=("made without dtype=) meets", "a float32 tensor meets"),
    ),
]


# merge_partials: what a partial result holds is the student's design (issue 42). Each wrong one
# breaks a property the statement lists; each correct one is another design.
def split_k(partial: str, merge: str, finish: str) -> tuple[Body, Body, Body]:
    """The three functions of the merge_partials cell, each with a new body."""
    return (
        Body("partial_attention", partial),
        Body("merge_partials", merge),
        Body("finish_attention", finish),
    )


LSE_PARTIAL = """
    # My design: (log-sum-exp of the part's scores, the part's normalised output).
    s = q @ k.mT * q.shape[-1] ** -0.5
    lse = torch.logsumexp(s, dim=-1, keepdim=True)
    return lse, torch.softmax(s, dim=-1) @ v
"""
LSE_MERGE = """
    (lse_a, out_a), (lse_b, out_b) = a, b
    lse = torch.logaddexp(lse_a, lse_b)
    return lse, out_a * torch.exp(lse_a - lse) + out_b * torch.exp(lse_b - lse)
"""
LSE_FINISH = """
    return p[1]
"""
WRONG += [
    Mutant(  # exact for moderate scores; exp(±10^4) overflows in float64
        "merge_partials: sums of exp of the raw scores, no maximum subtracted",
        A,
        {
            "merge_partials": split_k(
                """
                # My design: (sum exp(s), sum exp(s) v): both add up over the parts.
                p = torch.exp(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]))
                return p.sum(dim=-1, keepdim=True), p @ v
                """,
                """
                return a[0] + b[0], a[1] + b[1]
                """,
                """
                return p[1] / p[0]
                """,
            )
        },
        {"test_merge_partials": "the partial result overflows"},
    ),
    Mutant(  # exact for one part; associative and commutative, but not attention
        "merge_partials: normalised outputs averaged, weighted by their numbers of keys",
        A,
        {
            "merge_partials": split_k(
                """
                # My design: (number of keys, the part's normalised output).
                s = q @ k.mT / math.sqrt(q.shape[-1])
                return torch.tensor(float(k.shape[-2])), torch.softmax(s, dim=-1) @ v
                """,
                """
                (n_a, out_a), (n_b, out_b) = a, b
                return n_a + n_b, (n_a * out_a + n_b * out_b) / (n_a + n_b)
                """,
                LSE_FINISH,
            )
        },
        {"test_merge_partials": "weighted by their numbers of keys"},
    ),
    Mutant(  # every property but the size: the partial result grows with the keys
        "merge_partials: the partial result keeps the keys and values, finish attends",
        A,
        {
            "merge_partials": split_k(
                """
                # My design: the part itself; merging concatenates, finish attends.
                return q, k, v
                """,
                """
                return a[0], torch.cat([a[1], b[1]], dim=-2), torch.cat([a[2], b[2]], dim=-2)
                """,
                """
                q, k, v = p
                return torch.softmax(q @ k.mT / math.sqrt(q.shape[-1]), dim=-1) @ v
                """,
            )
        },
        {"test_merge_partials": "numbers for a part of 1 key"},
        in_notebook=True,  # through the judge: the tuple crosses as data and its numbers count
    ),
    Mutant(
        "merge_partials: computed in float64, float32 inputs give a float64 output",
        A,
        {
            "merge_partials": Replace(
                "    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])  # (..., L_q, L_k)\n",
                "    q, k, v = q.double(), k.double(), v.double()\n"
                "    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])\n",
            )
        },
        {
            "test_merge_partials": "the partial results are computed in float64 and "
            "finish_attention returns the output without casting back to q's dtype"
        },
    ),
    Mutant(  # right for two parts (finish ignores it), wrong from the third on
        "merge_partials: the merged log-sum-exp is b's, not that of both parts",
        A,
        {
            "merge_partials": split_k(
                LSE_PARTIAL,
                LSE_MERGE.replace("return lse,", "return lse_b,"),
                LSE_FINISH,
            )
        },
        {"test_merge_partials": "merged in a loop: the output differs"},
    ),
    Mutant(  # exact unless b's maximum is far above a's: exp(m_b - m_a) overflows
        "merge_partials: both parts moved to a's maximum, not to the larger one",
        A,
        {
            "merge_partials": Replace(
                "    m = torch.maximum(m_a, m_b)\n",
                "    m = m_a\n",
            )
        },
        {"test_merge_partials": "with the second argument's scores about 10^4 above the first's"},
        makes=("merge_partials.one_part_max",),
    ),
    Mutant(  # the mirror: exact unless a's maximum is far above b's: exp(m_a - m_b) overflows
        "merge_partials: both parts moved to b's maximum, not to the larger one",
        A,
        {
            "merge_partials": Replace(
                "    m = torch.maximum(m_a, m_b)\n",
                "    m = m_b\n",
            )
        },
        {"test_merge_partials": "with the first argument's scores about 10^4 above the second's"},
        makes=("merge_partials.one_part_max",),
    ),
    Mutant(  # log-sum-exp measured against a's: log1p(exp(lse_b - lse_a)) is inf when b is far above
        "merge_partials: log-sum-exps merged as lse_a + log1p(exp(lse_b - lse_a))",
        A,
        {
            "merge_partials": split_k(
                LSE_PARTIAL,
                LSE_MERGE.replace(
                    "lse = torch.logaddexp(lse_a, lse_b)",
                    "lse = lse_a + torch.log1p(torch.exp(lse_b - lse_a))",
                ),
                LSE_FINISH,
            )
        },
        {"test_merge_partials": "with the second argument's scores about 10^4 above the first's"},
        makes=("merge_partials.one_part_max",),
    ),
]
CORRECT += [
    Mutant(
        "merge_partials: log-sum-exp and the normalised output, merged with logaddexp",
        A,
        {
            "merge_partials": split_k(
                LSE_PARTIAL,
                LSE_MERGE,
                LSE_FINISH,
            )
        },
    ),
    Mutant(
        "merge_partials: a dict of the float64 log-sum-exp and torch's fused attention output",
        A,
        {
            "merge_partials": split_k(
                """
                # My design: {"lse": log sum exp(s) in float64 (..., L_q), "out": the part's
                # attention output in q's dtype}; the merge weighs the outputs in float64.
                q64, k64 = q.double(), k.double()
                lse = torch.logsumexp(q64 @ k64.mT / math.sqrt(q.shape[-1]), dim=-1)
                return {"lse": lse, "out": F.scaled_dot_product_attention(q, k, v)}
                """,
                """
                lse = torch.logaddexp(a["lse"], b["lse"])
                weight_a = torch.exp(a["lse"] - lse).unsqueeze(-1)
                weight_b = torch.exp(b["lse"] - lse).unsqueeze(-1)
                out = weight_a * a["out"].double() + weight_b * b["out"].double()
                return {"lse": lse, "out": out.to(a["out"].dtype)}
                """,
                """
                return p["out"]
                """,
            )
        },
    ),
    Mutant(
        "merge_partials: a list of the maximum, the denominator and the normalised output",
        A,
        {
            "merge_partials": split_k(
                """
                # My design: [m, l, out]: the largest score, l = sum exp(s - m) and the
                # normalised output out = sum exp(s - m) v / l, each per query.
                s = q @ k.mT / math.sqrt(q.shape[-1])
                m = s.amax(dim=-1, keepdim=True)
                w = torch.exp(s - m)
                l = w.sum(dim=-1, keepdim=True)
                return [m, l, (w / l) @ v]
                """,
                """
                m = torch.maximum(a[0], b[0])
                l_a, l_b = a[1] * torch.exp(a[0] - m), b[1] * torch.exp(b[0] - m)
                return [m, l_a + l_b, (l_a * a[2] + l_b * b[2]) / (l_a + l_b)]
                """,
                """
                return p[2]
                """,
            )
        },
    ),
]
# Issue 40's seventh blind corpus (n07-01): the new maximum subtracted without its trailing axis
# is named where the statement's update so written raises the answer's error or gives its sum.
WRONG += [
    Mutant(
        "online_softmax_update: the new maximum's new axis put in front, unsqueeze(0)",
        A,
        {"online_softmax_update": Replace("new_max.unsqueeze(-1)", "new_max.unsqueeze(0)")},
        {"test_online_softmax_update": "is subtracted from the scores (..., C) without a trailing"},
    ),
]
CORRECT += [
    Mutant(
        "online_softmax_update: the new maximum's trailing axis by indexing, new_max[..., None]",
        A,
        {"online_softmax_update": Replace("new_max.unsqueeze(-1)", "new_max[..., None]")},
    ),
]
# Issue 40's ninth blind corpus (t07-05 computed its partial results in float64 and returned
# them so): the same family in chunked_attention, whose float32 and half-precision inputs then
# give a float64 output.
WRONG += [
    Mutant(
        "chunked_attention computes in float64 and returns the output without casting back",
        A,
        {
            "chunked_attention": Replace(
                "    q = q * (1.0 / math.sqrt(q.shape[-1]))",
                "    q, k, v = q.double(), k.double(), v.double()  # float64 inside\n"
                "    q = q * (1.0 / math.sqrt(q.shape[-1]))",
            )
        },
        {
            "test_chunked_attention_exact": "chunked_attention computes in float64 and returns "
            "the output without casting back to q's dtype"
        },
    ),
]

# Devices: a tensor made without device= sits on the CPU; with q on a GPU the call mixes devices.
# Grading has no GPU, so the call is followed where it runs (kernel.py, default_device).
WRONG += [
    Mutant(  # issue 40's eleventh blind corpus (x07-03): not caught there, grading on the CPU
        "chunked_attention: the causal positions made without device=",
        A,
        {
            "chunked_attention": Replace(
                "torch.arange(start, start + k_block.shape[-2], device=q.device)",
                "torch.arange(start, start + k_block.shape[-2])",
            )
        },
        {"test_chunked_attention_causal": "a tensor made without device= sits on torch's"},
        in_notebook=True,
    ),
    Mutant(
        "chunked_attention: the accumulator made with torch.zeros, without device=",
        A,
        {
            "chunked_attention": Replace(
                "acc = q.new_zeros((*q.shape[:-1], v.shape[-1]))",
                "acc = torch.zeros((*q.shape[:-1], v.shape[-1]), dtype=q.dtype)",
            )
        },
        {"test_chunked_attention_exact": "a tensor made without device= sits on torch's"},
        # Charged once: the causal cell is charged only for what its own branch adds.
        charged_once=True,
    ),
]
