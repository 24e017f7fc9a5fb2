"""python -m autograder: see autograder/pipeline/cli.py."""

import sys

# As in isolation/runner.py: jsonschema (through nbformat) would build an IRI grammar that no
# notebook schema uses, for ~0.8 s of CPU at every start of the command.
sys.modules.setdefault("rfc3987_syntax", None)  # type: ignore[arg-type]

from autograder.pipeline.cli import main  # noqa: E402

sys.exit(main())
