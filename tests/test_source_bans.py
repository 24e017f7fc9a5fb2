"""Reference bans are read from the source text, and reading it never imports what it names."""

import sys
import textwrap

import pytest
import torch.nn.functional as F
from torch import nn

from autograder.judging.source_bans import banned_use

BANNED = {"F.scaled_dot_product_attention": F.scaled_dot_product_attention}


def test_an_aliased_import_of_the_reference_is_found():
    source = (
        "from torch.nn.functional import scaled_dot_product_attention as sdpa\n"
        "def attention(q, k, v):\n"
        "    return sdpa(q, k, v)\n"
    )
    found = banned_use([source], "attention", BANNED)
    assert found is not None and found.reference == "F.scaled_dot_product_attention"
    # %%timeit runs its body inside a function: a def there does not replace the cheat.
    hidden = "%%timeit\n" + ANSWER
    found = banned_use(
        [ANSWER, "attention = F.scaled_dot_product_attention", hidden], "attention", MORE
    )
    assert found is not None and found.reference == "F.scaled_dot_product_attention"


def test_a_module_named_in_the_source_is_never_imported_by_the_scan():
    # Importing a package's __main__ would run its command-line code inside the grader.
    name = "torch.utils.bottleneck.__main__"
    assert name not in sys.modules
    source = (
        f"import {name} as tool\n"
        "import torch.utils.model_dump as dump\n"
        "def attention(q, k, v):\n"
        "    return tool.main(q), dump.main(k)\n"
    )
    assert banned_use([source], "attention", BANNED) is None
    assert name not in sys.modules and "torch.utils.model_dump" not in sys.modules


ANSWER = (
    "import torch\n"
    "import torch.nn.functional as F\n"
    "from torch import nn\n"
    "def attention(q, k, v):\n"
    "    return torch.softmax(q @ k.transpose(-2, -1), -1) @ v\n"
    "class Attention(nn.Module):\n"
    "    def forward(self, q, k, v):\n"
    "        return attention(q, k, v)\n"
)
MORE = {**BANNED, "nn.MultiheadAttention": nn.MultiheadAttention}
# A later cell that binds the answer's name, or what it uses, to something the scan cannot
# pass -> (the answer it breaks, a phrase of what the scan must say it saw).
LATER_CELLS = {
    "import attention_lab.reference.a01_attention as attention": ("attention", "by an import of"),
    "import contextlib\nwith contextlib.nullcontext(F.scaled_dot_product_attention) as attention:"
    "\n    pass": ("attention", "a value the code does not show"),
    "exec('attention = F.scaled_dot_product_attention')": ("attention", "exec(...)"),
    "globals().update(attention=F.scaled_dot_product_attention)": (
        "attention",
        "globals().update(...)",
    ),
    "exec(\"globals()['attention'] = 1\")": ("attention", "globals()[...]"),
    "import builtins\ndel attention\nbuiltins.attention = F.scaled_dot_product_attention": (
        "attention",
        "builtins.attention =",
    ),
    "attention = (lambda f: f)(F.scaled_dot_product_attention)": ("attention", "cannot be checked"),
    "Attention.forward = nn.MultiheadAttention.forward": ("Attention", "is patched"),
    "setattr(Attention, 'forward', nn.MultiheadAttention.forward)": ("Attention", "is patched"),
    "globals()['attention'] = F.scaled_dot_product_attention": ("Attention", "`attention`"),
    "attention = F.scaled_dot_product_attention\nclass Attention(nn.Module):\n"
    "    forward = staticmethod(attention)": ("Attention", "F.scaled_dot_product_attention"),
}


@pytest.mark.parametrize("later", LATER_CELLS)
def test_a_later_cell_that_rebinds_the_answer_or_its_helper_is_seen(later: str):
    name, phrase = LATER_CELLS[later]
    assert banned_use([ANSWER], name, MORE) is None
    found = banned_use([ANSWER, later], name, MORE)
    assert found is not None, f"not flagged: {later!r}"
    assert phrase in found.seen, found.seen


@pytest.mark.parametrize(
    "later",
    [
        "mine = attention\nattention = mine",  # an alias of the student's own def
        "expected = F.scaled_dot_product_attention(*[torch.ones(2, 2)] * 3)",  # a comparison
        "for attention in [attention]:\n    pass",
        "print(eval('1 + 1'))",
        "import sys\nsys.path[0] = sys.path[0]",
        "class Cache:\n    def __init__(self):\n        self.__dict__['hits'] = 0",
    ],
)
def test_a_later_cell_that_keeps_the_students_own_answer_passes(later: str):
    assert banned_use([ANSWER, later], "attention", MORE) is None
    assert banned_use([ANSWER, later], "Attention", MORE) is None


def test_a_cell_with_ipython_syntax_binds_nothing_as_the_grading_run_runs_nothing_of_it():
    # The grading run is plain Python (isolation/plain_kernel.py): a magic is a syntax error.
    found = banned_use(["%%time\n" + ANSWER], "attention", MORE)
    assert found is not None and "bound nowhere" in found.seen
    for magic in ("%%time\n", "%%timeit\n", "%time "):
        found = banned_use(
            [ANSWER, "attention = F.scaled_dot_product_attention", magic + ANSWER],
            "attention",
            MORE,
        )
        assert found is not None and found.reference == "F.scaled_dot_product_attention", magic


def test_a_star_import_binds_what_its_module_holds_when_the_scan_runs(
    monkeypatch: pytest.MonkeyPatch,
):
    # Cells are analysed once and shared between notebooks; a `from m import *` is not, since
    # what it binds depends on the modules imported by the time of the scan.
    star = "from attention_lab.star_probe import *\n"
    uses = "def attention(q, k, v):\n    return sdpa(q, k, v)\n"
    before = banned_use([star, uses], "attention", BANNED)
    assert before is not None and before.reference is None  # unknown: it cannot be checked
    module = type(sys)("attention_lab.star_probe")
    module.__all__ = ["sdpa"]
    module.sdpa = F.scaled_dot_product_attention
    monkeypatch.setitem(sys.modules, "attention_lab.star_probe", module)
    after = banned_use([star, uses, "x = 1\n"], "attention", BANNED)
    assert after is not None and after.reference == "F.scaled_dot_product_attention", after


FUSED = (
    "import torch.nn.functional as F\n"
    "def fused(q, k, v, mask=None, scale=True):\n"
    "    return F.scaled_dot_product_attention(q, k, v), None\n"
)
OWN = textwrap.indent("def attention(q, k, v, mask=None, scale=True):\n    return q, k\n", "    ")
# A def that never runs is no binding: the answer stays what the code that runs binds it to.
DEAD_CODE = {
    "a dead branch": f"attention = fused\nif False:\n{OWN}",
    "not of a truth": f"attention = fused\nif not 1:\n{OWN}",
    "the else of if True": f"if True:\n    attention = fused\nelse:\n{OWN}",
    "the else of while True": f"while True:\n    attention = fused\n    break\nelse:\n{OWN}",
    "after a raise": f"attention = fused\ntry:\n    raise ValueError\n{OWN}except ValueError:\n"
    "    pass\n",
}


@pytest.mark.parametrize("trick", DEAD_CODE, ids=list(DEAD_CODE))
def test_a_definition_that_never_runs_is_no_binding(trick: str):
    source = DEAD_CODE[trick]
    namespace: dict = {}
    exec(FUSED + source, namespace)  # valid Python that binds attention to fused
    assert namespace["attention"].__name__ == "fused", trick
    found = banned_use([FUSED, source], "attention", BANNED)
    assert found is not None and found.reference == "F.scaled_dot_product_attention", trick


# An attribute spelled as a string is the attribute: each of these calls the reference.
SPELLED = [
    'getattr(F, "scaled_dot_product_attention")(q, k, v)',
    'F.__dict__["scaled_dot_product_attention"](q, k, v)',
    'vars(F)["scaled_dot_product_attention"](q, k, v)',
    'operator.attrgetter("scaled_dot_product_attention")(F)(q, k, v)',
]


@pytest.mark.parametrize("call", SPELLED)
def test_an_attribute_spelled_as_a_constant_string_is_judged_as_the_attribute(call: str):
    source = (
        "import operator\nimport torch.nn.functional as F\n"
        f"def attention(q, k, v):\n    return {call}\n"
    )
    found = banned_use([source], "attention", BANNED)
    assert found is not None and found.reference == "F.scaled_dot_product_attention", call


def test_a_write_through_a_frames_globals_cannot_be_checked():
    own = textwrap.dedent(OWN)
    source = f"{own}import sys\nsys._getframe().f_globals['attention'] = len\n"
    found = banned_use([source], "attention", BANNED)
    assert found is not None and "dynamically" in found.seen, found
