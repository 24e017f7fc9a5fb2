"""Feedback for students: redacted pages that show hidden checks by name and message only."""
