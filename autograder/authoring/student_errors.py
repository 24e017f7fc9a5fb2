"""Errors raised by the student's code, told as what the error itself establishes and where.

A check that calls the student's code and sees it raise reports, where the error's message
establishes it, one sentence saying what went wrong in words a student can act on, then the
original error, then (from the judge) the line of the student's answer cell it was raised at.
Only what the message proves is said: "two shapes do not broadcast" is in the message, "is an axis
transposed?" is a guess, and a guess is not a cause (issue 40).  The sentence is matched on the
error's message, since that is what crosses from a sandboxed kernel to the judge; the line is read
from the submitted source, the kernel giving only the cell and line numbers.

An error that the student's code did not raise (the check's own code failed on what the answer
returned, or the grader failed) is never told as theirs: :func:`explain` says the check raised it,
and :func:`grader_raised` lets the record flag the submission for a human review.
"""

from __future__ import annotations

import os
import re
import sys
import sysconfig
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

# torch's error for .view() of a tensor whose strides it cannot merge (not contiguous)
VIEW_OF_NON_CONTIGUOUS = re.compile(
    r"view size is not compatible with input tensor's size and stride"
)

# (pattern of the message, what it establishes; a callable gets the match)
_CAUSES: list[tuple[re.Pattern[str], str | Callable[[re.Match[str]], str]]] = [
    (
        re.compile(r"\btorch\.return_types\.(\w+)\b"),
        lambda found: (
            f"a torch.return_types.{found[1]}, the (values, indices) pair that {found[1]} "
            "returns, was used as a tensor: take its .values (or .indices)"
        ),
    ),
    (
        re.compile(r"Expected target size \[([\d, ]*)\], got \[([\d, ]*)\]"),
        lambda found: (
            f"cross_entropy read dim 1 of the logits as the classes, so it expected targets of "
            f"shape ({found[1]}) and got ({found[2]}): it takes logits (N, classes) and N targets"
        ),
    ),
    (
        re.compile(r"Expected input batch_size \((\d+)\) to match target batch_size \((\d+)\)"),
        lambda found: (
            f"cross_entropy got {found[1]} rows of logits and {found[2]} targets: it takes one "
            "target per row of logits"
        ),
    ),
    (
        re.compile(r"batch1 must be a 3D tensor|batch2 must be a 3D tensor|Expected 3-dim"),
        "torch.bmm takes 3-D tensors only, and this input has more axes: @ (torch.matmul) "
        "broadcasts over the leading axes",
    ),
    (
        re.compile(
            r"cannot be multiplied|Expected size for first two dimensions of batch2"
            r"|mismatch in its core dimension|shapes \([\d, ]*\) and \([\d, ]*\) not aligned"
        ),
        "the inner sizes of a matrix product differ: the last axis of the left operand must "
        "match the second-to-last of the right one",
    ),
    (
        re.compile(
            r"The size of tensor a \((\d+)\) must match the size of tensor b \((\d+)\) "
            r"at non-singleton dimension (\d+)"
        ),
        lambda found: (
            f"two shapes do not broadcast: sizes {found[1]} and {found[2]} meet at dimension "
            f"{found[3]}"
        ),
    ),
    (
        re.compile(r"The expanded size of the tensor \(\d+\) must match the existing size"),
        "a tensor does not broadcast to the shape it is expanded or used with",
    ),
    (
        VIEW_OF_NON_CONTIGUOUS,
        "a transposed tensor is no longer contiguous, so .view() cannot reshape it: use "
        ".reshape(...) or .contiguous().view(...)",
    ),
    (
        re.compile(r"shape '\[[-\d, ]*\]' is invalid for input of size \d+"),
        "a view or reshape asks for more or fewer elements than the tensor has",
    ),
    (
        re.compile(r"Dimension out of range \(expected to be in range of \[-?\d+, \d+\]"),
        "an axis index is out of range: the tensor has fewer axes than the code expects",
    ),
]

_state = threading.local()

# After an error that a check raised while judging what the answer returned: never the student's.
GRADER_RAISED = (
    "your code did not raise it: the check could not judge what your code returned, so it counts "
    "as failed, and the grade record asks your instructor to review it"
)

# How the judge refuses a write into one of its models (autograder/judging/proxies.py): the
# student's code meets an AttributeError in the grading run that it never meets in the notebook.
WRITE_REFUSED = "your code wrote into {name!r} of the model it was given, in place"
_WRITE_REFUSED_START = WRITE_REFUSED.split("{", 1)[0]


def refused_write(name: str) -> AttributeError:
    """The error a refused write into ``name`` raises in the student's code."""
    return AttributeError(
        f"{WRITE_REFUSED.format(name=name)}, which grading refuses (in your notebook the write "
        "goes through silently and changes the caller's model; change a copy.deepcopy of it)"
    )


@contextmanager
def using_answers(cells: Mapping[int, tuple[str, str]]) -> Iterator[None]:
    """Make ``cells`` (judged notebook index -> the answer cell's grade id and submitted source)
    what :func:`raised_at` reads a line from, in this thread."""
    previous = getattr(_state, "answers", None)
    _state.answers = dict(cells)
    try:
        yield
    finally:
        _state.answers = previous


def answer_sources() -> list[str]:
    """The submitted answer cells' sources that this thread judges against (see
    :func:`using_answers`: the grading command's judge), or none (in-process grading)."""
    return [source for _, source in (getattr(_state, "answers", None) or {}).values()]


def raised_at(error: BaseException) -> str | None:
    """ "in your answer cell `x`, line N: <code>" for an error the kernel located in an answer
    cell (its ``raised_at``), with the line read from the submitted source; None otherwise."""
    where = getattr(error, "raised_at", None)
    cells = getattr(_state, "answers", None) or {}
    if not (isinstance(where, tuple) and where[0] in cells):
        return None
    grade_id, source = cells[where[0]]
    lines = source.splitlines()
    if not 1 <= where[1] <= len(lines):
        return None
    code = lines[where[1] - 1].strip()
    code = code if len(code) <= 160 else code[:159] + "…"
    return f"in your answer cell `{grade_id}`, line {where[1]}: {code}"


_GRADER = os.path.join(os.path.realpath(Path(__file__).resolve().parents[1]), "")  # autograder/
# Code that is not the student's: the grader, attention_lab, the standard library and the
# installed libraries (torch raising inside a student's call has the student's frame above it).
_NOT_THE_STUDENTS = tuple(
    sorted(
        {
            os.path.join(os.path.realpath(path), "")
            for path in (
                *(sysconfig.get_path(k) for k in ("stdlib", "platstdlib", "purelib", "platlib")),
                *(
                    sysconfig.get_path(k, vars={"base": sys.base_prefix})
                    for k in ("stdlib", "platstdlib")
                ),
                _GRADER,
                Path(__file__).resolve().parents[2] / "attention_lab",
            )
            if path
        }
    )
)
# Code objects of the interpreter's and NumPy's own making, named "<frozen ...>" and so on.
_LIBRARY_PSEUDO_FILES = ("<frozen ", "<__array_function__")


def _students(filename: str) -> bool:
    if filename.startswith("<"):  # "<cell 3>", "<ipython-input-...>", "<string>": exec'd cells
        return not filename.startswith(_LIBRARY_PSEUDO_FILES)
    return not os.path.realpath(filename).startswith(_NOT_THE_STUDENTS)


@contextmanager
def answers_elsewhere() -> Iterator[None]:
    """The student's code runs in another process (the judge's kernel), in this thread: an error
    it raised is one that crossed, marked ``answer_raised``; any other is the check's own."""
    previous = getattr(_state, "elsewhere", False)
    _state.elsewhere = True
    try:
        yield
    finally:
        _state.elsewhere = previous


def raised_by_answer(error: BaseException) -> bool:
    """True unless ``error`` is the check's own: from the judge, an error the kernel did not
    report; in one process, one raised by the grader's code with no frame of the student's code
    on its traceback (a library raising with none is told as before: it may be a library
    function the student bound as their answer)."""
    if getattr(error, "answer_raised", False):
        return True
    if getattr(_state, "elsewhere", False):
        return False
    files = []
    trace = error.__traceback__
    while trace is not None:
        files.append(trace.tb_frame.f_code.co_filename)
        trace = trace.tb_next
    if any(_students(file) for file in files):
        return True
    return not (files and os.path.realpath(files[-1]).startswith(_GRADER))


def grader_raised() -> str:
    """The error that :func:`explain` last told as raised by a check rather than the student's
    code, in this thread since :func:`forget_grader_raised` ("" if none)."""
    return getattr(_state, "grader_raised", "")


def forget_grader_raised() -> None:
    """Start listening for :func:`grader_raised` afresh (one check's run)."""
    _state.grader_raised = ""


def likely_cause(message: str) -> str | None:
    """What an error with this message establishes, in one sentence, or None if nothing known."""
    for pattern, cause in _CAUSES:
        found = pattern.search(message)
        if found:
            return cause(found) if callable(cause) else cause
    return None


def explain(error: BaseException, raised_by: str = "your code", detail: str = "") -> str:
    """What a check reports when the student's code raised ``error``: what its message
    establishes, if anything, then the original error on a line of its own ("<raised_by> raised
    <type><detail>: ..."), then where in the answer cells it was raised, if known.  An error the
    student's code did not raise is told as the check's own (:func:`raised_by_answer`)."""
    if not raised_by_answer(error):
        said = f"{type(error).__name__}{detail}: {error}"
        _state.grader_raised = said
        return f"the check itself raised {said}\n{GRADER_RAISED}"
    raised = f"{raised_by} raised {type(error).__name__}{detail}: {error}"
    if isinstance(error, AttributeError) and str(error).startswith(_WRITE_REFUSED_START):
        raised = f"{raised_by} was stopped{detail}: {error}"  # it raised nothing of its own
    lines = [likely_cause(str(error)), raised, raised_at(error)]
    return "\n".join(line for line in lines if line)
