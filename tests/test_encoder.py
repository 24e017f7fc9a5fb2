"""Encoder pieces against torch's modules, plus the properties of the two models."""

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

from attention_lab.embedding import LearnedPositionalEmbedding, TokenEmbedding
from attention_lab.reference.a03_transformer_block import (
    EncoderBlock,
    FeedForward,
    LayerNorm,
    SinusoidalPositionalEncoding,
    sinusoidal_table,
)
from attention_lab.reference.a04_depth import TransformerEncoder
from attention_lab.reference.a05_sentiment import SentimentClassifier
from attention_lab.reference.a06_char_lm import CausalLM
from attention_lab.torch_mha import load_into_torch_mha

ATOL = 1e-5


def test_layer_norm_matches_nn_layer_norm():
    torch.manual_seed(0)
    ours, theirs = LayerNorm(6), nn.LayerNorm(6)
    with torch.no_grad():
        ours.weight.uniform_(0.5, 2)
        ours.bias.uniform_(-1, 1)
        theirs.load_state_dict(ours.state_dict())
    x = torch.randn(2, 5, 6) * 4 + 3
    torch.testing.assert_close(ours(x), theirs(x), atol=ATOL, rtol=0)


def test_layer_norm_keeps_constant_rows_finite():
    out = LayerNorm(4)(torch.full((2, 4), 7.0))
    assert torch.isfinite(out).all() and torch.all(out == 0)


def copy_block_into_torch_layer(block: EncoderBlock, layer: nn.TransformerEncoderLayer) -> None:
    attn = block.self_attn
    projections = (attn.q_proj, attn.k_proj, attn.v_proj, attn.out_proj)
    load_into_torch_mha(
        layer.self_attn, *(p.weight for p in projections), *(p.bias for p in projections)
    )
    with torch.no_grad():
        layer.linear1.load_state_dict(block.feed_forward.linear1.state_dict())
        layer.linear2.load_state_dict(block.feed_forward.linear2.state_dict())
        layer.norm1.load_state_dict(block.norm1.state_dict())
        layer.norm2.load_state_dict(block.norm2.state_dict())


@pytest.mark.parametrize("norm_first", [False, True])
def test_encoder_block_matches_transformer_encoder_layer(norm_first):
    torch.manual_seed(1)
    d_model, num_heads, d_ff = 12, 3, 20
    block = EncoderBlock(d_model, num_heads, d_ff, dropout=0.0, norm_first=norm_first).eval()
    layer = nn.TransformerEncoderLayer(
        d_model, num_heads, d_ff, dropout=0.0, batch_first=True, norm_first=norm_first
    ).eval()
    copy_block_into_torch_layer(block, layer)
    x = torch.randn(2, 7, d_model)
    keep = torch.ones(2, 7, dtype=torch.bool)
    keep[1, 5:] = False
    out, weights = block(x, keep.unsqueeze(1))
    expected = layer(x, src_key_padding_mask=~keep)  # torch: True = padding
    assert weights.shape == (2, num_heads, 7, 7)
    # torch's fast path zeroes padded rows, so compare the real positions only
    torch.testing.assert_close(out[keep], expected[keep], atol=ATOL, rtol=0)


def test_encoder_block_keeps_shape_32_10_64():
    out, _ = EncoderBlock(64, 8, 128)(torch.randn(32, 10, 64))
    assert out.shape == (32, 10, 64)


def test_transformer_encoder_returns_one_distinct_map_per_layer():
    torch.manual_seed(2)
    encoder = TransformerEncoder(3, d_model=8, num_heads=2, d_ff=16)
    x = torch.randn(2, 5, 8)
    out, maps = encoder(x)
    assert out.shape == x.shape and len(maps) == 3
    assert not torch.allclose(maps[0], maps[1]) and not torch.allclose(maps[1], maps[2])
    out.sum().backward()
    for index, layer in enumerate(encoder.layers):
        assert all(p.grad is not None and p.grad.abs().sum() > 0 for p in layer.parameters()), index


def test_sinusoidal_table_follows_the_paper():
    d_model = 6
    table = sinusoidal_table(50, d_model)
    assert torch.equal(table[0], torch.tensor([0.0, 1, 0, 1, 0, 1]))
    for pos in (1, 7, 49):
        for i in range(d_model // 2):
            angle = pos / 10000 ** (2 * i / d_model)
            assert math.isclose(table[pos, 2 * i], math.sin(angle), abs_tol=1e-5)
            assert math.isclose(table[pos, 2 * i + 1], math.cos(angle), abs_tol=1e-5)


def test_sinusoidal_table_handles_odd_width():
    table = sinusoidal_table(4, 5)
    assert table.shape == (4, 5)
    torch.testing.assert_close(table[:, 4], torch.sin(torch.arange(4.0) / 10000 ** (4 / 5)))


def test_positional_encodings_add_to_input():
    x = torch.randn(2, 3, 6)
    torch.testing.assert_close(SinusoidalPositionalEncoding(6)(x), x + sinusoidal_table(3, 6))
    learned = LearnedPositionalEmbedding(4, 6)
    torch.testing.assert_close(learned(x), x + learned.embedding.weight[:3])


def test_token_embedding_is_scaled_by_sqrt_d_model():
    embed = TokenEmbedding(10, 16)
    ids = torch.tensor([[1, 2, 3]])
    torch.testing.assert_close(embed(ids), embed.embedding(ids) * 4.0)


def test_feed_forward_is_position_wise():
    ff = FeedForward(6, 10)
    x = torch.randn(2, 4, 6)
    torch.testing.assert_close(ff(x)[:, 2], ff(x[:, 2]))


@settings(max_examples=25, deadline=None)
@given(st.integers(2, 8), st.integers(0, 2**31 - 1))
def test_encoder_without_positions_is_permutation_equivariant(length, seed):
    torch.manual_seed(seed)
    encoder = TransformerEncoder(2, d_model=8, num_heads=2, d_ff=12).eval()
    x = torch.randn(1, length, 8)
    perm = torch.randperm(length)
    out, _ = encoder(x)
    out_perm, _ = encoder(x[:, perm])
    torch.testing.assert_close(out_perm, out[:, perm], atol=1e-5, rtol=0)


def test_positional_encoding_breaks_permutation_equivariance():
    torch.manual_seed(3)
    encoder = TransformerEncoder(1, d_model=8, num_heads=2, d_ff=12).eval()
    position = SinusoidalPositionalEncoding(8)
    x = torch.randn(1, 4, 8)
    perm = torch.tensor([3, 1, 0, 2])
    out, _ = encoder(position(x))
    out_perm, _ = encoder(position(x[:, perm]))
    assert not torch.allclose(out_perm, out[:, perm], atol=1e-3)


@pytest.mark.parametrize("pooling", ["mean", "cls"])
def test_classifier_ignores_padding(pooling):
    torch.manual_seed(4)
    model = SentimentClassifier(
        vocab_size=20, d_model=8, num_heads=2, num_layers=2, d_ff=16, pad_id=0, pooling=pooling
    ).eval()
    short = torch.tensor([[2, 5, 6, 7]])
    padded = torch.tensor([[2, 5, 6, 7, 0, 0, 0]])
    torch.testing.assert_close(model(short), model(padded), atol=1e-5, rtol=0)


def test_mean_pooling_averages_real_positions_only():
    model = SentimentClassifier(vocab_size=10, d_model=4, num_heads=1, num_layers=1, d_ff=8)
    hidden = torch.arange(12.0).view(1, 3, 4)
    pooled = model.pool(hidden, torch.tensor([[3, 4, 0]]))
    torch.testing.assert_close(pooled, hidden[:, :2].mean(1))


def test_classifier_returns_attention_on_request():
    model = SentimentClassifier(vocab_size=10, d_model=8, num_heads=2, num_layers=3, d_ff=8)
    logits, maps = model(torch.tensor([[2, 3, 4, 0]]), return_attention=True)
    assert logits.shape == (1, 2) and len(maps) == 3 and maps[0].shape == (1, 2, 4, 4)


def test_causal_lm_ignores_future_tokens():
    torch.manual_seed(5)
    model = CausalLM(vocab_size=11, block_size=8, d_model=16, num_heads=2, num_layers=2).eval()
    idx = torch.randint(0, 11, (2, 8))
    changed = idx.clone()
    changed[:, 5:] = (changed[:, 5:] + 1) % 11
    torch.testing.assert_close(model(idx)[:, :5], model(changed)[:, :5], atol=1e-5, rtol=0)
    assert not torch.allclose(model(idx)[:, 5:], model(changed)[:, 5:])


def test_generate_extends_and_respects_top_k():
    torch.manual_seed(6)
    model = CausalLM(vocab_size=9, block_size=4, d_model=8, num_heads=2, num_layers=1).eval()
    start = torch.zeros(3, 1, dtype=torch.long)
    out = model.generate(start, 10, generator=torch.Generator().manual_seed(0))
    assert out.shape == (3, 11) and torch.equal(out[:, :1], start)
    greedy = model.generate(start, 6, top_k=1)
    for t in range(1, 7):  # top_k=1 is greedy decoding
        context = greedy[:, max(0, t - 4) : t]
        assert torch.equal(greedy[:, t], model(context)[:, -1].argmax(-1))


def test_generate_is_reproducible_with_a_generator():
    model = CausalLM(vocab_size=9, block_size=4, d_model=8, num_heads=2, num_layers=1).eval()
    start = torch.zeros(1, 1, dtype=torch.long)
    first = model.generate(
        start, 8, temperature=0.7, top_k=3, generator=torch.Generator().manual_seed(1)
    )
    again = model.generate(
        start, 8, temperature=0.7, top_k=3, generator=torch.Generator().manual_seed(1)
    )
    assert torch.equal(first, again)


# --- errors -----------------------------------------------------------------------------


def test_embedding_rejects_unknown_token_ids():
    with pytest.raises(ValueError, match=r"token ids in \[0, 10\), got ids from 0 to 12"):
        TokenEmbedding(10, 4)(torch.tensor([[0, 12]]))


def test_embedding_rejects_float_ids():
    with pytest.raises(TypeError, match="integer token ids"):
        TokenEmbedding(10, 4)(torch.tensor([[0.0, 1.0]]))


def test_positional_encoding_rejects_too_long_input():
    with pytest.raises(ValueError, match=r"L <= 4, d_model=6\), got \(1, 5, 6\)"):
        SinusoidalPositionalEncoding(6, max_len=4)(torch.randn(1, 5, 6))


def test_causal_lm_rejects_too_long_context():
    model = CausalLM(vocab_size=5, block_size=3, d_model=4, num_heads=1, num_layers=1)
    with pytest.raises(ValueError, match=r"L <= 3\), got \(1, 4\)"):
        model(torch.zeros(1, 4, dtype=torch.long))


def test_generate_rejects_bad_sampling_arguments():
    model = CausalLM(vocab_size=5, block_size=3, d_model=4, num_heads=1, num_layers=1)
    start = torch.zeros(1, 1, dtype=torch.long)
    with pytest.raises(ValueError, match="temperature > 0"):
        model.generate(start, 2, temperature=0)
    with pytest.raises(ValueError, match=r"top_k in \[1, 5\]"):
        model.generate(start, 2, top_k=6)


def test_classifier_rejects_unknown_pooling():
    with pytest.raises(ValueError, match="'cls' or 'mean'"):
        SentimentClassifier(vocab_size=5, pooling="max")


def test_encoder_rejects_zero_layers():
    with pytest.raises(ValueError, match="num_layers >= 1"):
        TransformerEncoder(0, 8, 2, 8)
