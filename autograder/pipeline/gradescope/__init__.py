"""Gradescope: its results.json, the autograder zip, and the run inside it."""
