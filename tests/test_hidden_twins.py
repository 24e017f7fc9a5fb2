"""Every clause a visible check asserts is exercised by a named hidden check (its twin).

The visible checks of a test cell decide no score: only the hidden checks do, so a promise that
only a visible check tests is ungraded. This table records, per graded test cell, each clause its
visible checks assert and the hidden check that exercises it (on its own inputs); the test keeps
the table in step with the registry and the notebooks. A new test cell must be audited here; a
renamed or removed twin fails here. The mutants in tests/mutants/ prove that the twins can fail.

01 was audited only for its NumPy answer's return type and its design exercise, sees_the_future (the
other clauses of 01 are not listed).
"""

from __future__ import annotations

import pytest

from autograder.authoring.registry import checks_for
from tests.test_mutants import own_cells

# (assignment, test cell) -> visible clause -> the hidden check that exercises it
TWINS: dict[tuple[str, str], dict[str, str]] = {
    ("01_attention", "test_attention_numpy"): {
        "returns a tuple of NumPy arrays": "numpy_attention_returns_numpy_arrays",
        "shapes, rows sum to 1, output = weights @ V, the softmax values": (
            "numpy_attention_matches_reference"
        ),
    },
    ("01_attention", "test_sees_the_future"): {
        "True or False: False for causal attention, True without a mask and for key i + 1 shown": (
            "sees_the_future_tells_causal_from_leaky"
        ),
    },
    ("02_multi_head", "test_split_heads"): {
        "shape (B, H, L, d_k), head h holds features h*d_k:(h+1)*d_k": (
            "split_heads_matches_the_oracle"
        ),
    },
    ("02_multi_head", "test_merge_heads"): {
        "shape (B, L, H*d_k), head h at features h*d_k:(h+1)*d_k": "merge_heads_matches_the_oracle",
        "merge_heads undoes the split": "merge_heads_undoes_the_split",
    },
    ("02_multi_head", "test_mha_shapes"): {
        "d_model, num_heads, d_k stored; four nn.Linear(d_model, d_model) with a bias": (
            "mha_attributes_and_shapes"
        ),
        "self- and cross-attention shapes; key defaults to query; rows sum to 1": (
            "mha_attributes_and_shapes"
        ),
        "ValueError when d_model % num_heads != 0": "mha_rejects_indivisible_sizes",
    },
    ("02_multi_head", "test_mha_mask"): {
        "an (L, L) mask zeroes hidden keys in every head": "mha_applies_every_mask_shape",
        "a (B, L_q, L_k) mask applies per sentence to every head": (
            "mha_applies_a_sentence_mask_to_every_head"
        ),
    },
    ("02_multi_head", "test_mha_parity"): {
        "weights and output equal nn.MultiheadAttention's": "mha_matches_torch_multihead_attention",
    },
    ("02_multi_head", "test_heads_switched_off"): {
        "the shape of x": "ablation_is_defined_at_the_edges",
        "every head kept gives mha(x)[0]": "every_head_on_is_the_layer",
        "an off head's q, k, v rows change nothing; a kept head's v rows do": (
            "switched_off_heads_are_gone_and_kept_heads_count"
        ),
        "every head off: a finite output of the shape of x": "ablation_is_defined_at_the_edges",
    },
    ("03_transformer_block", "test_clean"): {
        "a list of tokens: lowercased words and single punctuation marks": (
            "clean_matches_the_word_tokenizer"
        ),
    },
    ("03_transformer_block", "test_build_vocab"): {
        "specials first, falling count, ties alphabetical, max_vocab_size, min_freq": (
            "build_vocab_matches_the_word_tokenizer"
        ),
        "build_vocab(texts): the defaults keep every token": (
            "build_vocab_defaults_keep_every_token"
        ),
    },
    ("03_transformer_block", "test_encode"): {
        "a list: <cls>, one id per token, UNK, cut and padded to max_len": (
            "encode_matches_the_specification"
        ),
        "encode(text, token_to_id): no max_len neither cuts nor pads": (
            "encode_without_max_len_neither_cuts_nor_pads"
        ),
    },
    ("03_transformer_block", "test_sinusoidal_encoding"): {
        "a (max_len, d_model) float32 tensor of the formula's values": (
            "sinusoidal_encoding_matches_the_formula"
        ),
    },
    ("03_transformer_block", "test_layer_norm"): {
        "shape kept, mean 0 and variance 1, gamma and beta as nn.LayerNorm, biased variance": (
            "layer_norm_matches_torch"
        ),
    },
    ("03_transformer_block", "test_feed_forward"): {
        "linear1, linear2 with biases; no other parameters; shape; linear2(relu(linear1(x)))": (
            "feed_forward_matches_the_reference"
        ),
    },
    ("03_transformer_block", "test_encoder_block"): {
        "a tuple (out, weights) of the right shapes; submodules; post-norm; self_attn's weights": (
            "encoder_block_matches_the_reference"
        ),
    },
    ("03_transformer_block", "test_padded_block"): {
        "the shape and dtype of x": "padded_block_is_blind_to_pads_at_the_end",
        "the output has no non-finite value, a sentence of pads only included": (
            "padded_block_stays_finite_for_sentences_of_pads"
        ),
        "real positions unchanged when only the pads' vectors change": (
            "padded_block_is_blind_to_pads_at_the_end"
        ),
        "real positions equal the block's output on the sentence without its pads": (
            "padded_block_is_blind_to_pads_at_the_end"
        ),
    },
    ("04_depth", "test_depth_stack"): {
        "self.layers an nn.ModuleList of EncoderBlocks; (output, list of maps); chained; masked": (
            "depth_stack_matches_the_reference"
        ),
    },
    ("04_depth", "test_depth_stack_layers"): {
        "independent layers (parameter count, different initial weights)": (
            "depth_stack_layers_are_independent"
        ),
        "each layer its own map": "depth_stack_returns_one_distinct_map_per_layer",
    },
    ("04_depth", "test_attention_metrics"): {
        "entropy: log(L) for uniform, 0 for one-hot, over the last dim": (
            "attention_entropy_matches_categorical"
        ),
        "TV: over the last dim, 0 for TV(p, p), the factor 1/2": (
            "total_variation_matches_the_definition"
        ),
    },
    ("04_depth", "test_attention_focus"): {
        "one score per row; 0 for uniform, 1 for one key; in [0, 1]": (
            "attention_focus_is_calibrated"
        ),
        "softmax(s / T): never rises as T grows; permuted keys score alike": (
            "attention_focus_ignores_order_and_falls_with_temperature"
        ),
        "finite with exact zeros; a single key gives a score in [0, 1]; 0-dim for one row": (
            "attention_focus_is_defined_everywhere"
        ),
    },
    ("05_sentiment", "test_masked_mean"): {
        "shape (B, d_model), mean over the real tokens only": "masked_mean_matches_the_oracle",
        "values at padded positions do not leak": "masked_mean_ignores_appended_padding",
    },
    ("05_sentiment", "test_sentiment_model"): {
        "logits shape; (logits, weights) with return_attention, the same logits; a map per layer": (
            "sentiment_model_returns_logits_and_weights"
        ),
        "embeddings of std about 1 (TokenEmbedding)": "sentiment_model_matches_its_parts",
        "word order matters": "sentiment_model_sees_word_order_and_batches_independently",
    },
    ("05_sentiment", "test_padding_invariance"): {
        "the weights on <pad> keys are 0 in every layer": "padding_gets_no_attention",
        "appended padding changes no logit": "padding_never_changes_the_logits",
    },
    ("05_sentiment", "test_train_step"): {
        "returns the loss before the update as a float; train mode; clip; scheduler": (
            "train_step_matches_the_reference_update"
        ),
        "zero_grad before backward": "train_step_ignores_gradients_left_before_it",
        "the loss goes down": "train_step_drives_the_loss_down",
    },
    ("05_sentiment", "test_make_optimizer"): {
        "AdamW with lr and weight_decay": "make_optimizer_is_adamw_with_lr_and_weight_decay",
        "over every parameter": "make_optimizer_covers_every_parameter",
    },
    ("05_sentiment", "test_heldout_accuracy"): {
        "test accuracy near the baseline's": "heldout_accuracy_matches_the_baseline",
    },
    ("05_sentiment", "test_heldout_contrast"): {
        "contrast sentences beat the baseline": "heldout_contrast_beats_the_baseline",
    },
    ("05_sentiment", "test_token_importance"): {
        "shape (B, L) in the weights' dtype, finite, non-negative, 0 at pads, sum 1; inputs kept": (
            "token_importance_is_a_distribution_over_the_real_tokens"
        ),
        "appended padding changes no real token's score": "token_importance_ignores_padding",
        "a sentence alone scores as in the batch; a sentence of pads only scores zeros": (
            "token_importance_handles_padding_only_and_keeps_sentences_apart"
        ),
        "the key every query reads scores the highest": (
            "token_importance_finds_the_key_everyone_reads"
        ),
    },
    ("06_char_lm", "test_make_blocks"): {
        "(n_blocks, block_size) blocks; y is x shifted by one": "make_blocks_shifts_targets_by_one",
    },
    ("06_char_lm", "test_causal_head"): {
        "shape; query, key, value without bias; position 0 gets its own value": (
            "causal_head_matches_masked_attention"
        ),
        "the future does not leak": "causal_head_ignores_the_future",
    },
    ("06_char_lm", "test_multihead_causal"): {
        "self.heads an nn.ModuleList of heads of head_size d_model // num_heads; shape; causal": (
            "multihead_matches_torch_multihead_attention"
        ),
    },
    ("06_char_lm", "test_charlm"): {
        "self.block_size, num_layers blocks, logits (B, L, V) also for L < block_size": (
            "charlm_structure_and_shapes"
        ),
        "an untrained model scores about ln V": "charlm_starts_near_uniform_loss",
    },
    ("06_char_lm", "test_charlm_causality"): {
        "the future does not change earlier logits": "charlm_logits_ignore_the_future",
    },
    ("06_char_lm", "test_lm_loss"): {
        "a scalar, the mean over all positions of -log p(target)": (
            "lm_loss_is_the_mean_over_all_positions"
        ),
    },
    ("06_char_lm", "test_trained_loss"): {
        "validation loss below 0.6 ln V": "trained_model_beats_the_uniform_guess",
    },
    ("06_char_lm", "test_sample"): {
        "shape (B, L + n), starts with the prompt, top_k=1 picks the argmax": (
            "sample_crops_the_context_and_reads_the_last_position"
        ),
        "top_k=2 draws only, and both, of the two likeliest ids": (
            "sample_follows_temperature_and_top_k"
        ),
    },
    ("06_char_lm", "test_penalise_repeats"): {
        "the logits left unchanged; (B, V) in their dtype; finite": (
            "penalty_moves_probability_from_seen_ids_to_the_others"
        ),
        "the seen ids' total probability does not rise; the unseen ids' odds hold": (
            "penalty_moves_probability_from_seen_ids_to_the_others"
        ),
        "strength 0 changes nothing; strength 3 gives the seen ids no more than 1.5": (
            "penalty_is_off_at_zero_and_grows_with_strength"
        ),
    },
    ("07_attention_at_scale", "test_online_softmax_update"): {
        "the worked example: a single row (0-dim running max and sum)": (
            "online_softmax_folds_a_single_row"
        ),
        "a batch of rows folded in blocks: shapes, max and sum": (
            "online_softmax_folds_any_block_split"
        ),
        "no change in place; no overflow near 1000": "online_softmax_is_stable_and_pure",
    },
    ("07_attention_at_scale", "test_chunked_attention_exact"): {
        "shape and q's dtype; exact for every chunk size; float32; no batch dims": (
            "chunked_matches_the_reference"
        ),
        "ValueError for a bad chunk_size": "chunked_rejects_bad_chunk_sizes",
    },
    ("07_attention_at_scale", "test_chunked_attention_causal"): {
        "shape; finite; the causal reference for every chunk size; causal=False masks nothing": (
            "causal_matches_the_reference"
        ),
        "ValueError when L_q != L_k": "causal_needs_equal_lengths",
    },
    ("07_attention_at_scale", "test_chunked_attention_memory"): {
        "peak memory well below one (L, L) matrix": "memory_grows_linearly",
    },
    ("07_attention_at_scale", "test_merge_partials"): {
        "one part, two parts, three parts: shape (..., L_q, d_v) and the attention over all keys": (
            "merged_partials_are_attention_over_all_the_keys"
        ),
        "three parts merged as ((a, b), c) and as (c, (b, a)) give the same output": (
            "merging_order_does_not_matter"
        ),
        "scores in the thousands; a part about 10^4 lower, alone and merged first": (
            "merging_is_stable_for_huge_scores"
        ),
        "float64 and float32 keep q's dtype; as many numbers for 1 key as for 29": (
            "partial_results_are_small_and_defined_everywhere"
        ),
    },
}
AUDITED = sorted({assignment for assignment, _ in TWINS} - {"01_attention"})


@pytest.mark.parametrize(("assignment", "grade_id"), sorted(TWINS))
def test_every_twin_is_a_hidden_check_of_its_cell(assignment: str, grade_id: str):
    registered = {entry.name for entry in checks_for(assignment, grade_id)}
    missing = {
        clause: name
        for clause, name in TWINS[assignment, grade_id].items()
        if name not in registered
    }
    assert not missing, f"{assignment}/{grade_id} has no hidden check named {missing}"


@pytest.mark.parametrize("assignment", AUDITED)
def test_every_test_cell_of_an_audited_assignment_is_listed(assignment: str):
    cells = {cell for tests in own_cells(assignment).values() for cell in tests}
    listed = {grade_id for name, grade_id in TWINS if name == assignment}
    assert cells == listed, (
        f"{assignment}: test cells not audited {sorted(cells - listed)}, "
        f"listed cells that are not test cells {sorted(listed - cells)}"
    )
