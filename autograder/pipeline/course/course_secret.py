"""The course secret that hidden inputs derive from: made once per course, rotated per term.

``python -m autograder secret init`` makes it, ``secret rotate`` replaces it at a new term (keeping
nothing of the old one) and ``secret show-path`` says where it is.  :func:`secret_path` is the one
lookup: ``--course-secret FILE`` when given, else ``$ATTENTION_LAB_SECRET_FILE``, else a file per
course folder under ``$XDG_CONFIG_HOME/attention-lab/secrets/`` (``~/.config`` by default), mode
0600 in a 0700 folder.  It must lie outside the course folder and the repository (where it could
be committed, handed in or released) and outside every tree the sandbox shows.

Only the grading command reads it, in its own (trusted) process; each grading worker gets it with
its set-up (autograder/authoring/hidden_seeds.py), never a sandbox.  A lost secret only changes the
hidden inputs of later gradings, never a grade: the checks compare with oracles.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import stat
from hashlib import sha256
from pathlib import Path

from autograder.isolation.sandbox import sandbox_system_paths
from autograder.isolation.staging import secret_paths
from autograder.pipeline.course.course import GradingError

SECRET_FILE_ENV = "ATTENTION_LAB_SECRET_FILE"
SECRET_BYTES = 32
_HEX_DIGITS = 2 * SECRET_BYTES


def default_secret_path(course_root: Path) -> Path:
    """Where ``secret init`` keeps the secret of the course folder ``course_root`` by default."""
    root = course_root.resolve()
    configured = os.environ.get("XDG_CONFIG_HOME", "")
    config = Path(configured) if os.path.isabs(configured) else Path.home() / ".config"
    name = re.sub(r"[^A-Za-z0-9._-]", "_", root.name)[:40] or "course"
    return config / "attention-lab" / "secrets" / f"{name}-{sha256(bytes(root)).hexdigest()[:16]}"


def secret_path(course_root: Path, given: Path | None = None) -> Path:
    """The course secret's file: ``given`` (--course-secret), else $ATTENTION_LAB_SECRET_FILE, else
    :func:`default_secret_path`."""
    chosen = given or os.environ.get(SECRET_FILE_ENV)
    return Path(chosen).expanduser().absolute() if chosen else default_secret_path(course_root)


def check_location(path: Path, course_root: Path) -> None:
    """Refuse a secret file inside the course folder, the repository or a tree the sandbox shows."""
    where = path.resolve()
    places = {
        course_root.resolve(): "the course folder (where it could be committed or handed in)",
        **{p.resolve(): "the autograder's checkout or package" for p in secret_paths()},
        **{p.resolve(): "a tree the grading sandbox shows" for p in sandbox_system_paths()},
    }
    for place, what in places.items():
        if where.is_relative_to(place):
            raise GradingError(
                f"the course secret {path} lies inside {what}, {place}: keep it outside, for "
                f"example at the default {default_secret_path(course_root)}"
            )


def create_secret(path: Path, course_root: Path, *, rotate: bool) -> None:
    """Write a fresh secret to ``path`` (mode 0600), replacing the old one only when rotating."""
    check_location(path, course_root)
    if rotate and not path.exists():
        raise GradingError(f"no course secret at {path} to rotate: make one with `secret init`")
    if not rotate and path.exists():
        raise GradingError(
            f"a course secret already exists at {path}: `secret rotate` replaces it (at a new "
            "term); grading keeps using it until then"
        )
    if not path.parent.exists():
        path.parent.mkdir(mode=0o700, parents=True)
    fresh = path.with_name(f".{path.name}.{secrets.token_hex(4)}")
    descriptor = os.open(fresh, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(descriptor, "w") as file:
            file.write(secrets.token_hex(SECRET_BYTES) + "\n")
        os.replace(fresh, path)  # the old secret is gone in one step; no copy is kept
    finally:
        with contextlib.suppress(FileNotFoundError):
            fresh.unlink()


def read_secret(path: Path, course_root: Path) -> bytes:
    """The secret stored at ``path``, checked: where it lies, who may read it, what it holds."""
    check_location(path, course_root)
    try:
        mode = path.stat().st_mode
        text = path.read_text().strip()
    except FileNotFoundError:
        raise GradingError(
            f"no course secret at {path}: run `python -m autograder secret init --course "
            f"{course_root}` once for this course (or pass --course-secret FILE); to try the "
            "grader without one, --development-secret uses the public development secret"
        ) from None
    except (OSError, UnicodeDecodeError) as error:
        raise GradingError(f"cannot read the course secret {path}: {error}") from None
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise GradingError(
            f"the course secret {path} can be read by others (mode {stat.filemode(mode)}): "
            f"chmod 600 {path}"
        )
    return parse_secret(text, str(path))


def parse_secret(text: str, where: str) -> bytes:
    """The secret written as ``text`` (64 hexadecimal digits, as ``secret init`` writes them);
    :class:`GradingError` naming ``where`` it came from when it is not one."""
    text = text.strip()
    if not re.fullmatch(f"[0-9a-f]{{{_HEX_DIGITS}}}", text):
        raise GradingError(
            f"the course secret {where} should hold {_HEX_DIGITS} hexadecimal digits, as `secret "
            f"init` writes them, got {len(text)} characters"
        )
    return bytes.fromhex(text)


def course_secret(course_root: Path, given: Path | None = None) -> bytes:
    """The secret of the course folder ``course_root``, found by :func:`secret_path`."""
    return read_secret(secret_path(course_root, given), course_root)
