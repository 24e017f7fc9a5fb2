"""Reference bans are read from the source text, and reading it never imports what it names."""

import sys

import torch.nn.functional as F

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
