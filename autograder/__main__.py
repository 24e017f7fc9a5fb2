"""python -m autograder: see autograder/pipeline/cli.py."""

import sys

from autograder.pipeline.cli import main

sys.exit(main())
