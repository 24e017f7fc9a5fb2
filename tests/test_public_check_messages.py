"""A notebook's public check says what it saw on an answer's output; it never crashes on it."""

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from attention_lab.checking import PublicCheckFailed, all_passed, check, check_close
from attention_lab.training import linear_warmup
from tests.test_mutants import visible_part


def zeroes_after_the_step(model, inputs, labels, optimizer, max_grad_norm, scheduler=None):
    """train_step as blind answer i05-10 wrote it: the gradients cleared after step()."""
    model.train()
    loss = F.cross_entropy(model(inputs), labels)
    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
    optimizer.step()
    if scheduler is not None:
        scheduler.step()
    optimizer.zero_grad()
    return loss.item()


def test_train_step_s_public_check_says_that_no_gradient_was_left():
    # It read p.grad.clone() of every parameter: AttributeError: 'NoneType' object has no
    # attribute 'clone', a crash in the check's own line, which tells the student nothing.
    namespace = {
        "torch": torch,
        "nn": nn,
        "F": F,
        "check": check,
        "check_close": check_close,
        "all_passed": all_passed,
        "linear_warmup": linear_warmup,
        "train_step": zeroes_after_the_step,
    }
    with pytest.raises(PublicCheckFailed, match=r"after train_step, \.grad is None for"):
        exec(compile(visible_part("05_sentiment", "test_train_step"), "<cell>", "exec"), namespace)
