"""What several exercises of 05 share: hidden ids, the pooling oracle, building the model."""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor, nn

import attention_lab.reference.a05_sentiment as reference
from attention_lab.reference.a01_attention import padding_mask
from autograder.authoring.closeness import is_close
from autograder.authoring.diagnosis import squeezed_mistake
from autograder.authoring.hidden_draws import random_sizes, under_seed
from autograder.authoring.in_place_writes import written_in_place_mistake
from autograder.authoring.mistakes import Mistake, catalogue
from autograder.authoring.registration import dtype_left_behind
from autograder.authoring.registry import fail
from autograder.authoring.student_errors import explain

ASSIGNMENT = "05_sentiment"
squeezed_mistake(ASSIGNMENT)  # diagnose names it in every exercise
written_in_place_mistake(ASSIGNMENT)  # inputs_kept names it in every exercise
BANNED = {"attention_lab's SentimentClassifier": reference.SentimentClassifier}

# The named mistakes of each exercise, by family (autograder/authoring/mistakes.py): each is
# diagnosed only where the answer's output matches the output of that mistake.
MASKED_MEAN = catalogue(
    ASSIGNMENT,
    "masked_mean",
    {
        "what is averaged": {
            "includes_padding": "pooling includes padding: the mean runs over all L positions, "
            "so <pad> outputs enter the sentence vector; weight each position by "
            "(token_ids != pad_id) and divide by the number of real tokens",
            "pad_id_hard_coded": "the pad id is hard-coded to 0: compare the ids with `pad_id` "
            "(self.pad_id in the model), which is not always 0",
            "mask_reversed": "mask polarity reversed: you averaged the <pad> positions; keep the "
            "positions where token_ids != pad_id",
            "first_n_positions": "pads before the end of a row were averaged in: the mean runs "
            "over the first n positions, n the row's number of real tokens, as if every pad sat "
            "at the end; masked_mean must leave out every position whose id is pad_id, wherever "
            "it sits (weight each position by token_ids != pad_id)",
        },
        "pooling denominator": {
            "divided_by_length": "divided by L, the number of positions, instead of by the "
            "number of real tokens (keep.sum(dim=1))",
            "divided_by_batch_count": "divided by the number of real tokens in the whole batch "
            "instead of in each row: sum the mask over dim=1 only (keep.sum(dim=1))",
            "not_divided": "the masked values are summed but not divided: divide by the number "
            "of real tokens",
            "zero_count_unguarded": "a row made only of padding divides a sum of 0 by a count of "
            "0, which is NaN (0/0); every other row is right: the statement asks zeros for that "
            "row, so keep its count at least 1 (count.clamp(min=1)) or write zeros there",
        },
        "dtype": {
            # What shows is the result in float32, not how hidden got there (a float32 operand,
            # or hidden cast up on purpose and the result not cast back).
            "computed_in_float32": "masked_mean computes in float32 when given half precision: "
            "its result is the mean computed in float32 on the same input, returned in float32; "
            "return hidden's dtype (keep every tensor it multiplies or divides hidden by in "
            "hidden's dtype, or cast the result back with .to(hidden.dtype))",
        },
    },
)
POOLING_INCLUDES_PADDING = MASKED_MEAN["includes_padding"]
PAD_ID_HARD_CODED = MASKED_MEAN["pad_id_hard_coded"]
MODEL = catalogue(
    ASSIGNMENT,
    "sentiment_model",
    {
        "padding mask": {
            "no_padding_mask": "real tokens attend to <pad> keys: there is no padding mask in "
            "attention; pass padding_mask(token_ids, self.pad_id) to self.encoder",
            "padding_mask_reversed": "padding mask polarity reversed: only the <pad> keys get "
            "attention; True means 'may attend', so use padding_mask(token_ids, self.pad_id) as "
            "it is",
            "padding_mask_on_queries": "the padding mask hides the <pad> queries instead of the "
            "<pad> keys (it is transposed, (B, L, 1)): padding_mask(token_ids, self.pad_id) is "
            "(B, 1, L), one row of keys shared by every query; pass it as it is",
        },
        "pipeline order": {
            "no_position": "the positional encoding is missing: add self.position to the token "
            "embeddings",
        },
        "pooling": {
            "last_position": "the sentence vector is the encoder's output at the last position, "
            "hidden[:, -1], which is a <pad> in every sentence shorter than the batch: pool the "
            "real tokens, masked_mean(hidden, token_ids, self.pad_id)",
        },
        "classifier": {
            "classes_hard_coded": "the number of logits does not follow num_classes: the "
            "classifier's output size is fixed; the statement's head is nn.Linear(d_model, "
            "num_classes)",
        },
        "output": {
            "probabilities": "forward returns probabilities (a softmax of the logits over the "
            "classes, every row summing to 1), where the statement asks for logits",
        },
        "embedding scale": {
            "embeddings_scaled_twice": "the token embeddings are scaled by √d_model twice: "
            "TokenEmbedding already multiplies them by √d_model",
        },
        "gradient": {
            "logits_without_gradient": "the logits carry no gradient (forward runs under "
            "torch.no_grad(), or detaches), so loss.backward() cannot train the model: let "
            "forward build the autograd graph, and train again",
        },
        # Train mode, judged in sentiment_model_dropout.py from what the encoder is given and
        # what follows it.
        "dropout mode": {
            # What was observed only (as 06's): a dropout that eval() does not reach has
            # several causes (F.dropout without training=, modules held in a plain list).
            "random_in_eval": "in eval mode the logits change from one call to the next and "
            "follow the random seed, so something in the model still draws at random",
        },
        "dropout before the encoder": {
            "front_not_dropped": "in train mode the encoder's input, position(embed(ids)), is "
            "not dropped at all: build self.position = SinusoidalPositionalEncoding(d_model, "
            "max_len, dropout), which drops after adding the positions",
            "front_dropped_before_positions": "in train mode the encoder's input, "
            "position(embed(ids)), is the token embeddings dropped, then the positions added: "
            "drop after adding the positions (SinusoidalPositionalEncoding(d_model, max_len, "
            "dropout) does)",
            "front_dropped_twice": "in train mode the encoder's input, position(embed(ids)), is "
            "dropped twice, as by two dropouts at the model's rate in a row: drop it once, after "
            "adding the positions",
            "front_unscaled": "in train mode the dropout of the encoder's input zeroes values but "
            "does not scale the kept ones by 1/(1-p): use nn.Dropout or F.dropout, which do",
            "front_other_rate": "in train mode the encoder's input is dropped at another rate "
            "than the model's dropout: give the dropout before the encoder the model's dropout, "
            "SinusoidalPositionalEncoding(d_model, max_len, dropout)",
            "front_keep_probability": "in train mode the encoder's input is dropped with the "
            "keep probability 1 - p as the rate: dropout takes the probability of zeroing, p",
        },
        "dropout passed on": {
            "encoder_without_dropout": "self.encoder is built without the model's dropout, so "
            "it drops nothing in train mode: build TransformerEncoder(num_layers, d_model, "
            "num_heads, d_ff, dropout)",
        },
        "dropout after the encoder": {
            "dropout_on_pooled": "in train mode the model applies dropout to the pooled vector, "
            "the input of its classifier",
            "dropout_on_logits": "in train mode the model applies dropout to the logits",
        },
    },
)
NO_PADDING_MASK = MODEL["no_padding_mask"]
PADDING_MASK_REVERSED = MODEL["padding_mask_reversed"]


def oracle_masked_mean(hidden: Tensor, token_ids: Tensor, pad_id: int) -> Tensor:
    """The mean over real positions, written as a loop over rows (zeros for an all-padding row)."""
    rows = []
    for h, ids in zip(hidden, token_ids, strict=True):
        real = ids != pad_id
        rows.append(h[real].mean(0) if real.any() else torch.zeros_like(h[0]))
    return torch.stack(rows)


def masked_mean_mistakes(hidden: Tensor, token_ids: Tensor, pad_id: int) -> dict[Mistake, Tensor]:
    keep = (token_ids != pad_id).unsqueeze(-1).to(hidden.dtype)
    keep_zero = (token_ids != 0).unsqueeze(-1).to(hidden.dtype)
    pads = 1.0 - keep
    length = hidden.shape[1]
    return {
        POOLING_INCLUDES_PADDING: hidden.mean(1),
        PAD_ID_HARD_CODED: (hidden * keep_zero).sum(1) / keep_zero.sum(1).clamp(min=1.0),
        MASKED_MEAN["divided_by_length"]: (hidden * keep).sum(1) / length,
        MASKED_MEAN["divided_by_batch_count"]: (hidden * keep).sum(1) / keep.sum().clamp(min=1.0),
        MASKED_MEAN["not_divided"]: (hidden * keep).sum(1),
        MASKED_MEAN["mask_reversed"]: (hidden * pads).sum(1) / pads.sum(1).clamp(min=1.0),
    }


def first_n_mean(hidden: Tensor, token_ids: Tensor, pad_id: int) -> Tensor:
    """The mean over the first n positions of each row, n its count of real tokens: right only
    where every pad sits at the end of its row (zeros for an all-padding row)."""
    rows = []
    for h, ids in zip(hidden, token_ids, strict=True):
        n = int((ids != pad_id).sum())
        rows.append(h[:n].mean(0) if n else torch.zeros_like(h[0]))
    return torch.stack(rows)


def draw_ids(g: torch.Generator, b: int, length: int, pad_id: int, vocab: int) -> Tensor:
    """(b, length) ids: every row has 1..length real tokens, then pads; id 0 occurs as a real token."""
    ids = torch.randint(0, vocab, (b, length), generator=g)
    ids[ids == pad_id] = (pad_id + 1) % vocab
    if pad_id != 0:
        ids[:, 0] = 0  # a real token with id 0: hard-coding pad_id = 0 would hide it
    lengths = torch.randint(1, length + 1, (b,), generator=g)
    lengths[0], lengths[-1] = max(1, length - 3), length  # some padding, and none
    for row, n in enumerate(lengths.tolist()):
        ids[row, n:] = pad_id
    return ids


def draw_unpadded_ids(g: torch.Generator, b: int, length: int, pad_id: int, vocab: int) -> Tensor:
    """(b, length) ids of real tokens only: neither ``pad_id`` nor 0 (the pad id a model that
    hard-codes one would see), so that how padding is handled changes nothing on them."""
    real = torch.tensor([i for i in range(vocab) if i not in (0, pad_id)])
    return real[torch.randint(0, len(real), (b, length), generator=g)]


def model_config(g: torch.Generator) -> dict[str, int]:
    """A small configuration whose sizes all differ: H > 1 so d_model != d_k, C > 2, pad_id != 0."""
    num_heads, d_k, num_classes, pad_id, num_layers = random_sizes(g, 5, low=2, high=7)
    return dict(
        vocab_size=20,
        d_model=num_heads * d_k,
        num_heads=num_heads,
        num_layers=num_layers - 1 if num_layers > 4 else num_layers,
        d_ff=3 * num_heads * d_k + 1,
        num_classes=num_classes,
        max_len=40,
        pad_id=pad_id,
        dropout=0.0,
    )


def build_model(cls: type, config: dict[str, int], seed: int) -> nn.Module:
    """A fresh model in eval mode, built without touching the global RNG."""
    with under_seed(seed):
        model = cls(**config)
    if not isinstance(model, nn.Module):
        fail("SentimentModel must be an nn.Module (class SentimentModel(nn.Module))")
    return model.eval()


def run_model(model: nn.Module, ids: Tensor, return_attention: bool = False) -> Any:
    with torch.no_grad():
        try:
            result = model(ids, return_attention=True) if return_attention else model(ids)
        except NotImplementedError:
            raise
        except Exception as error:
            pad_id = getattr(model, "pad_id", "?")
            said = explain(
                error,
                "your SentimentModel",
                f" on ids of shape {tuple(ids.shape)}, pad_id={pad_id}",
            )
            left_behind = dtype_left_behind(model, error)
            fail(f"{left_behind}\n{said}" if left_behind else said)
    if not return_attention:
        if not isinstance(result, Tensor):
            fail(f"forward(token_ids) must return the logits tensor, got {type(result).__name__}")
        return result
    if not (isinstance(result, tuple) and len(result) == 2):
        fail("forward(token_ids, return_attention=True) must return a tuple (logits, weights)")
    logits, weights = result
    if not isinstance(weights, list | tuple) or not all(isinstance(w, Tensor) for w in weights):
        fail("with return_attention=True the second element must be the encoder's list of weights")
    return logits, list(weights)


def attention_mask_diagnosis(
    model: nn.Module, weights: list[Tensor], ids: Tensor, pad_id: int
) -> str | None:
    """What is seen of attention on the <pad> keys, or None when every pad key gets zero weight.

    weights: the model's (B, H, L, L) weights per layer on ``ids`` (B, L).
    """
    pads = (ids == pad_id)[:, None, None, :]  # (B, 1, 1, L): the padded keys
    # Each mistake's mask, (B, 1, L) over the keys or (B, L, 1) over the queries, None for no
    # mask: named where the weights are the model's own encoder's under that mask alone.
    mistaken = {
        PADDING_MASK_REVERSED: (ids == pad_id).unsqueeze(-2),
        NO_PADDING_MASK: None,
        MODEL["padding_mask_on_queries"]: (ids != pad_id).unsqueeze(-1),
    }
    if pad_id != 0:
        mistaken[PAD_ID_HARD_CODED] = (ids != 0).unsqueeze(-2)
    for layer, w in enumerate(weights):
        on_pads = w.masked_select(pads.expand_as(w))
        if (on_pads == 0).all():
            continue
        # Named only where one mistake alone gives these weights.
        matched = [m for m, mask in mistaken.items() if matches_encoder(model, weights, ids, mask)]
        if len(matched) == 1:
            return matched[0]
        seen = (
            "and the weights are not those of your encoder without a mask, with the mask "
            "reversed, over the queries or with pad id 0"
            if not matched
            else "and the weights are those of your encoder under more than one known wrong mask, "
            "so which one cannot be told"
        )
        return (
            f"the <pad> keys get attention weight (up to {on_pads.abs().max().item():.3g} in "
            f"layer {layer}), {seen}; in the statement every query gives the <pad> keys zero "
            "weight"
        )
    return None


def matches_encoder(
    model: nn.Module, weights: list[Tensor], ids: Tensor, mask: Tensor | None
) -> bool:
    """Whether ``weights`` are what the model's own encoder gives its embedded ids under ``mask``
    ((B, 1, L) over the keys, (B, L, 1) over the queries), or with no mask where ``mask`` is
    None."""
    try:
        with torch.no_grad():
            hidden = model.position(model.embed(ids))
            _, expected = model.encoder(hidden) if mask is None else model.encoder(hidden, mask)
    except NotImplementedError:
        raise
    except Exception:  # other submodule names: the parts check says which it needs
        return False
    return len(expected) == len(weights) and all(
        is_close(w, u) for w, u in zip(weights, expected, strict=True)
    )


def classifier_head(model: nn.Module, d_model: int, num_classes: int) -> nn.Linear | None:
    """The one nn.Linear(d_model, num_classes) outside the encoder, if there is exactly one."""
    encoder = getattr(model, "encoder", None)
    inside = {id(m) for m in encoder.modules()} if isinstance(encoder, nn.Module) else set()
    heads = [
        m
        for m in model.modules()
        if isinstance(m, nn.Linear)
        and id(m) not in inside
        and (m.in_features, m.out_features) == (d_model, num_classes)
    ]
    return heads[0] if len(heads) == 1 else None


def pooling_outcomes(
    model: nn.Module, head: nn.Linear, ids: Tensor, pad_id: int, logits: Tensor | None = None
) -> tuple[Tensor, dict[Mistake, Tensor] | None]:
    """(the mean-pooled logits, the logits of known mistakes), or mistakes None if the model's
    logits are those of mean or <cls> pooling."""
    with torch.no_grad():
        if logits is None:
            logits = model(ids)
        embedded = model.position(model.embed(ids))
        hidden, _ = model.encoder(embedded, padding_mask(ids, pad_id))
        mean_pooled = head(oracle_masked_mean(hidden, ids, pad_id))
        if is_close(logits, mean_pooled) or is_close(logits, head(hidden[:, 0])):
            return mean_pooled, None
        unmasked, _ = model.encoder(embedded)
        no_position, _ = model.encoder(model.embed(ids), padding_mask(ids, pad_id))
        # The embedding multiplied once more by √d_model, with the answer's own parts.
        rescaled = model.position(model.embed(ids) * hidden.shape[-1] ** 0.5)
        scaled_twice, _ = model.encoder(rescaled, padding_mask(ids, pad_id))
        # Probabilities of the model's own pooling: the <cls> output's where those match.
        cls_probabilities = torch.softmax(head(hidden[:, 0]), -1)
        probabilities = (
            cls_probabilities
            if is_close(logits, cls_probabilities)
            else torch.softmax(mean_pooled, -1)
        )
        mistakes = {
            **{
                mistake: head(pooled)
                for mistake, pooled in masked_mean_mistakes(hidden, ids, pad_id).items()
            },
            NO_PADDING_MASK: head(oracle_masked_mean(unmasked, ids, pad_id)),
            MODEL["no_position"]: head(oracle_masked_mean(no_position, ids, pad_id)),
            MODEL["last_position"]: head(hidden[:, -1]),
            MODEL["probabilities"]: probabilities,
            MODEL["embeddings_scaled_twice"]: head(oracle_masked_mean(scaled_twice, ids, pad_id)),
        }
    return mean_pooled, mistakes
