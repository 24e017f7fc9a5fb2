"""A write into a dict argument made in the kernel reaches the judge's dict, as it would in one
process: 03's encode that adds unknown words to token_to_id (blind answer j03-05) is seen
through the grading command, not only in-process."""

from __future__ import annotations

import torch

from autograder.judging.kernel import _Server
from autograder.judging.protocol import argument_dicts, decode
from autograder.judging.proxies import Link


def _served_call(function, *args, **kwargs) -> tuple[dict, list[torch.Tensor]]:
    """The kernel's reply to a call of ``function`` on copies of the arguments, as it sends them."""
    server = _Server(None, {})  # type: ignore[arg-type]  # a call's reply never touches the socket
    copies = decode_copies(args, kwargs)
    return server.call(function, "call", {"grad": False}, *copies)


def decode_copies(args: tuple, kwargs: dict) -> tuple[list, dict]:
    """Copies of the arguments, as the kernel decodes them (dicts are sent by value)."""
    return [dict(a) if type(a) is dict else a for a in args], {
        name: dict(v) if type(v) is dict else v for name, v in kwargs.items()
    }


def _judged_call(function, *args, **kwargs):
    """``function(*args, **kwargs)`` run on the kernel's side, its dict writes written back."""
    message, tensors = _served_call(function, *args, **kwargs)
    Link(None).write_back_dicts(argument_dicts(args, kwargs), message["written_dicts"], tensors)  # type: ignore[arg-type]
    return decode(message["value"], tensors, lambda tree: tree)


def test_an_entry_added_in_the_kernel_reaches_the_judge_s_dict():
    def encode(text: str, token_to_id: dict[str, int]) -> list[int]:
        return [token_to_id.setdefault(word, 1) for word in text.split()]

    token_to_id = {"<pad>": 0, "<unk>": 1, "the": 3}
    assert _judged_call(encode, "the zebra", token_to_id) == [3, 1]
    assert token_to_id == {"<pad>": 0, "<unk>": 1, "the": 3, "zebra": 1}


def test_removed_and_replaced_entries_and_keyword_arguments_are_written_back():
    def rewrite(first: dict, *, second: dict) -> None:
        del first["a"]
        second["b"] = 5

    first, second = {"a": 1, "c": 2}, {"b": 2}
    _judged_call(rewrite, first, second=second)
    assert first == {"c": 2} and second == {"b": 5}


def test_a_dict_only_read_is_not_written():
    def reads(table: dict) -> int:
        return sum(table.values())

    table = {"a": 1, "b": 2}
    message, _ = _served_call(reads, table)
    assert message["written_dicts"] == []
