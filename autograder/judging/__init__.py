"""Verdicts decided outside the student's process: the wire protocol, the kernel's side, the
trusted judge, and reference bans read from the source text.

This package's __init__ is copied into the sandbox: it must stay free of imports.
"""
