"""Running student code: the bubblewrap sandbox, the crash-tolerant runner, the staging folder.

This package's __init__ is copied into the sandbox: it must stay free of imports.
"""
