"""nbgrader's own command line as the grading command runs it (``course.NBGRADER``):
``python -m autograder.pipeline.course.nbgrader_app generate_feedback ...``.

It differs from ``python -m nbgrader`` only in that this package's ``__init__`` runs first, so
jsonschema never builds its IRI grammar, which the Jupyter event schemas nbgrader loads would
otherwise be checked against at every start: 2.4 s of CPU per command instead of 1.0 s, and in
that nbgrader stamps a new gradebook without starting the ``alembic`` program (private_apis.py).
"""

import sys

from nbgrader.apps.nbgraderapp import main

from autograder.private_apis import stamp_gradebooks_in_process

stamp_gradebooks_in_process()
sys.exit(main())
