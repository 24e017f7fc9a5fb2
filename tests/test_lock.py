"""The installed environment is requirements.txt's: every package it pins for this Python is
installed at its pinned version, and nothing it does not pin is installed (the project itself and
pip aside).  A lock that pins only the top-level packages fails here: what they pull in is
installed but not pinned."""

from __future__ import annotations

import sysconfig
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent
NOT_LOCKED = {"attention-lab", "pip"}  # the project itself; the installer, which venv brings
REGENERATE = "regenerate it with scripts/lock.py (docs/development.md, 'The lock')"


def lock_differences(lock: str, installed: dict[str, str]) -> list[str]:
    """How ``installed`` (name -> version) differs from the pins of ``lock`` for this Python."""
    pins: dict[str, Requirement] = {}
    for line in lock.splitlines():
        line = line.split("#")[0].strip()
        if not line or line.startswith("-"):
            continue
        requirement = Requirement(line)
        if requirement.marker is None or requirement.marker.evaluate():
            pins[canonicalize_name(requirement.name)] = requirement
    problems = []
    for name, requirement in sorted(pins.items()):
        version = installed.get(name)
        if version is None:
            problems.append(f"{requirement}: not installed")
        elif not requirement.specifier.contains(version, prereleases=True):
            problems.append(f"{requirement}: {version} is installed")
    problems += [
        f"{name} {installed[name]} is installed but not in the lock"
        for name in sorted(installed.keys() - pins.keys() - NOT_LOCKED)
    ]
    return problems


def installed_distributions() -> dict[str, str]:
    """Each distribution installed in this environment's site-packages, and its version.

    Not all of sys.path: setuptools puts the packages it vendors there once it is imported."""
    folders = sorted({sysconfig.get_path("purelib"), sysconfig.get_path("platlib")})
    installed: dict[str, str] = {}
    for distribution in metadata.distributions(path=folders):
        installed.setdefault(canonicalize_name(distribution.metadata["Name"]), distribution.version)
    return installed


def test_the_environment_is_the_lock():
    problems = lock_differences((ROOT / "requirements.txt").read_text(), installed_distributions())
    assert not problems, (
        "this environment is not requirements.txt's: install it in a fresh venv "
        f"(pip install -r requirements.txt), or if the lock is out of date {REGENERATE}:\n  "
        + "\n  ".join(problems)
    )


def test_a_package_pulled_in_but_not_pinned_is_named():
    lock = 'scipy==1.17.1\nzipp==4.1.2 ; python_version < "3"\n# comment\n-e .[dev]\n'
    installed = {"scipy": "1.18.1", "networkx": "3.7", "pip": "25.3", "attention-lab": "0.1.0"}
    assert lock_differences(lock, installed) == [
        "scipy==1.17.1: 1.18.1 is installed",
        "networkx 3.7 is installed but not in the lock",
    ]
    assert lock_differences("torch==2.13.0", {"torch": "2.13.0+cpu"}) == []
    assert lock_differences("torch==2.13.0", {}) == ["torch==2.13.0: not installed"]
