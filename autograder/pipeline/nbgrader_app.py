"""nbgrader's own command line as the grading command runs it (``course.NBGRADER``):
``python -m autograder.pipeline.nbgrader_app generate_feedback ...``.

It differs from ``python -m nbgrader`` only in that this package's ``__init__`` runs first, so
jsonschema never builds its IRI grammar, which the Jupyter event schemas nbgrader loads would
otherwise be checked against at every start: 2.4 s of CPU per command instead of 1.0 s.
"""

import sys

from nbgrader.apps.nbgraderapp import main

sys.exit(main())
