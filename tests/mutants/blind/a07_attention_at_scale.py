"""Issue 40's blind corpus for 07_attention_at_scale (see tests/mutants/blind/__init__.py)."""

from tests.mutants import Mutant, Rewrite

A = "07_attention_at_scale"

WRONG = [
    Mutant(
        "f07-03: online update: exp of the raw scores, divided by exp(new_max)",
        A,
        {
            "online_softmax_update": Rewrite(
                r'''
                def online_softmax_update(
                    running_max: Tensor, running_sum: Tensor, scores: Tensor
                ) -> tuple[Tensor, Tensor]:
                    """Fold scores (..., C) into running_max (...) and running_sum = sum exp(s - max)."""
                    new_max = torch.maximum(running_max, scores.amax(dim=-1))
                    factor = torch.exp(running_max - new_max)
                    new_sum = running_sum * factor + torch.exp(scores).sum(-1) / torch.exp(new_max)
                    return new_max, new_sum
                '''
            )
        },
        {
            "test_online_softmax_update": "exp overflows",
        },
    ),
    Mutant(
        "f07-04: online update: rescaling factor inverted",
        A,
        {
            "online_softmax_update": Rewrite(
                r'''
                def online_softmax_update(
                    running_max: Tensor, running_sum: Tensor, scores: Tensor
                ) -> tuple[Tensor, Tensor]:
                    """Fold scores (..., C) into running_max (...) and running_sum = sum exp(s - max)."""
                    new_max = torch.maximum(running_max, scores.amax(dim=-1))
                    factor = torch.exp(new_max - running_max).nan_to_num(posinf=0.0)
                    new_sum = running_sum * factor + torch.exp(scores - new_max.unsqueeze(-1)).sum(-1)
                    return new_max, new_sum
                '''
            )
        },
        {
            "test_online_softmax_update": "the rescaling factor is inverted",
        },
    ),
    Mutant(
        "f07-05: chunked: no 1/sqrt(d_k)",
        A,
        {
            "chunked_attention": Rewrite(
                r'''
                import numbers


                def chunked_attention(
                    q: Tensor, k: Tensor, v: Tensor, chunk_size: int, causal: bool = False
                ) -> Tensor:
                    """Attention over key blocks."""
                    if (
                        isinstance(chunk_size, bool)
                        or not isinstance(chunk_size, numbers.Integral)
                        or chunk_size < 1
                    ):
                        raise ValueError(f"chunk_size must be a positive int, got {chunk_size!r}")
                    L_q, L_k = q.shape[-2], k.shape[-2]
                    if causal and L_q != L_k:
                        raise ValueError(f"causal attention needs L_q == L_k, got {L_q} and {L_k}")
                    chunk_size = int(chunk_size)
                    m = torch.full((*q.shape[:-1], 1), float("-inf"), dtype=q.dtype, device=q.device)
                    l = torch.zeros_like(m)
                    acc = torch.zeros((*q.shape[:-1], v.shape[-1]), dtype=q.dtype, device=q.device)
                    q_pos = torch.arange(L_q, device=q.device).unsqueeze(-1)
                    for start in range(0, L_k, chunk_size):
                        kb = k[..., start : start + chunk_size, :]
                        vb = v[..., start : start + chunk_size, :]
                        s = q @ kb.transpose(-2, -1)
                        if causal:
                            k_pos = torch.arange(start, start + kb.shape[-2], device=q.device)
                            s = s.masked_fill(k_pos > q_pos, float("-inf"))
                        m_new = torch.maximum(m, s.amax(dim=-1, keepdim=True))
                        alpha = torch.exp(m - m_new)
                        p = torch.exp(s - m_new)
                        l = alpha * l + p.sum(dim=-1, keepdim=True)
                        acc = alpha * acc + p @ vb
                        m = m_new
                    return acc / l
                '''
            )
        },
        {"test_chunked_attention_exact": "not scaled by 1/√d_k"},
        # Charged there once: the causal cell is waived as the same mistake (a scale repair).
        charged_once=True,
    ),
    Mutant(
        "f07-06: chunked: accumulator not rescaled when the max grows",
        A,
        {
            "chunked_attention": Rewrite(
                r'''
                import numbers


                def chunked_attention(
                    q: Tensor, k: Tensor, v: Tensor, chunk_size: int, causal: bool = False
                ) -> Tensor:
                    """Attention over key blocks."""
                    if (
                        isinstance(chunk_size, bool)
                        or not isinstance(chunk_size, numbers.Integral)
                        or chunk_size < 1
                    ):
                        raise ValueError(f"chunk_size must be a positive int, got {chunk_size!r}")
                    L_q, L_k = q.shape[-2], k.shape[-2]
                    if causal and L_q != L_k:
                        raise ValueError(f"causal attention needs L_q == L_k, got {L_q} and {L_k}")
                    chunk_size = int(chunk_size)
                    q = q / math.sqrt(q.shape[-1])
                    m = torch.full((*q.shape[:-1], 1), float("-inf"), dtype=q.dtype, device=q.device)
                    l = torch.zeros_like(m)
                    acc = torch.zeros((*q.shape[:-1], v.shape[-1]), dtype=q.dtype, device=q.device)
                    q_pos = torch.arange(L_q, device=q.device).unsqueeze(-1)
                    for start in range(0, L_k, chunk_size):
                        kb = k[..., start : start + chunk_size, :]
                        vb = v[..., start : start + chunk_size, :]
                        s = q @ kb.transpose(-2, -1)
                        if causal:
                            k_pos = torch.arange(start, start + kb.shape[-2], device=q.device)
                            s = s.masked_fill(k_pos > q_pos, float("-inf"))
                        m_new = torch.maximum(m, s.amax(dim=-1, keepdim=True))
                        alpha = torch.exp(m - m_new)
                        p = torch.exp(s - m_new)
                        l = alpha * l + p.sum(dim=-1, keepdim=True)
                        acc = acc + p @ vb
                        m = m_new
                    return acc / l
                '''
            )
        },
        {
            "test_chunked_attention_exact": "accumulator is not rescaled",
            "test_chunked_attention_causal": "accumulator is not rescaled",
        },
    ),
    Mutant(
        "f07-07: chunked: the loop stops before the last, shorter block",
        A,
        {
            "chunked_attention": Rewrite(
                r'''
                import numbers


                def chunked_attention(
                    q: Tensor, k: Tensor, v: Tensor, chunk_size: int, causal: bool = False
                ) -> Tensor:
                    """Attention over key blocks."""
                    if (
                        isinstance(chunk_size, bool)
                        or not isinstance(chunk_size, numbers.Integral)
                        or chunk_size < 1
                    ):
                        raise ValueError(f"chunk_size must be a positive int, got {chunk_size!r}")
                    L_q, L_k = q.shape[-2], k.shape[-2]
                    if causal and L_q != L_k:
                        raise ValueError(f"causal attention needs L_q == L_k, got {L_q} and {L_k}")
                    chunk_size = int(chunk_size)
                    q = q / math.sqrt(q.shape[-1])
                    m = torch.full((*q.shape[:-1], 1), float("-inf"), dtype=q.dtype, device=q.device)
                    l = torch.zeros_like(m)
                    acc = torch.zeros((*q.shape[:-1], v.shape[-1]), dtype=q.dtype, device=q.device)
                    q_pos = torch.arange(L_q, device=q.device).unsqueeze(-1)
                    for start in range(0, L_k - chunk_size + 1, chunk_size):
                        kb = k[..., start : start + chunk_size, :]
                        vb = v[..., start : start + chunk_size, :]
                        s = q @ kb.transpose(-2, -1)
                        if causal:
                            k_pos = torch.arange(start, start + kb.shape[-2], device=q.device)
                            s = s.masked_fill(k_pos > q_pos, float("-inf"))
                        m_new = torch.maximum(m, s.amax(dim=-1, keepdim=True))
                        alpha = torch.exp(m - m_new)
                        p = torch.exp(s - m_new)
                        l = alpha * l + p.sum(dim=-1, keepdim=True)
                        acc = alpha * acc + p @ vb
                        m = m_new
                    return acc / l
                '''
            )
        },
        {"test_chunked_attention_exact": "last, shorter key block is dropped"},
        not_told=("query position", "block's offset", "hides the diagonal"),
        charged_once=True,  # the causal cell is waived as the same mistake (chunk sizes repaired)
    ),
    Mutant(
        "f07-08: chunked: slices of one (L, L) causal mask",
        A,
        {
            "chunked_attention": Rewrite(
                r'''
                import numbers


                def chunked_attention(
                    q: Tensor, k: Tensor, v: Tensor, chunk_size: int, causal: bool = False
                ) -> Tensor:
                    """Attention over key blocks."""
                    if (
                        isinstance(chunk_size, bool)
                        or not isinstance(chunk_size, numbers.Integral)
                        or chunk_size < 1
                    ):
                        raise ValueError(f"chunk_size must be a positive int, got {chunk_size!r}")
                    L_q, L_k = q.shape[-2], k.shape[-2]
                    if causal and L_q != L_k:
                        raise ValueError(f"causal attention needs L_q == L_k, got {L_q} and {L_k}")
                    chunk_size = int(chunk_size)
                    q = q / math.sqrt(q.shape[-1])
                    m = torch.full((*q.shape[:-1], 1), float("-inf"), dtype=q.dtype, device=q.device)
                    l = torch.zeros_like(m)
                    acc = torch.zeros((*q.shape[:-1], v.shape[-1]), dtype=q.dtype, device=q.device)
                    full_mask = causal_mask(L_q, device=q.device) if causal else None
                    for start in range(0, L_k, chunk_size):
                        kb = k[..., start : start + chunk_size, :]
                        vb = v[..., start : start + chunk_size, :]
                        s = q @ kb.transpose(-2, -1)
                        if causal:
                            s = s.masked_fill(~full_mask[:, start : start + kb.shape[-2]], float("-inf"))
                        m_new = torch.maximum(m, s.amax(dim=-1, keepdim=True))
                        alpha = torch.exp(m - m_new)
                        p = torch.exp(s - m_new)
                        l = alpha * l + p.sum(dim=-1, keepdim=True)
                        acc = alpha * acc + p @ vb
                        m = m_new
                    return acc / l
                '''
            )
        },
        {
            "test_chunked_attention_memory": "the causal branch builds something of size (L, L)",
        },
    ),
    Mutant(
        "f07-09: chunked: causal mask hides the diagonal (k_pos >= q_pos)",
        A,
        {
            "chunked_attention": Rewrite(
                r'''
                import numbers


                def chunked_attention(
                    q: Tensor, k: Tensor, v: Tensor, chunk_size: int, causal: bool = False
                ) -> Tensor:
                    """Attention over key blocks."""
                    if (
                        isinstance(chunk_size, bool)
                        or not isinstance(chunk_size, numbers.Integral)
                        or chunk_size < 1
                    ):
                        raise ValueError(f"chunk_size must be a positive int, got {chunk_size!r}")
                    L_q, L_k = q.shape[-2], k.shape[-2]
                    if causal and L_q != L_k:
                        raise ValueError(f"causal attention needs L_q == L_k, got {L_q} and {L_k}")
                    chunk_size = int(chunk_size)
                    q = q / math.sqrt(q.shape[-1])
                    m = torch.full((*q.shape[:-1], 1), float("-inf"), dtype=q.dtype, device=q.device)
                    l = torch.zeros_like(m)
                    acc = torch.zeros((*q.shape[:-1], v.shape[-1]), dtype=q.dtype, device=q.device)
                    q_pos = torch.arange(L_q, device=q.device).unsqueeze(-1)
                    for start in range(0, L_k, chunk_size):
                        kb = k[..., start : start + chunk_size, :]
                        vb = v[..., start : start + chunk_size, :]
                        s = q @ kb.transpose(-2, -1)
                        if causal:
                            k_pos = torch.arange(start, start + kb.shape[-2], device=q.device)
                            s = s.masked_fill(k_pos >= q_pos, float("-inf"))
                        m_new = torch.maximum(m, s.amax(dim=-1, keepdim=True))
                        alpha = torch.exp(m - m_new)
                        p = torch.exp(s - m_new)
                        l = alpha * l + p.sum(dim=-1, keepdim=True)
                        acc = alpha * acc + p @ vb
                        m = m_new
                    return acc / l
                '''
            )
        },
        {
            "test_chunked_attention_causal": "the causal mask hides the diagonal",
        },
    ),
    Mutant(
        "f07-10: chunked: accumulators in the default dtype",
        A,
        {
            "chunked_attention": Rewrite(
                r'''
                import numbers


                def chunked_attention(
                    q: Tensor, k: Tensor, v: Tensor, chunk_size: int, causal: bool = False
                ) -> Tensor:
                    """Attention over key blocks."""
                    if (
                        isinstance(chunk_size, bool)
                        or not isinstance(chunk_size, numbers.Integral)
                        or chunk_size < 1
                    ):
                        raise ValueError(f"chunk_size must be a positive int, got {chunk_size!r}")
                    L_q, L_k = q.shape[-2], k.shape[-2]
                    if causal and L_q != L_k:
                        raise ValueError(f"causal attention needs L_q == L_k, got {L_q} and {L_k}")
                    chunk_size = int(chunk_size)
                    q = q / math.sqrt(q.shape[-1])
                    m = torch.full((*q.shape[:-1], 1), float("-inf"), device=q.device)
                    l = torch.zeros_like(m)
                    acc = torch.zeros((*q.shape[:-1], v.shape[-1]), device=q.device)
                    q_pos = torch.arange(L_q, device=q.device).unsqueeze(-1)
                    for start in range(0, L_k, chunk_size):
                        kb = k[..., start : start + chunk_size, :]
                        vb = v[..., start : start + chunk_size, :]
                        s = q @ kb.transpose(-2, -1)
                        if causal:
                            k_pos = torch.arange(start, start + kb.shape[-2], device=q.device)
                            s = s.masked_fill(k_pos > q_pos, float("-inf"))
                        m_new = torch.maximum(m, s.amax(dim=-1, keepdim=True))
                        alpha = torch.exp(m - m_new)
                        p = torch.exp(s - m_new)
                        l = alpha * l + p.sum(dim=-1, keepdim=True)
                        acc = alpha * acc + p @ vb
                        m = m_new
                    return acc / l
                '''
            )
        },
        {
            "test_chunked_attention_exact": "chunked_attention raised RuntimeError on torch.bfloat16",
        },
        makes=("chunked_attention.computed_in_float32",),
    ),
    Mutant(
        "f07-11: chunked: no ValueError for causal with L_q != L_k",
        A,
        {
            "chunked_attention": Rewrite(
                r'''
                import numbers


                def chunked_attention(
                    q: Tensor, k: Tensor, v: Tensor, chunk_size: int, causal: bool = False
                ) -> Tensor:
                    """Attention over key blocks."""
                    if (
                        isinstance(chunk_size, bool)
                        or not isinstance(chunk_size, numbers.Integral)
                        or chunk_size < 1
                    ):
                        raise ValueError(f"chunk_size must be a positive int, got {chunk_size!r}")
                    L_q, L_k = q.shape[-2], k.shape[-2]
                    chunk_size = int(chunk_size)
                    q = q / math.sqrt(q.shape[-1])
                    m = torch.full((*q.shape[:-1], 1), float("-inf"), dtype=q.dtype, device=q.device)
                    l = torch.zeros_like(m)
                    acc = torch.zeros((*q.shape[:-1], v.shape[-1]), dtype=q.dtype, device=q.device)
                    q_pos = torch.arange(L_q, device=q.device).unsqueeze(-1)
                    for start in range(0, L_k, chunk_size):
                        kb = k[..., start : start + chunk_size, :]
                        vb = v[..., start : start + chunk_size, :]
                        s = q @ kb.transpose(-2, -1)
                        if causal:
                            k_pos = torch.arange(start, start + kb.shape[-2], device=q.device)
                            s = s.masked_fill(k_pos > q_pos, float("-inf"))
                        m_new = torch.maximum(m, s.amax(dim=-1, keepdim=True))
                        alpha = torch.exp(m - m_new)
                        p = torch.exp(s - m_new)
                        l = alpha * l + p.sum(dim=-1, keepdim=True)
                        acc = alpha * acc + p @ vb
                        m = m_new
                    return acc / l
                '''
            )
        },
        {
            "test_chunked_attention_causal": "causal=True with L_q != L_k must raise ValueError",
        },
    ),
    Mutant(
        "f07-12: chunked: causal mask from the column inside the block",
        A,
        {
            "chunked_attention": Rewrite(
                r'''
                import numbers


                def chunked_attention(
                    q: Tensor, k: Tensor, v: Tensor, chunk_size: int, causal: bool = False
                ) -> Tensor:
                    """Attention over key blocks."""
                    if (
                        isinstance(chunk_size, bool)
                        or not isinstance(chunk_size, numbers.Integral)
                        or chunk_size < 1
                    ):
                        raise ValueError(f"chunk_size must be a positive int, got {chunk_size!r}")
                    L_q, L_k = q.shape[-2], k.shape[-2]
                    if causal and L_q != L_k:
                        raise ValueError(f"causal attention needs L_q == L_k, got {L_q} and {L_k}")
                    chunk_size = int(chunk_size)
                    q = q / math.sqrt(q.shape[-1])
                    m = torch.full((*q.shape[:-1], 1), float("-inf"), dtype=q.dtype, device=q.device)
                    l = torch.zeros_like(m)
                    acc = torch.zeros((*q.shape[:-1], v.shape[-1]), dtype=q.dtype, device=q.device)
                    q_pos = torch.arange(L_q, device=q.device).unsqueeze(-1)
                    for start in range(0, L_k, chunk_size):
                        kb = k[..., start : start + chunk_size, :]
                        vb = v[..., start : start + chunk_size, :]
                        s = q @ kb.transpose(-2, -1)
                        if causal:
                            k_pos = torch.arange(kb.shape[-2], device=q.device)
                            s = s.masked_fill(k_pos > q_pos, float("-inf"))
                        m_new = torch.maximum(m, s.amax(dim=-1, keepdim=True))
                        alpha = torch.exp(m - m_new)
                        p = torch.exp(s - m_new)
                        l = alpha * l + p.sum(dim=-1, keepdim=True)
                        acc = alpha * acc + p @ vb
                        m = m_new
                    return acc / l
                '''
            )
        },
        {
            "test_chunked_attention_causal": "ignores the block's offset",
        },
    ),
    Mutant(
        "f07-13: chunked: chunk_size checked only with < 1",
        A,
        {
            "chunked_attention": Rewrite(
                r'''
                import numbers


                def chunked_attention(
                    q: Tensor, k: Tensor, v: Tensor, chunk_size: int, causal: bool = False
                ) -> Tensor:
                    """Attention over key blocks."""
                    if chunk_size < 1:
                        raise ValueError(f"chunk_size must be a positive int, got {chunk_size!r}")
                    L_q, L_k = q.shape[-2], k.shape[-2]
                    if causal and L_q != L_k:
                        raise ValueError(f"causal attention needs L_q == L_k, got {L_q} and {L_k}")
                    q = q / math.sqrt(q.shape[-1])
                    m = torch.full((*q.shape[:-1], 1), float("-inf"), dtype=q.dtype, device=q.device)
                    l = torch.zeros_like(m)
                    acc = torch.zeros((*q.shape[:-1], v.shape[-1]), dtype=q.dtype, device=q.device)
                    q_pos = torch.arange(L_q, device=q.device).unsqueeze(-1)
                    for start in range(0, L_k, chunk_size):
                        kb = k[..., start : start + chunk_size, :]
                        vb = v[..., start : start + chunk_size, :]
                        s = q @ kb.transpose(-2, -1)
                        if causal:
                            k_pos = torch.arange(start, start + kb.shape[-2], device=q.device)
                            s = s.masked_fill(k_pos > q_pos, float("-inf"))
                        m_new = torch.maximum(m, s.amax(dim=-1, keepdim=True))
                        alpha = torch.exp(m - m_new)
                        p = torch.exp(s - m_new)
                        l = alpha * l + p.sum(dim=-1, keepdim=True)
                        acc = alpha * acc + p @ vb
                        m = m_new
                    return acc / l
                '''
            )
        },
        {
            "test_chunked_attention_exact": "chunk_size=2.0 must raise ValueError, got TypeError",
        },
    ),
    Mutant(
        "g07-04: online update: one maximum over the whole batch (scores.max())",
        A,
        {
            "online_softmax_update": Rewrite(
                r'''
                def online_softmax_update(
                    running_max: Tensor, running_sum: Tensor, scores: Tensor
                ) -> tuple[Tensor, Tensor]:
                    """Fold scores (..., C) into running_max (...) and running_sum = sum exp(s - max)."""
                    new_max = torch.maximum(running_max, scores.max())
                    factor = torch.exp(running_max - new_max)
                    new_sum = running_sum * factor + torch.exp(scores - new_max.unsqueeze(-1)).sum(-1)
                    return new_max, new_sum
                '''
            )
        },
        {
            "test_online_softmax_update": "one maximum over the whole batch",
        },
        not_told=("the maximum of every score seen so far",),
    ),
    Mutant(
        "g07-11: merge_partials adds the sums without a common maximum",
        A,
        {
            "merge_partials": Rewrite(
                r'''
                def partial_attention(q: Tensor, k: Tensor, v: Tensor):
                    """The partial result of q (..., L_q, d_k) over the keys k (..., L_k, d_k).

                    v is (..., L_k, d_v); the result is a tuple (or a dict) of tensors of your design.
                    """
                    # My design: Section 3's running numbers for these keys, (m, l, a): the row maximum m
                    # (..., L_q, 1) of the scaled scores, l = sum exp(s - m) and a = sum exp(s - m) v
                    # (..., L_q, d_v). Their size does not depend on L_k. Merging moves both parts to the
                    # larger maximum (multiplying by exp(m_part - m) <= 1, so nothing overflows) and adds:
                    # exact, and symmetric and associative up to rounding.
                    s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])  # (..., L_q, L_k)
                    m = s.amax(dim=-1, keepdim=True)
                    p = torch.exp(s - m)
                    return m, p.sum(dim=-1, keepdim=True), p @ v


                def merge_partials(a, b):
                    """The partial result over the keys of a and of b (disjoint, the same queries)."""
                    (m_a, l_a, acc_a), (m_b, l_b, acc_b) = a, b
                    m = torch.maximum(m_a, m_b)
                    f_a, f_b = torch.exp(m_a - m), torch.exp(m_b - m)
                    return m, l_a + l_b, acc_a + acc_b


                def finish_attention(p) -> Tensor:
                    """The attention output (..., L_q, d_v) over every key merged into p."""
                    _, l, acc = p
                    return acc / l
                '''
            )
        },
        {
            "test_merge_partials": "the parts are added without a common maximum",
        },
    ),
    Mutant(
        "h07-02: online update: block terms against the block's own max, never moved",
        A,
        {
            "online_softmax_update": Rewrite(
                r'''
                def online_softmax_update(
                    running_max: Tensor, running_sum: Tensor, scores: Tensor
                ) -> tuple[Tensor, Tensor]:
                    """Fold scores (..., C) into running_max (...) and running_sum = sum exp(s - max)."""
                    block_max = scores.amax(dim=-1)
                    new_max = torch.maximum(running_max, block_max)
                    block_sum = torch.exp(scores - block_max.unsqueeze(-1)).sum(dim=-1)
                    new_sum = running_sum * torch.exp(running_max - new_max) + block_sum
                    return new_max, new_sum
                '''
            )
        },
        {
            "test_online_softmax_update": "measured against the block's own max",
        },
        not_told=("the running max is replaced by the block's max",),
    ),
    Mutant(
        "h07-21: partial_attention: scores not scaled by 1/sqrt(d_k)",
        A,
        {
            "merge_partials": Rewrite(
                r'''
                def partial_attention(q: Tensor, k: Tensor, v: Tensor):
                    """The partial result of q (..., L_q, d_k) over the keys k (..., L_k, d_k)."""
                    # (m, l, a): row max, sum exp(s - m), sum exp(s - m) v
                    s = q @ k.transpose(-2, -1)
                    m = s.amax(dim=-1, keepdim=True)
                    p = torch.exp(s - m)
                    return m, p.sum(-1, keepdim=True), p @ v


                def merge_partials(a, b):
                    """The partial result over the keys of a and of b (disjoint, the same queries)."""
                    m = torch.maximum(a[0], b[0])
                    fa, fb = torch.exp(a[0] - m), torch.exp(b[0] - m)
                    return m, a[1] * fa + b[1] * fb, a[2] * fa + b[2] * fb


                def finish_attention(p) -> Tensor:
                    """The attention output (..., L_q, d_v) over every key merged into p."""
                    m, l, a = p
                    return a / l
                '''
            )
        },
        {
            "test_merge_partials": "does not scale the scores by 1/√d_k",
        },
    ),
    Mutant(
        "h07-18: partial_attention keeps sum exp(s) and sum exp(s) v, no max subtracted",
        A,
        {
            "merge_partials": Rewrite(
                r'''
                def partial_attention(q: Tensor, k: Tensor, v: Tensor):
                    """The partial result of q (..., L_q, d_k) over the keys k (..., L_k, d_k)."""
                    # (sum of exp(score), sum of exp(score) * v): both just add up over disjoint keys
                    s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
                    e = torch.exp(s)
                    return e.sum(-1, keepdim=True), e @ v


                def merge_partials(a, b):
                    """The partial result over the keys of a and of b (disjoint, the same queries)."""
                    return a[0] + b[0], a[1] + b[1]


                def finish_attention(p) -> Tensor:
                    """The attention output (..., L_q, d_v) over every key merged into p."""
                    return p[1] / p[0]
                '''
            )
        },
        {
            "test_merge_partials": "the partial result overflows",
        },
        in_notebook=True,  # its partial result crosses the judge's wire as data
    ),
    Mutant(
        "h07-19: merge averages the parts' outputs weighted by their key counts",
        A,
        {
            "merge_partials": Rewrite(
                r'''
                def partial_attention(q: Tensor, k: Tensor, v: Tensor):
                    """The partial result of q (..., L_q, d_k) over the keys k (..., L_k, d_k)."""
                    # (output over these keys, number of keys)
                    w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
                    return w @ v, torch.tensor(float(k.shape[-2]), dtype=q.dtype)


                def merge_partials(a, b):
                    """The partial result over the keys of a and of b (disjoint, the same queries)."""
                    n = a[1] + b[1]
                    return (a[0] * a[1] + b[0] * b[1]) / n, n


                def finish_attention(p) -> Tensor:
                    """The attention output (..., L_q, d_v) over every key merged into p."""
                    return p[0]
                '''
            )
        },
        {
            "test_merge_partials": "weighted by their numbers of keys",
        },
    ),
    Mutant(
        "h07-06: chunked: scores scaled by 1/sqrt(d_v)",
        A,
        {
            "chunked_attention": Rewrite(
                r'''
                def chunked_attention(
                    q: Tensor, k: Tensor, v: Tensor, chunk_size: int, causal: bool = False
                ) -> Tensor:
                    """Attention over key blocks."""
                    if isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or chunk_size < 1:
                        raise ValueError("chunk_size must be a positive int")
                    L_q, L_k = q.shape[-2], k.shape[-2]
                    if causal and L_q != L_k:
                        raise ValueError("causal needs L_q == L_k")
                    q = q / math.sqrt(v.shape[-1])
                    m = torch.full(q.shape[:-1] + (1,), float("-inf"), dtype=q.dtype)
                    l = torch.zeros_like(m)
                    acc = torch.zeros(q.shape[:-1] + (v.shape[-1],), dtype=q.dtype)
                    rows = torch.arange(L_q).unsqueeze(-1)
                    for start in range(0, L_k, chunk_size):
                        kb, vb = k[..., start:start + chunk_size, :], v[..., start:start + chunk_size, :]
                        s = q @ kb.transpose(-2, -1)
                        if causal:
                            cols = torch.arange(start, start + kb.shape[-2])
                            s = s.masked_fill(cols > rows, float("-inf"))
                        m_new = torch.maximum(m, s.amax(dim=-1, keepdim=True))
                        alpha = torch.exp(m - m_new)
                        p = torch.exp(s - m_new)
                        l = alpha * l + p.sum(dim=-1, keepdim=True)
                        acc = alpha * acc + p @ vb
                        m = m_new
                    return acc / l
                '''
            )
        },
        {"test_chunked_attention_exact": "scaled by 1/√d_v (v.shape[-1]) instead of 1/√d_k"},
        # Issue 40's third blind corpus: charged in both cells then; once now (a scale repair),
        # through the grading command too.
        charged_once=True,
        in_notebook=True,
        # Its torch.arange (or full, ones, zeros) has no device=: it makes that mistake too.
        makes=("chunked_attention.made_on_the_default_device",),
    ),
    Mutant(
        "i07-06: chunked: a full causal_mask(L) built once, a block of its columns sliced per step",
        A,
        {
            "chunked_attention": Rewrite(
                r'''
                def chunked_attention(
                    q: Tensor, k: Tensor, v: Tensor, chunk_size: int, causal: bool = False
                ) -> Tensor:
                    """Attention over key blocks.

                    q (..., L_q, d_k), k (..., L_k, d_k), v (..., L_k, d_v) -> (..., L_q, d_v).
                    """
                    if isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or chunk_size < 1:
                        raise ValueError(f"chunk_size must be a positive int, got {chunk_size!r}")
                    len_q, len_k = q.shape[-2], k.shape[-2]
                    if causal and len_q != len_k:
                        raise ValueError(f"causal attention needs L_q == L_k, got {len_q} and {len_k}")
                    q_scaled = q / math.sqrt(q.shape[-1])
                    lead = q.shape[:-1]
                    m = torch.full((*lead, 1), -math.inf, dtype=q.dtype, device=q.device)
                    l = torch.zeros((*lead, 1), dtype=q.dtype, device=q.device)
                    acc = torch.zeros((*lead, v.shape[-1]), dtype=q.dtype, device=q.device)
                    full_mask = causal_mask(len_q, device=q.device) if causal else None  # True = may attend
                    for start in range(0, len_k, chunk_size):
                        k_block = k[..., start : start + chunk_size, :]
                        v_block = v[..., start : start + chunk_size, :]
                        s = q_scaled @ k_block.transpose(-2, -1)
                        if causal:
                            s = s.masked_fill(~full_mask[:, start : start + chunk_size], -math.inf)
                        m_new = torch.maximum(m, s.amax(dim=-1, keepdim=True))
                        alpha = torch.exp(m - m_new)
                        p = torch.exp(s - m_new)
                        l = alpha * l + p.sum(dim=-1, keepdim=True)
                        acc = alpha * acc + p @ v_block
                        m = m_new
                    return (acc / l).to(q.dtype)
                '''
            )
        },
        {"test_chunked_attention_memory": "with causal=True, and only then, memory grows"},
        # Issue 40's fourth blind corpus: through the grading command, a scale repair (a wrapper
        # in the grader's process) made the memory check pass, its peak measured where nothing
        # of the answer ran, and the scale was named as the confirmed cause.
        not_told=("scores are not scaled",),
        in_notebook=True,
    ),
    Mutant(
        "i07-12: chunked: each block's own max taken for the running max, not max(m, block max)",
        A,
        {
            "chunked_attention": Rewrite(
                r'''
                def chunked_attention(
                    q: Tensor, k: Tensor, v: Tensor, chunk_size: int, causal: bool = False
                ) -> Tensor:
                    """Attention over key blocks.

                    q (..., L_q, d_k), k (..., L_k, d_k), v (..., L_k, d_v) -> (..., L_q, d_v).
                    """
                    if isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or chunk_size < 1:
                        raise ValueError(f"chunk_size must be a positive int, got {chunk_size!r}")
                    len_q, len_k = q.shape[-2], k.shape[-2]
                    if causal and len_q != len_k:
                        raise ValueError(f"causal attention needs L_q == L_k, got {len_q} and {len_k}")
                    q_scaled = q / math.sqrt(q.shape[-1])
                    lead = q.shape[:-1]
                    m = torch.full((*lead, 1), -math.inf, dtype=q.dtype, device=q.device)
                    l = torch.zeros((*lead, 1), dtype=q.dtype, device=q.device)
                    acc = torch.zeros((*lead, v.shape[-1]), dtype=q.dtype, device=q.device)
                    query_pos = torch.arange(len_q, device=q.device).unsqueeze(-1)
                    for start in range(0, len_k, chunk_size):
                        k_block = k[..., start : start + chunk_size, :]
                        v_block = v[..., start : start + chunk_size, :]
                        s = q_scaled @ k_block.transpose(-2, -1)
                        if causal:
                            key_pos = torch.arange(start, start + k_block.shape[-2], device=q.device)
                            s = s.masked_fill(key_pos > query_pos, -math.inf)
                        m_new = s.amax(dim=-1, keepdim=True)  # this block's maximum
                        alpha = torch.exp(m - m_new)
                        p = torch.exp(s - m_new)
                        l = alpha * l + p.sum(dim=-1, keepdim=True)
                        acc = alpha * acc + p @ v_block
                        m = m_new
                    return (acc / l).to(q.dtype)
                '''
            )
        },
        {
            "test_chunked_attention_exact": "float32 with scores in the hundreds",
            "test_chunked_attention_causal": "each block's own max replaces the running max",
        },
        # Issue 40's fourth blind corpus: its NaN rows (a block all hidden) are those of a running
        # max never updated, which its causal cell was told; its finite values are exact.
        not_told=("never updated", "only the last block counts"),
        in_notebook=True,
    ),
    Mutant(
        "i07-13: online update: the block max squeezed with no dim, (R, 1) rows come back (R, R)",
        A,
        {
            "online_softmax_update": Rewrite(
                r'''
                def online_softmax_update(
                    running_max: Tensor, running_sum: Tensor, scores: Tensor
                ) -> tuple[Tensor, Tensor]:
                    """Fold scores (..., C) into running_max (...) and running_sum = Σ exp(s - max)."""
                    block_max = scores.amax(dim=-1, keepdim=True)  # (..., 1)
                    new_max = torch.maximum(running_max, block_max.squeeze())
                    factor = torch.exp(running_max - new_max)
                    block_sum = torch.exp(scores - new_max.unsqueeze(-1)).sum(dim=-1)
                    return new_max, running_sum * factor + block_sum
                '''
            )
        },
        {"test_online_softmax_update": "with leading dims ("},
        # Issue 40's fourth blind corpus: no hidden input had a leading dim of size 1.,
    ),
    Mutant(
        "j07-09: running max, sum and accumulator made in the default float32",
        A,
        {
            "chunked_attention": Rewrite(
                r'''
                def chunked_attention(
                    q: Tensor, k: Tensor, v: Tensor, chunk_size: int, causal: bool = False
                ) -> Tensor:
                    """Attention over key blocks.

                    q (..., L_q, d_k), k (..., L_k, d_k), v (..., L_k, d_v) -> (..., L_q, d_v).
                    """
                    if isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or chunk_size < 1:
                        raise ValueError(f"chunk_size must be a positive int, got {chunk_size!r}")
                    len_q, len_k = q.shape[-2], k.shape[-2]
                    if causal and len_q != len_k:
                        raise ValueError(f"causal attention needs L_q == L_k, got {len_q} and {len_k}")
                    q = q / math.sqrt(q.shape[-1])
                    m = torch.full((*q.shape[:-1], 1), float("-inf"), device=q.device)
                    ell = torch.zeros((*q.shape[:-1], 1), device=q.device)
                    acc = torch.zeros((*q.shape[:-1], v.shape[-1]), device=q.device)
                    q_pos = torch.arange(len_q, device=q.device).unsqueeze(-1)  # (L_q, 1)
                    for start in range(0, len_k, chunk_size):
                        k_b = k[..., start : start + chunk_size, :]
                        v_b = v[..., start : start + chunk_size, :]
                        s = q @ k_b.transpose(-2, -1)  # (..., L_q, C)
                        if causal:
                            k_pos = torch.arange(start, start + k_b.shape[-2], device=q.device)  # (C,)
                            s = s.masked_fill(k_pos > q_pos, float("-inf"))
                        m_new = torch.maximum(m, s.amax(dim=-1, keepdim=True))
                        alpha = torch.exp(m - m_new)
                        p = torch.exp(s - m_new)
                        ell = alpha * ell + p.sum(dim=-1, keepdim=True)
                        acc = alpha * acc + p @ v_b
                        m = m_new
                    return acc / ell
                '''
            )
        },
        {
            "test_chunked_attention_exact": "chunked_attention computes in float32 for half-precision input"
        },
        # Issue 40's fifth blind corpus: shown the error and its line only; named from the
        # kernel's error text, so graded through the grading command too.
        in_notebook=True,
    ),
    Mutant(
        "j07-12: one maximum per (batch, head) over every query and key",
        A,
        {
            "merge_partials": Rewrite(
                r'''
                def partial_attention(q: Tensor, k: Tensor, v: Tensor):
                    """The partial result of q (..., L_q, d_k) over the keys k (..., L_k, d_k).

                    v is (..., L_k, d_v); the result is a tuple (or a dict) of tensors of your design.
                    """
                    s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
                    m = s.amax(dim=(-2, -1), keepdim=True).expand(*s.shape[:-1], 1)
                    p = torch.exp(s - m)
                    return (m, p.sum(dim=-1, keepdim=True), p @ v)


                def merge_partials(a, b):
                    """The partial result over the keys of a and of b (disjoint, the same queries)."""
                    m_a, l_a, acc_a = a
                    m_b, l_b, acc_b = b
                    m = torch.maximum(m_a, m_b)
                    f_a, f_b = torch.exp(m_a - m), torch.exp(m_b - m)
                    return (m, l_a * f_a + l_b * f_b, acc_a * f_a + acc_b * f_b)


                def finish_attention(p) -> Tensor:
                    """The attention output (..., L_q, d_v) over every key merged into p."""
                    m, ell, acc = p
                    return acc / ell
                '''
            )
        },
        {"test_merge_partials": "one maximum is shared by the queries of a part"},
        # Issue 40's fifth blind corpus: shown the NaN count only; its visible check fails too.
        in_notebook=True,
    ),
    Mutant(
        "k07-01: exponentiates the raw scores and divides by exp(new_max) afterwards (e",
        A,
        {
            "online_softmax_update": Rewrite(
                r'''
                def online_softmax_update(
                    running_max: Tensor, running_sum: Tensor, scores: Tensor
                ) -> tuple[Tensor, Tensor]:
                    """Fold scores (..., C) into running_max (...) and running_sum = Σ exp(s - max)."""
                    new_max = torch.maximum(running_max, scores.amax(dim=-1))
                    block = torch.exp(scores).sum(dim=-1) * torch.exp(-new_max)
                    new_sum = running_sum * torch.exp(running_max - new_max) + block
                    return new_max, new_sum
                '''
            )
        },
        {
            "test_online_softmax_update": "exp overflows for large scores: subtract the running max before exponentiating (exp(scores - new_max)), never exp(scores"
        },
        # Issue 40's sixth blind corpus, graded blind on bdfa422: named.
    ),
    Mutant(
        "k07-02: for causal=True it builds the full (L",
        A,
        {
            "chunked_attention": Rewrite(
                r'''
                def chunked_attention(
                    q: Tensor, k: Tensor, v: Tensor, chunk_size: int, causal: bool = False
                ) -> Tensor:
                    """Attention over key blocks.

                    q (..., L_q, d_k), k (..., L_k, d_k), v (..., L_k, d_v) -> (..., L_q, d_v).
                    """
                    if isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or chunk_size <= 0:
                        raise ValueError(f"chunk_size must be a positive int, got {chunk_size!r}")
                    L_q, L_k = q.shape[-2], k.shape[-2]
                    if causal and L_q != L_k:
                        raise ValueError(f"causal=True needs L_q == L_k, got {L_q} != {L_k}")
                    q = q / math.sqrt(q.shape[-1])
                    full_mask = causal_mask(L_q) if causal else None  # True = may attend
                    m = torch.full((*q.shape[:-1], 1), float("-inf"), dtype=q.dtype, device=q.device)
                    l = torch.zeros_like(m)
                    acc = torch.zeros((*q.shape[:-1], v.shape[-1]), dtype=q.dtype, device=q.device)
                    for start in range(0, L_k, chunk_size):
                        stop = min(start + chunk_size, L_k)
                        s = q @ k[..., start:stop, :].transpose(-2, -1)
                        if causal:
                            s = s.masked_fill(~full_mask[:, start:stop], float("-inf"))
                        m_new = torch.maximum(m, s.amax(dim=-1, keepdim=True))
                        alpha = torch.exp(m - m_new)
                        p = torch.exp(s - m_new)
                        l = alpha * l + p.sum(dim=-1, keepdim=True)
                        acc = alpha * acc + p @ v[..., start:stop, :]
                        m = m_new
                    return acc / l
                '''
            )
        },
        {
            "test_chunked_attention_memory": "with causal=True, and only then, memory grows quadratically: the causal branch builds something of size (L, L), like a m"
        },
        # Issue 40's sixth blind corpus, graded blind on bdfa422: named.
        # Its torch.arange (or full, ones, zeros) has no device=: it makes that mistake too.
        makes=("chunked_attention.made_on_the_default_device",),
    ),
    Mutant(
        "k07-03: the chunk_size check is isinstance(chunk_size",
        A,
        {
            "chunked_attention": Rewrite(
                r'''
                def chunked_attention(
                    q: Tensor, k: Tensor, v: Tensor, chunk_size: int, causal: bool = False
                ) -> Tensor:
                    """Attention over key blocks.

                    q (..., L_q, d_k), k (..., L_k, d_k), v (..., L_k, d_v) -> (..., L_q, d_v).
                    """
                    if not isinstance(chunk_size, int) or chunk_size < 1:
                        raise ValueError(f"chunk_size must be a positive int, got {chunk_size!r}")
                    L_q, L_k = q.shape[-2], k.shape[-2]
                    if causal and L_q != L_k:
                        raise ValueError("causal attention needs as many queries as keys")
                    scale = 1.0 / math.sqrt(q.shape[-1])
                    m = q.new_full((*q.shape[:-1], 1), -math.inf)
                    l = q.new_zeros((*q.shape[:-1], 1))
                    acc = q.new_zeros((*q.shape[:-1], v.shape[-1]))
                    qpos = torch.arange(L_q, device=q.device)[:, None]
                    for start in range(0, L_k, chunk_size):
                        kb, vb = k[..., start : start + chunk_size, :], v[..., start : start + chunk_size, :]
                        s = (q @ kb.transpose(-2, -1)) * scale
                        if causal:
                            kpos = torch.arange(start, start + kb.shape[-2], device=q.device)
                            s = s.masked_fill(kpos[None, :] > qpos, -math.inf)
                        m_new = torch.maximum(m, s.amax(-1, keepdim=True))
                        alpha = torch.exp(m - m_new)
                        p = torch.exp(s - m_new)
                        l = l * alpha + p.sum(-1, keepdim=True)
                        acc = acc * alpha + p @ vb
                        m = m_new
                    return acc / l
                '''
            )
        },
        {
            "test_chunked_attention_exact": "chunk_size=True must raise ValueError; your function "
            "took it as the int 1"
        },
        # Issue 40's sixth blind corpus, graded blind on bdfa422: named.
    ),
    Mutant(
        "k07-04: the running maximum starts at 0 instead of -inf",
        A,
        {
            "chunked_attention": Rewrite(
                r'''
                def chunked_attention(
                    q: Tensor, k: Tensor, v: Tensor, chunk_size: int, causal: bool = False
                ) -> Tensor:
                    """Attention over key blocks.

                    q (..., L_q, d_k), k (..., L_k, d_k), v (..., L_k, d_v) -> (..., L_q, d_v).
                    """
                    if isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or chunk_size < 1:
                        raise ValueError(f"chunk_size must be a positive int, got {chunk_size!r}")
                    L_q, L_k = q.shape[-2], k.shape[-2]
                    if causal and L_q != L_k:
                        raise ValueError(f"causal attention needs L_q == L_k, got {L_q} and {L_k}")
                    q = q / math.sqrt(q.shape[-1])
                    # running max, running sum and accumulator, one per query
                    m = torch.zeros((*q.shape[:-1], 1), dtype=q.dtype, device=q.device)
                    l = torch.zeros((*q.shape[:-1], 1), dtype=q.dtype, device=q.device)
                    acc = torch.zeros((*q.shape[:-1], v.shape[-1]), dtype=q.dtype, device=q.device)
                    rows = torch.arange(L_q, device=q.device).unsqueeze(1)
                    for start in range(0, L_k, chunk_size):
                        kb = k[..., start : start + chunk_size, :]
                        vb = v[..., start : start + chunk_size, :]
                        s = q @ kb.transpose(-2, -1)
                        if causal:
                            cols = torch.arange(start, start + kb.shape[-2], device=q.device)
                            s = s.masked_fill(cols > rows, float("-inf"))
                        m_new = torch.maximum(m, s.amax(dim=-1, keepdim=True))
                        alpha = torch.exp(m - m_new)
                        p = torch.exp(s - m_new)
                        l = alpha * l + p.sum(dim=-1, keepdim=True)
                        acc = alpha * acc + p @ vb
                        m = m_new
                    return acc / l
                '''
            )
        },
        {"test_chunked_attention_exact": "rows whose scores are all very negative give NaN"},
        # Issue 40's sixth blind corpus, graded blind on bdfa422: named.
    ),
    Mutant(
        "k07-05: merge_partials rescales the second part to the FIRST part's maximum (f",
        A,
        {
            "merge_partials": Rewrite(
                r'''
                def partial_attention(q: Tensor, k: Tensor, v: Tensor):
                    """The partial result of q (..., L_q, d_k) over the keys k (..., L_k, d_k).

                    v is (..., L_k, d_v); the result is a tuple (or a dict) of tensors of your design.
                    """
                    # Design: (m, l, acc): the part's largest scaled score per query, the sum of
                    # exp(s - m) and the sum of exp(s - m) v. Merging moves b onto a's reference m_a by
                    # the factor exp(m_b - m_a) and adds: the sums are the same sums over more keys.
                    s = (q @ k.transpose(-2, -1)) / math.sqrt(q.shape[-1])
                    m = s.amax(dim=-1, keepdim=True)
                    e = torch.exp(s - m)
                    return (m, e.sum(dim=-1, keepdim=True), e @ v)


                def merge_partials(a, b):
                    """The partial result over the keys of a and of b (disjoint, the same queries)."""
                    m_a, l_a, acc_a = a
                    m_b, l_b, acc_b = b
                    factor = torch.exp(m_b - m_a)
                    return (m_a, l_a + factor * l_b, acc_a + factor * acc_b)


                def finish_attention(p) -> Tensor:
                    """The attention output (..., L_q, d_v) over every key merged into p."""
                    m, l, acc = p
                    return acc / l
                '''
            )
        },
        {
            "test_merge_partials": "merge_partials measures one argument's part against the "
            "other argument's reference"
        },
        # Issue 40's sixth blind corpus, graded blind on bdfa422: counterexample (NaN or inf at
        # 15 of 15 values); named since the branch fix7b, where the other order and smaller
        # scores are exact.
    ),
    Mutant(
        "n07-05: chunked_attention raises for causal=True only when L_q > L_k",
        A,
        {
            "chunked_attention": Rewrite(
                r'''
                def chunked_attention(
                    q: Tensor, k: Tensor, v: Tensor, chunk_size: int, causal: bool = False
                ) -> Tensor:
                    """Attention over key blocks.

                    q (..., L_q, d_k), k (..., L_k, d_k), v (..., L_k, d_v) -> (..., L_q, d_v).
                    """
                    if isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or chunk_size < 1:
                        raise ValueError(f"chunk_size must be a positive int, got {chunk_size!r}")
                    L_q, L_k = q.shape[-2], k.shape[-2]
                    if causal and L_q > L_k:
                        raise ValueError(f"causal attention needs L_q == L_k, got {L_q} and {L_k}")
                    q = q / math.sqrt(q.shape[-1])
                    m = torch.full((*q.shape[:-1], 1), float("-inf"), dtype=q.dtype, device=q.device)
                    l = torch.zeros_like(m)
                    acc = torch.zeros(
                        (*q.shape[:-1], v.shape[-1]), dtype=q.dtype, device=q.device
                    )
                    query_pos = torch.arange(L_q, device=q.device).unsqueeze(-1)  # (L_q, 1)
                    for start in range(0, L_k, chunk_size):
                        k_b = k[..., start : start + chunk_size, :]
                        v_b = v[..., start : start + chunk_size, :]
                        s = q @ k_b.transpose(-2, -1)  # (..., L_q, C)
                        if causal:
                            key_pos = torch.arange(start, start + k_b.shape[-2], device=q.device)
                            s = s.masked_fill(key_pos > query_pos, float("-inf"))
                        m_new = torch.maximum(m, s.amax(dim=-1, keepdim=True))
                        alpha = torch.exp(m - m_new)
                        p = torch.exp(s - m_new)
                        l = alpha * l + p.sum(dim=-1, keepdim=True)
                        acc = alpha * acc + p @ v_b.to(q.dtype)
                        m = m_new
                    return (acc / l).to(q.dtype)
                '''
            )
        },
        {"test_chunked_attention_causal": "with L_q = 5, L_k = 7 the call returned normally"},
        # Issue 40's seventh blind corpus, graded blind on 451e037: not caught (the check tried
        # more queries than keys only).
    ),
    Mutant(
        "n07-01: the new maximum subtracted without its trailing axis",
        A,
        {
            "online_softmax_update": Rewrite(
                r'''
                def online_softmax_update(
                    running_max: Tensor, running_sum: Tensor, scores: Tensor
                ) -> tuple[Tensor, Tensor]:
                    """Fold scores (..., C) into running_max (...) and running_sum = Σ exp(s - max)."""
                    new_max = torch.maximum(running_max, scores.amax(dim=-1))
                    factor = torch.exp(running_max - new_max)  # 0 for a fresh row (m = -inf)
                    block_sum = torch.exp(scores - new_max).sum(dim=-1)
                    return new_max, running_sum * factor + block_sum
                '''
            )
        },
        {"test_online_softmax_update": "is subtracted from the scores (..., C) without a trailing"},
        # Issue 40's seventh blind corpus, graded blind on 451e037: counterexample; named since.
    ),
    Mutant(
        "n07-02: chunk_size=True accepted: isinstance(chunk_size, int) alone",
        A,
        {
            "chunked_attention": Rewrite(
                r'''
                def chunked_attention(
                    q: Tensor, k: Tensor, v: Tensor, chunk_size: int, causal: bool = False
                ) -> Tensor:
                    """Attention over key blocks.

                    q (..., L_q, d_k), k (..., L_k, d_k), v (..., L_k, d_v) -> (..., L_q, d_v).
                    """
                    if not isinstance(chunk_size, int) or chunk_size < 1:
                        raise ValueError(f"chunk_size must be a positive int, got {chunk_size!r}")
                    L_q, L_k = q.shape[-2], k.shape[-2]
                    if causal and L_q != L_k:
                        raise ValueError(f"causal attention needs L_q == L_k, got {L_q} and {L_k}")
                    q = q / math.sqrt(q.shape[-1])
                    m = torch.full((*q.shape[:-1], 1), float("-inf"), dtype=q.dtype, device=q.device)
                    l = torch.zeros_like(m)
                    acc = torch.zeros(
                        (*q.shape[:-1], v.shape[-1]), dtype=q.dtype, device=q.device
                    )
                    query_pos = torch.arange(L_q, device=q.device).unsqueeze(-1)  # (L_q, 1)
                    for start in range(0, L_k, chunk_size):
                        k_b = k[..., start : start + chunk_size, :]
                        v_b = v[..., start : start + chunk_size, :]
                        s = q @ k_b.transpose(-2, -1)  # (..., L_q, C)
                        if causal:
                            key_pos = torch.arange(start, start + k_b.shape[-2], device=q.device)
                            s = s.masked_fill(key_pos > query_pos, float("-inf"))
                        m_new = torch.maximum(m, s.amax(dim=-1, keepdim=True))
                        alpha = torch.exp(m - m_new)
                        p = torch.exp(s - m_new)
                        l = alpha * l + p.sum(dim=-1, keepdim=True)
                        acc = alpha * acc + p @ v_b.to(q.dtype)
                        m = m_new
                    return (acc / l).to(q.dtype)
                '''
            )
        },
        {"test_chunked_attention_exact": "chunk_size=True must raise ValueError"},
        # Issue 40's seventh blind corpus, graded blind on 451e037: named.
    ),
    Mutant(
        "n07-03: the running maximum starts at 0, not -inf",
        A,
        {
            "chunked_attention": Rewrite(
                r'''
                def chunked_attention(
                    q: Tensor, k: Tensor, v: Tensor, chunk_size: int, causal: bool = False
                ) -> Tensor:
                    """Attention over key blocks.

                    q (..., L_q, d_k), k (..., L_k, d_k), v (..., L_k, d_v) -> (..., L_q, d_v).
                    """
                    if isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or chunk_size < 1:
                        raise ValueError(f"chunk_size must be a positive int, got {chunk_size!r}")
                    L_q, L_k = q.shape[-2], k.shape[-2]
                    if causal and L_q != L_k:
                        raise ValueError(f"causal attention needs L_q == L_k, got {L_q} and {L_k}")
                    q = q / math.sqrt(q.shape[-1])
                    m = torch.zeros((*q.shape[:-1], 1), dtype=q.dtype, device=q.device)  # running max
                    l = torch.zeros_like(m)
                    acc = torch.zeros(
                        (*q.shape[:-1], v.shape[-1]), dtype=q.dtype, device=q.device
                    )
                    query_pos = torch.arange(L_q, device=q.device).unsqueeze(-1)  # (L_q, 1)
                    for start in range(0, L_k, chunk_size):
                        k_b = k[..., start : start + chunk_size, :]
                        v_b = v[..., start : start + chunk_size, :]
                        s = q @ k_b.transpose(-2, -1)  # (..., L_q, C)
                        if causal:
                            key_pos = torch.arange(start, start + k_b.shape[-2], device=q.device)
                            s = s.masked_fill(key_pos > query_pos, float("-inf"))
                        m_new = torch.maximum(m, s.amax(dim=-1, keepdim=True))
                        alpha = torch.exp(m - m_new)
                        p = torch.exp(s - m_new)
                        l = alpha * l + p.sum(dim=-1, keepdim=True)
                        acc = alpha * acc + p @ v_b.to(q.dtype)
                        m = m_new
                    return (acc / l).to(q.dtype)
                '''
            )
        },
        {"test_chunked_attention_exact": "the running max starts at 0 instead of -inf"},
        # Issue 40's seventh blind corpus, graded blind on 451e037: named.
    ),
    Mutant(
        "n07-04: b moved to a's maximum, not to the larger of the two",
        A,
        {
            "merge_partials": Rewrite(
                r'''
                def partial_attention(q: Tensor, k: Tensor, v: Tensor):
                    """The partial result of q (..., L_q, d_k) over the keys k (..., L_k, d_k).

                    v is (..., L_k, d_v); the result is a tuple (or a dict) of tensors of your design.
                    """
                    # Design: (m, l, a), Section 3's running numbers for these keys: m (..., L_q, 1) the
                    # largest scaled score, l = sum exp(s - m) (..., L_q, 1), a = sum exp(s - m) v
                    # (..., L_q, d_v). Their size does not depend on L_k. Two parts are moved to the
                    # larger of their maxima (multiplying l and a by exp(m_part - m), <= 1, so nothing
                    # overflows) and added: the exact numbers of the union of the keys. Max and + are
                    # commutative and associative, so the order of merging does not matter.
                    s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])  # (..., L_q, L_k)
                    m = s.amax(dim=-1, keepdim=True)
                    e = torch.exp(s - m)
                    return (m, e.sum(dim=-1, keepdim=True), e @ v.to(q.dtype))


                def merge_partials(a, b):
                    """The partial result over the keys of a and of b (disjoint, the same queries)."""
                    m_a, l_a, acc_a = a
                    m_b, l_b, acc_b = b
                    m = m_a  # keep a's maximum as the reference, move b to it
                    f_a, f_b = torch.ones_like(m_a), torch.exp(m_b - m_a)
                    return (m, l_a * f_a + l_b * f_b, acc_a * f_a + acc_b * f_b)


                def finish_attention(p) -> Tensor:
                    """The attention output (..., L_q, d_v) over every key merged into p."""
                    m, l, acc = p
                    return acc / l
                '''
            )
        },
        {
            "test_merge_partials": "merge_partials measures one argument's part against the other argument's reference"
        },
        # Issue 40's seventh blind corpus, graded blind on 451e037: named.
    ),
    Mutant(
        "p07-01: exp of the raw scores, divided by exp(new_max) afterwards",
        A,
        {
            "online_softmax_update": Rewrite(
                r'''
                # kind: wrong
                # grade_id: online_softmax_update
                # mistake: exponentiates the raw scores and divides by exp(new_max) afterwards instead of subtracting the maximum first, so scores near 1000 overflow to inf and give a non-finite sum.
                # evidence: tools/ev07.py: the notebook's scores near 1000 give running sum [nan] (mine 1.417683 = exact).
                def online_softmax_update(
                    running_max: Tensor, running_sum: Tensor, scores: Tensor
                ) -> tuple[Tensor, Tensor]:
                    """Fold scores (..., C) into running_max (...) and running_sum = Σ exp(s - max)."""
                    new_max = torch.maximum(running_max, scores.amax(dim=-1))
                    factor = torch.exp(running_max - new_max)
                    # exp(s - m) = exp(s) / exp(m)
                    block_sum = torch.exp(scores).sum(dim=-1) / torch.exp(new_max)
                    return new_max, running_sum * factor + block_sum
                '''
            )
        },
        {
            "test_online_softmax_update": "exp overflows for large scores: subtract the running max before exponentiating"
        },
        # Issue 40's seventh blind corpus, graded blind on 451e037: named.
    ),
    Mutant(
        "p07-02: chunk_size=True accepted: isinstance(chunk_size, int) alone",
        A,
        {
            "chunked_attention": Rewrite(
                r'''
                # kind: wrong
                # grade_id: chunked_attention
                # mistake: the chunk_size check uses isinstance(chunk_size, int) alone, so the bool True (an int subclass) is accepted as chunk size 1 instead of raising ValueError as the statement requires.
                # evidence: tools/ev07.py: chunk_size=True returns an output instead of raising ValueError (mine raises).
                def chunked_attention(
                    q: Tensor, k: Tensor, v: Tensor, chunk_size: int, causal: bool = False
                ) -> Tensor:
                    """Attention over key blocks."""
                    if not isinstance(chunk_size, int) or chunk_size < 1:
                        raise ValueError(f"chunk_size must be a positive int, got {chunk_size!r}")
                    L_q, L_k = q.shape[-2], k.shape[-2]
                    if causal and L_q != L_k:
                        raise ValueError(f"causal attention needs L_q == L_k, got {L_q} and {L_k}")
                    q = q / math.sqrt(q.shape[-1])
                    m = torch.full((*q.shape[:-1], 1), -math.inf, dtype=q.dtype, device=q.device)
                    l = torch.zeros_like(m)
                    acc = torch.zeros((*q.shape[:-1], v.shape[-1]), dtype=q.dtype, device=q.device)
                    query_pos = torch.arange(L_q, device=q.device).unsqueeze(1)  # (L_q, 1)
                    for start in range(0, L_k, chunk_size):
                        kb = k[..., start : start + chunk_size, :]
                        vb = v[..., start : start + chunk_size, :]
                        s = q @ kb.transpose(-2, -1)  # (..., L_q, C)
                        if causal:
                            key_pos = torch.arange(start, start + kb.shape[-2], device=q.device)
                            s = s.masked_fill(key_pos > query_pos, -math.inf)
                        m_new = torch.maximum(m, s.amax(dim=-1, keepdim=True))
                        alpha = torch.exp(m - m_new)
                        p = torch.exp(s - m_new)
                        l = alpha * l + p.sum(dim=-1, keepdim=True)
                        acc = alpha * acc + p @ vb
                        m = m_new
                    return (acc / l).to(q.dtype)
                '''
            )
        },
        {"test_chunked_attention_exact": "chunk_size=True must raise ValueError"},
        # Issue 40's seventh blind corpus, graded blind on 451e037: named.
    ),
    Mutant(
        "p07-03: the running maximum starts at 0, not -inf",
        A,
        {
            "chunked_attention": Rewrite(
                r'''
                # kind: wrong
                # grade_id: chunked_attention
                # mistake: starts the running maximum at 0 instead of -inf, so for a query whose scores are all very negative (below about -104 in float32) every exp(s - 0) underflows to 0 and the output is 0/0 = NaN.
                # evidence: tools/ev07.py: a query whose scaled scores all lie in [-147, -134] (float32) gets a NaN output row (mine matches softmax attention to 2.4e-7).
                def chunked_attention(
                    q: Tensor, k: Tensor, v: Tensor, chunk_size: int, causal: bool = False
                ) -> Tensor:
                    """Attention over key blocks."""
                    if isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or chunk_size < 1:
                        raise ValueError(f"chunk_size must be a positive int, got {chunk_size!r}")
                    L_q, L_k = q.shape[-2], k.shape[-2]
                    if causal and L_q != L_k:
                        raise ValueError(f"causal attention needs L_q == L_k, got {L_q} and {L_k}")
                    q = q / math.sqrt(q.shape[-1])
                    m = torch.zeros((*q.shape[:-1], 1), dtype=q.dtype, device=q.device)
                    l = torch.zeros_like(m)
                    acc = torch.zeros((*q.shape[:-1], v.shape[-1]), dtype=q.dtype, device=q.device)
                    query_pos = torch.arange(L_q, device=q.device).unsqueeze(1)  # (L_q, 1)
                    for start in range(0, L_k, chunk_size):
                        kb = k[..., start : start + chunk_size, :]
                        vb = v[..., start : start + chunk_size, :]
                        s = q @ kb.transpose(-2, -1)  # (..., L_q, C)
                        if causal:
                            key_pos = torch.arange(start, start + kb.shape[-2], device=q.device)
                            s = s.masked_fill(key_pos > query_pos, -math.inf)
                        m_new = torch.maximum(m, s.amax(dim=-1, keepdim=True))
                        alpha = torch.exp(m - m_new)
                        p = torch.exp(s - m_new)
                        l = alpha * l + p.sum(dim=-1, keepdim=True)
                        acc = alpha * acc + p @ vb
                        m = m_new
                    return (acc / l).to(q.dtype)
                '''
            )
        },
        {"test_chunked_attention_exact": "the running max starts at 0 instead of -inf"},
        # Issue 40's seventh blind corpus, graded blind on 451e037: named.
    ),
    Mutant(
        "p07-05: each block's causal mask ignores the block's offset",
        A,
        {
            "chunked_attention": Rewrite(
                r'''
                # kind: wrong
                # grade_id: chunked_attention
                # mistake: the causal mask of a block compares the query position with the key's index INSIDE the block (0..C-1) instead of its position start + c, so later blocks let queries see future keys and hide past ones.
                # evidence: tools/ev07.py: causal, L = 10, chunk 4: query rows 0..8 differ from causal attention (mine: none).
                def chunked_attention(
                    q: Tensor, k: Tensor, v: Tensor, chunk_size: int, causal: bool = False
                ) -> Tensor:
                    """Attention over key blocks."""
                    if isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or chunk_size < 1:
                        raise ValueError(f"chunk_size must be a positive int, got {chunk_size!r}")
                    L_q, L_k = q.shape[-2], k.shape[-2]
                    if causal and L_q != L_k:
                        raise ValueError(f"causal attention needs L_q == L_k, got {L_q} and {L_k}")
                    q = q / math.sqrt(q.shape[-1])
                    m = torch.full((*q.shape[:-1], 1), -math.inf, dtype=q.dtype, device=q.device)
                    l = torch.zeros_like(m)
                    acc = torch.zeros((*q.shape[:-1], v.shape[-1]), dtype=q.dtype, device=q.device)
                    query_pos = torch.arange(L_q, device=q.device).unsqueeze(1)  # (L_q, 1)
                    for start in range(0, L_k, chunk_size):
                        kb = k[..., start : start + chunk_size, :]
                        vb = v[..., start : start + chunk_size, :]
                        s = q @ kb.transpose(-2, -1)  # (..., L_q, C)
                        if causal:
                            key_pos = torch.arange(kb.shape[-2], device=q.device)  # keys of this block
                            s = s.masked_fill(key_pos > query_pos, -math.inf)
                        m_new = torch.maximum(m, s.amax(dim=-1, keepdim=True))
                        alpha = torch.exp(m - m_new)
                        p = torch.exp(s - m_new)
                        l = alpha * l + p.sum(dim=-1, keepdim=True)
                        acc = alpha * acc + p @ vb
                        m = m_new
                    return (acc / l).to(q.dtype)
                '''
            )
        },
        {"test_chunked_attention_causal": "the causal mask ignores the block's offset"},
        # Issue 40's seventh blind corpus, graded blind on 451e037: named.
    ),
    Mutant(
        "q07-04: causal block max taken before the -inf fill",
        A,
        {
            "chunked_attention": Rewrite(
                r'''
                def chunked_attention(
                    q: Tensor, k: Tensor, v: Tensor, chunk_size: int, causal: bool = False
                ) -> Tensor:
                    """Attention over key blocks.

                    q (..., L_q, d_k), k (..., L_k, d_k), v (..., L_k, d_v) -> (..., L_q, d_v).
                    """
                    if isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or chunk_size < 1:
                        raise ValueError(f"chunk_size must be a positive int, got {chunk_size!r}")
                    L_q, L_k = q.shape[-2], k.shape[-2]
                    if causal and L_q != L_k:
                        raise ValueError(f"causal=True needs L_q == L_k, got {L_q} and {L_k}")
                    q = q / math.sqrt(q.shape[-1])
                    m = torch.full((*q.shape[:-1], 1), -math.inf, dtype=q.dtype, device=q.device)
                    l = torch.zeros_like(m)
                    acc = torch.zeros(*q.shape[:-1], v.shape[-1], dtype=q.dtype, device=q.device)
                    query_pos = torch.arange(L_q, device=q.device).unsqueeze(1)  # (L_q, 1)
                    for start in range(0, L_k, chunk_size):
                        k_b = k[..., start : start + chunk_size, :]
                        v_b = v[..., start : start + chunk_size, :]
                        s = q @ k_b.transpose(-2, -1)  # (..., L_q, C)
                        m_new = torch.maximum(m, s.amax(dim=-1, keepdim=True))
                        if causal:
                            key_pos = torch.arange(start, start + k_b.shape[-2], device=q.device)
                            s = s.masked_fill(key_pos > query_pos, -math.inf)  # (L_q, C) mask
                        alpha = torch.exp(m - m_new)
                        p = torch.exp(s - m_new)
                        l = alpha * l + p.sum(dim=-1, keepdim=True)
                        acc = alpha * acc + p @ v_b.to(q.dtype)
                        m = m_new
                    return (acc / l).to(q.dtype)
                '''
            )
        },
        {
            "test_chunked_attention_causal": "the block's maximum includes keys the causal mask hides"
        },
        # Issue 40's eighth blind corpus, graded blind on 47d54b0: not caught (caught since).
    ),
    Mutant(
        "p07-04: merge_partials rescales and adds into its arguments' tensors in place",
        A,
        {
            "merge_partials": Rewrite(
                r'''
                # kind: wrong
                # grade_id: merge_partials
                # mistake: merge_partials rescales and accumulates into the tensors of its inputs in place (mul_/add_), so the caller's partial results are silently changed and reusing a partial result in a second merge gives a wrong output.
                # evidence: tools/ev07.py: three partials merged as ((a,b),c) are exact (4e-16) but the same partial objects merged again as ((c,a),b) are off by 0.16 (mine 4e-16 both times), because the first merge overwrote a's tensors.
                def partial_attention(q: Tensor, k: Tensor, v: Tensor):
                    """The partial result of q (..., L_q, d_k) over the keys k (..., L_k, d_k)."""
                    # Design: (m, l, a) per query: the part's largest scaled score m, the sum
                    # l = sum exp(s - m) and the accumulator a = sum exp(s - m) v. Its size does
                    # not depend on the number of keys.
                    s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
                    m = s.amax(dim=-1, keepdim=True)
                    p = torch.exp(s - m)
                    return (m, p.sum(dim=-1, keepdim=True), p @ v)


                def merge_partials(a, b):
                    """The partial result over the keys of a and of b (disjoint, the same queries)."""
                    # Move both parts to the common maximum and add; done in place into a's
                    # tensors to avoid allocating new ones (as a GPU kernel would).
                    m_a, l_a, acc_a = a
                    m_b, l_b, acc_b = b
                    m = torch.maximum(m_a, m_b)
                    fa, fb = torch.exp(m_a - m), torch.exp(m_b - m)
                    l_a.mul_(fa).add_(fb * l_b)
                    acc_a.mul_(fa).add_(fb * acc_b)
                    m_a.copy_(m)
                    return (m_a, l_a, acc_a)


                def finish_attention(p) -> Tensor:
                    """The attention output (..., L_q, d_v) over every key merged into p."""
                    m, l, acc = p
                    return acc / l
                '''
            )
        },
        {"test_merge_partials": "`merge_partials` changed a tensor it was given, in place"},
        makes=("inputs.written_in_place",),
        # Issue 40's seventh blind corpus, graded blind on 451e037: not caught (caught since).
    ),
    Mutant(
        "r07-05: merge_partials updates its first argument's tensors in place",
        A,
        {
            "merge_partials": Rewrite(
                r'''
                # id: r07-05
                # kind: wrong
                # grade_id: merge_partials
                # mistake: merge_partials updates the tensors of its first argument IN PLACE and returns them, so after merge_partials(a, b) the partial result a itself holds a+b; merging a again (another grouping or order of the same parts) counts b's keys twice.
                # evidence: my experiment (scripts ev0N.py, output ev0N.txt in /work/fresh-corpus8b):
                #   r07-05: correct ((a,b),c) vs F.sdpa 2.220446049250313e-16 | then (a,(b,c)) with the same part objects vs F.sdpa 2.220446049250313e-16
                #   r07-05: r07-05 ((a,b),c) vs F.sdpa 2.220446049250313e-16 | then (a,(b,c)) with the same part objects vs F.sdpa 0.24909496311392348
                # public checks: passes every public check of the notebook
                def partial_attention(q: Tensor, k: Tensor, v: Tensor):
                    """The partial result of q (..., L_q, d_k) over the keys k (..., L_k, d_k).

                    v is (..., L_k, d_v); the result is a tuple (or a dict) of tensors of your design.
                    """
                    # Design: (m, l, a) per query: m the largest score over this part's keys,
                    # l = sum exp(s - m) and a = sum exp(s - m) v. Moving l and a to another maximum
                    # M only needs the factor exp(m - M), so two parts merge exactly, in any order,
                    # and the size does not depend on the number of keys. The merge works in place,
                    # like the running numbers of a flash kernel, so it allocates nothing new.
                    s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
                    m = s.amax(dim=-1, keepdim=True)
                    p = torch.exp(s - m)
                    return (m, p.sum(dim=-1, keepdim=True), p @ v)


                def merge_partials(a, b):
                    """The partial result over the keys of a and of b (disjoint, the same queries)."""
                    m_a, l_a, acc_a = a
                    m_b, l_b, acc_b = b
                    m = torch.maximum(m_a, m_b)
                    f_a, f_b = torch.exp(m_a - m), torch.exp(m_b - m)
                    l_a.mul_(f_a).add_(l_b * f_b)
                    acc_a.mul_(f_a).add_(acc_b * f_b)
                    m_a.copy_(m)
                    return a


                def finish_attention(p) -> Tensor:
                    """The attention output (..., L_q, d_v) over every key merged into p."""
                    m, l, acc = p
                    return acc / l
                '''
            )
        },
        {"test_merge_partials": "`merge_partials` changed a tensor it was given, in place"},
        makes=("inputs.written_in_place",),
        in_notebook=True,  # a write into a partial result, seen across the kernel too
        # Issue 40's eighth blind corpus, graded blind on 47d54b0: not caught (caught since).
    ),
    Mutant(
        "q07-01: online_softmax_update exponentiates the raw scores",
        A,
        {
            "online_softmax_update": Rewrite(
                r'''
                def online_softmax_update(
                    running_max: Tensor, running_sum: Tensor, scores: Tensor
                ) -> tuple[Tensor, Tensor]:
                    """Fold scores (..., C) into running_max (...) and running_sum = Σ exp(s - max)."""
                    new_max = torch.maximum(running_max, scores.amax(dim=-1))
                    factor = torch.exp(running_max - new_max)  # exp(-inf) = 0 for a fresh row
                    new_sum = running_sum * factor + torch.exp(scores).sum(dim=-1) * torch.exp(-new_max)
                    return new_max, new_sum
                '''
            )
        },
        {"test_online_softmax_update": "exp overflows for large scores"},
        # Issue 40's eighth blind corpus, graded blind on 47d54b0: named.
    ),
    Mutant(
        "q07-02: chunked_attention accepts chunk_size=True",
        A,
        {
            "chunked_attention": Rewrite(
                r'''
                def chunked_attention(
                    q: Tensor, k: Tensor, v: Tensor, chunk_size: int, causal: bool = False
                ) -> Tensor:
                    """Attention over key blocks.

                    q (..., L_q, d_k), k (..., L_k, d_k), v (..., L_k, d_v) -> (..., L_q, d_v).
                    """
                    if not isinstance(chunk_size, int) or chunk_size < 1:
                        raise ValueError(f"chunk_size must be a positive int, got {chunk_size!r}")
                    L_q, L_k = q.shape[-2], k.shape[-2]
                    if causal and L_q != L_k:
                        raise ValueError(f"causal=True needs L_q == L_k, got {L_q} and {L_k}")
                    q = q / math.sqrt(q.shape[-1])
                    m = torch.full((*q.shape[:-1], 1), -math.inf, dtype=q.dtype, device=q.device)
                    l = torch.zeros_like(m)
                    acc = torch.zeros(*q.shape[:-1], v.shape[-1], dtype=q.dtype, device=q.device)
                    query_pos = torch.arange(L_q, device=q.device).unsqueeze(1)  # (L_q, 1)
                    for start in range(0, L_k, chunk_size):
                        k_b = k[..., start : start + chunk_size, :]
                        v_b = v[..., start : start + chunk_size, :]
                        s = q @ k_b.transpose(-2, -1)  # (..., L_q, C)
                        if causal:
                            key_pos = torch.arange(start, start + k_b.shape[-2], device=q.device)
                            s = s.masked_fill(key_pos > query_pos, -math.inf)  # (L_q, C) mask
                        m_new = torch.maximum(m, s.amax(dim=-1, keepdim=True))
                        alpha = torch.exp(m - m_new)
                        p = torch.exp(s - m_new)
                        l = alpha * l + p.sum(dim=-1, keepdim=True)
                        acc = alpha * acc + p @ v_b.to(q.dtype)
                        m = m_new
                    return (acc / l).to(q.dtype)
                '''
            )
        },
        {"test_chunked_attention_exact": "chunk_size=True must raise ValueError"},
        # Issue 40's eighth blind corpus, graded blind on 47d54b0: named.
    ),
    Mutant(
        "q07-03: causal chunked_attention builds the whole (L, L) mask",
        A,
        {
            "chunked_attention": Rewrite(
                r'''
                def chunked_attention(
                    q: Tensor, k: Tensor, v: Tensor, chunk_size: int, causal: bool = False
                ) -> Tensor:
                    """Attention over key blocks.

                    q (..., L_q, d_k), k (..., L_k, d_k), v (..., L_k, d_v) -> (..., L_q, d_v).
                    """
                    if isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or chunk_size < 1:
                        raise ValueError(f"chunk_size must be a positive int, got {chunk_size!r}")
                    L_q, L_k = q.shape[-2], k.shape[-2]
                    if causal and L_q != L_k:
                        raise ValueError(f"causal=True needs L_q == L_k, got {L_q} and {L_k}")
                    q = q / math.sqrt(q.shape[-1])
                    m = torch.full((*q.shape[:-1], 1), -math.inf, dtype=q.dtype, device=q.device)
                    l = torch.zeros_like(m)
                    acc = torch.zeros(*q.shape[:-1], v.shape[-1], dtype=q.dtype, device=q.device)
                    full_mask = causal_mask(L_q).to(q.device) if causal else None
                    for start in range(0, L_k, chunk_size):
                        k_b = k[..., start : start + chunk_size, :]
                        v_b = v[..., start : start + chunk_size, :]
                        s = q @ k_b.transpose(-2, -1)  # (..., L_q, C)
                        if causal:
                            block_mask = full_mask[:, start : start + k_b.shape[-2]]  # (L_q, C)
                            s = s.masked_fill(~block_mask, -math.inf)
                        m_new = torch.maximum(m, s.amax(dim=-1, keepdim=True))
                        alpha = torch.exp(m - m_new)
                        p = torch.exp(s - m_new)
                        l = alpha * l + p.sum(dim=-1, keepdim=True)
                        acc = alpha * acc + p @ v_b.to(q.dtype)
                        m = m_new
                    return (acc / l).to(q.dtype)
                '''
            )
        },
        {
            "test_chunked_attention_memory": "with causal=True, and only then, memory grows quadratically"
        },
        # Issue 40's eighth blind corpus, graded blind on 47d54b0: named.
    ),
    Mutant(
        "q07-05: merge_partials moves b onto a's maximum, not the larger one",
        A,
        {
            "merge_partials": Rewrite(
                r'''
                def partial_attention(q: Tensor, k: Tensor, v: Tensor):
                    """The partial result of q (..., L_q, d_k) over the keys k (..., L_k, d_k).

                    v is (..., L_k, d_v); the result is a tuple (or a dict) of tensors of your design.
                    """
                    # Design: (m, l, a) per query: m the largest score over these keys (..., L_q, 1),
                    # l = sum exp(s - m) (..., L_q, 1), a = sum exp(s - m) v (..., L_q, d_v). Their size
                    # does not depend on the number of keys. Merging moves both parts to the larger
                    # maximum (multiplying by exp(m_part - m) <= 1, so nothing overflows) and adds:
                    # exactly the sums over the union of the keys; max and + are associative and
                    # commutative, so the order and grouping do not matter.
                    s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
                    m = s.amax(dim=-1, keepdim=True)
                    p = torch.exp(s - m)
                    return (m, p.sum(dim=-1, keepdim=True), p @ v.to(q.dtype))


                def merge_partials(a, b):
                    """The partial result over the keys of a and of b (disjoint, the same queries)."""
                    m_a, l_a, acc_a = a
                    m_b, l_b, acc_b = b
                    # a is the running result: keep its maximum and bring b onto it
                    f_b = torch.exp(m_b - m_a)
                    return (m_a, l_a + f_b * l_b, acc_a + f_b * acc_b)


                def finish_attention(p) -> Tensor:
                    """The attention output (..., L_q, d_v) over every key merged into p."""
                    m, l, acc = p
                    return acc / l
                '''
            )
        },
        {
            "test_merge_partials": "merge_partials measures one argument's part against the other argument's reference"
        },
        # Issue 40's eighth blind corpus, graded blind on 47d54b0: named.
    ),
    Mutant(
        "r07-01: online_softmax_update measures a block against its own maximum",
        A,
        {
            "online_softmax_update": Rewrite(
                r'''
                # id: r07-01
                # kind: wrong
                # grade_id: online_softmax_update
                # mistake: exponentiates the new block relative to the BLOCK's own maximum instead of the new running maximum, so when a block's maximum is below the running maximum its terms are too large by exp(running_max - block_max).
                # evidence: my experiment (scripts ev0N.py, output ev0N.txt in /work/fresh-corpus8b):
                #   r07-01: correct blocks [5,1] then [2,3]: max 5.0 sum 1.2034
                #   r07-01: r07-01 blocks [5,1] then [2,3]: max 5.0 sum 2.3862
                #   r07-01: direct sum exp(s - 5) = 1.2034
                # public checks: FAILS public check(s): ERROR in test_online_softmax_update: AssertionError: the running sum must equal sum(exp(s - max)) over all scores (10 of 12 values differ; first at index (0, 2): got 3.20713, expected 1.33066)
                def online_softmax_update(
                    running_max: Tensor, running_sum: Tensor, scores: Tensor
                ) -> tuple[Tensor, Tensor]:
                    """Fold scores (..., C) into running_max (...) and running_sum = Σ exp(s - max)."""
                    block_max = scores.amax(dim=-1)
                    new_max = torch.maximum(running_max, block_max)
                    factor = torch.exp(running_max - new_max)
                    block_sum = torch.exp(scores - block_max.unsqueeze(-1)).sum(dim=-1)
                    return new_max, running_sum * factor + block_sum
                '''
            )
        },
        {
            "test_online_softmax_update": "each block's terms are measured against the block's own max"
        },
        # Issue 40's eighth blind corpus, graded blind on 47d54b0: named.
    ),
    Mutant(
        "r07-02: chunked_attention accepts chunk_size=True",
        A,
        {
            "chunked_attention": Rewrite(
                r'''
                # id: r07-02
                # kind: wrong
                # grade_id: chunked_attention
                # mistake: validates chunk_size with isinstance(chunk_size, int) only, so a bool (True, which is an int subclass) is accepted as chunk_size 1 instead of raising ValueError as the statement requires.
                # evidence: my experiment (scripts ev0N.py, output ev0N.txt in /work/fresh-corpus8b):
                #   r07-02: correct chunk_size=True -> ValueError: chunk_size must be a positive int, got True
                #   r07-02: r07-02 chunk_size=True accepted (no ValueError)
                # public checks: passes every public check of the notebook
                def chunked_attention(
                    q: Tensor, k: Tensor, v: Tensor, chunk_size: int, causal: bool = False
                ) -> Tensor:
                    """Attention over key blocks.

                    q (..., L_q, d_k), k (..., L_k, d_k), v (..., L_k, d_v) -> (..., L_q, d_v).
                    """
                    if not isinstance(chunk_size, int) or chunk_size < 1:
                        raise ValueError(f"chunk_size must be a positive int, got {chunk_size!r}")
                    len_q, len_k = q.shape[-2], k.shape[-2]
                    if causal and len_q != len_k:
                        raise ValueError(f"causal attention needs L_q == L_k, got {len_q} and {len_k}")
                    q = q / math.sqrt(q.shape[-1])
                    m = torch.full((*q.shape[:-1], 1), float("-inf"), dtype=q.dtype, device=q.device)
                    l = torch.zeros((*q.shape[:-1], 1), dtype=q.dtype, device=q.device)
                    acc = torch.zeros((*q.shape[:-1], v.shape[-1]), dtype=q.dtype, device=q.device)
                    q_pos = torch.arange(len_q, device=q.device).unsqueeze(-1)  # (L_q, 1)
                    for start in range(0, len_k, chunk_size):
                        k_b = k[..., start : start + chunk_size, :]
                        v_b = v[..., start : start + chunk_size, :]
                        s = q @ k_b.transpose(-2, -1)  # (..., L_q, C)
                        if causal:
                            k_pos = torch.arange(start, start + k_b.shape[-2], device=q.device)
                            s = s.masked_fill(k_pos > q_pos, float("-inf"))
                        m_new = torch.maximum(m, s.amax(dim=-1, keepdim=True))
                        alpha = torch.exp(m - m_new)
                        p = torch.exp(s - m_new)
                        l = alpha * l + p.sum(dim=-1, keepdim=True)
                        acc = alpha * acc + p @ v_b
                        m = m_new
                    return acc / l
                '''
            )
        },
        {"test_chunked_attention_exact": "chunk_size=True must raise ValueError"},
        # Issue 40's eighth blind corpus, graded blind on 47d54b0: named.
    ),
    Mutant(
        "r07-03: chunked_attention never rescales the accumulator",
        A,
        {
            "chunked_attention": Rewrite(
                r'''
                # id: r07-03
                # kind: wrong
                # grade_id: chunked_attention
                # mistake: rescales the running denominator l by alpha when the maximum grows but forgets to rescale the accumulator a (a = a + P_b V_b instead of alpha * a + P_b V_b), so earlier blocks are over-weighted whenever a later block raises the maximum.
                # evidence: my experiment (scripts ev0N.py, output ev0N.txt in /work/fresh-corpus8b):
                #   r07-03: chunk 3, float64: max |correct - F.sdpa| 1.2663481374630692e-16 | max |wrong - F.sdpa| 0.17641389067967356
                # public checks: FAILS public check(s): ERROR in test_chunked_attention_exact: AssertionError: chunk_size=4 (L_k = 29): the output differs from the reference (1134 of 1332 values differ; first at index (0, 0, 0, 0): got 0.496269, expected 0.323205); ERROR in test_chunked_attention_causal: AssertionError: causal, chunk_size=5: the output differs from the reference (the index is (batch, head, query position, feature)) (366 of 828 values d
                def chunked_attention(
                    q: Tensor, k: Tensor, v: Tensor, chunk_size: int, causal: bool = False
                ) -> Tensor:
                    """Attention over key blocks.

                    q (..., L_q, d_k), k (..., L_k, d_k), v (..., L_k, d_v) -> (..., L_q, d_v).
                    """
                    if isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or chunk_size < 1:
                        raise ValueError(f"chunk_size must be a positive int, got {chunk_size!r}")
                    len_q, len_k = q.shape[-2], k.shape[-2]
                    if causal and len_q != len_k:
                        raise ValueError(f"causal attention needs L_q == L_k, got {len_q} and {len_k}")
                    q = q / math.sqrt(q.shape[-1])
                    m = torch.full((*q.shape[:-1], 1), float("-inf"), dtype=q.dtype, device=q.device)
                    l = torch.zeros((*q.shape[:-1], 1), dtype=q.dtype, device=q.device)
                    acc = torch.zeros((*q.shape[:-1], v.shape[-1]), dtype=q.dtype, device=q.device)
                    q_pos = torch.arange(len_q, device=q.device).unsqueeze(-1)  # (L_q, 1)
                    for start in range(0, len_k, chunk_size):
                        k_b = k[..., start : start + chunk_size, :]
                        v_b = v[..., start : start + chunk_size, :]
                        s = q @ k_b.transpose(-2, -1)  # (..., L_q, C)
                        if causal:
                            k_pos = torch.arange(start, start + k_b.shape[-2], device=q.device)
                            s = s.masked_fill(k_pos > q_pos, float("-inf"))
                        m_new = torch.maximum(m, s.amax(dim=-1, keepdim=True))
                        alpha = torch.exp(m - m_new)
                        p = torch.exp(s - m_new)
                        l = alpha * l + p.sum(dim=-1, keepdim=True)
                        acc = acc + p @ v_b
                        m = m_new
                    return acc / l
                '''
            )
        },
        {
            "test_chunked_attention_exact": "the accumulator is not rescaled when the running max grows",
            "test_chunked_attention_causal": "the accumulator is not rescaled when the running max grows",
        },
        # Issue 40's eighth blind corpus, graded blind on 47d54b0: named.
    ),
    Mutant(
        "r07-04: partial_attention transposes k with transpose(2, 3), 4-D inputs only",
        A,
        {
            "merge_partials": Rewrite(
                r'''
                # id: r07-04
                # kind: wrong
                # grade_id: merge_partials
                # mistake: partial_attention transposes the keys with k.transpose(2, 3), which only works for 4-D (B, H, L, d) inputs: with no leading dims (or one, or three) it raises or swaps the wrong axes, although the statement allows any number of leading dims, including none.
                # evidence: my experiment (scripts ev0N.py, output ev0N.txt in /work/fresh-corpus8b):
                #   r07-04: correct no leading dims: max |out - F.sdpa| 4.440892098500626e-16
                #   r07-04: correct one leading dim: ok, max err 4.440892098500626e-16
                #   r07-04: r07-04 no leading dims (q (5, 4)) raised IndexError Dimension out of range (expected to be in range of [-2, 1], but got 2)
                #   r07-04: r07-04 one leading dim (q (1, 5, 4)) raised IndexError Dimension out of range (expected to be in range of [-3, 2], but got 3)
                # public checks: passes every public check of the notebook
                def partial_attention(q: Tensor, k: Tensor, v: Tensor):
                    """The partial result of q (..., L_q, d_k) over the keys k (..., L_k, d_k).

                    v is (..., L_k, d_v); the result is a tuple (or a dict) of tensors of your design.
                    """
                    # Design: (m, l, a) per query: m the largest score over this part's keys,
                    # l = sum exp(s - m) and a = sum exp(s - m) v. Moving l and a to another maximum
                    # M only needs the factor exp(m - M), so two parts merge exactly, in any order,
                    # and the size does not depend on the number of keys.
                    s = q @ k.transpose(2, 3) / math.sqrt(q.shape[-1])  # (B, H, L_q, L_k)
                    m = s.amax(dim=-1, keepdim=True)
                    p = torch.exp(s - m)
                    return (m, p.sum(dim=-1, keepdim=True), p @ v)


                def merge_partials(a, b):
                    """The partial result over the keys of a and of b (disjoint, the same queries)."""
                    m_a, l_a, acc_a = a
                    m_b, l_b, acc_b = b
                    m = torch.maximum(m_a, m_b)
                    f_a, f_b = torch.exp(m_a - m), torch.exp(m_b - m)
                    return (m, l_a * f_a + l_b * f_b, acc_a * f_a + acc_b * f_b)


                def finish_attention(p) -> Tensor:
                    """The attention output (..., L_q, d_v) over every key merged into p."""
                    m, l, acc = p
                    return acc / l
                '''
            )
        },
        {"test_merge_partials": "the tensor has fewer axes than the code expects"},
        # Issue 40's eighth blind corpus, graded blind on 47d54b0: named.
    ),
    Mutant(
        "t07-05: partial results computed in float64, the output returned so",
        A,
        {
            "merge_partials": Rewrite(
                r'''
                def partial_attention(q: Tensor, k: Tensor, v: Tensor):
                    """The partial result of q (..., L_q, d_k) over the keys k (..., L_k, d_k).

                    v is (..., L_k, d_v); the result is a tuple (or a dict) of tensors of your design.
                    """
                    # A partial result is (m, l, acc): per query the largest score m over this part's
                    # keys, l = sum exp(s - m), and acc = sum exp(s - m) v (shape (..., L_q, d_v)).
                    # Its size does not depend on the number of keys. Merging moves both parts to the
                    # larger maximum (multiply by exp(m_part - m_new) <= 1, never overflows) and adds:
                    # exact, commutative and associative up to rounding.
                    q, k, v = q.double(), k.double(), v.double()  # float64 inside, for accuracy
                    s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
                    m = s.amax(dim=-1, keepdim=True)
                    p = torch.exp(s - m)
                    return (m, p.sum(dim=-1, keepdim=True), p @ v)


                def merge_partials(a, b):
                    """The partial result over the keys of a and of b (disjoint, the same queries)."""
                    m_a, l_a, acc_a = a
                    m_b, l_b, acc_b = b
                    m = torch.maximum(m_a, m_b)
                    fa, fb = torch.exp(m_a - m), torch.exp(m_b - m)
                    return (m, l_a * fa + l_b * fb, acc_a * fa + acc_b * fb)


                def finish_attention(p) -> Tensor:
                    """The attention output (..., L_q, d_v) over every key merged into p."""
                    _, l, acc = p
                    return acc / l
                '''
            )
        },
        {
            "test_merge_partials": "the partial results are computed in float64 and finish_attention returns the output without casting back"
        },
        # Issue 40's ninth blind corpus, graded blind on feb0b2e: counterexample (named since).
    ),
    Mutant(
        "s07-01: online softmax rescaled through raw exponentials",
        A,
        {
            "online_softmax_update": Rewrite(
                r'''
                def online_softmax_update(
                    running_max: Tensor, running_sum: Tensor, scores: Tensor
                ) -> tuple[Tensor, Tensor]:
                    """Fold scores (..., C) into running_max (...) and running_sum = Σ exp(s - max)."""
                    new_max = torch.maximum(running_max, scores.amax(dim=-1))
                    # back to absolute terms, add the block, then relative to the new max
                    total = running_sum * torch.exp(running_max) + torch.exp(scores).sum(dim=-1)
                    return new_max, total / torch.exp(new_max)
                '''
            )
        },
        {
            "test_online_softmax_update": "exp overflows for large scores",
        },
        # Issue 40's ninth blind corpus, graded blind on feb0b2e: named.
    ),
    Mutant(
        "s07-02: chunk_size=True accepted, a bool being an int",
        A,
        {
            "chunked_attention": Rewrite(
                r'''
                def chunked_attention(
                    q: Tensor, k: Tensor, v: Tensor, chunk_size: int, causal: bool = False
                ) -> Tensor:
                    """Attention over key blocks.

                    q (..., L_q, d_k), k (..., L_k, d_k), v (..., L_k, d_v) -> (..., L_q, d_v).
                    """
                    if not isinstance(chunk_size, int) or chunk_size < 1:
                        raise ValueError(f"chunk_size must be a positive int, got {chunk_size!r}")
                    L_q, L_k = q.shape[-2], k.shape[-2]
                    if causal and L_q != L_k:
                        raise ValueError(f"causal=True needs L_q == L_k, got {L_q} and {L_k}")
                    q = q / math.sqrt(q.shape[-1])
                    m = torch.full((*q.shape[:-1], 1), float("-inf"), dtype=q.dtype, device=q.device)
                    l = torch.zeros((*q.shape[:-1], 1), dtype=q.dtype, device=q.device)
                    acc = torch.zeros((*q.shape[:-1], v.shape[-1]), dtype=q.dtype, device=q.device)
                    q_pos = torch.arange(L_q, device=q.device).unsqueeze(1)  # (L_q, 1)
                    for start in range(0, L_k, chunk_size):
                        kb = k[..., start : start + chunk_size, :]
                        vb = v[..., start : start + chunk_size, :]
                        s = q @ kb.transpose(-2, -1)  # (..., L_q, C)
                        if causal:
                            k_pos = torch.arange(start, start + kb.shape[-2], device=q.device)
                            s = s.masked_fill(k_pos > q_pos, float("-inf"))
                        m_new = torch.maximum(m, s.amax(dim=-1, keepdim=True))
                        alpha = torch.exp(m - m_new)
                        p = torch.exp(s - m_new)
                        l = alpha * l + p.sum(dim=-1, keepdim=True)
                        acc = alpha * acc + p @ vb
                        m = m_new
                    return acc / l
                '''
            )
        },
        {
            "test_chunked_attention_exact": "bool is a subclass of int in Python",
        },
        # Issue 40's ninth blind corpus, graded blind on feb0b2e: counterexample (named since).
    ),
    Mutant(
        "s07-03: running max, sum and accumulator made in torch's default dtype",
        A,
        {
            "chunked_attention": Rewrite(
                r'''
                def chunked_attention(
                    q: Tensor, k: Tensor, v: Tensor, chunk_size: int, causal: bool = False
                ) -> Tensor:
                    """Attention over key blocks.

                    q (..., L_q, d_k), k (..., L_k, d_k), v (..., L_k, d_v) -> (..., L_q, d_v).
                    """
                    if isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or chunk_size < 1:
                        raise ValueError(f"chunk_size must be a positive int, got {chunk_size!r}")
                    L_q, L_k = q.shape[-2], k.shape[-2]
                    if causal and L_q != L_k:
                        raise ValueError(f"causal=True needs L_q == L_k, got {L_q} and {L_k}")
                    q = q / math.sqrt(q.shape[-1])
                    m = torch.full((*q.shape[:-1], 1), float("-inf"))
                    l = torch.zeros(*q.shape[:-1], 1)
                    acc = torch.zeros(*q.shape[:-1], v.shape[-1])
                    q_pos = torch.arange(L_q, device=q.device).unsqueeze(1)  # (L_q, 1)
                    for start in range(0, L_k, chunk_size):
                        kb = k[..., start : start + chunk_size, :]
                        vb = v[..., start : start + chunk_size, :]
                        s = q @ kb.transpose(-2, -1)  # (..., L_q, C)
                        if causal:
                            k_pos = torch.arange(start, start + kb.shape[-2], device=q.device)
                            s = s.masked_fill(k_pos > q_pos, float("-inf"))
                        m_new = torch.maximum(m, s.amax(dim=-1, keepdim=True))
                        alpha = torch.exp(m - m_new)
                        p = torch.exp(s - m_new)
                        l = alpha * l + p.sum(dim=-1, keepdim=True)
                        acc = alpha * acc + p @ vb
                        m = m_new
                    return acc / l
                '''
            )
        },
        {
            "test_chunked_attention_exact": "chunked_attention computes in float32 for half-precision input",
        },
        # Issue 40's ninth blind corpus, graded blind on feb0b2e: named.
        # Its torch.arange (or full, ones, zeros) has no device=: it makes that mistake too.
        makes=("chunked_attention.made_on_the_default_device",),
    ),
    Mutant(
        "s07-04: the running max starts at 0 instead of -inf",
        A,
        {
            "chunked_attention": Rewrite(
                r'''
                def chunked_attention(
                    q: Tensor, k: Tensor, v: Tensor, chunk_size: int, causal: bool = False
                ) -> Tensor:
                    """Attention over key blocks.

                    q (..., L_q, d_k), k (..., L_k, d_k), v (..., L_k, d_v) -> (..., L_q, d_v).
                    """
                    if isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or chunk_size < 1:
                        raise ValueError(f"chunk_size must be a positive int, got {chunk_size!r}")
                    L_q, L_k = q.shape[-2], k.shape[-2]
                    if causal and L_q != L_k:
                        raise ValueError(f"causal=True needs L_q == L_k, got {L_q} and {L_k}")
                    q = q / math.sqrt(q.shape[-1])
                    m = torch.zeros((*q.shape[:-1], 1), dtype=q.dtype, device=q.device)  # running max
                    l = torch.zeros((*q.shape[:-1], 1), dtype=q.dtype, device=q.device)
                    acc = torch.zeros((*q.shape[:-1], v.shape[-1]), dtype=q.dtype, device=q.device)
                    q_pos = torch.arange(L_q, device=q.device).unsqueeze(1)  # (L_q, 1)
                    for start in range(0, L_k, chunk_size):
                        kb = k[..., start : start + chunk_size, :]
                        vb = v[..., start : start + chunk_size, :]
                        s = q @ kb.transpose(-2, -1)  # (..., L_q, C)
                        if causal:
                            k_pos = torch.arange(start, start + kb.shape[-2], device=q.device)
                            s = s.masked_fill(k_pos > q_pos, float("-inf"))
                        m_new = torch.maximum(m, s.amax(dim=-1, keepdim=True))
                        alpha = torch.exp(m - m_new)
                        p = torch.exp(s - m_new)
                        l = alpha * l + p.sum(dim=-1, keepdim=True)
                        acc = alpha * acc + p @ vb
                        m = m_new
                    return acc / l
                '''
            )
        },
        {
            "test_chunked_attention_exact": "rows whose scores are all very negative give NaN",
        },
        # Issue 40's ninth blind corpus, graded blind on feb0b2e: named.
    ),
    Mutant(
        "s07-05: merge_partials rescales and adds into a's tensors in place",
        A,
        {
            "merge_partials": Rewrite(
                r'''
                def partial_attention(q: Tensor, k: Tensor, v: Tensor):
                    """The partial result of q (..., L_q, d_k) over the keys k (..., L_k, d_k).

                    v is (..., L_k, d_v); the result is a tuple (or a dict) of tensors of your design.
                    """
                    # My partial result: (m, l, acc) per query, as in Section 3: m the max score over
                    # the part's keys (..., L_q, 1), l = sum exp(s - m) (..., L_q, 1) and
                    # acc = sum exp(s - m) v (..., L_q, d_v). Its size does not depend on L_k.
                    # Merging moves both parts' sums to the common max M = max(m_a, m_b) by the
                    # factors exp(m_a - M), exp(m_b - M) <= 1, then adds: exact, symmetric and
                    # associative (up to rounding), and nothing overflows.
                    s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
                    m = s.amax(dim=-1, keepdim=True)
                    p = torch.exp(s - m)
                    return (m, p.sum(dim=-1, keepdim=True), p @ v)


                def merge_partials(a, b):
                    """The partial result over the keys of a and of b (disjoint, the same queries)."""
                    m_a, l_a, acc_a = a
                    m_b, l_b, acc_b = b
                    m = torch.maximum(m_a, m_b)
                    f_a, f_b = torch.exp(m_a - m), torch.exp(m_b - m)
                    # update a's sums in place to save memory
                    l_a.mul_(f_a).add_(f_b * l_b)
                    acc_a.mul_(f_a).add_(f_b * acc_b)
                    return (m, l_a, acc_a)


                def finish_attention(p) -> Tensor:
                    """The attention output (..., L_q, d_v) over every key merged into p."""
                    m, l, acc = p
                    return acc / l
                '''
            )
        },
        {
            "test_merge_partials": "changed a tensor it was given, in place",
        },
        # Issue 40's ninth blind corpus, graded blind on feb0b2e: named.
    ),
    Mutant(
        "t07-01: a new block added as exp(scores).sum() * exp(-new_max)",
        A,
        {
            "online_softmax_update": Rewrite(
                r'''
                def online_softmax_update(
                    running_max: Tensor, running_sum: Tensor, scores: Tensor
                ) -> tuple[Tensor, Tensor]:
                    """Fold scores (..., C) into running_max (...) and running_sum = Σ exp(s - max)."""
                    new_max = torch.maximum(running_max, scores.amax(dim=-1))
                    # exp(s - m) = exp(s) * exp(-m)
                    block_sum = torch.exp(scores).sum(dim=-1) * torch.exp(-new_max)
                    new_sum = running_sum * torch.exp(running_max - new_max) + block_sum
                    return new_max, new_sum
                '''
            )
        },
        {
            "test_online_softmax_update": "exp overflows for large scores",
        },
        # Issue 40's ninth blind corpus, graded blind on feb0b2e: named.
    ),
    Mutant(
        "t07-02: chunk_size checked with isinstance(chunk_size, int), which a bool passes",
        A,
        {
            "chunked_attention": Rewrite(
                r'''
                def chunked_attention(
                    q: Tensor, k: Tensor, v: Tensor, chunk_size: int, causal: bool = False
                ) -> Tensor:
                    """Attention over key blocks.

                    q (..., L_q, d_k), k (..., L_k, d_k), v (..., L_k, d_v) -> (..., L_q, d_v).
                    """
                    if not isinstance(chunk_size, int) or chunk_size < 1:
                        raise ValueError(f"chunk_size must be a positive int, got {chunk_size!r}")
                    L_q, L_k = q.shape[-2], k.shape[-2]
                    if causal and L_q != L_k:
                        raise ValueError(f"causal attention needs L_q == L_k, got {L_q} and {L_k}")
                    q = q / math.sqrt(q.shape[-1])
                    m = torch.full((*q.shape[:-1], 1), -math.inf, dtype=q.dtype, device=q.device)
                    l = torch.zeros_like(m)
                    acc = torch.zeros((*q.shape[:-1], v.shape[-1]), dtype=q.dtype, device=q.device)
                    q_pos = torch.arange(L_q, device=q.device).unsqueeze(1)  # (L_q, 1)
                    for start in range(0, L_k, chunk_size):
                        k_b = k[..., start : start + chunk_size, :]
                        v_b = v[..., start : start + chunk_size, :]
                        s = q @ k_b.transpose(-2, -1)  # (..., L_q, C)
                        if causal:
                            k_pos = torch.arange(start, start + k_b.shape[-2], device=q.device)
                            s = s.masked_fill(k_pos > q_pos, -math.inf)
                        m_new = torch.maximum(m, s.amax(dim=-1, keepdim=True))
                        alpha = torch.exp(m - m_new)
                        p = torch.exp(s - m_new)
                        l = alpha * l + p.sum(dim=-1, keepdim=True)
                        acc = alpha * acc + p @ v_b
                        m = m_new
                    return acc / l
                '''
            )
        },
        {
            "test_chunked_attention_exact": "bool is a subclass of int in Python",
        },
        # Issue 40's ninth blind corpus, graded blind on feb0b2e: counterexample (named since).
    ),
    Mutant(
        "t07-03: the full (L, L) causal mask built once and sliced per block",
        A,
        {
            "chunked_attention": Rewrite(
                r'''
                def chunked_attention(
                    q: Tensor, k: Tensor, v: Tensor, chunk_size: int, causal: bool = False
                ) -> Tensor:
                    """Attention over key blocks.

                    q (..., L_q, d_k), k (..., L_k, d_k), v (..., L_k, d_v) -> (..., L_q, d_v).
                    """
                    if isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or chunk_size < 1:
                        raise ValueError(f"chunk_size must be a positive int, got {chunk_size!r}")
                    L_q, L_k = q.shape[-2], k.shape[-2]
                    if causal and L_q != L_k:
                        raise ValueError(f"causal attention needs L_q == L_k, got {L_q} and {L_k}")
                    q = q / math.sqrt(q.shape[-1])
                    m = torch.full((*q.shape[:-1], 1), -math.inf, dtype=q.dtype, device=q.device)
                    l = torch.zeros_like(m)
                    acc = torch.zeros((*q.shape[:-1], v.shape[-1]), dtype=q.dtype, device=q.device)
                    full_mask = causal_mask(L_q).to(q.device) if causal else None  # True = may attend
                    for start in range(0, L_k, chunk_size):
                        k_b = k[..., start : start + chunk_size, :]
                        v_b = v[..., start : start + chunk_size, :]
                        s = q @ k_b.transpose(-2, -1)  # (..., L_q, C)
                        if causal:
                            block_mask = full_mask[:, start : start + k_b.shape[-2]]  # (L_q, C)
                            s = s.masked_fill(~block_mask, -math.inf)
                        m_new = torch.maximum(m, s.amax(dim=-1, keepdim=True))
                        alpha = torch.exp(m - m_new)
                        p = torch.exp(s - m_new)
                        l = alpha * l + p.sum(dim=-1, keepdim=True)
                        acc = alpha * acc + p @ v_b
                        m = m_new
                    return acc / l
                '''
            )
        },
        {
            "test_chunked_attention_memory": "with causal=True, and only then, memory grows quadratically",
        },
        # Issue 40's ninth blind corpus, graded blind on feb0b2e: named.
    ),
    Mutant(
        "t07-04: merge_partials rescales a's tensors in place",
        A,
        {
            "merge_partials": Rewrite(
                r'''
                def partial_attention(q: Tensor, k: Tensor, v: Tensor):
                    """The partial result of q (..., L_q, d_k) over the keys k (..., L_k, d_k).

                    v is (..., L_k, d_v); the result is a tuple (or a dict) of tensors of your design.
                    """
                    # A partial result is [m, l, acc]: per query the largest score m over the part's
                    # keys, l = sum exp(s - m) and acc = sum exp(s - m) v. Merging moves both to the
                    # larger maximum (factors exp(m_part - m_new) <= 1) and adds: exact in any order.
                    s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
                    m = s.amax(dim=-1, keepdim=True)
                    p = torch.exp(s - m)
                    return [m, p.sum(dim=-1, keepdim=True), p @ v]


                def merge_partials(a, b):
                    """The partial result over the keys of a and of b (disjoint, the same queries)."""
                    m_a, l_a, acc_a = a
                    m_b, l_b, acc_b = b
                    m = torch.maximum(m_a, m_b)
                    fa, fb = torch.exp(m_a - m), torch.exp(m_b - m)
                    # accumulate into a's tensors, as the running numbers of chunked_attention do
                    l_a.mul_(fa).add_(l_b * fb)
                    acc_a.mul_(fa).add_(acc_b * fb)
                    return [m, l_a, acc_a]


                def finish_attention(p) -> Tensor:
                    """The attention output (..., L_q, d_v) over every key merged into p."""
                    _, l, acc = p
                    return acc / l
                '''
            )
        },
        {
            "test_merge_partials": "changed a tensor it was given, in place",
        },
        # Issue 40's ninth blind corpus, graded blind on feb0b2e: named.
    ),
    Mutant(
        "u07-01: online_softmax_update exponentiates the raw scores",
        A,
        {
            "online_softmax_update": Rewrite(
                r'''
                def online_softmax_update(
                    running_max: Tensor, running_sum: Tensor, scores: Tensor
                ) -> tuple[Tensor, Tensor]:
                    """Fold scores (..., C) into running_max (...) and running_sum = Σ exp(s - max)."""
                    new_max = torch.maximum(running_max, scores.amax(dim=-1))
                    factor = torch.exp(running_max - new_max)
                    block_sum = torch.exp(scores).sum(dim=-1) * torch.exp(-new_max)
                    return new_max, running_sum * factor + block_sum
                '''
            )
        },
        {
            "test_online_softmax_update": "exp overflows for large scores",
        },
        # Issue 40's tenth blind corpus, graded blind on 60c32e8: named.
    ),
    Mutant(
        "u07-02: chunked: chunk_size checked only for being below 1",
        A,
        {
            "chunked_attention": Rewrite(
                r'''
                def chunked_attention(
                    q: Tensor, k: Tensor, v: Tensor, chunk_size: int, causal: bool = False
                ) -> Tensor:
                    """Attention over key blocks.

                    q (..., L_q, d_k), k (..., L_k, d_k), v (..., L_k, d_v) -> (..., L_q, d_v).
                    """
                    if chunk_size < 1:
                        raise ValueError(f"chunk_size must be a positive int, got {chunk_size!r}")
                    L_q, L_k = q.shape[-2], k.shape[-2]
                    if causal and L_q != L_k:
                        raise ValueError(f"causal attention needs L_q == L_k, got {L_q} and {L_k}")
                    q = q / math.sqrt(q.shape[-1])
                    m = torch.full((*q.shape[:-1], 1), -math.inf, dtype=q.dtype, device=q.device)
                    l = torch.zeros_like(m)
                    acc = torch.zeros(*q.shape[:-1], v.shape[-1], dtype=q.dtype, device=q.device)
                    query_pos = torch.arange(L_q, device=q.device).unsqueeze(-1)  # (L_q, 1)
                    for start in range(0, L_k, chunk_size):
                        k_b = k[..., start : start + chunk_size, :]
                        v_b = v[..., start : start + chunk_size, :]
                        s = q @ k_b.transpose(-2, -1)  # (..., L_q, C)
                        if causal:
                            key_pos = torch.arange(start, start + k_b.shape[-2], device=q.device)
                            s = s.masked_fill(key_pos > query_pos, float("-inf"))
                        m_new = torch.maximum(m, s.amax(dim=-1, keepdim=True))
                        alpha = torch.exp(m - m_new)
                        p = torch.exp(s - m_new)
                        l = alpha * l + p.sum(dim=-1, keepdim=True)
                        acc = alpha * acc + p @ v_b
                        m = m_new
                    return acc / l
                '''
            )
        },
        {
            "test_chunked_attention_exact": "chunk_size=True must raise ValueError; your function took it as the int 1",
        },
        # Issue 40's tenth blind corpus, graded blind on 60c32e8: counterexample (named since).
    ),
    Mutant(
        "u07-03: chunked: the running max starts at 0",
        A,
        {
            "chunked_attention": Rewrite(
                r'''
                def chunked_attention(
                    q: Tensor, k: Tensor, v: Tensor, chunk_size: int, causal: bool = False
                ) -> Tensor:
                    """Attention over key blocks.

                    q (..., L_q, d_k), k (..., L_k, d_k), v (..., L_k, d_v) -> (..., L_q, d_v).
                    """
                    if isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or chunk_size < 1:
                        raise ValueError(f"chunk_size must be a positive int, got {chunk_size!r}")
                    L_q, L_k = q.shape[-2], k.shape[-2]
                    if causal and L_q != L_k:
                        raise ValueError(f"causal attention needs L_q == L_k, got {L_q} and {L_k}")
                    q = q / math.sqrt(q.shape[-1])
                    m = torch.zeros(*q.shape[:-1], 1, dtype=q.dtype, device=q.device)  # running max
                    l = torch.zeros_like(m)
                    acc = torch.zeros(*q.shape[:-1], v.shape[-1], dtype=q.dtype, device=q.device)
                    query_pos = torch.arange(L_q, device=q.device).unsqueeze(-1)  # (L_q, 1)
                    for start in range(0, L_k, chunk_size):
                        k_b = k[..., start : start + chunk_size, :]
                        v_b = v[..., start : start + chunk_size, :]
                        s = q @ k_b.transpose(-2, -1)  # (..., L_q, C)
                        if causal:
                            key_pos = torch.arange(start, start + k_b.shape[-2], device=q.device)
                            s = s.masked_fill(key_pos > query_pos, float("-inf"))
                        m_new = torch.maximum(m, s.amax(dim=-1, keepdim=True))
                        alpha = torch.exp(m - m_new)
                        p = torch.exp(s - m_new)
                        l = alpha * l + p.sum(dim=-1, keepdim=True)
                        acc = alpha * acc + p @ v_b
                        m = m_new
                    return acc / l
                '''
            )
        },
        {
            "test_chunked_attention_exact": "the running max starts at 0 instead of -inf",
        },
        # Issue 40's tenth blind corpus, graded blind on 60c32e8: named.
    ),
    Mutant(
        "u07-04: partial results keep unshifted sums of exp(s)",
        A,
        {
            "merge_partials": Rewrite(
                r'''
                def partial_attention(q: Tensor, k: Tensor, v: Tensor):
                    """The partial result of q (..., L_q, d_k) over the keys k (..., L_k, d_k).

                    v is (..., L_k, d_v); the result is a tuple (or a dict) of tensors of your design.
                    """
                    # A partial result is (l, a): l = sum_j exp(s_j), a = sum_j exp(s_j) v_j per query.
                    # Both are plain sums over the keys, so two parts merge by adding them, in any
                    # order, and the output is a / l.
                    s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
                    p = torch.exp(s)
                    return (p.sum(dim=-1, keepdim=True), p @ v)


                def merge_partials(a, b):
                    """The partial result over the keys of a and of b (disjoint, the same queries)."""
                    return (a[0] + b[0], a[1] + b[1])


                def finish_attention(p) -> Tensor:
                    """The attention output (..., L_q, d_v) over every key merged into p."""
                    return p[1] / p[0]
                '''
            )
        },
        {
            "test_merge_partials": "the partial result overflows for large scores",
        },
        # Issue 40's tenth blind corpus, graded blind on 60c32e8: named.
    ),
    Mutant(
        "u07-05: merge_partials rescales both partial results in place",
        A,
        {
            "merge_partials": Rewrite(
                r'''
                def partial_attention(q: Tensor, k: Tensor, v: Tensor):
                    """The partial result of q (..., L_q, d_k) over the keys k (..., L_k, d_k).

                    v is (..., L_k, d_v); the result is a tuple (or a dict) of tensors of your design.
                    """
                    # A partial result is [m, l, acc]: the running max of the scaled scores, the sum of
                    # exp(s - m) and the sum of exp(s - m) v, as in Section 3. To merge, both parts are
                    # moved to the larger max (a factor exp(m_old - m_new) on l and acc) and added.
                    s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
                    m = s.amax(dim=-1, keepdim=True)
                    p = torch.exp(s - m)
                    return [m, p.sum(dim=-1, keepdim=True), p @ v]


                def merge_partials(a, b):
                    """The partial result over the keys of a and of b (disjoint, the same queries)."""
                    m = torch.maximum(a[0], b[0])
                    for part in (a, b):
                        factor = torch.exp(part[0] - m)
                        part[1] *= factor  # move the sums to the common max
                        part[2] *= factor
                    return [m, a[1] + b[1], a[2] + b[2]]


                def finish_attention(p) -> Tensor:
                    """The attention output (..., L_q, d_v) over every key merged into p."""
                    return p[2] / p[1]
                '''
            )
        },
        {
            "test_merge_partials": "changed a tensor it was given, in place",
        },
        # Issue 40's tenth blind corpus, graded blind on 60c32e8: named.
    ),
    Mutant(
        "v07-01: online_softmax_update rescales the running sum in place",
        A,
        {
            "online_softmax_update": Rewrite(
                r'''
                def online_softmax_update(
                    running_max: Tensor, running_sum: Tensor, scores: Tensor
                ) -> tuple[Tensor, Tensor]:
                    """Fold scores (..., C) into running_max (...) and running_sum = Σ exp(s - max)."""
                    new_max = torch.maximum(running_max, scores.amax(dim=-1))
                    factor = torch.exp(running_max - new_max)
                    new_sum = running_sum.mul_(factor) + torch.exp(scores - new_max.unsqueeze(-1)).sum(dim=-1)
                    return new_max, new_sum
                '''
            )
        },
        {
            "test_online_softmax_update": "changed a tensor it was given, in place",
        },
        # Issue 40's tenth blind corpus, graded blind on 60c32e8: named.
    ),
    Mutant(
        "v07-02: chunked: only L_k // chunk_size full key blocks",
        A,
        {
            "chunked_attention": Rewrite(
                r'''
                def chunked_attention(
                    q: Tensor, k: Tensor, v: Tensor, chunk_size: int, causal: bool = False
                ) -> Tensor:
                    """Attention over key blocks.

                    q (..., L_q, d_k), k (..., L_k, d_k), v (..., L_k, d_v) -> (..., L_q, d_v).
                    """
                    if isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or chunk_size < 1:
                        raise ValueError(f"chunk_size must be a positive int, got {chunk_size!r}")
                    L_q, L_k = q.shape[-2], k.shape[-2]
                    if causal and L_q != L_k:
                        raise ValueError(f"causal=True needs L_q == L_k, got {L_q} and {L_k}")
                    q = q / math.sqrt(q.shape[-1])
                    m = torch.full((*q.shape[:-1], 1), float("-inf"), dtype=q.dtype, device=q.device)
                    l = torch.zeros_like(m)
                    acc = torch.zeros((*q.shape[:-1], v.shape[-1]), dtype=q.dtype, device=q.device)
                    q_pos = torch.arange(L_q, device=q.device).unsqueeze(-1)  # (L_q, 1)
                    n_chunks = L_k // chunk_size
                    for c in range(n_chunks):
                        start = c * chunk_size
                        k_b = k[..., start : start + chunk_size, :]
                        v_b = v[..., start : start + chunk_size, :]
                        s = q @ k_b.transpose(-2, -1)  # (..., L_q, C)
                        if causal:
                            k_pos = torch.arange(start, start + k_b.shape[-2], device=q.device)
                            s = s.masked_fill(k_pos > q_pos, float("-inf"))
                        m_new = torch.maximum(m, s.amax(dim=-1, keepdim=True))
                        alpha = torch.exp(m - m_new)
                        p = torch.exp(s - m_new)
                        l = alpha * l + p.sum(dim=-1, keepdim=True)
                        acc = alpha * acc + p @ v_b
                        m = m_new
                    return (acc / l).to(q.dtype)
                '''
            )
        },
        {"test_chunked_attention_exact": "the last, shorter key block is dropped"},
        # Issue 40's tenth blind corpus, graded blind on 60c32e8: named, and charged in the causal
        # cell too (a counterexample there); charged once since (07's repair of the chunk sizes).
        charged_once=True,
    ),
    Mutant(
        "v07-03: chunked: chunk_size=True accepted as 1",
        A,
        {
            "chunked_attention": Rewrite(
                r'''
                def chunked_attention(
                    q: Tensor, k: Tensor, v: Tensor, chunk_size: int, causal: bool = False
                ) -> Tensor:
                    """Attention over key blocks.

                    q (..., L_q, d_k), k (..., L_k, d_k), v (..., L_k, d_v) -> (..., L_q, d_v).
                    """
                    if not isinstance(chunk_size, int) or chunk_size < 1:
                        raise ValueError(f"chunk_size must be a positive int, got {chunk_size!r}")
                    L_q, L_k = q.shape[-2], k.shape[-2]
                    if causal and L_q != L_k:
                        raise ValueError(f"causal=True needs L_q == L_k, got {L_q} and {L_k}")
                    q = q / math.sqrt(q.shape[-1])
                    m = torch.full((*q.shape[:-1], 1), float("-inf"), dtype=q.dtype, device=q.device)
                    l = torch.zeros_like(m)
                    acc = torch.zeros((*q.shape[:-1], v.shape[-1]), dtype=q.dtype, device=q.device)
                    q_pos = torch.arange(L_q, device=q.device).unsqueeze(-1)  # (L_q, 1)
                    for start in range(0, L_k, chunk_size):
                        k_b = k[..., start : start + chunk_size, :]
                        v_b = v[..., start : start + chunk_size, :]
                        s = q @ k_b.transpose(-2, -1)  # (..., L_q, C)
                        if causal:
                            k_pos = torch.arange(start, start + k_b.shape[-2], device=q.device)
                            s = s.masked_fill(k_pos > q_pos, float("-inf"))
                        m_new = torch.maximum(m, s.amax(dim=-1, keepdim=True))
                        alpha = torch.exp(m - m_new)
                        p = torch.exp(s - m_new)
                        l = alpha * l + p.sum(dim=-1, keepdim=True)
                        acc = alpha * acc + p @ v_b
                        m = m_new
                    return (acc / l).to(q.dtype)
                '''
            )
        },
        {
            "test_chunked_attention_exact": "chunk_size=True must raise ValueError; your function took it as the int 1",
        },
        # Issue 40's tenth blind corpus, graded blind on 60c32e8: named.
    ),
    Mutant(
        "v07-04: chunked: the causal blocks sliced from a full (L, L) mask",
        A,
        {
            "chunked_attention": Rewrite(
                r'''
                def chunked_attention(
                    q: Tensor, k: Tensor, v: Tensor, chunk_size: int, causal: bool = False
                ) -> Tensor:
                    """Attention over key blocks.

                    q (..., L_q, d_k), k (..., L_k, d_k), v (..., L_k, d_v) -> (..., L_q, d_v).
                    """
                    if isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or chunk_size < 1:
                        raise ValueError(f"chunk_size must be a positive int, got {chunk_size!r}")
                    L_q, L_k = q.shape[-2], k.shape[-2]
                    if causal and L_q != L_k:
                        raise ValueError(f"causal=True needs L_q == L_k, got {L_q} and {L_k}")
                    q = q / math.sqrt(q.shape[-1])
                    m = torch.full((*q.shape[:-1], 1), float("-inf"), dtype=q.dtype, device=q.device)
                    l = torch.zeros_like(m)
                    acc = torch.zeros((*q.shape[:-1], v.shape[-1]), dtype=q.dtype, device=q.device)
                    full_mask = torch.ones(L_q, L_k, dtype=torch.bool, device=q.device).tril() if causal else None
                    for start in range(0, L_k, chunk_size):
                        k_b = k[..., start : start + chunk_size, :]
                        v_b = v[..., start : start + chunk_size, :]
                        s = q @ k_b.transpose(-2, -1)  # (..., L_q, C)
                        if causal:
                            s = s.masked_fill(~full_mask[:, start : start + k_b.shape[-2]], float("-inf"))
                        m_new = torch.maximum(m, s.amax(dim=-1, keepdim=True))
                        alpha = torch.exp(m - m_new)
                        p = torch.exp(s - m_new)
                        l = alpha * l + p.sum(dim=-1, keepdim=True)
                        acc = alpha * acc + p @ v_b
                        m = m_new
                    return (acc / l).to(q.dtype)
                '''
            )
        },
        {
            "test_chunked_attention_memory": "with causal=True, and only then, memory grows quadratically",
        },
        # Issue 40's tenth blind corpus, graded blind on 60c32e8: named.
    ),
    Mutant(
        "v07-05: merge_partials accumulates into a's tensors in place",
        A,
        {
            "merge_partials": Rewrite(
                r'''
                def partial_attention(q: Tensor, k: Tensor, v: Tensor):
                    """The partial result of q (..., L_q, d_k) over the keys k (..., L_k, d_k).

                    v is (..., L_k, d_v); the result is a tuple (or a dict) of tensors of your design.
                    """
                    # Design: (m, l, acc) per query: m the max score over this part's keys, l the sum of
                    # exp(s - m) and acc the sum of exp(s - m) v, both relative to m. Merging moves both
                    # parts to the larger max (factors exp(m_a - m), exp(m_b - m) <= 1) and adds: exact,
                    # symmetric and associative up to rounding, and its size does not depend on L_k.
                    s = (q @ k.transpose(-2, -1)) / math.sqrt(q.shape[-1])
                    m = s.amax(dim=-1, keepdim=True)
                    p = torch.exp(s - m)
                    return (m, p.sum(dim=-1, keepdim=True), p @ v)


                def merge_partials(a, b):
                    """The partial result over the keys of a and of b (disjoint, the same queries)."""
                    m_a, l_a, acc_a = a
                    m_b, l_b, acc_b = b
                    m = torch.maximum(m_a, m_b)
                    f_a, f_b = torch.exp(m_a - m), torch.exp(m_b - m)
                    l_a.mul_(f_a).add_(l_b * f_b)  # accumulate into a, no new tensors
                    acc_a.mul_(f_a).add_(acc_b * f_b)
                    return (m, l_a, acc_a)


                def finish_attention(p) -> Tensor:
                    """The attention output (..., L_q, d_v) over every key merged into p."""
                    m, l, acc = p
                    return acc / l
                '''
            )
        },
        {
            "test_merge_partials": "changed a tensor it was given, in place",
        },
        # Issue 40's tenth blind corpus, graded blind on 60c32e8: named.
    ),
    Mutant(
        "w07-01: the old running sum not rescaled",
        A,
        {
            "online_softmax_update": Rewrite(
                r'''
                def online_softmax_update(
                    running_max: Tensor, running_sum: Tensor, scores: Tensor
                ) -> tuple[Tensor, Tensor]:
                    """Fold scores (..., C) into running_max (...) and running_sum = Σ exp(s - max)."""
                    new_max = torch.maximum(running_max, scores.amax(dim=-1))
                    new_sum = running_sum + torch.exp(scores - new_max.unsqueeze(-1)).sum(dim=-1)
                    return new_max, new_sum
                '''
            )
        },
        {
            "test_online_softmax_update": "the old running sum is not rescaled",
        },
        # Issue 40's eleventh blind corpus, graded blind on 48fe40c: named.
    ),
    Mutant(
        "w07-02: chunk_size=True accepted as 1",
        A,
        {
            "chunked_attention": Rewrite(
                r'''
                def chunked_attention(
                    q: Tensor, k: Tensor, v: Tensor, chunk_size: int, causal: bool = False
                ) -> Tensor:
                    """Attention over key blocks.

                    q (..., L_q, d_k), k (..., L_k, d_k), v (..., L_k, d_v) -> (..., L_q, d_v).
                    """
                    if not isinstance(chunk_size, int) or chunk_size < 1:
                        raise ValueError(f"chunk_size must be a positive int, got {chunk_size!r}")
                    L_q, d_k = q.shape[-2], q.shape[-1]
                    L_k = k.shape[-2]
                    if causal and L_q != L_k:
                        raise ValueError(f"causal=True needs L_q == L_k, got {L_q} and {L_k}")
                    scale = 1.0 / math.sqrt(d_k)
                    lead = q.shape[:-2]
                    m = torch.full((*lead, L_q), float("-inf"), dtype=q.dtype, device=q.device)
                    l = torch.zeros((*lead, L_q), dtype=q.dtype, device=q.device)
                    acc = torch.zeros((*lead, L_q, v.shape[-1]), dtype=q.dtype, device=q.device)
                    q_pos = torch.arange(L_q, device=q.device).unsqueeze(-1)  # (L_q, 1)
                    for start in range(0, L_k, chunk_size):
                        kb = k[..., start : start + chunk_size, :]
                        vb = v[..., start : start + chunk_size, :]
                        s = (q @ kb.transpose(-2, -1)) * scale  # (..., L_q, C)
                        if causal:
                            k_pos = torch.arange(start, start + kb.shape[-2], device=q.device)
                            s = s.masked_fill(k_pos > q_pos, float("-inf"))
                        new_m = torch.maximum(m, s.amax(dim=-1))
                        # a row that has seen only -inf so far keeps new_m = -inf: use 0 there
                        safe_m = torch.where(torch.isinf(new_m), torch.zeros_like(new_m), new_m)
                        alpha = torch.exp(m - safe_m)
                        p = torch.exp(s - safe_m.unsqueeze(-1))
                        l = l * alpha + p.sum(dim=-1)
                        acc = acc * alpha.unsqueeze(-1) + p @ vb
                        m = new_m
                    return (acc / l.unsqueeze(-1)).to(q.dtype)
                '''
            )
        },
        {
            "test_chunked_attention_exact": "chunk_size=True must raise ValueError",
        },
        # Issue 40's eleventh blind corpus, graded blind on 48fe40c: named.
    ),
    Mutant(
        "w07-03: the running max starts at 0, not -inf",
        A,
        {
            "chunked_attention": Rewrite(
                r'''
                def chunked_attention(
                    q: Tensor, k: Tensor, v: Tensor, chunk_size: int, causal: bool = False
                ) -> Tensor:
                    """Attention over key blocks.

                    q (..., L_q, d_k), k (..., L_k, d_k), v (..., L_k, d_v) -> (..., L_q, d_v).
                    """
                    if isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or chunk_size < 1:
                        raise ValueError(f"chunk_size must be a positive int, got {chunk_size!r}")
                    L_q, d_k = q.shape[-2], q.shape[-1]
                    L_k = k.shape[-2]
                    if causal and L_q != L_k:
                        raise ValueError(f"causal=True needs L_q == L_k, got {L_q} and {L_k}")
                    scale = 1.0 / math.sqrt(d_k)
                    lead = q.shape[:-2]
                    # start the running max at 0: no -inf - (-inf) to worry about
                    m = torch.zeros((*lead, L_q), dtype=q.dtype, device=q.device)
                    l = torch.zeros((*lead, L_q), dtype=q.dtype, device=q.device)
                    acc = torch.zeros((*lead, L_q, v.shape[-1]), dtype=q.dtype, device=q.device)
                    q_pos = torch.arange(L_q, device=q.device).unsqueeze(-1)  # (L_q, 1)
                    for start in range(0, L_k, chunk_size):
                        kb = k[..., start : start + chunk_size, :]
                        vb = v[..., start : start + chunk_size, :]
                        s = (q @ kb.transpose(-2, -1)) * scale  # (..., L_q, C)
                        if causal:
                            k_pos = torch.arange(start, start + kb.shape[-2], device=q.device)
                            s = s.masked_fill(k_pos > q_pos, float("-inf"))
                        new_m = torch.maximum(m, s.amax(dim=-1))
                        alpha = torch.exp(m - new_m)
                        p = torch.exp(s - new_m.unsqueeze(-1))
                        l = l * alpha + p.sum(dim=-1)
                        acc = acc * alpha.unsqueeze(-1) + p @ vb
                        m = new_m
                    return (acc / l.unsqueeze(-1)).to(q.dtype)
                '''
            )
        },
        {
            "test_chunked_attention_exact": "the running max starts at 0 instead of -inf",
        },
        # Issue 40's eleventh blind corpus, graded blind on 48fe40c: named.
    ),
    Mutant(
        "w07-04: merge_partials accumulates into its first argument in place",
        A,
        {
            "merge_partials": Rewrite(
                r'''
                def partial_attention(q: Tensor, k: Tensor, v: Tensor):
                    """The partial result of q (..., L_q, d_k) over the keys k (..., L_k, d_k).

                    v is (..., L_k, d_v); the result is a tuple (or a dict) of tensors of your design.
                    """
                    # Design: (m, l, o) per query: the largest scaled score m, l = sum exp(s - m) and
                    # o = sum exp(s - m) v over these keys. Merging moves both to the larger maximum.
                    s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
                    m = s.amax(dim=-1)
                    p = torch.exp(s - m.unsqueeze(-1))
                    return (m, p.sum(dim=-1), p @ v)


                def merge_partials(a, b):
                    """The partial result over the keys of a and of b (disjoint, the same queries)."""
                    m_a, l_a, o_a = a
                    m_b, l_b, o_b = b
                    m = torch.maximum(m_a, m_b)
                    fa, fb = torch.exp(m_a - m), torch.exp(m_b - m)
                    # accumulate into a's buffers, no new allocations
                    l_a.mul_(fa).add_(l_b * fb)
                    o_a.mul_(fa.unsqueeze(-1)).add_(o_b * fb.unsqueeze(-1))
                    m_a.copy_(m)
                    return (m_a, l_a, o_a)


                def finish_attention(p) -> Tensor:
                    """The attention output (..., L_q, d_v) over every key merged into p."""
                    m, l, o = p
                    return o / l.unsqueeze(-1)
                '''
            )
        },
        {
            "test_merge_partials": "changed a tensor it was given, in place",
        },
        # Issue 40's eleventh blind corpus, graded blind on 48fe40c: named.
    ),
    Mutant(
        "w07-05: merge_partials rescales the first part to the second's maximum only",
        A,
        {
            "merge_partials": Rewrite(
                r'''
                def partial_attention(q: Tensor, k: Tensor, v: Tensor):
                    """The partial result of q (..., L_q, d_k) over the keys k (..., L_k, d_k).

                    v is (..., L_k, d_v); the result is a tuple (or a dict) of tensors of your design.
                    """
                    # Design: (m, l, o) per query: the largest scaled score m, l = sum exp(s - m) and
                    # o = sum exp(s - m) v over these keys.
                    s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
                    m = s.amax(dim=-1)
                    p = torch.exp(s - m.unsqueeze(-1))
                    return (m, p.sum(dim=-1), p @ v)


                def merge_partials(a, b):
                    """The partial result over the keys of a and of b (disjoint, the same queries)."""
                    m_a, l_a, o_a = a
                    m_b, l_b, o_b = b
                    # move a's sums to b's reference maximum
                    f = torch.exp(m_a - m_b)
                    return (m_b, l_a * f + l_b, o_a * f.unsqueeze(-1) + o_b)


                def finish_attention(p) -> Tensor:
                    """The attention output (..., L_q, d_v) over every key merged into p."""
                    m, l, o = p
                    return o / l.unsqueeze(-1)
                '''
            )
        },
        {
            "test_merge_partials": "merge_partials measures one argument's part against the other argument's reference",
        },
        # Issue 40's eleventh blind corpus, graded blind on 48fe40c: named.
    ),
    Mutant(
        "x07-01: chunk_size=True accepted as 1",
        A,
        {
            "chunked_attention": Rewrite(
                r'''
                def chunked_attention(
                    q: Tensor, k: Tensor, v: Tensor, chunk_size: int, causal: bool = False
                ) -> Tensor:
                    """Attention over key blocks.

                    q (..., L_q, d_k), k (..., L_k, d_k), v (..., L_k, d_v) -> (..., L_q, d_v).
                    """
                    if not isinstance(chunk_size, int) or chunk_size < 1:
                        raise ValueError(f"chunk_size must be a positive int, got {chunk_size!r}")
                    L_q, L_k = q.shape[-2], k.shape[-2]
                    if causal and L_q != L_k:
                        raise ValueError(f"causal attention needs L_q == L_k, got {L_q} and {L_k}")
                    q = q / math.sqrt(q.shape[-1])
                    m = torch.full((*q.shape[:-1], 1), -math.inf, dtype=q.dtype, device=q.device)
                    l = torch.zeros((*q.shape[:-1], 1), dtype=q.dtype, device=q.device)
                    acc = torch.zeros((*q.shape[:-1], v.shape[-1]), dtype=q.dtype, device=q.device)
                    q_pos = torch.arange(L_q, device=q.device).unsqueeze(-1)  # (L_q, 1)
                    for start in range(0, L_k, chunk_size):
                        k_b = k[..., start : start + chunk_size, :]
                        v_b = v[..., start : start + chunk_size, :]
                        s = q @ k_b.transpose(-2, -1)  # (..., L_q, C)
                        if causal:
                            k_pos = torch.arange(start, start + k_b.shape[-2], device=q.device)  # (C,)
                            s = s.masked_fill(k_pos > q_pos, -math.inf)  # (L_q, C) mask
                        m_new = torch.maximum(m, s.amax(dim=-1, keepdim=True))
                        alpha = torch.exp(m - m_new)
                        p = torch.exp(s - m_new)
                        l = alpha * l + p.sum(dim=-1, keepdim=True)
                        acc = alpha * acc + p @ v_b
                        m = m_new
                    return (acc / l).to(q.dtype)
                '''
            )
        },
        {
            "test_chunked_attention_exact": "chunk_size=True must raise ValueError",
        },
        # Issue 40's eleventh blind corpus, graded blind on 48fe40c: named.
    ),
    Mutant(
        "x07-02: causal blocks sliced from one full causal_mask(L_q)",
        A,
        {
            "chunked_attention": Rewrite(
                r'''
                def chunked_attention(
                    q: Tensor, k: Tensor, v: Tensor, chunk_size: int, causal: bool = False
                ) -> Tensor:
                    """Attention over key blocks.

                    q (..., L_q, d_k), k (..., L_k, d_k), v (..., L_k, d_v) -> (..., L_q, d_v).
                    """
                    if isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or chunk_size < 1:
                        raise ValueError(f"chunk_size must be a positive int, got {chunk_size!r}")
                    L_q, L_k = q.shape[-2], k.shape[-2]
                    if causal and L_q != L_k:
                        raise ValueError(f"causal attention needs L_q == L_k, got {L_q} and {L_k}")
                    q = q / math.sqrt(q.shape[-1])
                    m = torch.full((*q.shape[:-1], 1), -math.inf, dtype=q.dtype, device=q.device)
                    l = torch.zeros((*q.shape[:-1], 1), dtype=q.dtype, device=q.device)
                    acc = torch.zeros((*q.shape[:-1], v.shape[-1]), dtype=q.dtype, device=q.device)
                    full_mask = causal_mask(L_q, device=q.device) if causal else None  # True = may attend
                    for start in range(0, L_k, chunk_size):
                        k_b = k[..., start : start + chunk_size, :]
                        v_b = v[..., start : start + chunk_size, :]
                        s = q @ k_b.transpose(-2, -1)  # (..., L_q, C)
                        if causal:
                            block_mask = full_mask[:, start : start + k_b.shape[-2]]  # (L_q, C)
                            s = s.masked_fill(~block_mask, -math.inf)
                        m_new = torch.maximum(m, s.amax(dim=-1, keepdim=True))
                        alpha = torch.exp(m - m_new)
                        p = torch.exp(s - m_new)
                        l = alpha * l + p.sum(dim=-1, keepdim=True)
                        acc = alpha * acc + p @ v_b
                        m = m_new
                    return (acc / l).to(q.dtype)
                '''
            )
        },
        {
            "test_chunked_attention_memory": "the causal branch builds something of size (L, L)",
        },
        # Issue 40's eleventh blind corpus, graded blind on 48fe40c: named.
    ),
    Mutant(
        "x07-03: the causal positions made with torch.arange, without device=",
        A,
        {
            "chunked_attention": Rewrite(
                r'''
                def chunked_attention(
                    q: Tensor, k: Tensor, v: Tensor, chunk_size: int, causal: bool = False
                ) -> Tensor:
                    """Attention over key blocks.

                    q (..., L_q, d_k), k (..., L_k, d_k), v (..., L_k, d_v) -> (..., L_q, d_v).
                    """
                    if isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or chunk_size < 1:
                        raise ValueError(f"chunk_size must be a positive int, got {chunk_size!r}")
                    L_q, L_k = q.shape[-2], k.shape[-2]
                    if causal and L_q != L_k:
                        raise ValueError(f"causal attention needs L_q == L_k, got {L_q} and {L_k}")
                    q = q / math.sqrt(q.shape[-1])
                    m = torch.full((*q.shape[:-1], 1), -math.inf, dtype=q.dtype, device=q.device)
                    l = torch.zeros((*q.shape[:-1], 1), dtype=q.dtype, device=q.device)
                    acc = torch.zeros((*q.shape[:-1], v.shape[-1]), dtype=q.dtype, device=q.device)
                    q_pos = torch.arange(L_q).unsqueeze(-1)  # (L_q, 1)
                    for start in range(0, L_k, chunk_size):
                        k_b = k[..., start : start + chunk_size, :]
                        v_b = v[..., start : start + chunk_size, :]
                        s = q @ k_b.transpose(-2, -1)  # (..., L_q, C)
                        if causal:
                            k_pos = torch.arange(start, start + k_b.shape[-2])  # (C,)
                            s = s.masked_fill(k_pos > q_pos, -math.inf)  # (L_q, C) mask
                        m_new = torch.maximum(m, s.amax(dim=-1, keepdim=True))
                        alpha = torch.exp(m - m_new)
                        p = torch.exp(s - m_new)
                        l = alpha * l + p.sum(dim=-1, keepdim=True)
                        acc = alpha * acc + p @ v_b
                        m = m_new
                    return (acc / l).to(q.dtype)
                '''
            )
        },
        {"test_chunked_attention_causal": "a tensor made without device= sits on torch's"},
        # Issue 40's eleventh blind corpus, graded blind on 48fe40c: not caught (caught since:
        # the call is followed where it runs, as grading has no GPU).
    ),
    Mutant(
        "x07-04: merge_partials accumulates into its first argument in place",
        A,
        {
            "merge_partials": Rewrite(
                r'''
                def partial_attention(q: Tensor, k: Tensor, v: Tensor):
                    """The partial result of q (..., L_q, d_k) over the keys k (..., L_k, d_k).

                    v is (..., L_k, d_v); the result is a tuple (or a dict) of tensors of your design.
                    """
                    # Design: the running numbers of Section 3 for these keys, per query:
                    #   m (..., L_q, 1): the largest scaled score over the part's keys,
                    #   l (..., L_q, 1): sum_j exp(s_j - m),
                    #   a (..., L_q, d_v): sum_j exp(s_j - m) v_j.
                    # Their size does not depend on the number of keys. Two parts are merged exactly by
                    # moving both to the larger maximum, multiplying by exp(m_part - m), and adding:
                    # every term is then exp(s_j - m) for the common m, whatever the order of merging.
                    s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
                    m = s.amax(dim=-1, keepdim=True)
                    p = torch.exp(s - m)
                    return (m, p.sum(dim=-1, keepdim=True), p @ v)


                def merge_partials(a, b):
                    """The partial result over the keys of a and of b (disjoint, the same queries)."""
                    m_a, l_a, acc_a = a
                    m_b, l_b, acc_b = b
                    m = torch.maximum(m_a, m_b)
                    f_a, f_b = torch.exp(m_a - m), torch.exp(m_b - m)
                    # update a's buffers in place rather than allocating new ones
                    l_a.mul_(f_a).add_(l_b * f_b)
                    acc_a.mul_(f_a).add_(acc_b * f_b)
                    m_a.copy_(m)
                    return (m_a, l_a, acc_a)


                def finish_attention(p) -> Tensor:
                    """The attention output (..., L_q, d_v) over every key merged into p."""
                    m, l, acc = p
                    return acc / l
                '''
            )
        },
        {
            "test_merge_partials": "changed a tensor it was given, in place",
        },
        # Issue 40's eleventh blind corpus, graded blind on 48fe40c: named.
    ),
    Mutant(
        "x07-05: accumulators kept in float32, the output never cast back",
        A,
        {
            "chunked_attention": Rewrite(
                r'''
                def chunked_attention(
                    q: Tensor, k: Tensor, v: Tensor, chunk_size: int, causal: bool = False
                ) -> Tensor:
                    """Attention over key blocks.

                    q (..., L_q, d_k), k (..., L_k, d_k), v (..., L_k, d_v) -> (..., L_q, d_v).
                    """
                    if isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or chunk_size < 1:
                        raise ValueError(f"chunk_size must be a positive int, got {chunk_size!r}")
                    L_q, L_k = q.shape[-2], k.shape[-2]
                    if causal and L_q != L_k:
                        raise ValueError(f"causal attention needs L_q == L_k, got {L_q} and {L_k}")
                    # accumulate in float32 at least (as FlashAttention does), float64 stays float64
                    work = torch.promote_types(q.dtype, torch.float32)
                    q, k, v = q.to(work), k.to(work), v.to(work)
                    q = q / math.sqrt(q.shape[-1])
                    m = torch.full((*q.shape[:-1], 1), -math.inf, dtype=work, device=q.device)
                    l = torch.zeros((*q.shape[:-1], 1), dtype=work, device=q.device)
                    acc = torch.zeros((*q.shape[:-1], v.shape[-1]), dtype=work, device=q.device)
                    q_pos = torch.arange(L_q, device=q.device).unsqueeze(-1)  # (L_q, 1)
                    for start in range(0, L_k, chunk_size):
                        k_b = k[..., start : start + chunk_size, :]
                        v_b = v[..., start : start + chunk_size, :]
                        s = q @ k_b.transpose(-2, -1)  # (..., L_q, C)
                        if causal:
                            k_pos = torch.arange(start, start + k_b.shape[-2], device=q.device)  # (C,)
                            s = s.masked_fill(k_pos > q_pos, -math.inf)  # (L_q, C) mask
                        m_new = torch.maximum(m, s.amax(dim=-1, keepdim=True))
                        alpha = torch.exp(m - m_new)
                        p = torch.exp(s - m_new)
                        l = alpha * l + p.sum(dim=-1, keepdim=True)
                        acc = alpha * acc + p @ v_b
                        m = m_new
                    return acc / l
                '''
            )
        },
        {
            "test_chunked_attention_exact": "and returns the float32 result",
        },
        not_told=(
            "made without dtype=) meets",
            "a float32 tensor meets",
        ),
        # Issue 40's eleventh blind corpus, graded blind on 48fe40c: untrue (true since): told then
        # of a float32 tensor made without dtype=.
    ),
    Mutant(
        "aa07-01: online_softmax_update subtracts new_max without its trailing axis",
        A,
        {
            "online_softmax_update": Rewrite(
                r'''
                def online_softmax_update(
                    running_max: Tensor, running_sum: Tensor, scores: Tensor
                ) -> tuple[Tensor, Tensor]:
                    """Fold scores (..., C) into running_max (...) and running_sum = Σ exp(s - max)."""
                    new_max = torch.maximum(running_max, scores.amax(dim=-1))
                    factor = torch.exp(running_max - new_max)
                    new_sum = running_sum * factor + torch.exp(scores - new_max).sum(dim=-1)
                    return new_max, new_sum
                '''
            )
        },
        {
            "test_online_softmax_update": "is subtracted from the scores (..., C) without a trailing axis",
        },
        # Issue 40's thirteenth blind corpus, graded blind on 8b5375e: named.
    ),
    Mutant(
        "aa07-02: chunked_attention checks isinstance(chunk_size, int) alone: True taken as 1",
        A,
        {
            "chunked_attention": Rewrite(
                r'''
                def chunked_attention(
                    q: Tensor, k: Tensor, v: Tensor, chunk_size: int, causal: bool = False
                ) -> Tensor:
                    """Attention over key blocks.

                    q (..., L_q, d_k), k (..., L_k, d_k), v (..., L_k, d_v) -> (..., L_q, d_v).
                    """
                    if not isinstance(chunk_size, int) or chunk_size < 1:
                        raise ValueError(f"chunk_size must be a positive int, got {chunk_size!r}")
                    L_q, L_k = q.shape[-2], k.shape[-2]
                    if causal and L_q != L_k:
                        raise ValueError(f"causal attention needs L_q == L_k, got {L_q} and {L_k}")
                    q = q / math.sqrt(q.shape[-1])
                    lead = q.shape[:-2]
                    m = torch.full((*lead, L_q, 1), -math.inf, dtype=q.dtype, device=q.device)
                    l = torch.zeros((*lead, L_q, 1), dtype=q.dtype, device=q.device)
                    acc = torch.zeros((*lead, L_q, v.shape[-1]), dtype=q.dtype, device=q.device)
                    q_pos = torch.arange(L_q, device=q.device).unsqueeze(-1)  # (L_q, 1)
                    for start in range(0, L_k, chunk_size):
                        kb = k[..., start : start + chunk_size, :]
                        vb = v[..., start : start + chunk_size, :]
                        s = q @ kb.transpose(-2, -1)  # (..., L_q, C)
                        if causal:
                            k_pos = torch.arange(start, start + kb.shape[-2], device=q.device)  # (C,)
                            s = s.masked_fill(k_pos > q_pos, float("-inf"))
                        m_new = torch.maximum(m, s.amax(dim=-1, keepdim=True))
                        alpha = torch.exp(m - m_new)
                        p = torch.exp(s - m_new)
                        l = alpha * l + p.sum(dim=-1, keepdim=True)
                        acc = alpha * acc + p @ vb
                        m = m_new
                    return (acc / l).to(q.dtype)
                '''
            )
        },
        {
            "test_chunked_attention_exact": "bool is a subclass of int in Python",
        },
        # Issue 40's thirteenth blind corpus, graded blind on 8b5375e: named.
    ),
    Mutant(
        "aa07-03: chunked_attention's running tensors and positions made without device=",
        A,
        {
            "chunked_attention": Rewrite(
                r'''
                def chunked_attention(
                    q: Tensor, k: Tensor, v: Tensor, chunk_size: int, causal: bool = False
                ) -> Tensor:
                    """Attention over key blocks.

                    q (..., L_q, d_k), k (..., L_k, d_k), v (..., L_k, d_v) -> (..., L_q, d_v).
                    """
                    if isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or chunk_size < 1:
                        raise ValueError(f"chunk_size must be a positive int, got {chunk_size!r}")
                    L_q, L_k = q.shape[-2], k.shape[-2]
                    if causal and L_q != L_k:
                        raise ValueError(f"causal attention needs L_q == L_k, got {L_q} and {L_k}")
                    q = q / math.sqrt(q.shape[-1])
                    lead = q.shape[:-2]
                    m = torch.full((*lead, L_q, 1), -math.inf, dtype=q.dtype)
                    l = torch.zeros((*lead, L_q, 1), dtype=q.dtype)
                    acc = torch.zeros((*lead, L_q, v.shape[-1]), dtype=q.dtype)
                    q_pos = torch.arange(L_q).unsqueeze(-1)  # (L_q, 1)
                    for start in range(0, L_k, chunk_size):
                        kb = k[..., start : start + chunk_size, :]
                        vb = v[..., start : start + chunk_size, :]
                        s = q @ kb.transpose(-2, -1)  # (..., L_q, C)
                        if causal:
                            k_pos = torch.arange(start, start + kb.shape[-2])  # (C,)
                            s = s.masked_fill(k_pos > q_pos, float("-inf"))
                        m_new = torch.maximum(m, s.amax(dim=-1, keepdim=True))
                        alpha = torch.exp(m - m_new)
                        p = torch.exp(s - m_new)
                        l = alpha * l + p.sum(dim=-1, keepdim=True)
                        acc = alpha * acc + p @ vb
                        m = m_new
                    return (acc / l).to(q.dtype)
                '''
            )
        },
        {
            "test_chunked_attention_exact": "a tensor made without device= sits on torch's default device",
        },
        # Issue 40's thirteenth blind corpus, graded blind on 8b5375e: named.
    ),
    Mutant(
        "aa07-04: merge_partials rescales and accumulates into a's tensors in place",
        A,
        {
            "merge_partials": Rewrite(
                r'''
                def partial_attention(q: Tensor, k: Tensor, v: Tensor):
                    """The partial result of q (..., L_q, d_k) over the keys k (..., L_k, d_k).

                    v is (..., L_k, d_v); the result is a tuple (or a dict) of tensors of your design.
                    """
                    # My design: (m, l, a) per query: the max score m (..., L_q, 1), l = sum exp(s - m)
                    # (..., L_q, 1) and a = sum exp(s - m) v (..., L_q, d_v). Both sums are relative to
                    # m, so two parts are moved to the common max by exp(m_part - m) <= 1: exact.
                    s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
                    m = s.amax(dim=-1, keepdim=True)
                    p = torch.exp(s - m)
                    return (m, p.sum(dim=-1, keepdim=True), p @ v)


                def merge_partials(a, b):
                    """The partial result over the keys of a and of b (disjoint, the same queries)."""
                    m_a, l_a, acc_a = a
                    m_b, l_b, acc_b = b
                    m = torch.maximum(m_a, m_b)
                    f_a, f_b = torch.exp(m_a - m), torch.exp(m_b - m)
                    # accumulate into a's tensors: no new (L_q, d_v) buffer per merge
                    l_a.mul_(f_a).add_(l_b * f_b)
                    acc_a.mul_(f_a).add_(acc_b * f_b)
                    m_a.copy_(m)
                    return (m_a, l_a, acc_a)


                def finish_attention(p) -> Tensor:
                    """The attention output (..., L_q, d_v) over every key merged into p."""
                    m, l, acc = p
                    return acc / l
                '''
            )
        },
        {
            "test_merge_partials": "changed a tensor it was given, in place",
        },
        # Issue 40's thirteenth blind corpus, graded blind on 8b5375e: named.
    ),
    Mutant(
        "aa07-05: partials keep m and l as (..., L_q), without the trailing axis",
        A,
        {
            "merge_partials": Rewrite(
                r'''
                def partial_attention(q: Tensor, k: Tensor, v: Tensor):
                    """The partial result of q (..., L_q, d_k) over the keys k (..., L_k, d_k).

                    v is (..., L_k, d_v); the result is a tuple (or a dict) of tensors of your design.
                    """
                    # My design: (m, l, a): per query the max score m (..., L_q), l = sum exp(s - m)
                    # (..., L_q) and a = sum exp(s - m) v (..., L_q, d_v); merging moves both parts to
                    # the larger max with exp(m_part - m) <= 1.
                    s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
                    m = s.amax(dim=-1)
                    p = torch.exp(s - m.unsqueeze(-1))
                    return (m, p.sum(dim=-1), p @ v)


                def merge_partials(a, b):
                    """The partial result over the keys of a and of b (disjoint, the same queries)."""
                    m_a, l_a, acc_a = a
                    m_b, l_b, acc_b = b
                    m = torch.maximum(m_a, m_b)
                    f_a, f_b = torch.exp(m_a - m), torch.exp(m_b - m)
                    return (m, l_a * f_a + l_b * f_b, acc_a * f_a + acc_b * f_b)


                def finish_attention(p) -> Tensor:
                    """The attention output (..., L_q, d_v) over every key merged into p."""
                    m, l, acc = p
                    return acc / l
                '''
            )
        },
        {
            "test_merge_partials": "two shapes do not broadcast",
        },
        # Issue 40's thirteenth blind corpus, graded blind on 8b5375e: exception only (shapes that
        # do not broadcast, the error and the line shown).
    ),
    Mutant(
        "ab07-01: online_softmax_update sums exp of the raw scores, divided by exp(new_max)",
        A,
        {
            "online_softmax_update": Rewrite(
                r'''
                def online_softmax_update(
                    running_max: Tensor, running_sum: Tensor, scores: Tensor
                ) -> tuple[Tensor, Tensor]:
                    """Fold scores (..., C) into running_max (...) and running_sum = Σ exp(s - max)."""
                    new_max = torch.maximum(running_max, scores.amax(dim=-1))
                    factor = torch.exp(running_max - new_max)  # exp(-inf) = 0 for a fresh row
                    # exp(s - m) = exp(s) / exp(m): sum the block's exps, then divide once
                    block = torch.exp(scores).sum(dim=-1) / torch.exp(new_max)
                    return new_max, running_sum * factor + block
                '''
            )
        },
        {
            "test_online_softmax_update": "exp overflows for large scores: subtract the running max before exponentiating",
        },
        # Issue 40's thirteenth blind corpus, graded blind on 8b5375e: named.
    ),
    Mutant(
        "ab07-02: chunked_attention accepts chunk_size=True, bool being an int",
        A,
        {
            "chunked_attention": Rewrite(
                r'''
                def chunked_attention(
                    q: Tensor, k: Tensor, v: Tensor, chunk_size: int, causal: bool = False
                ) -> Tensor:
                    """Attention over key blocks.

                    q (..., L_q, d_k), k (..., L_k, d_k), v (..., L_k, d_v) -> (..., L_q, d_v).
                    """
                    if not isinstance(chunk_size, int) or chunk_size < 1:
                        raise ValueError(f"chunk_size must be a positive int, got {chunk_size!r}")
                    L_q, L_k = q.shape[-2], k.shape[-2]
                    if causal and L_q != L_k:
                        raise ValueError(f"causal attention needs L_q == L_k, got {L_q} and {L_k}")
                    qs = q * (1.0 / math.sqrt(q.shape[-1]))
                    m = torch.full((*q.shape[:-1], 1), float("-inf"), dtype=q.dtype, device=q.device)
                    l = torch.zeros((*q.shape[:-1], 1), dtype=q.dtype, device=q.device)
                    acc = torch.zeros((*q.shape[:-1], v.shape[-1]), dtype=q.dtype, device=q.device)
                    q_pos = torch.arange(L_q, device=q.device).unsqueeze(-1)  # (L_q, 1)
                    for start in range(0, L_k, chunk_size):
                        k_b = k[..., start : start + chunk_size, :]
                        v_b = v[..., start : start + chunk_size, :]
                        s = qs @ k_b.transpose(-2, -1)  # (..., L_q, C)
                        if causal:
                            k_pos = torch.arange(start, start + k_b.shape[-2], device=q.device)
                            s = s.masked_fill(k_pos > q_pos, float("-inf"))  # (L_q, C) mask
                        m_new = torch.maximum(m, s.amax(dim=-1, keepdim=True))
                        alpha = torch.exp(m - m_new)
                        p = torch.exp(s - m_new)
                        l = alpha * l + p.sum(dim=-1, keepdim=True)
                        acc = alpha * acc + p @ v_b.to(p.dtype)
                        m = m_new
                    return (acc / l).to(q.dtype)
                '''
            )
        },
        {
            "test_chunked_attention_exact": "bool is a subclass of int in Python",
        },
        # Issue 40's thirteenth blind corpus, graded blind on 8b5375e: named.
    ),
    Mutant(
        "ab07-03: chunked_attention's running tensors and positions made on the CPU (no device=)",
        A,
        {
            "chunked_attention": Rewrite(
                r'''
                def chunked_attention(
                    q: Tensor, k: Tensor, v: Tensor, chunk_size: int, causal: bool = False
                ) -> Tensor:
                    """Attention over key blocks.

                    q (..., L_q, d_k), k (..., L_k, d_k), v (..., L_k, d_v) -> (..., L_q, d_v).
                    """
                    if isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or chunk_size < 1:
                        raise ValueError(f"chunk_size must be a positive int, got {chunk_size!r}")
                    L_q, L_k = q.shape[-2], k.shape[-2]
                    if causal and L_q != L_k:
                        raise ValueError(f"causal attention needs L_q == L_k, got {L_q} and {L_k}")
                    qs = q * (1.0 / math.sqrt(q.shape[-1]))
                    m = torch.full((*q.shape[:-1], 1), float("-inf"), dtype=q.dtype)
                    l = torch.zeros((*q.shape[:-1], 1), dtype=q.dtype)
                    acc = torch.zeros((*q.shape[:-1], v.shape[-1]), dtype=q.dtype)
                    q_pos = torch.arange(L_q).unsqueeze(-1)  # (L_q, 1)
                    for start in range(0, L_k, chunk_size):
                        k_b = k[..., start : start + chunk_size, :]
                        v_b = v[..., start : start + chunk_size, :]
                        s = qs @ k_b.transpose(-2, -1)  # (..., L_q, C)
                        if causal:
                            k_pos = torch.arange(start, start + k_b.shape[-2])
                            s = s.masked_fill(k_pos > q_pos, float("-inf"))  # (L_q, C) mask
                        m_new = torch.maximum(m, s.amax(dim=-1, keepdim=True))
                        alpha = torch.exp(m - m_new)
                        p = torch.exp(s - m_new)
                        l = alpha * l + p.sum(dim=-1, keepdim=True)
                        acc = alpha * acc + p @ v_b.to(p.dtype)
                        m = m_new
                    return (acc / l).to(q.dtype)
                '''
            )
        },
        {
            "test_chunked_attention_exact": "a tensor made without device= sits on torch's default device",
        },
        # Issue 40's thirteenth blind corpus, graded blind on 8b5375e: named.
    ),
    Mutant(
        "ab07-04: chunked_attention slices one full causal_mask(L) per block",
        A,
        {
            "chunked_attention": Rewrite(
                r'''
                def chunked_attention(
                    q: Tensor, k: Tensor, v: Tensor, chunk_size: int, causal: bool = False
                ) -> Tensor:
                    """Attention over key blocks.

                    q (..., L_q, d_k), k (..., L_k, d_k), v (..., L_k, d_v) -> (..., L_q, d_v).
                    """
                    if isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or chunk_size < 1:
                        raise ValueError(f"chunk_size must be a positive int, got {chunk_size!r}")
                    L_q, L_k = q.shape[-2], k.shape[-2]
                    if causal and L_q != L_k:
                        raise ValueError(f"causal attention needs L_q == L_k, got {L_q} and {L_k}")
                    qs = q * (1.0 / math.sqrt(q.shape[-1]))
                    m = torch.full((*q.shape[:-1], 1), float("-inf"), dtype=q.dtype, device=q.device)
                    l = torch.zeros((*q.shape[:-1], 1), dtype=q.dtype, device=q.device)
                    acc = torch.zeros((*q.shape[:-1], v.shape[-1]), dtype=q.dtype, device=q.device)
                    full_mask = causal_mask(L_q, device=q.device) if causal else None  # True = visible
                    for start in range(0, L_k, chunk_size):
                        k_b = k[..., start : start + chunk_size, :]
                        v_b = v[..., start : start + chunk_size, :]
                        s = qs @ k_b.transpose(-2, -1)  # (..., L_q, C)
                        if causal:
                            block_mask = full_mask[:, start : start + chunk_size]  # (L_q, C)
                            s = s.masked_fill(~block_mask, float("-inf"))
                        m_new = torch.maximum(m, s.amax(dim=-1, keepdim=True))
                        alpha = torch.exp(m - m_new)
                        p = torch.exp(s - m_new)
                        l = alpha * l + p.sum(dim=-1, keepdim=True)
                        acc = alpha * acc + p @ v_b.to(p.dtype)
                        m = m_new
                    return (acc / l).to(q.dtype)
                '''
            )
        },
        {
            "test_chunked_attention_memory": "the causal branch builds something of size (L, L)",
        },
        # Issue 40's thirteenth blind corpus, graded blind on 8b5375e: named.
    ),
    Mutant(
        "ab07-05: merge_partials merges into a's tensors in place (mul_, add_, copy_)",
        A,
        {
            "merge_partials": Rewrite(
                r'''
                def partial_attention(q: Tensor, k: Tensor, v: Tensor):
                    """The partial result of q (..., L_q, d_k) over the keys k (..., L_k, d_k).

                    v is (..., L_k, d_v); the result is a tuple (or a dict) of tensors of your design.
                    """
                    # Design: (m, l, a) per query: m the largest score of the part, l = Σ exp(s - m)
                    # and a = Σ exp(s - m) v, both relative to m. To merge two parts, move both to the
                    # larger maximum (multiply by exp(m_part - m_new) <= 1) and add: exact, and the
                    # same in any order because max and + are associative and commutative.
                    scores = (q @ k.transpose(-2, -1)) / math.sqrt(q.shape[-1])  # (..., L_q, L_k)
                    m = scores.amax(dim=-1, keepdim=True)
                    p = torch.exp(scores - m)
                    return (m, p.sum(dim=-1, keepdim=True), p @ v)


                def merge_partials(a, b):
                    """The partial result over the keys of a and of b (disjoint, the same queries)."""
                    # in place, as FlashAttention does with its accumulators: no new tensors
                    m_a, l_a, acc_a = a
                    m_b, l_b, acc_b = b
                    m = torch.maximum(m_a, m_b)
                    f_a, f_b = torch.exp(m_a - m), torch.exp(m_b - m)
                    l_a.mul_(f_a).add_(l_b * f_b)
                    acc_a.mul_(f_a).add_(acc_b * f_b)
                    m_a.copy_(m)
                    return (m_a, l_a, acc_a)


                def finish_attention(p) -> Tensor:
                    """The attention output (..., L_q, d_v) over every key merged into p."""
                    _, l, acc = p
                    return acc / l
                '''
            )
        },
        {
            "test_merge_partials": "changed a tensor it was given, in place",
        },
        # Issue 40's thirteenth blind corpus, graded blind on 8b5375e: named.
    ),
]

CORRECT = [
    Mutant(
        "f07-14: online update in log space, logaddexp",
        A,
        {
            "online_softmax_update": Rewrite(
                r"""
                def online_softmax_update(running_max, running_sum, scores):
                    block_max = scores.amax(dim=-1)
                    new_max = torch.maximum(running_max, block_max)
                    old_log = torch.log(running_sum) + running_max  # log of sum exp(s) so far
                    block_log = torch.logsumexp(scores, dim=-1)
                    new_sum = torch.exp(torch.logaddexp(old_log, block_log) - new_max)
                    return new_max, new_sum
                """
            )
        },
    ),
    Mutant(
        "f07-15: chunked: torch.split over keys and values, torch.where mask",
        A,
        {
            "chunked_attention": Rewrite(
                r"""
                def chunked_attention(q, k, v, chunk_size, causal=False):
                    if type(chunk_size) is not int or chunk_size <= 0:
                        raise ValueError("chunk_size must be a positive int")
                    n_q, n_k = q.shape[-2], k.shape[-2]
                    if causal and n_q != n_k:
                        raise ValueError("causal attention needs as many queries as keys")
                    scale = q.shape[-1] ** -0.5
                    row_max = q.new_full(q.shape[:-1] + (1,), -math.inf)
                    row_sum = q.new_zeros(q.shape[:-1] + (1,))
                    out = q.new_zeros(q.shape[:-1] + (v.shape[-1],))
                    rows = torch.arange(n_q, device=q.device)[:, None]
                    offset = 0
                    for k_blk, v_blk in zip(k.split(chunk_size, dim=-2), v.split(chunk_size, dim=-2)):
                        s = (q @ k_blk.transpose(-1, -2)) * scale
                        if causal:
                            cols = offset + torch.arange(k_blk.shape[-2], device=q.device)[None, :]
                            s = torch.where(cols <= rows, s, -math.inf)
                        m = torch.maximum(row_max, s.amax(-1, keepdim=True))
                        p = (s - m).exp()
                        corr = (row_max - m).exp()
                        row_sum = row_sum * corr + p.sum(-1, keepdim=True)
                        out = out * corr + p @ v_blk
                        row_max = m
                        offset += k_blk.shape[-2]
                    return out / row_sum
                """
            )
        },
    ),
    Mutant(
        "k07-06: correct alternative",
        A,
        {
            "merge_partials": Rewrite(
                r'''
                def partial_attention(q: Tensor, k: Tensor, v: Tensor):
                    """The partial result of q (..., L_q, d_k) over the keys k (..., L_k, d_k).

                    v is (..., L_k, d_v); the result is a tuple (or a dict) of tensors of your design.
                    """
                    # Design: {"out": softmax attention over this part's keys (..., L_q, d_v),
                    #          "lse": log sum_j exp(s_j) over this part's scores (..., L_q, 1)}.
                    # The attention over the union is the two outputs averaged with weights
                    # exp(lse_a - lse) and exp(lse_b - lse), where lse = logaddexp(lse_a, lse_b) is the
                    # log-sum-exp of all the scores: each part's share of the total softmax mass.
                    # Everything stays in log space, so scores of 1e4 neither overflow nor lose the
                    # small part; logaddexp is symmetric and associative up to rounding.
                    s = (q @ k.transpose(-2, -1)) / math.sqrt(q.shape[-1])
                    lse = torch.logsumexp(s, dim=-1, keepdim=True)
                    out = torch.exp(s - lse) @ v
                    return {"out": out, "lse": lse}


                def merge_partials(a, b):
                    """The partial result over the keys of a and of b (disjoint, the same queries)."""
                    lse = torch.logaddexp(a["lse"], b["lse"])
                    out = torch.exp(a["lse"] - lse) * a["out"] + torch.exp(b["lse"] - lse) * b["out"]
                    return {"out": out, "lse": lse}


                def finish_attention(p) -> Tensor:
                    """The attention output (..., L_q, d_v) over every key merged into p."""
                    return p["out"]
                '''
            )
        },
        # Issue 40's sixth blind corpus, graded blind on bdfa422: correct-full.
    ),
    Mutant(
        "n07-06: parts kept as log-sum-exp and normalised output, merged by logaddexp",
        A,
        {
            "merge_partials": Rewrite(
                r'''
                def partial_attention(q: Tensor, k: Tensor, v: Tensor):
                    """The partial result of q (..., L_q, d_k) over the keys k (..., L_k, d_k).

                    v is (..., L_k, d_v); the result is a tuple (or a dict) of tensors of your design.
                    """
                    # Design: {"lse": log-sum-exp of the scaled scores (..., L_q, 1), "out": the attention
                    # output over these keys (..., L_q, d_v)}. The union's output is the average of the
                    # two outputs weighted by each part's share of the total exp-mass,
                    # exp(lse_part - lse_total), with lse_total = logaddexp(lse_a, lse_b): exact, and
                    # symmetric/associative because logaddexp is. Size independent of L_k.
                    s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
                    lse = torch.logsumexp(s, dim=-1, keepdim=True)
                    out = torch.softmax(s, dim=-1) @ v.to(q.dtype)
                    return {"lse": lse, "out": out}


                def merge_partials(a, b):
                    """The partial result over the keys of a and of b (disjoint, the same queries)."""
                    lse = torch.logaddexp(a["lse"], b["lse"])
                    out = a["out"] * torch.exp(a["lse"] - lse) + b["out"] * torch.exp(b["lse"] - lse)
                    return {"lse": lse, "out": out}


                def finish_attention(p) -> Tensor:
                    """The attention output (..., L_q, d_v) over every key merged into p."""
                    return p["out"]
                '''
            )
        },
        # Issue 40's seventh blind corpus, graded blind on 451e037: correct-full.
    ),
    Mutant(
        "p07-06: log-sum-exp parts merged by logaddexp",
        A,
        {
            "merge_partials": Rewrite(
                r'''
                # kind: correct
                # grade_id: merge_partials
                # alternative: a partial result is (log-sum-exp of the part's scores, the part's NORMALISED output); merging uses torch.logaddexp and weights each output by exp(lse_part - lse_merged); finishing just returns the output.
                # evidence: tools/ev07.py: leading dims (), (2,), (2,3), float64 and float32, q and 3000*q, 4 random parts, two groupings: worst error 6e-14 (float64) / 2.8e-7 (float32), groupings agree to 3.6e-7; 150 numbers for 1 key and for 31 keys.
                def partial_attention(q: Tensor, k: Tensor, v: Tensor):
                    """The partial result of q (..., L_q, d_k) over the keys k (..., L_k, d_k)."""
                    # Design: {"lse": (..., L_q, 1), "out": (..., L_q, d_v)}: the log of the
                    # part's softmax denominator, log sum_j exp(s_j), and the part's own attention
                    # output softmax(s) @ v. Both have a size independent of the number of keys.
                    s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
                    return {"lse": torch.logsumexp(s, dim=-1, keepdim=True), "out": torch.softmax(s, dim=-1) @ v}


                def merge_partials(a, b):
                    """The partial result over the keys of a and of b (disjoint, the same queries)."""
                    # Over the union, the denominator is exp(lse_a) + exp(lse_b), i.e.
                    # lse = logaddexp(lse_a, lse_b), and the output is the mix of the two parts'
                    # outputs with weights exp(lse_a - lse) and exp(lse_b - lse), which sum to 1.
                    # logaddexp never overflows and the weights are in [0, 1], so this is exact
                    # and stable; the formula is symmetric and associative.
                    lse = torch.logaddexp(a["lse"], b["lse"])
                    out = torch.exp(a["lse"] - lse) * a["out"] + torch.exp(b["lse"] - lse) * b["out"]
                    return {"lse": lse, "out": out}


                def finish_attention(p) -> Tensor:
                    """The attention output (..., L_q, d_v) over every key merged into p."""
                    return p["out"]
                '''
            )
        },
        # Issue 40's seventh blind corpus, graded blind on 451e037: correct-full.
    ),
    Mutant(
        "q07-06: partial results as the normalised output and its log-sum-exp",
        A,
        {
            "merge_partials": Rewrite(
                r'''
                def partial_attention(q: Tensor, k: Tensor, v: Tensor):
                    """The partial result of q (..., L_q, d_k) over the keys k (..., L_k, d_k).

                    v is (..., L_k, d_v); the result is a tuple (or a dict) of tensors of your design.
                    """
                    # Design: {"out": attention output over these keys (..., L_q, d_v),
                    #          "lse": log sum_j exp(s_j) over these keys (..., L_q, 1)}.
                    # The attention over the union of two key sets is the average of the two outputs
                    # weighted by each part's share of the total exp-sum, exp(lse_part - lse_total),
                    # with lse_total = logaddexp(lse_a, lse_b); everything stays in log space, so
                    # nothing overflows, and logaddexp and the weighted average are symmetric and
                    # associative (up to rounding).
                    s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
                    lse = torch.logsumexp(s, dim=-1, keepdim=True)
                    return {"out": torch.exp(s - lse) @ v.to(q.dtype), "lse": lse}


                def merge_partials(a, b):
                    """The partial result over the keys of a and of b (disjoint, the same queries)."""
                    lse = torch.logaddexp(a["lse"], b["lse"])
                    out = torch.exp(a["lse"] - lse) * a["out"] + torch.exp(b["lse"] - lse) * b["out"]
                    return {"out": out, "lse": lse}


                def finish_attention(p) -> Tensor:
                    """The attention output (..., L_q, d_v) over every key merged into p."""
                    return p["out"]
                '''
            )
        },
        # Issue 40's eighth blind corpus, graded blind on 47d54b0: correct-full.
    ),
    Mutant(
        "s07-06: partials as normalised output and log-sum-exp, merged with logaddexp",
        A,
        {
            "merge_partials": Rewrite(
                r'''
                def partial_attention(q: Tensor, k: Tensor, v: Tensor):
                    """The partial result of q (..., L_q, d_k) over the keys k (..., L_k, d_k).

                    v is (..., L_k, d_v); the result is a tuple (or a dict) of tensors of your design.
                    """
                    # My partial result: {"lse": log sum_j exp(s_j) over the part's keys, (..., L_q, 1),
                    # "out": the attention output over the part's keys alone, (..., L_q, d_v)}.
                    # Merging: the combined lse is logaddexp(lse_a, lse_b), and each part's output is
                    # weighted by its share of the total mass, exp(lse_part - lse). Shares are <= 1,
                    # so nothing overflows, and logaddexp is symmetric and associative.
                    s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
                    lse = torch.logsumexp(s, dim=-1, keepdim=True)
                    out = torch.exp(s - lse) @ v
                    return {"lse": lse, "out": out}


                def merge_partials(a, b):
                    """The partial result over the keys of a and of b (disjoint, the same queries)."""
                    lse = torch.logaddexp(a["lse"], b["lse"])
                    out = torch.exp(a["lse"] - lse) * a["out"] + torch.exp(b["lse"] - lse) * b["out"]
                    return {"lse": lse, "out": out}


                def finish_attention(p) -> Tensor:
                    """The attention output (..., L_q, d_v) over every key merged into p."""
                    return p["out"]
                '''
            )
        },
        # Issue 40's ninth blind corpus, graded blind on feb0b2e: correct-full.
    ),
    Mutant(
        "u07-06: chunked attention with a running log-sum-exp and a normalised output",
        A,
        {
            "chunked_attention": Rewrite(
                r'''
                def chunked_attention(
                    q: Tensor, k: Tensor, v: Tensor, chunk_size: int, causal: bool = False
                ) -> Tensor:
                    """Attention over key blocks.

                    q (..., L_q, d_k), k (..., L_k, d_k), v (..., L_k, d_v) -> (..., L_q, d_v).
                    """
                    if type(chunk_size) is not int or chunk_size <= 0:
                        raise ValueError(f"chunk_size must be a positive int, got {chunk_size!r}")
                    n_q, n_k = q.shape[-2], k.shape[-2]
                    if causal and n_q != n_k:
                        raise ValueError(f"causal=True needs as many queries as keys ({n_q} != {n_k})")
                    scale = q.shape[-1] ** -0.5
                    lse = q.new_full((*q.shape[:-1], 1), float("-inf"))  # log of the softmax denominator
                    out = q.new_zeros((*q.shape[:-1], v.shape[-1]))  # the normalised output so far
                    rows = torch.arange(n_q, device=q.device)[:, None]
                    for start in range(0, n_k, chunk_size):
                        stop = min(start + chunk_size, n_k)
                        s = (q @ k[..., start:stop, :].transpose(-2, -1)) * scale
                        if causal:
                            cols = torch.arange(start, stop, device=q.device)[None, :]
                            s = s.masked_fill(cols > rows, float("-inf"))
                        new_lse = torch.logaddexp(lse, torch.logsumexp(s, dim=-1, keepdim=True))
                        out = out * torch.exp(lse - new_lse) + torch.exp(s - new_lse) @ v[..., start:stop, :]
                        lse = new_lse
                    return out
                '''
            )
        },
        # Issue 40's tenth blind corpus, graded blind on 60c32e8: correct-full.
    ),
    Mutant(
        "v07-06: partial results as (log-sum-exp, normalised output), merged with logaddexp",
        A,
        {
            "merge_partials": Rewrite(
                r'''
                def partial_attention(q: Tensor, k: Tensor, v: Tensor):
                    """The partial result of q (..., L_q, d_k) over the keys k (..., L_k, d_k).

                    v is (..., L_k, d_v); the result is a tuple (or a dict) of tensors of your design.
                    """
                    # Design: {"lse": log sum_j exp(s_j), "out": softmax over these keys @ v}. The
                    # attention over a union of parts is the mix of the parts' outputs with weights
                    # exp(lse_part - lse_union), and lse_union = logaddexp of the parts: exact,
                    # symmetric, associative and stable (logaddexp and softmax subtract maxima).
                    s = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(q.shape[-1])
                    lse = torch.logsumexp(s, dim=-1, keepdim=True)
                    out = torch.matmul(torch.softmax(s, dim=-1), v)
                    return {"lse": lse, "out": out}


                def merge_partials(a, b):
                    """The partial result over the keys of a and of b (disjoint, the same queries)."""
                    lse = torch.logaddexp(a["lse"], b["lse"])
                    out = torch.exp(a["lse"] - lse) * a["out"] + torch.exp(b["lse"] - lse) * b["out"]
                    return {"lse": lse, "out": out}


                def finish_attention(p) -> Tensor:
                    """The attention output (..., L_q, d_v) over every key merged into p."""
                    return p["out"]
                '''
            )
        },
        # Issue 40's tenth blind corpus, graded blind on 60c32e8: correct-full.
    ),
    Mutant(
        "w07-06: partials as (log-sum-exp, normalised output), merged with logaddexp",
        A,
        {
            "merge_partials": Rewrite(
                r'''
                def partial_attention(q: Tensor, k: Tensor, v: Tensor):
                    """The partial result of q (..., L_q, d_k) over the keys k (..., L_k, d_k).

                    v is (..., L_k, d_v); the result is a tuple (or a dict) of tensors of your design.
                    """
                    # Design: {"lse": log sum_j exp(s_j), "out": softmax(s) @ v} per query. The attention
                    # over the union of two disjoint key sets is the mix of the two outputs with weights
                    # exp(lse_part - lse_union), where lse_union = logaddexp(lse_a, lse_b): exact,
                    # symmetric and associative, and no exp sees a positive argument.
                    s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
                    lse = torch.logsumexp(s, dim=-1)
                    out = torch.exp(s - lse.unsqueeze(-1)) @ v
                    return {"lse": lse, "out": out}


                def merge_partials(a, b):
                    """The partial result over the keys of a and of b (disjoint, the same queries)."""
                    lse = torch.logaddexp(a["lse"], b["lse"])
                    wa = torch.exp(a["lse"] - lse).unsqueeze(-1)
                    wb = torch.exp(b["lse"] - lse).unsqueeze(-1)
                    return {"lse": lse, "out": wa * a["out"] + wb * b["out"]}


                def finish_attention(p) -> Tensor:
                    """The attention output (..., L_q, d_v) over every key merged into p."""
                    return p["out"]
                '''
            )
        },
        # Issue 40's eleventh blind corpus, graded blind on 48fe40c: correct-full.
    ),
    Mutant(
        "x07-06: partials as (log-sum-exp, normalised output), merged as in Flash-Decoding",
        A,
        {
            "merge_partials": Rewrite(
                r'''
                def partial_attention(q: Tensor, k: Tensor, v: Tensor):
                    """The partial result of q (..., L_q, d_k) over the keys k (..., L_k, d_k).

                    v is (..., L_k, d_v); the result is a tuple (or a dict) of tensors of your design.
                    """
                    # Design (as in Flash-Decoding): per query, the log-sum-exp of the part's scaled
                    # scores, lse (..., L_q, 1), and the part's own normalised attention output,
                    # o (..., L_q, d_v). The full output is the average of the parts' outputs weighted
                    # by each part's share of the softmax mass, exp(lse_part - lse_all), and
                    # lse_all = logaddexp of the parts' lse: both are exact and symmetric, so any order
                    # or grouping gives the same result. Neither depends on the number of keys.
                    s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
                    lse = torch.logsumexp(s, dim=-1, keepdim=True)
                    o = torch.softmax(s, dim=-1) @ v
                    return {"lse": lse, "out": o}


                def merge_partials(a, b):
                    """The partial result over the keys of a and of b (disjoint, the same queries)."""
                    lse = torch.logaddexp(a["lse"], b["lse"])
                    w_a = torch.exp(a["lse"] - lse)
                    w_b = torch.exp(b["lse"] - lse)
                    return {"lse": lse, "out": w_a * a["out"] + w_b * b["out"]}


                def finish_attention(p) -> Tensor:
                    """The attention output (..., L_q, d_v) over every key merged into p."""
                    return p["out"]
                '''
            )
        },
        # Issue 40's eleventh blind corpus, graded blind on 48fe40c: correct-full.
    ),
    Mutant(
        "aa07-06: partials as (normalised output, log-sum-exp), merged with logaddexp",
        A,
        {
            "merge_partials": Rewrite(
                r'''
                def partial_attention(q: Tensor, k: Tensor, v: Tensor):
                    """The partial result of q (..., L_q, d_k) over the keys k (..., L_k, d_k).

                    v is (..., L_k, d_v); the result is a tuple (or a dict) of tensors of your design.
                    """
                    # My design: (o, lse): o the attention output over these keys alone (..., L_q, d_v),
                    # lse = log sum_j exp(s_j) (..., L_q, 1). Over two disjoint parts the softmax of all
                    # keys gives part a the share exp(lse_a - lse) with lse = logaddexp(lse_a, lse_b), so
                    # o = share_a * o_a + share_b * o_b exactly, in any order; logaddexp never overflows.
                    s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
                    lse = torch.logsumexp(s, dim=-1, keepdim=True)
                    o = torch.exp(s - lse) @ v
                    return (o, lse)


                def merge_partials(a, b):
                    """The partial result over the keys of a and of b (disjoint, the same queries)."""
                    o_a, lse_a = a
                    o_b, lse_b = b
                    lse = torch.logaddexp(lse_a, lse_b)
                    return (torch.exp(lse_a - lse) * o_a + torch.exp(lse_b - lse) * o_b, lse)


                def finish_attention(p) -> Tensor:
                    """The attention output (..., L_q, d_v) over every key merged into p."""
                    o, lse = p
                    return o
                '''
            )
        },
        # Issue 40's thirteenth blind corpus, graded blind on 8b5375e: correct-full.
    ),
    Mutant(
        "ab07-06: partials as {out, lse}, merged with logaddexp",
        A,
        {
            "merge_partials": Rewrite(
                r'''
                def partial_attention(q: Tensor, k: Tensor, v: Tensor):
                    """The partial result of q (..., L_q, d_k) over the keys k (..., L_k, d_k).

                    v is (..., L_k, d_v); the result is a tuple (or a dict) of tensors of your design.
                    """
                    # Design: (out, lse) per query: out is the finished attention output over this
                    # part's keys and lse = log Σ exp(s) the log of its softmax denominator. Attention
                    # over the union is the mix of the parts' outputs with weights exp(lse_part - lse)
                    # where lse = logaddexp(lse_a, lse_b): exact, symmetric and associative, and stable
                    # because logsumexp/logaddexp never exponentiate a raw score.
                    scores = (q @ k.transpose(-2, -1)) / math.sqrt(q.shape[-1])  # (..., L_q, L_k)
                    lse = torch.logsumexp(scores, dim=-1, keepdim=True)  # (..., L_q, 1)
                    out = torch.exp(scores - lse) @ v  # (..., L_q, d_v)
                    return {"out": out, "lse": lse}


                def merge_partials(a, b):
                    """The partial result over the keys of a and of b (disjoint, the same queries)."""
                    lse = torch.logaddexp(a["lse"], b["lse"])
                    out = a["out"] * torch.exp(a["lse"] - lse) + b["out"] * torch.exp(b["lse"] - lse)
                    return {"out": out, "lse": lse}


                def finish_attention(p) -> Tensor:
                    """The attention output (..., L_q, d_v) over every key merged into p."""
                    return p["out"]
                '''
            )
        },
        # Issue 40's thirteenth blind corpus, graded blind on 8b5375e: correct-full.
    ),
]
