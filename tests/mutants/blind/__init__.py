"""Issue 40's blind corpus: answers written from the student notebooks alone, without reading the
checks or the mutants, then graded and every message read by hand (issue 40, "How to know it
works").

Each mutant's name starts with the answer's id in its corpus (``f01-04``: assignment 01, answer
4; ``g01-11``: answer 11 of 01 in the second blind corpus), and its patch is the answer cell
exactly as written (``Rewrite``), so the corpus keeps what nobody here imagined, not a tidied copy
of it. A wrong answer's phrases come from the message the
grader gave it, where that message was read as true and naming its mistake; a counterexample with
no named cause is held by a phrase of the counterexample, and ``not_told`` lists the causes it must
not be told. Left out: the answers whose code a mutant of ``mNN_*.py`` already has (up to names,
layout, and spellings Python evaluates alike). Also left out, until the grader keeps its
guarantees on it (issue 40), rather than held to what it does today: f03-03 (a capturing group in
clean), whose visible checks of build_vocab and encode, which call the student's clean, fail too,
encode's saying "unknown words ('on', 'mat') become UNK_ID = 1".

Kept apart from ``mNN_*.py``, which tests/judge_parity.py and the reference-ban tests read by name:
the blind answers are graded in-process, as every mutant is, and again through the grading
command only where marked ``in_notebook``.
"""

import importlib
import pkgutil

# One module per assignment, each with its WRONG and CORRECT lists.
_MODULES = [
    importlib.import_module(f"{__name__}.{info.name}") for info in pkgutil.iter_modules(__path__)
]
WRONG = [mutant for module in _MODULES for mutant in module.WRONG]
CORRECT = [mutant for module in _MODULES for mutant in module.CORRECT]
