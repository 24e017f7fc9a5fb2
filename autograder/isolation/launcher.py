"""The sandbox's first program: it becomes the sandbox user, sets the limits, and runs argv.

Run inside bubblewrap as ``python -I -S -c <this file's text> SPEC ARGV...`` (see sandbox.py),
so it imports only the standard library.  SPEC is JSON: ``uid`` (drop root to it, or null),
``cwd``, ``rlimits`` as (resource, soft, hard) triples, ``status_fd`` and ``fds``, descriptors
the child receives as 3, 4, ... in that order (the report pipe, then the judge's cell channel).

It says "started" on the status fd, runs argv in a child with every other descriptor closed, and
then reports the child's exact wait status and resource usage on the status fd as one JSON
object, which bubblewrap alone would lose (it folds signals into 128 + N and passes no rusage).
"""

import ctypes
import fcntl
import json
import os
import resource
import sys

_PR_SET_DUMPABLE = 4
_CLONE_NEWUSER = 0x10000000
FIRST_PASSED_FD = 3


def _become(uid: int, libc: ctypes.CDLL) -> None:
    """Drop root for ``uid``, in a user namespace of its own when the kernel allows one."""
    os.setgroups([])
    os.setgid(uid)
    os.setuid(uid)
    libc.prctl(_PR_SET_DUMPABLE, 1)  # setuid cleared it, and /proc/self/*_map need it
    # A user namespace of its own makes RLIMIT_NPROC count this sandbox's processes only, not
    # every process of uid 65534 on the host; without one the count is host-wide, still bounded.
    if libc.unshare(_CLONE_NEWUSER) == 0:
        for name, text in (
            ("setgroups", "deny"),
            ("uid_map", f"{uid} {uid} 1"),
            ("gid_map", f"{uid} {uid} 1"),
        ):
            with open(f"/proc/self/{name}", "w") as f:
                f.write(text)


def _exec_child(argv: list[str], fds: list[int]) -> None:
    """In the child: ``fds`` as 3, 4, ..., every other descriptor above 2 closed, then argv."""
    last = FIRST_PASSED_FD + len(fds)
    # Copied above every target first, so that no dup2 overwrites a descriptor still to be moved.
    high = [fcntl.fcntl(fd, fcntl.F_DUPFD, last) for fd in fds]
    for offset, fd in enumerate(high):
        os.dup2(fd, FIRST_PASSED_FD + offset)  # dup2's copy is inheritable
    os.closerange(last, resource.getrlimit(resource.RLIMIT_NOFILE)[0])
    try:
        os.execvp(argv[0], argv)
    except OSError as error:
        sys.stderr.write(f"sandbox: cannot run {argv[0]!r}: {error.strerror}\n")
        os._exit(127)


def main() -> None:
    spec = json.loads(sys.argv[1])
    libc = ctypes.CDLL(None, use_errno=True)
    if spec["uid"] is not None:
        _become(spec["uid"], libc)
    os.chdir(spec["cwd"])  # as the sandbox user: root without capabilities may not
    for res, soft, hard in spec["rlimits"]:
        resource.setrlimit(res, (soft, hard))
    status_fd, fds = spec["status_fd"], spec["fds"]
    os.write(status_fd, b"started\n")
    # Not dumpable, so code running as the same user cannot open the status fd through /proc; the
    # child becomes dumpable again when it execs.
    libc.prctl(_PR_SET_DUMPABLE, 0)
    child = os.fork()
    if child == 0:
        _exec_child(sys.argv[2:], fds)
    for fd in fds:
        os.close(fd)  # the child's copies are the only ones left
    _, status, usage = os.wait4(child, 0)
    report = {"status": status, "cpu": usage.ru_utime + usage.ru_stime, "maxrss": usage.ru_maxrss}
    os.write(status_fd, json.dumps(report).encode())
    code = os.waitstatus_to_exitcode(status)
    os._exit(code if code >= 0 else 128 - code)


if __name__ == "__main__":
    main()
