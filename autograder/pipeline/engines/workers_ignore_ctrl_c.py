"""Imported first by the grading workers' forkserver (preloaded_workers.py), never elsewhere.

A terminal's Ctrl-C reaches the grading command's whole process group, its workers included.
The command ends its workers itself, so they ignore it from birth rather than each print a
traceback.  A forkserver imports its preload list before it saves the handlers that every child
it forks gets back, so the handler set here is every worker's (pool and LocalCluster alike).  It
is a Python handler, not SIG_IGN: an ignored signal would pass through exec to the sandboxed
kernel, which must stay interruptible for the runner's cell timeout.
"""

import signal

signal.signal(signal.SIGINT, lambda signum, frame: None)
