"""05's optional SST-2 section chooses its epoch on whole sentences held out from the training file
and reports dev once, for that epoch: dev never takes part in the choice.

The section's own cell runs on the generated sentiment corpus written as SST-2 TSV files (the real
files are not shipped, and nothing is downloaded).  It runs twice, with dev's labels as they are
and all flipped: a choice made on dev would change (the best epoch on flipped labels is the worst
on true ones); one made on held-out training data cannot.
"""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import nbformat
import pytest
import torch
from torch import nn

from attention_lab.data import SentimentExample, make_sentiment_corpus
from attention_lab.training import EpochChoice, held_out_sentences, train_choosing_epoch
from autograder.cells import answer_cells
from tests.sst2_like_corpus import sst2_like_phrases

ROOT = Path(__file__).resolve().parents[1]
SOLUTION = ROOT / "solutions" / "05_sentiment" / "05_sentiment.ipynb"
SST2_CELL = "05_sentiment-043"


def _inside(phrase: str, sentence: str) -> bool:
    """Whether the words of ``phrase`` are a contiguous run of the words of ``sentence``."""
    return f" {' '.join(phrase.split())} " in f" {' '.join(sentence.split())} "


@pytest.fixture(scope="module")
def phrase_file() -> list[SentimentExample]:
    return sst2_like_phrases(3000, seed=1)


@pytest.mark.slow  # seconds: kept out of the fast tier, which must fit 30 s
def test_no_training_phrase_lies_inside_a_held_out_sentence(phrase_file):
    """The held-out set is whole sentences, and training sees none of their phrases: with a
    random split of the phrases (the section's first version) most held-out ones lie inside a
    training sentence, so held-out accuracy measured recall, not generalisation."""
    train, held = held_out_sentences(phrase_file, fraction=0.1, seed=3)
    texts = [e.text for e in phrase_file]
    sentences = [t for t in texts if not any(t != o and _inside(t, o) for o in texts)]
    held_texts = [e.text for e in held]
    leaks = [e.text for e in train if any(_inside(e.text, h) for h in held_texts)]
    assert not leaks, f"{len(leaks)} training phrases lie inside held-out phrases: {leaks[:3]}"
    parts = [h for h in held_texts if h not in sentences]
    assert not parts, f"{len(parts)} of {len(held)} held-out phrases are parts of longer ones"
    assert len(held) == round(0.1 * len(sentences))
    # Only what lies inside a held-out sentence is dropped: every other phrase is trained on.
    kept = {e.text for e in train} | set(held_texts)
    dropped = [t for t in texts if t not in kept]
    assert all(any(_inside(t, h) for h in held_texts) for t in dropped)
    assert len(train) + len(held) + len(dropped) == len(phrase_file)


@pytest.mark.slow  # half a second or more: out of the fast tier (tests/tiers.py)
def test_the_sentence_split_is_seeded_and_in_file_order(phrase_file):
    train, held = held_out_sentences(phrase_file, fraction=0.1, seed=3)
    assert held_out_sentences(phrase_file, 0.1, seed=3) == (train, held)
    assert held_out_sentences(phrase_file, 0.1, seed=4)[1] != held
    assert train == sorted(train, key=phrase_file.index)
    assert held == sorted(held, key=phrase_file.index)
    for fraction in (0, 1, 1.5):
        with pytest.raises(ValueError, match="between 0 and 1"):
            held_out_sentences(phrase_file, fraction, seed=0)
    one_sentence = [SentimentExample(t, 1, "sst2") for t in ("a fine film", "fine film", "a")]
    with pytest.raises(ValueError, match="1 sentence"):
        held_out_sentences(one_sentence, 0.5, seed=0)


def test_the_chosen_epoch_is_the_best_on_held_out_data_and_its_weights_are_kept():
    """A one-weight classifier whose epochs move its weight through -1, 2, 3, 0.5: held-out
    accuracy is 0 for a negative weight, 1 for a positive one; epoch 2 is the first best."""
    model = nn.Linear(1, 2, bias=False)
    held_out = [(torch.tensor([[1.0], [2.0]]), torch.tensor([1, 1]))]
    weights = iter([-1.0, 2.0, 3.0, 0.5])

    def one_epoch() -> None:
        with torch.no_grad():
            model.weight.copy_(torch.tensor([[0.0], [next(weights)]]))

    choice = train_choosing_epoch(model, one_epoch, held_out, epochs=4)
    assert choice == EpochChoice(2, [0.0, 1.0, 1.0, 1.0])
    assert model.weight[1, 0].item() == 2.0  # epoch 2's weights, not the last epoch's


def _write_tsv(path: Path, examples: list, flip: bool = False) -> Path:
    lines = ["sentence\tlabel"] + [
        f"{e.text}\t{1 - e.label if flip else e.label}" for e in examples
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def _run_section(train: Path, dev: Path) -> tuple[int, float, str]:
    """Run the SST-2 cell of the solution on ``train`` and ``dev``: the epoch it chose, the dev
    accuracy it reports for the model, and what it printed."""
    notebook = nbformat.read(SOLUTION, as_version=4)
    namespace: dict = {}
    setup = next(c for c in notebook.cells if c.cell_type == "code")
    for source in (setup.source, *answer_cells(notebook).values()):
        exec(compile(source, str(SOLUTION), "exec"), namespace)
    (cell,) = [c for c in notebook.cells if c.get("id") == SST2_CELL]
    source = cell.source.replace('SST2_TRAIN = ""', f"SST2_TRAIN = {str(train)!r}")
    source = source.replace('SST2_DEV = ""', f"SST2_DEV = {str(dev)!r}")
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(source, "<SST-2 cell>", "exec"), namespace)
    text = printed.getvalue()
    epoch = re.search(r"epoch (\d+)", text)
    accuracy = re.search(r"SentimentModel from scratch:? ([\d.]+)", text)
    assert epoch and accuracy, text
    return int(epoch[1]), float(accuracy[1]), text


@pytest.mark.slow
def test_the_sst2_section_chooses_its_epoch_without_dev(tmp_path: Path):
    corpus = make_sentiment_corpus(seed=0)
    train = _write_tsv(tmp_path / "train.tsv", corpus.train[:800])
    dev = _write_tsv(tmp_path / "dev.tsv", corpus.val)
    flipped = _write_tsv(tmp_path / "flipped.tsv", corpus.val, flip=True)
    epoch, accuracy, printed = _run_section(train, dev)
    epoch_flipped, accuracy_flipped, printed_flipped = _run_section(train, flipped)
    assert epoch_flipped == epoch, f"dev took part in the choice:\n{printed}\n{printed_flipped}"
    # One model measured once on each dev: what it gets right on one, it gets wrong on the other.
    assert accuracy + accuracy_flipped == pytest.approx(1.0, abs=2e-3), (printed, printed_flipped)
