"""The judge process's confinement: resource limits, the course seen read-only, and why it died.

The judge runs only trusted check code, but that code works on data a student's kernel sent, so a
judge that runs away must cost its own submission only (see autograder/judging/judge.py).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import resource
import signal
from collections.abc import Sequence
from pathlib import Path

from autograder.judging.limits import JudgeLimits


def confine(limits: JudgeLimits, read_only: Sequence[str]) -> None:
    """In the freshly forked judge process: its limits, and ``read_only`` seen read-only."""
    with open("/proc/self/statm") as statm:
        mapped = int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    cpu = int(limits.total_seconds) + 5
    for limit, value in (
        (resource.RLIMIT_AS, mapped + limits.memory_bytes),
        (resource.RLIMIT_CPU, cpu),
        (resource.RLIMIT_FSIZE, limits.file_bytes),
        (resource.RLIMIT_CORE, 0),
    ):
        resource.setrlimit(limit, (value, value))
    if read_only:
        # No writes to the course or the gradebook.  Where namespaces are unavailable the judge
        # still runs: it executes only trusted check code, with the limits above.
        with contextlib.suppress(OSError):
            _mount_read_only(read_only)


# PF_EXITING (include/linux/sched.h): set as a process begins to exit, before it closes its files.
_PF_EXITING = 0x4


def exiting(pid: int) -> bool:
    """Whether process ``pid`` (a child, not yet waited for) has begun to exit by itself.

    A judge that dies closes its sockets before its parent can wait for it: the notebook may see
    it gone, and end, while it is not yet a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True  # gone already
    flags = int(stat.rsplit(")", 1)[1].split()[6])  # after "pid (comm)": state ... flags
    return bool(flags & _PF_EXITING)


def death(status: int) -> str:
    """Why the judge process ended, in words, from its wait status."""
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        reasons = {
            signal.SIGXCPU: "it ran out of CPU time",
            signal.SIGKILL: "it was killed, most likely for memory",
            signal.SIGSEGV: "it crashed",
            signal.SIGXFSZ: "it wrote too much",
        }
        return reasons.get(number, f"signal {signal.Signals(number).name}")
    return f"exit status {os.WEXITSTATUS(status)}"


_CLONE_NEWNS, _CLONE_NEWUSER = 0x00020000, 0x10000000
_MS_RDONLY, _MS_REMOUNT, _MS_BIND, _MS_REC, _MS_PRIVATE = 1, 32, 4096, 16384, 1 << 18


def _mount_read_only(paths: Sequence[str]) -> None:
    """Give this (single-threaded) process its own mount namespace where ``paths`` are read-only.

    A non-root grader first enters a user namespace of its own, as bubblewrap does.
    """
    libc = ctypes.CDLL(None, use_errno=True)
    uid, gid = os.getuid(), os.getgid()
    root = os.geteuid() == 0
    if libc.unshare(_CLONE_NEWNS | (0 if root else _CLONE_NEWUSER)) != 0:
        raise OSError(ctypes.get_errno(), "unshare failed")
    if not root:
        Path("/proc/self/setgroups").write_text("deny")
        Path("/proc/self/uid_map").write_text(f"{uid} {uid} 1")
        Path("/proc/self/gid_map").write_text(f"{gid} {gid} 1")
    if libc.mount(b"none", b"/", None, _MS_REC | _MS_PRIVATE, None) != 0:
        raise OSError(ctypes.get_errno(), "making mounts private failed")
    for path in paths:
        target = os.fsencode(path)
        if libc.mount(target, target, None, _MS_BIND | _MS_REC, None) != 0:
            raise OSError(ctypes.get_errno(), f"binding {path} failed")
        flags = _MS_REMOUNT | _MS_BIND | _MS_RDONLY
        if libc.mount(None, target, None, flags, None) != 0:
            raise OSError(ctypes.get_errno(), f"making {path} read-only failed")
