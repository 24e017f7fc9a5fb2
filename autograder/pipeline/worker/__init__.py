"""Grading one submission in a worker: the judged notebook, the sandboxed run, the verdicts."""
